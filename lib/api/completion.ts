/**
 * Completion calls made by the SUT. Each is one synchronous native call that
 * reads the clock first; ids are checked natively and bad ones are counted
 * in the result, never written. Response bytes are copied afterwards, only
 * for samples that go to the accuracy log.
 */
import { activeSeries, wantsResponse } from './active.js';
import { noteHandOver } from '../dispatch/handover.js';
import { loadNative, type NativeAddon } from '../native/index.js';
import type { QuerySample, QuerySampleResponse } from './types.js';

let native: NativeAddon | undefined;
// Reused between calls: converting a response array costs no allocation
// unless it is larger than any before.
let scratch = new Float64Array(1024);
// Token counts parallel to `scratch` (token latencies only).
let tokenScratch = new Float64Array(1024);
// A response without data is logged with empty data, as the reference does.
const EMPTY = new Uint8Array(0);

function addon(): NativeAddon {
  return (native ??= loadNative());
}

/** Reports completed samples (the reference's QuerySamplesComplete). */
export function querySamplesComplete(responses: readonly (QuerySampleResponse | QuerySample)[]): void {
  const n = responses.length;
  const lib = addon();
  if (activeSeries.tokens) {
    completeWithTokens(lib, responses, n);
  } else if (n === 1) {
    noteHandOver(lib.completeOne(responses[0]!.id));
  } else {
    // The clock is read before the ids are gathered, so a large batch's
    // latency does not include this loop.
    const stamp = lib.clockNs();
    if (n > scratch.length) scratch = new Float64Array(Math.max(n, scratch.length * 2));
    for (let i = 0; i < n; i++) scratch[i] = responses[i]!.id;
    noteHandOver(lib.completeBatch(scratch, n, stamp));
  }
  if (!activeSeries.anySampled) return;
  for (let i = 0; i < n; i++) {
    const response = responses[i] as QuerySampleResponse;
    if (wantsResponse(response.id)) lib.logResponse(response.id, response.data ?? EMPTY);
  }
}

// Token latencies: ids and nTokens (missing = 0, which the run reports as an
// error) in one call; the clock is read first, as above.
function completeWithTokens(lib: NativeAddon, responses: readonly (QuerySampleResponse | QuerySample)[], n: number): void {
  const stamp = n === 1 ? undefined : lib.clockNs();
  if (n > scratch.length) scratch = new Float64Array(Math.max(n, scratch.length * 2));
  if (n > tokenScratch.length) tokenScratch = new Float64Array(scratch.length);
  for (let i = 0; i < n; i++) {
    const response = responses[i] as QuerySampleResponse;
    scratch[i] = response.id;
    tokenScratch[i] = response.nTokens ?? 0;
  }
  noteHandOver(lib.completeWithTokens(scratch, tokenScratch, n, stamp));
}

/**
 * Reports one completed sample, with its response bytes if any, and its
 * output token count when the run uses token latencies.
 */
export function querySampleComplete(id: number, data?: ArrayBufferView | ArrayBuffer, nTokens?: number): void {
  const lib = addon();
  if (activeSeries.tokens) {
    scratch[0] = id;
    tokenScratch[0] = nTokens ?? 0;
    noteHandOver(lib.completeWithTokens(scratch, tokenScratch, 1));
  } else {
    noteHandOver(lib.completeOne(id));
  }
  if (wantsResponse(id)) lib.logResponse(id, data ?? EMPTY);
}

/**
 * Token latencies (useTokenLatencies): the first token of sample `id` is
 * ready, timed on entry. `data` is the first-token response, written to the
 * accuracy log as token_data for logged samples. Call it before the sample's
 * completion, once per sample; no effect when the run does not use token
 * latencies.
 */
export function firstTokenComplete(id: number, data?: ArrayBufferView | ArrayBuffer): void {
  addon().firstTokenComplete(id, data);
}

/**
 * Reports many completed samples by id in one boundary crossing: a
 * Float64Array (or Uint32Array while ids stay below 2^32) of sample ids;
 * `count` limits how many elements are read. No response data. With token
 * latencies, `nTokens[i]` is the token count of `ids[i]`.
 */
export function querySamplesCompleteIds(ids: Float64Array | Uint32Array, count?: number, nTokens?: Float64Array): void {
  const lib = addon();
  if (nTokens !== undefined) noteHandOver(lib.completeWithTokens(ids, nTokens, count));
  else noteHandOver(lib.completeBatch(ids, count));
  if (!activeSeries.anySampled) return;
  const n = count ?? ids.length;
  for (let i = 0; i < n; i++) if (wantsResponse(ids[i]!)) lib.logResponse(ids[i]!, EMPTY);
}
