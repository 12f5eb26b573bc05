/**
 * The network trials of `loadgen bench` (run by lib/bench/trial.ts in a fresh
 * process): an open-loop Server run against the stamp server, with the
 * client's share of each request's latency, and a token-latency run against
 * the OpenAI stub streamer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTest } from '../api/start-test.js';
import type { TestResult } from '../types/api.js';
import { createOpenAiSut } from '../net/openai.js';
import { createHttpSut } from '../net/http-map.js';
import type { NetworkStats } from '../net/types.js';
import { CLI_JS_THREAD_NICE } from '../net/transport.js';
import { loadNative } from '../native/index.js';
import { busyShare, processCpuSeconds } from './cpu-layout.js';
import { groupByIndex, pairInOrder } from './group.js';
import { nativeDispatchThreads } from './net-labels.js';
import { kernelShareOf } from './net-tools.js';
import { stampRecords, type StampRecords } from './net-map.js';
import type { NetServerTrial, NetTokenCpuTrial, NetTokensTrial, Percentiles, TrialSpec } from './trials.js';

/** The mapping module of these runs, as a file URL: createHttpSut imports this same instance on this thread. */
const mapModule = new URL('./net-map.js', import.meta.url).href;

function percentilesOf(values: Float64Array): Percentiles {
  const s = Float64Array.from(values).sort();
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999) };
}

/** Per sample of the trace: its index, scheduled time (us from the trace origin) and latency (ns). */
export interface TracedSample {
  idx: number;
  scheduledUs: number;
  latencyNs: number;
}

export function readTrace(path: string): TracedSample[] {
  const samples: TracedSample[] = [];
  const begin = /"name":"Sample".*"ph":"b".*"ts":(-?[\d.]+),"args":\{.*"sample_idx":(\d+),.*"complete_ns":(-?\d+)\}/;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = begin.exec(line);
    if (m) samples.push({ idx: Number(m[2]), scheduledUs: Number(m[1]), latencyNs: Number(m[3]) });
  }
  return samples;
}

/**
 * Pairs each traced sample with its server record: per sample index, the
 * k-th issue with the k-th request the server answered (indices are ~never
 * in flight twice; an index whose counts differ is left out).
 */
export function clientShare(samples: TracedSample[], records: StampRecords): NonNullable<NetServerTrial['share']> {
  const byIdx = new Map<number, { recv: number; send: number }[]>();
  for (let i = 0; i < records.count; i++) {
    const idx = records.index[i]!;
    let list = byIdx.get(idx);
    if (!list) byIdx.set(idx, (list = []));
    list.push({ recv: records.recv[i]!, send: records.send[i]! });
  }
  const latency: number[] = [];
  const server: number[] = [];
  const client: number[] = [];
  pairInOrder(groupByIndex(samples, (s) => s.idx), byIdx, (a, b) => a.scheduledUs - b.scheduledUs, (a, b) => a.recv - b.recv, (sample, stamps) => {
    const serverNs = stamps.send - stamps.recv;
    latency.push(sample.latencyNs);
    server.push(serverNs);
    client.push(sample.latencyNs - serverNs);
  });
  return {
    samples: samples.length,
    matched: client.length,
    latencyNs: percentilesOf(Float64Array.from(latency)),
    serverNs: percentilesOf(Float64Array.from(server)),
    clientNs: percentilesOf(Float64Array.from(client)),
  };
}

/**
 * Each measured request's TTFT with its QSL index, in scheduled order, from
 * the run's trace and its request log (--request-log): TTFT = the sample's
 * latency (trace: completed − scheduled) − (its last byte − its first
 * token), both the core's stamps, so no clock origin enters. The log's first
 * `skip` lines (an earlier run's) are left out; the k-th traced sample of an
 * index pairs with the k-th logged request of it by send time (an index
 * whose counts differ, or a request without both stamps, is left out).
 */
