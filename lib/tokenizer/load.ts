/**
 * loadTokenizer: a Hugging Face tokenizer.json (Llama 2 and 3, Mixtral,
 * DeepSeek, gpt-oss, Qwen: whatever the file describes) read, checked and
 * built into a {@link Tokenizer} whose ids are those of Python's tokenizers.
 * The file is read and parsed on a worker thread (lib/tokenizer/parse.ts)
 * and the vocabulary built in slices that yield (lib/tokenizer/build.ts), so
 * the event loop keeps turning and a signal stops a load promptly.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { yieldToEventLoop } from '../abortable.js';
import { TokenizerError } from '../errors.js';
import { buildHfTokenizer } from './build.js';
import { parseTokenizerFile } from './parse.js';
import { throwIfAborted } from './slices.js';
import { LoadedTokenizer } from './tokenizer.js';
import type { LoadTokenizerOptions, Tokenizer } from './types.js';
import { validateTokenizerJson } from './validate.js';

const WANTED = 'a Hugging Face tokenizer.json (the file, or the model directory that holds it)';

/** The file to read: `file` itself, or `file`/tokenizer.json when `file` is a directory. */
async function resolveFile(file: string): Promise<string> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new TokenizerError(file, 'missing', `tokenizer file ${file} does not exist: --tokenizer wants ${WANTED}`, { cause: error });
    throw new TokenizerError(file, 'unreadable', `tokenizer file ${file} cannot be read (${error.message}): --tokenizer wants ${WANTED}`, { cause: error });
  });
  if (!info.isDirectory()) return file;
  const inside = join(file, 'tokenizer.json');
  const found = await stat(inside).then((s) => s.isFile(), () => false);
  if (!found) throw new TokenizerError(file, 'missing', `${file} is a directory without a tokenizer.json: --tokenizer wants ${WANTED}`);
  return inside;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new TokenizerError(file, 'missing', `${what} ${file} does not exist`, { cause: e });
    throw new TokenizerError(file, 'unreadable', `${what} ${file} cannot be read (${e.message})`, { cause: e });
  }
}

function parseJson(file: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TokenizerError(file, 'not-json', `${what} ${file} is not JSON (${(error as Error).message}): --tokenizer wants ${WANTED}`, { cause: error });
  }
}

/**
 * transformers 4.x's decode clean-up as the tokenizer_config.json beside the
 * file (or `options.config`) sets it; none: off, as Python's tokenizers.
 */
async function readCleanUp(file: string, config: string | false | undefined): Promise<{ value: boolean; from: string | undefined }> {
  if (config === false) return { value: false, from: undefined };
  const path = config ?? join(dirname(file), 'tokenizer_config.json');
  if (config === undefined) {
    const present = await stat(path).then((s) => s.isFile(), () => false);
    if (!present) return { value: false, from: undefined };
  }
  const json = parseJson(path, await readText(path, 'tokenizer config'), 'tokenizer config');
  const value = typeof json === 'object' && json !== null ? (json as Record<string, unknown>).clean_up_tokenization_spaces : undefined;
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TokenizerError(path, 'not-tokenizer', `tokenizer config ${path}: clean_up_tokenization_spaces is ${JSON.stringify(value)}, not true or false`);
  }
  return { value: value === true, from: path };
}

/**
 * Loads a Hugging Face tokenizer.json (or the directory holding it). Throws
 * a TokenizerError for a missing file, a file that is not JSON, a JSON that
 * is not a tokenizer.json, or a model or component the library does not
 * implement; rejects with `options.signal`'s reason when it aborts.
 */
export async function loadTokenizer(file: string, options: LoadTokenizerOptions = {}): Promise<Tokenizer> {
  if (typeof file !== 'string' || file.length === 0) throw new TypeError(`loadTokenizer(file): file must be a non-empty path, got ${JSON.stringify(file)}`);
  const { signal } = options;
  throwIfAborted(signal);
  const path = await resolveFile(file);
  const { json, bpe } = await parseTokenizerFile(path, signal);
  const summary = validateTokenizerJson(path, json);
  await yieldToEventLoop();
  throwIfAborted(signal);
  const cleanUp = await readCleanUp(path, options.config);
  const hf = await buildHfTokenizer(path, json as Record<string, unknown>, bpe, signal);
  return new LoadedTokenizer(path, hf, summary, cleanUp);
}
