/**
 * The one declaration of the native addon's surface, and its loader.
 * Prebuilt binaries in prebuilds/<platform>-<arch>/ are tried first, then a
 * local build in build/Release (node-gyp-build's order).
 */
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { NativeLoadError } from './errors.js';
import type { OverheadStatsNs } from './types.js';

/** Event kinds sent by the native side to the dispatcher (bindings/js_host.h). */
export const HostEventKind = {
  Drain: 0,
  SeriesStarted: 1,
  Load: 2,
  Unload: 3,
  Flush: 4,
  Finished: 5,
} as const;

export type Dispatcher = (kind: number, arg?: unknown, token?: number) => void;

/** Event kinds sent to a registered issue-query thread (bindings/issue_threads.h). */
export const IssueThreadEventKind = { Drain: 0, SeriesStarted: 1, Released: 2 } as const;
/** dispatchNext() results (native/session.h Session::kDispatch*). */
export const DispatchStatus = { Claimed: 1, Idle: 0, SeriesEnded: -1, Over: -2 } as const;
export type IssueThreadDispatcher = (kind: number, published?: number, firstId?: number, index?: number, stride?: number) => void;

export interface NativeSeriesInfo {
  firstId: number;
  samplesPerQuery: number;
  queryCount: number;
  /** QSL index of every sample of the series, query by query (a copy). */
  sampleIndex: Uint32Array;
  /** 1 for samples whose response goes to the accuracy log (accuracy series: all). */
  accuracyLogSampled: Uint8Array;
  /** server_coalesce_queries: a drain hands all its due queries to one issueQuery call. */
  coalesced: boolean;
  /** use_token_latencies: completions carry token counts. */
  tokenLatencies: boolean;
}

export interface NativeMessage {
  key: string;
  text: string;
  isError: boolean;
  isWarning: boolean;
}

export interface NativeSummary {
  sampleCount: number;
  queryCount: number;
  overlatencyQueryCount: number;
  minLatencyNs: number;
  maxLatencyNs: number;
  meanLatencyNs: number;
  targetPercentile: number;
  targetPercentileLatencyNs: number;
  targetPercentileQueryLatencyNs: number;
  percentilesNs: Record<string, number>;
  queryMinLatencyNs: number;
  queryMaxLatencyNs: number;
  queryMeanLatencyNs: number;
  queryPercentilesNs: Record<string, number>;
  earlyStoppingLatencySsNs: number;
  earlyStoppingLatencyMsNs: number;
  minDurationMet: boolean;
  minQueriesMet: boolean;
  perfConstraintsMet: boolean;
  earlyStoppingMet: boolean;
  resultValid: boolean;
  earlyStoppingMessage: string;
  minDurationRecommendation: string;
  perfConstraintsRecommendation: string;
  qpsWithLoadgenOverhead: number;
  qpsWithoutLoadgenOverhead: number;
  scheduledSamplesPerSecond: number;
  completedSamplesPerSecond: number;
  samplesPerSecond: number;
  maxLatencySeconds: number;
  finalQueryScheduledTimeSeconds: number;
  finalQueryIssuedTimeSeconds: number;
  finalQueryAllSamplesDoneTimeSeconds: number;
  /** Present with use_token_latencies or infer_token_latencies. */
  tokens?: NativeTokenSummary;
}

export interface NativeTokenSummary {
  useTokenLatencies: boolean;
  inferTokenLatencies: boolean;
  tokenCount: number;
  ttftMinNs: number;
  ttftMaxNs: number;
  ttftMeanNs: number;
  ttftTargetPercentileNs: number;
  ttftPercentilesNs: Record<string, number>;
  tpotMinNs: number;
  tpotMaxNs: number;
  tpotMeanNs: number;
  tpotTargetPercentileNs: number;
  tpotPercentilesNs: Record<string, number>;
  tokensPerSecond: number;
  completedTokensPerSecond: number;
  tpsWithLoadgenOverhead: number;
  tpsWithoutLoadgenOverhead: number;
  inferredTokensPerSecond: number;
  inferredCompletedTokensPerSecond: number;
  ttftEarlyStoppingMessage: string;
  tpotEarlyStoppingMessage: string;
}

