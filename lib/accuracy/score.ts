/**
 * scoreAccuracy: an accuracy log scored the way MLCommons' evaluator of its
 * benchmark scores it (see targets.ts for which evaluator each follows),
 * then held to the rules' targets. The log is read and checked, de-duplicated
 * by qsl_idx, decoded (token ids through the tokenizer with special tokens
 * skipped, or UTF-8 text), matched to the data set's references by qsl_idx,
 * post-processed (strip, sentences joined by newlines) and scored.
 */
import { readDataset } from '../datasets/read.js';
import { accuracyDtypeFor, decodeTokenIds, type AccuracyDtype } from '../datasets/accuracy-ids.js';
import type { DatasetSample } from '../datasets/types.js';
import { DatasetError, SettingsError } from '../errors.js';
import { scoreClassification } from './classification.js';
import { detectLogData, readAccuracyLog, type AccuracyLog, type LogDataKind } from './log.js';
import { codePointLength, exactMatch, gsm8kCorrect, niahExactMatch, postprocessText, qaExactMatch } from './metrics.js';
import { numpyMean, numpyRound, numpySum, pythonRound } from './numeric.js';
import { PunktSentenceTokenizer } from './punkt.js';
import { sentenceSplitterParameters, type Environment, type SentenceSplitterInfo } from './punkt-params.js';
import { MLPERF_ROUGE_TYPES, RougeScorer } from './rouge.js';
import { accuracyBenchmark, type AccuracyBenchmark, type AccuracyTarget, type ScorerKind } from './targets.js';

/** What scoring needs of a tokenizer (lib/tokenizer's Tokenizer has it). */
export interface AccuracyTokenizer {
  /** Decodes ids; `cleanUpTokenizationSpaces`, when given, overrides the tokenizer's own setting. */
  decode(ids: readonly number[], options: { skipSpecialTokens: boolean; cleanUpTokenizationSpaces?: boolean }): string;
  encode?(text: string): ArrayLike<number>;
  /** Ids at or above it are not the tokenizer's (helps tell ids from text). */
  readonly vocabularySize?: number;
  /** The tokenizer's own clean_up_tokenization_spaces (its tokenizer_config.json), for the report. */
  readonly cleanUpTokenizationSpaces?: boolean;
}

/** Options of {@link scoreAccuracy}. */
export interface AccuracyOptions {
  /** mlperf_log_accuracy.json, or the log folder holding it. */
  log: string;
  /** The data set with the references (MLPerf's JSON array, JSONL or Parquet). Not for classification. */
  dataset?: string;
  /** A classification label file (ImageNet's val_map.txt: 'name label' per line) for top-1. */
  labels?: string;
  /** Decodes token ids; needed when the log holds ids. */
  tokenizer?: AccuracyTokenizer;
  /** Overrides the tokenizer's clean_up_tokenization_spaces (default: its tokenizer_config.json's, as transformers decodes). */
  cleanUpTokenizationSpaces?: boolean;
  /** How the ids are stored; default per benchmark as MLCommons' harnesses write them. float32 for classification logits. */
  accuracyDtype?: AccuracyDtype | 'float32';
  /** Score as this benchmark's evaluator and check its targets (e.g. 'llama2-70b', 'llama3_1-8b'). */
  benchmark?: string;
  /** A punkt_tab folder with NLTK's English model; default: found where NLTK keeps it, else the built-in approximation. */
  punkt?: string;
  /** The data set's reference field (default: the benchmark's, else 'output'). */
  targetField?: string;
  /** Force reading the log's data as ids or as text instead of detecting it. */
  logData?: LogDataKind;
  /** Subtracted from a classification log's class (1 for a model with a background class 0). */
  labelOffset?: number;
  /** Environment for finding NLTK data (default process.env). */
  env?: Environment;
}

/** One target checked. */
export interface AccuracyVerdict extends AccuracyTarget {
  /** The figure compared (as MLCommons prints it), null when it could not be computed. */
  readonly value: number | null;
  readonly status: 'pass' | 'fail' | 'not scored';
}

