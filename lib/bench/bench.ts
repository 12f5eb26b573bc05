/**
 * `loadgen bench`: loadgen's own cost on this machine. Every trial runs in a
 * fresh process (lib/bench/trial.ts); each is repeated and reported as the
 * median with its spread (min..max), except the peak rows, whose peak is
 * confirmed by consecutive VALID runs instead (lib/bench/peak.ts). The report ends with the issue-5
 * targets evaluated against the figures (lib/bench/targets.ts); its text
 * form is lib/bench/format.ts.
 */
import { cpus } from 'node:os';

import type { CpuNoise } from '../native/index.js';
import { serverRowLabel } from './figures.js';
import { median } from './median.js';
import { runNetworkBench } from './net.js';
import {
  describePeakRunSettings,
  findConfirmedPeak,
  formatPeakRun,
  peakConfirmation,
  type PeakRun,
} from './peak.js';
import type { BenchReport, CorePeakRow, CpuNoiseFigure, PeakProcedureReport, ServerRow, Spread } from './report-types.js';
import { evaluateTargets } from './targets.js';
import {
  BENCH_SUTS,
  offlineSamples,
  pinningTaskset,
  runTrial,
  type BenchSut,
  type PeakTrial,
  type Percentiles,
  type PlatformTrial,
  type ServerTrial,
  type TrialOptions,
  type TrialSpec,
} from './trials.js';

export type { BenchReport, BenchTarget, CorePeakRow, CpuNoiseFigure, PeakProcedureReport, ServerRow } from './report-types.js';

export interface BenchOptions {
  /** Short durations and one repetition: proves the benchmark works (CI). */
  tiny?: boolean;
  repeat?: number;
  /** Consecutive VALID runs that confirm a peak (default 3; 1 with tiny). */
  confirmRuns?: number;
  /** Length of each peak run in seconds (default 10; 0.2 with tiny). */
  confirmSeconds?: number;
  /** Progress lines go here (stderr by default). */
  log?: (line: string) => void;
}

function spread(values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function medianPercentiles(values: (Percentiles | null)[]): Percentiles | null {
  const present = values.filter((v): v is Percentiles => v !== null);
  if (present.length === 0) return null;
  return {
    p50: median(present.map((v) => v.p50)),
    p99: median(present.map((v) => v.p99)),
    p999: median(present.map((v) => v.p999)),
  };
}

/** `before` runs ahead of each repetition (a paired probe). */
async function repeatTrial<T>(spec: TrialSpec, repeat: number, options: TrialOptions = {}, before?: () => Promise<void>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < repeat; i++) {
    await before?.();
    results.push(await runTrial<T>(spec, options));
  }
  return results;
}

function medianCpuNoise(trials: CpuNoise[], restOnCpu0: boolean): CpuNoiseFigure {
  const m = (get: (n: CpuNoise) => number) => median(trials.map(get));
  return {
    cpu: trials[0]?.cpu ?? -1,
    pinned: trials.every((t) => t.pinned),
    restOnCpu0,
    durationNs: m((t) => t.durationNs),
    gapsPerSecond: m((t) => t.gapsPerSecond),
    lostFraction: m((t) => t.lostFraction),
    gapNs: { p50: m((t) => t.gapNs.p50), p99: m((t) => t.gapNs.p99), max: m((t) => t.gapNs.max) },
    residualNs: { p50: m((t) => t.residualNs.p50), p99: m((t) => t.residualNs.p99), p999: m((t) => t.residualNs.p999) },
  };
}

/** What a Server row asks for, before it runs. */
interface ServerRun {
  sut: BenchSut;
  targetQps: number;
  pin: boolean;
  dispatchSpinUs: number;
  wakeLeadUs: number;
}

/** Each pure-js run holds three Float64Arrays of rate x length entries: at most ~480 MB (as its bracket search). */
const PURE_JS_MAX_QUERIES_PER_RUN = 20e6;
/** The core records every sample (<= 64 B each): at most ~6.4 GB in one run. */
const CORE_MAX_QUERIES_PER_RUN = 100e6;

