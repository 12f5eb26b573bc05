/**
 * One record of a data set checked into a sample, whatever the file's
 * format: the prompt (token ids, text or chat messages), the target, the
 * generation parameters. A bad value is a DatasetError naming the file, the
 * line or row, the field, the value and what is allowed.
 */
import { DatasetError } from '../errors.js';
import { echo } from '../settings/messages.js';
import {
  DEFAULT_PROMPT_ID_FIELD,
  DEFAULT_PROMPT_TEXT_FIELDS,
  DEFAULT_TARGET_FIELD,
  MAX_GENERATION_TOKENS,
  MAX_TEMPERATURE,
  MAX_TOKEN_ID,
  type DatasetOptions,
  type DatasetSample,
} from './types.js';

/** Where a record is: the line (or 1-based row) for DatasetError.line, and how a message names it. */
export interface RecordPlace {
  line: number;
  /** e.g. 'prompts.jsonl:12', 'cnn_eval.json:4031 (sample 7)', 'set.parquet: row 7'. */
  label: string;
}

/** A record's problem: thrown as a DatasetError naming file, place and field. */
export function recordError(file: string, place: RecordPlace, field: string, problem: string): DatasetError {
  return new DatasetError(file, place.line, field, `dataset ${place.label}: ${field === '' ? '' : `${field}: `}${problem}`);
}

/** A JSON value as a message shows it: its type, and short values themselves. */
export function jsonType(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (ArrayBuffer.isView(value)) return 'an array';
  if (typeof value === 'bigint') return `number ${value}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${shortJson(value)}`;
}

export function shortJson(value: unknown): string {
  if (typeof value === 'bigint') return String(value);
  return echo(JSON.stringify(value) ?? String(value), 40);
}

/** The options checked once per read (not per record). */
export interface RecordRules {
  promptField: string | undefined;
  targetField: string;
  targets: 'required' | 'optional' | undefined;
  fields: readonly string[];
  refuse: { ids?: string; text?: string; messages?: string };
  tokenIdLimit: number;
}

export function recordRules(options: DatasetOptions): RecordRules {
  const name = (key: 'promptField' | 'targetField', value: unknown): void => {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
      throw new DatasetError('', 0, key, `dataset option ${key} must be a non-empty field name, got ${jsonType(value)}`);
    }
  };
  name('promptField', options.promptField);
  name('targetField', options.targetField);
  if (options.targets !== undefined && options.targets !== 'required' && options.targets !== 'optional') {
    throw new DatasetError('', 0, 'targets', `dataset option targets must be 'required' or 'optional', got ${jsonType(options.targets)}`);
  }
  const fields = options.fields ?? [];
  if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string' || f.length === 0)) {
    throw new DatasetError('', 0, 'fields', 'dataset option fields must be an array of non-empty field names');
  }
  const limit = options.tokenIdLimit ?? MAX_TOKEN_ID + 1;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TOKEN_ID + 1) {
    throw new DatasetError('', 0, 'tokenIdLimit', `dataset option tokenIdLimit must be an integer in 1..${MAX_TOKEN_ID + 1}, got ${jsonType(limit)}`);
  }
  return {
    promptField: options.promptField,
    targetField: options.targetField ?? DEFAULT_TARGET_FIELD,
    targets: options.targets,
    fields,
    refuse: options.refuse ?? {},
    tokenIdLimit: limit,
  };
}

/** Token ids of a JSON or Parquet value: an Int32Array, or the problem with it. */
export function tokenIds(value: unknown, limit: number): Int32Array | string {
  if (value instanceof Int32Array) value = Array.from(value);
  else if (ArrayBuffer.isView(value) && !(value instanceof DataView)) value = Array.from(value as unknown as ArrayLike<number | bigint>);
  if (!Array.isArray(value)) return `must be an array of token ids, got ${jsonType(value)}`;
  if (value.length === 0) return 'must be a non-empty array of token ids, got an empty array';
  const ids = new Int32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const v: unknown = value[i];
    const n = typeof v === 'bigint' ? (v >= 0n && v <= BigInt(MAX_TOKEN_ID) ? Number(v) : -1) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= limit) {
      const allowed = limit === MAX_TOKEN_ID + 1 ? `an integer in 0..${MAX_TOKEN_ID}` : `an integer in 0..${limit - 1} (the tokenizer's vocabulary)`;
      return `[${i}] is ${jsonType(v)}, not a token id (${allowed})`;
    }
    ids[i] = n;
  }
  return ids;
}

