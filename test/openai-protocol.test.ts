import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DatasetError, NetworkSetupError, SettingsError } from '../lib/errors.js';
import { createOpenAiProtocol, readOpenAiDataset } from '../lib/net/openai.js';
import type { NetworkProtocol, NodeProbe, ResponseOutcome, ResponseReader } from '../lib/net/protocol.js';
import { startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { tempDir } from './helpers.js';

const dir = tempDir('loadgen-openai-');
function dataset(name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, lines.join('\n'));
  return file;
}

const good = dataset('good.jsonl', [
  '{"prompt": "hello world", "max_tokens": 4, "input_tokens": 2}',
  '',
  '  ',
  '{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], "id": "x"}',
  '{"prompt": "no limit"}',
  '',
]);

async function protocol(extra: Partial<Parameters<typeof createOpenAiProtocol>[0]> = {}): Promise<NetworkProtocol> {
  return createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset: good, ...extra });
}

function body(p: NetworkProtocol, index: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(p.request(index).body as Uint8Array).toString('utf8')) as Record<string, unknown>;
}

describe('OpenAI JSONL data set', () => {
  it('counts non-blank lines as samples; other fields are ignored', async () => {
    const samples = await readOpenAiDataset(good, 'chat');
    expect(samples).toHaveLength(3);
    const p = await protocol({ performanceSampleCount: 2 });
    expect(p.totalSampleCount).toBe(3);
    expect(p.performanceSampleCount).toBe(2);
  });

  const bad: [string, string, RegExp][] = [
    ['not json', '{"prompt": "a"', /:2: not valid JSON/],
    ['array', '[1]', /:2: must be a JSON object with "prompt" or "messages", got an array/],
    ['neither', '{"text": "a"}', /:2: needs "prompt" \(a string\) or "messages"/],
    ['both', '{"prompt": "a", "messages": []}', /:2: has both "prompt" and "messages"/],
    ['prompt type', '{"prompt": 3}', /:2: prompt: must be a string, got number 3/],
    ['messages empty', '{"messages": []}', /:2: messages: must be a non-empty array .* got an empty array/],
    ['message role', '{"messages": [{"content": "a"}]}', /:2: messages\[0\]\.role: must be a non-empty string/],
    ['message content', '{"messages": [{"role": "user", "content": 5}]}', /:2: messages\[0\]\.content: must be a string or an array/],
    ['max_tokens', '{"prompt": "a", "max_tokens": 0}', /:2: max_tokens: must be an integer in 1\.\.2147483647, got 0/],
    ['max_tokens fraction', '{"prompt": "a", "max_tokens": 1.5}', /:2: max_tokens: must be an integer/],
    ['input_tokens', '{"prompt": "a", "input_tokens": -1}', /:2: input_tokens: must be an integer >= 0, got -1/],
  ];
  for (const [what, line, message] of bad) {
    it(`refuses a bad line (${what}) naming the file, line and field`, async () => {
      const file = dataset(`bad-${what.replace(/\W/g, '_')}.jsonl`, ['{"prompt": "ok"}', line]);
      const error = await readOpenAiDataset(file, 'chat').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatasetError);
      expect((error as DatasetError).message).toMatch(message);
      expect((error as DatasetError).message).toContain(file);
      expect((error as DatasetError).line).toBe(2);
      expect((error as DatasetError).code).toBe('ERR_LOADGEN_INVALID_SETTING');
    });
  }

  it('refuses messages with --api completions, an empty file and a missing file', async () => {
    await expect(readOpenAiDataset(good, 'completions')).rejects.toThrow(/good\.jsonl:4: messages: is for --api chat/);
    await expect(readOpenAiDataset(dataset('empty.jsonl', ['', ' ']), 'chat')).rejects.toThrow(/has no samples/);
    await expect(readOpenAiDataset(join(dir, 'absent.jsonl'), 'chat')).rejects.toThrow(/absent\.jsonl: cannot be read/);
  });

  it('checks the options', async () => {
    await expect(protocol({ api: 'embeddings' as 'chat' })).rejects.toThrow(/api must be one of chat, completions/);
    await expect(protocol({ model: '' })).rejects.toThrow(/model must be a non-empty printable string/);
    await expect(protocol({ maxTokens: 0 })).rejects.toThrow(/maxTokens must be an integer/);
    await expect(protocol({ performanceSampleCount: 4 })).rejects.toThrow(/performanceSampleCount must be an integer in 1\.\.3/);
    // Option errors are SettingsErrors naming the option: the CLI's exit 2.
    const error = (await protocol({ api: 'x' as 'chat' }).catch((e: unknown) => e)) as SettingsError;
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.key).toBe('api');
  });
});

