/**
 * The LLM path end to end with a real tokenizer file (Llama 3.1's
 * tokenizer.json from a dev dependency) against the OpenAI stub speaking the
 * same vocabulary, on both transports:
 * - a text-only server (no ids): the accuracy log, read back as int32 and as
 *   int64, is the streamed text re-encoded (no BOS);
 * - logprobs only: the ids mapped through the vocabulary equal the stub's in
 *   every form vLLM writes them; a response whose logprob tokens are
 *   ambiguous (a split character's bytes all decode to U+FFFD) is re-encoded,
 *   and the SUT block counts which source gave each response's ids;
 * - input tokens: usage, the server's prompt_token_ids, else the tokenizer's
 *   count of the prompt (BOS included), per request in the request log.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeTokenIds, type AccuracyDtype } from '../lib/datasets/accuracy-ids.js';
import { startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { createOpenAiSut } from '../lib/net/openai.js';
import type { OpenAiSutOptions } from '../lib/net/types.js';
import { openAiStubOutput, startOpenAiStub, type OpenAiStub, type OpenAiStubOptions } from '../lib/serve/openai-stub.js';
import { loadTokenizer, type Tokenizer } from '../lib/tokenizer/index.js';
import { readText, tempDir } from './helpers.js';
import { TOKENIZER_FILES } from './tokenizer/fixtures.js';

const LLAMA = TOKENIZER_FILES.llama3_1;
const MAX_TOKENS = 14;
const dir = tempDir('loadgen-llm-tokenizer-');
// MLPerf's cnn_eval.json shape. The llama is three byte tokens whose logprob texts are all "�", and whose text is held
// back until the third (the last article's second token: a server's cumulative stream then repeats the text so far).
const INPUTS = ['The cat sat on the mat, and it was warm.', 'Rain fell on Paris on Monday; flights were delayed.', 'A llama 🦙 ate grass in the field.', 'A 🦙 grazed by the lake.'];
const N = INPUTS.length;
const AMBIGUOUS = [2, 3];
const datasetFile = join(dir, 'cnn_eval.json');
const textFile = join(dir, 'prompts.jsonl');
writeFileSync(textFile, INPUTS.map((prompt) => JSON.stringify({ prompt, max_tokens: MAX_TOKENS })).join('\n') + '\n');

let tokenizer: Tokenizer;
let promptIds: number[][];
const stubs: OpenAiStub[] = [];
beforeAll(async () => {
  tokenizer = await loadTokenizer(LLAMA);
  promptIds = INPUTS.map((input) => tokenizer.encode(input));
  writeFileSync(datasetFile, JSON.stringify(INPUTS.map((input, i) => ({ input, tok_input: promptIds[i], output: `summary ${i}` }))));
}, 60_000);
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

async function stub(options: Partial<OpenAiStubOptions>): Promise<OpenAiStub> {
  const s = await startOpenAiStub({ port: 0, ttftMs: 1, tpotMs: 1, tokenizer, ...options });
  stubs.push(s);
  return s;
}

/** What the stub generated for sample i (it is deterministic). */
const stubOutputOf = (i: number) => openAiStubOutput({ promptText: '', promptIds: promptIds[i]!, maxTokens: MAX_TOKENS }, tokenizer);

const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);

interface LogRecord {
  qsl_idx: number;
  data: string;
  token_data?: string;
}
interface RequestLine {
  qsl_index: number;
  input_tokens: number | null;
  output_tokens: number | null;
  outcome: string;
}

/** An accuracy run: the accuracy log and the SUT block's lines. */
async function accuracyRun(options: OpenAiSutOptions): Promise<{ log: LogRecord[]; sut: string }> {
  const sut = await createOpenAiSut({ maxTokens: MAX_TOKENS, ...options });
  const outdir = tempDir();
  try {
    const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', mode: 'AccuracyOnly', useTokenLatencies: options.stream !== false }, { outdir });
    expect(result.errors.count).toBe(0);
    const report = (sut as unknown as { report(): { lines: string[] } }).report();
    return {
      log: JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as LogRecord[],
      sut: report.lines.join('\n'),
    };
  } finally {
    await sut.close();
  }
}

/** The same, with the request log read after the SUT closed it. */
async function accuracyRunWithRequests(options: OpenAiSutOptions): Promise<{ log: LogRecord[]; sut: string; requests: RequestLine[] }> {
  const requestLog = join(tempDir(), 'requests.jsonl');
  const run = await accuracyRun({ ...options, requestLog });
  const requests = readFileSync(requestLog, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as RequestLine);
  return { ...run, requests: requests.sort((a, b) => a.qsl_index - b.qsl_index) };
}

const idsOf = (hex: string, dtype: AccuracyDtype): number[] => Array.from(decodeTokenIds(Buffer.from(hex, 'hex'), dtype));

