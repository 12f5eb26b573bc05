/**
 * The request path of a network SUT: per node a pool of undici Clients (one
 * connection each, keep-alive, no pipelining) that this module manages, a
 * node picked per sample, one `dispatch` per sample with a reused handler
 * object (no per-request stream or promise), the core's clock read when each
 * body chunk has been read and before the protocol's reader sees it, and
 * every way a request can end turned into exactly one completion (normal or
 * failed).
 *
 * Timing: a request is timed from when undici writes it to its connection
 * (onRequestStart), not from when it was queued for one: the per-node
 * latency and the request timeout both start there. A request waiting for a
 * connection is not timed out by the request timeout (an Offline run queues
 * by design); its wait is bounded all the same, since every connection frees
 * within the request timeout (or the connect timeout), and a node that
 * cannot get any connection fails its waiting requests at once.
 *
 * Failures (docs/network-suts.md, "Failures"): undici's parser errors are
 * 'malformed_response'; a connection closed or reset before the response was
 * complete is 'connection'; the request and connect timeouts are 'timeout';
 * the run stopped is 'cancelled'. A request whose connection ended before
 * any byte of its response is sent again once, on another connection (never
 * once a byte of it came). A new connection the server drops before
 * answering on it, while the node has other live connections (a server
 * that caps its connections), lowers the node's ceiling to those, so the
 * request's retry goes on one of them; the ceiling grows back by trial
 * connections while requests wait at it (ConnectionPool).
 */
import type { Dispatcher } from 'undici';

import { untilAborted } from '../abortable.js';
import { activeSeries, wantsResponse } from '../dispatch/active.js';
import { firstTokenComplete, querySampleComplete, querySampleFailed } from '../api/completion.js';
import type { QuerySample } from '../types/api.js';
import { NetworkSetupError } from '../errors.js';
import { loadNative } from '../native/index.js';
import type { NodeAddress } from './nodes.js';
import { probeUntilUp } from './node-wait.js';
import { NodeStatsRecorder } from './node-stats.js';
import { checkedOutcome, isPendingOutcome, settleOutcome } from './outcome.js';
import { DEFAULT_MAX_RESPONSE_BYTES, USER_FUNCTION_TIMEOUT_MS, type FailureKind, type NetworkProtocol, type NodeProbe, type ResponseHeaders, type ResponseOutcome, type ResponseReader } from './protocol.js';
import type { ClientConfig } from './client-config.js';
import type { RequestLog } from './request-log.js';
import { secretsOf, type Secrets } from './secrets.js';
import { STREAM_SLICE_LENGTH, StreamStatsRecorder, traceOutputEvents, type EventTrace } from './stream-stats.js';
import { classify, onlyChunked, REQUEST_ERROR_CODES, TransportAbort } from './undici-errors.js';
import { PROBE_BODY_LIMIT, probeRequest } from './undici-probe.js';
import { ConnectionPool, RequestQueue, type Connection, type PooledRequest } from './undici-pool.js';
export type { ClientConfig };

/** Longest excerpt of an error response's body in a failure message. */
const BODY_EXCERPT_BYTES = 200;
/** How often a dispatch worker looks at the main thread's stop flag while requests are out. */
const CANCEL_POLL_MS = 100;
/** One node: its connections, statistics and rotation state. */
export class NetworkNode {
  outstanding = 0;
  /** clockNs() before which the node is skipped (after a connection failure). */
  backoffUntilNs = 0;
  /** The node's name in messages: its URL (never credentials). */
  readonly label: string;

  constructor(
    readonly index: number,
    readonly address: NodeAddress,
    readonly pool: ConnectionPool<InFlight>,
    readonly stats: NodeStatsRecorder,
  ) {
    this.label = address.url;
  }
}

/**
 * One request in flight: the undici handler, reused for later requests once
 * both the sample is completed and undici is done with it.
 */