export interface NativeEffectiveSettings {
  scenario: string;
  mode: string;
  samplesPerQuery: number;
  targetQps: number;
  targetLatencyNs: number;
  targetLatencyPercentile: number;
  maxAsyncQueries: number;
  targetDurationMs: number;
  minDurationMs: number;
  maxDurationMs: number;
  minQueryCount: number;
  maxQueryCount: number;
  minSampleCount: number;
  qslRngSeed: bigint;
  sampleIndexRngSeed: bigint;
  scheduleRngSeed: bigint;
  accuracyLogRngSeed: bigint;
  accuracyLogProbability: number;
  accuracyLogSamplingTarget: number;
  printTimestamps: boolean;
  performanceIssueUnique: boolean;
  performanceIssueSame: boolean;
  performanceIssueSameIndex: number;
  performanceSampleCount: number;
  accuracySampleCount: number;
  sampleConcatenatePermutation: boolean;
  useTokenLatencies: boolean;
  serverTtftLatency: number;
  serverTpotLatency: number;
  inferTokenLatencies: boolean;
  tokenLatencyScalingFactor: number;
}

export interface NativeOutcome {
  hasSummary: boolean;
  /** The mode that ran (after the test05 override). */
  mode: string;
  accuracyLogPath: string;
  accuracyLogRecords: number;
  seriesCount: number;
  testDatetime: string;
  summaryPath: string;
  summaryText: string;
  detailLogPath: string;
  effective: NativeEffectiveSettings;
  aborted: boolean;
  abortReason: string;
  errorCount: number;
  warningCount: number;
  messages: NativeMessage[];
  extraInvalidReasons: string[];
  counts: {
    generatedQueries: number;
    generatedSamples: number;
    issuedQueries: number;
    issuedSamples: number;
    completedSamples: number;
    incompleteSamples: number;
  };
  completionErrors: {
    invalidIds: number;
    unissuedIds: number;
    duplicateIds: number;
    firstInvalidId: number;
    firstDuplicateId: number;
    firstTokenAfterCompletion: number;
    duplicateFirstTokens: number;
    missingFirstTokens: number;
    zeroTokens: number;
    negativeTokens: number;
    oneToken: number;
  };
  summary?: NativeSummary;
  peakTrials: { targetQps: number; perfConstraintsMet: boolean; targetPercentileLatencyNs: number; queriesIssued: number }[];
  peakQps: number;
  overhead?: { issueLatenessNs: OverheadStatsNs; deliveryLagNs: OverheadStatsNs | null };
}

/** A uint64 from the native side: a number when it is a safe integer, else a bigint. */
export type NativeU64 = number | bigint;

/**
 * Reference TestSettings with the reference's snake_case names, as the native
 * side reads them: scenario/mode as their integer enum values (0..3), seeds as
 * bigint (or safe integers), every field present. Built by toNativeSettings()
 * or, for reference vectors, from their `settings` objects.
 */
export type NativeTestSettings = Record<string, number | boolean | bigint | string>;

/** One {key, value_text} detail-log entry: value_text is exactly what follows `"value": `. */
export interface NativeLogEntry {
  key: string;
  valueText: string;
}

/** The queries generated for one load round (golden query_traces "queries"). */
export interface NativeTraceQueries {
  generatedQueryCount: number;
  generatedSamplesPerQuery: number;
  generatedQueryDurationNs: number;
  firstQuerySeqId: number;
  firstSampleSeqId: number;
  samplesPerQuery: number;
  /** QSL indices of every sample, query by query. */
  sampleIndices: Uint32Array;
  /** Scheduled offset of each query in ns from the start of issuing. */
  scheduledNs: Float64Array;
}

