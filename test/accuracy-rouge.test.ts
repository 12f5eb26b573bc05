/**
 * ROUGE, the Porter stemmer and the numeric helpers against their oracles:
 * rouge_score's own test cases (google-research rouge/rouge_scorer_test.py,
 * tokenize_test.py, tokenizers_test.py and testdata/) and fixtures the
 * oracles produced (rouge_score 0.1.2's code, NLTK 3.8.1's PorterStemmer,
 * numpy): numbers and texts only, no oracle code.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { numpyMean, numpyRound, numpySum, pythonFloatRepr, pythonRound } from '../lib/accuracy/numeric.js';
import { porterStem } from '../lib/accuracy/porter.js';
import { lcsIndices, RougeScorer, rougeTokenize, summaryLevelLcs } from '../lib/accuracy/rouge.js';

const FIXTURES = join(__dirname, 'fixtures', 'accuracy');
const readFixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const TYPES = ['rouge1', 'rouge2', 'rougeL', 'rougeLsum'] as const;

describe("rouge_score's own test cases", () => {
  const targets = readFixture('rouge-score/target.txt').split(/(?<=\n)/);
  const predictions = readFixture('rouge-score/prediction.txt').split(/(?<=\n)/);

  it.each(['rougen', 'rouge0', 'rouge10'])('refuses the invalid type %s', (type) => {
    expect(() => new RougeScorer([type])).toThrow(RangeError);
  });

  it.each(['rouge1', 'rouge9', 'rougeL', 'rougeLsum'])('accepts the valid type %s', (type) => {
    expect(Object.keys(new RougeScorer([type]).score('testing one two', 'testing'))).toEqual([type]);
  });

  it('rouge1, rouge2 and rougeL of short texts', () => {
    const r1 = new RougeScorer(['rouge1']).score('testing one two', 'testing')['rouge1']!;
    expect([r1.precision, r1.recall, r1.fmeasure]).toEqual([1, 1 / 3, 1 / 2]);
    const r2 = new RougeScorer(['rouge2']).score('testing one two', 'testing one')['rouge2']!;
    expect(r2.precision).toBeCloseTo(1, 12);
    expect(r2.recall).toBeCloseTo(1 / 2, 12);
    expect(r2.fmeasure).toBeCloseTo(2 / 3, 12);
    for (const prediction of ['testing one', 'testing two']) {
      const l = new RougeScorer(['rougeL']).score('testing one two', prediction)['rougeL']!;
      expect(l.precision).toBeCloseTo(1, 12);
      expect(l.recall).toBeCloseTo(2 / 3, 12);
      expect(l.fmeasure).toBeCloseTo(4 / 5, 12);
    }
    const both = new RougeScorer(['rouge1', 'rougeL']).score('testing one two', 'testing one');
    expect(Object.keys(both)).toEqual(['rouge1', 'rougeL']);
    expect(both['rouge1']!.fmeasure).toBeCloseTo(4 / 5, 12);
  });

  it.each(TYPES)('%s of an empty prediction is 0', (type) => {
    expect(new RougeScorer([type]).score('testing one two', '')[type]).toEqual({ precision: 0, recall: 0, fmeasure: 0 });
  });

  // Ground truth from ROUGE-1.5.5 runs, as rouge_scorer_test.py asserts them (5 places).
  const against155: Array<[string, boolean, number, [number, number, number]]> = [
    ['rouge1', false, 0, [0.40741, 0.6875, 0.51163]], ['rouge1', false, 1, [0.40476, 0.65385, 0.5]],
    ['rouge1', true, 0, [0.40741, 0.6875, 0.51163]], ['rouge1', true, 1, [0.42857, 0.69231, 0.52941]],
    ['rouge2', false, 0, [0.30769, 0.53333, 0.39024]], ['rouge2', false, 1, [0.29268, 0.48, 0.36364]],
    ['rouge2', true, 0, [0.30769, 0.53333, 0.39024]], ['rouge2', true, 1, [0.29268, 0.48, 0.36364]],
    ['rougeL', false, 0, [0.40741, 0.6875, 0.51163]], ['rougeL', false, 1, [0.40476, 0.65385, 0.5]],
  ];
  it.each(against155)('%s (stemming %s) of testdata line %i agrees with ROUGE-1.5.5', (type, stem, line, [recall, precision, f]) => {
    const score = new RougeScorer([type], { useStemmer: stem }).score(targets[line]!, predictions[line]!)[type]!;
    expect(score.recall).toBeCloseTo(recall, 5);
    expect(score.precision).toBeCloseTo(precision, 5);
    expect(score.fmeasure).toBeCloseTo(f, 5);
  });

  it('rougeLsum with stemming of pyrouge_files/*_multi.0.txt agrees with ROUGE-1.5.5', () => {
    const score = new RougeScorer(['rougeLsum'], { useStemmer: true })
      .score(readFixture('rouge-score/target_multi.0.txt'), readFixture('rouge-score/prediction_multi.0.txt'))['rougeLsum']!;
    expect(score.recall).toBeCloseTo(0.36538, 5);
    expect(score.precision).toBeCloseTo(0.66667, 5);
    expect(score.fmeasure).toBeCloseTo(0.47205, 5);
  });

  it('reads one LCS out of the table as _backtrack_norec does', () => {
    expect(lcsIndices([1, 2, 3, 4, 5], [2, 5, 3, 4])).toEqual([1, 2, 3]);
    expect(lcsIndices([1, 2, 3, 4, 5], [8, 9])).toEqual([]);
  });

  it('computes the summary-level LCS of the ROUGE paper section 3.2', () => {
    const score = summaryLevelLcs([Int32Array.from([1, 2, 3, 4, 5])], [Int32Array.from([1, 2, 6, 7, 8]), Int32Array.from([1, 3, 8, 9, 5])]);
    expect(score.recall).toBe(0.8);
    expect(score.precision).toBe(0.4);
    expect(score.fmeasure).toBeCloseTo(0.5333, 3);
    expect(summaryLevelLcs([Int32Array.from([7])], [new Int32Array(0)]).recall).toBe(0);
  });

  it('rougeLsum over newline-separated sentences, and its empty cases', () => {
    const scorer = new RougeScorer(['rougeLsum']);
    const score = scorer.score('w1 w2 w3 w4 w5', 'w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5')['rougeLsum']!;
    expect(score.recall).toBeCloseTo(0.8, 12);
    expect(score.precision).toBeCloseTo(0.4, 12);
    expect(score.fmeasure).toBeCloseTo(0.5333, 3);
    for (const [target, prediction] of [['w1 w2 w3 w4 w5', ''], ['', 'w1'], ['w1 w2 w3 w4 w5', '/']]) {
      expect(scorer.score(target!, prediction!)['rougeLsum']).toEqual({ precision: 0, recall: 0, fmeasure: 0 });
    }
  });

  it('tokenizes as tokenize.tokenize and DefaultTokenizer do', () => {
    expect(rougeTokenize('one Two three')).toEqual(['one', 'two', 'three']);
    expect(rougeTokenize('one\n Two \nthree')).toEqual(['one', 'two', 'three']);
    expect(new RougeScorer(['rouge1']).tokenize('this is a test')).toEqual(['this', 'is', 'a', 'test']);
    expect(new RougeScorer(['rouge1'], { useStemmer: true }).tokenize('the friends had a meeting')).toEqual(['the', 'friend', 'had', 'a', 'meet']);
  });
});

interface CnnPair {
  reference: string;
  prediction: string;
  referenceSentences: Array<[number, number]>;
  predictionSentences: Array<[number, number]>;
  scores: Record<(typeof TYPES)[number], [number, number, number]>;
}

describe('generated CNN-style pairs against rouge_score 0.1.2 (use_stemmer=True)', () => {
  const fixture = JSON.parse(readFixture('rouge-cnn-pairs.json')) as { pairs: CnnPair[]; mlperf: Record<string, number> };
  // The texts as MLCommons' postprocess_text leaves them: stripped, sentences (NLTK's split, in the fixture) joined by newlines.
  const split = (text: string, spans: Array<[number, number]>): string => spans.map(([a, b]) => text.trim().slice(a, b)).join('\n');

  it(`scores all ${fixture.pairs.length} pairs bit for bit like the oracle`, () => {
    const scorer = new RougeScorer([...TYPES], { useStemmer: true });
    let maxDifference = 0;
    const mismatches: string[] = [];
    fixture.pairs.forEach((pair, i) => {
      const ours = scorer.score(split(pair.reference, pair.referenceSentences), split(pair.prediction, pair.predictionSentences));
      for (const type of TYPES) {
        const expected = pair.scores[type];
        const got = [ours[type]!.precision, ours[type]!.recall, ours[type]!.fmeasure];
        got.forEach((value, j) => {
          maxDifference = Math.max(maxDifference, Math.abs(value - expected[j]!));
          if (value !== expected[j]) mismatches.push(`pair ${i} ${type}[${j}]: ${value} vs ${expected[j]}`);
        });
      }
    });
    expect(mismatches.slice(0, 10)).toEqual([]);
    expect(maxDifference).toBe(0);
  });

  it('reproduces the MLPerf figures (mean F1 x 100, numpy-rounded to 4 places) and gen_len', () => {
    const scorer = new RougeScorer([...TYPES], { useStemmer: true });
    const f1: Record<string, number[]> = { rouge1: [], rouge2: [], rougeL: [], rougeLsum: [] };
    let genLen = 0;
    for (const pair of fixture.pairs) {
      const prediction = split(pair.prediction, pair.predictionSentences);
      genLen += prediction.length;
      const ours = scorer.score(split(pair.reference, pair.referenceSentences), prediction);
      for (const type of TYPES) f1[type]!.push(ours[type]!.fmeasure);
    }
    for (const type of TYPES) expect(numpyRound(numpyMean(f1[type]!) * 100, 4)).toBe(fixture.mlperf[type]);
    expect(genLen).toBe(fixture.mlperf['gen_len']);
  });
});

describe("NLTK's PorterStemmer (NLTK_EXTENSIONS)", () => {
  it('stems every 8th word of a 73,445-word English dictionary as NLTK 3.8.1 does', () => {
    const mismatches: string[] = [];
    let count = 0;
    for (const line of readFixture('porter-nltk.tsv').split('\n')) {
      if (line === '') continue;
      const [word, stem] = line.split('\t') as [string, string | undefined];
      count++;
      const ours = porterStem(word);
      if (ours !== (stem ?? word)) mismatches.push(`${word}: ${ours} (NLTK: ${stem ?? word})`);
    }
    expect(count).toBeGreaterThan(9000);
    expect(mismatches.slice(0, 20)).toEqual([]);
  });

  it('stems 30,000 generated words (every suffix rule, y-runs, digits) to the same SHA-256 as NLTK', () => {
    const fixture = JSON.parse(readFixture('porter-generated.json')) as { generatedCount: number; generatedStemsSha256: string; sample: Array<[string, string]> };
    const suffixes = ['', 's', 'es', 'sses', 'ies', 'ss', 'ed', 'eed', 'ied', 'ing', 'ly', 'y', 'ational', 'tional', 'enci', 'anci',
      'izer', 'abli', 'bli', 'alli', 'entli', 'eli', 'ousli', 'ization', 'ation', 'ator', 'alism', 'iveness', 'fulness',
      'ousness', 'aliti', 'iviti', 'biliti', 'fulli', 'logi', 'icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness',
      'al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'sion', 'tion', 'ou', 'ism', 'ate',
      'iti', 'ous', 'ive', 'ize', 'e', 'll', 'at', 'bl', 'iz', 'ying', 'yed', 'ieing', 'ingly', 'edly', 'ations', 'izers'];
    const letters = 'aeiouybcdfghjklmnprstvwxyzeaiosy0123';
    let x = 2463534242;
    const next = (): number => {
      x = (x ^ (x << 13)) >>> 0;
      x = (x ^ (x >>> 17)) >>> 0;
      x = (x ^ (x << 5)) >>> 0;
      return x;
    };
    const words: string[] = [];
    for (let i = 0; i < fixture.generatedCount; i++) {
      const length = 1 + (next() % 6);
      let base = '';
      for (let j = 0; j < length; j++) base += letters[next() % letters.length];
      words.push(base + suffixes[next() % suffixes.length]);
    }
    const stems = words.map(porterStem);
    expect(fixture.sample.map(([w]) => [w, stems[words.indexOf(w)]])).toEqual(fixture.sample);
    expect(createHash('sha256').update(stems.join('\n')).digest('hex')).toBe(fixture.generatedStemsSha256);
  });

  it('keeps the irregular forms and short words', () => {
    expect(['skies', 'dying', 'lying', 'tying', 'news', 'innings', 'proceed', 'succeed'].map(porterStem)).toEqual(['sky', 'die', 'lie', 'tie', 'news', 'inning', 'proceed', 'succeed']);
    expect(['is', 'as', 'us', 'happy', 'enjoy', 'generalizations', 'Caresses'].map(porterStem)).toEqual(['is', 'as', 'us', 'happi', 'enjoy', 'gener', 'caress']);
  });
});

describe('numpy and Python arithmetic', () => {
  const fixture = JSON.parse(readFixture('numeric.json')) as {
    means: Array<{ n: number; sum: number; mean: number; mean100round4: number }>;
    rounds: Array<[number, number, number, number, number]>;
  };
  const values = (n: number): number[] => {
    let x = 88172645;
    const next = (): number => {
      x = (x ^ (x << 13)) >>> 0;
      x = (x ^ (x >>> 17)) >>> 0;
      x = (x ^ (x << 5)) >>> 0;
      return x;
    };
    const out: number[] = [];
    for (const c of fixture.means) {
      const vals: number[] = [];
      for (let i = 0; i < c.n; i++) {
        const a = next() % 300;
        const b = (next() % 300) + 1;
        vals.push((Math.min(a, b) / b) * (next() % 2 ? 0.999 : 1.0));
      }
      if (c.n === n) return vals;
      out.push(...vals);
    }
    throw new Error(`no case of ${n}`);
  };

  it.each(fixture.means.map((c) => [c.n, c] as const))('sums and averages %i values as numpy does (pairwise)', (n, c) => {
    const vals = values(n);
    expect(numpySum(vals)).toBe(c.sum);
    expect(numpyMean(vals)).toBe(c.mean);
    expect(numpyRound(numpyMean(vals) * 100, 4)).toBe(c.mean100round4);
  });

  it('rounds as round(np.float64, 4) and as Python round(float, n)', () => {
    for (const [x, numpy4, python4, python1, python2] of fixture.rounds) {
      expect([numpyRound(x, 4), pythonRound(x, 4), pythonRound(x, 1), pythonRound(x, 2)]).toEqual([numpy4, python4, python1, python2]);
    }
    expect(pythonRound(2.675, 2)).toBe(2.67);
    expect(pythonRound(0.125, 2)).toBe(0.12);
  });

  it('prints floats as Python does', () => {
    expect([44.0, 44.4312, 1e-5, 0.0001, 1e16, 294.5, 0, -0].map(pythonFloatRepr)).toEqual(['44.0', '44.4312', '1e-05', '0.0001', '1e+16', '294.5', '0.0', '-0.0']);
  });
});
