/**
 * The Punkt sentence splitter against NLTK 3.8.1 (the version MLCommons
 * pins): spans that NLTK produced with parameters its PunktTrainer learned
 * from a generated corpus (fixtures: the parameters in punkt_tab format and
 * the spans), NLTK's own English model where it is on this machine, and the
 * built-in approximation's agreement with NLTK's English splits.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { PunktSentenceTokenizer } from '../lib/accuracy/punkt.js';
import { builtinPunktParameters, findNltkPunkt, readPunktTab, resolvePunktFolder, sentenceSplitterParameters } from '../lib/accuracy/punkt-params.js';
import { DatasetError } from '../lib/errors.js';

const FIXTURES = join(__dirname, 'fixtures', 'accuracy');

describe('Punkt with trained parameters', () => {
  const fixture = JSON.parse(readFileSync(join(FIXTURES, 'punkt-trained-spans.json'), 'utf8')) as { texts: string[]; spans: Array<Array<[number, number]>> };
  const tokenizer = new PunktSentenceTokenizer(readPunktTab(join(FIXTURES, 'punkt-trained')));

  it(`splits all ${fixture.texts.length} texts exactly where NLTK 3.8.1 does`, () => {
    const mismatches: string[] = [];
    fixture.texts.forEach((text, i) => {
      const ours = tokenizer.spans(text);
      if (JSON.stringify(ours) !== JSON.stringify(fixture.spans[i])) mismatches.push(`${JSON.stringify(text)}: ${JSON.stringify(ours)} vs ${JSON.stringify(fixture.spans[i])}`);
    });
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('splits 1,500 random strings of tricky characters (whitespace of every kind, quotes, brackets, dots) as NLTK 3.8.1 does', () => {
    const fuzz = JSON.parse(readFileSync(join(FIXTURES, 'punkt-fuzz-spans.json'), 'utf8')) as { texts: string[]; spans: Array<Array<[number, number]>> };
    const mismatches = fuzz.texts.filter((text, i) => JSON.stringify(tokenizer.spans(text)) !== JSON.stringify(fuzz.spans[i]));
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('returns sentences as slices of the text', () => {
    expect(tokenizer.tokenize('(Sent1.) Sent2.')).toEqual(['(Sent1.)', 'Sent2.']);
    expect(tokenizer.tokenize('')).toEqual([]);
    expect(tokenizer.tokenize('Wait... What?! No!!! Yes.')).toEqual(fixture.spans[fixture.texts.indexOf('Wait... What?! No!!! Yes.')]!.map(([a, b]) => 'Wait... What?! No!!! Yes.'.slice(a, b)));
  });
});

interface CnnPair { reference: string; prediction: string; referenceSentences: Array<[number, number]>; predictionSentences: Array<[number, number]> }
const cnnTexts = (): Array<[string, Array<[number, number]>]> => {
  const fixture = JSON.parse(readFileSync(join(FIXTURES, 'rouge-cnn-pairs.json'), 'utf8')) as { pairs: CnnPair[] };
  return fixture.pairs.flatMap((p) => [[p.reference.trim(), p.referenceSentences], [p.prediction.trim(), p.predictionSentences]] as Array<[string, Array<[number, number]>]>);
};

describe("NLTK's English model", () => {
  const dir = findNltkPunkt();
  it.skipIf(dir === undefined)("splits the 600 CNN-style texts as nltk.sent_tokenize does (runs where NLTK's punkt_tab is installed)", () => {
    const tokenizer = new PunktSentenceTokenizer(readPunktTab(dir!));
    const differ = cnnTexts().filter(([text, spans]) => JSON.stringify(tokenizer.spans(text)) !== JSON.stringify(spans));
    expect(differ.map(([text]) => text).slice(0, 3)).toEqual([]);
  });
});

describe('the built-in approximation', () => {
  it('agrees with NLTK English splits on at least 98 % of the CNN-style texts (591 of 600 when written)', () => {
    const tokenizer = new PunktSentenceTokenizer(builtinPunktParameters());
    const texts = cnnTexts();
    const agree = texts.filter(([text, spans]) => JSON.stringify(tokenizer.spans(text)) === JSON.stringify(spans)).length;
    expect(agree / texts.length).toBeGreaterThanOrEqual(0.98);
  });

  it('keeps common abbreviations inside a sentence and breaks after ordinary words', () => {
    const tokenizer = new PunktSentenceTokenizer(builtinPunktParameters());
    expect(tokenizer.tokenize('Mr. Smith went to Washington, D.C. on Jan. 5. He said the U.S. economy grew 3.5 percent. Then he left!')).toEqual([
      'Mr. Smith went to Washington, D.C. on Jan. 5.',
      'He said the U.S. economy grew 3.5 percent.',
      'Then he left!',
    ]);
  });
});

describe('where the parameters come from', () => {
  const writeTab = (dir: string, files: Partial<Record<string, string>> = {}): void => {
    mkdirSync(dir, { recursive: true });
    const all = { 'abbrev_types.txt': 'zzq', 'collocations.tab': '', 'sent_starters.txt': '', 'ortho_context.tab': '', ...files };
    for (const [name, text] of Object.entries(all)) writeFileSync(join(dir, name), text!);
  };

  it('reads a punkt_tab folder given as the language folder, a punkt_tab folder or an nltk_data root', () => {
    const root = mkdtempSync(join(tmpdir(), 'loadgen-punkt-'));
    const english = join(root, 'tokenizers', 'punkt_tab', 'english');
    writeTab(english);
    for (const given of [english, join(root, 'tokenizers', 'punkt_tab'), root]) expect(resolvePunktFolder(given)).toBe(english);
    const tokenizer = new PunktSentenceTokenizer(readPunktTab(english));
    expect(tokenizer.tokenize('I met zzq. Smith today. Then we left.')).toEqual(['I met zzq. Smith today.', 'Then we left.']);
    const found = sentenceSplitterParameters(undefined, { NLTK_DATA: root });
    expect(found.info).toEqual({ kind: 'punkt', source: english });
  });

  it('falls back to the built-in parameters, and says so', () => {
    const env = { NLTK_DATA: join(tmpdir(), 'no-such-nltk-data'), HOME: '/nonexistent' };
    const { info } = sentenceSplitterParameters(undefined, env);
    // Only a machine-wide nltk_data folder (/usr/share/nltk_data …) could hold a model here.
    expect(info.kind).toBe(findNltkPunkt(env) === undefined ? 'builtin' : 'punkt');
    if (info.kind === 'builtin') expect(info.source).toMatch(/built-in approximation/);
  });

  it('refuses a folder without a model and a malformed file, naming them', () => {
    const root = mkdtempSync(join(tmpdir(), 'loadgen-punkt-'));
    expect(() => resolvePunktFolder(root)).toThrow(DatasetError);
    expect(() => resolvePunktFolder(join(root, 'missing'))).toThrow(/not a folder/);
    writeTab(join(root, 'bad'), { 'ortho_context.tab': 'word\tx' });
    expect(() => readPunktTab(join(root, 'bad'))).toThrow(/ortho_context\.tab:1: expected 'type<TAB>flags'/);
    writeTab(join(root, 'bad2'), { 'collocations.tab': 'a b' });
    expect(() => readPunktTab(join(root, 'bad2'))).toThrow(/collocations\.tab:1/);
  });
});
