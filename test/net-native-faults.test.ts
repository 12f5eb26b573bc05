/**
 * The native transport under ordinary and hostile servers (raw node:net
 * servers on 127.0.0.1): a server that closes each connection after its
 * answer without saying so, one that takes at most a few connections, one
 * that closes idle connections; request framing undici refuses; bodies over
 * the protocol's limit (and the memory they may take); bad pool and timeout
 * options; a series that starts while the last one's requests are still out.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { SettingsError } from '../lib/errors.js';
import { NATIVE_SUT } from '../lib/api/native-sut.js';
import { loadNative } from '../lib/native/index.js';
import type { NativeHttpSut } from '../lib/native/addon.js';
import { createNetworkSut } from '../lib/net/transport.js';
import type { NetworkSut, TransportOptions } from '../lib/net/types.js';
import { testProtocol } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

const available = loadNative().nativeHttpAvailable;
const offline = (n: number) => ({ scenario: 'Offline', offlineExpectedQps: 100, minDurationMs: 0, minQueryCount: n }) as const;
const MB = 1024 * 1024;

type FailedSamples = { total: number; byKind: Record<string, number> };
const failedOf = (result: unknown): FailedSamples => (result as { errors: { failedSamples: FailedSamples } }).errors.failedSamples;
const countsOf = (sut: NetworkSut) => (sut as unknown as Record<symbol, NativeHttpSut>)[NATIVE_SUT]!.reactorCounts();

interface RawRequest {
  method: string;
  path: string;
  body: Buffer;
}

/**
 * A server speaking raw HTTP/1.1: `answer` gets each request (the probe's
 * GET /name included) and writes what it likes on the socket; it returns
 * whether the server closes the connection after it.
 */
