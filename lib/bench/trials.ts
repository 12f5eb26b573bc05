/**
 * The benchmark's trials: what one asks for (TrialSpec), what it returns,
 * and how it runs — in a fresh Node process (lib/bench/trial.ts), pinned to
 * CPU 0 with taskset when asked.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cpuListText } from './cpu-layout.js';

/**
 * Who runs the SUT in a trial. `wake`, `poll`, `worker`: the JS null SUT
 * with that dispatch mode (`worker`: in 1 worker thread). `pure-js` is a
 * plain TypeScript Poisson issuer, no native core.
 */
export type BenchSut = 'null-native' | 'wake' | 'poll' | 'worker' | 'pure-js';

export const BENCH_SUTS: readonly BenchSut[] = ['null-native', 'wake', 'poll', 'worker', 'pure-js'];

/** How the JS null SUT takes queries: issueQueryIds (`ids`, the default) or issueQuery (`objects`). */
export type BenchSutPath = 'ids' | 'objects';

export interface Percentiles {
  p50: number;
  p99: number;
  p999: number;
}

/** One trial's request, passed to lib/bench/trial.ts as JSON. */
export type TrialSpec =
  | { kind: 'platform'; tsfnWakes: number }
  /** loadNativeInternals().bench.cpuNoise on `cpu` (-1: unpinned). */
  | { kind: 'cpu-noise'; cpu: number; durationMs: number }
  | {
      kind: 'server';
      sut: BenchSut;
      targetQps: number;
      durationMs: number;
      targetLatencyNs: number;
      /** The issue thread on CPU 1 (issueThreadCpu); the orchestrator runs the process on CPU 0. */
      pinned?: boolean;
      /** The dispatchSpinUs setting ('worker' only). */
      dispatchSpinUs?: number;
      /** The wakeLeadUs setting ('wake' only). */
      wakeLeadUs?: number;
      path?: BenchSutPath;
    }
  | { kind: 'peak'; sut: BenchSut; baseQps: number; durationMs: number; targetLatencyNs: number }
  /** One run of a core peak row (lib/bench/peak.ts): the built-in mlperf.conf's resnet50 Server settings with this rate and min_duration. */
  | { kind: 'peak-run'; sut: BenchSut; targetQps: number; durationMs: number; path?: BenchSutPath }
  | { kind: 'single-stream'; sut: BenchSut; durationMs: number; path?: BenchSutPath }
  | { kind: 'offline'; sut: BenchSut; samples: number; path?: BenchSutPath }
  | { kind: 'memory'; targetQps: number; durationMs: number }
  /** An open-loop Server run of a network SUT against the bench's stamp server (lib/bench/net-trial.ts). */
  | {
      kind: 'net-server';
      url: string;
      /**
       * 'native': the native transport (dispatch wake), 'native-noread' with no body read in JS, 'native-thread'
       * without inline issuing, 'native-xN' with N client threads ('native-noread-xN': no body read in JS); else undici with this dispatch mode.
       */
      dispatch: 'native' | 'native-noread' | 'native-thread' | `native-x${number}` | `native-noread-x${number}` | 'wake' | 'poll' | 'worker';
      targetQps: number;
      durationMs: number;
      targetLatencyNs: number;
      connections: number;
      /** A Server run before the measured one (JIT, connections), at min(targetQps, 5000); 0: none. */
      warmupMs: number;
      /** Trace the run and pair each sample with the server's stamps. */
      clientShare: boolean;
      /**
       * Where the client share's server stamps come from: 'body' (default), each response's body, read by the
       * mapping in JS (every body then goes to the JS thread); 'server', the C stamp server's own record
       * (lib/bench/net-share.ts): JS reads no body, and the trial leaves its trace for the caller to pair.
       */
      shareStamps?: 'body' | 'server';
      /** Native transport: false checks status and framing only (no JS per response; no client share). Default true. */
      readEveryResponse?: boolean;
      /** The server's processes and how many CPUs they have: their busy share over the measured run is reported. */
      serverPids?: number[];
      serverCpus?: number;
      /** Native transport: the JS thread's nice value (jsThreadNice; default the CLI's, 0 leaves it). */
      jsThreadNice?: number;
    }
  /** A token-latency Server run of the OpenAI SUT against the stub streamer. */
  | {
      kind: 'net-tokens';
      url: string;
      targetQps: number;
      durationMs: number;
      outputTokens: number;
      /** A run at targetQps before the measured one (JIT, the pool's connections); 0: none. */
      warmupMs: number;
      /** The SUT's transport (default 'auto': native on plain http:). */
      transport?: 'auto' | 'native' | 'undici';
    }
  /** The token row's floor: `count` 1-byte round trips to the echo server, each after `gapMs` idle (idleRoundTripNs). */
  | { kind: 'net-idle-rtt'; url: string; gapMs: number; count: number }
  /** The client's CPU per streamed token: a Server run of the OpenAI SUT on the native transport against the stub (lib/bench/tokens.ts). */
  | {
      kind: 'net-token-cpu';
      url: string;
      targetQps: number;
      durationMs: number;
      outputTokens: number;
      /** A run at targetQps before the measured one (JIT, connections); 0: none. */
      warmupMs: number;
      connections: number;
    };

