/**
 * Where the sentence splitter's Punkt parameters come from. NLTK's trained
 * English model (what `nltk.sent_tokenize` uses, and what MLCommons'
 * evaluators download with `nltk.download("punkt_tab")`) is not shipped
 * with loadgen: its licence is unclear in NLTK's own data inventory. It is
 * read from a `punkt_tab` folder (`--punkt DIR`, or found where NLTK looks
 * for its data); without one, a built-in approximation written for loadgen
 * is used and every result says so.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

import { DatasetError } from '../errors.js';
import { collocationKey, ORTHO_BEG_UC, ORTHO_MID_LC, type PunktParameters } from './punkt.js';

/** The four files of a punkt_tab language folder (NLTK ≥ 3.8.2's data format). */
export const PUNKT_TAB_FILES = ['abbrev_types.txt', 'collocations.tab', 'sent_starters.txt', 'ortho_context.tab'] as const;

/** Environment variables (process.env's shape, without needing Node's types in the public API). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Which parameters split sentences, for reports. */
export interface SentenceSplitterInfo {
  /** 'punkt': NLTK's trained model read from `source`; 'builtin': loadgen's approximation. */
  readonly kind: 'punkt' | 'builtin';
  /** The punkt_tab folder read, or a description of the built-in parameters. */
  readonly source: string;
}

/** Lines of a punkt_tab file as NLTK's TabDecoder reads them (each line without its newline). */
function lines(text: string): string[] {
  const out = text.split('\n');
  if (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Parses the four punkt_tab files of one language folder. */
export function readPunktTab(dir: string): PunktParameters {
  const read = (name: string): string => {
    const path = join(dir, name);
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      throw new DatasetError(path, 0, '', `${path}: cannot read the Punkt parameter file (${(error as Error).message}); a punkt_tab language folder holds ${PUNKT_TAB_FILES.join(', ')}`);
    }
  };
  const collocations = new Set<string>();
  lines(read('collocations.tab')).forEach((line, i) => {
    const parts = line.split('\t');
    if (parts.length !== 2) throw new DatasetError(join(dir, 'collocations.tab'), i + 1, '', `${join(dir, 'collocations.tab')}:${i + 1}: expected two tab-separated types, found ${JSON.stringify(line)}`);
    collocations.add(collocationKey(parts[0]!, parts[1]!));
  });
  const orthoContext = new Map<string, number>();
  lines(read('ortho_context.tab')).forEach((line, i) => {
    const tab = line.lastIndexOf('\t');
    const flags = Number(line.slice(tab + 1));
    if (tab < 0 || !Number.isInteger(flags) || flags < 0) {
      throw new DatasetError(join(dir, 'ortho_context.tab'), i + 1, '', `${join(dir, 'ortho_context.tab')}:${i + 1}: expected 'type<TAB>flags' with integer flags, found ${JSON.stringify(line)}`);
    }
    orthoContext.set(line.slice(0, tab), flags);
  });
  return {
    abbrevTypes: new Set(lines(read('abbrev_types.txt'))),
    collocations,
    sentStarters: new Set(lines(read('sent_starters.txt'))),
    orthoContext,
  };
}

function isPunktTabFolder(dir: string): boolean {
  return PUNKT_TAB_FILES.every((name) => existsSync(join(dir, name)));
}

/**
 * The English punkt_tab folder under a path given by the user: the language
 * folder itself, a `punkt_tab` folder, or an NLTK data root.
 */
export function resolvePunktFolder(path: string): string {
  const absolute = resolve(path);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
    throw new DatasetError(absolute, 0, '', `--punkt ${path}: not a folder; give NLTK's punkt_tab/english folder, a punkt_tab folder or an nltk_data folder (python -m nltk.downloader punkt_tab)`);
  }
  for (const candidate of [absolute, join(absolute, 'english'), join(absolute, 'tokenizers', 'punkt_tab', 'english')]) {
    if (isPunktTabFolder(candidate)) return candidate;
  }
  throw new DatasetError(absolute, 0, '', `--punkt ${path}: no English punkt_tab model there (looked for ${PUNKT_TAB_FILES.join(', ')} in it, in english/ and in tokenizers/punkt_tab/english/)`);
}

/** The folders NLTK searches for its data on this machine (nltk.data.path on Unix), in its order. */
export function nltkDataPaths(env: Environment = process.env): string[] {
  const fromEnv = (env['NLTK_DATA'] ?? '').split(delimiter).filter((p) => p.length > 0);
  return [...fromEnv, join(env['HOME'] ?? homedir(), 'nltk_data'), '/usr/share/nltk_data', '/usr/local/share/nltk_data', '/usr/lib/nltk_data', '/usr/local/lib/nltk_data'];
}

