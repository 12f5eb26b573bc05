/**
 * How the bench finds a peak Server rate (the core rows and the network
 * rows alike): a search of single runs brackets the highest VALID rate, then
 * the peak is confirmed by `confirmRuns` consecutive VALID runs at one rate,
 * each a separate Server run of at least the confirming length. A one-run
 * peak misses the stalls that make longer runs INVALID (issue 13).
 */
import { loadSettings } from '../config/load-settings.js';
import { SettingsError } from '../errors.js';
import type { TestSettingsInput } from '../types/settings.js';

/** One Server run of a peak procedure. */
export interface PeakRun {
  targetQps: number;
  valid: boolean;
  latencyP99Ns: number;
  achievedQps: number;
  /** 'search': a run of the bracket search; 'confirm': one of a confirmation's consecutive runs. */
  phase?: 'search' | 'confirm';
  /** Seconds from the start of issuing to the last completion. */
  durationS?: number;
  /** Queries issued. */
  queries?: number;
  /** Network rows: requests that failed (every kind). */
  failed?: number;
  /** Network rows: the client process's CPU time per request. */
  cpuPerRequestNs?: number;
  /** Network rows: of that CPU time, the kernel's share (system time, 0..1). */
  kernelCpuShare?: number;
  /** Network rows: the server's CPUs' busy share over the measured run (0..1). */
  serverBusy?: number;
}

export interface PeakProcedureOptions {
  /** The search's first rate. */
  startQps: number;
  /** The search stops when the lowest INVALID rate is within this fraction above the highest VALID one. */
  precision: number;
  /** Consecutive VALID runs at one rate that confirm it. */
  confirmRuns: number;
  /**
   * After a confirming run fails at a rate VALID before, the next rate is
   * rate x (1 - stepDown); the step doubles with each further rate that
   * fails (at most MAX_STEP_DOWN).
   */
  stepDown: number;
  /** Every run, search and confirmation. */
  maxRuns: number;
  /** Confirmations the search leaves budget for (default 2): the search gets maxRuns - this x confirmRuns. */
  reservedConfirmations?: number;
  /** Lower rates are not tried (too few queries for early stopping to pass after one late query). */
  minQps: number;
  /** Higher rates are not tried (e.g. the memory a pure-JS run holds). */
  maxQps?: number;
}

export interface PeakResult {
  /** Highest rate at which confirmRuns consecutive runs were VALID; 0: none within the budget. */
  confirmedQps: number;
  /** Highest rate any single run was VALID at: unconfirmed when above confirmedQps. */
  highestValidQps: number;
  /** Every run in order, each with its phase. */
  runs: PeakRun[];
}

const RESERVED_CONFIRMATIONS = 2;

/**
 * Searches (double from startQps while VALID, halve while not, then bisect
 * to `precision`) within a budget that leaves room for the confirmations,
 * then confirms the highest VALID rate with confirmRuns consecutive runs;
 * a failed confirming run steps down (see nextRate) and the count starts
 * again.
 */