/** The result of scoring a log. */
export interface AccuracyReport {
  readonly logFile: string;
  readonly datasetFile?: string;
  /** The benchmark variant checked (e.g. 'llama2-70b-99'), absent without --benchmark. */
  readonly benchmark?: string;
  readonly scorer: ScorerKind | 'generic';
  /** What the log's data held. */
  readonly logData: LogDataKind | 'values';
  readonly accuracyDtype: AccuracyDtype | 'float32';
  /** The sentence splitter of the ROUGE-Lsum post-processing (absent when no text was split). */
  readonly sentenceSplitter?: SentenceSplitterInfo;
  readonly cleanUpTokenizationSpaces: boolean;
  readonly counts: {
    /** Entries in the log. */
    readonly entries: number;
    /** Distinct qsl_idx (the samples scored). */
    readonly unique: number;
    readonly duplicates: number;
    /** Samples in the data set or label file. */
    readonly referenceSamples: number;
    /** Per subset (Mixtral's dataset field, 405B's metric field). */
    readonly subsets?: Readonly<Record<string, number>>;
  };
  /** Figures by MLCommons' names (rouge1 … rougeLsum, gen_len, gen_num, gen_tok_len, tokens_per_sample, gsm8k, exact_match, accuracy). */
  readonly metrics: Readonly<Record<string, number>>;
  /** Where token counts came from: the log's ids, or the tokenizer re-encoding text. */
  readonly tokenCounts?: 'log ids' | 're-encoded text';
  readonly verdicts?: readonly AccuracyVerdict[];
  /** True when every target passed; false when one failed or could not be scored. */
  readonly passed?: boolean;
  /** The same figures held to the benchmark's other variants (e.g. 99.9 %). */
  readonly otherVariants?: ReadonlyArray<{ readonly benchmark: string; readonly passed: boolean }>;
}

interface Decoded {
  text: string;
  tokens: number | undefined;
}

function decodeEntries(log: AccuracyLog, kind: LogDataKind, dtype: AccuracyDtype, options: AccuracyOptions): { decoded: Decoded[]; tokenCounts?: 'log ids' | 're-encoded text' } {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const cleanUp = options.cleanUpTokenizationSpaces;
  if (kind === 'token-ids') {
    const tokenizer = options.tokenizer;
    if (tokenizer === undefined) throw new SettingsError('--tokenizer', undefined, `${log.file} holds token ids (${dtype}): give --tokenizer FILE (the model's tokenizer.json) to decode them`);
    const decoded = log.unique.map((entry) => {
      let ids: Int32Array;
      try {
        ids = decodeTokenIds(entry.bytes, dtype);
      } catch (error) {
        throw new DatasetError(log.file, entry.index + 1, 'data', `${log.file}: entry ${entry.index} field 'data': ${(error as Error).message}`);
      }
      let text: string;
      try {
        text = tokenizer.decode(Array.from(ids), { skipSpecialTokens: true, ...(cleanUp !== undefined ? { cleanUpTokenizationSpaces: cleanUp } : {}) });
      } catch (error) {
        throw new DatasetError(log.file, entry.index + 1, 'data', `${log.file}: entry ${entry.index} field 'data': the tokenizer cannot decode its ${ids.length} ${dtype} ids: ${(error as Error).message}`);
      }
      return { text, tokens: ids.length };
    });
    return { decoded, tokenCounts: 'log ids' };
  }
  const encode = options.tokenizer?.encode?.bind(options.tokenizer);
  const decoded = log.unique.map((entry) => {
    const text = utf8.decode(entry.bytes);
    return { text, tokens: encode !== undefined ? encode(text).length : undefined };
  });
  return encode !== undefined ? { decoded, tokenCounts: 're-encoded text' } : { decoded };
}

