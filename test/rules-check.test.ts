import { describe, expect, it } from 'vitest';

import { checkSettings, RUN_RULES, SettingsError, type CheckReport, type CheckSettingsOptions, type TestSettingsInput } from '../lib/index.js';

function check(options: CheckSettingsOptions): CheckReport {
  return checkSettings(options);
}

function failing(r: CheckReport): string[] {
  return r.violations.map((v) => v.rule);
}

function status(r: CheckReport, id: string): string | undefined {
  return r.rules.find((x) => x.id === id)?.status;
}

const set = (settings: TestSettingsInput) => [{ label: '--set', settings }];

// Every pre-run rule: a config that breaks it (and only it) and one that passes it.
const CASES: Array<{ rule: string; fail: CheckSettingsOptions; pass: CheckSettingsOptions; message: RegExp }> = [
  {
    rule: 'scenario-required',
    fail: { model: '3d-unet', scenario: 'Server' },
    pass: { model: '3d-unet', scenario: 'Offline' },
    message: /scenario is Server.*3D UNET \(datacenter: Offline; edge: SingleStream, Offline\)/,
  },
  {
    rule: 'test-mode',
    fail: { model: 'resnet50', scenario: 'Server', mode: 'FindPeakPerformance' },
    pass: { model: 'resnet50', scenario: 'Server', mode: 'PerformanceOnly' },
    message: /mode is FindPeakPerformance/,
  },
  {
    rule: 'min-duration',
    fail: { model: 'resnet50', scenario: 'Server', userConf: { text: 'resnet50.Server.min_duration = 60000\n', name: 'user.conf' } },
    pass: { model: 'resnet50', scenario: 'Server', userConf: { text: 'resnet50.Server.min_duration = 700000\n', name: 'user.conf' } },
    message: /min_duration_ms is 60000 \(from user\.conf:1 resnet50\.Server\.min_duration = 60000\); the closed division requires at least 600000 ms/,
  },
  {
    rule: 'min-query-count',
    fail: { model: 'resnet50', scenario: 'MultiStream', userConf: { text: '*.MultiStream.min_query_count = 100\n' } },
    pass: { model: 'resnet50', scenario: 'MultiStream', userConf: { text: '*.MultiStream.min_query_count = 1000\n' } },
    message: /min_query_count is 100 .*at least 662 queries/,
  },
  {
    rule: 'min-query-count',
    fail: { model: 'resnet50', scenario: 'Offline', userConf: { text: 'resnet50.Offline.min_query_count = 1000\n' } },
    pass: { model: 'resnet50', scenario: 'Offline', userConf: { text: 'resnet50.Offline.target_qps = 100\n' } },
    message: /samples_per_query is 1000 .*at least 24576 samples in the Offline query/,
  },
  {
    rule: 'early-out',
    fail: { model: 'resnet50', scenario: 'Server', overrides: set({ maxDurationMs: 60000 }) },
    pass: { model: 'resnet50', scenario: 'Server', overrides: set({ maxDurationMs: 900000 }) },
    message: /max_duration_ms is 60000 \(from --set\).*0 \(no limit\) or at least 600000 ms/,
  },
  {
    rule: 'official-seeds',
    fail: { model: 'resnet50', scenario: 'Server', overrides: set({ scheduleRngSeed: 42n }) },
    pass: { model: 'resnet50', scenario: 'Server', overrides: set({ scheduleRngSeed: 16159082839903944936n }) },
    message: /schedule_rng_seed is 42 \(from --set\).*the official seed 16159082839903944936/,
  },
  {
    rule: 'latency-bound',
    fail: { model: 'resnet50', scenario: 'Server', userConf: { text: 'resnet50.Server.target_latency = 20\n' } },
    pass: { model: 'resnet50', scenario: 'Server', userConf: { text: 'resnet50.Server.target_latency = 10\n' } },
    message: /server_target_latency_ns is 20000000 .*at most 15000000 ns/,
  },
  {
    rule: 'latency-bound',
    fail: { model: 'llama2-70b', scenario: 'Server', userConf: { text: 'llama2-70b.Server.tpot_latency = 250\n' } },
    pass: { model: 'llama2-70b', scenario: 'Server', userConf: { text: 'llama2-70b.Server.tpot_latency = 150\n' } },
    message: /server_tpot_latency is 250000000 .*at most 200000000 ns/,
  },
  {
    rule: 'latency-percentile',
    fail: { model: 'resnet50', scenario: 'SingleStream', userConf: { text: '*.SingleStream.target_latency_percentile = 95\n' } },
    pass: { model: 'resnet50', scenario: 'SingleStream', userConf: { text: '*.SingleStream.target_latency_percentile = 90\n' } },
    message: /single_stream_target_latency_percentile is 0\.95.*exactly 0\.9/,
  },
  {
    rule: 'performance-sample-count',
    fail: { model: 'resnet50', scenario: 'Offline', totalSampleCount: 50000, userConf: { text: 'resnet50.*.performance_sample_count_override = 500\n' } },
    pass: { model: 'resnet50', scenario: 'Offline', totalSampleCount: 50000, userConf: { text: 'resnet50.*.performance_sample_count_override = 2048\n' } },
    message: /performance_sample_count is 500 .*at least 1024 samples/,
  },
  {
    rule: 'performance-sample-count',
    fail: { model: '3d-unet', scenario: 'Offline', totalSampleCount: 42, performanceSampleCount: 20 },
    pass: { model: '3d-unet', scenario: 'Offline', totalSampleCount: 42, performanceSampleCount: 42 },
    message: /performance_sample_count is 20 .*the whole data set: 42 samples/,
  },
  {
    rule: 'data-set-size',
    fail: { model: 'resnet50', scenario: 'Offline', totalSampleCount: 500 },
    pass: { model: 'resnet50', scenario: 'Offline', totalSampleCount: 50000 },
    message: /total_sample_count is 500; .*at least 1024 samples/,
  },
  {
    rule: 'accuracy-sample-count',
    fail: { model: 'resnet50', scenario: 'Offline', mode: 'AccuracyOnly', totalSampleCount: 50000, userConf: { text: 'resnet50.*.accuracy_sample_count_override = 100\n' } },
    pass: { model: 'resnet50', scenario: 'Offline', mode: 'AccuracyOnly', totalSampleCount: 50000 },
    message: /accuracy_sample_count is 100 .*50000 samples \(the whole data set\)/,
  },
  {
    rule: 'accuracy-log-off',
    fail: { model: 'resnet50', scenario: 'Server', userConf: { text: '*.*.accuracy_log_sampling_target = 64\n' } },
    pass: { model: 'resnet50', scenario: 'Server', userConf: { text: '*.*.accuracy_log_sampling_target = 0\n' } },
    message: /accuracy_log_sampling_target is 64 .*0 in a performance run/,
  },
  {
    rule: 'issue-mode',
    fail: { model: 'resnet50', scenario: 'Server', overrides: set({ performanceIssueSame: true }) },
    pass: { model: 'resnet50', scenario: 'Server', overrides: set({ performanceIssueSame: false }) },
    message: /performance_issue_same is true .*false outside a TEST04 run/,
  },
];

