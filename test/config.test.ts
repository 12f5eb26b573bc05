import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { lintConfigText } from '../lib/config/lint.js';
import { loadSettings } from '../lib/config/load-settings.js';
import { type ConfigSource, type LoadSettingsOptions } from '../lib/config/types.js';
import { ConfigFileError, SettingsError } from '../lib/errors.js';
import { createNullNativeSut, createSyntheticQsl, startTest } from '../lib/index.js';
import { goldenDir, hasGolden, repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

function loadgen(args: string[], cwd = repoRoot) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The ConfigFileError loadSettings throws, or a failure. */
function strictError(options: LoadSettingsOptions): ConfigFileError {
  try {
    loadSettings(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    expect(error).toBeInstanceOf(SettingsError);
    return error as ConfigFileError;
  }
  throw new Error('expected a ConfigFileError');
}

const user = (text: string): ConfigSource => ({ text, name: 'user.conf' });

interface GoldenCase {
  id: string;
  model: string;
  config_scenario: 'SingleStream' | 'MultiStream' | 'Server' | 'Offline';
  mlperf_conf: { source: string; text?: string };
  user_conf: { text?: string; missing?: boolean };
  user_conf_second_call?: unknown;
  from_config_return_code: number;
  settings_after_from_config: Record<string, unknown>;
  logged_errors: { key: string; value_text: string }[];
}

describe.skipIf(!hasGolden)('settings_derivation vectors through loadSettings', () => {
  const cases = (JSON.parse(readFileSync(join(goldenDir, 'settings_derivation.json'), 'utf8')) as { cases: GoldenCase[] }).cases;
  const optionsOf = (c: GoldenCase, lenient: boolean): LoadSettingsOptions => ({
    mlperfConf: c.mlperf_conf.source === 'builtin' ? 'builtin' : { text: c.mlperf_conf.text!, name: 'mlperf.conf' },
    userConf: c.user_conf.missing === true ? join(tempDir(), 'missing', 'user.conf') : user(c.user_conf.text!),
    model: c.model,
    scenario: c.config_scenario,
    lenient,
  });

  // loadSettings makes one FromConfig call per load (a fresh "process"); the
  // two-call case is covered by the conformance runner (configDerive).
  for (const c of cases.filter((x) => x.user_conf_second_call === undefined)) {
    it(`lenient: ${c.id} gives the reference's settings_after_from_config`, () => {
      const r = loadSettings(optionsOf(c, true));
      expect(r.returnCodes.user).toBe(c.from_config_return_code);
      for (const [key, value] of Object.entries(c.settings_after_from_config)) {
        const got = r.referenceSettings[key];
        expect(typeof got === 'bigint' ? got.toString() : got, key).toEqual(value);
      }
      // The reference's own config errors are reported as warnings.
      for (const e of c.logged_errors.filter((x) => x.key === 'error_invalid_config')) {
        const text = JSON.parse(e.value_text) as string;
        const shown = text.startsWith("can't open file") ? "can't open file" : text;
        expect(r.messages.some((m) => m.isError && m.text.startsWith(shown)), text).toBe(true);
        expect(r.warnings.some((w) => w.includes(shown)), text).toBe(true);
      }
    });
  }

  it('strict mode accepts the valid cases with the same settings and rejects every broken one', () => {
    const rejected: string[] = [];
    for (const c of cases.filter((x) => x.user_conf_second_call === undefined)) {
      const lenient = loadSettings(optionsOf(c, true));
      try {
        const strict = loadSettings(optionsOf(c, false));
        expect(strict.referenceSettings, c.id).toEqual(lenient.referenceSettings);
        expect(strict.warnings, c.id).toEqual([]);
      } catch (error) {
        expect(error, c.id).toBeInstanceOf(SettingsError);
        rejected.push(c.id);
      }
    }
    expect(rejected.sort()).toEqual([
      'bad_line_missing_equals', 'bad_mlperf_conf', 'bad_value_not_number', 'fractional_int_keys', 'hash_glued_comment_error',
      'missing_user_conf', 'mode_invalid', 'negative_uint', 'no_spaces_ignored', 'number_bases', 'repeated_values',
      'system_only_keys', 'trailing_comment_error',
    ]);
  });
});

describe('strict config errors name the file, line, key, value and what is allowed', () => {
  const base = { model: 'resnet50', scenario: 'Server' as const };

  it("missing '='", () => {
    const e = strictError({ ...base, userConf: user('resnet50.Server.target_qps = 300\nresnet50.Server.min_query_count 5000\n') });
    expect(e.file).toBe('user.conf');
    expect(e.line).toBe(2);
    expect(e.key).toBe('resnet50.Server.min_query_count');
    expect(e.message).toMatch(/^user\.conf:2: resnet50\.Server\.min_query_count 5000: expected '=' after/);
  });

  it('a value that is not a number', () => {
    const e = strictError({ ...base, userConf: user('resnet50.Server.target_qps = fast\n') });
    expect([e.line, e.key, e.value]).toEqual([1, 'resnet50.Server.target_qps', 'fast']);
    expect(e.message).toContain("'fast' is not a decimal number");
    expect(e.message).toContain('expected a number > 0');
  });

  it('key=value without spaces (silently ignored by the reference)', () => {
    const e = strictError({ ...base, userConf: user('# x\nresnet50.Server.target_qps=300\n') });
    expect([e.line, e.key, e.value]).toEqual([2, 'resnet50.Server.target_qps', '300']);
    expect(e.message).toContain('needs spaces around');
    expect(e.message).toContain("Write 'resnet50.Server.target_qps = 300'");
  });

  it('a trailing comment (the reference rejects the whole file)', () => {
    const e = strictError({ ...base, userConf: user('resnet50.Server.target_qps = 300 # too fast?\n') });
    expect([e.line, e.key]).toEqual([1, 'resnet50.Server.target_qps']);
    expect(e.message).toContain("trailing comment '# too fast?'");
  });

  it("a '#' glued to the comment text", () => {
    const e = strictError({ ...base, userConf: user('\n#glued comment here\n') });
    expect([e.line, e.key]).toEqual([2, '#glued']);
    expect(e.message).toContain("Write '# glued'");
    // A lone '#####' line is a comment for the reference too.
    expect(lintConfigText('#####\n', 'u', 'user.conf')).toEqual([]);
  });

  it('an unknown key, with a did-you-mean', () => {
    const e = strictError({ ...base, userConf: user('resnet50.Server.target_qsp = 100\n') });
    expect([e.line, e.key, e.value]).toEqual([1, 'resnet50.Server.target_qsp', '100']);
    expect(e.message).toContain("unknown config key 'target_qsp'");
    expect(e.message).toContain("Did you mean 'target_qps'?");
    // The TestSettings field name is pointed to its config key.
    const f = strictError({ ...base, userConf: user('*.*.min_duration_ms = 100\n') });
    expect(f.message).toContain("the config key is 'min_duration' (ms)");
    // An unknown scenario.
    const g = strictError({ ...base, userConf: user('resnet50.server.target_qps = 100\n') });
    expect(g.message).toContain("did you mean 'Server'?");
  });

  it('a value out of range, in config units', () => {
    const e = strictError({ ...base, userConf: user('*.Server.target_latency_percentile = 150\n') });
    expect([e.line, e.key, e.value]).toEqual([1, '*.Server.target_latency_percentile', '150']);
    expect(e.message).toContain('expected a number in (0, 100) (percent)');
    const z = strictError({ ...base, userConf: user('*.*.samples_per_query = 0\n') });
    expect(z.message).toContain('expected an integer >= 1');
    const m = strictError({ ...base, userConf: user('*.*.mode = 7\n') });
    expect(m.message).toContain('expected 0 (SubmissionRun), 1 (AccuracyOnly), 2 (PerformanceOnly) or 3 (FindPeakPerformance)');
  });

  it('user.conf setting a seed (read only from mlperf.conf)', () => {
    const e = strictError({ ...base, userConf: user('*.*.min_query_count = 5\n*.*.qsl_rng_seed = 5\n') });
    expect([e.line, e.key]).toEqual([2, '*.*.qsl_rng_seed']);
    expect(e.message).toContain("'qsl_rng_seed' is read only from mlperf.conf");
  });

  it('integer parsing quirks: octal, exponents and fractions for integer keys', () => {
    expect(strictError({ ...base, userConf: user('*.*.max_query_count = 010\n') }).message).toContain('octal (8)');
    expect(strictError({ ...base, userConf: user('*.*.min_duration = 1e3\n') }).message).toContain("reads '1e3' as 1");
    expect(strictError({ ...base, userConf: user('*.Server.max_async_queries = 4294967297\n') }).message).toContain('int(4294967297)');
    // What means what it looks like is accepted: hex, 1.0 for an integer, a double target_latency for SingleStream.
    const ok = loadSettings({ ...base, userConf: user('*.*.max_query_count = 0x20\n*.*.min_query_count = 1.0\n*.SingleStream.target_latency = 0.5\n') });
    expect(ok.settings.maxQueryCount).toBe(32);
    expect(ok.settings.minQueryCount).toBe(1);
    expect(ok.settings.singleStreamExpectedLatencyNs).toBe(500000);
  });

  it('lists every problem; lenient mode applies as the reference and warns instead', () => {
    const text = 'resnet50.Server.target_qps=300\n*.Server.min_query_count = 777\n*.*.min_duraton = 5\n';
    const e = strictError({ ...base, userConf: user(text) });
    expect(e.problems.map((p) => p.line)).toEqual([1, 3]);
    expect(e.message.split('\n')).toHaveLength(2);
    const r = loadSettings({ ...base, userConf: user(text), lenient: true });
    expect(r.settings.serverTargetQps).toBe(1); // the reference ignored line 1
    expect(r.settings.minQueryCount).toBe(777);
    expect(r.warnings.join('\n')).toContain('user.conf:1:');
    expect(r.warnings.join('\n')).toContain("Did you mean 'min_duration'?");
  });

  it('compliance extras and never-read keys are accepted with a warning', () => {
    const r = loadSettings({
      ...base,
      userConf: user('*.*.test07_accuracy_threshold = 60.698\n*.Server.target_duration = 0\n*.Offline.target_latency = 5\n'),
    });
    expect(r.warnings).toHaveLength(3);
    expect(r.warnings[0]).toContain('compliance-test key');
    expect(r.warnings[2]).toContain("only for SingleStream, MultiStream, Server");
  });

  it('a value loadgen cannot run names its config line', () => {
    // 0 ms Server latency is only valid with token latencies.
    const e = (() => {
      try {
        loadSettings({ ...base, userConf: user('resnet50.Server.target_latency = 0\n') });
      } catch (error) {
        return error as SettingsError;
      }
      throw new Error('expected an error');
    })();
    expect(e.key).toBe('serverTargetLatencyNs');
    expect(e.message).toContain('user.conf:1 resnet50.Server.target_latency = 0');
  });
});

describe('provenance', () => {
  it('names the default, the built-in mlperf.conf line, the user.conf line, overrides and audit.config', () => {
    const dir = tempDir();
    const userPath = join(dir, 'user.conf');
    writeFileSync(userPath, '# mine\nresnet50.Server.target_qps = 1234.5\n*.*.min_query_count = 500\nresnet50.*.min_query_count = 600\n');
    const auditPath = join(dir, 'audit.config');
    writeFileSync(auditPath, '*.*.accuracy_log_sampling_target = 64\n');
    const r = loadSettings({
      userConf: userPath, auditConf: auditPath, model: 'resnet50', scenario: 'Server',
      overrides: [{ label: '--set', settings: { maxDurationMs: 5000 } }],
    });
    const p = (name: Parameters<typeof r.provenance.get>[0]) => r.provenance.get(name)!;
    expect(p('serverTargetQps')).toMatchObject({ origin: 'user.conf', file: userPath, line: 2, key: 'resnet50.Server.target_qps', value: '1234.5' });
    expect(p('minQueryCount')).toMatchObject({ origin: 'user.conf', line: 4, key: 'resnet50.*.min_query_count' });
    expect(p('serverTargetLatencyNs')).toMatchObject({ origin: 'mlperf.conf', builtin: true, key: 'resnet50.Server.target_latency', value: '15' });
    expect(p('qslRngSeed').description).toMatch(/^mlperf\.conf \(built-in\):\d+ \*\.\*\.qsl_rng_seed = 2085463073848966840$/);
    expect(p('maxDurationMs')).toMatchObject({ origin: 'override', label: '--set' });
    expect(p('accuracyLogSamplingTarget')).toMatchObject({ origin: 'audit.config', file: auditPath, line: 1 });
    expect(p('printTimestamps')).toMatchObject({ origin: 'default', description: 'default' });
    expect(p('scenario').origin).toBe('argument');
    expect(r.settings.qslRngSeed).toBe(2085463073848966840n);
    expect(r.settings.serverTargetQps).toBe(1234.5);
    expect(r.settings.maxDurationMs).toBe(5000);
    expect(r.settings.accuracyLogSamplingTarget).toBe(64);
    expect(r.messages.map((m) => m.text)).toEqual([
      'Found Audit Config file (audit.config). Overriding TestSettings from audit.config file.',
    ]);
  });

  it('a custom mlperf.conf replaces the built-in one and is named by its path', () => {
    const dir = tempDir();
    const path = join(dir, 'mlperf.conf');
    writeFileSync(path, '*.*.qsl_rng_seed = 42\n*.Offline.min_duration = 1000\n');
    const r = loadSettings({ mlperfConf: path, model: 'm', scenario: 'Offline' });
    expect(r.settings.qslRngSeed).toBe(42n);
    expect(r.provenance.get('minDurationMs')).toMatchObject({ origin: 'mlperf.conf', builtin: false, file: path, line: 2 });
    expect(r.settings.offlineExpectedQps).toBe(1); // not in this file: the default stays
  });
});

describe('audit.config at startTest', () => {
  const auditText = '# TEST06-like\n*.*.mode = 2\n*.*.accuracy_log_rng_seed = 720381539243781796\n*.*.min_query_count = 100\n' +
    '*.*.min_duration = 0\nresnet50.Offline.min_query_count = 20\n';

  it('the CLI applies audit.config from its working directory; the warning follows the detail-log header', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'audit.config'), auditText);
    const r = loadgen(['run', '--sut', 'null-native', '--scenario', 'Offline', '--mode', 'SubmissionRun',
      '--set', 'min_query_count=5000', '--outdir', 'out', '--json'], cwd);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('model-specific line');
    const result = JSON.parse(r.stdout) as { mode: string; effectiveSettings: { accuracyLogRngSeed: string; minQueryCount: number }; counts: { issuedSamples: number } };
    expect(result.mode).toBe('PerformanceOnly');
    expect(result.effectiveSettings.accuracyLogRngSeed).toBe('720381539243781796');
    expect(result.counts.issuedSamples).toBe(100); // audit min_query_count, not --set's 5000
    const lines = readFileSync(join(cwd, 'out', 'mlperf_log_detail.txt'), 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('Found Audit Config file (audit.config)'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 1]).toContain('"key": "qsl_reported_performance_count"');
    expect(lines[at]).toContain('"key": "warning_generic_message"');
    expect(lines[at]).toContain('"is_warning": true');
    expect(lines.some((l) => l.includes('"key": "requested_accuracy_log_rng_seed", "value": 720381539243781796'))).toBe(true);
    // The audit warning is counted; the only other warning a run of microseconds may get is the reference's
    // clock-ratio one (its PerfClock and system_clock durations differ by > 0.1 % when the run is that short).
    const warnings = lines.filter((l) => l.includes('"is_warning": true'));
    expect(warnings.filter((l) => !l.includes('Found Audit Config file') && !l.includes('PerfClock and system_clock differ by more than 0.1%'))).toEqual([]);
    expect(readFileSync(join(cwd, 'out', 'mlperf_log_summary.txt'), 'utf8'))
      .toContain(warnings.length === 1 ? '1 warning encountered' : `${warnings.length} warnings encountered`);

    // --no-audit-config skips it.
    const skipped = loadgen(['run', '--sut', 'null-native', '--scenario', 'Offline', '--set', 'min_query_count=300',
      '--set', 'min_duration_ms=0', '--outdir', 'out2', '--json', '--no-audit-config'], cwd);
    expect(skipped.status).toBe(0);
    expect((JSON.parse(skipped.stdout) as { counts: { issuedSamples: number } }).counts.issuedSamples).toBe(300);
    expect(readFileSync(join(cwd, 'out2', 'mlperf_log_detail.txt'), 'utf8')).not.toContain('Audit Config');
  });

  it('a broken audit.config stops the run (exit 2) naming its line; --lenient applies it as the reference', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'audit.config'), '*.*.mode = 2\n*.*.min_query_count = 50 # TEST\n');
    const r = loadgen(['run', '--sut', 'null-native', '--scenario', 'Offline', '--outdir', 'out', '--quiet'], cwd);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("audit.config:2: *.*.min_query_count = 50 # TEST: trailing comment");
    expect(existsSync(join(cwd, 'out'))).toBe(false);
    const l = loadgen(['run', '--sut', 'null-native', '--scenario', 'Offline', '--set', 'min_query_count=70',
      '--set', 'min_duration_ms=0', '--outdir', 'out', '--json', '--lenient'], cwd);
    expect(l.status).toBe(0);
    // The reference applies nothing from a file with a bad line and logs the error.
    expect((JSON.parse(l.stdout) as { counts: { issuedSamples: number } }).counts.issuedSamples).toBe(70);
    const detail = readFileSync(join(cwd, 'out', 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toContain('"value": "value needs to be integer or double, line=2"');
  });

  it('startTest takes an auditConfig path option', async () => {
    const dir = tempDir();
    const path = join(dir, 'my-audit.config');
    writeFileSync(path, '*.Offline.min_query_count = 123\n');
    const result = await startTest(createNullNativeSut(), createSyntheticQsl(1024, 1024),
      { scenario: 'Offline', minDurationMs: 0, minQueryCount: 10 }, { outdir: dir }, { auditConfig: path });
    expect(result.counts.issuedSamples).toBe(123);
    expect(result.errors.messages.map((m) => m.text)).toContain(
      'Found Audit Config file (audit.config). Overriding TestSettings from audit.config file.');
    const off = await startTest(createNullNativeSut(), createSyntheticQsl(1024, 1024),
      { scenario: 'Offline', minDurationMs: 0, minQueryCount: 10 }, { outdir: dir }, { auditConfig: false });
    expect(off.counts.issuedSamples).toBe(10);
  });
});