export function tracedTtfts(samples: TracedSample[], requestLogText: string, skip: number): [idx: number, ttftNs: number][] {
  const logged = new Map<number, { sent: number; untilLast: number | null }[]>();
  const lines = requestLogText.split('\n').filter((l) => l !== '');
  for (const line of lines.slice(skip)) {
    const r = JSON.parse(line) as { qsl_index: number; sent_ns: number | null; first_token_ns: number | null; last_byte_ns: number | null; outcome: string };
    let list = logged.get(r.qsl_index);
    if (!list) logged.set(r.qsl_index, (list = []));
    const ok = r.outcome === 'ok' && r.first_token_ns !== null && r.last_byte_ns !== null;
    list.push({ sent: r.sent_ns ?? Number.POSITIVE_INFINITY, untilLast: ok ? r.last_byte_ns! - r.first_token_ns! : null });
  }
  const out: { scheduledUs: number; idx: number; ttftNs: number }[] = [];
  pairInOrder(groupByIndex(samples, (s) => s.idx), logged, (a, b) => a.scheduledUs - b.scheduledUs, (a, b) => a.sent - b.sent, (sample, request, idx) => {
    if (request.untilLast !== null) out.push({ scheduledUs: sample.scheduledUs, idx, ttftNs: sample.latencyNs - request.untilLast });
  });
  return out.sort((a, b) => a.scheduledUs - b.scheduledUs).map((r) => [r.idx, r.ttftNs]);
}

function resultPercentiles(r: TestResult): Percentiles {
  return { p50: r.percentilesNs[50], p99: r.percentilesNs[99], p999: r.percentilesNs[99.9] };
}


/** process.cpuUsage() counts every thread of the process (workers and the core's too), in µs. */
function cpuNs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) * 1000;
}

function failedRequests(stats: NetworkStats): number {
  return stats.nodes.reduce((sum, node) => sum + Object.values(node.failed).reduce((a, b) => a + b, 0), 0);
}