/**
 * One core peak row: FindPeakPerformance's 1-s trials give the first
 * bracket, then runs of the confirming length search from there and
 * confirm (lib/bench/peak.ts), each in a fresh process. The search is not
 * capped at a multiple of the bracket: one stall in a 1-s trial can put the
 * bracket far below the peak (wake: 80k where 10-s runs held 160k and more).
 */
async function corePeak(sut: BenchSut, tiny: boolean, p: PeakProcedureReport, log: (line: string) => void): Promise<CorePeakRow> {
  const baseQps = tiny ? 20000 : 50000;
  const trialMs = tiny ? 100 : 1000;
  log(`peak Server QPS ${sut}: bracket (${sut === 'pure-js' ? 'its own doubling and bisection' : 'FindPeakPerformance'}, ${trialMs / 1000}-s trials)`);
  const bracket = await runTrial<PeakTrial>({ kind: 'peak', sut, baseQps, durationMs: trialMs, targetLatencyNs: p.settings.targetLatencyNs });
  log(`    bracket: ${Math.round(bracket.peakQps)} QPS after ${bracket.trials} trials`);
  const durationMs = Math.round(p.confirmSeconds * 1000);
  const cap = (sut === 'pure-js' ? PURE_JS_MAX_QUERIES_PER_RUN : CORE_MAX_QUERIES_PER_RUN) / p.confirmSeconds;
  const startQps = Math.min(bracket.peakQps > 0 ? bracket.peakQps : baseQps, cap);
  const result = await findConfirmedPeak(async (qps, phase) => {
    const r = await runTrial<PeakRun>({ kind: 'peak-run', sut, targetQps: qps, durationMs });
    log(`    ${formatPeakRun({ ...r, phase })}`);
    return r;
  }, { startQps, precision: p.precision, confirmRuns: p.confirmRuns, stepDown: p.stepDown, maxRuns: p.maxRuns, minQps: 100, maxQps: cap });
  log(`    ${sut}: ${result.confirmedQps > 0 ? `confirmed ${result.confirmedQps} QPS` : `none confirmed; highest single VALID ${result.highestValidQps} QPS (unconfirmed)`}`);
  return { sut, ...result, bracket: { peakQps: bracket.peakQps, trials: bracket.trials, trialSeconds: trialMs / 1000 } };
}

