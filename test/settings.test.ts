import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SettingsError } from '../lib/errors.js';
import { fromSnakeCaseSettings, parseSettingAssignment, settingsFromAssignments } from '../lib/settings/assignments.js';
import {
  DEFAULT_LOG_SETTINGS,
  DEFAULT_TEST_SETTINGS,
  LOG_SETTINGS_FIELDS,
  SETTINGS_FIELDS,
} from '../lib/settings/fields.js';
import { resolveLogSettings } from '../lib/settings/log-settings.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import { SCENARIOS, TEST_MODES } from '../lib/settings/types.js';
import { assertRunnableMode, resolveQslDependentChecks } from '../lib/settings/validate.js';
import type { ResolvedTestSettings, TestSettingsInput } from '../lib/settings/types.js';

/** Runs `fn`, asserts it throws a SettingsError for `key` whose message contains every fragment. */
function expectSettingsError(fn: () => unknown, key: string, ...fragments: string[]): SettingsError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(SettingsError);
  const e = err as SettingsError;
  expect(e.code).toBe('ERR_LOADGEN_INVALID_SETTING');
  expect(e.name).toBe('SettingsError');
  expect(e.key).toBe(key);
  for (const f of fragments) expect(e.message).toContain(f);
  return e;
}

const resolve = (input: unknown) => () => resolveTestSettings(input);

// spec/10 §2, in the reference's field order, with the reference names.
const REFERENCE_DEFAULTS = {
  scenario: 'SingleStream',
  mode: 'PerformanceOnly',
  single_stream_expected_latency_ns: 1000000,
  single_stream_target_latency_percentile: 0.9,
  multi_stream_expected_latency_ns: 8000000,
  multi_stream_target_latency_percentile: 0.99,
  multi_stream_samples_per_query: 8,
  server_target_qps: 1,
  server_target_latency_ns: 100000000,
  server_target_latency_percentile: 0.99,
  server_coalesce_queries: false,
  server_find_peak_qps_decimals_of_precision: 1,
  server_find_peak_qps_boundary_step_size: 1,
  server_max_async_queries: 0,
  server_num_issue_query_threads: 0,
  offline_expected_qps: 1,
  sample_concatenate_permutation: false,
  min_duration_ms: 10000,
  max_duration_ms: 0,
  min_query_count: 100,
  max_query_count: 0,
  qsl_rng_seed: 0n,
  sample_index_rng_seed: 0n,
  schedule_rng_seed: 0n,
  accuracy_log_rng_seed: 0n,
  accuracy_log_probability: 0,
  accuracy_log_sampling_target: 0,
  test05: false,
  test05_qsl_rng_seed: 0n,
  test05_sample_index_rng_seed: 0n,
  test05_schedule_rng_seed: 0n,
  print_timestamps: false,
  performance_issue_unique: false,
  performance_issue_same: false,
  performance_issue_same_index: 0,
  performance_sample_count_override: 0,
  accuracy_sample_count_override: 0,
  use_token_latencies: false,
  server_ttft_latency: 100000000,
  server_tpot_latency: 100000000,
  infer_token_latencies: false,
  token_latency_scaling_factor: 0, // no C++ initializer; 0 as from Python
} as const;

const camel = (snake: string): string => snake.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

describe('defaults', () => {
  it('match spec/10 §2 field by field, in the reference order, plus the two extensions', () => {
    const names = SETTINGS_FIELDS.map((f) => f.snake);
    expect(names).toEqual([...Object.keys(REFERENCE_DEFAULTS), 'issue_thread_cpu', 'completion_timeout_ms', 'dispatch', 'dispatch_workers', 'dispatch_spin_us', 'wake_lead_us']);
    for (const [snake, value] of Object.entries(REFERENCE_DEFAULTS)) {
      expect(DEFAULT_TEST_SETTINGS[camel(snake) as keyof ResolvedTestSettings], snake).toEqual(value);
    }
    expect(DEFAULT_TEST_SETTINGS.issueThreadCpu).toBe(-1);
    expect(DEFAULT_TEST_SETTINGS.completionTimeoutMs).toBe(60000);
  });

  it('resolveTestSettings({}) and (undefined) give the defaults, frozen', () => {
    const r = resolveTestSettings({});
    expect(r).toEqual(DEFAULT_TEST_SETTINGS);
    expect(Object.isFrozen(r)).toBe(true);
    expect(resolveTestSettings(undefined)).toEqual(DEFAULT_TEST_SETTINGS);
    expect(Object.isFrozen(DEFAULT_TEST_SETTINGS)).toBe(true);
  });

  it('undefined values count as absent; given values are kept', () => {
    const r = resolveTestSettings({ scenario: 'Server', serverTargetQps: 250.5, minDurationMs: undefined });
    expect(r.scenario).toBe('Server');
    expect(r.serverTargetQps).toBe(250.5);
    expect(r.minDurationMs).toBe(10000);
  });

  it('does not mutate its input', () => {
    const input = { qslRngSeed: '5', scenario: 'Offline' as const };
    resolveTestSettings(input);
    expect(input).toEqual({ qslRngSeed: '5', scenario: 'Offline' });
  });
});

