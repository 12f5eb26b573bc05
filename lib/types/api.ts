/**
 * The interfaces a user implements (SUT, QSL) and the plain-data result of a run.
 */
import type { FailureKind } from './failure-kinds.js';
import type { InferredResults, PowerResult } from './power.js';
import type { Scenario, TestMode, TestSettingsInput } from './settings.js';

/** One sample of a query, as handed to the SUT. */
export interface QuerySample {
  /**
   * Opaque, non-zero integer id, unique within the process (never reused by a
   * later series or run); pass it back unchanged when the sample completes.
   */
  readonly id: number;
  /** Index into the QSL (0 .. totalSampleCount - 1). */
  readonly index: number;
}

/** A completed sample. `data` is the response (logged in accuracy mode). */
export interface QuerySampleResponse {
  readonly id: number;
  readonly data?: ArrayBufferView | ArrayBuffer;
  /**
   * Output tokens of an LLM response (useTokenLatencies; ignored otherwise).
   * Must be >= 2: missing/0, negative and 1 are reported as errors.
   */
  readonly nTokens?: number;
}

/**
 * The system under test. `issueQuery` (or `issueQueryIds`) is called on the
 * JS thread that called startTest.
 */
export interface SystemUnderTest {
  /** Shown in the logs; printable text (control characters, newlines included, are refused). */
  readonly name: string;
  /**
   * Receives one query (1 sample in SingleStream/Server, samplesPerQuery in
   * MultiStream, all samples in Offline). Complete each sample, now or later,
   * with querySamplesComplete / querySampleComplete / querySamplesCompleteIds.
   * Throwing (or returning a rejected promise) ends the run. Required unless
   * the SUT has issueQueryIds (then used instead).
   */
  issueQuery?(samples: QuerySample[]): void | Promise<void>;
  /**
   * Receives one query as typed arrays instead of objects: sample `i` of
   * `count` has id `ids[i]` and QSL index `indices[i]` (the arrays may be
   * longer than `count`). No object is made per sample: use it for many
   * samples per query (Offline, MultiStream) and high query rates. Called
   * instead of issueQuery when present (one of the two is required).
   * The arrays are loadgen's and valid only during the call: when it
   * returns (an async one: at its first await) their entries become NaN and
   * 0xFFFFFFFF, and completing such an id is an error that ends the run.
   * Copy what is needed later (`ids.slice(0, count)`). Completing inside
   * the call with `querySamplesCompleteIds(ids, count)` needs no copy.
   */
  issueQueryIds?(ids: Float64Array, indices: Uint32Array, count: number): void | Promise<void>;
  /** Called once after the last query of a series was issued. */
  flushQueries?(): void;
  /**
   * Settings this SUT runs with unless told otherwise (e.g. an LLM endpoint's
   * `useTokenLatencies: true`). startTest applies them per key under the
   * caller's settings: a key the caller gives wins (`{ ...sut.defaultSettings,
   * ...settings }`), and so does a key that loadSettings() took from a config
   * file or an override layer (`loadgen run`: mlperf.conf, user.conf, `--set`).
   */
  readonly defaultSettings?: TestSettingsInput;
  /**
   * The SUT's own account of the run (e.g. a network SUT's per-node counts
   * and latencies), called by startTest once the run is over, also after a
   * failed or interrupted run whose logs were written. It goes into
   * `result.sutReport`, a block appended to the summary after the loadgen
   * overhead block, and report.html (its table). A throw loses nothing: the
   * result carries a warning instead (`result.sutReportError`).
   */
  report?(): SutReport | undefined;
}

/** What {@link SystemUnderTest.report} returns. */
export interface SutReport {
  /** The block's title, e.g. 'Network SUT (openai, least-outstanding)'; one line. */
  title: string;
  /** Lines of the summary block (after the title), e.g. 'Nodes : 2'. */
  lines: string[];
  /** A table for report.html (and `--json`): column names and rows of cells. */
  table?: { columns: string[]; rows: (string | number)[][] };
  /**
   * Distributions the SUT measured, each drawn in report.html as a histogram
   * and a CDF (a network SUT's inter-token latency and input lengths), by a
   * key of lowercase letters, digits and '-' (at most 16).
   */
  distributions?: Record<string, SutDistribution>;
  /** Anything else for `result.sutReport` / `--json` (not written to the logs); plain data that JSON can hold. */
  data?: unknown;
}

