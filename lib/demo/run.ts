/**
 * The built-in demo (`loadgen run` without --sut): onnxruntime runs the
 * shipped CNN over the synthetic QSL, Offline first, then Server at a QPS
 * derived from the Offline run's rate profile (lib/demo/rate.ts), run once
 * more at a lower rate when it misses the latency bound. Each scenario logs
 * under <outdir>/<Scenario>/, an AccuracyOnly run under
 * <outdir>/<Scenario>/accuracy/ (the submission layout `loadgen check`
 * reads), so it never replaces a performance run's logs. In AccuracyOnly
 * (and SubmissionRun) every logged output is checked against the TypeScript
 * reference.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { DemoError } from '../errors.js';
import { invalidRunHint, lowerServerQps, serverQueriesNeeded } from '../api/invalid-hint.js';
import { startTest, type StartTestOptions } from '../api/start-test.js';
import { FIELD_BY_NAME } from '../settings/fields.js';
import type { LogSettingsInput, Scenario, TestMode, TestSettingsInput } from '../types/settings.js';
import type { TestResult } from '../types/api.js';
import { createDemoQsl, demoSample } from './dataset.js';
import { NUM_CLASSES, OUTPUT_BYTES } from './model.js';
import { demoServerQps, replayOffline, round3, type OfflineReplay } from './rate.js';
import { DEFAULT_TOLERANCE, logitsMatch, maxAbsDiff, referenceLogits } from './reference.js';
import {
  createDemoSut,
  DEFAULT_MAX_BATCH_SIZE,
  DEFAULT_MAX_WAIT_MS,
  defaultWorkerCount,
  InferencePool,
  type DemoSut,
  type ExecutionProvider,
} from './sut.js';

export { SERVER_QPS_FRACTION } from './rate.js';
/** The Offline query is sized for this much more than the calibrated throughput, so the run lasts its minimum duration. */
export const OFFLINE_HEADROOM = 1.15;
/** The same for a rerun of an Offline run that ended early: more margin, each rerun costs a whole run. */
export const OFFLINE_RETRY_HEADROOM = 1.5;
/** Offline runs at most (the first and two reruns). */
export const OFFLINE_ATTEMPTS = 3;
/** An AccuracyOnly run's logs: this folder inside its scenario's. */
export const ACCURACY_DIR = 'accuracy';
/** Server latency bound and percentile when the settings give none (the reference's defaults). */
const DEFAULT_SERVER_LATENCY_NS = Number(FIELD_BY_NAME.get('serverTargetLatencyNs')!.default);
const DEFAULT_SERVER_PERCENTILE = Number(FIELD_BY_NAME.get('serverTargetLatencyPercentile')!.default);

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Each scenario's logs go to <outdir>/<Scenario>/. */
  outdir: string;
  /**
   * Settings on top of the demo's (e.g. from --set): any field given here
   * wins, including scenario (one scenario only), mode, min_duration_ms,
   * offline_expected_qps and server_target_qps.
   */
  settings?: TestSettingsInput;
  /** Log settings of every run (prefix, suffix, …); outdir is the scenario's folder. */
  logSettings?: LogSettingsInput;
  executionProvider?: ExecutionProvider;
  maxBatchSize?: number;
  maxWaitMs?: number;
  /** Inference worker threads. Default: one per core, up to 4. */
  workers?: number;
  /** onnxruntime intra-op threads per worker. Default 1. */
  intraOpNumThreads?: number;
  /** Passed to every startTest call (audit.config handling). */
  startTestOptions?: StartTestOptions;
  /** Progress lines (stage, per-scenario result); default: none. */
  log?: (line: string) => void;
  /** Starts a progress display for one run (right before startTest); returns its stop function. */
  startProgress?: (scenario: Scenario, outdir: string) => () => void;
  /** Called after each scenario's run (e.g. writes its report.html); returns the path of what it wrote, if anything. */
  afterRun?: (run: DemoScenarioRun) => string | undefined;
}

/** The accuracy check of one run's mlperf_log_accuracy.json. */
export interface AccuracyReport {
  logFile: string;
  /** Records checked (one per logged sample). */
  checked: number;
  /** Records whose logits match the reference within the tolerance. */
  matched: number;
  maxAbsDiff: number;
  tolerance: number;
  /** Records whose top-1 class equals the reference's. */
  top1Agree: number;
  /** The first mismatching record, for the error message. */
  firstMismatch?: { seqId: number; qslIdx: number; reason: string };
}

