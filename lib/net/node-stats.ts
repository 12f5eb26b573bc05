/**
 * Per-node request statistics, recorded without allocation: counters and a
 * log-bucket latency histogram (1% wide buckets) in one Float64Array per
 * node and thread. The arrays may live in a SharedArrayBuffer: each dispatch
 * worker writes only its own slices and the main thread sums them, so no
 * atomics are needed on the request path.
 */
import { FAILURE_KINDS, type FailureKind } from './protocol.js';
import type { NetworkNodeStats } from './types.js';

export { FAILURE_KINDS };

const REQUESTS = 0;
const COMPLETED = 1;
const FAILED = 2;  // FAILURE_KINDS.length counters
const SUM_NS = FAILED + FAILURE_KINDS.length;
const MAX_NS = SUM_NS + 1;
const MEASURED = MAX_NS + 1;
const BUCKETS = MEASURED + 1;
/** Bucket i holds latencies in [1.01^i, 1.01^(i+1)) ns; the last one everything from ~2800 s on. */
const BUCKET_COUNT = 2900;
const INV_LOG_STEP = 1 / Math.log(1.01);
/** Float64 values per node slice. */
export const NODE_SLICE_LENGTH = BUCKETS + BUCKET_COUNT;

/** A kind's counter, in the order of the core's table. */
const FAILURE_INDEX = Object.fromEntries(FAILURE_KINDS.map((k, i) => [k, i])) as Record<FailureKind, number>;

/** One thread's view of one node's slice. */
export class NodeStatsRecorder {
  constructor(private readonly slice: Float64Array) {}

  requested(): void {
    this.slice[REQUESTS]!++;
  }

  completed(latencyNs: number): void {
    const s = this.slice;
    s[COMPLETED]!++;
    const ns = latencyNs > 1 ? latencyNs : 1;
    s[SUM_NS]! += ns;
    if (ns > s[MAX_NS]!) s[MAX_NS] = ns;
    s[MEASURED]!++;
    const b = Math.floor(Math.log(ns) * INV_LOG_STEP);
    s[BUCKETS + (b < BUCKET_COUNT ? b : BUCKET_COUNT - 1)]!++;
  }

  failed(kind: FailureKind): void {
    this.slice[FAILED + FAILURE_INDEX[kind]]!++;
  }

  /**
   * A response another recorder counted as completed failed afterwards (the
   * native client counts a 2xx read whole; the protocol's reader then found
   * it malformed): one completed less, one failed more. Its latency stays
   * among the responses read whole.
   */
  reclassified(kind: FailureKind): void {
    this.slice[COMPLETED]!--;
    this.slice[FAILED + FAILURE_INDEX[kind]]!++;
  }
}

/** Storage for `threads` × `nodes` slices (shared when workers record too). */
export function createStatsBuffer(nodes: number, threads: number, shared: boolean): Float64Array {
  const bytes = nodes * threads * NODE_SLICE_LENGTH * Float64Array.BYTES_PER_ELEMENT;
  return new Float64Array(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
}

/** The slice of node `node` for thread `thread`. */
export function nodeSlice(buffer: Float64Array, nodes: number, thread: number, node: number): Float64Array {
  const start = (thread * nodes + node) * NODE_SLICE_LENGTH;
  return buffer.subarray(start, start + NODE_SLICE_LENGTH);
}

/** Sums every thread's slices of node `node` (in each of `buffers`) into the public figures. */
export function summarizeNode(
  buffers: readonly Float64Array[],
  nodes: number,
  node: number,
  origin: string,
  name: string,
): NetworkNodeStats {
  const total = new Float64Array(NODE_SLICE_LENGTH);
  let max = 0;
  for (const buffer of buffers) {
    const threads = buffer.length / (nodes * NODE_SLICE_LENGTH);
    for (let t = 0; t < threads; t++) {
      const s = nodeSlice(buffer, nodes, t, node);
      for (let i = 0; i < NODE_SLICE_LENGTH; i++) if (i !== MAX_NS) total[i]! += s[i]!;
      if (s[MAX_NS]! > max) max = s[MAX_NS]!;
    }
  }
  const failed = {} as Record<FailureKind, number>;
  for (const kind of FAILURE_KINDS) failed[kind] = total[FAILED + FAILURE_INDEX[kind]]!;
  const measured = total[MEASURED]!;
  const percentile = (p: number): number => {
    if (measured === 0) return 0;
    // The sample at rank ceil(p × n), as the reference picks percentiles.
    const rank = Math.max(1, Math.ceil(p * measured));
    let seen = 0;
    for (let b = 0; b < BUCKET_COUNT; b++) {
      seen += total[BUCKETS + b]!;
      // The bucket's middle, never above the largest latency seen.
      if (seen >= rank) return Math.min(Math.round(Math.pow(1.01, b + 0.5)), max);
    }
    return max;
  };
  return {
    origin,
    name,
    requests: total[REQUESTS]!,
    completed: total[COMPLETED]!,
    failed,
    latencyNs: {
      p50: percentile(0.5),
      p90: percentile(0.9),
      p99: percentile(0.99),
      max,
      mean: measured === 0 ? 0 : Math.round(total[SUM_NS]! / measured),
      measured,
    },
  };
}
