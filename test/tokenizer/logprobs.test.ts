/**
 * Logprob tokens back to ids, in every form vLLM has written them:
 * `token_id:N`, the vocabulary piece, the token's text alone (V1 engine;
 * transformers' clean-up when tokenizer_config.json asks for it), and the
 * text a token adds inside the sequence (V0 deltas, restored spaces). A text
 * that several ids decode to is ambiguous: no id.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { loadTokenizer, type Tokenizer } from '../../lib/tokenizer/index.js';
import { expected, TOKENIZER_FILES, type Expected } from './fixtures.js';

/** The texts vLLM's V1 engine writes: each id decoded alone. */
const alone = (t: Tokenizer, ids: number[], cleanUp = false) => ids.map((id) => t.decode([id], { cleanUpTokenizationSpaces: cleanUp }));

describe('Llama 3.1 (byte-level)', () => {
  let llama: Tokenizer;
  let want: Expected;
  beforeAll(async () => {
    llama = await loadTokenizer(TOKENIZER_FILES.llama3_1, { config: false });
    want = expected('llama3_1');
  });

  it('maps token_id:N to N when N has a token, else to nothing', () => {
    expect(llama.logprobTokenToId('token_id:128009')).toBe(128009);
    expect(llama.logprobTokenToId('token_id:0')).toBe(0);
    expect(llama.logprobTokenToId('token_id:128256')).toBeUndefined();
    expect(llama.logprobTokenToId('token_id:-1')).toBeUndefined();
    expect(llama.logprobTokenToId('token_id:1.5')).toBeUndefined();
  });

  it('maps the text of each id decoded alone back to the id, unless several ids share that text (Python says which)', async () => {
    await llama.prepareLogprobTokens();
    const shared = new Map(want.aloneShared);
    const wrong: string[] = [];
    let ambiguous = 0;
    for (const [id, text] of want.aloneSample) {
      const got = llama.logprobTokenToId(text, { form: 'text' });
      const group = shared.get(text);
      if (group !== undefined) {
        ambiguous += 1;
        if (got !== undefined || JSON.stringify([...llama.logprobTokenCandidates(text).text].sort((a, b) => a - b)) !== JSON.stringify(group)) wrong.push(`${id} ${JSON.stringify(text)}: ambiguous`);
      } else if (got !== id) wrong.push(`${id} ${JSON.stringify(text)}: ${got}`);
    }
    expect(wrong).toEqual([]);
    // Every shared text holds U+FFFD: byte tokens of split characters (Python finds 1,229 such ids in 13 texts).
    expect(want.aloneShared.every(([text]) => text.includes('\uFFFD'))).toBe(true);
    expect(want.aloneShared.reduce((n, [, ids]) => n + ids.length, 0)).toBe(1229);
    expect(ambiguous).toBeGreaterThan(0);
  });

  it('maps the pieces of the vocabulary (early vLLM; MLPerf reference SUT) back to their ids', () => {
    for (const [id, piece] of want.pieces) expect(llama.logprobTokenToId(piece, { form: 'piece' })).toBe(id);
  });

  it("reads a text before a piece in 'auto': a server that writes texts writes é for the token Ã©, whose piece é is a lone byte", () => {
    const text = llama.tokenToId('Ã©')!;
    const byte = llama.tokenToId('é')!;
    expect(llama.decode([text])).toBe('é');
    expect(llama.logprobTokenCandidates('é')).toEqual({ tokenId: undefined, piece: byte, text: [text] });
    expect(llama.logprobTokenToId('é')).toBe(text);
    expect(llama.logprobTokenToId('é', { form: 'piece' })).toBe(byte);
    expect(llama.logprobTokenToId('Ġthe')).toBe(279);
    expect(llama.logprobTokenToId(' the')).toBe(279);
    expect(llama.logprobTokenToId('\uFFFD')).toBeUndefined();
    expect(llama.logprobTokenCandidates('\uFFFD').text.length).toBeGreaterThan(500);
    expect(llama.logprobTokenToId('not a token at all')).toBeUndefined();
  });

  it('maps a whole response in each form, and says whether the ids reproduce its text', () => {
    const text = "The café's 42 résumés\n\nare “done”.";
    const ids = llama.encode(text, { addSpecialTokens: false });
    for (const [tokens, form] of [
      [ids.map((id) => `token_id:${id}`), 'token-id'],
      [ids.map((id) => llama.idToToken(id)!), 'piece'],
      [alone(llama, ids), 'text'],
    ] as const) {
      const result = llama.logprobTokensToIds(tokens, { text });
      expect(result).toEqual({ ids, form, unresolved: 0, matchesText: true });
    }
    expect(llama.logprobTokensToIds(alone(llama, ids)).matchesText).toBeUndefined();
    expect(llama.logprobTokensToIds(alone(llama, ids), { text: 'something else' }).matchesText).toBe(false);
  });

  it('leaves the byte tokens of a split character unresolved, and says the ids do not reproduce the text', () => {
    const text = 'A \u{1F9FF} amulet';
    const ids = llama.encode(text, { addSpecialTokens: false });
    const result = llama.logprobTokensToIds(alone(llama, ids), { text });
    expect(result.unresolved).toBeGreaterThan(0);
    expect(result.ids.filter((id) => id === undefined).length).toBe(result.unresolved);
    expect(result.matchesText).toBe(false);
  });
});

