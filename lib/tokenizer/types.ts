/**
 * The tokenizer layer's public types: a Hugging Face `tokenizer.json` loaded
 * by {@link loadTokenizer} (lib/tokenizer/load.ts).
 */

import type { RunAbortSignal } from '../run-abort-signal.js';

export interface EncodeOptions {
  /**
   * Add the special tokens the file's post-processor adds (Llama's `<s>` /
   * `<|begin_of_text|>`). Default true, as Hugging Face's `encode` does; a
   * file whose post-processor adds none (Qwen, gpt-oss) adds none either way.
   */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Leave out the added tokens marked special (`<s>`, `<|eot_id|>`), as `skip_special_tokens=True` does. Default false. */
  skipSpecialTokens?: boolean;
  /**
   * Apply transformers' `clean_up_tokenization` to the text (" ." -> ".",
   * " n't" -> "n't", ...), as transformers 4.x's `decode` does when the
   * tokenizer_config.json beside the file says `clean_up_tokenization_spaces: true`
   * (Llama 3 and 3.1 do). Default: {@link Tokenizer.cleanUpTokenizationSpaces}.
   */
  cleanUpTokenizationSpaces?: boolean;
}

/**
 * How an OpenAI-compatible server wrote a token in `logprobs` (vLLM:
 * `choices[0].logprobs.tokens[]` on /v1/completions, `logprobs.content[].token`
 * on chat):
 * - `token-id`: `token_id:N` (vLLM `--return-tokens-as-token-ids`);
 * - `piece`: the vocabulary piece (`Ġthe`, `▁the`, `<0x0A>`: early vLLM,
 *   what MLPerf's reference harness looks up in tokenizer.json's vocabulary);
 * - `text`: the text of the token decoded alone (`tokenizer.decode([id])`:
 *   vLLM's V1 engine), or, where the decoder strips a leading space
 *   (SentencePiece: Llama 2, Mixtral), the text the token adds inside a
 *   sequence (` the`: vLLM's V0 detokenizer, newer vLLM's restored spaces).
 */
export type LogprobTokenForm = 'token-id' | 'piece' | 'text';

export interface LogprobTokenOptions {
  /** The form the server writes tokens in; default 'auto' (token_id:N, else a unique text, else a piece). */
  form?: LogprobTokenForm | 'auto';
}

/** Every id a logprob token can stand for, by form (see {@link Tokenizer.logprobTokenCandidates}). */
export interface LogprobTokenCandidates {
  /** The id of `token_id:N` when N is an id of this vocabulary. */
  tokenId: number | undefined;
  /** The id whose vocabulary piece (or added token) is exactly the token. */
  piece: number | undefined;
  /** The ids whose decoded text is the token (several: ambiguous, e.g. "�" for each byte of a split character). */
  text: readonly number[];
}

export interface LogprobTokensResult {
  /** One per token; undefined where the token could not be mapped to exactly one id. */
  ids: (number | undefined)[];
  /** The form used for every token (the one that mapped the most; 'token-id' when every token was `token_id:N`). */
  form: LogprobTokenForm;
  /** Tokens left undefined: no id, or several ids (ambiguous). */
  unresolved: number;
  /**
   * When `text` was given: whether decoding `ids` gives exactly that text
   * (every token resolved and the ids reproduce the response). Undefined when
   * no text was given.
   */
  matchesText: boolean | undefined;
}

/** A standard AbortSignal (lib/run-abort-signal.ts: no DOM or @types/node needed). */
export type TokenizerAbortSignal = RunAbortSignal;

export interface LoadTokenizerOptions {
  /**
   * The tokenizer_config.json to read `clean_up_tokenization_spaces` from:
   * default the one beside the file when there is one; false: none.
   */
  config?: string | false;
  /** Stops the load between its slices (rejecting with the signal's reason). */
  signal?: TokenizerAbortSignal;
}

/** A loaded tokenizer.json. Every method is synchronous; loading yields to the event loop (see loadTokenizer). */
export interface Tokenizer {
  /** The tokenizer.json it was loaded from, as given. */
  readonly file: string;
  /** The model's type in the file: 'BPE', 'WordPiece' or 'Unigram'. */
  readonly modelType: string;
  /** Ids with a token: the vocabulary plus the added tokens (Python's `get_vocab_size(with_added_tokens=True)`). */
  readonly vocabSize: number;
  /** One line: model type, vocabulary size, special tokens, file name, e.g. "BPE, 128,256 tokens (256 added, 256 special), byte-level, tokenizer.json". */
  readonly description: string;
  /** The ids of the added tokens marked special (skipped by `decode(ids, { skipSpecialTokens: true })`). */
  readonly specialTokenIds: readonly number[];
  /** decode's default clean-up: tokenizer_config.json's `clean_up_tokenization_spaces`, false without one. */
  readonly cleanUpTokenizationSpaces: boolean;
  /** The ids of `text`, identical to Hugging Face tokenizers' `encode(text).ids`. */
  encode(text: string, options?: EncodeOptions): number[];
  /**
   * The text of `ids` (numbers, or bigints as a BigInt64Array holds them),
   * identical to Hugging Face tokenizers' `decode`; an id without a token
   * throws a TokenizerError.
   */
  decode(ids: ArrayLike<number | bigint>, options?: DecodeOptions): string;
  /** The id of a vocabulary piece or added token (`Ġthe`, `<|eot_id|>`), else undefined. */
  tokenToId(piece: string): number | undefined;
  /** The vocabulary piece or added token of an id, else undefined. */
  idToToken(id: number): string | undefined;
  /**
   * The id of a token as an OpenAI-compatible server returns it in
   * `logprobs` (see {@link LogprobTokenForm}); undefined when the token
   * maps to no id or to several (ambiguous: then re-encode the response
   * text, or ask the server for token ids).
   */
  logprobTokenToId(token: string, options?: LogprobTokenOptions): number | undefined;
  /** Every id the token can stand for, by form: what {@link logprobTokenToId} chooses from. */
  logprobTokenCandidates(token: string): LogprobTokenCandidates;
  /**
   * The ids of one response's logprob tokens, all read in one form (the
   * server writes all of them alike): `form`, or with 'auto' the form that
   * maps the most tokens. With `text` (the response's text), whether the
   * ids decode to it.
   */
  logprobTokensToIds(tokens: readonly string[], options?: LogprobTokenOptions & { text?: string }): LogprobTokensResult;
  /**
   * Builds the decoded-text index that the 'text' form looks tokens up in,
   * in slices that yield to the event loop. Optional: the first lookup that
   * needs it builds it otherwise, synchronously (a vocabulary of 128k takes
   * about a second): call this before a run that maps logprob tokens.
   */
  prepareLogprobTokens(signal?: TokenizerAbortSignal): Promise<void>;
}
