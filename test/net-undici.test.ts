/**
 * The undici transport under faulty and ordinary-but-awkward servers: one
 * failure kind per fault (the taxonomy in docs/network-suts.md, "Failures"),
 * timeouts from the write and exact, per-node latency from the write, and
 * no sample lost to a server that closes connections or caps them.
 * Servers are raw node:net sockets on 127.0.0.1 so they can send any bytes.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createHttpSut, startTest } from '../lib/index.js';
import { createNetworkSut } from '../lib/net/transport.js';
import type { NetworkSut } from '../lib/net/types.js';
import { repoRoot, tempDir } from './helpers.js';
import { testProtocol } from './net-helpers.js';

const MAP = join(repoRoot, 'test', 'fixtures', 'http-map.mjs');

type FailedSamples = { total: number; byKind: Record<string, number> };
const failedOf = (result: unknown): FailedSamples => (result as { errors: { failedSamples: FailedSamples } }).errors.failedSamples;
/** The kinds that failed any sample, with their counts. */
const kindsOf = (result: unknown): Record<string, number> => Object.fromEntries(Object.entries(failedOf(result).byKind).filter(([, n]) => n > 0));

/** One request as the raw server read it. */
interface RawRequest {
  method: string;
  path: string;
  body: string;
  /** Its number among the requests of its connection handed to `answer` (0: the first). */
  nth: number;
  /** process.hrtime.bigint() when its last byte was read. */
  receivedNs: bigint;
}

/** What answers the probe (GET /name): a plain keep-alive response. */
const NAME_RESPONSE = 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnode';

/** `echo:<body>`, as the mapping module (test/fixtures/http-map.mjs) expects. */
function echo(body: string, extraHead = ''): string {
  return `HTTP/1.1 200 OK\r\n${extraHead}Content-Length: ${5 + Buffer.byteLength(body)}\r\n\r\necho:${body}`;
}

interface RawServer {
  url: string;
  server: Server;
  /** Connections accepted. */
  connections: number;
  close(): Promise<void>;
}

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/**
 * A raw HTTP/1.1 server: reads each request (head and Content-Length body)
 * and hands it to `answer`, which writes whatever bytes it likes. GET /name
 * is answered for the probe unless `answer` takes it.
 */
async function rawServer(answer: (request: RawRequest, socket: Socket) => void): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    let nth = 0;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const [method = '', path = ''] = head.split(' ');
        const body = pending.subarray(end + 4, end + 4 + length).toString('utf8');
        pending = pending.subarray(end + 4 + length);
        if (method === 'GET' && path === '/name') socket.write(NAME_RESPONSE);
        else answer({ method, path, body, nth: nth++, receivedNs: process.hrtime.bigint() }, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const raw: RawServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(raw);
  return raw;
}

const offline = (n: number) => ({ scenario: 'Offline', offlineExpectedQps: 1000, minDurationMs: 0, minQueryCount: n }) as never;

async function run(sut: NetworkSut, settings: unknown) {
  return startTest(sut, sut.qsl, settings as never, { outdir: tempDir() });
}