export async function findConfirmedPeak(
  run: (qps: number, phase: 'search' | 'confirm') => Promise<PeakRun>,
  options: PeakProcedureOptions,
): Promise<PeakResult> {
  const { precision, confirmRuns, stepDown, maxRuns, minQps } = options;
  const maxQps = options.maxQps ?? Number.POSITIVE_INFINITY;
  const runs: PeakRun[] = [];
  const at = async (qps: number, phase: 'search' | 'confirm'): Promise<boolean> => {
    const r = await run(qps, phase);
    runs.push({ ...r, targetQps: qps, phase });
    return r.valid;
  };
  const searchBudget = Math.max(1, maxRuns - (options.reservedConfirmations ?? RESERVED_CONFIRMATIONS) * confirmRuns);

  // lo: the highest VALID rate (0: none); hi: the lowest INVALID one.
  let lo = 0;
  let hi = Number.POSITIVE_INFINITY;
  let qps = Math.round(Math.min(options.startQps, maxQps));
  let searching = qps >= minQps;
  while (searching && runs.length < searchBudget) {
    if (await at(qps, 'search')) lo = Math.max(lo, qps);
    else hi = Math.min(hi, qps);
    if (lo === 0) qps = Math.round(hi / 2);
    else if (hi === Number.POSITIVE_INFINITY) qps = Math.round(Math.min(2 * lo, maxQps));
    else qps = Math.round((lo + hi) / 2);
    searching = qps >= minQps && qps !== lo && qps !== hi && !(hi / lo <= 1 + precision);
  }

  // The confirmation starts at the highest VALID rate, or where the search would have gone next.
  let rate = lo > 0 ? lo : hi === Number.POSITIVE_INFINITY ? qps : Math.round(hi / 2);
  let failedRates = 0;
  while (rate >= minQps && runs.length + confirmRuns <= maxRuns) {
    let passed = 0;
    while (passed < confirmRuns && (await at(rate, 'confirm'))) passed++;
    if (passed === confirmRuns) return { confirmedQps: rate, highestValidQps: highestValid(runs), runs };
    failedRates++;
    rate = Math.min(rate - 1, nextRate(runs, rate, Math.min(MAX_STEP_DOWN, stepDown * 2 ** (failedRates - 1))));
  }
  return { confirmedQps: 0, highestValidQps: highestValid(runs), runs };
}

/**
 * The largest step down after failed confirmations. The step grows because
 * a single VALID run can be far above what holds three times (measured: JS
 * poll VALID once at 2.55 M and failing confirmations down to 1.65 M, where
 * 1.2 M held 3 of 3): 7 % steps spent the budget before reaching it.
 */
export const MAX_STEP_DOWN = 0.25;

/**
 * After a failed confirming run at `rate`: a step of stepDown when any run at
 * this rate or above was VALID (rates here can pass: the failure was a
 * stall), else half (nothing this high has passed: the search ran out of
 * budget while halving).
 */
function nextRate(runs: readonly PeakRun[], rate: number, stepDown: number): number {
  return Math.round(runs.some((r) => r.valid && r.targetQps >= rate) ? rate * (1 - stepDown) : rate / 2);
}

function highestValid(runs: readonly PeakRun[]): number {
  return Math.max(0, ...runs.filter((r) => r.valid).map((r) => r.targetQps));
}

/** The bench's confirmation settings: `confirmRuns` runs of `confirmSeconds` each. */
export interface PeakConfirmation {
  confirmRuns: number;
  confirmSeconds: number;
}

/** Longest confirming run the bench accepts (MLPerf's Server min_duration is 600 s). */
export const MAX_CONFIRM_SECONDS = 3600;
export const MAX_CONFIRM_RUNS = 20;

/** The default confirmation: 3 runs of 10 s; --tiny 1 run of 0.2 s (proves it works). */
export function peakConfirmation(tiny: boolean, given: Partial<PeakConfirmation> = {}): PeakConfirmation {
  const confirmRuns = given.confirmRuns ?? (tiny ? 1 : 3);
  const confirmSeconds = given.confirmSeconds ?? (tiny ? 0.2 : 10);
  if (!Number.isInteger(confirmRuns) || confirmRuns < 1 || confirmRuns > MAX_CONFIRM_RUNS) {
    throw new SettingsError('confirmRuns', confirmRuns, `confirmRuns must be an integer from 1 to ${MAX_CONFIRM_RUNS}, got ${String(confirmRuns)}.`);
  }
  if (typeof confirmSeconds !== 'number' || !Number.isFinite(confirmSeconds) || confirmSeconds < 0.1 || confirmSeconds > MAX_CONFIRM_SECONDS) {
    throw new SettingsError('confirmSeconds', confirmSeconds,
      `confirmSeconds must be a number of seconds from 0.1 to ${MAX_CONFIRM_SECONDS}, got ${String(confirmSeconds)}.`);
  }
  return { confirmRuns, confirmSeconds };
}

