/**
 * Planning a run: the rules' sample size for a latency percentile (seeds/004,
 * "Appendix Number of Queries"), how long a run of that size takes, and what
 * early stopping (spec/40 §5, computed by the native core) reports for given
 * counts, including the planner's direction: how many queries a Server run
 * needs to pass early stopping at an expected over-latency rate.
 */
import { SettingsError } from '../errors.js';
import { loadNativeInternals } from '../native/index.js';
import { show } from '../settings/messages.js';

/** The rules' default confidence (seeds/004: "A 99% confidence bound was ... selected"). */
export const DEFAULT_CONFIDENCE = 0.99;
/** The rounded sizes of the seed's table are whole multiples of 2^13 queries. */
export const QUERY_ROUNDING_UNIT = 8192;
/** The closed division's minimum run duration in every scenario (seeds/000; mlperf.conf min_duration). */
export const MIN_RUN_DURATION_MS = 600_000;

/** Options of {@link requiredQueries}. */
export interface SampleSizeOptions {
  /** Tail latency percentile as a fraction in (0, 1), e.g. 0.99. */
  readonly percentile: number;
  /** Confidence as a fraction in (0, 1); default 0.99. */
  readonly confidence?: number;
  /** Margin of error as a fraction in (0, 1 - percentile); default (1 - percentile) / 20, the seed's rule. */
  readonly margin?: number;
}

/** The sample size of {@link requiredQueries}. */
export interface SampleSize {
  readonly percentile: number;
  readonly confidence: number;
  readonly margin: number;
  /** NormsInv((1 - confidence) / 2)^2 * percentile * (1 - percentile) / margin^2, unrounded. */
  readonly exactQueries: number;
  /** `exactQueries` rounded to the nearest integer: the table's "Inferences" column. */
  readonly queries: number;
  /** `exactQueries` rounded up to a whole multiple of 2^13: the table's "Rounded Inferences". */
  readonly roundedQueries: number;
  /** `roundedQueries` / 2^13 (the table writes e.g. 3*2^13). */
  readonly roundedMultiple: number;
}

function fraction(name: string, value: unknown, max = 1): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value >= max) {
    const hint = typeof value === 'number' && value >= 1 && value < 100 ? ` (a fraction: ${value / 100} for ${value}%)` : '';
    throw new SettingsError(name, value, `Invalid ${name} ${show(value)}: expected a number strictly between 0 and ${max}${hint}.`);
  }
  return value;
}

function count(name: string, value: unknown, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > 2 ** 31 - 1) {
    throw new SettingsError(name, value, `Invalid ${name} ${show(value)}: expected an integer from ${min} to ${2 ** 31 - 1}.`);
  }
  return value;
}

/**
 * The standard normal quantile (Excel's NORMSINV), by P. J. Acklam's rational
 * approximation (relative error below 1.2e-9): far finer than the integer
 * rounding the sample sizes go through.
 */
export function normsInv(p: number): number {
  fraction('p', p);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const tail = (q: number): number =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < low) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - low) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/**
 * The number of queries that verifies a latency percentile at a confidence
 * and margin (seeds/004): NumQueries = NormsInv((1 - c) / 2)^2 * p(1 - p) / m^2.
 */
export function requiredQueries(options: SampleSizeOptions): SampleSize {
  const percentile = fraction('percentile', options.percentile);
  const confidence = fraction('confidence', options.confidence ?? DEFAULT_CONFIDENCE);
  const margin = options.margin === undefined ? (1 - percentile) / 20 : fraction('margin', options.margin, 1 - percentile);
  const z = normsInv((1 - confidence) / 2);
  const exactQueries = (z * z * percentile * (1 - percentile)) / (margin * margin);
  const roundedMultiple = Math.ceil(exactQueries / QUERY_ROUNDING_UNIT);
  return {
    percentile, confidence, margin, exactQueries,
    queries: Math.round(exactQueries),
    roundedQueries: roundedMultiple * QUERY_ROUNDING_UNIT,
    roundedMultiple,
  };
}

/** Options of {@link runDuration}: one of `qps` (Server, Offline) or `latencyMs` (one query at a time). */
export interface RunDurationOptions {
  readonly queries: number;
  /** Queries per second the run issues (Server's target QPS, or a throughput). */
  readonly qps?: number;
  /** Latency of one query in ms (SingleStream / MultiStream: the next query waits for the last). */
  readonly latencyMs?: number;
}