export interface PlatformTrial {
  clockReadNs: number;
  jsToNativeCallNs: number;
  tsfnWakeNs: { p50: number; p99: number };
}

export interface ServerTrial {
  valid: boolean;
  achievedQps: number;
  latencyNs: Percentiles;
  /** Issued − scheduled, per query (for pure-js: its issue time − scheduled). */
  issueLatenessNs: Percentiles | null;
  /** SUT received − scheduled, per query. */
  deliveryLagNs: Percentiles | null;
  /** The trial ran pinned: its issue thread on CPU 1 (pure-js: it was asked to; the taskset is its only pin). */
  pinned: boolean;
}

export interface PeakTrial {
  /** Highest valid Server QPS found (0: not even the base rate was valid). */
  peakQps: number;
  /** Server runs the search made. */
  trials: number;
}

export interface NetServerTrial {
  valid: boolean;
  achievedQps: number;
  latencyNs: Percentiles;
  /** Requests that failed (every kind). */
  failed: number;
  /** Seconds from the start of issuing to the last completion, and the queries issued. */
  durationS?: number;
  queries?: number;
  /** Scheduled -> received by the SUT's issueQuery (result.overhead; null when not reported). */
  deliveryLagNs: Percentiles | null;
  /** CPU time (user + system) of the whole client process during the measured run, per completed request. */
  cpuPerRequestNs: number;
  /** Of that CPU time, the kernel's share (system time, 0..1); absent when none was counted. */
  kernelCpuShare?: number;
  /** With serverPids: the server's CPUs' busy share over the measured run (0..1; absent when unreadable). */
  serverBusy?: number;
  /** With clientShare: loadgen's latency, the server's send − recv, and their difference, per matched sample. */
  share?: { samples: number; matched: number; latencyNs: Percentiles; serverNs: Percentiles; clientNs: Percentiles };
  /**
   * With shareStamps 'server': the measured run's trace, left in `traceDir` (the caller removes it), and
   * clockNs() (CLOCK_MONOTONIC) as the run started: the server's stamps from before it are the warm-up's.
   */
  serverStamped?: { traceDir: string; fromNs: number };
}

export interface NetTokensTrial {
  valid: boolean;
  ttftNs: Percentiles;
  tpotNs: Percentiles;
  /** Requests the warm-up run sent (the stub's first this-many records are not the measured run's). */
  warmupRequests: number;
  /** Scheduled -> in the SUT's issueQuery (part of every TTFT); null when not reported. */
  deliveryLagNs: Percentiles | null;
  /** The transport that ran (sut.stats().transport). */
  transport: 'native' | 'undici';
  /** Each measured request's QSL index and TTFT (ns), in scheduled order (tracedTtfts). */
  requests: [idx: number, ttftNs: number][];
}

