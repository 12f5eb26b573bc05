/**
 * Completion calls made by the SUT. Each is one synchronous native call that
 * reads the clock first; ids are checked natively and bad ones are counted
 * in the result, never written. The same call writes the response bytes of
 * the samples that go to the accuracy log (the core decides which, after
 * stamping the completion, and reads only theirs). Arguments of the wrong
 * type are a TypeError before anything is completed (one type test per
 * value, each value read once; the native side checks again what it reads).
 */
import { activeSeries, wantsResponse } from '../dispatch/active.js';
import { describe } from './checks.js';
import { noteHandOver } from '../dispatch/handover.js';
import { lentIdsMisuse } from '../dispatch/lent-query.js';
import { loadNative, type NativeAddon } from '../native/index.js';
import type { FailureKind } from '../types/failure-kinds.js';
import type { QuerySample, QuerySampleResponse } from '../types/api.js';

let native: NativeAddon | undefined;
// Reused between calls: converting a response array costs no allocation
// unless it is larger than any before.
let scratch = new Float64Array(1024);
// Token counts parallel to `scratch` (token latencies only).
let tokenScratch = new Float64Array(1024);
// Response data parallel to `scratch` (undefined: none, logged empty as the
// reference does): the core reads the accuracy-logged samples' from it. Dense
// and only ever holding checked values; emptied after each call, so it keeps
// no response alive.
const dataScratch: (ArrayBufferView | ArrayBuffer | undefined)[] = [];
// The addon's staging buffer (responseStaging()): a single completion copies
// a small Uint8Array response here itself and passes its length instead.
let staging: Uint8Array | undefined;

function addon(): NativeAddon {
  return (native ??= loadNative());
}

/**
 * Reports completed samples (the reference's QuerySamplesComplete):
 * `responses` is an array of `{ id, data? }` responses or of the query's
 * samples. Anything else, an element without a numeric `id`, or `data` that
 * is not an ArrayBuffer or ArrayBufferView, is a TypeError and completes nothing.
 */
export function querySamplesComplete(responses: readonly (QuerySampleResponse | QuerySample)[]): void {
  // Before `length` is read: a non-array has none that can be trusted, and
  // the reused scratch buffer must never be completed from.
  if (!Array.isArray(responses)) throw notResponses(responses);
  const n = responses.length;
  const lib = addon();
  if (activeSeries.tokens) {
    completeWithTokens(lib, responses, n);
  } else if (n === 1) {
    const id = checkedId(responses[0], 0);
    const data = dataScratch[0];
    dataScratch[0] = undefined;
    if (id !== id) misused('querySamplesComplete(responses)');
    noteHandOver(lib.completeOne(id, data !== undefined && wantsResponse(id) ? staged(lib, data) : data));
  } else {
    // The clock is read before the ids are gathered, so a large batch's
    // latency does not include this loop.
    const stamp = lib.clockNs();
    if (n > scratch.length) scratch = new Float64Array(Math.max(n, scratch.length * 2));
    try {
      for (let i = 0; i < n; i++) scratch[i] = checkedId(responses[i], i);
      if (scratch[0] !== scratch[0]) misused('querySamplesComplete(responses)');
      noteHandOver(lib.completeBatch(scratch, n, stamp, dataScratch));
    } finally {
      dataScratch.fill(undefined, 0, n);
    }
  }
}

// Token latencies: ids and nTokens (missing = 0, which the run reports as an
// error) in one call; the clock is read first, as above.
function completeWithTokens(lib: NativeAddon, responses: readonly (QuerySampleResponse | QuerySample)[], n: number): void {
  const stamp = n === 1 ? undefined : lib.clockNs();
  if (n > scratch.length) scratch = new Float64Array(Math.max(n, scratch.length * 2));
  if (n > tokenScratch.length) tokenScratch = new Float64Array(scratch.length);
  try {
    for (let i = 0; i < n; i++) {
      const response = responses[i] as QuerySampleResponse;
      scratch[i] = checkedId(response, i);
      tokenScratch[i] = response.nTokens ?? 0;
    }
    if (n !== 0 && scratch[0] !== scratch[0]) misused('querySamplesComplete(responses)');
    noteHandOver(lib.completeWithTokens(scratch, tokenScratch, n, stamp, dataScratch));
  } finally {
    dataScratch.fill(undefined, 0, n);
  }
}

/**
 * The id of `responses[i]` when it is a response (or sample) with valid
 * data, which goes to dataScratch[i] (read once: what was checked is what
 * is logged); throws otherwise.
 */
function checkedId(response: QuerySampleResponse | QuerySample | undefined, i: number): number {
  if (typeof response === 'object' && response !== null) {
    const id = response.id;
    const data = (response as QuerySampleResponse).data;
    if (typeof id === 'number' && (data === undefined || isBytes(data))) {
      dataScratch[i] = data;
      return id;
    }
  }
  throw badResponse(response, i);
}

