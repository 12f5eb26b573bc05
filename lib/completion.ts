/**
 * Completion calls made by the SUT. Each is one synchronous native call that
 * reads the clock first; ids are checked natively and bad ones are counted
 * in the result, never written.
 */
import { loadNative, type NativeAddon } from './native.js';
import type { QuerySample, QuerySampleResponse } from './types.js';

let native: NativeAddon | undefined;
// Reused between calls: converting a response array costs no allocation
// unless it is larger than any before.
let scratch = new Float64Array(1024);

function addon(): NativeAddon {
  return (native ??= loadNative());
}

/** Reports completed samples (the reference's QuerySamplesComplete). */
export function querySamplesComplete(responses: readonly (QuerySampleResponse | QuerySample)[]): void {
  const n = responses.length;
  if (n === 1) {
    addon().completeOne(responses[0]!.id);
    return;
  }
  if (n > scratch.length) scratch = new Float64Array(Math.max(n, scratch.length * 2));
  for (let i = 0; i < n; i++) scratch[i] = responses[i]!.id;
  addon().completeBatch(scratch, n);
}

/** Reports one completed sample. */
export function querySampleComplete(id: number, _data?: ArrayBufferView | ArrayBuffer): void {
  addon().completeOne(id);
}

/**
 * Reports many completed samples by id in one boundary crossing: a
 * Float64Array (or Uint32Array while ids stay below 2^32) of sample ids;
 * `count` limits how many elements are read.
 */
export function querySamplesCompleteIds(ids: Float64Array | Uint32Array, count?: number): void {
  addon().completeBatch(ids, count);
}
