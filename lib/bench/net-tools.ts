/**
 * The network bench's client processes, each run pinned to the client's CPUs
 * to its end: wrk and autocannon (closed loop), and the C open-loop floor
 * (benchmarks/floor-client.c: the least an open-loop client pays on this
 * machine, at the rates loadgen's rows run). Each closed-loop run also says
 * the CPU time its client used (the tool and its children, from the kernel's
 * account of the waited-for processes), so its CPU per request is measured,
 * not bounded by one CPU over its rate.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cpuListText } from './cpu-layout.js';
import { compileBenchProgram } from './net-servers.js';
import { cpuTaskset, type Percentiles } from './trials.js';

/** Keep-alive connections of every client (autocannon, wrk, the floor, loadgen). */
export const NET_CONNECTIONS = 32;

const here = dirname(fileURLToPath(import.meta.url));
const floorClientSource = join(here, '..', '..', 'benchmarks', 'floor-client.c');

/** Linux's /proc/<pid>/stat counts CPU time in USER_HZ ticks, 100 a second in the ABI on every architecture. */
const USER_HZ = 100;
const CHILD_CPU = 'LOADGEN-BENCH-CHILD-CPU';

export interface ClientRun {
  stdout: string;
  /** CPU seconds (user + system) of the command and its children; null when not measured (not Linux, no /bin/sh). */
  cpuSeconds: number | null;
  /** Of cpuSeconds, the system (kernel) time; null when not measured. */
  kernelSeconds: number | null;
}

/**
 * Runs a client command (on `cpus` when given) to its end. On Linux under
 * /bin/sh, which after waiting for it prints its own cutime + cstime
 * (/proc/<sh>/stat fields 16 and 17: the CPU of the children it waited for),
 * with builtins only (PATH may hold nothing else).
 */