export interface NativeTraceLoadCall {
  loaded: Uint32Array;
  sampleDistributionEnd: number;
  queries: NativeTraceQueries;
}

export interface NativeTracePhase {
  phase: 'accuracy' | 'performance';
  loadableSetCount: number;
  loadCalls: NativeTraceLoadCall[];
}

/**
 * Effective settings under the golden files' names (snake_case, e.g.
 * samples_per_query, target_duration_ms, min_sample_count; scenario and mode
 * as names; seeds as bigint).
 */
export type NativeEffectiveRecord = Record<string, number | bigint | boolean | string>;

export interface NativeTrace {
  effective: NativeEffectiveRecord;
  /** In execution order: SubmissionRun gives accuracy then performance. */
  phases: NativeTracePhase[];
  /** Errors the reference would log while deriving/generating (key + value_text). */
  loggedErrors: NativeLogEntry[];
}

/** Accuracy-log sampling of one load round (golden accuracy_log_sampling "phases"). */
export interface NativeAccuracyLogRound {
  phase: 'accuracy' | 'performance';
  firstSampleSeqId: number;
  generatedSampleCount: number;
  offset: number;
  effectiveProbability: number;
  /** The first (up to) 8 per-sample values of the round. */
  firstPerSampleValues: number[];
  loggedSampleSeqIds: Float64Array;
  loggedQslIdx: Uint32Array;
}

/** Inputs of a results computation (golden results_math "input"). */
export interface NativeResultsInput {
  sampleLatenciesNs: Float64Array | number[];
  queryLatenciesNs?: Float64Array | number[];
  queriesIssued: number;
  maxLatencyS: number;
  finalQueryScheduledTimeS: number;
  finalQueryIssuedTimeS: number;
  finalQueryAllSamplesDoneTimeS: number;
  tokensPerSample?: Float64Array | number[];
  firstTokenLatenciesNs?: Float64Array | number[];
  timePerOutputTokenNs?: Float64Array | number[];
}

export interface NativeResults {
  /** The summary's fields under the golden results_math "outputs" names. */
  outputs: Record<string, unknown>;
  /** The summary file's text, footer included (0 warnings, 0 errors). */
  summaryText: string;
  /** The detail log's result entries in order, ending with num_errors. */
  detail: NativeLogEntry[];
}

/** One row of golden early_stopping "latency_rank_estimates", computed. */
export interface NativeEarlyStoppingEstimate {
  earlyStoppingMet: boolean;
  minQueriesNeeded: number;
  /** Position of the estimate in the sorted latencies (n - t); null when not met. */
  rankIndex: number | null;
  /** SingleStream: the same at p = 0.99; null when too few queries or MultiStream. */
  rankIndexP99: number | null;
  recommendation: string;
}

/** Inputs of a config derivation (golden settings_derivation cases). */
export interface NativeConfigCase {
  /** Text used in place of the built-in mlperf.conf; undefined = the built-in copy. */
  mlperfConfText?: string;
  /** user.conf text; null = a path that cannot be opened. */
  userConfText: string | null;
  /** When present, FromConfig is called a second time with this text (null = missing). */
  secondUserConfText?: string | null;
  model: string;
  scenario: string;
  initial: NativeTestSettings;
  qslTotal: number;
  qslPerformance: number;
}

export interface NativeConfigResult {
  returnCode: number;
  secondReturnCode?: number;
  /** TestSettings after FromConfig, under the reference field names (enums as names, seeds as bigint). */
  settingsAfter: Record<string, number | bigint | boolean | string>;
  effective: NativeEffectiveRecord;
  loggedRequested: NativeLogEntry[];
  loggedEffective: NativeLogEntry[];
  loggedErrors: NativeLogEntry[];
}

