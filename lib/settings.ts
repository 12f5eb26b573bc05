/**
 * Test and log settings: types, the field table, validation, defaults, the CLI's
 * `--set key=value` parser and the flat object handed to the native core.
 *
 * Field names are the reference LoadGen's (test_settings.h) in camelCase; the
 * snake_case spelling is used by `--set`, config files and the native side.
 * Everything is validated here, once, so the C++ core can read plain values
 * (spec/10 §2, spec/60 §2).
 */

import { SettingsError } from './errors.js';
import { runSettingLimit } from './native-tables.js';

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

/** Scenario names; the index is the reference's `TestScenario` integer value. */
export const SCENARIOS = ['SingleStream', 'MultiStream', 'Server', 'Offline'] as const;
/** Mode names; the index is the reference's `TestMode` integer value (the config key `mode`). */
export const TEST_MODES = ['SubmissionRun', 'AccuracyOnly', 'PerformanceOnly', 'FindPeakPerformance'] as const;
/** How queries reach the SUT (loadgen extension; README "Dispatch modes"). The index is the native value. */
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
 * native core. See the README's "Dispatch modes".
 */
export type DispatchMode = (typeof DISPATCH_MODES)[number];
/** Reference `LoggingMode`; ignored (logging is always asynchronous). */
export type LoggingMode = (typeof LOGGING_MODES)[number];

/** A uint64 seed as the user may give it: safe non-negative integer, bigint, or decimal string. */
export type SeedInput = number | bigint | string;

const UINT64_MAX = (1n << 64n) - 1n;

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
   * loadgen extension: how queries reach the SUT. `'wake'` (default): the
   * issue thread wakes the JS thread once per batch; `'poll'`: the JS thread
   * polls for queries (setImmediate loop) while a series runs; `'worker'`:
   * SUTs in `dispatchWorkers` worker threads take queries straight from the
   * core (see README "Dispatch modes"). Config/--set name `dispatch`.
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

// ---------------------------------------------------------------------------
// The field tables
// ---------------------------------------------------------------------------

/** How a field's value is typed and parsed. */
export type SettingKind = 'enum' | 'double' | 'uint64' | 'seed' | 'bool' | 'int';
/** Kinds of log-setting fields. */
export type LogSettingKind = 'enum' | 'uint64' | 'bool' | 'string';

/** Value constraints of a field, as data (also rendered into `allowed`). */
export interface SettingConstraints {
  /** Lower bound (inclusive unless `exclusiveMin`). */
  readonly min?: number;
  /** Upper bound (inclusive unless `exclusiveMax`). */
  readonly max?: number;
  readonly exclusiveMin?: boolean;
  readonly exclusiveMax?: boolean;
  /** Allowed names of an enum field; the index is the native integer value. */
  readonly values?: readonly string[];
  /** Extra hint on rejection: percent given for a fraction, or ms given for ns. */
  readonly hint?: 'fraction' | 'latencyNs';
  /** 0 is also accepted when this boolean setting is true (checked by resolveTestSettings). */
  readonly zeroAllowedWith?: keyof TestSettings;
}

/** One row of {@link SETTINGS_FIELDS}. */
export interface SettingField<K extends keyof TestSettings = keyof TestSettings> {
  /** camelCase name (the TypeScript API). */
  readonly name: K;
  /** The reference C++ field name (`--set`, native side). */
  readonly snake: string;
  /** Other snake_case spellings accepted by `--set` (the reference Python/config names). */
  readonly aliases: readonly string[];
  readonly kind: SettingKind;
  readonly default: ResolvedTestSettings[K];
  readonly constraints: SettingConstraints;
  /** Unit of the value ('' when unitless). */
  readonly unit: string;
  /** One-line description. */
  readonly doc: string;
  /** True for loadgen extensions the reference does not have. */
  readonly extension: boolean;
  /** Human-readable description of the allowed values (used in error messages). */
  readonly allowed: string;
}

/** One row of {@link LOG_SETTINGS_FIELDS}. */
export interface LogSettingField<K extends keyof LogSettings = keyof LogSettings> {
  readonly name: K;
  /** The reference name (`log_output.<name>` for the output fields). */
  readonly snake: string;
  readonly kind: LogSettingKind;
  readonly default: LogSettings[K];
  readonly constraints: SettingConstraints;
  readonly unit: string;
  readonly doc: string;
  /** True when loadgen accepts the field but ignores it, as the reference does. */
  readonly ignored: boolean;
  readonly allowed: string;
}

type FieldDef<K extends keyof TestSettings> = Omit<SettingField<K>, 'name' | 'allowed' | 'aliases' | 'extension'> & {
  readonly aliases?: readonly string[];
  readonly extension?: boolean;
};

const PERCENTILE: SettingConstraints = { min: 0, max: 1, exclusiveMin: true, exclusiveMax: true, hint: 'fraction' };
const POSITIVE: SettingConstraints = { min: 0, exclusiveMin: true };
const LATENCY_NS: SettingConstraints = { min: 1000, hint: 'latencyNs' };

