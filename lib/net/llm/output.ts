/**
 * One response's output as the LLM readers (OpenAI chunks, SGLang's
 * /generate) parse it: text (reasoning and content), token ids the server
 * sent, logprob tokens, usage. At the end it gives the outcome's token
 * counts and accuracy data, each from the best source there is, and counts
 * which source that was:
 * - output ids: the server's (vLLM token_ids, SGLang output_ids), else the
 *   logprob tokens mapped through the tokenizer's vocabulary, else the text
 *   re-encoded with the tokenizer;
 * - output tokens: usage, else the server's ids, the logprob tokens, the
 *   re-encoded text, the chunks with output (streams);
 * - input tokens: usage, else the server's prompt ids (vLLM's
 *   prompt_token_ids), the data set's ids, its input_tokens, the
 *   tokenizer's count of the prompt.
 */
import { encodeTokenIds } from '../../datasets/accuracy-ids.js';
import type { ResponseOutcome } from '../protocol.js';
import { logprobTokenId, type LlmTokenizer } from './tokenizer-port.js';
import * as S from './token-sources.js';
import type { AccuracyDataPlan, TokenSourceCounts } from './token-sources.js';

/** What the readers of one protocol share. */
export interface OutputConfig {
  plan: AccuracyDataPlan;
  tokenizer: LlmTokenizer | undefined;
  counts: TokenSourceCounts;
  /** Chunks with output count as tokens when nothing better exists (streams). */
  stream: boolean;
}

/** A sample's input token count known before the run, and where from. */
export interface KnownInputTokens {
  count: number;
  /** IN_DATASET_IDS, IN_DATASET_FIELD or IN_TOKENIZER. */
  source: number;
}

/** One output-bearing event: its text and what else it carried. */
export interface OutputPart {
  reasoning: string;
  content: string;
  /** Token ids of this event (deltas), when the server sent them. */
  ids?: readonly number[];
  /** Logprob tokens of this event (one per generated token). */
  logprobTokens?: readonly string[];
  /** Output that is not text (tool calls, ids): the first token's bytes when there is no text. */
  other?: unknown;
}

/** A server value as token ids: an array of integers in 0..2^31-1, else undefined. */
export function serverIds(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const v of value) if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 31 - 1) return undefined;
  return value as number[];
}

export class OutputCollector {
  private readonly reasoning: string[] = [];
  private readonly content: string[] = [];
  private readonly ids: number[] = [];
  private readonly contentIds: number[] = [];
  private readonly logprobTokens: string[] = [];
  /** Output events without ids (then the server's ids are not the whole output). */
  private partsWithoutIds = 0;
  private partsWithoutLogprobs = 0;
  /** An event with ids carried reasoning and content both (its ids cannot be split). */
  private mixedIds = false;
  private parts = 0;
  private usageOutput: number | undefined;
  private usageInput: number | undefined;
  private serverPromptTokens: number | undefined;
  private readonly keepText: boolean;

  constructor(
    private readonly config: OutputConfig,
    private readonly wantData: boolean,
    private readonly knownInput: KnownInputTokens | undefined,
  ) {
    // Text is kept for the data, or for a tokenizer to count what usage may not.
    this.keepText = wantData || config.tokenizer !== undefined;
  }

  get outputParts(): number {
    return this.parts;
  }

  /** An event with output; returns the first token's bytes for the first one. */
  add(part: OutputPart): Uint8Array | undefined {
    const first = this.parts++ === 0;
    if (this.keepText) {
      if (part.reasoning !== '') this.reasoning.push(part.reasoning);
      if (part.content !== '') this.content.push(part.content);
    }
    if (part.ids !== undefined && part.ids.length > 0) {
      for (const id of part.ids) this.ids.push(id);
      if (part.reasoning === '') for (const id of part.ids) this.contentIds.push(id);
      else if (part.content !== '') this.mixedIds = true;
    } else if (part.reasoning !== '' || part.content !== '') this.partsWithoutIds++;
    if (part.logprobTokens !== undefined && part.logprobTokens.length > 0) for (const t of part.logprobTokens) this.logprobTokens.push(t);
    else this.partsWithoutLogprobs++;
    return first ? this.firstTokenBytes(part) : undefined;
  }

  usage(output: number | undefined, input: number | undefined): void {
    if (output !== undefined) this.usageOutput = output;
    if (input !== undefined) this.usageInput = input;
  }

  /** The number of the prompt's ids the server sent (vLLM's prompt_token_ids). */
  promptIds(count: number): void {
    this.serverPromptTokens = count;
  }

  /** Replaces everything so far (SGLang's cumulative chunks carry the whole output each time). */
  replaceIds(ids: readonly number[]): void {
    this.ids.length = 0;
    this.contentIds.length = 0;
    for (const id of ids) {
      this.ids.push(id);
      this.contentIds.push(id);
    }
  }

  private text(withReasoning: boolean): string {
    return (withReasoning ? this.reasoning.join('') : '') + this.content.join('');
  }