/** Pure functions of the core, exposed for `loadgen trace` and the conformance runner. */
export interface NativeConformance {
  mt19937Outputs(seed: bigint, count: number): Float64Array;
  uniformReal(seed: bigint, count: number): { values: Float64Array; engineDraws: number };
  /** Server inter-arrival times: truncated ns, and the raw exponential draws in seconds. */
  serverInterarrival(seed: bigint, qps: number, count: number): { deltaNs: Float64Array; expSeconds: Float64Array };
  fixedPeriodNs(qps: number): number;
  /** `count` draws of the performance-mode selector: uniform integer in [0, n - 1]. */
  uniformInt(seed: bigint, n: number, count: number): { values: Float64Array; engineDraws: number };
  shuffle(seed: bigint, n: number): { result: Uint32Array; engineDraws: number; nextEngineOutput: number };
  /** Effective settings (test05 applied first when `applyTest05`) and the messages logged while deriving. */
  deriveEffective(
    settings: NativeTestSettings,
    qslTotal: number,
    qslPerformance: number,
    applyTest05: boolean,
  ): { effective: NativeEffectiveRecord; loggedErrors: NativeLogEntry[] };
  /** The whole pre-generated trace of a StartTest (test05 applied), running nothing. */
  generateTrace(settings: NativeTestSettings, qslTotal: number, qslPerformance: number): NativeTrace;
  accuracyLogPrediction(settings: NativeTestSettings, qslTotal: number, qslPerformance: number): NativeAccuracyLogRound[];
  summarize(settings: NativeTestSettings, qslTotal: number, qslPerformance: number, input: NativeResultsInput, sutName: string): NativeResults;
  earlyStoppingMinPassing(t: number, p: number): number;
  earlyStoppingEstimate(scenario: 'SingleStream' | 'MultiStream', p: number, n: number): NativeEarlyStoppingEstimate;
  earlyStoppingOdds(h: number, t: number, p: number): number;
  earlyStoppingLbeta(a: number, b: number): number;
  configDerive(input: NativeConfigCase): NativeConfigResult;
}

/** Input of {@link NativeConfig.load}: each config as text or path (not both). */
export interface NativeConfigLoadInput {
  /** Replaces the built-in mlperf.conf (text or a file path); absent = the built-in copy. */
  mlperfConfText?: string;
  mlperfConfPath?: string;
  /** How provenance names the mlperf.conf (default: the path, or "mlperf.conf (built-in)"). */
  mlperfConfLabel?: string;
  /** Without a user.conf: apply mlperf.conf alone (conf_type 0)? Default true. */
  withMlperfConf?: boolean;
  /** user.conf: FromConfig(conf_type 1), which applies mlperf.conf first. A path that cannot be opened gives -2. */
  userConfText?: string;
  userConfPath?: string;
  userConfLabel?: string;
  /** audit.config, applied last as StartTest does (model "*", the settings' scenario, conf_type 2). */
  auditConfText?: string;
  auditConfPath?: string;
  auditConfLabel?: string;
  model: string;
  /** Scenario name used for the lookups (the reference's `scenario` argument). */
  scenario: string;
  /** The settings before the configs (as toNativeSettings gives them). */
  base: NativeTestSettings;
}

/** One field set by a config line (last record of a field wins). */
export interface NativeConfigProvenance {
  /** Reference TestSettings field name, e.g. server_target_latency_ns. */
  field: string;
  /** The full key that matched, e.g. resnet50.Server.target_latency. */
  key: string;
  /** File path or label. */
  file: string;
  /** 1-based line. */
  line: number;
  /** The raw value token. */
  value: string;
  /** 0 mlperf.conf, 1 user.conf, 2 audit.config. */
  confType: number;
}

