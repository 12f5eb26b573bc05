/**
 * Mapping modules (`--sut http --request`) that misbehave: async and sync
 * functions behave alike (a throw or rejection fails that sample, the run
 * goes on, every log is written), every promise is bounded, and what a
 * module does wrong on the first sample is bad input before the run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { createHttpSut, InterfaceError, NetworkSetupError, SettingsError, startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { createNetworkSut } from '../lib/net/transport.js';
import type { ResponseOutcome } from '../lib/net/protocol.js';
import { nodeHandler, testProtocol, testServers } from './net-helpers.js';
import { tempDir } from './helpers.js';

const server = testServers();
const dir = tempDir('loadgen-http-map-');
let modules = 0;

/** Writes a mapping module: totalSampleCount, request() posting the index to /infer, name() from GET /name, and `extra` lines. */
function mapModule(extra: string[], total = 10): string {
  const file = join(dir, `map-${modules++}.mjs`);
  const lines = [
    `export const totalSampleCount = ${total};`,
    "export async function name(node) { return Buffer.from((await node.request('GET', '/name')).body).toString(); }",
  ];
  if (!extra.some((l) => l.includes('function request'))) lines.push("export function request(i) { return { path: '/infer', body: String(i) }; }");
  writeFileSync(file, [...lines, ...extra].join('\n'));
  return file;
}

const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);
const accuracy = { scenario: 'Offline', mode: 'AccuracyOnly' } as const;

function accuracyData(outdir: string): Map<number, string> {
  const records = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
  return new Map(records.map((r) => [r.qsl_idx, Buffer.from(r.data, 'hex').toString('utf8')]));
}

function detailLines(outdir: string): string[] {
  const text = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
  // Every line is whole JSON: nothing was cut.
  for (const line of text.split('\n').filter((l) => l !== '')) expect(() => JSON.parse(line.slice(line.indexOf('{'))) as unknown, line).not.toThrow();
  return text.split('\n');
}