function referenceOf(sample: DatasetSample, field: string, file: string, index: number): string {
  if (sample.target !== undefined) return sample.target;
  throw new DatasetError(file, index + 1, field, `${file}: sample ${index} field '${field}': the reference must be text`);
}

function fieldText(sample: DatasetSample, field: string, file: string, index: number): string {
  const value = sample.fields?.[field];
  if (typeof value !== 'string') throw new DatasetError(file, index + 1, field, `${file}: sample ${index} field '${field}': must be a string, found ${JSON.stringify(value)}`);
  return value;
}

/** ROUGE of (prediction, reference) pairs after MLCommons' postprocess_text: MLPerf's mean F1 x 100 rounded to 4 places. */
function rougeFigures(predictions: string[], references: string[]): Record<string, number> {
  const scorer = new RougeScorer([...MLPERF_ROUGE_TYPES], { useStemmer: true });
  const f1: Record<string, Float64Array> = {};
  for (const type of MLPERF_ROUGE_TYPES) f1[type] = new Float64Array(predictions.length);
  predictions.forEach((prediction, i) => {
    const scores = scorer.score(references[i]!, prediction);
    for (const type of MLPERF_ROUGE_TYPES) f1[type]![i] = scores[type]!.fmeasure;
  });
  const out: Record<string, number> = {};
  if (predictions.length === 0) return out;
  for (const type of MLPERF_ROUGE_TYPES) out[type] = numpyRound(numpyMean(f1[type]!) * 100, 4);
  return out;
}

interface Scored {
  metrics: Record<string, number>;
  subsets?: Record<string, number>;
  split: boolean;
}

function sumTokens(decoded: Decoded[]): number | undefined {
  let total = 0;
  for (const d of decoded) {
    if (d.tokens === undefined) return undefined;
    total += d.tokens;
  }
  return total;
}

