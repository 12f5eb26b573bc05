/**
 * ROUGE as Google's rouge_score (0.1.2, the package Hugging Face `evaluate`'s
 * "rouge" metric wraps and MLCommons pins) computes it: its tokenizer
 * (lowercase; every run of characters outside [a-z0-9] becomes one space;
 * split on whitespace; the Porter stemmer on tokens longer than 3
 * characters; empty tokens dropped), ROUGE-N from clipped n-gram counts,
 * ROUGE-L from the longest common subsequence, and ROUGE-Lsum as the
 * summary-level union LCS over newline-separated sentences with the
 * double-counting guard of ROUGE-1.5.5. Precision, recall and F1 are
 * computed in the same order of floating-point operations.
 */
import { porterStem } from './porter.js';

/** One ROUGE figure of one (target, prediction) pair. */
export interface RougeScore {
  readonly precision: number;
  readonly recall: number;
  readonly fmeasure: number;
}

/** 'rouge1' … 'rouge9', 'rougeL', 'rougeLsum': the types rouge_score accepts. */
export type RougeType = string;

/** The four figures MLCommons' evaluators report (HF evaluate's default rouge_types). */
export const MLPERF_ROUGE_TYPES = ['rouge1', 'rouge2', 'rougeL', 'rougeLsum'] as const;

const ZERO: RougeScore = Object.freeze({ precision: 0, recall: 0, fmeasure: 0 });

/** rouge_score's `scoring.fmeasure`: 2PR/(P+R), 0 when both are 0. */
export function fmeasure(precision: number, recall: number): number {
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}

const NON_ALPHANUMERIC = /[^a-z0-9]+/g;

/**
 * rouge_score's `tokenize.tokenize(text, stemmer)`. `stem` is applied to
 * tokens longer than 3 characters, as rouge_score does.
 */
export function rougeTokenize(text: string, stem?: (word: string) => string): string[] {
  const words = text.toLowerCase().replace(NON_ALPHANUMERIC, ' ').split(' ');
  const tokens: string[] = [];
  for (const word of words) {
    if (word.length === 0) continue;
    const token = stem !== undefined && word.length > 3 ? stem(word) : word;
    // The stemmer never produces characters outside [a-z0-9] from such input; the check is rouge_score's.
    if (token.length > 0) tokens.push(token);
  }
  return tokens;
}

/** Checks rouge types as rouge_score does (ValueError there, RangeError here). */
function checkTypes(types: readonly string[]): void {
  if (types.length === 0) throw new RangeError('rouge types: at least one is needed (rouge1 … rouge9, rougeL, rougeLsum)');
  for (const type of types) {
    if (type === 'rougeL' || type === 'rougeLsum') continue;
    const m = /^rouge([0-9])$/.exec(type);
    if (m === null) throw new RangeError(`rouge type '${type}' is not one of rouge1 … rouge9, rougeL, rougeLsum`);
    if (m[1] === '0') throw new RangeError(`rouge type '${type}': rougeN requires a positive n`);
  }
}

/** Options of {@link RougeScorer}. */
export interface RougeScorerOptions {
  /** Porter-stem tokens longer than 3 characters (rouge_score's use_stemmer). Default false. */
  readonly useStemmer?: boolean;
}

/**
 * rouge_score's `RougeScorer(rouge_types, use_stemmer)`. Tokens are interned
 * as integers (and stems cached) so that a data set of thousands of pairs is
 * scored in a fraction of Python's time; the figures are the same.
 */
export class RougeScorer {
  readonly types: readonly RougeType[];
  readonly useStemmer: boolean;
  private readonly ids = new Map<string, number>();
  private readonly stems = new Map<string, string>();

  constructor(types: readonly RougeType[], options: RougeScorerOptions = {}) {
    checkTypes(types);
    this.types = [...types];
    this.useStemmer = options.useStemmer === true;
  }

  /** Scores of every type for one pair; `target` is the reference. */
  score(target: string, prediction: string): Record<RougeType, RougeScore> {
    const needsWhole = this.types.some((t) => t !== 'rougeLsum');
    const targetTokens = needsWhole ? this.tokenIds(target) : new Int32Array(0);
    const predictionTokens = needsWhole ? this.tokenIds(prediction) : new Int32Array(0);
    const result: Record<RougeType, RougeScore> = {};
    for (const type of this.types) {
      if (type === 'rougeL') result[type] = scoreLcs(targetTokens, predictionTokens);
      else if (type === 'rougeLsum') result[type] = summaryLevelLcs(this.sentenceIds(target), this.sentenceIds(prediction));
      else result[type] = scoreNgrams(targetTokens, predictionTokens, Number(type.slice(5)));
    }
    return result;
  }

  /** The tokens of a text as rouge_score would produce them (stemmed when useStemmer). */
  tokenize(text: string): string[] {
    return rougeTokenize(text, this.useStemmer ? (w) => this.stem(w) : undefined);
  }

  private stem(word: string): string {
    let stem = this.stems.get(word);
    if (stem === undefined) {
      stem = porterStem(word);
      this.stems.set(word, stem);
    }
    return stem;
  }

