/**
 * What a tokenizer.json must hold before the library builds it: a model of a
 * supported type with its vocabulary (and merges for BPE), added tokens, and
 * pipeline components (normalizer, pre-tokenizer, post-processor, decoder)
 * of types the library implements. Anything else is refused here with a
 * TokenizerError naming the file, the field and what is supported, never
 * tokenized differently from Hugging Face's tokenizers without a word.
 */
import { TokenizerError } from '../errors.js';

/** Model types the library implements (WordLevel is not among them). */
export const SUPPORTED_MODEL_TYPES = ['BPE', 'WordPiece', 'Unigram'] as const;

/** Component types the library implements, per component (Hugging Face tokenizers' names). */
export const SUPPORTED_COMPONENT_TYPES = {
  normalizer: ['BertNormalizer', 'Precompiled', 'Sequence', 'Replace', 'NFC', 'NFD', 'NFKC', 'NFKD', 'Strip', 'StripAccents', 'Lowercase', 'Prepend'],
  pre_tokenizer: ['BertPreTokenizer', 'Sequence', 'Whitespace', 'WhitespaceSplit', 'Metaspace', 'ByteLevel', 'Split', 'Punctuation', 'Digits', 'Replace', 'FixedLength'],
  post_processor: ['TemplateProcessing', 'ByteLevel', 'BertProcessing', 'RobertaProcessing', 'Sequence'],
  decoder: ['ByteLevel', 'WordPiece', 'Metaspace', 'BPEDecoder', 'CTC', 'Sequence', 'Replace', 'Fuse', 'Strip', 'ByteFallback'],
} as const;
type Component = keyof typeof SUPPORTED_COMPONENT_TYPES;

/** Split pre-tokenizer behaviours the library implements; the others would split differently without an error. */
const SPLIT_BEHAVIORS = ['Isolated', 'Removed'];

/** The children of a Sequence, by component (the key differs per component in tokenizer.json). */
const SEQUENCE_KEYS: Record<Component, string> = {
  normalizer: 'normalizers',
  pre_tokenizer: 'pretokenizers',
  post_processor: 'processors',
  decoder: 'decoders',
};

