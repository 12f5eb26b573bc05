/**
 * The bench's servers in their own processes: the C stamp server
 * (benchmarks/stamp-server.c, built with the system compiler) and the
 * node:http twin, the OpenAI stub or a TCP echo (net-serve.ts), pinned to
 * the server's CPUs when the machine allows (lib/bench/cpu-layout.ts), each
 * asked for its records over its stdin/stdout; the idle round trip to that echo (the TTFT floor);
 * the check that the stamp server's clock is the client's; and the compiler step of the bench's C programs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { connect } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNative } from '../native/index.js';
import { cpuListText } from './cpu-layout.js';
import { cpuTaskset, findOnPath } from './trials.js';

const here = dirname(fileURLToPath(import.meta.url));
const stampServerSource = join(here, '..', '..', 'benchmarks', 'stamp-server.c');
// Beside this file once built; from lib/bench (the tests run the sources) it is the built one in dist/.
const netServeScript = existsSync(join(here, 'net-serve.js')) ? join(here, 'net-serve.js') : join(here, '..', '..', 'dist', 'bench', 'net-serve.js');

/** A process started by the bench: its first stdout line matching `pattern` is the answer. */
function startProcess(command: string, args: string[], pattern: RegExp, what: string): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  return new Promise((resolve, reject) => {
    // stdin stays open: the server ends when it closes (also when this process dies).
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what}: no address within 10 s: ${err.trim()}`));
    }, 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before listening: ${err.trim()}`));
    });
  });
}

export interface BenchServer {
  kind: 'c' | 'node' | 'openai-stub' | 'echo';
  url: string;
  /** Its processes (the C server: one per CPU, sharing the port). */
  pids: number[];
  /** The CPUs it is pinned to (empty: not pinned). */
  cpus: number[];
  /** Writes a line to the server's stdin; the first stdout line after it that starts with `answerPrefix`. */
  ask(line: string, answerPrefix: string): Promise<string>;
  /** `ask` of each of its processes (the C server's, one per CPU), the k-th given line(k): their answers in that order. */
  askEach(line: (k: number) => string, answerPrefix: string): Promise<string[]>;
  close(): Promise<void>;
}

function asker(child: ChildProcess): BenchServer['ask'] {
  return (line, answerPrefix) => new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.stdout!.off('data', onData);
      reject(new Error(`no answer to '${line}' within 10 s`));
    }, 10_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const found = out.split('\n').find((l) => l.startsWith(answerPrefix) && out.includes(`${l}\n`));
      if (found === undefined) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve(found.slice(answerPrefix.length));
    };
    child.stdout!.on('data', onData);
    child.stdin!.write(`${line}\n`);
  });
}

function closer(child: ChildProcess): () => Promise<void> {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin?.end();
    child.kill('SIGTERM');
  });
}

/** Compiles one of the bench's C programs (`source`) into `dir` as `name`; the reason when it cannot. */
export function compileBenchProgram(dir: string, source: string, name: string, libraries: string[] = []): { path: string } | { note: string } {
  const file = basename(source);
  if (process.platform !== 'linux') return { note: `${file} needs Linux (epoll)` };
  if (!existsSync(source)) return { note: `no ${source} (the bench runs from a checkout)` };
  const compiler = findOnPath('cc') ?? findOnPath('gcc') ?? findOnPath('clang');
  if (!compiler) return { note: 'no C compiler on PATH (cc, gcc, clang)' };
  const path = join(dir, name);
  const r = spawnSync(compiler, ['-O2', '-o', path, source, ...libraries], { encoding: 'utf8' });
  if (r.status !== 0) return { note: `${compiler} failed on ${file}: ${(r.stderr || r.error?.message || '').trim()}` };
  return { path };
}

/** Compiles benchmarks/stamp-server.c into `dir`; the reason when it cannot. */
export function buildStampServer(dir: string): { path: string } | { note: string } {
  return compileBenchProgram(dir, stampServerSource, 'stamp-server');
}

/**
 * The token row's servers (the stub, the floor's echo) collect garbage on their main thread: on the
 * one CPU they are pinned to, V8's parallel and concurrent GC threads took it from the main thread
 * for milliseconds while a request waited to be read (the client's own TTFT error p99 1.56-1.93 ms
 * with them, 0.75 ms without, 60-s runs interleaved: benchmarks/RESULTS.md, "Issue 26: the token
 * row's tail").
 */
export const TOKEN_ROW_NODE_FLAGS = ['--single-threaded-gc'] as const;

/**
 * Starts a bench server on `cpus` (null: not pinned): the C one as one
 * process per CPU, each pinned by its own sched_setaffinity, sharing one
 * port (SO_REUSEPORT: the kernel spreads the connections over them); the
 * others (net-serve.js, one process) under taskset.
 * `spin`: the C server polls epoll without sleeping, so its receive stamp is not late by its own wake-up.
 */
