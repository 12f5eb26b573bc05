/**
 * scoreAccuracy end to end: logs of text and of int32/int64 ids,
 * de-duplication by qsl_idx, the evaluators of each benchmark (ROUGE with
 * MLCommons' post-processing, tokens per sample, Mixtral's subsets, 405B's
 * per-sample metrics, top-1), the targets' verdicts and bad input.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { encodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { gsm8kAnswer, gsm8kCorrect, niahExactMatch, qaExactMatch } from '../lib/accuracy/metrics.js';
import { pythonRound } from '../lib/accuracy/numeric.js';
import { scoreAccuracy, type AccuracyTokenizer } from '../lib/accuracy/score.js';
import { accuracyBenchmark } from '../lib/accuracy/targets.js';
import { DatasetError, SettingsError } from '../lib/errors.js';

const FIXTURES = join(__dirname, 'fixtures', 'accuracy');
const TRAINED_PUNKT = join(FIXTURES, 'punkt-trained');
const dir = (): string => mkdtempSync(join(tmpdir(), 'loadgen-accuracy-'));

interface LogEntry { qsl: number; bytes: Uint8Array }
function writeLog(folder: string, entries: LogEntry[]): string {
  const file = join(folder, 'mlperf_log_accuracy.json');
  writeFileSync(file, JSON.stringify(entries.map((e, i) => ({ seq_id: i, qsl_idx: e.qsl, data: Buffer.from(e.bytes).toString('hex').toUpperCase() }))));
  return file;
}
function writeDataset(folder: string, records: object[]): string {
  const file = join(folder, 'data.json');
  writeFileSync(file, JSON.stringify(records));
  return file;
}
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A toy tokenizer: id 0 is the special '<s>', others are words with their leading space. */
const WORDS = ['<s>', 'The', ' cat', ' sat', ' on', ' the', ' mat', '.', ' It', ' was', ' happy', ' dog'];
const toy: AccuracyTokenizer = {
  vocabularySize: WORDS.length,
  decode: (ids, { skipSpecialTokens }) => Array.from(ids).filter((id) => !(skipSpecialTokens && id === 0)).map((id) => WORDS[id]).join(''),
  encode: (s) => s.split(/(?=[ .])/).map((w) => WORDS.indexOf(w)),
};

describe('CNN-style text log against evaluation.py (oracle figures)', () => {
  const pairs = (JSON.parse(readFileSync(join(FIXTURES, 'rouge-cnn-pairs.json'), 'utf8')) as { pairs: Array<{ reference: string; prediction: string }> }).pairs;
  const expected = (JSON.parse(readFileSync(join(FIXTURES, 'rouge-cnn-trained-punkt.json'), 'utf8')) as { mlperf: Record<string, number> }).mlperf;

  it('scores 300 pairs as MLCommons does, duplicates dropped as its evaluators drop them', async () => {
    const folder = dir();
    const dataset = writeDataset(folder, pairs.map((p, i) => ({ input: `article ${i}`, output: p.reference })));
    // Samples in reverse order, the first ten logged again after with other data (the first entry wins).
    const entries: LogEntry[] = pairs.map((p, i) => ({ qsl: i, bytes: text(p.prediction) })).reverse();
    for (let i = 0; i < 10; i++) entries.push({ qsl: i, bytes: text('a different answer') });
    writeLog(folder, entries);
    const report = await scoreAccuracy({ log: folder, dataset, punkt: TRAINED_PUNKT });
    expect(report.logData).toBe('text');
    expect(report.sentenceSplitter).toEqual({ kind: 'punkt', source: TRAINED_PUNKT });
    expect(report.counts).toMatchObject({ entries: 310, unique: 300, duplicates: 10, referenceSamples: 300 });
    for (const key of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'gen_len', 'gen_num']) expect([key, report.metrics[key]]).toEqual([key, expected[key]]);
    expect(report.verdicts).toBeUndefined();
  });
});

