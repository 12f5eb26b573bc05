/**
 * `loadgen accuracy` from the command line: the human report and --json,
 * exit 0 / 1 / 2, and the errors that name the file and the entry.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { encodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { loadTokenizer } from '../lib/tokenizer/index.js';
import { repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const TRAINED_PUNKT = join(__dirname, 'fixtures', 'accuracy', 'punkt-trained');

function loadgen(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NLTK_DATA: '/nonexistent-nltk-data' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex').toUpperCase();

function writeSet(predictions: string[], references: string[]): { folder: string; dataset: string } {
  const folder = tempDir('loadgen-accuracy-cli-');
  const dataset = join(folder, 'data.json');
  writeFileSync(dataset, JSON.stringify(references.map((output, i) => ({ input: `article ${i}`, output }))));
  writeFileSync(join(folder, 'mlperf_log_accuracy.json'), JSON.stringify(predictions.map((p, i) => ({ seq_id: i, qsl_idx: i, data: hex(p) }))));
  return { folder, dataset };
}

describe('loadgen accuracy', () => {
  it('prints the figures as MLCommons does and exits 0 without targets', () => {
    const { folder, dataset } = writeSet(['The cat sat on the mat. It was happy.'], ['The cat sat on the mat. It was happy.']);
    const r = loadgen(['accuracy', folder, '--dataset', dataset, '--punkt', TRAINED_PUNKT]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("{'rouge1': 100.0, 'rouge2': 100.0, 'rougeL': 100.0, 'rougeLsum': 100.0, 'gen_len': 37, 'gen_num': 1, 'exact_match': 100.0}");
    expect(r.stdout).toContain('Log data:     UTF-8 text (no token ids in this log)');
    expect(r.stdout).toContain(`Sentences:    NLTK's Punkt model from ${TRAINED_PUNKT}`);
  });

  it('checks a benchmark: one line per target, exit 1 when one fails, the other variant too', () => {
    const { folder, dataset } = writeSet(['The cat sat on the mat.'], ['The cat sat on the mat.']);
    const r = loadgen(['accuracy', join(folder, 'mlperf_log_accuracy.json'), '--dataset', dataset, '--benchmark', 'gptj']);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/PASS\s+rouge1\s+100\.0 >= 42\.556635/);
    expect(r.stdout).toMatch(/FAIL\s+gen_len\s+23 >= 3615190\.2/);
    expect(r.stdout).toContain('Accuracy: FAIL (1 target missed, 0 not scored)');
    expect(r.stdout).toContain('gptj-99.9: would not pass');
    expect(r.stdout).toContain("Sentences:    loadgen's built-in approximation");
  });

  it('prints one JSON document with --json', () => {
    const { folder, dataset } = writeSet(['It rained.'], ['It rained in Paris.']);
    const r = loadgen(['accuracy', folder, '--dataset', dataset, '--benchmark', 'mixtral-8x7b', '--target-field', 'output', '--json']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/field 'dataset'/);
    const ok = loadgen(['accuracy', folder, '--dataset', dataset, '--benchmark', 'llama3_1-8b', '--json']);
    expect(ok.status).toBe(1);
    const report = JSON.parse(ok.stdout) as { benchmark: string; logData: string; accuracyDtype: string; sentenceSplitter: { kind: string }; verdicts: Array<{ metric: string; status: string }>; counts: { unique: number } };
    expect(report).toMatchObject({ benchmark: 'llama3_1-8b', logData: 'text', accuracyDtype: 'int32', sentenceSplitter: { kind: 'builtin' }, counts: { unique: 1 } });
    expect(report.verdicts.map((v) => v.metric)).toEqual(['rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'gen_len', 'gen_len']);
  });

  it('exits 2 naming the file and the entry for a log that does not fit', () => {
    const { folder, dataset } = writeSet(['x'], ['y']);
    writeFileSync(join(folder, 'mlperf_log_accuracy.json'), JSON.stringify([{ seq_id: 0, qsl_idx: -1, data: '00' }]));
    const r = loadgen(['accuracy', folder, '--dataset', dataset]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${join(folder, 'mlperf_log_accuracy.json')}: entry 0 field 'qsl_idx': must be an integer >= 0, found -1`);
    const badName = loadgen(['accuracy', folder, '--dataset', dataset, '--benchmark', 'gpt5']);
    expect(badName.status).toBe(2);
    expect(badName.stderr).toContain('--benchmark gpt5: not a benchmark with accuracy targets');
    const badDtype = loadgen(['accuracy', folder, '--dataset', dataset, '--accuracy-dtype', 'int16']);
    expect(badDtype.status).toBe(2);
  });
});

describe('loadgen bench --accuracy', () => {
  it('generates a CNN-sized set (500 samples with --tiny) and times loadgen accuracy on it', () => {
    const r = spawnSync(process.execPath, [cli, 'bench', '--accuracy', '--tiny', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { samples: number; wallSeconds: number; predictionChars: number; metrics: Record<string, number> };
    expect(report.samples).toBe(500);
    expect(report.wallSeconds).toBeGreaterThan(0);
    expect(report.metrics['gen_num']).toBe(500);
    expect(report.metrics['gen_len']).toBe(report.predictionChars);
  });
});

describe('token-id logs decoded with a real tokenizer (Llama 3.1 and Llama 2 tokenizer.json from the dev dependencies)', () => {
  const fixtures = join(__dirname, 'fixtures', 'accuracy');
  const pairs = (JSON.parse(readFileSync(join(fixtures, 'rouge-cnn-pairs.json'), 'utf8')) as { pairs: Array<{ reference: string; prediction: string }> }).pairs;
  const expected = JSON.parse(readFileSync(join(fixtures, 'rouge-cnn-token-ids.json'), 'utf8')) as Record<string, { cleanUp: boolean; eos: number; mlperf: Record<string, number> }>;

  it.each([
    ['llama3_1', 'llama3_1-8b', 'int32'],
    ['llama2', 'llama2-70b', 'int32'],
    ['llama3_1', 'gptj', 'int64'],
  ] as const)('%s ids scored as %s (%s): the figures of MLCommons\' evaluation with transformers 4.x decoding', async (name, benchmark, dtype) => {
    const file = join(repoRoot, 'node_modules', '@lenml', `tokenizer-${name}`, 'models', 'tokenizer.json');
    const tokenizer = await loadTokenizer(file);
    const folder = tempDir('loadgen-accuracy-ids-');
    const dataset = join(folder, 'data.json');
    writeFileSync(dataset, JSON.stringify(pairs.map((p, i) => ({ input: `article ${i}`, output: p.reference }))));
    const log = pairs.map((p, i) => ({ seq_id: i, qsl_idx: i, data: Buffer.from(encodeTokenIds([...tokenizer.encode(p.prediction), expected[name]!.eos], dtype)).toString('hex').toUpperCase() }));
    writeFileSync(join(folder, 'mlperf_log_accuracy.json'), JSON.stringify(log));
    const r = loadgen(['accuracy', folder, '--dataset', dataset, '--tokenizer', file, '--benchmark', benchmark, '--punkt', TRAINED_PUNKT, '--json']);
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as { logData: string; accuracyDtype: string; cleanUpTokenizationSpaces: boolean; tokenCounts: string; metrics: Record<string, number> };
    expect(report).toMatchObject({ logData: 'token-ids', accuracyDtype: dtype, cleanUpTokenizationSpaces: expected[name]!.cleanUp, tokenCounts: 'log ids' });
    const want = expected[name]!.mlperf;
    for (const key of ['rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'gen_len', 'gen_num']) expect([key, report.metrics[key]]).toEqual([key, want[key]]);
    if (benchmark === 'llama2-70b') expect([report.metrics['gen_tok_len'], report.metrics['tokens_per_sample']]).toEqual([want['gen_tok_len'], want['tokens_per_sample']]);
  });
});
