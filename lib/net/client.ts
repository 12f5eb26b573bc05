/**
 * The request path of a network SUT: one undici Pool per node (keep-alive,
 * no pipelining), a node picked per sample, one `dispatch` per sample with a
 * reused handler object (no per-request stream or promise), the core's clock
 * read when each body chunk has been read and before the protocol's reader
 * sees it, and every way a request can end turned into exactly one
 * completion (normal or failed).
 */
import { Pool, type Dispatcher } from 'undici';

import { untilAborted } from '../api/abortable.js';
import { wantsResponse } from '../api/active.js';
import { firstTokenComplete, querySampleComplete, querySampleFailed } from '../api/completion.js';
import type { QuerySample } from '../api/types.js';
import { NetworkSetupError } from '../errors.js';
import { loadNative } from '../native/index.js';
import type { NodeAddress } from './nodes.js';
import { NodeStatsRecorder } from './node-stats.js';
import type { FailureKind, NetworkProtocol, NodeProbe, ResponseOutcome, ResponseReader } from './protocol.js';
import type { ClientConfig } from './client-config.js';
import { secretsOf, type Secrets } from './secrets.js';

export type { ClientConfig };


/** Longest excerpt of an error response's body in a failure message. */
const BODY_EXCERPT_BYTES = 200;
/** Largest probe response read (metadata, model lists). */
const PROBE_BODY_LIMIT = 8 << 20;

/** undici error codes that mean a timeout. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Why the transport itself ended a request (the abort reason it gives undici). */
class TransportAbort extends Error {
  constructor(readonly kind: FailureKind, message: string) {
    super(message);
  }
}

/** One node: its pool, statistics and rotation state. */
export class NetworkNode {
  outstanding = 0;
  /** clockNs() before which the node is skipped (after a connection failure). */
  backoffUntilNs = 0;
  /** The node's name in messages: its URL (never credentials). */
  readonly label: string;

  constructor(
    readonly index: number,
    readonly address: NodeAddress,
    readonly pool: Pool,
    readonly stats: NodeStatsRecorder,
  ) {
    this.label = address.url;
  }
}

/**
 * One request in flight: the undici handler, reused for later requests once
 * both the sample is completed and undici is done with it.
 */
class InFlight implements Dispatcher.DispatchHandler {
  id = 0;
  index = 0;
  node!: NetworkNode;
  sentNs = 0;
  lastChunkNs = 0;
  status = 0;
  reader: ResponseReader | undefined;
  wantData = false;
  /** The bytes of an error response kept for the message. */
  excerpt: Uint8Array | undefined;
  excerptLength = 0;
  controller: Dispatcher.DispatchController | undefined;
  /** The sample was completed (normally or failed). */
  settled = true;
  /** undici still calls this handler. */
  busy = false;
  /** Position in the client's in-flight list (timeouts, cancellation). */
  slot = -1;

  constructor(private readonly client: NetworkClient) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Failed already (timed out or cancelled while queued in the pool): stop here.
    if (this.settled) controller.abort(new TransportAbort('cancelled', 'request no longer wanted'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const stamp = this.client.clock();
    this.lastChunkNs = stamp;
    if (this.settled) return;
    if (this.status < 200 || this.status > 299) {
      this.keepExcerpt(chunk);
      return;
    }
    let first: Uint8Array | undefined;
    try {
      first = this.reader!.onData(chunk);
    } catch (error) {
      // The contract says a reader never throws; one that does fails its sample, not the socket.
      this.client.fail(this, 'malformed_response', `the ${this.client.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}`, stamp);
      return;
    }
    if (first !== undefined && this.client.streamsTokens) firstTokenComplete(this.id, first, stamp);
  }

  onResponseEnd(): void {
    const stamp = this.lastChunkNs !== 0 ? this.lastChunkNs : this.client.clock();
    if (!this.settled) {
      if (this.status < 200 || this.status > 299) {
        this.client.fail(this, 'http_status', `HTTP ${this.status}${this.excerptText()}`, stamp);
      } else {
        let outcome: ResponseOutcome;
        try {
          outcome = this.reader!.onEnd();
        } catch (error) {
          outcome = { ok: false, kind: 'malformed_response', message: `the ${this.client.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}` };
        }
        if (outcome.ok) this.client.succeed(this, outcome.data, outcome.nTokens, stamp);
        else this.client.fail(this, outcome.kind, outcome.message, stamp);
      }
    }
    this.client.release(this);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.settled) {
      const { kind, message } = classify(error);
      this.client.fail(this, kind, message, this.client.clock());
    }
    this.client.release(this);
  }