describe('SETTINGS_FIELDS', () => {
  it('camelCase names are the snake_case names converted; snake names are unique', () => {
    for (const f of SETTINGS_FIELDS) expect(f.name).toBe(camel(f.snake));
    expect(new Set(SETTINGS_FIELDS.map((f) => f.snake)).size).toBe(SETTINGS_FIELDS.length);
  });

  it('accepts the reference Python spellings ttft_latency / tpot_latency as aliases', () => {
    const byName = new Map(SETTINGS_FIELDS.map((f) => [f.name, f]));
    expect(byName.get('serverTtftLatency')?.aliases).toEqual(['ttft_latency']);
    expect(byName.get('serverTpotLatency')?.aliases).toEqual(['tpot_latency']);
  });

  it('every row has a kind matching its default, a doc, an allowed text; only the two extensions are marked', () => {
    const typeOfKind = { enum: 'string', double: 'number', uint64: 'number', int: 'number', seed: 'bigint', bool: 'boolean' };
    for (const f of SETTINGS_FIELDS) {
      expect(typeof f.default, f.name).toBe(typeOfKind[f.kind]);
      expect(f.doc.length, f.name).toBeGreaterThan(0);
      expect(f.allowed.length, f.name).toBeGreaterThan(0);
      if (f.kind === 'enum') expect(f.constraints.values).toContain(f.default);
    }
    expect(SETTINGS_FIELDS.filter((f) => f.extension).map((f) => f.name)).toEqual([
      'issueThreadCpu', 'completionTimeoutMs', 'dispatch', 'dispatchWorkers', 'dispatchSpinUs', 'wakeLeadUs',
    ]);
    expect(SETTINGS_FIELDS.filter((f) => f.unit === 'ns').map((f) => f.name)).toEqual([
      'singleStreamExpectedLatencyNs',
      'multiStreamExpectedLatencyNs',
      'serverTargetLatencyNs',
      'serverTtftLatency',
      'serverTpotLatency',
    ]);
  });

  it('every default passes its own validation', () => {
    const all = Object.fromEntries(SETTINGS_FIELDS.map((f) => [f.name, f.default])) as TestSettingsInput;
    expect(resolveTestSettings(all)).toEqual(DEFAULT_TEST_SETTINGS);
  });
});

describe('resolveTestSettings: input shape and unknown keys', () => {
  it.each([null, 5, 'Server', [], new Map()])('rejects non-object input %j', (input) => {
    expectSettingsError(resolve(input), '(input)', 'expected an object');
  });

  it('snake_case keys are rejected with the camelCase name to use', () => {
    expectSettingsError(resolve({ server_target_qps: 5 }), 'server_target_qps', "'server_target_qps'", 'use serverTargetQps');
    expectSettingsError(resolve({ ttft_latency: 5 }), 'ttft_latency', 'use serverTtftLatency');
    expectSettingsError(resolve({ issue_thread_cpu: 1 }), 'issue_thread_cpu', 'use issueThreadCpu');
  });

  it('misspelled keys get a did-you-mean suggestion', () => {
    expectSettingsError(resolve({ serverTargetQPS: 5 }), 'serverTargetQPS', "did you mean 'serverTargetQps'?");
    expectSettingsError(resolve({ serverTargetQs: 5 }), 'serverTargetQs', "did you mean 'serverTargetQps'?");
    expectSettingsError(resolve({ minDuration: 5 }), 'minDuration', "did you mean 'minDurationMs'?");
    expectSettingsError(resolve({ multiStreamSamplesPerQuerry: 5 }), 'multiStreamSamplesPerQuerry', "'multiStreamSamplesPerQuery'");
  });

  it('unrelated keys are called unknown without a misleading suggestion', () => {
    const e = expectSettingsError(resolve({ banana: 1 }), 'banana', "Unknown test setting 'banana'", 'not a loadgen test setting');
    expect(e.message).not.toContain('did you mean');
    expect(e.value).toBe(1);
  });

  it('log settings passed as test settings are pointed to the log settings', () => {
    expectSettingsError(resolve({ outdir: '/tmp' }), 'outdir', 'is a log setting');
  });
});

describe('resolveTestSettings: types', () => {
  it.each([
    ['serverTargetQps', '5', ['"5"', 'a finite number > 0', 'not a string']],
    ['serverTargetQps', NaN, ['NaN', 'NaN and Infinity are not allowed']],
    ['offlineExpectedQps', Infinity, ['Infinity', 'NaN and Infinity are not allowed']],
    ['minQueryCount', 1.5, ['1.5', 'not an integer']],
    ['minQueryCount', -1, ['-1', 'non-negative integer', 'unsigned']],
    ['minQueryCount', 2 ** 60, ['above 2^53-1']],
    ['minDurationMs', 10n, ['10n', 'not a bigint']],
    ['maxQueryCount', '18446744073709551615', ['18446744073709551615', 'above 2^53-1']],
    ['serverCoalesceQueries', 1, ['= 1', 'true or false', 'Use true']],
    ['test05', 'false', ['"false"', 'true or false', 'Use false']],
    ['printTimestamps', null, ['null', 'true or false']],
    ['issueThreadCpu', 2.5, ['2.5', 'not an integer']],
    ['accuracyLogProbability', {}, ['{}', 'a number in [0, 1]']],
  ] as const)('%s = %s is rejected', (key, value, fragments) => {
    const e = expectSettingsError(resolve({ [key]: value }), key, `Invalid test setting ${key}`, ...fragments);
    expect(e.value).toBe(value);
  });
});

