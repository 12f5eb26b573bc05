/**
 * One benchmark trial, run in a fresh process by lib/bench/bench.ts:
 *   node dist/bench/trial.js '<TrialSpec JSON>'
 * Prints its result as one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { BenchSut, BenchSutPath, PeakTrial, Percentiles, ServerTrial, TrialSpec } from './trials.js';
import { netServer, netTokenCpu, netTokens } from './net-trial.js';
import { idleRoundTripNs } from './net-servers.js';
import { peakRunSettings, type PeakRun } from './peak.js';
import { loadNative, loadNativeInternals } from '../native/index.js';
import { NULL_SUT_MODULE } from '../suts/null-sut-module.js';
import { startTest, type StartTestOptions } from '../api/start-test.js';
import type { DispatchMode } from '../types/settings.js';
import { createNullNativeSut, createNullSut, createSyntheticQsl } from '../suts/suts.js';
import type { QuerySample, SystemUnderTest, TestResult } from '../types/api.js';

const nowNs = (): number => Number(process.hrtime.bigint());

function percentilesOf(values: Float64Array | number[]): Percentiles {
  const s = Float64Array.from(values).sort();
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999) };
}

async function withOutdir<T>(fn: (outdir: string) => Promise<T>): Promise<T> {
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-bench-'));
  try {
    return await fn(outdir);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function sutFor(kind: Exclude<BenchSut, 'pure-js'>, path: BenchSutPath = 'ids'): SystemUnderTest {
  return kind === 'null-native' ? createNullNativeSut() : createNullSut('null', path);
}

/** The dispatch setting of a trial's SUT kind (`worker`: the JS null SUT in 1 worker). */
function dispatchOf(kind: Exclude<BenchSut, 'pure-js'>): { dispatch: DispatchMode } {
  return { dispatch: kind === 'poll' || kind === 'worker' ? kind : 'wake' };
}

function optionsOf(kind: Exclude<BenchSut, 'pure-js'>, path: BenchSutPath = 'ids'): StartTestOptions {
  return kind === 'worker' ? { sutModule: NULL_SUT_MODULE, ...(path === 'objects' ? { sutOptions: { path } } : {}) } : {};
}

function pick(s: { p50: number; p99: number; p999: number }): Percentiles {
  return { p50: s.p50, p99: s.p99, p999: s.p999 };
}

function resultPercentiles(r: TestResult): Percentiles {
  return { p50: r.percentilesNs[50], p99: r.percentilesNs[99], p999: r.percentilesNs[99.9] };
}

async function platform(tsfnWakes: number) {
  const native = loadNative();
  const bench = loadNativeInternals().bench;
  const clockReadNs = bench.clockReadNs(5e6);
  const calls = 2e6;
  for (let i = 0; i < 1e5; i++) native.isRunning(); // warm up the call site
  const t0 = nowNs();
  for (let i = 0; i < calls; i++) native.isRunning();
  const jsToNativeCallNs = (nowNs() - t0) / calls;
  const wakes = percentilesOf(await bench.tsfnWake(tsfnWakes, 200));
  return { clockReadNs, jsToNativeCallNs, tsfnWakeNs: { p50: wakes.p50, p99: wakes.p99 } };
}

/**
 * A plain TypeScript Poisson issuer polling with setImmediate, driving a JS
 * null SUT. Valid when latency p99 <= the bound and it kept up: achieved QPS
 * >= 0.9 x target (an issuer that falls behind is not running at that rate).
 */
function pureJsServer(targetQps: number, durationMs: number, targetLatencyNs: number): Promise<Omit<ServerTrial, 'pinned'>> {
  const count = Math.max(1, Math.round((targetQps * durationMs) / 1000));
  const schedule = new Float64Array(count);
  let t = 0;
  for (let i = 0; i < count; i++) {
    schedule[i] = t;
    t += -Math.log(1 - Math.random());
  }
  // Exponential gaps scaled to span exactly count / targetQps: the achieved
  // rate is then compared with the target, not with this draw's Poisson noise.
  const nsPerUnit = (count / targetQps) * 1e9 / t;
  for (let i = 0; i < count; i++) schedule[i] *= nsPerUnit;
  const lateness = new Float64Array(count);
  const latency = new Float64Array(count);
  let next = 0;
  const sut = (i: number, issued: number, start: number) => {
    lateness[i] = issued - start - schedule[i]!;
    latency[i] = nowNs() - start - schedule[i]!;
  };
  return new Promise((resolve) => {
    const start = nowNs();
    const poll = () => {
      const now = nowNs() - start;
      while (next < count && schedule[next]! <= now) sut(next++, nowNs(), start);
      if (next < count) {
        setImmediate(poll);
        return;
      }
      const elapsed = (nowNs() - start) / 1e9;
      const lat = percentilesOf(latency);
      const achievedQps = count / elapsed;
      resolve({
        valid: lat.p99 <= targetLatencyNs && achievedQps >= 0.9 * targetQps,
        achievedQps,
        latencyNs: lat,
        issueLatenessNs: percentilesOf(lateness),
        deliveryLagNs: percentilesOf(lateness),
      });
    };
    setImmediate(poll);
  });
}

