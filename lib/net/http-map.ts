/**
 * `--sut http --request ./map.mjs`: any HTTP API, mapped by a user module
 * (README "Any other HTTP API"). The module's exports:
 *
 * - `totalSampleCount: number` (required), `performanceSampleCount?: number`;
 * - `request(index)` (required): `{ method?, path, headers?, body? }` for
 *   sample `index`; a body that is neither a string nor bytes is sent as JSON.
 *   Called for each sample when it is loaded (loadSamplesToRam), never while issuing;
 * - `response({ index, body })` (optional): completion data
 *   of a 2xx response, `{ data?, nTokens? }`; a throw makes the sample a
 *   'malformed_response'. Without it the data is the body's bytes;
 * - `tokens(chunk, index)` (optional, token streams): the output tokens in a
 *   body chunk; the first chunk with any is the first token. Its sum is the
 *   token count unless `response` gives `nTokens`;
 * - `name(node)` (optional): the node's name, asked over the network with
 *   `await node.request('GET', path)` (`{ status, headers, body }`). Without
 *   it: `GET /` and the answer's `server` header, else the node's URL.
 * - `secretHeaders` (optional): names of request headers whose values are
 *   secrets, beyond the ones always treated so (lib/net/secrets.ts
 *   SECRET_HEADER_NAMES): no part of such a value is ever written.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { InterfaceError, SettingsError } from '../errors.js';
import { echo } from '../settings/messages.js';
import type { NetworkProtocol, NodeProbe, PreparedRequest, ResponseOutcome, ResponseReader } from './protocol.js';
import { Secrets } from './secrets.js';
import { createNetworkSut } from './transport.js';
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

/** The exports of a `--request` module. */
export interface HttpMapModule {
  totalSampleCount: number;
  performanceSampleCount?: number;
  request(index: number): HttpMapRequest;
  response?(response: HttpMapResponse): { data?: Uint8Array | string; nTokens?: number } | undefined | void;
  tokens?(chunk: Uint8Array, index: number): number;
  name?(node: NodeProbe): string | Promise<string>;
  secretHeaders?: readonly string[];
}

const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();

/** Imports and checks a mapping module (a path relative to the working directory, or a file URL). */
export async function loadHttpMap(request: string): Promise<HttpMapModule> {
  if (typeof request !== 'string' || request === '')
    throw new SettingsError('request', request, `request must be the path of a module exporting request(index), got ${typeof request}`);
  const url = /^file:/i.test(request) ? request : pathToFileURL(isAbsolute(request) ? request : resolve(process.cwd(), request)).href;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (cause) {
    throw new InterfaceError(`--request ${echo(request, 200)}: cannot import the module: ${(cause as Error)?.message ?? String(cause)}`);
  }
  const at = `--request ${echo(request, 200)}`;
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
  return httpProtocolOf(await loadHttpMap(options.request), options.request);
}

