import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkRunLog } from '../lib/index.js';
import { goldenDir, repoRoot, requireGolden, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

function loadgen(args: string[], cwd = repoRoot) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The golden Server run's detail log (a real reference log) with some values replaced (value texts as logged). */
function serverLog(values: Record<string, string> = {}): string {
  requireGolden();
  let text = readFileSync(join(goldenDir, 'logs', 'Server', 'performance', 'mlperf_log_detail.txt'), 'utf8');
  for (const [key, value] of Object.entries(values)) {
    const re = new RegExp(`("key": "${key.replace(/\./g, '\\.')}", "value": )(.*?)(, "time_ms")`);
    expect(re.test(text), `key ${key} in the golden log`).toBe(true);
    text = text.replace(re, (_m, a: string, _b: string, c: string) => `${a}${value}${c}`);
  }
  return text;
}

/** What makes the golden Server log a compliant resnet50 run. */
const COMPLIANT: Record<string, string> = {
  requested_min_duration_ms: '600000', effective_min_duration_ms: '600000', effective_target_duration_ms: '600000',
  qsl_reported_total_count: '50000', qsl_reported_performance_count: '1024', effective_performance_sample_count: '1024',
  requested_accuracy_log_sampling_target: '0', effective_accuracy_log_sampling_target: '0',
};

function writeRun(dir: string, values: Record<string, string> = {}): string {
  const run = join(dir, 'performance', 'run_1');
  mkdirSync(run, { recursive: true });
  writeFileSync(join(run, 'mlperf_log_detail.txt'), serverLog({ ...COMPLIANT, ...values }));
  return dir;
}

/** A results/<sut>/<model>/<scenario> folder, so the model comes from the path. */
function resultsDir(): string {
  return join(tempDir('loadgen-rules-'), 'results', 'my-sut', 'resnet50', 'Server');
}

const TEST01 = { requested_accuracy_log_rng_seed: '720381539243781796', effective_accuracy_log_rng_seed: '720381539243781796', requested_accuracy_log_sampling_target: '64', effective_accuracy_log_sampling_target: '64' };
const TEST04 = { effective_performance_issue_same: 'true', effective_performance_issue_same_index: '3', requested_performance_issue_same: 'true', requested_performance_issue_same_index: '3' };

describe('loadgen check LOGDIR (a finished run)', () => {
  it('a compliant run: exit 0, the model taken from the path, its seeds read exactly', () => {
    const dir = writeRun(resultsDir());
    const r = loadgen(['check', dir]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^model resnet50: a folder name on the path\nresnet50 Server, closed division, run log .*mlperf_log_detail\.txt: COMPLIANT/);
    expect(r.stdout).toContain('official-seeds');
  });

  it('the golden reference run as it is: every rule it breaks, exit 1', () => {
    requireGolden();
    const r = loadgen(['check', join(goldenDir, 'logs', 'Server', 'performance'), '--model', 'resnet50']);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('NOT COMPLIANT (4 problems)');
    expect(r.stdout).toContain('min-duration: min_duration_ms is 500; the closed division requires at least 600000 ms.');
    expect(r.stdout).toContain('performance-sample-count: performance_sample_count is 256; the closed division requires at least 1024 samples');
    expect(r.stdout).toContain('data-set-size: total_sample_count is 1000;');
    expect(r.stdout).toContain('accuracy-log-off: accuracy_log_sampling_target is 16;');
  });

  it.each([
    ['result-valid', { result_validity: '"INVALID"' }, /result_validity is INVALID; .*requires VALID/],
    ['early-stopping', { early_stopping_met: 'false' }, /early_stopping_met is false; .*requires true/],
    ['no-errors', { num_errors: '2' }, /num_errors is 2; .*0 errors/],
    ['official-seeds', { effective_schedule_rng_seed: '16159082839903944937' }, /schedule_rng_seed is 16159082839903944937; .*16159082839903944936/],
  ] as const)('%s: fails on the changed log, passes on the compliant one', (rule, values, message) => {
    const report = checkRunLog(writeRun(resultsDir(), values));
    expect(report.compliant).toBe(false);
    expect(report.reports[0]!.violations.map((v) => v.rule)).toEqual([rule]);
    expect(report.reports[0]!.violations[0]!.message).toMatch(message);
    const good = checkRunLog(writeRun(resultsDir()));
    expect(good.compliant).toBe(true);
    expect(good.reports[0]!.rules.find((x) => x.id === rule)!.status).toBe('pass');
  });

  it('TEST01 and TEST04 beside the run: settings and performance, as the compliance scripts judge them', () => {
    const base = 3141.39;
    const cases: Array<[string, Record<string, string>, string[]]> = [
      ['TEST01', { ...TEST01, result_completed_samples_per_sec: String(base * 1.05) }, []],
      ['TEST01', { ...TEST01, result_completed_samples_per_sec: String(base * 1.3) }, ['test01-performance']],
      // The golden log already has TEST01's seed; COMPLIANT turned its sampling off.
      ['TEST01', { result_completed_samples_per_sec: String(base) }, ['test01-settings']],
      ['TEST01', { effective_accuracy_log_rng_seed: '1', effective_accuracy_log_sampling_target: '64' }, ['test01-settings']],
      ['TEST04', { ...TEST04, result_completed_samples_per_sec: String(base * 1.05) }, []],
      ['TEST04', { ...TEST04, result_completed_samples_per_sec: String(base * 1.2) }, ['test04-performance']],
      ['TEST04', { result_completed_samples_per_sec: String(base) }, ['test04-settings', 'test04-settings']],
    ];
    for (const [test, values, rules] of cases) {
      const dir = writeRun(resultsDir());
      writeRun(join(dir, test), values);
      const result = checkRunLog(dir);
      expect(result.reports.map((r) => r.kind)).toEqual(['run', test]);
      expect(result.reports[1]!.violations.map((v) => v.rule), `${test} ${JSON.stringify(values)}`).toEqual(rules);
      expect(result.compliant).toBe(rules.length === 0);
    }
    const messages = (values: Record<string, string>, test: string) => {
      const dir = writeRun(resultsDir());
      writeRun(join(dir, test), values);
      return checkRunLog(dir).reports[1]!.violations.map((v) => v.message).join('\n');
    };
    expect(messages({ ...TEST01, result_completed_samples_per_sec: String(base * 1.3) }, 'TEST01')).toMatch(/within 10 % of the run's 3141\.39/);
    expect(messages({ ...TEST04, result_completed_samples_per_sec: String(base * 1.2) }, 'TEST04')).toMatch(/below 1\.1 x the run's.*caching/);
    expect(messages({}, 'TEST01')).toMatch(/test01-settings: accuracy_log_sampling_target is 0; .*a positive sample target/);
    expect(messages({ effective_accuracy_log_rng_seed: '1', effective_accuracy_log_sampling_target: '64' }, 'TEST01')).toMatch(/accuracy_log_rng_seed is 1; .*720381539243781796/);
  });

  it('warns, without failing, about each file the submission checker\'s file-list check rejects', () => {
    const dir = writeRun(resultsDir());
    const run = join(dir, 'performance', 'run_1');
    for (const name of ['mlperf_log_summary.txt', 'mlperf_log_accuracy.json', 'mlperf_log_trace.json', 'report.html', 'loadgen_report_data.json']) {
      writeFileSync(join(run, name), '');
    }
    const accuracy = join(dir, 'accuracy');
    mkdirSync(accuracy);
    writeFileSync(join(accuracy, 'mlperf_log_detail.txt'), serverLog(COMPLIANT));
    for (const name of ['mlperf_log_summary.txt', 'mlperf_log_accuracy.json', 'accuracy.txt', 'report.html', 'notes.txt']) {
      writeFileSync(join(accuracy, name), '');
    }
    const r = loadgen(['check', dir]);
    expect(r.status).toBe(0);
    const warnings = r.stderr.trim().split('\n');
    expect(warnings.map((w) => w.replace(/: the MLCommons.*/, ''))).toEqual([
      `loadgen: warning: ${join(run, 'loadgen_report_data.json')}`,
      `loadgen: warning: ${join(run, 'report.html')}`,
      `loadgen: warning: ${join(accuracy, 'notes.txt')}`,
      `loadgen: warning: ${join(accuracy, 'report.html')}`,
    ]);
    expect(warnings[1]).toBe(`loadgen: warning: ${join(run, 'report.html')}: the MLCommons submission checker rejects this file in a performance folder ` +
      '("has file list mismatch"; it accepts mlperf_log_summary.txt, mlperf_log_detail.txt, mlperf_log_accuracy.json, spl.txt); ' +
      'remove it before submitting (loadgen run --no-report writes neither report.html nor loadgen_report_data.json).');
    expect(warnings[2]).toMatch(/in an? accuracy folder .*it accepts mlperf_log_summary\.txt, mlperf_log_detail\.txt, mlperf_log_accuracy\.json, accuracy\.txt\); remove it before submitting\.$/);
    const json = JSON.parse(loadgen(['check', dir, '--json']).stdout) as { compliant: boolean; warnings: string[] };
    expect(json.compliant).toBe(true);
    expect(json.warnings).toHaveLength(4);
    // A folder as --no-report leaves it: nothing to warn about.
    for (const name of ['report.html', 'loadgen_report_data.json']) rmSync(join(run, name));
    for (const name of ['report.html', 'notes.txt']) rmSync(join(accuracy, name));
    expect(loadgen(['check', dir])).toMatchObject({ status: 0, stderr: '' });
  });

  it('a TEST04 folder without logs is reported; --json gives every report', () => {
    const dir = writeRun(resultsDir());
    mkdirSync(join(dir, 'TEST04'));
    const r = loadgen(['check', dir, '--json']);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout) as { model: string; compliant: boolean; reports: Array<{ kind: string; violations: Array<{ rule: string }> }> };
    expect(out.model).toBe('resnet50');
    expect(out.reports.map((x) => [x.kind, x.violations.map((v) => v.rule)])).toEqual([['run', []], ['TEST04', ['compliance-files']]]);
  });

  it('bad input exits 2 with the reason, before anything is read', () => {
    const dir = tempDir('loadgen-rules-');
    expect(loadgen(['check', join(dir, 'nope')])).toMatchObject({ status: 2, stderr: expect.stringMatching(/no such folder/) });
    expect(loadgen(['check', dir])).toMatchObject({ status: 2, stderr: expect.stringMatching(/no mlperf_log_detail\.txt/) });
    const run = writeRun(join(dir, 'run'));
    // No model folder on the path: the settings are resnet50's in mlperf.conf (issue 25), and a log whose seeds are not mlperf.conf's names no benchmark.
    expect(loadgen(['check', run])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^model resnet50: the detail log's settings are mlperf\.conf's for it\n/) });
    const unofficial = writeRun(join(dir, 'seeds-0'), { requested_qsl_rng_seed: '0', effective_qsl_rng_seed: '0' });
    expect(loadgen(['check', unofficial])).toMatchObject({ status: 2, stderr: expect.stringMatching(/this run read no mlperf\.conf .* give the benchmark to hold it to with --model \(one of resnet50/) });
    expect(loadgen(['check', run, '--model', 'resnet50', '--scenario', 'Server'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--scenario describes a planned run/) });
    expect(loadgen(['check', run, '--model', 'resnet', '--division', 'closed'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/did you mean 'resnet50'/) });
  });
});

