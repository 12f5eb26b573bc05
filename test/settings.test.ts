/**
 * The settings schema: defaults, the field table, resolution, validation
 * (types, enums, ranges, seeds, crash-prone combinations), the QSL checks.
 * Parsing and conversion: settings-io.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEST_SETTINGS, SETTINGS_FIELDS } from '../lib/settings/fields.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { SCENARIOS, TEST_MODES } from '../lib/types/settings.js';
import { assertRunnableMode, resolveQslDependentChecks } from '../lib/settings/validate.js';
import type { ResolvedTestSettings, TestSettingsInput } from '../lib/types/settings.js';
import { expectSettingsError, resolve, REFERENCE_DEFAULTS, camel } from './settings-helpers.js';

describe('defaults', () => {
  it('match spec/10 §2 field by field, in the reference order, plus the two extensions', () => {
    const names = SETTINGS_FIELDS.map((f) => f.snake);
    expect(names).toEqual([...Object.keys(REFERENCE_DEFAULTS), 'issue_thread_cpu', 'completion_timeout_ms', 'qsl_timeout_ms', 'dispatch', 'dispatch_workers', 'dispatch_spin_us', 'wake_lead_us']);
    for (const [snake, value] of Object.entries(REFERENCE_DEFAULTS)) {
      expect(DEFAULT_TEST_SETTINGS[camel(snake) as keyof ResolvedTestSettings], snake).toEqual(value);
    }
    expect(DEFAULT_TEST_SETTINGS.issueThreadCpu).toBe(-1);
    expect(DEFAULT_TEST_SETTINGS.completionTimeoutMs).toBe(60000);
    expect(DEFAULT_TEST_SETTINGS.qslTimeoutMs).toBe(60000);
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
      'issueThreadCpu', 'completionTimeoutMs', 'qslTimeoutMs', 'dispatch', 'dispatchWorkers', 'dispatchSpinUs', 'wakeLeadUs',
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
