/**
 * The Porter stemmer as NLTK's `PorterStemmer()` computes it in its default
 * mode (NLTK_EXTENSIONS), which is the stemmer Google's rouge_score applies
 * with `use_stemmer=True`. Written from the algorithm (Porter 1980) and the
 * extensions NLTK documents: the irregular forms, words of two letters or
 * fewer left alone, 'ies'/'ied' of four letters, y -> i only after a
 * consonant that is not the word's first letter, step 2's 'alli' recursion
 * and its 'fulli'/'logi' rules, and the two-letter cvc form.
 */

/** NLTK_EXTENSIONS' irregular forms: the word maps straight to its stem. */
const IRREGULAR_FORMS: ReadonlyMap<string, string> = new Map([
  ['sky', 'sky'], ['skies', 'sky'],
  ['dying', 'die'], ['lying', 'lie'], ['tying', 'tie'],
  ['news', 'news'],
  ['innings', 'inning'], ['inning', 'inning'],
  ['outings', 'outing'], ['outing', 'outing'],
  ['cannings', 'canning'], ['canning', 'canning'],
  ['howe', 'howe'],
  ['proceed', 'proceed'], ['exceed', 'exceed'], ['succeed', 'succeed'],
]);

function isVowelLetter(c: string): boolean {
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u';
}

/** Porter's consonant: not a vowel letter, and a 'y' only when the letter before is a vowel (or it comes first). */
function isConsonant(word: string, i: number): boolean {
  const c = word[i]!;
  if (isVowelLetter(c)) return false;
  if (c !== 'y') return true;
  // A run of y's alternates consonant/vowel from the letter before the run.
  let flip = false;
  let j = i;
  while (j > 0 && word[j] === 'y') {
    flip = !flip;
    j--;
  }
  return !isVowelLetter(word[j]!) !== flip;
}

/** m in [C](VC){m}[V]: the number of vowel-to-consonant transitions. */
function measure(stem: string): number {
  let m = 0;
  let previousVowel = false;
  let previousConsonant = true;
  for (let i = 0; i < stem.length; i++) {
    const c = stem[i]!;
    const consonant: boolean = isVowelLetter(c) ? false : c === 'y' ? (i === 0 ? true : !previousConsonant) : true;
    if (consonant && previousVowel) m++;
    previousVowel = !consonant;
    previousConsonant = consonant;
  }
  return m;
}

function containsVowel(stem: string): boolean {
  let previousConsonant = true;
  for (let i = 0; i < stem.length; i++) {
    const c = stem[i]!;
    const consonant: boolean = isVowelLetter(c) ? false : c === 'y' ? (i === 0 ? true : !previousConsonant) : true;
    if (!consonant) return true;
    previousConsonant = consonant;
  }
  return false;
}

/** *d: ends with a double consonant. */
function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

/** *o: ends consonant-vowel-consonant, the last not w, x or y (NLTK also counts a two-letter vowel-consonant word). */
function endsCvc(word: string): boolean {
  const n = word.length;
  if (n >= 3 && isConsonant(word, n - 3) && !isConsonant(word, n - 2) && isConsonant(word, n - 1)) {
    const last = word[n - 1];
    if (last !== 'w' && last !== 'x' && last !== 'y') return true;
  }
  return n === 2 && !isConsonant(word, 0) && isConsonant(word, 1);
}

type Condition = ((stem: string) => boolean) | null;
type Rule = readonly [suffix: string, replacement: string, condition: Condition];

/**
 * The first rule whose suffix the word ends with decides: its replacement
 * when the condition holds, else the word unchanged (later rules are not
 * tried). The suffix '*d' stands for any double consonant.
 */
function applyRules(word: string, rules: readonly Rule[]): string {
  for (const [suffix, replacement, condition] of rules) {
    if (suffix === '*d' && endsDoubleConsonant(word)) {
      const stem = word.slice(0, -2);
      return condition === null || condition(stem) ? stem + replacement : word;
    }
    if (word.endsWith(suffix)) {
      const stem = suffix === '' ? word : word.slice(0, -suffix.length);
      return condition === null || condition(stem) ? stem + replacement : word;
    }
  }
  return word;
}

const positive = (stem: string): boolean => measure(stem) > 0;
const aboveOne = (stem: string): boolean => measure(stem) > 1;

const STEP1A: readonly Rule[] = [['sses', 'ss', null], ['ies', 'i', null], ['ss', 'ss', null], ['s', '', null]];

function step1a(word: string): string {
  if (word.length === 4 && word.endsWith('ies')) return `${word.slice(0, -3)}ie`;
  return applyRules(word, STEP1A);
}

