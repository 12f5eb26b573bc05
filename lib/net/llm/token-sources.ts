/**
 * Where each response's output ids and token counts came from, counted
 * across every thread that reads responses: the counters live in a
 * SharedArrayBuffer the SUT's options carry, so dispatch workers (which
 * re-create the protocol from those options) count into the same memory.
 */
import type { AccuracyDtype } from '../../datasets/accuracy-ids.js';

/** Slots of the counters (Int32Array). RESPONSES and OUT_USAGE keep their first places. */
export const RESPONSES = 0;
export const OUT_USAGE = 1;
export const OUT_SERVER_IDS = 2;
export const OUT_LOGPROBS = 3;
export const OUT_REENCODED = 4;
export const OUT_CHUNKS = 5;
export const OUT_NONE = 6;
export const IDS_SERVER = 7;
export const IDS_LOGPROBS = 8;
export const IDS_REENCODED = 9;
export const IDS_NONE = 10;
export const IN_USAGE = 11;
export const IN_DATASET_IDS = 12;
export const IN_DATASET_FIELD = 13;
export const IN_TOKENIZER = 14;
export const IN_NONE = 15;
export const DATA_TEXT = 16;
/** Input tokens from the server's prompt ids (vLLM's prompt_token_ids with return_token_ids). */
export const IN_SERVER_IDS = 17;
export const TOKEN_SOURCE_SLOTS = 18;

export type TokenSourceCounts = Int32Array;

/** Counters in shared memory (one set per SUT, handed to its workers in the options). */
export function sharedTokenSourceCounts(): TokenSourceCounts {
  return new Int32Array(new SharedArrayBuffer(TOKEN_SOURCE_SLOTS * 4));
}

/**
 * The counters the options carry, else a private set (a protocol made
 * alone). A shorter shared array (the first two slots, as before token
 * ids) counts what fits: responses and usage.
 */
export function tokenSourceCountsOf(shared: unknown): TokenSourceCounts {
  return shared instanceof Int32Array && shared.length >= 2 ? shared : new Int32Array(TOKEN_SOURCE_SLOTS);
}

export function count(counts: TokenSourceCounts, slot: number): void {
  if (slot < counts.length) Atomics.add(counts, slot, 1);
}

function read(counts: TokenSourceCounts, slot: number): number {
  return slot < counts.length ? Atomics.load(counts, slot) : 0;
}

/** What the run's accuracy data is, for the lines below. */
export interface AccuracyDataPlan {
  /** 'ids': output token ids; 'text': the output's UTF-8 text. */
  kind: 'ids' | 'text';
  dtype: AccuracyDtype;
  /** Why the data is text (kind 'text'), for the summary. */
  reason: string;
  excludeReasoning: boolean;
}

/** The SUT block's lines: output and input token counts by source. */
export function tokenSourceLines(counts: TokenSourceCounts, stream: boolean): string[] {
  const n = (slot: number): number => read(counts, slot);
  const responses = n(RESPONSES);
  const lines = [
    `output tokens: usage ${n(OUT_USAGE)}, server token ids ${n(OUT_SERVER_IDS)}, logprobs ${n(OUT_LOGPROBS)}, re-encoded text ${n(OUT_REENCODED)}, ${stream ? 'chunks' : 'none'} ${n(stream ? OUT_CHUNKS : OUT_NONE)} (of ${responses} responses)`,
    `input tokens: usage ${n(IN_USAGE)}, server prompt ids ${n(IN_SERVER_IDS)}, data set ids ${n(IN_DATASET_IDS)}, data set input_tokens ${n(IN_DATASET_FIELD)}, tokenizer ${n(IN_TOKENIZER)}, unknown ${n(IN_NONE)}`,
  ];
  return lines;
}

/** What the accuracy log's data is, with how many logged responses had ids from which source. */
export function accuracyDataLine(counts: TokenSourceCounts, plan: AccuracyDataPlan): string {
  const n = (slot: number): number => read(counts, slot);
  const reasoning = plan.excludeReasoning ? ', reasoning left out' : '';
  if (plan.kind === 'text') return `the output text (UTF-8), not token ids: ${plan.reason}${reasoning} (${n(DATA_TEXT)} logged responses)`;
  const logged = n(IDS_SERVER) + n(IDS_LOGPROBS) + n(IDS_REENCODED) + n(IDS_NONE);
  return `output token ids, little-endian ${plan.dtype} (MLCommons' evaluators: --dtype ${plan.dtype})${reasoning}; from server ids ${n(IDS_SERVER)}, logprobs ${n(IDS_LOGPROBS)}, re-encoded text ${n(IDS_REENCODED)}, none (failed) ${n(IDS_NONE)} (of ${logged} logged responses)`;
}