export interface TokenizerJsonSummary {
  modelType: (typeof SUPPORTED_MODEL_TYPES)[number];
  /** Every decoder type in the file, Sequence members included (e.g. ['Sequence', 'Replace', 'ByteFallback', 'Fuse', 'Strip']). */
  decoderTypes: string[];
  /** Every pre-tokenizer type, Sequence members included. */
  preTokenizerTypes: string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const show = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** Checks `json` (the parsed file) and summarizes it; throws a TokenizerError for anything the library cannot tokenize exactly. */
export function validateTokenizerJson(file: string, json: unknown): TokenizerJsonSummary {
  const notTokenizer = (what: string) => notTokenizerError(file, what);
  if (!isObject(json)) throw notTokenizer(`it holds ${Array.isArray(json) ? 'an array' : `the JSON value ${show(json)}`}, not an object`);
  const model = json.model;
  if (!isObject(model)) throw notTokenizer(model === undefined ? 'it has no "model"' : `"model" is ${show(model)}, not an object`);
  const type = model.type;
  if (typeof type !== 'string') throw notTokenizer(`model.type is ${type === undefined ? 'missing' : show(type)}`);
  if (!(SUPPORTED_MODEL_TYPES as readonly string[]).includes(type)) {
    throw new TokenizerError(file, 'unsupported', `${file}: model.type ${show(type)} is not supported (supported: ${SUPPORTED_MODEL_TYPES.join(', ')})`);
  }
  const vocab = model.vocab;
  if (type === 'Unigram') {
    if (!Array.isArray(vocab)) throw notTokenizer(`the Unigram model's vocab is ${vocab === undefined ? 'missing' : 'not an array of [piece, score]'}`);
  } else {
    if (!isObject(vocab)) throw notTokenizer(`the ${type} model's vocab is ${vocab === undefined ? 'missing' : 'not an object of piece: id'}`);
    // BPE entries are checked while the vocabulary is built, in slices (lib/tokenizer/build.ts).
    if (type !== 'BPE') for (const piece in vocab) checkVocabEntry(file, piece, vocab[piece]);
  }
  if (type === 'BPE' && !Array.isArray(model.merges)) throw notTokenizer(`the BPE model's merges are ${model.merges === undefined ? 'missing' : 'not an array'}`);
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw notTokenizer(`"added_tokens" is ${show(added)}, not an array`);
  added.forEach((token, i) => {
    if (!isObject(token) || typeof token.content !== 'string' || !Number.isInteger(token.id) || (token.id as number) < 0) {
      throw notTokenizer(`added_tokens[${i}] is ${show(token)}, not {"id": <non-negative integer>, "content": <string>, ...}`);
    }
  });
  const types: Record<Component, string[]> = { normalizer: [], pre_tokenizer: [], post_processor: [], decoder: [] };
  for (const component of Object.keys(SUPPORTED_COMPONENT_TYPES) as Component[]) {
    checkComponent(file, component, json[component], component, types[component]);
  }
  return { modelType: type as TokenizerJsonSummary['modelType'], decoderTypes: types.decoder, preTokenizerTypes: types.pre_tokenizer };
}

const notTokenizerError = (file: string, what: string) =>
  new TokenizerError(file, 'not-tokenizer', `${file} is not a Hugging Face tokenizer.json: ${what} (--tokenizer wants the tokenizer.json of a model, e.g. Llama 3.1's, with "model", "added_tokens", "normalizer", "pre_tokenizer", "post_processor" and "decoder")`);

/** One entry of model.vocab: its id must be a non-negative integer. */
export function checkVocabEntry(file: string, piece: string, id: unknown): void {
  if (!Number.isInteger(id) || (id as number) < 0) throw notTokenizerError(file, `model.vocab[${show(piece)}] is ${show(id)}, not a token id (a non-negative integer)`);
}

/** One entry of a BPE model's merges: "left right" or ["left", "right"]. */
export function checkMerge(file: string, index: number, merge: unknown): void {
  if (!(typeof merge === 'string' ? merge.includes(' ') : Array.isArray(merge) && merge.length === 2 && merge.every((p) => typeof p === 'string'))) {
    throw notTokenizerError(file, `model.merges[${index}] is ${show(merge)}, not "left right" or ["left", "right"]`);
  }
}

function checkComponent(file: string, component: Component, value: unknown, path: string, seen: string[]): void {
  if (value === null || value === undefined) return;
  if (!isObject(value) || typeof value.type !== 'string') {
    throw new TokenizerError(file, 'not-tokenizer', `${file} is not a Hugging Face tokenizer.json: ${path} is ${show(value)}, not null or an object with a "type"`);
  }
  const supported = SUPPORTED_COMPONENT_TYPES[component] as readonly string[];
  if (!supported.includes(value.type)) {
    throw new TokenizerError(file, 'unsupported', `${file}: ${path}.type ${show(value.type)} is not supported (supported ${component} types: ${supported.join(', ')})`);
  }
  seen.push(value.type);
  if (component === 'pre_tokenizer' && value.type === 'Split' && value.behavior !== undefined && !SPLIT_BEHAVIORS.includes(String(value.behavior))) {
    throw new TokenizerError(file, 'unsupported', `${file}: ${path}.behavior ${show(value.behavior)} is not supported (supported Split behaviors: ${SPLIT_BEHAVIORS.join(', ')})`);
  }
  if (value.type === 'Sequence') {
    const key = SEQUENCE_KEYS[component];
    const members = value[key];
    if (!Array.isArray(members)) throw new TokenizerError(file, 'not-tokenizer', `${file} is not a Hugging Face tokenizer.json: ${path}.${key} is ${show(members)}, not an array`);
    members.forEach((member, i) => checkComponent(file, component, member, `${path}.${key}[${i}]`, seen));
  }
}