export async function startServer(
  kind: BenchServer['kind'],
  cpus: readonly number[] | null,
  cPath?: string,
  stub?: { ttftMs: number; tpotMs: number; timerSpinMs?: number },
  spin = false,
): Promise<BenchServer> {
  const pinned = cpus !== null && cpus.length > 0 ? [...cpus] : [];
  if (kind === 'c') {
    const children: ChildProcess[] = [];
    const closeAll = async () => {
      for (const child of children) await closer(child)();
    };
    try {
      const mode = spin ? 'spin' : 'wait';
      const first = await startProcess(cPath!, [String(pinned[0] ?? -1), mode], /PORT (\d+)\n/, 'stamp-server');
      children.push(first.child);
      const port = first.match[1]!;
      for (const cpu of pinned.slice(1)) children.push((await startProcess(cPath!, [String(cpu), mode, port], /PORT (\d+)\n/, `stamp-server on CPU ${cpu}`)).child);
      const askers = children.map(asker);
      return {
        kind, url: `http://127.0.0.1:${port}`, pids: children.map((c) => c.pid!), cpus: pinned, ask: askers[0]!, close: closeAll,
        askEach: (line, answerPrefix) => Promise.all(askers.map((ask, k) => ask(line(k), answerPrefix))),
      };
    } catch (error) {
      await closeAll();
      throw error;
    }
  }
  const args = kind === 'node' ? [netServeScript, 'stamp']
    : kind === 'echo' ? [...TOKEN_ROW_NODE_FLAGS, netServeScript, 'echo']
    : [...TOKEN_ROW_NODE_FLAGS, netServeScript, 'openai-stub', String(stub!.ttftMs), String(stub!.tpotMs), String(stub!.timerSpinMs ?? 0)];
  const taskset = pinned.length > 0 ? cpuTaskset() : null;
  const { child, match } = taskset
    ? await startProcess(taskset, ['-c', cpuListText(pinned), process.execPath, ...args], /URL (\S+)\n/, `net-serve ${kind}`)
    : await startProcess(process.execPath, args, /URL (\S+)\n/, `net-serve ${kind}`);
  const ask = asker(child);
  return {
    kind, url: match[1]!, pids: [child.pid!], cpus: taskset ? pinned : [], ask, close: closer(child),
    askEach: async (line, answerPrefix) => [await ask(line(0), answerPrefix)],
  };
}

/** A 1-byte round trip to a TCP echo at `url` (tcp://host:port) after each `gapMs` of idleness, `count` times. */
export async function idleRoundTripNs(url: string, gapMs: number, count: number): Promise<{ p50: number; p99: number }> {
  const { hostname, port } = new URL(url);
  const clockNs = loadNative().clockNs;
  const socket = connect(Number(port), hostname);
  // The wait in progress, and every later one, fails once the echo goes away (never an uncaught error, never a hang).
  let gone: Error | undefined;
  let fail: (error: Error) => void = () => undefined;
  const lost = (error: Error): void => {
    gone ??= error;
    fail(gone);
  };
  socket.on('error', lost);
  socket.on('close', () => lost(new Error(`the echo at ${url} closed the connection`)));
  try {
    await new Promise<void>((resolve, reject) => {
      fail = reject;
      socket.once('connect', resolve);
    });
    socket.setNoDelay(true);
    const rtt: number[] = [];
    const byte = Buffer.from('x');
    for (let i = 0; i < count; i++) {
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      if (gone) throw gone;
      const start = clockNs();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the echo at ${url} did not answer within 5 s`)), 5000);
        fail = (error) => {
          clearTimeout(timer);
          reject(error);
        };
        socket.once('data', () => {
          clearTimeout(timer);
          resolve();
        });
        socket.write(byte);
      });
      rtt.push(clockNs() - start);
    }
    rtt.sort((a, b) => a - b);
    return { p50: rtt[Math.floor(count * 0.5)]!, p99: rtt[Math.min(count - 1, Math.floor(count * 0.99))]! };
  } finally {
    socket.destroy();
  }
}

/**
 * The server's stamps against the core's clock: each must fall between
 * clockNs() before the request and after its response (CLOCK_MONOTONIC is
 * system-wide on Linux, so it holds across processes).
 */
export async function checkClock(url: string, requests: number): Promise<boolean> {
  const clockNs = loadNative().clockNs;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < requests; i++) {
      const before = clockNs();
      const stamps = await new Promise<{ recv: number; send: number }>((resolve, reject) => {
        const req = httpRequest(`${url}/clock`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ recv: Number(res.headers['x-recv-ns']), send: Number(res.headers['x-send-ns']) }));
        });
        req.on('error', reject);
        req.end();
      });
      const after = clockNs();
      if (!(before <= stamps.recv && stamps.recv <= stamps.send && stamps.send <= after)) return false;
    }
    return true;
  } finally {
    agent.destroy();
  }
}