describe('OpenAI requests', () => {
  it('builds chat bodies once at load: a prompt becomes one user message, streaming with usage', async () => {
    const p = await protocol({ maxTokens: 7 });
    expect(() => p.request(0)).toThrow(/not loaded/);
    await p.load([0, 1, 2]);
    const request = p.request(0);
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } });
    expect(p.request(0)).toBe(request);
    expect(body(p, 0)).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hello world' }],
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(body(p, 1).messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    expect(body(p, 2).max_tokens).toBe(7);
    await p.unload([0]);
    expect(() => p.request(0)).toThrow(/not loaded/);
    expect(() => p.request(3)).toThrow(/not in 0\.\.2/);
    expect(() => p.request(-1)).toThrow(RangeError);
    expect(() => p.load([Number.NaN])).toThrow(RangeError);
    expect(p.streamsTokens).toBe(true);
  });

  it('--api completions sends the prompt; --no-stream sends stream: false and no max_tokens when none is given', async () => {
    const completions = await createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset: dataset('p.jsonl', ['{"prompt": "a"}']), api: 'completions', stream: false });
    await completions.load([0]);
    expect(completions.request(0).path).toBe('/v1/completions');
    expect(body(completions, 0)).toEqual({ model: 'm', prompt: 'a', stream: false });
    expect(completions.streamsTokens).toBe(false);
  });
});

// Feeds a body to a reader in pieces of `size` bytes; returns what onData gave back, by piece.
function feed(reader: ResponseReader, text: string, size: number): { firstAt: number; first: string | undefined } {
  const bytes = Buffer.from(text, 'utf8');
  let firstAt = -1;
  let first: string | undefined;
  for (let at = 0, piece = 0; at < bytes.length; at += size, piece++) {
    const token = reader.onData(bytes.subarray(at, at + size));
    if (token !== undefined) {
      expect(firstAt).toBe(-1);
      firstAt = piece;
      first = Buffer.from(token).toString('utf8');
    }
  }
  return { firstAt, first };
}

const sse = (...events: unknown[]): string => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
const delta = (content: string): unknown => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

describe('OpenAI stream reader', () => {
  let p: NetworkProtocol;
  beforeAll(async () => {
    p = await protocol();
  });

  it('returns the first non-empty content once, the text as data and the usage count', () => {
    const text = sse({ choices: [{ delta: { role: 'assistant', content: '' } }] }, delta('Grüß'), delta(' dich'), { choices: [], usage: { completion_tokens: 9 } }, '[DONE]');
    // Every piece size, 1 byte included: a multi-byte character split between reads stays whole.
    for (const size of [1, 3, 7, 64, 10_000]) {
      const reader = p.reader(0, true);
      const { first, firstAt } = feed(reader, text, size);
      expect(first).toBe('Grüß');
      expect(firstAt).toBeGreaterThanOrEqual(0);
      const outcome = reader.onEnd() as ResponseOutcome;
      expect(outcome).toEqual({ ok: true, data: Buffer.from('Grüß dich', 'utf8'), nTokens: 9, inputTokens: 2 });
    }
  });

  it('the first token comes back with the read that completes its event, not before', () => {
    const reader = p.reader(0, false);
    const role = sse({ choices: [{ delta: { role: 'assistant', content: '' } }] });
    expect(reader.onData(Buffer.from(role))).toBeUndefined();
    const token = sse(delta('a'));
    expect(reader.onData(Buffer.from(token.slice(0, 10)))).toBeUndefined();
    expect(Buffer.from(reader.onData(Buffer.from(token.slice(10)))!).toString()).toBe('a');
    expect(reader.onData(Buffer.from(sse(delta('b'))))).toBeUndefined();
  });

  it('counts content chunks without usage, and says which in describe()', async () => {
    const q = await protocol();
    const withUsage = q.reader(0, false);
    feed(withUsage, sse(delta('a'), { choices: [], usage: { completion_tokens: 5 } }, '[DONE]'), 1000);
    expect(withUsage.onEnd()).toEqual({ ok: true, data: undefined, nTokens: 5, inputTokens: 2 });
    const without = q.reader(0, false);
    feed(without, sse(delta('a'), delta('b'), delta(''), delta('c'), '[DONE]'), 1000);
    expect(without.onEnd()).toEqual({ ok: true, data: undefined, nTokens: 3, inputTokens: 2 });
    expect(q.describe!()).toBe('output tokens: usage in 1 of 2 responses (chunks with output otherwise)');
  });

  it('reads completions chunks (text) and a final event without its blank line', async () => {
    const q = await createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset: dataset('c.jsonl', ['{"prompt": "a"}']), api: 'completions' });
    const reader = q.reader(0, true);
    const { first } = feed(reader, sse({ choices: [{ text: 'x' }] }, { choices: [{ text: 'y' }] }) + 'data: [DONE]', 5);
    expect(first).toBe('x');
    expect(reader.onEnd()).toEqual({ ok: true, data: Buffer.from('xy'), nTokens: 2 });
  });

  const malformed: [string, string, RegExp][] = [
    ['no [DONE]', sse(delta('a')), /the stream ended without data: \[DONE\]/],
    ['invalid JSON', sse(delta('a'), '{"choices": [', '[DONE]'), /an event is not JSON: '\{"choices": \['/],
    ['a non-object event', sse(delta('a'), '42', '[DONE]'), /an event is not a JSON object/],
    ['an error object', sse(delta('a'), { error: { message: 'out of memory' } }, '[DONE]'), /error event in the stream: out of memory/],
    ['an error event', `event: error\ndata: {"message": "boom"}\n\n`, /error event in the stream/],
    ['a JSON body', '{"error": "use stream"}', /not an SSE stream \(no data: events\), it began '\{"error": "use stream"\}'/],
    ['an empty body', '', /not an SSE stream/],
  ];
  for (const [what, text, message] of malformed) {
    it(`reports ${what} as a malformed response`, () => {
      const reader = p.reader(0, true);
      feed(reader, text, 4);
      const outcome = reader.onEnd() as ResponseOutcome;
      expect(outcome.ok).toBe(false);
      expect(outcome).toMatchObject({ kind: 'malformed_response', message: expect.stringMatching(message) as unknown });
    });
  }

  it('caps what it quotes of a server', () => {
    const reader = p.reader(0, false);
    feed(reader, sse(`{${'x'.repeat(5000)}`), 1000);
    const outcome = reader.onEnd() as ResponseOutcome;
    expect(!outcome.ok && outcome.message.length).toBeLessThan(200);
  });
});

