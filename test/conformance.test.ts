import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { firstDifference, sequenceSha256 } from '../lib/conformance/compare.js';
import { runConformance } from '../lib/conformance/conformance.js';
import { goldenDir, repoRoot, requireGolden, tempDir } from './helpers.js';

// Vector files are free-form JSON; the tests poke into them by path.
type Json = Record<string, any>;

const runnerCli = join(repoRoot, 'dist', 'conformance', 'cli.js');

function readGolden(file: string): Json {
  return JSON.parse(readFileSync(join(goldenDir, file), 'utf8')) as Json;
}

function writeJson(dir: string, file: string, value: unknown): void {
  mkdirSync(join(dir, file, '..'), { recursive: true });
  writeFileSync(join(dir, file), JSON.stringify(value));
}

async function runIn(dir: string): Promise<{ lines: string[]; passed: number; failed: number }> {
  const lines: string[] = [];
  const totals = await runConformance(dir, { write: (line) => lines.push(line) });
  return { lines, ...totals };
}

function failures(lines: string[]): string {
  return lines.filter((l) => l.startsWith('FAIL')).join('\n');
}

describe('firstDifference', () => {
  it('compares integers by value across number, bigint and decimal string', () => {
    expect(firstDifference('18446744073709551615', 18446744073709551615n)).toBeUndefined();
    expect(firstDifference(7, 7n)).toBeUndefined();
    expect(firstDifference('7', 7)).toBeUndefined();
    expect(firstDifference({ seed: '1' }, { seed: 2n })).toBe('seed: expected "1", got 2n');
  });

  it('compares doubles exactly unless a relative tolerance is given', () => {
    expect(firstDifference(0.1, Number('0.10000000000000000001'))).toBeUndefined(); // the same double
    expect(firstDifference(0.3, 0.1 + 0.2)).toMatch(/expected 0.3/);
    expect(firstDifference(0.3, 0.1 + 0.2, '', { relTol: 1e-9 })).toBeUndefined();
  });

  it('checks truncated sequences by length, head, tail and SHA-256', () => {
    const full = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 1000);
    const sha = createHash('sha256').update(full.join(',')).digest('hex');
    expect(sequenceSha256(Uint32Array.from(full))).toBe(sha);
    const truncated = { truncated: true, length: 5000, head: full.slice(0, 1024), tail: full.slice(-32), sha256: sha };
    expect(firstDifference(truncated, Uint32Array.from(full), 'xs')).toBeUndefined();
    const changed = [...full];
    changed[2000] = 1;
    expect(firstDifference(truncated, changed, 'xs')).toMatch(/^xs\.sha256: expected/);
    expect(firstDifference(truncated, full.slice(1), 'xs')).toBe('xs.length: expected 5000, got 4999');
    // Middle rounds have a small head and tail: handled the same way.
    const small = { truncated: true, length: 5000, head: full.slice(0, 16), tail: full.slice(-4), sha256: sha };
    expect(firstDifference(small, full)).toBeUndefined();
  });

  it('names the path of the first difference and ignores keys the vector does not hold', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }], extra: 1 })).toBe('a[1].b: expected 2, got 3');
    expect(firstDifference({ a: 1 }, {})).toBe('a: missing (expected 1)');
  });
});

