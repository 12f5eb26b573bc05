/**
 * `loadgen bench --soak <seconds>`: Server at 100k QPS with the JS null SUT
 * (dispatch `wake`, the default) for `<seconds>`, in consecutive runs in this
 * one process, reporting RSS every 10 s, lost completions and validity.
 *
 * Why consecutive runs (60 s each by default) and not one long run: a run
 * pre-generates its whole schedule and keeps one record per sample (~50 B),
 * so one 600-s run at 100k QPS holds 60 M records (~3 GB) and its RSS grows
 * by design. Consecutive runs keep each run's memory the same, so any growth
 * across them is a leak, and they prove that nothing of one run stays behind
 * for the next. Before each run the soak asks V8 for a full garbage
 * collection: what a finished run left for the collector (e.g. the
 * ArrayBuffers holding its sample indices, ~5 B a sample) is freed whenever V8
 * decides, and would otherwise show as growth of a few runs' worth; memory
 * still reachable, a real leak, survives it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { startTest } from '../api/start-test.js';
import type { QuerySample, SystemUnderTest } from '../types/api.js';
import { createNullSut, createSyntheticQsl } from '../suts/suts.js';
import { fmt } from './figures.js';

export interface SoakOptions {
  /** Total time to run, seconds (consecutive runs until it is used up). */
  seconds: number;
  /** Server target QPS. Default 100,000. */
  targetQps?: number;
  /** Length of each run (its minDurationMs), seconds. Default 60. */
  runSeconds?: number;
  /** RSS sampling period, ms. Default 10,000. */
  sampleIntervalMs?: number;
  /** The flatness baseline is the peak RSS when the first run ending after `baselineSeconds` ends. Default 60. */
  baselineSeconds?: number;
  /** Each RSS sample and run as it happens (stderr by default). */
  log?: (line: string) => void;
}

export interface SoakRssSample {
  /** Seconds since the soak started. */
  elapsedS: number;
  /** Resident set size now. */
  rssMb: number;
  /** The process's peak resident set size so far (getrusage ru_maxrss): catches the peaks between samples. */
  peakRssMb: number;
  heapUsedMb: number;
  /** ArrayBuffers held by JS (e.g. each run's sample-index copies until the GC frees them). */
  arrayBuffersMb: number;
  /** 1-based run in progress when sampled; 0 between runs. */
  run: number;
  /** Taken right after run `endOfRun` returned. */
  endOfRun?: number;
}

export interface SoakRun {
  run: number;
  /** The run's minDurationMs. */
  durationMs: number;
  valid: boolean;
  /** Samples the core issued / credited as completed / counted incomplete at the end. */
  issuedSamples: number;
  completedSamples: number;
  incompleteSamples: number;
  /** Samples the SUT received in issueQuery, and the completions it made. */
  sutReceived: number;
  sutCompleted: number;
  /** issued - completed - still outstanding at the SUT (received - its completions): must be 0. */
  lostCompletions: number;
  /** Completion calls the core rejected (invalid, unissued or duplicate ids). */
  rejectedCompletions: number;
  /** Samples the core credited beyond the completions this run's SUT made (a stale or foreign completion credited): must be 0. */
  creditedWithoutCompletion: number;
  completedSamplesPerSecond: number;
  latencyP99Ns: number;
  wallSeconds: number;
}

/** The flatness check: the peak RSS after the first minute does not grow by more than the tolerance. */
export interface SoakRssFlatness {
  criterion: string;
  /** Peak RSS (MB) when the first run ending after the first baselineSeconds ended; null when none did before the last run. */
  baselineMb: number | null;
  /** Peak RSS (MB) at the end of the soak; null when not judged. */
  maxAfterMb: number | null;
  /** maxAfterMb / baselineMb. */
  ratio: number | null;
  /** null: not judged (no run after the one that ends the baseline window). */
  flat: boolean | null;
}

