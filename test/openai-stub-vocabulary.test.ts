/**
 * The OpenAI stub speaking a real vocabulary (Llama 3.1's tokenizer.json):
 * real ids, text streamed as a detokenizer streams it (split characters held
 * back), prompt_token_ids, logprob tokens in each of vLLM's forms, reasoning
 * chunks, a text-only server; and the CLI flags that set them.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { addOpenAiStubOptions, openAiStubOptionsFromCli } from '../lib/cli/openai-stub-options.js';
import { openAiStubOutput, startOpenAiStub, type OpenAiStub, type OpenAiStubOptions } from '../lib/serve/openai-stub.js';
import { loadTokenizer, type Tokenizer } from '../lib/tokenizer/index.js';
import { repoRoot } from './helpers.js';
import { TOKENIZER_FILES } from './tokenizer/fixtures.js';

const LLAMA = TOKENIZER_FILES.llama3_1;
let tokenizer: Tokenizer;
const stubs: OpenAiStub[] = [];
beforeAll(async () => {
  tokenizer = await loadTokenizer(LLAMA);
}, 60_000);
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

async function stub(options: Partial<OpenAiStubOptions> = {}): Promise<OpenAiStub> {
  const s = await startOpenAiStub({ port: 0, ttftMs: 1, tpotMs: 1, tokenizer, ...options });
  stubs.push(s);
  return s;
}

interface Chunk {
  prompt_token_ids?: number[];
  choices: {
    text?: string;
    delta?: Record<string, unknown>;
    token_ids?: number[];
    prompt_token_ids?: number[];
    logprobs: { tokens?: string[]; content?: { token: string }[] } | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

async function stream(s: OpenAiStub, path: string, body: Record<string, unknown>): Promise<Chunk[]> {
  const res = await fetch(s.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: s.model, stream: true, ...body }) });
  const events = (await res.text()).split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => b.slice(6));
  expect(events.at(-1)).toBe('[DONE]');
  return events.slice(0, -1).map((e) => JSON.parse(e) as Chunk);
}

// "🦙" is four byte tokens' worth of UTF-8 in Llama 3.1 (three tokens: 11410, 99, 247).
const PROMPT = 'The llama 🦙 ate grass.';

describe('the stub in a real vocabulary', () => {
  it('repeats the prompt\'s tokens (special ones left out); the text is the ids decoded, a split character held back until complete', () => {
    const promptIds = tokenizer.encode(PROMPT);
    expect(promptIds[0]).toBe(128000);
    const out = openAiStubOutput({ promptText: '', promptIds, maxTokens: 12 }, tokenizer);
    expect(out.ids).toEqual([...promptIds.slice(1), ...promptIds.slice(1, 5)]);
    expect(out.promptIds).toEqual(promptIds);
    expect(out.texts.join('')).toBe(tokenizer.decode(out.ids, { skipSpecialTokens: true, cleanUpTokenizationSpaces: false }));
    // The llama's three byte tokens: nothing, nothing, then the whole character.
    expect(out.texts.slice(2, 5)).toEqual(['', '', ' 🦙']);
    // Cut inside the character at max_tokens: what there is comes with the last token, as U+FFFD.
    expect(out.texts.at(-1)).toBe(' \uFFFD');
    // A text prompt: encoded with BOS as a server counts it; output without it.
    const text = openAiStubOutput({ promptText: 'hello world', maxTokens: 3 }, tokenizer);
    expect(text.promptIds).toEqual(tokenizer.encode('hello world'));
    expect(text.ids).toEqual([15339, 1917, 15339]);
    expect(text.texts).toEqual(['hello', ' world', 'hello']);
  });

  it('streams ids, prompt_token_ids once, usage in tokens, and logprob tokens in each form vLLM writes', async () => {
    const promptIds = tokenizer.encode(PROMPT);
    const expected = openAiStubOutput({ promptText: '', promptIds, maxTokens: 9 }, tokenizer);
    const forms = { 'token-id': expected.ids.map((id) => `token_id:${id}`), piece: expected.ids.map((id) => tokenizer.idToToken(id)!), text: expected.ids.map((id) => tokenizer.decode([id])) };
    for (const [logprobForm, tokens] of Object.entries(forms) as [OpenAiStubOptions['logprobForm'], string[]][]) {
      const s = await stub({ logprobForm });
      const chunks = await stream(s, '/v1/completions', { prompt: promptIds, max_tokens: 9, return_token_ids: true, logprobs: 1, stream_options: { include_usage: true } });
      const tokenChunks = chunks.filter((c) => c.choices.length > 0);
      expect(tokenChunks.flatMap((c) => c.choices[0]!.token_ids!)).toEqual(expected.ids);
      expect(tokenChunks.map((c) => c.choices[0]!.text)).toEqual(expected.texts);
      expect(tokenChunks.flatMap((c) => c.choices[0]!.logprobs!.tokens!)).toEqual(tokens);
      expect(tokenChunks.map((c) => c.choices[0]!.prompt_token_ids)).toEqual([promptIds, ...expected.ids.slice(1).map(() => undefined)]);
      expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: promptIds.length, completion_tokens: 9 });
    }
    expect(forms.piece.slice(0, 3)).toEqual(['The', 'Ġllama', 'ĠðŁ']);
    expect(forms.text.slice(2, 5)).toEqual([' \uFFFD', '\uFFFD', '\uFFFD']);
  });

  it('a text-only server sends no ids at all; chat reasoning streams in reasoning_content or reasoning, the rest as content', async () => {
    const textOnly = await stub({ tokenIds: false });
    const plain = await stream(textOnly, '/v1/completions', { prompt: PROMPT, max_tokens: 2, return_token_ids: true });
    expect(plain.every((c) => c.choices[0]!.token_ids === undefined && c.choices[0]!.prompt_token_ids === undefined)).toBe(true);
    expect(plain.map((c) => c.choices[0]!.text).join('')).toBe('The llama');

    const expected = openAiStubOutput({ promptText: 'one two three four five', maxTokens: 5 }, tokenizer);
    for (const reasoningField of ['reasoning_content', 'reasoning'] as const) {
      const s = await stub({ reasoningTokens: 2, reasoningField });
      const chunks = await stream(s, '/v1/chat/completions', { messages: [{ role: 'user', content: 'one two three four five' }], max_tokens: 5, return_token_ids: true });
      // vLLM: the role chunk carries prompt_token_ids beside the choices.
      expect(chunks[0]!.prompt_token_ids).toEqual(expected.promptIds);
      const deltas = chunks.slice(1).map((c) => c.choices[0]!.delta!);
      expect(deltas.map((d) => d[reasoningField] ?? null)).toEqual([...expected.texts.slice(0, 2), null, null, null]);
      expect(deltas.map((d) => d.content ?? null)).toEqual([null, null, ...expected.texts.slice(2)]);
    }
    const all = await stub({ reasoningTokens: 'all' });
    const whole = (await (await fetch(`${all.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: all.model, messages: [{ role: 'user', content: 'one two three four five' }], max_tokens: 5 }) })).json()) as {
      choices: { message: { content: string | null; reasoning_content: string } }[];
    };
    expect(whole.choices[0]!.message).toEqual({ role: 'assistant', content: null, reasoning_content: expected.texts.join('') });
  });

  it('checks the new options', async () => {
    await expect(startOpenAiStub({ port: 0, ttftMs: 0, tpotMs: 0, logprobForm: 'bytes' as never })).rejects.toThrow(/logprobForm must be one of text, token-id, piece/);
    await expect(startOpenAiStub({ port: 0, ttftMs: 0, tpotMs: 0, reasoningTokens: -1 })).rejects.toThrow(/reasoningTokens must be an integer in 0\.\.65536 or 'all'/);
    await expect(startOpenAiStub({ port: 0, ttftMs: 0, tpotMs: 0, reasoningField: 'thinking' as never })).rejects.toThrow(/reasoningField must be/);
    await expect(startOpenAiStub({ port: 0, ttftMs: 0, tpotMs: 0, tokenizer: 'tokenizer.json' as never })).rejects.toThrow(/tokenizer must be a loaded tokenizer/);
    await expect(startOpenAiStub({ port: 0, ttftMs: 0, tpotMs: 0, tokenIds: 'no' as never })).rejects.toThrow(/tokenIds must be true or false/);
  });
});

describe('loadgen serve --openai-stub: the flags of a text-only, incremental, reasoning or vocabulary stub', () => {
  function parse(args: string[]): Record<string, unknown> {
    const command = addOpenAiStubOptions(new Command().exitOverride().configureOutput({ writeErr: () => undefined }));
    command.parse(args, { from: 'user' });
    return command.opts();
  }

  it('turns the flags into startOpenAiStub options and refuses bad values naming the flag', () => {
    const values = parse(['--no-token-ids', '--sglang-incremental', '--logprob-form', 'token-id', '--reasoning-tokens', 'all', '--reasoning-field', 'reasoning']);
    expect(openAiStubOptionsFromCli(values, { port: 0 })).toEqual({
      port: 0, ttftMs: 20, tpotMs: 5, tokenIds: false, sglangIncremental: true, logprobForm: 'token-id', reasoningTokens: 'all', reasoningField: 'reasoning',
    });
    expect(openAiStubOptionsFromCli(parse(['--reasoning-tokens', '3']), { port: 0 }).reasoningTokens).toBe(3);
    expect(() => parse(['--reasoning-tokens', 'some'])).toThrow(/--reasoning-tokens must be an integer in 0\.\.65536 or 'all', got 'some'/);
    expect(() => parse(['--logprob-form', 'bytes'])).toThrow(/Allowed choices are text, token-id, piece/);
  });

  function serve(args: string[], request?: (url: string) => Promise<string>): Promise<{ status: number | null; stderr: string; answer: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'serve', '--openai-stub', '--port', '0', ...args]);
      let stdout = '';
      let stderr = '';
      let answer = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const url = /at (http:\/\/\S+)/.exec(stdout)?.[1];
        if (url !== undefined && request !== undefined && answer === '') {
          answer = ' ';
          request(url).then((a) => (answer = a), (e: unknown) => (answer = String(e))).finally(() => child.kill('SIGTERM'));
        }
      });
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stderr, answer });
      });
    });
  }

  it('--stub-tokenizer loads the file (a bad one is exit 2 naming it); the served stream speaks its vocabulary', async () => {
    const bad = await serve(['--stub-tokenizer', join(repoRoot, 'package.json')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/package\.json/);
    const ok = await serve(['--stub-tokenizer', LLAMA, '--no-token-ids', '--ttft-ms', '0', '--tpot-ms', '0'], async (url) => {
      const res = await fetch(`${url}/v1/completions`, { method: 'POST', body: JSON.stringify({ model: 'loadgen-stub', prompt: 'hello world', max_tokens: 3, return_token_ids: true }) });
      return res.text();
    });
    expect(ok.status).toBe(0);
    const body = JSON.parse(ok.answer) as { choices: { text: string; token_ids?: number[] }[]; usage: { prompt_tokens: number } };
    expect(body.choices[0]).toMatchObject({ text: 'hello worldhello' });
    expect(body.choices[0]!.token_ids).toBeUndefined();
    expect(body.usage.prompt_tokens).toBe(3);
    // Stub flags without --openai-stub are refused by name.
    const misplaced = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'serve', '--model', 'demo-cnn', '--no-token-ids', '--port', '0']);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stderr }));
    });
    expect(misplaced.status).toBe(2);
    expect(misplaced.stderr).toMatch(/--no-token-ids applies only with --openai-stub/);
  }, 120_000);
});