describe('resolveTestSettings: enums', () => {
  it('accepts every scenario and mode name', () => {
    for (const scenario of SCENARIOS) expect(resolveTestSettings({ scenario }).scenario).toBe(scenario);
    for (const mode of TEST_MODES) expect(resolveTestSettings({ mode }).mode).toBe(mode);
  });

  it.each([
    ['scenario', 'server', "Did you mean 'Server'?"],
    ['scenario', 'singlestream', "Did you mean 'SingleStream'?"],
    ['scenario', 'Ofline', "Did you mean 'Offline'?"],
    ['mode', 'perf', "Did you mean 'PerformanceOnly'?"],
    ['mode', 'accuracy_only', "Did you mean 'AccuracyOnly'?"],
    ['scenario', 2, "Use the name: did you mean 'Server'?"],
    ['mode', 2, "did you mean 'PerformanceOnly'?"],
  ] as const)('%s = %j suggests the right name', (key, value, suggestion) => {
    const allowed = key === 'scenario' ? "one of 'SingleStream', 'MultiStream', 'Server', 'Offline'" : "'SubmissionRun'";
    expectSettingsError(resolve({ [key]: value }), key, String(value), allowed, suggestion);
  });

  it('a hopeless enum value lists the allowed names without a suggestion', () => {
    const e = expectSettingsError(resolve({ scenario: 'Batch' }), 'scenario', '"Batch"', "'Offline'");
    expect(e.message).not.toContain('Did you mean');
  });
});

describe('resolveTestSettings: ranges and unit hints', () => {
  it.each([
    ['serverTargetLatencyPercentile', 99, '0.99'],
    ['singleStreamTargetLatencyPercentile', 90, '0.9?'],
    ['multiStreamTargetLatencyPercentile', 99.9, '0.999?'],
    ['serverTargetLatencyPercentile', 1, '0.01'],
  ] as const)('percentile %s = %j: "percentiles are fractions: did you mean %s"', (key, value, fraction) => {
    expectSettingsError(resolve({ [key]: value }), key, String(value), 'a number in (0, 1)',
      `Percentiles are fractions: did you mean ${fraction}`);
  });

  it.each([0, -0.5, 1000])('percentile %j is out of (0, 1)', (value) => {
    expectSettingsError(resolve({ serverTargetLatencyPercentile: value }), 'serverTargetLatencyPercentile', 'a number in (0, 1)');
  });

  it('percentiles strictly inside (0, 1) are accepted', () => {
    expect(resolveTestSettings({ serverTargetLatencyPercentile: 0.9990000000000001 }).serverTargetLatencyPercentile)
      .toBe(0.9990000000000001);
  });

  it('accuracyLogProbability is a fraction in [0, 1] with the same hint', () => {
    expect(resolveTestSettings({ accuracyLogProbability: 1 }).accuracyLogProbability).toBe(1);
    expectSettingsError(resolve({ accuracyLogProbability: 5 }), 'accuracyLogProbability', '= 5', '[0, 1]', 'did you mean 0.05?');
    expectSettingsError(resolve({ accuracyLogProbability: -0.1 }), 'accuracyLogProbability', '-0.1', '[0, 1]');
  });

  it.each(['serverTargetQps', 'offlineExpectedQps', 'serverFindPeakQpsBoundaryStepSize'] as const)('%s must be > 0', (key) => {
    expectSettingsError(resolve({ [key]: 0 }), key, '= 0', 'a finite number > 0');
    expectSettingsError(resolve({ [key]: -3 }), key, '= -3', 'a finite number > 0');
    expect(resolveTestSettings({ [key]: 1e-3 })[key]).toBe(1e-3);
  });

  it.each([
    ['serverTargetLatencyNs', 10, '10 ms is 10000000'],
    ['serverTtftLatency', 2000 / 1000, '2 ms is 2000000'],
    ['serverTpotLatency', 200, '200 ms is 200000000'],
    ['singleStreamExpectedLatencyNs', 0.5, '0.5 ms is 500000'],
    ['multiStreamExpectedLatencyNs', 80, '80 ms is 80000000'],
  ] as const)('%s = %j gets a nanoseconds unit hint', (key, value, conversion) => {
    expectSettingsError(resolve({ [key]: value }), key, `= ${value}`, '>= 1000 (ns)',
      `${key} is in nanoseconds: ${value} ns is almost certainly a unit mistake; ${conversion}`);
  });

  it('latencies >= 1000 ns are accepted (doubles for the expected latencies)', () => {
    const r = resolveTestSettings({ singleStreamExpectedLatencyNs: 1000.5, serverTargetLatencyNs: 1000, serverTtftLatency: 1000 });
    expect(r.singleStreamExpectedLatencyNs).toBe(1000.5);
    expect(r.serverTargetLatencyNs).toBe(1000);
  });

  it('expected latencies must be >= 1 ns even without a hint (0 and negatives)', () => {
    expectSettingsError(resolve({ singleStreamExpectedLatencyNs: 0 }), 'singleStreamExpectedLatencyNs', '= 0', '>= 1000');
    expectSettingsError(resolve({ multiStreamExpectedLatencyNs: -1 }), 'multiStreamExpectedLatencyNs', '= -1', '>= 1000');
    expectSettingsError(resolve({ serverTtftLatency: 0 }), 'serverTtftLatency', '= 0', '>= 1000');
  });

  it('serverTargetLatencyNs = 0 is allowed only with useTokenLatencies (as mlperf.conf does for LLMs)', () => {
    expectSettingsError(resolve({ serverTargetLatencyNs: 0 }), 'serverTargetLatencyNs', '= 0', 'useTokenLatencies');
    expect(resolveTestSettings({ serverTargetLatencyNs: 0, useTokenLatencies: true }).serverTargetLatencyNs).toBe(0);
  });

  it('multiStreamSamplesPerQuery must be >= 1', () => {
    expectSettingsError(resolve({ multiStreamSamplesPerQuery: 0 }), 'multiStreamSamplesPerQuery', '= 0', 'an integer >= 1');
  });

  it('serverFindPeakQpsDecimalsOfPrecision is an integer in [0, 9]', () => {
    expect(resolveTestSettings({ serverFindPeakQpsDecimalsOfPrecision: 0 }).serverFindPeakQpsDecimalsOfPrecision).toBe(0);
    expectSettingsError(resolve({ serverFindPeakQpsDecimalsOfPrecision: 10 }), 'serverFindPeakQpsDecimalsOfPrecision', '= 10', '[0, 9]');
    expectSettingsError(resolve({ serverFindPeakQpsDecimalsOfPrecision: -1 }), 'serverFindPeakQpsDecimalsOfPrecision', '= -1', '[0, 9]');
  });

  it('issueThreadCpu is -1 (not pinned) or a CPU index; completionTimeoutMs >= 0', () => {
    expect(resolveTestSettings({ issueThreadCpu: 0 }).issueThreadCpu).toBe(0);
    expect(resolveTestSettings({ issueThreadCpu: -1 }).issueThreadCpu).toBe(-1);
    expectSettingsError(resolve({ issueThreadCpu: -2 }), 'issueThreadCpu', '= -2', '[-1, 1023]');
    expectSettingsError(resolve({ issueThreadCpu: 1024 }), 'issueThreadCpu', '= 1024', '[-1, 1023]');
    expect(resolveTestSettings({ completionTimeoutMs: 0 }).completionTimeoutMs).toBe(0);
    expectSettingsError(resolve({ completionTimeoutMs: -1 }), 'completionTimeoutMs', '= -1', 'unsigned');
  });
});

