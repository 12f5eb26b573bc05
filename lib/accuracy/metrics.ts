/**
 * The per-sample metrics of MLCommons' evaluators besides ROUGE: Mixtral's
 * GSM8K numeric answer (evaluate-accuracy.py: find_number, the last number
 * or the first after "The answer is", commas dropped, compared as floats),
 * Llama 3.1 405B's exact-match scorers (qa_em, niah_em), a plain exact
 * match, ImageNet-style top-1, and the text post-processing before ROUGE.
 */
import { pythonRound } from './numeric.js';
import type { PunktSentenceTokenizer } from './punkt.js';

/** Python's str.strip() whitespace (str.isspace). */
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'gu');

/** Python's str.strip(). */
export function pythonStrip(text: string): string {
  return text.replace(STRIP, '');
}

/** Python's len(str): code points, not UTF-16 units (gen_len counts these). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** MLCommons' postprocess_text for one text: strip, split into sentences, join with newlines (rougeLsum needs them). */
export function postprocessText(text: string, splitter: PunktSentenceTokenizer): string {
  return splitter.tokenize(pythonStrip(text)).join('\n');
}

// GSM8K (mixtral-8x7b evaluate-accuracy.py).
const NUMBERS = /-?[\p{Nd},]*\.?\p{Nd}+/gu;

/** find_number: the first number after the last "The answer is", else the last number; '' when none. */
export function gsm8kAnswer(text: string, delimiter = 'The answer is'): string {
  if (text.includes(delimiter)) {
    const after = text.slice(text.lastIndexOf(delimiter) + delimiter.length);
    const numbers = after.match(NUMBERS);
    if (numbers !== null) return numbers[0]!;
  }
  const numbers = text.match(NUMBERS);
  return numbers !== null ? numbers[numbers.length - 1]! : '';
}

/**
 * Python's float(str) for the strings find_number yields and the data set's
 * answers: decimal literals with optional sign and surrounding whitespace,
 * '_' between digits, inf/nan; undefined where Python raises.
 */
export function pythonFloat(text: string): number | undefined {
  const s = asciiDigits(pythonStrip(text));
  if (/^[+-]?(inf(inity)?|nan)$/i.test(s)) return s.toLowerCase().includes('nan') ? Number.NaN : s.startsWith('-') ? -Infinity : Infinity;
  if (!/^[+-]?(\d(_?\d)*(\.(\d(_?\d)*)?)?|\.\d(_?\d)*)([eE][+-]?\d(_?\d)*)?$/.test(s)) return undefined;
  return Number(s.replace(/_/g, ''));
}

/** Python's float() reads any Unicode decimal digit: map each to its ASCII digit (runs of Nd come in tens from 0). */
function asciiDigits(text: string): string {
  return text.replace(/\p{Nd}/gu, (digit) => {
    const cp = digit.codePointAt(0)!;
    if (cp <= 0x39) return digit;
    let start = cp;
    while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
    return String((cp - start) % 10);
  });
}

/**
 * Whether a GSM8K prediction is right, as Mixtral's evaluator decides:
 * the answer of the text before the first "\nQ:", commas removed, equal as
 * a float to the reference (a prediction without a number is wrong).
 */
export function gsm8kCorrect(prediction: string, reference: string): boolean {
  const answer = gsm8kAnswer(prediction.split('\nQ:')[0]!).replace(/,/g, '');
  const predicted = pythonFloat(answer);
  if (predicted === undefined) return false;
  const expected = pythonFloat(reference);
  return expected !== undefined && expected === predicted;
}

// Llama 3.1 405B (evaluate-accuracy.py).
const UUID = /[\p{L}\p{N}_]{8}-[\p{L}\p{N}_]{4}-[\p{L}\p{N}_]{4}-[\p{L}\p{N}_]{4}-[\p{L}\p{N}_]{12}/gu;
const PY_WS_RUN = new RegExp(`[${PY_SPACE}]+`, 'gu');

/** niah_em: the share of the prediction's UUIDs (pairwise with the label's) that contain the label's, x100, rounded to 2 places. */
export function niahExactMatch(label: string, prediction: string): number {
  const labelIds = label.match(UUID) ?? [];
  const predictionIds = prediction.match(UUID) ?? [];
  if (predictionIds.length === 0) return 0;
  let sum = 0;
  // zip(pred_uuids, label_uuids): pairs up to the shorter list; each label UUID's characters are the "ref" entries.
  const pairs = Math.min(predictionIds.length, labelIds.length);
  for (let i = 0; i < pairs; i++) {
    const predLower = predictionIds[i]!.toLowerCase();
    const ref = [...labelIds[i]!];
    let hits = 0;
    for (const r of ref) if (predLower.includes(r.toLowerCase())) hits += 1;
    sum += hits / ref.length;
  }
  return pythonRound((sum / predictionIds.length) * 100, 2);
}

/** qa_em: the text after the last "Answer: " (or all of it) in the label, or any '|'-separated label entry in it, whitespace and case aside. */
export function qaExactMatch(label: string, prediction: string): number {
  let answer = prediction;
  const last = prediction.lastIndexOf('Answer: ');
  if (last !== -1) answer = prediction.slice(last + 'Answer: '.length);
  if (label.includes(answer)) return 100;
  const normalized = answer.replace(PY_WS_RUN, '').toLowerCase();
  const entries = label.split('|').map((entry) => entry.replace(PY_WS_RUN, '').toLowerCase());
  return entries.some((entry) => normalized.includes(entry)) ? 100 : 0;
}

/** A plain exact match: the prediction equals the reference once both are stripped. */
export function exactMatch(prediction: string, reference: string): boolean {
  return pythonStrip(prediction) === pythonStrip(reference);
}

/** The class a classification log entry gives: its only value, or the index of its largest (the first of equals, as argmax). */
export function predictedClass(values: ArrayLike<number>): number {
  if (values.length === 1) return Math.trunc(values[0]!);
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
