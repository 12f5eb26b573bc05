/**
 * A raw-byte HTTP/1.1 server on 127.0.0.1 for the fault-injection suite: it
 * answers the probes of every network SUT (OpenAI's model list, KServe's
 * readiness and metadata, http-map's GET /) normally and hands each inference
 * request to a fault, which says byte by byte what goes back: a good answer,
 * a wrong one, a reset at any point, a trickle, nothing at all. node:net
 * rather than node:http, so it can send what node:http never would.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** The protocols the suite runs, with the answer each expects of a well-behaved server. */
export type FaultProtocol = 'openai-stream' | 'openai-whole' | 'kserve' | 'http';
export const FAULT_PROTOCOLS: readonly FaultProtocol[] = ['openai-stream', 'openai-whole', 'kserve', 'http'];

/** The model every protocol's probe finds. */
export const FAULT_MODEL = 'm';

/** One inference request as the server read it. */
export interface InferenceRequest {
  method: string;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
  /** The sample index the body names ('sample N', "x":N, "data":[N]), or -1 (not read yet or none). */
  sample: number;
  /** How many inference requests the server had received before this one. */
  n: number;
  /** Inference requests being answered when this one came (this one not counted). */
  inFlight: number;
}

/** What the server does, in order, for one inference request. */
export type Step =
  /** Writes these bytes. */
  | { write: string | Uint8Array }
  /** Writes these bytes `size` at a time with `gapMs` between the writes (a trickle). */
  | { trickle: string | Uint8Array; gapMs: number; size?: number }
  /** Waits. */
  | { wait: number }
  /** Writes `bytes` of filler body (backpressure respected, little memory). */
  | { filler: number }
  /** Closes the connection after what was written (FIN). */
  | { end: true }
  /** Resets the connection (RST): what was not read yet is lost. */
  | { reset: true }
  /** Never answers: the connection stays open, the request unanswered. */
  | { hang: true }
  /** Waits for this promise (e.g. for other requests to reach the same point). */
  | { until: () => Promise<unknown> };

/** A well-formed answer of the protocol to a request: its body and content type. */
export interface GoodAnswer {
  contentType: string;
  body: Buffer;
}

/** A fault: the steps for one inference request, given the protocol's good answer to it. */
export type Fault = (request: InferenceRequest, good: GoodAnswer) => Step[];

export interface FaultServerOptions {
  protocol: FaultProtocol;
  /** What to do with an inference request; default: the good answer. */
  fault?: Fault;
  /** Which requests get the fault (the others the good answer); default every one. */
  faulted?: (request: InferenceRequest) => boolean;
  /** Apply the fault once the request's head has arrived, before its body is read (an early answer). */
  early?: boolean;
  /** Connections beyond this many open at once are closed as soon as they are accepted. */
  maxConnections?: number;
  /**
   * Close those beyond maxConnections this long after accepting them
   * instead, unread (a loaded server slow to get round to them: they sit
   * connected meanwhile, and take requests).
   */
  refuseAfterMs?: number;
  /** The answer of the http protocol's GET / (its `server` header names the node). */
  nodeName?: string;
}

export interface FaultServer {
  url: string;
  port: number;
  /** Inference requests received, and by sample index. */
  readonly inferences: number;
  readonly bySample: Map<number, number>;
  /** Connections accepted (including any closed at once for maxConnections). */
  readonly connections: number;
  /** Most connections open at once. */
  readonly peakConnections: number;
  /** Inference requests being answered now (a fault's steps under way). */
  readonly inFlight: number;
  close(): Promise<void>;
}

const CRLF = '\r\n';
const FILLER = Buffer.alloc(64 * 1024, 0x61);

/** A complete response with a Content-Length. */
export function response(status: number, reason: string, headers: Record<string, string>, body: string | Uint8Array = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  return Buffer.concat([Buffer.from(head(status, reason, { ...headers, 'content-length': String(bytes.length) })), bytes]);
}

