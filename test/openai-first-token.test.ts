/**
 * The first token of an OpenAI stream is the first chunk with generated
 * output of any kind (content, reasoning content, a tool call, token ids);
 * a stream that ends without any is a failed sample ('no_first_token')
 * saying what came, never a success with an impossible first-token time.
 * Token counts from usage must be token counts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { activeSeries } from '../lib/dispatch/active.js';
import { loadNative } from '../lib/native/index.js';
import { createOpenAiProtocol, createOpenAiSut } from '../lib/net/openai.js';
import type { NetworkProtocol, ResponseOutcome, ResponseReader } from '../lib/net/protocol.js';
import { testServers } from './net-helpers.js';
import { readText, tempDir } from './helpers.js';

const MS = 1_000_000;
const dir = tempDir('loadgen-openai-first-');
const dataset = join(dir, 'prompts.jsonl');
writeFileSync(dataset, '{"prompt": "a b c", "max_tokens": 4}\n{"prompt": "d e"}\n');
const server = testServers();

const sse = (...events: unknown[]): string => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
const chunk = (delta: Record<string, unknown>): unknown => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] });
const usageOnly = { choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } };

/** The reader's outcome and the first token it handed back, for a body read in one piece. */
function read(reader: ResponseReader, text: string): { first: string | undefined; outcome: ResponseOutcome } {
  const token = reader.onData(Buffer.from(text, 'utf8'));
  return { first: token === undefined ? undefined : Buffer.from(token).toString('utf8'), outcome: reader.onEnd() as ResponseOutcome };
}

describe('OpenAI stream reader: a first token of any kind', () => {
  let chat: NetworkProtocol;
  let completions: NetworkProtocol;
  beforeAll(async () => {
    chat = await createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset });
    completions = await createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset, api: 'completions' });
  });
  afterEach(() => {
    activeSeries.tokens = false;
  });

  it('usage but no output, while token latencies are measured: no_first_token saying what came', () => {
    activeSeries.tokens = true;
    const { first, outcome } = read(chat.reader(0, true), sse(usageOnly, '[DONE]'));
    expect(first).toBeUndefined();
    expect(outcome).toEqual({ ok: false, kind: 'no_first_token', message: 'the stream ended with no generated output (usage said 4 completion tokens)' });
    const bare = read(chat.reader(0, false), sse(chunk({ role: 'assistant', content: '' }), '[DONE]')).outcome;
    expect(bare).toEqual({ ok: false, kind: 'no_first_token', message: 'the stream ended with no generated output (no usage)' });
  });

  it('without token latencies an empty stream stays a response (as a whole body with empty content does)', () => {
    expect(read(chat.reader(0, true), sse(usageOnly, '[DONE]')).outcome).toEqual({ ok: true, data: Buffer.alloc(0), nTokens: 4, inputTokens: 3 });
  });

  it('reasoning content (deepseek-r1, gpt-oss) is the first token; the data is the reasoning, then the content', () => {
    activeSeries.tokens = true;
    const text = sse(chunk({ role: 'assistant' }), chunk({ reasoning_content: 'think' }), chunk({ reasoning_content: 'ing' }), chunk({ content: 'answer' }), usageOnly, '[DONE]');
    const { first, outcome } = read(chat.reader(0, true), text);
    expect(first).toBe('think');
    expect(outcome).toEqual({ ok: true, data: Buffer.from('thinkinganswer'), nTokens: 4, inputTokens: 3 });
    // `reasoning` (the newer field name) and reasoning only, counted by chunks without usage.
    const only = read(chat.reader(0, true), sse(chunk({ reasoning: 'a' }), chunk({ reasoning: 'b' }), '[DONE]'));
    expect(only.first).toBe('a');
    expect(only.outcome).toEqual({ ok: true, data: Buffer.from('ab'), nTokens: 2 });
  });

  it('a tool call, or token ids (vLLM), is a first token too', () => {
    activeSeries.tokens = true;
    const call = [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }];
    const tool = read(chat.reader(0, false), sse(chunk({ tool_calls: call }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), '[DONE]'));
    expect(tool.first).toBe(JSON.stringify(call));
    expect(tool.outcome).toEqual({ ok: true, data: undefined, nTokens: 2 });
    // An empty tool_calls array is no output.
    expect(read(chat.reader(0, false), sse(chunk({ tool_calls: [] }), '[DONE]')).outcome).toMatchObject({ ok: false, kind: 'no_first_token' });
    const ids = read(chat.reader(0, false), sse({ choices: [{ index: 0, delta: {}, token_ids: [11, 12] }] }, '[DONE]'));
    expect(ids.first).toBe('[11,12]');
    expect(ids.outcome).toMatchObject({ ok: true, nTokens: 2 });
    const deltaIds = read(chat.reader(0, false), sse(chunk({ token_ids: [5] }), '[DONE]'));
    expect(deltaIds.first).toBe('[5]');
    const completionIds = read(completions.reader(0, false), sse({ choices: [{ index: 0, text: '', token_ids: [7] }] }, { choices: [{ index: 0, text: 'x' }] }, '[DONE]'));
    expect(completionIds.first).toBe('[7]');
    expect(completionIds.outcome).toMatchObject({ ok: true, nTokens: 2 });
  });

  it('a usage count that is not a token count is a malformed response, never a number into the core', () => {
    for (const n of [-1, 1.5, 1e300, '4']) {
      const { outcome } = read(chat.reader(0, false), sse(chunk({ content: 'a' }), { choices: [], usage: { completion_tokens: n } }, '[DONE]'));
      expect(outcome, String(n)).toMatchObject({ ok: false, kind: 'malformed_response', message: expect.stringContaining('usage.completion_tokens') as unknown });
    }
    // usage: null on every chunk but the last (vLLM) is no count.
    expect(read(chat.reader(0, false), sse({ ...(chunk({ content: 'a' }) as object), usage: null }, '[DONE]')).outcome).toEqual({ ok: true, data: undefined, nTokens: 1 });
  });

  it('a whole body whose content is null is read when it carries reasoning or a tool call', async () => {
    const whole = await createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset, stream: false });
    const body = { choices: [{ message: { role: 'assistant', content: null, reasoning_content: 'hm' } }], usage: { completion_tokens: 1e300 } };
    expect(read(whole.reader(0, true), JSON.stringify(body)).outcome).toMatchObject({ ok: false, kind: 'malformed_response', message: expect.stringContaining('1e+300 is not a token count') as unknown });
    body.usage.completion_tokens = 3;
    expect(read(whole.reader(0, true), JSON.stringify(body)).outcome).toEqual({ ok: true, data: Buffer.from('hm'), nTokens: 3 });
    const tool = { choices: [{ message: { content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] } }] };
    expect(read(whole.reader(0, true), JSON.stringify(tool)).outcome).toEqual({ ok: true, data: Buffer.alloc(0), nTokens: undefined });
    expect(read(whole.reader(0, true), JSON.stringify({ choices: [{ message: { content: null } }] })).outcome).toMatchObject({ ok: false, kind: 'malformed_response' });
  });
});