export interface NativeConfigLoadResult {
  /** TestSettings afterwards under the reference names (enums as names, seeds bigint, other uint64 number or bigint). */
  settings: Record<string, number | bigint | boolean | string>;
  /** FromConfig return codes of the calls made (0, -2, -22). */
  returnCodes: { mlperf?: number; user?: number; audit?: number };
  /** False when an audit path was given but could not be opened (nothing applied, no warning). */
  auditFound: boolean;
  /** What the reference would log (errors, the audit warning), in order. */
  messages: NativeMessage[];
  provenance: NativeConfigProvenance[];
}

/** The core's config-file loader (bindings/config_binding.cc). */
export interface NativeConfig {
  /** One fresh loader per call: as in a fresh process. */
  load(input: NativeConfigLoadInput): NativeConfigLoadResult;
}

/**
 * Flat run configuration read by bindings/convert.cc (`pre_run_messages`:
 * messages logged right after the detail-log header, e.g. the audit.config warning).
 */
export type NativeRunConfig = Record<string, number | boolean | bigint | string | NativeMessage[]>;

/**
 * Live state of the active run (bindings/progress.cc): counters and a running
 * latency histogram of the current series, never its records.
 */
export interface NativeProgress {
  /** 'starting' (series generated, not issuing yet), 'issuing', or 'draining' (issuing ended). */
  phase: 'starting' | 'issuing' | 'draining';
  seriesKind: 'accuracy' | 'performance';
  scenario: string;
  /** 0-based index of the current series; seriesCount: series started so far. */
  seriesIndex: number;
  seriesCount: number;
  /** Since the current series started issuing. */
  elapsedNs: number;
  /** Expected issuing time (minimum duration; Server: last scheduled query); 0 when unknown (accuracy). */
  targetDurationNs: number;
  generatedQueries: number;
  samplesPerQuery: number;
  issuedQueries: number;
  issuedSamples: number;
  completedSamples: number;
  /** Issued samples not completed yet. */
  outstanding: number;
  /** Sample latencies in the histogram so far, and its running percentiles (within 0.8 %). */
  latencyCount: number;
  p50Ns: number;
  p99Ns: number;
  maxNs: number;
}

export interface NativeAddon {
  start(config: NativeRunConfig, dispatcher: Dispatcher): void;
  seriesInfo(): NativeSeriesInfo;
  /** Queries first, first + stride, ... below end (default first + 1) reached the SUT now. */
  markDispatched(first: number, end?: number, stride?: number): void;
  logResponse(id: number, data: ArrayBufferView | ArrayBuffer): boolean;
  /**
   * The completion calls return the new published-query count when the call
   * issued the next SingleStream/MultiStream query itself (hand-over, only in
   * the thread that started the run): drain it (lib/handover.ts). Else undefined.
   */
  completeOne(id: number): number | undefined;
  completeBatch(ids: Float64Array | Uint32Array, count?: number, stampNs?: number): number | undefined;
  /** Token latencies: completions with each sample's token count (nTokens[i] for ids[i]). */
  completeWithTokens(ids: Float64Array | Uint32Array, nTokens: Float64Array, count?: number, stampNs?: number): number | undefined;
  /** Token latencies: the first token of sample `id` (stamped on entry). */
  firstTokenComplete(id: number, data?: ArrayBufferView | ArrayBuffer): void;
  acknowledge(token: number, error?: string): boolean;
  abort(reason: string): void;
  finish(): NativeOutcome;
  isRunning(): boolean;
  completionsOutsideRun(): number;
  /** Live progress of the process's active run; null when none is running. Cheap: safe to poll. */
  progress(): NativeProgress | null;
  clockNs(): number;
  /**
   * Registers this thread as an issue-query thread (spec/30 §6). Events:
   * (0, published, firstId) drain; (1, published, firstId, index, stride)
   * series started; (2) released.
   */
  registerIssueThread(dispatcher: IssueThreadDispatcher, threadId: number): { index: number; serial: number };
  unregisterIssueThread(serial: number): boolean;
  /** Queries of the current series issued so far (any thread; 0 without a run). */
  publishedQueries(): number;
  /**
   * dispatch 'poll': publishedQueries(), but waits in native code first (at
   * most ~100 us) when nothing beyond `seen` is published: spinning for a
   * Server query due within 50 us, which it issues itself at its due time
   * if the issue thread has not.
   */
  pollPublished(seen: number): number;
  /** dispatch 'worker': registers this thread as a dispatch worker; its dispatcher only hears (2) released. */
  registerDispatchWorker(dispatcher: IssueThreadDispatcher, threadId: number): { index: number; serial: number };
  /**
   * dispatch 'worker': claims the next work of the active run, blocking this
   * thread up to ~20 ms (200 µs while samples are outstanding). Returns
   * {@link DispatchStatus}; Claimed: out = [firstId, firstSample, samples];
   * SeriesEnded: out[0] = the series' firstId (pass it as flushedFirstId next).
   */
  dispatchNext(out: Float64Array, flushedFirstId: number): number;
  /** Aborts the active run from any thread, keeping `serialized` (v8.serialize of the error) for takeWorkerError(). */
  abortWithError(reason: string, serialized?: Uint8Array): boolean;
  /** The serialized error a worker left with abortWithError (cleared by the call). */
  takeWorkerError(): Uint8Array | undefined;
  readonly napiVersion: number;
  readonly conformance: NativeConformance;
  readonly config: NativeConfig;
  readonly bench: NativeBench;
}

