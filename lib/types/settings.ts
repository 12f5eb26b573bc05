/**
 * The settings' types: the reference's TestSettings (camelCase) and
 * LogSettings, the enum names, and their resolved (validated) forms.
 *
 * Field names are the reference LoadGen's (test_settings.h) in camelCase; the
 * snake_case spelling is used by `--set`, config files and the native side.
 */

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

/** Scenario names; the index is the reference's `TestScenario` integer value. */
export const SCENARIOS = ['SingleStream', 'MultiStream', 'Server', 'Offline'] as const;
/** Mode names; the index is the reference's `TestMode` integer value (the config key `mode`). */
export const TEST_MODES = ['SubmissionRun', 'AccuracyOnly', 'PerformanceOnly', 'FindPeakPerformance'] as const;
/** How queries reach the SUT (loadgen extension; docs/overhead-and-benchmarks.md, "Dispatch modes"). The index is the native value. */
export const DISPATCH_MODES = ['wake', 'poll', 'worker'] as const;
/** Logging mode names (reference `LoggingMode`); accepted and ignored. */
export const LOGGING_MODES = ['AsyncPoll', 'EndOfTestOnly', 'Synchronous'] as const;

/** Which MLPerf scenario to run. */
export type Scenario = (typeof SCENARIOS)[number];
/** What to run. `FindPeakPerformance` needs the Server scenario (see {@link assertRunnableMode}). */
export type TestMode = (typeof TEST_MODES)[number];
/**
 * How queries reach the SUT: `wake` (default) wakes the JS thread once per
 * batch of published queries; `poll` keeps the JS thread polling for the
 * whole series; `worker` feeds SUTs in worker threads straight from the
 * native core. See docs/overhead-and-benchmarks.md, "Dispatch modes".
 */
export type DispatchMode = (typeof DISPATCH_MODES)[number];
/** Reference `LoggingMode`; ignored (logging is always asynchronous). */
export type LoggingMode = (typeof LOGGING_MODES)[number];

/** A uint64 seed as the user may give it: safe non-negative integer, bigint, or decimal string. */
export type SeedInput = number | bigint | string;

// ---------------------------------------------------------------------------
// TestSettings
// ---------------------------------------------------------------------------

/**
 * Every field of the reference `TestSettings` (camelCase), plus two loadgen
 * extensions (`issueThreadCpu`, `completionTimeoutMs`). Seeds are given as
 * {@link SeedInput}; {@link ResolvedTestSettings} holds them as bigint.
 * Users pass a {@link TestSettingsInput} (every field optional).
 */