/** A distribution a SUT measured (SutReport.distributions): finite numbers, >= 0. */
export interface SutDistribution {
  /** The chart's heading, e.g. 'Inter-token latency'. */
  title: string;
  /** One sentence under it: what was measured, and how exact the figures are. */
  note: string;
  /** 'ns': durations (drawn in ms or µs); 'tokens': counts. */
  unit: 'ns' | 'tokens';
  count: number;
  min: number;
  max: number;
  mean: number;
  /** The CDF: the value at fraction p[i] is values[i] (at most 1000 points). */
  p: number[];
  values: number[];
  /**
   * Bins [edges[i], edges[i + 1]) holding counts[i] values (at most 1000
   * bins); `above`: values from the last edge on; `zeros`: values of 0,
   * which a log axis cannot show (counted in neither the bins nor above).
   */
  histogram: { scale: 'log' | 'linear'; edges: number[]; counts: number[]; above: number; zeros?: number };
}

/** The query sample library: the data set the SUT draws samples from. */
export interface QuerySampleLibrary {
  /** Shown in the logs; printable text (control characters, newlines included, are refused). */
  readonly name: string;
  /** Number of samples in the data set (1 .. 2^32 - 1). */
  readonly totalSampleCount: number;
  /** How many samples fit in memory at once (1 .. totalSampleCount); the performance run uses this many. */
  readonly performanceSampleCount: number;
  /** Load these QSL indices before they are issued; may be async. */
  loadSamplesToRam(indices: number[]): void | Promise<void>;
  /** The samples of a finished series may be released; may be async. */
  unloadSamplesFromRam(indices: number[]): void | Promise<void>;
}

/** Latency percentiles in ns, keyed by percent. */
export interface LatencyPercentilesNs {
  50: number;
  90: number;
  95: number;
  97: number;
  99: number;
  99.9: number;
}

/** TTFT or TPOT statistics of a token-latency run, in ns. */
export interface TokenLatencyStatsNs {
  min: number;
  max: number;
  /** Sum over samples divided by the sample count (integer division, as the reference). */
  mean: number;
  /** Value at the target latency percentile. */
  targetPercentile: number;
  percentiles: LatencyPercentilesNs;
}

/** Token metrics (useTokenLatencies / inferTokenLatencies); only the scenario's rates are present. */
export interface TokenResult {
  /** Sum of the reported token counts (0 when only inferTokenLatencies is set). */
  tokenCount: number;
  /** Time to first token: firstTokenComplete − scheduled time. Not Offline. */
  ttftNs?: TokenLatencyStatsNs;
  /** Time per output token: (latency − TTFT) / (nTokens − 1). Not Offline. */
  tpotNs?: TokenLatencyStatsNs;
  /** Offline: tokenCount / max latency. */
  tokensPerSecond?: number;
  /** Not Offline: tokenCount / time the last query completed. */
  completedTokensPerSecond?: number;
  /** SingleStream: tokens per second with and without loadgen overhead. */
  tpsWithLoadgenOverhead?: number;
  tpsWithoutLoadgenOverhead?: number;
  /** inferTokenLatencies, Offline: tokenLatencyScalingFactor × samples / max latency. */
  inferredTokensPerSecond?: number;
  /** inferTokenLatencies, Server: tokenLatencyScalingFactor × (samples − 1) / last completion time. */
  inferredCompletedTokensPerSecond?: number;
  /** Not Offline: the summary's "TTFT/TPOT Early Stopping Result:" texts (TTFT empty when TPOT failed). */
  earlyStopping?: { ttftMessage: string; tpotMessage: string };
  /** Server (useTokenLatencies): the TTFT and TPOT limits the run was held to, and where they came from. */
  limits?: TokenLimits;
  /** Server (useTokenLatencies): the samples within both limits (loadgen's own figure; the reference has none). */
  goodput?: Goodput;
  /** Samples with token errors (each also an error line in the detail log). */
  errors: {
    /**
     * Completed without a firstTokenComplete before it (not Offline): each
     * is a failed sample of kind `no_first_token` (in
     * `errors.failedSamples`, with its 'Sample failed (no_first_token)'
     * line), left out of every statistic, and the run is INVALID.
     */
    missingFirstToken: number;
    /** firstTokenComplete after the sample completed (ignored). */
    firstTokenAfterCompletion: number;
    /** A second firstTokenComplete for a sample (ignored). */
    duplicateFirstToken: number;
    /** nTokens missing or 0. */
    zeroTokens: number;
    /** nTokens < 0 (counted as 0). */
    negativeTokens: number;
    /** nTokens == 1 (counted as 0). */
    oneToken: number;
  };
}

