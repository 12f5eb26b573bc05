/**
 * A network SUT's own figures of token streams, for report.html and its
 * summary block: the inter-token latency (the gap between two output events
 * of one response, each stamped with the body read that brought it) and
 * the input length of each response (ResponseOutcome.inputTokens), over the
 * performance series. Recorded without allocation, in fixed memory whatever
 * the run's length: per figure exact counts, sum, minimum and maximum, and
 * a histogram of integer-edged buckets 1 % wide. Each thread writes its own
 * slice (dispatch workers: of a SharedArrayBuffer), summed when reported,
 * as lib/net/node-stats.ts does.
 *
 * Stamps are per read: several events in one read share its stamp, so the
 * gaps between them are 0. That is the truth at the granularity the client
 * sees (a server that writes two tokens before the client reads them);
 * the number of such gaps is reported apart.
 */
import { activeSeries } from '../dispatch/active.js';
import type { SutDistribution } from '../types/api.js';
import type { ResponseReader } from './protocol.js';

const COUNT = 0;
const ZEROS = 1;
const SUM = 2;
const MIN = 3;
const MAX = 4;
/** Input lengths only: successful responses whose input length was not known. */
const UNKNOWN = 5;
const BUCKETS = 6;
/** Bucket b holds the integers in [EDGES[b], EDGES[b + 1]); the last one everything from EDGES[BUCKET_COUNT - 1] (~3e12) on. */
const BUCKET_COUNT = 2900;
const FIGURE_LENGTH = BUCKETS + BUCKET_COUNT;
const ITL = 0;
const INPUT = FIGURE_LENGTH;
/** Float64 values per thread slice: the inter-token latency, then the input lengths. */
export const STREAM_SLICE_LENGTH = 2 * FIGURE_LENGTH;

const INV_LOG_STEP = 1 / Math.log(1.01);
/** EDGES[b] = ceil(1.01^b): integer lower edges, non-decreasing (the first ~70 buckets are mostly empty). */
const EDGES = new Float64Array(BUCKET_COUNT + 1);
for (let b = 0; b <= BUCKET_COUNT; b++) EDGES[b] = Math.ceil(Math.pow(1.01, b));

/** The bucket of an integer v >= 1 (the logarithm's guess, corrected against the edges). */
function bucketOf(v: number): number {
  let b = Math.floor(Math.log(v) * INV_LOG_STEP);
  if (b >= BUCKET_COUNT) return BUCKET_COUNT - 1;
  while (b > 0 && v < EDGES[b]!) b--;
  while (b < BUCKET_COUNT - 1 && v >= EDGES[b + 1]!) b++;
  return b;
}

function add(s: Float64Array, at: number, v: number): void {
  if (s[at + COUNT] === 0 || v < s[at + MIN]!) s[at + MIN] = v;
  if (v > s[at + MAX]!) s[at + MAX] = v;
  s[at + COUNT]!++;
  s[at + SUM]! += v;
  if (v < 1) s[at + ZEROS]!++;
  else s[at + BUCKETS + bucketOf(v)]!++;
}

/** One thread's recorder over its slice. */
export class StreamStatsRecorder {
  constructor(private readonly slice: Float64Array) {}

  /** An output event `gapNs` after the previous one of its response, then `sameRead` more in the same read (gaps of 0). */
  gaps(gapNs: number, sameRead: number): void {
    const s = this.slice;
    add(s, ITL, gapNs > 0 ? Math.round(gapNs) : 0);
    if (sameRead > 0) {
      if (s[ITL + COUNT] === 0 || s[ITL + MIN]! > 0) s[ITL + MIN] = 0;
      s[ITL + COUNT]! += sameRead;
      s[ITL + ZEROS]! += sameRead;
    }
  }

  /** The first read of a response with output brought `events` (> 1: gaps of 0 between them). */
  firstEvents(events: number): void {
    if (events > 1) {
      const s = this.slice;
      if (s[ITL + COUNT] === 0 || s[ITL + MIN]! > 0) s[ITL + MIN] = 0;
      s[ITL + COUNT]! += events - 1;
      s[ITL + ZEROS]! += events - 1;
    }
  }

  /** A successful response's input length (undefined: not known). */
  input(tokens: number | undefined): void {
    if (tokens === undefined) this.slice[INPUT + UNKNOWN]!++;
    else add(this.slice, INPUT, tokens);
  }
}

/** One response's output events so far (the transports keep one per request). */
export interface EventTrace {
  /** The reader's outputEvents() after the last read (0: none yet). */
  events: number;
  /** The stamp of the read that brought the last new event. */
  lastEventNs: number;
}

