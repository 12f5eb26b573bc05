/**
 * `--sut http --request ./map.mjs`: any HTTP API, mapped by a user module
 * (docs/network-suts.md, "Any other HTTP API"). The module's exports:
 *
 * - `totalSampleCount: number` (required), `performanceSampleCount?: number`;
 * - `request(index)` (required, synchronous): `{ method?, path, headers?,
 *   body? }` for sample `index`; a body that is neither a string nor bytes
 *   is sent as JSON. Called for each sample when it is loaded
 *   (loadSamplesToRam), never while issuing;
 * - `response({ index, body })` (optional, may be async): completion data
 *   of a 2xx response, `{ data?, nTokens? }`; a throw or rejection makes the
 *   sample a 'malformed_response'. Without it the data is the body's bytes;
 * - `tokens(chunk, index)` (optional, synchronous, token streams): the
 *   output tokens in a body chunk; the first chunk with any is the first
 *   token. Its sum is the token count unless `response` gives `nTokens`;
 * - `name(node)` (optional, may be async): the node's name, asked over the
 *   network with `await node.request('GET', path)` (`{ status, headers,
 *   body }`). Without it: `GET /` and the answer's `server` header, else the
 *   node's URL.
 *
 * Every promise the module hands over is bounded: its import (top-level
 * await) by `moduleTimeoutMs`, `name()` by the probe timeout, `response()`
 * by the request timeout. Before the run, request(0) is checked and, when the
 * module maps responses, sample 0 is sent once to the first node and its
 * answer read: a mapping function that fails there is bad input.
 * - `secretHeaders` (optional): names of request headers whose values are
 *   secrets, beyond the ones always treated so (lib/net/secrets.ts
 *   SECRET_HEADER_NAMES): no part of such a value is ever written.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';

import { activeSeries } from '../dispatch/active.js';
import { isThenable, MODULE_LOAD_TIMEOUT_MS, settleWithin, thrownText } from '../api/user-calls.js';
import { InterfaceError, SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import {
  MAX_TOKEN_COUNT,
  tokenCountProblem,
  USER_FUNCTION_TIMEOUT_MS,
  type NetworkProtocol,
  type NodeProbe,
  type PreparedRequest,
  type ResponseOutcome,
  type ResponseReader,
} from './protocol.js';
import { Secrets } from './secrets.js';
import { checkTransportOptions, createNetworkSut } from './transport.js';
import type { HttpSutOptions, NetworkSut } from './types.js';

/** What `request(index)` returns. */
export interface HttpMapRequest {
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | unknown;
}

/** What `response(...)` is given (only 2xx responses reach it: others fail as 'http_status'). */
export interface HttpMapResponse {
  index: number;
  body: Uint8Array;
}

/** What `response(...)` returns (or a promise of it). */
export type HttpMapResult = { data?: Uint8Array | string; nTokens?: number } | undefined | void;

/** The exports of a `--request` module. */
export interface HttpMapModule {
  totalSampleCount: number;
  performanceSampleCount?: number;
  request(index: number): HttpMapRequest;
  response?(response: HttpMapResponse): HttpMapResult | Promise<HttpMapResult>;
  tokens?(chunk: Uint8Array, index: number): number;
  name?(node: NodeProbe): string | Promise<string>;
  secretHeaders?: readonly string[];
}

const EMPTY = new Uint8Array(0);
/** The outcome of a response read whole with nothing to hand on (shared: outcomes are only read). */
const OK: ResponseOutcome = Object.freeze({ ok: true as const });
const encoder = new TextEncoder();
// RFC 9110 token characters: a header name.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A header value: tab, visible characters and obs-text (RFC 9110); CR, LF or NUL would split or cut the request.
const BAD_HEADER_VALUE = /[^\t\u0020-\u007e\u0080-\u00ff]/;
// A path: visible ASCII only (anything else must be percent-encoded).
const PATH = /^\/[\u0021-\u007e]*$/;
// Headers the transport writes itself (framing and the connection), or that neither transport supports.
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect']);

