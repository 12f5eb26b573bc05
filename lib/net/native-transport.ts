/**
 * The native transport of a network SUT (native/http_client.h): the core's
 * issue thread writes each request on an idle keep-alive connection itself
 * and a reactor thread reads the response, stamps its last byte and
 * completes the sample, so no JS runs between a query's due time and its
 * completion. Responses whose bodies are logged (accuracy mode, sampled
 * accuracy-log entries) come back here, already stamped, with the response
 * headers the protocol reads, for the protocol's reader. Token streams are
 * read as they arrive (lib/net/native-stream.ts).
 * undici (lib/net/client.ts) stays the transport for https, HTTP/2,
 * per-node path prefixes and dispatch workers.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { yieldToEventLoop } from '../abortable.js';
import { activeSeries, wantsResponse } from '../dispatch/active.js';
import { querySampleComplete, querySampleFailed } from '../api/completion.js';
import { InterfaceError, NetworkSetupError, SettingsError } from '../errors.js';
import { loadNative, type NativeHttpSut } from '../native/index.js';
import type { ClientConfig } from './client-config.js';
import type { NodeAddress } from './nodes.js';
import { decodeHeaders, NativeStreamReader } from './native-stream.js';
import { createStatsBuffer, nodeSlice, NodeStatsRecorder } from './node-stats.js';
import { checkedOutcome, isPendingOutcome, settleOutcome } from './outcome.js';
import { DEFAULT_MAX_RESPONSE_BYTES, FAILURE_KINDS, USER_FUNCTION_TIMEOUT_MS, type FailureKind, type NetworkProtocol, type PreparedRequest, type ResponseOutcome } from './protocol.js';
import type { NetworkStats } from './types.js';
import type { RequestLog } from './request-log.js';
import type { Secrets } from './secrets.js';
import { StreamStatsRecorder } from './stream-stats.js';

/** File descriptors left to the rest of the process when the pools are checked against the open-file limit. */
const RESERVED_FILES = 100;
/**
 * A load waits this long at most (and at most the request timeout) for
 * requests of the last series still outstanding, then cancels them.
 */
const SETTLE_LIMIT_MS = 30_000;
/** The wait when requests have no timeout (the core has stopped waiting for them already). */
const SETTLE_WITHOUT_TIMEOUT_MS = 1_000;
/** A cancel is the reactor's work of a moment; beyond this something is wrong. */
const CANCEL_SETTLE_MS = 5_000;

/** `transport`: which HTTP client sends the requests. */
export const TRANSPORTS = ['auto', 'native', 'undici'] as const;
export type TransportChoice = (typeof TRANSPORTS)[number];

/** The most response headers the native client captures for a protocol (native/http_client.h). */
export const MAX_NATIVE_RESPONSE_HEADERS = 8;

/** A header name as the native client compares it: lowercase token characters. */
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,256}$/;

/** The protocol's response header names, lowercase ('' and the reason when the native client cannot capture them). */
function nativeHeaderNames(protocol: NetworkProtocol): { names: string[]; problem: string } {
  const listed: unknown = protocol.responseHeaders ?? [];
  if (!Array.isArray(listed)) return { names: [], problem: `the ${protocol.kind} protocol's responseHeaders is not an array of header names` };
  const names = [...new Set(listed.map((n: unknown) => (typeof n === 'string' ? n.toLowerCase() : '')))];
  const bad = names.find((n) => !HEADER_NAME.test(n));
  if (bad !== undefined) return { names: [], problem: `the ${protocol.kind} protocol's responseHeaders has '${bad.slice(0, 60)}', not a header name` };
  if (names.length > MAX_NATIVE_RESPONSE_HEADERS)
    return { names: [], problem: `the ${protocol.kind} protocol reads ${names.length} response headers, more than the native client's ${MAX_NATIVE_RESPONSE_HEADERS}` };
  return { names, problem: '' };
}

/**
 * Why the native transport cannot serve this SUT ('' when it can): it speaks
 * plain HTTP/1.1 (whole responses, or token streams read as they arrive),
 * and hands over at most MAX_NATIVE_RESPONSE_HEADERS response headers.
 */
export function nativeTransportObstacle(protocol: NetworkProtocol, addresses: readonly NodeAddress[], config: ClientConfig): string {
  const native = loadNative();
  if (!native.nativeHttpAvailable) return `the native HTTP client is not available on ${process.platform}`;
  if (config.http2) return 'http2 is on';
  const https = addresses.find((a) => !a.origin.startsWith('http:'));
  if (https !== undefined) return `node ${https.url} is not plain http:`;
  if (addresses.some((a) => a.basePath !== addresses[0]!.basePath)) return 'the nodes have different path prefixes';
  return nativeHeaderNames(protocol).problem;
}