describe('token-id logs', () => {
  const records = [{ input: 'q0', output: 'The cat sat on the mat.' }, { input: 'q1', output: 'It was happy.' }];
  const ids = [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 7, 0]];

  it.each(['int32', 'int64'] as const)('decodes %s ids with special tokens skipped and counts tokens per sample', async (dtype) => {
    const folder = dir();
    const dataset = writeDataset(folder, records);
    writeLog(folder, ids.map((x, qsl) => ({ qsl, bytes: encodeTokenIds(x, dtype) })));
    const report = await scoreAccuracy({ log: folder, dataset, tokenizer: toy, accuracyDtype: dtype, punkt: TRAINED_PUNKT });
    expect(report.logData).toBe('token-ids');
    expect(report.tokenCounts).toBe('log ids');
    expect(report.metrics).toMatchObject({ rouge1: 100, rouge2: 100, rougeL: 100, rougeLsum: 100, gen_len: 36, gen_num: 2, gen_tok_len: 13, tokens_per_sample: 6.5, exact_match: 100 });
  });

  it('takes the dtype of the benchmark (int64 for gptj, int32 for llama2-70b) and refuses ids without a tokenizer', async () => {
    const folder = dir();
    const dataset = writeDataset(folder, records);
    writeLog(folder, ids.map((x, qsl) => ({ qsl, bytes: encodeTokenIds(x, 'int64') })));
    expect((await scoreAccuracy({ log: folder, dataset, tokenizer: toy, benchmark: 'gptj', punkt: TRAINED_PUNKT })).accuracyDtype).toBe('int64');
    await expect(scoreAccuracy({ log: folder, dataset, benchmark: 'gptj', punkt: TRAINED_PUNKT })).rejects.toThrow(/holds token ids \(int64\): give --tokenizer/);
    // Read as int32, these int64 ids interleave with 0s (the toy's special token, skipped): the benchmark's dtype is what is used.
    const int32 = await scoreAccuracy({ log: folder, dataset, tokenizer: toy, benchmark: 'llama2-70b', punkt: TRAINED_PUNKT });
    expect(int32.accuracyDtype).toBe('int32');
  });

  it('holds llama2-70b to its targets: ROUGE and the token window pass, then tokens per sample fails', async () => {
    const folder = dir();
    const reference = 'The cat sat on the mat.';
    const many = Array.from({ length: 300 }, (_, i) => (i < 8 ? [1, 2, 3, 4, 5, 6, 7][i] ?? 7 : 0));
    const dataset = writeDataset(folder, [{ input: 'q', output: reference }]);
    writeLog(folder, [{ qsl: 0, bytes: encodeTokenIds([1, 2, 3, 4, 5, 6, 7, ...many.slice(7)], 'int32') }]);
    const pass = await scoreAccuracy({ log: folder, dataset, tokenizer: toy, benchmark: 'llama2-70b', punkt: TRAINED_PUNKT });
    expect(pass.metrics['tokens_per_sample']).toBe(300);
    expect(pass.verdicts!.map((v) => [v.metric, v.bound, v.status])).toEqual([
      ['rouge1', 'min', 'pass'], ['rouge2', 'min', 'pass'], ['rougeL', 'min', 'pass'], ['tokens_per_sample', 'min', 'pass'], ['tokens_per_sample', 'max', 'pass'],
    ]);
    expect(pass.passed).toBe(true);
    expect(pass.otherVariants).toEqual([{ benchmark: 'llama2-70b-99.9', passed: true }]);
    writeLog(folder, [{ qsl: 0, bytes: encodeTokenIds([1, 2, 3, 4, 5, 6, 7], 'int32') }]);
    const fail = await scoreAccuracy({ log: folder, dataset, tokenizer: toy, benchmark: 'llama2-70b', punkt: TRAINED_PUNKT });
    expect(fail.verdicts!.find((v) => v.metric === 'tokens_per_sample' && v.bound === 'min')).toMatchObject({ value: 7, status: 'fail', threshold: 294.45 * 0.9 });
    expect(fail.passed).toBe(false);
  });
});