/** A status line and headers, ending with the blank line. */
export function head(status: number, reason: string, headers: Record<string, string>, version = 'HTTP/1.1'): string {
  let text = `${version} ${status} ${reason}${CRLF}`;
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}${CRLF}`;
  return text + CRLF;
}

/** A body in chunked framing: one chunk per part, then the last chunk. */
export function chunked(parts: readonly (string | Uint8Array)[]): Buffer {
  const out: Buffer[] = [];
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part);
    if (bytes.length === 0) continue;
    out.push(Buffer.from(`${bytes.length.toString(16)}${CRLF}`), bytes, Buffer.from(CRLF));
  }
  out.push(Buffer.from(`0${CRLF}${CRLF}`));
  return Buffer.concat(out);
}

/** The good answer of a 200 with Content-Length. */
export function ok(good: GoodAnswer, extra: Record<string, string> = {}): Buffer {
  return response(200, 'OK', { 'content-type': good.contentType, ...extra }, good.body);
}

// --- The protocols' good answers ------------------------------------------------

/** One SSE event line pair. */
export function sse(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** A chat stream: a role chunk, two content chunks, a usage chunk, [DONE]. */
export function chatStream(): string {
  return (
    sse({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant' } }] }) +
    sse({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hello' } }] }) +
    sse({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ' world' }, finish_reason: 'stop' }] }) +
    sse({ id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 } }) +
    sse('[DONE]')
  );
}

const CHAT_COMPLETION = {
  id: 'c',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
};

/** KServe's answer: one FP32 [1,1] output holding the sample's index. */
export function kserveOutputs(sample: number): string {
  return JSON.stringify({ model_name: FAULT_MODEL, outputs: [{ name: 'y', datatype: 'FP32', shape: [1, 1], data: [sample] }] });
}

/** What a well-behaved server answers to `request` in `protocol`. */
export function goodAnswer(protocol: FaultProtocol, request: InferenceRequest): GoodAnswer {
  switch (protocol) {
    case 'openai-stream':
      return { contentType: 'text/event-stream', body: Buffer.from(chatStream()) };
    case 'openai-whole':
      return { contentType: 'application/json', body: Buffer.from(JSON.stringify(CHAT_COMPLETION)) };
    case 'kserve':
      return { contentType: 'application/json', body: Buffer.from(kserveOutputs(Math.max(request.sample, 0))) };
    case 'http':
      return { contentType: 'application/json', body: Buffer.from(JSON.stringify({ y: request.sample })) };
  }
}

/** KServe metadata of the suite's model: one FP32 input 'x' and one output 'y', both [1,1]. */
export const KSERVE_METADATA = {
  name: FAULT_MODEL,
  versions: ['1'],
  platform: 'fault-server',
  inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 1] }],
  outputs: [{ name: 'y', datatype: 'FP32', shape: [1, 1] }],
};

/** The probes' answers, by "METHOD path"; undefined: an inference request. */
function probeAnswer(method: string, path: string, options: FaultServerOptions): Buffer | undefined {
  const json = (value: unknown): Buffer => response(200, 'OK', { 'content-type': 'application/json' }, JSON.stringify(value));
  if (method !== 'GET') return undefined;
  switch (path) {
    case '/v1/models':
      return json({ object: 'list', data: [{ id: FAULT_MODEL, object: 'model', owned_by: 'fault-server' }] });
    case '/v2':
      return json({ name: 'fault-server', version: '1' });
    case '/v2/health/ready':
    case `/v2/models/${FAULT_MODEL}/ready`:
      return json({});
    case `/v2/models/${FAULT_MODEL}`:
      return json(KSERVE_METADATA);
    case '/':
      return response(200, 'OK', { server: options.nodeName ?? 'fault-server', 'content-type': 'text/plain' }, 'fault-server');
    default:
      return undefined;
  }
}

/** The sample a request body names (see InferenceRequest.sample). */
export function sampleOf(body: Buffer): number {
  const text = body.subarray(0, 4096).toString('latin1');
  const match = /sample (\d+)|"x":(\d+)|"data":\[(\d+)/.exec(text);
  return match === null ? -1 : Number(match[1] ?? match[2] ?? match[3]);
}

// 0: the next turn of the event loop (each write its own segment, as fast as it goes).
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));

/** Writes and waits for the socket to take the bytes (backpressure), unless it is gone. */
function write(socket: Socket, bytes: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed || !socket.writable) return resolve();
    if (socket.write(bytes)) return resolve();
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/**
 * A meeting point for `parties` requests: each waits until all have come, or
 * `maxWaitMs` has passed (a party that never comes holds nobody for long).
 */
export function barrier(parties: number, maxWaitMs = 10_000): () => Promise<void> {
  let arrived = 0;
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    if (++arrived >= parties) release();
    return Promise.race([all, sleep(maxWaitMs)]);
  };
}

/** The largest head the server reads before it gives up on a connection. */
const HEAD_LIMIT = 64 * 1024;

/** Starts a fault server on 127.0.0.1, port 0. */
export async function startFaultServer(options: FaultServerOptions): Promise<FaultServer> {
  const sockets = new Set<Socket>();
  // Connections beyond maxConnections waiting to be closed (refuseAfterMs).
  const refusing = new Set<Socket>();
  const state = { inferences: 0, connections: 0, peakConnections: 0, inFlight: 0 };
  const bySample = new Map<number, number>();
  const fault: Fault = options.fault ?? ((_request, good) => [{ write: ok(good) }]);
  const faulted = options.faulted ?? (() => true);

  // Runs the steps of one request; false when the connection is finished with (closed, reset, hung).
  async function play(socket: Socket, steps: readonly Step[]): Promise<boolean> {
    for (const step of steps) {
      if (socket.destroyed) return false;
      if ('write' in step) await write(socket, step.write);
      else if ('trickle' in step) {
        const bytes = typeof step.trickle === 'string' ? Buffer.from(step.trickle, 'utf8') : Buffer.from(step.trickle);
        const size = step.size ?? 1;
        for (let at = 0; at < bytes.length && !socket.destroyed; at += size) {
          await write(socket, bytes.subarray(at, at + size));
          if (at + size < bytes.length) await sleep(step.gapMs);
        }
      } else if ('wait' in step) await sleep(step.wait);
      else if ('filler' in step) {
        for (let left = step.filler; left > 0 && !socket.destroyed; left -= FILLER.length) await write(socket, left >= FILLER.length ? FILLER : FILLER.subarray(0, left));
      } else if ('end' in step) {
        socket.end();
        return false;
      } else if ('reset' in step) {
        socket.resetAndDestroy();
        return false;
      } else if ('hang' in step) return false;
      else if ('until' in step) await step.until();
    }
    return !socket.destroyed;
  }

  const server: Server = createServer((socket) => {
    state.connections++;
    if (options.maxConnections !== undefined && sockets.size >= options.maxConnections) {
      if (options.refuseAfterMs === undefined) {
        socket.destroy();
        return;
      }
      socket.pause();
      socket.on('error', () => undefined);
      const timer = setTimeout(() => socket.destroy(), options.refuseAfterMs);
      refusing.add(socket);
      socket.on('close', () => {
        clearTimeout(timer);
        refusing.delete(socket);
      });
      return;
    }
    sockets.add(socket);
    // Each write goes out at once: with Nagle a write after a write waits for the client's delayed ACK (40 ms).
    socket.setNoDelay(true);
    state.peakConnections = Math.max(state.peakConnections, sockets.size);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer: Buffer = Buffer.alloc(0);
    let busy = false;
    let finished = false;
    // Bytes of the current request's body still to be read past an early answer.
    let discard = 0;

    const pump = async (): Promise<void> => {
      if (busy || finished) return;
      busy = true;
      try {
        while (!finished) {
          if (discard > 0) {
            const n = Math.min(discard, buffer.length);
            buffer = buffer.subarray(n);
            discard -= n;
            if (discard > 0) break;
          }
          const end = buffer.indexOf('\r\n\r\n');
          if (end < 0) {
            if (buffer.length > HEAD_LIMIT) {
              finished = true;
              socket.destroy();
            }
            break;
          }
          const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
          const [method = '', path = ''] = lines[0]!.split(' ');
          const headers: Record<string, string> = {};
          for (const line of lines.slice(1)) {
            const colon = line.indexOf(':');
            if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
          }
          const length = Number(headers['content-length'] ?? '0');
          const probe = probeAnswer(method, path, options);
          if (probe === undefined && options.early === true) {
            // Answer on the head alone; the body is read (and dropped) afterwards.
            buffer = buffer.subarray(end + 4);
            discard = length;
            const request: InferenceRequest = { method, path, headers, body: Buffer.alloc(0), sample: -1, n: state.inferences++, inFlight: state.inFlight };
            state.inFlight++;
            try {
              if (!(await play(socket, fault(request, goodAnswer(options.protocol, request))))) finished = true;
            } finally {
              state.inFlight--;
            }
            continue;
          }
          if (buffer.length < end + 4 + length) break;
          const body = Buffer.from(buffer.subarray(end + 4, end + 4 + length));
          buffer = buffer.subarray(end + 4 + length);
          if (probe !== undefined) {
            await write(socket, probe);
            continue;
          }
          const request: InferenceRequest = { method, path, headers, body, sample: sampleOf(body), n: state.inferences++, inFlight: state.inFlight };
          bySample.set(request.sample, (bySample.get(request.sample) ?? 0) + 1);
          const good = goodAnswer(options.protocol, request);
          state.inFlight++;
          try {
            const steps = faulted(request) ? fault(request, good) : [{ write: ok(good) }];
            if (!(await play(socket, steps))) finished = true;
          } finally {
            state.inFlight--;
          }
        }
      } finally {
        busy = false;
      }
    };
    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      void pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get inferences() {
      return state.inferences;
    },
    bySample,
    get connections() {
      return state.connections;
    },
    get peakConnections() {
      return state.peakConnections;
    },
    get inFlight() {
      return state.inFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        for (const socket of refusing) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// --- Named faults ---------------------------------------------------------------

/** The head of the good answer with these Content-Length (or other) headers. */
function goodHead(good: GoodAnswer, headers: Record<string, string>, version = 'HTTP/1.1'): string {
  return head(200, 'OK', { 'content-type': good.contentType, ...headers }, version);
}

const half = (bytes: Buffer): [Buffer, Buffer] => [bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)];

/**
 * Faults of the HTTP exchange itself, whatever the protocol: each built on
 * the protocol's good answer (what it frames, cuts or delays).
 */
export const HTTP_FAULTS = {
  /** The good answer: the control row. */
  'good': (_r, good) => [{ write: ok(good) }],
  /** The good answer in chunked framing, cut into two chunks. */
  'good-chunked': (_r, good) => [{ write: goodHead(good, { 'transfer-encoding': 'chunked' }) }, { write: chunked(half(good.body)) }],
  /** Reset on the request, nothing written. */
  'reset-before-head': () => [{ reset: true }],
  /** Closed on the request, nothing written. */
  'close-before-head': () => [{ end: true }],
  /** Reset halfway through the status line. */
  'reset-mid-status-line': () => [{ write: 'HTTP/1.1 20' }, { wait: 5 }, { reset: true }],
  /** A status line and part of a header, then a close. */
  'partial-head-close': (_r, good) => [{ write: `HTTP/1.1 200 OK\r\ncontent-type: ${good.contentType}\r\ncontent-len` }, { end: true }],
  /** The whole head, then a reset before any body byte. */
  'reset-after-head': (_r, good) => [{ write: goodHead(good, { 'content-length': String(good.body.length) }) }, { wait: 5 }, { reset: true }],
  /** Half the body, then a reset. */
  'reset-mid-body': (_r, good) => [{ write: goodHead(good, { 'content-length': String(good.body.length) }) }, { write: half(good.body)[0] }, { wait: 5 }, { reset: true }],
  /** A chunk cut short, then a reset. */
  'reset-mid-chunk': (_r, good) => [
    { write: goodHead(good, { 'transfer-encoding': 'chunked' }) },
    { write: `${good.body.length.toString(16)}\r\n` },
    { write: half(good.body)[0] },
    { wait: 5 },
    { reset: true },
  ],
  /** A chunk cut short, then a close. */
  'close-mid-chunk': (_r, good) => [
    { write: goodHead(good, { 'transfer-encoding': 'chunked' }) },
    { write: `${good.body.length.toString(16)}\r\n` },
    { write: half(good.body)[0] },
    { end: true },
  ],
  /** Content-Length larger than the body, then a close: the body came short. */
  'content-length-larger-then-close': (_r, good) => [{ write: goodHead(good, { 'content-length': String(good.body.length + 100) }) }, { write: good.body }, { end: true }],
  /** Content-Length half the body: the rest are bytes beyond the response, then a close. */
  'content-length-smaller': (_r, good) => [{ write: Buffer.concat([Buffer.from(goodHead(good, { 'content-length': String(good.body.length >> 1) })), good.body]) }, { end: true }],
  /** Two Content-Length headers that differ. */
  'content-length-conflict': (_r, good) => [{ write: Buffer.concat([Buffer.from(goodHead(good, { 'content-length': String(good.body.length), 'Content-Length': String(good.body.length + 1) })), good.body]) }],
  /** A Content-Length that is not a number. */
  'content-length-invalid': (_r, good) => [{ write: Buffer.concat([Buffer.from(goodHead(good, { 'content-length': `+${good.body.length}` })), good.body]) }],
  /** Lines that end in a bare LF (no CR). */
  'bare-lf-head': (_r, good) => [{ write: Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\ncontent-type: ${good.contentType}\ncontent-length: ${good.body.length}\n\n`), good.body]) }],
  /** Transfer-Encoding: chunked together with Content-Length (a request-smuggling shape). */
  'transfer-encoding-and-content-length': (_r, good) => {
    const body = chunked([good.body]);
    return [{ write: Buffer.concat([Buffer.from(goodHead(good, { 'transfer-encoding': 'chunked', 'content-length': String(body.length) })), body]) }];
  },
  /** A chunk size that is not hexadecimal. */
  'chunk-size-not-hex': (_r, good) => [{ write: Buffer.concat([Buffer.from(goodHead(good, { 'transfer-encoding': 'chunked' })), Buffer.from('zz\r\n'), good.body, Buffer.from('\r\n0\r\n\r\n')]) }],
  /** A chunk's data not followed by CRLF. */
  'chunk-missing-crlf': (_r, good) => {
    const [a, b] = half(good.body);
    return [{ write: Buffer.concat([Buffer.from(goodHead(good, { 'transfer-encoding': 'chunked' })), Buffer.from(`${a.length.toString(16)}\r\n`), a, Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')]) }];
  },
  /** A status line without a status code. */
  'bad-status-line': (_r, good) => [{ write: Buffer.concat([Buffer.from(`HTTP/1.1 OK\r\ncontent-length: ${good.body.length}\r\n\r\n`), good.body]) }],
  /** Bytes that are not HTTP at all. */
  'not-http': () => [{ write: 'SSH-2.0-OpenSSH_9.6\r\n\r\n' }, { end: true }],
  /** A header line without a colon. */
  'header-without-colon': (_r, good) => [{ write: Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type ${good.contentType}\r\ncontent-length: ${good.body.length}\r\n\r\n`), good.body]) }],
  /** The good answer a few bytes at a time, a wait between the writes. */
  'trickle': (_r, good) => [{ trickle: ok(good), gapMs: 1, size: 16 }],
  /** 100 Continue before the answer. */
  '100-continue': (_r, good) => [{ write: 'HTTP/1.1 100 Continue\r\n\r\n' }, { write: ok(good) }],
  /** 103 Early Hints (with a header), then the answer. */
  '103-early-hints': (_r, good) => [{ write: 'HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n' }, { wait: 2 }, { write: ok(good) }],
  /** Redirects are not followed: the 3xx is the final answer. */
  'redirect-301': () => [{ write: response(301, 'Moved Permanently', { location: '/elsewhere' }) }],
  'redirect-302': () => [{ write: response(302, 'Found', { location: '/elsewhere', 'content-type': 'text/plain' }, 'see /elsewhere') }],
  'redirect-307': () => [{ write: response(307, 'Temporary Redirect', { location: '/elsewhere' }) }],
  /** A 200 with an empty body (Content-Length 0). */
  'empty-200': (_r, good) => [{ write: response(200, 'OK', { 'content-type': good.contentType }, '') }],
  /** 204 No Content: no body, no framing headers. */
  '204-no-content': () => [{ write: head(204, 'No Content', {}) }],
  /** An HTTP/1.0 answer whose body ends at the close. */
  'http10-close-delimited': (_r, good) => [{ write: goodHead(good, {}, 'HTTP/1.0') }, { write: good.body }, { end: true }],
  /** An HTTP/1.1 answer with neither Content-Length nor chunked: the body ends at the close. */
  'http11-close-delimited': (_r, good) => [{ write: goodHead(good, { connection: 'close' }) }, { write: good.body }, { end: true }],
  /** The good answer, then a close without `Connection: close` (item 7). */
  'close-after-response': (_r, good) => [{ write: ok(good) }, { end: true }],
  /** A 500 with a JSON error body. */
  'status-500': () => [{ write: response(500, 'Internal Server Error', { 'content-type': 'application/json' }, '{"error":"internal"}') }],
  /** 503 with Retry-After. */
  'status-503': () => [{ write: response(503, 'Service Unavailable', { 'retry-after': '1', 'content-type': 'text/plain' }, 'overloaded') }],
  /** No answer, the connection left open. */
  'never-answers': () => [{ hang: true }],
} satisfies Record<string, Fault>;

export type HttpFaultName = keyof typeof HTTP_FAULTS;

/** A chat stream from these chunk objects, then [DONE]. */
function streamOf(chunks: readonly unknown[], done = true): string {
  return chunks.map((c) => sse(c)).join('') + (done ? sse('[DONE]') : '');
}

/** A stream answer (200, Content-Length) of this SSE text. */
function sseAnswer(text: string): Step[] {
  return [{ write: response(200, 'OK', { 'content-type': 'text/event-stream' }, text) }];
}

const delta = (d: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: d, ...extra }] });

/** Faults of the OpenAI stream (SSE) a well-framed 200 carries (openai-stream only). */
export const SSE_FAULTS = {
  /** Every byte its own write. */
  'sse-split-every-byte': (_r, good) => [{ write: head(200, 'OK', { 'content-type': good.contentType, 'content-length': String(good.body.length) }) }, { trickle: good.body, gapMs: 0, size: 1 }],
  /** Events split across chunks at odd places. */
  'sse-chunked-split-events': (_r, good) => {
    const parts: Buffer[] = [];
    for (let at = 0; at < good.body.length; at += 7) parts.push(good.body.subarray(at, at + 7));
    return [{ write: head(200, 'OK', { 'content-type': good.contentType, 'transfer-encoding': 'chunked' }) }, { trickle: chunked(parts), gapMs: 0, size: 40 }];
  },
  /** CRLF line endings. */
  'sse-crlf': (_r, good) => sseAnswer(good.body.toString('utf8').replace(/\n/g, '\r\n')),
  /** CR line endings. */
  'sse-cr': (_r, good) => sseAnswer(good.body.toString('utf8').replace(/\n/g, '\r')),
  /** Comments, ids, retry, an unknown field and a named event before each data line. */
  'sse-comments-and-unknown-fields': (_r, good) =>
    sseAnswer(': keep-alive\n\n' + good.body.toString('utf8').replace(/^data: /gm, (_m) => `: tick\nid: 7\nretry: 1000\nx-vendor: 1\nevent: message\ndata: `)),
  /** The last event without its blank line. */
  'sse-no-final-blank-line': (_r, good) => sseAnswer(good.body.toString('utf8').replace(/\n\n$/, '\n')),
  /** No data: [DONE] at the end. */
  'sse-missing-done': () => sseAnswer(streamOf([delta({ role: 'assistant' }), delta({ content: 'Hello' })], false)),
  /** An `event: error` after the first token. */
  'sse-event-error': () => sseAnswer(streamOf([delta({ content: 'Hello' })], false) + 'event: error\ndata: {"error":{"message":"overloaded"}}\n\n' + sse('[DONE]')),
  /** An error object in a data event. */
  'sse-error-object': () => sseAnswer(streamOf([delta({ content: 'Hello' }), { error: { message: 'internal', type: 'server_error' } }])),
  /** A data event that is not JSON. */
  'sse-data-not-json': () => sseAnswer(streamOf([delta({ content: 'Hello' })], false) + 'data: {"choices": [tru\n\n' + sse('[DONE]')),
  /** A 200 whose body is not SSE at all. */
  'sse-not-sse': () => [{ write: response(200, 'OK', { 'content-type': 'text/html' }, '<html><body>maintenance</body></html>') }],
  /** Usage and no generated output (item 1). */
  'sse-usage-no-text': () => sseAnswer(streamOf([{ choices: [], usage: { completion_tokens: 4 } }])),
  /** A reasoning model: only reasoning_content deltas (item 1: a success with a first token). */
  'sse-reasoning-only': () =>
    sseAnswer(streamOf([delta({ role: 'assistant' }), delta({ reasoning_content: 'Let me' }), delta({ reasoning_content: ' think.' }), { choices: [], usage: { completion_tokens: 2 } }])),
  /** Tool calls only (item 1: a success with a first token). */
  'sse-tool-calls-only': () =>
    sseAnswer(
      streamOf([
        delta({ role: 'assistant' }),
        delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"q":"x"}' } }] }, { finish_reason: 'tool_calls' }),
        { choices: [], usage: { completion_tokens: 5 } },
      ]),
    ),
} satisfies Record<string, Fault>;

/** Faults of a whole (non-streamed) OpenAI completion. */
export const WHOLE_FAULTS = {
  'json-not-json': () => [{ write: response(200, 'OK', { 'content-type': 'application/json' }, '{"choices": [') }],
  'json-error-object': () => [{ write: response(200, 'OK', { 'content-type': 'application/json' }, '{"error":{"message":"context length exceeded"}}') }],
  'json-no-choices': () => [{ write: response(200, 'OK', { 'content-type': 'application/json' }, '{"id":"c","object":"chat.completion","choices":[]}') }],
} satisfies Record<string, Fault>;

/** A KServe binary-extension answer: this JSON header, then `data`, the header's length in Inference-Header-Content-Length. */
export function kserveBinary(header: unknown, data: Uint8Array, headerLength?: number): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  return response(
    200,
    'OK',
    { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(headerLength ?? json.length) },
    Buffer.concat([json, data]),
  );
}

const UINT8_OUTPUT = { model_name: FAULT_MODEL, outputs: [{ name: 'y', datatype: 'UINT8', shape: [1, 1], parameters: { binary_data_size: 1 } }] };

/** Faults of KServe answers (item 12 and the like). */
export const KSERVE_FAULTS = {
  /** A binary output whose one byte is 65 ('A'): the control row. */
  'kserve-binary-byte': () => [{ write: kserveBinary(UINT8_OUTPUT, Uint8Array.of(65)) }],
  /** A binary output whose one byte is 10 (a newline: whitespace). */
  'kserve-binary-whitespace': () => [{ write: kserveBinary(UINT8_OUTPUT, Uint8Array.of(10)) }],
  /** Inference-Header-Content-Length far beyond the body. */
  'kserve-header-length-999999': () => [{ write: kserveBinary(UINT8_OUTPUT, Uint8Array.of(65), 999999) }],
  /** An error field in a 200. */
  'kserve-error-field': () => [{ write: response(200, 'OK', { 'content-type': 'application/json' }, '{"error":"model crashed"}') }],
} satisfies Record<string, Fault>;
