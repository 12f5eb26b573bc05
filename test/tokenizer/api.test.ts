/**
 * The tokenizer's interface beyond parity with Python (test/tokenizer/parity.test.ts):
 * special tokens, transformers' clean-up, pieces, the description, and
 * every error: a missing file, a file that is not JSON, a JSON that is not a
 * tokenizer.json, unsupported types, ids without a token.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { SettingsError, TokenizerError } from '../../lib/errors.js';
import { inSlices } from '../../lib/tokenizer/slices.js';
import { parseTokenizerFile } from '../../lib/tokenizer/parse.js';
import { loadTokenizer, type Tokenizer } from '../../lib/tokenizer/index.js';
import { tempDir } from '../helpers.js';
import { TOKENIZER_FILES } from './fixtures.js';

/** A small BPE tokenizer.json: pieces a, b, ab, <unk>, an id without a token (4), and the special <eos> (6). */
function tinyTokenizer(overrides: Record<string, unknown> = {}, model: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 6, content: '<eos>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: null,
    decoder: null,
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', vocab: { a: 0, b: 1, ab: 2, '<unk>': 3, c: 5 }, merges: ['a b'], ...model },
    ...overrides,
  };
}

function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

async function refusal(file: string, options?: Parameters<typeof loadTokenizer>[1]): Promise<TokenizerError> {
  const error = await loadTokenizer(file, options).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(TokenizerError);
  return error as TokenizerError;
}