describe('loadgen settings', () => {
  it('prints every setting with its source and the effective settings', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'user.conf'), 'resnet50.Server.target_qps = 1234.5\n');
    const r = loadgen(['settings', '--user-conf', 'user.conf', '--model', 'resnet50', '--scenario', 'Server',
      '--set', 'max_duration_ms=5000'], dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/server_target_qps +1234\.5 +user\.conf:1 resnet50\.Server\.target_qps = 1234\.5\n/);
    expect(r.stdout).toMatch(/server_target_latency_ns +15000000 +mlperf\.conf \(built-in\):\d+ resnet50\.Server\.target_latency = 15\n/);
    expect(r.stdout).toMatch(/max_duration_ms +5000 +--set\n/);
    expect(r.stdout).toMatch(/print_timestamps +false +default\n/);
    expect(r.stdout).toContain('Effective settings (QSL total 1024, performance 1024):');
    expect(r.stdout).toMatch(/\n {2}target_qps +1234\.5\n/);
  });

  it('--json, QSL counts and audit.config', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'audit.config'), '*.*.mode = 1\n');
    const r = loadgen(['settings', '--model', 'resnet50', '--scenario', 'Offline', '--audit-conf', 'audit.config',
      '--qsl-total', '50000', '--qsl-performance', '1024', '--json'], dir);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      settings: Record<string, unknown>; provenance: Record<string, { origin: string; line?: number }>;
      effective: Record<string, unknown>;
    };
    expect(out.settings.mode).toBe('AccuracyOnly');
    expect(out.provenance.mode).toMatchObject({ origin: 'audit.config', line: 1 });
    expect(out.settings.qsl_rng_seed).toBe('2085463073848966840');
    expect(out.effective.accuracy_sample_count).toBe(50000);
    expect(out.effective.performance_sample_count).toBe(1024);
    expect(out.effective.min_query_count).toBe(1);
    expect(out.effective.samples_per_query).toBe(24576);
  });

  it('exits 2 with the config error', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'user.conf'), '*.Server.target_qps = 100\n*.Server.min_querry_count = 5\n');
    const r = loadgen(['settings', '--user-conf', 'user.conf', '--model', 'm', '--scenario', 'Server'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("loadgen: user.conf:2: *.Server.min_querry_count = 5: unknown config key 'min_querry_count'");
    expect(r.stderr).toContain("Did you mean 'min_query_count'?");
    const lenient = loadgen(['settings', '--user-conf', 'user.conf', '--model', 'm', '--scenario', 'Server', '--lenient'], dir);
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toContain('loadgen: warning: user.conf:2:');
  });

  it('run --user-conf --model loads the config before --set', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'user.conf'), 'resnet50.Offline.target_qps = 100\n*.Offline.min_duration = 0\n');
    const r = loadgen(['run', '--sut', 'null-native', '--user-conf', 'user.conf', '--model', 'resnet50', '--scenario', 'Offline',
      '--set', 'min_query_count=200', '--outdir', 'out', '--json', '--no-audit-config'], dir);
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout) as { effectiveSettings: { qslRngSeed: string; samplesPerQuery: number } };
    expect(result.effectiveSettings.qslRngSeed).toBe('2085463073848966840'); // from the built-in mlperf.conf
    expect(result.effectiveSettings.samplesPerQuery).toBe(200); // max(--set min_query_count, 1.1 * 0 s * 100)
  });
});
