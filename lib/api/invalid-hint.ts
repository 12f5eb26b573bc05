/**
 * The one setting to change after an INVALID run, as `--set key=value`
 * (`loadgen run` prints it; the demo's Server retry uses the same lower
 * rate). Each INVALID reason the core reports has its own remedy, sized
 * from the run's own figures:
 * - latency bound missed (Server, or TTFT/TPOT): a lower server_target_qps;
 * - early stopping: more queries (min_query_count) when the share of
 *   queries over the bound was low enough for more queries to pass (sized
 *   by the early-stopping plan at that share), a lower server_target_qps
 *   when it was not;
 * - min duration: a larger expected rate or a smaller expected latency (the
 *   loadgen pre-generated too few queries), or no max_duration_ms cut-off;
 * - min query count: no max_duration_ms / max_query_count cut-off.
 * Failed samples are the SUT's problem: no setting makes them pass, and the
 * hint says so.
 */
import { planEarlyStopping } from '../rules/stats.js';
import type { TestResult } from '../types/api.js';

/** A rerun after a missed latency bound runs at most this share of the failed run's rate... */
const MAX_QPS_FACTOR = 0.7;
/** ...and at least this share (a run whose tail was far over the bound). */
const MIN_QPS_FACTOR = 0.1;
/** The rate is scaled by this times bound / measured tail latency. */
const QPS_TAIL_SCALE = 0.8;
/** min_query_count hints add this margin to the reference's "at least N queries". */
const QUERY_MARGIN = 1.1;
/** The null SUTs' min-duration hints size the expected rate with this margin (a short run's median overstates a warmed-up SUT's time per query). */
const MIN_DURATION_MARGIN = 5;
/** Expected latencies below 1 us are refused (unit-mistake guard). */
const MIN_EXPECTED_LATENCY_NS = 1000;

function setting(result: TestResult, key: string): number {
  const value = Number(result.effectiveSettings[key] ?? 0);
  return Number.isFinite(value) ? value : 0;
}

/** A figure for a hint: at most 4 significant digits, never below `floor`. */
function nice(value: number, floor = 0.001): number {
  if (!(value > floor)) return floor;
  const digits = Math.max(0, 3 - Math.floor(Math.log10(value)));
  const scale = 10 ** digits;
  return Math.max(floor, Math.floor(value * scale) / scale);
}

function ms(ns: number): string {
  return `${+(ns / 1e6).toPrecision(4)} ms`;
}

/**
 * The latency the run missed, as measured/bound ratios: the target
 * percentile's sample latency against target_latency_ns, and with token
 * latencies TTFT and TPOT against their bounds. The worst one, with its text.
 */
function worstTail(result: TestResult): { ratio: number; text: string } | undefined {
  const candidates: { ratio: number; text: string }[] = [];
  const percentile = `p${+(result.targetLatencyPercentile * 100).toPrecision(4)}`;
  const add = (what: string, measuredNs: number | undefined, boundNs: number): void => {
    if (measuredNs === undefined || !(measuredNs > 0) || !(boundNs > 0)) return;
    candidates.push({ ratio: measuredNs / boundNs, text: `${what} ${ms(measuredNs)} against the bound ${ms(boundNs)}` });
  };
  if (result.effectiveSettings['useTokenLatencies'] === true) {
    add(`TTFT ${percentile}`, result.tokens?.ttftNs?.targetPercentile, setting(result, 'serverTtftLatency'));
    add(`TPOT ${percentile}`, result.tokens?.tpotNs?.targetPercentile, setting(result, 'serverTpotLatency'));
  } else {
    add(`${percentile} latency`, result.targetPercentileLatencyNs, setting(result, 'targetLatencyNs'));
  }
  if (candidates.length === 0) return undefined;
  return candidates.reduce((worst, c) => (c.ratio > worst.ratio ? c : worst));
}

/**
 * A Server rate likely to meet the latency bound that this run missed: its
 * target QPS times 0.8 × bound / measured tail latency, kept within 10-70 %
 * of it (70 % when the tail was not measured or barely over). Undefined for
 * a run that is not a Server run or has no target rate.
 */
