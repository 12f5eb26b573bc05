/**
 * Mapping a token as an OpenAI-compatible server writes it in `logprobs`
 * back to its id. vLLM has written three forms over its versions:
 * - `token_id:N` with `--return-tokens-as-token-ids` (exact);
 * - the vocabulary piece (`convert_ids_to_tokens`, early vLLM; what MLPerf's
 *   llama2-70b reference SUT looks up in tokenizer.json's `model.vocab`);
 * - the token's text: `tokenizer.decode([id])` (the V1 engine), which for
 *   SentencePiece vocabularies (Llama 2, Mixtral) drops the leading space
 *   (`▁the` -> "the"), and which transformers 4.x cleans up when the
 *   tokenizer_config.json says so (Llama 3: `Ġ.` -> "."); or the text the
 *   token adds inside the sequence (" the": the V0 detokenizer's deltas,
 *   newer vLLM's restored spaces).
 * The text index holds every one of these texts per id, so one lookup
 * covers all versions. A text can stand for several ids: every byte token
 * of a split character decodes to "�" alone (about 1,200 ids in Llama 3's
 * vocabulary, 130 in Llama 2's), and with the space dropped "the" is both
 * `the` and `▁the`. Such a token maps to no id (undefined): the caller
 * re-encodes the response text, or asks the server for ids (vLLM
 * `return_token_ids`, `--return-tokens-as-token-ids`).
 */
import { inSlices } from './slices.js';
import type { LogprobTokenCandidates, LogprobTokenForm, LogprobTokenOptions, LogprobTokensResult, TokenizerAbortSignal } from './types.js';

/** What the index needs of the tokenizer. */
export interface LogprobSource {
  /** Every id that has a token, ascending. */
  ids: readonly number[];
  tokenToId(piece: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** decode(ids) without skipping special tokens, with or without transformers' clean-up. */
  decodeRaw(ids: readonly number[], cleanUp: boolean): string;
  /** The file's decoder drops a leading space of the first token (a Strip or Metaspace decoder). */
  stripsLeadingSpace: boolean;
  /** The tokenizer_config.json asks transformers 4.x to clean up decoded text. */
  cleanUp: boolean;
}

const TOKEN_ID = /^token_id:(\d{1,10})$/;
const BYTE_TOKEN = /^<0x[0-9A-Fa-f]{2}>$/;

type TextMap = Map<string, number | number[]>;
/**
 * The texts of each id, by how a server may have made them: decoded alone
 * (`decode([id])`), decoded alone and cleaned up (transformers 4.x with
 * `clean_up_tokenization_spaces`; only where it differs), and the text it
 * adds inside a sequence (only where the decoder drops a leading space).
 */
interface TextMaps {
  alone: TextMap;
  cleaned: TextMap | undefined;
  inside: TextMap | undefined;
}
type TextKind = keyof TextMaps;
const ALL_KINDS: readonly TextKind[] = ['alone', 'cleaned', 'inside'];

export class LogprobIndex {
  private maps: TextMaps | undefined;
  private building: Promise<void> | undefined;
  private readonly hasToken: Set<number>;

  constructor(private readonly source: LogprobSource) {
    this.hasToken = new Set(source.ids);
  }

