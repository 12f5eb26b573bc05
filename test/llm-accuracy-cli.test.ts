/**
 * An MLPerf LLM accuracy run from the command line, end to end with a real
 * tokenizer file: `loadgen run --sut openai --api completions` on a
 * cnn_eval.json of token-id prompts against the stub speaking Llama 3.1's
 * vocabulary writes int32 output ids; `loadgen accuracy LOGDIR --dataset
 * --tokenizer --benchmark llama3_1-8b --json` on that log scores what
 * lib/accuracy scores from the stub's own texts (a round trip through int32
 * ids and decode), and holds it to the targets: the stub's echo misses them
 * (exit 1); a stub that answers with the references exactly gets ROUGE 100,
 * PASS on every ROUGE row, and the exit status the gen_len row decides.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { scoreAccuracy, type AccuracyReport } from '../lib/accuracy/score.js';
import { openAiStubOutput, startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { loadTokenizer, type Tokenizer } from '../lib/tokenizer/index.js';
import { type CliRun, repoRoot, runCli, tempDir } from './helpers.js';
import { TOKENIZER_FILES } from './tokenizer/fixtures.js';

const LLAMA = TOKENIZER_FILES.llama3_1;
// A Punkt model trained for the tests (NLTK's own is not shipped): the same splits on both sides.
const PUNKT = join(repoRoot, 'test', 'fixtures', 'accuracy', 'punkt-trained');
const MAX_TOKENS = 40;
const ARTICLES = [
  // References in other words than the articles: the stub's echo of an article misses the ROUGE targets.
  { input: 'Summarize: The city council met on Tuesday and voted to build a new bridge over the river. Work starts in spring.', output: 'Officials approved funding for a crossing. Construction begins next year.' },
  { input: 'Summarize: Heavy rain flooded streets in the old town on Sunday night. Firefighters pumped water from homes.', output: 'Storms caused damage downtown. Crews helped residents overnight.' },
  { input: 'Summarize: The museum opened a hall of ancient maps, drawn by sailors who crossed the ocean.', output: 'An exhibition of historic charts is now open to visitors.' },
];

/** The CLI in its own process (asynchronously: the stub answers from this one). */
function loadgen(args: string[]): Promise<CliRun> {
  return runCli(args, { timeoutMs: 120_000, env: { NLTK_DATA: '/nonexistent-nltk-data' } });
}

let tokenizer: Tokenizer;
let stub: OpenAiStub;
const dir = tempDir('loadgen-llm-accuracy-');
beforeAll(async () => {
  tokenizer = await loadTokenizer(LLAMA);
  stub = await startOpenAiStub({ port: 0, ttftMs: 1, tpotMs: 1, tokenizer });
}, 60_000);
afterAll(async () => {
  await stub.close();
});