/** The module's path or URL as messages name it. */
function moduleLabel(request: string): string {
  return `--request ${echo(request, 120)}`;
}

/**
 * Imports and checks a mapping module (a path relative to the working
 * directory, or a file URL). Its import, top-level await included, must
 * settle within `moduleTimeoutMs` (0: no limit).
 */
export async function loadHttpMap(request: string, moduleTimeoutMs = MODULE_LOAD_TIMEOUT_MS): Promise<HttpMapModule> {
  if (typeof request !== 'string' || request === '')
    throw new SettingsError('request', request, `request must be the path of a module exporting request(index), got ${typeof request}`);
  const url = /^file:/i.test(request) ? request : pathToFileURL(isAbsolute(request) ? request : resolve(process.cwd(), request)).href;
  const at = moduleLabel(request);
  let mod: Record<string, unknown>;
  try {
    mod = await settleWithin(import(url) as Promise<Record<string, unknown>>, moduleTimeoutMs, `${at}: importing the module`, () =>
      new InterfaceError(`${at}: the module did not finish loading within ${moduleTimeoutMs} ms (a top-level await that never settles?; moduleTimeoutMs, --module-timeout-ms)`));
  } catch (cause) {
    if (cause instanceof InterfaceError) throw cause;
    throw new InterfaceError(`${at}: cannot import the module: ${thrownText(cause)}`);
  }
  if (typeof mod.request !== 'function') throw new InterfaceError(`${at}: the module must export a function request(index) returning { method?, path, headers?, body? } (found ${typeof mod.request})`);
  const total = mod.totalSampleCount;
  if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 1 || total > 0xffffffff)
    throw new InterfaceError(`${at}: the module must export totalSampleCount, an integer from 1 to 4294967295 (found ${echo(String(total), 40)})`);
  const performance = mod.performanceSampleCount;
  if (performance !== undefined && (typeof performance !== 'number' || !Number.isSafeInteger(performance) || performance < 1 || performance > total))
    throw new InterfaceError(`${at}: performanceSampleCount must be an integer from 1 to totalSampleCount (${total}) (found ${echo(String(performance), 40)})`);
  for (const name of ['response', 'tokens', 'name'])
    if (mod[name] !== undefined && typeof mod[name] !== 'function') throw new InterfaceError(`${at}: ${name}, when exported, must be a function (found ${typeof mod[name]})`);
  const secretHeaders = mod.secretHeaders;
  if (secretHeaders !== undefined && !(Array.isArray(secretHeaders) && secretHeaders.every((h) => typeof h === 'string' && h !== '')))
    throw new InterfaceError(`${at}: secretHeaders, when exported, must be an array of header names (found ${Array.isArray(secretHeaders) ? 'an array with a value that is not a non-empty string' : typeof secretHeaders})`);
  return mod as unknown as HttpMapModule;
}

/** The protocol of a mapping module (also what each dispatch worker re-creates from plain options). */
export async function createHttpProtocol(options: HttpSutOptions): Promise<NetworkProtocol> {
  const moduleTimeoutMs = options.moduleTimeoutMs ?? MODULE_LOAD_TIMEOUT_MS;
  if (typeof moduleTimeoutMs !== 'number' || !Number.isSafeInteger(moduleTimeoutMs) || moduleTimeoutMs < 0 || moduleTimeoutMs > 2 ** 31 - 1)
    throw new SettingsError('moduleTimeoutMs', moduleTimeoutMs, `moduleTimeoutMs must be an integer in 0..${2 ** 31 - 1} (ms; 0: no limit), got ${echo(String(moduleTimeoutMs), 40)}`);
  const config = checkTransportOptions(options);
  const timeouts: Timeouts = {
    probeMs: config.probeTimeoutMs,
    responseMs: config.requestTimeoutMs > 0 ? config.requestTimeoutMs : USER_FUNCTION_TIMEOUT_MS,
  };
  return httpProtocolOf(await loadHttpMap(options.request, moduleTimeoutMs), options.request, timeouts);
}