function scoreText(scorer: ScorerKind | 'generic', decoded: Decoded[], samples: DatasetSample[], file: string, field: string, fields: readonly string[], splitter: PunktSentenceTokenizer, entries: number): Scored {
  const metrics: Record<string, number> = {};
  const genTokLen = sumTokens(decoded);
  const withTokens = (count: number): void => {
    if (genTokLen === undefined) return;
    metrics['gen_tok_len'] = genTokLen;
    if (count > 0) metrics['tokens_per_sample'] = pythonRound(genTokLen / count, 1);
  };
  if (scorer === 'tokens-only') {
    if (genTokLen !== undefined && decoded.length > 0) metrics['tokens_per_sample'] = genTokLen / decoded.length;
    metrics['gen_num'] = decoded.length;
    return { metrics, split: false };
  }
  if (scorer === 'mixtral') {
    const subsets: Record<string, number> = {};
    const orcaPredictions: string[] = [];
    const orcaReferences: string[] = [];
    let gsmTotal = 0;
    let gsmCorrect = 0;
    samples.forEach((sample, i) => {
      const kind = fieldText(sample, fields[0]!, file, i);
      subsets[kind] = (subsets[kind] ?? 0) + 1;
      if (kind === 'OpenOrca') {
        orcaPredictions.push(postprocessText(decoded[i]!.text, splitter));
        orcaReferences.push(postprocessText(referenceOf(sample, field, file, i), splitter));
      } else if (kind === 'GSM8K') {
        gsmTotal++;
        if (gsm8kCorrect(decoded[i]!.text, referenceOf(sample, field, file, i))) gsmCorrect++;
      }
    });
    Object.assign(metrics, rougeFigures(orcaPredictions, orcaReferences));
    if (gsmTotal > 0) metrics['gsm8k'] = (100 * gsmCorrect) / gsmTotal;
    metrics['gen_len'] = orcaPredictions.reduce((n, p) => n + codePointLength(p), 0);
    // Mixtral's evaluator counts every log entry, duplicates included, in gen_num.
    metrics['gen_num'] = entries;
    if (genTokLen !== undefined) {
      metrics['gen_tok_len'] = genTokLen;
      if (entries > 0) metrics['tokens_per_sample'] = pythonRound(genTokLen / entries, 1);
    }
    return { metrics, subsets, split: true };
  }
  const predictions = decoded.map((d) => postprocessText(d.text, splitter));
  const references = samples.map((sample, i) => postprocessText(referenceOf(sample, field, file, i), splitter));
  if (scorer === 'llama3_1-405b') {
    const subsets: Record<string, number> = {};
    // pandas' describe() mean per metric column: the rows without it count as 0 in the sum, not in the count.
    const rougeL = new Float64Array(samples.length);
    const exact = new Float64Array(samples.length);
    let rougeCount = 0;
    let exactCount = 0;
    const scorerL = new RougeScorer(['rougeL'], { useStemmer: true });
    samples.forEach((sample, i) => {
      const metric = fieldText(sample, fields[0]!, file, i);
      subsets[metric] = (subsets[metric] ?? 0) + 1;
      if (metric === 'rouge') {
        rougeL[i] = 100 * scorerL.score(references[i]!, predictions[i]!)['rougeL']!.fmeasure;
        rougeCount++;
      } else if (metric === 'niah_em' || metric === 'qa_em') {
        exact[i] = metric === 'niah_em' ? niahExactMatch(references[i]!, predictions[i]!) : qaExactMatch(references[i]!, predictions[i]!);
        exactCount++;
      } else {
        throw new DatasetError(file, i + 1, fields[0]!, `${file}: sample ${i} field '${fields[0]}': '${metric}' is not one of rouge, niah_em, qa_em`);
      }
    });
    if (rougeCount > 0) metrics['rougeL'] = numpySum(rougeL) / rougeCount;
    if (exactCount > 0) metrics['exact_match'] = numpySum(exact) / exactCount;
    metrics['gen_len'] = predictions.reduce((n, p) => n + codePointLength(p), 0);
    metrics['gen_num'] = predictions.length;
    withTokens(predictions.length);
    return { metrics, subsets, split: true };
  }
  Object.assign(metrics, rougeFigures(predictions, references));
  metrics['gen_len'] = predictions.reduce((n, p) => n + codePointLength(p), 0);
  metrics['gen_num'] = predictions.length;
  if (scorer === 'rouge-tokens' || scorer === 'generic') withTokens(predictions.length);
  if (scorer === 'generic' && predictions.length > 0) {
    let matches = 0;
    decoded.forEach((d, i) => {
      if (exactMatch(d.text, referenceOf(samples[i]!, field, file, i))) matches++;
    });
    metrics['exact_match'] = (100 * matches) / predictions.length;
  }
  return { metrics, split: true };
}

/** Each target of a benchmark held to the figures. */
export function accuracyVerdicts(benchmark: AccuracyBenchmark, metrics: Readonly<Record<string, number>>): AccuracyVerdict[] {
  return benchmark.targets.map((t) => {
    const value = Object.hasOwn(metrics, t.metric) ? metrics[t.metric]! : null;
    if (t.notScored !== undefined) return { ...t, value, status: 'not scored' as const };
    if (value === null) {
      const notScored = /tok/.test(t.metric) ? 'counting tokens needs token ids in the log, or --tokenizer to re-encode its text' : `the log and data set gave no ${t.metric}`;
      return { ...t, value, status: 'not scored' as const, notScored };
    }
    const met = t.bound === 'min' ? value >= t.threshold : value <= t.threshold;
    return { ...t, value, status: met ? ('pass' as const) : ('fail' as const) };
  });
}