  private firstTokenBytes(part: OutputPart): Uint8Array {
    const text = part.reasoning + part.content;
    // Only a logged sample's first token is written (token_data): ids for it, as for its data.
    if (this.wantData && this.config.plan.kind === 'ids') {
      const ids = part.ids !== undefined && part.ids.length > 0 ? part.ids : this.mappedLogprobs(part.logprobTokens ?? []) ?? this.config.tokenizer?.encode(text);
      if (ids !== undefined) return encodeTokenIds(ids, this.config.plan.dtype);
    }
    const other = part.other ?? part.ids;
    return Buffer.from(text !== '' || other === undefined ? text : (JSON.stringify(other) ?? ''), 'utf8');
  }

  private mappedLogprobs(tokens: readonly string[], text?: string): number[] | undefined {
    if (tokens.length === 0) return undefined;
    // A whole response's tokens with a tokenizer: one form for all, checked against the text.
    const tokenizer = this.config.tokenizer;
    if (text !== undefined && tokenizer?.logprobTokensToIds !== undefined) return tokenizer.logprobTokensToIds(tokens, text);
    const ids: number[] = [];
    for (const t of tokens) {
      const id = logprobTokenId(t, this.config.tokenizer);
      if (id === undefined) return undefined;
      ids.push(id);
    }
    return ids;
  }

  /** The server's ids are the whole output: every output event carried some. */
  private serverIdsComplete(): boolean {
    return this.ids.length > 0 && this.partsWithoutIds === 0;
  }

  private outputTokens(): number | undefined {
    const c = this.config.counts;
    if (this.usageOutput !== undefined) return S.count(c, S.OUT_USAGE), this.usageOutput;
    if (this.serverIdsComplete()) return S.count(c, S.OUT_SERVER_IDS), this.ids.length;
    if (this.logprobTokens.length > 0 && this.partsWithoutLogprobs === 0) return S.count(c, S.OUT_LOGPROBS), this.logprobTokens.length;
    if (this.config.tokenizer !== undefined && this.parts > 0) return S.count(c, S.OUT_REENCODED), this.config.tokenizer.encode(this.text(true)).length;
    if (this.config.stream) return S.count(c, S.OUT_CHUNKS), this.parts;
    return S.count(c, S.OUT_NONE), undefined;
  }

  private inputTokens(): number | undefined {
    const c = this.config.counts;
    if (this.usageInput !== undefined) return S.count(c, S.IN_USAGE), this.usageInput;
    if (this.serverPromptTokens !== undefined) return S.count(c, S.IN_SERVER_IDS), this.serverPromptTokens;
    if (this.knownInput !== undefined) return S.count(c, this.knownInput.source), this.knownInput.count;
    return S.count(c, S.IN_NONE), undefined;
  }

  /** The accuracy data: ids (or why there are none) in an ids run, else the text. */
  private data(): Uint8Array | string {
    const { plan, tokenizer, counts } = this.config;
    const withReasoning = !plan.excludeReasoning;
    if (plan.kind === 'text') {
      S.count(counts, S.DATA_TEXT);
      return Buffer.from(this.text(withReasoning), 'utf8');
    }
    let ids: ArrayLike<number> | undefined;
    let source = S.IDS_NONE;
    const reasoningLeftOut = !withReasoning && this.reasoning.length > 0;
    if (this.serverIdsComplete() && !(reasoningLeftOut && this.mixedIds)) {
      ids = reasoningLeftOut ? this.contentIds : this.ids;
      source = S.IDS_SERVER;
    } else if (!reasoningLeftOut && this.partsWithoutLogprobs === 0 && (ids = this.mappedLogprobs(this.logprobTokens, this.text(true))) !== undefined) {
      source = S.IDS_LOGPROBS;
    } else if (tokenizer !== undefined) {
      ids = tokenizer.encode(this.text(withReasoning));
      source = S.IDS_REENCODED;
    } else if (this.parts === 0) {
      ids = [];
      source = S.IDS_SERVER;
    }
    S.count(counts, source);
    if (ids === undefined) {
      const unmapped = this.logprobTokens.length > 0 ? '; its logprob tokens are not all in a vocabulary (--tokenizer maps them)' : '';
      return `no output token ids for the accuracy log: the server sent ${this.ids.length > 0 ? 'ids for only part of the output' : 'none'} (vLLM >= 0.10.2 answers return_token_ids; SGLang sends output_ids)${unmapped}; give --tokenizer FILE to re-encode the text, or --accuracy-data text`;
    }
    return encodeTokenIds(ids, plan.dtype);
  }

  /** The outcome once the response ended well formed. */
  finish(): ResponseOutcome {
    S.count(this.config.counts, S.RESPONSES);
    const nTokens = this.outputTokens();
    const inputTokens = this.inputTokens();
    let data: Uint8Array | undefined;
    if (this.wantData) {
      const d = this.data();
      if (typeof d === 'string') return { ok: false, kind: 'malformed_response', message: d };
      data = d;
    }
    return { ok: true, data, nTokens, inputTokens };
  }

  /** A failed response still counts as a response. */
  failed(): void {
    S.count(this.config.counts, S.RESPONSES);
  }
}
