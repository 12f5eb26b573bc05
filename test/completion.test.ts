/**
 * The completion calls (lib/api/completion.ts, lib/dispatch/active.ts) without a run:
 * what they pass to a fake addon, in which order, and what they hand over.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// The addon as the completion calls see it: every call recorded in order.
// Typed arrays and the response-data array are copied when called (the
// completion calls reuse theirs); data is recorded only when passed, and a
// length in the staging buffer as { staged: its bytes }.
const fake = vi.hoisted(() => {
  const log: unknown[][] = [];
  let clock = 5000;
  let published: number | undefined;
  const staging = new Uint8Array(64);
  const dataArrays: unknown[][] = [];
  const upTo = (ids: Float64Array | Uint32Array, count?: number): number[] => Array.from(ids.subarray(0, count ?? ids.length));
  const dataOf = (data: readonly unknown[] | undefined, count: number): unknown[] => {
    if (data === undefined) return [];
    dataArrays.push(data as unknown[]);
    return [data.slice(0, count)];
  };
  const addon = {
    clockNs(): number {
      clock += 10;
      log.push(['clockNs', clock]);
      return clock;
    },
    responseStaging(): Uint8Array {
      return staging;
    },
    completeOne(id: number, data?: ArrayBufferView | ArrayBuffer | number): number | undefined {
      if (data === undefined) log.push(['completeOne', id]);
      else log.push(['completeOne', id, typeof data === 'number' ? { staged: Array.from(staging.subarray(0, data)) } : data]);
      return published;
    },
    completeBatch(ids: Float64Array | Uint32Array, count?: number, stampNs?: number, data?: readonly unknown[]): number | undefined {
      log.push(['completeBatch', upTo(ids, count), count, stampNs, ...dataOf(data, count ?? ids.length)]);
      return published;
    },
    completeWithTokens(
      ids: Float64Array | Uint32Array, nTokens: Float64Array, count?: number, stampNs?: number, data?: readonly unknown[],
    ): number | undefined {
      log.push(['completeWithTokens', upTo(ids, count), upTo(nTokens, count ?? ids.length), count, stampNs, ...dataOf(data, count ?? ids.length)]);
      return published;
    },
    firstTokenComplete(id: number, data?: ArrayBufferView | ArrayBuffer): void {
      log.push(['firstTokenComplete', id, data]);
    },
  };
  return {
    addon,
    log,
    /** Every response-data array the batch calls were given (as given: lib reuses one). */
    dataArrays,
    /** What the next completion calls return: a hand-over's published count, or undefined. */
    returnPublished(count: number | undefined): void {
      published = count;
    },
    reset(): void {
      log.length = 0;
      dataArrays.length = 0;
      published = undefined;
    },
  };
});

vi.mock('../lib/native/index.js', () => ({ loadNative: () => fake.addon }));

import { setActiveSeries, wantsResponse } from '../lib/dispatch/active.js';
import { firstTokenComplete, querySampleComplete, querySamplesComplete, querySamplesCompleteIds } from '../lib/api/completion.js';
import { handOver, resetHandOver } from '../lib/dispatch/handover.js';
import type { QuerySampleResponse } from '../lib/types/api.js';

/** Responses whose `id` reads are logged, to see when the ids are gathered. */
function watchedResponses(ids: number[]): QuerySampleResponse[] {
  return ids.map((id) => ({
    get id() {
      fake.log.push(['read id', id]);
      return id;
    },
  }));
}

const names = (): unknown[] => fake.log.map((entry) => entry[0]);
const calls = (name: string): unknown[][] => fake.log.filter((entry) => entry[0] === name).map((entry) => entry.slice(1));

beforeEach(() => {
  fake.reset();
  setActiveSeries(0, new Uint8Array(0), false);
  resetHandOver();
  handOver.draining = false;
  handOver.scheduled = false;
});

afterEach(() => {
  resetHandOver();
});