export async function netServer(spec: Extract<TrialSpec, { kind: 'net-server' }>): Promise<NetServerTrial> {
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-net-trial-'));
  const serverStamps = spec.clientShare && spec.shareStamps === 'server';
  const bodyStamps = spec.clientShare && !serverStamps;
  if (bodyStamps && spec.dispatch === 'worker') throw new Error("client share: the stamps are read on the main thread (dispatch 'wake' or 'poll')");
  if (bodyStamps && spec.dispatch.startsWith('native-noread')) throw new Error("client share: 'native-noread' reads no body, where the stamps are (shareStamps 'server')");
  const native = spec.dispatch.startsWith('native');
  const clientThreads = nativeDispatchThreads(spec.dispatch)?.threads ?? 1;
  const noBodyRead = nativeDispatchThreads(spec.dispatch)?.bodiesReadInJs === false;
  const sut = await createHttpSut({
    urls: [spec.url], request: mapModule, connections: spec.connections, requestTimeoutMs: 30_000,
    transport: native ? 'native' : 'undici',
    ...(spec.dispatch === 'native-thread' ? { inlineReactor: false } : {}),
    ...(clientThreads > 1 ? { clientThreads } : {}),
    // As `loadgen run` does (CLI_JS_THREAD_NICE): the JS thread yields to the issue thread.
    ...(native && spec.jsThreadNice !== 0 ? { jsThreadNice: spec.jsThreadNice ?? CLI_JS_THREAD_NICE } : {}),
    ...((spec.readEveryResponse === false && !spec.clientShare) || serverStamps || noBodyRead ? { readEveryResponse: false } : {}),
    // The default: every body read by the mapping (after the native stamp); the client share from the bodies needs the server's stamps in them.
  });
  // One worker: the client process has CPU 0 alone (the server has CPU 1).
  const dispatch = spec.dispatch === 'worker' ? { dispatch: 'worker' as const, dispatchWorkers: 1 }
    : { dispatch: native ? 'wake' as const : spec.dispatch as 'wake' | 'poll' };
  try {
    if (spec.warmupMs > 0) {
      // Warm-up (JIT, connections) in a run of its own, not measured: its records are dropped.
      const warmDir = mkdtempSync(join(tmpdir(), 'loadgen-net-warmup-'));
      try {
        await startTest(sut, sut.qsl, {
          ...dispatch,
          scenario: 'Server',
          serverTargetQps: Math.min(spec.targetQps, 5000),
          minDurationMs: spec.warmupMs,
          minQueryCount: 1,
        }, { outdir: warmDir });
      } finally {
        rmSync(warmDir, { recursive: true, force: true });
      }
    }
    // Records from before the measured run (the warm-up, the mapping module's try on sample 0) are dropped.
    stampRecords.count = 0;
    const failedBefore = failedRequests(sut.stats());
    const serverPids = spec.serverPids ?? [];
    const serverBefore = processCpuSeconds(serverPids);
    const wallBefore = performance.now();
    const cpuBefore = process.cpuUsage();
    const fromNs = loadNative().clockNs();
    const r = await startTest(sut, sut.qsl, {
      ...dispatch,
      scenario: 'Server',
      serverTargetQps: spec.targetQps,
      serverTargetLatencyNs: spec.targetLatencyNs,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir, enableTrace: spec.clientShare });
    const serverBusy = serverPids.length > 0
      ? busyShare(serverBefore, processCpuSeconds(serverPids), (performance.now() - wallBefore) / 1000, spec.serverCpus ?? serverPids.length)
      : null;
    const cpu = process.cpuUsage(cpuBefore);
    const kernelCpuShare = kernelShareOf(cpu.user + cpu.system, cpu.system);
    return {
      ...(serverBusy !== null ? { serverBusy } : {}),
      ...(kernelCpuShare !== null ? { kernelCpuShare } : {}),
      valid: r.valid,
      achievedQps: r.completedSamplesPerSecond ?? 0,
      latencyNs: resultPercentiles(r),
      failed: failedRequests(sut.stats()) - failedBefore,
      durationS: r.timing.finalQueryAllSamplesDoneSeconds,
      queries: r.counts.issuedQueries,
      cpuPerRequestNs: cpuNs(cpu) / Math.max(1, r.counts.completedSamples),
      deliveryLagNs: r.overhead?.deliveryLagNs
        ? { p50: r.overhead.deliveryLagNs.p50, p99: r.overhead.deliveryLagNs.p99, p999: r.overhead.deliveryLagNs.p999 }
        : null,
      ...(bodyStamps ? { share: clientShare(readTrace(join(outdir, 'mlperf_log_trace.json')), stampRecords) } : {}),
      ...(serverStamps ? { serverStamped: { traceDir: outdir, fromNs } } : {}),
    };
  } catch (error) {
    if (serverStamps) rmSync(outdir, { recursive: true, force: true });
    throw error;
  } finally {
    await sut.close();
    if (!serverStamps) rmSync(outdir, { recursive: true, force: true });
  }
}

