import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { earlyStopping, normsInv, planEarlyStopping, requiredQueries, runDuration, SettingsError } from '../lib/index.js';
import { loadNativeInternals } from '../lib/native/index.js';
import { goldenDir, requireGolden } from './helpers.js';

// seeds/004 "Appendix Number of Queries" (and seeds/000's copy of the table):
// percentile, confidence, margin, Inferences, Rounded Inferences (k * 2^13).
const SEED_TABLE: Array<[number, number, number, number, number, number]> = [
  [0.9, 0.99, 0.005, 23886, 3, 24576],
  [0.95, 0.99, 0.0025, 50425, 7, 57344],
  [0.97, 0.99, 0.0015, 85811, 11, 90112],
  [0.99, 0.99, 0.0005, 262742, 33, 270336],
];

interface EarlyStoppingGolden {
  server_min_passing: { rows: Array<[number, number, number, number]> };
  latency_rank_estimates: Array<{
    scenario: 'SingleStream' | 'MultiStream'; p: number; n: number; early_stopping_met: boolean; min_queries_needed: number;
    rank_index?: number; rank_index_p99_for_multistream_inference?: number | null; recommendation: string;
  }>;
}

function golden(): EarlyStoppingGolden {
  requireGolden();
  return JSON.parse(readFileSync(join(goldenDir, 'early_stopping.json'), 'utf8')) as EarlyStoppingGolden;
}

describe('requiredQueries (the seed\'s NumQueries formula)', () => {
  it.each(SEED_TABLE)('reproduces the table row p=%s c=%s margin=%s exactly', (p, c, margin, queries, multiple, rounded) => {
    // The seed's default margin is (1 - p) / 20: the same row without --margin.
    for (const s of [requiredQueries({ percentile: p, confidence: c }), requiredQueries({ percentile: p, confidence: c, margin })]) {
      expect(s.queries).toBe(queries);
      expect(s.roundedMultiple).toBe(multiple);
      expect(s.roundedQueries).toBe(rounded);
      expect(s.margin).toBeCloseTo(margin, 15);
    }
  });

  it('uses NormsInv: the seed\'s worked example (-2.58)^2 * 3600', () => {
    expect(normsInv(0.005)).toBeCloseTo(-2.5758293035489, 8);
    expect(normsInv(0.5)).toBeCloseTo(0, 12);
    expect(normsInv(0.975)).toBeCloseTo(1.959963984540054, 8);
    expect(requiredQueries({ percentile: 0.9 }).exactQueries).toBeCloseTo(normsInv(0.005) ** 2 * 3600, 6);
  });

  it('a wider margin or lower confidence needs fewer queries', () => {
    const base = requiredQueries({ percentile: 0.99 }).queries;
    expect(requiredQueries({ percentile: 0.99, margin: 0.001 }).queries).toBeLessThan(base);
    expect(requiredQueries({ percentile: 0.99, confidence: 0.95 }).queries).toBeLessThan(base);
  });

  it('rejects a percentile given in percent, a margin beyond 1 - p, a confidence of 1', () => {
    expect(() => requiredQueries({ percentile: 99 })).toThrow(/percentile 99.*0\.99 for 99%/);
    expect(() => requiredQueries({ percentile: 0.99, margin: 0.02 })).toThrow(SettingsError);
    expect(() => requiredQueries({ percentile: 0.9, confidence: 1 })).toThrow(/confidence/);
  });
});

describe('runDuration', () => {
  it('is queries / QPS, or queries x latency, and never under the 600 s minimum', () => {
    expect(runDuration({ queries: 270336, qps: 100 })).toEqual({ queriesSeconds: 2703.36, minimumSeconds: 600, runSeconds: 2703.36, runQueries: 270336 });
    const short = runDuration({ queries: 24576, latencyMs: 2 });
    expect(short.queriesSeconds).toBeCloseTo(49.152, 9);
    expect(short.runSeconds).toBe(600);
    expect(short.runQueries).toBe(300000);
  });

  it('needs exactly one of qps and latencyMs, positive', () => {
    expect(() => runDuration({ queries: 10 })).toThrow(/exactly one/);
    expect(() => runDuration({ queries: 10, qps: 1, latencyMs: 1 })).toThrow(/exactly one/);
    expect(() => runDuration({ queries: 10, qps: -1 })).toThrow(/qps -1/);
  });
});

