/**
 * Streamed responses of the native transport (token streams): the reactor
 * hands over the response headers the protocol reads, each read's body
 * bytes with the stamp of that read, then the response's end or failure
 * (native/http_sut.h, HttpStreamEvent). Here the
 * protocol's ResponseReader runs on them in order; the first token is
 * stamped with the read that brought it, the completion with the end's
 * stamp, so neither the JS thread's wake nor the parsing is inside TTFT,
 * TPOT or the latency.
 */
import { activeSeries, wantsResponse } from '../dispatch/active.js';
import { firstTokenComplete, querySampleComplete, querySampleFailed } from '../api/completion.js';
import type { NodeStatsRecorder } from './node-stats.js';
import { checkedOutcome, isPendingOutcome, settleOutcome } from './outcome.js';
import { FAILURE_KINDS, type FailureKind, type NetworkProtocol, type ResponseHeaders, type ResponseOutcome, type ResponseReader } from './protocol.js';
import type { RequestLog } from './request-log.js';
import { traceOutputEvents, type EventTrace, type StreamStatsRecorder } from './stream-stats.js';

/** Numbers per event in onStream's `meta` (bindings/http_sut_binding.cc, kStreamRecord). */
export const STREAM_RECORD = 9;
/** The event field: body bytes, the end of a 2xx response, a failure (its message in the bytes). */
export const STREAM_DATA = 0;
export const STREAM_END = 1;
export const STREAM_FAILED = 2;
/** The response headers the protocol reads (NetworkProtocol.responseHeaders), before the bytes. */
export const STREAM_HEADERS = 3;

const NO_HEADERS: ResponseHeaders = Object.freeze({});

/**
 * The headers the native client captured (entries of [index in `names`:
 * 1 byte][length: 2 bytes, little-endian][value]), as undici hands them:
 * values as latin1, a name given twice as an array of its values.
 */
export function decodeHeaders(bytes: Uint8Array, names: readonly string[]): ResponseHeaders {
  if (bytes.length === 0) return NO_HEADERS;
  const headers: Record<string, string | string[]> = {};
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + 3 <= view.length;) {
    const name = names[view[at]!];
    const length = view[at + 1]! | (view[at + 2]! << 8);
    const value = view.toString('latin1', at + 3, at + 3 + length);
    at += 3 + length;
    if (name === undefined) continue;
    const earlier = Object.hasOwn(headers, name) ? headers[name] : undefined;
    const next = earlier === undefined ? value : typeof earlier === 'string' ? [earlier, value] : [...earlier, value];
    // A plain object, as undici's (a name such as __proto__ stays an own property).
    Object.defineProperty(headers, name, { value: next, enumerable: true, configurable: true, writable: true });
  }
  return headers;
}

/** One response being read. */
interface StreamState extends EventTrace {
  reader: ResponseReader | undefined;
  wantData: boolean;
  /** The reader refused the bytes: the sample failed already (this kind, at failedNs), the rest is skipped. */
  failedKind: FailureKind | undefined;
  failedNs: number;
  /** The read that brought the first output (0: none). */
  firstTokenNs: number;
}

const decoder = new TextDecoder();

export class NativeStreamReader {
  /** Responses under way, by sample id (an id is in flight once). */
  private readonly streams = new Map<number, StreamState>();

  constructor(
    private readonly protocol: NetworkProtocol,
    /** The lowercase names the client captures (the indices of the header entries). */
    private readonly headerNames: readonly string[],
    private readonly labels: readonly string[],
    private readonly corrections: readonly NodeStatsRecorder[],
    private readonly redact: (text: string) => string,
    /** How long an async reader's outcome may take (the request timeout, or USER_FUNCTION_TIMEOUT_MS for none). */
    private readonly outcomeTimeoutMs: number,
    /** Inter-token gaps and input lengths (lib/net/stream-stats.ts). */
    private readonly streamStats: StreamStatsRecorder,
    private readonly requestLog: RequestLog | undefined,
  ) {}

  /** onStream: the events of one batch, in order. */
  onEvents(meta: Float64Array, data: Uint8Array, count: number): void {
    for (let i = 0, m = 0; i < count; i++, m += STREAM_RECORD) {
      const id = meta[m]!;
      const stamp = meta[m + 1]!;
      const bytes = data.subarray(meta[m + 2]!, meta[m + 2]! + meta[m + 3]!);
      const event = meta[m + 4]!;
      try {
        if (event === STREAM_DATA) this.data(id, meta[m + 5]!, meta[m + 6]!, bytes, stamp);
        else if (event === STREAM_HEADERS) this.headers(id, meta[m + 5]!, meta[m + 6]!, bytes, stamp);
        else if (event === STREAM_END) this.end(id, meta[m + 5]!, meta[m + 6]!, stamp, meta[m + 8]!);
        else this.failed(id, meta[m + 5]!, meta[m + 6]!, FAILURE_KINDS[meta[m + 7]!] ?? 'connection', decoder.decode(bytes), stamp, meta[m + 8]!);
      } catch {
        // No run to complete into any more (events after the run ended): nothing to record.
        this.streams.delete(id);
      }
    }
  }