/** 64 short prompts, each asking for `outputTokens` tokens. */
function writePrompts(dir: string, outputTokens: number): string {
  const dataset = join(dir, 'prompts.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < 64; i++) lines.push(JSON.stringify({ prompt: `bench prompt ${i}`, max_tokens: outputTokens }));
  writeFileSync(dataset, `${lines.join('\n')}\n`);
  return dataset;
}

export async function netTokens(spec: Extract<TrialSpec, { kind: 'net-tokens' }>): Promise<NetTokensTrial> {
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-net-trial-'));
  const dataset = writePrompts(outdir, spec.outputTokens);
  const transport = spec.transport ?? 'auto';
  // Every request's stamps, for its TTFT by request (tracedTtfts).
  const requestLog = join(outdir, 'requests.jsonl');
  // As `loadgen run` does: the JS thread yields to loadgen's threads when the native transport serves.
  const sut = await createOpenAiSut({
    urls: [spec.url], model: 'loadgen-stub', dataset, maxTokens: spec.outputTokens, transport, requestLog,
    ...(transport !== 'undici' ? { jsThreadNice: CLI_JS_THREAD_NICE } : {}),
  });
  let closed = false;
  const closeSut = async () => {
    if (closed) return;
    closed = true;
    await sut.close();
  };
  const settings = { scenario: 'Server' as const, serverTargetQps: spec.targetQps, useTokenLatencies: true, minQueryCount: 1 };
  try {
    let warmupRequests = 0;
    if (spec.warmupMs > 0) {
      // Not measured: it compiles the request path and opens the connections a Poisson burst needs,
      // so no measured TTFT holds cold code or a connect.
      const warmDir = mkdtempSync(join(tmpdir(), 'loadgen-net-warmup-'));
      try {
        const w = await startTest(sut, sut.qsl, { ...settings, minDurationMs: spec.warmupMs }, { outdir: warmDir });
        warmupRequests = w.counts.issuedSamples;
      } finally {
        rmSync(warmDir, { recursive: true, force: true });
      }
    }
    const r = await startTest(sut, sut.qsl, { ...settings, minDurationMs: spec.durationMs }, { outdir, enableTrace: true });
    const ttft = r.tokens?.ttftNs?.percentiles;
    const tpot = r.tokens?.tpotNs?.percentiles;
    if (!ttft || !tpot) throw new Error('the run reported no TTFT/TPOT');
    const transportUsed = sut.stats().transport;
    await closeSut(); // the request log complete
    return {
      valid: r.valid,
      ttftNs: { p50: ttft[50], p99: ttft[99], p999: ttft[99.9] },
      tpotNs: { p50: tpot[50], p99: tpot[99], p999: tpot[99.9] },
      warmupRequests,
      deliveryLagNs: r.overhead?.deliveryLagNs
        ? { p50: r.overhead.deliveryLagNs.p50, p99: r.overhead.deliveryLagNs.p99, p999: r.overhead.deliveryLagNs.p999 }
        : null,
      transport: transportUsed,
      requests: tracedTtfts(readTrace(join(outdir, 'mlperf_log_trace.json')), readFileSync(requestLog, 'utf8'), warmupRequests),
    };
  } finally {
    await closeSut();
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The client's CPU per streamed token: the OpenAI SUT on the native
 * transport, a Server run at the rate after an unmeasured warm-up, the whole
 * process's CPU time (JS, the core's threads, the HTTP client's) over the
 * measured run.
 */
export async function netTokenCpu(spec: Extract<TrialSpec, { kind: 'net-token-cpu' }>): Promise<NetTokenCpuTrial> {
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-net-trial-'));
  const dataset = writePrompts(outdir, spec.outputTokens);
  const sut = await createOpenAiSut({ urls: [spec.url], model: 'loadgen-stub', dataset, maxTokens: spec.outputTokens, transport: 'native', connections: spec.connections });
  const settings = { scenario: 'Server' as const, serverTargetQps: spec.targetQps, useTokenLatencies: true, minQueryCount: 1 };
  try {
    let warmupRequests = 0;
    if (spec.warmupMs > 0) {
      const warmDir = mkdtempSync(join(tmpdir(), 'loadgen-net-warmup-'));
      try {
        warmupRequests = (await startTest(sut, sut.qsl, { ...settings, minDurationMs: spec.warmupMs }, { outdir: warmDir })).counts.issuedSamples;
      } finally {
        rmSync(warmDir, { recursive: true, force: true });
      }
    }
    const failedBefore = failedRequests(sut.stats());
    const cpuBefore = process.cpuUsage();
    const wallBefore = process.hrtime.bigint();
    const r = await startTest(sut, sut.qsl, { ...settings, minDurationMs: spec.durationMs }, { outdir });
    const wallNs = Number(process.hrtime.bigint() - wallBefore);
    const cpu = cpuNs(process.cpuUsage(cpuBefore));
    const ttft = r.tokens?.ttftNs?.percentiles;
    const tpot = r.tokens?.tpotNs?.percentiles;
    return {
      valid: r.valid,
      achievedQps: r.completedSamplesPerSecond ?? 0,
      completed: r.counts.completedSamples,
      failed: failedRequests(sut.stats()) - failedBefore,
      tokens: r.tokens?.tokenCount ?? 0,
      cpuNs: cpu,
      wallNs,
      ttftNs: ttft ? { p50: ttft[50], p99: ttft[99] } : null,
      tpotNs: tpot ? { p50: tpot[50], p99: tpot[99] } : null,
      warmupRequests,
      transport: sut.stats().transport,
    };
  } finally {
    await sut.close();
    rmSync(outdir, { recursive: true, force: true });
  }
}