/** One scenario of the demo. */
export interface DemoScenarioRun {
  scenario: Scenario;
  outdir: string;
  settings: TestSettingsInput;
  result: TestResult;
  accuracy?: AccuracyReport;
  /** What {@link DemoOptions.afterRun} wrote (report.html). */
  report?: string;
  /** Server: the run before this one, INVALID for latency at a higher rate (its logs were replaced by this run's). */
  earlierAttempt?: { serverTargetQps: number; validity: 'INVALID'; invalidReasons: string[]; percentilesNs: TestResult['percentilesNs'] };
  /** How the Server rate was chosen (absent when --set gave it). */
  serverQpsBasis?: string;
}

/** Everything the demo did. */
export interface DemoOutcome {
  runs: DemoScenarioRun[];
  /** Throughput of the pre-run calibration, samples/s (when one was needed). */
  calibratedSamplesPerSecond?: number;
  onnxruntime: { executionProvider: ExecutionProvider; maxBatchSize: number; maxWaitMs: number; workers: number };
  /** True when every performance run is VALID and every accuracy check matched. */
  ok: boolean;
}

function isAccuracyMode(mode: TestMode | undefined): boolean {
  return mode === 'AccuracyOnly' || mode === 'SubmissionRun';
}

/** The scenarios the demo runs for these settings. */
export function demoScenarios(settings: TestSettingsInput): Scenario[] {
  if (settings.scenario !== undefined) return [settings.scenario];
  // Accuracy does not depend on the scenario: one pass over the data set is enough.
  if (settings.mode === 'AccuracyOnly') return ['Offline'];
  return ['Offline', 'Server'];
}

/**
 * Runs the demo. Rejects with an InterfaceError when onnxruntime-node or the
 * execution provider is unavailable, with a DemoError when inference
 * failed during a run; resolves otherwise, `ok` saying whether everything
 * was VALID and matched.
 */