describe("Mixtral's subsets", () => {
  it('scores OpenOrca ROUGE and GSM8K, reports MBXP as not scored, counts duplicates in gen_num as its evaluator does', async () => {
    const folder = dir();
    const dataset = writeDataset(folder, [
      { input: 'a', gt_output: 'The cat sat on the mat.', dataset: 'OpenOrca' },
      { input: 'b', gt_output: '1234', dataset: 'GSM8K' },
      { input: 'c', gt_output: '7', dataset: 'GSM8K' },
      { input: 'd', gt_output: 'def f(): pass', dataset: 'MBXP' },
    ]);
    writeLog(folder, [
      { qsl: 0, bytes: text('The cat sat on the mat.') },
      { qsl: 1, bytes: text('So 1,000 + 234 = 1,234. The answer is 1,234.\nQ: what is 5?') },
      { qsl: 2, bytes: text('The answer is 8') },
      { qsl: 3, bytes: text('def f(): return 1') },
      { qsl: 2, bytes: text('The answer is 7') },
    ]);
    const report = await scoreAccuracy({ log: folder, dataset, benchmark: 'mixtral-8x7b', punkt: TRAINED_PUNKT, logData: 'text' });
    expect(report.counts.subsets).toEqual({ OpenOrca: 1, GSM8K: 2, MBXP: 1 });
    expect(report.metrics).toMatchObject({ rouge1: 100, gsm8k: 50, gen_len: 23, gen_num: 5 });
    expect(report.verdicts!.find((v) => v.metric === 'mbxp')).toMatchObject({ status: 'not scored', value: null });
    expect(report.verdicts!.find((v) => v.metric === 'tokens_per_sample')).toMatchObject({ status: 'not scored' });
    expect(report.passed).toBe(false);
  });
});

describe("Llama 3.1 405B's per-sample metrics", () => {
  it('averages rougeL over rouge samples and exact_match over niah_em/qa_em samples', async () => {
    const folder = dir();
    const u = '0123abcd-0000-1111-2222-333344445555';
    const dataset = writeDataset(folder, [
      { input: 'a', gt_output: 'The cat sat on the mat.', metric: 'rouge' },
      { input: 'b', gt_output: `key ${u}`, metric: 'niah_em' },
      { input: 'c', gt_output: 'Paris|paris, france', metric: 'qa_em' },
    ]);
    writeLog(folder, [{ qsl: 0, bytes: text('The cat sat.') }, { qsl: 1, bytes: text(`It is ${u}`) }, { qsl: 2, bytes: text('Answer: Lyon') }]);
    const report = await scoreAccuracy({ log: folder, dataset, benchmark: 'llama3.1-405b', punkt: TRAINED_PUNKT });
    expect(report.counts.subsets).toEqual({ rouge: 1, niah_em: 1, qa_em: 1 });
    expect(report.metrics['exact_match']).toBe(50);
    expect(report.metrics['rougeL']).toBeCloseTo((100 * 2 * (3 / 3) * (3 / 6)) / (3 / 3 + 3 / 6), 10);
  });
});