describe('resolveTestSettings: seeds', () => {
  const official = 16159082839903944936n; // mlperf.conf schedule_rng_seed, above 2^63

  it('accept a decimal string, a bigint or a safe number, and store bigint', () => {
    expect(resolveTestSettings({ scheduleRngSeed: '16159082839903944936' }).scheduleRngSeed).toBe(official);
    expect(resolveTestSettings({ scheduleRngSeed: official }).scheduleRngSeed).toBe(official);
    expect(resolveTestSettings({ qslRngSeed: 12345 }).qslRngSeed).toBe(12345n);
    expect(resolveTestSettings({ qslRngSeed: Number.MAX_SAFE_INTEGER }).qslRngSeed).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    expect(resolveTestSettings({ test05ScheduleRngSeed: '18446744073709551615' }).test05ScheduleRngSeed).toBe((1n << 64n) - 1n);
    expect(resolveTestSettings({ accuracyLogRngSeed: 0 }).accuracyLogRngSeed).toBe(0n);
  });

  it('every seed field is stored as bigint', () => {
    const seeds = SETTINGS_FIELDS.filter((f) => f.kind === 'seed').map((f) => f.name);
    expect(seeds).toEqual([
      'qslRngSeed', 'sampleIndexRngSeed', 'scheduleRngSeed', 'accuracyLogRngSeed',
      'test05QslRngSeed', 'test05SampleIndexRngSeed', 'test05ScheduleRngSeed',
    ]);
    const r = resolveTestSettings(Object.fromEntries(seeds.map((k, i) => [k, String(i + 1)])));
    seeds.forEach((k, i) => expect(r[k]).toBe(BigInt(i + 1)));
  });

  it.each([
    [(1n << 64n), ['18446744073709551616n', '[0, 18446744073709551615]']],
    ['18446744073709551616', ['"18446744073709551616"', '[0, 18446744073709551615]']],
    [-1, ['-1', '[0, 18446744073709551615]']],
    [-1n, ['-1n']],
    [1.5, ['1.5']],
    ['0x10', ['"0x10"', 'decimal digits']],
    ['-5', ['"-5"']],
    ['', ['""']],
    [2085463073848966840, ['lost precision', 'decimal string or a bigint']],
    [true, ['true']],
  ] as const)('rejects seed %s', (value, fragments) => {
    expectSettingsError(resolve({ qslRngSeed: value }), 'qslRngSeed', 'Invalid test setting qslRngSeed', ...fragments);
  });
});