describe('conformance runner on ../shared/golden', () => {
  it('passes every case of the golden vectors', () => {
    requireGolden();
    const r = spawnSync(process.execPath, [runnerCli, goldenDir], { cwd: repoRoot, encoding: 'utf8', timeout: 600_000, maxBuffer: 1 << 26 });
    const lines = r.stdout.trimEnd().split('\n');
    const last = lines[lines.length - 1] ?? '';
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^(PASS \S+#\S+|FAIL \S+#\S+: .+)$/);
    expect(last).toMatch(/^\d+ passed, \d+ failed$/);
    expect(failures(lines), r.stderr).toBe('');
    expect(last).toMatch(/ 0 failed$/);
    expect(r.status).toBe(0);
    // Every kind of vector file was found and checked.
    for (const file of ['rng_primitives.json', 'perf_sample_sets.json', 'query_traces/server_qps1.json', 'real_runs.json',
      'accuracy_log_sampling.json', 'early_stopping.json', 'results_math.json', 'settings_derivation.json']) {
      expect(lines.some((l) => l.startsWith(`PASS ${file}#`)), file).toBe(true);
    }
    expect(lines).toContain('PASS early_stopping.json#server_min_passing[p=0.99,t=5]');
    expect(lines).toContain('PASS rng_primitives.json#mt19937_raw[3]');
  }, 600_000);
});

describe('conformance runner on other vector sets', () => {
  // Each set below is made from the golden vectors.
  beforeAll(requireGolden);

  /** A copy of a subset of the golden folder with cases removed, reordered and renamed. */
  function subsetCopy(): string {
    const dir = tempDir('loadgen-vectors-');
    for (const [name, newName] of [['server_qps10_5.json', 'a.json'], ['ss_perf_issue_same.json', 'b.json'], ['offline_qps123456.json', 'c.json']]) {
      const t = JSON.parse(readFileSync(join(goldenDir, 'query_traces', name!), 'utf8')) as Json;
      t.id = `renamed_${t.id}`;
      writeJson(dir, `query_traces/${newName}`, t);
    }
    const sets = readGolden('perf_sample_sets.json');
    sets.cases = sets.cases.filter((_: unknown, i: number) => i % 5 === 2).reverse();
    sets.cases.forEach((c: Json, i: number) => (c.id = `set_${i}`));
    writeJson(dir, 'perf_sample_sets.json', sets);
    const rng = readGolden('rng_primitives.json');
    rng.shuffle = rng.shuffle.slice(20, 24);
    rng.mt19937_raw = rng.mt19937_raw.slice(1, 3);
    delete rng.uniform_int;
    writeJson(dir, 'rng_primitives.json', rng);
    const es = readGolden('early_stopping.json');
    es.server_min_passing.rows = es.server_min_passing.rows.slice(-7);
    es.latency_rank_estimates = es.latency_rank_estimates.slice(100, 110);
    es.odds.rows = es.odds.rows.slice(0, 3);
    delete es.lbeta;
    writeJson(dir, 'early_stopping.json', es);
    const real = readGolden('real_runs.json');
    real.cases = real.cases.filter((c: Json) => c.id === 'real_ss_max_query_count' || c.id === 'real_ss_max_duration');
    real.cases.forEach((c: Json) => (c.id = `run_${c.id.length}`));
    writeJson(dir, 'real_runs.json', real);
    const results = readGolden('results_math.json');
    results.cases = results.cases.slice(5, 7).map((c: Json) => ({ ...c, id: `r_${c.id}` }));
    writeJson(dir, 'results_math.json', results);
    return dir;
  }

  it('passes a renamed subset, reporting the new ids and file names', async () => {
    const dir = subsetCopy();
    const { lines, passed, failed } = await runIn(dir);
    expect(failures(lines)).toBe('');
    expect(failed).toBe(0);
    expect(passed).toBe(3 + 5 + (2 + 1 + 4 + 10 + 11 + 4) + (7 + 10 + 3) + 2 + 2);
    expect(lines).toContain('PASS query_traces/a.json#renamed_server_qps10_5');
    expect(lines).toContain('PASS perf_sample_sets.json#set_0');
    expect(lines).toContain('PASS rng_primitives.json#shuffle[3]');
    expect(lines.at(-1)).toBe(`${passed} passed, 0 failed`);
  }, 120_000);

  it('fails doctored vectors with the first difference, and keeps going', async () => {
    const dir = tempDir('loadgen-doctored-');
    const trace = JSON.parse(readFileSync(join(goldenDir, 'query_traces', 'server_qps1.json'), 'utf8')) as Json;
    trace.phases[0].load_calls[0].queries.scheduled_ns[3] += 1;
    writeJson(dir, 'query_traces/server_qps1.json', trace);
    const big = JSON.parse(readFileSync(join(goldenDir, 'query_traces', 'server_qps123456.json'), 'utf8')) as Json;
    big.phases[0].load_calls[0].queries.sample_indices.sha256 = '0'.repeat(64);
    writeJson(dir, 'query_traces/big.json', big);
    const es = readGolden('early_stopping.json');
    es.server_min_passing.rows = es.server_min_passing.rows.slice(0, 2);
    es.server_min_passing.rows[1][2] += 1;
    es.latency_rank_estimates = [];
    delete es.odds;
    delete es.lbeta;
    writeJson(dir, 'early_stopping.json', es);
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    writeJson(dir, 'other.json', { file_kind: 'something_new' });

    const r = spawnSync(process.execPath, [runnerCli, dir], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    const t0 = trace.phases[0].load_calls[0].queries.scheduled_ns[3] as number;
    expect(lines).toContain(
      `FAIL query_traces/server_qps1.json#server_qps1: phases[0].load_calls[0].queries.scheduled_ns[3]: expected ${t0}, got ${t0 - 1}`,
    );
    expect(lines.find((l) => l.startsWith('FAIL query_traces/big.json#'))).toMatch(/sample_indices\.sha256: expected 0{64}, got [0-9a-f]{64}$/);
    expect(lines).toContain('PASS early_stopping.json#server_min_passing[p=0.5,t=0]');
    expect(lines.find((l) => l.startsWith('FAIL early_stopping.json#server_min_passing[p=0.5,t=1]'))).toMatch(/h: expected 11, got 10$/);
    expect(lines.find((l) => l.startsWith('FAIL broken.json#file'))).toMatch(/cannot read/);
    expect(lines).toContain('FAIL other.json#file: unknown file_kind "something_new"');
    expect(lines.at(-1)).toBe('1 passed, 5 failed');
  }, 120_000);

  it('fails a real run whose vector disagrees, without stopping the others', async () => {
    const dir = tempDir('loadgen-doctored-runs-');
    const real = readGolden('real_runs.json');
    real.cases = real.cases.filter((c: Json) => ['real_ss_min_duration_0', 'real_offline'].includes(c.id));
    real.cases[0].real.issued_sample_indices[42] += 1;
    writeJson(dir, 'real_runs.json', real);
    const { lines, passed, failed } = await runIn(dir);
    expect([passed, failed]).toEqual([1, 1]);
    expect(lines[0]).toMatch(/^FAIL real_runs\.json#real_ss_min_duration_0: issued_sample_indices\[42\]: expected \d+, got \d+$/);
    expect(lines[1]).toBe('PASS real_runs.json#real_offline');
  }, 120_000);

  it('reports settings startTest rejects as a failed case with the reason', async () => {
    const dir = tempDir('loadgen-unsafe-');
    const real = readGolden('real_runs.json');
    real.cases = real.cases.slice(0, 1);
    real.cases[0].id = 'unsafe';
    real.cases[0].settings.performance_issue_unique = true;
    real.cases[0].settings.performance_issue_same = true;
    delete real.cases[0].pregenerated;
    writeJson(dir, 'real_runs.json', real);
    const { lines, failed } = await runIn(dir);
    expect(failed).toBe(1);
    expect(lines[0]).toMatch(/^FAIL real_runs\.json#unsafe: error: .*performanceIssueUnique and performanceIssueSame/);
  }, 60_000);

  it('exits 2 on a missing directory and 1 on a directory without vectors', () => {
    const missing = spawnSync(process.execPath, [runnerCli, join(tempDir(), 'nope')], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    const empty = spawnSync(process.execPath, [runnerCli, tempDir()], { encoding: 'utf8' });
    expect(empty.status).toBe(1);
    expect(empty.stdout).toBe('0 passed, 0 failed\n');
  });
});
