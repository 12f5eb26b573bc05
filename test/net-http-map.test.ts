import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createHttpSut, InterfaceError, startTest, SutError } from '../lib/index.js';
import { PreparedRequests } from '../lib/net/http-map.js';
import { nodeHandler, startTestServer, type TestServer } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

const mapModule = join(repoRoot, 'test', 'fixtures', 'http-map.mjs');
let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  a = await startTestServer(nodeHandler('node-a'));
  b = await startTestServer(nodeHandler('node-b'));
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

function accuracyRecords(outdir: string): { qsl_idx: number; data: string }[] {
  return JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
}

describe('createHttpSut (--sut http --request map.mjs)', () => {
  it('maps samples to requests and responses to the accuracy log data', async () => {
    const sut = await createHttpSut({ urls: [a.url, b.url], request: mapModule });
    try {
      expect(sut.name).toBe('Network SUT (http): node-a, node-b');
      expect(sut.qsl.totalSampleCount).toBe(32);
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.valid).toBe(true);
      const records = accuracyRecords(outdir);
      expect(records).toHaveLength(32);
      for (const r of records) expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe(JSON.stringify({ x: r.qsl_idx }));
      const stats = sut.stats();
      expect(stats.nodes[0]!.completed + stats.nodes[1]!.completed).toBe(32);
      // The per-node block after the summary, and result.sutReport with the table and stats().
      expect(result.sutReport?.title).toBe('Network SUT (http, least-outstanding)');
      expect(result.sutReport?.table?.rows.map((r) => r[0])).toEqual(['node-a', 'node-b']);
      expect(result.sutReport?.data).toEqual(stats);
      expect(result.summaryText).toMatch(/Node node-a \(http:\/\/127\.0\.0\.1:\d+\)\n  Requests : \d+, completed : \d+, failed : 0\n  Latency \(ms, request sent to last byte read\) : p50 /);
      expect(stats.nodes[0]!.completed).toBeGreaterThan(0);
      expect(stats.nodes[1]!.completed).toBeGreaterThan(0);
    } finally {
      await sut.close();
    }
  });

  it('refuses a module without request() or totalSampleCount, naming what is missing', async () => {
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'no-request.mjs'), 'export const totalSampleCount = 3;\n');
    writeFileSync(join(dir, 'no-total.mjs'), 'export function request(i) { return { path: "/" }; }\n');
    await expect(createHttpSut({ urls: [a.url], request: join(dir, 'no-request.mjs') })).rejects.toThrow(/export a function request\(index\)/);
    await expect(createHttpSut({ urls: [a.url], request: join(dir, 'no-total.mjs') })).rejects.toThrow(/totalSampleCount/);
    await expect(createHttpSut({ urls: [a.url], request: join(dir, 'missing.mjs') })).rejects.toBeInstanceOf(InterfaceError);
  });

  it('a response() that throws or gives bad data during the run fails the sample as malformed_response', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'bad.mjs'),
      [
        'export const totalSampleCount = 10;',
        "export function request(i) { return { path: '/infer', body: String(i) }; }",
        // Sample 0 (tried before the run) is fine; the others fail in turn.
        'export function response({ index }) {',
        "  if (index === 0) return { data: 'fine' };",
        "  if (index % 3 === 1) throw new Error('no good');",
        '  return index % 3 === 2 ? { data: 42 } : { nTokens: index === 3 ? NaN : 1e300 };',
        '}',
        "export async function name(node) { return Buffer.from((await node.request('GET', '/name')).body).toString(); }",
      ].join('\n'),
    );
    const sut = await createHttpSut({ urls: [a.url], request: join(dir, 'bad.mjs') });
    try {
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.valid).toBe(false);
      expect(result.errors.failedSamples?.byKind.malformed_response).toBe(9);
      const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
      expect(detail).toContain('response() threw: no good');
      expect(detail).toContain('response() must return data as a string or a Uint8Array, got number 42');
      expect(detail).toContain('response() returned nTokens NaN is not a token count (an integer in 0..2147483647)');
      expect(detail).toContain('response() returned nTokens 1e+300 is not a token count');
    } finally {
      await sut.close();
    }
  });

  it('a request() that throws fails the run (SutError naming the sample), no hang', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'throws.mjs'),
      [
        'export const totalSampleCount = 8;',
        "export function request(i) { if (i === 5) throw new Error('no sample 5'); return { path: '/infer', body: String(i) }; }",
        "export async function name(node) { return Buffer.from((await node.request('GET', '/name')).body).toString(); }",
      ].join('\n'),
    );
    const sut = await createHttpSut({ urls: [a.url], request: join(dir, 'throws.mjs') });
    try {
      const error = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SutError);
      expect(String((error as SutError).cause)).toContain('request(5) threw: no sample 5');
    } finally {
      await sut.close();
    }
  });

  it("runs from dispatch worker threads with their own pools (dispatch: 'worker')", async () => {
    const sut = await createHttpSut({ urls: [a.url, b.url], request: mapModule, balance: 'round-robin' });
    try {
      const outdir = tempDir();
      const before = (a.hits.get('/infer') ?? 0) + (b.hits.get('/infer') ?? 0);
      const result = await startTest(
        sut,
        sut.qsl,
        { scenario: 'Server', serverTargetQps: 400, minDurationMs: 300, minQueryCount: 100, dispatch: 'worker', dispatchWorkers: 2 },
        { outdir },
      );
      expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
      expect(result.errors.count).toBe(0);
      const served = (a.hits.get('/infer') ?? 0) + (b.hits.get('/infer') ?? 0) - before;
      expect(served).toBe(result.counts.issuedSamples);
      // The workers' statistics reach the main thread's stats().
      const stats = sut.stats();
      expect(stats.nodes.reduce((n, s) => n + s.completed, 0)).toBe(result.counts.issuedSamples);
      // Sent by the workers' undici pools, whatever the main thread's transport.
      expect(stats.transport).toBe('undici');
    } finally {
      await sut.close();
    }
  });
});