/**
 * The TTFT/TPOT limits of a Server token run (TokenResult.limits; the
 * summary's "Token Latency Limits" block).
 */
export interface TokenLimits {
  /** The model the config files were read for (loadSettings()' model); absent when the settings did not come from loadSettings(). */
  model?: string;
  /**
   * 'Interactive' for an `-interactive` model of mlperf.conf (LoadGen runs
   * the Interactive variants as Server runs with tighter limits), else 'Server'.
   */
  scenario: 'Server' | 'Interactive';
  /** server_ttft_latency and server_tpot_latency, in ns. */
  ttftNs: number;
  tpotNs: number;
  /**
   * Where each came from: a config line ('mlperf.conf (built-in):146
   * llama3_1-8b-interactive.Server.ttft_latency = 500'), an override layer
   * ('--set'), 'the settings passed to startTest', or "LoadGen's default".
   */
  ttftSource: string;
  tpotSource: string;
  /**
   * The model's limits in MLCommons' submission checker (LLM_LATENCY_LIMITS)
   * and its test of this run: the 99th-percentile TTFT and TPOT each strictly
   * below the limit. Absent when the checker's table has no entry for the model.
   */
  checker?: {
    /** The checker's benchmark name, e.g. 'llama3.1-8b'. */
    benchmark: string;
    scenario: 'Server' | 'Interactive';
    ttftNs: number;
    tpotNs: number;
    /** tokens.ttftNs.percentiles[99] < ttftNs, tokens.tpotNs.percentiles[99] < tpotNs. */
    ttftMet: boolean;
    tpotMet: boolean;
  };
}

/**
 * Goodput of a Server token run: of the issued samples, those that succeeded
 * with TTFT <= the TTFT limit and TPOT <= the TPOT limit. A failed or
 * incomplete sample, or one with fewer than 2 output tokens (no TPOT), is
 * not within.
 */
export interface Goodput {
  withinLimits: number;
  issuedSamples: number;
  /** withinLimits / issuedSamples; 0 when nothing was issued. */
  share: number;
}

/** A message logged during the run (reference keys: error_runtime, warning_generic_message, …). */
export interface RunMessage {
  key: string;
  text: string;
  isError: boolean;
  isWarning: boolean;
}