describe("MLCommons' GSM8K and exact-match functions (oracle cases)", () => {
  const fixture = JSON.parse(readFileSync(join(FIXTURES, 'mlcommons-metrics.json'), 'utf8')) as { gsm8k: Array<[string, string, string, boolean]>; exactMatch: Array<[string, string, number, number]> };
  it(`extracts and judges ${fixture.gsm8k.length} GSM8K answers as mixtral's evaluate-accuracy.py`, () => {
    const wrong = fixture.gsm8k.filter(([prediction, reference, number, correct]) => gsm8kAnswer(prediction.split('\nQ:')[0]!).replace(/,/g, '') !== number || gsm8kCorrect(prediction, reference) !== correct);
    expect(wrong.slice(0, 5)).toEqual([]);
  });
  it(`scores ${fixture.exactMatch.length} niah_em / qa_em cases as llama3.1-405b's evaluate-accuracy.py`, () => {
    const wrong = fixture.exactMatch.filter(([label, prediction, niah, qa]) => niahExactMatch(label, prediction) !== niah || qaExactMatch(label, prediction) !== qa);
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});

describe('top-1 of a classification log', () => {
  it('reads float32 logits (argmax) or a single class, against val_map.txt, printed to 3 places', async () => {
    const folder = dir();
    const labels = join(folder, 'val_map.txt');
    writeFileSync(labels, 'img0.JPEG 2\nimg1.JPEG 0\nimg2.JPEG 1\n');
    const f32 = (values: number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);
    writeLog(folder, [{ qsl: 0, bytes: f32([0.1, 0.2, 0.9]) }, { qsl: 1, bytes: f32([0.5, 0.5, 0.1]) }, { qsl: 2, bytes: f32([2]) }, { qsl: 0, bytes: f32([1, 0, 0]) }]);
    const report = await scoreAccuracy({ log: folder, labels, benchmark: 'resnet50' });
    expect(report.metrics).toEqual({ accuracy: pythonRound(200 / 3, 3), good: 2, total: 3 });
    expect(report.verdicts![0]).toMatchObject({ metric: 'accuracy', status: 'fail', threshold: 76.46 * 0.99 });
    const offset = await scoreAccuracy({ log: folder, labels, labelOffset: -1 });
    expect(offset.metrics['good']).toBe(0);
  });
});

describe('bad input, named', () => {
  it('refuses a qsl_idx beyond the data set, non-hex data, a log that is not an array, an empty log', async () => {
    const folder = dir();
    const dataset = writeDataset(folder, [{ input: 'q', output: 'x' }]);
    writeLog(folder, [{ qsl: 3, bytes: text('hi') }]);
    await expect(scoreAccuracy({ log: folder, dataset })).rejects.toThrow(/entry 0 field 'qsl_idx': 3 is beyond the data set .*1 samples/);
    const log = join(folder, 'mlperf_log_accuracy.json');
    writeFileSync(log, JSON.stringify([{ seq_id: 0, qsl_idx: 0, data: 'XYZ' }]));
    await expect(scoreAccuracy({ log, dataset })).rejects.toThrow(/entry 0 field 'data': is not hex/);
    writeFileSync(log, JSON.stringify({ qsl_idx: 0 }));
    await expect(scoreAccuracy({ log, dataset })).rejects.toThrow(DatasetError);
    writeFileSync(log, '[]');
    await expect(scoreAccuracy({ log, dataset })).rejects.toThrow(/no entries/);
    writeFileSync(log, JSON.stringify([{ seq_id: 0, qsl_idx: 0, data: 'FFFE' }]));
    await expect(scoreAccuracy({ log, dataset, accuracyDtype: 'int32' })).rejects.toThrow(/neither int32 token ids nor UTF-8 text/);
  });

  it('refuses an unknown benchmark, a missing data set or label file, float32 for ids', async () => {
    const folder = dir();
    writeLog(folder, [{ qsl: 0, bytes: text('hi') }]);
    expect(() => accuracyBenchmark('llama9')).toThrow(SettingsError);
    await expect(scoreAccuracy({ log: folder, benchmark: 'llama9' })).rejects.toThrow(/--benchmark llama9: not a benchmark/);
    await expect(scoreAccuracy({ log: folder })).rejects.toThrow(/give --dataset/);
    await expect(scoreAccuracy({ log: folder, benchmark: 'resnet50' })).rejects.toThrow(/give --labels/);
    await expect(scoreAccuracy({ log: folder, dataset: 'x.json', accuracyDtype: 'float32' })).rejects.toThrow(/float32 is for classification/);
    await expect(scoreAccuracy({ log: join(folder, 'nope') })).rejects.toThrow(/no such file or folder/);
  });

  it('accepts interactive and dotted names', () => {
    expect(accuracyBenchmark('llama2-70b-interactive-99.9').name).toBe('llama2-70b-99.9');
    expect(accuracyBenchmark('llama3.1-8b').name).toBe('llama3_1-8b');
    expect(accuracyBenchmark('llama3_1-8b-interactive').name).toBe('llama3_1-8b');
  });
});