const decoder = new TextDecoder();

/** Numbers per response in onResponses' `meta` (bindings/http_sut_binding.cc, kResponseRecord). */
const RESPONSE_RECORD = 10;

/** Samples whose requests are built between two reads of the clock (load). */
const LOAD_SLICE = 256;
/** The event loop runs at least this often while a load builds its requests. */
const LOAD_YIELD_MS = 10;

/** A growing byte buffer (doubling): one allocation per load, not one per request. */
export class RequestWriter {
  private buffer = Buffer.allocUnsafe(1 << 16);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.byteLength) return;
    if (this.length + n > 0xffffffff) throw new NetworkSetupError('the requests of one load exceed 4 GiB', {});
    let size = this.buffer.byteLength * 2;
    while (size < this.length + n) size *= 2;
    const grown = Buffer.allocUnsafe(Math.min(size, 0xffffffff));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  text(s: string): void {
    this.reserve(Buffer.byteLength(s, 'utf8'));
    this.length += this.buffer.write(s, this.length, 'utf8');
  }

  raw(bytes: Uint8Array): void {
    this.reserve(bytes.byteLength);
    this.buffer.set(bytes, this.length);
    this.length += bytes.byteLength;
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

/** The same names and values (in the same order: the encoded block keeps it). */
function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}

/** One node's host and port as the native client connects to it. */
function nativeNode(address: NodeAddress): { host: string; port: number; label: string } {
  const url = new URL(address.origin);
  // URL keeps IPv6 literals in brackets; getaddrinfo wants them bare.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port !== '' ? Number(url.port) : 80;
  return { host, port, label: address.url };
}

/** The native client with the protocol's requests loaded into it. */
export class NativeTransport {
  readonly handle: NativeHttpSut;
  private readonly basePath: string;
  private readonly authorization: string;
  /** The JS side's corrections of the native counts (a body the reader refused), summed with them. */
  readonly corrections: Float64Array;
  private readonly correctionRecorders: NodeStatsRecorder[];
  private readonly headerBlocks = new WeakMap<Record<string, string>, Uint8Array>();
  private lastHeaders: Record<string, string> | undefined;
  private lastBlock: Uint8Array | undefined;
  private readonly streams: NativeStreamReader | undefined;
  /** The response headers the protocol reads, lowercase: the indices of the captured entries. */
  private readonly headerNames: readonly string[];
  /** How many secrets the native client was handed (more are added as requests are built). */
  private secretsHanded = 0;
  /** How long an async reader's outcome may take (the request timeout, or USER_FUNCTION_TIMEOUT_MS for none). */
  private readonly outcomeTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly streamStats: StreamStatsRecorder;
  private readonly idleRuntimeThreads: boolean;
  private readonly jsThreadNice: number;