/**
 * After a read stamped `stampNs` went to `reader`: the output events it
 * added become gaps (recorded in performance series only). A reader
 * without outputEvents(), or one giving no count that grew, adds nothing.
 */
export function traceOutputEvents(trace: EventTrace, reader: ResponseReader, stampNs: number, recorder: StreamStatsRecorder): void {
  if (reader.outputEvents === undefined) return;
  let n: unknown;
  try {
    n = reader.outputEvents();
  } catch {
    return;  // a reader that breaks its contract adds no gaps (its onEnd says what is wrong)
  }
  if (typeof n !== 'number' || !(n > trace.events) || !Number.isSafeInteger(n)) return;
  if (activeSeries.performance) {
    if (trace.events === 0) recorder.firstEvents(n);
    else recorder.gaps(stampNs - trace.lastEventNs, n - trace.events - 1);
  }
  trace.events = n;
  trace.lastEventNs = stampNs;
}

/** Storage for `threads` slices (shared when dispatch workers record too). */
export function createStreamStatsBuffer(threads: number, shared: boolean): Float64Array {
  const bytes = threads * STREAM_SLICE_LENGTH * Float64Array.BYTES_PER_ELEMENT;
  return new Float64Array(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
}

/** Thread `thread`'s slice. */
export function streamSlice(buffer: Float64Array, thread: number): Float64Array {
  return buffer.subarray(thread * STREAM_SLICE_LENGTH, (thread + 1) * STREAM_SLICE_LENGTH);
}

/** One figure summed over every thread's slice of each buffer. */
interface Figure {
  count: number;
  zeros: number;
  sum: number;
  min: number;
  max: number;
  unknown: number;
  buckets: Float64Array;
}

function sumFigure(buffers: readonly Float64Array[], at: number): Figure {
  const f: Figure = { count: 0, zeros: 0, sum: 0, min: 0, max: 0, unknown: 0, buckets: new Float64Array(BUCKET_COUNT) };
  for (const buffer of buffers) {
    for (let t = 0; t < buffer.length / STREAM_SLICE_LENGTH; t++) {
      const s = streamSlice(buffer, t);
      if (s[at + COUNT]! > 0) {
        f.min = f.count === 0 ? s[at + MIN]! : Math.min(f.min, s[at + MIN]!);
        f.max = Math.max(f.max, s[at + MAX]!);
      }
      f.count += s[at + COUNT]!;
      f.zeros += s[at + ZEROS]!;
      f.sum += s[at + SUM]!;
      f.unknown += s[at + UNKNOWN]!;
      for (let b = 0; b < BUCKET_COUNT; b++) f.buckets[b]! += s[at + BUCKETS + b]!;
    }
  }
  return f;
}

/** The value at rank ceil(p * count) (p = 0: the minimum): its bucket's lower edge, within [min, max]. */
function valueAt(f: Figure, p: number): number {
  if (f.count === 0) return 0;
  const rank = Math.max(1, Math.ceil(p * f.count));
  let seen = f.zeros;
  if (seen >= rank) return 0;
  for (let b = 0; b < BUCKET_COUNT; b++) {
    seen += f.buckets[b]!;
    if (seen >= rank) return Math.min(Math.max(EDGES[b]!, f.min), f.max);
  }
  return f.max;
}

/** Display bins whose edges are bucket edges, so each bin's count is exact. */
const DISPLAY_BINS = 60;

/**
 * The CDF's fractions: 200 even steps, the percentiles MLPerf reports, and
 * 20 steps per decade of 1 - p down to 1e-4 (report.html draws the tail as
 * 1 - p on a log axis, p50 to p99.99), as native/report_data.cc gives them.
 */
const CDF_FRACTIONS: readonly number[] = (() => {
  const exact = [0.5, 0.9, 0.95, 0.97, 0.99, 0.995, 0.999, 0.9995, 0.9999];
  const ps = Array.from({ length: 201 }, (_, i) => i / 200);
  for (let k = 7; k <= 80; k++) {
    const p = 1 - Math.pow(10, -k / 20);
    if (!exact.some((e) => Math.abs(p - e) < 1e-9)) ps.push(p);
  }
  ps.push(...exact);
  ps.sort((a, b) => a - b);
  return ps.filter((p, i) => i === 0 || p - ps[i - 1]! > 1e-9);
})();

function distribution(f: Figure, title: string, note: string, unit: 'ns' | 'tokens'): SutDistribution {
  const ps = [...CDF_FRACTIONS];
  // The bins span the smallest value >= 1 to p99.9 (the maximum when the tail is short).
  const positive = f.count - f.zeros;
  const lo = positive > 0 ? Math.max(1, valueAt({ ...f, count: positive, zeros: 0 }, 0)) : 1;
  const q999 = valueAt(f, 0.999);
  let hi = f.max - lo <= 2 * (q999 - lo) ? f.max : q999;
  if (hi <= lo) hi = lo + 1;
  const log = hi / lo > 50;
  const snap = (v: number): number => EDGES[Math.min(bucketOf(Math.max(1, Math.floor(v))), BUCKET_COUNT - 1)]!;
  const edges: number[] = [];
  const linearWithZeros = !log && f.zeros > 0;
  if (linearWithZeros) edges.push(0);
  for (let i = 0; i <= DISPLAY_BINS; i++) {
    const target = log ? lo * Math.pow(hi / lo, i / DISPLAY_BINS) : lo + (i / DISPLAY_BINS) * (hi - lo);
    const edge = snap(target);
    if (edges.length === 0 || edge > edges[edges.length - 1]!) edges.push(edge);
  }
  // The last edge is above hi (bins are [edge, next edge)).
  const top = EDGES[Math.min(bucketOf(Math.max(1, Math.floor(hi))) + 1, BUCKET_COUNT)]!;
  if (top > edges[edges.length - 1]!) edges.push(top);
  const counts = new Array<number>(edges.length - 1).fill(0);
  let above = 0;
  if (linearWithZeros) counts[0]! += f.zeros;
  for (let b = 0, bin = 0; b < BUCKET_COUNT; b++) {
    const n = f.buckets[b]!;
    if (n === 0) continue;
    // No bucket lies below the first edge: that is the smallest value's bucket's (or 0).
    const edge = EDGES[b]!;
    while (bin < counts.length && edge >= edges[bin + 1]!) bin++;
    if (bin >= counts.length) above += n;
    else counts[bin]! += n;
  }
  return {
    title, note, unit,
    count: f.count, min: f.min, max: f.max, mean: f.count > 0 ? f.sum / f.count : 0,
    p: ps, values: ps.map((p) => valueAt(f, p)),
    histogram: { scale: log ? 'log' : 'linear', edges, counts, above, ...(linearWithZeros ? {} : { zeros: f.zeros }) },
  };
}

/** What a network SUT reports of its streams (summary lines and report.html's charts). */
export interface StreamReport {
  lines: string[];
  distributions: Record<string, SutDistribution>;
}

const ms = (ns: number): string => (ns / 1e6).toFixed(3);

/** The figures of every thread's slices in `buffers`; nothing when no response was recorded. */
export function streamReport(buffers: readonly Float64Array[], streamsTokens: boolean): StreamReport | undefined {
  const itl = sumFigure(buffers, ITL);
  const input = sumFigure(buffers, INPUT);
  const lines: string[] = [];
  const distributions: Record<string, SutDistribution> = {};
  if (streamsTokens && itl.count > 0) {
    const mean = itl.sum / itl.count;
    lines.push(`Inter-token latency (ms, between output events of a response, stamped per read) : p50 ${ms(valueAt(itl, 0.5))}, p90 ${ms(valueAt(itl, 0.9))}, ` +
      `p99 ${ms(valueAt(itl, 0.99))}, max ${ms(itl.max)}, mean ${ms(mean)}; ${itl.count} gaps, ${itl.zeros} of them 0 (events in one read)`);
    distributions['inter-token-latency'] = distribution(itl, 'Inter-token latency',
      `Gaps between the output events of each response (performance series), from the stamp of the read that brought each: ${itl.count} gaps, ` +
      `${itl.zeros} of them 0 (events that came in one read). Count, min, max and mean exact; percentiles and bins within 1 %.`, 'ns');
  }
  // A protocol that knows no input length says so only where one is expected (token streams).
  if (input.count > 0 || (streamsTokens && input.unknown > 0)) {
    lines.push(input.count > 0
      ? `Input tokens (per successful response) : p50 ${valueAt(input, 0.5)}, p99 ${valueAt(input, 0.99)}, max ${input.max}, mean ${(input.sum / input.count).toFixed(1)}` +
        `; known for ${input.count} of ${input.count + input.unknown} responses`
      : `Input tokens : known for none of ${input.unknown} responses (the protocol gave no input length)`);
    if (input.count > 0) {
      distributions['input-tokens'] = distribution(input, 'Input length',
        `Input (prompt) tokens of each successful response (performance series), known for ${input.count} of ${input.count + input.unknown}. ` +
        'Count, min, max and mean exact; percentiles and bins within 1 % (exact below 100 tokens).', 'tokens');
    }
  }
  return lines.length > 0 ? { lines, distributions } : undefined;
}
