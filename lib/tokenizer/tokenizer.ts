/**
 * The loaded tokenizer: @huggingface/tokenizers' Tokenizer behind loadgen's
 * interface (lib/tokenizer/types.ts), with the checks Hugging Face's own
 * tokenizers leave out: an id without a token is an error here (Python
 * drops it silently), and encode never returns an id of undefined.
 */
import { basename } from 'node:path';

import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';

import { TokenizerError } from '../errors.js';
import type { HfInternals } from './build.js';
import { LogprobIndex } from './logprobs.js';
import type {
  DecodeOptions,
  EncodeOptions,
  LogprobTokenCandidates,
  LogprobTokenOptions,
  LogprobTokensResult,
  Tokenizer,
  TokenizerAbortSignal,
} from './types.js';
import type { TokenizerJsonSummary } from './validate.js';

/** Lone UTF-16 surrogates: not Unicode text (Python cannot even hold them in a str that it encodes); encoded as U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** 128256 -> "128,256" (no locale data needed). */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export class LoadedTokenizer implements Tokenizer {
  readonly file: string;
  readonly modelType: string;
  readonly vocabSize: number;
  readonly description: string;
  readonly specialTokenIds: readonly number[];
  readonly cleanUpTokenizationSpaces: boolean;
  private readonly hf: HfTokenizer;
  /** id -> piece (vocabulary and added tokens); holes are ids without a token. */
  private readonly pieces: readonly (string | undefined)[];
  private readonly pieceIds: Map<string, number>;
  private readonly special: Set<number>;
  private readonly maxId: number;
  private readonly logprobs: LogprobIndex;

  constructor(file: string, hf: HfTokenizer, summary: TokenizerJsonSummary, cleanUp: { value: boolean; from: string | undefined }) {
    this.file = file;
    this.hf = hf;
    const internals = hf as unknown as HfInternals;
    this.pieces = internals.model.vocab;
    this.pieceIds = internals.model.tokens_to_ids;
    const ids: number[] = [];
    for (let id = 0; id < this.pieces.length; id += 1) if (this.pieces[id] !== undefined) ids.push(id);
    this.vocabSize = ids.length;
    this.maxId = this.pieces.length - 1;
    const added = internals.added_tokens;
    this.specialTokenIds = added.filter((t) => t.special).map((t) => t.id).sort((a, b) => a - b);
    this.special = new Set(this.specialTokenIds);
    this.modelType = summary.modelType;
    this.cleanUpTokenizationSpaces = cleanUp.value;
    const flavour = summary.decoderTypes.includes('ByteLevel') ? ', byte-level' : summary.decoderTypes.includes('ByteFallback') ? ', byte fallback' : '';
    this.description =
      `${summary.modelType}${flavour}, ${grouped(this.vocabSize)} tokens (${grouped(added.length)} added, ${grouped(this.special.size)} special), ${basename(file)}` +
      (cleanUp.value ? `, decode cleans up spaces (${basename(cleanUp.from ?? 'tokenizer_config.json')})` : '');
    this.logprobs = new LogprobIndex({
      ids,
      tokenToId: (piece) => this.tokenToId(piece),
      idToToken: (id) => this.idToToken(id),
      decodeRaw: (list, clean) => (list.length === 0 ? '' : hf.decode(list as number[], { skip_special_tokens: false, clean_up_tokenization_spaces: clean })),
      stripsLeadingSpace: summary.decoderTypes.includes('Strip') || summary.decoderTypes.includes('Metaspace'),
      cleanUp: cleanUp.value,
    });
  }

  encode(text: string, options?: EncodeOptions): number[] {
    if (typeof text !== 'string') throw new TypeError(`encode(text): text must be a string, got ${typeof text}`);
    const wellFormed = text.replace(LONE_SURROGATE, '\uFFFD');
    const ids = this.hf.encode(wellFormed, { add_special_tokens: options?.addSpecialTokens ?? true }).ids as (number | undefined)[];
    const missing = ids.indexOf(undefined);
    if (missing >= 0) {
      const pieces = this.hf.tokenize(wellFormed, { add_special_tokens: options?.addSpecialTokens ?? true });
      throw new TokenizerError(this.file, 'not-tokenizer', `${this.file}: the text splits into the piece ${JSON.stringify(pieces[missing])}, which the vocabulary lacks, and the model has no unk_token`);
    }
    return ids as number[];
  }

  decode(ids: ArrayLike<number | bigint>, options?: DecodeOptions): string {
    const skip = options?.skipSpecialTokens ?? false;
    const kept: number[] = [];
    for (let i = 0; i < ids.length; i += 1) {
      const raw = ids[i]!;
      // int64 ids read as a BigInt64Array (MLPerf's accuracy logs) decode as their numbers.
      const id = typeof raw === 'bigint' ? Number(raw) : raw;
      if (!Number.isInteger(id) || id < 0 || id > this.maxId || this.pieces[id] === undefined) throw this.badId(id, i);
      if (!skip || !this.special.has(id)) kept.push(id);
    }
    if (kept.length === 0) return '';
    return this.hf.decode(kept, { skip_special_tokens: false, clean_up_tokenization_spaces: options?.cleanUpTokenizationSpaces ?? this.cleanUpTokenizationSpaces });
  }

  tokenToId(piece: string): number | undefined {
    return this.pieceIds.get(piece);
  }

  idToToken(id: number): string | undefined {
    return Number.isInteger(id) && id >= 0 ? this.pieces[id] : undefined;
  }

  logprobTokenToId(token: string, options?: LogprobTokenOptions): number | undefined {
    return this.logprobs.toId(token, options);
  }

  logprobTokenCandidates(token: string): LogprobTokenCandidates {
    return this.logprobs.candidates(token);
  }

  logprobTokensToIds(tokens: readonly string[], options?: LogprobTokenOptions & { text?: string }): LogprobTokensResult {
    return this.logprobs.toIds(tokens, options);
  }

  prepareLogprobTokens(signal?: TokenizerAbortSignal): Promise<void> {
    return this.logprobs.prepare(signal);
  }

  private badId(id: unknown, index: number): TokenizerError {
    const range = `the vocabulary of ${basename(this.file)} has ${grouped(this.vocabSize)} tokens, ids 0 to ${this.maxId}`;
    const what = typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= this.maxId ? `has no token (${range}, with gaps)` : `is out of range (${range})`;
    return new TokenizerError(this.file, 'invalid-id', `token id ${String(id)} at index ${index} ${what}`);
  }
}