  constructor(
    private readonly protocol: NetworkProtocol,
    private readonly addresses: readonly NodeAddress[],
    config: ClientConfig,
    readEveryResponse: boolean,
    /** What no failure message may carry (lib/net/secrets.ts). */
    private readonly secrets: Secrets,
    /** The stream-stats slice of this thread (lib/net/stream-stats.ts). */
    streamSlice: Float64Array,
    /** The per-request log: then every outcome, failures included, reaches JS. */
    private readonly requestLog?: RequestLog,
  ) {
    const maxBodyBytes = protocol.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (typeof maxBodyBytes !== 'number' || !Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1)
      throw new InterfaceError(`the ${protocol.kind} protocol's maxResponseBytes must be an integer >= 1, got ${String(maxBodyBytes)}`);
    // Every connection is a file descriptor: the pools must fit the process's limit.
    const files = loadNative().openFileLimit();
    const sockets = config.connections * addresses.length;
    if (files >= 0 && sockets + RESERVED_FILES > files)
      throw new SettingsError('connections', config.connections,
        `connections ${config.connections} per node x ${addresses.length} node(s) need up to ${sockets} sockets, beyond this process's open-file limit of ${files} (ulimit -n) less ${RESERVED_FILES} for the rest of the process; lower connections or raise the limit`);
    this.requestTimeoutMs = config.requestTimeoutMs;
    this.idleRuntimeThreads = config.idleRuntimeThreads;
    this.jsThreadNice = config.jsThreadNice;
    this.basePath = addresses[0]!.basePath;
    this.corrections = createStatsBuffer(addresses.length, 1, false);
    this.correctionRecorders = addresses.map((_, i) => new NodeStatsRecorder(nodeSlice(this.corrections, addresses.length, 0, i)));
    this.authorization = config.apiKey === undefined ? '' : `authorization: Bearer ${config.apiKey}\r\n`;
    this.outcomeTimeoutMs = config.requestTimeoutMs > 0 ? config.requestTimeoutMs : USER_FUNCTION_TIMEOUT_MS;
    const headers = nativeHeaderNames(protocol);
    if (headers.problem !== '') throw new InterfaceError(headers.problem);
    const headerNames = (this.headerNames = headers.names);
    this.streamStats = new StreamStatsRecorder(streamSlice);
    const streams = (this.streams = protocol.streamsTokens
      ? new NativeStreamReader(protocol, headerNames, addresses.map((a) => a.url), this.correctionRecorders, (text) => this.redact(text), this.outcomeTimeoutMs,
          this.streamStats, requestLog)
      : undefined);
    // The client's own failure messages (an error status's body excerpt)
    // pass its redactor, which applies secrets.ts's rule to these.
    const secretList = secrets.list();
    this.secretsHanded = secretList.length;
    this.handle = new (loadNative().NativeHttpSut)({
      nodes: addresses.map(nativeNode),
      connectionsPerNode: config.connections,
      leastOutstanding: config.balance === 'least-outstanding',
      connectTimeoutMs: config.connectTimeoutMs,
      requestTimeoutMs: config.requestTimeoutMs,
      nodeBackoffMs: config.backoffMs,
      maxBodyBytes,
      hostReadsEveryBody: readEveryResponse,
      hostReadsEveryOutcome: requestLog !== undefined,
      responsePollUs: config.responsePollUs,
      inlineReactor: config.inlineReactor,
      clientThreads: config.clientThreads,
      secrets: secretList,
      responseHeaders: headerNames,
      ...(streams !== undefined ? { streamBodies: true, onStream: (meta: Float64Array, data: Uint8Array, count: number) => streams.onEvents(meta, data, count) } : {}),
      onResponses: (meta, data, count) => {
        for (let i = 0, m = 0; i < count; i++, m += RESPONSE_RECORD) {
          const body = data.subarray(meta[m + 4]!, meta[m + 4]! + meta[m + 5]!);
          const failure = meta[m + 9]!;
          if (failure >= 0) {
            // hostReadsEveryOutcome: a failure the client saw, its message where the body goes.
            this.failed(meta[m]!, meta[m + 1]!, meta[m + 2]!, meta[m + 3]!, FAILURE_KINDS[failure] ?? 'connection', decoder.decode(body), meta[m + 8]!);
            continue;
          }
          // No view of the captured headers when the protocol reads none (an object less per response).
          const headerBytes = this.headerNames.length > 0 ? data.subarray(meta[m + 6]!, meta[m + 6]! + meta[m + 7]!) : undefined;
          this.read(meta[m]!, meta[m + 1]!, meta[m + 2]!, body, meta[m + 3]!, headerBytes, meta[m + 8]!);
        }
      },
    });
  }

  /** Each client thread's outcomes read, requests written, reactor CPU time and connection counts (NetworkStats.clientThreads). */
  threadCounts(): NonNullable<NetworkStats['clientThreads']> {
    const threads = this.handle.reactorCounts().threads;
    return threads.map((t) => ({
      responses: t.responses,
      reactorCpuMs: t.reactorCpuNs / 1e6,
      // One client thread: the issue thread writes every request itself, none is handed over.
      ...(threads.length > 1 ? { requestsWritten: t.handedWrites } : {}),
      openedConnections: t.openedConnections,
      refusedConnections: t.refusedConnections,
      retriedRequests: t.retriedRequests,
    }));
  }

  /** Secrets the protocol found building requests (a mapping module's per-sample headers) go to the client too. */
  private handSecrets(): void {
    if (this.secrets.size === this.secretsHanded) return;
    const list = this.secrets.list();
    this.handle.setSecrets(list);
    this.secretsHanded = list.length;
  }

  /** How many of the runtime's helper threads run at idle priority (idleRuntimeThreads; 0: none moved, -1: no such policy here). */
  runtimeThreadsIdle = 0;
  /** Why none were moved ('' when some were, or when not asked). */
  runtimeThreadsNote = '';
  /** With jsThreadNice: the JS thread's nice value, the core threads' slice (0: the kernel's own) and what was not done. */
  jsThread: { nice: number; sliceNs: number; note: string } | undefined;