describe('earlyStopping (the core\'s, through the addon)', () => {
  it('Server: every golden server_min_passing row passes at h + t queries and fails one query short', () => {
    const rows = golden().server_min_passing.rows;
    expect(rows.length).toBeGreaterThan(50);
    for (const [p, t, h, minTotal] of rows) {
      const at = earlyStopping({ percentile: p, queries: minTotal, overLatency: t });
      expect(at).toMatchObject({ scenario: 'Server', met: true, minPassing: h, minTotalQueries: minTotal, recommendation: ' * Run successful.' });
      if (minTotal - 1 >= t) {
        const short = earlyStopping({ percentile: p, queries: minTotal - 1, overLatency: t });
        expect(short.met).toBe(false);
        expect(short.recommendation).toBe(` * Run unsuccessful.\n * Processed ${minTotal - 1} queries.\n * Would need to run at least 1 more queries,\n with the run being successful if every additional\n query were under latency.`);
      }
    }
  });

  it('SingleStream / MultiStream: the golden latency_rank_estimates rows (met, ranks, recommendation text)', () => {
    for (const row of golden().latency_rank_estimates) {
      const r = earlyStopping({ scenario: row.scenario, percentile: row.p, queries: row.n });
      expect(r.met).toBe(row.early_stopping_met);
      expect(r.minQueriesNeeded).toBe(row.min_queries_needed);
      expect(r.recommendation).toBe(row.recommendation);
      if (row.early_stopping_met) expect(r.rankIndex).toBe(row.rank_index);
      if (row.scenario === 'SingleStream') expect(r.rankIndexP99 ?? null).toBe(row.rank_index_p99_for_multistream_inference ?? null);
    }
  });

  it('the issue\'s example: 10000 queries, 120 over the bound at p90 passes; at p99 it does not', () => {
    expect(earlyStopping({ percentile: 0.9, queries: 10000, overLatency: 120 }).met).toBe(true);
    const p99 = earlyStopping({ percentile: 0.99, queries: 10000, overLatency: 120 });
    expect(p99.met).toBe(false);
    expect(p99.recommendation).toContain(`Would need to run at least ${p99.minTotalQueries! - 10000} more queries`);
  });

  it('refuses counts that make no sense, naming them', () => {
    expect(() => earlyStopping({ percentile: 0.9, queries: 10, overLatency: 11 })).toThrow(/overLatency 11: more than the 10 queries/);
    expect(() => earlyStopping({ scenario: 'Server', percentile: 0.9, queries: 10 })).toThrow(/overLatency/);
    expect(() => earlyStopping({ scenario: 'SingleStream', percentile: 0.9, queries: 10, overLatency: 1 })).toThrow(/Server only/);
    expect(() => earlyStopping({ percentile: 0.9, queries: 1.5 })).toThrow(/queries 1\.5/);
  });

  it('the native binding checks what JS passes', () => {
    const rules = loadNativeInternals().rules;
    expect(() => rules.earlyStoppingServer(0.9, 10, 11)).toThrow(/must not exceed n/);
    expect(() => rules.earlyStoppingServer(1.5, 10, 1)).toThrow();
    expect(() => rules.earlyStoppingServer(0.9, -1, 0)).toThrow();
  });
});

describe('planEarlyStopping (queries a Server run needs at an expected tail rate)', () => {
  it('with no query over the bound it is the golden h for t = 0', () => {
    const rows = golden().server_min_passing.rows.filter((r) => r[1] === 0);
    expect(rows.length).toBeGreaterThan(0);
    for (const [p, , h] of rows) expect(planEarlyStopping({ percentile: p, tailRate: 0 }).queries).toBe(h);
  });

  it('is the smallest count that passes (every smaller count checked: passing is not monotone where t steps up)', () => {
    const minPassing = loadNativeInternals().conformance.earlyStoppingMinPassing;
    for (const [p, r] of [[0.99, 0.005], [0.9, 0.05], [0.9, 0.08], [0.95, 0.03], [0.99, 0.008], [0.999, 0.0005]] as const) {
      const plan = planEarlyStopping({ percentile: p, tailRate: r });
      const t = Math.ceil(r * plan.queries - 1e-12);
      expect(plan.overLatency).toBe(t);
      expect(earlyStopping({ percentile: p, queries: plan.queries, overLatency: t }).met).toBe(true);
      for (let n = 1; n < plan.queries; n += 1) {
        const tn = Math.ceil(r * n - 1e-12);
        expect(n >= minPassing(tn, p) + tn, `p=${p} r=${r} n=${n}`).toBe(false);
      }
    }
  });

  it('a tail at or above 1 - percentile never passes: refused', () => {
    expect(() => planEarlyStopping({ percentile: 0.99, tailRate: 0.01 })).toThrow(/tailRate 0\.01.*below 0\.01/);
  });
});

describe("docs/planning-and-checking.md's planning example", () => {
  it('runs and prints what its comments say', async () => {
    const { readFileSync: read, writeFileSync } = await import('node:fs');
    const { spawnSync } = await import('node:child_process');
    const { pathToFileURL } = await import('node:url');
    const { repoRoot, tempDir } = await import('./helpers.js');
    const readme = read(join(repoRoot, 'docs', 'planning-and-checking.md'), 'utf8');
    const block = /```ts\n(import \{ earlyStopping, planEarlyStopping[^`]*)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const file = join(tempDir(), 'example.mjs');
    writeFileSync(file, block!.replace("from 'loadgen'", `from '${pathToFileURL(join(repoRoot, 'dist', 'index.js')).href}'`));
    const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    const said = [...block!.matchAll(/console\.log\(.*\/\/ (\S+)/g)].map((m) => m[1]);
    expect(r.stdout.trim().split('\n')).toEqual(said);
  });
});