export async function runDemo(options: DemoOptions): Promise<DemoOutcome> {
  const log = options.log ?? ((): void => {});
  const user = options.settings ?? {};
  const ep = options.executionProvider ?? 'cpu';
  const maxBatchSize = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const workers = options.workers ?? defaultWorkerCount();

  const pool = await InferencePool.create({
    executionProvider: ep,
    workers,
    ...(options.intraOpNumThreads !== undefined ? { intraOpNumThreads: options.intraOpNumThreads } : {}),
  });
  const outcome: DemoOutcome = { runs: [], onnxruntime: { executionProvider: ep, maxBatchSize, maxWaitMs, workers }, ok: true };
  try {
    const qsl = createDemoQsl();
    const sut = createDemoSut(pool, qsl, { maxBatchSize, maxWaitMs });
    const minDurationMs = user.minDurationMs ?? 10_000;
    let calibrated: number | undefined;
    const calibrate = async (): Promise<number> => {
      if (calibrated === undefined) {
        const ms = Math.min(1000, Math.max(200, minDurationMs / 10));
        log(`demo: measuring onnxruntime throughput for ${ms} ms (${ep}, batch <= ${maxBatchSize})`);
        calibrated = await measureThroughput(pool, maxBatchSize, ms);
        outcome.calibratedSamplesPerSecond = calibrated;
      }
      return calibrated;
    };

    let offlineSamplesPerSecond: number | undefined;
    let offlineReplay: OfflineReplay | undefined;
    const latencyBoundNs = user.serverTargetLatencyNs ?? DEFAULT_SERVER_LATENCY_NS;
    const boundMs = latencyBoundNs / 1e6;
    const signal = options.startTestOptions?.signal;
    for (const scenario of demoScenarios(user)) {
      if (signal?.aborted) break;  // interrupted: no further scenario
      const settings: TestSettingsInput = { minDurationMs, ...user, scenario };
      const accuracyOnly = settings.mode === 'AccuracyOnly';
      if (scenario === 'Offline' && user.offlineExpectedQps === undefined && !accuracyOnly) {
        settings.offlineExpectedQps = round3((await calibrate()) * OFFLINE_HEADROOM);
      }
      let serverQpsBasis: string | undefined;
      if (scenario === 'Server' && user.serverTargetQps === undefined) {
        const chosen = offlineSamplesPerSecond !== undefined
          ? demoServerQps(offlineSamplesPerSecond, offlineReplay)
          : demoServerQps(await calibrate(), undefined);
        settings.serverTargetQps = chosen.qps;
        serverQpsBasis = offlineSamplesPerSecond !== undefined ? chosen.basis : chosen.basis.replace('the Offline rate', 'the calibrated rate');
        log(`demo: Server rate ${chosen.qps} QPS: ${serverQpsBasis}`);
      }
      // An accuracy run never replaces a performance run's logs.
      const dir = accuracyOnly ? join(options.outdir, scenario, ACCURACY_DIR) : join(options.outdir, scenario);
      const runOnce = async (): Promise<TestResult> => {
        log(`demo: ${scenario} ${settings.mode ?? 'PerformanceOnly'}${describeLoad(settings)} → ${dir}`);
        sut.reset();
        const stopProgress = options.startProgress?.(scenario, dir) ?? ((): void => {});
        try {
          return await startTest(sut, qsl, settings, { ...options.logSettings, outdir: dir }, options.startTestOptions ?? {});
        } finally {
          stopProgress();
        }
      };
      if (signal?.aborted) break;  // during the calibration
      let result = await runOnce();
      throwIfInferenceFailed(sut, scenario);
      // The calibration can underestimate (a cold or busy machine): an Offline
      // query that finished before min_duration_ms is sized again from the
      // throughput it measured (up to OFFLINE_ATTEMPTS runs in all), each run
      // overwriting the short one's logs.
      for (let attempt = 2; attempt <= OFFLINE_ATTEMPTS; attempt++) {
        const short = scenario === 'Offline' && result.interrupted === undefined && settings.offlineExpectedQps !== undefined &&
          user.offlineExpectedQps === undefined && !result.checks.minDurationMet && (result.samplesPerSecond ?? 0) > 0;
        if (!short) break;
        settings.offlineExpectedQps = round3(result.samplesPerSecond! * OFFLINE_RETRY_HEADROOM);
        log(`demo: Offline finished before min_duration_ms; running it again sized for ${settings.offlineExpectedQps} samples/s`);
        result = await runOnce();
        throwIfInferenceFailed(sut, scenario);
      }
      // A Server run that missed the latency bound (a busy machine's dip the
      // Offline replay did not show) runs once more: at a lower rate, sized
      // from how far its tail was over the bound, or, when its tail was under
      // the bound and only early stopping wanted more queries at its share of
      // late ones, at the same rate with that many queries (if that takes at
      // most MAX_RETRY_DURATIONS times min_duration_ms). Its logs replace the first's.
      let earlierAttempt: DemoScenarioRun['earlierAttempt'];
      const retry = scenario === 'Server' && user.serverTargetQps === undefined && !signal?.aborted ? serverRetry(result, settings, minDurationMs) : undefined;
      if (retry !== undefined) {
        earlierAttempt = { serverTargetQps: settings.serverTargetQps!, validity: 'INVALID', invalidReasons: result.invalidReasons, percentilesNs: result.percentilesNs };
        log(`demo: Server INVALID at ${settings.serverTargetQps} QPS (p99 latency ${(result.percentilesNs[99] / 1e6).toFixed(1)} ms, ` +
          `bound ${boundMs} ms, ${result.overLatencyCount ?? 0} of ${result.counts.issuedQueries} queries over it); running it again ${retry.what}`);
        Object.assign(settings, retry.settings);
        result = await runOnce();
        throwIfInferenceFailed(sut, scenario);
      }
      const run: DemoScenarioRun = {
        scenario, outdir: dir, settings, result,
        ...(earlierAttempt !== undefined ? { earlierAttempt } : {}),
        ...(serverQpsBasis !== undefined ? { serverQpsBasis } : {}),
      };
      if (scenario === 'Offline' && result.samplesPerSecond !== undefined && result.samplesPerSecond > 0) {
        offlineSamplesPerSecond = result.samplesPerSecond;
        // The least a sample takes: the batch wait and one worker's full batch at this rate.
        const serviceMs = maxWaitMs + ((maxBatchSize * workers) / result.samplesPerSecond) * 1000;
        offlineReplay = result.valid
          ? replayOffline(sut.timeline, boundMs, user.serverTargetLatencyPercentile ?? DEFAULT_SERVER_PERCENTILE, serviceMs)
          : undefined;
      }
      if (isAccuracyMode(settings.mode)) {
        run.accuracy = await checkAccuracyLog(result.files.accuracyLog ?? join(dir, 'mlperf_log_accuracy.json'));
        if (run.accuracy.checked === 0 || run.accuracy.matched !== run.accuracy.checked) outcome.ok = false;
      }
      if ((!accuracyOnly && !result.valid) || result.interrupted !== undefined) outcome.ok = false;
      const report = options.afterRun?.(run);
      if (report !== undefined) run.report = report;
      outcome.runs.push(run);
    }
  } finally {
    await pool.close();
  }
  return outcome;
}

