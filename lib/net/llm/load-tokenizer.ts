/**
 * Loads `--tokenizer FILE` for the LLM protocols: lib/tokenizer's Hugging
 * Face tokenizer.json behind the port the protocols use (tokenizer-port.ts).
 */
import type { RunAbortSignal } from '../../run-abort-signal.js';
import { loadTokenizer } from '../../tokenizer/index.js';
import type { LlmTokenizer } from './tokenizer-port.js';

export interface LlmTokenizerOptions {
  /** Logprob tokens will be mapped: the decoded-text index is built now, in slices, not on the first response. */
  logprobs?: boolean;
  signal?: RunAbortSignal;
}

export async function loadLlmTokenizer(file: string, options: LlmTokenizerOptions = {}): Promise<LlmTokenizer> {
  const tokenizer = await loadTokenizer(file, options.signal !== undefined ? { signal: options.signal } : {});
  if (options.logprobs === true) await tokenizer.prepareLogprobTokens(options.signal);
  return {
    // Output text is re-encoded as the model generated it (no BOS); a prompt as the server encodes it (the file's post-processor).
    encode: (text, o) => tokenizer.encode(text, { addSpecialTokens: o?.addSpecialTokens ?? false }),
    tokenToId: (piece) => tokenizer.tokenToId(piece),
    logprobTokenToId: (token) => tokenizer.logprobTokenToId(token),
    logprobTokensToIds: (tokens, text) => {
      // Trusted only whole: every token resolved in one form, and the ids decode to the response's text.
      const mapped = tokenizer.logprobTokensToIds(tokens, { text });
      return mapped.unresolved === 0 && mapped.matchesText === true ? (mapped.ids as number[]) : undefined;
    },
    vocabSize: tokenizer.vocabSize,
    description: tokenizer.description,
  };
}
