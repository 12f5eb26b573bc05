/**
 * `loadgen bench --tokens` (issue 24): the client's CPU per streamed token
 * on the native transport. The OpenAI stub streams 128-token responses in a
 * process of its own (on CPU 1 where the machine allows, as the network rows
 * pin their servers); the client runs in a fresh process (on CPU 0) a Server
 * run at 10, 100 and 1,000 requests/s after an unmeasured warm-up; its whole
 * process's CPU time (JS, the timing core's threads, the HTTP client's) over
 * the measured run, divided by the tokens the responses carried, is the row.
 *
 * Beside it, mlcommons/endpoints' published client figures
 * (docs/ENDPOINT_CLIENT.md, its §1.2 and §11): ~47 µs of worker time per
 * request (300k non-streamed requests/s on 14 workers, IPC included) and
 * 90.6k streamed requests/s on 96 workers (~880 SSE events a response,
 * 79.7M events/s), on a 2 x Xeon Platinum 8570.
 */
import { readFileSync } from 'node:fs';

import { fmt, us } from './figures.js';
import { median } from './median.js';
import { startServer } from './net-servers.js';
import { pinningTaskset, runTrial, type NetTokenCpuTrial } from './trials.js';

/** Output tokens of every response (the issue's figure). */
export const TOKEN_BENCH_OUTPUT_TOKENS = 128;
export const TOKEN_BENCH_RATES = [10, 100, 1000] as const;
const TTFT_MS = 10;
const TPOT_MS = 2;

/** mlcommons/endpoints' client, as its docs/ENDPOINT_CLIENT.md states it. */
export const ENDPOINTS_CLIENT = {
  source: 'mlcommons/endpoints docs/ENDPOINT_CLIENT.md (§1.2, §11.1-11.2; 2 x Xeon Platinum 8570)',
  /** 300k QPS / 14 workers = 21.4k requests/s per worker: ~47 µs of worker time per request, IPC included (1,000-token bodies, not streamed). */
  workerNsPerRequest: 1e9 / (300_000 / 14),
  /** 90.6k streamed requests/s on 96 workers: worker time per streamed request (each worker busy the whole time: a floor). */
  streamingWorkerNsPerRequest: 1e9 / (90_600 / 96),
  /** 79.7M SSE events/s at 90.6k requests/s: events per streamed response. */
  sseEventsPerRequest: 79_700_000 / 90_600,
} as const;

export interface TokenCpuRow {
  targetQps: number;
  /** Medians over the repetitions (the CPU figures: of each repetition's quotient). */
  achievedQps: number;
  valid: boolean;
  completed: number;
  failed: number;
  tokens: number;
  cpuPerTokenNs: number;
  cpuPerRequestNs: number;
  /** The client process's CPU over wall time: the share of one core it used. */
  cpuShare: number;
  ttftP99Ns: number | null;
  tpotP99Ns: number | null;
  /** The stub's own lateness against its schedule (p99, ns): when large, the stub, not the client, set the pace. */
  stubLateness: { ttftP99Ns: number; tpotP99Ns: number } | null;
  /** Streamed requests/s one core would serve at this CPU per request (1 s / CPU per request). */
  requestsPerCore: number;
  /** Tokens the client received per second of the measured run. */
  tokensPerSecond: number;
  /**
   * What held the rate back, if anything: 'client' when the client's process used >= 90 % of its core;
   * 'stub' when the stub's first tokens were over 100 ms behind its schedule at p99, or the client's
   * TTFT p99 was over 100 ms more than the schedule's while the client had CPU to spare (requests
   * waiting for a stub that could not read them: its lateness counts from the read).
   */
  limitedBy: ('client' | 'stub')[];
  /** Per request: this row's CPU over endpoints' 47 µs; per streamed event: its CPU per token over endpoints' per SSE event. */
  ratioPerRequest: number;
  ratioPerEvent: number;
}

export interface TokensBenchReport {
  outputTokens: number;
  ttftMs: number;
  tpotMs: number;
  transport: 'native' | 'undici' | null;
  /** The stub on CPU 1 and the client on CPU 0. */
  pinned: boolean;
  durationMs: number;
  repeat: number;
  rows: TokenCpuRow[];
  /**
   * The client's marginal CPU per token: the slope of its CPU time per second over the tokens per
   * second between the lowest and the highest token rate (what each more token costs, without the
   * run's fixed costs: the timing core's threads, starting and ending a run, writing the logs).
   */
  marginalCpuPerTokenNs: number | null;
  endpoints: typeof ENDPOINTS_CLIENT;
  /** /proc/loadavg's 1-minute load at the start and the end (null elsewhere). */
  loadAverage: { start: number; end: number } | null;
  notes: string[];
}