describe('loadgen check --model --scenario (before a run)', () => {
  it('lists each problem with its source and exits 1; exits 0 when compliant; --json', () => {
    const dir = tempDir('loadgen-rules-');
    const userConf = join(dir, 'user.conf');
    writeFileSync(userConf, 'resnet50.Server.target_qps = 100\nresnet50.Server.min_duration = 10000\nresnet50.Server.target_latency = 30\n');
    const bad = loadgen(['check', '--model', 'resnet50', '--scenario', 'Server', '--user-conf', userConf]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('NOT COMPLIANT (2 problems)');
    expect(bad.stdout).toMatch(/min-duration: min_duration_ms is 10000 \(from .*user\.conf:2 resnet50\.Server\.min_duration = 10000\); the closed division requires at least 600000 ms\./);
    expect(bad.stdout).toMatch(/latency-bound: server_target_latency_ns is 30000000 \(from .*user\.conf:3 .*\); the closed division requires at most 15000000 ns/);
    writeFileSync(userConf, 'resnet50.Server.target_qps = 100\n');
    const good = loadgen(['check', '--model', 'resnet50', '--scenario', 'Server', '--user-conf', userConf, '--total-sample-count', '50000', '--json']);
    expect(good.status).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ model: 'resnet50', scenario: 'Server', division: 'closed', compliant: true, violations: [] });
  });

  it('bad input exits 2 naming the option', () => {
    expect(loadgen(['check', '--scenario', 'Server'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/needs --model/) });
    expect(loadgen(['check', '--model', 'resnet50'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/needs --scenario/) });
    expect(loadgen(['check', '--model', 'resnet50', '--scenario', 'server'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/Did you mean 'Server'/) });
    expect(loadgen(['check', '--model', 'resnet50', '--scenario', 'Server', '--division', 'closd'])).toMatchObject({ status: 2 });
    expect(loadgen(['check', '--model', 'resnet50', '--scenario', 'Server', '--user-conf', '/nonexistent/user.conf'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/user\.conf/) });
  });
});