describe('OpenAI whole-body reader (--no-stream)', () => {
  it('reads message.content / text and usage; no first token', async () => {
    const q = await protocol({ stream: false });
    const reader = q.reader(0, true);
    const text = JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'é ok' } }], usage: { completion_tokens: 2 } });
    expect(feed(reader, text, 3).firstAt).toBe(-1);
    expect(reader.onEnd()).toEqual({ ok: true, data: Buffer.from('é ok'), nTokens: 2, inputTokens: 2 });
    const noUsage = q.reader(0, false);
    feed(noUsage, JSON.stringify({ choices: [{ message: { content: 'a' } }] }), 100);
    expect(noUsage.onEnd()).toEqual({ ok: true, data: undefined, nTokens: undefined, inputTokens: 2 });
    expect(q.describe!()).toBe('output tokens: usage in 1 of 2 responses (none otherwise)');
    for (const [bad, message] of [
      ['{"choices": [', /the body is not JSON/],
      ['{"error": {"message": "nope"}}', /error in the response: nope/],
      ['{"choices": [{"text": "a"}]}', /no choices\[0\]\.message\.content in the body/],
    ] as const) {
      const r = q.reader(0, false);
      feed(r, bad, 100);
      expect(r.onEnd()).toMatchObject({ ok: false, kind: 'malformed_response', message: expect.stringMatching(message) as unknown });
    }
  });
});

function fakeNode(status: number, body: unknown): NodeProbe {
  return {
    origin: 'http://127.0.0.1:9',
    request: async () => ({ status, headers: {}, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) }),
  };
}

describe('OpenAI probe (GET /v1/models)', () => {
  let stub: OpenAiStub;
  beforeAll(async () => {
    stub = await startOpenAiStub({ port: 0, ttftMs: 0, tpotMs: 0, model: 'm' });
  });
  afterAll(async () => {
    await stub.close();
  });

  it("names a node from its model list: the model's id and owner", async () => {
    const p = await protocol();
    const node: NodeProbe = {
      origin: stub.url,
      async request(method, path) {
        const res = await fetch(stub.url + path, { method });
        return { status: res.status, headers: {}, body: new Uint8Array(await res.arrayBuffer()) };
      },
    };
    expect(await p.probe(node)).toBe('m (loadgen-stub)');
    expect(await p.probe(fakeNode(200, { data: [{ id: 'm' }] }))).toBe('m (openai-compatible)');
    expect(await p.probe(fakeNode(200, { data: [{ id: 'm', owned_by: 'v\nllm' }] }))).toBe('m (v llm)');
  });

  it('a model the node does not list is a NetworkSetupError naming what it lists', async () => {
    const p = await protocol({ model: 'llama' });
    const error = await p.probe(fakeNode(200, { data: [{ id: 'a' }, { id: 'b' }] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkSetupError);
    expect((error as Error).message).toMatch(/http:\/\/127\.0\.0\.1:9 \(GET \/v1\/models\): the node does not serve the model 'llama'; it lists 'a', 'b'/);
    await expect(p.probe(fakeNode(200, '<html>'))).rejects.toThrow(/expected a model list/);
    await expect(p.probe(fakeNode(404, 'not found'))).rejects.toThrow(/HTTP 404 'not found': is this an OpenAI-compatible server\?/);
  });

  it('a refused key is named, never shown (nor the body that may quote it)', async () => {
    const withKey = await protocol({ apiKey: 'sk-very-secret' });
    const refusal = fakeNode(401, { error: { message: 'Incorrect API key provided: sk-very-secret' } });
    const error = (await withKey.probe(refusal).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(NetworkSetupError);
    expect(error.message).toMatch(/the server refused the API key \(HTTP 401\)/);
    expect(error.message).not.toContain('sk-very');
    const withoutKey = await protocol();
    await expect(withoutKey.probe(fakeNode(403, {}))).rejects.toThrow(/the server needs an API key \(HTTP 403\); set OPENAI_API_KEY/);
  });
});