export function lowerServerQps(result: TestResult): number | undefined {
  if (result.scenario !== 'Server') return undefined;
  const qps = setting(result, 'targetQps');
  if (!(qps > 0)) return undefined;
  const tail = worstTail(result);
  const factor = tail === undefined ? MAX_QPS_FACTOR : Math.min(MAX_QPS_FACTOR, Math.max(MIN_QPS_FACTOR, (QPS_TAIL_SCALE / tail.ratio)));
  return nice(qps * factor);
}

function lowerQpsHint(result: TestResult, why: string): string | undefined {
  const qps = lowerServerQps(result);
  if (qps === undefined) return undefined;
  const tail = worstTail(result);
  return `${why}${tail !== undefined ? ` (${tail.text})` : ''} at ${nice(setting(result, 'targetQps'))} QPS: try --set server_target_qps=${qps}`;
}

/** A Server over-latency share up to this fraction of 1 - percentile is passed by more queries; above it, by a lower rate. */
const MAX_PLANNED_TAIL_SHARE = 0.8;

/**
 * The queries a Server run with this run's share of over-latency queries
 * needs for early stopping to pass (the `loadgen stats --early-stopping
 * --tail-rate` plan), or undefined when that share is too near 1 -
 * percentile for more queries to be the remedy (or this is not a Server run).
 */
export function serverQueriesNeeded(result: TestResult): number | undefined {
  if (result.scenario !== 'Server' || result.effectiveSettings['useTokenLatencies'] === true) return undefined;
  const issued = result.counts.issuedQueries;
  const percentile = result.targetLatencyPercentile;
  if (!(issued > 0) || !(percentile > 0 && percentile < 1)) return undefined;
  const share = (result.overLatencyCount ?? 0) / issued;
  if (share > MAX_PLANNED_TAIL_SHARE * (1 - percentile)) return undefined;
  return planEarlyStopping({ percentile, tailRate: share }).queries;
}

/** The most queries any early-stopping verdict of the run asks for ("at least N", "at least N more"). */
function earlyStoppingQueries(result: TestResult): number | undefined {
  const text = result.earlyStopping.message;
  let needed: number | undefined;
  for (const m of text.matchAll(/Need to process at least (\d+) queries|would need to process at\s+least (\d+) total queries/gi)) {
    const n = Number(m[1] ?? m[2]);
    needed = Math.max(needed ?? 0, n);
  }
  for (const m of text.matchAll(/Processed (\d+) queries\.\s*\n?\s*\* Would need to run at least (\d+) more queries/g)) {
    needed = Math.max(needed ?? 0, Number(m[1]) + Number(m[2]));
  }
  return needed;
}

function minDurationHint(result: TestResult): string | undefined {
  const minDurationMs = setting(result, 'minDurationMs');
  const maxDurationMs = setting(result, 'maxDurationMs');
  if (maxDurationMs > 0 && maxDurationMs < minDurationMs) {
    return `max_duration_ms (${maxDurationMs}) stopped the run before min_duration_ms (${minDurationMs}): try --set max_duration_ms=0`;
  }
  if (result.counts.issuedQueries === 0) return undefined;
  switch (result.scenario) {
    case 'SingleStream':
    case 'MultiStream': {
      const key = result.scenario === 'SingleStream' ? 'single_stream_expected_latency_ns' : 'multi_stream_expected_latency_ns';
      const medianNs = (result.scenario === 'MultiStream' ? result.queryPercentilesNs?.[50] : result.percentilesNs[50]) ?? 0;
      if (!(medianNs > 0)) return undefined;
      const what = `the SUT answered in ${Math.round(medianNs)} ns (median), faster than ${key} assumes, and ran out of pre-generated queries`;
      // Expected latencies below 1 us are refused: then more queries instead.
      if (medianNs / MIN_DURATION_MARGIN >= MIN_EXPECTED_LATENCY_NS) return `${what}: try --set ${key}=${Math.floor(medianNs / MIN_DURATION_MARGIN)}`;
      return `${what}: try --set min_query_count=${Math.ceil((MIN_DURATION_MARGIN * minDurationMs * 1e6) / medianNs)}`;
    }
    case 'Offline': {
      const seconds = result.timing.finalQueryAllSamplesDoneSeconds;
      if (!(seconds > 0)) return undefined;
      const qps = Math.ceil((MIN_DURATION_MARGIN * result.counts.completedSamples) / seconds);
      return `the Offline query finished before min_duration_ms: try --set offline_expected_qps=${qps}`;
    }
    case 'Server': {
      // The schedule ended before min_duration_ms: only a query cap does that.
      const maxQueries = setting(result, 'maxQueryCount');
      if (maxQueries > 0) return `max_query_count (${maxQueries}) ended the schedule before min_duration_ms: try --set max_query_count=0`;
      return undefined;
    }
  }
}