describe("docs/network-suts.md's map.mjs example", () => {
  it('runs as shown against a /predict API', async () => {
    const readme = readFileSync(join(repoRoot, 'docs', 'network-suts.md'), 'utf8');
    const code = /```js\n(\/\/ map\.mjs[\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    const dir = tempDir();
    writeFileSync(join(dir, 'map.mjs'), code!);
    const api = await startTestServer((req, res, body) => {
      if (req.url === '/health') res.end('ok');
      else res.end(JSON.stringify({ output: (JSON.parse(body) as { input: number[] }).input.join('+') }));
    });
    const sut = await createHttpSut({ urls: [api.url], request: join(dir, 'map.mjs') });
    try {
      expect(sut.name).toBe('Network SUT (http): predictor (200)');
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.valid).toBe(true);
      const records = accuracyRecords(outdir);
      expect(records).toHaveLength(100);
      for (const r of records) expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe(`${r.qsl_idx}+${r.qsl_idx + 1}`);
    } finally {
      await sut.close();
      await api.close();
    }
  });
});

describe('large loads', () => {
  it('the prepared requests hold more than the 2^24 entries a Map can, each read back as it was set', () => {
    const table = new PreparedRequests();
    const headers = { 'content-type': 'application/json' };
    const n = 2 ** 24 + 16;
    // One body for all: the table's own cost only (one slot each, ~130 MB).
    const body = '{"x":1}';
    for (let i = 0; i < n; i++) table.set(i, { method: 'POST', path: '/infer', headers, body });
    expect(table.size).toBe(n);
    expect(table.get(n - 1)).toEqual({ method: 'POST', path: '/infer', headers, body });
    expect(table.get(n - 1)!.headers).toBe(headers);
    expect(table.get(n)).toBeUndefined();
    for (let i = 0; i < n; i++) table.delete(i);
    expect(table.size).toBe(0);
    expect(table.get(0)).toBeUndefined();
  }, 30_000);

  it('requests of other shapes, without a body or with bytes, and the top of the index range come back unchanged', () => {
    const table = new PreparedRequests();
    const json = { 'content-type': 'application/json' };
    const bytes = new Uint8Array([1, 2, 3]);
    const requests = [
      { method: 'POST', path: '/a', headers: json, body: 'one' },
      { method: 'POST', path: '/a', headers: json, body: bytes },
      { method: 'GET', path: '/a', headers: json },
      { method: 'POST', path: '/b', headers: json, body: 'other path' },
      { method: 'POST', path: '/a', headers: { 'x-other': '1' }, body: 'other headers' },
      { method: 'POST', path: '/a', headers: json, body: '' },
    ] as const;
    const base = 2 ** 32 - requests.length;
    requests.forEach((r, i) => table.set(base + i, r));
    requests.forEach((r, i) => expect(table.get(base + i)).toEqual(r));
    table.set(base, requests[3]);  // replaced, not added
    expect(table.size).toBe(requests.length);
    expect(table.get(base)).toEqual(requests[3]);
    table.delete(base + 1);
    table.delete(base + 1);
    expect(table.size).toBe(requests.length - 1);
    expect(table.get(base + 1)).toBeUndefined();
  });

  it('a load whose requests do not fit in the JS heap fails naming the heap, its logs written; the process does not crash', async () => {
    const dir = tempDir();
    const map = join(dir, 'map.mjs');
    writeFileSync(map, 'export const totalSampleCount = 3000000;\nexport function request(i) { return { method: "POST", path: "/infer", body: `{"x":${i}}` }; }\n');
    const outdir = join(dir, 'out');
    // A 64 MB heap: filled after a few hundred thousand requests.
    const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'run', '--sut', 'http', '--url', a.url, '--request', map,
      '--transport', 'undici', '--scenario', 'Offline', '--set', 'min_duration_ms=0', '--no-progress', '--outdir', outdir], {
      env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=64' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code, stderr).toBe(3);  // the run failed (SutError), not an abort (134)
    expect(stderr).toMatch(/qsl\.loadSamplesToRam failed: --request .*map\.mjs: the loaded requests do not fit in the JavaScript heap: \d+ MB of its \d+ MB are in use with \d+ requests built/);
    expect(stderr).toContain('--max-old-space-size');
    expect(readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8')).toContain('1 ERROR encountered. See detailed log.');
    expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toContain('do not fit in the JavaScript heap');
  }, 60_000);
});