class InFlight implements PooledRequest, EventTrace {
  id = 0;
  index = 0;
  node!: NetworkNode;
  /** Bumped whenever the request moves on (issued, written, sent again, settled): queue entries of an older seq are stale. */
  seq = 0;
  /** clockNs() when undici wrote it to its connection (0: not yet). */
  sentNs = 0;
  lastChunkNs = 0;
  /** The read that brought the first output (0: none yet). */
  firstTokenNs = 0;
  /** Output events seen, and the stamp of the read that brought the last (inter-token gaps). */
  events = 0;
  lastEventNs = 0;
  status = 0;
  /** A byte of the response arrived (then it is never sent again). */
  responseStarted = false;
  /** Sent a second time already. */
  retried = false;
  options: Dispatcher.DispatchOptions | undefined;
  reader: ResponseReader | undefined;
  wantData = false;
  /** The bytes of an error response kept for the message. */
  excerpt: Uint8Array | undefined;
  excerptLength = 0;
  controller: Dispatcher.DispatchController | undefined;
  connection: Connection | undefined;
  /** The sample was completed (normally or failed). */
  settled = true;
  /** undici holds the handler (dispatched, not yet ended or failed). */
  inUndici = false;
  /** Position in the client's in-flight list (timeouts, cancellation). */
  slot = -1;

