/**
 * mlperf_log_accuracy.json as MLCommons' evaluators read it: a JSON array
 * of { seq_id, qsl_idx, data } entries, `data` the hex of the response's
 * bytes. Entries are kept in file order and de-duplicated by qsl_idx, the
 * first one winning (`seen = set(); if qsl_idx in seen: continue`). The
 * bytes are token ids (little-endian int32/int64) or, in a log written
 * without ids, UTF-8 text: which one a log holds is decided for the whole
 * log and reported.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { decodeTokenIds, dtypeBytes, type AccuracyDtype } from '../datasets/accuracy-ids.js';
import { DatasetError } from '../errors.js';

/** The accuracy log's file name as LoadGen writes it (default prefix and suffix). */
export const ACCURACY_LOG_NAME = 'mlperf_log_accuracy.json';

/** One entry of the log, checked. */
export interface AccuracyLogEntry {
  /** 0-based position in the file's array. */
  readonly index: number;
  readonly qslIdx: number;
  readonly bytes: Uint8Array;
}

/** A log as read: every entry, and the first entry of each qsl_idx in file order. */
export interface AccuracyLog {
  readonly file: string;
  readonly entries: readonly AccuracyLogEntry[];
  readonly unique: readonly AccuracyLogEntry[];
}

/** The log file of a path: the file itself, or mlperf_log_accuracy.json (or the one *log_accuracy*.json) in a folder. */
export function accuracyLogFile(path: string): string {
  const absolute = resolve(path);
  if (!existsSync(absolute)) throw new DatasetError(absolute, 0, '', `${path}: no such file or folder (give a log folder or its mlperf_log_accuracy.json)`);
  if (!statSync(absolute).isDirectory()) return absolute;
  if (existsSync(join(absolute, ACCURACY_LOG_NAME))) return join(absolute, ACCURACY_LOG_NAME);
  const candidates = readdirSync(absolute).filter((name) => /log_accuracy.*\.json$/.test(name));
  if (candidates.length === 1) return join(absolute, candidates[0]!);
  throw new DatasetError(
    absolute,
    0,
    '',
    candidates.length === 0
      ? `${path}: no ${ACCURACY_LOG_NAME} in this folder (an accuracy run writes it: run with --mode AccuracyOnly)`
      : `${path}: several accuracy logs (${candidates.join(', ')}); name the one to score`,
  );
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

function entryError(file: string, index: number, field: string, problem: string): DatasetError {
  return new DatasetError(file, index + 1, field, `${file}: entry ${index}${field ? ` field '${field}'` : ''}: ${problem}`);
}

/** Reads and checks the log: a bad entry is a DatasetError naming the file, the entry and the field. */
export function readAccuracyLog(path: string): AccuracyLog {
  const file = accuracyLogFile(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new DatasetError(file, 0, '', `${file}: not JSON (${(error as Error).message}); an accuracy log is a JSON array of {"seq_id", "qsl_idx", "data"} entries`);
  }
  if (!Array.isArray(parsed)) throw new DatasetError(file, 0, '', `${file}: expected a JSON array of {"seq_id", "qsl_idx", "data"} entries, found ${parsed === null ? 'null' : typeof parsed}`);
  const entries: AccuracyLogEntry[] = [];
  const unique: AccuracyLogEntry[] = [];
  const seen = new Set<number>();
  parsed.forEach((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw entryError(file, index, '', `expected an object with qsl_idx and data, found ${JSON.stringify(raw)?.slice(0, 60)}`);
    const record = raw as Record<string, unknown>;
    const qslIdx = record['qsl_idx'];
    if (typeof qslIdx !== 'number' || !Number.isSafeInteger(qslIdx) || qslIdx < 0) throw entryError(file, index, 'qsl_idx', `must be an integer >= 0, found ${JSON.stringify(qslIdx)}`);
    const data = record['data'];
    if (typeof data !== 'string') throw entryError(file, index, 'data', `must be a hex string, found ${JSON.stringify(data)?.slice(0, 60)}`);
    if (!HEX.test(data)) throw entryError(file, index, 'data', `is not hex (pairs of 0-9a-f digits): ${JSON.stringify(data.slice(0, 40))}${data.length > 40 ? '…' : ''}`);
    const entry: AccuracyLogEntry = { index, qslIdx, bytes: Buffer.from(data, 'hex') };
    entries.push(entry);
    if (!seen.has(qslIdx)) {
      seen.add(qslIdx);
      unique.push(entry);
    }
  });
  return { file, entries, unique };
}

/** What a log's data holds. */
export type LogDataKind = 'token-ids' | 'text';

/** No tokenizer's vocabulary reaches 2^24 ids, while four printable ASCII bytes read as int32 are >= 0x20202020. */
const PLAUSIBLE_ID_LIMIT = 2 ** 24;

/**
 * Whether the log holds token ids of `dtype` or UTF-8 text: ids when every
 * entry is a whole number of ids below the vocabulary size (or 2^24 without
 * a tokenizer); text when not, and every entry is valid UTF-8. Neither: a
 * DatasetError naming the first entry that is neither.
 */
export function detectLogData(log: AccuracyLog, dtype: AccuracyDtype, vocabularySize?: number): LogDataKind {
  const limit = vocabularySize ?? PLAUSIBLE_ID_LIMIT;
  const width = dtypeBytes(dtype);
  const notIds = log.unique.find((entry) => {
    if (entry.bytes.length % width !== 0) return true;
    try {
      return decodeTokenIds(entry.bytes, dtype).some((id) => id >= limit);
    } catch {
      return true;
    }
  });
  if (notIds === undefined) return 'token-ids';
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for (const entry of log.unique) {
    try {
      utf8.decode(entry.bytes);
    } catch {
      throw entryError(log.file, entry.index, 'data', `is neither ${dtype} token ids${vocabularySize !== undefined ? ` below the tokenizer's ${vocabularySize}` : ''} nor UTF-8 text (${entry.bytes.length} bytes); is --accuracy-dtype right?`);
    }
  }
  return 'text';
}
