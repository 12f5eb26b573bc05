import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { decodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { startTest } from '../lib/index.js';
import { DatasetError, NetworkSetupError } from '../lib/errors.js';
import { createOpenAiSut } from '../lib/net/openai.js';
import { loadNative } from '../lib/native/index.js';
import type { OpenAiSutOptions } from '../lib/net/types.js';
import { startOpenAiStub, type OpenAiStub, type OpenAiStubOptions } from '../lib/serve/openai-stub.js';
import { stubIdTokens, stubOutputIds } from '../lib/serve/stub-ids.js';
import { readText, tempDir } from './helpers.js';

const TOKENS = 5;
const dir = tempDir('loadgen-token-ids-');
// MLPerf's cnn_eval.json shape: a JSON array of { input, tok_input, output }.
const records = [
  { input: 'first article', tok_input: [128000, 791, 8415], output: 'one' },
  { input: 'second article', tok_input: [128000, 2000000, 17, 4], output: 'two' },
  { input: 'third', tok_input: [5], output: 'three', max_new_tokens: 3 },
];
const datasetFile = join(dir, 'cnn_eval.json');
writeFileSync(datasetFile, JSON.stringify(records, null, 2));
const tokensOf = (i: number): number => records[i]!.max_new_tokens ?? TOKENS;

const stubs: OpenAiStub[] = [];
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});
async function stub(options: Partial<OpenAiStubOptions> = {}): Promise<OpenAiStub> {
  const s = await startOpenAiStub({ port: 0, ttftMs: 1, tpotMs: 1, recordTimes: true, ...options });
  stubs.push(s);
  return s;
}

const transports = loadNative().nativeHttpAvailable ? (['undici', 'native'] as const) : (['undici'] as const);

interface LogRecord {
  qsl_idx: number;
  data: string;
  token_data?: string;
}