describe('resolveTestSettings: combinations the reference crashes or hangs on', () => {
  it.each(['SingleStream', 'MultiStream', 'Server'] as const)('%s with minQueryCount = 0 and minDurationMs = 0', (scenario) => {
    expectSettingsError(resolve({ scenario, minQueryCount: 0, minDurationMs: 0 }), 'minQueryCount', '= 0', 'minDurationMs = 0',
      scenario, 'minQueryCount >= 1');
    expect(resolveTestSettings({ scenario, minQueryCount: 0, minDurationMs: 1 }).minQueryCount).toBe(0);
    expect(resolveTestSettings({ scenario, minQueryCount: 1, minDurationMs: 0 }).minDurationMs).toBe(0);
  });

  it('Offline whose single query would hold 0 samples', () => {
    expectSettingsError(resolve({ scenario: 'Offline', minQueryCount: 0, minDurationMs: 0 }), 'minQueryCount', '0 samples');
    // 1.1 * 0.5 s * 1 qps = 0.55 -> 0 samples.
    expectSettingsError(resolve({ scenario: 'Offline', minQueryCount: 0, minDurationMs: 500 }), 'minQueryCount', '0 samples');
    expect(resolveTestSettings({ scenario: 'Offline', minQueryCount: 0, minDurationMs: 1000 }).minQueryCount).toBe(0);
    expect(resolveTestSettings({ scenario: 'Offline', minQueryCount: 0, minDurationMs: 0, performanceIssueUnique: true }).scenario)
      .toBe('Offline');
  });

  it('performanceIssueUnique together with performanceIssueSame', () => {
    expectSettingsError(resolve({ performanceIssueUnique: true, performanceIssueSame: true }), 'performanceIssueSame',
      'performanceIssueUnique and performanceIssueSame cannot both be true');
  });

  it('inferTokenLatencies needs tokenLatencyScalingFactor > 0', () => {
    expectSettingsError(resolve({ inferTokenLatencies: true }), 'tokenLatencyScalingFactor', '= 0', '>= 1', 'inferTokenLatencies');
    expect(resolveTestSettings({ inferTokenLatencies: true, tokenLatencyScalingFactor: 69 }).tokenLatencyScalingFactor).toBe(69);
  });
});

describe('assertRunnableMode', () => {
  it.each(['PerformanceOnly', 'AccuracyOnly', 'SubmissionRun'] as const)('accepts %s', (mode) => {
    expect(() => assertRunnableMode(resolveTestSettings({ mode }))).not.toThrow();
  });

  it('accepts FindPeakPerformance in Server only', () => {
    expect(() => assertRunnableMode(resolveTestSettings({ mode: 'FindPeakPerformance', scenario: 'Server' }))).not.toThrow();
    const s = resolveTestSettings({ mode: 'FindPeakPerformance', scenario: 'Offline' });
    expectSettingsError(() => assertRunnableMode(s), 'mode', "searches the Server scenario's peak QPS; scenario is 'Offline'");
  });
});

describe('resolveQslDependentChecks', () => {
  const base = resolveTestSettings({});
  const check = (s: ResolvedTestSettings, totalSampleCount: unknown, performanceSampleCount: unknown) => () =>
    resolveQslDependentChecks(s, { totalSampleCount, performanceSampleCount } as never);

  it('accepts ordinary counts, including performanceSampleCount > totalSampleCount', () => {
    expect(check(base, 1000, 256)).not.toThrow();
    expect(check(base, 1, 1)).not.toThrow();
    expect(check(base, 10, 50)).not.toThrow();
    expect(check(base, 2 ** 32 - 1, 1)).not.toThrow();
  });

  it.each([0, -1, 1.5, 2 ** 32, NaN, '10', undefined])('rejects totalSampleCount %j', (total) => {
    expectSettingsError(check(base, total, 1), 'qsl.totalSampleCount', 'qsl.totalSampleCount', '[1, 4294967295]');
  });

  it.each([0, -3, 2.5, '1', null])('rejects performanceSampleCount %j', (pc) => {
    expectSettingsError(check(base, 100, pc), 'qsl.performanceSampleCount', 'an integer >= 1');
  });

  it('performanceIssueSameIndex must be inside the loaded set min(effective pc, total)', () => {
    const same = (i: number, override = 0) =>
      resolveTestSettings({ performanceIssueSame: true, performanceIssueSameIndex: i, performanceSampleCountOverride: override });
    expect(check(same(3), 100, 4)).not.toThrow();
    expectSettingsError(check(same(4), 100, 4), 'performanceIssueSameIndex', '= 4', '[0, 3]');
    // The override replaces the QSL count...
    expect(check(same(9, 10), 100, 4)).not.toThrow();
    expectSettingsError(check(same(10, 10), 100, 4), 'performanceIssueSameIndex', '[0, 9]');
    // ...and the loaded set is capped by the total.
    expectSettingsError(check(same(8), 8, 20), 'performanceIssueSameIndex', '= 8', '[0, 7]');
    // Without performanceIssueSame the index is unused.
    expect(check(resolveTestSettings({ performanceIssueSameIndex: 99 }), 10, 4)).not.toThrow();
  });

  it('Offline + performanceIssueUnique with a performance count above the total', () => {
    const unique = resolveTestSettings({ scenario: 'Offline', performanceIssueUnique: true });
    expect(check(unique, 100, 100)).not.toThrow();
    expectSettingsError(check(unique, 100, 101), 'qsl.performanceSampleCount', '101', 'qsl.totalSampleCount (100)');
    const overridden = resolveTestSettings({ scenario: 'Offline', performanceIssueUnique: true, performanceSampleCountOverride: 200 });
    expectSettingsError(check(overridden, 100, 10), 'performanceSampleCountOverride', '200');
    // Other scenarios cap silently, as the reference does.
    expect(check(resolveTestSettings({ performanceIssueUnique: true }), 100, 101)).not.toThrow();
  });

  it('SingleStream + sampleConcatenatePermutation needs the QSL performance count > 0', () => {
    const concat = resolveTestSettings({ sampleConcatenatePermutation: true });
    expect(check(concat, 100, 10)).not.toThrow();
    expectSettingsError(check(concat, 100, 0), 'qsl.performanceSampleCount');
  });
});

