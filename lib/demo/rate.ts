/**
 * The demo's Server rate, from the Offline run's latency distribution. An
 * Offline run issues every sample at once, so each sample's latency is when
 * the machine got to it: the distribution over time is the capacity the
 * machine gave the SUT, dips included (on a busy machine other processes
 * take the cores for tens of ms). A Server run whose arrivals outpace a dip
 * queues samples past the latency bound. So the rate is chosen by replaying
 * that capacity: Poisson arrivals at a candidate rate are served, first come
 * first served, by the Offline run's completions (each arrival by the first
 * completion after it plus one batch's service time). The rate is the
 * highest, up to half the Offline rate, whose replayed tail latency stays
 * within half the bound (the other half is margin for the Server run's own
 * dips). Where the dips alone (the replay at a tenth of the Offline rate)
 * take the tail past that, a lower rate would not help and only give early
 * stopping fewer queries: the rate is then the highest at which queueing
 * adds at most a quarter to that tail.
 */
import type { DemoTimeline } from './sut.js';

/** Server runs at most at this share of the Offline mean rate: loaded, with headroom for latency. */
export const SERVER_QPS_FRACTION = 0.5;
/** ...and at least this share: below it a rate only gives early stopping fewer queries. */
export const MIN_SERVER_FRACTION = 0.1;
/** The replayed tail latency must stay within this share of the bound... */
export const REPLAY_BOUND_FRACTION = 0.5;
/** ...or, where the dips alone pass that, within this multiple of the tail at the lowest rate. */
export const REPLAY_QUEUEING_ALLOWANCE = 1.25;
/** Candidate rates tried by bisection between the two shares. */
const BISECTION_STEPS = 12;
/** Arrivals stop this share of the span before the last completion (the replay's end has no completions to serve them). */
const REPLAY_TAIL_SHARE = 0.1;

/** What the replay of an Offline run found. */
export interface OfflineReplay {
  /** Samples per second from the first issue to the last completion. */
  meanRate: number;
  /** The chosen rate's replayed latency at the percentile, ms. */
  replayedLatencyMs: number;
  /** The highest rate (bisection) whose replayed latency is within the bound's share, queries/s. */
  qps: number;
  /** The limit the replayed latency had to meet, ms. */
  limitMs: number;
  /** True when the dips alone passed half the bound (the limit is the lowest rate's tail plus a quarter). */
  dipsDominate: boolean;
  /** The latency percentile replayed, a fraction. */
  percentile: number;
}

/** A small deterministic PRNG (mulberry32): the same timeline always gives the same rate. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The latency at `percentile` (ms) of Poisson arrivals at `qps` (from the
 * unit exponential gaps `gaps`, scaled) served by `slots` (one completion
 * time per sample, ms from the first issue, ascending), each needing
 * `serviceMs` before its slot. Infinity when the slots run out.
 */
export function replayLatency(slots: Float64Array, gaps: Float64Array, qps: number, serviceMs: number, percentile: number): number {
  const endMs = slots[slots.length - 1]! * (1 - REPLAY_TAIL_SHARE);
  const latencies: number[] = [];
  let t = 0;
  let j = 0;
  for (let k = 0; k < gaps.length; k++) {
    t += (gaps[k]! / qps) * 1000;
    if (t > endMs) break;
    const ready = t + serviceMs;
    while (j < slots.length && slots[j]! < ready) j++;
    if (j >= slots.length) return Infinity;
    latencies.push(slots[j]! - t);
    j++;
  }
  if (latencies.length === 0) return Infinity;
  const sorted = Float64Array.from(latencies).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(percentile * sorted.length) - 1)]!;
}

/**
 * Replays the Offline run in `timeline` against Server arrivals (see the
 * module's comment). `boundMs` and `percentile`: the Server run's latency
 * bound and percentile; `serviceMs`: the least time a sample needs (the
 * batch wait plus a batch's inference). Undefined when the timeline holds
 * no completion.
 */