// A record's value: own properties only (a record's "__proto__" or "constructor" is not a field).
function own(record: Record<string, unknown>, field: string): unknown {
  return Object.hasOwn(record, field) ? record[field] : undefined;
}

/** Checks one record (a parsed JSON object or a Parquet row) into a sample. */
export function checkRecord(file: string, place: RecordPlace, value: unknown, rules: RecordRules): DatasetSample {
  const fail = (field: string, problem: string): DatasetError => recordError(file, place, field, problem);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fail('', `must be a JSON object with "prompt" or "messages", got ${jsonType(value)}`);
  }
  const record = value as Record<string, unknown>;
  const sample: DatasetSample = {};
  readPrompt(record, sample, rules, fail);
  readGeneration(record, sample, fail);
  if (rules.targets !== undefined) {
    const target = own(record, rules.targetField);
    if (target === undefined || target === null) {
      if (rules.targets === 'required') throw fail(rules.targetField, `is missing: the reference output is needed to score (name its field with --target-field)`);
    } else if (typeof target === 'string') sample.target = target;
    else {
      const ids = tokenIds(target, rules.tokenIdLimit);
      if (typeof ids === 'string') throw fail(rules.targetField, `must be the reference text or its token ids, ${ids.startsWith('must') ? ids.slice(5) : ids}`);
      sample.targetIds = ids;
    }
  }
  if (rules.fields.length > 0) {
    const kept: Record<string, unknown> = {};
    for (const field of rules.fields) {
      const v = own(record, field);
      if (v !== undefined) Object.defineProperty(kept, field, { value: plainJson(v), enumerable: true, writable: true, configurable: true });
    }
    sample.fields = kept;
  }
  return sample;
}

type Fail = (field: string, problem: string) => DatasetError;

function readPrompt(record: Record<string, unknown>, sample: DatasetSample, rules: RecordRules, fail: Fail): void {
  let field: string;
  let value: unknown;
  if (rules.promptField !== undefined) {
    field = rules.promptField;
    value = own(record, field);
    if (value === undefined || value === null) throw fail(field, `is missing (--prompt-field names it as the prompt's field)`);
  } else if (own(record, DEFAULT_PROMPT_ID_FIELD) !== undefined && own(record, DEFAULT_PROMPT_ID_FIELD) !== null) {
    field = DEFAULT_PROMPT_ID_FIELD;
    value = own(record, field);
  } else {
    const present = DEFAULT_PROMPT_TEXT_FIELDS.filter((f) => own(record, f) !== undefined && own(record, f) !== null);
    if (present.length === 0) {
      throw fail('', 'needs "prompt" (a string) or "messages" (a chat array), or MLPerf\'s "tok_input" (token ids) or "input" (text); another field: --prompt-field NAME');
    }
    if (present.length > 1) {
      const both = present.map((f) => `"${f}"`);
      throw fail('', `has both ${both.slice(0, -1).join(', ')} and ${both[both.length - 1]}; give one (or choose with --prompt-field)`);
    }
    field = present[0]!;
    value = own(record, field);
  }
  if (typeof value === 'string') {
    if (rules.refuse.text !== undefined) throw fail(field, rules.refuse.text);
    sample.prompt = value;
    return;
  }
  const isMessages = field === 'messages' || (Array.isArray(value) && value.length > 0 && typeof value[0] === 'object' && value[0] !== null);
  if (isMessages) {
    if (rules.refuse.messages !== undefined) throw fail(field, rules.refuse.messages);
    sample.messages = checkMessages(value, field, fail);
    return;
  }
  if (field === 'prompt' || field === 'input') throw fail(field, `must be a string, got ${jsonType(value)}`);
  const ids = tokenIds(value, rules.tokenIdLimit);
  if (typeof ids === 'string') throw fail(field, `must be a string, chat messages or token ids; ${ids.startsWith('must') ? `it ${ids.slice(5)}` : ids}`);
  if (rules.refuse.ids !== undefined) throw fail(field, rules.refuse.ids);
  sample.promptIds = ids;
}