/** Scores an accuracy log; DatasetError/SettingsError for input that does not fit (the CLI's exit 2). */
export async function scoreAccuracy(options: AccuracyOptions): Promise<AccuracyReport> {
  const benchmark = options.benchmark !== undefined ? accuracyBenchmark(options.benchmark) : undefined;
  const scorer: ScorerKind | 'generic' = benchmark?.scorer ?? (options.labels !== undefined ? 'top1' : 'generic');
  const log = readAccuracyLog(options.log);
  const duplicates = log.entries.length - log.unique.length;
  if (log.unique.length === 0) throw new DatasetError(log.file, 0, '', `${log.file}: the log has no entries: nothing to score (was the run an accuracy run, --mode AccuracyOnly?)`);
  if (scorer === 'top1') {
    if (options.labels === undefined) throw new SettingsError('--labels', undefined, `--benchmark ${benchmark!.name} scores top-1: give --labels FILE (ImageNet's val_map.txt)`);
    const dtype = options.accuracyDtype ?? 'float32';
    const result = scoreClassification(log, options.labels, dtype, options.labelOffset ?? 0);
    return finish({ logFile: log.file, scorer, logData: 'values', accuracyDtype: dtype, cleanUpTokenizationSpaces: false, counts: { entries: log.entries.length, unique: log.unique.length, duplicates, referenceSamples: result.labels }, metrics: result.metrics }, benchmark);
  }
  if (options.accuracyDtype === 'float32') throw new SettingsError('--accuracy-dtype', 'float32', '--accuracy-dtype float32 is for classification logits (--labels); token ids are int32 or int64');
  if (options.dataset === undefined) throw new SettingsError('--dataset', undefined, 'give --dataset FILE: the data set with the reference outputs (cnn_eval.json, a JSONL or Parquet file)');
  const dtype: AccuracyDtype = options.accuracyDtype ?? accuracyDtypeFor(benchmark?.model);
  const targetField = options.targetField ?? benchmark?.targetField ?? 'output';
  const fields = benchmark?.fields ?? [];
  const dataset = await readDataset(options.dataset, { targetField, targets: 'required', fields: [...fields] });
  const samples = log.unique.map((entry) => {
    const sample = dataset.samples[entry.qslIdx];
    if (sample === undefined) throw new DatasetError(log.file, entry.index + 1, 'qsl_idx', `${log.file}: entry ${entry.index} field 'qsl_idx': ${entry.qslIdx} is beyond the data set ${dataset.file} (${dataset.samples.length} samples, 0..${dataset.samples.length - 1})`);
    return sample;
  });
  const kind = options.logData ?? detectLogData(log, dtype, options.tokenizer?.vocabularySize);
  const { decoded, tokenCounts } = decodeEntries(log, kind, dtype, options);
  const { params, info } = sentenceSplitterParameters(options.punkt, options.env);
  const scored = scoreText(scorer, decoded, samples, dataset.file, targetField, fields, new PunktSentenceTokenizer(params), log.entries.length);
  return finish(
    {
      logFile: log.file,
      datasetFile: dataset.file,
      scorer,
      logData: kind,
      accuracyDtype: dtype,
      ...(scored.split ? { sentenceSplitter: info } : {}),
      cleanUpTokenizationSpaces: kind === 'token-ids' && (options.cleanUpTokenizationSpaces ?? options.tokenizer?.cleanUpTokenizationSpaces ?? false),
      counts: { entries: log.entries.length, unique: log.unique.length, duplicates, referenceSamples: dataset.samples.length, ...(scored.subsets !== undefined ? { subsets: scored.subsets } : {}) },
      metrics: scored.metrics,
      ...(tokenCounts !== undefined ? { tokenCounts } : {}),
    },
    benchmark,
  );
}

function finish(report: AccuracyReport, benchmark: AccuracyBenchmark | undefined): AccuracyReport {
  if (benchmark === undefined) return report;
  const verdicts = accuracyVerdicts(benchmark, report.metrics);
  const otherVariants = benchmark.variants.map((name) => ({ benchmark: name, passed: accuracyVerdicts(accuracyBenchmark(name), report.metrics).every((v) => v.status === 'pass') }));
  return { ...report, benchmark: benchmark.name, verdicts, passed: verdicts.every((v) => v.status === 'pass'), ...(otherVariants.length > 0 ? { otherVariants } : {}) };
}