/** Runs the whole benchmark and returns every figure. */
export async function runBenchmark(options: BenchOptions = {}): Promise<BenchReport> {
  const tiny = options.tiny ?? false;
  const repeat = options.repeat ?? (tiny ? 1 : 3);
  const confirmation = peakConfirmation(tiny, {
    ...(options.confirmRuns !== undefined ? { confirmRuns: options.confirmRuns } : {}),
    ...(options.confirmSeconds !== undefined ? { confirmSeconds: options.confirmSeconds } : {}),
  });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const serverMs = tiny ? 300 : 3000;
  const targetLatencyNs = 10_000_000;
  const canPin = pinningTaskset() !== null;

  log(`platform probes (x${repeat})`);
  const platform = await repeatTrial<PlatformTrial>({ kind: 'platform', tsfnWakes: tiny ? 200 : 5000 }, repeat);

  // CPU 1 with the rest of the process on CPU 0: the setting of the pinned Server rows.
  const noiseCpu = cpus().length >= 2 ? 1 : -1;
  log(`CPU noise on ${noiseCpu >= 0 ? `CPU ${noiseCpu}` : 'an unpinned thread'}${canPin ? ', the process on CPU 0' : ''} (x${repeat})`);
  const noiseTrials = await repeatTrial<CpuNoise>(
    { kind: 'cpu-noise', cpu: noiseCpu, durationMs: tiny ? 200 : 2000 },
    repeat,
    { onCpu0: canPin },
  );
  for (const warning of new Set(noiseTrials.map((t) => t.warning).filter((w) => w !== undefined))) log(`  ${warning}`);

  const serverRuns: ServerRun[] = [];
  const rates = tiny ? [1000, 10000] : [1000, 10000, 100000];
  for (const sut of BENCH_SUTS) {
    for (const targetQps of rates) serverRuns.push({ sut, targetQps, pin: false, dispatchSpinUs: 0, wakeLeadUs: 0 });
  }
  if (tiny) {
    serverRuns.push({ sut: 'null-native', targetQps: 1000, pin: true, dispatchSpinUs: 0, wakeLeadUs: 0 });
    serverRuns.push({ sut: 'wake', targetQps: 1000, pin: false, dispatchSpinUs: 0, wakeLeadUs: 100 });
  } else {
    // The issue-5 lateness target is stated pinned; a spinning worker skips
    // the futex wake, a wake lead the threadsafe-function wake-up.
    for (const sut of BENCH_SUTS) serverRuns.push({ sut, targetQps: 10000, pin: true, dispatchSpinUs: 0, wakeLeadUs: 0 });
    serverRuns.push({ sut: 'worker', targetQps: 10000, pin: false, dispatchSpinUs: 200, wakeLeadUs: 0 });
    serverRuns.push({ sut: 'wake', targetQps: 10000, pin: false, dispatchSpinUs: 0, wakeLeadUs: 100 });
  }
  const server: ServerRow[] = [];
  for (const run of serverRuns) {
    const pinned = run.pin && canPin;
    const label = serverRowLabel({ ...run, pinned, pinRequested: run.pin });
    log(`server ${label} (x${repeat})`);
    const floors: CpuNoise[] = [];
    const trials = await repeatTrial<ServerTrial>(
      {
        kind: 'server',
        sut: run.sut,
        targetQps: run.targetQps,
        // The 100k rows decide the JS tail target (issue 13): runs of 10 s, where stalls show.
        durationMs: run.targetQps >= 100_000 && !tiny ? 10_000 : serverMs,
        targetLatencyNs,
        ...(pinned ? { pinned: true } : {}),
        ...(run.dispatchSpinUs ? { dispatchSpinUs: run.dispatchSpinUs } : {}),
        ...(run.wakeLeadUs ? { wakeLeadUs: run.wakeLeadUs } : {}),
      },
      repeat,
      { onCpu0: pinned },
      pinned ? async () => void floors.push(await runTrial<CpuNoise>({ kind: 'cpu-noise', cpu: 1, durationMs: tiny ? 200 : 2000 }, { onCpu0: true })) : undefined,
    );
    server.push({
      sut: run.sut,
      targetQps: run.targetQps,
      valid: trials.every((t) => t.valid),
      latencyNs: medianPercentiles(trials.map((t) => t.latencyNs))!,
      issueLatenessNs: medianPercentiles(trials.map((t) => t.issueLatenessNs)),
      deliveryLagNs: medianPercentiles(trials.map((t) => t.deliveryLagNs)),
      achievedQps: spread(trials.map((t) => t.achievedQps)),
      repetitions: trials.length,
      pinned: pinned && trials.every((t) => t.pinned),
      pinRequested: run.pin,
      dispatchSpinUs: run.dispatchSpinUs,
      wakeLeadUs: run.wakeLeadUs,
      ...(floors.length
        ? { floorNs: { p99: median(floors.map((f) => f.residualNs.p99)), p999: median(floors.map((f) => f.residualNs.p999)) } }
        : {}),
    });
  }

  const confirmMs = Math.round(confirmation.confirmSeconds * 1000);
  const peakSettings = describePeakRunSettings(confirmMs);
  const procedure: PeakProcedureReport = {
    ...confirmation, maxRuns: (tiny ? 4 : 10) + 2 * confirmation.confirmRuns, precision: 0.05, stepDown: 0.07, settings: peakSettings,
  };
  log(`peak Server QPS: ${confirmation.confirmRuns} consecutive VALID run(s) of ${confirmation.confirmSeconds} s confirm a peak ` +
    `(${peakSettings.model} Server in the built-in mlperf.conf: p${peakSettings.targetLatencyPercentile * 100} <= ` +
    `${peakSettings.targetLatencyNs / 1e6} ms, min_query_count ${peakSettings.minQueryCount}, min_duration ${confirmation.confirmSeconds} s ` +
    `(mlperf.conf: ${peakSettings.mlperfConfMinDurationMs / 1000} s)); one search per row, not x${repeat}`);
  const serverMaxValidQps: BenchReport['serverMaxValidQps'] = {};
  const serverPeaks: CorePeakRow[] = [];
  for (const sut of BENCH_SUTS) {
    serverPeaks.push(await corePeak(sut, tiny, procedure, log));
    serverMaxValidQps[sut] = serverPeaks[serverPeaks.length - 1]!.confirmedQps;
  }

  const singleStreamQps: BenchReport['singleStreamQps'] = {};
  const singleStreamP90Ns: BenchReport['singleStreamP90Ns'] = {};
  for (const sut of BENCH_SUTS) {
    log(`single-stream ${sut} (x${repeat})`);
    const trials = await repeatTrial<{ qps: number; p90Ns: number }>(
      { kind: 'single-stream', sut, durationMs: tiny ? 200 : 2000 },
      repeat,
    );
    singleStreamQps[sut] = median(trials.map((t) => t.qps));
    singleStreamP90Ns[sut] = median(trials.map((t) => t.p90Ns));
  }

  const offlineSamplesPerSec: BenchReport['offlineSamplesPerSec'] = {};
  for (const sut of BENCH_SUTS) {
    log(`offline ${sut} (x${repeat})`);
    const trials = await repeatTrial<{ samplesPerSecond: number }>(
      { kind: 'offline', sut, samples: offlineSamples(tiny) },
      repeat,
    );
    offlineSamplesPerSec[sut] = median(trials.map((t) => t.samplesPerSecond));
  }

  // The JS null SUT above uses issueQueryIds; the object path (issueQuery) is measured beside it.
  log(`single-stream and offline wake, object path (x${repeat})`);
  const objectSingle = await repeatTrial<{ qps: number; p90Ns: number }>(
    { kind: 'single-stream', sut: 'wake', durationMs: tiny ? 200 : 2000, path: 'objects' },
    repeat,
  );
  const objectOffline = await repeatTrial<{ samplesPerSecond: number }>(
    { kind: 'offline', sut: 'wake', samples: offlineSamples(tiny), path: 'objects' },
    repeat,
  );
  const objectPath: BenchReport['objectPath'] = {
    singleStreamQps: median(objectSingle.map((t) => t.qps)),
    singleStreamP90Ns: median(objectSingle.map((t) => t.p90Ns)),
    offlineSamplesPerSec: median(objectOffline.map((t) => t.samplesPerSecond)),
  };

  // Two run lengths, 4x apart (1M and 4M samples): bytes per sample must not grow with the run.
  const memoryQps = tiny ? 50_000 : 200_000;
  const memoryRuns = tiny ? [500, 2000] : [5000, 20_000];
  log(`memory per sample (${memoryRuns.map((ms) => (memoryQps * ms) / 1000).join(' and ')} samples)`);
  const bytesPerSampleByRun: BenchReport['bytesPerSampleByRun'] = [];
  for (const durationMs of memoryRuns) {
    bytesPerSampleByRun.push(await runTrial({ kind: 'memory', targetQps: memoryQps, durationMs }));
  }

  log(`network rows (x${repeat})`);
  const network = await runNetworkBench({ tiny, repeat, log, confirmation });

  const report: BenchReport = {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cpus: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    config: { tiny, repeat },
    peakProcedure: procedure,
    platform: {
      clockReadNs: median(platform.map((p) => p.clockReadNs)),
      jsToNativeCallNs: median(platform.map((p) => p.jsToNativeCallNs)),
      tsfnWakeNs: {
        p50: median(platform.map((p) => p.tsfnWakeNs.p50)),
        p99: median(platform.map((p) => p.tsfnWakeNs.p99)),
      },
      cpuNoise: medianCpuNoise(noiseTrials, canPin),
    },
    server,
    serverMaxValidQps,
    serverPeaks,
    singleStreamQps,
    singleStreamP90Ns,
    offlineSamplesPerSec,
    objectPath,
    bytesPerSample: Math.max(...bytesPerSampleByRun.map((r) => r.bytesPerSample)),
    bytesPerSampleByRun,
    network,
    targets: [],
  };
  report.targets = evaluateTargets(report);
  return report;
}