  /** Builds the text index in slices that yield (see Tokenizer.prepareLogprobTokens). */
  prepare(signal?: TokenizerAbortSignal): Promise<void> {
    if (this.maps !== undefined) return Promise.resolve();
    this.building ??= this.build(signal).finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  candidates(token: string): LogprobTokenCandidates {
    const match = TOKEN_ID.exec(token);
    const n = match === null ? undefined : Number(match[1]);
    return {
      tokenId: n !== undefined && this.hasToken.has(n) ? n : undefined,
      piece: this.source.tokenToId(token),
      text: this.textIds(token, ALL_KINDS),
    };
  }

  toId(token: string, options?: LogprobTokenOptions): number | undefined {
    return this.read(token, options?.form ?? 'auto', ALL_KINDS);
  }

  toIds(tokens: readonly string[], options?: LogprobTokenOptions & { text?: string }): LogprobTokensResult {
    const expected = options?.text;
    const reading = (form: LogprobTokenForm, kinds: readonly TextKind[] = ALL_KINDS): LogprobTokensResult => {
      const ids = tokens.map((t) => this.read(t, form, kinds));
      const unresolved = ids.filter((id) => id === undefined).length;
      return { ids, form, unresolved, matchesText: expected === undefined ? undefined : unresolved === 0 && this.decodesTo(ids as number[], expected) };
    };
    const form = options?.form ?? 'auto';
    if (form === 'token-id' || form === 'piece') return reading(form);
    if (form === 'auto' && tokens.length > 0 && tokens.every((t) => TOKEN_ID.test(t))) return reading('token-id');
    // A server writes every token of a response in one way: the reading that maps them all (and reproduces the text) is it.
    // Texts from one way alone are less ambiguous than from all ways together (Mistral: "the" is `the`, or `▁the` decoded
    // alone; Llama 3 cleaned up: "." is `.`, or `Ġ.` cleaned up).
    const { cleaned, inside } = this.index();
    const candidates = [reading('text')];
    if (cleaned !== undefined || inside !== undefined) {
      candidates.push(reading('text', ['alone', 'inside']), reading('text', ['alone']));
      if (cleaned !== undefined) candidates.push(reading('text', ['alone', 'cleaned']));
      if (inside !== undefined) candidates.push(reading('text', ['inside']));
    }
    if (form === 'auto') candidates.push(reading('piece'));
    return candidates.reduce((best, r) => {
      if (expected !== undefined && r.matchesText !== best.matchesText) return r.matchesText ? r : best;
      return r.unresolved < best.unresolved ? r : best;
    });
  }

  private read(token: string, form: LogprobTokenForm | 'auto', kinds: readonly TextKind[]): number | undefined {
    if (form === 'piece') return this.source.tokenToId(token);
    const match = TOKEN_ID.exec(token);
    const tokenId = match !== null && this.hasToken.has(Number(match[1])) ? Number(match[1]) : undefined;
    if (form === 'token-id') return tokenId;
    if (form === 'auto' && tokenId !== undefined) return tokenId;
    const text = this.textIds(token, kinds);
    if (text.length === 1) return text[0];
    // A text of several ids is ambiguous even when it is also a piece: a server that writes texts may have meant any of them.
    return form === 'auto' && text.length === 0 ? this.source.tokenToId(token) : undefined;
  }

  private textIds(token: string, kinds: readonly TextKind[]): readonly number[] {
    const maps = this.index();
    const ids: number[] = [];
    for (const kind of kinds) {
      const found = maps[kind]?.get(token);
      if (found === undefined) continue;
      for (const id of typeof found === 'number' ? [found] : found) if (!ids.includes(id)) ids.push(id);
    }
    // A byte-fallback token (<0x2C>) decodes to the same text as the piece of its character (","), but the
    // tokenizer falls back to bytes only for characters without a piece: where a piece has the text, it is meant.
    if (ids.length > 1) {
      const pieces = ids.filter((id) => !BYTE_TOKEN.test(this.source.idToToken(id) ?? ''));
      if (pieces.length > 0 && pieces.length < ids.length) return pieces;
    }
    return ids;
  }

  private decodesTo(ids: number[], text: string): boolean {
    return this.source.decodeRaw(ids, false) === text || (this.source.cleanUp && this.source.decodeRaw(ids, true) === text);
  }

  private index(): TextMaps {
    if (this.maps === undefined) {
      const maps = this.emptyMaps();
      const add = this.adder(maps);
      for (let i = 0; i < this.source.ids.length; i += 1) add(i);
      this.maps = maps;
    }
    return this.maps;
  }

  private async build(signal?: TokenizerAbortSignal): Promise<void> {
    const maps = this.emptyMaps();
    await inSlices(this.source.ids.length, this.adder(maps), signal);
    this.maps ??= maps;
  }

  private emptyMaps(): TextMaps {
    return {
      alone: new Map(),
      cleaned: this.source.cleanUp ? new Map() : undefined,
      inside: this.source.stripsLeadingSpace ? new Map() : undefined,
    };
  }

  /** Adds the texts of the i-th id to the maps. */
  private adder(maps: TextMaps): (i: number) => void {
    const { ids, decodeRaw } = this.source;
    // Inside a sequence: after an anchor token whose own text is stable ("a").
    const anchor = this.source.tokenToId('a') ?? this.source.tokenToId('\u2581a');
    const anchorText = maps.inside !== undefined && anchor !== undefined ? decodeRaw([anchor], false) : undefined;
    const put = (map: TextMap, text: string, id: number) => {
      const seen = map.get(text);
      if (seen === undefined) map.set(text, id);
      else if (typeof seen === 'number') {
        if (seen !== id) map.set(text, [seen, id]);
      } else if (!seen.includes(id)) seen.push(id);
    };
    return (i) => {
      const id = ids[i]!;
      const alone = decodeRaw([id], false);
      put(maps.alone, alone, id);
      if (maps.cleaned !== undefined) {
        const cleaned = decodeRaw([id], true);
        if (cleaned !== alone) put(maps.cleaned, cleaned, id);
      }
      if (maps.inside !== undefined && anchorText !== undefined) {
        const inside = decodeRaw([anchor!, id], false);
        if (inside.startsWith(anchorText)) put(maps.inside, inside.slice(anchorText.length), id);
      }
    };
  }
}
