/**
 * The records of a JSONL file (one JSON value a line, blank lines skipped)
 * or of a JSON array (MLPerf's cnn_eval.json), read in chunks: only the
 * record being parsed is held, never the whole file's text, so a file of
 * any size reads in bounded memory beyond its samples. A JSON array's
 * elements are found by scanning its bytes (strings and nesting followed;
 * UTF-8 never puts these ASCII bytes inside a multi-byte character), each
 * then parsed alone, so an error names the element's line.
 */
import { open } from 'node:fs/promises';

import { DatasetError } from '../errors.js';
import { echo } from '../settings/messages.js';
import type { RecordPlace } from './records.js';

/** A record as read: its parsed value and where it is. */
export interface RawRecord {
  value: unknown;
  place: RecordPlace;
}

const CHUNK_BYTES = 1 << 20;
/** One record larger than this is refused (a bound on one sample's memory while it is parsed). */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

const decoder = new TextDecoder();

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Reads `file` in chunks (the last chunk may be shorter; an empty one ends it). */
async function* chunks(file: string): AsyncGenerator<Uint8Array> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new DatasetError(file, 0, '', `dataset ${echo(file)}: cannot be read: ${(error as Error).message}`);
  }
  try {
    for (;;) {
      const buffer = new Uint8Array(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } catch (error) {
    if (error instanceof DatasetError) throw error;
    throw new DatasetError(file, 0, '', `dataset ${echo(file)}: cannot be read: ${(error as Error).message}`);
  } finally {
    await handle.close();
  }
}

/** Bytes of one record gathered across chunks. */
class Pieces {
  private parts: Uint8Array[] = [];
  size = 0;

  add(bytes: Uint8Array, file: string, line: number): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.size > MAX_RECORD_BYTES) throw new DatasetError(file, line, '', `dataset ${echo(file)}:${line}: a record longer than ${MAX_RECORD_BYTES} bytes`);
    // The chunk's buffer is reused by nothing, but a copy keeps one record's bytes only.
    this.parts.push(bytes.slice());
  }

  text(): string {
    const joined = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    return decoder.decode(joined);
  }
}

function parse(file: string, place: RecordPlace, text: string, whatEach: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DatasetError(file, place.line, '', `dataset ${place.label}: not valid JSON (${(error as Error).message}); ${whatEach}`);
  }
}

/** JSONL: one JSON value a line; blank lines are skipped (sample i is the i-th non-blank line). */
export async function* jsonlRecords(file: string): AsyncGenerator<RawRecord> {
  const pieces = new Pieces();
  let line = 1;
  for await (const chunk of chunks(file)) {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end < 0) {
        pieces.add(chunk.subarray(start), file, line);
        break;
      }
      pieces.add(chunk.subarray(start, end), file, line);
      start = end + 1;
      const record = lineRecord(file, line, pieces);
      line++;
      if (record !== undefined) yield record;
    }
  }
  const last = lineRecord(file, line, pieces);
  if (last !== undefined) yield last;
}

function lineRecord(file: string, line: number, pieces: Pieces): RawRecord | undefined {
  if (pieces.size === 0) return undefined;
  const text = pieces.text();
  if (text.trim().length === 0) return undefined;
  const place = { line, label: `${echo(file)}:${line}` };
  return { value: parse(file, place, text, 'each line must be one JSON object'), place };
}

/**
 * A JSON array of records (cnn_eval.json): each element is parsed alone and
 * named by its line and its index (the sample index).
 */
export async function* jsonArrayRecords(file: string): AsyncGenerator<RawRecord> {
  const pieces = new Pieces();
  let line = 1;
  // Where the scan is: before '[', between elements, inside one, after ']'.
  let state: 'start' | 'between' | 'element' | 'end' = 'start';
  let expectComma = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let elementLine = 0;
  let index = 0;
  const fail = (problem: string): DatasetError => new DatasetError(file, line, '', `dataset ${echo(file)}:${line}: ${problem}`);
  for await (const chunk of chunks(file)) {
    let i = 0;
    // A UTF-8 byte order mark before the array is skipped.
    if (state === 'start' && line === 1 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    let elementStart = state === 'element' ? 0 : -1;
    for (; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (state === 'element') {
        if (b === NEWLINE) line++;
        if (inString) {
          if (escaped) escaped = false;
          else if (b === BACKSLASH) escaped = true;
          else if (b === QUOTE) inString = false;
          continue;
        }
        if (b === QUOTE) inString = true;
        else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
        else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
          if (--depth === 0) {
            pieces.add(chunk.subarray(elementStart, i + 1), file, elementLine);
            const place = { line: elementLine, label: `${echo(file)}:${elementLine} (sample ${index})` };
            yield { value: parse(file, place, pieces.text(), 'each element of the array must be one JSON object'), place };
            index++;
            state = 'between';
            expectComma = true;
            elementStart = -1;
          }
        }
        continue;
      }
      if (b === NEWLINE) {
        line++;
        continue;
      }
      if (isSpace(b)) continue;
      if (state === 'start') {
        if (b !== OPEN_BRACKET) throw fail(`a JSON data set must be an array of objects ([{...}, ...]); it begins with '${String.fromCharCode(b)}' (one object a line is JSONL: name the file .jsonl)`);
        state = 'between';
        expectComma = false;
      } else if (state === 'between') {
        if (b === CLOSE_BRACKET) {
          if (!expectComma && index > 0) throw fail(`a ',' before the closing ] (JSON allows no trailing comma)`);
          state = 'end';
        } else if (b === COMMA) {
          if (!expectComma) throw fail(`element ${index}: a ',' where a record should be`);
          expectComma = false;
        } else if (b === OPEN_BRACE) {
          if (expectComma) throw fail(`element ${index}: a ',' is missing before it`);
          state = 'element';
          depth = 1;
          elementStart = i;
          elementLine = line;
        } else {
          throw fail(`element ${index}: must be a JSON object {...}, it begins with '${String.fromCharCode(b)}'`);
        }
      } else {
        throw fail(`text after the end of the JSON array ('${String.fromCharCode(b)}')`);
      }
    }
    if (state === 'element') pieces.add(chunk.subarray(elementStart), file, elementLine);
  }
  // (The scan's state is changed inside the loop, which narrowing does not follow.)
  const ended = state as string;
  if (ended === 'start') throw fail('is empty (a JSON array of records was expected)');
  if (ended !== 'end') throw fail(ended === 'element' ? `element ${index} (line ${elementLine}) is not closed: the file ends inside it` : 'the JSON array is not closed with ]');
}