/** How long the module's async functions may take: name() the probe timeout, response() the request timeout. */
interface Timeouts {
  probeMs: number;
  responseMs: number;
}

/** Indices per chunk of a {@link PreparedRequests} table: 2^10 slots, 8 KiB. */
const PREPARED_CHUNK_BITS = 10;
const PREPARED_CHUNK_SIZE = 1 << PREPARED_CHUNK_BITS;

/** One chunk: its slots, how many are filled, and the method, path and headers most of its requests share. */
interface PreparedChunk {
  filled: number;
  shape: PreparedRequest | undefined;
  /** A body (the request is the shape's with it), the shape itself (no body), a whole request, or empty. */
  slots: (PreparedRequest | string | Uint8Array | undefined)[];
}

/**
 * The loaded samples' requests by QSL index, in chunks of 2^10 slots kept
 * by chunk number. A Map of requests holds at most 2^24 entries (a load of
 * 50 million samples failed with "Map maximum size exceeded") and costs
 * several words an entry; a slot costs one, and 32-bit indices make at most
 * 2^22 chunks. Sets are dense (a permutation of 0..n-1) or slices of one
 * (accuracy rounds), whose scattered samples leave small chunks behind.
 * Requests that differ only in their body (the usual mapping) keep just the
 * body: get() puts the request back together, so a load of 5*10^7 samples
 * fits in Node's default heap.
 */
export class PreparedRequests {
  private readonly chunks = new Map<number, PreparedChunk>();
  private held = 0;

  get(index: number): PreparedRequest | undefined {
    const chunk = this.chunks.get(index >>> PREPARED_CHUNK_BITS);
    if (chunk === undefined) return undefined;
    const held = chunk.slots[index & (PREPARED_CHUNK_SIZE - 1)];
    if (typeof held !== 'string' && !(held instanceof Uint8Array)) return held;
    const shape = chunk.shape!;
    return { method: shape.method, path: shape.path, headers: shape.headers, body: held };
  }

  set(index: number, request: PreparedRequest): void {
    const key = index >>> PREPARED_CHUNK_BITS;
    let chunk = this.chunks.get(key);
    if (chunk === undefined) {
      chunk = { filled: 0, shape: undefined, slots: new Array<PreparedChunk['slots'][number]>(PREPARED_CHUNK_SIZE).fill(undefined) };
      this.chunks.set(key, chunk);
    }
    chunk.shape ??= { method: request.method, path: request.path, headers: request.headers };
    const shape = chunk.shape;
    const shaped = request.method === shape.method && request.path === shape.path && request.headers === shape.headers;
    // A body built by concatenation (a template literal) is a rope of
    // several strings; reading a character flattens it, and the collector
    // then keeps the flat string alone: 41 instead of 97 bytes a request
    // for `{"x":${index}}` (Node 20), and less to collect while loading.
    if (typeof request.body === 'string' && request.body.length > 0) request.body.charCodeAt(0);
    const slot = index & (PREPARED_CHUNK_SIZE - 1);
    if (chunk.slots[slot] === undefined) {
      chunk.filled++;
      this.held++;
    }
    chunk.slots[slot] = !shaped ? request : request.body !== undefined ? request.body : shape;
  }

  delete(index: number): void {
    const key = index >>> PREPARED_CHUNK_BITS;
    const chunk = this.chunks.get(key);
    const slot = index & (PREPARED_CHUNK_SIZE - 1);
    if (chunk === undefined || chunk.slots[slot] === undefined) return;
    chunk.slots[slot] = undefined;
    this.held--;
    // An empty chunk goes: an unloaded set leaves nothing behind.
    if (--chunk.filled === 0) this.chunks.delete(key);
  }

  /** How many requests are held. */
  get size(): number {
    return this.held;
  }
}