describe('checkSettings: every rule, a failing and a passing config', () => {
  it.each(CASES.map((c, i) => [`${c.rule} #${i}`, c] as const))('%s', (_name, c) => {
    const bad = check(c.fail);
    expect(bad.compliant).toBe(false);
    expect(failing(bad)).toEqual([c.rule]);
    expect(bad.violations[0]!.message).toMatch(c.message);
    expect(bad.violations[0]!.message.startsWith(`${c.rule}: `)).toBe(true);
    expect(status(bad, c.rule)).toBe('fail');
    const good = check(c.pass);
    expect(good.violations).toEqual([]);
    expect(good.compliant).toBe(true);
    expect(status(good, c.rule)).toBe('pass');
  });

  it('covers every rule that applies before a run; the rest are finished-run rules (rules-cli tests)', () => {
    const preRun = new Set(CASES.map((c) => c.rule));
    const logOnly = ['test01-settings', 'test04-settings', 'result-valid', 'early-stopping', 'no-errors', 'test01-performance', 'test04-performance', 'token-latency-p99'];
    expect(RUN_RULES.map((r) => r.id).filter((id) => !preRun.has(id)).sort()).toEqual([...logOnly].sort());
    expect(new Set(RUN_RULES.map((r) => r.id)).size).toBe(RUN_RULES.length);
  });
});