function step1b(word: string): string {
  if (word.endsWith('ied')) return word.length === 4 ? `${word.slice(0, -3)}ie` : `${word.slice(0, -3)}i`;
  if (word.endsWith('eed')) {
    const stem = word.slice(0, -3);
    return measure(stem) > 0 ? `${stem}ee` : word;
  }
  let stem: string | undefined;
  for (const suffix of ['ed', 'ing']) {
    if (word.endsWith(suffix)) {
      const candidate = word.slice(0, -suffix.length);
      if (containsVowel(candidate)) {
        stem = candidate;
        break;
      }
    }
  }
  if (stem === undefined) return word;
  const last = stem[stem.length - 1]!;
  return applyRules(stem, [
    ['at', 'ate', null],
    ['bl', 'ble', null],
    ['iz', 'ize', null],
    ['*d', last, () => last !== 'l' && last !== 's' && last !== 'z'],
    ['', 'e', (s) => measure(s) === 1 && endsCvc(s)],
  ]);
}

function step1c(word: string): string {
  return applyRules(word, [['y', 'i', (stem) => stem.length > 1 && isConsonant(stem, stem.length - 1)]]);
}

const STEP2_COMMON: readonly Rule[] = [
  ['ational', 'ate', positive], ['tional', 'tion', positive], ['enci', 'ence', positive], ['anci', 'ance', positive],
  ['izer', 'ize', positive], ['bli', 'ble', positive], ['alli', 'al', positive], ['entli', 'ent', positive],
  ['eli', 'e', positive], ['ousli', 'ous', positive], ['ization', 'ize', positive], ['ation', 'ate', positive],
  ['ator', 'ate', positive], ['alism', 'al', positive], ['iveness', 'ive', positive], ['fulness', 'ful', positive],
  ['ousness', 'ous', positive], ['aliti', 'al', positive], ['iviti', 'ive', positive], ['biliti', 'ble', positive],
  ['fulli', 'ful', positive],
];

function step2(word: string): string {
  if (word.endsWith('alli') && positive(word.slice(0, -4))) return step2(`${word.slice(0, -4)}al`);
  // 'logi' -> 'log' when the word less 'ogi' has a positive measure.
  return applyRules(word, [...STEP2_COMMON, ['logi', 'log', () => positive(word.slice(0, -3))]]);
}

const STEP3: readonly Rule[] = [
  ['icate', 'ic', positive], ['ative', '', positive], ['alize', 'al', positive], ['iciti', 'ic', positive],
  ['ical', 'ic', positive], ['ful', '', positive], ['ness', '', positive],
];

const STEP4: readonly Rule[] = [
  ['al', '', aboveOne], ['ance', '', aboveOne], ['ence', '', aboveOne], ['er', '', aboveOne], ['ic', '', aboveOne],
  ['able', '', aboveOne], ['ible', '', aboveOne], ['ant', '', aboveOne], ['ement', '', aboveOne], ['ment', '', aboveOne],
  ['ent', '', aboveOne],
  ['ion', '', (stem) => measure(stem) > 1 && (stem.endsWith('s') || stem.endsWith('t'))],
  ['ou', '', aboveOne], ['ism', '', aboveOne], ['ate', '', aboveOne], ['iti', '', aboveOne], ['ous', '', aboveOne],
  ['ive', '', aboveOne], ['ize', '', aboveOne],
];

function step5a(word: string): string {
  if (!word.endsWith('e')) return word;
  const stem = word.slice(0, -1);
  const m = measure(stem);
  if (m > 1) return stem;
  if (m === 1 && !endsCvc(stem)) return stem;
  return word;
}

function step5b(word: string): string {
  return applyRules(word, [['ll', 'l', () => measure(word.slice(0, -1)) > 1]]);
}

/**
 * NLTK's `PorterStemmer().stem(word)` (NLTK_EXTENSIONS, lowercasing first).
 * NLTK 3.8.1 looks the irregular forms up before lowercasing, later versions
 * after: the two agree on lowercase input, which is all rouge_score passes.
 */
export function porterStem(word: string): string {
  const lower = word.toLowerCase();
  const irregular = IRREGULAR_FORMS.get(lower);
  if (irregular !== undefined) return irregular;
  if (word.length <= 2) return lower;
  let stem = step1a(lower);
  stem = step1b(stem);
  stem = step1c(stem);
  stem = step2(stem);
  stem = applyRules(stem, STEP3);
  stem = applyRules(stem, STEP4);
  stem = step5a(stem);
  return step5b(stem);
}