/** An accuracy run; the accuracy log's records. */
async function accuracyRun(options: OpenAiSutOptions): Promise<{ records: LogRecord[]; summary: string; sutLines: string[] }> {
  const sut = await createOpenAiSut(options);
  const outdir = tempDir();
  try {
    const result = await startTest(sut, sut.qsl, { scenario: 'SingleStream', mode: 'AccuracyOnly', useTokenLatencies: options.stream !== false }, { outdir });
    expect(result.errors.count).toBe(0);
    const report = (sut as unknown as { report(): { lines: string[] } }).report();
    return { records: JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json'))) as LogRecord[], summary: readText(join(outdir, 'mlperf_log_summary.txt')), sutLines: report.lines };
  } finally {
    await sut.close();
  }
}

for (const transport of transports) {
  describe(`token-id prompts and output ids in the accuracy log (${transport})`, () => {
    for (const stream of [true, false]) {
      it(`--api completions sends prompt: [ids]; the log holds the ids the stub generated, int32 by default (${stream ? 'stream' : 'whole'})`, async () => {
        const server = await stub();
        const { records: log, sutLines } = await accuracyRun({ urls: [server.url], model: server.model, dataset: datasetFile, api: 'completions', stream, maxTokens: TOKENS, transport });
        expect(log).toHaveLength(records.length);
        for (const r of log) {
          const expected = stubOutputIds(records[r.qsl_idx]!.tok_input, tokensOf(r.qsl_idx));
          expect(Array.from(decodeTokenIds(Buffer.from(r.data, 'hex'), 'int32'))).toEqual(expected);
          // The first token's data is its ids too.
          if (stream) expect(Array.from(decodeTokenIds(Buffer.from(r.token_data!, 'hex'), 'int32'))).toEqual(expected.slice(0, 1));
        }
        expect(server.records().every((r) => r.path === '/v1/completions')).toBe(true);
        expect(sutLines.join('\n')).toMatch(/Accuracy data : output token ids, little-endian int32 \(MLCommons' evaluators: --dtype int32\); from server ids 3, logprobs 0, re-encoded text 0, none \(failed\) 0 \(of 3 logged responses\)/);
        expect(sutLines.join('\n')).toMatch(/Note : input tokens: usage 3,/);
      });
    }

    it('--api sglang sends input_ids to /generate; cumulative and incremental streams give the same ids, int64 for gptj', async () => {
      for (const sglangIncremental of [false, true]) {
        const server = await stub({ sglangIncremental });
        const { records: log, sutLines } = await accuracyRun({ urls: [server.url], model: server.model, dataset: datasetFile, api: 'sglang', maxTokens: TOKENS, benchmark: 'gptj', transport });
        for (const r of log) expect(Array.from(decodeTokenIds(Buffer.from(r.data, 'hex'), 'int64'))).toEqual(stubOutputIds(records[r.qsl_idx]!.tok_input, tokensOf(r.qsl_idx)));
        expect(server.records().every((r) => r.path === '/generate')).toBe(true);
        expect(sutLines.join('\n')).toMatch(/output tokens: usage 3, /);
        expect(sutLines.join('\n')).toMatch(/little-endian int64/);
      }
    });

    it('--accuracy-data text keeps the text, and the SUT block says so', async () => {
      const server = await stub();
      const { records: log, sutLines } = await accuracyRun({ urls: [server.url], model: server.model, dataset: datasetFile, api: 'completions', maxTokens: TOKENS, accuracyData: 'text', transport });
      for (const r of log) expect(Buffer.from(r.data, 'hex').toString('utf8')).toBe(stubIdTokens(stubOutputIds(records[r.qsl_idx]!.tok_input, tokensOf(r.qsl_idx))).join(''));
      expect(sutLines.join('\n')).toMatch(/Accuracy data : the output text \(UTF-8\), not token ids: --accuracy-data text/);
    });
  });
}

describe('token ids: faults', () => {
  it('a server that sends no ids (and no --tokenizer) is refused before the run, naming what to do', async () => {
    const server = await stub({ tokenIds: false });
    const error = await createOpenAiSut({ urls: [server.url], model: server.model, dataset: datasetFile, api: 'completions', transport: 'undici' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkSetupError);
    expect((error as Error).message).toMatch(/no choices\[0\]\.token_ids.*--tokenizer FILE.*--accuracy-data text/);
  });

  it('a text-only SGLang server fails the logged samples, saying why', async () => {
    const server = await stub({ tokenIds: false });
    const sut = await createOpenAiSut({ urls: [server.url], model: server.model, dataset: datasetFile, api: 'sglang', maxTokens: 2, transport: 'undici' });
    try {
      const outdir = tempDir();
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly', useTokenLatencies: true }, { outdir });
      expect(result.errors.failedSamples.byKind.malformed_response).toBe(records.length);
      expect(readText(join(outdir, 'mlperf_log_detail.txt'))).toMatch(/no output token ids for the accuracy log: the server sent none/);
    } finally {
      await sut.close();
    }
  });

  it('token ids on --api chat, and bad ids in a data set, are refused before anything connects', async () => {
    const chat = await createOpenAiSut({ urls: ['http://127.0.0.1:1'], model: 'm', dataset: datasetFile, api: 'chat' }).catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(DatasetError);
    expect((chat as Error).message).toMatch(/cnn_eval\.json:2 \(sample 0\): tok_input: token ids cannot be sent to --api chat.*--prompt-field input/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ tok_input: [1, 'x'] }]));
    const error = await createOpenAiSut({ urls: ['http://127.0.0.1:1'], model: 'm', dataset: bad, api: 'completions' }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/bad\.json:1 \(sample 0\): tok_input: .*\[1\] is string "x", not a token id/);
  });

  it('generation parameters reach the request bodies (run defaults under per-record values)', async () => {
    const { createOpenAiProtocol } = await import('../lib/net/openai.js');
    const body = async (api: 'sglang' | 'completions', index: number): Promise<Record<string, unknown>> => {
      const p = await createOpenAiProtocol({ urls: ['http://127.0.0.1:1'], model: 'm', dataset: datasetFile, api, maxTokens: 4, minTokens: 1, ignoreEos: true, temperature: 0 });
      await p.load([index]);
      return JSON.parse(Buffer.from(p.request(index).body as Uint8Array).toString('utf8')) as Record<string, unknown>;
    };
    expect(await body('sglang', 2)).toEqual({ input_ids: [5], sampling_params: { max_new_tokens: 3, min_new_tokens: 1, temperature: 0, ignore_eos: true }, stream: true });
    expect(await body('completions', 0)).toEqual({
      model: 'm',
      prompt: [128000, 791, 8415],
      max_tokens: 4,
      min_tokens: 1,
      ignore_eos: true,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      return_token_ids: true,
    });
  });
});