const servers: Server[] = [];
const sockets = new Set<Socket>();
async function rawServer(answer: (request: RawRequest, socket: Socket) => boolean | void, setup?: (server: Server) => void): Promise<string> {
  const server = createServer((socket) => {
    let buffered = Buffer.alloc(0);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const [method = '', path = ''] = head.split(' ');
        const body = buffered.subarray(end + 4, end + 4 + length);
        buffered = buffered.subarray(end + 4 + length);
        if (answer({ method, path, body }, socket) === true) {
          socket.end();
          return;
        }
      }
    });
  });
  setup?.(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function ok(body: string | Buffer, extra = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${bytes.length}\r\n${extra}\r\n`), bytes]);
}

/** The probe's answer, or `infer` for the samples. */
function nodeAnswer(infer: (request: RawRequest, socket: Socket) => boolean | void) {
  return (request: RawRequest, socket: Socket): boolean | void => {
    if (request.path === '/name') {
      socket.write(ok('raw-node'));
      return;
    }
    return infer(request, socket);
  };
}

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => {
    s.close(() => resolve());
    (s as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
  })));
});

describe.skipIf(!available)('native transport: servers that close connections', () => {
  it('a server that closes each connection after its answer, unannounced: every POST completes (one retry on a new connection)', async () => {
    const url = await rawServer(nodeAnswer((request, socket) => {
      socket.write(ok(`echo:${request.body.toString()}`));
      return true;
    }));
    const sut = await createNetworkSut(testProtocol(64), { urls: [url], transport: 'native' });
    try {
      const r = await startTest(sut, sut.qsl, offline(500), { outdir: tempDir() });
      expect(failedOf(r).total).toBe(0);
      expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
      expect(r.counts.issuedSamples).toBeGreaterThanOrEqual(500);
      expect(sut.stats().nodes[0]!.completed).toBe(r.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  it('a server that takes at most 8 connections: the pool stops at what it takes, no sample fails', async () => {
    const url = await rawServer(nodeAnswer((request, socket) => {
      setTimeout(() => socket.write(ok(`echo:${request.body.toString()}`)), 2);
    }), (server) => {
      server.maxConnections = 8;
    });
    const sut = await createNetworkSut(testProtocol(64), { urls: [url], transport: 'native' });
    try {
      const burst = await startTest(sut, sut.qsl, offline(300), { outdir: tempDir() });
      expect(failedOf(burst).total).toBe(0);
      const paced = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 400, minDurationMs: 250, minQueryCount: 93 }, { outdir: tempDir() });
      expect(failedOf(paced).total).toBe(0);
      expect(paced.counts.completedSamples).toBe(paced.counts.issuedSamples);
      // It tried beyond the limit (the Offline burst) and learned it.
      expect(countsOf(sut).refusedConnections).toBeGreaterThan(0);
    } finally {
      await sut.close();
    }
  });

  it('connections open as the rate needs them: one at a time needs one', async () => {
    let accepted = 0;
    const url = await rawServer(nodeAnswer((request, socket) => {
      socket.write(ok(`echo:${request.body.toString()}`));
    }), (server) => server.on('connection', () => accepted++));
    const sut = await createNetworkSut(testProtocol(64), { urls: [url], transport: 'native', connections: 64 });
    try {
      const before = accepted;
      const r = await startTest(sut, sut.qsl, { scenario: 'SingleStream', minDurationMs: 0, minQueryCount: 40 }, { outdir: tempDir() });
      expect(failedOf(r).total).toBe(0);
      expect(accepted - before).toBe(0);  // the connection start() opened served every query
      expect(countsOf(sut).openedConnections).toBe(1);
    } finally {
      await sut.close();
    }
  });

  it('a server that closes idle keep-alive connections: they are dropped before use, nothing fails', async () => {
    const node = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(req.url === '/name' ? 'idle-node' : `echo:${Buffer.concat(chunks).toString()}`));
    });
    node.keepAliveTimeout = 30;
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    servers.push(node as unknown as Server);
    const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
    const sut = await createNetworkSut(testProtocol(8), { urls: [url], transport: 'native' });
    try {
      // 10 queries per second: every connection idles past the server's 30 ms.
      const r = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 10, minDurationMs: 0, minQueryCount: 12 }, { outdir: tempDir() });
      expect(failedOf(r).total).toBe(0);
      expect(r.counts.completedSamples).toBe(12);
    } finally {
      await sut.close();
    }
  });
});

describe.skipIf(!available)('native transport: framing undici refuses, and the failure taxonomy', () => {
  const shapes: [string, string | Buffer, string | undefined][] = [
    ['a bare-LF head', 'HTTP/1.1 200 OK\nContent-Length: 8\n\necho:ok!', 'malformed_response'],
    ['Transfer-Encoding with Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n8\r\necho:ok!\r\n0\r\n\r\n', 'malformed_response'],
    ['two equal Content-Lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 8\r\nContent-Length: 8\r\n\r\necho:ok!', 'malformed_response'],
    ['a signed Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: +8\r\n\r\necho:ok!', 'malformed_response'],
    ['a gzip transfer coding', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n8\r\necho:ok!\r\n0\r\n\r\n', 'malformed_response'],
    ['a folded header', 'HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\nContent-Length: 8\r\n\r\necho:ok!', 'malformed_response'],
    ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 8\r\n\r\necho:ok!', 'malformed_response'],
    ['a bare-LF chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\necho:ok!\r\n0\r\n\r\n', 'malformed_response'],
    // Closed before the response was complete: connection, as undici says it.
    ['a body shorter than its Content-Length, then a close', 'HTTP/1.1 200 OK\r\nContent-Length: 80\r\n\r\necho:ok!', 'connection'],
    // Bytes after a whole response belong to none: the response stands (as undici reads it).
    ['extra bytes after the response', 'HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\necho:ok!XXXX', undefined],
  ];
  it.each(shapes)('%s', async (_name, answer, kind) => {
    const url = await rawServer(nodeAnswer((_request, socket) => {
      socket.write(answer);
      return true;
    }));
    const sut = await createNetworkSut(testProtocol(4), { urls: [url], transport: 'native', readEveryResponse: false });
    const outdir = tempDir();
    try {
      const r = await startTest(sut, sut.qsl, offline(4), { outdir });
      const failed = failedOf(r);
      if (kind === undefined) {
        expect(failed.total).toBe(0);
      } else {
        expect(failed.total).toBe(r.counts.issuedSamples);
        expect(failed.byKind[kind]).toBe(r.counts.issuedSamples);
      }
    } finally {
      await sut.close();
    }
  });
});

/** Resident set growth (MB) while `run` runs, sampled every 2 ms. */
async function peakRssGrowthMb(run: () => Promise<unknown>): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 2);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  return (peak - base) / MB;
}

describe.skipIf(!available)('native transport: response bodies over the limit', () => {
  // Built once, before any measurement: the server's own memory is not the client's.
  const body = Buffer.alloc(100 * MB, 'x');
  const withLength = ok(body);
  const chunks: Buffer[] = [Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')];
  for (let at = 0; at < body.length; at += MB) chunks.push(Buffer.from(`${MB.toString(16)}\r\n`), body.subarray(at, at + MB), Buffer.from('\r\n'));
  chunks.push(Buffer.from('0\r\n\r\n'));

  it('a 100 MB body fails as malformed_response at the 64 MiB limit: its Content-Length at once (< 64 MB taken, four at once too), chunked as it passes the limit', async () => {
    const url = await rawServer(nodeAnswer((request, socket) => {
      if (request.path === '/chunked') for (const chunk of chunks) socket.write(chunk);
      else socket.write(withLength);
    }));
    // RSS before the fix: +195 MB for one body with a Content-Length, +256 MB for four, +223 MB chunked.
    for (const [samples, path, boundMb] of [[1, '/infer', 64], [4, '/infer', 64], [1, '/chunked', 96]] as const) {
      const base = testProtocol(samples);
      const sut = await createNetworkSut({ ...base, request: (i: number) => ({ ...base.request(i), path }) }, { urls: [url], transport: 'native' });
      const outdir = tempDir();
      try {
        let r: Awaited<ReturnType<typeof startTest>> | undefined;
        const growth = await peakRssGrowthMb(async () => {
          r = await startTest(sut, sut.qsl, offline(samples), { outdir });
        });
        expect(failedOf(r).byKind.malformed_response).toBe(samples);
        expect(growth, `RSS growth for ${samples} body(ies) of 100 MB (${path})`).toBeLessThan(boundMb);
      } finally {
        await sut.close();
      }
    }
  });

  it('a chunked or close-delimited body fails as its bytes pass the limit (the protocol\'s maxResponseBytes); streamed ones are counted', async () => {
    const url = await rawServer(nodeAnswer((request, socket) => {
      const size = Number(request.body.toString().replace('sample-', '')) % 2 === 0 ? 5000 : 500;
      if (request.path === '/stream') {
        socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        for (let sent = 0; sent < size; sent += 100) socket.write(`64\r\n${'t'.repeat(100)}\r\n`);
        socket.write('0\r\n\r\n');
        return;
      }
      socket.write(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${'c'.repeat(size)}`);
      return true;
    }));
    for (const tokens of [false, true]) {
      const base = testProtocol(8, { tokens });
      const protocol = { ...base, maxResponseBytes: 2000, request: (i: number) => ({ ...base.request(i), path: tokens ? '/stream' : '/close' }) };
      const sut = await createNetworkSut(protocol, { urls: [url], transport: 'native' });
      const outdir = tempDir();
      try {
        const r = await startTest(sut, sut.qsl, offline(8), { outdir });
        // Even samples: 5000 bytes, beyond 2000; odd ones: 500, fine.
        expect(failedOf(r).byKind.malformed_response).toBe(4);
        expect(failedOf(r).total).toBe(4);
      } finally {
        await sut.close();
      }
    }
  });
});