// Keyed by camel name so the compiler checks that every TestSettings field has
// exactly one row of the right value type; insertion order is the reference's.
const TEST_FIELD_DEFS: { readonly [K in keyof TestSettings]: FieldDef<K> } = {
  scenario: {
    snake: 'scenario', kind: 'enum', default: 'SingleStream', constraints: { values: SCENARIOS }, unit: '',
    doc: 'scenario to run',
  },
  mode: {
    snake: 'mode', kind: 'enum', default: 'PerformanceOnly', constraints: { values: TEST_MODES }, unit: '',
    doc: 'what to run (only PerformanceOnly runs in this version)',
  },
  singleStreamExpectedLatencyNs: {
    snake: 'single_stream_expected_latency_ns', kind: 'double', default: 1000000, constraints: LATENCY_NS, unit: 'ns',
    doc: 'expected SingleStream latency; only sizes query generation',
  },
  singleStreamTargetLatencyPercentile: {
    snake: 'single_stream_target_latency_percentile', kind: 'double', default: 0.9, constraints: PERCENTILE,
    unit: 'fraction', doc: 'SingleStream reported and early-stopping percentile',
  },
  multiStreamExpectedLatencyNs: {
    snake: 'multi_stream_expected_latency_ns', kind: 'double', default: 8000000, constraints: LATENCY_NS, unit: 'ns',
    doc: 'expected MultiStream query latency; only sizes query generation',
  },
  multiStreamTargetLatencyPercentile: {
    snake: 'multi_stream_target_latency_percentile', kind: 'double', default: 0.99, constraints: PERCENTILE,
    unit: 'fraction', doc: 'MultiStream reported and early-stopping percentile',
  },
  multiStreamSamplesPerQuery: {
    snake: 'multi_stream_samples_per_query', kind: 'uint64', default: 8, constraints: { min: 1 }, unit: 'samples',
    doc: 'samples per MultiStream query',
  },
  serverTargetQps: {
    snake: 'server_target_qps', kind: 'double', default: 1, constraints: POSITIVE, unit: 'queries/s',
    doc: 'Server Poisson arrival rate; FindPeakPerformance lower bound',
  },
  serverTargetLatencyNs: {
    snake: 'server_target_latency_ns', kind: 'uint64', default: 100000000,
    constraints: { ...LATENCY_NS, zeroAllowedWith: 'useTokenLatencies' }, unit: 'ns',
    doc: 'Server latency bound (0 only with use_token_latencies)',
  },
  serverTargetLatencyPercentile: {
    snake: 'server_target_latency_percentile', kind: 'double', default: 0.99, constraints: PERCENTILE,
    unit: 'fraction', doc: 'Server latency percentile',
  },
  serverCoalesceQueries: {
    snake: 'server_coalesce_queries', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'merge overdue Server queries into one issueQuery call',
  },
  serverFindPeakQpsDecimalsOfPrecision: {
    snake: 'server_find_peak_qps_decimals_of_precision', kind: 'int', default: 1, constraints: { min: 0, max: 9 },
    unit: 'digits', doc: 'FindPeakPerformance termination precision',
  },
  serverFindPeakQpsBoundaryStepSize: {
    snake: 'server_find_peak_qps_boundary_step_size', kind: 'double', default: 1, constraints: POSITIVE, unit: '',
    doc: 'FindPeakPerformance upper-bound widening factor (qps *= 1 + step)',
  },
  serverMaxAsyncQueries: {
    snake: 'server_max_async_queries', kind: 'uint64', default: 0, constraints: {}, unit: 'queries',
    doc: 'Server outstanding-query limit; 0 = unlimited',
  },
  serverNumIssueQueryThreads: {
    snake: 'server_num_issue_query_threads', kind: 'uint64', default: 0, constraints: {}, unit: 'threads',
    doc: 'number of user threads expected to register as issue threads',
  },
  offlineExpectedQps: {
    snake: 'offline_expected_qps', kind: 'double', default: 1, constraints: POSITIVE, unit: 'samples/s',
    doc: 'expected Offline throughput; sizes the single Offline query',
  },
  sampleConcatenatePermutation: {
    snake: 'sample_concatenate_permutation', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'equal-issue mode',
  },
  minDurationMs: {
    snake: 'min_duration_ms', kind: 'uint64', default: 10000, constraints: {}, unit: 'ms', doc: 'minimum test duration',
  },
  maxDurationMs: {
    snake: 'max_duration_ms', kind: 'uint64', default: 0, constraints: {}, unit: 'ms',
    doc: 'maximum test duration; 0 = unlimited',
  },
  minQueryCount: {
    snake: 'min_query_count', kind: 'uint64', default: 100, constraints: {}, unit: 'queries', doc: 'minimum query count',
  },
  maxQueryCount: {
    snake: 'max_query_count', kind: 'uint64', default: 0, constraints: {}, unit: 'queries',
    doc: 'maximum query count; 0 = unlimited',
  },
  qslRngSeed: {
    snake: 'qsl_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '', doc: 'loadable-set shuffle seed',
  },
  sampleIndexRngSeed: {
    snake: 'sample_index_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '', doc: 'sample selection seed',
  },
  scheduleRngSeed: {
    snake: 'schedule_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '', doc: 'Server arrival seed',
  },
  accuracyLogRngSeed: {
    snake: 'accuracy_log_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '',
    doc: 'accuracy-log sampling offset',
  },
  accuracyLogProbability: {
    snake: 'accuracy_log_probability', kind: 'double', default: 0, constraints: { min: 0, max: 1, hint: 'fraction' },
    unit: 'fraction', doc: 'performance-run accuracy-log sampling probability',
  },
  accuracyLogSamplingTarget: {
    snake: 'accuracy_log_sampling_target', kind: 'uint64', default: 0, constraints: {}, unit: 'samples',
    doc: 'if > 0, number of responses to log (overrides the probability)',
  },
  test05: {
    snake: 'test05', kind: 'bool', default: false, constraints: {}, unit: '', doc: 'replace seeds by the test05 seeds',
  },
  test05QslRngSeed: {
    snake: 'test05_qsl_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '', doc: 'TEST05 qsl_rng_seed',
  },
  test05SampleIndexRngSeed: {
    snake: 'test05_sample_index_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '',
    doc: 'TEST05 sample_index_rng_seed',
  },
  test05ScheduleRngSeed: {
    snake: 'test05_schedule_rng_seed', kind: 'seed', default: 0n, constraints: {}, unit: '',
    doc: 'TEST05 schedule_rng_seed',
  },
  printTimestamps: {
    snake: 'print_timestamps', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'print start/stop timestamps to stdout',
  },
  performanceIssueUnique: {
    snake: 'performance_issue_unique', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'issue each loaded sample once',
  },
  performanceIssueSame: {
    snake: 'performance_issue_same', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'issue the same loaded sample repeatedly',
  },
  performanceIssueSameIndex: {
    snake: 'performance_issue_same_index', kind: 'uint64', default: 0, constraints: {}, unit: '',
    doc: 'position in the loaded set used by performance_issue_same',
  },
  performanceSampleCountOverride: {
    snake: 'performance_sample_count_override', kind: 'uint64', default: 0, constraints: {}, unit: 'samples',
    doc: "0 = use the QSL's performance sample count",
  },
  accuracySampleCountOverride: {
    snake: 'accuracy_sample_count_override', kind: 'uint64', default: 0, constraints: {}, unit: 'samples',
    doc: "0 = use the QSL's total sample count",
  },
  useTokenLatencies: {
    snake: 'use_token_latencies', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'enable TTFT/TPOT metrics',
  },
  serverTtftLatency: {
    snake: 'server_ttft_latency', aliases: ['ttft_latency'], kind: 'uint64', default: 100000000, constraints: LATENCY_NS,
    unit: 'ns', doc: 'Server time-to-first-token bound',
  },
  serverTpotLatency: {
    snake: 'server_tpot_latency', aliases: ['tpot_latency'], kind: 'uint64', default: 100000000, constraints: LATENCY_NS,
    unit: 'ns', doc: 'Server time-per-output-token bound',
  },
  inferTokenLatencies: {
    snake: 'infer_token_latencies', kind: 'bool', default: false, constraints: {}, unit: '',
    doc: 'report token throughput as samples x token_latency_scaling_factor',
  },
  tokenLatencyScalingFactor: {
    snake: 'token_latency_scaling_factor', kind: 'uint64', default: 0, constraints: {}, unit: 'tokens/sample',
    doc: 'tokens per sample (> 0 when infer_token_latencies)',
  },
  // The run settings' limits are the native core's (native/settings_fields.h), which checks them again.
  issueThreadCpu: {
    snake: 'issue_thread_cpu', kind: 'int', default: -1, constraints: runSettingLimit('issue_thread_cpu'), unit: 'cpu',
    extension: true, doc: 'CPU to pin the native issue thread to (it then spins between Server queries instead of sleeping); -1 = not pinned',
  },
  completionTimeoutMs: {
    snake: 'completion_timeout_ms', kind: 'uint64', default: 60000, constraints: runSettingLimit('completion_timeout_ms'),
    unit: 'ms', extension: true,
    doc: 'stall limit with samples outstanding and no completion; 0 = wait forever',
  },
  dispatch: {
    snake: 'dispatch', kind: 'enum', default: 'wake', constraints: { values: DISPATCH_MODES }, unit: '', extension: true,
    doc: "how queries reach the SUT: 'wake', 'poll' or 'worker' (README: Dispatch modes)",
  },
  dispatchWorkers: {
    snake: 'dispatch_workers', kind: 'uint64', default: 1, constraints: runSettingLimit('dispatch_workers'), unit: 'threads',
    extension: true, doc: "worker threads serving a dispatch 'worker' run",
  },
  dispatchSpinUs: {
    snake: 'dispatch_spin_us', kind: 'uint64', default: 0, constraints: runSettingLimit('dispatch_spin_us'), unit: 'us',
    extension: true,
    doc: "dispatch 'worker': how long a worker spins for a query (Server: before each due time) instead of sleeping",
  },
  wakeLeadUs: {
    snake: 'wake_lead_us', kind: 'uint64', default: 0, constraints: runSettingLimit('wake_lead_us'), unit: 'us',
    extension: true,
    doc: "dispatch 'wake', Server: wake the JS thread this long before each query is due and wait there for it (blocks its event loop meanwhile)",
  },
};

