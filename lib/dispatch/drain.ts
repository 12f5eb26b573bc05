/**
 * Hands published queries to a SUT: the one loop shared by the thread that
 * runs the test and by registered issue-query threads. A thread takes every
 * `stride`-th query starting at its index. With server_coalesce_queries a
 * drain hands its whole backlog to one issueQuery call (spec/30 §7: the
 * reference merges every query already due when it issues one; a backlog
 * exists exactly when this thread was too busy to take queries on time).
 */
import { HAND_OVER_SLICE_MS, handOver, yieldHandOver } from './handover.js';
import type { NativeAddon, NativeSeriesInfo } from '../native/index.js';
import type { QuerySample, SystemUnderTest } from '../api/types.js';

export interface DrainState {
  /** Next query of this thread. */
  cursor: number;
  stride: number;
  firstId: number;
  samplesPerQuery: number;
  sampleIndex: Uint32Array;
  coalesced: boolean;
}

export function newDrainState(): DrainState {
  return { cursor: 0, stride: 1, firstId: 0, samplesPerQuery: 1, sampleIndex: new Uint32Array(0), coalesced: false };
}

/** A new series: this thread gets queries index, index + stride, ... */
export function startDrainSeries(state: DrainState, info: NativeSeriesInfo, index = 0, stride = 1): void {
  state.cursor = index;
  state.stride = Math.max(1, stride);
  state.firstId = info.firstId;
  state.samplesPerQuery = info.samplesPerQuery;
  state.sampleIndex = info.sampleIndex;
  state.coalesced = info.coalesced === true;
}

/**
 * Issues this thread's queries below `published`, then those that completion
 * calls made during the drain handed over (lib/dispatch/handover.ts). `onError` gets
 * what issueQuery threw (or its promise rejected with); a throw stops the drain.
 */
export function drainQueries(
  native: NativeAddon,
  sut: Pick<SystemUnderTest, 'issueQuery'>,
  state: DrainState,
  published: number,
  onError: (error: unknown) => void,
): void {
  const outer = handOver.draining;
  handOver.draining = true;
  try {
    drainLoop(native, sut, state, published, onError);
  } finally {
    handOver.draining = outer;
  }
}

function drainLoop(
  native: NativeAddon,
  sut: Pick<SystemUnderTest, 'issueQuery'>,
  state: DrainState,
  published: number,
  onError: (error: unknown) => void,
): void {
  const { stride, samplesPerQuery: spq, firstId, sampleIndex, coalesced } = state;
  let handed = 0;
  let sliceStart = 0;
  for (;;) {
    if (state.cursor >= published) {
      if (handOver.published <= published) return;
      published = handOver.published;
      // Handed-over queries keep coming while the SUT completes inside
      // issueQuery: give the event loop a turn every few milliseconds.
      if ((++handed & 255) === 1) {
        const now = performance.now();
        if (handed === 1) sliceStart = now;
        else if (now - sliceStart >= HAND_OVER_SLICE_MS) {
          yieldHandOver();
          return;
        }
      }
    }
    const q = state.cursor;
    // One issueQuery call: this query, or with coalescing every query of this
    // thread published so far (all are due: the core publishes on time).
    const end = coalesced ? published : q + 1;
    const queries = Math.ceil((end - q) / stride);
    state.cursor = q + queries * stride;
    const samples: QuerySample[] = new Array(queries * spq);
    let n = 0;
    for (let j = q; j < end; j += stride) {
      const base = j * spq;
      for (let i = 0; i < spq; i++) samples[n++] = { id: firstId + base + i, index: sampleIndex[base + i]! };
    }
    native.markDispatched(q, end, stride);
    let returned: unknown;
    try {
      returned = sut.issueQuery(samples);
    } catch (error) {
      onError(error);
      return;
    }
    if (returned !== undefined && returned !== null && typeof (returned as Promise<void>).then === 'function') {
      (returned as Promise<void>).then(undefined, onError);
    }
  }
}
