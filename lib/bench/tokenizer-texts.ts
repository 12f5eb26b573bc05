/**
 * Deterministic English news-like texts of CNN length (700 to 800 words of prose,
 * 710 to 860 separated by spaces, ~4,700 characters),
 * for the tokenizer benchmark: the same seed gives the same texts on every
 * machine and Node version (a 32-bit PRNG, integer arithmetic only), so
 * throughputs measured on different machines tokenize the same input. No
 * download: the vocabulary is below. The texts are not English prose, but
 * they have its shape where a tokenizer cares: common words and rare ones,
 * capitals, names, numbers (years, money, percentages, counts), commas,
 * quotes, apostrophes, hyphens, parentheses, sentence and paragraph breaks.
 */

/** Words of plain prose, commonest first (picked more often). */
const COMMON = (
  'the of and to a in that is was he for it with as his on be at by i this had not are but from or have an they which ' +
  'one you were her all she there would their we him been has when who will more no if out so said what up its about ' +
  'into than them can only other new some could time these two may then do first any my now such like our over man me ' +
  'even most made after also did many before must through back years where much your way well down should because each ' +
  'just those people how too little state good very make world still own see men work long get here between both life ' +
  'being under never day same another know while last might us great old year off come since against go came right used ' +
  'take three'
).split(' ');

/** Less common words: news vocabulary, long and rare words (split into several tokens by most vocabularies). */
const RARE = (
  'government president official officials police report reported according statement investigation authorities ' +
  'court judge lawyer attorney prosecutors evidence charged arrested suspect victims hospital doctors patients health ' +
  'medical treatment disease outbreak vaccine researchers study scientists university students school teachers children ' +
  'families parents community residents neighborhood city county town village region province country nation border ' +
  'military soldiers troops forces attack bombing explosion killed injured wounded survivors rescue emergency disaster ' +
  'earthquake hurricane flooding wildfire weather temperatures climate environmental pollution energy electricity ' +
  'economy economic market markets prices inflation unemployment billion million percent company companies business ' +
  'industry workers employees executive chief spokesman spokeswoman announced agreement negotiations election voters ' +
  'campaign candidate senator congressman congress parliament legislation administration policy immigration refugees ' +
  'protesters demonstration violence security technology internet smartphone software computer hackers cyberattack ' +
  'football basketball championship tournament coach players season victory defeat stadium olympic athletes record ' +
  'television interview documentary celebrity actress musician album festival museum exhibition historic archaeologists ' +
  'extraordinary unprecedented controversial bureaucratic infrastructure telecommunications pharmaceutical ' +
  'cardiovascular misinformation counterterrorism decommissioned whistleblower notwithstanding'
).split(' ');

const NAMES = (
  'John Mary David Sarah Michael Jennifer Robert Linda James Patricia Ahmed Fatima Wei Mei Hiroshi Yuki Carlos Maria ' +
  'Olumide Chiamaka Dmitri Svetlana Priya Rajesh Smith Johnson Williams Brown Garcia Miller Davis Rodriguez Martinez ' +
  'Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Thompson White Harris Clark Lewis'
).split(' ');

const PLACES = (
  'Washington London Paris Beijing Tokyo Moscow Berlin Cairo Nairobi Lagos Mumbai Delhi Sydney Toronto Mexico Brazil ' +
  'Atlanta Chicago Texas California Florida Syria Iraq Afghanistan Ukraine Japan China India Europe Africa Asia'
).split(' ');

const ORGS = 'CNN NASA FBI CIA NATO EU UN WHO FIFA NFL NBA UNICEF'.split(' ');

const VERBS_SAID = ['said', 'told CNN', 'said in a statement', 'added', 'explained', 'wrote on Twitter', 'told reporters'];
const MONTHS = 'January February March April May June July August September October November December'.split(' ');

/** Mulberry32: 32-bit state, integer arithmetic only, so every platform draws the same sequence. */
function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generated texts: `count` of them, each 700 to 800 words of prose (710 to 860 whitespace-separated), the same for the same seed. */
export function generateNewsTexts(count: number, seed = 24): string[] {
  const random = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  // Zipf-like preference for the head of COMMON: the square of a uniform draw.
  const common = () => COMMON[Math.floor(random() * random() * COMMON.length)]!;
  const number = () => {
    switch (int(0, 5)) {
      case 0: return String(int(1950, 2024));
      case 1: return `$${int(1, 999)}.${int(0, 9)} ${pick(['million', 'billion'])}`;
      case 2: return `${int(1, 99)}${pick(['%', ' percent'])}`;
      case 3: return `${int(1, 999)},${String(int(0, 999)).padStart(3, '0')}`;
      case 4: return `${pick(MONTHS)} ${int(1, 28)}`;
      default: return String(int(2, 500));
    }
  };
  const word = () => {
    const r = random();
    if (r < 0.62) return common();
    if (r < 0.86) return pick(RARE);
    if (r < 0.91) return pick(NAMES);
    if (r < 0.95) return pick(PLACES);
    if (r < 0.97) return pick(ORGS);
    return number();
  };
  const texts: string[] = [];
  for (let t = 0; t < count; t += 1) {
    const target = int(700, 800);
    const words: string[] = [`(CNN) --`];
    let n = 0;
    while (n < target) {
      const length = Math.min(int(8, 30), target - n);
      const sentence: string[] = [];
      for (let i = 0; i < length; i += 1) {
        let w = word();
        const decoration = random();
        if (decoration < 0.02) w = `${w}'s`;
        else if (decoration < 0.03) w = `${w}-${pick(RARE)}`;
        else if (decoration < 0.035) w = `(${w})`;
        if (i > 2 && i < length - 2 && random() < 0.07) w = `${w},`;
        sentence.push(w);
      }
      sentence[0] = sentence[0]!.charAt(0).toUpperCase() + sentence[0]!.slice(1);
      let text = `${sentence.join(' ')}${random() < 0.1 ? '?' : '.'}`;
      if (random() < 0.12) text = `"${text}" ${pick(NAMES)} ${pick(VERBS_SAID)}.`;
      words.push(text);
      n += length;
      if (random() < 0.08) words.push('\n\n');
    }
    texts.push(words.join(' ').replace(/ \n\n /g, '\n\n'));
  }
  return texts;
}