function checkMessages(messages: unknown, field: string, fail: Fail): unknown[] {
  if (!Array.isArray(messages) || messages.length === 0) throw fail(field, `must be a non-empty array of {"role", "content"}, got ${jsonType(messages)}`);
  messages.forEach((m: unknown, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw fail(`${field}[${i}]`, `must be an object {"role", "content"}, got ${jsonType(m)}`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || role.length === 0) throw fail(`${field}[${i}].role`, `must be a non-empty string (e.g. "user"), got ${jsonType(role)}`);
    if (typeof content !== 'string' && !Array.isArray(content)) throw fail(`${field}[${i}].content`, `must be a string or an array of content parts, got ${jsonType(content)}`);
  });
  return messages;
}

// Two spellings of one parameter (OpenAI's and SGLang's): one value, or the problem.
function either(record: Record<string, unknown>, a: string, b: string, fail: Fail): { field: string; value: unknown } | undefined {
  const va = own(record, a);
  const vb = own(record, b);
  if (va !== undefined && va !== null && vb !== undefined && vb !== null && va !== vb) throw fail(b, `disagrees with "${a}" (${shortJson(va)} and ${shortJson(vb)}); give one`);
  if (va !== undefined && va !== null) return { field: a, value: va };
  if (vb !== undefined && vb !== null) return { field: b, value: vb };
  return undefined;
}

function integerIn(value: unknown, min: number, max: number): number | undefined {
  const n = typeof value === 'bigint' && value >= BigInt(min) && value <= BigInt(max) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

function readGeneration(record: Record<string, unknown>, sample: DatasetSample, fail: Fail): void {
  const max = either(record, 'max_tokens', 'max_new_tokens', fail);
  if (max !== undefined) {
    const n = integerIn(max.value, 1, MAX_GENERATION_TOKENS);
    if (n === undefined) throw fail(max.field, `must be an integer in 1..${MAX_GENERATION_TOKENS}, got ${shortJson(max.value)}`);
    sample.maxTokens = n;
  }
  const min = either(record, 'min_tokens', 'min_new_tokens', fail);
  if (min !== undefined) {
    const n = integerIn(min.value, 0, MAX_GENERATION_TOKENS);
    if (n === undefined) throw fail(min.field, `must be an integer in 0..${MAX_GENERATION_TOKENS}, got ${shortJson(min.value)}`);
    if (sample.maxTokens !== undefined && n > sample.maxTokens) throw fail(min.field, `${n} is more than max_tokens ${sample.maxTokens}`);
    sample.minTokens = n;
  }
  const ignoreEos = own(record, 'ignore_eos');
  if (ignoreEos !== undefined && ignoreEos !== null) {
    if (typeof ignoreEos !== 'boolean') throw fail('ignore_eos', `must be true or false, got ${shortJson(ignoreEos)}`);
    sample.ignoreEos = ignoreEos;
  }
  const temperature = own(record, 'temperature');
  if (temperature !== undefined && temperature !== null) {
    if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0 || temperature > MAX_TEMPERATURE) {
      throw fail('temperature', `must be a number in 0..${MAX_TEMPERATURE}, got ${shortJson(temperature)}`);
    }
    sample.temperature = temperature;
  }
  const inputTokens = own(record, 'input_tokens');
  if (inputTokens !== undefined && inputTokens !== null) {
    const n = integerIn(inputTokens, 0, MAX_GENERATION_TOKENS);
    if (n === undefined) throw fail('input_tokens', `must be an integer >= 0, got ${shortJson(inputTokens)}`);
    sample.inputTokens = n;
  }
}

// Parquet values as JSON values: bigints become numbers where exact (else strings), typed arrays plain arrays.
function plainJson(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return Array.from(value as unknown as ArrayLike<unknown>, plainJson);
  if (Array.isArray(value)) return value.map(plainJson);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: plainJson(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}