describe('Llama 3.1 (byte-level BPE)', () => {
  let llama: Tokenizer;
  beforeAll(async () => {
    llama = await loadTokenizer(TOKENIZER_FILES.llama3_1);
  });

  it('describes itself', () => {
    expect(llama.modelType).toBe('BPE');
    expect(llama.vocabSize).toBe(128256);
    expect(llama.description).toContain('BPE, byte-level, 128,256 tokens (256 added, 256 special), tokenizer.json');
    expect(llama.file).toBe(TOKENIZER_FILES.llama3_1);
  });

  it('adds <|begin_of_text|> as its post-processor says, unless told not to', () => {
    expect(llama.encode('Hello world')).toEqual([128000, 9906, 1917]);
    expect(llama.encode('Hello world', { addSpecialTokens: false })).toEqual([9906, 1917]);
    expect(llama.encode('')).toEqual([128000]);
  });

  it('reads special tokens in the text as special tokens, and skips them in decode when asked', () => {
    const ids = llama.encode('Hi<|eot_id|>', { addSpecialTokens: false });
    expect(ids).toEqual([13347, 128009]);
    expect(llama.decode([128000, ...ids])).toBe('<|begin_of_text|>Hi<|eot_id|>');
    expect(llama.decode([128000, ...ids], { skipSpecialTokens: true })).toBe('Hi');
    expect(llama.decode([128000, 128009], { skipSpecialTokens: true })).toBe('');
    expect(llama.decode([])).toBe('');
    expect(llama.decode(BigInt64Array.from([128000n, 13347n]), { skipSpecialTokens: true })).toBe('Hi');
    expect(llama.decode(Int32Array.from([13347, 128009]))).toBe('Hi<|eot_id|>');
    expect(llama.specialTokenIds).toContain(128009);
  });

  it("cleans up spaces as transformers 4.x does when tokenizer_config.json beside the file says so", () => {
    expect(llama.cleanUpTokenizationSpaces).toBe(true);
    expect(llama.description).toContain('decode cleans up spaces');
    const ids = llama.encode("Yes , it is n't . Ok ! Why ?", { addSpecialTokens: false });
    expect(llama.decode(ids)).toBe("Yes, it isn't. Ok! Why?");
    expect(llama.decode(ids, { cleanUpTokenizationSpaces: false })).toBe("Yes , it is n't . Ok ! Why ?");
  });

  it('leaves the text as Python tokenizers decode it without a tokenizer_config.json (config: false)', async () => {
    const plain = await loadTokenizer(TOKENIZER_FILES.llama3_1, { config: false });
    expect(plain.cleanUpTokenizationSpaces).toBe(false);
    expect(plain.decode(plain.encode('a , b', { addSpecialTokens: false }))).toBe('a , b');
  });

  it('loads the model directory that holds tokenizer.json', async () => {
    const fromDir = await loadTokenizer(dirname(TOKENIZER_FILES.llama3_1));
    expect(fromDir.encode('Hello world')).toEqual([128000, 9906, 1917]);
  });

  it('maps pieces to ids and back; undefined for what is not there', () => {
    expect(llama.tokenToId('Ġthe')).toBe(279);
    expect(llama.idToToken(279)).toBe('Ġthe');
    expect(llama.tokenToId('<|eot_id|>')).toBe(128009);
    expect(llama.idToToken(128009)).toBe('<|eot_id|>');
    expect(llama.tokenToId(' the')).toBeUndefined();
    for (const id of [-1, 1.5, 128256, Number.NaN]) expect(llama.idToToken(id)).toBeUndefined();
  });

  it('refuses ids without a token in decode, naming the id and the vocabulary size', () => {
    for (const [ids, mention] of [[[9906, 128256], 'token id 128256 at index 1 is out of range'], [[-1], 'token id -1'], [[1.5], 'token id 1.5'], [[Number.NaN], 'token id NaN']] as const) {
      const error = (() => {
        try {
          llama.decode(ids);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(TokenizerError);
      expect((error as TokenizerError).problem).toBe('invalid-id');
      expect((error as TokenizerError).code).toBe('ERR_LOADGEN_TOKENIZER');
      expect((error as Error).message).toContain(mention);
      expect((error as Error).message).toContain('128,256 tokens, ids 0 to 128255');
    }
  });

  it('encodes lone surrogates (not Unicode) as U+FFFD', () => {
    expect(llama.encode('a\uD800b')).toEqual(llama.encode('a\uFFFDb'));
  });
});

describe("Mistral / Mixtral 8x7B (SentencePiece-style BPE with byte fallback, as Llama 2's)", () => {
  let mistral: Tokenizer;
  beforeAll(async () => {
    mistral = await loadTokenizer(TOKENIZER_FILES.mistral);
  });

  it('describes itself and adds <s>', () => {
    expect(mistral.description).toContain('BPE, byte fallback, 32,000 tokens (3 added, 3 special), tokenizer.json');
    expect(mistral.cleanUpTokenizationSpaces).toBe(false);
    expect(mistral.encode('Hello world')).toEqual([1, 22557, 1526]);
    expect(mistral.decode([1, 22557, 1526, 2], { skipSpecialTokens: true })).toBe('Hello world');
    expect(mistral.decode([1, 22557, 1526, 2])).toBe('<s> Hello world</s>');
  });

  it('decodes a character split by the end of the ids to one U+FFFD per byte, as Hugging Face does', () => {
    const ids = mistral.encode('a\u{1F9FF}', { addSpecialTokens: false });
    // The amulet has no piece: four byte tokens <0xF0> <0x9F> <0xA7> <0xBF>.
    expect(ids.slice(-4).map((id) => mistral.idToToken(id))).toEqual(['<0xF0>', '<0x9F>', '<0xA7>', '<0xBF>']);
    expect(mistral.decode(ids)).toBe('a\u{1F9FF}');
    expect(mistral.decode(ids.slice(0, -1))).toBe('a\uFFFD\uFFFD\uFFFD');
  });
});

describe('a text with no pre-tokenizer (SentencePiece-style) is merged word by word only where no merge joins words', () => {
  const sentencePiece = (merges: string[]) =>
    tinyTokenizer(
      { normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }, pre_tokenizer: null, added_tokens: [] },
      { vocab: { a: 0, b: 1, '\u2581': 2, 'a\u2581': 3, 'a\u2581b': 4, '\u2581b': 5 }, merges, unk_token: null },
    );

  it('merges across a word start when the merges say so (a piece "a▁b")', async () => {
    const tiny = await loadTokenizer(writeJson(tempDir(), 'tokenizer.json', sentencePiece(['a \u2581', 'a\u2581 b'])));
    expect(tiny.encode('a b')).toEqual([4]);
  });

  it('gives the same pieces word by word when no merge spans a word start', async () => {
    const tiny = await loadTokenizer(writeJson(tempDir(), 'tokenizer.json', sentencePiece(['\u2581 b'])));
    expect(tiny.encode('a b')).toEqual([0, 5]);
  });
});

describe('errors name the file, what was wrong and what is supported', () => {
  const dir = tempDir();

  it('a missing file', async () => {
    const file = join(dir, 'nope', 'tokenizer.json');
    const error = await refusal(file);
    expect(error.problem).toBe('missing');
    expect(error.file).toBe(file);
    expect(error.message).toContain(`tokenizer file ${file} does not exist`);
    expect(error.message).toContain('Hugging Face tokenizer.json');
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.key).toBe('tokenizer');
    expect(error.code).toBe('ERR_LOADGEN_TOKENIZER');
  });

  it('a directory without tokenizer.json', async () => {
    const empty = join(dir, 'empty-model');
    mkdirSync(empty, { recursive: true });
    const error = await refusal(empty);
    expect(error.problem).toBe('missing');
    expect(error.message).toContain(`${empty} is a directory without a tokenizer.json`);
  });

  it('a file that is not JSON', async () => {
    const file = writeJson(dir, 'broken.json', '{"model": {');
    const error = await refusal(file);
    expect(error.problem).toBe('not-json');
    expect(error.message).toContain(`tokenizer file ${file} is not JSON`);
  });

  it.each([
    ['an array', [], 'it holds an array'],
    ['no model', { added_tokens: [] }, 'it has no "model"'],
    ['no model type', { model: { vocab: {} } }, 'model.type is missing'],
    ['a BPE model without vocab', tinyTokenizer({}, { vocab: undefined }), "the BPE model's vocab is missing"],
    ['a vocabulary id that is not an id', tinyTokenizer({}, { vocab: { a: 'zero' } }), 'model.vocab["a"] is "zero"'],
    ['merges that are not pairs', tinyTokenizer({}, { merges: ['ab'] }), 'model.merges[0] is "ab"'],
    ['added tokens without an id', tinyTokenizer({ added_tokens: [{ content: '<x>' }] }), 'added_tokens[0]'],
    ['a decoder without a type', tinyTokenizer({ decoder: { kind: 'ByteLevel' } }), 'decoder is {"kind":"ByteLevel"}'],
  ])('a JSON that is not a tokenizer.json: %s', async (_, json, mention) => {
    const file = writeJson(dir, `not-tokenizer-${Math.random().toString(36).slice(2)}.json`, json);
    const error = await refusal(file);
    expect(error.problem).toBe('not-tokenizer');
    expect(error.message).toContain(`${file} is not a Hugging Face tokenizer.json`);
    expect(error.message).toContain(mention);
  });

  it.each([
    ['a WordLevel model', tinyTokenizer({}, { type: 'WordLevel' }), 'model.type "WordLevel" is not supported (supported: BPE, WordPiece, Unigram)'],
    ['an unknown decoder in a Sequence', tinyTokenizer({ decoder: { type: 'Sequence', decoders: [{ type: 'Fuse' }, { type: 'Mystery' }] } }), 'decoder.decoders[1].type "Mystery" is not supported (supported decoder types: ByteLevel'],
    ['a Split that merges with the previous piece', tinyTokenizer({ pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false } }), 'pre_tokenizer.behavior "MergedWithPrevious" is not supported (supported Split behaviors: Isolated, Removed)'],
    ['an unknown normalizer', tinyTokenizer({ normalizer: { type: 'Nmt' } }), 'normalizer.type "Nmt" is not supported'],
  ])('an unsupported tokenizer: %s', async (_, json, mention) => {
    const file = writeJson(dir, `unsupported-${Math.random().toString(36).slice(2)}.json`, json);
    const error = await refusal(file);
    expect(error.problem).toBe('unsupported');
    expect(error.message).toContain(file);
    expect(error.message).toContain(mention);
  });

  it('a tokenizer_config.json beside the file whose clean-up is not a boolean', async () => {
    const file = writeJson(dir, 'badconfig/tokenizer.json', tinyTokenizer());
    writeJson(dir, 'badconfig/tokenizer_config.json', { clean_up_tokenization_spaces: 'yes' });
    const error = await refusal(file);
    expect(error.message).toContain('clean_up_tokenization_spaces is "yes", not true or false');
    await expect(loadTokenizer(file, { config: false })).resolves.toBeDefined();
  });

  it('an explicit tokenizer config that does not exist', async () => {
    const file = writeJson(dir, 'tiny/tokenizer.json', tinyTokenizer());
    const error = await refusal(file, { config: join(dir, 'tiny', 'missing_config.json') });
    expect(error.problem).toBe('missing');
    expect(error.message).toContain('missing_config.json does not exist');
  });

  it('an id without a token inside the vocabulary (a gap) in decode', async () => {
    const tiny = await loadTokenizer(writeJson(dir, 'gap/tokenizer.json', tinyTokenizer()));
    expect(tiny.vocabSize).toBe(6);
    expect(tiny.encode('ab a c<eos>')).toEqual([2, 0, 5, 6]);
    expect(tiny.decode([2, 6], { skipSpecialTokens: true })).toBe('ab');
    expect(() => tiny.decode([0, 4])).toThrow(/token id 4 at index 1 has no token \(the vocabulary of tokenizer\.json has 6 tokens, ids 0 to 6, with gaps\)/);
    expect(() => tiny.decode([7])).toThrow(/token id 7 at index 0 is out of range/);
  });
});

