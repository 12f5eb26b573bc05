/**
 * Settings in and out: `--set` parsing, snake_case objects, log settings, the
 * native conversion and the golden round-trip. The schema: settings.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromSnakeCaseSettings, parseSettingAssignment, settingsFromAssignments } from '../lib/settings/assignments.js';
import { DEFAULT_LOG_SETTINGS, DEFAULT_TEST_SETTINGS, LOG_SETTINGS_FIELDS, SETTINGS_FIELDS } from '../lib/settings/fields.js';
import { resolveLogSettings } from '../lib/settings/log-settings.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import { SCENARIOS, TEST_MODES } from '../lib/types/settings.js';
import { resolveQslDependentChecks } from '../lib/settings/validate.js';
import { expectSettingsError, REFERENCE_DEFAULTS, resolve } from './settings-helpers.js';

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
      completion_timeout_ms: 60000, qsl_timeout_ms: 60000,
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
      ...run.settings, issue_thread_cpu: -1, completion_timeout_ms: 60000, qsl_timeout_ms: 60000, dispatch: 0, dispatch_workers: 1, dispatch_spin_us: 0, wake_lead_us: 0,
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
        completion_timeout_ms: 60000, qsl_timeout_ms: 60000,
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