export interface SoakReport {
  date: string;
  machine: { cpu: string; cpus: number; node: string; platform: string };
  config: {
    seconds: number;
    targetQps: number;
    runSeconds: number;
    sampleIntervalS: number;
    baselineSeconds: number;
    scenario: 'Server';
    sut: string;
    dispatch: 'wake';
    /** A full V8 garbage collection before each run. */
    gcBeforeEachRun: true;
  };
  rss: SoakRssSample[];
  runs: SoakRun[];
  totals: {
    issuedSamples: number;
    completedSamples: number;
    outstandingSamples: number;
    lostCompletions: number;
    rejectedCompletions: number;
    creditedWithoutCompletion: number;
  };
  rssFlat: SoakRssFlatness;
  /** Every run VALID. */
  valid: boolean;
  /** lostCompletions, rejectedCompletions and creditedWithoutCompletion are 0 and RSS is not found growing (flat true or not judged). */
  passed: boolean;
}

/** Allowed growth of RSS over the first minute's peak. */
export const SOAK_RSS_TOLERANCE = 0.1;

const MB = 1024 * 1024;

/**
 * RSS is judged by its peak (ru_maxrss), not by the samples: every run peaks
 * briefly at its end (results are computed from all its records), which a
 * 10-s sample may or may not catch. Baseline: the peak when the first run
 * that ends after the first `baselineSeconds` has ended (each run has the same
 * shape, so by then the process has been through one full run); flat when
 * the peak at the end of the soak is at most `1 + tolerance` times that.
 */
export function rssFlatness(samples: readonly SoakRssSample[], baselineSeconds = 60, tolerance = SOAK_RSS_TOLERANCE): SoakRssFlatness {
  const criterion = `peak RSS at the end <= ${1 + tolerance} x the peak RSS when the first run ending after ${baselineSeconds} s ended`;
  const baselineIndex = samples.findIndex((s) => s.endOfRun !== undefined && s.elapsedS >= baselineSeconds);
  const lastRunEnd = samples.reduce((last, s, i) => (s.endOfRun !== undefined ? i : last), -1);
  if (baselineIndex < 0 || baselineIndex === lastRunEnd) return { criterion, baselineMb: null, maxAfterMb: null, ratio: null, flat: null };
  const baselineMb = samples[baselineIndex]!.peakRssMb;
  const maxAfterMb = Math.max(...samples.slice(baselineIndex).map((s) => s.peakRssMb));
  const ratio = maxAfterMb / baselineMb;
  return { criterion, baselineMb, maxAfterMb, ratio, flat: ratio <= 1 + tolerance };
}

/** V8's full garbage collection: `gc` when Node runs with --expose-gc, else exposed now. */
function fullGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** The JS null SUT, counting what it receives and completes. */
function countingNullSut(): SystemUnderTest & { received: number; completed: number } {
  const inner = createNullSut('soak-null');
  const sut = {
    name: inner.name,
    received: 0,
    completed: 0,
    issueQuery(samples: QuerySample[]): void {
      sut.received += samples.length;
      inner.issueQuery(samples); // completes every sample before it returns
      sut.completed += samples.length;
    },
  };
  return sut;
}

