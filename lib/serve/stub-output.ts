/**
 * What the OpenAI stub generates for a request: each token's text and id,
 * the prompt's ids as the server counts them, and each token as `logprobs`
 * writes it. Deterministic, so that a test can recompute it
 * (openAiStubOutput) and compare it with what a client logged.
 *
 * Without a tokenizer the text cycles through the prompt's words and the ids
 * are made up (stub-ids.ts). With one, the stub speaks that vocabulary: a
 * response repeats the prompt's tokens (special tokens left out), and its
 * text is streamed as a server's detokenizer streams it: a token that ends
 * inside a character (a byte token of a split character) streams '' and the
 * character comes with the token that completes it, so the texts joined are
 * exactly decode(ids).
 */
import type { Tokenizer } from '../tokenizer/types.js';
import { STUB_TEXT_ID_BASE, stubIdTokens, stubOutputIds, stubTextIds } from './stub-ids.js';

/** What the stub needs of a tokenizer to speak its vocabulary (lib/tokenizer's Tokenizer has it). */
export type StubTokenizer = Pick<Tokenizer, 'encode' | 'decode' | 'idToToken' | 'specialTokenIds'>;

/**
 * How the stub writes a token in `logprobs`, as vLLM does: 'text' the
 * token's text (with a tokenizer: decoded alone, vLLM's V1 engine), 'token-id'
 * `token_id:N` (--return-tokens-as-token-ids), 'piece' the vocabulary piece
 * (early vLLM; the text without a tokenizer).
 */
export type StubLogprobForm = 'text' | 'token-id' | 'piece';
export const STUB_LOGPROB_FORMS: readonly StubLogprobForm[] = ['text', 'token-id', 'piece'];

/** A request's prompt and length, as the stub reads them. */
export interface StubPrompt {
  /** The prompt's text (chat: the messages' text contents joined with '\n'); '' for a prompt of ids. */
  promptText: string;
  /** A prompt of token ids (completions `prompt: [ids]`, SGLang `input_ids`). */
  promptIds?: readonly number[] | undefined;
  /** Output tokens. */
  maxTokens: number;
}

export interface StubOutput {
  /** Each token's text as streamed; joined, the response's text. */
  texts: string[];
  ids: number[];
  /** The prompt's ids as the server counts them (usage.prompt_tokens is their number; vLLM's prompt_token_ids). */
  promptIds: number[];
}

/**
 * The stub's output for a prompt without a tokenizer: `count` tokens cycling
 * through the prompt's whitespace-separated words (' ' before every word but
 * the first), or 'token' when the prompt has none. For chat requests the
 * prompt is the messages' text contents joined with '\n'.
 */
export function openAiStubTokens(promptText: string, count: number): string[] {
  const words = wordsOf(promptText);
  if (words.length === 0) words.push('token');
  const tokens: string[] = [];
  for (let k = 0; k < count; k++) tokens.push((k === 0 ? '' : ' ') + words[k % words.length]);
  return tokens;
}

function wordsOf(text: string): string[] {
  return text.split(/\s+/).filter((w) => w.length > 0);
}

/** What the stub generates for a prompt (with `tokenizer`: in its vocabulary). */
export function openAiStubOutput(prompt: StubPrompt, tokenizer?: StubTokenizer): StubOutput {
  const count = prompt.maxTokens;
  if (tokenizer === undefined) {
    if (prompt.promptIds !== undefined) {
      const ids = stubOutputIds(prompt.promptIds, count);
      return { texts: stubIdTokens(ids), ids, promptIds: Array.from(prompt.promptIds) };
    }
    const words = wordsOf(prompt.promptText).length;
    return {
      texts: openAiStubTokens(prompt.promptText, count),
      ids: stubTextIds(prompt.promptText, count),
      promptIds: Array.from({ length: words }, (_, i) => STUB_TEXT_ID_BASE + i),
    };
  }
  // As a server counts a text prompt: with the special tokens the file's post-processor adds (BOS).
  const promptIds = prompt.promptIds !== undefined ? Array.from(prompt.promptIds) : tokenizer.encode(prompt.promptText, { addSpecialTokens: true });
  const special = new Set(tokenizer.specialTokenIds);
  let source = promptIds.filter((id) => !special.has(id));
  if (source.length === 0) source = tokenizer.encode('token', { addSpecialTokens: false });
  const ids = stubOutputIds(source, count);
  return { texts: streamedTexts(tokenizer, ids), ids, promptIds };
}

/**
 * Each token's text as a server's incremental detokenizer streams it: the
 * text the token adds, held back while the text so far ends in a split
 * character (U+FFFD), the rest with the last token. Decodes each prefix:
 * fine for tests, not for a bench at thousands of tokens a second.
 */
function streamedTexts(tokenizer: StubTokenizer, ids: readonly number[]): string[] {
  const options = { skipSpecialTokens: true, cleanUpTokenizationSpaces: false };
  const full = tokenizer.decode(ids, options);
  const texts: string[] = [];
  let emitted = 0;
  for (let k = 0; k < ids.length; k++) {
    let upTo = emitted;
    if (k === ids.length - 1) upTo = full.length;
    else {
      const prefix = tokenizer.decode(ids.slice(0, k + 1), options);
      if (!prefix.endsWith('\uFFFD') && prefix.length > emitted && full.startsWith(prefix)) upTo = prefix.length;
    }
    texts.push(full.slice(emitted, upTo));
    emitted = upTo;
  }
  return texts;
}

/** Token `k` of an output as `logprobs` writes it in `form`. */
export function stubLogprobToken(output: StubOutput, k: number, form: StubLogprobForm, tokenizer: StubTokenizer | undefined): string {
  const id = output.ids[k]!;
  if (form === 'token-id') return `token_id:${id}`;
  if (tokenizer === undefined) return output.texts[k]!;
  if (form === 'piece') return tokenizer.idToToken(id) ?? output.texts[k]!;
  // vLLM's V1 engine: the token decoded alone, as transformers decodes (its clean-up when the tokenizer's config asks).
  return tokenizer.decode([id]);
}