/** Platform probes for `loadgen bench` (bindings/bench.cc). */
export interface NativeBench {
  /** Mean ns of one native clock read, over `iterations` reads. */
  clockReadNs(iterations: number): number;
  /** `count` native-thread -> JS-thread wakes, `intervalUs` apart; resolves with each wake's ns. */
  tsfnWake(count: number, intervalUs: number): Promise<Float64Array>;
  /**
   * A native thread pinned to `cpu` (-1: unpinned) spins for `durationMs`,
   * recording every gap > 1 us between clock reads (time it did not run).
   * Blocks the calling thread meanwhile.
   */
  cpuNoise(cpu: number, durationMs: number): CpuNoise;
}

/** What {@link NativeBench.cpuNoise} measured. */
export interface CpuNoise {
  cpu: number;
  pinned: boolean;
  /** Why pinning failed, when it did. */
  warning?: string;
  durationNs: number;
  gapsPerSecond: number;
  /** Share of the time the thread did not run. */
  lostFraction: number;
  gapNs: { p50: number; p99: number; max: number };
  /** Delay an event due at a uniformly random instant sees on that CPU: the issue-lateness floor. */
  residualNs: { p50: number; p99: number; p999: number };
}

/** The package root (one level above lib/ or dist/). */
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

let addon: NativeAddon | undefined;

/** Loads the addon once per environment; throws NativeLoadError with what to do. */
export function loadNative(): NativeAddon {
  if (addon) return addon;
  const require = createRequire(import.meta.url);
  try {
    const load = require('node-gyp-build') as (dir: string) => unknown;
    addon = load(packageRoot) as NativeAddon;
  } catch (cause) {
    throw new NativeLoadError(describeLoadFailure(cause), cause);
  }
  return addon;
}

function libcName(): string {
  if (process.platform !== 'linux') return 'n/a';
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const glibc = report?.header?.glibcVersionRuntime;
  return glibc ? `glibc ${glibc}` : 'musl (or unknown)';
}

function describeLoadFailure(cause: unknown): string {
  const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  return [
    `loadgen: could not load the native addon for ${process.platform}-${process.arch} ` +
      `(libc: ${libcName()}, Node ${process.versions.node}, N-API ${process.versions.napi}).`,
    `Tried: ${resolve(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`)} and ${resolve(packageRoot, 'build', 'Release')}.`,
    `Reason: ${why}`,
    'To build it from source you need CMake >= 3.15 and a C++17 compiler; then run `npm rebuild loadgen`',
    '(in a clone of the repository: `npm run build:native`).',
  ].join('\n');
}