/** The native core's warning when it could not pin the issue thread (issueThreadCpu). */
function issueThreadPinFailed(r: TestResult): boolean {
  return r.errors.messages.some((m) => m.isWarning && m.text.includes('running unpinned'));
}

async function server(spec: Extract<TrialSpec, { kind: 'server' }>): Promise<ServerTrial> {
  // pure-js has no issue thread: its pin is the orchestrator's taskset alone.
  if (spec.sut === 'pure-js') {
    return { ...(await pureJsServer(spec.targetQps, spec.durationMs, spec.targetLatencyNs)), pinned: spec.pinned ?? false };
  }
  const sut = spec.sut;
  return withOutdir(async (outdir) => {
    const r = await startTest(sutFor(sut, spec.path), createSyntheticQsl(1024), {
      ...dispatchOf(sut),
      ...(spec.pinned ? { issueThreadCpu: 1 } : {}),
      ...(spec.dispatchSpinUs !== undefined ? { dispatchSpinUs: spec.dispatchSpinUs } : {}),
      ...(spec.wakeLeadUs !== undefined ? { wakeLeadUs: spec.wakeLeadUs } : {}),
      scenario: 'Server',
      serverTargetQps: spec.targetQps,
      serverTargetLatencyNs: spec.targetLatencyNs,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir }, optionsOf(sut, spec.path));
    const overhead = r.overhead;
    return {
      valid: r.valid,
      achievedQps: r.completedSamplesPerSecond ?? 0,
      latencyNs: resultPercentiles(r),
      issueLatenessNs: overhead ? pick(overhead.issueLatenessNs) : null,
      deliveryLagNs: overhead?.deliveryLagNs ? pick(overhead.deliveryLagNs) : null,
      pinned: (spec.pinned ?? false) && !issueThreadPinFailed(r),
    };
  });
}

// Each pure-js step holds three Float64Arrays of targetQps x duration entries: at most ~480 MB.
const PURE_JS_MAX_QUERIES_PER_STEP = 20e6;
const PURE_JS_MAX_QPS = 50e6;
const PURE_JS_MAX_BISECTIONS = 12;

/**
 * The pure-js issuer's highest valid Server QPS: double from baseQps while
 * valid, then bisect between the last valid and the first invalid rate until
 * they are within 2%.
 */
async function pureJsPeak(spec: Extract<TrialSpec, { kind: 'peak' }>): Promise<PeakTrial> {
  const maxQps = Math.min(PURE_JS_MAX_QPS, PURE_JS_MAX_QUERIES_PER_STEP / (spec.durationMs / 1000));
  let trials = 0;
  const validAt = async (qps: number) => {
    trials++;
    return (await pureJsServer(qps, spec.durationMs, spec.targetLatencyNs)).valid;
  };
  let highestValid = 0;
  let lowestInvalid = Number.POSITIVE_INFINITY;
  for (let qps = Math.min(spec.baseQps, maxQps); ; qps = Math.min(2 * qps, maxQps)) {
    if (!(await validAt(qps))) {
      lowestInvalid = qps;
      break;
    }
    highestValid = qps;
    if (qps >= maxQps) break;
  }
  for (
    let step = 0;
    step < PURE_JS_MAX_BISECTIONS && highestValid > 0 && lowestInvalid - highestValid > 0.02 * highestValid;
    step++
  ) {
    const mid = Math.round((highestValid + lowestInvalid) / 2);
    if (await validAt(mid)) highestValid = mid;
    else lowestInvalid = mid;
  }
  return { peakQps: highestValid, trials };
}

async function peak(spec: Extract<TrialSpec, { kind: 'peak' }>): Promise<PeakTrial> {
  if (spec.sut === 'pure-js') return pureJsPeak(spec);
  const sut = spec.sut;
  return withOutdir(async (outdir) => {
    const r = await startTest(sutFor(sut), createSyntheticQsl(1024), {
      ...dispatchOf(sut),
      scenario: 'Server',
      mode: 'FindPeakPerformance',
      serverTargetQps: spec.baseQps,
      serverTargetLatencyNs: spec.targetLatencyNs,
      serverFindPeakQpsDecimalsOfPrecision: 0,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir }, optionsOf(sut));
    return { peakQps: r.findPeak?.peakQps ?? 0, trials: r.findPeak?.trials.length ?? 0 };
  });
}

/**
 * One run of a core peak row: a Server PerformanceOnly run with the built-in
 * mlperf.conf's resnet50 settings (pure-js: its own issuer, judged by the
 * same latency bound).
 */