  private tokenIds(text: string): Int32Array {
    const tokens = this.tokenize(text);
    const out = new Int32Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      let id = this.ids.get(token);
      if (id === undefined) {
        id = this.ids.size;
        this.ids.set(token, id);
      }
      out[i] = id;
    }
    return out;
  }

  /** rougeLsum's sentences: the text split on '\n', empty strings dropped (a blank line of spaces stays, as zero tokens). */
  private sentenceIds(text: string): Int32Array[] {
    const out: Int32Array[] = [];
    for (const sentence of text.split('\n')) {
      if (sentence.length > 0) out.push(this.tokenIds(sentence));
    }
    return out;
  }
}

/** Clipped n-gram overlap: rouge_score's `_score_ngrams(_create_ngrams(...))`. */
function scoreNgrams(target: Int32Array, prediction: Int32Array, n: number): RougeScore {
  const targetCounts = ngramCounts(target, n);
  const predictionCounts = ngramCounts(prediction, n);
  let intersection = 0;
  for (const [gram, count] of targetCounts) {
    const other = predictionCounts.get(gram);
    if (other !== undefined) intersection += Math.min(count, other);
  }
  const targetTotal = Math.max(target.length - n + 1, 0);
  const predictionTotal = Math.max(prediction.length - n + 1, 0);
  const precision = intersection / Math.max(predictionTotal, 1);
  const recall = intersection / Math.max(targetTotal, 1);
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

function ngramCounts(tokens: Int32Array, n: number): Map<number | string, number> {
  const counts = new Map<number | string, number>();
  const last = tokens.length - n;
  for (let i = 0; i <= last; i++) {
    // Token ids stay below 2^26, so a bigram packs exactly into one double.
    const key: number | string = n === 1 ? tokens[i]! : n === 2 ? tokens[i]! * 67108864 + tokens[i + 1]! : tokens.subarray(i, i + n).join(',');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** LCS length with two rolling rows (rougeL needs no backtrack). */
function lcsLength(a: Int32Array, b: Int32Array): number {
  let previous = new Int32Array(b.length + 1);
  let current = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const ai = a[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      current[j] = ai === b[j - 1]! ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

function scoreLcs(target: Int32Array, prediction: Int32Array): RougeScore {
  if (target.length === 0 || prediction.length === 0) return ZERO;
  const length = lcsLength(target, prediction);
  const precision = length / prediction.length;
  const recall = length / target.length;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/**
 * Indices into `ref` of the LCS that rouge_score's `_backtrack_norec` reads
 * out of the full table (ties move up a row, as its `else` does).
 */
export function lcsIndices(ref: ArrayLike<number>, can: ArrayLike<number>): number[] {
  const rows = ref.length;
  const cols = can.length;
  const width = cols + 1;
  const table = new Int32Array((rows + 1) * width);
  for (let i = 1; i <= rows; i++) {
    const ri = ref[i - 1];
    for (let j = 1; j <= cols; j++) {
      table[i * width + j] = ri === can[j - 1] ? table[(i - 1) * width + j - 1]! + 1 : Math.max(table[(i - 1) * width + j]!, table[i * width + j - 1]!);
    }
  }
  const indices: number[] = [];
  let i = rows;
  let j = cols;
  while (i > 0 && j > 0) {
    if (ref[i - 1] === can[j - 1]) {
      indices.push(i - 1);
      i--;
      j--;
    } else if (table[i * width + j - 1]! > table[(i - 1) * width + j]!) {
      j--;
    } else {
      i--;
    }
  }
  return indices.reverse();
}

/** rouge_score's `_summary_level_lcs(ref_sent, can_sent)`. */
export function summaryLevelLcs(refSentences: readonly Int32Array[], canSentences: readonly Int32Array[]): RougeScore {
  if (refSentences.length === 0 || canSentences.length === 0) return ZERO;
  let m = 0;
  let n = 0;
  for (const s of refSentences) m += s.length;
  for (const s of canSentences) n += s.length;
  if (m === 0 || n === 0) return ZERO;
  const refCounts = new Map<number, number>();
  const canCounts = new Map<number, number>();
  for (const s of refSentences) for (const t of s) refCounts.set(t, (refCounts.get(t) ?? 0) + 1);
  for (const s of canSentences) for (const t of s) canCounts.set(t, (canCounts.get(t) ?? 0) + 1);
  let hits = 0;
  const inUnion = new Uint8Array(Math.max(...refSentences.map((s) => s.length), 0));
  for (const ref of refSentences) {
    inUnion.fill(0, 0, ref.length);
    for (const can of canSentences) for (const index of lcsIndices(ref, can)) inUnion[index] = 1;
    for (let index = 0; index < ref.length; index++) {
      if (inUnion[index] === 0) continue;
      const token = ref[index]!;
      const inCan = canCounts.get(token) ?? 0;
      const inRef = refCounts.get(token) ?? 0;
      if (inCan > 0 && inRef > 0) {
        hits++;
        canCounts.set(token, inCan - 1);
        refCounts.set(token, inRef - 1);
      }
    }
  }
  const recall = hits / m;
  const precision = hits / n;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}
