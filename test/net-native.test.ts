/**
 * The native transport of network SUTs (lib/net/native-transport.ts over
 * native/http_client.h): chosen by 'auto' where it can serve, refused with a
 * clear error where it cannot, and the same results as undici: completions,
 * accuracy data through the protocol's reader, failures by kind, the key
 * never in a message, queueing beyond the connections.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { SettingsError } from '../lib/errors.js';
import { NATIVE_SUT } from '../lib/api/native-sut.js';
import { loadNative } from '../lib/native/index.js';
import type { NativeHttpSut } from '../lib/native/addon.js';
import type { NetworkProtocol } from '../lib/net/protocol.js';
import { createNetworkSut } from '../lib/net/transport.js';
import { nodeHandler, testProtocol, type TestServer, testServers } from './net-helpers.js';
import { tempDir } from './helpers.js';

const server = testServers();
const available = loadNative().nativeHttpAvailable;
const offline = (n: number) => ({ scenario: 'Offline', offlineExpectedQps: 100, minDurationMs: 0, minQueryCount: n }) as const;

describe.skipIf(!available)('native transport', () => {
  let node: TestServer;
  beforeAll(async () => {
    node = await server(nodeHandler('native-node'));
  });

  it("'auto' picks it for plain http:, whole responses and token streams; undici for http2", async () => {
    const sut = await createNetworkSut(testProtocol(), { urls: [node.url] });
    const tokens = await createNetworkSut(testProtocol(8, { tokens: true }), { urls: [node.url] });
    const h2 = await createNetworkSut(testProtocol(8, { tokens: true }), { urls: [node.url], http2: true });
    try {
      expect(sut.stats().transport).toBe('native');
      expect(tokens.stats().transport).toBe('native');
      expect(h2.stats().transport).toBe('undici');
      const report = (sut as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines).toContain("Transport : native (the core's HTTP/1.1 client)");
    } finally {
      await sut.close();
      await tokens.close();
      await h2.close();
    }
  });

  it("'native' where it cannot serve is a SettingsError naming transport, before anything runs", async () => {
    const attempt = createNetworkSut(testProtocol(8, { tokens: true }), { urls: [node.url], transport: 'native', http2: true });
    await expect(attempt).rejects.toBeInstanceOf(SettingsError);
    await expect(createNetworkSut(testProtocol(8, { tokens: true }), { urls: [node.url], transport: 'native', http2: true }))
      .rejects.toThrow(/transport 'native' cannot serve this SUT: http2 is on/);
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], transport: 'bogus' as never }))
      .rejects.toThrow(/transport 'bogus' is not one of auto, native, undici/);
  });

  it('responsePollUs sets the reactor\'s poll budget limit (0: never polls); a bad value is a SettingsError naming it', async () => {
    const counts = (sut: object) => (sut as Record<symbol, NativeHttpSut>)[NATIVE_SUT]!.reactorCounts();
    // The reactor thread's polling: with inline issuing the issue thread reads a Server run's responses.
    const never = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native', responsePollUs: 0, inlineReactor: false });
    const wide = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native', responsePollUs: 1_000_000, inlineReactor: false });
    const fallback = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native' });
    try {
      expect(counts(fallback).pollBudgetNs).toBe(200_000);
      expect(counts(wide).pollBudgetNs).toBe(1_000_000_000);
      for (const sut of [never, wide]) {
        const r = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 200, minDurationMs: 300, minQueryCount: 60 }, { outdir: tempDir() });
        expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
        expect(r.errors.failedSamples.total).toBe(0);
      }
      expect(counts(never)).toMatchObject({ polledEvents: 0, blockingWaits: expect.any(Number), sendWakes: 0, pollBudgetNs: 0 });
      // node:http answers well within 500 ms: the learned budget stays on, and the reactor polled.
      expect(counts(wide).pollBudgetNs).toBeGreaterThan(0);
      expect(counts(wide).polledEvents + counts(wide).sendWakes).toBeGreaterThan(0);
    } finally {
      await never.close();
      await wide.close();
      await fallback.close();
    }
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], responsePollUs: -1 }))
      .rejects.toThrow(/responsePollUs must be an integer >= 0, got -1/);
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], responsePollUs: 2_000_000 }))
      .rejects.toThrow(/responsePollUs must be at most 1000000, got 2000000/);
  });

  it('clientThreads: each client thread reads its share of the responses, the report shows each; bad values are SettingsErrors naming it', async () => {
    const counts = (sut: object) => (sut as Record<symbol, NativeHttpSut>)[NATIVE_SUT]!.reactorCounts();
    const sut = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native', connections: 6, clientThreads: 3 });
    try {
      const r = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 1000, minDurationMs: 300, minQueryCount: 300 }, { outdir: tempDir() });
      expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
      expect(r.errors.failedSamples.total).toBe(0);
      const c = counts(sut);
      expect(c.threads).toHaveLength(3);
      // Several threads: no inline reading; every thread read some; the sums are the threads'.
      expect(c.inlineEvents).toBe(0);
      for (const t of c.threads) expect(t.responses).toBeGreaterThan(0);
      expect(c.responses).toBe(c.threads.reduce((sum, t) => sum + t.responses, 0));
      const stats = sut.stats();
      expect(stats.clientThreads).toHaveLength(3);
      expect(stats.nodes[0]!.requests).toBe(c.responses);
      const report = (sut as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines).toContain('Client threads : 3 (responses read, requests written and reactor thread CPU since the SUT started)');
      const threadLines = report.lines.filter((l) => /^ {2}Thread \d : responses \d+, requests written \d+, reactor CPU \d+\.\d ms$/.test(l));
      expect(threadLines).toHaveLength(3);
      // Each thread wrote at most its own connections' requests: those handed over while it was
      // awake (at 1k/s mostly none: the issue thread writes a blocked thread's requests itself).
      for (const t of stats.clientThreads!) expect(t.requestsWritten).toBeGreaterThanOrEqual(0);
      for (const t of stats.clientThreads!) expect(t.requestsWritten).toBeLessThanOrEqual(t.responses);
      expect(c.handedWrites).toBe(c.threads.reduce((sum, t) => sum + t.handedWrites, 0));
      // Every thread opened its own connections; none was refused, no request sent twice.
      const opened = stats.clientThreads!.reduce((n, t) => n + t.openedConnections, 0);
      expect(opened).toBeGreaterThanOrEqual(3);
      expect(report.lines).toContain(`Connections : opened ${opened}, refused 0; requests sent again 0`);
    } finally {
      await sut.close();
    }
    // One thread (the default): one line for it.
    const one = await createNetworkSut(testProtocol(8), { urls: [node.url], transport: 'native' });
    try {
      expect(one.stats().clientThreads).toHaveLength(1);
      expect(one.stats().clientThreads![0]!.requestsWritten).toBeUndefined();
    } finally {
      await one.close();
    }
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], clientThreads: 0 }))
      .rejects.toThrow(/clientThreads must be an integer >= 1 or 'auto', got 0/);
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], clientThreads: 65 }))
      .rejects.toThrow(/clientThreads must be at most 64, got 65/);
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], clientThreads: 1.5 }))
      .rejects.toThrow(/clientThreads must be an integer >= 1 or 'auto', got 1.5/);
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], connections: 2, clientThreads: 3 }))
      .rejects.toThrow(/clientThreads 3 exceeds connections 2: each client thread owns at least one connection per node/);
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], transport: 'undici', clientThreads: 2 }))
      .rejects.toThrow(/clientThreads 2 needs the native transport .*not 'undici'/);
    const h2 = createNetworkSut(testProtocol(8, { tokens: true }), { urls: [node.url], http2: true, clientThreads: 2 });
    await expect(h2).rejects.toBeInstanceOf(SettingsError);
    await expect(createNetworkSut(testProtocol(8, { tokens: true }), { urls: [node.url], http2: true, clientThreads: 2 }))
      .rejects.toThrow(/clientThreads 2 needs the native transport, which cannot serve this SUT: http2 is on/);
  });

  it("idleRuntimeThreads: the runtime's helper threads run at idle priority once the transport starts, never the main thread; the block says so", async () => {
    // /proc/<tid>/sched's policy line: 5 is SCHED_IDLE.
    const policyOf = (tid: string): number => Number(/^policy\s*:\s*(\d+)/m.exec(readFileSync(`/proc/self/task/${tid}/sched`, 'utf8'))?.[1] ?? -1);
    const sut = await createNetworkSut(testProtocol(8), { urls: [node.url], transport: 'native' });
    try {
      const idle = sut.stats().runtimeThreadsIdle!;
      expect(idle).toBeGreaterThan(0);
      const tids = readdirSync('/proc/self/task');
      expect(tids.filter((t) => policyOf(t) === 5).length).toBeGreaterThanOrEqual(idle);
      expect(policyOf(String(process.pid))).toBe(0);
      const report = (sut as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines.find((l) => l.startsWith('Runtime threads : '))).toMatch(new RegExp(`^Runtime threads : ${idle} at idle priority`));
      // A run still completes (its own threads are not among them).
      const r = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 500, minDurationMs: 200, minQueryCount: 50 }, { outdir: tempDir() });
      expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
    } finally {
      await sut.close();
    }
    // Opted out: nothing reported (the process's helpers stay as the first SUT left them: the move is once per process).
    const kept = await createNetworkSut(testProtocol(8), { urls: [node.url], transport: 'native', idleRuntimeThreads: false });
    try {
      expect(kept.stats().runtimeThreadsIdle).toBe(0);
      const report = (kept as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines.some((l) => l.startsWith('Runtime threads : '))).toBe(false);
    } finally {
      await kept.close();
    }
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], idleRuntimeThreads: 'yes' as never }))
      .rejects.toThrow(/idleRuntimeThreads must be true or false, got string/);
  });

  it('inlineReactor: in a Server run the issue thread reads the responses (default), or the reactor thread does; a bad value is a SettingsError naming it', async () => {
    const counts = (sut: object) => (sut as Record<symbol, NativeHttpSut>)[NATIVE_SUT]!.reactorCounts();
    const inline = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native' });
    const threaded = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native', inlineReactor: false });
    try {
      for (const sut of [inline, threaded]) {
        const r = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 500, minDurationMs: 300, minQueryCount: 100 }, { outdir: tempDir() });
        expect(r.counts.issuedSamples).toBeGreaterThanOrEqual(100);
        expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
        expect(r.errors.failedSamples.total).toBe(0);
      }
      expect(counts(inline).inlineEvents).toBeGreaterThan(0);
      expect(counts(threaded).inlineEvents).toBe(0);
      // Offline issues one query: nothing to wait for between sends, the reactor thread reads.
      const before = counts(inline).inlineEvents;
      const r = await startTest(inline, inline.qsl, offline(50), { outdir: tempDir() });
      expect(r.counts.completedSamples).toBe(50);
      expect(counts(inline).inlineEvents).toBe(before);
    } finally {
      await inline.close();
      await threaded.close();
    }
    await expect(createNetworkSut(testProtocol(), { urls: [node.url], inlineReactor: 'yes' as never }))
      .rejects.toThrow(/inlineReactor must be true or false, got string/);
  });

  it('completes every sample of an Offline query larger than its connections (queued), each once', async () => {
    const sut = await createNetworkSut(testProtocol(64), { urls: [node.url], connections: 2, transport: 'native' });
    try {
      const before = node.hits.get('/infer') ?? 0;
      const r = await startTest(sut, sut.qsl, offline(500), { outdir: tempDir() });
      expect(r.valid).toBe(true);
      expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
      expect(r.counts.issuedSamples).toBeGreaterThanOrEqual(500);
      expect((node.hits.get('/infer') ?? 0) - before).toBe(r.counts.issuedSamples);
      const n = sut.stats().nodes[0]!;
      expect(n.requests).toBe(r.counts.issuedSamples);
      expect(n.completed).toBe(r.counts.issuedSamples);
      expect(n.latencyNs.p50).toBeGreaterThan(0);
    } finally {
      await sut.close();
    }
  });

  it('runs Server and SingleStream', async () => {
    const sut = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native' });
    try {
      const server = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 500, minDurationMs: 300, minQueryCount: 100 }, { outdir: tempDir() });
      expect(server.counts.completedSamples).toBe(server.counts.issuedSamples);
      expect(server.errors.failedSamples.total).toBe(0);
      const single = await startTest(sut, sut.qsl, { scenario: 'SingleStream', minDurationMs: 200, minQueryCount: 50 }, { outdir: tempDir() });
      // Validity depends on this shared machine's load: counts and failures do not.
      expect(single.errors.failedSamples.total).toBe(0);
      expect(single.counts.completedSamples).toBe(single.counts.issuedSamples);
    } finally {
      await sut.close();
    }
  });

  it('a request whose connection closes before any byte of the answer is sent again once, counted once, and the block says so', async () => {
    const dropped = new Set<string>();
    const flaky = await server(nodeHandler('flaky', (req, res, body) => {
      // The first time each of two samples arrives, its connection closes unanswered.
      if ((body === 'sample-2' || body === 'sample-5') && !dropped.has(body)) {
        dropped.add(body);
        req.socket.destroy();
        return;
      }
      res.end(`echo:${body}`);
    }));
    const sut = await createNetworkSut(testProtocol(8), { urls: [flaky.url], transport: 'native' });
    const outdir = tempDir();
    try {
      const r = await startTest(sut, sut.qsl, { ...offline(1), mode: 'AccuracyOnly' }, { outdir });
      expect(r.valid).toBe(true);
      expect(r.counts.completedSamples).toBe(8);
      const stats = sut.stats();
      expect(stats.nodes[0]!.requests).toBe(8);
      expect(stats.clientThreads!.reduce((n, t) => n + t.retriedRequests, 0)).toBe(2);
      const report = (sut as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines.find((l) => l.startsWith('Connections : '))).toMatch(
        /^Connections : opened \d+, refused \d+; requests sent again 2 \(their connection closed before any byte of the answer; each counts once in its node's requests, and loadgen's latency spans both tries\)$/);
      const log = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
      for (const entry of log) expect(Buffer.from(entry.data, 'hex').toString('utf8')).toBe(`echo:sample-${entry.qsl_idx}`);
    } finally {
      await sut.close();
    }
  });

  it('accuracy mode: every body goes through the reader into the accuracy log', async () => {
    const sut = await createNetworkSut(testProtocol(16), { urls: [node.url], transport: 'native' });
    const outdir = tempDir();
    try {
      const r = await startTest(sut, sut.qsl, { ...offline(1), mode: 'AccuracyOnly' }, { outdir });
      expect(r.counts.completedSamples).toBe(16);
      const log = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
      expect(log).toHaveLength(16);
      for (const entry of log) expect(Buffer.from(entry.data, 'hex').toString('utf8')).toBe(`echo:sample-${entry.qsl_idx}`);
    } finally {
      await sut.close();
    }
  });

  it('reads every body by default (a malformed one fails its sample); readEveryResponse false checks status and framing only', async () => {
    const bad = await server(nodeHandler('bad', (_req, res) => res.end('BAD answer')));
    const strict = await createNetworkSut(testProtocol(8), { urls: [bad.url], transport: 'native' });
    const lenient = await createNetworkSut(testProtocol(8), { urls: [bad.url], transport: 'native', readEveryResponse: false });
    try {
      const s = await startTest(strict, strict.qsl, offline(8), { outdir: tempDir() });
      expect(s.valid).toBe(false);
      expect(s.errors.failedSamples.byKind.malformed_response).toBe(s.counts.issuedSamples);
      const l = await startTest(lenient, lenient.qsl, offline(8), { outdir: tempDir() });
      expect(l.errors.failedSamples.total).toBe(0);
    } finally {
      await strict.close();
      await lenient.close();
    }
  });

  it('a non-2xx status fails as http_status with an excerpt, never the API key even when echoed', async () => {
    const key = 'sk-native-secret-0123456789';
    const echo = await server(nodeHandler('echo', (req, res) => {
      res.statusCode = 503;
      res.end(`overloaded; you sent ${String(req.headers.authorization)}`);
    }));
    const sut = await createNetworkSut(testProtocol(8), { urls: [echo.url], transport: 'native', apiKey: key });
    const outdir = tempDir();
    try {
      const r = await startTest(sut, sut.qsl, offline(8), { outdir });
      expect(r.valid).toBe(false);
      expect(r.errors.failedSamples.byKind.http_status).toBe(r.counts.issuedSamples);
      const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
      expect(detail).toContain(`Sample failed (http_status): node ${echo.url}: HTTP 503: overloaded; you sent Bearer <redacted>`);
      expect(detail).not.toContain('native-secret');
      expect(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain('native-secret');
    } finally {
      await sut.close();
    }
  });

  it('sends a request body of several MB whole (partial writes finished by the reactor)', async () => {
    let bytes = 0;
    const big = await server(nodeHandler('big', (_req, res, body) => {
      bytes = body.length;
      res.end('ok');
    }));
    const protocol = testProtocol(1);
    const payload = 'x'.repeat(6 << 20);
    const sut = await createNetworkSut({ ...protocol, request: () => ({ method: 'POST', path: '/infer', headers: { 'content-type': 'text/plain' }, body: payload }) },
      { urls: [big.url], transport: 'native' });
    try {
      const r = await startTest(sut, sut.qsl, offline(1), { outdir: tempDir() });
      expect(r.valid).toBe(true);
      expect(bytes).toBe(payload.length);
    } finally {
      await sut.close();
    }
  });

  it.each([false, true])('the response headers a protocol lists reach its reader before the body, as undici hands them (token streams %s)', async (tokens) => {
    const headed = await server(nodeHandler('headed', (_req, res) => {
      res.setHeader('x-first', 'caf\u00e9');
      res.setHeader('x-twice', ['1', '2']);
      res.setHeader('x-unlisted', 'no');
      res.end('body');
    }));
    const seenBy = async (transport: 'native' | 'undici'): Promise<Set<string>> => {
      const seen = new Set<string>();
      const base = testProtocol(8, { tokens });
      const protocol: NetworkProtocol = {
        ...base,
        responseHeaders: ['X-First', 'x-twice', 'x-absent'],
        reader(index, wantData) {
          const inner = base.reader(index, wantData);
          let headers = 'none';
          return {
            onHeaders(h) {
              headers = JSON.stringify([h['x-first'], h['x-twice'], h['x-absent'] ?? null]);
            },
            onData(chunk) {
              seen.add(`${headers} before the body`);
              return inner.onData(chunk);
            },
            onEnd: () => inner.onEnd(),
          };
        },
      };
      const sut = await createNetworkSut(protocol, { urls: [headed.url], transport });
      try {
        expect(sut.stats().transport).toBe(transport);
        const r = await startTest(sut, sut.qsl, offline(16), { outdir: tempDir() });
        expect(r.errors.failedSamples.total).toBe(0);
      } finally {
        await sut.close();
      }
      return seen;
    };
    // Byte for byte as undici decodes them (latin1), whatever node:http wrote for the é.
    const undici = await seenBy('undici');
    expect([...undici]).toEqual([expect.stringMatching(/^\["caf.+",\["1","2"\],null\] before the body$/)]);
    expect(await seenBy('native')).toEqual(undici);
  });

  it("a protocol's response headers the native client cannot capture: 'auto' takes undici, 'native' is a SettingsError naming why", async () => {
    const many: NetworkProtocol = { ...testProtocol(8), responseHeaders: Array.from({ length: 9 }, (_, i) => `x-h${i}`) };
    const sut = await createNetworkSut(many, { urls: [node.url] });
    try {
      expect(sut.stats().transport).toBe('undici');
    } finally {
      await sut.close();
    }
    await expect(createNetworkSut(many, { urls: [node.url], transport: 'native' }))
      .rejects.toThrow(/transport 'native' cannot serve this SUT: the test protocol reads 9 response headers, more than the native client's 8/);
    await expect(createNetworkSut({ ...testProtocol(8), responseHeaders: ['bad name'] }, { urls: [node.url], transport: 'native' }))
      .rejects.toThrow(/the test protocol's responseHeaders has 'bad name', not a header name/);
  });

  it('a node that is down is a NetworkSetupError before the run (probe), nothing left open', async () => {
    const gone = await server(nodeHandler('gone'));
    const url = gone.url;
    await gone.close();
    await expect(createNetworkSut(testProtocol(), { urls: [url], transport: 'native', connectTimeoutMs: 2000, probeTimeoutMs: 2000 }))
      .rejects.toThrow(/not reachable/);
  });
});
