/**
 * Property tests of the results math (spec/40 §2, §5) on random latency sets:
 * the native summary (the conformance surface `summarize`, the same code a
 * run uses) against a plain reference written here from the spec's rules:
 * sort, then index `trunc(count * p)`; integer mean; early stopping from the
 * binomial odds with a plain lower-bound search.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { loadNativeInternals, type NativeResultsInput } from '../lib/native/index.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import type { TestSettingsInput } from '../lib/types/settings.js';
import { propertyParams } from './property-params.js';

const native = loadNativeInternals().conformance;

// ---------------------------------------------------------------------------
// The reference, from spec/40
// ---------------------------------------------------------------------------

const REPORTED_PERCENTILES = [0.5, 0.9, 0.95, 0.97, 0.99, 0.999];
/** `1 - c` with c = 0.99, in doubles as the reference computes it. */
const ODDS_THRESHOLD = 1 - 0.99;

/** `arr[size_t(double(count) * p)]` of the sorted array. */
function pct(sorted: readonly number[], count: number, p: number): number {
  return sorted[Math.trunc(count * p)]!;
}

/** Σ / count in int64 with truncation (all values here are non-negative). */
function integerMean(values: readonly number[]): number {
  const sum = values.reduce((s, v) => s + BigInt(v), 0n);
  return Number(sum / BigInt(values.length));
}

/** Memo of minPassing per p: a pure function of (t, p), so caching cannot change it. */
const minPassingMemo = new Map<number, Map<number, number>>();

/**
 * The smallest h with odds(h, t, p) < 1 - c (spec/40 §5.1), by doubling then
 * bisecting over the whole range, never narrowed by earlier answers. The
 * odds are the core's (checked against a plain binomial sum below).
 */
function minPassing(t: number, p: number): number {
  let memo = minPassingMemo.get(p);
  if (memo === undefined) minPassingMemo.set(p, (memo = new Map()));
  const hit = memo.get(t);
  if (hit !== undefined) return hit;
  const passes = (h: number) => native.earlyStoppingOdds(h, t, p) < ODDS_THRESHOLD;
  let hi = 1;
  while (!passes(hi)) hi *= 2;
  let lo = hi === 1 ? 0 : hi / 2; // passes(lo) is false (or lo = 0: h >= 1)
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (passes(mid)) hi = mid;
    else lo = mid;
  }
  memo.set(t, hi);
  return hi;
}

/** SingleStream / MultiStream estimate (spec/40 §5.2): the rank n - t, or null when too few queries. */
function estimateRank(n: number, p: number): { t: number; minQueries: number } | null {
  const minQueries = minPassing(1, p) + 1;
  if (n < minQueries) return null;
  let t = 1;
  for (let i = 2; i <= n; i++) {
    if (n < minPassing(i, p) + i) {
      t = i - 1;
      break;
    }
  }
  return { t, minQueries };
}

/** P(Binomial(h + t, 1 - p) <= t): the probability the odds stand for, summed term by term in log space. */
function binomialOdds(h: number, t: number, p: number): number {
  const n = h + t;
  const logFactorial = new Float64Array(n + 1);
  for (let i = 2; i <= n; i++) logFactorial[i] = logFactorial[i - 1]! + Math.log(i);
  const logs: number[] = [];
  for (let k = 0; k <= t; k++) {
    logs.push(logFactorial[n]! - logFactorial[k]! - logFactorial[n - k]! + k * Math.log1p(-p) + (n - k) * Math.log(p));
  }
  const max = Math.max(...logs);
  return Math.exp(max) * logs.reduce((s, l) => s + Math.exp(l - max), 0);
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/** Latencies in ns: ties (small range), zeros, ordinary values, and huge ones (sums stay below 2^63). */
const latencyNs = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 20 }), weight: 3 },
  { arbitrary: fc.constant(0), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 1_000_000_000 }), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 1e15 }), weight: 1 },
);

/** Sets of 1..5000 latencies (fast-check biases the size towards small and boundary values). */
const latencySet = fc.integer({ min: 1, max: 5000 }).chain((n) => fc.array(latencyNs, { minLength: n, maxLength: n }));

/** Percentiles: the usual ones, and any in [0.5, 0.999]. */
const percentile = fc.oneof(
  fc.constantFrom(0.5, 0.9, 0.95, 0.99, 0.999, 0.9990000000000001),
  fc.double({ min: 0.5, max: 0.999, noNaN: true }),
);

