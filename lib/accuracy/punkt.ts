/**
 * Punkt sentence boundary detection (Kiss & Strunk 2006) as NLTK 3.8.1's
 * `PunktSentenceTokenizer.tokenize` applies a trained model: the version
 * MLCommons pins for `nltk.sent_tokenize` before ROUGE-Lsum. Written from
 * the algorithm and NLTK's documented behaviour: its word tokenizer, the
 * candidate contexts around '.', '?' and '!', the type-based first pass
 * (abbreviations, ellipses), the token-based second pass (collocations, the
 * orthographic heuristic, frequent sentence starters, initials and
 * ordinals) and the realignment of closing quotes and brackets.
 *
 * Python's regular expressions are reproduced character class by character
 * class: `\s` is Python's Unicode whitespace (str.isspace), `\w`/`\d` its
 * Unicode word characters and decimal digits.
 */

/** Trained Punkt parameters (NLTK's PunktParameters / a punkt_tab folder). */
export interface PunktParameters {
  /** Abbreviation types, lowercase, without the final period (e.g. 'dr', 'u.s'). */
  readonly abbrevTypes: ReadonlySet<string>;
  /** Collocations (type before the period, type after) that are no sentence break. */
  readonly collocations: ReadonlySet<string>;
  /** Types frequent at the start of a sentence. */
  readonly sentStarters: ReadonlySet<string>;
  /** Orthographic context flags per type (the ORTHO_* bits). */
  readonly orthoContext: ReadonlyMap<string, number>;
}

/** Key of a collocation in {@link PunktParameters.collocations}. */
export function collocationKey(first: string, second: string): string {
  return `${first}\t${second}`;
}

// Orthographic context flags (NLTK's _ORTHO_*): position in a sentence x case of the first letter.
export const ORTHO_BEG_UC = 1 << 1;
export const ORTHO_MID_UC = 1 << 2;
export const ORTHO_UNK_UC = 1 << 3;
export const ORTHO_BEG_LC = 1 << 4;
export const ORTHO_MID_LC = 1 << 5;
export const ORTHO_UNK_LC = 1 << 6;
const ORTHO_UC = ORTHO_BEG_UC + ORTHO_MID_UC + ORTHO_UNK_UC;
const ORTHO_LC = ORTHO_BEG_LC + ORTHO_MID_LC + ORTHO_UNK_LC;

/** Python's `\s` for str patterns: exactly the characters for which str.isspace() is true. */
const WS = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const S = `[${WS}]`;
const NOT_S = `[^${WS}]`;
const WS_RE = new RegExp(S, 'u');
/** Python's string.whitespace (ASCII only), which NLTK's _get_last_whitespace_index uses. */
const ASCII_WHITESPACE = ' \t\n\r\x0b\x0c';

