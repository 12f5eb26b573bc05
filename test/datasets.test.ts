import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { ACCURACY_DTYPE_BY_BENCHMARK, accuracyDtypeFor, decodeTokenIds, encodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { MAX_RECORD_BYTES } from '../lib/datasets/json-records.js';
import { pickleConversionCommand, readDataset } from '../lib/datasets/read.js';
import { DatasetError } from '../lib/errors.js';
import { tempDir } from './helpers.js';

const dir = tempDir('loadgen-datasets-');
const fixtures = join(import.meta.dirname, 'fixtures');
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function failure(path: string, options: Parameters<typeof readDataset>[1] = {}): Promise<DatasetError> {
  const error = await readDataset(path, options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DatasetError);
  return error as DatasetError;
}

// MLPerf's cnn_eval.json: a JSON array of { instruction, input, tok_input, output }.
const cnnEval = [
  { instruction: 'Summarize', input: 'The cat sat on the mat.\nIt purred.', tok_input: [128000, 791, 8415, 7731], output: 'A cat sat.' },
  { instruction: 'Summarize', input: 'Text with "quotes", [brackets] and {braces} \\ é', tok_input: [128000, 1199], output: 'Quotes.' },
  { instruction: 'Summarize', input: 'Third', tok_input: [128000, 5], output: 'T', max_new_tokens: 128, min_new_tokens: 30, ignore_eos: true, temperature: 0 },
];

describe('readDataset: JSON arrays (cnn_eval.json)', () => {
  it('reads token-id prompts, targets and generation parameters, formatted over lines or on one', async () => {
    for (const text of [JSON.stringify(cnnEval, null, 2), JSON.stringify(cnnEval), `\ufeff ${JSON.stringify(cnnEval)}\n`]) {
      const d = await readDataset(file('cnn_eval.json', text), { targets: 'required', fields: ['instruction'] });
      expect(d.format).toBe('json');
      expect(d.idPrompts).toBe(3);
      expect(d.samples.map((s) => Array.from(s.promptIds!))).toEqual(cnnEval.map((r) => r.tok_input));
      expect(d.samples.map((s) => s.target)).toEqual(['A cat sat.', 'Quotes.', 'T']);
      expect(d.samples[0]!.fields).toEqual({ instruction: 'Summarize' });
      expect(d.samples[2]).toMatchObject({ maxTokens: 128, minTokens: 30, ignoreEos: true, temperature: 0 });
      expect(d.samples[0]!.prompt).toBeUndefined();
    }
  });

  it('takes the text prompt with --prompt-field input, and a file named .jsonl holding an array is still an array', async () => {
    const d = await readDataset(file('as-text.jsonl', JSON.stringify(cnnEval)), { promptField: 'input' });
    expect(d.format).toBe('json');
    expect(d.samples[1]!.prompt).toBe(cnnEval[1]!.input);
    expect(d.textPrompts).toBe(3);
  });

  it('names the line and sample index of a bad element', async () => {
    const records = [cnnEval[0], { ...cnnEval[1], tok_input: [1, -2] }];
    const error = await failure(file('bad-ids.json', JSON.stringify(records, null, 1)));
    expect(error.message).toMatch(/bad-ids\.json:\d+ \(sample 1\): tok_input: .*\[1\] is number -2, not a token id \(an integer in 0\.\.2147483647\)/);
    expect(error.line).toBeGreaterThan(5);
    expect(error.field).toBe('tok_input');
  });

  const broken: [string, string, RegExp][] = [
    ['not an array', '{"prompt": "a"}\n{"b": ', /:2: not valid JSON/],
    ['not closed', '[{"input": "a"}', /the JSON array is not closed/],
    ['element not closed', '[{"input": "a"', /element 0 \(line 1\) is not closed/],
    ['trailing comma', '[{"input": "a"},]', /no trailing comma/],
    ['missing comma', '[{"input": "a"} {"input": "b"}]', /element 1: a ',' is missing/],
    ['scalar element', '[{"input": "a"}, 3]', /element 1: must be a JSON object/],
    ['text after', '[{"input": "a"}] x', /text after the end of the JSON array/],
    ['bad JSON inside', '[\n{"input": "a",}\n]', /:2 \(sample 0\): not valid JSON/],
    ['empty array', '[]', /has no samples/],
    ['empty file', '', /is empty \(a JSON array of records was expected\)/],
  ];
  for (const [what, text, message] of broken) {
    it(`refuses a malformed array (${what})`, async () => {
      const name = what === 'not an array' ? `bad-${what.replace(/\W/g, '_')}.jsonl` : `bad-${what.replace(/\W/g, '_')}.json`;
      expect((await failure(file(name, text))).message).toMatch(message);
    });
  }

  it('reads an array split across read chunks (records larger than a chunk)', async () => {
    const long = 'x'.repeat(3 << 20);
    const d = await readDataset(file('long.json', JSON.stringify([{ input: long }, { input: 'b"]}' }, { input: long.slice(7) }])));
    expect(d.samples.map((s) => s.prompt!.length)).toEqual([long.length, 4, long.length - 7]);
    expect(MAX_RECORD_BYTES).toBeGreaterThan(long.length);
  });
});

describe('readDataset: JSONL', () => {
  it('keeps the JSONL behaviour: prompt or messages, blank lines skipped, lines named', async () => {
    const d = await readDataset(file('p.jsonl', '{"prompt": "a", "max_tokens": 3}\n\n{"messages": [{"role": "user", "content": "b"}]}\n{"tok_input": [1, 2]}\r\n'));
    expect(d.format).toBe('jsonl');
    expect(d.samples).toHaveLength(3);
    expect(d.samples[0]).toEqual({ prompt: 'a', maxTokens: 3 });
    expect(d.samples[1]!.messages).toHaveLength(1);
    expect(Array.from(d.samples[2]!.promptIds!)).toEqual([1, 2]);
    const error = await failure(file('q.jsonl', '{"prompt": "a"}\n\n{"prompt": "b", "min_tokens": 5, "max_tokens": 4}\n'));
    expect(error.message).toMatch(/q\.jsonl:3: min_tokens: 5 is more than max_tokens 4/);
    expect(error.line).toBe(3);
  });

  const bad: [string, string, RegExp][] = [
    ['both spellings', '{"prompt": "a", "max_tokens": 3, "max_new_tokens": 4}', /:2: max_new_tokens: disagrees with "max_tokens" \(3 and 4\)/],
    ['ignore_eos', '{"prompt": "a", "ignore_eos": "yes"}', /:2: ignore_eos: must be true or false, got "yes"/],
    ['temperature', '{"prompt": "a", "temperature": -1}', /:2: temperature: must be a number in 0\.\.100, got -1/],
    ['ids empty', '{"tok_input": []}', /:2: tok_input: .*non-empty array of token ids/],
    ['ids fraction', '{"tok_input": [1, 2.5]}', /:2: tok_input: .*\[1\] is number 2\.5, not a token id/],
    ['ids too large', '{"tok_input": [2147483648]}', /:2: tok_input: .*\[0\] is number 2147483648/],
    ['two text fields', '{"input": "a", "prompt": "b"}', /:2: has both "input" and "prompt"; give one/],
    ['no prompt', '{"text": "a"}', /:2: needs "prompt" \(a string\) or "messages".*"tok_input"/],
  ];
  for (const [what, line, message] of bad) {
    it(`refuses a bad line (${what}) naming the file, line and field`, async () => {
      const error = await failure(file(`bad-${what.replace(/\W/g, '_')}.jsonl`, `{"prompt": "ok"}\n${line}`));
      expect(error.message).toMatch(message);
      expect(error.line).toBe(2);
    });
  }

  it('refuses the prompt kinds the caller cannot send, with its reason', async () => {
    const path = file('kinds.jsonl', '{"prompt": "a"}\n{"tok_input": [5]}\n');
    const error = await failure(path, { refuse: { ids: 'token ids are for --api completions or sglang' } });
    expect(error.message).toMatch(/kinds\.jsonl:2: tok_input: token ids are for --api completions or sglang/);
    expect((await failure(path, { tokenIdLimit: 5 })).message).toMatch(/\[0\] is number 5, not a token id \(an integer in 0\.\.4 \(the tokenizer's vocabulary\)\)/);
    expect((await failure(path, { promptField: 'question' })).message).toMatch(/:1: question: is missing \(--prompt-field/);
    expect((await failure(path, { targets: 'required' })).message).toMatch(/:1: output: is missing: the reference output is needed/);
    const d = await readDataset(path, { targets: 'optional' });
    expect(d.samples[0]!.target).toBeUndefined();
  });

  it('yields to the event loop while a large file is read, and stops on its signal', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `{"tok_input": [${i}, 1, 2, 3], "output": "o"}`).join('\n');
    const path = file('large.jsonl', lines);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const d = await readDataset(path);
    clearInterval(timer);
    expect(d.samples).toHaveLength(200_000);
    expect(ticks).toBeGreaterThan(0);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('interrupted')), 5);
    await expect(readDataset(path, { signal: controller.signal })).rejects.toThrow('interrupted');
  });

  it('names an unreadable file', async () => {
    expect((await failure(join(dir, 'absent.jsonl'))).message).toMatch(/absent\.jsonl: cannot be read/);
  });

  it.skipIf(process.platform === 'win32')('reads a pipe once, whole (its format from its name): the writer never sees a closed pipe', async () => {
    for (const [name, text] of [['piped.jsonl', '{"prompt":"a"}\n{"prompt":"b"}\n'], ['piped.json', JSON.stringify(cnnEval)]] as const) {
      const fifo = join(dir, name);
      execFileSync('mkfifo', [fifo]);
      const reading = readDataset(fifo);
      const writer = await open(fifo, 'w');
      for (let i = 0; i < 4; i++) await writer.write(i === 0 ? text : '');
      await writer.close();
      const dataset = await reading;
      expect(dataset.samples.length).toBe(name.endsWith('.jsonl') ? 2 : cnnEval.length);
    }
    const parquetPipe = join(dir, 'piped.parquet');
    execFileSync('mkfifo', [parquetPipe]);
    expect((await failure(parquetPipe)).message).toMatch(/Parquet is read by random access; give a regular file, not a pipe/);
  });
});

describe('readDataset: Parquet (as pandas writes it)', () => {
  it('reads snappy-compressed list<int64> token ids, text, targets and kept fields', async () => {
    const d = await readDataset(join(fixtures, 'mlperf-snappy.parquet'), { targets: 'required', fields: ['dataset'] });
    expect(d.format).toBe('parquet');
    expect(d.samples.map((s) => Array.from(s.promptIds!))).toEqual([
      [128000, 12, 345, 6789],
      [128000, 22, 33],
    ]);
    expect(d.samples.map((s) => s.target)).toEqual(['cat sat', 'dog ran']);
    expect(d.samples[1]!.fields).toEqual({ dataset: 'GSM8K' });
    const text = await readDataset(join(fixtures, 'mlperf-snappy.parquet'), { promptField: 'input' });
    expect(text.samples[0]!.prompt).toBe('Summarize: the cat sat');
  });

  it('reads zstd row groups one after another, with per-row parameters', async () => {
    const d = await readDataset(join(fixtures, 'mlperf-zstd-groups.parquet'), { targets: 'required' });
    expect(d.samples).toHaveLength(5);
    expect(d.samples.map((s) => s.promptIds!.length)).toEqual([1, 2, 3, 4, 5]);
    expect(d.samples.map((s) => s.maxTokens)).toEqual([4, 5, 6, 7, 8]);
    expect(d.samples[4]!.target).toBe('o4');
  });

  it('names the row of a bad value (gzip)', async () => {
    const error = await failure(join(fixtures, 'mlperf-bad-ids.parquet'));
    expect(error.message).toMatch(/mlperf-bad-ids\.parquet: row 1: tok_input: .*\[1\] is number -4, not a token id/);
    expect(error.line).toBe(2);
  });

  it('refuses a file that is not Parquet, and one without a prompt column', async () => {
    expect((await failure(file('fake.parquet', 'PAR1 not really'))).message).toMatch(/cannot be read as Parquet/);
    expect((await failure(join(fixtures, 'mlperf-snappy.parquet'), { promptField: 'question' })).message).toMatch(/none of its columns \(input, tok_input, output, dataset\) is a prompt field/);
  });
});

describe('readDataset: pickled DataFrames', () => {
  it('refuses a .pkl with the pandas command that converts it', async () => {
    const error = await failure(join(fixtures, 'mlperf-like.pkl'));
    expect(error.message).toContain('a pickled pandas DataFrame cannot be read here');
    expect(error.message).toContain(pickleConversionCommand(join(fixtures, 'mlperf-like.pkl')));
    expect(pickleConversionCommand("/d/it's.pkl")).toBe(`python3 -c "import pandas as pd; pd.read_pickle('/d/it\\'s.pkl').to_parquet('/d/it\\'s.parquet')"`);
  });

  // pandas and pyarrow install from the offline pip mirror; where they are not installed the command cannot be run here.
  const pandas = spawnSync('python3', ['-c', 'import pandas, pyarrow'], { stdio: 'ignore' }).status === 0;
  it.runIf(pandas)('the command converts MLPerf-shaped pickles into Parquet this reader reads', async () => {
    const pkl = join(dir, 'converted.pkl');
    copyFileSync(join(fixtures, 'mlperf-like.pkl'), pkl);
    execFileSync('bash', ['-c', pickleConversionCommand(pkl)]);
    const d = await readDataset(join(dir, 'converted.parquet'), { targets: 'required' });
    expect(d.samples.map((s) => Array.from(s.promptIds!))).toEqual([
      [128000, 12, 345, 6789],
      [128000, 22, 33],
    ]);
  });
});

describe('token ids in the accuracy log', () => {
  it('encodes little-endian int32 and int64 as numpy reads them, and back', () => {
    const ids = [0, 1, 128000, 2 ** 31 - 1];
    expect(Buffer.from(encodeTokenIds(ids, 'int32')).toString('hex')).toBe('000000000100000000f40100ffffff7f');
    expect(Buffer.from(encodeTokenIds([1, 128000], 'int64')).toString('hex')).toBe('010000000000000000f4010000000000');
    for (const dtype of ['int32', 'int64'] as const) expect(Array.from(decodeTokenIds(encodeTokenIds(ids, dtype), dtype))).toEqual(ids);
    expect(() => decodeTokenIds(new Uint8Array(6), 'int32')).toThrow(/not a whole number of int32/);
    expect(() => decodeTokenIds(Buffer.from('68656c6c6f2121', 'hex').subarray(0, 4), 'int32')).not.toThrow();
    expect(() => decodeTokenIds(encodeTokenIds([5], 'int32'), 'int64')).toThrow(/not a whole number/);
    expect(() => decodeTokenIds(Buffer.from('ffffffff00000000', 'hex'), 'int64')).toThrow(/id 0 is 4294967295, not a token id/);
  });

  it('defaults per benchmark as the references write and their evaluators are run', () => {
    expect(accuracyDtypeFor(undefined)).toBe('int32');
    expect(accuracyDtypeFor('gptj')).toBe('int64');
    expect(accuracyDtypeFor('llama2-70b-interactive')).toBe('int32');
    expect(accuracyDtypeFor('llama3.1-8b')).toBe('int32');
    expect(accuracyDtypeFor('resnet50')).toBe('int32');
    expect(Object.keys(ACCURACY_DTYPE_BY_BENCHMARK).sort()).toEqual(['deepseek-r1', 'gpt-oss-120b', 'gptj', 'llama2-70b', 'llama3_1-405b', 'llama3_1-8b', 'mixtral-8x7b']);
  });
});