const LOG_FIELD_DEFS: { readonly [K in keyof LogSettings]: Omit<LogSettingField<K>, 'name' | 'allowed'> } = {
  outdir: {
    snake: 'log_output.outdir', kind: 'string', default: '.', constraints: {}, unit: '', ignored: false,
    doc: 'output directory (must exist)',
  },
  prefix: {
    snake: 'log_output.prefix', kind: 'string', default: 'mlperf_log_', constraints: {}, unit: '', ignored: false,
    doc: 'file name prefix',
  },
  suffix: {
    snake: 'log_output.suffix', kind: 'string', default: '', constraints: {}, unit: '', ignored: false,
    doc: 'inserted before the extension',
  },
  prefixWithDatetime: {
    snake: 'log_output.prefix_with_datetime', kind: 'bool', default: false, constraints: {}, unit: '', ignored: false,
    doc: 'insert <test_datetime>_ after the prefix',
  },
  copyDetailToStdout: {
    snake: 'log_output.copy_detail_to_stdout', kind: 'bool', default: false, constraints: {}, unit: '', ignored: false,
    doc: 'echo detail lines to stdout',
  },
  copySummaryToStdout: {
    snake: 'log_output.copy_summary_to_stdout', kind: 'bool', default: false, constraints: {}, unit: '',
    ignored: false, doc: 'echo summary lines to stdout',
  },
  enableTrace: {
    snake: 'enable_trace', kind: 'bool', default: false, constraints: {}, unit: '', ignored: false,
    doc: 'write the Chrome trace (reference default: true)',
  },
  logMode: {
    snake: 'log_mode', kind: 'enum', default: 'AsyncPoll', constraints: { values: LOGGING_MODES }, unit: '',
    ignored: true, doc: 'ignored, as in the reference',
  },
  logModeAsyncPollIntervalMs: {
    snake: 'log_mode_async_poll_interval_ms', kind: 'uint64', default: 1000, constraints: {}, unit: 'ms',
    ignored: true, doc: 'ignored, as in the reference',
  },
};

