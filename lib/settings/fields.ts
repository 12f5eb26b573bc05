/**
 * The settings schema: one row per TestSettings / LogSettings field (names,
 * kind, default, constraints, unit, doc), from which validation, defaults,
 * `--set` parsing and the native conversion are driven.
 */
import { runSettingLimit } from '../native/tables.js';
import {
  DISPATCH_MODES,
  LOGGING_MODES,
  SCENARIOS,
  TEST_MODES,
  type LogSettings,
  type ResolvedLogSettings,
  type ResolvedTestSettings,
  type TestSettings,
} from '../types/settings.js';

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
  qslTimeoutMs: {
    snake: 'qsl_timeout_ms', kind: 'uint64', default: 60000, constraints: runSettingLimit('qsl_timeout_ms'),
    unit: 'ms', extension: true,
    doc: 'longest a QSL load/unload call may take before the run fails; 0 = wait forever',
  },
  dispatch: {
    snake: 'dispatch', kind: 'enum', default: 'wake', constraints: { values: DISPATCH_MODES }, unit: '', extension: true,
    doc: "how queries reach the SUT: 'wake', 'poll' or 'worker' (docs/overhead-and-benchmarks.md: Dispatch modes)",
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

/** camelCase name → field (lookups for validation, `--set` and the config lint). */
export const FIELD_BY_NAME = new Map<string, SettingField>(SETTINGS_FIELDS.map((f) => [f.name, f]));
/** snake_case name or alias → field. */
export const FIELD_BY_SNAKE = new Map<string, SettingField>(
  SETTINGS_FIELDS.flatMap((f) => [f.snake, ...f.aliases].map((s) => [s, f] as [string, SettingField])),
);
/** Log settings: camelCase name → field, and reference name (with or without `log_output.`) → field. */
export const LOG_FIELD_BY_NAME = new Map<string, LogSettingField>(LOG_SETTINGS_FIELDS.map((f) => [f.name, f]));
export const LOG_FIELD_BY_SNAKE = new Map<string, LogSettingField>(
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
