/**
 * The per-request log (`requestLog`, `--request-log`) and the transports'
 * own token-stream figures (inter-token gaps stamped per read, input
 * lengths), on both transports: one valid JSON line per request with its
 * stamps, tokens, outcome and failure kind, no secret in it; the gaps
 * counted exactly; the combinations that cannot log every request refused
 * before anything runs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SettingsError, startTest, type SutReport, type TestResult } from '../lib/index.js';
import { setActiveSeries } from '../lib/dispatch/active.js';
import { loadNative } from '../lib/native/index.js';
import { createOpenAiSut } from '../lib/net/openai.js';
import type { ResponseReader } from '../lib/net/protocol.js';
import { RequestLog } from '../lib/net/request-log.js';
import { createStreamStatsBuffer, streamReport, streamSlice, StreamStatsRecorder, traceOutputEvents } from '../lib/net/stream-stats.js';
import { createNetworkSut } from '../lib/net/transport.js';
import { startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { nodeHandler, startTestServer, testProtocol } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

const KEY = 'sk-request-log-secret-0123456789';
const nativeHttp = loadNative().nativeHttpAvailable;
const dir = tempDir('loadgen-request-log-');
const dataset = join(dir, 'prompts.jsonl');
const MAX_TOKENS = 5;
writeFileSync(dataset, Array.from({ length: 8 }, (_, i) => `{"prompt": "w${i} x y", "max_tokens": ${MAX_TOKENS}}`).join('\n') + '\n');

interface Line {
  series: string | null;
  id: number;
  qsl_index: number;
  node: string | null;
  sent_ns: number | null;
  first_token_ns: number | null;
  last_byte_ns: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  outcome: 'ok' | 'failed';
  failure: string | null;
}

const SERVER = { scenario: 'Server', serverTargetQps: 100, minDurationMs: 150, minQueryCount: 12 } as const;

describe('the request log and inter-token gaps', () => {
  let stub: OpenAiStub;
  beforeAll(async () => {
    // Request 3 answers 500; request 5 resets after its first token.
    stub = await startOpenAiStub({ port: 0, ttftMs: 2, tpotMs: 3, apiKey: KEY, faults: { 3: 'http-500', 5: 'reset' } });
  });
  afterAll(async () => {
    await stub.close();
  });

  const transports = nativeHttp ? (['undici', 'native'] as const) : (['undici'] as const);
  it.each(transports)('%s: one JSON line per request, failures by kind, gaps exactly n - 1 per streamed response', async (transport) => {
    const first = stub.requestCount;
    const path = join(dir, `${transport}.jsonl`);
    const sut = await createOpenAiSut({ urls: [stub.url], model: 'loadgen-stub', dataset, apiKey: KEY, transport, requestLog: path });
    let result: TestResult;
    let report: SutReport | undefined;
    try {
      // The stub counts requests since it started: its faults hit this run's 3rd and 5th only in the first test.
      result = await startTest(sut, sut.qsl, SERVER, { outdir: tempDir() });
      report = (sut as { report(): SutReport }).report();
    } finally {
      await sut.close();
    }
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(KEY.slice(3, 15));
    const lines = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
    expect(lines).toHaveLength(result.counts.issuedSamples);
    expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);
    const failed = lines.filter((l) => l.outcome === 'failed');
    expect(failed.length).toBe(result.errors.failedSamples.total);
    const byKind: Record<string, number> = {};
    for (const l of failed) byKind[l.failure!] = (byKind[l.failure!] ?? 0) + 1;
    for (const [kind, n] of Object.entries(result.errors.failedSamples.byKind)) expect(byKind[kind] ?? 0).toBe(n);
    if (first === 0) expect(Object.keys(byKind).sort()).toEqual(['connection', 'http_status']);
    const ok = lines.filter((l) => l.outcome === 'ok');
    for (const l of lines) {
      expect(l.series).toBe('performance');
      expect(l.node).toBe(stub.url);
      expect(l.qsl_index).toBeGreaterThanOrEqual(0);
      expect(l.qsl_index).toBeLessThan(8);
      expect(l.sent_ns).toBeGreaterThanOrEqual(0);
      expect(l.last_byte_ns).toBeGreaterThanOrEqual(l.sent_ns!);
    }
    for (const l of failed) expect(l.input_tokens).toBeNull();
    for (const l of ok) {
      // The stub's usage.prompt_tokens: the prompt's words.
      expect(Number.isInteger(l.input_tokens) && l.input_tokens! > 0, String(l.input_tokens)).toBe(true);
      expect(l.failure).toBeNull();
      expect(l.output_tokens).toBe(MAX_TOKENS);
      expect(l.first_token_ns).toBeGreaterThanOrEqual(l.sent_ns!);
      expect(l.last_byte_ns).toBeGreaterThanOrEqual(l.first_token_ns!);
    }
    for (const l of failed) expect(l.output_tokens).toBeNull();
    // Every streamed success brought MAX_TOKENS output events: MAX_TOKENS - 1 gaps each; the reset one
    // brought its first token only (none), the 500 no event at all.
    const itl = report!.distributions?.['inter-token-latency'];
    expect(itl?.count).toBe(ok.length * (MAX_TOKENS - 1));
    expect(itl!.histogram.counts.reduce((a, b) => a + b, 0) + itl!.histogram.above + (itl!.histogram.zeros ?? 0)).toBe(itl!.count);
    expect(report!.lines.join('\n')).toContain(`Request log : ${path}: ${lines.length} lines`);
    expect(report!.lines.join('\n')).toMatch(/Inter-token latency \(ms, between output events of a response, stamped per read\) : p50 /);
  });

  it.runIf(nativeHttp)('native, whole responses: failures reach the log too (with no first token), as they fail their samples', async () => {
    const path = join(dir, 'native-whole.jsonl');
    const stub500 = await startOpenAiStub({ port: 0, ttftMs: 1, tpotMs: 1, faults: { 2: 'http-500', 4: 'http-500' } });
    const sut = await createOpenAiSut({ urls: [stub500.url], model: 'loadgen-stub', dataset, stream: false, transport: 'native', requestLog: path });
    let result: TestResult;
    try {
      result = await startTest(sut, sut.qsl, SERVER, { outdir: tempDir() });
    } finally {
      await sut.close();
      await stub500.close();
    }
    const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
    expect(lines).toHaveLength(result.counts.issuedSamples);
    const failed = lines.filter((l) => l.outcome === 'failed');
    expect(failed.map((l) => l.failure)).toEqual(['http_status', 'http_status']);
    expect(result.errors.failedSamples.byKind.http_status).toBe(2);
    // The failure's detail line still names the node, as the native client wrote it.
    expect(readFileSync(result.files.detail!, 'utf8')).toContain(`Sample failed (http_status): node ${stub500.url}: HTTP 500`);
    for (const l of lines) {
      expect(l.first_token_ns).toBeNull();
      expect(l.sent_ns).toBeGreaterThanOrEqual(0);
      expect(l.last_byte_ns).toBeGreaterThanOrEqual(l.sent_ns!);
    }
  });

  it('input lengths a protocol gives are counted per successful response (both transports)', async () => {
    const server = await startTestServer(nodeHandler('n1', (_req, res, body) => res.end(body)));
    try {
      for (const transport of nativeHttp ? (['undici', 'native'] as const) : (['undici'] as const)) {
        const protocol = testProtocol(16);
        const reader = protocol.reader.bind(protocol);
        // sample-i answers with input length i (0 included: a prompt of no tokens).
        protocol.reader = (index, wantData) => {
          const r = reader(index, wantData);
          return { onData: (c) => r.onData(c), onEnd: () => ({ ...(r.onEnd() as object), inputTokens: index }) as never };
        };
        const sut = await createNetworkSut(protocol, { urls: [server.url], transport });
        try {
          await startTest(sut, sut.qsl, { scenario: 'Offline', minDurationMs: 0, minQueryCount: 160 }, { outdir: tempDir() });
          const report = (sut as unknown as { report(): SutReport }).report();
          const input = report.distributions?.['input-tokens'];
          expect(input?.count).toBe(160);
          expect(input?.min).toBe(0);
          expect(input?.max).toBe(15);
          expect(input?.mean).toBeCloseTo(7.5, 10);
          // A short linear range: its first bin holds the zeros.
          expect(input!.histogram.scale).toBe('linear');
          expect([input!.histogram.edges[0], input!.histogram.edges[1], input!.histogram.counts[0]]).toEqual([0, 1, 10]);
          expect(input!.histogram.counts.reduce((a, b) => a + b, 0) + input!.histogram.above).toBe(160);
          expect(report.lines.join('\n')).toContain('Input tokens (per successful response) : p50 7, p99 15, max 15, mean 7.5; known for 160 of 160 responses');
        } finally {
          await sut.close();
        }
      }
    } finally {
      await server.close();
    }
  });
});

describe('a protocol\'s input length is checked as its token counts are', () => {
  it('an inputTokens that is no token count fails its sample as malformed_response, naming it', async () => {
    const server = await startTestServer(nodeHandler('n1', (_req, res, body) => res.end(body)));
    try {
      const protocol = testProtocol(4);
      const reader = protocol.reader.bind(protocol);
      protocol.reader = (index, wantData) => {
        const r = reader(index, wantData);
        return { onData: (c) => r.onData(c), onEnd: () => ({ ...(r.onEnd() as object), inputTokens: index === 2 ? -1 : 1.5 }) as never };
      };
      const sut = await createNetworkSut(protocol, { urls: [server.url], transport: 'undici' });
      try {
        const result = await startTest(sut, sut.qsl, { scenario: 'Offline', minDurationMs: 0, minQueryCount: 8 }, { outdir: tempDir() });
        expect(result.errors.failedSamples.byKind.malformed_response).toBe(8);
        const detail = readFileSync(result.files.detail!, 'utf8');
        expect(detail).toContain('the test reader: inputTokens -1 is not a token count (an integer in 0..2147483647)');
        expect(detail).toContain('the test reader: inputTokens 1.5 is not a token count');
      } finally {
        await sut.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe('inter-token gaps at read granularity (traceOutputEvents)', () => {
  it('the first read brings no gap, later reads one per new event: the first from the last event\'s read, the rest 0', () => {
    setActiveSeries(1, { sampleCount: 1, anySampled: false, allSampled: false, accuracyLogSampled: new Uint8Array(0), performance: true });
    const buffer = createStreamStatsBuffer(1, false);
    const recorder = new StreamStatsRecorder(streamSlice(buffer, 0));
    let events = 0;
    const reader = { onData: () => undefined, onEnd: () => ({ ok: true }), outputEvents: () => events } as unknown as ResponseReader;
    const trace = { events: 0, lastEventNs: 0 };
    events = 2;  // two events in the first read: one gap of 0
    traceOutputEvents(trace, reader, 1_000_000, recorder);
    traceOutputEvents(trace, reader, 2_000_000, recorder);  // nothing new
    events = 3;  // 4 ms after the read that brought event 2
    traceOutputEvents(trace, reader, 5_000_000, recorder);
    events = 6;  // 10 ms later, three events in one read: 10 ms, 0, 0
    traceOutputEvents(trace, reader, 15_000_000, recorder);
    const report = streamReport([buffer], true)!;
    const itl = report.distributions['inter-token-latency']!;
    expect(itl.count).toBe(5);
    expect(itl.histogram.zeros ?? itl.histogram.counts[0]).toBe(3);
    expect(itl.min).toBe(0);
    expect(itl.max).toBe(10_000_000);
    expect(itl.mean).toBe(14_000_000 / 5);
    expect(report.lines[0]).toContain('5 gaps, 3 of them 0 (events in one read)');
    // Not in a performance series: nothing recorded.
    setActiveSeries(0, new Uint8Array(0));
    const other = createStreamStatsBuffer(1, false);
    traceOutputEvents({ events: 0, lastEventNs: 0 }, reader, 1, new StreamStatsRecorder(streamSlice(other, 0)));
    expect(streamReport([other], true)).toBeUndefined();
  });

  it('percentiles and bins within 1 % of 10^5 known gaps; counts, min, max and mean exact; bins sum to the count', () => {
    setActiveSeries(1, { sampleCount: 1, anySampled: false, allSampled: false, accuracyLogSampled: new Uint8Array(0), performance: true });
    const buffer = createStreamStatsBuffer(2, false);
    const values: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const v = Math.round(1e6 * Math.exp((i % 1000) / 200));  // 1 ms .. ~148 ms, log-uniform
      values.push(v);
      new StreamStatsRecorder(streamSlice(buffer, i % 2)).gaps(v, 0);
    }
    values.sort((a, b) => a - b);
    const itl = streamReport([buffer], true)!.distributions['inter-token-latency']!;
    expect(itl.count).toBe(values.length);
    expect(itl.min).toBe(values[0]);
    expect(itl.max).toBe(values[values.length - 1]);
    expect(itl.mean).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 6);
    itl.p.forEach((p, i) => {
      const exact = values[Math.max(0, Math.ceil(p * values.length) - 1)]!;
      expect(Math.abs(itl.values[i]! - exact) / exact).toBeLessThanOrEqual(0.01);
    });
    expect(itl.histogram.counts.reduce((a, b) => a + b, 0) + itl.histogram.above).toBe(values.length);
    // Each bin's count is exact for its edges.
    const h = itl.histogram;
    h.counts.forEach((n, b) => expect(n).toBe(values.filter((v) => v >= h.edges[b]! && v < h.edges[b + 1]!).length));
    setActiveSeries(0, new Uint8Array(0));
  });
});

describe('request log: refused combinations and write failures', () => {
  it('readEveryResponse false, dispatch worker and a path that cannot be written are bad input before any run', async () => {
    const server = await startTestServer(nodeHandler('n1'));
    try {
      await expect(createNetworkSut(testProtocol(4), { urls: [server.url], readEveryResponse: false, requestLog: join(dir, 'x.jsonl') }))
        .rejects.toThrow(/readEveryResponse false cannot be combined with requestLog/);
      await expect(createNetworkSut(testProtocol(4), { urls: [server.url], requestLog: join(dataset, 'x.jsonl') }))
        .rejects.toBeInstanceOf(SettingsError);
      const sut = await createNetworkSut(testProtocol(4), { urls: [server.url], requestLog: join(dir, 'w.jsonl') });
      try {
        await expect(startTest(sut, sut.qsl, { scenario: 'Offline', dispatch: 'worker', dispatchWorkers: 1 }, { outdir: tempDir() }))
          .rejects.toThrow(/requestLog cannot be used with dispatch 'worker'/);
      } finally {
        await sut.close();
      }
    } finally {
      await server.close();
    }
  });

  it('the CLI refuses --request-log with --no-read-every-response, dispatch=worker or a SUT that is not a network one (exit 2)', () => {
    const cli = join(repoRoot, 'dist', 'cli.js');
    const run = (args: string[]) => spawnSync(process.execPath, [cli, 'run', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    const net = ['--sut', 'openai', '--url', 'http://127.0.0.1:9', '--model', 'm', '--dataset', dataset, '--request-log', join(dir, 'c.jsonl')];
    const a = run([...net, '--no-read-every-response']);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--request-log cannot be combined with --no-read-every-response/);
    const b = run([...net, '--set', 'dispatch=worker']);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/--request-log cannot be used with --set dispatch=worker/);
    const c = run(['--sut', 'null', '--request-log', join(dir, 'c.jsonl')]);
    expect(c.status).toBe(2);
    expect(c.stderr).toMatch(/--request-log applies only to a network SUT/);
  });

  it('a disk that fails the writes: the lines are counted as not written, and the report says why', async () => {
    const log = new RequestLog('/dev/full', ['http://n'], (t) => t);
    setActiveSeries(0, new Uint8Array(0));
    for (let i = 0; i < 2000; i++) log.record(i, i, 0, 1, 0, 2, 1, 2, undefined);
    await new Promise((r) => setTimeout(r, 50));
    await log.close();
    expect(log.written).toBe(0);
    expect(log.dropped).toBe(2000);
    expect(log.summary()).toMatch(/Request log : \/dev\/full: 0 lines; 2000 lines NOT written \(a write failed: .*ENOSPC/);
  });
});