/** How long a run takes. */
export interface RunDuration {
  /** Time to issue `queries` at the given rate or latency. */
  readonly queriesSeconds: number;
  /** The closed division's minimum duration (600 s): a run is never shorter. */
  readonly minimumSeconds: number;
  /** max(queriesSeconds, minimumSeconds): how long a compliant run with at least that many queries lasts. */
  readonly runSeconds: number;
  /** Queries such a run issues: max(queries, what the minimum duration issues). */
  readonly runQueries: number;
}

/** How long a run of `queries` takes at `qps` or `latencyMs`, against the 600 s minimum. */
export function runDuration(options: RunDurationOptions): RunDuration {
  const queries = count('queries', options.queries, 1);
  if ((options.qps === undefined) === (options.latencyMs === undefined)) {
    throw new SettingsError('qps', options.qps, 'Give exactly one of qps (queries per second) or latencyMs (ms per query).');
  }
  const positive = (name: string, v: unknown): number => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new SettingsError(name, v, `Invalid ${name} ${show(v)}: expected a positive number.`);
    return v;
  };
  const perSecond = options.qps !== undefined ? positive('qps', options.qps) : 1000 / positive('latencyMs', options.latencyMs);
  const queriesSeconds = queries / perSecond;
  const minimumSeconds = MIN_RUN_DURATION_MS / 1000;
  const runSeconds = Math.max(queriesSeconds, minimumSeconds);
  return { queriesSeconds, minimumSeconds, runSeconds, runQueries: Math.max(queries, Math.ceil(minimumSeconds * perSecond)) };
}

/** Options of {@link earlyStopping}. */
export interface EarlyStoppingOptions {
  /** Default Server when `overLatency` is given, else SingleStream. Offline has no early stopping. */
  readonly scenario?: 'SingleStream' | 'MultiStream' | 'Server';
  /** Target latency percentile as a fraction, e.g. 0.99. */
  readonly percentile: number;
  /** Queries issued. */
  readonly queries: number;
  /** Server: queries over the latency bound (required there; not used by SingleStream / MultiStream). */
  readonly overLatency?: number;
}

/** What the reference's early stopping reports (spec/40 §5.2). */
export interface EarlyStoppingReport {
  readonly scenario: 'SingleStream' | 'MultiStream' | 'Server';
  readonly percentile: number;
  readonly queries: number;
  readonly met: boolean;
  /** The reference's early_stopping_result text. */
  readonly recommendation: string;
  /** Server: queries over the bound, the minimum passing count h for it, and h + t. */
  readonly overLatency?: number;
  readonly minPassing?: number;
  readonly minTotalQueries?: number;
  /** SingleStream / MultiStream: the fewest queries with which an estimate exists. */
  readonly minQueriesNeeded?: number;
  /** SingleStream / MultiStream: 0-based rank in the ascending latencies that is reported (n - t); null when not met. */
  readonly rankIndex?: number | null;
  /** SingleStream: the same for the 99th percentile (MultiStream inference); null when too few queries. */
  readonly rankIndexP99?: number | null;
}

/** Early stopping's verdict for the given counts, as the native core computes it in a run. */
export function earlyStopping(options: EarlyStoppingOptions): EarlyStoppingReport {
  const percentile = fraction('percentile', options.percentile);
  const queries = count('queries', options.queries);
  const scenario = options.scenario ?? (options.overLatency !== undefined ? 'Server' : 'SingleStream');
  if (scenario === 'Server') {
    if (options.overLatency === undefined) throw new SettingsError('overLatency', undefined, 'Server early stopping needs overLatency: the number of queries over the latency bound.');
    const overLatency = count('overLatency', options.overLatency);
    if (overLatency > queries) throw new SettingsError('overLatency', overLatency, `Invalid overLatency ${overLatency}: more than the ${queries} queries issued.`);
    const r = loadNativeInternals().rules.earlyStoppingServer(percentile, queries, overLatency);
    return {
      scenario, percentile, queries, met: r.earlyStoppingMet, recommendation: r.recommendation,
      overLatency, minPassing: r.minPassing, minTotalQueries: r.minTotalQueries,
    };
  }
  if (scenario !== 'SingleStream' && scenario !== 'MultiStream') {
    throw new SettingsError('scenario', scenario, `Invalid scenario ${show(scenario)}: early stopping applies to SingleStream, MultiStream and Server.`);
  }
  if (options.overLatency !== undefined) {
    throw new SettingsError('overLatency', options.overLatency, `overLatency applies to Server only: ${scenario} early stopping has no latency bound (it estimates the percentile).`);
  }
  if (queries > 2 ** 24) throw new SettingsError('queries', queries, `Invalid queries ${queries}: ${scenario} estimates are computed up to ${2 ** 24} queries.`);
  const r = loadNativeInternals().conformance.earlyStoppingEstimate(scenario, percentile, queries);
  return {
    scenario, percentile, queries, met: r.earlyStoppingMet, recommendation: r.recommendation,
    minQueriesNeeded: r.minQueriesNeeded, rankIndex: r.rankIndex,
    ...(scenario === 'SingleStream' ? { rankIndexP99: r.rankIndexP99 } : {}),
  };
}

