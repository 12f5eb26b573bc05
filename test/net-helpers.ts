/**
 * Loopback servers and a minimal protocol for the network SUT tests: every
 * server listens on 127.0.0.1, port 0, and is closed by the test that started it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll } from 'vitest';

import type { NetworkProtocol, ResponseOutcome } from '../lib/net/protocol.js';

export interface TestServer {
  url: string;
  server: Server;
  /** Requests received, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1:0 running `handle` (default: answers 'ok'). */
export async function startTestServer(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void = (_req, res) => res.end('ok'),
): Promise<TestServer> {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      handle(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A server for the probe: GET /name answers `name`; POST /infer runs `infer`. */
export function nodeHandler(
  name: string,
  infer: (req: IncomingMessage, res: ServerResponse, body: string) => void = (_req, res, body) => res.end(`echo:${body}`),
): (req: IncomingMessage, res: ServerResponse, body: string) => void {
  return (req, res, body) => {
    if (req.url === '/name') res.end(name);
    else infer(req, res, body);
  };
}

/**
 * A protocol whose sample i is `POST /infer` with body `sample-i`; the
 * response body is the data; a body containing 'BAD' is malformed. With
 * `tokens`, every chunk is a token (the first one the first token).
 */
export function testProtocol(total = 64, opts: { tokens?: boolean; kind?: string } = {}): NetworkProtocol & { loaded: Set<number> } {
  const loaded = new Set<number>();
  const headers = { 'content-type': 'text/plain' };
  return {
    kind: opts.kind ?? 'test',
    totalSampleCount: total,
    performanceSampleCount: total,
    streamsTokens: opts.tokens === true,
    loaded,
    async probe(node) {
      const r = await node.request('GET', '/name');
      if (r.status !== 200) throw new Error(`GET /name answered ${r.status}`);
      return Buffer.from(r.body).toString('utf8');
    },
    load(indices) {
      for (const i of indices) loaded.add(i);
    },
    unload(indices) {
      for (const i of indices) loaded.delete(i);
    },
    request(index) {
      if (!loaded.has(index)) throw new Error(`sample ${index} not loaded`);
      return { method: 'POST', path: '/infer', headers, body: `sample-${index}` };
    },
    reader(_index, wantData) {
      const chunks: Uint8Array[] = [];
      let tokens = 0;
      return {
        onData(chunk) {
          chunks.push(chunk);
          tokens++;
          return tokens === 1 && opts.tokens === true ? chunk : undefined;
        },
        onEnd(): ResponseOutcome {
          const body = Buffer.concat(chunks);
          if (body.includes('BAD')) return { ok: false, kind: 'malformed_response', message: 'the body said BAD' };
          return { ok: true, ...(wantData ? { data: new Uint8Array(body) } : {}), ...(opts.tokens ? { nTokens: Math.max(tokens, 2) } : {}) };
        },
      };
    },
  };
}

/**
 * A starter of test servers for one test file: every server it starts is
 * closed after the file's tests (call it at the file's top level).
 */
export function testServers(): (...args: Parameters<typeof startTestServer>) => Promise<TestServer> {
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  return async (...args) => {
    const s = await startTestServer(...args);
    servers.push(s);
    return s;
  };
}