describe('pool and timeout options out of range', () => {
  it.each([
    ['connections', 100_000, /connections must be at most 4096, got 100000/],
    ['requestTimeoutMs', 9_999_999_999_999, /requestTimeoutMs must be at most 2147483647, got 9999999999999/],
    ['connectTimeoutMs', 2 ** 31, /connectTimeoutMs must be at most 2147483647, got 2147483648/],
    ['probeTimeoutMs', 2 ** 40, /probeTimeoutMs must be at most 2147483647/],
  ] as const)('%s %d: a SettingsError naming it, before anything connects', async (key, value, message) => {
    for (const transport of available ? (['native', 'undici'] as const) : (['undici'] as const)) {
      const options = { urls: ['http://127.0.0.1:9'], transport, [key]: value } as TransportOptions;
      await expect(createNetworkSut(testProtocol(), options)).rejects.toBeInstanceOf(SettingsError);
      await expect(createNetworkSut(testProtocol(), options)).rejects.toThrow(message);
    }
  });

  it.skipIf(!available)('connections beyond the open-file limit: a SettingsError naming connections (a child with ulimit -n 400)', async () => {
    const url = await rawServer(nodeAnswer((request, socket) => {
      socket.write(ok(`echo:${request.body.toString()}`));
    }));
    const script = join(tempDir(), 'limit.mjs');
    writeFileSync(script, `
      import { createNetworkSut } from ${JSON.stringify(join(repoRoot, 'dist', 'net', 'transport.js'))};
      const protocol = { kind: 'test', totalSampleCount: 1, performanceSampleCount: 1, streamsTokens: false,
        probe: async () => 'n', load() {}, unload() {}, request: () => ({ method: 'GET', path: '/', headers: {} }),
        reader: () => ({ onData() {}, onEnd: () => ({ ok: true }) }) };
      try {
        const sut = await createNetworkSut(protocol, { urls: [${JSON.stringify(url)}], transport: 'native', connections: 1000 });
        await sut.close();
        console.log('no error');
      } catch (error) {
        console.log(error.constructor.name, error.key, error.message);
      }
    `);
    const child = spawnSync('bash', ['-c', `ulimit -n 400 && exec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)}`], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout).toMatch(/^SettingsError connections connections 1000 per node x 1 node\(s\) need up to 1000 sockets, beyond this process's open-file limit of 400/);
  });
});

describe.skipIf(!available)('native transport: a series that starts while the last one\'s requests are out', () => {
  it('back-to-back runs against a slow server: the next load waits for them, never aborting', async () => {
    // Answers after 800 ms; the first run stops waiting after 300 ms (max duration).
    const url = await rawServer(nodeAnswer((request, socket) => {
      setTimeout(() => {
        if (!socket.destroyed) socket.write(ok(`echo:${request.body.toString()}`));
      }, 800);
    }));
    const sut = await createNetworkSut(testProtocol(16), { urls: [url], transport: 'native', requestTimeoutMs: 5000 });
    try {
      const first = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 50, minDurationMs: 100, minQueryCount: 5, maxDurationMs: 300 }, { outdir: tempDir() });
      expect(first.counts.issuedSamples).toBeGreaterThan(0);
      const second = await startTest(sut, sut.qsl, offline(4), { outdir: tempDir() });
      expect(second.invalidReasons.join('\n')).not.toMatch(/loadSamplesToRam|aborted/);
      expect(second.counts.completedSamples).toBe(second.counts.issuedSamples);
      expect(failedOf(second).total).toBe(0);
    } finally {
      await sut.close();
    }
  });

  it('a server that never answers and no request timeout: the load cancels them after its bound, never aborting', async () => {
    const url = await rawServer(nodeAnswer(() => {}));
    const sut = await createNetworkSut(testProtocol(16), { urls: [url], transport: 'native', requestTimeoutMs: 0 });
    const handle = (sut as unknown as Record<symbol, NativeHttpSut>)[NATIVE_SUT]!;
    try {
      const first = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 50, minDurationMs: 100, minQueryCount: 5, maxDurationMs: 200 }, { outdir: tempDir() });
      expect(first.counts.issuedSamples).toBeGreaterThan(0);
      expect(handle.outstanding()).toBeGreaterThan(0);
      const second = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 50, minDurationMs: 100, minQueryCount: 5, maxDurationMs: 200 }, { outdir: tempDir() });
      expect(second.invalidReasons.join('\n')).not.toMatch(/loadSamplesToRam|aborted/);
      expect(second.counts.issuedSamples).toBeGreaterThan(0);
      // The first run's requests were cancelled without completing anything in the second.
      expect(failedOf(second).byKind.cancelled).toBe(0);
      expect(sut.stats().nodes[0]!.failed.cancelled).toBeGreaterThanOrEqual(first.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  // The server answers one request per 10 ms, in order, and holds every 20th
  // for 500 ms: a trial ends (no completion within its max duration) with
  // those still out, and the next one loads. From its 40th request on it
  // answers 500 to every third: the second search fails its first trial (a
  // trial with failed samples fails) and its load still finds requests out.
  it('FindPeakPerformance, twice against a server of 100 requests per second that answers 500 to some and holds others, never aborts', async () => {
    let busyUntil = 0;
    let served = 0;
    const url = await rawServer(nodeAnswer((request, socket) => {
      const n = served++;
      busyUntil = Math.max(performance.now(), busyUntil) + 10;
      const answer = n >= 40 && n % 3 === 0 ? 'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nbusy' : ok(`echo:${request.body.toString()}`);
      setTimeout(() => {
        if (!socket.destroyed) socket.write(answer);
      }, n % 20 === 19 ? 500 : busyUntil - performance.now());
    }));
    const sut = await createNetworkSut(testProtocol(32), { urls: [url], transport: 'native', requestTimeoutMs: 2000 });
    try {
      for (let run = 0; run < 2; run++) {
        const r = await startTest(sut, sut.qsl, {
          scenario: 'Server', mode: 'FindPeakPerformance', serverTargetQps: 50, serverTargetLatencyNs: 40_000_000,
          minDurationMs: 100, minQueryCount: 8, maxDurationMs: 200, serverFindPeakQpsDecimalsOfPrecision: 0,
        }, { outdir: tempDir() });
        expect(r.invalidReasons.join('\n'), `run ${run}`).not.toMatch(/loadSamplesToRam|aborted/);
        expect(r.findPeak!.trials.length).toBeGreaterThan(run === 0 ? 1 : 0);
      }
    } finally {
      await sut.close();
    }
  });
});