/** Everything a run measured, as plain data. */
export interface TestResult {
  scenario: Scenario;
  /** The mode that ran (test05 turns any mode into PerformanceOnly). */
  mode: TestMode;
  sutName: string;
  qslName: string;
  /**
   * 'VALID' when every check of the reference passed and the run was complete.
   * An AccuracyOnly run has no performance checks: it is VALID when every
   * issued sample completed, none failed and the detail log holds no error
   * (MLCommons' checker fails an accuracy folder with any).
   */
  validity: 'VALID' | 'INVALID';
  valid: boolean;
  /** Why the result is INVALID (empty when VALID), each one sentence ending in a period. */
  invalidReasons: string[];
  /**
   * Present when the run was stopped on request (startTest's `signal`, or
   * SIGINT/SIGTERM in the `loadgen` command): the reason, e.g.
   * `'interrupted by SIGINT'` or `'interrupted: <the abort reason's message>'`.
   * Such a run is INVALID with this reason among `invalidReasons` (as a
   * sentence there: `'interrupted by SIGINT.'`); its
   * statistics cover what was issued before it stopped.
   */
  interrupted?: string;
  /** The scenario's headline metric, as in the summary's first result line. */
  metric: { name: string; value: number; unit: 'ns' | 'samples/s' };
  checks: {
    minDurationMet: boolean;
    minQueriesMet: boolean;
    earlyStoppingMet: boolean;
    /** Server only (always true elsewhere). */
    perfConstraintsMet: boolean;
  };
  earlyStopping: {
    met: boolean;
    /** The summary's early-stopping text (lines joined with \n). */
    message: string;
    /** SingleStream: the early-stopping estimate at the target percentile (0 if not computed). */
    latencySsNs: number;
    /** SingleStream: the 99th-percentile estimate; MultiStream: the query estimate (0 if not computed). */
    latencyMsNs: number;
  };
  /** The target latency percentile as a fraction (e.g. 0.9). */
  targetLatencyPercentile: number;
  /** Sample latency at the target percentile (MultiStream: query latency). */
  targetPercentileLatencyNs: number;
  latencyNs: { min: number; max: number; mean: number };
  percentilesNs: LatencyPercentilesNs;
  /** MultiStream only: per-query latencies. */
  queryLatencyNs?: { min: number; max: number; mean: number };
  queryPercentilesNs?: LatencyPercentilesNs;
  /** Server: over-latency sample count against the target latency. */
  overLatencyCount?: number;
  /** SingleStream: queries per second with and without loadgen overhead. */
  qpsWithLoadgenOverhead?: number;
  qpsWithoutLoadgenOverhead?: number;
  /** Server. */
  scheduledSamplesPerSecond?: number;
  completedSamplesPerSecond?: number;
  /** Offline. */
  samplesPerSecond?: number;
  /** Token latencies (useTokenLatencies / inferTokenLatencies runs with results). */
  tokens?: TokenResult;
  counts: {
    generatedQueries: number;
    generatedSamples: number;
    issuedQueries: number;
    issuedSamples: number;
    completedSamples: number;
    incompleteSamples: number;
  };
  /** Seconds from the start of issuing. */
  timing: {
    maxLatencySeconds: number;
    finalQueryScheduledSeconds: number;
    finalQueryIssuedSeconds: number;
    finalQueryAllSamplesDoneSeconds: number;
  };
  errors: {
    /** Errors logged (as the summary footer counts them). */
    count: number;
    warnings: number;
    /** Completion calls with ids that no series was given (not integers, 0, beyond the current series). */
    invalidIds: number;
    /** Completion calls for samples of this run not issued yet. */
    unissuedIds: number;
    /**
     * Late completion calls for ids of an earlier series or an earlier run in
     * this process: counted, never credited (ids are unique within a process).
     */
    staleIds: number;
    /** Completion calls for samples already completed. */
    duplicateIds: number;
    /**
     * Samples completed as failed (querySampleFailed: a network SUT's HTTP
     * error, reset, malformed response, timeout, cancellation), by kind.
     * Any makes the run INVALID; they are left out of the latency and token
     * statistics and are counted in `counts.completedSamples`.
     */
    failedSamples: { total: number; byKind: Record<FailureKind, number> };
    messages: RunMessage[];
  };
  /** The settings the run used after derivation (reference "effective" values). */
  effectiveSettings: Record<string, number | string | boolean | bigint>;
  testDatetime: string;
  /** Paths of the files written. */
  files: { summary?: string; detail?: string; accuracyLog?: string };
  /** Records written to the accuracy log (accuracy series: every sample; performance: the sampled ones). */
  accuracyLogRecords: number;
  /** The summary file's text. */
  summaryText: string;
  /**
   * The loadgen's own share of each query's latency, over the reported
   * series' queries (also the summary's last block). "Due" is when the query
   * should reach the SUT: its scheduled time (Server), the start (Offline),
   * the previous query's completion (SingleStream/MultiStream).
   */
  overhead?: {
    /** Issued − due. */
    issueLatenessNs: OverheadStatsNs;
    /** Received by the JS SUT − due; null for the null-native SUT (nothing is delivered). */
    deliveryLagNs: OverheadStatsNs | null;
  };
  /** SingleStream/MultiStream performance runs: the MultiStream / Offline figures the edge rules infer from this run. */
  inferred?: InferredResults;
  /** With startTest's `power` option: the energy of the run (see {@link PowerResult}). */
  power?: PowerResult;
  /** What the SUT's report() returned (see {@link SystemUnderTest.report}). */
  sutReport?: SutReport;
  /** Why the SUT's report() gave nothing: it threw or returned something that is not a SutReport. */
  sutReportError?: string;
  /**
   * FindPeakPerformance: every trial in order (each a full Server run at
   * `targetQps`) and the highest QPS whose trial passed: it met the latency
   * constraint and none of its samples failed (`failedSamples`, any kind)
   * or never completed (`incompleteSamples`). The result's statistics are
   * those of the peak's trial. 0 when the base QPS's trial did not pass.
   */
  findPeak?: {
    peakQps: number;
    trials: {
      targetQps: number;
      perfConstraintsMet: boolean;
      targetPercentileLatencyNs: number;
      queriesIssued: number;
      failedSamples: number;
      incompleteSamples: number;
      passed: boolean;
    }[];
  };
}

/** A distribution of one overhead measure, in ns. */
export interface OverheadStatsNs {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}
