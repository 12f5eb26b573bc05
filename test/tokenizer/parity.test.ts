/**
 * loadgen's tokenizer against Python's Hugging Face tokenizers on the same
 * tokenizer.json files: every id of every text of the corpus (unicode,
 * emoji, CJK, digits, runs of spaces and newlines, special tokens) and every
 * decoded text (with and without special tokens; random ids, slices that
 * split characters). The expected values were written by
 * test/fixtures/tokenizer/make-expected.py.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { loadTokenizer, type Tokenizer } from '../../lib/tokenizer/index.js';
import { corpus, expected, TOKENIZER_FILES, type Expected, type TokenizerName } from './fixtures.js';

const texts = corpus();

describe.each(Object.keys(TOKENIZER_FILES) as TokenizerName[])('%s: the same as Python tokenizers', (name) => {
  let tokenizer: Tokenizer;
  let want: Expected;
  beforeAll(async () => {
    tokenizer = await loadTokenizer(TOKENIZER_FILES[name], { config: false });
    want = expected(name);
  });

  it('has the vocabulary size and special tokens Python reports', () => {
    expect(tokenizer.vocabSize).toBe(want.vocabSize);
    expect(tokenizer.specialTokenIds).toEqual(want.specialIds);
  });

  it('encodes every text of the corpus to the same ids, with and without special tokens', () => {
    const wrong: string[] = [];
    texts.forEach((text, i) => {
      const withSpecial = tokenizer.encode(text);
      const plain = tokenizer.encode(text, { addSpecialTokens: false });
      if (JSON.stringify(withSpecial) !== JSON.stringify(want.encode[i])) wrong.push(`#${i} ${JSON.stringify(text.slice(0, 40))} (special tokens added)`);
      if (JSON.stringify(plain) !== JSON.stringify(want.encodePlain[i])) wrong.push(`#${i} ${JSON.stringify(text.slice(0, 40))}`);
    });
    expect(wrong).toEqual([]);
    expect(texts.length).toBeGreaterThan(300);
  });

  it('decodes every id sequence to the same text, skipping special tokens or not', () => {
    const wrong: string[] = [];
    want.decodeIds.forEach((ids, i) => {
      const kept = tokenizer.decode(ids);
      const skipped = tokenizer.decode(Int32Array.from(ids), { skipSpecialTokens: true });
      if (kept !== want.decodeKeep[i]) wrong.push(`#${i} ${JSON.stringify(ids.slice(0, 8))}: ${JSON.stringify(kept.slice(0, 40))} != ${JSON.stringify(want.decodeKeep[i]!.slice(0, 40))}`);
      if (skipped !== want.decodeSkip[i]) wrong.push(`#${i} skipping: ${JSON.stringify(skipped.slice(0, 40))} != ${JSON.stringify(want.decodeSkip[i]!.slice(0, 40))}`);
    });
    expect(wrong).toEqual([]);
  });

  it('round-trips the texts that Python round-trips, and only those', () => {
    const fails = texts.flatMap((text, i) => (tokenizer.decode(tokenizer.encode(text, { addSpecialTokens: false })) === text ? [] : [i]));
    expect(fails).toEqual(want.roundTripFails);
    expect(fails.length).toBeLessThan(texts.length / 5);
  });

  it('maps vocabulary pieces to ids and back', () => {
    for (const [id, piece] of want.pieces) {
      expect(tokenizer.idToToken(id)).toBe(piece);
      expect(tokenizer.tokenToId(piece)).toBe(id);
    }
  });
});