function httpProtocolOf(map: HttpMapModule, source: string, timeouts: Timeouts): NetworkProtocol {
  const prepared = new PreparedRequests();
  // The values of the secret headers the requests carry, known before any is sent.
  const secrets = new Secrets();
  if (map.secretHeaders !== undefined) secrets.addHeaderNames(map.secretHeaders);
  const tokens = map.tokens;
  const mapResponse = map.response;
  const at = moduleLabel(source);
  const build = (index: number): PreparedRequest => {
    const problem = (text: string): InterfaceError => new InterfaceError(`${at}: request(${index})${text.startsWith('.') ? '' : ' '}${text}`);
    let r: unknown;
    try {
      r = map.request(index);
    } catch (cause) {
      throw problem(`threw: ${thrownText(cause)}`);
    }
    if (isThenable(r)) {
      // Nobody awaits it: its rejection must not become an unhandled one.
      Promise.resolve(r).catch(() => undefined);
      throw problem('returned a promise: request(index) must return the request itself ({ method?, path, headers?, body? }), synchronously; load what it needs at module load (a top-level await)');
    }
    const request = checkedRequest(r, problem);
    // Requests mostly carry the same headers: one object for a run of equal
    // ones (held once per loaded sample, and read by identity downstream).
    if (lastHeaders !== undefined && sameHeaders(request.headers, lastHeaders)) {
      request.headers = lastHeaders;
    } else {
      secrets.addHeaders(request.headers);
      lastHeaders = request.headers;
    }
    return request;
  };
  let lastHeaders: Record<string, string> | undefined;
  // The first sample's headers now: their secrets are known before any
  // request is sent (a transport hands them to its redactor as it starts;
  // the other samples' as they load).
  build(0);
  return {
    kind: 'http',
    secrets,
    totalSampleCount: map.totalSampleCount,
    performanceSampleCount: map.performanceSampleCount ?? map.totalSampleCount,
    streamsTokens: tokens !== undefined,
    async probe(node) {
      if (map.name === undefined) {
        const r = await node.request('GET', '/');
        const server = r.headers.server;
        return typeof server === 'string' && server !== '' ? server : node.origin;
      }
      const name: unknown = await settleWithin(map.name(node), timeouts.probeMs, `${at}: name() for ${node.origin}`, () =>
        new InterfaceError(`${at}: name() did not settle within ${timeouts.probeMs} ms (the probe timeout) for node ${node.origin}`));
      if (typeof name !== 'string') throw new InterfaceError(`${at}: name() must return the node's name, a string (or a promise of one), got ${describeValue(name)}`);
      return name;
    },
    async checkBeforeRun(first) {
      const request = build(0);
      if (tokens === undefined && mapResponse === undefined) return;
      await checkMappingOnFirstSample(first, request, (index, wantData) => new HttpMapReader(index, wantData, tokens, mapResponse, timeouts.responseMs), at, timeouts.responseMs);
    },
    load(indices) {
      for (const i of indices) prepared.set(i, build(i));
      checkHeapRoom(at, prepared.size);
    },
    unload(indices) {
      for (const i of indices) prepared.delete(i);
    },
    request(index) {
      const r = prepared.get(index);
      if (r === undefined) throw new InterfaceError(`http SUT: sample ${index} was issued but not loaded`);
      return r;
    },
    reader(index, wantData): ResponseReader {
      return new HttpMapReader(index, wantData, tokens, mapResponse, timeouts.responseMs);
    },
  };
}

/**
 * What request(index) returned, checked (`problem(text)` is the error):
 * a method GET or POST, a path of visible ASCII starting with '/', headers
 * whose names are tokens and whose values are strings without line breaks,
 * a body that is a string, bytes or a value JSON can write.
 */