function describeAllowed(kind: SettingKind | LogSettingKind, c: SettingConstraints, unit: string): string {
  const u = unit === 'ns' || unit === 'ms' ? ` (${unit})` : '';
  switch (kind) {
    case 'enum':
      return `one of ${(c.values ?? []).map((v) => `'${v}'`).join(', ')}`;
    case 'bool':
      return 'true or false';
    case 'string':
      return 'a string';
    case 'seed':
      return 'an unsigned 64-bit integer in [0, 18446744073709551615] (a number up to 2^53-1, a bigint or a decimal string)';
    case 'double': {
      const { min, max } = c;
      if (min !== undefined && max !== undefined) {
        const lo = c.exclusiveMin === true ? '(' : '[';
        const hi = c.exclusiveMax === true ? ')' : ']';
        return `a number in ${lo}${min}, ${max}${hi}${u}`;
      }
      if (min !== undefined) return `a finite number ${c.exclusiveMin === true ? '>' : '>='} ${min}${u}`;
      return `a finite number${u}`;
    }
    case 'uint64':
    case 'int': {
      const min = c.min ?? 0;
      const zero = c.zeroAllowedWith !== undefined ? `, or 0 when ${c.zeroAllowedWith} is true` : '';
      if (c.max !== undefined) return `an integer in [${min}, ${c.max}]${u}${zero}`;
      if (min === 0) return `a non-negative integer${u}`;
      return `an integer >= ${min}${u}${zero}`;
    }
  }
}

/**
 * The test-settings table: one row per {@link TestSettings} field, in the
 * reference's declaration order, with the loadgen extensions last. Drives
 * validation, defaults, `--set` parsing and the native conversion.
 */
export const SETTINGS_FIELDS: readonly SettingField[] = Object.freeze(
  (Object.keys(TEST_FIELD_DEFS) as (keyof TestSettings)[]).map((name) => {
    const d = TEST_FIELD_DEFS[name] as FieldDef<keyof TestSettings>;
    return Object.freeze({
      name,
      snake: d.snake,
      aliases: d.aliases ?? [],
      kind: d.kind,
      default: d.default,
      constraints: d.constraints,
      unit: d.unit,
      doc: d.doc,
      extension: d.extension ?? false,
      allowed: describeAllowed(d.kind, d.constraints, d.unit),
    }) as SettingField;
  }),
);

/** The log-settings table, one row per {@link LogSettings} field. */
export const LOG_SETTINGS_FIELDS: readonly LogSettingField[] = Object.freeze(
  (Object.keys(LOG_FIELD_DEFS) as (keyof LogSettings)[]).map((name) => {
    const d = LOG_FIELD_DEFS[name] as Omit<LogSettingField, 'name' | 'allowed'>;
    return Object.freeze({ name, ...d, allowed: describeAllowed(d.kind, d.constraints, d.unit) }) as LogSettingField;
  }),
);

const FIELD_BY_NAME = new Map<string, SettingField>(SETTINGS_FIELDS.map((f) => [f.name, f]));
/** snake_case name or alias → field. */
const FIELD_BY_SNAKE = new Map<string, SettingField>(
  SETTINGS_FIELDS.flatMap((f) => [f.snake, ...f.aliases].map((s) => [s, f] as [string, SettingField])),
);
const LOG_FIELD_BY_NAME = new Map<string, LogSettingField>(LOG_SETTINGS_FIELDS.map((f) => [f.name, f]));
const LOG_FIELD_BY_SNAKE = new Map<string, LogSettingField>(
  LOG_SETTINGS_FIELDS.flatMap((f) => [
    [f.snake, f] as [string, LogSettingField],
    [f.snake.replace(/^log_output\./, ''), f] as [string, LogSettingField],
  ]),
);

/** The defaults of every test setting (spec/10 §2, plus the extensions). */
export const DEFAULT_TEST_SETTINGS: ResolvedTestSettings = Object.freeze(
  Object.fromEntries(SETTINGS_FIELDS.map((f) => [f.name, f.default])) as unknown as ResolvedTestSettings,
);
/** The defaults of every log setting. */
export const DEFAULT_LOG_SETTINGS: ResolvedLogSettings = Object.freeze(
  Object.fromEntries(LOG_SETTINGS_FIELDS.map((f) => [f.name, f.default])) as unknown as ResolvedLogSettings,
);

// ---------------------------------------------------------------------------
// Helpers: value display, suggestions
// ---------------------------------------------------------------------------

/** Renders a user value for a message: strings quoted, bigints with `n`. */
function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (v === undefined || v === null || typeof v === 'boolean' || typeof v === 'symbol') return String(v);
  if (typeof v === 'function') return '[function]';
  try {
    const s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
    if (s !== undefined) return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    // Cyclic or otherwise unserialisable: fall through.
  }
  return Object.prototype.toString.call(v);
}

/** Shortest decimal form of a computed hint value (99.9 / 100 → 0.999, not 0.9990000000000001). */
function num(x: number): string {
  return String(Number(x.toPrecision(12)));
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Case/underscore-insensitive form: `server_target_qps` and `serverTargetQPS` both → `servertargetqps`. */
function squash(s: string): string {
  return s.replace(/[_.\-\s]/g, '').toLowerCase();
}

/** Closest candidate to `input`, or undefined when nothing is plausibly meant. */
function closest(input: string, candidates: Iterable<string>): string | undefined {
  const target = squash(input);
  const list = [...candidates];
  // A unique prefix ('perf' -> 'PerformanceOnly') is a clearer intent than edit distance.
  const prefixed = target.length >= 3 ? list.filter((c) => squash(c).startsWith(target)) : [];
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of list) {
    const d = editDistance(target, squash(c));
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  // Short inputs are close to too many names ('min' is 2 edits from 'mode'); allow fewer edits.
  const limit = target.length <= 4 ? 1 : Math.max(2, Math.floor(target.length / 4));
  return bestDistance <= limit ? best : undefined;
}

type Label = 'test setting' | 'log setting';

function invalid(label: Label, key: string, value: unknown, problem: string): SettingsError {
  return new SettingsError(key, value, `Invalid ${label} ${key} = ${show(value)}: ${problem}`);
}

// ---------------------------------------------------------------------------
// Per-field validation
// ---------------------------------------------------------------------------

function isNumericString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v));
}