describe('undici transport: one failure kind per fault', () => {
  // Each fault answers every POST /infer; the kind every sample must fail with.
  const faults: [string, string, (socket: Socket, request: RawRequest) => void, number?][] = [
    ['a bad status line', 'malformed_response', (s) => s.write('HTTP/1.1 2x0 OK\r\nContent-Length: 6\r\n\r\necho:1')],
    ['bytes that are not HTTP', 'malformed_response', (s) => s.write('hello there\r\n\r\n')],
    ['a bare-LF status line', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\nContent-Length: 6\r\n\r\necho:1')],
    ['a bare-LF header line', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 6\n\r\necho:1')],
    ['a head of bare LFs only', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\nContent-Length: 6\n\necho:1')],
    ['Transfer-Encoding with Content-Length', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n6\r\necho:1\r\n0\r\n\r\n')],
    ['a Transfer-Encoding other than chunked', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\necho:1')],
    ['chunked not the last coding', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n6\r\necho:1\r\n0\r\n\r\n')],
    ['a coding besides chunked (nothing here decodes it)', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n6\r\necho:1\r\n0\r\n\r\n')],
    ['a chunk size that is not hex', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\necho:1\r\n0\r\n\r\n')],
    ['a chunk without its CRLF', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\necho:1X0\r\n\r\n')],
    ['a bare-LF chunk size line', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\necho:1\r\n0\r\n\r\n')],
    ['a Content-Length that is not a number', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\necho:1')],
    ['a signed Content-Length', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: +6\r\n\r\necho:1')],
    ['two Content-Lengths that differ', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 6\r\nContent-Length: 7\r\n\r\necho:1')],
    ['a Content-Length list', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 6, 6\r\n\r\necho:1')],
    ['a header line folded (obs-fold)', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 6\r\n\r\necho:1')],
    ['a space before the colon', 'malformed_response', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length : 6\r\n\r\necho:1')],
    ['a head beyond the size limit', 'malformed_response', (s) => s.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(100_000)}\r\nContent-Length: 6\r\n\r\necho:1`)],
    // undici destroys the connection on a 100 Continue it did not ask for (client-h1.js, onHeadersComplete):
    // it cannot skip one as it skips other 1xx responses, so on undici the sample fails.
    ['an interim 100 Continue that was not asked for', 'malformed_response', (s, r) => s.write(`HTTP/1.1 100 Continue\r\n\r\n${echo(r.body)}`)],
    ['a body shorter than its Content-Length, then close', 'connection', (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 60\r\n\r\necho:1')],
    ['a short body, Connection: close, then close', 'connection', (s) => s.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 60\r\n\r\necho:1')],
    ['a short body, then a reset', 'connection', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 60\r\n\r\necho:1', () => s.resetAndDestroy())],
    ['a chunked body cut off by a close', 'connection', (s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\necho:1\r\n')],
    // A response had begun: never sent again (one request per sample).
    ['half a head, then close', 'connection', (s) => s.end('HTTP/1.1 200 O'), 1],
    ['half a head, then a reset', 'connection', (s) => s.write('HTTP/1.1 200 OK\r\nContent-Le', () => s.resetAndDestroy()), 1],
    // No byte of a response: sent again once, never twice (two requests per sample).
    ['a close before any byte (after the retry too)', 'connection', (s) => s.destroy(), 2],
    ['a reset before any byte (after the retry too)', 'connection', (s) => s.resetAndDestroy(), 2],
    ['a redirect', 'http_status', (s) => s.write('HTTP/1.1 301 Moved\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n')],
  ];

  it.each(faults)('%s: %s', async (_name, kind, fault, attempts) => {
    let requests = 0;
    const node = await rawServer((request, socket) => {
      requests++;
      fault(socket, request);
    });
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 5000 });
    // The mapping module's check before the run sent sample 0 once: count the run's requests only.
    requests = 0;
    try {
      const result = await run(sut, offline(4));
      expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
      expect(kindsOf(result)).toEqual({ [kind]: result.counts.issuedSamples });
      expect(sut.stats().nodes[0]!.failed[kind as 'connection']).toBe(result.counts.issuedSamples);
      expect(sut.stats().nodes[0]!.completed).toBe(0);
      if (attempts !== undefined) expect(requests).toBe(attempts * result.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  it('well-formed responses complete: 103 then 200, HTTP/1.0 and close-delimited bodies, extra bytes after the end, chunked, a 40 KiB head', async () => {
    const answers = [
      // Heads up to 64 KiB are read, as by the native client (undici's default limit is 16 KiB).
      (s: Socket, r: RawRequest) => s.write(echo(r.body, `X-Big: ${'b'.repeat(40 * 1024)}\r\n`)),
      (s: Socket, r: RawRequest) => s.write(`HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n${echo(r.body)}`),
      (s: Socket, r: RawRequest) => s.end(`HTTP/1.0 200 OK\r\n\r\necho:${r.body}`),
      (s: Socket, r: RawRequest) => s.end(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\necho:${r.body}`),
      (s: Socket, r: RawRequest) => s.write(`${echo(r.body)}TRAILING`),
      (s: Socket, r: RawRequest) => {
        const body = `echo:${r.body}`;
        s.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
      },
    ];
    let i = 0;
    const node = await rawServer((request, socket) => answers[i++ % answers.length]!(socket, request));
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 5000, connections: 1 });
    try {
      const result = await run(sut, offline(12));
      expect(failedOf(result).total).toBe(0);
      expect(sut.stats().nodes[0]!.completed).toBe(result.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: the body size limit', () => {
  it('a body beyond 64 MiB fails as malformed_response as its bytes pass the limit', async () => {
    const chunk = Buffer.alloc(1 << 20, 'x');
    const node = await rawServer((_request, socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${100 * chunk.length}\r\n\r\n`);
      // 100 MiB, a MiB at a time while the client reads: it stops reading at the limit.
      let sent = 0;
      const more = (): void => {
        while (sent < 100 && !socket.destroyed) {
          sent++;
          if (!socket.write(chunk)) return void socket.once('drain', more);
        }
      };
      more();
    });
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 20_000, connections: 1 });
    try {
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, offline(2), { outdir });
      expect(kindsOf(result)).toEqual({ malformed_response: 2 });
      expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toContain('the response body exceeds the size limit');
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: extra bytes after a response', () => {
  it('the response stands as framed; its connection, out of step, is not used again (as the native client does)', async () => {
    const node = await rawServer((request, socket) => socket.write(`${echo(request.body)}EXTRA BYTES`));
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 5000, connections: 1 });
    // The probe and the mapping module's check before the run shared one connection, which the check's extra bytes closed.
    const before = node.connections;
    try {
      const result = await run(sut, offline(6));
      expect(failedOf(result).total).toBe(0);
      expect(sut.stats().nodes[0]!.completed).toBe(6);
      // One connection per request.
      expect(node.connections - before).toBe(6);
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: a request undici will not send', () => {
  it('fails its sample, is not sent again, and leaves its connection free for the next', async () => {
    let requests = 0;
    const node = await rawServer((request, socket) => {
      requests++;
      socket.write(echo(request.body));
    });
    const protocol = testProtocol(8);
    // A header value with a line break: undici refuses it before anything is written.
    const request = protocol.request.bind(protocol);
    protocol.request = (index) => (index % 2 === 0 ? { ...request(index), headers: { 'x-bad': 'a\nb' } } : request(index));
    const sut = await createNetworkSut(protocol, { urls: [node.url], transport: 'undici', requestTimeoutMs: 5000, connections: 2 });
    try {
      const result = await run(sut, offline(16));
      expect(kindsOf(result)).toEqual({ connection: 8 });
      expect(sut.stats().nodes[0]!.completed).toBe(8);
      expect(requests).toBe(8);
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: responses without a body', () => {
  it('a 204 or 304 ends at its head whatever its Content-Length says', async () => {
    let i = 0;
    const node = await rawServer((_request, socket) => {
      socket.write(i++ % 2 === 0 ? 'HTTP/1.1 204 No Content\r\nContent-Length: 6\r\n\r\n' : 'HTTP/1.1 304 Not Modified\r\nContent-Length: 6\r\n\r\n');
    });
    // testProtocol accepts any 2xx body, the empty one included.
    const sut = await createNetworkSut(testProtocol(8), { urls: [node.url], transport: 'undici', requestTimeoutMs: 5000, connections: 1 });
    try {
      const result = await run(sut, offline(8));
      expect(kindsOf(result)).toEqual({ http_status: 4 });
      expect(sut.stats().nodes[0]!.completed).toBe(4);
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: timeouts from the write, exact', () => {
  /** A server answering each request after `delayMs`; records when each was read and when its socket closed. */
  async function slowServer(delayMs: number) {
    const closedAfterMs: number[] = [];
    // Off until the run: the mapping module's check before the run sends sample 0 once.
    const state = { counting: false };
    const node = await rawServer((request, socket) => {
      const counted = state.counting;
      const timer = setTimeout(() => socket.write(echo(request.body)), delayMs);
      socket.once('close', () => {
        clearTimeout(timer);
        if (counted) closedAfterMs.push(Number(process.hrtime.bigint() - request.receivedNs) / 1e6);
      });
    });
    return { node, closedAfterMs, state };
  }

  it('a 50 ms server with a 100 ms timeout: every sample completes', async () => {
    // 50 ms of margin: a loaded machine's stall of tens of ms is no timeout.
    const { node } = await slowServer(50);
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 100 });
    try {
      const result = await run(sut, { scenario: 'SingleStream', minDurationMs: 0, minQueryCount: 8 });
      expect(failedOf(result).total).toBe(0);
      expect(sut.stats().nodes[0]!.completed).toBe(result.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  it('a 120 ms server with a 100 ms timeout: every sample fails as timeout, none completes, each when its time is up', async () => {
    const { node, closedAfterMs, state } = await slowServer(120);
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 100 });
    state.counting = true;
    try {
      const result = await run(sut, { scenario: 'SingleStream', minDurationMs: 0, minQueryCount: 8 });
      expect(kindsOf(result)).toEqual({ timeout: result.counts.issuedSamples });
      expect(sut.stats().nodes[0]!.completed).toBe(0);
      // The client gave up (closed the socket) soon after the timeout passed, as the server saw it
      // (the median: one stall of this shared machine does not decide it; not early: the 50 ms case).
      expect(closedAfterMs.length).toBe(result.counts.issuedSamples);
      const sorted = [...closedAfterMs].sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(150);
    } finally {
      await sut.close();
    }
  });

  it('a request queued for a connection is timed from its write: per-node latency and the timeout leave the queue out', async () => {
    // One connection, eight samples at once, 80 ms each: the last one waits ~560 ms for the connection.
    const { node } = await slowServer(80);
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 300, connections: 1 });
    try {
      const result = await run(sut, offline(8));
      expect(failedOf(result).total).toBe(0);
      const stats = sut.stats().nodes[0]!;
      expect(stats.completed).toBe(8);
      // From the queue the median would be ~320 ms and the largest ~640 ms.
      expect(stats.latencyNs.p50).toBeLessThan(200e6);
      expect(stats.latencyNs.max).toBeLessThan(300e6);
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: requests waiting for a connection', () => {
  it('a server that never answers, one connection: each request times out from its write in turn; the run ends', async () => {
    let requests = 0;
    const node = await rawServer(() => void requests++);
    // The mapping module's check before the run waits for sample 0's answer up to the probe timeout.
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 100, connections: 1, probeTimeoutMs: 300 });
    requests = 0;
    try {
      const started = Date.now();
      const result = await run(sut, offline(6));
      expect(Date.now() - started).toBeLessThan(8_000);
      expect(kindsOf(result)).toEqual({ timeout: 6 });
      // Every one was written (and timed) in its turn, none failed while it waited.
      expect(requests).toBe(6);
    } finally {
      await sut.close();
    }
  });

  it("the run's stop cancels the requests waiting for a connection too", async () => {
    const node = await rawServer(() => undefined);
    const controller = new AbortController();
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', connections: 1, signal: controller.signal });
    try {
      setTimeout(() => controller.abort(new Error('stop')), 300);
      const started = Date.now();
      const result = await startTest(sut, sut.qsl, offline(20), { outdir: tempDir() }, { signal: controller.signal });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
      expect(kindsOf(result)).toEqual({ cancelled: result.counts.issuedSamples });
      expect(sut.stats().nodes[0]!.failed.cancelled).toBe(result.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });
});

describe('undici transport: no sample lost to ordinary servers', () => {
  it('a server that closes the connection after each response (no Connection: close)', async () => {
    // It closes a moment after its response: a request the client sent on the connection meanwhile is dropped unanswered.
    let dropped = 0;
    const node = await rawServer((request, socket) => {
      if (request.nth > 0) {
        dropped++;
        return;
      }
      socket.write(echo(request.body));
      setTimeout(() => socket.destroy(), 20);
    });
    const sut = await createHttpSut({ urls: [node.url], request: MAP, transport: 'undici', requestTimeoutMs: 5000 });
    try {
      const result = await run(sut, { scenario: 'Server', serverTargetQps: 400, minDurationMs: 0, minQueryCount: 300 });
      // The fault happened (requests were sent on closing connections), and cost no sample.
      expect(dropped).toBeGreaterThan(0);
      expect(failedOf(result).total).toBe(0);
      expect(sut.stats().nodes[0]!.completed).toBe(result.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  /** A node:http server answering in 40 ms that drops connections beyond `maxConnections`. */
  async function cappedServer(maxConnections: number) {
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/name') return void res.end('capped');
        // Slow enough that the rate needs more connections than the cap.
        setTimeout(() => res.end(`echo:${Buffer.concat(chunks).toString('utf8')}`), 40);
      });
    });
    server.maxConnections = maxConnections;
    const state = { refused: 0, open: 0, mostOpen: 0 };
    server.on('drop', () => state.refused++);
    server.on('connection', (socket: Socket) => {
      state.mostOpen = Math.max(state.mostOpen, ++state.open);
      socket.on('close', () => state.open--);
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push({
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    });
    return { server, state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('a server that accepts at most 8 connections (also when a connection more is tried each second)', async () => {
    const { state, url } = await cappedServer(8);
    const sut = await createHttpSut({ urls: [url], request: MAP, transport: 'undici', requestTimeoutMs: 5000, connections: 64 });
    try {
      const result = await run(sut, { scenario: 'Server', serverTargetQps: 400, minDurationMs: 0, minQueryCount: 500 });
      expect(state.refused).toBeGreaterThan(0);
      expect(failedOf(result).total).toBe(0);
      expect(sut.stats().nodes[0]!.completed).toBe(result.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  it('a server that takes more connections again: the lowered ceiling grows back', async () => {
    // Two connections at first (the ceiling comes down to them), any number from 0.7 s on.
    const { server, state, url } = await cappedServer(2);
    const sut = await createHttpSut({ urls: [url], request: MAP, transport: 'undici', requestTimeoutMs: 5000, connections: 64 });
    try {
      setTimeout(() => {
        server.maxConnections = 1000;
        state.mostOpen = state.open;
      }, 700);
      // 200/s at 40 ms each needs ~8 connections; 2 serve 50/s.
      const result = await run(sut, { scenario: 'Server', serverTargetQps: 200, minDurationMs: 0, minQueryCount: 500 });
      expect(state.refused).toBeGreaterThan(0);
      expect(failedOf(result).total).toBe(0);
      expect(state.mostOpen).toBeGreaterThanOrEqual(6);
    } finally {
      await sut.close();
    }
  });
});
