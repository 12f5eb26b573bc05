/**
 * The data-set layer's public shapes: what `readDataset` takes and gives.
 * A data set is MLPerf's own file (cnn_eval.json's JSON array, JSONL, or
 * Parquet converted from a pickled DataFrame): one record per sample, the
 * prompt as token ids (`tok_input`) or text (`input`, `prompt`, chat
 * `messages`), the reference output (`output`) for accuracy scoring, and
 * optional generation parameters per record.
 */

import type { RunAbortSignal } from '../run-abort-signal.js';

/** The file formats read (detected from the content, the extension as a hint). */
export const DATASET_FORMATS = ['jsonl', 'json', 'parquet'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/**
 * The prompt fields tried, in order, when `promptField` is not given: token
 * ids first (MLPerf's preprocessed sets carry both), then text. Of the text
 * fields a record may carry only one.
 */
export const DEFAULT_PROMPT_ID_FIELD = 'tok_input';
export const DEFAULT_PROMPT_TEXT_FIELDS = ['input', 'prompt', 'messages'] as const;
/** The reference output's field (MLPerf's `output`). */
export const DEFAULT_TARGET_FIELD = 'output';

/** The largest token id a data set may hold (ids are logged as int32 by MLCommons' harnesses). */
export const MAX_TOKEN_ID = 2 ** 31 - 1;
/** Largest `max_tokens` / `min_tokens` a record or option may ask for. */
export const MAX_GENERATION_TOKENS = 2 ** 31 - 1;
/** Largest `temperature` a record or option may set. */
export const MAX_TEMPERATURE = 100;

/** Generation parameters (the rules' table: max/min new tokens, ignore_eos, greedy temperature 0). */
export interface GenerationParams {
  /** `max_tokens` (OpenAI) / `max_new_tokens` (SGLang): integer 1..2^31-1. */
  maxTokens?: number;
  /** `min_tokens` (vLLM) / `min_new_tokens` (SGLang): integer 0..2^31-1, at most maxTokens. */
  minTokens?: number;
  /** Generate past the end-of-sequence token (vLLM, SGLang `ignore_eos`). */
  ignoreEos?: boolean;
  /** Sampling temperature, 0..100 (0: greedy, as MLPerf's references run). */
  temperature?: number;
}

/** One sample of a data set, checked. Exactly one of prompt, messages and promptIds is set. */
export interface DatasetSample extends GenerationParams {
  /** A text prompt. */
  prompt?: string;
  /** Chat messages ({ role, content } objects). */
  messages?: readonly unknown[];
  /** The prompt as token ids (each an integer in 0..2^31-1). */
  promptIds?: Int32Array;
  /** The reference output as text (when targets are read). */
  target?: string;
  /** The reference output as token ids (when the target field holds ids). */
  targetIds?: Int32Array;
  /** `input_tokens` of the record (informational): an integer >= 0. */
  inputTokens?: number;
  /** The values of `fields` the caller asked for (JSON values; absent fields are not set). */
  fields?: Readonly<Record<string, unknown>>;
}

/**
 * How to read a data set. Field names default to MLPerf's; every record is
 * checked before anything runs, and the first bad one is a DatasetError
 * naming the file, line or row, the field and the value.
 */
export interface DatasetOptions {
  /**
   * The prompt's field; its value decides what the prompt is (an array of
   * integers: token ids; a string: text; an array of objects: chat
   * messages). Default: `tok_input` when a record has it, else the one of
   * `input`, `prompt`, `messages` it has.
   */
  promptField?: string;
  /** The reference output's field (default 'output'). */
  targetField?: string;
  /** Read the targets: 'required' (a record without one is an error) or 'optional'. Absent: not read (a SUT needs none). */
  targets?: 'required' | 'optional';
  /** Further fields to keep per sample (e.g. mixtral's `dataset`, `gt_output`), as their JSON values. */
  fields?: readonly string[];
  /** Read the file as this format instead of detecting it. */
  format?: DatasetFormat;
  /**
   * Prompt kinds the caller cannot send, each with the reason that ends the
   * error (e.g. ids on --api chat): a record with one is refused, naming it.
   */
  refuse?: { ids?: string; text?: string; messages?: string };
  /** Token ids must be below this (a tokenizer's vocabulary size): checked for prompts and targets. */
  tokenIdLimit?: number;
  /** Stop reading (the run was interrupted): the read rejects with the signal's reason. */
  signal?: RunAbortSignal;
}

/** A data set as read. */
export interface Dataset {
  readonly file: string;
  readonly format: DatasetFormat;
  readonly samples: readonly DatasetSample[];
  /** Samples whose prompt is token ids. */
  readonly idPrompts: number;
  /** Samples whose prompt is text or messages. */
  readonly textPrompts: number;
}