describe('checkSettings: the rules are the built-in mlperf.conf\'s', () => {
  it('the defaults of every benchmark and required scenario are compliant', () => {
    for (const [model, scenarios] of [['resnet50', ['Server', 'Offline', 'SingleStream', 'MultiStream']], ['bert', ['SingleStream', 'Offline']], ['gptj', ['Server', 'Offline']]] as const) {
      for (const scenario of scenarios) expect(check({ model, scenario }).violations).toEqual([]);
    }
  });

  it('an --mlperf-conf with other seeds does not change what the rules require', () => {
    const r = check({ model: 'resnet50', scenario: 'Offline', mlperfConf: { text: '*.*.qsl_rng_seed = 7\n*.*.sample_index_rng_seed = 7\n*.*.schedule_rng_seed = 7\n*.Offline.min_duration = 600000\nresnet50.*.performance_sample_count_override = 1024\nresnet50.Offline.min_query_count = 24576\n' } });
    expect(r.violations.map((v) => v.setting)).toEqual(['qsl_rng_seed', 'sample_index_rng_seed', 'schedule_rng_seed']);
  });

  it('lists the suites\' required scenarios and says when the data set size is assumed', () => {
    const r = check({ model: 'resnet50', scenario: 'Offline' });
    expect(r.requiredScenarios).toEqual({ datacenter: ['Server', 'Offline'], edge: ['SingleStream', 'MultiStream', 'Offline'] });
    expect(r.notes.join('\n')).toMatch(/assumed to be 1024 samples/);
    expect(check({ model: 'resnet50', scenario: 'Offline', totalSampleCount: 50000 }).notes).toEqual([]);
  });

  it('open division: model-specific bounds do not apply, an unknown model is allowed', () => {
    const bound = { model: 'resnet50', scenario: 'Server' as const, userConf: { text: 'resnet50.Server.target_latency = 20\n' } };
    expect(check({ ...bound, division: 'open' }).compliant).toBe(true);
    expect(status(check({ ...bound, division: 'open' }), 'latency-bound')).toBe('n/a');
    const mine = check({ model: 'my-model', scenario: 'Offline', division: 'open', overrides: set({ minDurationMs: 1000 }) });
    expect(failing(mine)).toEqual(['min-duration']);
  });

  it('bad input is a SettingsError naming the field, never a report', () => {
    expect(() => check({ model: 'resnet', scenario: 'Server' })).toThrow(/Unknown model "resnet".*did you mean 'resnet50'/);
    expect(() => check({ model: 'resnet50', scenario: 'server' as never })).toThrow(/Invalid scenario "server"/);
    expect(() => check({ model: 'resnet50', scenario: 'Server', division: 'closd' as never })).toThrow(/Invalid division "closd"/);
    expect(() => check({ model: 'resnet50', scenario: 'Server', totalSampleCount: 0 })).toThrow(SettingsError);
    expect(() => check({ model: 'resnet50', scenario: 'Server', totalSampleCount: 10, performanceSampleCount: 20 })).toThrow(/more than the data set's 10/);
    expect(() => check({ model: 'resnet50', scenario: 'Server', userConf: { text: 'resnet50.Server.target_qps = abc\n' } })).toThrow(SettingsError);
  });
});