describe('querySamplesComplete', () => {
  it('one response: completeOne with its id, no clock read (the native call stamps it)', () => {
    querySamplesComplete([{ id: 42 }]);
    expect(fake.log).toEqual([['completeOne', 42]]);
  });

  it('a batch: the clock is read before the ids are gathered, and its stamp goes with the ids', () => {
    querySamplesComplete(watchedResponses([7, 3, 9]));
    expect(names()).toEqual(['clockNs', 'read id', 'read id', 'read id', 'completeBatch']);
    const stamp = fake.log[0]![1];
    expect(calls('completeBatch')).toEqual([[[7, 3, 9], 3, stamp, [undefined, undefined, undefined]]]);
  });

  it('a batch larger than any before: every id arrives, and the count limits what is read', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => 10_000 + ((i * 7) % 3000));
    querySamplesComplete(ids.map((id) => ({ id })));
    querySamplesComplete([{ id: 1 }, { id: 2 }]);
    const batches = calls('completeBatch');
    expect(batches[0]![0]).toEqual(ids);
    expect(batches[0]![1]).toBe(3000);
    expect(batches[1]!.slice(0, 2)).toEqual([[1, 2], 2]);
  });

  it('one native call per batch, sampled or not: every response\'s data goes with the ids (the core logs the sampled ones)', () => {
    setActiveSeries(100, Uint8Array.from([0, 1, 0, 1]));
    const data = [0, 1, 2, 3].map((i) => Uint8Array.from([i, i + 1]));
    const outside = Uint8Array.from([9]);
    querySamplesComplete([
      { id: 99, data: outside }, // outside the series
      { id: 100, data: data[0] },
      { id: 101, data: data[1] },
      { id: 102, data: data[2] },
      { id: 103 }, // sampled, no data: logged empty
      { id: 104, data: outside },
    ]);
    expect(names()).toEqual(['clockNs', 'completeBatch']);
    const [[ids, count, , passed]] = calls('completeBatch') as [[number[], number, number, unknown[]]];
    expect(ids).toEqual([99, 100, 101, 102, 103, 104]);
    expect(count).toBe(6);
    // The very objects (no copy), each read once, at its index.
    expect(passed).toHaveLength(6);
    [outside, data[0], data[1], data[2], undefined, outside].forEach((expected, i) => expect(passed[i]).toBe(expected));
    // The reused array keeps no response alive after the call.
    expect(fake.dataArrays[0]!.slice(0, 6)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it("a response's data is read once: what was checked is what the core gets", () => {
    setActiveSeries(100, Uint8Array.from([1, 1]));
    let reads = 0;
    const response = {
      id: 100,
      get data() {
        reads += 1;
        return Uint8Array.from([reads]);
      },
    };
    querySamplesComplete([response]);
    querySamplesComplete([{ id: 101 }, response]);
    expect(reads).toBe(2);
    expect(fake.log[0]).toEqual(['completeOne', 100, { staged: [1] }]);
    expect(Array.from((calls('completeBatch')[0]![3] as Uint8Array[])[1]!)).toEqual([2]);
  });

  it('a bad element after good ones: nothing completed, and the data array is emptied', () => {
    const bytes = Uint8Array.from([1]);
    expect(() => querySamplesComplete([{ id: 1, data: bytes }, { id: 2, data: bytes }, { id: 3, data: 'x' as never }])).toThrow(TypeError);
    expect(fake.dataArrays).toEqual([]);
    querySamplesComplete([{ id: 4 }, { id: 5 }, { id: 6 }]);
    const stamp = calls('clockNs').at(-1)![0];
    expect(calls('completeBatch')).toEqual([[[4, 5, 6], 3, stamp, [undefined, undefined, undefined]]]);
  });

  it('outside a sampled series: the data goes to the core as it is (nothing staged)', () => {
    setActiveSeries(0, new Uint8Array(8));
    expect(wantsResponse(3)).toBe(false);
    const bytes = Uint8Array.from([1]);
    querySamplesComplete([{ id: 3, data: bytes }]);
    querySampleComplete(5, bytes);
    expect(fake.log).toEqual([['completeOne', 3, bytes], ['completeOne', 5, bytes]]);
  });

  it('token latencies: ids and token counts in one call; the clock first for a batch, none for one response', () => {
    setActiveSeries(0, new Uint8Array(0), true);
    const bytes = Uint8Array.from([4]);
    querySamplesComplete([{ id: 5, nTokens: 7, data: bytes }]);
    expect(fake.log).toEqual([['completeWithTokens', [5], [7], 1, undefined, [bytes]]]);
    fake.reset();
    querySamplesComplete([{ id: 1, nTokens: 3 }, { id: 2 } as QuerySampleResponse]);
    expect(names()).toEqual(['clockNs', 'completeWithTokens']);
    // A missing token count is passed as 0, which the run reports as an error.
    expect(calls('completeWithTokens')).toEqual([[[1, 2], [3, 0], 2, fake.log[0]![1], [undefined, undefined]]]);
  });
});

describe('querySamplesComplete rejects what is not an array of responses, before completing anything', () => {
  it.each([
    ['a single response object', { id: 1 }],
    ['a number', 7],
    ['a string', '1,2'],
    ['null', null],
    ['undefined', undefined],
    ['an array-like object', { length: 2, 0: { id: 1 }, 1: { id: 2 } }],
    ['a typed array of ids', Float64Array.from([1, 2])],
  ])('%s: TypeError naming responses', (_what, value) => {
    // A batch first, so a reused buffer holds ids a bad call could complete again.
    querySamplesComplete([{ id: 1 }, { id: 2 }]);
    fake.reset();
    expect(() => querySamplesComplete(value as never)).toThrow(TypeError);
    expect(() => querySamplesComplete(value as never)).toThrow(/responses must be an array of responses/);
    expect(fake.log).toEqual([]);
  });

  it.each([
    ['null', null, /responses\[1\] must be a response/],
    ['a number', 3, /responses\[1\] must be a response/],
    ['an id that is a string', { id: '2' }, /responses\[1\]\.id must be a number, got '2'/],
    ['no id', { data: new Uint8Array(1) }, /responses\[1\]\.id must be a number, got undefined/],
    ['data that is a string', { id: 2, data: 'abc' }, /responses\[1\]\.data must be undefined, an ArrayBuffer or an ArrayBufferView/],
    ['data that is a number', { id: 2, data: 5 }, /responses\[1\]\.data must be/],
    ['data that is an array', { id: 2, data: [1, 2] }, /responses\[1\]\.data must be/],
  ])('an element with %s: TypeError naming it; no id of the batch is completed', (_what, bad, message) => {
    for (const tokens of [false, true]) {
      // Data is checked whether or not the sample goes to the accuracy log.
      setActiveSeries(100, new Uint8Array(4), tokens);
      fake.reset();
      const batch = [{ id: 1 }, bad, { id: 3 }] as never;
      expect(() => querySamplesComplete(batch)).toThrow(TypeError);
      expect(() => querySamplesComplete(batch)).toThrow(message);
      expect(fake.log.filter((entry) => entry[0] !== 'clockNs')).toEqual([]);
      fake.reset();
      if ((bad as { id?: unknown } | null)?.id !== undefined) {
        expect(() => querySamplesComplete([bad] as never)).toThrow(new RegExp(message.source.replace('[1\\]', '[0\\]')));
        expect(fake.log).toEqual([]);
      }
    }
  });

  it('accepts ArrayBuffer, typed array, DataView and Buffer data', () => {
    const buffer = new ArrayBuffer(2);
    querySamplesComplete([
      { id: 1, data: buffer },
      { id: 2, data: new Uint16Array(1) },
      { id: 3, data: new DataView(buffer) },
      { id: 4, data: Buffer.from([1]) },
      { id: 5 },
    ]);
    expect(calls('completeBatch')[0]![0]).toEqual([1, 2, 3, 4, 5]);
  });

  it('caps a long string it echoes', () => {
    const long = 'x'.repeat(100_000);
    let message = '';
    try {
      querySamplesComplete([{ id: long }] as never);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/responses\[0\]\.id must be a number/);
    expect(message.length).toBeLessThan(400);
  });
});

describe('querySampleComplete checks its arguments before completing', () => {
  it('querySampleComplete: id must be a number, data a buffer, nTokens and stampNs numbers', () => {
    expect(() => querySampleComplete('1' as never)).toThrow(/querySampleComplete\(id, data\?, nTokens\?, stampNs\?\): id must be a number, got '1'/);
    expect(() => querySampleComplete(1, undefined, undefined, 'now' as never)).toThrow(/stampNs must be a number \(a clockNs\(\) reading\), got 'now'/);
    expect(() => querySampleComplete(undefined as never)).toThrow(TypeError);
    expect(() => querySampleComplete(1, 'abc' as never)).toThrow(/data must be undefined, an ArrayBuffer or an ArrayBufferView/);
    expect(() => querySampleComplete(1, 42 as never)).toThrow(TypeError);
    expect(() => querySampleComplete(1, undefined, '3' as never)).toThrow(/nTokens must be a number/);
    expect(fake.log).toEqual([]);
  });
});

describe('querySampleComplete', () => {
  it('one completeOne call, sampled or not, with the response: a small Uint8Array of a logged sample copied to the staging buffer', () => {
    setActiveSeries(10, Uint8Array.from([1, 0]));
    const bytes = Uint8Array.from([1, 2, 3]);
    querySampleComplete(10, bytes);
    querySampleComplete(11, bytes);
    querySampleComplete(10);
    expect(fake.log).toEqual([['completeOne', 10, { staged: [1, 2, 3] }], ['completeOne', 11, bytes], ['completeOne', 10]]);
  });

  it('a logged sample\'s Buffer and empty Uint8Array are staged; a larger one, other views and an ArrayBuffer go as they are', () => {
    setActiveSeries(10, Uint8Array.from([1]));
    const large = new Uint8Array(65).fill(7);
    const floats = Float32Array.from([1.5]);
    const view = new DataView(new ArrayBuffer(2));
    const buffer = new ArrayBuffer(3);
    for (const data of [Buffer.from([5, 6]), new Uint8Array(0), new Uint8Array(64).fill(2), large, floats, view, buffer]) querySampleComplete(10, data);
    expect(fake.log).toEqual([
      ['completeOne', 10, { staged: [5, 6] }],
      ['completeOne', 10, { staged: [] }],
      ['completeOne', 10, { staged: new Array(64).fill(2) }],
      ['completeOne', 10, large],
      ['completeOne', 10, floats],
      ['completeOne', 10, view],
      ['completeOne', 10, buffer],
    ]);
  });

  it('with a stamp: completeBatch with the id, the stamp and the response', () => {
    setActiveSeries(10, Uint8Array.from([1]));
    const bytes = Uint8Array.from([1]);
    querySampleComplete(10, bytes, undefined, 7000);
    expect(fake.log).toEqual([['completeBatch', [10], 1, 7000, [bytes]]]);
    expect(fake.dataArrays[0]![0]).toBeUndefined();
  });

  it('token latencies: completeWithTokens with its id, token count and response', () => {
    setActiveSeries(0, new Uint8Array(0), true);
    const bytes = Uint8Array.from([3]);
    querySampleComplete(8, bytes, 12);
    querySampleComplete(9);
    expect(fake.log).toEqual([
      ['completeWithTokens', [8], [12], 1, undefined, [bytes]],
      ['completeWithTokens', [9], [0], 1, undefined, [undefined]],
    ]);
  });
});

describe('querySamplesCompleteIds', () => {
  it("passes the caller's array and count as they are, in one call and with no data (the core logs sampled ids with empty data)", () => {
    setActiveSeries(10, Uint8Array.from([0, 1, 0, 1]));
    querySamplesCompleteIds(Float64Array.from([10, 11, 12, 13]), 3);
    querySamplesCompleteIds(Float64Array.from([11]), 1);
    expect(fake.log).toEqual([['completeBatch', [10, 11, 12], 3, undefined], ['completeOne', 11]]);
  });

  it('with token counts: completeWithTokens', () => {
    querySamplesCompleteIds(Uint32Array.from([4, 5]), undefined, Float64Array.from([2, 3]));
    expect(fake.log).toEqual([['completeWithTokens', [4, 5], [2, 3], undefined, undefined]]);
  });
});

describe('firstTokenComplete', () => {
  it('forwards the id and the first-token data', () => {
    const bytes = Uint8Array.from([7]);
    firstTokenComplete(3, bytes);
    expect(fake.log).toEqual([['firstTokenComplete', 3, bytes]]);
  });
});

describe('completion and hand-over', () => {
  it('a completion that returns a published count hands it over: drained in a microtask, not inside the call', async () => {
    const drain = vi.fn();
    resetHandOver(drain);
    fake.returnPublished(4);
    querySamplesComplete([{ id: 1 }]);
    expect(handOver.published).toBe(4);
    expect(drain).not.toHaveBeenCalled();
    await Promise.resolve();
    expect(drain.mock.calls).toEqual([[4]]);

    fake.returnPublished(6);
    querySamplesComplete([{ id: 2 }, { id: 3 }]);
    querySamplesCompleteIds(Float64Array.from([4]));
    await Promise.resolve();
    expect(drain.mock.calls).toEqual([[4], [6]]);
  });

  it('a completion that issued nothing (undefined) hands nothing over', async () => {
    const drain = vi.fn();
    resetHandOver(drain);
    querySampleComplete(1);
    querySamplesComplete([{ id: 2 }, { id: 3 }]);
    await Promise.resolve();
    expect(handOver.published).toBe(0);
    expect(drain).not.toHaveBeenCalled();
  });
});