for (const transport of transports) {
  describe(`a real tokenizer file end to end (${transport})`, () => {
    const textOnly = [
      { api: 'completions', stream: true, dtype: 'int32' },
      { api: 'completions', stream: false, dtype: 'int64' },
      { api: 'sglang', stream: true, dtype: 'int32' },
      { api: 'sglang', stream: true, dtype: 'int32', sglangIncremental: true },
      { api: 'sglang', stream: false, dtype: 'int64' },
    ] as const;
    for (const c of textOnly) {
      const name = `${c.api}, ${c.stream ? ('sglangIncremental' in c ? 'incremental stream' : 'stream') : 'whole'}`;
      it(`a text-only server: the log (${c.dtype}) is exactly the streamed text re-encoded (${name})`, async () => {
        const server = await stub({ tokenIds: false, sglangIncremental: 'sglangIncremental' in c });
        const { log, sut } = await accuracyRun({ urls: [server.url], model: server.model, dataset: datasetFile, api: c.api, stream: c.stream, tokenizer: LLAMA, accuracyDtype: c.dtype, transport });
        expect(log).toHaveLength(N);
        for (const r of log) {
          const streamed = stubOutputOf(r.qsl_idx).texts;
          expect(idsOf(r.data, c.dtype), `sample ${r.qsl_idx}`).toEqual(tokenizer.encode(streamed.join(''), { addSpecialTokens: false }));
          // The first token's data: its text re-encoded.
          if (c.stream) expect(idsOf(r.token_data!, c.dtype)).toEqual(tokenizer.encode(streamed[0]!, { addSpecialTokens: false }));
        }
        expect(sut).toContain(`Accuracy data : output token ids, little-endian ${c.dtype} (MLCommons' evaluators: --dtype ${c.dtype}); from server ids 0, logprobs 0, re-encoded text ${N}, none (failed) 0 (of ${N} logged responses)`);
      });
    }

    it('logprobs only: ids through the vocabulary equal the stub\'s in each form; ambiguous tokens fall back to re-encoding, counted per source', async () => {
      for (const logprobForm of ['text', 'token-id', 'piece'] as const) {
        const server = await stub({ tokenIds: false, usage: false, logprobForm });
        const { log, sut, requests } = await accuracyRunWithRequests({ urls: [server.url], model: server.model, dataset: datasetFile, api: 'completions', tokenizer: LLAMA, logprobs: true, transport });
        for (const r of log) {
          const out = stubOutputOf(r.qsl_idx);
          // Decoded alone, each of the llama's byte tokens is "�": no one id, so the text is re-encoded.
          const ambiguous = logprobForm === 'text' && AMBIGUOUS.includes(r.qsl_idx);
          expect(idsOf(r.data, 'int32'), `${logprobForm} sample ${r.qsl_idx}`).toEqual(ambiguous ? tokenizer.encode(out.texts.join(''), { addSpecialTokens: false }) : out.ids);
        }
        const fromLogprobs = logprobForm === 'text' ? N - AMBIGUOUS.length : N;
        expect(sut).toContain(`from server ids 0, logprobs ${fromLogprobs}, re-encoded text ${N - fromLogprobs}, none (failed) 0 (of ${N} logged responses)`);
        // No usage: every response's count is its logprob tokens, one per generated token (those whose text was held back too).
        expect(sut).toContain(`output tokens: usage 0, server token ids 0, logprobs ${N}, re-encoded text 0, chunks 0 (of ${N} responses)`);
        expect(requests.map((l) => l.output_tokens)).toEqual(INPUTS.map(() => MAX_TOKENS));
      }
    });

    it('input tokens: usage, else the server\'s prompt_token_ids, else the tokenizer\'s count of the prompt (BOS included)', async () => {
      const counted = INPUTS.map((p) => tokenizer.encode(p, { addSpecialTokens: true }).length);
      const words = INPUTS.map((p) => p.split(/\s+/).length);
      // A stub without a vocabulary counts words: which source each figure came from shows in its value.
      const cases = [
        { server: { usage: false, tokenIds: false }, line: `usage 0, server prompt ids 0, data set ids 0, data set input_tokens 0, tokenizer ${N}, unknown 0`, counts: counted },
        { server: { usage: false, tokenIds: true }, line: `usage 0, server prompt ids ${N}, data set ids 0, data set input_tokens 0, tokenizer 0, unknown 0`, counts: words },
        { server: { usage: true, tokenIds: false }, line: `usage ${N}, server prompt ids 0, data set ids 0, data set input_tokens 0, tokenizer 0, unknown 0`, counts: words },
      ];
      for (const c of cases) {
        for (const stream of [true, false]) {
          const server = await stub({ ...c.server, tokenizer: undefined });
          const { sut, requests } = await accuracyRunWithRequests({ urls: [server.url], model: server.model, dataset: textFile, api: 'completions', stream, tokenizer: LLAMA, transport });
          expect(sut, JSON.stringify({ ...c.server, stream })).toContain(`input tokens: ${c.line}`);
          expect(requests.map((l) => l.input_tokens)).toEqual(c.counts);
        }
      }
      expect(counted).not.toEqual(words);
    });
  });
}
