/**
 * A node's undici connections, managed here rather than by undici's Pool:
 * one undici Client per connection (keep-alive, no pipelining), opened as
 * requests need them up to a ceiling that comes down when the server caps
 * its connections, and the node's requests that wait for one. Managing them
 * gives each request an exact write stamp (onRequestStart), a retry on a
 * chosen connection, and a ceiling that can go down and grow back.
 */
import { buildConnector, Client, type Dispatcher } from 'undici';

import type { ClientConfig } from './client-config.js';
import type { FailureKind } from './protocol.js';
import { classify } from './undici-errors.js';

/** Largest response head read (the native client's limit; undici's own default is 16 KiB). */
const MAX_HEAD_BYTES = 64 * 1024;

/** What the pool needs of a request (lib/net/client.ts InFlight). */
export interface PooledRequest extends Dispatcher.DispatchHandler {
  /** Bumped whenever the request moves on: queue entries of an older seq are stale. */
  seq: number;
  /** Sent a second time already (it prefers a connection that opens a new socket). */
  retried: boolean;
  /** The connection carrying it. */
  connection: Connection | undefined;
  /** undici holds the handler (dispatched, not yet ended or failed). */
  inUndici: boolean;
  options: Dispatcher.DispatchOptions | undefined;
}

/**
 * A FIFO of requests, each entry valid while the request's `seq` is the one
 * it was queued with (a request moves on, or is reused, by bumping its seq;
 * its stale entries are skipped). A ring buffer: no allocation once grown.
 */
export class RequestQueue<T extends { seq: number }> {
  private items: (T | undefined)[] = new Array<T | undefined>(16);
  private seqs: number[] = new Array<number>(16).fill(0);
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(request: T): void {
    if (this.count === this.items.length) this.grow();
    const at = (this.head + this.count) & (this.items.length - 1);
    this.items[at] = request;
    this.seqs[at] = request.seq;
    this.count++;
  }

  /** In front of every other entry (a request that was already waiting longest). */
  pushFront(request: T): void {
    if (this.count === this.items.length) this.grow();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = request;
    this.seqs[this.head] = request.seq;
    this.count++;
  }

  /** The first valid request (stale entries before it are dropped), or undefined. */
  peek(): T | undefined {
    while (this.count > 0) {
      const request = this.items[this.head]!;
      if (request.seq === this.seqs[this.head]) return request;
      this.drop();
    }
    return undefined;
  }

  /** Removes the first entry (call after peek() returned it). */
  drop(): void {
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
  }

  private grow(): void {
    const n = this.items.length;
    const items = new Array<T | undefined>(n * 2);
    const seqs = new Array<number>(n * 2).fill(0);
    for (let i = 0; i < this.count; i++) {
      items[i] = this.items[(this.head + i) & (n - 1)];
      seqs[i] = this.seqs[(this.head + i) & (n - 1)]!;
    }
    this.items = items;
    this.seqs = seqs;
    this.head = 0;
  }
}

/** One connection of a node: an undici Client that carries one request at a time. */
export class Connection {
  /** The socket is up. */
  live = false;
  /** Responses read whole on the current socket (0: the server never answered on it). */
  responses = 0;
  /** In the pool's idle stack. */
  idle = false;
  /** Dropped from the pool (the server would not keep it): never used again. */
  dead = false;
  /** Index in the pool's connection list. */
  slot = -1;

  constructor(
    readonly client: Client,
    readonly pool: ConnectionPool,
  ) {
    client.on('connect', () => {
      this.live = true;
      this.responses = 0;
      pool.live++;
    });
    client.on('disconnect', () => {
      if (this.live) pool.live--;
      this.live = false;
      pool.closed(this);
      this.responses = 0;
    });
    client.on('connectionError', (_origin: unknown, _targets: unknown, error: Error) => pool.connectFailed(this, error));
    // undici is done with the request (answered, failed or aborted) and the socket may carry the next.
    client.on('drain', () => pool.free(this));
  }
}

/**
 * A node's connections, opened as requests need them up to `ceiling`, and
 * the node's requests waiting for one. The ceiling starts at the configured
 * connections and goes down to the live connections when the server drops a
 * new one before answering on it. While requests wait at a lowered ceiling,
 * one connection more is tried a backoff period after the last refusal, and
 * the next as soon as it has answered (the server may take more again; a
 * refusal lowers the ceiling back and costs no sample).
 */
export class ConnectionPool<R extends PooledRequest = PooledRequest> {
  readonly connections: Connection[] = [];
  /** performance.now() of the last refusal. */
  private refusedMs = 0;
  /** The connection opened above a lowered ceiling, until it answers or fails. */
  private trial: Connection | undefined;
  /** Free connections, the most recently used on top (likeliest still open). */
  private readonly idleStack: Connection[] = [];
  readonly waiting = new RequestQueue<R>();
  live = 0;
  private pumpScheduled = false;
  private readonly connector: ReturnType<typeof buildConnector>;
  /** The pool's requests that failed because no connection could be made, failed here (set by the client). */
  onNoConnection: ((kind: FailureKind, message: string) => void) | undefined;

  constructor(
    readonly origin: string,
    private readonly config: ClientConfig,
    public ceiling: number,
    /** Body bytes read at most (undici fails the request as the bytes pass it). */
    readonly maxResponseBytes: number,
  ) {
    // One connector for the node's connections (TLS sessions are shared through it).
    this.connector = buildConnector({ timeout: config.connectTimeoutMs, allowH2: config.http2 });
  }