/** An OpenAI-compatible node that answers every generation with `stream` (an SSE body). */
async function sseNode(stream: string): Promise<string> {
  const node = await server((req, res) => {
    if (req.url === '/v1/models') return void res.end(JSON.stringify({ data: [{ id: 'm', owned_by: 'test' }] }));
    res.setHeader('content-type', 'text/event-stream');
    res.end(stream);
  });
  return node.url;
}

const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);

describe('OpenAI runs: streams without text', () => {
  for (const transport of transports) {
    it(`usage and no text: every sample fails as no_first_token, nothing impossible printed (${transport})`, async () => {
      const url = await sseNode(sse(usageOnly, '[DONE]'));
      const sut = await createOpenAiSut({ urls: [url], model: 'm', dataset, transport });
      const outdir = tempDir();
      try {
        expect(sut.stats().transport).toBe(transport);
        const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 20 * MS, minDurationMs: 0, minQueryCount: 10 }, { outdir });
        expect(result.valid).toBe(false);
        expect(result.errors.failedSamples?.byKind.no_first_token).toBe(10);
        expect(result.errors.failedSamples?.total).toBe(10);
        const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
        expect(detail).toContain('Sample failed (no_first_token)');
        expect(detail).toContain('the stream ended with no generated output (usage said 4 completion tokens)');
        expect(result.summaryText).not.toContain('-9223372036854775808');
      } finally {
        await sut.close();
      }
    });

    it(`a reasoning model that streams only reasoning content succeeds with a first token (${transport})`, async () => {
      const url = await sseNode(sse(chunk({ role: 'assistant' }), chunk({ reasoning_content: 'hmm' }), chunk({ reasoning_content: ' ok' }), usageOnly, '[DONE]'));
      const sut = await createOpenAiSut({ urls: [url], model: 'm', dataset, transport });
      const outdir = tempDir();
      try {
        const settings = { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 20 * MS, minDurationMs: 0, minQueryCount: 10 } as const;
        const result = await startTest(sut, sut.qsl, settings, { outdir: tempDir() });
        expect(result.errors.count).toBe(0);
        expect(result.tokens?.errors.missingFirstToken).toBe(0);
        expect(result.tokens?.ttftNs?.min).toBeGreaterThan(0);
        const accuracy = await startTest(sut, sut.qsl, { ...settings, mode: 'AccuracyOnly' }, { outdir });
        expect(accuracy.errors.count).toBe(0);
        const records = JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as { data: string; token_data?: string }[];
        expect(records.length).toBeGreaterThan(0);
        for (const r of records) expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe('hmm ok');
      } finally {
        await sut.close();
      }
    });
  }
});