/**
 * The response of a logged sample as completeOne takes it: a Uint8Array (or
 * Buffer) of up to the staging buffer's size is copied into it here and its
 * length passed instead. V8 keeps such small typed arrays inside its heap,
 * and the addon could read their bytes only after V8 moved them out (an
 * allocation of ~0.3-0.5 µs, measured); JS copies them in place. Anything
 * else is passed as it is.
 */
function staged(lib: NativeAddon, data: ArrayBufferView | ArrayBuffer): ArrayBufferView | ArrayBuffer | number {
  if (!(data instanceof Uint8Array)) return data;
  const bytes = (staging ??= lib.responseStaging());
  const n = data.length;
  if (n > bytes.length) return data;
  // A loop, not set(): compiled inline, a few bytes cost less than the builtin's call.
  for (let i = 0; i < n; i++) bytes[i] = data[i]!;
  return n;
}

function isBytes(data: unknown): boolean {
  return ArrayBuffer.isView(data) || data instanceof ArrayBuffer;
}

// Echoed values are short: a SUT's bad value may be any size.
function shown(value: unknown): string {
  return typeof value === 'string' && value.length > 40 ? `${describe(value.slice(0, 40))}... (${value.length} characters)` : describe(value);
}

function notResponses(value: unknown): TypeError {
  const hint = ArrayBuffer.isView(value) ? ' (for a typed array of ids use querySamplesCompleteIds)' : '';
  return new TypeError(
    `querySamplesComplete(responses): responses must be an array of responses ({ id, data? }) or of the query's samples, got ${shown(value)}${hint}`,
  );
}

function badResponse(response: unknown, i: number): TypeError {
  const at = `querySamplesComplete(responses): responses[${i}]`;
  if (typeof response !== 'object' || response === null)
    return new TypeError(`${at} must be a response ({ id, data? }) or a sample, got ${shown(response)}`);
  const { id, data } = response as { id?: unknown; data?: unknown };
  if (typeof id !== 'number') return new TypeError(`${at}.id must be a number, got ${shown(id)}`);
  return new TypeError(`${at}.data must be undefined, an ArrayBuffer or an ArrayBufferView (typed array, Buffer, DataView), got ${shown(data)}`);
}

/**
 * Reports one completed sample, with its response bytes if any, and its
 * output token count when the run uses token latencies. `stampNs` is when
 * the response was read, a {@link clockNs} reading taken before parsing it
 * (absent: now); one before the series started, before the sample's query
 * was issued, before its first token or in the future counts as now.
 *
 * With token latencies (not Offline), a sample completed by any completion
 * call before its {@link firstTokenComplete} is a failed sample of kind
 * `no_first_token` (counted in `result.errors.failedSamples` and in
 * `result.tokens.errors.missingFirstToken`, a 'Sample failed
 * (no_first_token)' detail-log line, the run INVALID), never a completed
 * sample without a first-token latency. A count below 2 tokens is a token
 * error (logged, as the reference does) and gives the sample no TPOT.
 */
export function querySampleComplete(id: number, data?: ArrayBufferView | ArrayBuffer, nTokens?: number, stampNs?: number): void {
  if (typeof id !== 'number' || (data !== undefined && !isBytes(data)) || (nTokens !== undefined && typeof nTokens !== 'number') ||
    (stampNs !== undefined && typeof stampNs !== 'number'))
    throw badSingleCompletion(id, data, nTokens, stampNs);
  if (id !== id) misused('querySampleComplete(id)');
  const lib = addon();
  if (stampNs === undefined && !activeSeries.tokens) {
    noteHandOver(lib.completeOne(id, data !== undefined && wantsResponse(id) ? staged(lib, data) : data));
    return;
  }
  scratch[0] = id;
  dataScratch[0] = data;
  try {
    if (activeSeries.tokens) {
      tokenScratch[0] = nTokens ?? 0;
      noteHandOver(lib.completeWithTokens(scratch, tokenScratch, 1, stampNs, dataScratch));
    } else {
      noteHandOver(lib.completeBatch(scratch, 1, stampNs, dataScratch));
    }
  } finally {
    dataScratch[0] = undefined;
  }
}

function badSingleCompletion(id: unknown, data: unknown, nTokens: unknown, stampNs: unknown): TypeError {
  const at = 'querySampleComplete(id, data?, nTokens?, stampNs?)';
  if (typeof id !== 'number') return new TypeError(`${at}: id must be a number, got ${shown(id)}`);
  if (typeof nTokens !== 'number' && nTokens !== undefined) return new TypeError(`${at}: nTokens must be a number, got ${shown(nTokens)}`);
  if (typeof stampNs !== 'number' && stampNs !== undefined) return new TypeError(`${at}: stampNs must be a number (a clockNs() reading), got ${shown(stampNs)}`);
  return new TypeError(`${at}: data must be undefined, an ArrayBuffer or an ArrayBufferView (typed array, Buffer, DataView), got ${shown(data)}`);
}

/**
 * Token latencies (useTokenLatencies): the first token of sample `id` is
 * ready. `data` is the first-token response, written to the accuracy log as
 * token_data for logged samples. `stampNs` is when the token was read, a
 * {@link clockNs} reading taken before parsing it (absent: now, read on
 * entry); one before the series started, before the sample's query was
 * issued or in the future counts as now. Call it before the sample's
 * completion, once per sample (without it the sample fails as
 * `no_first_token`); no effect when the run does not use token latencies.
 */