/** A Server retry runs at most this many times min_duration_ms (for the queries early stopping needs). */
const MAX_RETRY_DURATIONS = 4;
/** A retry for early stopping plans this much more than the queries it needs. */
const RETRY_QUERY_MARGIN = 1.2;

/**
 * How to run a Server run INVALID for latency once more (not for a failure,
 * a short run or a stop): settings on top of its own, and the change in words.
 */
function serverRetry(result: TestResult, settings: TestSettingsInput, minDurationMs: number): { settings: TestSettingsInput; what: string } | undefined {
  if (result.valid || result.interrupted !== undefined || result.errors.failedSamples.total > 0) return undefined;
  const qps = settings.serverTargetQps!;
  if (result.checks.perfConstraintsMet && !result.checks.earlyStoppingMet) {
    const needed = serverQueriesNeeded(result);
    if (needed !== undefined) {
      const queries = Math.ceil(needed * RETRY_QUERY_MARGIN);
      if (queries / qps <= (MAX_RETRY_DURATIONS * minDurationMs) / 1000) {
        return { settings: { minQueryCount: Math.max(queries, settings.minQueryCount ?? 0) }, what: `with min_query_count ${queries} (what early stopping needs at that share)` };
      }
    }
  }
  if (result.checks.perfConstraintsMet && result.checks.earlyStoppingMet) return undefined;
  const lower = lowerServerQps(result);
  return lower !== undefined && lower < qps ? { settings: { serverTargetQps: lower }, what: `at ${lower} QPS` } : undefined;
}

function throwIfInferenceFailed(sut: DemoSut, scenario: Scenario): void {
  if (sut.failure !== undefined) {
    throw new DemoError('ERR_LOADGEN_DEMO_INFERENCE', `demo ${scenario}: inference failed during the run: ${sut.failure.message}`);
  }
}

function describeLoad(s: TestSettingsInput): string {
  if (s.mode === 'AccuracyOnly') return '';
  const duration = `, at least ${((s.minDurationMs ?? 10_000) / 1000).toFixed(1)} s`;
  if (s.scenario === 'Offline') return ` (expected ${s.offlineExpectedQps ?? 1} samples/s${duration})`;
  if (s.scenario === 'Server') return ` (target ${s.serverTargetQps ?? 1} QPS${duration})`;
  return ` (${duration.slice(2)})`;
}

/** One line about a finished scenario. */
export function describeRun(run: DemoScenarioRun): string {
  const r = run.result;
  const parts: string[] = [`${run.scenario} ${r.mode}:`];
  if (r.mode !== 'AccuracyOnly') {
    parts.push(r.validity);
    if (r.metric.unit === 'samples/s') parts.push(`${r.metric.name} ${r.metric.value.toFixed(1)}`);
    else parts.push(`${r.metric.name} ${(r.metric.value / 1e6).toFixed(3)} ms`);
    if (run.scenario === 'Server') parts.push(`p99 latency ${(r.percentilesNs[99] / 1e6).toFixed(3)} ms`);
    if (run.earlierAttempt !== undefined) {
      parts.push(`(run again${run.settings.serverTargetQps !== run.earlierAttempt.serverTargetQps ? ` at ${run.settings.serverTargetQps} QPS` : ` with min_query_count ${run.settings.minQueryCount}`} ` +
        `after an INVALID run at ${run.earlierAttempt.serverTargetQps} QPS, p99 ${(run.earlierAttempt.percentilesNs[99] / 1e6).toFixed(3)} ms)`);
    }
    if (!r.valid && r.invalidReasons.length > 0) parts.push(`(${r.invalidReasons.map(oneLine).join(' ')})`);
  }
  if (run.accuracy !== undefined) parts.push(formatAccuracy(run.accuracy));
  return parts.join(' ');
}

/** The hint for an INVALID run of the demo: the one --set to try (lib/api/invalid-hint.ts). */
export function demoRunHint(run: DemoScenarioRun): string | undefined {
  return run.result.mode === 'AccuracyOnly' ? undefined : invalidRunHint(run.result);
}