function summarize(settings: TestSettingsInput, input: Omit<NativeResultsInput, 'maxLatencyS' | 'finalQueryScheduledTimeS' | 'finalQueryIssuedTimeS' | 'finalQueryAllSamplesDoneTimeS'>) {
  const resolved = toNativeSettings(resolveTestSettings({ minDurationMs: 1000, ...settings }));
  return native.summarize(resolved, 1024, 1024, {
    maxLatencyS: 1,
    finalQueryScheduledTimeS: 10,
    finalQueryIssuedTimeS: 10,
    finalQueryAllSamplesDoneTimeS: 10,
    ...input,
  }, 'property-sut').outputs as Record<string, unknown>;
}

interface PercentileOut {
  percentile: number;
  sample_latency: number;
  query_latency: number;
}

/** The statistics of one latency array as the native outputs name them (sample_ or query_ prefix). */
function expectStatistics(out: Record<string, unknown>, kind: 'sample' | 'query', values: readonly number[], p: number): void {
  const sorted = [...values].sort((a, b) => a - b);
  const n = values.length;
  expect(out[`${kind}_latency_min`], 'min').toBe(sorted[0]);
  expect(out[`${kind}_latency_max`], 'max').toBe(sorted[n - 1]);
  expect(out[`${kind}_latency_mean`], 'mean').toBe(integerMean(values));
  const target = out.target_latency_percentile as PercentileOut;
  expect(target.percentile).toBe(p);
  expect(target[`${kind}_latency`], `target percentile ${p}`).toBe(pct(sorted, n, p));
  const list = out.latency_percentiles as PercentileOut[];
  expect(list.map((x) => x.percentile)).toEqual(REPORTED_PERCENTILES);
  for (const x of list) expect(x[`${kind}_latency`], `percentile ${x.percentile}`).toBe(pct(sorted, n, x.percentile));
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

describe('results math against a plain reference (spec/40)', () => {
  it('the early-stopping odds are the binomial probability of at most t over-latency queries', () => {
    // Where the search looks (h >= t * p / (1 - p), the reference's lower bound
    // min_slope), the values agree. Far below it the reference's series
    // overflows (Infinity for h = 1, t = 104, p = 0.999): harmless, as only the
    // comparison with 1 - c is used and the odds there are ~1; the next
    // property checks that comparison everywhere.
    const searched = fc.tuple(fc.integer({ min: 0, max: 300 }), percentile, fc.integer({ min: 0, max: 3000 }))
      .map(([t, p, k]) => [Math.max(1, Math.floor((t * p) / (1 - p)) + k), t, p] as const);
    fc.assert(
      fc.property(searched, ([h, t, p]) => {
        const got = native.earlyStoppingOdds(h, t, p);
        const want = binomialOdds(h, t, p);
        // The core's series stops below 2^-33 per term; log-space sums carry ~1e-12 relative error.
        if (want > 1e-12) expect(Math.abs(got - want) / want, `odds(${h}, ${t}, ${p}) = ${got}, binomial ${want}`).toBeLessThan(1e-6);
        else expect(got).toBeLessThan(1e-11);
      }),
      propertyParams(300),
    );
  });

  it('the odds decide "below 1 - c" as the binomial probability does, for any h and t', () => {
    // Any h, or one near the boundary (the smallest passing h of that t).
    const hOf = (t: number, p: number) => fc.oneof(
      fc.integer({ min: 1, max: 5000 }),
      fc.integer({ min: -40, max: 40 }).map((k) => Math.max(1, minPassing(t, p) + k)),
    );
    const cases = fc.tuple(fc.integer({ min: 0, max: 500 }), percentile).chain(([t, p]) => fc.tuple(hOf(t, p), fc.constant(t), fc.constant(p)));
    fc.assert(
      fc.property(cases, ([h, t, p]) => {
        const want = binomialOdds(h, t, p);
        // Away from the threshold only: there the two roundings may disagree.
        fc.pre(Math.abs(want - ODDS_THRESHOLD) > 1e-6 * ODDS_THRESHOLD);
        expect(native.earlyStoppingOdds(h, t, p) < ODDS_THRESHOLD, `odds(${h}, ${t}, ${p}), binomial ${want}`).toBe(want < ODDS_THRESHOLD);
      }),
      propertyParams(400),
    );
  });

  it('MinPassing is the smallest h whose odds fall below 1 - c (a fresh finder, any t)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2000 }), percentile, (t, p) => {
        expect(native.earlyStoppingMinPassing(t, p), `MinPassing(${t}, ${p})`).toBe(minPassing(t, p));
      }),
      propertyParams(150),
    );
  });

  it('SingleStream: min, max, mean, every percentile and both early-stopping estimates', () => {
    fc.assert(
      fc.property(latencySet, percentile, (latencies, p) => {
        const out = summarize(
          { scenario: 'SingleStream', singleStreamTargetLatencyPercentile: p },
          { sampleLatenciesNs: Float64Array.from(latencies), queriesIssued: latencies.length },
        );
        const n = latencies.length;
        expect(out.sample_count).toBe(n);
        expectStatistics(out, 'sample', latencies, p);
        const sorted = [...latencies].sort((a, b) => a - b);
        const e = estimateRank(n, p);
        expect(out.early_stopping_met, 'early stopping met').toBe(e !== null);
        const message = String(out.early_stopping_recommendation);
        if (e === null) {
          expect(out.early_stopping_latency_ss).toBe(0);
          expect(out.early_stopping_latency_ms).toBe(0);
          expect(message).toBe(` * Only processed ${n} queries.\n * Need to process at least ${minPassing(1, p) + 1} queries for early stopping.`);
          return;
        }
        expect(out.early_stopping_latency_ss, `estimate at rank ${n - e.t}`).toBe(sorted[n - e.t]);
        expect(message).toContain(` * Processed at least ${e.minQueries} queries (${n}).\n * Would discard ${e.t - 1} highest latency queries.\n`);
        const e99 = estimateRank(n, 0.99);
        if (e99 === null) {
          expect(out.early_stopping_latency_ms).toBe(0);
          expect(message).toContain(`least ${minPassing(1, 0.99) + 1} total queries).`);
        } else {
          expect(out.early_stopping_latency_ms, `p99 estimate at rank ${n - e99.t}`).toBe(sorted[n - e99.t]);
          expect(message.endsWith(`\n * Early stopping 99.0th percentile estimate: ${sorted[n - e99.t]}`)).toBe(true);
        }
      }),
      propertyParams(200),
    );
  });

  it('MultiStream: query-latency statistics and the early-stopping estimate over sorted query latencies', () => {
    fc.assert(
      fc.property(latencySet, percentile, (queryLatencies, p) => {
        const q = queryLatencies.length;
        const out = summarize(
          { scenario: 'MultiStream', multiStreamTargetLatencyPercentile: p, multiStreamSamplesPerQuery: 1 },
          { sampleLatenciesNs: Float64Array.from(queryLatencies), queryLatenciesNs: Float64Array.from(queryLatencies), queriesIssued: q },
        );
        expect(out.query_count).toBe(q);
        expectStatistics(out, 'query', queryLatencies, p);
        const sorted = [...queryLatencies].sort((a, b) => a - b);
        const e = estimateRank(q, p);
        expect(out.early_stopping_met).toBe(e !== null);
        expect(out.early_stopping_latency_ms).toBe(e === null ? 0 : sorted[q - e.t]);
      }),
      propertyParams(100),
    );
  });

  it('token latencies (SingleStream): token count, TTFT and TPOT statistics, and the estimates from TTFT', () => {
    const tokenCase = fc.integer({ min: 1, max: 3000 }).chain((n) =>
      fc.tuple(
        fc.array(latencyNs, { minLength: n, maxLength: n }),
        fc.array(latencyNs, { minLength: n, maxLength: n }),
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: n, maxLength: n }),
        percentile,
      ));
    fc.assert(
      fc.property(tokenCase, ([ttft, tpot, tokens, p]) => {
        const n = ttft.length;
        const out = summarize(
          { scenario: 'SingleStream', singleStreamTargetLatencyPercentile: p, useTokenLatencies: true },
          {
            sampleLatenciesNs: Float64Array.from(ttft, (x, i) => x + tpot[i]!), queriesIssued: n,
            firstTokenLatenciesNs: Float64Array.from(ttft), timePerOutputTokenNs: Float64Array.from(tpot), tokensPerSample: Float64Array.from(tokens),
          },
        );
        expect(out.token_count).toBe(tokens.reduce((a, b) => a + b, 0));
        for (const [name, values, target, list] of [
          ['first_token_latency', ttft, 'token_target_latency_percentile', 'token_latency_percentiles'],
          ['time_per_output_token', tpot, 'target_tpot_percentile', 'tpot_percentiles'],
        ] as const) {
          const sorted = [...values].sort((a, b) => a - b);
          expect(out[`${name}_min`], `${name} min`).toBe(sorted[0]);
          expect(out[`${name}_max`], `${name} max`).toBe(sorted[n - 1]);
          expect(out[`${name}_mean`], `${name} mean`).toBe(integerMean(values));
          expect((out[target] as PercentileOut).sample_latency, `${name} target percentile`).toBe(pct(sorted, n, p));
          for (const x of out[list] as PercentileOut[]) expect(x.sample_latency, `${name} ${x.percentile}`).toBe(pct(sorted, n, x.percentile));
        }
        // EarlyStopping(TPOT) && EarlyStopping(TTFT): the same n and p, so both or neither; the estimates kept are TTFT's.
        const e = estimateRank(n, p);
        expect(out.early_stopping_met).toBe(e !== null);
        const sortedTtft = [...ttft].sort((a, b) => a - b);
        expect(out.early_stopping_latency_ss).toBe(e === null ? 0 : sortedTtft[n - e.t]);
        const e99 = e === null ? null : estimateRank(n, 0.99);
        expect(out.early_stopping_latency_ms).toBe(e99 === null ? 0 : sortedTtft[n - e99.t]);
        expect(out.early_stopping_ttft_recommendation === '').toBe(e === null);
      }),
      propertyParams(60),
    );
  });

  it('token latencies (Server): TTFT and TPOT bounds decide the constraint and both early-stopping verdicts', () => {
    const bound = fc.integer({ min: 1000, max: 2e9 });
    const serverTokenCase = fc.integer({ min: 1, max: 3000 }).chain((n) =>
      fc.tuple(fc.array(latencyNs, { minLength: n, maxLength: n }), fc.array(latencyNs, { minLength: n, maxLength: n }), bound, bound, percentile));
    fc.assert(
      fc.property(serverTokenCase, ([ttft, tpot, ttftBound, tpotBound, p]) => {
        const n = ttft.length;
        const out = summarize(
          { scenario: 'Server', serverTargetLatencyPercentile: p, useTokenLatencies: true, serverTtftLatency: ttftBound, serverTpotLatency: tpotBound },
          {
            sampleLatenciesNs: Float64Array.from(ttft, (x, i) => x + tpot[i]!), queriesIssued: n,
            firstTokenLatenciesNs: Float64Array.from(ttft), timePerOutputTokenNs: Float64Array.from(tpot), tokensPerSample: new Float64Array(n).fill(2),
          },
        );
        const sorted = (a: readonly number[]) => [...a].sort((x, y) => x - y);
        expect(out.perf_constraints_met).toBe(pct(sorted(ttft), n, p) <= ttftBound && pct(sorted(tpot), n, p) <= tpotBound);
        const verdict = (values: readonly number[], b: number) => {
          const t = values.filter((v) => v > b).length;
          return n >= minPassing(t, p) + t;
        };
        const tpotMet = verdict(tpot, tpotBound);
        // Short-circuit: TTFT is evaluated only when TPOT passed.
        expect(out.early_stopping_met).toBe(tpotMet && verdict(ttft, ttftBound));
        expect(out.early_stopping_ttft_recommendation === '').toBe(!tpotMet);
      }),
      propertyParams(60),
    );
  });

  it('Server: over-latency count, the latency constraint and the early-stopping verdict', () => {
    const serverCase = latencySet.chain((latencies) =>
      fc.tuple(
        fc.constant(latencies),
        // A bound equal to one of the latencies (ties: equal is not over), or any bound.
        fc.oneof(fc.nat({ max: latencies.length - 1 }).map((k) => Math.max(1000, latencies[k]!)), fc.integer({ min: 1000, max: 2e9 })),
        percentile,
      ));
    fc.assert(
      fc.property(serverCase, ([latencies, targetNs, p]) => {
        const n = latencies.length;
        const out = summarize(
          { scenario: 'Server', serverTargetLatencyNs: targetNs, serverTargetLatencyPercentile: p },
          { sampleLatenciesNs: Float64Array.from(latencies), queriesIssued: n },
        );
        expectStatistics(out, 'sample', latencies, p);
        const over = latencies.filter((l) => l > targetNs).length;
        expect(out.overlatency_query_count, 'over-latency count').toBe(over);
        const sorted = [...latencies].sort((a, b) => a - b);
        expect(out.perf_constraints_met).toBe(pct(sorted, n, p) <= targetNs);
        const h = minPassing(over, p);
        const met = n >= h + over;
        expect(out.early_stopping_met, `t=${over} h=${h} n=${n}`).toBe(met);
        expect(out.early_stopping_recommendation).toBe(met
          ? ' * Run successful.'
          : ` * Run unsuccessful.\n * Processed ${n} queries.\n * Would need to run at least ${h + over - n} more queries,\n with the run being successful if every additional\n query were under latency.`);
      }),
      propertyParams(200),
    );
  });
});