  constructor(private readonly client: NetworkClient) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Failed already (cancelled while waiting for its connection): stop here.
    if (this.settled) {
      controller.abort(new TransportAbort('cancelled', 'request no longer wanted'));
      return;
    }
    this.client.written(this);
  }

  onResponseStarted(): void {
    this.responseStarted = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    this.status = statusCode;
    if (statusCode < 200 || this.settled) return;
    // llhttp reads a body with another coding up to the close (or decodes none of it); like the native parser, only chunked is read.
    const coding = headers['transfer-encoding'];
    if (coding !== undefined && !onlyChunked(coding)) {
      const message = `unsupported Transfer-Encoding '${String(coding).slice(0, 60)}' (only chunked)`;
      this.client.fail(this, 'malformed_response', message, this.client.clock());
      controller.abort(new TransportAbort('malformed_response', message));
      return;
    }
    // Protocols that read response headers (KServe's Inference-Header-Content-Length) get a 2xx response's.
    if (statusCode <= 299 && this.reader?.onHeaders !== undefined) {
      try {
        this.reader.onHeaders(headers);
      } catch (error) {
        this.client.fail(this, 'malformed_response', `the ${this.client.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}`, this.client.clock());
      }
    }
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
    const reader = this.reader!;
    try {
      first = reader.onData(chunk);
    } catch (error) {
      // The contract says a reader never throws; one that does fails its sample, not the socket.
      this.client.fail(this, 'malformed_response', `the ${this.client.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}`, stamp);
      return;
    }
    if (first !== undefined && this.client.streamsTokens) {
      this.firstTokenNs = stamp;
      firstTokenComplete(this.id, first, stamp);
    }
    if (this.client.streamsTokens) traceOutputEvents(this, reader, stamp, this.client.streamStats);
  }

  onResponseEnd(): void {
    const connection = this.connection;
    if (connection !== undefined) connection.pool.answered(connection);
    this.complete();
    this.client.release(this);
  }

  /** The response was read whole: its outcome for the sample. */
  private complete(): void {
    const stamp = this.lastChunkNs !== 0 ? this.lastChunkNs : this.client.clock();
    if (!this.settled) {
      if (this.client.timedOut(this, stamp)) {
        // Read after its time was up (the timer had not run yet): a timeout all the same.
        this.client.fail(this, 'timeout', this.client.timeoutMessage, stamp);
      } else if (this.status < 200 || this.status > 299) {
        this.client.fail(this, 'http_status', `HTTP ${this.status}${this.excerptText()}`, stamp);
      } else {
        let verdict: ResponseOutcome | PromiseLike<ResponseOutcome>;
        try {
          verdict = this.reader!.onEnd();
        } catch (error) {
          verdict = { ok: false, kind: 'malformed_response', message: `the ${this.client.protocol.kind} reader threw: ${(error as Error)?.message ?? String(error)}` };
        }
        if (isPendingOutcome(verdict)) {
          this.client.completeWhenSettled(this, verdict, stamp);
        } else {
          const outcome = checkedOutcome(verdict, this.client.protocol.kind);
          if (outcome.ok) this.client.succeed(this, outcome, stamp);
          else this.client.fail(this, outcome.kind, outcome.message, stamp);
        }
      }
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const connection = this.connection;
    if (!this.settled && (this.status === 204 || this.status === 304) && (error as { code?: unknown }).code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
      // A 204 or 304 ends at its head whatever its Content-Length says (RFC 9112 6.3); undici
      // alone calls that a mismatch. Read as the whole response it is, as the native parser does.
      this.complete();
    } else if (!this.settled) {
      const { kind, message } = classify(error, this.status);
      const code = (error as { code?: unknown }).code;
      // No byte of the response came: the server never saw it, or dropped it unanswered.
      const socketFailed = (kind === 'connection' && !REQUEST_ERROR_CODES.has(code as string)) || code === 'UND_ERR_CONNECT_TIMEOUT';
      if (socketFailed && !this.responseStarted && this.client.sendAgain(this, connection, kind)) return;
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

/** Issues samples over the nodes' connections from the thread that owns them. */
export class NetworkClient {
  readonly nodes: NetworkNode[];
  readonly streamsTokens: boolean;
  readonly clock: () => number;
  /** The failure message of a request timeout. */
  readonly timeoutMessage: string;
  private readonly free: InFlight[] = [];
  private readonly inFlight: InFlight[] = [];
  /**
   * Written requests in write order. Every request has the same timeout, so
   * their deadlines come in this order too: one timer, armed for the first
   * valid entry's deadline, times every request out exactly.
   */
  private readonly writtenQueue = new RequestQueue<InFlight>();
  private timeoutTimer: NodeJS.Timeout | undefined;
  private readonly onTimeoutTimer = (): void => this.expire();
  private cancelPoll: NodeJS.Timeout | undefined;
  private nextNode = 0;
  private cancelled: string | undefined;
  private closed = false;
  private readonly timeoutNs: number;
  private readonly backoffNs: number;
  /** Protocol headers object -> the same with authorization (protocols return one object for all requests). */
  private lastHeaders: Record<string, string> | undefined;
  private lastMerged: Record<string, string> | undefined;
  /** What no message may carry (the API key, the protocol's secret headers). */
  readonly secrets: Secrets;
  /** Inter-token gaps and input lengths (lib/net/stream-stats.ts), into this thread's slice. */
  readonly streamStats: StreamStatsRecorder;
  private readonly requestLog: RequestLog | undefined;

  constructor(
    readonly protocol: NetworkProtocol,
    addresses: readonly NodeAddress[],
    readonly config: ClientConfig,
    statsSlices: readonly Float64Array[],
    /** Shared with the main thread (dispatch workers): non-zero once the run was stopped. */
    private readonly cancelFlag?: Int32Array,
    /** This thread's stream-stats slice, and the request log (main thread only). */
    extras: { streamSlice?: Float64Array; requestLog?: RequestLog } = {},
  ) {
    const native = loadNative();
    this.clock = () => native.clockNs();
    this.streamsTokens = protocol.streamsTokens;
    this.secrets = secretsOf(protocol, config.apiKey);
    this.streamStats = new StreamStatsRecorder(extras.streamSlice ?? new Float64Array(STREAM_SLICE_LENGTH));
    this.requestLog = extras.requestLog;
    this.timeoutNs = config.requestTimeoutMs * 1e6;
    this.timeoutMessage = `no complete response within ${config.requestTimeoutMs} ms of the request's write`;
    this.backoffNs = config.backoffMs * 1e6;
    // A protocol may set its own body limit (the native client reads the same field).
    const limit: unknown = protocol.maxResponseBytes;
    const maxResponseBytes = typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0 ? limit : DEFAULT_MAX_RESPONSE_BYTES;
    this.nodes = addresses.map((address, i) => {
      const pool = new ConnectionPool<InFlight>(address.origin, config, config.connections, maxResponseBytes);
      const node = new NetworkNode(i, address, pool, new NodeStatsRecorder(statsSlices[i]!));
      pool.onNoConnection = (kind, message) => this.failWaiting(node, kind, message);
      return node;
    });
  }

  /**
   * Probes every node through the protocol; the names, in node order.
   * `stop` aborted: the probes' requests end and this rejects at once with
   * its reason (a protocol's own waiting, e.g. a module's name(), is left).
   */
  async probeAll(stop?: AbortSignal): Promise<string[]> {
    return untilAborted(Promise.all(this.nodes.map((node) => this.probeNode(node, stop))), stop);
  }

  /**
   * Requests to node `index` made before the run (probes; the protocol's
   * checkBeforeRun, whose answers may be as large as a response of the run:
   * `bodyLimit`); `stop` ends them at once.
   */
  nodeProbe(index: number, stop?: AbortSignal, bodyLimit = PROBE_BODY_LIMIT): NodeProbe {
    const node = this.nodes[index]!;
    return {
      origin: node.address.url,
      request: (method, path, body, headers) =>
        probeRequest(node.pool, node.label, node.address.basePath + path, method, path,
          this.headers(headers ?? (body !== undefined ? { 'content-type': 'application/json' } : {})), body, this.config.probeTimeoutMs, (t) => this.redact(t), stop, bodyLimit),
    };
  }

  /** Probes one node through the protocol (waiting for it to come up with waitForNodesMs: lib/net/node-wait.ts). */
  private probeNode(node: NetworkNode, stop: AbortSignal | undefined): Promise<string> {
    return probeUntilUp(this.nodeProbe(node.index, stop), this.config.waitForNodesMs, stop, (probe) => this.protocol.probe(probe), (error) => this.probeFailure(node, error));
  }

  private probeFailure(node: NetworkNode, error: unknown): NetworkSetupError {
    // Protocols quote what the node answered (an error body, a model list): never a secret.
    if (error instanceof NetworkSetupError) return this.secrets.redactError(error) as NetworkSetupError;
    return new NetworkSetupError(`node ${node.label}: ${this.redact((error as Error)?.message ?? String(error))}`, { url: node.label, cause: error });
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
    request.seq++;
    request.sentNs = 0;
    request.lastChunkNs = 0;
    request.firstTokenNs = 0;
    request.events = 0;
    request.lastEventNs = 0;
    request.status = 0;
    request.responseStarted = false;
    request.retried = false;
    request.excerptLength = 0;
    request.controller = undefined;
    request.connection = undefined;
    request.settled = false;
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
    if (this.cancelPoll === undefined && this.cancelFlag !== undefined) this.startCancelPoll();
    const base = node.address.basePath;
    request.options = {
      method: prepared.method,
      path: base === '' ? prepared.path : base + prepared.path,
      headers: this.headers(prepared.headers),
      body: prepared.body ?? null,
    };
    node.pool.submit(request);
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

  /**
   * An outcome the protocol gives later (an async user function maps the
   * response): the sample stays in flight, so the request timeout and a
   * stop still end it, and completes with its last byte's stamp once the
   * outcome settles. The handler is not reused: undici released it unsettled.
   */
  completeWhenSettled(request: InFlight, pending: PromiseLike<ResponseOutcome>, stampNs: number): void {
    const timeoutMs = this.config.requestTimeoutMs > 0 ? this.config.requestTimeoutMs : USER_FUNCTION_TIMEOUT_MS;
    settleOutcome(pending, this.protocol.kind, timeoutMs, (outcome) => {
      if (request.settled) return;  // timed out or cancelled meanwhile
      if (outcome.ok) this.succeed(request, outcome, stampNs);
      else this.fail(request, outcome.kind, outcome.message, stampNs);
    });
  }

  succeed(request: InFlight, outcome: ResponseOutcome & { ok: true }, stampNs: number): void {
    this.settle(request);
    request.node.stats.completed(stampNs - request.sentNs);
    querySampleComplete(request.id, request.wantData ? outcome.data : undefined, outcome.nTokens, stampNs);
    // After the completion, with its stamps: nothing here is inside a latency.
    if (activeSeries.performance) this.streamStats.input(outcome.inputTokens);
    this.requestLog?.record(request.id, request.index, request.node.index, request.sentNs, request.firstTokenNs, stampNs, outcome.inputTokens, outcome.nTokens, undefined);
  }

  fail(request: InFlight, kind: FailureKind, message: string, stampNs: number): void {
    this.settle(request);
    const node = request.node;
    node.stats.failed(kind);
    if (kind === 'connection') node.backoffUntilNs = this.clock() + this.backoffNs;
    // The detail line reads 'Sample failed (<kind>): node <url>: <message>'.
    querySampleFailed(request.id, kind, this.redact(`node ${node.label}: ${message}`), stampNs);
    this.requestLog?.record(request.id, request.index, node.index, request.sentNs, request.firstTokenNs, stampNs, undefined, undefined, kind);
  }

  private settle(request: InFlight): void {
    request.settled = true;
    request.seq++;
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

  /** undici is done with the handler (or never had it): reusable once its sample is settled too. */
  release(request: InFlight): void {
    request.inUndici = false;
    request.controller = undefined;
    request.connection = undefined;
    if (request.settled && this.free.length < 4096) this.free.push(request);
  }

  /** undici wrote the request to its connection: its time starts now. */
  written(request: InFlight): void {
    request.seq++;
    const now = this.clock();
    request.sentNs = now;
    if (this.timeoutNs === 0) return;
    // Drops the entries of requests done since (most finish in order): the queue stays near the outstanding count.
    this.writtenQueue.peek();
    this.writtenQueue.push(request);
    if (this.timeoutTimer === undefined) this.armTimeout(now + this.timeoutNs, now);
  }

  /** The response was read whole after the request's time was up. */
  timedOut(request: InFlight, stampNs: number): boolean {
    return this.timeoutNs > 0 && request.sentNs !== 0 && stampNs - request.sentNs > this.timeoutNs;
  }

  private armTimeout(deadlineNs: number, nowNs: number): void {
    this.timeoutTimer = setTimeout(this.onTimeoutTimer, Math.max(1, Math.ceil((deadlineNs - nowNs) / 1e6)));
    this.timeoutTimer.unref();
  }

  /** Times out every written request whose deadline passed; the timer is armed again for the next one. */
  private expire(): void {
    this.timeoutTimer = undefined;
    const now = this.clock();
    for (let request = this.writtenQueue.peek(); request !== undefined; request = this.writtenQueue.peek()) {
      const deadline = request.sentNs + this.timeoutNs;
      // A timer may run a little early: then it waits for the rest.
      if (deadline > now) return this.armTimeout(deadline, now);
      this.writtenQueue.drop();
      this.abort(request, 'timeout', this.timeoutMessage, now);
    }
  }

  /**
   * A request whose connection ended before any byte of its response: sent
   * again once (true), else to be failed (false). A new connection the
   * server dropped before answering on it, while the node has other live
   * connections, also lowers the node's ceiling to those: the request goes
   * on one of them, not on another new one.
   */
  sendAgain(request: InFlight, connection: Connection | undefined, kind: FailureKind): boolean {
    if (this.cancelled !== undefined || this.closed) return false;
    const pool = request.node.pool;
    const othersLive = pool.live - (connection?.live === true ? 1 : 0);
    const refused = connection !== undefined && !connection.dead && connection.responses === 0 && othersLive > 0;
    if (refused) pool.lower(connection, othersLive);
    if (request.retried || (kind !== 'connection' && !refused)) return false;
    request.retried = true;
    request.seq++;
    request.sentNs = 0;
    request.status = 0;
    request.inUndici = false;
    request.controller = undefined;
    request.connection = undefined;
    pool.resubmit(request);
    return true;
  }

  /** A node that cannot get any connection: the requests waiting for one fail now (they would wait for the same). */
  private failWaiting(node: NetworkNode, kind: FailureKind, message: string): void {
    const now = this.clock();
    const waiting = node.pool.waiting;
    for (let request = waiting.peek(); request !== undefined; request = waiting.peek()) {
      waiting.drop();
      try {
        this.fail(request, kind, message, now);
      } finally {
        this.release(request);
      }
    }
  }

  /** In a dispatch worker: the main thread's stop, looked at while requests are out. */
  private startCancelPoll(): void {
    this.cancelPoll = setInterval(() => {
      if (this.inFlight.length === 0) {
        clearInterval(this.cancelPoll);
        this.cancelPoll = undefined;
      } else if (Atomics.load(this.cancelFlag!, 0) !== 0) {
        this.cancelAll('the run was stopped');
      }
    }, CANCEL_POLL_MS);
    this.cancelPoll.unref();
  }

  /** Fails a request now and stops undici's work on it. */
  private abort(request: InFlight, kind: FailureKind, message: string, stampNs: number): void {
    if (request.settled) return;
    try {
      this.fail(request, kind, message, stampNs);
    } finally {
      // Written: undici ends it (and calls the handler back); waiting or not yet written: done here.
      if (!request.inUndici) this.release(request);
      else request.controller?.abort(new TransportAbort(kind, message));
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
    clearTimeout(this.timeoutTimer);
    this.timeoutTimer = undefined;
    clearInterval(this.cancelPoll);
    this.cancelPoll = undefined;
    await Promise.all(this.nodes.map((node) => node.pool.destroy().catch(() => undefined)));
  }
}