export interface NetTokenCpuTrial {
  valid: boolean;
  achievedQps: number;
  /** Samples completed and failed in the measured run. */
  completed: number;
  failed: number;
  /** Output tokens the responses reported (usage), summed. */
  tokens: number;
  /** CPU time (user + system, every thread) of the client process over the measured run, and its wall time. */
  cpuNs: number;
  wallNs: number;
  ttftNs: { p50: number; p99: number } | null;
  tpotNs: { p50: number; p99: number } | null;
  /** Requests the warm-up run sent (the stub's records before the measured run's). */
  warmupRequests: number;
  transport: 'native' | 'undici';
}

const trialScript = join(dirname(fileURLToPath(import.meta.url)), 'trial.js');

/** CPUs this process may run on (Linux: /proc/self/status Cpus_allowed_list, e.g. "0-3,8"); null elsewhere. */
function allowedCpus(): Set<number> | null {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (!list) return null;
    const allowed = new Set<number>();
    for (const range of list.split(',')) {
      const [first, last = first] = range.split('-').map(Number);
      for (let cpu = first!; cpu <= last!; cpu++) allowed.add(cpu);
    }
    return allowed;
  } catch {
    return null;
  }
}

export function findOnPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

let taskset: string | null | undefined;

/**
 * The taskset that confines a trial process to CPU 0 (leaving CPU 1 to the
 * issue thread), or null when this machine cannot pin: not Linux, fewer
 * than 2 CPUs, CPU 0 or 1 outside this process's cpuset, or no taskset.
 */
export function pinningTaskset(): string | null {
  if (taskset !== undefined) return taskset;
  const allowed = process.platform === 'linux' && cpus().length >= 2 ? allowedCpus() : null;
  taskset = allowed?.has(0) && allowed.has(1) ? findOnPath('taskset') : null;
  return taskset;
}

export interface TrialOptions {
  /** Run the trial process under `taskset -c 0` (see {@link pinningTaskset}). */
  onCpu0?: boolean;
  /** Run it under `taskset -c` these CPUs (the network rows' layout, lib/bench/cpu-layout.ts); wins over onCpu0. */
  cpus?: readonly number[];
}

/**
 * The taskset that confines a process to some of this process's CPUs, or
 * null when this machine cannot: not Linux, fewer than 2 CPUs allowed, or
 * no taskset on PATH.
 */
export function cpuTaskset(): string | null {
  const allowed = allowedCpuList();
  return allowed !== null && allowed.length >= 2 ? findOnPath('taskset') : null;
}

/** The CPUs this process may run on, ascending; null where that cannot be read. */
export function allowedCpuList(): number[] | null {
  const allowed = process.platform === 'linux' ? allowedCpus() : null;
  return allowed === null ? null : [...allowed].sort((a, b) => a - b);
}

/** Runs one trial in a fresh Node process and returns what it printed. */
export function runTrial<T>(spec: TrialSpec, options: TrialOptions = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const trialArgs = [trialScript, JSON.stringify(spec)];
    let command = process.execPath;
    let args = trialArgs;
    if (options.cpus !== undefined) {
      const tasksetPath = cpuTaskset();
      if (!tasksetPath) {
        reject(new Error('bench trial: pinning needs Linux, 2 CPUs and taskset on PATH'));
        return;
      }
      command = tasksetPath;
      args = ['-c', cpuListText(options.cpus), process.execPath, ...trialArgs];
    } else if (options.onCpu0) {
      const tasksetPath = pinningTaskset();
      if (!tasksetPath) {
        reject(new Error('bench trial: pinning to CPU 0 needs Linux, 2 CPUs and taskset on PATH'));
        return;
      }
      command = tasksetPath;
      args = ['-c', '0', process.execPath, ...trialArgs];
    }
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`bench trial ${JSON.stringify(spec)} failed (exit ${code}): ${err.trim()}`));
        return;
      }
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as T);
      } catch {
        reject(new Error(`bench trial ${JSON.stringify(spec)} printed no result: ${out}${err}`));
      }
    });
  });
}

/** Offline sample count: the target is stated for 1M samples. */
export function offlineSamples(tiny: boolean): number {
  return tiny ? 100_000 : 1_000_000;
}