export function firstTokenComplete(id: number, data?: ArrayBufferView | ArrayBuffer, stampNs?: number): void {
  if (stampNs !== undefined && typeof stampNs !== 'number')
    throw new TypeError(`firstTokenComplete(id, data?, stampNs?): stampNs must be a number (a clockNs() reading), got ${shown(stampNs)}`);
  addon().firstTokenComplete(id, data, stampNs);
}

/**
 * The core's clock in ns (steady, monotonic; an arbitrary origin): the one
 * time source of the stamps the completion calls take. Read it when a
 * response's bytes were read, complete with it after parsing them, and the
 * parsing is not part of the latency.
 */
export function clockNs(): number {
  return addon().clockNs();
}

/**
 * Reports many completed samples by id in one boundary crossing: a
 * Float64Array (or Uint32Array while ids stay below 2^32) of sample ids;
 * `count` limits how many elements are read. No response data. With token
 * latencies, `nTokens[i]` is the token count of `ids[i]`.
 */
export function querySamplesCompleteIds(ids: Float64Array | Uint32Array, count?: number, nTokens?: Float64Array): void {
  // One element read: a lent array used after its call is poisoned throughout.
  if (ids?.[0] !== ids?.[0] && count !== 0) misused('querySamplesCompleteIds(ids, count)');
  const lib = addon();
  // Logged samples are logged with empty data, in the same call.
  if (nTokens !== undefined) noteHandOver(lib.completeWithTokens(ids, nTokens, count));
  // One id (SingleStream): the single-id call crosses for ~100 ns less than the batch one.
  else if (count === 1 && ids instanceof Float64Array && ids.length !== 0) noteHandOver(lib.completeOne(ids[0]!));
  else noteHandOver(lib.completeBatch(ids, count));
}

/**
 * A NaN id while this thread's SUT takes queries through issueQueryIds: an
 * id read from a lent array after its call (lib/dispatch/lent-query.ts).
 * The run fails with the error, which is also thrown. Otherwise a NaN id is
 * only counted as invalid, as any other.
 */
function misused(call: string): void {
  const report = activeSeries.onLentIdsMisuse;
  if (report === undefined) return;
  const error = lentIdsMisuse(call);
  report(error);
  throw error;
}

/** The longest message passed on to the core (which keeps at most 1024 bytes of it). */
const MAX_FAILURE_MESSAGE_CHARS = 4096;
let failureKindIndex: ReadonlyMap<string, number> | undefined;

/**
 * Reports sample `id` as failed (a network SUT's HTTP error status, reset
 * connection, malformed response, timeout or cancellation). It completes
 * exactly as querySampleComplete would complete it (at `stampNs`, a
 * {@link clockNs} reading, or now; the same id checks: a bad, stale or
 * duplicate id is counted as for a completion and no failure is counted),
 * and additionally:
 * - it is counted by `kind` in `result.errors.failedSamples`;
 * - `message` (control characters escaped, cut to 1024 bytes) becomes an
 *   error line of the detail log, `Sample failed (<kind>): <message>`, counted
 *   in the summary's error count (the first 1000 of each kind; beyond that one
 *   line per kind gives how many more failed);
 * - the run is INVALID with the reason `<n> samples failed (<kind> <n>, ...)`;
 * - it is left out of the latency, TTFT/TPOT, token-count and throughput
 *   statistics (they describe the responses that succeeded) and is never a
 *   token error (missing first token, zero tokens).
 * A failed sample writes no accuracy-log record. Any thread may call it
 * (dispatch workers too). `id` not a number, `kind` not a FailureKind,
 * `message` not a string or `stampNs` not a number: a TypeError, nothing completed.
 */
export function querySampleFailed(id: number, kind: FailureKind, message: string, stampNs?: number): void {
  const at = 'querySampleFailed(id, kind, message, stampNs?)';
  if (typeof id !== 'number') throw new TypeError(`${at}: id must be a number, got ${shown(id)}`);
  if (id !== id) misused(at);
  const lib = addon();
  failureKindIndex ??= new Map(lib.tables.failureKinds.map((name, i) => [name, i]));
  const index = typeof kind === 'string' ? failureKindIndex.get(kind) : undefined;
  if (index === undefined)
    throw new TypeError(`${at}: kind must be one of ${[...failureKindIndex.keys()].map((k) => `'${k}'`).join(', ')}, got ${shown(kind)}`);
  if (typeof message !== 'string') throw new TypeError(`${at}: message must be a string, got ${shown(message)}`);
  if (stampNs !== undefined && typeof stampNs !== 'number')
    throw new TypeError(`${at}: stampNs must be a number (a clockNs() reading), got ${shown(stampNs)}`);
  const text = message.length > MAX_FAILURE_MESSAGE_CHARS ? message.slice(0, MAX_FAILURE_MESSAGE_CHARS) : message;
  noteHandOver(lib.failSample(id, index, text, stampNs));
}