function checkedRequest(r: unknown, problem: (text: string) => InterfaceError): PreparedRequest {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw problem(`must return an object { method?, path, headers?, body? }, got ${describeValue(r)}`);
  const { method: givenMethod, path, headers: givenHeaders, body: givenBody } = r as Record<string, unknown>;
  if (typeof path !== 'string' || !PATH.test(path))
    throw problem(`.path must be a string starting with '/' of visible ASCII characters (percent-encode the rest), got ${describeValue(path)}`);
  const method = givenMethod ?? (givenBody === undefined ? 'GET' : 'POST');
  if (method !== 'GET' && method !== 'POST') throw problem(`.method must be 'GET' or 'POST', got ${describeValue(method)}`);
  const headers: Record<string, string> = {};
  if (givenHeaders !== undefined) {
    if (typeof givenHeaders !== 'object' || givenHeaders === null || Array.isArray(givenHeaders))
      throw problem(`.headers must be an object of header names and string values, got ${describeValue(givenHeaders)}`);
    for (const [name, value] of Object.entries(givenHeaders)) {
      if (!HEADER_NAME.test(name)) throw problem(`.headers: '${echo(name, 60)}' is not a header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
      if (TRANSPORT_HEADERS.has(name.toLowerCase())) throw problem(`.headers: ${name} is the transport's to write (framing and the connection); leave it out`);
      if (typeof value !== 'string') throw problem(`.headers['${name}'] must be a string, got ${describeValue(value)}`);
      if (BAD_HEADER_VALUE.test(value))
        throw problem(`.headers['${name}'] holds a character a header value cannot carry: a line break, NUL or another control character, or one beyond U+00FF (${echo(value, 60)})`);
      headers[name] = value;
    }
  }
  let body: string | Uint8Array | undefined;
  if (givenBody === undefined || typeof givenBody === 'string' || givenBody instanceof Uint8Array) body = givenBody;
  else if (ArrayBuffer.isView(givenBody)) body = new Uint8Array(givenBody.buffer, givenBody.byteOffset, givenBody.byteLength);
  else if (givenBody instanceof ArrayBuffer) body = new Uint8Array(givenBody);
  else {
    let json: string | undefined;
    try {
      json = JSON.stringify(givenBody);
    } catch (cause) {
      throw problem(`.body cannot be sent as JSON: ${thrownText(cause)}`);
    }
    if (json === undefined) throw problem(`.body must be a string, bytes or a value JSON can write, got ${describeValue(givenBody)}`);
    body = json;
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  return body !== undefined ? { method, path, headers, body } : { method, path, headers };
}

/**
 * Sends sample 0 once to the first node (outside any run) and reads the
 * answer with the module's functions: one that throws, rejects, hangs or
 * returns garbage on a 2xx answer is bad input (InterfaceError). A node that
 * fails the request is no such proof: a warning, and the run goes on.
 */
async function checkMappingOnFirstSample(
  first: NodeProbe,
  request: PreparedRequest,
  readerOf: (index: number, wantData: boolean) => HttpMapReader,
  at: string,
  responseMs: number,
): Promise<void> {
  const skipped = (why: string): void =>
    process.emitWarning(`${at}: response()/tokens() were not tried before the run: sample 0 sent to ${first.origin} ${why}; the run goes on, and counts failures as usual`, { code: 'LOADGEN_HTTP_MAP_UNCHECKED' });
  let answer;
  try {
    answer = await first.request(request.method, request.path, request.body, request.headers);
  } catch (error) {
    skipped(`failed: ${thrownText(error)}`);
    return;
  }
  if (answer.status < 200 || answer.status > 299) {
    skipped(`was answered HTTP ${answer.status}`);
    return;
  }
  const reader = readerOf(0, true);
  const where = `checked before the run on sample 0 (answered HTTP ${answer.status} by ${first.origin})`;
  let verdict: ResponseOutcome | PromiseLike<ResponseOutcome>;
  try {
    reader.onData(answer.body);
    verdict = reader.onEnd();
  } catch (error) {
    throw new InterfaceError(`${at}: ${where}: ${thrownText(error)}`);
  }
  // The reader bounds response() itself; this bound keeps the process alive meanwhile.
  const outcome = await settleWithin(verdict, responseMs + 1000, `${at}: response() on sample 0`, () =>
    new InterfaceError(`${at}: ${where}: response() did not settle within ${responseMs} ms (the request timeout)`));
  // The functions' own failures only (a stream without tokens is the server's answer, not a bug of theirs).
  if (!outcome.ok && (outcome.kind === 'malformed_response' || outcome.kind === 'timeout')) throw new InterfaceError(`${at}: ${where}: ${outcome.message}`);
}

/**
 * The share of the JS heap's limit a load may fill with requests: past it
 * the next allocations would end the process ("JavaScript heap out of
 * memory"), which must be an error naming the cause instead.
 */
export const LOAD_HEAP_SHARE = 0.85;
const YOUNG_GENERATION_RESERVE = 48 * 2 ** 20;

/** After a slice of a load: an InterfaceError once the heap is fuller than {@link LOAD_HEAP_SHARE} of its limit. */
function checkHeapRoom(at: string, held: number): void {
  const heap = getHeapStatistics();
  // The limit counts the young generation's reserve too (48 MB with Node's defaults), which a load does not fill.
  if (heap.used_heap_size <= LOAD_HEAP_SHARE * (heap.heap_size_limit - YOUNG_GENERATION_RESERVE)) return;
  const mb = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MB`;
  throw new InterfaceError(
    `${at}: the loaded requests do not fit in the JavaScript heap: ${mb(heap.used_heap_size)} of its ${mb(heap.heap_size_limit - YOUNG_GENERATION_RESERVE)} are in use ` +
      `with ${held} requests built. Load fewer samples at once (performance_sample_count_override, or the module's performanceSampleCount), ` +
      'make the requests smaller, or give node a larger heap (NODE_OPTIONS=--max-old-space-size=<MB>).');
}

/** The same header names and values, in the same order. */
function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}

/** A value as messages show it: its type, and short values themselves. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (isThenable(value)) return 'a promise';
  switch (typeof value) {
    case 'string':
      return `'${echo(value, 60)}'`;
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return value instanceof Uint8Array ? 'bytes' : 'an object';
    default:
      return typeof value;
  }
}

/**
 * Reads one response through the module's tokens() and response(). Keeps
 * the body only when someone reads it (the accuracy log or `response`).
 */
class HttpMapReader implements ResponseReader {
  /** Whether the body is kept (someone reads it). */
  private readonly keep: boolean;
  /** The body's first chunk; the others in `more` (no array for the common one-chunk body). */
  private first: Uint8Array | undefined;
  private more: Uint8Array[] | undefined;
  private tokenCount = 0;
  private chunkCount = 0;
  private problem: string | undefined;

  constructor(
    private readonly index: number,
    private readonly wantData: boolean,
    private readonly tokens: HttpMapModule['tokens'],
    private readonly response: HttpMapModule['response'],
    /** How long an async response() may take: then the sample fails as 'timeout'. */
    private readonly responseMs: number,
  ) {
    this.keep = wantData || response !== undefined;
  }

  onData(chunk: Uint8Array): Uint8Array | undefined {
    if (this.keep) {
      if (this.first === undefined) this.first = chunk;
      else (this.more ??= []).push(chunk);
    }
    this.chunkCount++;
    if (this.tokens === undefined || this.problem !== undefined) return undefined;
    let n: unknown;
    try {
      n = this.tokens(chunk, this.index);
    } catch (error) {
      this.problem = `tokens() threw: ${thrownText(error)}`;
      return undefined;
    }
    if (isThenable(n)) {
      Promise.resolve(n).catch(() => undefined);
      this.problem = 'tokens() returned a promise: it runs per chunk and must return the count synchronously';
      return undefined;
    }
    const count = tokenCountProblem(n);
    if (count !== '') {
      this.problem = `tokens() returned ${count}`;
      return undefined;
    }
    const first = this.tokenCount === 0 && (n as number) > 0;
    this.tokenCount += n as number;
    if (this.tokenCount > MAX_TOKEN_COUNT) this.problem = `tokens() counted ${this.tokenCount} tokens in one response, more than ${MAX_TOKEN_COUNT}`;
    return first ? chunk : undefined;
  }

  onEnd(): ResponseOutcome | Promise<ResponseOutcome> {
    if (this.problem !== undefined) return malformed(this.problem);
    const body = this.first === undefined ? EMPTY : this.more === undefined ? this.first : Buffer.concat([this.first, ...this.more]);
    if (this.response === undefined) return this.outcome(this.wantData ? body : undefined, undefined);
    let mapped: unknown;
    try {
      mapped = this.response({ index: this.index, body });
    } catch (error) {
      return malformed(`response() threw: ${thrownText(error)}`);
    }
    if (!isThenable(mapped)) return this.mapped(mapped, body);
    // An async response(): a promise of the outcome, bounded, never rejecting.
    return new Promise<ResponseOutcome>((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, kind: 'timeout', message: `response() did not settle within ${this.responseMs} ms (the request timeout)` }), this.responseMs);
      // A run waiting for the sample keeps the process alive; after it nothing waits.
      timer.unref();
      Promise.resolve(mapped).then(
        (value) => {
          clearTimeout(timer);
          resolve(this.mapped(value, body));
        },
        (error: unknown) => {
          clearTimeout(timer);
          resolve(malformed(`response() rejected: ${thrownText(error)}`));
        },
      );
    });
  }

  /** What response() gave (settled), checked: `{ data?, nTokens? }` or nothing. */
  private mapped(value: unknown, body: Uint8Array): ResponseOutcome {
    if (value === undefined || value === null) return this.outcome(this.wantData ? body : undefined, undefined);
    if (typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array)
      return malformed(`response() must return { data?, nTokens? } or nothing, got ${describeValue(value)}`);
    const { data: d, nTokens: n } = value as { data?: unknown; nTokens?: unknown };
    let data: Uint8Array | undefined = body;
    if (d !== undefined) {
      if (typeof d === 'string') data = encoder.encode(d);
      else if (d instanceof Uint8Array) data = d;
      else if (ArrayBuffer.isView(d)) data = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
      else return malformed(`response() must return data as a string or a Uint8Array, got ${describeValue(d)}`);
    }
    if (n !== undefined) {
      const problem = tokenCountProblem(n);
      if (problem !== '') return malformed(`response() returned nTokens ${problem}`);
    }
    return this.outcome(this.wantData ? data : undefined, n as number | undefined);
  }

  private outcome(data: Uint8Array | undefined, nTokens: number | undefined): ResponseOutcome {
    // A token stream without a token cannot time one: a failed sample while token latencies are measured.
    if (this.tokens !== undefined && this.tokenCount === 0 && activeSeries.tokens) {
      return {
        ok: false,
        kind: 'no_first_token',
        message: `the response carried no output tokens (tokens() returned 0 for each of its ${this.chunkCount} chunk${this.chunkCount === 1 ? '' : 's'})`,
      };
    }
    const count = nTokens ?? (this.tokens !== undefined ? this.tokenCount : undefined);
    // One object of one shape, without spreads (this runs per response).
    if (data === undefined) return count === undefined ? OK : { ok: true, nTokens: count };
    return count === undefined ? { ok: true, data } : { ok: true, data, nTokens: count };
  }
}

function malformed(message: string): ResponseOutcome {
  return { ok: false, kind: 'malformed_response', message };
}

/** `--sut http`: createNetworkSut over the mapping module's protocol. */
export async function createHttpSut(options: HttpSutOptions): Promise<NetworkSut> {
  const protocol = await createHttpProtocol(options);
  return createNetworkSut(protocol, options);
}