  /**
   * Between loads, nothing outstanding: forgets responses whose end was
   * dropped (it came after their run ended), so no reader outlives its run.
   */
  reset(): void {
    this.streams.clear();
  }

  private state(id: number, index: number, node: number, stamp: number): StreamState {
    let state = this.streams.get(id);
    if (state === undefined) {
      const wantData = wantsResponse(id);
      state = { reader: undefined, wantData, failedKind: undefined, failedNs: 0, firstTokenNs: 0, events: 0, lastEventNs: 0 };
      try {
        state.reader = this.protocol.reader(index, wantData);
      } catch (error) {
        this.refuse(id, node, state, error, stamp);
      }
      this.streams.set(id, state);
    }
    return state;
  }

  private headers(id: number, index: number, node: number, bytes: Uint8Array, stamp: number): void {
    const state = this.state(id, index, node, stamp);
    if (state.failedKind !== undefined || state.reader!.onHeaders === undefined) return;
    try {
      state.reader!.onHeaders(decodeHeaders(bytes, this.headerNames));
    } catch (error) {
      this.refuse(id, node, state, error, stamp);
    }
  }

  private data(id: number, index: number, node: number, bytes: Uint8Array, stamp: number): void {
    const state = this.state(id, index, node, stamp);
    if (state.failedKind !== undefined) return;
    let first: Uint8Array | undefined;
    const reader = state.reader!;
    try {
      first = reader.onData(bytes);
    } catch (error) {
      return this.refuse(id, node, state, error, stamp);
    }
    if (first !== undefined) {
      state.firstTokenNs = stamp;
      firstTokenComplete(id, first, stamp);
    }
    traceOutputEvents(state, reader, stamp, this.streamStats);
  }

  private end(id: number, index: number, node: number, stamp: number, sentNs: number): void {
    const state = this.state(id, index, node, stamp);
    this.streams.delete(id);
    // The client counted the response completed; the reader's verdict may say otherwise.
    if (state.failedKind !== undefined) {
      this.corrections[node]?.reclassified(state.failedKind);
      this.requestLog?.record(id, index, node, sentNs, state.firstTokenNs, state.failedNs, undefined, undefined, state.failedKind);
      return;
    }
    let verdict: ResponseOutcome | PromiseLike<ResponseOutcome>;
    try {
      verdict = state.reader!.onEnd();
    } catch (error) {
      verdict = { ok: false, kind: 'malformed_response', message: this.threw(error) };
    }
    // An async user function maps the response: completed with the end's stamp once it settles.
    const done = (outcome: ResponseOutcome): void => this.complete(id, index, node, state, outcome, stamp, sentNs);
    if (isPendingOutcome(verdict)) settleOutcome(verdict, this.protocol.kind, this.outcomeTimeoutMs, done);
    else done(checkedOutcome(verdict, this.protocol.kind));
  }

  private complete(id: number, index: number, node: number, state: StreamState, outcome: ResponseOutcome, stamp: number, sentNs: number): void {
    if (outcome.ok) {
      querySampleComplete(id, state.wantData ? outcome.data : undefined, outcome.nTokens, stamp);
      // After the completion, with its stamps: nothing here is inside a latency.
      if (activeSeries.performance) this.streamStats.input(outcome.inputTokens);
      this.requestLog?.record(id, index, node, sentNs, state.firstTokenNs, stamp, outcome.inputTokens, outcome.nTokens, undefined);
    } else {
      this.corrections[node]?.reclassified(outcome.kind);
      querySampleFailed(id, outcome.kind, this.redact(`${this.nodeText(node)}${outcome.message}`), stamp);
      this.requestLog?.record(id, index, node, sentNs, state.firstTokenNs, stamp, undefined, undefined, outcome.kind);
    }
  }

  /** A failure the client saw (status, connection, framing, timeout, cancel): its message names the node. */
  private failed(id: number, index: number, node: number, kind: FailureKind, message: string, stamp: number, sentNs: number): void {
    const state = this.streams.get(id);
    this.streams.delete(id);
    if (state?.failedKind !== undefined) {
      this.requestLog?.record(id, index, node, sentNs, state.firstTokenNs, state.failedNs, undefined, undefined, state.failedKind);
      return;
    }
    querySampleFailed(id, kind, this.redact(message), stamp);
    this.requestLog?.record(id, index, node, sentNs, state?.firstTokenNs ?? 0, stamp, undefined, undefined, kind);
  }

  /** The reader threw (its contract says it never does): the sample fails, the rest of its bytes are skipped. */
  private refuse(id: number, node: number, state: StreamState, error: unknown, stamp: number): void {
    state.failedKind = 'malformed_response';
    state.failedNs = stamp;
    querySampleFailed(id, 'malformed_response', this.redact(`${this.nodeText(node)}${this.threw(error)}`), stamp);
  }

  private nodeText(node: number): string {
    return `node ${this.labels[node] ?? this.labels[0]!}: `;
  }

  private threw(error: unknown): string {
    return `the ${this.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}`;
  }
}