/** Runs the soak and returns its report (never throws for a failed check: see `passed`). */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const seconds = options.seconds;
  const targetQps = options.targetQps ?? 100_000;
  const runSeconds = options.runSeconds ?? 60;
  const sampleIntervalMs = options.sampleIntervalMs ?? 10_000;
  const baselineSeconds = options.baselineSeconds ?? 60;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (!(seconds > 0) || !(runSeconds > 0) || !(targetQps > 0) || !(sampleIntervalMs > 0)) {
    throw new RangeError('runSoak: seconds, runSeconds, targetQps and sampleIntervalMs must be positive');
  }

  const start = performance.now();
  const elapsedS = () => (performance.now() - start) / 1000;
  const rss: SoakRssSample[] = [];
  let currentRun = 0;
  const sample = (endOfRun?: number) => {
    const m = process.memoryUsage();
    const s: SoakRssSample = {
      elapsedS: Math.round(elapsedS() * 10) / 10,
      rssMb: m.rss / MB,
      peakRssMb: (process.resourceUsage().maxRSS * 1024) / MB,
      heapUsedMb: m.heapUsed / MB,
      arrayBuffersMb: m.arrayBuffers / MB,
      run: currentRun,
      ...(endOfRun !== undefined ? { endOfRun } : {}),
    };
    rss.push(s);
    const what = endOfRun !== undefined ? `end of run ${endOfRun}` : `run ${s.run === 0 ? '-' : s.run}`;
    log(`t=${fmt(s.elapsedS, 1).padStart(7)} s  rss ${fmt(s.rssMb, 1).padStart(8)} MB  peak ${fmt(s.peakRssMb, 1).padStart(8)} MB  heap ${fmt(s.heapUsedMb, 1).padStart(7)} MB  array buffers ${fmt(s.arrayBuffersMb, 1).padStart(7)} MB  ${what}`);
  };

  const gc = fullGc();
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-soak-'));
  const runs: SoakRun[] = [];
  sample();
  const timer = setInterval(() => sample(), sampleIntervalMs);
  try {
    for (;;) {
      const remainingMs = Math.round(seconds * 1000 - (performance.now() - start));
      // The last run may be shorter; a sliver under a second is not worth a run.
      if (runs.length > 0 && remainingMs < 1000) break;
      const durationMs = Math.max(1000, Math.min(runSeconds * 1000, remainingMs));
      gc();
      currentRun = runs.length + 1;
      const sut = countingNullSut();
      const runStart = performance.now();
      const r = await startTest(sut, createSyntheticQsl(1024), {
        scenario: 'Server',
        serverTargetQps: targetQps,
        minDurationMs: durationMs,
        minQueryCount: 1,
      }, { outdir });
      currentRun = 0;
      const outstanding = sut.received - sut.completed;
      const run: SoakRun = {
        run: runs.length + 1,
        durationMs,
        valid: r.valid,
        issuedSamples: r.counts.issuedSamples,
        completedSamples: r.counts.completedSamples,
        incompleteSamples: r.counts.incompleteSamples,
        sutReceived: sut.received,
        sutCompleted: sut.completed,
        lostCompletions: r.counts.issuedSamples - r.counts.completedSamples - outstanding,
        rejectedCompletions: r.errors.invalidIds + r.errors.unissuedIds + r.errors.duplicateIds + r.errors.staleIds,
        creditedWithoutCompletion: Math.max(0, r.counts.completedSamples - sut.completed),
        completedSamplesPerSecond: r.completedSamplesPerSecond ?? 0,
        latencyP99Ns: r.percentilesNs[99],
        wallSeconds: (performance.now() - runStart) / 1000,
      };
      runs.push(run);
      sample(run.run);
      log(`run ${run.run}: ${fmt(durationMs / 1000)} s, ${run.valid ? 'VALID' : 'INVALID'}, issued ${fmt(run.issuedSamples)}, ` +
        `completed ${fmt(run.completedSamples)}, lost ${fmt(run.lostCompletions)}, rejected completions ${fmt(run.rejectedCompletions)}`);
    }
  } finally {
    clearInterval(timer);
    rmSync(outdir, { recursive: true, force: true });
  }
  const sum = (get: (r: SoakRun) => number) => runs.reduce((s, r) => s + get(r), 0);
  const totals = {
    issuedSamples: sum((r) => r.issuedSamples),
    completedSamples: sum((r) => r.completedSamples),
    outstandingSamples: sum((r) => r.sutReceived - r.sutCompleted),
    lostCompletions: sum((r) => r.lostCompletions),
    rejectedCompletions: sum((r) => r.rejectedCompletions),
    creditedWithoutCompletion: sum((r) => r.creditedWithoutCompletion),
  };
  const rssFlat = rssFlatness(rss, baselineSeconds);
  return {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cpus: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    config: {
      seconds, targetQps, runSeconds, sampleIntervalS: sampleIntervalMs / 1000, baselineSeconds,
      scenario: 'Server', sut: 'null (JS)', dispatch: 'wake', gcBeforeEachRun: true,
    },
    rss,
    runs,
    totals,
    rssFlat,
    valid: runs.every((r) => r.valid),
    passed: totals.lostCompletions === 0 && totals.rejectedCompletions === 0 && totals.creditedWithoutCompletion === 0 && rssFlat.flat !== false,
  };
}