function httpProtocolOf(map: HttpMapModule, source: string): NetworkProtocol {
  const prepared = new Map<number, PreparedRequest>();
  // The values of the secret headers the requests carry, known before any is sent.
  const secrets = new Secrets();
  if (map.secretHeaders !== undefined) secrets.addHeaderNames(map.secretHeaders);
  const tokens = map.tokens;
  const mapResponse = map.response;
  const at = `--request ${echo(source, 120)}`;
  const build = (index: number): PreparedRequest => {
    let r: HttpMapRequest;
    try {
      r = map.request(index);
    } catch (cause) {
      throw new InterfaceError(`${at}: request(${index}) threw: ${(cause as Error)?.message ?? String(cause)}`);
    }
    if (typeof r !== 'object' || r === null || typeof r.path !== 'string' || !r.path.startsWith('/'))
      throw new InterfaceError(`${at}: request(${index}) must return { method?, path, headers?, body? } with a path starting with '/' (got ${typeof r === 'object' && r !== null ? `path ${echo(String(r.path), 60)}` : typeof r})`);
    const method = r.method ?? (r.body === undefined ? 'GET' : 'POST');
    if (method !== 'GET' && method !== 'POST') throw new InterfaceError(`${at}: request(${index}).method must be 'GET' or 'POST' (got ${echo(String(method), 20)})`);
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    let body: string | Uint8Array | undefined;
    if (r.body === undefined || typeof r.body === 'string' || r.body instanceof Uint8Array) body = r.body as string | Uint8Array | undefined;
    else {
      body = JSON.stringify(r.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    secrets.addHeaders(headers);
    return { method, path: r.path, headers, ...(body !== undefined ? { body } : {}) };
  };
  // The first sample's headers now: a transport decides before any load how
  // it routes failure messages, by whether there is a secret to hide.
  build(0);
  return {
    kind: 'http',
    totalSampleCount: map.totalSampleCount,
    performanceSampleCount: map.performanceSampleCount ?? map.totalSampleCount,
    streamsTokens: tokens !== undefined,
    secrets,
    async probe(node) {
      if (map.name !== undefined) return map.name(node);
      const r = await node.request('GET', '/');
      const server = r.headers.server;
      return typeof server === 'string' && server !== '' ? server : node.origin;
    },
    load(indices) {
      for (const i of indices) prepared.set(i, build(i));
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
      return new HttpMapReader(index, wantData, tokens, mapResponse);
    },
  };
}

/** Keeps the body only when someone reads it (the accuracy log or `response`). */
class HttpMapReader implements ResponseReader {
  private readonly chunks: Uint8Array[] | undefined;
  private tokenCount = 0;
  private problem: string | undefined;

  constructor(
    private readonly index: number,
    private readonly wantData: boolean,
    private readonly tokens: HttpMapModule['tokens'],
    private readonly response: HttpMapModule['response'],
  ) {
    this.chunks = wantData || response !== undefined ? [] : undefined;
  }

  onData(chunk: Uint8Array): Uint8Array | undefined {
    this.chunks?.push(chunk);
    if (this.tokens === undefined || this.problem !== undefined) return undefined;
    let n: number;
    try {
      n = this.tokens(chunk, this.index);
    } catch (error) {
      this.problem = `tokens() threw: ${(error as Error)?.message ?? String(error)}`;
      return undefined;
    }
    if (typeof n !== 'number' || !(n >= 0)) {
      this.problem = `tokens() must return a number >= 0, got ${echo(String(n), 40)}`;
      return undefined;
    }
    const first = this.tokenCount === 0 && n > 0;
    this.tokenCount += n;
    return first ? chunk : undefined;
  }

  onEnd(): ResponseOutcome {
    if (this.problem !== undefined) return { ok: false, kind: 'malformed_response', message: this.problem };
    const body = this.chunks === undefined ? EMPTY : this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    let data: Uint8Array | undefined = this.wantData ? body : undefined;
    let nTokens = this.tokens !== undefined ? this.tokenCount : undefined;
    if (this.response !== undefined) {
      let mapped: ReturnType<NonNullable<HttpMapModule['response']>>;
      try {
        mapped = this.response({ index: this.index, body });
      } catch (error) {
        return { ok: false, kind: 'malformed_response', message: `response() threw: ${(error as Error)?.message ?? String(error)}` };
      }
      if (mapped !== undefined && mapped !== null) {
        const d: unknown = mapped.data;
        if (d !== undefined) {
          if (typeof d === 'string') data = encoder.encode(d);
          else if (d instanceof Uint8Array) data = d;
          else return { ok: false, kind: 'malformed_response', message: `response() must return data as a string or a Uint8Array, got ${typeof d}` };
        }
        if (mapped.nTokens !== undefined) {
          if (typeof mapped.nTokens !== 'number') return { ok: false, kind: 'malformed_response', message: `response() must return nTokens as a number, got ${typeof mapped.nTokens}` };
          nTokens = mapped.nTokens;
        }
      }
    }
    return { ok: true, ...(this.wantData && data !== undefined ? { data } : {}), ...(nTokens !== undefined ? { nTokens } : {}) };
  }
}

/** `--sut http`: createNetworkSut over the mapping module's protocol. */
export async function createHttpSut(options: HttpSutOptions): Promise<NetworkSut> {
  const protocol = await createHttpProtocol(options);
  return createNetworkSut(protocol, options);
}