/**
 * A reason on one line: the core's multi-line texts (early stopping's
 * bulleted verdict) become sentences one after another.
 */
export function oneLine(reason: string): string {
  return reason.replace(/\s*\n\s*\*\s*/g, ' ').replace(/\s*\n\s*/g, ' ').trim();
}

/** "accuracy: N/N outputs match the reference (max abs diff x)". */
export function formatAccuracy(a: AccuracyReport): string {
  let text = `accuracy: ${a.matched}/${a.checked} outputs match the reference (max abs diff ${formatDiff(a.maxAbsDiff)}); ` +
    `tolerance ${a.tolerance} relative; top-1 class agrees on ${a.top1Agree}/${a.checked}`;
  if (a.firstMismatch !== undefined) {
    text += `; first mismatch: seq_id ${a.firstMismatch.seqId}, qsl_idx ${a.firstMismatch.qslIdx}: ${a.firstMismatch.reason}`;
  }
  return text;
}

function formatDiff(x: number): string {
  return Number.isFinite(x) ? x.toExponential(2) : String(x);
}

interface AccuracyRecord {
  seq_id: number;
  qsl_idx: number;
  data: string;
}

function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/**
 * Checks every record of an mlperf_log_accuracy.json written by the demo:
 * its data (hex of NUM_CLASSES little-endian float32 logits) against the
 * reference computation for its qsl_idx.
 */
export async function checkAccuracyLog(path: string, tolerance = DEFAULT_TOLERANCE): Promise<AccuracyReport> {
  const file = resolve(path);
  let records: AccuracyRecord[];
  try {
    records = JSON.parse(await readFile(file, 'utf8')) as AccuracyRecord[];
  } catch (cause) {
    throw new DemoError('ERR_LOADGEN_DEMO_ACCURACY', `cannot read the accuracy log ${file}: ${(cause as Error).message}`);
  }
  const report: AccuracyReport = { logFile: file, checked: 0, matched: 0, maxAbsDiff: 0, tolerance, top1Agree: 0 };
  const references = new Map<number, Float32Array>();
  for (const record of records) {
    report.checked++;
    const bytes = Buffer.from(record.data, 'hex');
    let reason: string | undefined;
    let expected = references.get(record.qsl_idx);
    if (expected === undefined) {
      expected = referenceLogits(demoSample(record.qsl_idx));
      references.set(record.qsl_idx, expected);
    }
    if (bytes.length !== OUTPUT_BYTES) {
      reason = `${bytes.length} bytes of data, expected ${OUTPUT_BYTES} (${NUM_CLASSES} float32 logits)`;
      report.maxAbsDiff = Infinity;
    } else {
      const actual = new Float32Array(NUM_CLASSES);
      for (let i = 0; i < NUM_CLASSES; i++) actual[i] = bytes.readFloatLE(i * 4);
      report.maxAbsDiff = Math.max(report.maxAbsDiff, maxAbsDiff(actual, expected));
      if (argmax(actual) === argmax(expected)) report.top1Agree++;
      if (!logitsMatch(actual, expected, tolerance)) {
        reason = `logits differ by up to ${maxAbsDiff(actual, expected).toExponential(2)}`;
      }
    }
    if (reason === undefined) report.matched++;
    else report.firstMismatch ??= { seqId: record.seq_id, qslIdx: record.qsl_idx, reason };
  }
  return report;
}

/**
 * Samples per second the pool sustains with full batches (inputs are
 * zeros: the cost does not depend on the values), after a short warm-up.
 */
export async function measureThroughput(pool: InferencePool, batch: number, durationMs: number): Promise<number> {
  const depth = pool.size * 2;
  const runOne = (): Promise<Float32Array> => pool.run(pool.takeInputBuffer(batch).fill(0), batch);
  let samples = 0;
  const lanes = async (until: number): Promise<void> => {
    const lane = async (): Promise<void> => {
      while (performance.now() < until) {
        await runOne();
        samples += batch;
      }
    };
    await Promise.all(Array.from({ length: depth }, lane));
  };
  // Warm-up first: onnxruntime's first runs allocate and are slow.
  await lanes(performance.now() + Math.min(200, durationMs / 2));
  samples = 0;
  const start = performance.now();
  await lanes(start + durationMs);
  return samples / ((performance.now() - start) / 1000);
}