  /**
   * Opens a connection to every node (after the probes; more open as
   * needed): NetworkSetupError naming the node otherwise. Then, with
   * idleRuntimeThreads, moves the runtime's helper threads to idle priority;
   * with jsThreadNice, lowers the JS thread and gives loadgen's threads short slices.
   */
  async start(): Promise<void> {
    const error = await this.handle.start();
    if (error !== '') throw new NetworkSetupError(this.redact(error), {});
    if (this.idleRuntimeThreads) {
      const moved = await loadNative().idleRuntimeThreads();
      this.runtimeThreadsIdle = moved.idle;
      this.runtimeThreadsNote = moved.note;
    }
    // After the reactors started (they get the short slice too), before any run's issue thread.
    if (this.jsThreadNice > 0) this.jsThread = loadNative().yieldJsThread(this.jsThreadNice);
  }

  /**
   * loadSamplesToRam: the last series' requests are finished first (see
   * settleOutstanding); then the protocol builds its requests, whose bytes
   * are written into one buffer and handed to the native table in one call.
   * Built in slices between which the event loop runs (a large load must not
   * hold off a signal); once `stopped()` (the run was stopped) it ends
   * without loading the table.
   */
  async load(indices: readonly number[], stopped: () => boolean = () => false): Promise<void> {
    await this.settleOutstanding();
    const writer = new RequestWriter();
    const list = Uint32Array.from(indices);
    const layout = new Uint32Array(list.length * 4);
    let since = performance.now();
    for (let at = 0; at < list.length; at += LOAD_SLICE) {
      if (stopped()) return;
      const end = Math.min(at + LOAD_SLICE, list.length);
      await this.protocol.load(indices.slice(at, end));
      for (let i = at; i < end; i++) this.encodeInto(this.protocol.request(list[i]!), writer, layout, i * 4);
      if (performance.now() - since >= LOAD_YIELD_MS) {
        await yieldToEventLoop();
        since = performance.now();
      }
    }
    if (stopped()) return;
    // Before any of these requests is sent: nothing is outstanding now.
    this.handSecrets();
    this.handle.setRequests(list, writer.bytes(), layout);
  }

  /**
   * Requests of the last series that outlived it (the core stopped waiting
   * for them: max duration, completion timeout; or their outcomes are on
   * their way) are finished before the next series loads: the next one's
   * latencies must not include a server still busy with them, and the
   * request table they point into is then free to replace. They get until
   * the request timeout (at most SETTLE_LIMIT_MS; SETTLE_WITHOUT_TIMEOUT_MS
   * without one) to complete or fail, then are cancelled, completing no
   * sample: the core counted them incomplete already.
   */
  private async settleOutstanding(): Promise<void> {
    if (this.handle.outstanding() === 0) return;
    const boundMs = Math.min(this.requestTimeoutMs > 0 ? this.requestTimeoutMs : SETTLE_WITHOUT_TIMEOUT_MS, SETTLE_LIMIT_MS);
    const deadline = performance.now() + boundMs;
    while (this.handle.outstanding() !== 0 && performance.now() < deadline) await sleep(2);
    if (this.handle.outstanding() === 0) return;
    this.handle.cancelOutstanding(`still outstanding ${boundMs} ms after its series ended (cancelled before the next one loads)`);
    const cancelDeadline = performance.now() + CANCEL_SETTLE_MS;
    while (this.handle.outstanding() !== 0) {
      if (performance.now() > cancelDeadline)
        throw new NetworkSetupError(`the native transport still has ${this.handle.outstanding()} requests of the last series outstanding ${CANCEL_SETTLE_MS} ms after cancelling them`, {});
      await sleep(1);
    }
  }

  async unload(indices: readonly number[]): Promise<void> {
    // The whole table goes: loads come in sets (one per series or FindPeak search).
    if (this.handle.outstanding() === 0) {
      this.handle.clearRequests();
      this.streams?.reset();
    }
    await this.protocol.unload(indices);
  }

  /**
   * A request's bytes into `writer`: the request line, then (after the
   * node's Host line, which the native client adds) headers and body;
   * `layout[at..at+3]` = line offset, line length, rest offset, rest length.
   */
  encodeInto(request: PreparedRequest, writer: RequestWriter, layout: Uint32Array, at: number): void {
    const path = this.basePath === '' ? request.path : this.basePath + request.path;
    if (/[\s\0]/.test(path)) throw new NetworkSetupError(`the ${this.protocol.kind} protocol built a request path with white space or NUL: '${path.slice(0, 80)}'`, {});
    const body = request.body;
    const lineStart = writer.length;
    writer.text(`${request.method} ${path} HTTP/1.1\r\n`);
    const restStart = writer.length;
    writer.raw(this.headerBlock(request.headers));
    const bodyLength = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
    writer.text(body !== undefined || request.method === 'POST' ? `content-length: ${bodyLength}\r\n\r\n` : '\r\n');
    if (body !== undefined) {
      if (typeof body === 'string') writer.text(body);
      else writer.raw(body);
    }
    layout[at] = lineStart;
    layout[at + 1] = restStart - lineStart;
    layout[at + 2] = restStart;
    layout[at + 3] = writer.length - restStart;
  }