  private open(): Connection {
    const client = new Client(this.origin, {
      pipelining: 1,
      connect: this.connector,
      // The client's own timer times requests out, from their write: no undici timer per request.
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 30_000,
      maxHeaderSize: MAX_HEAD_BYTES,
      maxResponseSize: this.maxResponseBytes,
      allowH2: this.config.http2,
    });
    const connection = new Connection(client, this);
    connection.slot = this.connections.length;
    this.connections.push(connection);
    return connection;
  }

  /**
   * A connection for a request now: a free one, else a new one while below
   * the ceiling; undefined when it must wait. `fresh`: a request sent again
   * prefers a connection that will open a new socket (the last one failed).
   */
  private acquire(fresh: boolean): Connection | undefined {
    const stack = this.idleStack;
    if (fresh) {
      for (let i = stack.length - 1; i >= 0; i--) {
        const connection = stack[i]!;
        if (connection.live) continue;
        stack[i] = stack[stack.length - 1]!;
        stack.pop();
        connection.idle = false;
        return connection;
      }
      if (this.connections.length < this.ceiling) return this.open();
    }
    const connection = stack.pop();
    if (connection !== undefined) {
      connection.idle = false;
      return connection;
    }
    if (this.connections.length < this.ceiling) return this.open();
    return this.openTrial();
  }

  /** One connection above a lowered ceiling, when it is time to try one. */
  private openTrial(): Connection | undefined {
    if (this.ceiling >= this.config.connections || this.trial !== undefined || this.connections.length >= this.config.connections) return undefined;
    if (performance.now() - this.refusedMs < this.config.backoffMs) return undefined;
    this.ceiling = this.connections.length + 1;
    this.trial = this.open();
    return this.trial;
  }

  /** A response was read whole on the connection: a trial connection proved the server takes one more. */
  answered(connection: Connection): void {
    connection.responses++;
    if (connection === this.trial) this.trial = undefined;
  }

  /** A connection's socket closed: a trial that never answered ends (and counts as a refusal). */
  closed(connection: Connection): void {
    if (connection !== this.trial || connection.responses > 0) return;
    this.trial = undefined;
    this.refusedMs = performance.now();
  }

  /** Sends the request now if a connection is free (or can be opened), else queues it. */
  submit(request: R): void {
    // peek(): entries of requests failed while waiting do not hold a new one back.
    if (this.waiting.peek() === undefined) {
      const connection = this.acquire(request.retried);
      if (connection !== undefined) {
        if (!this.send(connection, request)) this.free(connection);
        return;
      }
    }
    this.waiting.push(request);
    // Requests wait at a lowered ceiling: the oldest may go on a trial connection.
    const trial = this.openTrial();
    if (trial !== undefined) this.free(trial);
  }

  /** A request to send again (no byte of its response came): ahead of the others, on the next connection free. */
  resubmit(request: R): void {
    this.waiting.pushFront(request);
    this.schedulePump();
  }

  /**
   * Hands the request to the connection's client; false when undici refused
   * it at once (its handler was called back from within dispatch: options it
   * cannot send, a client destroyed): the connection is still free then.
   */
  private send(connection: Connection, request: R): boolean {
    request.connection = connection;
    request.inUndici = true;
    connection.client.dispatch(request.options!, request);
    return request.inUndici && request.connection === connection;
  }

  /** A connection finished its request: the next waiting request goes on it, else it is idle. */
  free(connection: Connection): void {
    if (connection.dead || connection.idle) return;
    for (let next = this.waiting.peek(); next !== undefined; next = this.waiting.peek()) {
      this.waiting.drop();
      if (this.send(connection, next)) return;
    }
    connection.idle = true;
    this.idleStack.push(connection);
  }

  /** Sends waiting requests on free connections (after a request was put back or a connection dropped). */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      for (let next = this.waiting.peek(); next !== undefined; next = this.waiting.peek()) {
        const connection = this.acquire(next.retried);
        if (connection === undefined) return;
        this.waiting.drop();
        if (!this.send(connection, next)) this.free(connection);
      }
    });
  }

  /**
   * The server dropped a new connection before answering on it while others
   * are up: it holds no more than those. The ceiling comes down to them and
   * the connection leaves the pool.
   */
  lower(connection: Connection, othersLive: number): void {
    this.ceiling = Math.max(1, Math.min(this.ceiling, othersLive));
    this.refusedMs = performance.now();
    if (connection === this.trial) this.trial = undefined;
    this.drop(connection);
    this.schedulePump();
  }

  private drop(connection: Connection): void {
    if (connection.dead) return;
    connection.dead = true;
    const last = this.connections.pop()!;
    if (last !== connection) {
      this.connections[connection.slot] = last;
      last.slot = connection.slot;
    }
    if (connection.idle) {
      const at = this.idleStack.indexOf(connection);
      if (at >= 0) this.idleStack.splice(at, 1);
      connection.idle = false;
    }
    // Not from within undici's callback that reported the failure.
    queueMicrotask(() => void connection.client.destroy().catch(() => undefined));
  }

  /** A connect failed: with no live connection left, the requests waiting for this node cannot be sent either. */
  connectFailed(connection: Connection, error: Error): void {
    this.closed(connection);
    if (this.live > 0 || this.waiting.size === 0) return;
    const { kind, message } = classify(error, 0);
    this.onNoConnection?.(kind, message);
  }

  /** For the probes (before the run): the node's first connection, opened if needed. */
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    const connection = this.connections[0] ?? this.open();
    const response = connection.client.request(options);
    // The server answered on it: a later drop of this socket is not a refusal.
    response.then(() => connection.responses++, () => undefined);
    return response;
  }

  async destroy(): Promise<void> {
    const all = this.connections.splice(0);
    this.idleStack.length = 0;
    await Promise.all(
      all.map((connection) => {
        connection.dead = true;
        return connection.client.destroy().catch(() => undefined);
      }),
    );
  }
}
