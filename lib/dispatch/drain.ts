/**
 * Hands published queries to a SUT: the one loop shared by the thread that
 * runs the test and by registered issue-query threads. A thread takes every
 * `stride`-th query starting at its index. With server_coalesce_queries a
 * drain hands its whole backlog to one issueQuery call (spec/30 §7: the
 * reference merges every query already due when it issues one; a backlog
 * exists exactly when this thread was too busy to take queries on time).
 */
import { HAND_OVER_SLICE_MS, handOver, yieldHandOver } from './handover.js';
import { issueLent, lendable, newLentQuery, type LentQuery } from './lent-query.js';
import { coverSamples, newSampleIndexWindow, resetSampleIndexWindow, type SampleIndexWindow } from './sample-indices.js';
import type { NativeAddon, NativeSeriesInfo } from '../native/index.js';
import type { QuerySample, SystemUnderTest } from '../types/api.js';

export interface DrainState {
  /** Next query of this thread. */
  cursor: number;
  stride: number;
  firstId: number;
  samplesPerQuery: number;
  /** The QSL indices of the samples being issued (lib/dispatch/sample-indices.ts). */
  sampleIndex: SampleIndexWindow;
  coalesced: boolean;
  /** The arrays issueQueryIds gets (lib/dispatch/lent-query.ts). */
  lent: LentQuery;
  /** A call of the latest drain returned a promise (the SUT may complete in microtasks). */
  returnedPromise: boolean;
}

export function newDrainState(): DrainState {
  return {
    cursor: 0,
    stride: 1,
    firstId: 0,
    samplesPerQuery: 1,
    sampleIndex: newSampleIndexWindow(),
    coalesced: false,
    lent: newLentQuery(),
    returnedPromise: false,
  };
}

/** A new series: this thread gets queries index, index + stride, ... */
export function startDrainSeries(state: DrainState, info: NativeSeriesInfo, index = 0, stride = 1): void {
  state.cursor = index;
  state.stride = Math.max(1, stride);
  state.firstId = info.firstId;
  state.samplesPerQuery = info.samplesPerQuery;
  resetSampleIndexWindow(state.sampleIndex, info.firstId, info.sampleCount);
  state.coalesced = info.coalesced === true;
}

/**
 * What a SUT's issue call returned: a promise's rejection goes to `onError`
 * (a synchronous throw is the caller's). Returns whether it was a promise.
 */
export function watchRejection(returned: unknown, onError: (error: unknown) => void): boolean {
  if (returned === undefined || returned === null || typeof (returned as Promise<void>).then !== 'function') return false;
  (returned as Promise<void>).then(undefined, onError);
  return true;
}

/**
 * Issues this thread's queries below `published`, then those that completion
 * calls made during the drain handed over (lib/dispatch/handover.ts), through
 * sut.issueQueryIds when it has one, else sut.issueQuery. `onError` gets what
 * it threw (or its promise rejected with); a throw stops the drain.
 */
export function drainQueries(
  native: NativeAddon,
  sut: Pick<SystemUnderTest, 'issueQuery' | 'issueQueryIds'>,
  state: DrainState,
  published: number,
  onError: (error: unknown) => void,
): void {
  const outer = handOver.draining;
  handOver.draining = true;
  state.returnedPromise = false;
  try {
    if (typeof sut.issueQueryIds === 'function') drainIdsLoop(native, sut, state, published, onError);
    else drainLoop(native, sut, state, published, onError);
  } finally {
    handOver.draining = outer;
  }
}

// drainLoop and drainIdsLoop are one loop written twice: with the filling
// of the call's argument in a function of its own, V8 did not inline it and
// SingleStream lost ~8 % (6.4 -> 5.9 M queries/s).

function drainLoop(
  native: NativeAddon,
  sut: Pick<SystemUnderTest, 'issueQuery'>,
  state: DrainState,
  published: number,
  onError: (error: unknown) => void,
): void {
  const { stride, samplesPerQuery: spq, firstId, coalesced } = state;
  const window = state.sampleIndex;
  // The window's fields in locals, refreshed when it moves: read per query otherwise.
  let { indices: sampleIndex, start, end: windowEnd } = window;
  // Queries from here on were handed over inside this drain's calls: the
  // core stamped their delivery when it issued them (they reach the SUT as
  // the completing call returns), so no markDispatched call per query.
  const handedFrom = published;
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
    // The series is over when the core has no indices for it: none to issue.
    // (Only the end is checked: a thread's queries only move forward, and
    // startDrainSeries empties the window.)
    if (end * spq > windowEnd) {
      if (!coverSamples(native, window, q * spq, end * spq)) return;
      ({ indices: sampleIndex, start, end: windowEnd } = window);
    }
    const samples: QuerySample[] = new Array(queries * spq);
    let n = 0;
    for (let j = q; j < end; j += stride) {
      const base = j * spq;
      for (let i = 0; i < spq; i++) samples[n++] = { id: firstId + base + i, index: sampleIndex[base - start + i]! };
    }
    if (q < handedFrom) native.markDispatched(q, end, stride);
    let returned: unknown;
    try {
      returned = sut.issueQuery!(samples);
    } catch (error) {
      onError(error);
      return;
    }
    if (watchRejection(returned, onError)) state.returnedPromise = true;
  }
}

/** drainLoop for a SUT with issueQueryIds: the same queries, as lent typed arrays. */
function drainIdsLoop(
  native: NativeAddon,
  sut: Pick<SystemUnderTest, 'issueQueryIds'>,
  state: DrainState,
  published: number,
  onError: (error: unknown) => void,
): void {
  const { stride, samplesPerQuery: spq, firstId, coalesced } = state;
  const window = state.sampleIndex;
  let { indices: sampleIndex, start, end: windowEnd } = window;  // as in drainLoop
  const handedFrom = published;  // as in drainLoop
  let handed = 0;
  let sliceStart = 0;
  for (;;) {
    if (state.cursor >= published) {
      if (handOver.published <= published) return;
      published = handOver.published;
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
    const end = coalesced ? published : q + 1;
    const queries = Math.ceil((end - q) / stride);
    state.cursor = q + queries * stride;
    if (end * spq > windowEnd) {
      if (!coverSamples(native, window, q * spq, end * spq)) return;
      ({ indices: sampleIndex, start, end: windowEnd } = window);
    }
    const count = queries * spq;
    const lent = lendable(state.lent, count);
    const { ids, indices } = lent;
    if (queries === 1 && spq > 64) {
      // One large query (Offline, big MultiStream): the indices in one copy.
      const base = q * spq;
      indices.set(sampleIndex.subarray(base - start, base - start + spq));
      for (let i = 0; i < spq; i++) ids[i] = firstId + base + i;
    } else {
      let n = 0;
      for (let j = q; j < end; j += stride) {
        const base = j * spq;
        for (let i = 0; i < spq; i++, n++) {
          ids[n] = firstId + base + i;
          indices[n] = sampleIndex[base - start + i]!;
        }
      }
    }
    if (q < handedFrom) native.markDispatched(q, end, stride);
    let returned: unknown;
    try {
      returned = issueLent(sut, lent, count);
    } catch (error) {
      onError(error);
      return;
    }
    if (watchRejection(returned, onError)) state.returnedPromise = true;
  }
}