export interface TokensBenchOptions {
  tiny?: boolean;
  repeat?: number;
  log?: (line: string) => void;
}

function loadAverage1m(): number | null {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/** Connections for a rate: twice the responses in flight (rate x response time), at least 16. */
export function connectionsFor(targetQps: number): number {
  const responseS = (TTFT_MS + (TOKEN_BENCH_OUTPUT_TOKENS - 1) * TPOT_MS) / 1000;
  return Math.min(1024, Math.max(16, Math.ceil(2 * targetQps * responseS) + 16));
}

export async function runTokensBench(options: TokensBenchOptions = {}): Promise<TokensBenchReport> {
  const tiny = options.tiny ?? false;
  const repeat = options.repeat ?? (tiny ? 1 : 3);
  const log = options.log ?? (() => undefined);
  const durationMs = tiny ? 1000 : 10_000;
  const warmupMs = tiny ? 300 : 2000;
  const pin = pinningTaskset() !== null;
  const loadAtStart = loadAverage1m();
  const report: TokensBenchReport = {
    outputTokens: TOKEN_BENCH_OUTPUT_TOKENS, ttftMs: TTFT_MS, tpotMs: TPOT_MS, transport: null, pinned: pin, durationMs, repeat, rows: [], marginalCpuPerTokenNs: null, endpoints: ENDPOINTS_CLIENT, loadAverage: null, notes: [],
  };
  if (!pin) report.notes.push('not pinned: the stub and the client share the CPUs (pinning needs Linux, 2 CPUs and taskset)');
  // On CPU 1 (pinningTaskset: CPUs 0 and 1 are this process's), the trials on CPU 0.
  const stub = await startServer('openai-stub', pin ? [1] : null, undefined, { ttftMs: TTFT_MS, tpotMs: TPOT_MS });
  try {
    for (const targetQps of TOKEN_BENCH_RATES) {
      log(`  client CPU per token at ${targetQps} requests/s, ${TOKEN_BENCH_OUTPUT_TOKENS}-token responses (x${repeat})`);
      const trials: NetTokenCpuTrial[] = [];
      const lateness: { ttftNs: { p99: number }; tpotNs: { p99: number } }[] = [];
      for (let i = 0; i < repeat; i++) {
        await stub.ask('lateness', 'LATENESS ');
        const t = await runTrial<NetTokenCpuTrial>({
          kind: 'net-token-cpu', url: stub.url, targetQps, durationMs, outputTokens: TOKEN_BENCH_OUTPUT_TOKENS, warmupMs, connections: connectionsFor(targetQps),
        }, { onCpu0: pin });
        trials.push(t);
        lateness.push(JSON.parse(await stub.ask(`lateness ${t.warmupRequests}`, 'LATENESS ')) as { ttftNs: { p99: number }; tpotNs: { p99: number } });
        log(`    ${fmt(t.achievedQps, 1)} requests/s, ${fmt(t.tokens)} tokens, CPU ${us(t.cpuNs / Math.max(1, t.tokens))} us/token`);
      }
      report.transport = trials[0]!.transport;
      const m = (get: (t: NetTokenCpuTrial) => number) => median(trials.map(get));
      const cpuPerTokenNs = m((t) => t.cpuNs / Math.max(1, t.tokens));
      const cpuPerRequestNs = m((t) => t.cpuNs / Math.max(1, t.completed));
      const achievedQps = m((t) => t.achievedQps);
      const cpuShare = m((t) => t.cpuNs / t.wallNs);
      const stubLateness = lateness.length ? { ttftP99Ns: median(lateness.map((l) => l.ttftNs.p99)), tpotP99Ns: median(lateness.map((l) => l.tpotNs.p99)) } : null;
      const limitedBy: TokenCpuRow['limitedBy'] = [];
      if (cpuShare >= 0.9) limitedBy.push('client');
      const ttftP99Ns = trials.every((t) => t.ttftNs) ? m((t) => t.ttftNs!.p99) : null;
      const clientWaited = cpuShare < 0.9 && ttftP99Ns !== null && ttftP99Ns > (TTFT_MS + 100) * 1e6;
      if ((stubLateness !== null && stubLateness.ttftP99Ns > 100e6) || clientWaited) limitedBy.push('stub');
      report.rows.push({
        targetQps,
        achievedQps,
        valid: trials.every((t) => t.valid),
        completed: m((t) => t.completed),
        failed: m((t) => t.failed),
        tokens: m((t) => t.tokens),
        cpuPerTokenNs,
        cpuPerRequestNs,
        cpuShare,
        ttftP99Ns,
        tpotP99Ns: trials.every((t) => t.tpotNs) ? m((t) => t.tpotNs!.p99) : null,
        stubLateness,
        requestsPerCore: 1e9 / cpuPerRequestNs,
        tokensPerSecond: m((t) => t.tokens / (t.wallNs / 1e9)),
        limitedBy,
        ratioPerRequest: cpuPerRequestNs / ENDPOINTS_CLIENT.workerNsPerRequest,
        ratioPerEvent: cpuPerTokenNs / (ENDPOINTS_CLIENT.streamingWorkerNsPerRequest / ENDPOINTS_CLIENT.sseEventsPerRequest),
      });
    }
  } finally {
    await stub.close();
  }
  const [low, high] = [report.rows[0], report.rows[report.rows.length - 1]];
  if (low !== undefined && high !== undefined && high.tokensPerSecond > low.tokensPerSecond) {
    report.marginalCpuPerTokenNs = ((high.cpuShare - low.cpuShare) * 1e9) / (high.tokensPerSecond - low.tokensPerSecond);
  }
  const loadAtEnd = loadAverage1m();
  if (loadAtStart !== null && loadAtEnd !== null) report.loadAverage = { start: loadAtStart, end: loadAtEnd };
  return report;
}

export function formatTokensBench(r: TokensBenchReport): string {
  const e = r.endpoints;
  const perEventNs = e.streamingWorkerNsPerRequest / e.sseEventsPerRequest;
  const ms = (ns: number | null | undefined): string => (ns === null || ns === undefined ? '-' : fmt(ns / 1e6, 1));
  const lines = [
    `Client CPU per streamed token (${r.transport ?? 'native'} transport): ${r.outputTokens}-token responses from the OpenAI stub ` +
      `(first token ${r.ttftMs} ms, then one every ${r.tpotMs} ms) in its own process${r.pinned ? ' on CPU 1, the client pinned to CPU 0' : ''}; ` +
      `Server runs of ${r.durationMs / 1000} s after a warm-up, medians of ${r.repeat}`,
    '',
    '  req/s  achieved  valid     tokens  CPU/token  CPU/request  client CPU  1 core serves  TTFT p99  stub late p99  vs endpoints: per request, per event',
    '                                         (us)         (us)   (of a core)      (req/s)      (ms)   TTFT, TPOT (ms)',
  ];
  for (const row of r.rows) {
    const late = row.stubLateness ? `${ms(row.stubLateness.ttftP99Ns)}, ${ms(row.stubLateness.tpotP99Ns)}` : '-';
    const limit = row.limitedBy.length === 0 ? '' : `  (held back by the ${row.limitedBy.join(' and the ')})`;
    lines.push(
      `  ${fmt(row.targetQps).padStart(5)}  ${fmt(row.achievedQps, 1).padStart(8)}  ${(row.valid ? 'yes' : 'no').padEnd(5)}  ${fmt(row.tokens).padStart(9)}  ` +
        `${us(row.cpuPerTokenNs).padStart(9)}  ${us(row.cpuPerRequestNs).padStart(11)}  ${`${fmt(row.cpuShare * 100, 1)} %`.padStart(10)}  ` +
        `${fmt(row.requestsPerCore).padStart(13)}  ${ms(row.ttftP99Ns).padStart(8)}  ${late.padStart(15)}  ` +
        `${fmt(row.ratioPerRequest, 1)} x, ${fmt(row.ratioPerEvent, 1)} x${limit}`,
    );
  }
  if (r.marginalCpuPerTokenNs !== null) {
    lines.push('', `Marginal CPU per token (slope between the ${fmt(r.rows[0]!.targetQps)} and ${fmt(r.rows[r.rows.length - 1]!.targetQps)} requests/s rows, ` +
      `the run's fixed costs left out): ${us(r.marginalCpuPerTokenNs)} us, ${fmt(r.marginalCpuPerTokenNs / perEventNs, 1)} x endpoints' per event`);
  }
  lines.push(
    '',
    `mlcommons/endpoints' client (${e.source}): ${us(e.workerNsPerRequest)} us of worker time per request, IPC included ` +
      `(300k non-streamed requests/s on 14 workers); streaming: 90.6k requests/s on 96 workers, ${fmt(e.sseEventsPerRequest)} SSE events a response: ` +
      `at least ${us(e.streamingWorkerNsPerRequest)} us of worker time per streamed request, ${us(perEventNs)} us per event.`,
    "Ratios: this row's CPU per request over endpoints' 47 us, and its CPU per token over endpoints' per SSE event (above 1: more CPU than endpoints' client). " +
      "Not the same work: endpoints' streamed responses have ~880 one-character events and its per-request figure is for whole bodies; different CPUs.",
  );
  if (r.loadAverage) lines.push(`Machine load (1-min load average): ${fmt(r.loadAverage.start, 2)} at the start, ${fmt(r.loadAverage.end, 2)} at the end.`);
  for (const note of r.notes) lines.push(`Note: ${note}`);
  return lines.join('\n');
}