/** A hint for a wrongly typed value, or ''. */
function typeHint(v: unknown, wanted: 'number' | 'boolean'): string {
  if (wanted === 'number' && (isNumericString(v) || typeof v === 'bigint')) {
    const t = typeof v === 'bigint' ? `${v}` : v.trim();
    // Integers past 2^53-1 (e.g. a config's -1 wrapped to 2^64-1) cannot be numbers without losing precision.
    if (/^\d+$/.test(t) && !Number.isSafeInteger(Number(t))) return ` ${t} is above 2^53-1, which this field does not support.`;
    return ` Pass a number, not a ${typeof v} (${t}).`;
  }
  if (wanted === 'boolean' && (v === 0 || v === 1 || v === 'true' || v === 'false')) {
    return ` Use ${v === 1 || v === 'true'} (a boolean).`;
  }
  return '';
}

function seedValue(v: unknown, allowed: string, fail: (problem: string) => SettingsError): bigint {
  let s: bigint | undefined;
  if (typeof v === 'bigint') {
    s = v;
  } else if (typeof v === 'number') {
    if (Number.isInteger(v) && !Number.isSafeInteger(v) && v > 0) {
      throw fail(`expected ${allowed}. This number is above 2^53-1 and has lost precision; pass the seed as a decimal string or a bigint.`);
    }
    if (Number.isSafeInteger(v)) s = BigInt(v);
  } else if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) {
    s = BigInt(v.trim());
  }
  if (s === undefined || s < 0n || s > UINT64_MAX) {
    const extra = typeof v === 'string' && /^\s*0x/i.test(v) ? ' Hexadecimal is not accepted; use decimal digits.' : '';
    throw fail(`expected ${allowed}.${extra}`);
  }
  return s;
}

function rangeHint(field: { constraints: SettingConstraints; unit: string }, key: string, v: number): string {
  const c = field.constraints;
  // Only suggest v/100 when that would be accepted (a percentile of 100 has no valid fraction).
  if (c.hint === 'fraction' && v >= 1 && inRange(c, v / 100)) {
    const what = c.exclusiveMax === true ? 'Percentiles' : 'Probabilities';
    return ` ${what} are fractions: did you mean ${num(v / 100)}?`;
  }
  if (c.hint === 'latencyNs' && v > 0 && v < 1000) {
    return ` ${key} is in nanoseconds: ${num(v)} ns is almost certainly a unit mistake; ${num(v)} ms is ${num(v * 1e6)}.`;
  }
  return '';
}

function inRange(c: SettingConstraints, v: number): boolean {
  if (c.zeroAllowedWith !== undefined && v === 0) return true;
  if (c.min !== undefined && (c.exclusiveMin === true ? v <= c.min : v < c.min)) return false;
  if (c.max !== undefined && (c.exclusiveMax === true ? v >= c.max : v > c.max)) return false;
  return true;
}

type AnyField = SettingField | LogSettingField;

/**
 * Checks one value against its field; returns the stored form. Throws
 * SettingsError naming `key` and showing `shown` (the text a `--set` was given).
 */
function checkValue(label: Label, field: AnyField, key: string, v: unknown, shown: unknown = v): unknown {
  const { kind, constraints: c, allowed } = field;
  const fail = (problem: string): SettingsError => invalid(label, key, shown, problem);
  switch (kind) {
    case 'enum': {
      const values = c.values ?? [];
      if (typeof v === 'string' && values.includes(v)) return v;
      let hint = '';
      if (typeof v === 'string') {
        const lower = v.toLowerCase();
        // 'polling' -> 'poll': a name with a suffix is too many edits away for closest().
        const s = values.find((x) => x.toLowerCase() === lower) ?? closest(v, values) ??
          values.find((x) => x.length >= 3 && lower.startsWith(x.toLowerCase()));
        if (s !== undefined) hint = ` Did you mean '${s}'?`;
      } else if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < values.length) {
        hint = ` Use the name: did you mean '${values[v]}'?`;
      }
      throw fail(`expected ${allowed}.${hint}`);
    }
    case 'bool':
      if (typeof v === 'boolean') return v;
      throw fail(`expected ${allowed}.${typeHint(v, 'boolean')}`);
    case 'string':
      if (typeof v !== 'string') throw fail(`expected ${allowed}.`);
      if (v.includes('\0')) throw fail('expected a string without NUL characters.');
      // prefix/suffix are parts of a file name; directories belong in outdir.
      if (key !== 'outdir' && /[/\\]/.test(v)) {
        throw fail('expected a file name part without path separators; put directories in outdir.');
      }
      if (key === 'outdir' && v === '') throw fail("expected a non-empty directory path (use '.' for the current directory).");
      return v;
    case 'seed':
      return seedValue(v, allowed, fail);
    case 'double':
      if (typeof v !== 'number') throw fail(`expected ${allowed}.${typeHint(v, 'number')}`);
      if (!Number.isFinite(v)) throw fail(`expected ${allowed}; NaN and Infinity are not allowed.`);
      if (!inRange(c, v)) throw fail(`expected ${allowed}.${rangeHint(field, key, v)}`);
      return v;
    case 'uint64':
    case 'int':
      if (typeof v !== 'number') throw fail(`expected ${allowed}.${typeHint(v, 'number')}`);
      if (!Number.isFinite(v)) throw fail(`expected ${allowed}; NaN and Infinity are not allowed.`);
      if (!Number.isInteger(v)) throw fail(`expected ${allowed}; ${v} is not an integer.${rangeHint(field, key, v)}`);
      if (kind === 'uint64' && v < 0) throw fail(`expected ${allowed}; the field is unsigned.`);
      if (!Number.isSafeInteger(v)) throw fail(`expected ${allowed}; ${v} is above 2^53-1.`);
      if (!inRange(c, v)) throw fail(`expected ${allowed}.${rangeHint(field, key, v)}`);
      return Object.is(v, -0) ? 0 : v;
  }
}