async function peakRun(spec: Extract<TrialSpec, { kind: 'peak-run' }>): Promise<PeakRun> {
  const settings = peakRunSettings(spec.targetQps, spec.durationMs);
  if (spec.sut === 'pure-js') {
    const r = await pureJsServer(spec.targetQps, spec.durationMs, Number(settings.serverTargetLatencyNs));
    const queries = Math.max(1, Math.round((spec.targetQps * spec.durationMs) / 1000));
    return { targetQps: spec.targetQps, valid: r.valid, latencyP99Ns: r.latencyNs.p99, achievedQps: r.achievedQps, durationS: queries / r.achievedQps, queries };
  }
  const sut = spec.sut;
  return withOutdir(async (outdir) => {
    const r = await startTest(sutFor(sut, spec.path), createSyntheticQsl(1024), { ...settings, ...dispatchOf(sut) }, { outdir }, optionsOf(sut, spec.path));
    return {
      targetQps: spec.targetQps,
      valid: r.valid,
      latencyP99Ns: r.percentilesNs[99],
      achievedQps: r.completedSamplesPerSecond ?? 0,
      durationS: r.timing.finalQueryAllSamplesDoneSeconds,
      queries: r.counts.issuedQueries,
    };
  });
}

async function singleStream(spec: Extract<TrialSpec, { kind: 'single-stream' }>) {
  if (spec.sut === 'pure-js') {
    // The JS ceiling: issue, complete, issue the next, in one loop.
    const latencies: number[] = [];
    const start = nowNs();
    const end = start + spec.durationMs * 1e6;
    let now = start;
    while (now < end) {
      const issued = now;
      now = nowNs();
      latencies.push(now - issued);
    }
    return { qps: latencies.length / ((now - start) / 1e9), p90Ns: percentileAt(latencies, 0.9) };
  }
  const sut = spec.sut;
  return withOutdir(async (outdir) => {
    const r = await startTest(sutFor(sut, spec.path), createSyntheticQsl(1024), {
      ...dispatchOf(sut),
      scenario: 'SingleStream',
      singleStreamExpectedLatencyNs: 1000,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir }, optionsOf(sut, spec.path));
    return { qps: r.qpsWithLoadgenOverhead ?? 0, p90Ns: r.percentilesNs[90] };
  });
}

function percentileAt(values: number[], p: number): number {
  const s = Float64Array.from(values).sort();
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
}

/**
 * Offline without the native core: the samples handed to a JS null SUT in
 * one issueQuery call, which records each completion as the JS null SUT
 * does (ids into a Float64Array). Timed from building the samples to the
 * last completion.
 */
function pureJsOffline(samples: number) {
  const completedIds = new Float64Array(samples);
  let completed = 0;
  const issueQuery = (batch: QuerySample[]) => {
    for (let i = 0; i < batch.length; i++) completedIds[completed++] = batch[i]!.id;
  };
  const start = nowNs();
  const batch: QuerySample[] = [];
  for (let i = 0; i < samples; i++) batch.push({ id: i + 1, index: Math.floor(Math.random() * 1024) });
  issueQuery(batch);
  const elapsedNs = nowNs() - start;
  if (completed !== samples) throw new Error(`pure-js offline completed ${completed} of ${samples} samples`);
  return { samplesPerSecond: samples / (elapsedNs / 1e9) };
}

async function offline(spec: Extract<TrialSpec, { kind: 'offline' }>) {
  if (spec.sut === 'pure-js') return pureJsOffline(spec.samples);
  const sut = spec.sut;
  return withOutdir(async (outdir) => {
    const r = await startTest(sutFor(sut, spec.path), createSyntheticQsl(1024), {
      ...dispatchOf(sut),
      scenario: 'Offline',
      offlineExpectedQps: 1,
      minDurationMs: 0,
      minQueryCount: spec.samples,
    }, { outdir }, optionsOf(sut, spec.path));
    return { samplesPerSecond: r.samplesPerSecond ?? 0 };
  });
}

async function memory(spec: Extract<TrialSpec, { kind: 'memory' }>) {
  return withOutdir(async (outdir) => {
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peakRss = baseline;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 10);
    const r = await startTest(createNullNativeSut(), createSyntheticQsl(1024), {
      scenario: 'Server',
      serverTargetQps: spec.targetQps,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir });
    clearInterval(sampler);
    const samples = r.counts.generatedSamples;
    return { samples, bytesPerSample: (peakRss - baseline) / samples };
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as TrialSpec;
  let result: unknown;
  switch (spec.kind) {
    case 'platform':
      result = await platform(spec.tsfnWakes);
      break;
    case 'cpu-noise':
      result = loadNativeInternals().bench.cpuNoise(spec.cpu, spec.durationMs);
      break;
    case 'server':
      result = await server(spec);
      break;
    case 'peak':
      result = await peak(spec);
      break;
    case 'peak-run':
      result = await peakRun(spec);
      break;
    case 'single-stream':
      result = await singleStream(spec);
      break;
    case 'offline':
      result = await offline(spec);
      break;
    case 'memory':
      result = await memory(spec);
      break;
    case 'net-server':
      result = await netServer(spec);
      break;
    case 'net-tokens':
      result = await netTokens(spec);
      break;
    case 'net-idle-rtt':
      result = await idleRoundTripNs(spec.url, spec.gapMs, spec.count);
      break;
    case 'net-token-cpu':
      result = await netTokenCpu(spec);
      break;
    default:
      throw new Error(`unknown trial kind in ${process.argv[2]}`);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