export function replayOffline(timeline: DemoTimeline, boundMs: number, percentile: number, serviceMs: number): OfflineReplay | undefined {
  const { firstIssueMs, completedAtMs, completedSamples } = timeline;
  if (completedAtMs.length === 0 || !Number.isFinite(firstIssueMs)) return undefined;
  let total = 0;
  for (const n of completedSamples) total += n;
  const spanMs = completedAtMs[completedAtMs.length - 1]! - firstIssueMs;
  if (total === 0 || !(spanMs > 0)) return undefined;
  const slots = new Float64Array(total);
  let at = 0;
  for (let i = 0; i < completedAtMs.length; i++) slots.fill(completedAtMs[i]! - firstIssueMs, at, (at += completedSamples[i]!));
  slots.sort();
  const meanRate = (total / spanMs) * 1000;
  // Enough arrivals for the highest rate tried over the whole span.
  const random = mulberry32(0x5eed);
  const gaps = new Float64Array(Math.ceil(SERVER_QPS_FRACTION * total * 1.2) + 16);
  for (let k = 0; k < gaps.length; k++) gaps[k] = -Math.log(1 - random());
  const latencyAt = (qps: number): number => replayLatency(slots, gaps, qps, serviceMs, percentile);
  let low = MIN_SERVER_FRACTION * meanRate;
  let high = SERVER_QPS_FRACTION * meanRate;
  let atLow = latencyAt(low);
  const dipsDominate = atLow > REPLAY_BOUND_FRACTION * boundMs;
  const limitMs = dipsDominate ? atLow * REPLAY_QUEUEING_ALLOWANCE : REPLAY_BOUND_FRACTION * boundMs;
  const result = (qps: number, latency: number): OfflineReplay => ({ meanRate, qps, replayedLatencyMs: latency, limitMs, dipsDominate, percentile });
  const atHigh = latencyAt(high);
  if (atHigh <= limitMs) return result(high, atHigh);
  for (let step = 0; step < BISECTION_STEPS; step++) {
    const mid = (low + high) / 2;
    const atMid = latencyAt(mid);
    if (atMid <= limitMs) {
      low = mid;
      atLow = atMid;
    } else {
      high = mid;
    }
  }
  return result(low, atLow);
}

/** The Server rate for an Offline rate and the replay of its run (when there is one), with the reason in words. */
export function demoServerQps(offlineRate: number, replay: OfflineReplay | undefined): { qps: number; basis: string } {
  const half = `${SERVER_QPS_FRACTION * 100}% of the Offline rate ${offlineRate.toFixed(0)} samples/s`;
  if (replay === undefined) return { qps: round3(SERVER_QPS_FRACTION * offlineRate), basis: half };
  const qps = Math.min(SERVER_QPS_FRACTION * offlineRate, replay.qps);
  const p = `p${+(100 * replay.percentile).toPrecision(4)}`;
  const replayed = `the Offline run's completions replayed as the server's capacity give a ${p} latency of ${replay.replayedLatencyMs.toFixed(1)} ms`;
  const limit = replay.dipsDominate
    ? `within ${replay.limitMs.toFixed(1)} ms (its dips alone give ${(replay.limitMs / REPLAY_QUEUEING_ALLOWANCE).toFixed(1)} ms at ${MIN_SERVER_FRACTION * 100}% of the Offline rate)`
    : `within ${replay.limitMs.toFixed(1)} ms (${REPLAY_BOUND_FRACTION * 100}% of the bound)`;
  if (qps >= SERVER_QPS_FRACTION * offlineRate) return { qps: round3(qps), basis: `${half}: there ${replayed}, ${limit}` };
  return { qps: round3(qps), basis: `the highest rate at which ${replayed}, ${limit}` };
}

export function round3(x: number): number {
  return Math.max(0.001, Math.round(x * 1000) / 1000);
}
