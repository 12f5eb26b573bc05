/**
 * Completion calls made by the SUT. Each is one synchronous native call that
 * reads the clock first; ids are checked natively and bad ones are counted
 * in the result, never written. Response bytes are copied afterwards, only
 * for samples that go to the accuracy log.
 */
import { activeSeries, wantsResponse } from './active.js';
import { loadNative, type NativeAddon } from './native.js';
import type { QuerySample, QuerySampleResponse } from './types.js';

let native: NativeAddon | undefined;
// Reused between calls: converting a response array costs no allocation
// unless it is larger than any before.
let scratch = new Float64Array(1024);
// A response without data is logged with empty data, as the reference does.
const EMPTY = new Uint8Array(0);

function addon(): NativeAddon {
  return (native ??= loadNative());
}

/** Reports completed samples (the reference's QuerySamplesComplete). */
export function querySamplesComplete(responses: readonly (QuerySampleResponse | QuerySample)[]): void {
  const n = responses.length;
  const lib = addon();
  if (n === 1) {
    lib.completeOne(responses[0]!.id);
  } else {
    // The clock is read before the ids are gathered, so a large batch's
    // latency does not include this loop.
    const stamp = lib.clockNs();
    if (n > scratch.length) scratch = new Float64Array(Math.max(n, scratch.length * 2));
    for (let i = 0; i < n; i++) scratch[i] = responses[i]!.id;
    lib.completeBatch(scratch, n, stamp);
  }
  if (!activeSeries.anySampled) return;
  for (let i = 0; i < n; i++) {
    const response = responses[i] as QuerySampleResponse;
    if (wantsResponse(response.id)) lib.logResponse(response.id, response.data ?? EMPTY);
  }
}

/** Reports one completed sample, with its response bytes if any. */
export function querySampleComplete(id: number, data?: ArrayBufferView | ArrayBuffer): void {
  const lib = addon();
  lib.completeOne(id);
  if (wantsResponse(id)) lib.logResponse(id, data ?? EMPTY);
}

/**
 * Reports many completed samples by id in one boundary crossing: a
 * Float64Array (or Uint32Array while ids stay below 2^32) of sample ids;
 * `count` limits how many elements are read. No response data.
 */
export function querySamplesCompleteIds(ids: Float64Array | Uint32Array, count?: number): void {
  const lib = addon();
  lib.completeBatch(ids, count);
  if (!activeSeries.anySampled) return;
  const n = count ?? ids.length;
  for (let i = 0; i < n; i++) if (wantsResponse(ids[i]!)) lib.logResponse(ids[i]!, EMPTY);
}