describe('an async response()', () => {
  for (const transport of transports) {
    it(`resolving: its data is used; rejecting: that sample fails, the run goes on, every log is written (${transport})`, async () => {
      const node = await server(nodeHandler('n'));
      const request = mapModule([
        'export async function response({ index, body }) {',
        '  await new Promise((r) => setTimeout(r, 1));',
        "  if (index % 4 === 3) throw new Error(`no sample ${index}`);",
        "  return { data: `mapped ${index}: ${Buffer.from(body).toString()}` };",
        '}',
      ]);
      const sut = await createHttpSut({ urls: [node.url], request, transport });
      const outdir = tempDir();
      try {
        expect(sut.stats().transport).toBe(transport);
        const result = await startTest(sut, sut.qsl, accuracy, { outdir });
        expect(result.counts.completedSamples).toBe(10);
        expect(result.errors.failedSamples?.byKind.malformed_response).toBe(2);
        expect(result.valid).toBe(false);
        const data = accuracyData(outdir);
        expect(data.get(0)).toBe('mapped 0: echo:0');
        expect(data.get(9)).toBe('mapped 9: echo:9');
        expect(data.has(3)).toBe(false);
        const detail = detailLines(outdir).join('\n');
        expect(detail).toContain('response() rejected: no sample 3');
        expect(detail).toContain('response() rejected: no sample 7');
      } finally {
        await sut.close();
      }
    });

    it(`that never settles fails its sample as timeout once the request timeout passes (${transport})`, async () => {
      const node = await server(nodeHandler('n'));
      const request = mapModule([
        'export function response({ index }) {',
        "  return index < 8 ? { data: 'ok' } : new Promise(() => {});",
        '}',
      ]);
      const sut = await createHttpSut({ urls: [node.url], request, transport, requestTimeoutMs: 300 });
      const outdir = tempDir();
      try {
        const started = Date.now();
        const result = await startTest(sut, sut.qsl, accuracy, { outdir });
        expect(Date.now() - started).toBeLessThan(8000);
        expect(result.counts.completedSamples).toBe(10);
        expect(result.errors.failedSamples?.byKind.timeout).toBe(2);
        expect(result.errors.failedSamples?.total).toBe(2);
        // The JS side knows response() hung (native: the response was whole); undici's request timeout may come first.
        const detail = detailLines(outdir).join('\n');
        expect(detail).toMatch(transport === 'native' ? /response\(\) did not settle within 300 ms/ : /Sample failed \(timeout\)/);
      } finally {
        await sut.close();
      }
    });
  }

  it('a token stream whose tokens() found none, while token latencies are measured: no_first_token', async () => {
    const node = await server(nodeHandler('n'));
    const request = mapModule(['export function tokens(chunk, index) { return index === 0 ? 1 : 0; }']);
    const sut = await createHttpSut({ urls: [node.url], request });
    try {
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 5_000_000, minDurationMs: 0, minQueryCount: 12 }, { outdir });
      const failed = result.errors.failedSamples!;
      expect(failed.byKind.no_first_token).toBeGreaterThan(0);
      expect(failed.total).toBe(failed.byKind.no_first_token);
      expect(detailLines(outdir).join('\n')).toContain('the response carried no output tokens (tokens() returned 0 for each of its 1 chunk)');
    } finally {
      await sut.close();
    }
  });

  it('tokens() or nTokens that are not token counts are malformed_response, never a number into the core', async () => {
    const node = await server(nodeHandler('n'));
    const request = mapModule(['export function tokens(chunk, index) { return index === 0 ? 1 : index % 2 ? 1e300 : 1.5; }']);
    const sut = await createHttpSut({ urls: [node.url], request });
    try {
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, accuracy, { outdir });
      expect(result.errors.failedSamples?.byKind.malformed_response).toBe(9);
      const detail = detailLines(outdir).join('\n');
      expect(detail).toContain('tokens() returned 1e+300 is not a token count');
      expect(detail).toContain('tokens() returned 1.5 is not a token count');
    } finally {
      await sut.close();
    }
  });
});