describe('loadgen run --check', () => {
  const args = ['run', '--sut', 'null', '--model', 'resnet50', '--scenario', 'Server',
    '--set', 'server_target_qps=1000', '--set', 'min_duration_ms=300', '--set', 'min_query_count=100', '--no-progress'];

  it('refuses a non-compliant run: exit 1, the problems on stderr, nothing run or written', () => {
    const outdir = join(tempDir('loadgen-rules-'), 'out');
    const r = loadgen([...args, '--check', '--outdir', outdir]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('loadgen: check: resnet50 Server, closed division, planned run: NOT COMPLIANT (1 problem)\n' +
      'loadgen: check:   x min-duration: min_duration_ms is 300 (from --set); the closed division requires at least 600000 ms.\n');
    expect(r.stderr).toContain('nothing was run');
    expect(existsSync(outdir) ? readdirSync(outdir) : []).toEqual([]);
  });

  it('--force prints the problems and runs; the run\'s own log then fails the same rule', () => {
    const outdir = join(tempDir('loadgen-rules-'), 'resnet50', 'Server');
    const r = loadgen([...args, '--check', '--force', '--outdir', outdir]);
    // VALID or not is this shared machine's business (15 ms bound, 300 queries): the run happened.
    expect([0, 1]).toContain(r.status);
    expect(r.stderr).toContain('--force: running anyway');
    expect(r.stdout).toMatch(/Result is : (VALID|INVALID)/);
    const logCheck = loadgen(['check', outdir]);
    expect(logCheck.status).toBe(1);
    expect(logCheck.stdout).toContain('min-duration: min_duration_ms is 300; the closed division requires at least 600000 ms.');
  });

  it('--force or --division without --check, or --check without --model, exit 2 before anything starts', () => {
    expect(loadgen(['run', '--sut', 'null', '--force'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--force applies with --check only/) });
    expect(loadgen(['run', '--sut', 'null', '--division', 'open'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--division applies with --check only/) });
    expect(loadgen(['run', '--sut', 'null', '--check', '--set', 'min_duration_ms=100'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--check needs --model/) });
  });
});

describe('loadgen stats', () => {
  it('prints the seed\'s row and the run length; --json carries the numbers', () => {
    const r = loadgen(['stats', '--percentile', '0.99', '--confidence', '0.99', '--qps', '1000']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('queries         : 262742');
    expect(r.stdout).toContain('rounded (2^13)  : 270336 (33*2^13)');
    expect(r.stdout).toContain('a compliant run lasts 10.0 min (600000 queries)');
    const j = JSON.parse(loadgen(['stats', '--percentile', '0.9', '--json']).stdout) as { sampleSize: { queries: number; roundedQueries: number } };
    expect(j.sampleSize).toMatchObject({ queries: 23886, roundedQueries: 24576 });
  });

  it('--early-stopping: the reference\'s verdict and text; --tail-rate: the planner', () => {
    const r = loadgen(['stats', '--early-stopping', '--percentile', '0.99', '--queries', '1000', '--overlatency', '12']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('NOT met');
    expect(r.stdout).toContain(' * Run unsuccessful.\n * Processed 1000 queries.\n * Would need to run at least 1277 more queries,');
    const plan = JSON.parse(loadgen(['stats', '--early-stopping', '--percentile', '0.99', '--tail-rate', '0.005', '--json']).stdout) as { plan: { queries: number } };
    expect(plan.plan.queries).toBe(2144);
  });

  it('bad input exits 2 naming the option', () => {
    expect(loadgen(['stats'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--percentile is required/) });
    expect(loadgen(['stats', '--percentile', '99'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/0\.99 for 99%/) });
    expect(loadgen(['stats', '--percentile', 'x'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--percentile must be a number/) });
    expect(loadgen(['stats', '--percentile', '0.9', '--queries', '10'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--queries applies with --early-stopping only/) });
    expect(loadgen(['stats', '--early-stopping', '--percentile', '0.9'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/needs --queries N .* or --tail-rate/) });
    expect(loadgen(['stats', '--early-stopping', '--percentile', '0.9', '--queries', '10', '--overlatency', '11'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/overLatency 11/) });
  });
});