function minQueriesHint(result: TestResult): string | undefined {
  const maxDurationMs = setting(result, 'maxDurationMs');
  const maxQueries = setting(result, 'maxQueryCount');
  const minQueries = setting(result, 'minQueryCount');
  if (maxDurationMs > 0) return `max_duration_ms (${maxDurationMs}) stopped the run before min_query_count (${minQueries}) queries were issued: try --set max_duration_ms=0`;
  if (maxQueries > 0 && maxQueries < minQueries) return `max_query_count (${maxQueries}) is below min_query_count (${minQueries}): try --set max_query_count=0`;
  return undefined;
}

function failedSamplesHint(result: TestResult): string | undefined {
  const failed = result.errors.failedSamples;
  if (failed.total === 0) return undefined;
  const kinds = Object.entries(failed.byKind).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`).join(', ');
  // Timeouts under load: a lower rate is the setting that helps.
  if (result.scenario === 'Server' && failed.byKind.timeout > 0) {
    const lower = lowerServerQps(result);
    if (lower !== undefined) return `${failed.total} samples failed (${kinds}); timeouts under load: try --set server_target_qps=${lower}`;
  }
  return `${failed.total} samples failed (${kinds}): no setting makes a failed sample pass; the detail log's error lines say which and why`;
}

/**
 * One hint for an INVALID run that was not interrupted: what to change,
 * ending in `try --set key=value` wherever a setting is the remedy.
 * Undefined for a VALID or interrupted run.
 */
export function invalidRunHint(result: TestResult): string | undefined {
  if (result.valid || result.interrupted !== undefined) return undefined;
  if (result.mode === 'AccuracyOnly') return failedSamplesHint(result);
  const failed = failedSamplesHint(result);
  if (result.errors.failedSamples.total > 0) return failed;
  if (!result.checks.perfConstraintsMet) {
    const hint = lowerQpsHint(result, 'the latency bound was missed');
    if (hint !== undefined) return hint;
  }
  if (!result.checks.minDurationMet) {
    const hint = minDurationHint(result);
    if (hint !== undefined) return hint;
  }
  if (!result.checks.minQueriesMet) {
    const hint = minQueriesHint(result);
    if (hint !== undefined) return hint;
  }
  if (!result.checks.earlyStoppingMet) {
    if (result.scenario === 'Server' && result.effectiveSettings['useTokenLatencies'] !== true) {
      const over = result.overLatencyCount ?? 0;
      const needed = serverQueriesNeeded(result);
      if (needed !== undefined) {
        const share = `${over} of ${result.counts.issuedQueries} queries over the latency bound`;
        return `early stopping failed with ${share}; at that share it passes with ${needed} queries: try --set min_query_count=${Math.ceil(needed * QUERY_MARGIN)}`;
      }
      const hint = lowerQpsHint(result, `early stopping failed with ${over} of ${result.counts.issuedQueries} queries over the latency bound`);
      if (hint !== undefined) return hint;
    }
    const needed = earlyStoppingQueries(result);
    if (needed !== undefined) {
      const count = Math.max(Math.ceil(needed * QUERY_MARGIN), setting(result, 'minQueryCount') + 1);
      return `early stopping needs at least ${needed} queries (${result.counts.issuedQueries} were issued): try --set min_query_count=${count}`;
    }
  }
  return undefined;
}
