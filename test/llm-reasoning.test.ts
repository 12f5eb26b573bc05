/**
 * Reasoning models over `--api chat`, end to end against the stub speaking
 * Llama 3.1's vocabulary (a real tokenizer file), on both transports: a
 * reasoning-only stream (`delta.reasoning_content` chunks only, or the
 * `reasoning` field) is timed from its first reasoning chunk, its tokens are
 * counted (usage, or the reasoning text re-encoded when the server sends
 * neither usage nor ids), the accuracy log holds the reasoning's ids, and
 * `excludeReasoning` (--exclude-reasoning) leaves the reasoning out.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { startTest, type TestResult } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { createOpenAiSut } from '../lib/net/openai.js';
import type { OpenAiSutOptions } from '../lib/net/types.js';
import { openAiStubOutput, startOpenAiStub, type OpenAiStub, type OpenAiStubOptions } from '../lib/serve/openai-stub.js';
import { loadTokenizer, type Tokenizer } from '../lib/tokenizer/index.js';
import { readText, tempDir } from './helpers.js';
import { TOKENIZER_FILES } from './tokenizer/fixtures.js';

const LLAMA = TOKENIZER_FILES.llama3_1;
const PROMPTS = ['Think about the river and the bridge.', 'Consider why the rain fell on the town.', 'Weigh the maps the sailors drew.'];
const dir = tempDir('loadgen-llm-reasoning-');
const dataset = join(dir, 'prompts.jsonl');
writeFileSync(dataset, PROMPTS.map((prompt) => JSON.stringify({ prompt })).join('\n') + '\n');
const MS = 1_000_000;

let tokenizer: Tokenizer;
const stubs: OpenAiStub[] = [];
beforeAll(async () => {
  tokenizer = await loadTokenizer(LLAMA);
}, 60_000);
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});
async function stub(options: Partial<OpenAiStubOptions>): Promise<OpenAiStub> {
  const s = await startOpenAiStub({ port: 0, ttftMs: 1, tpotMs: 1, tokenizer, ...options });
  stubs.push(s);
  return s;
}
const outputOf = (i: number, maxTokens: number) => openAiStubOutput({ promptText: PROMPTS[i]!, maxTokens }, tokenizer);

const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);

/** A run of the chat SUT; its result, accuracy log (ids by qsl_idx), SUT block and request log. */
async function run(options: Partial<OpenAiSutOptions> & Pick<OpenAiSutOptions, 'urls' | 'transport'>, mode: 'AccuracyOnly' | 'PerformanceOnly') {
  const requestLog = join(tempDir(), 'requests.jsonl');
  const sut = await createOpenAiSut({ model: 'loadgen-stub', dataset, api: 'chat', tokenizer: LLAMA, requestLog, ...options });
  const outdir = tempDir();
  let result: TestResult;
  let block: string;
  try {
    result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', mode, minQueryCount: PROMPTS.length, minDurationMs: 0, useTokenLatencies: true }, { outdir });
    block = (sut as unknown as { report(): { lines: string[] } }).report().lines.join('\n');
  } finally {
    await sut.close();
  }
  expect(result.errors.count).toBe(0);
  const ids = new Map<number, number[]>();
  if (mode === 'AccuracyOnly') {
    for (const r of JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as { qsl_idx: number; data: string }[]) {
      ids.set(r.qsl_idx, Array.from(decodeTokenIds(Buffer.from(r.data, 'hex'), 'int32')));
    }
  }
  const requests = readFileSync(requestLog, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { qsl_index: number; output_tokens: number | null });
  return { result, block, ids, requests };
}

for (const transport of transports) {
  describe(`reasoning over --api chat (${transport})`, () => {
    it('a reasoning-only stream is timed from its first reasoning chunk, and its tokens are counted', async () => {
      // The first chunk 5 ms after the request, the second 300 ms later: a TTFT under 300 ms is the first reasoning chunk's.
      for (const reasoningField of ['reasoning_content', 'reasoning'] as const) {
        const server = await stub({ reasoningTokens: 'all', reasoningField, ttftMs: 5, tpotMs: 300, usage: false, tokenIds: false });
        const { result, block, requests } = await run({ urls: [server.url], transport, maxTokens: 3 }, 'PerformanceOnly');
        const ttft = result.tokens!.ttftNs!;
        expect(ttft.min).toBeGreaterThanOrEqual(5 * MS);
        expect(ttft.max, reasoningField).toBeLessThan(300 * MS);
        // Spread over the schedule (a loose bound: the first token read late shortens a TPOT).
        expect(result.tokens!.tpotNs!.min).toBeGreaterThan(150 * MS);
        // No usage, no ids: the reasoning text re-encoded with the tokenizer.
        for (const r of requests) expect(r.output_tokens).toBe(tokenizer.encode(outputOf(r.qsl_index, 3).texts.join(''), { addSpecialTokens: false }).length);
        expect(block).toMatch(/output tokens: usage 0, server token ids 0, logprobs 0, re-encoded text \d+, chunks 0/);
        expect(result.tokens!.tokenCount).toBe(requests.reduce((n, r) => n + r.output_tokens!, 0));
      }
    }, 60_000);

    it('the accuracy log holds the reasoning (server ids, or its text re-encoded); --exclude-reasoning leaves it out', async () => {
      const MAX = 8;
      const idsServer = await stub({ reasoningTokens: 'all' });
      const all = await run({ urls: [idsServer.url], transport, maxTokens: MAX }, 'AccuracyOnly');
      for (const [i, ids] of all.ids) expect(ids).toEqual(outputOf(i, MAX).ids);
      expect(all.block).toMatch(/from server ids 3, logprobs 0, re-encoded text 0/);
      const none = await run({ urls: [idsServer.url], transport, maxTokens: MAX, excludeReasoning: true }, 'AccuracyOnly');
      for (const ids of none.ids.values()) expect(ids).toEqual([]);
      expect(none.block).toMatch(/Accuracy data : output token ids, little-endian int32 \(MLCommons' evaluators: --dtype int32\), reasoning left out;/);
      // Half reasoning, half content: the content's ids alone (split by chunk), or its text re-encoded.
      for (const tokenIds of [true, false]) {
        const half = await stub({ reasoningTokens: 4, tokenIds });
        const both = await run({ urls: [half.url], transport, maxTokens: MAX }, 'AccuracyOnly');
        const content = await run({ urls: [half.url], transport, maxTokens: MAX, excludeReasoning: true }, 'AccuracyOnly');
        for (const [i, ids] of both.ids) {
          const out = outputOf(i, MAX);
          expect(ids).toEqual(tokenIds ? out.ids : tokenizer.encode(out.texts.join(''), { addSpecialTokens: false }));
          expect(content.ids.get(i)).toEqual(tokenIds ? out.ids.slice(4) : tokenizer.encode(out.texts.slice(4).join(''), { addSpecialTokens: false }));
        }
      }
    }, 60_000);
  });
}
