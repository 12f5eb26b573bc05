/**
 * What a new user hits first with the CLI (issue 10, item 6): each case
 * failed before its fix.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { readText, repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

function loadgen(args: string[], cwd = repoRoot) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('loadgen run --sut null, first use', () => {
  for (const sut of ['null', 'null-native']) {
    for (const scenario of ['SingleStream', 'MultiStream', 'Server', 'Offline']) {
      it(`${sut} ${scenario} with no settings is VALID and says which defaults it used`, () => {
        const outdir = tempDir();
        const r = loadgen(['run', '--sut', sut, '--scenario', scenario, '--no-report', '--no-progress', '--outdir', outdir]);
        expect(r.stderr).toMatch(new RegExp(`^loadgen: ${sut} SUT defaults: min_duration_ms=`));
        expect(r.status).toBe(0);
        expect(readText(join(outdir, 'mlperf_log_summary.txt'))).toContain('Result is : VALID');
      });
    }
  }

  it('a setting given on the command line wins over the defaults', () => {
    const r = loadgen(['run', '--sut', 'null', '--scenario', 'Server', '--set', 'server_target_qps=2000',
      '--no-report', '--no-progress', '--json', '--outdir', tempDir()]);
    const result = JSON.parse(r.stdout) as { effectiveSettings: { targetQps: number; minDurationMs: number } };
    expect(result.effectiveSettings.targetQps).toBe(2000);
    expect(result.effectiveSettings.minDurationMs).toBe(1000);
  });

  it('an INVALID run of a SUT faster than its settings prints the one --set to change', () => {
    const r = loadgen(['run', '--sut', 'null', '--set', 'min_duration_ms=1000', '--set', 'min_query_count=100',
      '--no-report', '--no-progress', '--outdir', tempDir()]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/loadgen: hint: the SUT answered in \d+ ns \(median\), faster than single_stream_expected_latency_ns assumes, and ran out of pre-generated queries: try --set (min_query_count|single_stream_expected_latency_ns)=\d+\n/);
  });

  // Issue 25: every INVALID run says which --set to try, sized from the run.
  it('a Server run over its latency bound prints a lower server_target_qps to try', () => {
    const r = loadgen(['run', '--sut', 'null', '--scenario', 'Server', '--set', 'server_target_qps=2000', '--set', 'server_target_latency_ns=1000',
      '--set', 'min_duration_ms=300', '--no-report', '--no-progress', '--outdir', tempDir()]);
    expect(r.status).toBe(1);
    const hint = /loadgen: hint: the latency bound was missed \(p99 latency [\d.]+ ms against the bound 0\.001 ms\) at 2000 QPS: try --set server_target_qps=([\d.]+)\n/.exec(r.stderr);
    expect(hint, r.stderr).not.toBeNull();
    expect(Number(hint![1])).toBeGreaterThanOrEqual(200);
    expect(Number(hint![1])).toBeLessThan(2000);
  });

  it('a Server run with too few queries for early stopping prints the min_query_count it needs', () => {
    const r = loadgen(['run', '--sut', 'null', '--scenario', 'Server', '--set', 'server_target_qps=100', '--set', 'min_duration_ms=100',
      '--set', 'min_query_count=1', '--no-report', '--no-progress', '--outdir', tempDir()]);
    expect(r.status).toBe(1);
    // No query over the bound: the plan at share 0 is the reference's 459 queries for p99, plus 10 %.
    expect(r.stderr).toMatch(/loadgen: hint: early stopping failed with 0 of \d+ queries over the latency bound; at that share it passes with 459 queries: try --set min_query_count=505\n/);
  });

  it('a SingleStream run with too few queries for early stopping prints the min_query_count it needs', () => {
    const r = loadgen(['run', '--sut', 'test/fixtures/delayed-sut.mjs', '--scenario', 'SingleStream', '--set', 'min_duration_ms=50',
      '--set', 'min_query_count=5', '--set', 'single_stream_expected_latency_ns=1000000', '--no-report', '--no-progress', '--outdir', tempDir()]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/loadgen: hint: early stopping needs at least \d+ queries \(\d+ were issued\): try --set min_query_count=\d+\n/);
  });
});

describe('loadgen CLI input errors', () => {
  it('--scenario and --mode get a did-you-mean and exit 2', () => {
    const s = loadgen(['run', '--sut', 'null', '--scenario', 'server']);
    expect(s.status).toBe(2);
    expect(s.stderr).toContain("Did you mean 'Server'?");
    const m = loadgen(['run', '--sut', 'null', '--mode', 'PerformanceOnyl']);
    expect(m.status).toBe(2);
    expect(m.stderr).toContain("Did you mean 'PerformanceOnly'?");
  });

  it('an unknown --set key points at `loadgen settings`', () => {
    const r = loadgen(['run', '--sut', 'null', '--set', 'foo_bar=1']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('`loadgen settings` lists them all');
    expect(r.stderr).not.toContain('SETTINGS_FIELDS');
  });

  it('--sut naming nothing lists what --sut takes', () => {
    const r = loadgen(['run', '--sut', 'nul']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--sut nul: no such file (did you mean 'null'?). --sut takes 'null', 'null-native' or the path of a module");
  });

  it('an outdir below a file is bad input: exit 2', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'afile'), '');
    const r = loadgen(['run', '--sut', 'null', '--outdir', join(dir, 'afile', 'sub'), '--quiet']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('cannot create the log directory');
  });
});
