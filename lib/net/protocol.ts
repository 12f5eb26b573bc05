/**
 * The contract between the network transport (lib/net/transport: pools,
 * balancing, time stamps, failures, per-node statistics) and the protocols
 * it speaks (lib/net/openai, lib/net/kserve, lib/net/http-map). A protocol
 * knows what to send for a sample and how to read the answer; the transport
 * knows nothing of OpenAI or KServe.
 *
 * Time stamps are the transport's: it reads the core's clock (clockNs) when
 * each body chunk has been read and before the protocol sees it, and
 * completes the sample with the stamp of the last chunk, so parsing is never
 * inside a latency.
 */
import type { FailureKind } from '../types/failure-kinds.js';
import type { Secrets } from './secrets.js';

export { FAILURE_KINDS, type FailureKind } from '../types/failure-kinds.js';

/** One request, built before the run (loadSamplesToRam) so issuing builds nothing. */
export interface PreparedRequest {
  method: 'GET' | 'POST';
  /** Path and query, e.g. '/v1/chat/completions'. */
  path: string;
  /** Content type and the like; the transport adds authorization and host. */
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

/** What a finished response came to. */
export type ResponseOutcome =
  | {
      ok: true;
      /** The response data for the accuracy log (only asked for when wanted). */
      data?: Uint8Array;
      /** Output tokens (token latencies): an integer in 0..MAX_TOKEN_COUNT. */
      nTokens?: number;
      /**
       * Input (prompt) tokens, where known (the server's usage, the data
       * set's token ids, or the tokenizer): an integer in 0..MAX_TOKEN_COUNT.
       * For reports and the request log only; the core's figures never read it.
       */
      inputTokens?: number;
    }
  | { ok: false; kind: FailureKind; message: string };

/** The most output tokens one response may report (the core counts them in 32 bits). */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;

/** Why `n` cannot be a response's token count ('' when it can): a finite integer in 0..MAX_TOKEN_COUNT. */
export function tokenCountProblem(n: unknown): string {
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_TOKEN_COUNT) return '';
  const shown = typeof n === 'number' || typeof n === 'bigint' ? String(n) : typeof n === 'string' ? `the string ${JSON.stringify(n.slice(0, 40))}` : n === null ? 'null' : typeof n;
  return `${shown} is not a token count (an integer in 0..${MAX_TOKEN_COUNT})`;
}

/**
 * Response headers as the transport read them (lowercase names; a header
 * given more than once is an array).
 */
export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * Reads one response of one sample, on the thread that owns its socket.
 * Created per request; nothing in it is shared.
 */
export interface ResponseReader {
  /**
   * A body chunk as read (the transport took the time stamp already).
   * Returns the first token's bytes the first time a content token is seen
   * (the transport then calls firstTokenComplete with that chunk's stamp),
   * otherwise undefined. May throw nothing: malformed input is reported by
   * onEnd.
   */
  onData(chunk: Uint8Array): Uint8Array | undefined;
  /**
   * The body was read whole: the outcome (data only when `wantData`). A
   * promise (an async user function maps the response) is awaited; the
   * sample completes with the stamp of its last byte once it settles, and
   * fails as 'timeout' when it has not settled within the request timeout
   * (or USER_FUNCTION_TIMEOUT_MS where that is 0). A rejection fails the
   * sample as 'malformed_response'. Return a plain object where you can: the
   * transports then complete the sample at once, with no promise.
   */
  onEnd(): ResponseOutcome | PromiseLike<ResponseOutcome>;
  /**
   * Output-bearing events (stream chunks with generated output) parsed so
   * far. A transport that times inter-token gaps reads it after each
   * onData: the events it grew by arrived with that chunk's stamp. Absent:
   * the protocol does not stream tokens.
   */
  outputEvents?(): number;
  /**
   * The headers of a 2xx response, before its first onData: for protocols
   * that name them in NetworkProtocol.responseHeaders (the native transport
   * hands over only those). May throw nothing.
   */
  onHeaders?(headers: ResponseHeaders): void;
}

/**
 * How long a promise a user function handed over (an async `response()`)
 * may take when the request timeout is 0 (none): user code is always bounded.
 */
export const USER_FUNCTION_TIMEOUT_MS = 60_000;

/** A GET/POST made before the run (probes): bounded by a timeout, never hangs. */
export interface NodeProbe {
  /** Base URL of the node, e.g. 'http://127.0.0.1:8000' (no credentials). */
  readonly origin: string;
  /**
   * `headers` replace the default (`content-type: application/json` with a
   * body); the transport adds authorization and host.
   */
  request(
    method: 'GET' | 'POST',
    path: string,
    body?: string | Uint8Array,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Uint8Array }>;
}

/**
 * The largest response body a protocol reads when it does not say
 * (NetworkProtocol.maxResponseBytes): 64 MiB, a bound on one response's memory.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** A protocol: what a sample's request is, how its response reads, what a node is called. */
export interface NetworkProtocol {
  /** 'openai', 'kserve', 'http': names the protocol in messages and the SUT line. */
  readonly kind: string;
  /** Samples in the data set (the QSL's totalSampleCount). */
  readonly totalSampleCount: number;
  /** The QSL's performanceSampleCount (default: all). */
  readonly performanceSampleCount: number;
  /** The responses carry tokens: the transport calls firstTokenComplete. */
  readonly streamsTokens: boolean;
  /**
   * The largest response body (bytes, whole or streamed) this protocol
   * reads; a longer one fails as 'malformed_response' as soon as its bytes
   * pass it, none of the rest kept. An integer >= 1; default
   * DEFAULT_MAX_RESPONSE_BYTES (64 MiB).
   */
  readonly maxResponseBytes?: number;
  /**
   * Before the run, once per node: checks the node serves what the run needs
   * (a clear NetworkSetupError otherwise: exit 2) and returns the node's own
   * name, read over the network (at least one round trip, as the Network
   * division's rules require).
   */
  probe(node: NodeProbe): Promise<string>;
  /**
   * After every node was probed, before the run: the protocol's own last
   * check, given the first node (e.g. a mapping module's functions tried on
   * the first sample). Throws bad input (InterfaceError, SettingsError).
   */
  checkBeforeRun?(firstNode: NodeProbe): Promise<void>;
  /**
   * Response headers its readers need (lowercase), handed to
   * ResponseReader.onHeaders. The native transport captures at most 8 (each
   * value at most 256 bytes) and hands over only these; undici all.
   */
  readonly responseHeaders?: readonly string[];
  /** loadSamplesToRam: builds the requests of these samples. */
  load(indices: readonly number[]): void | Promise<void>;
  unload(indices: readonly number[]): void | Promise<void>;
  /** The request of a loaded sample (no allocation beyond what it needs). */
  request(index: number): PreparedRequest;
  /** A reader for one response of sample `index`; `wantData`: build the accuracy-log data. */
  reader(index: number, wantData: boolean): ResponseReader;
  /** Lines for the summary/README (one per '\n'): e.g. 'output tokens from usage (3 of 3 responses)'. */
  describe?(): string;
  /** What the accuracy log's data is (e.g. output token ids as int32, or text and why), for the SUT block. */
  accuracyDataNote?(): string;
  /**
   * Values the protocol sends that must never be written (a mapping
   * module's secret headers), filled in before the requests that carry them
   * are sent; the transport adds its API key and redacts every message
   * against them (lib/net/secrets.ts).
   */
  readonly secrets?: Secrets;
}