/** NLTK's English punkt_tab folder where NLTK would find it, if it is there. */
export function findNltkPunkt(env: Environment = process.env): string | undefined {
  for (const root of nltkDataPaths(env)) {
    const dir = join(root, 'tokenizers', 'punkt_tab', 'english');
    if (isPunktTabFolder(dir)) return dir;
  }
  return undefined;
}

// The built-in approximation (loadgen's own lists, not NLTK's model): common
// English abbreviations, frequent sentence starters, and words known to be
// written in lower case inside a sentence and capitalized at its start.
const BUILTIN_ABBREVIATIONS = [
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'gen', 'col', 'lt', 'maj', 'adm', 'sen', 'rep', 'reps',
  'messrs', 'jan', 'feb', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'tues', 'wed', 'fri', 'inc', 'corp', 'co',
  'ltd', 'bros', 'cie', 'ala', 'ariz', 'calif', 'colo', 'conn', 'fla', 'ga', 'ill', 'kan', 'ky', 'mich', 'minn',
  'nev', 'okla', 'ore', 'pa', 'tenn', 'va', 'vt', 'wash', 'wis', 'n.c', 's.c', 'n.d', 'n.h', 'n.j', 'n.m', 'n.y',
  'r.i', 'w.va', 'd.c', 'vs', 'ft', 'ave', 'u.s', 'u.s.a', 'u.k', 'u.n', 'u.s.s.r', 'a.m', 'p.m', 'ph.d', 'm.b.a',
  'yr', 'mg',
];

const BUILTIN_SENT_STARTERS = [
  'the', 'this', 'these', 'it', 'he', 'they', 'i', 'there', 'but', 'in', 'however', 'meanwhile', 'so', 'if', 'when',
  'while', 'although', 'though', 'since', 'yet', 'some', 'many', 'most', 'both', 'even', 'according', 'despite',
  'instead', 'moreover', 'nevertheless', 'thus', 'indeed', 'separately', 'similarly', 'among', 'under',
];

const BUILTIN_LOWERCASE_WORDS = [
  ...BUILTIN_SENT_STARTERS,
  'that', 'those', 'we', 'you', 'and', 'on', 'at', 'also', 'after', 'before', 'as', 'because', 'her', 'their',
  'our', 'its', 'still', 'furthermore', 'then', 'now', 'today', 'other', 'such', 'each', 'what', 'why', 'how',
  'a', 'an', 'of', 'to', 'for', 'with', 'by', 'from', 'about', 'into', 'over', 'than', 'or', 'not', 'no', 'is', 'are',
  'was', 'were', 'be', 'been', 'has', 'have', 'had', 'do', 'does', 'did', 'will', 'would', 'can', 'could', 'should',
  'may', 'might', 'must', 'said', 'says', 'one', 'two', 'three', 'more', 'less', 'only', 'just', 'who', 'which',
  'where', 'during', 'until', 'between', 'against', 'without', 'within', 'through', 'across', 'around', 'every',
  'another', 'neither', 'either', 'nor', 'few', 'several', 'authorities', 'people', 'his',
  'him', 'them', 'my', 'your', 'me', 'us', 'here', 'later', 'earlier', 'last', 'first', 'next', 'new', 'former',
];

/** loadgen's own approximation of English Punkt parameters, for when NLTK's model is not on the machine. */
export function builtinPunktParameters(): PunktParameters {
  const orthoContext = new Map<string, number>();
  for (const word of BUILTIN_LOWERCASE_WORDS) orthoContext.set(word, ORTHO_BEG_UC | ORTHO_MID_LC);
  return {
    abbrevTypes: new Set(BUILTIN_ABBREVIATIONS),
    collocations: new Set(),
    sentStarters: new Set(BUILTIN_SENT_STARTERS),
    orthoContext,
  };
}

/**
 * The parameters to split with: the folder given (`punkt`), else NLTK's
 * English model where NLTK keeps it, else the built-in approximation.
 */
export function sentenceSplitterParameters(punkt?: string, env: Environment = process.env): { params: PunktParameters; info: SentenceSplitterInfo } {
  const dir = punkt !== undefined ? resolvePunktFolder(punkt) : findNltkPunkt(env);
  if (dir !== undefined) return { params: readPunktTab(dir), info: { kind: 'punkt', source: dir } };
  return {
    params: builtinPunktParameters(),
    info: { kind: 'builtin', source: "loadgen's built-in approximation of NLTK's English Punkt model (no punkt_tab/english found; see docs/llm-benchmarks.md)" },
  };
}