function assertPlainObject(label: Label, v: unknown): asserts v is Record<string, unknown> {
  const ok = typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map);
  if (!ok) {
    const what = label === 'test setting' ? 'test settings' : 'log settings';
    throw new SettingsError('(input)', v, `Invalid ${what}: expected an object of ${label}s, got ${show(v)}.`);
  }
}

function unknownTestKey(key: string, value: unknown): SettingsError {
  const bySnake = FIELD_BY_SNAKE.get(key);
  let problem: string;
  if (bySnake !== undefined) {
    problem = `use ${bySnake.name} (the TypeScript API uses camelCase; snake_case names are for --set and config files).`;
  } else if (LOG_FIELD_BY_NAME.has(key) || LOG_FIELD_BY_SNAKE.has(key)) {
    problem = `${key} is a log setting; pass it in the log settings, not the test settings.`;
  } else {
    const s = closest(key, FIELD_BY_NAME.keys());
    problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen test setting (see SETTINGS_FIELDS).';
  }
  return new SettingsError(key, value, `Unknown test setting '${key}': ${problem}`);
}

function unknownLogKey(key: string, value: unknown): SettingsError {
  const bySnake = LOG_FIELD_BY_SNAKE.get(key);
  let problem: string;
  if (bySnake !== undefined) {
    problem = `use ${bySnake.name} (the TypeScript API uses camelCase).`;
  } else if (key === 'logOutput' || key === 'log_output') {
    problem = 'the log output fields are flat here: pass outdir, prefix, suffix, ... directly.';
  } else if (FIELD_BY_NAME.has(key) || FIELD_BY_SNAKE.has(key)) {
    problem = `${key} is a test setting; pass it in the test settings, not the log settings.`;
  } else {
    const s = closest(key, LOG_FIELD_BY_NAME.keys());
    problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen log setting (see LOG_SETTINGS_FIELDS).';
  }
  return new SettingsError(key, value, `Unknown log setting '${key}': ${problem}`);
}

// ---------------------------------------------------------------------------
// resolveTestSettings
// ---------------------------------------------------------------------------

/**
 * Validates user test settings and fills in defaults. `undefined` values count
 * as absent. Throws {@link SettingsError} (code `ERR_LOADGEN_INVALID_SETTING`) on
 * the first problem, naming the key, the value and what is allowed. Rejects the
 * inputs that crash or hang the reference (spec/60 §2) that can be detected
 * without the QSL; see {@link resolveQslDependentChecks} for the rest.
 * Accepts every mode name; call {@link assertRunnableMode} before running.
 */
export function resolveTestSettings(input: unknown): ResolvedTestSettings {
  if (input === undefined) return DEFAULT_TEST_SETTINGS;
  const s = resolveTestSettingFields(input);
  checkCombinations(s);
  return s;
}

/**
 * {@link resolveTestSettings} without the cross-field rules: every field is
 * checked on its own and defaults are filled in. For settings that are only
 * an intermediate state (e.g. before config files complete them).
 */
export function resolveTestSettingFields(input: unknown): ResolvedTestSettings {
  if (input === undefined) return DEFAULT_TEST_SETTINGS;
  assertPlainObject('test setting', input);
  for (const key of Object.keys(input)) {
    if (!FIELD_BY_NAME.has(key)) throw unknownTestKey(key, input[key]);
  }
  const out: Record<string, unknown> = {};
  for (const f of SETTINGS_FIELDS) {
    const v = input[f.name];
    out[f.name] = v === undefined ? f.default : checkValue('test setting', f, f.name, v);
  }
  return Object.freeze(out as ResolvedTestSettings);
}

/**
 * Checks one value of a test setting (camelCase name) on its own and returns
 * the stored form (seeds as bigint). Throws {@link SettingsError} naming the
 * key, the value and what is allowed.
 */
export function validateSettingValue(name: keyof TestSettings, value: unknown): unknown {
  const field = FIELD_BY_NAME.get(name);
  if (field === undefined) throw unknownTestKey(name, value);
  return checkValue('test setting', field, name, value);
}

/**
 * The candidate closest to `input` (edit distance, case and `_` ignored), or
 * undefined when nothing is plausibly meant. Used for did-you-mean hints.
 * @internal
 */
export function suggestName(input: string, candidates: Iterable<string>): string | undefined {
  return closest(input, candidates);
}

function conflict(key: keyof TestSettings, value: unknown, message: string): SettingsError {
  return new SettingsError(key, value, `Invalid test setting ${key} = ${show(value)}: ${message}`);
}

