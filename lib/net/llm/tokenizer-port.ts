/**
 * What the LLM protocols need of a tokenizer (lib/tokenizer's Tokenizer
 * has it): encoding text to count or re-create output ids, and a
 * vocabulary to map streamed logprob tokens to ids.
 */
export interface LlmTokenizer {
  /** The ids of `text` as the model's tokenizer makes them; special tokens (BOS) only with `addSpecialTokens`. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): ArrayLike<number>;
  /** A vocabulary entry's id (undefined: not in the vocabulary). */
  tokenToId(token: string): number | undefined;
  /** The id of a token as a server's logprobs spell it (byte-level pieces decoded), undefined when unknown. */
  logprobTokenToId(token: string): number | undefined;
  /**
   * One response's logprob tokens as ids, read in one form and checked
   * against the response's text: undefined unless every token maps to one id
   * and the ids decode to `text` (then re-encode the text instead).
   */
  logprobTokensToIds?(tokens: readonly string[], text: string): number[] | undefined;
  /** Ids are below this (the vocabulary's size, added tokens included), when known. */
  readonly vocabSize?: number;
  /** One line naming the tokenizer (for the SUT block). */
  readonly description?: string;
}

/** vLLM's `return_tokens_as_token_ids` spelling of a logprob token: 'token_id:123'. */
const TOKEN_ID_SPELLING = /^token_id:(\d{1,10})$/;

/** The id of a streamed logprob token: 'token_id:N' as such, else through the tokenizer's vocabulary. */
export function logprobTokenId(token: string, tokenizer: LlmTokenizer | undefined): number | undefined {
  const spelled = TOKEN_ID_SPELLING.exec(token);
  if (spelled !== null) {
    const id = Number(spelled[1]);
    return id <= 2 ** 31 - 1 ? id : undefined;
  }
  return tokenizer?.logprobTokenToId(token);
}
