/**
 * The native addon's test-only surface, apart from the production one
 * (addon.ts): the core's pure functions (bindings/conformance.cc) for
 * `loadgen trace`, `loadgen settings` and the conformance runner, the platform
 * probes (bindings/bench.cc) for `loadgen bench`, and counters only tests
 * read. Not public API: it changes with the core, read it through
 * loadNativeInternals().
 */
import type { NativeTestSettings } from './addon.js';

/** The addon's `_internals` export. */
export interface NativeInternals {
  readonly conformance: NativeConformance;
  readonly bench: NativeBench;
  readonly rules: NativeRules;
  /** Completion calls made while no run was active in this environment (ignored, counted). */
  completionsOutsideRun(): number;
}

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

/** The Server early-stopping verdict for given counts (bindings/rules_binding.cc). */
export interface NativeServerEarlyStopping {
  earlyStoppingMet: boolean;
  /** Minimum under-latency queries h for the given over-latency count t. */
  minPassing: number;
  /** h + t: the fewest queries issued with which early stopping passes. */
  minTotalQueries: number;
  /** The reference's early_stopping_result text. */
  recommendation: string;
}

/** The core's rule evaluations for `loadgen stats` (bindings/rules_binding.cc). */
export interface NativeRules {
  /** `n` queries issued, `t` of them over the latency bound, at percentile `p`. */
  earlyStoppingServer(p: number, n: number, t: number): NativeServerEarlyStopping;
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