/** The soak report as plain text: the RSS table, the runs, and the verdicts. */
export function formatSoakReport(r: SoakReport): string {
  const lines: string[] = [];
  lines.push(`loadgen bench --soak ${r.config.seconds} — ${r.date} — ${r.machine.cpu} (${r.machine.cpus} CPUs), Node ${r.machine.node}`);
  lines.push(`Server @ ${fmt(r.config.targetQps)} QPS, JS null SUT, dispatch ${r.config.dispatch}, ` +
    `${r.runs.length} consecutive run(s) of up to ${fmt(r.config.runSeconds)} s in one process, a full GC before each`);
  lines.push('');
  lines.push('     t (s)    RSS (MB)   peak (MB)   heap (MB)  buffers (MB)  run');
  for (const s of r.rss) {
    const what = s.endOfRun !== undefined ? `end of ${s.endOfRun}` : s.run === 0 ? '-' : String(s.run);
    lines.push(`${fmt(s.elapsedS, 1).padStart(10)} ${fmt(s.rssMb, 1).padStart(11)} ${fmt(s.peakRssMb, 1).padStart(11)} ${fmt(s.heapUsedMb, 1).padStart(11)} ${fmt(s.arrayBuffersMb, 1).padStart(13)}  ${what}`);
  }
  lines.push('');
  lines.push('run  seconds  valid       issued    completed  lost  rejected  completed/s   lat p99 (us)');
  for (const run of r.runs) {
    lines.push(`${String(run.run).padStart(3)}  ${fmt(run.durationMs / 1000).padStart(7)}  ${(run.valid ? 'yes' : 'NO').padEnd(5)} ` +
      `${fmt(run.issuedSamples).padStart(12)} ${fmt(run.completedSamples).padStart(12)} ${fmt(run.lostCompletions).padStart(5)} ` +
      `${fmt(run.rejectedCompletions).padStart(9)} ${fmt(run.completedSamplesPerSecond).padStart(12)} ${fmt(run.latencyP99Ns / 1000, 2).padStart(14)}`);
  }
  lines.push('');
  const t = r.totals;
  lines.push(`lost completions: ${fmt(t.lostCompletions)} (issued ${fmt(t.issuedSamples)} - completed ${fmt(t.completedSamples)} - outstanding ${fmt(t.outstandingSamples)}); ` +
    `rejected completions: ${fmt(t.rejectedCompletions)}; credited without a completion: ${fmt(t.creditedWithoutCompletion)}`);
  const f = r.rssFlat;
  const flat = f.flat === null ? `not judged (needs a run after the first one ending after ${r.config.baselineSeconds} s)` : f.flat ? 'yes' : 'NO';
  lines.push(`RSS flat: ${flat}${f.ratio !== null ? ` (peak ${fmt(f.maxAfterMb, 1)} MB at the end vs ${fmt(f.baselineMb, 1)} MB: x${fmt(f.ratio, 3)})` : ''}; criterion: ${f.criterion}`);
  lines.push(`every run VALID: ${r.valid ? 'yes' : 'NO'}`);
  lines.push(`soak ${r.passed ? 'passed' : 'FAILED'}`);
  return lines.join('\n');
}