/** A run as the progress log prints it. */
export function formatPeakRun(r: PeakRun): string {
  const parts = [
    `${r.phase ?? 'run'} ${Math.round(r.targetQps)} QPS: ${r.valid ? 'VALID' : 'INVALID'}`,
    `p99 ${(r.latencyP99Ns / 1e6).toFixed(2)} ms`,
    `achieved ${Math.round(r.achievedQps)}/s`,
  ];
  if (r.durationS !== undefined) parts.push(`${r.durationS.toFixed(1)} s`);
  if (r.queries !== undefined) parts.push(`${r.queries} queries`);
  if (r.cpuPerRequestNs !== undefined) {
    parts.push(`client CPU ${(r.cpuPerRequestNs / 1000).toFixed(1)} us/request` +
      (r.kernelCpuShare !== undefined ? ` (${Math.round(r.kernelCpuShare * 100)} % in the kernel)` : ''));
  }
  if (r.serverBusy !== undefined) parts.push(`server busy ${Math.round(r.serverBusy * 100)} %`);
  if (r.failed) parts.push(`${r.failed} failed`);
  return parts.join(', ');
}

/** The confirmed peak (or why there is none) and its confirming runs, as the report's text says it. */
export function describePeak(p: PeakResult, c: PeakConfirmation): string {
  const confirming = p.confirmedQps > 0 ? p.runs.slice(-c.confirmRuns) : [];
  if (confirming.length) {
    const each = confirming.map((r) => `${r.durationS?.toFixed(1) ?? '-'} s/${r.queries ?? '-'} q/p99 ${(r.latencyP99Ns / 1e6).toFixed(2)} ms`).join(', ');
    return `${Math.round(p.confirmedQps).toLocaleString('en-US')} confirmed by ${confirming.length} VALID run(s) (${each})`;
  }
  const unconfirmed = p.highestValidQps > 0
    ? `highest single VALID run ${Math.round(p.highestValidQps).toLocaleString('en-US')} (UNCONFIRMED)`
    : 'no run was VALID';
  return `0 confirmed; ${unconfirmed}`;
}

/** The search's runs in one line: rate, ✗ when INVALID, c for a confirming run. */
export function describeRuns(runs: readonly PeakRun[]): string {
  return runs.map((r) => `${Math.round(r.targetQps).toLocaleString('en-US')}${r.phase === 'confirm' ? 'c' : ''}${r.valid ? '' : '✗'}`).join(' ');
}

/** What a core peak row's runs use: resnet50's Server settings in the built-in mlperf.conf. */
export const PEAK_MODEL = 'resnet50';

/**
 * The settings of one core peak run: the built-in mlperf.conf's resnet50
 * Server settings (latency bound, percentile, min_query_count, seeds) with
 * target_qps and min_duration set on top, as a user.conf would.
 */
export function peakRunSettings(targetQps: number, durationMs: number): TestSettingsInput {
  return loadSettings({
    model: PEAK_MODEL,
    scenario: 'Server',
    overrides: [{ label: 'bench', settings: { serverTargetQps: targetQps, minDurationMs: durationMs } }],
  }).settings;
}

/** The settings a core peak row's runs had, as the report states them. */
export interface PeakRunSettings {
  model: string;
  targetLatencyNs: number;
  targetLatencyPercentile: number;
  minQueryCount: number;
  /** The run length used (the confirming seconds) and mlperf.conf's own min_duration, which a submission needs. */
  minDurationMs: number;
  mlperfConfMinDurationMs: number;
}

export function describePeakRunSettings(durationMs: number): PeakRunSettings {
  const conf = loadSettings({ model: PEAK_MODEL, scenario: 'Server' }).settings;
  const used = peakRunSettings(1, durationMs);
  return {
    model: PEAK_MODEL,
    targetLatencyNs: Number(used.serverTargetLatencyNs),
    targetLatencyPercentile: Number(used.serverTargetLatencyPercentile),
    minQueryCount: Number(used.minQueryCount),
    minDurationMs: Number(used.minDurationMs),
    mlperfConfMinDurationMs: Number(conf.minDurationMs),
  };
}