/** Cross-field rules that need no QSL. */
function checkCombinations(s: ResolvedTestSettings): void {
  if (s.serverTargetLatencyNs === 0 && !s.useTokenLatencies) {
    throw conflict('serverTargetLatencyNs', 0,
      'expected an integer >= 1000 (ns); 0 is only allowed with useTokenLatencies = true (TTFT/TPOT bound the latency instead).');
  }
  // The reference generates 0 queries and then reads query -1 (segfault).
  if (s.scenario !== 'Offline' && s.minQueryCount === 0 && s.minDurationMs === 0) {
    throw conflict('minQueryCount', 0,
      `with minDurationMs = 0 the ${s.scenario} scenario would generate no queries; set minQueryCount >= 1 or minDurationMs >= 1.`);
  }
  // Offline's single query holds max(minQueryCount, floor(1.1 * secs * qps)) samples
  // (spec/10 §3 Step 3, same evaluation order); 0 would issue an empty query.
  if (s.scenario === 'Offline' && !s.performanceIssueUnique) {
    const target = Math.trunc(1.1 * (s.minDurationMs / 1000.0) * s.offlineExpectedQps);
    if (Math.max(s.minQueryCount, target) === 0) {
      throw conflict('minQueryCount', 0,
        `the Offline query would hold 0 samples (1.1 x minDurationMs ${s.minDurationMs} ms x offlineExpectedQps ${s.offlineExpectedQps} < 1); set minQueryCount >= 1.`);
    }
  }
  if (s.performanceIssueUnique && s.performanceIssueSame) {
    throw conflict('performanceIssueSame', true,
      'performanceIssueUnique and performanceIssueSame cannot both be true; choose one.');
  }
  // Both hand queries to other threads; one run uses one way.
  if (s.dispatch === 'worker' && s.serverNumIssueQueryThreads !== 0) {
    throw conflict('serverNumIssueQueryThreads', s.serverNumIssueQueryThreads,
      "registered issue-query threads and dispatch 'worker' both hand queries to other threads; use one: " +
        "set serverNumIssueQueryThreads = 0, or dispatch 'wake'.");
  }
  if (s.inferTokenLatencies && s.tokenLatencyScalingFactor === 0) {
    throw conflict('tokenLatencyScalingFactor', 0,
      'expected an integer >= 1 (tokens per sample) when inferTokenLatencies is true.');
  }
}

/**
 * Throws {@link SettingsError} (key `mode`) unless the mode can run with
 * these settings: FindPeakPerformance searches Server QPS, so it needs the
 * Server scenario (the reference logs an error and runs nothing otherwise).
 */
export function assertRunnableMode(settings: Pick<ResolvedTestSettings, 'mode' | 'scenario'>): void {
  if (settings.mode === 'FindPeakPerformance' && settings.scenario !== 'Server') {
    throw new SettingsError('mode', settings.mode,
      `mode 'FindPeakPerformance' searches the Server scenario's peak QPS; scenario is '${settings.scenario}'. ` +
        'Use scenario Server, or another mode (PerformanceOnly, AccuracyOnly, SubmissionRun).');
  }
}

// ---------------------------------------------------------------------------
// QSL-dependent checks
// ---------------------------------------------------------------------------

/** The QSL counts {@link resolveQslDependentChecks} needs. */
export interface QslCounts {
  /** Samples in the dataset; integer in [1, 2^32-1]. */
  readonly totalSampleCount: number;
  /** Samples that fit in RAM; integer >= 1 (may exceed totalSampleCount, as in the reference). */
  readonly performanceSampleCount: number;
}

const QSL_TOTAL_LIMIT = runSettingLimit('qsl_total_sample_count');

/**
 * Checks that need the QSL's counts; call it when the QSL is known, before the
 * run. Throws {@link SettingsError} with keys such as `qsl.totalSampleCount` or
 * the offending setting's camelCase name.
 */
export function resolveQslDependentChecks(settings: ResolvedTestSettings, qsl: QslCounts): void {
  const total: unknown = qsl.totalSampleCount;
  const pc: unknown = qsl.performanceSampleCount;
  if (typeof total !== 'number' || !Number.isInteger(total) || total < QSL_TOTAL_LIMIT.min || total > QSL_TOTAL_LIMIT.max) {
    throw new SettingsError('qsl.totalSampleCount', total,
      `Invalid QSL qsl.totalSampleCount = ${show(total)}: expected an integer in [${QSL_TOTAL_LIMIT.min}, ${QSL_TOTAL_LIMIT.max}].`);
  }
  if (typeof pc !== 'number' || !Number.isSafeInteger(pc) || pc < 1) {
    throw new SettingsError('qsl.performanceSampleCount', pc,
      `Invalid QSL qsl.performanceSampleCount = ${show(pc)}: expected an integer >= 1 (values above totalSampleCount ${total} are capped to it).`);
  }
  const effectivePc = settings.performanceSampleCountOverride === 0 ? pc : settings.performanceSampleCountOverride;
  // The loaded set holds min(pc, total) samples (spec/20 §2); positions past it are out of range.
  const loaded = Math.min(effectivePc, total);
  if (settings.performanceIssueSame && settings.performanceIssueSameIndex >= loaded) {
    throw new SettingsError('performanceIssueSameIndex', settings.performanceIssueSameIndex,
      `Invalid test setting performanceIssueSameIndex = ${settings.performanceIssueSameIndex}: expected an integer in [0, ${loaded - 1}]; ` +
        `it is a position in the loaded set of ${loaded} samples (min(performance sample count ${effectivePc}, qsl.totalSampleCount ${total})).`);
  }
  // min_q = loaded / pc = 0 when pc > total: 0 queries, and the reference crashes.
  if (settings.scenario === 'Offline' && settings.performanceIssueUnique && effectivePc > total) {
    const key = settings.performanceSampleCountOverride === 0 ? 'qsl.performanceSampleCount' : 'performanceSampleCountOverride';
    throw new SettingsError(key, effectivePc,
      `Invalid ${key} = ${effectivePc}: Offline with performanceIssueUnique needs a performance sample count <= qsl.totalSampleCount (${total}), otherwise no query is generated.`);
  }
  // Division by the QSL's own count (spec/10 §3 Step 4); already ensured by pc >= 1, kept explicit.
  if (settings.scenario === 'SingleStream' && settings.sampleConcatenatePermutation && pc < 1) {
    throw new SettingsError('qsl.performanceSampleCount', pc,
      `Invalid QSL qsl.performanceSampleCount = ${pc}: SingleStream with sampleConcatenatePermutation needs it > 0.`);
  }
}

// ---------------------------------------------------------------------------
// --set key=value
// ---------------------------------------------------------------------------

/** One parsed `--set` assignment: a camelCase key and its typed value. */
export type SettingAssignment = {
  [K in keyof TestSettings]: { key: K; value: ResolvedTestSettings[K] };
}[keyof TestSettings];

const DOUBLE_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER_RE = /^[+-]?\d+$/;

