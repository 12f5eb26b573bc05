/**
 * The JS half of dispatch, without a run: the drain loop (lib/dispatch/drain.ts) and
 * the SingleStream/MultiStream hand-over (lib/dispatch/handover.ts) against a fake
 * addon that only records which queries were marked dispatched.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { drainQueries, newDrainState, startDrainSeries, type DrainState } from '../lib/dispatch/drain.js';
import { HAND_OVER_SLICE_MS, handOver, noteHandOver, resetHandOver } from '../lib/dispatch/handover.js';
import { SAMPLE_INDEX_CHUNK } from '../lib/dispatch/sample-indices.js';
import type { NativeAddon, NativeSeriesInfo } from '../lib/native/index.js';
import type { QuerySample } from '../lib/types/api.js';

/** The QSL index of sample k of the fake series: distinct, unordered, so a wrong slice shows. */
const qslIndexOf = (k: number): number => (k * 37 + 11) % 1009;

/**
 * The addon surface the drain touches, and the one place that reads what it
 * was told: markDispatched(first, end = first + 1, stride = 1) stamps the
 * queries first, first + stride, ... below end. copySampleIndices serves
 * qslIndexOf and counts its calls.
 */
function fakeAddon(): { native: NativeAddon; expectDispatched: (queries: number[]) => void; copies: () => number } {
  const dispatched: number[] = [];
  let copies = 0;
  const markDispatched = (first: number, end = first + 1, stride = 1): void => {
    for (let q = first; q < end; q += stride) dispatched.push(q);
  };
  const copySampleIndices = (_firstId: number, first: number, count: number, dest: Uint32Array): boolean => {
    copies++;
    for (let i = 0; i < count; i++) dest[i] = qslIndexOf(first + i);
    return true;
  };
  const native = { markDispatched, copySampleIndices } as unknown as NativeAddon;
  return {
    native,
    expectDispatched: (queries) => expect([...dispatched].sort((a, b) => a - b)).toEqual(queries),
    copies: () => copies,
  };
}

function seriesInfo(queryCount: number, samplesPerQuery: number, coalesced = false, firstId = 1000): NativeSeriesInfo {
  const samples = queryCount * samplesPerQuery;
  return {
    firstId,
    samplesPerQuery,
    queryCount,
    sampleCount: samples,
    anySampled: false,
    allSampled: false,
    accuracyLogSampled: new Uint8Array(0),
    coalesced,
    tokenLatencies: false,
    performance: true,
  };
}

/** The samples of `queries`, as the SUT must receive them. */
function samplesOf(info: NativeSeriesInfo, queries: number[]): QuerySample[] {
  const spq = info.samplesPerQuery;
  return queries.flatMap((q) =>
    Array.from({ length: spq }, (_, i) => ({ id: info.firstId + q * spq + i, index: qslIndexOf(q * spq + i) })),
  );
}

/** A SUT that records each issueQuery call; `onIssue` runs inside the call. */
function recordingSut(onIssue: (call: number, samples: QuerySample[]) => void = () => {}) {
  const calls: QuerySample[][] = [];
  return {
    calls,
    issueQuery(samples: QuerySample[]) {
      calls.push(samples);
      onIssue(calls.length - 1, samples);
    },
  };
}

function stateFor(info: NativeSeriesInfo, index = 0, stride = 1): DrainState {
  const state = newDrainState();
  startDrainSeries(state, info, index, stride);
  return state;
}

const failOnError = (error: unknown): void => {
  throw error;
};

beforeEach(() => {
  resetHandOver();
  handOver.draining = false;
  handOver.scheduled = false;
});

afterEach(() => {
  vi.restoreAllMocks();
  resetHandOver();
});