export interface TestSettings {
  /** Scenario to run. Default `'SingleStream'`. */
  scenario: Scenario;
  /** What to run. Default `'PerformanceOnly'` (the only mode this version can run). */
  mode: TestMode;
  /**
   * Expected SingleStream query latency, ns (double, >= 1000). Only sizes query
   * generation (target QPS = 1e9 / value). Default 1000000 (1 ms).
   */
  singleStreamExpectedLatencyNs: number;
  /** SingleStream reported and early-stopping percentile, a fraction in (0, 1). Default 0.90. */
  singleStreamTargetLatencyPercentile: number;
  /**
   * Expected MultiStream query latency, ns (double, >= 1000). Only sizes query
   * generation. Default 8000000 (8 ms).
   */
  multiStreamExpectedLatencyNs: number;
  /** MultiStream reported and early-stopping percentile, a fraction in (0, 1). Default 0.99. */
  multiStreamTargetLatencyPercentile: number;
  /** Samples per MultiStream query (integer >= 1). Default 8. */
  multiStreamSamplesPerQuery: number;
  /**
   * Server Poisson arrival rate, queries/s (finite, > 0); the lower bound of the
   * FindPeakPerformance search. Default 1.
   */
  serverTargetQps: number;
  /**
   * Server latency bound, ns (integer >= 1000). 0 is allowed only with
   * `useTokenLatencies` (LLM benchmarks bound TTFT/TPOT instead, as mlperf.conf
   * does). Default 100000000 (100 ms).
   */
  serverTargetLatencyNs: number;
  /** Server latency percentile, a fraction in (0, 1). Default 0.99. */
  serverTargetLatencyPercentile: number;
  /** Server: merge overdue queries into one issueQuery call. Default false. */
  serverCoalesceQueries: boolean;
  /** FindPeakPerformance termination precision, decimal digits of QPS (integer 0..9). Default 1. */
  serverFindPeakQpsDecimalsOfPrecision: number;
  /** FindPeakPerformance upper-bound widening factor (`qps *= 1 + step`), finite > 0. Default 1. */
  serverFindPeakQpsBoundaryStepSize: number;
  /** Server: stop issuing when more queries than this are outstanding; 0 = unlimited. Default 0. */
  serverMaxAsyncQueries: number;
  /** Number of user threads expected to register as issue-query threads. Default 0. */
  serverNumIssueQueryThreads: number;
  /** Offline expected throughput, samples/s (finite, > 0); sizes the single Offline query. Default 1. */
  offlineExpectedQps: number;
  /** "Equal issue" mode: issue every loaded sample equally often. Default false. */
  sampleConcatenatePermutation: boolean;
  /** Minimum test duration, ms. Default 10000. */
  minDurationMs: number;
  /** Maximum test duration, ms; 0 = unlimited. Default 0. */
  maxDurationMs: number;
  /** Minimum number of queries. Default 100. */
  minQueryCount: number;
  /** Maximum number of queries; 0 = unlimited. Default 0. */
  maxQueryCount: number;
  /** Seed of the loadable-set shuffle (uint64). Default 0 (mlperf.conf sets the official one). */
  qslRngSeed: SeedInput;
  /** Seed of sample selection (uint64). Default 0. */
  sampleIndexRngSeed: SeedInput;
  /** Seed of the Server arrival schedule (uint64). Default 0. */
  scheduleRngSeed: SeedInput;
  /** Per-series offset of accuracy-log sampling in performance runs (uint64). Default 0. */
  accuracyLogRngSeed: SeedInput;
  /** Probability of logging a performance-run response to the accuracy log, a fraction in [0, 1]. Default 0. */
  accuracyLogProbability: number;
  /** If > 0, number of responses to log in performance runs (overrides the probability). Default 0. */
  accuracyLogSamplingTarget: number;
  /** Compliance TEST05: replace the three seeds by the test05 seeds and force PerformanceOnly. Default false. */
  test05: boolean;
  /** TEST05 replacement for `qslRngSeed` (uint64). Default 0. */
  test05QslRngSeed: SeedInput;
  /** TEST05 replacement for `sampleIndexRngSeed` (uint64). Default 0. */
  test05SampleIndexRngSeed: SeedInput;
  /** TEST05 replacement for `scheduleRngSeed` (uint64). Default 0. */
  test05ScheduleRngSeed: SeedInput;
  /** Print start/stop timestamps to stdout. Default false. */
  printTimestamps: boolean;
  /** Issue each loaded sample exactly once. Default false. */
  performanceIssueUnique: boolean;
  /** Issue the same loaded sample repeatedly (compliance TEST04). Default false. */
  performanceIssueSame: boolean;
  /** Position in the loaded set used by `performanceIssueSame` (not a QSL index). Default 0. */
  performanceIssueSameIndex: number;
  /** Performance sample count; 0 = use the QSL's `performanceSampleCount`. Default 0. */
  performanceSampleCountOverride: number;
  /** Accuracy sample count; 0 = use the QSL's `totalSampleCount`. Default 0. */
  accuracySampleCountOverride: number;
  /** Enable time-to-first-token / time-per-output-token metrics. Default false. */
  useTokenLatencies: boolean;
  /** Server TTFT bound, ns (integer >= 1000). Reference config key `ttft_latency` (ms). Default 100000000. */
  serverTtftLatency: number;
  /** Server TPOT bound, ns (integer >= 1000). Reference config key `tpot_latency` (ms). Default 100000000. */
  serverTpotLatency: number;
  /** Report token throughput as samples × `tokenLatencyScalingFactor`. Default false. */
  inferTokenLatencies: boolean;
  /**
   * Tokens per sample for `inferTokenLatencies` (must be > 0 then). Default 0
   * (the reference C++ field has no initializer; Python value-initializes it to 0).
   */
  tokenLatencyScalingFactor: number;
  /**
   * loadgen extension: CPU to pin the native issue thread to; -1 = not pinned.
   * Integer -1..1023. Default -1. A pinned issue thread owns its CPU: in
   * Server it spins (yielding) between queries instead of sleeping, because
   * waking a halted (v)CPU is what makes issue lateness's tail. Keep the
   * rest of the process off that CPU (e.g. `taskset -c 0 node …` with
   * `issueThreadCpu: 1`).
   */
  issueThreadCpu: number;
  /**
   * loadgen extension: how long, in ms, the run waits with samples outstanding and
   * no completion arriving before it ends INVALID; 0 = wait forever. When
   * `maxDurationMs` is non-zero the stall limit is min(completionTimeoutMs,
   * maxDurationMs). Default 60000.
   */
  completionTimeoutMs: number;
  /**
   * loadgen extension: how long, in ms, a QSL call (`loadSamplesToRam`,
   * `unloadSamplesFromRam`, or the promise it returns) may take before the run
   * fails with a SutError naming the call; 0 = wait forever. Integer
   * 0..2147483647 (the longest JS timer). Default 60000.
   */
  qslTimeoutMs: number;
  /**
   * loadgen extension: how queries reach the SUT. `'wake'` (default): the
   * issue thread wakes the JS thread once per batch; `'poll'`: the JS thread
   * polls for queries (setImmediate loop) while a series runs; `'worker'`:
   * SUTs in `dispatchWorkers` worker threads take queries straight from the
   * core (see docs/overhead-and-benchmarks.md, "Dispatch modes"). Config/--set name `dispatch`.
   */
  dispatch: DispatchMode;
  /**
   * loadgen extension: worker threads that serve a `dispatch: 'worker'` run
   * (integer 1..256). Default 1: predictable on every machine; give it the
   * cores the SUT may use (e.g. os.availableParallelism() - 1, leaving one
   * for the main and issue threads).
   */
  dispatchWorkers: number;
  /**
   * loadgen extension: `dispatch: 'worker'` only: how long, in µs, a worker
   * spins for a query (integer 0..1000000). Server: an idle worker sleeps
   * until this long before the next query is due, then spins for it (and at
   * most this long past its due time, issuing it itself if the issue thread
   * is late); other scenarios: an idle worker spins
   * this long, then sleeps. Spinning saves the futex wake-up (tens of µs on
   * a VM) at the cost of CPU time per worker. Default 0: sleep only.
   */
  dispatchSpinUs: number;
  /**
   * loadgen extension: `dispatch: 'wake'`, Server only: wake the JS thread
   * this long, in µs, before each query is due (when it is idle) and wait
   * there for the query, staying for the next one too when it is due within
   * the lead (integer 0..10000). Hides the wake-up's latency (delivery lag
   * p50 ~30 µs -> ~1 µs on a 2-vCPU VM) at the cost of up to about this long
   * of JS-thread time per query, during which the event loop does not turn:
   * leave 0 for SUTs whose own work or I/O runs on the JS thread. Default 0.
   */
  wakeLeadUs: number;
}