describe('parseSettingAssignment', () => {
  it.each([
    ['scenario=Server', 'scenario', 'Server'],
    ['mode=PerformanceOnly', 'mode', 'PerformanceOnly'],
    ['mode=1', 'mode', 'AccuracyOnly'], // integer values as the reference config key
    ['scenario=3', 'scenario', 'Offline'],
    ['server_coalesce_queries=true', 'serverCoalesceQueries', true],
    ['server_coalesce_queries=false', 'serverCoalesceQueries', false],
    ['print_timestamps=1', 'printTimestamps', true],
    ['test05=0', 'test05', false],
    ['use_token_latencies=TRUE', 'useTokenLatencies', true],
    ['min_duration_ms=600000', 'minDurationMs', 600000],
    ['multi_stream_samples_per_query=8', 'multiStreamSamplesPerQuery', 8],
    ['server_target_latency_ns=15000000', 'serverTargetLatencyNs', 15000000],
    ['server_find_peak_qps_decimals_of_precision=2', 'serverFindPeakQpsDecimalsOfPrecision', 2],
    ['issue_thread_cpu=-1', 'issueThreadCpu', -1],
    ['completion_timeout_ms=0', 'completionTimeoutMs', 0],
    ['qsl_rng_seed=2085463073848966840', 'qslRngSeed', 2085463073848966840n],
    ['schedule_rng_seed=18446744073709551615', 'scheduleRngSeed', 18446744073709551615n],
    ['server_target_qps=1234.5', 'serverTargetQps', 1234.5],
    ['offline_expected_qps=1e3', 'offlineExpectedQps', 1000],
    ['server_target_latency_percentile=.99', 'serverTargetLatencyPercentile', 0.99],
    ['single_stream_expected_latency_ns=1000000', 'singleStreamExpectedLatencyNs', 1000000],
    ['ttft_latency=2000000000', 'serverTtftLatency', 2000000000],
    ['tpot_latency=200000000', 'serverTpotLatency', 200000000],
    ['serverTargetQps=7', 'serverTargetQps', 7], // camelCase keys too
    [' min_query_count = 42 ', 'minQueryCount', 42], // surrounding spaces
  ] as const)('%s', (text, key, value) => {
    expect(parseSettingAssignment(text)).toEqual({ key, value });
  });

  it('parses every field from its snake_case name and its default text', () => {
    for (const f of SETTINGS_FIELDS) {
      const text = `${f.snake}=${String(f.default)}`;
      expect(parseSettingAssignment(text), text).toEqual({ key: f.name, value: f.default });
    }
  });

  it('unknown keys get a did-you-mean among snake_case names', () => {
    expectSettingsError(() => parseSettingAssignment('server_target_qsp=5'), 'server_target_qsp', "did you mean 'server_target_qps'?");
    expectSettingsError(() => parseSettingAssignment('min_duration=5'), 'min_duration', "did you mean 'min_duration_ms'?");
    expectSettingsError(() => parseSettingAssignment('serverTargetQPS=5'), 'serverTargetQPS', "did you mean 'server_target_qps'?");
    expectSettingsError(() => parseSettingAssignment('xyzzy=5'), 'xyzzy', "Unknown test setting 'xyzzy'");
    expectSettingsError(() => parseSettingAssignment('outdir=/tmp'), 'outdir', 'is a log setting');
  });

  it('rejects text without "="', () => {
    expectSettingsError(() => parseSettingAssignment('server_target_qps'), 'server_target_qps', 'expected key=value');
  });

  it.each([
    ['print_timestamps=yes', 'print_timestamps', ['"yes"', 'true, false, 1 or 0']],
    ['min_query_count=1e4', 'min_query_count', ['"1e4"', 'decimal digits']],
    ['min_query_count=', 'min_query_count', ['""']],
    ['min_query_count=-5', 'min_query_count', ['"-5"', 'unsigned']],
    ['min_query_count=12.5', 'min_query_count', ['"12.5"']],
    ['server_target_qps=abc', 'server_target_qps', ['"abc"', 'a finite number > 0']],
    ['server_target_qps=0x10', 'server_target_qps', ['"0x10"']],
    ['server_target_qps=0', 'server_target_qps', ['"0"', '> 0']],
    ['server_target_latency_percentile=99', 'server_target_latency_percentile', ['"99"', 'did you mean 0.99?']],
    ['server_target_latency_ns=10', 'server_target_latency_ns', ['"10"', 'server_target_latency_ns is in nanoseconds', '10 ms is 10000000']],
    ['qsl_rng_seed=18446744073709551616', 'qsl_rng_seed', ['"18446744073709551616"', '18446744073709551615']],
    ['qsl_rng_seed=-1', 'qsl_rng_seed', ['"-1"', 'decimal digits']],
    ['scenario=server', 'scenario', ['"server"', "Did you mean 'Server'?"]],
    ['mode=4', 'mode', ['"4"', "'SubmissionRun'"]],
    ['issue_thread_cpu=-2', 'issue_thread_cpu', ['"-2"', '[-1, 1023]']],
  ] as const)('%s is rejected, naming the key as written', (text, key, fragments) => {
    const e = expectSettingsError(() => parseSettingAssignment(text), key, ...fragments);
    expect(e.value).toBe(text.slice(text.indexOf('=') + 1));
  });
});

