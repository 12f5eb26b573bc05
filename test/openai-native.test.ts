/**
 * Token streams through the native transport (lib/net/native-stream.ts):
 * 'auto' picks it for the OpenAI protocol on plain http:, and a stream that
 * breaks after its first token (the connection closed, bad chunked framing)
 * fails its sample by kind, naming the node, the run INVALID; an error
 * status that echoes the API key is logged without it.
 */
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { createOpenAiSut } from '../lib/net/openai.js';
import { startOpenAiStub } from '../lib/serve/openai-stub.js';
import { readText, tempDir } from './helpers.js';

const MS = 1_000_000;
const available = loadNative().nativeHttpAvailable;
const dir = tempDir('loadgen-openai-native-');
const dataset = join(dir, 'prompts.jsonl');
writeFileSync(dataset, '{"prompt": "a b c", "max_tokens": 4}\n');

const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
const FIRST_EVENT = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n';
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/** A node that lists the model, then breaks every stream after its first token: closed (odd requests) or bad framing (even). */
async function breakingNode(): Promise<{ url: string; server: Server }> {
  let completions = 0;
  const server = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'breaker', object: 'model' }] }));
      return;
    }
    req.resume();
    req.on('end', () => {
      const n = ++completions;
      const socket = req.socket;
      // The raw bytes, past node:http's own framing.
      socket.write(CHUNKED_HEAD + chunk(FIRST_EVENT));
      setTimeout(() => {
        if (n % 2 === 1) socket.destroy();
        else socket.end('zz\r\nnot a chunk\r\n');
      }, 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.skipIf(!available)('OpenAI token streams over the native transport', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it("'auto' picks it for plain http: and says so in stats() and the report", async () => {
    const stub = await startOpenAiStub({ port: 0, ttftMs: 5, tpotMs: 1 });
    const sut = await createOpenAiSut({ urls: [stub.url], model: stub.model, dataset });
    try {
      expect(sut.stats().transport).toBe('native');
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 20 * MS, minDurationMs: 0, minQueryCount: 6, useTokenLatencies: true }, { outdir });
      expect(result.errors.count).toBe(0);
      expect(result.tokens!.ttftNs!.min).toBeGreaterThanOrEqual(5 * MS);
      expect(result.tokens!.tokenCount).toBe(6 * 4);
      const report = (sut as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines).toContain("Transport : native (the core's HTTP/1.1 client)");
    } finally {
      await sut.close();
      await stub.close();
    }
  });

  it('a stream closed or badly framed after its first token fails by kind, naming the node; the run is INVALID', async () => {
    const node = await breakingNode();
    servers.push(node.server);
    const sut = await createOpenAiSut({ urls: [node.url], model: 'breaker', dataset, transport: 'native', connections: 2 });
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 20 * MS, minDurationMs: 0, minQueryCount: 6, useTokenLatencies: true }, { outdir });
      const failed = (result.errors as unknown as { failedSamples: { total: number; byKind: Record<string, number> } }).failedSamples;
      expect(result.valid).toBe(false);
      expect(result.counts.completedSamples).toBe(6);
      expect(failed.total).toBe(6);
      expect(failed.byKind).toEqual({ malformed_response: 3, connection: 3, http_status: 0, timeout: 0, cancelled: 0, no_first_token: 0 });
      const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
      expect(detail).toContain(`node ${node.url}: connection closed mid-response`);
      expect(detail).toContain(`node ${node.url}: malformed response: malformed chunk size`);
      const stats = sut.stats().nodes[0]!;
      expect(stats.failed.connection).toBe(3);
      expect(stats.failed.malformed_response).toBe(3);
    } finally {
      await sut.close();
    }
  });

  it('an error status that echoes the API key fails as http_status without the key in any log', async () => {
    const KEY = 'sk-loadgen-stream-echo-5a4b3c2d1e';
    const server = createServer((req, res) => {
      if (req.url === '/v1/models') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'echo', object: 'model' }] }));
        return;
      }
      req.resume();
      res.statusCode = 500;
      res.end(`you sent ${String(req.headers.authorization)}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sut = await createOpenAiSut({ urls: [url], model: 'echo', dataset, transport: 'native', apiKey: KEY });
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 20 * MS, minDurationMs: 0, minQueryCount: 3, useTokenLatencies: true }, { outdir });
      expect(result.errors.count).toBe(3);
      const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
      expect(detail).toContain(`node ${url}: HTTP 500: you sent Bearer <redacted>`);
      expect(detail).not.toContain(KEY.slice(3));
      expect(readText(join(outdir, 'mlperf_log_summary.txt'))).not.toContain(KEY.slice(3));
    } finally {
      await sut.close();
    }
  });
});