describe('Llama 3.1 with transformers clean-up (tokenizer_config.json)', () => {
  it("knows that '.' may be the cleaned-up text of 'Ġ.', and picks the reading that reproduces the response", async () => {
    const llama = await loadTokenizer(TOKENIZER_FILES.llama3_1);
    expect(llama.cleanUpTokenizationSpaces).toBe(true);
    const dot = llama.tokenToId('.')!;
    const spaceDot = llama.tokenToId('Ġ.')!;
    expect([...llama.logprobTokenCandidates('.').text].sort((a, b) => a - b)).toEqual([dot, spaceDot].sort((a, b) => a - b));
    expect(llama.logprobTokenToId('.')).toBeUndefined();
    // A server that does not clean up writes " ." for Ġ.; one that does writes "." and its text still holds " .".
    const text = 'It is 3 . 5 m.';
    const ids = llama.encode(text, { addSpecialTokens: false });
    expect(ids).toContain(spaceDot);
    expect(llama.logprobTokensToIds(alone(llama, ids), { text })).toMatchObject({ ids, unresolved: 0, matchesText: true });
    const cleaned = llama.logprobTokensToIds(alone(llama, ids, true), { text });
    expect(cleaned.matchesText).toBe(false);
  });
});

describe('Mistral / Mixtral 8x7B (SentencePiece: the decoder drops a leading space)', () => {
  let mistral: Tokenizer;
  beforeAll(async () => {
    mistral = await loadTokenizer(TOKENIZER_FILES.mistral);
  });

  it("cannot tell 'the' from '▁the' decoded alone, but can from the text inside the sequence (' the')", () => {
    const spaced = mistral.tokenToId('▁the')!;
    const bare = mistral.tokenToId('the')!;
    expect(mistral.decode([spaced])).toBe('the');
    expect(mistral.logprobTokenToId('the')).toBeUndefined();
    expect([...mistral.logprobTokenCandidates('the').text].sort((a, b) => a - b)).toEqual([bare, spaced].sort((a, b) => a - b));
    expect(mistral.logprobTokenToId(' the')).toBe(spaced);
    expect(mistral.logprobTokenToId('▁the')).toBe(spaced);
  });

  it('maps a response written as deltas (V0) or as pieces (MLPerf reference) back to its ids', () => {
    const text = 'The quick brown fox, then the lazy dog.';
    const ids = mistral.encode(text, { addSpecialTokens: false });
    // A delta is what the token adds to the text decoded so far, the prompt included (its first token keeps its space).
    const prompt = mistral.encode('Summarize:');
    const upTo = (n: number) => mistral.decode([...prompt, ...ids.slice(0, n)], { skipSpecialTokens: true });
    const deltas = ids.map((_, i) => upTo(i + 1).slice(upTo(i).length));
    expect(deltas.slice(0, 2)).toEqual([' The', ' quick']);
    // The response text starts with the first token's space only in the deltas: the ids decode to the text without it.
    expect(mistral.logprobTokensToIds(deltas, { text })).toMatchObject({ ids, form: 'text', unresolved: 0, matchesText: true });
    // The byte-fallback token <0x2C> decodes to "," as the piece "," does; the piece is meant.
    expect(mistral.decode([mistral.tokenToId('<0x2C>')!])).toBe(',');
    expect(mistral.logprobTokenCandidates(',').text).not.toContain(mistral.tokenToId('<0x2C>'));
    expect(mistral.logprobTokenCandidates(',').text).toContain(mistral.tokenToId(','));
    expect(mistral.logprobTokensToIds(ids.map((id) => mistral.idToToken(id)!), { text })).toMatchObject({ ids, form: 'piece', unresolved: 0, matchesText: true });
  });

  it("leaves a response decoded token by token with the spaces dropped unresolved where 'the' could be either", () => {
    const text = 'The quick brown fox, then the lazy dog.';
    const ids = mistral.encode(text, { addSpecialTokens: false });
    const result = mistral.logprobTokensToIds(alone(mistral, ids), { text });
    expect(result.unresolved).toBeGreaterThan(0);
    expect(result.matchesText).toBe(false);
  });
});