describe('settingsFromAssignments', () => {
  it('builds camelCase input; a later assignment wins; the result resolves', () => {
    const input = settingsFromAssignments([
      'scenario=Server',
      'server_target_qps=100',
      'schedule_rng_seed=16159082839903944936',
      'server_target_qps=250',
      'serverCoalesceQueries=1',
    ]);
    expect(input).toEqual({ scenario: 'Server', serverTargetQps: 250, scheduleRngSeed: 16159082839903944936n, serverCoalesceQueries: true });
    const r = resolveTestSettings(input);
    expect(r.serverTargetQps).toBe(250);
    expect(r.scheduleRngSeed).toBe(16159082839903944936n);
  });

  it('an empty list gives an empty input', () => {
    expect(settingsFromAssignments([])).toEqual({});
  });

  it('stops at the first bad assignment', () => {
    expectSettingsError(() => settingsFromAssignments(['scenario=Server', 'min_query_cnt=5']), 'min_query_cnt', "'min_query_count'");
  });
});

describe('fromSnakeCaseSettings', () => {
  it('renames reference names (and the Python aliases) to camelCase, values untouched', () => {
    expect(fromSnakeCaseSettings({ server_target_qps: 5, qsl_rng_seed: '7', ttft_latency: 2000000000 })).toEqual({
      serverTargetQps: 5,
      qslRngSeed: '7',
      serverTtftLatency: 2000000000,
    });
  });

  it('rejects unknown keys with a snake_case suggestion', () => {
    expectSettingsError(() => fromSnakeCaseSettings({ serverTargetQps: 5 }), 'serverTargetQps', "did you mean 'server_target_qps'?");
    expectSettingsError(() => fromSnakeCaseSettings({ min_querry_count: 5 }), 'min_querry_count', "'min_query_count'");
    expectSettingsError(() => fromSnakeCaseSettings('x'), '(input)');
  });
});

describe('resolveLogSettings', () => {
  it('defaults: spec/10 §2.1, except enableTrace false', () => {
    const expected = {
      outdir: '.',
      prefix: 'mlperf_log_',
      suffix: '',
      prefixWithDatetime: false,
      copyDetailToStdout: false,
      copySummaryToStdout: false,
      enableTrace: false,
      logMode: 'AsyncPoll',
      logModeAsyncPollIntervalMs: 1000,
    };
    expect(DEFAULT_LOG_SETTINGS).toEqual(expected);
    expect(resolveLogSettings({})).toEqual(expected);
    expect(resolveLogSettings(undefined)).toEqual(expected);
    expect(Object.isFrozen(resolveLogSettings({}))).toBe(true);
    expect(LOG_SETTINGS_FIELDS.filter((f) => f.ignored).map((f) => f.name)).toEqual(['logMode', 'logModeAsyncPollIntervalMs']);
  });

  it('keeps given values, accepts (and ignores) the logging mode fields', () => {
    const r = resolveLogSettings({ outdir: '/tmp/x', prefix: 'p_', suffix: '_s', enableTrace: true, logMode: 'Synchronous',
      logModeAsyncPollIntervalMs: 5, copySummaryToStdout: true });
    expect(r).toMatchObject({ outdir: '/tmp/x', prefix: 'p_', suffix: '_s', enableTrace: true, logMode: 'Synchronous' });
  });

  it.each([
    [{ outdir: 5 }, 'outdir', ['Invalid log setting outdir = 5', 'a string']],
    [{ outdir: '' }, 'outdir', ['""', 'non-empty']],
    [{ prefix: 'runs/x_' }, 'prefix', ['"runs/x_"', 'path separators']],
    [{ suffix: 'a\\b' }, 'suffix', ['path separators']],
    [{ prefix: 'a\0b' }, 'prefix', ['NUL']],
    [{ enableTrace: 'yes' }, 'enableTrace', ['"yes"', 'true or false']],
    [{ copyDetailToStdout: 1 }, 'copyDetailToStdout', ['= 1', 'Use true']],
    [{ logMode: 'sync' }, 'logMode', ['"sync"', "'Synchronous'"]],
    [{ logModeAsyncPollIntervalMs: -1 }, 'logModeAsyncPollIntervalMs', ['-1', 'unsigned']],
    [{ enable_trace: true }, 'enable_trace', ['use enableTrace']],
    [{ prefix_with_datetime: true }, 'prefix_with_datetime', ['use prefixWithDatetime']],
    [{ logOutput: { outdir: '.' } }, 'logOutput', ['flat']],
    [{ outDir: '.' }, 'outDir', ["did you mean 'outdir'?"]],
    [{ scenario: 'Server' }, 'scenario', ['is a test setting']],
  ] as const)('rejects %j', (input, key, fragments) => {
    expectSettingsError(() => resolveLogSettings(input), key, ...fragments);
  });

  it('rejects non-object input', () => {
    expectSettingsError(() => resolveLogSettings('.'), '(input)', 'expected an object');
  });
});