export function runClient(command: string, args: string[], cpus: readonly number[] | null, timeoutMs: number): Promise<ClientRun> {
  const taskset = cpus !== null ? cpuTaskset() : null;
  const measure = process.platform === 'linux' && existsSync('/bin/sh') && existsSync('/proc/self/stat');
  const inner = measure
    ? ['/bin/sh', '-c', `"$@"; s=$?; read -r stat < /proc/$$/stat; set -- $stat; echo "${CHILD_CPU} \${16} \${17}"; exit $s`, 'sh', command, ...args]
    : [command, ...args];
  return new Promise((resolve, reject) => {
    const child = taskset ? spawn(taskset, ['-c', cpuListText(cpus!), ...inner]) : spawn(inner[0]!, inner.slice(1));
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      // The shell's child first: killing the shell alone would leave the tool running.
      if (measure && child.pid !== undefined) {
        for (const pid of childPids(child.pid)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
      }
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${(err.trim() || out.trim()).split('\n')[0]}`));
        return;
      }
      const m = new RegExp(`^${CHILD_CPU} (\\d+) (\\d+)$`, 'm').exec(out);
      const stdout = out.split('\n').filter((line) => !line.startsWith(CHILD_CPU)).join('\n');
      resolve({ stdout, cpuSeconds: m ? (Number(m[1]) + Number(m[2])) / USER_HZ : null, kernelSeconds: m ? Number(m[2]) / USER_HZ : null });
    });
  });
}

/** The children of process `pid` (Linux: /proc/PID/task/PID/children); none when unreadable. */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A closed-loop tool's run: its rate, and its CPU per request when measured. */
export interface ClosedLoopRun {
  requestsPerSec: number;
  cpuPerRequestNs: number | null;
  /** Of that CPU time, the kernel's share (0..1); null when not measured or no CPU time was counted. */
  kernelCpuShare: number | null;
}

function perRequestNs(cpuSeconds: number | null, requests: number): number | null {
  return cpuSeconds === null || !(requests > 0) ? null : (cpuSeconds * 1e9) / requests;
}

/** The kernel's share of a CPU time (0..1), or null where either is unknown or no time was counted. */
export function kernelShareOf(cpuSeconds: number | null, kernelSeconds: number | null): number | null {
  if (cpuSeconds === null || kernelSeconds === null || !(cpuSeconds > 0) || !Number.isFinite(kernelSeconds)) return null;
  return Math.min(1, Math.max(0, kernelSeconds / cpuSeconds));
}

/** wrk's closed-loop rate: one thread, NET_CONNECTIONS connections. */
export async function wrkRate(wrk: string, url: string, seconds: number, cpus: readonly number[] | null): Promise<ClosedLoopRun> {
  const { stdout: out, cpuSeconds, kernelSeconds } = await runClient(wrk, ['-t1', `-c${NET_CONNECTIONS}`, `-d${seconds}s`, `${url}/`], cpus, seconds * 1000 + 30_000);
  const rate = /Requests\/sec:\s*([\d.]+)/.exec(out)?.[1];
  if (rate === undefined) throw new Error(`wrk printed no rate: ${out}`);
  const errors = /Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)/.exec(out);
  if (errors) throw new Error(`wrk saw errors: ${errors[0]}`);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return { requestsPerSec: Number(rate), cpuPerRequestNs: perRequestNs(cpuSeconds, requests), kernelCpuShare: kernelShareOf(cpuSeconds, kernelSeconds) };
}

/** A wrk latency ('28.00us', '1.20ms', '2.00s') in ns. */
function wrkDurationNs(text: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!m) return Number.NaN;
  return Number(m[1]) * (m[2] === 'us' ? 1e3 : m[2] === 'ms' ? 1e6 : 1e9);
}

/** The 50% and 99% lines of `wrk --latency`'s distribution, in ns. */
export function parseWrkLatency(out: string): { p50: number; p99: number } {
  const at = (p: string) => wrkDurationNs(new RegExp(`^\\s*${p}%\\s+(\\S+)\\s*$`, 'm').exec(out)?.[1] ?? '');
  const r = { p50: at('50'), p99: at('99') };
  if (Number.isNaN(r.p50) || Number.isNaN(r.p99)) throw new Error(`wrk printed no latency distribution: ${out}`);
  return r;
}

/** autocannon's CLI script, or null when it is not installed (it is a devDependency). */
export function autocannonScript(): string | null {
  try {
    return createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  } catch {
    return null;
  }
}

/** autocannon's closed-loop rate (its CLI in a fresh process): requests / duration. */
export async function autocannonRate(script: string, url: string, seconds: number, cpus: readonly number[] | null): Promise<ClosedLoopRun> {
  const { stdout: out, cpuSeconds, kernelSeconds } = await runClient(process.execPath, [script, '-c', String(NET_CONNECTIONS), '-d', String(seconds), '-j', `${url}/`], cpus, seconds * 1000 + 30_000);
  const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
    requests?: { total?: number };
    duration?: number;
    errors?: number;
    non2xx?: number;
  };
  if (!r.requests?.total || !r.duration) throw new Error(`autocannon printed no rate: ${out}`);
  if (r.errors || r.non2xx) throw new Error(`autocannon saw ${r.errors ?? 0} errors, ${r.non2xx ?? 0} non-2xx`);
  // Its CPU includes Node's start-up (~50 ms): small against a 10-s run, and wrk's start is in wrk's.
  return {
    requestsPerSec: r.requests.total / r.duration,
    cpuPerRequestNs: perRequestNs(cpuSeconds, r.requests.total),
    kernelCpuShare: kernelShareOf(cpuSeconds, kernelSeconds),
  };
}

/** Compiles benchmarks/floor-client.c into `dir`; the reason when it cannot. */
export function buildFloorClient(dir: string): { path: string } | { note: string } {
  return compileBenchProgram(dir, floorClientSource, 'floor-client', ['-lm']);
}

/**
 * How the floor client waits for a due time: 'sleep' to it (the least CPU),
 * 'spin' sleeps to a window before it and polls through the window, the
 * window following how late its sleeps end, as loadgen's issue thread does.
 */
export type FloorMode = 'sleep' | 'spin';

/** One run of the C open-loop floor (benchmarks/floor-client.c's JSON line). */
export interface FloorRun {
  targetQps: number;
  requests: number;
  achievedQps: number;
  maxQueued: number;
  cpuPerRequestNs: number;
  latencyNs: Percentiles;
  serverNs: Percentiles;
  clientNs: Percentiles;
  latenessNs: Percentiles;
}

/** Checks the floor client's line: every figure present and finite; an {"error"} line throws it. */
export function parseFloorRun(line: string): FloorRun {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`the floor client printed no result: ${line.slice(0, 200)}`);
  }
  if (typeof r.error === 'string') throw new Error(`the floor client failed: ${r.error}`);
  const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const percentiles = (v: unknown): v is Percentiles =>
    typeof v === 'object' && v !== null && ['p50', 'p99', 'p999'].every((k) => finite((v as Record<string, unknown>)[k]));
  for (const k of ['targetQps', 'requests', 'achievedQps', 'maxQueued', 'cpuPerRequestNs']) {
    if (!finite(r[k])) throw new Error(`the floor client's result has no finite ${k}: ${line.slice(0, 200)}`);
  }
  for (const k of ['latencyNs', 'serverNs', 'clientNs', 'latenessNs']) {
    if (!percentiles(r[k])) throw new Error(`the floor client's result has no ${k} percentiles: ${line.slice(0, 200)}`);
  }
  return r as unknown as FloorRun;
}

/** The floor client at `targetQps` against the stamp server at `url` (http://127.0.0.1:PORT), pinned to `cpus`. */
export async function runFloorClient(path: string, url: string, targetQps: number, durationMs: number, warmupMs: number,
  mode: FloorMode, cpus: readonly number[] | null): Promise<FloorRun> {
  const { hostname, port } = new URL(url);
  if (hostname !== '127.0.0.1') throw new Error(`the floor client talks to 127.0.0.1 only, not ${hostname}`);
  const args = [port, String(targetQps), String(Math.round(durationMs)), String(NET_CONNECTIONS), String(Math.round(warmupMs)), mode];
  const { stdout } = await runClient(path, args, cpus, durationMs + warmupMs + 30_000).catch((error: Error) => {
    // Its {"error": ...} line is on stdout; runClient's message carries that first line.
    const said = /\{"error":"(.*)"\}/.exec(error.message)?.[1];
    throw said === undefined ? error : new Error(`the floor client failed: ${said}`);
  });
  return parseFloorRun(stdout.trim().split('\n').pop() ?? '');
}