/** What users pass: any subset of {@link TestSettings}; missing fields take their defaults. */
export type TestSettingsInput = Partial<TestSettings>;

/** Names of the uint64 seed fields (stored as bigint once resolved). */
export type SeedKey =
  | 'qslRngSeed'
  | 'sampleIndexRngSeed'
  | 'scheduleRngSeed'
  | 'accuracyLogRngSeed'
  | 'test05QslRngSeed'
  | 'test05SampleIndexRngSeed'
  | 'test05ScheduleRngSeed';

/** Validated, complete, frozen test settings; seeds are bigint in [0, 2^64-1]. */
export type ResolvedTestSettings = {
  readonly [K in keyof TestSettings]: K extends SeedKey ? bigint : TestSettings[K];
};

// ---------------------------------------------------------------------------
// LogSettings
// ---------------------------------------------------------------------------

/** The reference `LogSettings` with its `LogOutputSettings` flattened (camelCase). */
export interface LogSettings {
  /** Output directory (must exist when the test starts). Default `'.'`. */
  outdir: string;
  /** File name prefix (no path separators). Default `'mlperf_log_'`. */
  prefix: string;
  /** Inserted before each file's extension (no path separators). Default `''`. */
  suffix: string;
  /** Insert `<test_datetime>_` after the prefix. Default false. */
  prefixWithDatetime: boolean;
  /** Echo every detail-log line to stdout. Default false. */
  copyDetailToStdout: boolean;
  /** Echo every summary line (and the footer) to stdout. Default false. */
  copySummaryToStdout: boolean;
  /** Write the Chrome trace. Default false here; the reference's default is true. */
  enableTrace: boolean;
  /** Accepted and ignored, as in the reference (logging is always asynchronous). Default `'AsyncPoll'`. */
  logMode: LoggingMode;
  /** Accepted and ignored, as in the reference. ms. Default 1000. */
  logModeAsyncPollIntervalMs: number;
}

/** What users pass: any subset of {@link LogSettings}. */
export type LogSettingsInput = Partial<LogSettings>;
/** Validated, complete, frozen log settings. */
export type ResolvedLogSettings = Readonly<LogSettings>;