describe('toNativeSettings', () => {
  it('flat snake_case object with enum integers, bigint seeds and the extensions', () => {
    const s = resolveTestSettings({
      scenario: 'Server',
      serverTargetQps: 3000,
      serverTargetLatencyNs: 10000000,
      minDurationMs: 500,
      qslRngSeed: '2085463073848966840',
      scheduleRngSeed: 16159082839903944936n,
      accuracyLogSamplingTarget: 16,
      issueThreadCpu: 1,
      completionTimeoutMs: 5000,
    });
    const n = toNativeSettings(s);
    expect(Object.keys(n)).toEqual(SETTINGS_FIELDS.map((f) => f.snake));
    expect(n).toMatchObject({
      scenario: 2,
      mode: 2,
      server_target_qps: 3000,
      server_target_latency_ns: 10000000,
      min_duration_ms: 500,
      qsl_rng_seed: 2085463073848966840n,
      schedule_rng_seed: 16159082839903944936n,
      sample_index_rng_seed: 0n,
      accuracy_log_sampling_target: 16,
      server_coalesce_queries: false,
      issue_thread_cpu: 1,
      completion_timeout_ms: 5000,
    });
  });

  it('defaults convert to the reference defaults', () => {
    expect(toNativeSettings(DEFAULT_TEST_SETTINGS)).toEqual({
      ...REFERENCE_DEFAULTS,
      scenario: 0,
      mode: 2,
      issue_thread_cpu: -1,
      completion_timeout_ms: 60000,
      dispatch: 0,
      dispatch_workers: 1,
      dispatch_spin_us: 0, wake_lead_us: 0,
    });
  });

  it('enum values are the declaration order of spec/10 §1', () => {
    SCENARIOS.forEach((scenario, i) => expect(toNativeSettings(resolveTestSettings({ scenario }))['scenario']).toBe(i));
    expect(TEST_MODES.map((mode) => toNativeSettings(resolveTestSettings({ mode }))['mode'])).toEqual([0, 1, 2, 3]);
  });
});

// Settings the reference actually ran with (shared golden files) must be accepted
// and convert back to the same reference values.
const golden = new URL('../../shared/golden/', import.meta.url);
describe.skipIf(!existsSync(golden))('golden settings round-trip', () => {
  const toReference = (n: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(n).map(([k, v]) => [
      k,
      k === 'scenario' ? SCENARIOS[v as number] : k === 'mode' ? TEST_MODES[v as number] : typeof v === 'bigint' ? String(v) : v,
    ]));

  it.each(SCENARIOS.flatMap((s) => [`${s}/performance`, `${s}/accuracy`]))('logs/%s/run_settings.json', (dir) => {
    const file = new URL(`logs/${dir}/run_settings.json`, golden);
    const run = JSON.parse(readFileSync(file, 'utf8')) as { settings: Record<string, unknown> };
    const n = toNativeSettings(resolveTestSettings(fromSnakeCaseSettings(run.settings)));
    expect(toReference(n)).toEqual({
      ...run.settings, issue_thread_cpu: -1, completion_timeout_ms: 60000, dispatch: 0, dispatch_workers: 1, dispatch_spin_us: 0, wake_lead_us: 0,
    });
  });

  it('settings_derivation.json: every settings_after_from_config resolves and passes the QSL checks', () => {
    const d = JSON.parse(readFileSync(new URL('settings_derivation.json', golden), 'utf8')) as {
      cases: { id: string; settings_after_from_config: Record<string, unknown>; qsl: Record<string, number> }[];
    };
    for (const c of d.cases) {
      const input = () => resolveTestSettings(fromSnakeCaseSettings(c.settings_after_from_config));
      if (c.id === 'negative_uint') {
        // max_query_count = -1 in a config wraps to 2^64-1: past 2^53-1, so rejected here.
        expectSettingsError(input, 'maxQueryCount', '18446744073709551615', 'above 2^53-1');
        continue;
      }
      const s = input();
      resolveQslDependentChecks(s, {
        totalSampleCount: c.qsl['total_sample_count']!,
        performanceSampleCount: c.qsl['performance_sample_count']!,
      });
      expect(toReference(toNativeSettings(s)), c.id).toEqual({
        ...c.settings_after_from_config,
        issue_thread_cpu: -1,
        completion_timeout_ms: 60000,
        dispatch: 0,
        dispatch_workers: 1,
        dispatch_spin_us: 0, wake_lead_us: 0,
      });
    }
  });
});

describe('suggestions stay plausible', () => {
  it('short unknown keys are not matched to unrelated short names', () => {
    const e = expectSettingsError(resolve({ min: 1 }), 'min');
    expect(e.message).not.toContain('did you mean');
  });

  it('a percentile of 100 gets no (invalid) fraction suggestion', () => {
    const e = expectSettingsError(resolve({ serverTargetLatencyPercentile: 100 }), 'serverTargetLatencyPercentile', '(0, 1)');
    expect(e.message).not.toContain('did you mean');
  });
});