/** NLTK 3.8.1's non-word characters: `[)";}\]*:@'({[` plus '?' and '!'. */
const NON_WORD = `[)";}\\]*:@'({\\[?!]`;
/** Hyphen runs, dot runs and spaced ellipses ('. . .'). */
const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.${S}){2,}\\.)`;
/** Characters that cannot start a word token: ( " ` { [ : ; & # * @ ) } ] - , */
const WORD_START = '[^("`{\\[:;&#*@)}\\]\\-,]';

const WORD_TOKENIZER = new RegExp(
  `${MULTI_CHAR}|(?=${WORD_START})${NOT_S}+?(?=${S}|$|${NON_WORD}|${MULTI_CHAR}|,(?=$|${S}|${NON_WORD}|${MULTI_CHAR}))|${NOT_S}`,
  'gu',
);

const PERIOD_CONTEXT = new RegExp(`[.?!](?=(?<afterTok>${NON_WORD}|${S}+(?<nextTok>${NOT_S}+)))`, 'gdu');

/** 3.8.1's realignment: closing quotes/brackets after a break, up to whitespace, '--' or a line end. */
const BOUNDARY_REALIGNMENT = new RegExp(`^["')\\]}]+?(?:${S}+|(?=--)|(?=\\n)|$)`, 'u');

const NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.-]*\.?$/u;
const ELLIPSIS = /^\.\.+$/;
/** `[^\W\d]\.` : one letter-like word character, then a period. */
const INITIAL = /^[\p{L}\p{Nl}\p{No}_]\.$/u;
const UPPER = /^\p{Uppercase}/u;
const LOWER = /^\p{Lowercase}/u;

const SENT_END_CHARS = new Set(['.', '?', '!']);
const PUNCTUATION = new Set([';', ':', ',', '.', '!', '?']);

class Token {
  readonly tok: string;
  readonly type: string;
  readonly periodFinal: boolean;
  sentbreak = false;
  abbr = false;
  ellipsis = false;

  constructor(tok: string) {
    this.tok = tok;
    const lower = tok.toLowerCase();
    this.type = NUMERIC.test(lower) ? '##number##' : lower;
    this.periodFinal = tok.endsWith('.');
  }

  get typeNoPeriod(): string {
    return this.type.length > 1 && this.type.endsWith('.') ? this.type.slice(0, -1) : this.type;
  }

  get typeNoSentperiod(): string {
    return this.sentbreak ? this.typeNoPeriod : this.type;
  }

  get firstUpper(): boolean {
    return UPPER.test(this.tok);
  }

  get firstLower(): boolean {
    return LOWER.test(this.tok);
  }

  get isInitial(): boolean {
    return INITIAL.test(this.tok);
  }
}

/** Python's str.strip() emptiness: true when the line holds only whitespace. */
function isBlank(line: string): boolean {
  for (const ch of line) if (!WS_RE.test(ch)) return false;
  return true;
}

/** Python's str.rstrip(): the length without trailing whitespace. */
function rstripLength(text: string): number {
  let end = text.length;
  while (end > 0 && WS_RE.test(text[end - 1]!)) end--;
  return end;
}

/** NLTK's word tokenization of a text, line by line (blank lines yield nothing). */
function tokenizeWords(text: string): Token[] {
  const tokens: Token[] = [];
  for (const line of text.split('\n')) {
    if (isBlank(line)) continue;
    for (const m of line.matchAll(WORD_TOKENIZER)) tokens.push(new Token(m[0]));
  }
  return tokens;
}

/** A Punkt sentence tokenizer over fixed parameters. */
export class PunktSentenceTokenizer {
  private readonly params: PunktParameters;

  constructor(params: PunktParameters) {
    this.params = params;
  }

  /** The sentences of a text (NLTK's tokenize with realign_boundaries=True). */
  tokenize(text: string): string[] {
    return this.spans(text).map(([start, end]) => text.slice(start, end));
  }

  /** [start, end) character offsets of each sentence. */
  spans(text: string): Array<[number, number]> {
    return this.realignBoundaries(text, this.slicesFromText(text));
  }

  private firstPass(token: Token): void {
    const tok = token.tok;
    if (SENT_END_CHARS.has(tok)) {
      token.sentbreak = true;
    } else if (ELLIPSIS.test(tok)) {
      token.ellipsis = true;
    } else if (token.periodFinal && !tok.endsWith('..')) {
      const stem = tok.slice(0, -1).toLowerCase();
      const lastPart = stem.slice(stem.lastIndexOf('-') + 1);
      if (this.params.abbrevTypes.has(stem) || this.params.abbrevTypes.has(lastPart)) token.abbr = true;
      else token.sentbreak = true;
    }
  }

  private orthoHeuristic(token: Token): boolean | 'unknown' {
    if (PUNCTUATION.has(token.tok)) return false;
    const context = this.params.orthoContext.get(token.typeNoSentperiod) ?? 0;
    if (token.firstUpper && (context & ORTHO_LC) !== 0 && (context & ORTHO_MID_UC) === 0) return true;
    if (token.firstLower && ((context & ORTHO_UC) !== 0 || (context & ORTHO_BEG_LC) === 0)) return false;
    return 'unknown';
  }

  private secondPass(token: Token, next: Token): void {
    if (!token.periodFinal) return;
    const type = token.typeNoPeriod;
    const nextType = next.typeNoSentperiod;
    const initial = token.isInitial;
    if (this.params.collocations.has(collocationKey(type, nextType))) {
      token.sentbreak = false;
      token.abbr = true;
      return;
    }
    if ((token.abbr || token.ellipsis) && !initial) {
      if (this.orthoHeuristic(next) === true) {
        token.sentbreak = true;
        return;
      }
      if (next.firstUpper && this.params.sentStarters.has(nextType)) {
        token.sentbreak = true;
        return;
      }
    }
    if (initial || type === '##number##') {
      const starter = this.orthoHeuristic(next);
      if (starter === false) {
        token.sentbreak = false;
        token.abbr = true;
        return;
      }
      if (starter === 'unknown' && initial && next.firstUpper && ((this.params.orthoContext.get(nextType) ?? 0) & ORTHO_LC) === 0) {
        token.sentbreak = false;
        token.abbr = true;
      }
    }
  }

  /** NLTK's text_contains_sentbreak: a break on some token that is not the last. */
  private containsSentbreak(context: string): boolean {
    const tokens = tokenizeWords(context);
    // First pass runs one token ahead of the second, as NLTK's chained generators do.
    if (tokens.length > 0) this.firstPass(tokens[0]!);
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      const next = tokens[i + 1];
      if (next !== undefined) {
        this.firstPass(next);
        this.secondPass(token, next);
      }
      if (token.sentbreak) return next !== undefined;
    }
    return false;
  }

  /** NLTK's _match_potential_end_contexts: each candidate with the word before it and the token after. */
  private *potentialEndContexts(text: string): Generator<{ end: number; nextTokStart: number | undefined; context: string }> {
    let previousStart = 0;
    let previousStop = 0;
    let previous: RegExpExecArray | undefined;
    const contextOf = (m: RegExpExecArray, start: number, stop: number): string => text.slice(start, stop) + m[0] + m.groups!['afterTok']!;
    PERIOD_CONTEXT.lastIndex = 0;
    for (let m = PERIOD_CONTEXT.exec(text); m !== null; m = PERIOD_CONTEXT.exec(text)) {
      const before = text.slice(previousStop, m.index);
      let lastSpace = 0;
      for (let i = before.length - 1; i >= 0; i--) {
        if (ASCII_WHITESPACE.includes(before[i]!)) {
          lastSpace = i;
          break;
        }
      }
      // A whitespace at index 0 of the gap counts as none, as in NLTK.
      const wordStart = lastSpace !== 0 ? lastSpace + previousStop + 1 : previousStart;
      if (previous !== undefined && previousStop <= wordStart) {
        yield { end: previous.index + 1, nextTokStart: previous.indices!.groups!['nextTok']?.[0], context: contextOf(previous, previousStart, previousStop) };
      }
      previous = m;
      previousStart = wordStart;
      previousStop = m.index;
    }
    if (previous !== undefined) {
      yield { end: previous.index + 1, nextTokStart: previous.indices!.groups!['nextTok']?.[0], context: contextOf(previous, previousStart, previousStop) };
    }
  }

  private slicesFromText(text: string): Array<[number, number]> {
    const slices: Array<[number, number]> = [];
    let lastBreak = 0;
    for (const candidate of this.potentialEndContexts(text)) {
      if (this.containsSentbreak(candidate.context)) {
        slices.push([lastBreak, candidate.end]);
        lastBreak = candidate.nextTokStart ?? candidate.end;
      }
    }
    slices.push([lastBreak, rstripLength(text)]);
    return slices;
  }

  private realignBoundaries(text: string, slices: Array<[number, number]>): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let realign = 0;
    for (let i = 0; i < slices.length; i++) {
      const start = slices[i]![0] + realign;
      const stop = slices[i]![1];
      const next = slices[i + 1];
      if (next === undefined) {
        if (stop > start) out.push([start, stop]);
        continue;
      }
      const m = BOUNDARY_REALIGNMENT.exec(text.slice(next[0], next[1]));
      if (m !== null) {
        out.push([start, next[0] + rstripLength(m[0])]);
        realign = m[0].length;
      } else {
        realign = 0;
        if (stop > start) out.push([start, stop]);
      }
    }
    return out;
  }
}