describe('loading yields to the event loop and stops on a signal', () => {
  it('rejects with the reason of a signal aborted before it starts', async () => {
    const reason = new Error('stopped before');
    await expect(loadTokenizer(TOKENIZER_FILES.llama3_1, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('rejects with the reason of a signal aborted while it loads', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped while loading');
    const loading = loadTokenizer(TOKENIZER_FILES.llama3_1, { signal: controller.signal });
    setImmediate(() => controller.abort(reason));
    await expect(loading).rejects.toBe(reason);
  });

  it('parses the file on a worker thread: the event loop keeps turning meanwhile', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const parsed = await parseTokenizerFile(TOKENIZER_FILES.llama3_1);
    ticking = false;
    // Parsing 9 MB takes tens of milliseconds at least; on the main thread the loop would not turn at all meanwhile.
    expect(turns).toBeGreaterThan(50);
    expect(parsed.bpe!.ids.length).toBe(128000);
    expect(parsed.bpe!.left.lengths.length).toBe(280147);
    expect((parsed.json as { model: { vocab: object } }).model.vocab).toEqual({});
  });

  it('slices long work: the event loop turns between slices', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const busyUntil = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end);
    };
    // 10 blocks of 1,024 steps of at least 0.02 ms: each block outlasts a slice, so each ends with a yield.
    await inSlices(10 * 1024, () => busyUntil(0.02));
    ticking = false;
    expect(turns).toBeGreaterThanOrEqual(10);
  });
});
