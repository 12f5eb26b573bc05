import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { DatasetError, NetworkSetupError } from '../lib/errors.js';
import { createOpenAiProtocol, createOpenAiSut } from '../lib/net/openai.js';
import { loadNative } from '../lib/native/index.js';
import { createNetworkSut } from '../lib/net/transport.js';
import type { OpenAiSutOptions } from '../lib/net/types.js';
import { openAiStubTokens, startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { readText, tempDir } from './helpers.js';

const MS = 1_000_000;
const TTFT_MS = 40;
const TPOT_MS = 10;
const TOKENS = 6;

const dir = tempDir('loadgen-openai-sut-');
const prompts = ['the quick brown fox', 'jumps over', 'the lazy dog', 'héllo wörld ✓'];
const datasetFile = join(dir, 'prompts.jsonl');
writeFileSync(datasetFile, prompts.map((p) => JSON.stringify({ prompt: p, max_tokens: TOKENS })).join('\n') + '\n');

const stubs: OpenAiStub[] = [];
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});
async function stub(options: Partial<Parameters<typeof startOpenAiStub>[0]> = {}): Promise<OpenAiStub> {
  const s = await startOpenAiStub({ port: 0, ttftMs: TTFT_MS, tpotMs: TPOT_MS, ...options });
  stubs.push(s);
  return s;
}

// Each suite runs on both transports where the native client exists (Linux).
const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);
let transport: 'undici' | 'native' = 'undici';

function options(s: OpenAiStub, extra: Partial<OpenAiSutOptions> = {}): OpenAiSutOptions {
  return { urls: [s.url], model: s.model, dataset: datasetFile, transport, ...extra };
}

const singleStream = { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 100 * MS, minDurationMs: 0, minQueryCount: 24 } as const;

// Every file under `root`, recursively.
function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

for (const using of transports) describe(`createOpenAiSut against the stub streamer (${using})`, () => {
  let s: OpenAiStub;
  beforeAll(async () => {
    transport = using;
    s = await stub({ recordTimes: true });
  });

  it('defaults to token latencies; TTFT and TPOT follow the stub schedule', async () => {
    const sut = await createOpenAiSut(options(s));
    try {
      expect((sut as { defaultSettings?: unknown }).defaultSettings).toEqual({ useTokenLatencies: true });
      expect(sut.name).toContain('Network SUT');
      expect(sut.name).toContain('loadgen-stub (loadgen-stub)');
      expect(sut.stats().transport).toBe(using);
      const result = await startTest(sut, sut.qsl, { ...singleStream, useTokenLatencies: true }, { outdir: tempDir() });
      expect(result.errors.count).toBe(0);
      expect(result.counts.completedSamples).toBe(24);
      const t = result.tokens!;
      expect(t.tokenCount).toBe(24 * TOKENS);
      // TTFT is measured from the scheduled time, so never below the stub's delay;
      // its median stays within a few ms of it unless this shared machine stalls
      // (the benchmarks measure the error properly against the stub's send times).
      expect(t.ttftNs!.min).toBeGreaterThanOrEqual(TTFT_MS * MS);
      expect(t.ttftNs!.percentiles[50]).toBeLessThan((TTFT_MS + 15) * MS);
      // Token k is due at receive + TTFT + (k-1)·TPOT: the gaps do not accumulate lateness.
      expect(t.tpotNs!.percentiles[50]).toBeGreaterThan((TPOT_MS - 3) * MS);
      expect(t.tpotNs!.percentiles[50]).toBeLessThan((TPOT_MS + 4) * MS);
      expect(t.errors.missingFirstToken + t.errors.zeroTokens + t.errors.oneToken).toBe(0);
    } finally {
      await sut.close();
    }
  });

  it('accuracy mode logs the generated text as UTF-8 bytes and the first token', async () => {
    const sut = await createOpenAiSut(options(s));
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Server', mode: 'AccuracyOnly', serverTargetQps: 50, useTokenLatencies: true }, { outdir });
      expect(result.accuracyLogRecords).toBe(prompts.length);
      const records = JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as { qsl_idx: number; data: string; token_data: string; token_count: number }[];
      expect(records).toHaveLength(prompts.length);
      for (const r of records) {
        const tokens = openAiStubTokens(prompts[r.qsl_idx]!, TOKENS);
        expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe(tokens.join(''));
        expect(Buffer.from(r.token_data, 'hex').toString('utf8')).toBe(tokens[0]);
        expect(r.token_count).toBe(TOKENS);
      }
    } finally {
      await sut.close();
    }
  });

  it('counts content chunks when the server sends no usage, and says which', async () => {
    for (const usage of [true, false]) {
      const server = await stub({ ttftMs: 1, tpotMs: 1, usage });
      const protocol = await createOpenAiProtocol(options(server));
      const sut = await createNetworkSut(protocol, options(server));
      try {
        const result = await startTest(sut, sut.qsl, { ...singleStream, minQueryCount: 8, useTokenLatencies: true }, { outdir: tempDir() });
        expect(result.errors.count).toBe(0);
        expect(result.tokens!.tokenCount).toBe(8 * TOKENS);
        expect(protocol.describe!()).toBe(`output tokens: usage in ${usage ? 8 : 0} of 8 responses (chunks with output otherwise)`);
      } finally {
        await sut.close();
      }
    }
  });

  // Dispatch workers send through undici whatever the transport.
  it.skipIf(using === 'native')("runs from dispatch worker threads, whose usage counts reach describe()", async () => {
    const server = await stub({ ttftMs: 1, tpotMs: 1, recordTimes: true });
    // As createOpenAiSut does: the counters in shared memory travel with the options to the workers.
    const shared = { ...options(server), tokenSourceCounts: new Int32Array(new SharedArrayBuffer(8)) };
    const protocol = await createOpenAiProtocol(shared);
    const sut = await createNetworkSut(protocol, shared);
    try {
      const result = await startTest(
        sut,
        sut.qsl,
        { scenario: 'Server', serverTargetQps: 100, minDurationMs: 300, minQueryCount: 40, useTokenLatencies: true, dispatch: 'worker', dispatchWorkers: 2 },
        { outdir: tempDir() },
      );
      expect(result.errors.count).toBe(0);
      expect(result.tokens!.tokenCount).toBe(result.counts.completedSamples * TOKENS);
      expect(server.records().length).toBe(result.counts.completedSamples);
      const n = result.counts.completedSamples;
      expect(sut.stats().nodes[0]!.completed).toBe(n);
      expect(protocol.describe!()).toBe(`output tokens: usage in ${n} of ${n} responses (chunks with output otherwise)`);
    } finally {
      await sut.close();
    }
  });

  it('--api completions streams /v1/completions', async () => {
    const server = await stub({ ttftMs: 1, tpotMs: 1, recordTimes: true });
    const sut = await createOpenAiSut(options(server, { api: 'completions' }));
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly', useTokenLatencies: true }, { outdir });
      expect(result.accuracyLogRecords).toBe(prompts.length);
      expect(server.records().every((r) => r.path === '/v1/completions' && r.stream)).toBe(true);
      const records = JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as { qsl_idx: number; data: string }[];
      for (const r of records) expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe(openAiStubTokens(prompts[r.qsl_idx]!, TOKENS).join(''));
    } finally {
      await sut.close();
    }
  });

  it('--no-stream: whole responses, no token-latency default, text still logged', async () => {
    const server = await stub({ ttftMs: 1, tpotMs: 1, recordTimes: true });
    const sut = await createOpenAiSut(options(server, { stream: false }));
    const outdir = tempDir();
    try {
      expect((sut as { defaultSettings?: unknown }).defaultSettings).toBeUndefined();
      const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', mode: 'AccuracyOnly' }, { outdir });
      expect(result.tokens).toBeUndefined();
      expect(result.errors.count).toBe(0);
      expect(server.records().every((r) => !r.stream)).toBe(true);
      expect(sut.stats().transport).toBe(using);
      const records = JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as { qsl_idx: number; data: string }[];
      for (const r of records) expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe(openAiStubTokens(prompts[r.qsl_idx]!, TOKENS).join(''));
    } finally {
      await sut.close();
    }
  });
});

