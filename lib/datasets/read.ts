/**
 * readDataset: a data set file in MLPerf's shapes (JSON array, JSONL,
 * Parquet), every record checked before anything runs. A pickled
 * DataFrame (MLPerf's .pkl sets) is refused with the one-line pandas
 * command that converts it. Large files yield to the event loop every few
 * ms, so a signal (Ctrl-C) is handled while they are read.
 */
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';

import { yieldToEventLoop } from '../abortable.js';
import { DatasetError } from '../errors.js';
import { echo } from '../settings/messages.js';
import { jsonArrayRecords, jsonlRecords, type RawRecord } from './json-records.js';
import { parquetRecords } from './parquet-records.js';
import { checkRecord, recordRules, type RecordRules } from './records.js';
import { DATASET_FORMATS, DEFAULT_PROMPT_ID_FIELD, DEFAULT_PROMPT_TEXT_FIELDS, type Dataset, type DatasetFormat, type DatasetOptions, type DatasetSample } from './types.js';

/** The event loop runs at least this often while a data set is read. */
const YIELD_MS = 10;
/** The most samples a data set may have (the QSL's sample indices are 32-bit). */
export const MAX_DATASET_SAMPLES = 0xffffffff;

/** Fields a record may carry that the samples read (besides the prompt, target and `fields`). */
const GENERATION_FIELDS = ['max_tokens', 'max_new_tokens', 'min_tokens', 'min_new_tokens', 'ignore_eos', 'temperature', 'input_tokens'];

/**
 * The one-line command that converts a pickled pandas DataFrame (MLPerf's
 * .pkl data sets) to Parquet, which readDataset reads (pandas and pyarrow
 * are in MLCommons' reference environments).
 */
export function pickleConversionCommand(file: string): string {
  const base = file.replace(/\.(pkl|pickle)$/i, '');
  const quoted = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return `python3 -c "import pandas as pd; pd.read_pickle(${quoted(file)}).to_parquet(${quoted(`${base}.parquet`)})"`;
}

/** The file's format: from its first bytes (Parquet's magic, a pickle's opcode, '[' or '{'), else its extension. */
async function detectFormat(file: string): Promise<DatasetFormat | 'pickle'> {
  const head = new Uint8Array(64);
  let length = 0;
  const ext = extname(file).toLowerCase();
  try {
    // A pipe (a FIFO, /dev/stdin) can be read only once: its format comes from its name alone.
    if (!(await stat(file)).isFile()) return ext === '.json' ? 'json' : ext === '.parquet' ? 'parquet' : ext === '.pkl' || ext === '.pickle' ? 'pickle' : 'jsonl';
    const handle = await open(file, 'r');
    try {
      length = (await handle.read(head, 0, head.length, 0)).bytesRead;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new DatasetError(file, 0, '', `dataset ${echo(file)}: cannot be read: ${(error as Error).message}`);
  }
  if (length >= 4 && head[0] === 0x50 && head[1] === 0x41 && head[2] === 0x52 && head[3] === 0x31) return 'parquet';
  // Pickle protocol 2+ starts with PROTO (0x80); an older one is told by its extension.
  if ((length >= 2 && head[0] === 0x80 && head[1]! >= 2 && head[1]! <= 5) || ext === '.pkl' || ext === '.pickle') return 'pickle';
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++;
  if (i < length && head[i] === 0x5b) return 'json';
  if (i < length && head[i] === 0x7b) return 'jsonl';
  if (ext === '.parquet') return 'parquet';
  if (ext === '.json') return 'json';
  return 'jsonl';
}

function columnsWanted(rules: RecordRules, available: readonly string[]): string[] {
  const has = new Set(available);
  const prompt = rules.promptField !== undefined ? [rules.promptField] : [DEFAULT_PROMPT_ID_FIELD, ...DEFAULT_PROMPT_TEXT_FIELDS];
  if (!prompt.some((c) => has.has(c))) return [];
  const wanted = [...prompt, ...GENERATION_FIELDS, ...(rules.targets !== undefined ? [rules.targetField] : []), ...rules.fields];
  return [...new Set(wanted)].filter((c) => has.has(c));
}

/**
 * Reads and checks a data set: the first bad record is a DatasetError
 * naming the file, its line (JSON, JSONL) or row (Parquet), the field and
 * the value; a file without samples is one too. Resolves with every sample.
 */
export async function readDataset(file: string, options: DatasetOptions = {}): Promise<Dataset> {
  if (typeof file !== 'string' || file.length === 0) throw new DatasetError(String(file), 0, '', `dataset must be a file path, got ${file === '' ? 'an empty string' : typeof file}`);
  if (typeof options !== 'object' || options === null) throw new DatasetError(file, 0, '', `dataset options must be an object, got ${options === null ? 'null' : typeof options}`);
  const rules = recordRules(options);
  if (options.format !== undefined && !DATASET_FORMATS.includes(options.format)) {
    throw new DatasetError(file, 0, 'format', `dataset format must be one of ${DATASET_FORMATS.join(', ')}, got ${echo(String(options.format))}`);
  }
  const format = options.format ?? (await detectFormat(file));
  if (format === 'pickle') {
    throw new DatasetError(
      file,
      0,
      '',
      `dataset ${echo(file)}: a pickled pandas DataFrame cannot be read here (unpickling runs code); convert it once to Parquet:\n  ${pickleConversionCommand(file)}\nthen pass the .parquet file`,
    );
  }
  const records: AsyncGenerator<RawRecord> =
    format === 'parquet' ? parquetRecords(file, (columns) => columnsWanted(rules, columns)) : format === 'json' ? jsonArrayRecords(file) : jsonlRecords(file);
  const samples: DatasetSample[] = [];
  let idPrompts = 0;
  let since = performance.now();
  const signal = options.signal;
  for await (const record of records) {
    if ((samples.length & 255) === 0 && performance.now() - since >= YIELD_MS) {
      await yieldToEventLoop();
      since = performance.now();
    }
    if (signal?.aborted === true) {
      await records.return(undefined);
      throw signal.reason;
    }
    const sample = checkRecord(file, record.place, record.value, rules);
    if (sample.promptIds !== undefined) idPrompts++;
    samples.push(sample);
    if (samples.length > MAX_DATASET_SAMPLES) throw new DatasetError(file, 0, '', `dataset ${echo(file)}: has more than ${MAX_DATASET_SAMPLES} samples`);
  }
  if (samples.length === 0) {
    throw new DatasetError(file, 0, '', `dataset ${echo(file)}: has no samples (one JSON object a line: {"prompt": "..."} or {"messages": [...]}; a JSON array of such objects; or Parquet rows)`);
  }
  return { file, format, samples, idPrompts, textPrompts: samples.length - idPrompts };
}