/** Parses the text of one value according to the field kind (before range checks). */
function parseText(field: SettingField, key: string, text: string): unknown {
  const t = text.trim();
  const bad = (expected: string): SettingsError =>
    new SettingsError(key, text, `Invalid test setting ${key} = ${show(text)}: expected ${expected}.`);
  switch (field.kind) {
    case 'enum': {
      const values = field.constraints.values ?? [];
      // Integers as in the reference config key `mode` (0..3 = declaration order).
      if (/^\d+$/.test(t) && Number(t) < values.length) return values[Number(t)];
      return t; // checkValue rejects unknown names with a suggestion
    }
    case 'bool': {
      const l = t.toLowerCase();
      if (l === 'true' || l === '1') return true;
      if (l === 'false' || l === '0') return false;
      throw bad('true, false, 1 or 0');
    }
    case 'seed':
      if (!/^\d+$/.test(t)) throw bad('an unsigned 64-bit integer in decimal digits, 0..18446744073709551615');
      return BigInt(t);
    case 'uint64':
    case 'int':
      if (!INTEGER_RE.test(t)) throw bad(`${field.allowed} in decimal digits`);
      return Number(t);
    case 'double':
      if (!DOUBLE_RE.test(t)) throw bad(`${field.allowed} (decimal notation)`);
      return Number(t);
  }
}

/**
 * Parses one CLI `--set key=value`. The key is a reference snake_case name
 * (e.g. `server_target_qps`; `ttft_latency`/`tpot_latency` are accepted too) or
 * a camelCase name. Values: enum names (or their integer values, as in the
 * reference config), booleans true/false/1/0, decimal integers (seeds up to
 * 2^64-1), decimal doubles. The value is range-checked like
 * {@link resolveTestSettings} does for a single field (cross-field rules apply
 * when the whole settings object is resolved).
 */
export function parseSettingAssignment(text: string): SettingAssignment {
  const eq = text.indexOf('=');
  if (eq < 0) {
    throw new SettingsError(text, text, `Invalid --set ${show(text)}: expected key=value, e.g. server_target_qps=100.`);
  }
  const key = text.slice(0, eq).trim();
  const raw = text.slice(eq + 1);
  const field = FIELD_BY_SNAKE.get(key) ?? FIELD_BY_NAME.get(key);
  if (field === undefined) {
    let problem: string;
    if (LOG_FIELD_BY_NAME.has(key) || LOG_FIELD_BY_SNAKE.has(key)) {
      problem = `${key} is a log setting, not a test setting.`;
    } else {
      const s = closest(key, FIELD_BY_SNAKE.keys());
      problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen test setting (see SETTINGS_FIELDS).';
    }
    throw new SettingsError(key, raw, `Unknown test setting '${key}' in --set ${show(text)}: ${problem}`);
  }
  const parsed = parseText(field, key, raw);
  const value = checkValue('test setting', field, key, parsed, raw);
  return { key: field.name, value } as SettingAssignment;
}

/** Parses a list of `--set key=value` texts into test settings; a later assignment wins. */
export function settingsFromAssignments(list: readonly string[]): TestSettingsInput {
  const out: Record<string, unknown> = {};
  for (const text of list) {
    const { key, value } = parseSettingAssignment(text);
    out[key] = value;
  }
  return out as TestSettingsInput;
}

/**
 * Renames a snake_case settings object (reference field names, e.g. a JSON
 * config or the golden `run_settings.json`) to {@link TestSettingsInput}.
 * Values are passed through unchanged (validate with {@link resolveTestSettings}).
 * Unknown keys throw {@link SettingsError} with a suggestion.
 */
export function fromSnakeCaseSettings(input: unknown): TestSettingsInput {
  assertPlainObject('test setting', input);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const field = FIELD_BY_SNAKE.get(key);
    if (field === undefined) {
      const camel = FIELD_BY_NAME.get(key);
      const s = camel?.snake ?? closest(key, FIELD_BY_SNAKE.keys());
      const problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen test setting (see SETTINGS_FIELDS).';
      throw new SettingsError(key, value, `Unknown test setting '${key}': ${problem}`);
    }
    out[field.name] = value;
  }
  return out as TestSettingsInput;
}

// ---------------------------------------------------------------------------
// Log settings
// ---------------------------------------------------------------------------

/**
 * Validates user log settings and fills in defaults (`undefined` = absent).
 * Throws {@link SettingsError} on the first problem. Does not touch the file
 * system (whether `outdir` exists is checked when the logs are opened).
 */
export function resolveLogSettings(input: unknown): ResolvedLogSettings {
  if (input === undefined) return DEFAULT_LOG_SETTINGS;
  assertPlainObject('log setting', input);
  for (const key of Object.keys(input)) {
    if (!LOG_FIELD_BY_NAME.has(key)) throw unknownLogKey(key, input[key]);
  }
  const out: Record<string, unknown> = {};
  for (const f of LOG_SETTINGS_FIELDS) {
    const v = input[f.name];
    out[f.name] = v === undefined ? f.default : checkValue('log setting', f, f.name, v);
  }
  return Object.freeze(out as unknown as ResolvedLogSettings);
}

// ---------------------------------------------------------------------------
// Native conversion
// ---------------------------------------------------------------------------

/**
 * The flat object the native core reads: reference snake_case field names
 * (plus `issue_thread_cpu`, `completion_timeout_ms`), `scenario`/`mode` as
 * their integer enum values (spec/10 §1), seeds as bigint.
 */
export function toNativeSettings(s: ResolvedTestSettings): Record<string, number | boolean | bigint | string> {
  const out: Record<string, number | boolean | bigint | string> = {};
  for (const f of SETTINGS_FIELDS) {
    const v = s[f.name];
    out[f.snake] = f.kind === 'enum' ? (f.constraints.values ?? []).indexOf(v as string) : v;
  }
  return out;
}