describe('the API key', () => {
  const KEY = 'sk-loadgen-test-9f8e7d6c5b4a';

  for (const using of transports) it(`is sent, and never written to a log, the report or the result (${using})`, async () => {
    transport = using;
    const server = await stub({ ttftMs: 1, tpotMs: 1, apiKey: KEY });
    const sut = await createOpenAiSut(options(server, { apiKey: KEY }));
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Server', mode: 'AccuracyOnly', serverTargetQps: 50, useTokenLatencies: true }, { outdir });
      expect(result.accuracyLogRecords).toBe(prompts.length);
      expect(JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(KEY.slice(3));
      expect(JSON.stringify(sut.stats())).not.toContain(KEY.slice(3));
      const files = filesUnder(outdir);
      expect(files.length).toBeGreaterThan(2);
      for (const file of files) expect(readFileSync(file, 'latin1')).not.toContain(KEY.slice(3));
      expect(sut.stats().transport).toBe(using);
    } finally {
      await sut.close();
    }
  });

  it('a refused or missing key is a NetworkSetupError that does not show it', async () => {
    transport = 'undici';
    const server = await stub({ ttftMs: 1, tpotMs: 1, apiKey: KEY });
    const wrong = (await createOpenAiSut(options(server, { apiKey: 'sk-wrong-key-123456' })).catch((e: unknown) => e)) as Error;
    expect(wrong).toBeInstanceOf(NetworkSetupError);
    expect(wrong.message).toMatch(/refused the API key \(HTTP 401\)/);
    expect(wrong.message).not.toContain('wrong-key');
    await expect(createOpenAiSut(options(server))).rejects.toThrow(/needs an API key \(HTTP 401\)/);
    expect(server.requestCount).toBe(0);
  });
});

describe('before the run', () => {
  it('a model the node does not serve is a NetworkSetupError; a bad data set line is refused before the node is asked', async () => {
    const server = await stub({ ttftMs: 1, tpotMs: 1 });
    await expect(createOpenAiSut(options(server, { model: 'gpt-9' }))).rejects.toThrow(/does not serve the model 'gpt-9'; it lists 'loadgen-stub'/);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"prompt": "a"}\n{"prompt": "b", "max_tokens": "many"}\n');
    const error = (await createOpenAiSut(options(server, { dataset: bad })).catch((e: unknown) => e)) as DatasetError;
    expect(error).toBeInstanceOf(DatasetError);
    expect(error.message).toBe(`dataset ${bad}:2: max_tokens: must be an integer in 1..2147483647, got "many"`);
    expect(server.requestCount).toBe(0);
  });
});