  /**
   * The protocol's headers (without the transport's own: framing, host,
   * authorization) and the authorization line, encoded once per headers
   * object: protocols hand the same object to every request.
   */
  private headerBlock(headers: Record<string, string>): Uint8Array {
    const cached = this.headerBlocks.get(headers);
    if (cached !== undefined) return cached;
    // Protocols that copy their headers per request: the same as the last ones?
    if (this.lastHeaders !== undefined && sameHeaders(headers, this.lastHeaders)) return this.lastBlock!;
    let head = '';
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (lower === 'host' || lower === 'content-length' || lower === 'transfer-encoding' || lower === 'authorization' || lower === 'connection') continue;
      if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value)) throw new NetworkSetupError(`the ${this.protocol.kind} protocol built a header with a line break or NUL: '${name.slice(0, 80)}'`, {});
      head += `${name}: ${value}\r\n`;
    }
    const block = Buffer.from(head + this.authorization, 'utf8');
    this.headerBlocks.set(headers, block);
    this.lastHeaders = headers;
    this.lastBlock = block;
    return block;
  }

  /**
   * A response whose body JS reads: through the protocol's reader (its
   * headers first, as undici's onResponseStart), completed with the native stamp.
   */
  private read(id: number, index: number, stampNs: number, body: Uint8Array, node: number, headerBytes: Uint8Array | undefined, sentNs: number): void {
    const label = this.addresses[node]?.url ?? this.addresses[0]!.url;
    const wantData = wantsResponse(id);
    let verdict: ResponseOutcome | PromiseLike<ResponseOutcome>;
    try {
      const reader = this.protocol.reader(index, wantData);
      if (headerBytes !== undefined && reader.onHeaders !== undefined) reader.onHeaders(decodeHeaders(headerBytes, this.headerNames));
      reader.onData(body);
      verdict = reader.onEnd();
    } catch (error) {
      verdict = { ok: false, kind: 'malformed_response', message: `the ${this.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}` };
    }
    // An async user function maps the response: completed with the native stamp once it settles
    // (a closure only then: the common, synchronous case allocates none).
    if (isPendingOutcome(verdict))
      settleOutcome(verdict, this.protocol.kind, this.outcomeTimeoutMs, (outcome) => this.complete(id, index, wantData, node, label, stampNs, sentNs, outcome));
    else this.complete(id, index, wantData, node, label, stampNs, sentNs, checkedOutcome(verdict, this.protocol.kind));
  }

  private complete(id: number, index: number, wantData: boolean, node: number, label: string, stampNs: number, sentNs: number, outcome: ResponseOutcome): void {
    try {
      if (outcome.ok) {
        querySampleComplete(id, wantData ? outcome.data : undefined, outcome.nTokens, stampNs);
        // After the completion, with its stamps: nothing here is inside a latency.
        if (activeSeries.performance) this.streamStats.input(outcome.inputTokens);
        this.requestLog?.record(id, index, node, sentNs, 0, stampNs, outcome.inputTokens, outcome.nTokens, undefined);
      } else {
        this.correctionRecorders[node]?.reclassified(outcome.kind);
        querySampleFailed(id, outcome.kind, this.redact(`node ${label}: ${outcome.message}`), stampNs);
        this.requestLog?.record(id, index, node, sentNs, 0, stampNs, undefined, undefined, outcome.kind);
      }
    } catch {
      // No run to complete into any more (a response after the run ended): nothing to record.
    }
  }

  /** A failure the client saw (hostReadsEveryOutcome: the request log wants every request); its message names the node. */
  private failed(id: number, index: number, stampNs: number, node: number, kind: FailureKind, message: string, sentNs: number): void {
    try {
      querySampleFailed(id, kind, this.redact(message), stampNs);
      this.requestLog?.record(id, index, node, sentNs, 0, stampNs, undefined, undefined, kind);
    } catch {
      // No run to complete into any more.
    }
  }

  cancelAll(reason: string): void {
    this.handle.cancelAll(reason);
  }

  /** Per-node statistics in lib/net/node-stats.ts's layout (one thread's slices). */
  nodeStats(): Float64Array {
    return this.handle.nodeStats();
  }

  close(): void {
    this.handle.close();
  }

  private redact(text: string): string {
    return this.secrets.redact(text);
  }
}
