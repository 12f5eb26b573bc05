import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { readText, repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

function loadgen(args: string[], cwd = repoRoot) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('loadgen run', () => {
  it('runs the README example: Server with the null SUT, VALID, summary printed and written', () => {
    const outdir = join(tempDir(), 'out', 'server');
    const r = loadgen([
      'run', '--sut', 'null', '--scenario', 'Server',
      '--set', 'server_target_qps=1000', '--set', 'min_duration_ms=2000', '--set', 'min_query_count=100',
      '--outdir', outdir,
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Result is : VALID');
    const summary = readText(join(outdir, 'mlperf_log_summary.txt'));
    expect(summary).toContain('Scenario : Server\n');
    expect(summary).toContain('target_qps : 1000\n');
    expect(r.stdout).toContain(summary);
  });

  it('runs null-native Offline and prints JSON with --json', () => {
    const outdir = tempDir();
    const r = loadgen(['run', '--sut', 'null-native', '--scenario', 'Offline', '--set', 'min_query_count=5000',
      '--set', 'min_duration_ms=0', '--json', '--outdir', outdir]);
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout) as { validity: string; counts: { issuedSamples: number }; effectiveSettings: { qslRngSeed: string } };
    expect(result.validity).toBe('VALID');
    expect(result.counts.issuedSamples).toBe(5000);
    expect(result.effectiveSettings.qslRngSeed).toBe('0');
  });

  it('loads a module SUT exporting createSut() and createQsl()', () => {
    const outdir = tempDir();
    const r = loadgen(['run', '--sut', 'test/fixtures/delayed-sut.mjs', '--scenario', 'SingleStream',
      '--set', 'single_stream_expected_latency_ns=2000000', '--set', 'min_duration_ms=300', '--set', 'min_query_count=50',
      '--outdir', outdir, '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('');
    expect([0, 1]).toContain(r.status);
    const summary = readText(join(outdir, 'mlperf_log_summary.txt'));
    expect(summary).toContain('SUT name : fixture-delayed\n');
  });

  it('exits 1 when the run is INVALID', () => {
    const r = loadgen(['run', '--sut', 'null', '--scenario', 'Server', '--set', 'server_target_qps=100',
      '--set', 'min_duration_ms=100', '--set', 'min_query_count=10', '--outdir', tempDir(), '--quiet']);
    expect(r.status).toBe(1);
  });

  it.each([
    [['--set', 'server_target_qpss=10'], /server_target_qpss.*did you mean 'server_target_qps'/s],
    [['--set', 'min_duration_ms=abc'], /min_duration_ms.*abc/],
    [['--set', 'server_target_qps'], /key=value|server_target_qps/],
    [['--scenario', 'server'], /server/],
    [['--set', 'min_query_count=0', '--set', 'min_duration_ms=0'], /min_query_count|minQueryCount/],
  ])('rejects bad input %j with exit 2 and a message naming it', (extra, pattern) => {
    const outdir = tempDir();
    const r = loadgen(['run', '--sut', 'null', ...extra, '--outdir', outdir]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(pattern);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(false);
  });

  it('explains demo-only options given with --sut and a module without the exports', () => {
    // `run` without --sut is the demo (test/demo.test.ts).
    const demoOnly = loadgen(['run', '--sut', 'null', '--ep', 'cpu', '--outdir', tempDir()]);
    expect(demoOnly.status).toBe(2);
    expect(demoOnly.stderr).toMatch(/--ep applies to the built-in demo only/);
    const bad = loadgen(['run', '--sut', 'test/fixtures/worker-run.mjs', '--outdir', tempDir()]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/createSut|cannot import/);
  });

  it('reports a SUT failure with exit 3 and keeps the logs', () => {
    const outdir = tempDir();
    const r = loadgen(['run', '--sut', 'test/fixtures/throwing-sut.mjs', '--scenario', 'Server', '--set', 'server_target_qps=200', '--outdir', outdir]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/issueQuery.*fixture failure/);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(true);
  });
});