/** `loadgen run` an accuracy run of `dataset`, then `loadgen accuracy` on its log (--json, and as text). */
async function runAndScore(dataset: string, name: string): Promise<{ outdir: string; json: { status: number | null; report: AccuracyReport }; text: string }> {
  const outdir = join(dir, name);
  const run = await loadgen(['run', '--sut', 'openai', '--url', stub.url, '--model', stub.model, '--api', 'completions', '--dataset', dataset, '--tokenizer', LLAMA,
    '--max-tokens', String(MAX_TOKENS), '--scenario', 'Offline', '--mode', 'AccuracyOnly', '--outdir', outdir, '--no-progress', '--no-report', '--quiet']);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  // Every response read with its series known: bodies logged, tokens counted (no n_tokens errors).
  expect(readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8')).toContain('No errors encountered during test.');
  const args = ['accuracy', outdir, '--dataset', dataset, '--tokenizer', LLAMA, '--benchmark', 'llama3_1-8b', '--punkt', PUNKT];
  const json = await loadgen([...args, '--json']);
  expect(json.stderr).toBe('');
  const text = await loadgen(args);
  expect(text.status).toBe(json.status);
  return { outdir, json: { status: json.status, report: JSON.parse(json.stdout) as AccuracyReport }, text: text.stdout };
}

/** lib/accuracy on a text log of `texts` (what the stub streamed), with nothing decoded. */
async function scoreTexts(texts: string[], dataset: string): Promise<AccuracyReport> {
  const folder = tempDir('loadgen-llm-accuracy-text-');
  writeFileSync(join(folder, 'mlperf_log_accuracy.json'), JSON.stringify(texts.map((t, i) => ({ seq_id: i, qsl_idx: i, data: Buffer.from(t, 'utf8').toString('hex') }))));
  return scoreAccuracy({ log: folder, dataset, benchmark: 'llama3_1-8b', punkt: PUNKT, logData: 'text' });
}

describe('loadgen run → loadgen accuracy with a real tokenizer', () => {
  it('scores the int32 log as lib/accuracy scores the stub\'s texts; the echo misses the targets (exit 1)', async () => {
    const dataset = join(dir, 'cnn_eval.json');
    writeFileSync(dataset, JSON.stringify(ARTICLES.map((a) => ({ ...a, tok_input: tokenizer.encode(a.input) }))));
    const { outdir, json, text } = await runAndScore(dataset, 'echo');
    expect(json.status).toBe(1);
    const report = json.report;
    expect(report.logData).toBe('token-ids');
    expect(report.accuracyDtype).toBe('int32');
    expect(report.counts.unique).toBe(ARTICLES.length);
    const streamed = ARTICLES.map((a) => openAiStubOutput({ promptText: '', promptIds: tokenizer.encode(a.input), maxTokens: MAX_TOKENS }, tokenizer).texts.join(''));
    const direct = await scoreTexts(streamed, dataset);
    for (const metric of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'gen_len', 'gen_num']) {
      expect(report.metrics[metric], metric).toBe(direct.metrics[metric]);
    }
    expect(report.metrics.rouge1).toBeGreaterThan(0);
    // The log holds the stub's ids, int32.
    const log = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
    for (const r of log) {
      const expected = openAiStubOutput({ promptText: '', promptIds: tokenizer.encode(ARTICLES[r.qsl_idx]!.input), maxTokens: MAX_TOKENS }, tokenizer).ids;
      expect(Array.from(new Int32Array(Uint8Array.from(Buffer.from(r.data, 'hex')).buffer))).toEqual(expected);
    }
    const failed = report.verdicts!.filter((v) => v.status === 'fail').map((v) => v.metric);
    expect(failed).toEqual(expect.arrayContaining(['rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'gen_len']));
    expect(text).toMatch(/FAIL\s+rouge1\s/);
    expect(text).toContain('Accuracy: FAIL');
  }, 180_000);

  it('a stub that answers with the references: ROUGE 100, PASS on the ROUGE rows; gen_len of three samples decides the exit status', async () => {
    const dataset = join(dir, 'cnn_eval_exact.json');
    // The echo of a prompt that is the reference, max_tokens its length: the stub outputs the reference exactly.
    writeFileSync(dataset, JSON.stringify(ARTICLES.map((a) => {
      const ids = tokenizer.encode(a.output);
      return { input: a.input, tok_input: ids, output: a.output, max_tokens: ids.length - 1 };
    })));
    const { json, text } = await runAndScore(dataset, 'exact');
    const report = json.report;
    for (const metric of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']) expect(report.metrics[metric], metric).toBe(100);
    expect(report.metrics.gen_len).toBe(ARTICLES.reduce((n, a) => n + a.output.length, 0));
    const rows = report.verdicts!.map((v) => `${v.metric} ${v.bound} ${v.status}`);
    expect(rows).toEqual(['rouge1 min pass', 'rouge2 min pass', 'rougeL min pass', 'rougeLsum min pass', 'gen_len min fail', 'gen_len max pass']);
    // gen_len is held to 90-110 % of 8,167,644 characters (13,368 samples): three samples are under its floor.
    expect(json.status).toBe(1);
    for (const metric of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']) expect(text).toMatch(new RegExp(`PASS\\s+${metric}\\s+100\\.0 >= `));
    expect(text).toMatch(/FAIL\s+gen_len\s/);
  }, 180_000);
});