/** Options of {@link planEarlyStopping}. */
export interface EarlyStoppingPlanOptions {
  /** Target latency percentile as a fraction, e.g. 0.99. */
  readonly percentile: number;
  /** Expected share of queries over the latency bound, in [0, 1 - percentile). */
  readonly tailRate: number;
}

/** The planner's answer. */
export interface EarlyStoppingPlan {
  readonly percentile: number;
  readonly tailRate: number;
  /** Fewest queries with which a Server run at that tail rate passes early stopping. */
  readonly queries: number;
  /** Over-latency queries among them: ceil(tailRate * queries). */
  readonly overLatency: number;
  readonly minPassing: number;
}

/**
 * How many queries a Server run needs so that early stopping passes when a
 * share `tailRate` of queries is over the bound: the smallest N with
 * N >= h(t) + t, t = ceil(tailRate * N), h the core's minimum passing count.
 */
export function planEarlyStopping(options: EarlyStoppingPlanOptions): EarlyStoppingPlan {
  const percentile = fraction('percentile', options.percentile);
  const r = options.tailRate;
  // 1 - 0.99 is 0.010000000000000009 in doubles: a rate written as 0.01 is at the limit.
  if (typeof r !== 'number' || !Number.isFinite(r) || r < 0 || r >= 1 - percentile - 1e-12) {
    throw new SettingsError('tailRate', r, `Invalid tailRate ${show(r)}: expected a share of over-latency queries from 0 to below ${+(1 - percentile).toPrecision(12)} (1 - percentile); at or above it no run passes.`);
  }
  const minPassing = loadNativeInternals().conformance.earlyStoppingMinPassing;
  const overAt = (n: number): number => Math.max(0, Math.ceil(r * n - 1e-12));
  const passes = (n: number): boolean => {
    const t = overAt(n);
    return n >= minPassing(t, percentile) + t;
  };
  const limit = 2 ** 31 - 1;
  let hi = Math.max(1, minPassing(0, percentile));
  while (!passes(hi)) {
    if (hi >= limit) throw new SettingsError('tailRate', r, `Invalid tailRate ${r}: no run of up to ${limit} queries passes at percentile ${percentile}.`);
    hi = Math.min(limit, hi * 2);
  }
  // `passes` is not monotone in n: where t steps up, h(t) steps up too. So hi
  // only bounds t; within one t the passing counts are one range,
  // [h(t) + t, the largest n with that t]: the first t whose range is not
  // empty gives the answer.
  const tMax = overAt(hi);
  for (let t = 0; t <= tMax; t += 1) {
    const h = minPassing(t, percentile);
    const first = t === 0 ? 1 : Math.floor((t - 1) / r) + 1;  // smallest n with ceil(r n) = t (r > 0)
    let n = Math.max(h + t, first);
    while (n - 1 >= h + t && overAt(n - 1) === t) n -= 1;  // the rounding of (t - 1) / r
    if (overAt(n) === t) return { percentile, tailRate: r, queries: n, overLatency: t, minPassing: h };
  }
  const t = overAt(hi);  // not reached: hi itself passes with its t
  return { percentile, tailRate: r, queries: hi, overLatency: t, minPassing: minPassing(t, percentile) };
}
