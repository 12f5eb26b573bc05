/**
 * Reading and parsing a tokenizer.json on a worker thread. JSON.parse of a
 * tokenizer.json is one synchronous stretch (Llama 3.1's 9 MB: 0.1 to 0.4 s
 * here; gpt-oss's 28 MB: over a second), and handing the parsed object over
 * would cost the main thread as much again (structured clone). So the worker
 * parses, then packs the two big parts, a BPE model's vocabulary and merges,
 * into a few long strings and typed arrays (copied or moved at memory speed),
 * and sends the rest of the file, a few kilobytes, as it is. The main thread
 * unpacks them in slices (lib/tokenizer/build.ts). The worker is plain
 * JavaScript given as a string (`eval`), so that it runs the same from the
 * TypeScript sources and from dist/.
 */
import { Worker } from 'node:worker_threads';

import { TokenizerError } from '../errors.js';
import { throwIfAborted } from './slices.js';
import type { TokenizerAbortSignal } from './types.js';

/** A list of strings as one string and each one's length. */
export interface PackedStrings {
  text: string;
  lengths: Int32Array;
}

/** A BPE model's vocabulary and merges, packed by the worker. */
export interface PackedBpe {
  /** The vocabulary's pieces, in the order of the file's object (as Object.keys gives them). */
  pieces: PackedStrings;
  /** Each piece's id; NaN where the file has no number (see `badVocab`). */
  ids: Float64Array;
  /** The first entry whose id is not a number: [piece, the value as JSON]. */
  badVocab: [string, string] | null;
  /** Merges as left and right pieces. */
  left: PackedStrings;
  right: PackedStrings;
  /** The first merge that is neither "left right" nor ["left", "right"]: [index, the value as JSON]. */
  badMerge: [number, string] | null;
}

export interface ParsedTokenizerFile {
  /** The file's JSON; for a BPE model whose vocabulary and merges were packed, model.vocab is {} and model.merges []. */
  json: unknown;
  bpe: PackedBpe | null;
}

// Runs in the worker: read, parse, pack (see PackedBpe), reply once.
const WORKER_SOURCE = `(() => {
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const pack = (list) => {
  const lengths = new Int32Array(list.length);
  for (let i = 0; i < list.length; i++) lengths[i] = list[i].length;
  return { text: list.join(''), lengths };
};
let text;
try {
  text = readFileSync(workerData.file, 'utf8');
} catch (error) {
  parentPort.postMessage({ error: 'unreadable', message: error.message });
  return;
}
let json;
try {
  json = JSON.parse(text);
} catch (error) {
  parentPort.postMessage({ error: 'not-json', message: error.message });
  return;
}
text = undefined;
const model = json !== null && typeof json === 'object' && !Array.isArray(json) ? json.model : undefined;
const isModel = model !== null && typeof model === 'object' && !Array.isArray(model);
const vocab = isModel ? model.vocab : undefined;
const merges = isModel ? model.merges : undefined;
if (!isModel || model.type !== 'BPE' || vocab === null || typeof vocab !== 'object' || Array.isArray(vocab) || !Array.isArray(merges)) {
  parentPort.postMessage({ json, bpe: null });
  return;
}
const pieces = Object.keys(vocab);
const ids = new Float64Array(pieces.length);
let badVocab = null;
for (let i = 0; i < pieces.length; i++) {
  const id = vocab[pieces[i]];
  ids[i] = typeof id === 'number' ? id : NaN;
  if (badVocab === null && typeof id !== 'number') badVocab = [pieces[i], JSON.stringify(id) ?? String(id)];
}
const left = new Array(merges.length);
const right = new Array(merges.length);
let badMerge = null;
for (let i = 0; i < merges.length; i++) {
  const merge = merges[i];
  // As the library: "left right" splits at spaces and keeps the first two parts.
  const pair = typeof merge === 'string' && merge.includes(' ') ? merge.split(' ', 2)
    : Array.isArray(merge) && merge.length === 2 && typeof merge[0] === 'string' && typeof merge[1] === 'string' ? merge : null;
  if (pair === null) {
    if (badMerge === null) badMerge = [i, JSON.stringify(merge) ?? String(merge)];
    left[i] = '';
    right[i] = '';
  } else {
    left[i] = pair[0];
    right[i] = pair[1];
  }
}
model.vocab = {};
model.merges = [];
const bpe = { pieces: pack(pieces), ids, badVocab, left: pack(left), right: pack(right), badMerge };
parentPort.postMessage({ json, bpe }, [ids.buffer, bpe.pieces.lengths.buffer, bpe.left.lengths.buffer, bpe.right.lengths.buffer]);
})();
`;

type WorkerReply = ParsedTokenizerFile | { error: 'unreadable' | 'not-json'; message: string };

/**
 * Reads and parses `file` on a worker thread. Rejects with a TokenizerError
 * (unreadable, not JSON), or with `signal`'s reason when it aborts (the
 * worker is terminated).
 */
export function parseTokenizerFile(file: string, signal?: TokenizerAbortSignal): Promise<ParsedTokenizerFile> {
  throwIfAborted(signal);
  return new Promise((resolve, reject) => {
    // execArgv: [] keeps the parent's flags (an inspector, a loader) off the worker.
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file }, execArgv: [] });
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      settle();
    };
    const onAbort = () => finish(() => reject(signal!.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (reply: WorkerReply) =>
      finish(() => {
        if ('error' in reply) {
          const what = reply.error === 'not-json' ? 'is not JSON' : 'cannot be read';
          reject(new TokenizerError(file, reply.error, `tokenizer file ${file} ${what} (${reply.message}): --tokenizer wants a Hugging Face tokenizer.json (the file, or the model directory that holds it)`));
        } else {
          resolve(reply);
        }
      }),
    );
    worker.once('error', (error) => finish(() => reject(new TokenizerError(file, 'unreadable', `tokenizer file ${file} could not be parsed: ${error.message}`, { cause: error }))));
    worker.once('exit', (code) => finish(() => reject(new TokenizerError(file, 'unreadable', `tokenizer file ${file} could not be parsed: the parsing thread exited (code ${code})`))));
  });
}

/** The i-th string of a packed list, for i = 0, 1, 2, ... in order (it keeps the running offset). */
export function unpacker(packed: PackedStrings): (i: number) => string {
  let offset = 0;
  return (i) => {
    const length = packed.lengths[i]!;
    const value = packed.text.slice(offset, offset + length);
    offset += length;
    return value;
  };
}