describe('drainQueries', () => {
  it('issues each published query once, in order, with its sample ids and QSL indices', () => {
    const info = seriesInfo(10, 3);
    const { native, expectDispatched } = fakeAddon();
    const sut = recordingSut();
    const state = stateFor(info);
    drainQueries(native, sut, state, 4, failOnError);
    expect(sut.calls).toEqual([0, 1, 2, 3].map((q) => samplesOf(info, [q])));
    drainQueries(native, sut, state, 4, failOnError);
    expect(sut.calls).toHaveLength(4);
    drainQueries(native, sut, state, 10, failOnError);
    expect(sut.calls).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((q) => samplesOf(info, [q])));
    expectDispatched([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(handOver.draining).toBe(false);
  });

  it('stride: each registered thread takes every stride-th query from its index; together each query once', () => {
    const info = seriesInfo(11, 2);
    const { native, expectDispatched } = fakeAddon();
    const threads = [0, 1, 2].map((index) => ({ sut: recordingSut(), state: stateFor(info, index, 3) }));
    for (const published of [5, 11]) for (const t of threads) drainQueries(native, t.sut, t.state, published, failOnError);
    expect(threads[0]!.sut.calls).toEqual([0, 3, 6, 9].map((q) => samplesOf(info, [q])));
    expect(threads[1]!.sut.calls).toEqual([1, 4, 7, 10].map((q) => samplesOf(info, [q])));
    expect(threads[2]!.sut.calls).toEqual([2, 5, 8].map((q) => samplesOf(info, [q])));
    expectDispatched([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('coalescing: one issueQuery call takes every query of the thread published so far', () => {
    const info = seriesInfo(12, 2, true);
    const { native, expectDispatched } = fakeAddon();
    const sut = recordingSut();
    const state = stateFor(info);
    drainQueries(native, sut, state, 5, failOnError);
    drainQueries(native, sut, state, 5, failOnError);
    drainQueries(native, sut, state, 8, failOnError);
    expect(sut.calls).toEqual([samplesOf(info, [0, 1, 2, 3, 4]), samplesOf(info, [5, 6, 7])]);
    expectDispatched([0, 1, 2, 3, 4, 5, 6, 7]);

    // With a stride: this thread's queries only, still in one call.
    const strided = recordingSut();
    const other = fakeAddon();
    const second = stateFor(info, 1, 2);
    drainQueries(other.native, strided, second, 7, failOnError);
    drainQueries(other.native, strided, second, 12, failOnError);
    expect(strided.calls).toEqual([samplesOf(info, [1, 3, 5]), samplesOf(info, [7, 9, 11])]);
    other.expectDispatched([1, 3, 5, 7, 9, 11]);
  });

  it('a throwing issueQuery stops the drain with its error; the next drain goes on after that query', () => {
    const info = seriesInfo(6, 1);
    const { native } = fakeAddon();
    const boom = new Error('boom');
    const sut = recordingSut((call) => {
      if (call === 2) throw boom;
    });
    const state = stateFor(info);
    const errors: unknown[] = [];
    drainQueries(native, sut, state, 6, (e) => errors.push(e));
    expect(errors).toEqual([boom]);
    expect(sut.calls).toEqual([0, 1, 2].map((q) => samplesOf(info, [q])));
    expect(handOver.draining).toBe(false);
    drainQueries(native, sut, state, 6, (e) => errors.push(e));
    expect(sut.calls).toEqual([0, 1, 2, 3, 4, 5].map((q) => samplesOf(info, [q])));
    expect(errors).toHaveLength(1);
  });

  it('a promise issueQuery rejects with reaches onError; the drain does not wait for it', async () => {
    const info = seriesInfo(3, 1);
    const { native } = fakeAddon();
    const rejection = new Error('async boom');
    let issued = 0;
    const sut = {
      issueQuery: () => (++issued === 2 ? Promise.reject(rejection) : Promise.resolve()),
    };
    const errors: unknown[] = [];
    drainQueries(native, sut, stateFor(info), 3, (e) => errors.push(e));
    expect(issued).toBe(3);
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual([rejection]);
  });
});

describe('sample indices in chunks', () => {
  it(`QSL indices come from the core ${SAMPLE_INDEX_CHUNK} samples a call, right across chunk edges, on both paths`, () => {
    // 3 samples a query: queries straddle the chunk edges.
    const queries = Math.ceil((2.5 * SAMPLE_INDEX_CHUNK) / 3);
    const info = seriesInfo(queries, 3);
    const all = Array.from({ length: queries }, (_, q) => q);
    const objects = fakeAddon();
    const sut = recordingSut();
    drainQueries(objects.native, sut, stateFor(info), queries, failOnError);
    expect(sut.calls).toEqual(all.map((q) => samplesOf(info, [q])));
    expect(objects.copies()).toBe(3);

    const byIds = fakeAddon();
    const seen: QuerySample[] = [];
    const idsSut = {
      issueQueryIds(ids: Float64Array, indices: Uint32Array, count: number) {
        for (let i = 0; i < count; i++) seen.push({ id: ids[i]!, index: indices[i]! });
      },
    };
    drainQueries(byIds.native, idsSut, stateFor(info), queries, failOnError);
    expect(seen).toEqual(samplesOf(info, all));
    expect(byIds.copies()).toBe(3);
  });

  it('one query larger than a chunk (Offline) is copied whole in one call', () => {
    const spq = SAMPLE_INDEX_CHUNK + 5;
    const info = seriesInfo(1, spq);
    const { native, copies } = fakeAddon();
    let got: number[] = [];
    const sut = {
      issueQueryIds(_ids: Float64Array, indices: Uint32Array, count: number) {
        got = Array.from(indices.subarray(0, count));
      },
    };
    drainQueries(native, sut, stateFor(info), 1, failOnError);
    expect(got).toEqual(Array.from({ length: spq }, (_, k) => qslIndexOf(k)));
    expect(copies()).toBe(1);
  });

  it('when the core runs another series (no indices for this one) the drain issues nothing more', () => {
    const info = seriesInfo(4, 1);
    const { native } = fakeAddon();
    (native as { copySampleIndices: unknown }).copySampleIndices = () => false;
    const sut = recordingSut();
    drainQueries(native, sut, stateFor(info), 4, failOnError);
    expect(sut.calls).toEqual([]);
  });

  it('a drain says whether an issue call returned a promise (poll ends its turn for the microtasks)', () => {
    const info = seriesInfo(4, 1);
    const { native } = fakeAddon();
    const state = stateFor(info);
    drainQueries(native, recordingSut(), state, 2, failOnError);
    expect(state.returnedPromise).toBe(false);
    drainQueries(native, { issueQuery: async () => {} }, state, 4, failOnError);
    expect(state.returnedPromise).toBe(true);
  });
});

describe('hand-over', () => {
  it('a completion inside issueQuery that publishes the next query is drained by the same loop, not by a microtask', async () => {
    const info = seriesInfo(50, 2);
    const { native, expectDispatched } = fakeAddon();
    const later = vi.fn();
    resetHandOver(later);
    // The SUT completes inside issueQuery; the core issues the next query in
    // that completion and returns the new published count.
    const sut = recordingSut((call) => {
      if (call + 1 < 50) noteHandOver(call + 2);
    });
    drainQueries(native, sut, stateFor(info), 1, failOnError);
    expect(sut.calls).toEqual(Array.from({ length: 50 }, (_, q) => samplesOf(info, [q])));
    // Only the query the drain was called for: the core stamped the delivery
    // of each handed-over query when the completing call issued it.
    expectDispatched([0]);
    expect(handOver.scheduled).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(later).not.toHaveBeenCalled();
  });

  it('a completion outside a drain schedules one microtask drain of the highest handed-over count', async () => {
    const drain = vi.fn();
    resetHandOver(drain);
    noteHandOver(undefined);
    expect(handOver.scheduled).toBe(false);
    noteHandOver(3);
    noteHandOver(5);
    noteHandOver(4); // an older count never lowers it
    expect(handOver.published).toBe(5);
    expect(drain).not.toHaveBeenCalled();
    await Promise.resolve();
    expect(drain.mock.calls).toEqual([[5]]);
    expect(handOver.scheduled).toBe(false);
  });

  it('outside a series a hand-over only records the count', () => {
    resetHandOver();
    noteHandOver(7);
    expect(handOver.published).toBe(7);
    expect(handOver.scheduled).toBe(false);
    resetHandOver(vi.fn());
    expect(handOver.published).toBe(0); // a new series restarts the counts
  });

  it(`a drain taking handed-over queries for ${HAND_OVER_SLICE_MS} ms yields to the event loop (setImmediate), then resumes`, async () => {
    const info = seriesInfo(100_000, 1);
    const { native } = fakeAddon();
    const resumed = vi.fn();
    resetHandOver(resumed);
    const sut = recordingSut((call) => noteHandOver(call + 2)); // hands over without end
    // The drain reads the clock at the 1st, 257th, 513th ... handed-over
    // query; each read here is HAND_OVER_SLICE_MS / 2 later than the last,
    // so the third read (query 513) is one slice after the first.
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += HAND_OVER_SLICE_MS / 2));
    drainQueries(native, sut, stateFor(info), 1, failOnError);
    vi.restoreAllMocks();
    expect(sut.calls).toHaveLength(513);
    expect(handOver.published).toBe(514);
    expect(handOver.scheduled).toBe(true);
    await Promise.resolve();
    expect(resumed).not.toHaveBeenCalled(); // not a microtask: I/O and timers run first
    await new Promise((r) => setImmediate(r));
    expect(resumed.mock.calls).toEqual([[514]]);
  });

  it('a drain whose hand-overs take less than a slice takes them all without yielding', () => {
    const info = seriesInfo(2000, 1);
    const { native } = fakeAddon();
    resetHandOver(vi.fn());
    const sut = recordingSut((call) => {
      if (call + 1 < 2000) noteHandOver(call + 2);
    });
    vi.spyOn(performance, 'now').mockReturnValue(42);
    drainQueries(native, sut, stateFor(info), 1, failOnError);
    vi.restoreAllMocks();
    expect(sut.calls).toHaveLength(2000);
    expect(handOver.scheduled).toBe(false);
  });
});
