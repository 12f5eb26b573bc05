/**
 * The demo's Server rate from the Offline run's latency distribution
 * (lib/demo/rate.ts), on synthetic Offline timelines: a steady machine, and
 * one whose capacity dips the way a busy machine's does.
 */
import { describe, expect, it } from 'vitest';

import { demoServerQps, MIN_SERVER_FRACTION, replayLatency, replayOffline, SERVER_QPS_FRACTION } from '../lib/demo/rate.js';
import type { DemoTimeline } from '../lib/demo/sut.js';

/**
 * Batches of `batch` samples completing every `everyMs` for `spanMs`; in
 * each dip (`lengthMs` of every `everyMs`) only one batch in `keepOneIn`
 * completes (none when it is 0: a stall).
 */
function timeline(spanMs: number, everyMs: number, batch: number, dips?: { everyMs: number; lengthMs: number; keepOneIn?: number }): DemoTimeline {
  const completedAtMs: number[] = [];
  const completedSamples: number[] = [];
  let inDip = 0;
  for (let t = everyMs; t <= spanMs; t += everyMs) {
    if (dips !== undefined && t % dips.everyMs < dips.lengthMs) {
      inDip++;
      if (!dips.keepOneIn || inDip % dips.keepOneIn !== 0) continue;
    }
    completedAtMs.push(1000 + t);
    completedSamples.push(batch);
  }
  return { firstIssueMs: 1000, completedAtMs, completedSamples };
}

describe('the demo Server rate', () => {
  it('is half the Offline rate on a steady machine', () => {
    // 32 samples every 1 ms: 32000 samples/s, no dips.
    const replay = replayOffline(timeline(10_000, 1, 32), 100, 0.99, 3)!;
    expect(replay.meanRate).toBeCloseTo(32000, -2);
    expect(replay.dipsDominate).toBe(false);
    expect(replay.qps).toBeCloseTo(SERVER_QPS_FRACTION * replay.meanRate, 6);
    expect(replay.replayedLatencyMs).toBeLessThan(10);
    const chosen = demoServerQps(replay.meanRate, replay);
    expect(chosen.qps).toBeCloseTo(16000, -2);
    expect(chosen.basis).toMatch(/^50% of the Offline rate 32000 samples\/s: there the Offline run's completions replayed as the server's capacity give a p99 latency of [\d.]+ ms, within 50\.0 ms \(50% of the bound\)$/);
  });

  it('is lower where the Offline run slowed down: the replayed tail stays within half the bound', () => {
    // The same machine, but for 150 ms of every 300 ms it gets an eighth of its
    // rate: at half the mean rate a Server run would queue ~190 ms in each dip.
    const stalled = timeline(10_000, 1, 32, { everyMs: 300, lengthMs: 150, keepOneIn: 8 });
    const replay = replayOffline(stalled, 100, 0.99, 3)!;
    expect(replay.qps).toBeLessThan(SERVER_QPS_FRACTION * replay.meanRate);
    expect(replay.qps).toBeGreaterThanOrEqual(MIN_SERVER_FRACTION * replay.meanRate);
    expect(replay.replayedLatencyMs).toBeLessThanOrEqual(50);
    // Checked against the replay itself, independently of the bisection: a
    // little more than the chosen rate breaks the limit.
    const gapsFor = (n: number): Float64Array => Float64Array.from({ length: n }, (_, i) => -Math.log(1 - ((i * 0.618034) % 1 || 0.5)));
    const slots = Float64Array.from(stalled.completedAtMs.flatMap((t, i) => Array<number>(stalled.completedSamples[i]!).fill(t - 1000)));
    expect(replayLatency(slots, gapsFor(200_000), replay.meanRate * SERVER_QPS_FRACTION, 3, 0.99)).toBeGreaterThan(50);
    expect(demoServerQps(replay.meanRate, replay).basis).toMatch(/^the highest rate at which the Offline run's completions replayed .* within 50\.0 ms \(50% of the bound\)$/);
  });

  it('where the dips alone pass half the bound, allows queueing a quarter more than the lowest rate sees', () => {
    // 80 ms without a completion every 400 ms: even a trickle of arrivals waits ~80 ms.
    const replay = replayOffline(timeline(10_000, 1, 32, { everyMs: 400, lengthMs: 80 }), 100, 0.99, 3)!;
    expect(replay.dipsDominate).toBe(true);
    expect(replay.limitMs).toBeGreaterThan(50);
    expect(replay.replayedLatencyMs).toBeLessThanOrEqual(replay.limitMs);
    expect(replay.qps).toBeGreaterThanOrEqual(MIN_SERVER_FRACTION * replay.meanRate);
    expect(demoServerQps(replay.meanRate, replay).basis).toMatch(/its dips alone give [\d.]+ ms at 10% of the Offline rate/);
  });

  it('is the same for the same timeline, and half the rate without one', () => {
    const t = timeline(5_000, 2, 16, { everyMs: 300, lengthMs: 40 });
    expect(replayOffline(t, 100, 0.99, 3)).toEqual(replayOffline(t, 100, 0.99, 3));
    expect(replayOffline({ firstIssueMs: Number.NaN, completedAtMs: [], completedSamples: [] }, 100, 0.99, 3)).toBeUndefined();
    expect(demoServerQps(1000, undefined)).toEqual({ qps: 500, basis: '50% of the Offline rate 1000 samples/s' });
  });
});