  private keepExcerpt(chunk: Uint8Array): void {
    const room = BODY_EXCERPT_BYTES - this.excerptLength;
    if (room <= 0) return;
    this.excerpt ??= new Uint8Array(BODY_EXCERPT_BYTES);
    const n = Math.min(room, chunk.length);
    this.excerpt.set(chunk.subarray(0, n), this.excerptLength);
    this.excerptLength += n;
  }

  private excerptText(): string {
    if (this.excerptLength === 0) return '';
    const text = Buffer.from(this.excerpt!.buffer, 0, this.excerptLength).toString('utf8');
    // eslint-disable-next-line no-control-regex
    return `: ${text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim()}${this.excerptLength >= BODY_EXCERPT_BYTES ? '...' : ''}`;
  }
}

/** What a request's error means for the sample. */
function classify(error: Error): { kind: FailureKind; message: string } {
  if (error instanceof TransportAbort) return { kind: error.kind, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return { kind: 'timeout', message: `${error.message} (${code})` };
  if (code === 'UND_ERR_ABORTED' || code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED')
    return { kind: 'cancelled', message: `${error.message} (${code})` };
  return { kind: 'connection', message: typeof code === 'string' ? `${error.message} (${code})` : error.message };
}

/** Issues samples over the nodes' pools from the thread that owns them. */
export class NetworkClient {
  readonly nodes: NetworkNode[];
  readonly streamsTokens: boolean;
  readonly clock: () => number;
  private readonly free: InFlight[] = [];
  private readonly inFlight: InFlight[] = [];
  private nextNode = 0;
  private cancelled: string | undefined;
  private closed = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly timeoutNs: number;
  private readonly backoffNs: number;
  /** Protocol headers object -> the same with authorization (protocols return one object for all requests). */
  private lastHeaders: Record<string, string> | undefined;
  private lastMerged: Record<string, string> | undefined;
  /** What no message may carry (the API key, the protocol's secret headers). */
  readonly secrets: Secrets;

  constructor(
    readonly protocol: NetworkProtocol,
    addresses: readonly NodeAddress[],
    readonly config: ClientConfig,
    statsSlices: readonly Float64Array[],
    /** Shared with the main thread (dispatch workers): non-zero once the run was stopped. */
    private readonly cancelFlag?: Int32Array,
  ) {
    const native = loadNative();
    this.clock = () => native.clockNs();
    this.streamsTokens = protocol.streamsTokens;
    this.secrets = secretsOf(protocol, config.apiKey);
    this.timeoutNs = config.requestTimeoutMs * 1e6;
    this.backoffNs = config.backoffMs * 1e6;
    this.nodes = addresses.map(
      (address, i) =>
        new NetworkNode(
          i,
          address,
          new Pool(address.origin, {
            connections: config.connections,
            pipelining: 1,
            connectTimeout: config.connectTimeoutMs,
            // The whole-request sweep below times requests out: no undici timer per request.
            headersTimeout: 0,
            bodyTimeout: 0,
            keepAliveTimeout: 30_000,
            allowH2: config.http2,
          }),
          new NodeStatsRecorder(statsSlices[i]!),
        ),
    );
  }

  /**
   * Probes every node through the protocol; the names, in node order.
   * `stop` aborted: the probes' requests end and this rejects at once with
   * its reason (a protocol's own waiting, e.g. a module's name(), is left).
   */
  async probeAll(stop?: AbortSignal): Promise<string[]> {
    return untilAborted(Promise.all(this.nodes.map((node) => this.probeNode(node, stop))), stop);
  }

  private async probeNode(node: NetworkNode, stop: AbortSignal | undefined): Promise<string> {
    const probe: NodeProbe = {
      origin: node.address.url,
      request: (method, path, body) => this.probeRequest(node, method, path, body, stop),
    };
    try {
      return await this.protocol.probe(probe);
    } catch (error) {
      if (stop?.aborted === true) throw stop.reason;
      // Protocols quote what the node answered (an error body, a model list): never a secret.
      if (error instanceof NetworkSetupError) throw this.secrets.redactError(error);
      throw new NetworkSetupError(`node ${node.label}: ${this.redact((error as Error)?.message ?? String(error))}`, { url: node.label, cause: error });
    }
  }

  private async probeRequest(
    node: NetworkNode,
    method: 'GET' | 'POST',
    path: string,
    body?: string,
    stop?: AbortSignal,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Uint8Array }> {
    const ms = this.config.probeTimeoutMs;
    const timeout = AbortSignal.timeout(ms);
    // The run's stop ends a probe at once too (a node that never answers must not hold a Ctrl-C).
    const signal = stop === undefined ? timeout : AbortSignal.any([timeout, stop]);
    try {
      const response = await node.pool.request({
        method,
        path: node.address.basePath + path,
        headers: this.headers(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(body !== undefined ? { body } : {}),
        headersTimeout: ms,
        bodyTimeout: ms,
        signal,
      });
      const chunks: Buffer[] = [];
      let length = 0;
      for await (const chunk of response.body) {
        length += (chunk as Buffer).length;
        if (length > PROBE_BODY_LIMIT) {
          response.body.destroy();
          throw new NetworkSetupError(`node ${node.label}: ${method} ${path} answered with more than ${PROBE_BODY_LIMIT} bytes`, { url: node.label });
        }
        chunks.push(chunk as Buffer);
      }
      return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
    } catch (error) {
      if (stop?.aborted === true) throw stop.reason;
      if (error instanceof NetworkSetupError) throw error;
      const code = (error as { code?: unknown }).code;
      const timedOut = timeout.aborted || (typeof code === 'string' && TIMEOUT_CODES.has(code));
      const why = timedOut
        ? `no answer within ${ms} ms`
        : `cannot connect or read: ${(error as Error)?.message ?? String(error)}${typeof code === 'string' ? ` (${code})` : ''}`;
      throw new NetworkSetupError(`node ${node.label} is not reachable: ${method} ${path}: ${this.redact(why)}`, { url: node.label, cause: error });
    }
  }

  /** The protocol's headers with authorization added (cached by identity). */
  private headers(base: Record<string, string>): Record<string, string> {
    if (this.config.apiKey === undefined) return base;
    if (base === this.lastHeaders) return this.lastMerged!;
    const merged = { ...base, authorization: `Bearer ${this.config.apiKey}` };
    this.lastHeaders = base;
    this.lastMerged = merged;
    return merged;
  }

  /** A message never carries a secret, not even part of one, when a server echoes it back (lib/net/secrets.ts). */
  redact(text: string): string {
    return this.secrets.redact(text);
  }

  /** Sends each sample whole to one node. */
  issue(samples: readonly QuerySample[]): void {
    for (let i = 0; i < samples.length; i++) this.issueOne(samples[i]!);
  }

  private issueOne(sample: QuerySample): void {
    const request = this.free.pop() ?? new InFlight(this);
    const now = this.clock();
    const node = this.pick(now);
    request.id = sample.id;
    request.index = sample.index;
    request.node = node;
    request.sentNs = now;
    request.lastChunkNs = 0;
    request.status = 0;
    request.excerptLength = 0;
    request.controller = undefined;
    request.settled = false;
    request.busy = true;
    request.slot = this.inFlight.length;
    this.inFlight.push(request);
    node.outstanding++;
    node.stats.requested();
    if (this.cancelled === undefined && this.cancelFlag !== undefined && Atomics.load(this.cancelFlag, 0) !== 0) this.cancelled = 'the run was stopped';
    if (this.cancelled !== undefined) {
      this.fail(request, 'cancelled', this.cancelled, now);
      this.release(request);
      return;
    }
    request.wantData = wantsResponse(sample.id);
    let prepared;
    try {
      prepared = this.protocol.request(sample.index);
      request.reader = this.protocol.reader(sample.index, request.wantData);
    } catch (error) {
      // A protocol that cannot build its request is a bug in it or its data: the run must hear of it.
      this.settle(request);
      this.release(request);
      throw error;
    }
    if (this.sweepTimer === undefined && (this.timeoutNs > 0 || this.cancelFlag !== undefined)) this.startSweep();
    const base = node.address.basePath;
    node.pool.dispatch(
      {
        method: prepared.method,
        path: base === '' ? prepared.path : base + prepared.path,
        headers: this.headers(prepared.headers),
        body: prepared.body ?? null,
      },
      request,
    );
  }

  /** The node for the next sample: round-robin, or the one with the fewest requests outstanding. */
  private pick(now: number): NetworkNode {
    const nodes = this.nodes;
    const n = nodes.length;
    if (n === 1) return nodes[0]!;
    const start = this.nextNode;
    this.nextNode = start + 1 === n ? 0 : start + 1;
    if (this.config.balance === 'round-robin') {
      for (let k = 0; k < n; k++) {
        const node = nodes[(start + k) % n]!;
        if (node.backoffUntilNs <= now) return node;
      }
      return nodes[start]!;
    }
    // Least outstanding; ties go round the nodes so idle nodes share the load.
    let best: NetworkNode | undefined;
    for (let k = 0; k < n; k++) {
      const node = nodes[(start + k) % n]!;
      if (node.backoffUntilNs > now) continue;
      if (best === undefined || node.outstanding < best.outstanding) best = node;
    }
    return best ?? nodes[start]!;
  }

  succeed(request: InFlight, data: Uint8Array | undefined, nTokens: number | undefined, stampNs: number): void {
    this.settle(request);
    request.node.stats.completed(stampNs - request.sentNs);
    querySampleComplete(request.id, request.wantData ? data : undefined, nTokens, stampNs);
  }

  fail(request: InFlight, kind: FailureKind, message: string, stampNs: number): void {
    this.settle(request);
    const node = request.node;
    node.stats.failed(kind);
    if (kind === 'connection') node.backoffUntilNs = this.clock() + this.backoffNs;
    // The detail line reads 'Sample failed (<kind>): node <url>: <message>'.
    querySampleFailed(request.id, kind, this.redact(`node ${node.label}: ${message}`), stampNs);
  }

  private settle(request: InFlight): void {
    request.settled = true;
    request.reader = undefined;
    request.node.outstanding--;
    // Out of the in-flight list (swap with the last).
    const list = this.inFlight;
    const last = list.pop()!;
    if (last !== request) {
      list[request.slot] = last;
      last.slot = request.slot;
    }
    request.slot = -1;
  }

  /** undici is done with the handler: reusable once its sample is settled too. */
  release(request: InFlight): void {
    request.busy = false;
    request.controller = undefined;
    if (request.settled && this.free.length < 4096) this.free.push(request);
  }

  /**
   * Whole-request timeouts (and, in a dispatch worker, the main thread's
   * stop): a sweep while requests are in flight (no timer per request).
   */
  private startSweep(): void {
    const timeout = this.config.requestTimeoutMs;
    const period = timeout > 0 ? Math.max(5, Math.min(100, Math.floor(timeout / 4))) : 100;
    this.sweepTimer = setInterval(() => {
      if (this.inFlight.length === 0) {
        clearInterval(this.sweepTimer);
        this.sweepTimer = undefined;
        return;
      }
      if (this.cancelFlag !== undefined && Atomics.load(this.cancelFlag, 0) !== 0) {
        this.cancelAll('the run was stopped');
        return;
      }
      const now = this.clock();
      const limit = this.timeoutNs;
      if (limit === 0) return;
      for (let i = this.inFlight.length - 1; i >= 0; i--) {
        const request = this.inFlight[i];
        if (request === undefined || now - request.sentNs < limit) continue;
        this.abort(request, 'timeout', `no complete response within ${this.config.requestTimeoutMs} ms`, now);
      }
    }, period);
    this.sweepTimer.unref();
  }

  /** Fails a request now and stops undici's work on it. */
  private abort(request: InFlight, kind: FailureKind, message: string, stampNs: number): void {
    if (request.settled) return;
    try {
      this.fail(request, kind, message, stampNs);
    } finally {
      request.controller?.abort(new TransportAbort(kind, message));
    }
  }

  /** Fails every request in flight, and every later one, as 'cancelled' (the run stopped). */
  cancelAll(reason: string): void {
    this.cancelled ??= reason;
    const now = this.clock();
    while (this.inFlight.length > 0) {
      const request = this.inFlight[this.inFlight.length - 1]!;
      try {
        this.abort(request, 'cancelled', reason, now);
      } catch {
        // No run to complete into any more (close() after the run): settled all the same.
      }
    }
  }

  get outstanding(): number {
    return this.inFlight.length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelAll('the network SUT was closed');
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    await Promise.all(this.nodes.map((node) => node.pool.destroy().catch(() => undefined)));
  }
}