describe('bad input on the first sample: refused before the run, naming the function and value', () => {
  const refusedRequests: [string, string, RegExp][] = [
    ['garbage', 'return 42;', /request\(0\) must return an object \{ method\?, path, headers\?, body\? \}, got number 42/],
    ['a promise', "return Promise.reject(new Error('later'));", /request\(0\) returned a promise: request\(index\) must return the request itself/],
    ['a throw', "throw new Error('no data');", /request\(0\) threw: no data/],
    ['a bad header name', "return { path: '/infer', headers: { 'bad name:': 'x' } };", /request\(0\)\.headers: 'bad name:' is not a header name/],
    ['an object header value', "return { path: '/infer', headers: { 'x-a': { b: 1 } } };", /request\(0\)\.headers\['x-a'\] must be a string, got an object/],
    ['a header value with CRLF', "return { path: '/infer', headers: { 'x-a': 'a\\r\\nx-b: c' } };", /request\(0\)\.headers\['x-a'\] holds a character a header value cannot carry: a line break/],
    ['a framing header', "return { path: '/infer', headers: { 'Content-Length': '5' } };", /Content-Length is the transport's to write/],
    ['a relative path', "return { path: 'infer' };", /request\(0\)\.path must be a string starting with '\/'.*got 'infer'/],
    ['a path with a space', "return { path: '/in fer' };", /request\(0\)\.path must be a string starting with '\/' of visible ASCII/],
    ['a method', "return { path: '/infer', method: 'PUT' };", /request\(0\)\.method must be 'GET' or 'POST', got 'PUT'/],
    ['a function body', "return { path: '/infer', body: () => 1 };", /request\(0\)\.body must be a string, bytes or a value JSON can write, got function/],
    ['a bigint body', "return { path: '/infer', body: { n: 1n } };", /request\(0\)\.body cannot be sent as JSON: .*BigInt/],
  ];
  for (const [what, code, message] of refusedRequests) {
    it(`request() returning ${what}`, async () => {
      const node = await server(nodeHandler('n'));
      const request = mapModule([`export function request(index) { ${code} }`]);
      const error = await createHttpSut({ urls: [node.url], request }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InterfaceError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(request);
      expect(node.hits.get('/infer')).toBeUndefined();
    });
  }

  const refusedResponses: [string, string[], RegExp][] = [
    ['response() that throws', ["export function response() { throw new Error('cannot parse'); }"], /sample 0 \(answered HTTP 200 by http:\/\/127\.0\.0\.1:\d+\): response\(\) threw: cannot parse/],
    ['async response() that rejects', ["export async function response() { throw new Error('nope'); }"], /response\(\) rejected: nope/],
    ['response() with nTokens NaN', ['export function response() { return { nTokens: NaN }; }'], /response\(\) returned nTokens NaN is not a token count/],
    ['response() with nTokens 1e300', ['export function response() { return { nTokens: 1e300 }; }'], /nTokens 1e\+300 is not a token count/],
    ['response() with data of a wrong type', ['export function response() { return { data: { text: 1 } }; }'], /data as a string or a Uint8Array, got an object/],
    ['response() returning a number', ['export function response() { return 7; }'], /response\(\) must return \{ data\?, nTokens\? \} or nothing, got number 7/],
    ['tokens() returning NaN', ['export function tokens() { return NaN; }'], /tokens\(\) returned NaN is not a token count/],
    ['async response() that never settles', ['export function response() { return new Promise(() => {}); }'], /response\(\) did not settle within 300 ms \(the request timeout\)/],
  ];
  for (const [what, code, message] of refusedResponses) {
    it(what, async () => {
      const node = await server(nodeHandler('n'));
      const request = mapModule(code);
      const started = Date.now();
      const error = await createHttpSut({ urls: [node.url], request, requestTimeoutMs: 300 }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(error).toBeInstanceOf(InterfaceError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain('checked before the run on sample 0');
      // Sent once, to see what the functions make of a real answer.
      expect(node.hits.get('/infer')).toBe(1);
    });
  }

  it('a warm-up answered with an error is no proof: a warning, and the SUT is made', async () => {
    const node = await server(nodeHandler('n', (_req, res) => {
      res.statusCode = 503;
      res.end('busy');
    }));
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const sut = await createHttpSut({ urls: [node.url], request: mapModule(["export function response() { throw new Error('never called'); }"]) });
      await sut.close();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.join('\n')).toMatch(/response\(\)\/tokens\(\) were not tried before the run: sample 0 sent to http:\/\/127\.0\.0\.1:\d+ was answered HTTP 503; the run goes on/);
  });

  it('name() that never settles, or that gives no string, is a setup error naming it', async () => {
    const node = await server(nodeHandler('n'));
    const hanging = join(dir, 'name-hangs.mjs');
    writeFileSync(hanging, "export const totalSampleCount = 2;\nexport function request() { return { path: '/infer' }; }\nexport function name() { return new Promise(() => {}); }\n");
    const started = Date.now();
    const error = await createHttpSut({ urls: [node.url], request: hanging, probeTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toBeInstanceOf(NetworkSetupError);
    expect((error as Error).message).toMatch(/name\(\) did not settle within 300 ms \(the probe timeout\) for node http:\/\/127\.0\.0\.1:\d+/);
    const numeric = join(dir, 'name-number.mjs');
    writeFileSync(numeric, "export const totalSampleCount = 2;\nexport function request() { return { path: '/infer' }; }\nexport function name() { return 5; }\n");
    await expect(createHttpSut({ urls: [node.url], request: numeric })).rejects.toThrow(/name\(\) must return the node's name, a string \(or a promise of one\), got number 5/);
  });

  it('a module whose top-level await never settles: an error after moduleTimeoutMs', async () => {
    const node = await server(nodeHandler('n'));
    const file = join(dir, 'tla-hangs.mjs');
    writeFileSync(file, "await new Promise(() => {});\nexport const totalSampleCount = 2;\nexport function request() { return { path: '/' }; }\n");
    const error = await createHttpSut({ urls: [node.url], request: file, moduleTimeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterfaceError);
    expect((error as Error).message).toContain(`--request ${file}: the module did not finish loading within 200 ms (a top-level await that never settles?`);
    await expect(createHttpSut({ urls: [node.url], request: file, moduleTimeoutMs: -1 })).rejects.toBeInstanceOf(SettingsError);
  });
});

describe("dispatch 'worker' and the transport", () => {
  it("transport 'native' with dispatch 'worker' is bad input before the run; 'auto' says the workers' undici sent", async () => {
    const node = await server(nodeHandler('n'));
    const request = mapModule(["export function response({ body }) { return { data: body }; }"], 16);
    const settings = { scenario: 'Server', serverTargetQps: 200, minDurationMs: 200, minQueryCount: 20, dispatch: 'worker', dispatchWorkers: 1 } as const;
    if (loadNative().nativeHttpAvailable) {
      const native = await createHttpSut({ urls: [node.url], request, transport: 'native' });
      try {
        const before = node.hits.get('/infer') ?? 0;
        const error = await startTest(native, native.qsl, settings, { outdir: tempDir() }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SettingsError);
        expect((error as SettingsError).key).toBe('transport');
        expect((error as Error).message).toMatch(/transport 'native' cannot serve dispatch 'worker': dispatch workers send through their own undici pools; use transport 'auto' or 'undici'/);
        expect(node.hits.get('/infer') ?? 0).toBe(before);
      } finally {
        await native.close();
      }
    }
    const auto = await createHttpSut({ urls: [node.url], request });
    try {
      const result = await startTest(auto, auto.qsl, settings, { outdir: tempDir() });
      expect(result.errors.count).toBe(0);
      expect(auto.stats()).toMatchObject({ transport: 'undici', dispatchWorkers: true });
      expect(result.summaryText).toContain('Transport : undici (dispatch workers)');
    } finally {
      await auto.close();
    }
  });
});


describe("a protocol's outcome is checked before it reaches the core", () => {
  for (const transport of transports) {
    it(`garbage from a reader (null, NaN or 1e300 tokens, a rejection) fails the sample as malformed_response (${transport})`, async () => {
      const node = await server(nodeHandler('n'));
      const verdicts: (() => unknown)[] = [
        () => null,
        () => ({ ok: true, nTokens: Number.NaN }),
        () => ({ ok: true, nTokens: 1e300 }),
        () => ({ ok: true, data: 'text' }),
        () => ({ ok: false, kind: 'bogus', message: 'x' }),
        () => Promise.reject(new Error('async reader failed')),
        () => Promise.resolve({ ok: true, nTokens: -1 }),
        () => ({ ok: true }),
      ];
      const protocol = testProtocol(verdicts.length);
      protocol.reader = (index) => ({ onData: () => undefined, onEnd: () => verdicts[index]!() as ResponseOutcome });
      const sut = await createNetworkSut(protocol, { urls: [node.url], transport });
      const outdir = tempDir();
      try {
        const result = await startTest(sut, sut.qsl, accuracy, { outdir });
        expect(result.counts.completedSamples).toBe(verdicts.length);
        expect(result.errors.failedSamples?.byKind.malformed_response).toBe(verdicts.length - 1);
        const detail = detailLines(outdir).join('\n');
        expect(detail).toContain('the test reader gave null, not an outcome');
        expect(detail).toContain('the test reader: nTokens NaN is not a token count');
        expect(detail).toContain('the test reader: nTokens 1e+300 is not a token count');
        expect(detail).toContain('the test reader: data must be a Uint8Array, got string');
        expect(detail).toContain("the test reader's outcome rejected: async reader failed");
        expect(detail).toContain('the test reader: nTokens -1 is not a token count');
      } finally {
        await sut.close();
      }
    });
  }
});
