import { describe, expect, it } from 'vitest';

import { decodeTokenIds } from '../lib/datasets/accuracy-ids.js';
import { OutputCollector, type OutputConfig } from '../lib/net/llm/output.js';
import { SglangStreamReader } from '../lib/net/llm/sglang.js';
import type { LlmTokenizer } from '../lib/net/llm/tokenizer-port.js';
import * as S from '../lib/net/llm/token-sources.js';

// A tokenizer over a tiny vocabulary: each character is a token (id = its code), 'Ġ' spells a space in logprobs.
const tokenizer: LlmTokenizer = {
  encode: (text) => Array.from(text, (c) => c.codePointAt(0)!),
  tokenToId: (token) => (token.length === 1 ? token.codePointAt(0) : undefined),
  logprobTokenToId: (token) => (token === 'Ġ' ? 32 : token.length === 1 ? token.codePointAt(0) : undefined),
  vocabSize: 0x110000,
};

function config(extra: Partial<OutputConfig> & { kind?: 'ids' | 'text'; exclude?: boolean } = {}): OutputConfig {
  return {
    plan: { kind: extra.kind ?? 'ids', dtype: 'int32', reason: '', excludeReasoning: extra.exclude ?? false },
    tokenizer: 'tokenizer' in extra ? extra.tokenizer : tokenizer,
    counts: new Int32Array(S.TOKEN_SOURCE_SLOTS),
    stream: extra.stream ?? true,
  };
}
const ids = (outcome: ReturnType<OutputCollector['finish']>): number[] => (outcome.ok ? Array.from(decodeTokenIds(outcome.data!, 'int32')) : []);

describe('OutputCollector: output ids and counts from the best source', () => {
  it('server ids first; logprob tokens through the vocabulary next; re-encoded text last; each counted', () => {
    const c = config();
    const server = new OutputCollector(c, true, undefined);
    server.add({ reasoning: '', content: 'ab', ids: [7, 8] });
    expect(ids(server.finish())).toEqual([7, 8]);
    const logprobs = new OutputCollector(c, true, { count: 3, source: S.IN_DATASET_IDS });
    logprobs.add({ reasoning: '', content: 'a b', logprobTokens: ['a', 'Ġ', 'token_id:98'] });
    const outcome = logprobs.finish();
    expect(ids(outcome)).toEqual([97, 32, 98]);
    expect(outcome).toMatchObject({ nTokens: 3, inputTokens: 3 });
    const text = new OutputCollector(c, true, undefined);
    text.add({ reasoning: '', content: 'hi' });
    expect(ids(text.finish())).toEqual([104, 105]);
    expect([c.counts[S.IDS_SERVER], c.counts[S.IDS_LOGPROBS], c.counts[S.IDS_REENCODED]]).toEqual([1, 1, 1]);
    expect([c.counts[S.OUT_SERVER_IDS], c.counts[S.OUT_LOGPROBS], c.counts[S.OUT_REENCODED], c.counts[S.IN_DATASET_IDS]]).toEqual([1, 1, 1, 1]);
  });

  it('ids for only part of the output are not the output: re-encoded, or a failure naming the fix', () => {
    const partial = new OutputCollector(config(), true, undefined);
    partial.add({ reasoning: '', content: 'a', ids: [1] });
    partial.add({ reasoning: '', content: 'b' });
    expect(ids(partial.finish())).toEqual([97, 98]);
    const none = new OutputCollector(config({ tokenizer: undefined }), true, undefined);
    none.add({ reasoning: '', content: 'a', ids: [1] });
    none.add({ reasoning: '', content: 'b' });
    expect(none.finish()).toMatchObject({ ok: false, kind: 'malformed_response', message: expect.stringMatching(/ids for only part of the output.*--tokenizer FILE/) });
  });

  it('a reasoning-only stream counts its tokens; --exclude-reasoning leaves the reasoning out of the data', () => {
    const reasoningOnly = new OutputCollector(config({ kind: 'text', tokenizer: undefined }), true, undefined);
    expect(reasoningOnly.add({ reasoning: 'think', content: '' })).toEqual(Buffer.from('think'));
    reasoningOnly.add({ reasoning: 'ing', content: '' });
    expect(reasoningOnly.finish()).toMatchObject({ ok: true, nTokens: 2, data: Buffer.from('thinking') });
    const excluded = new OutputCollector(config({ exclude: true }), true, undefined);
    excluded.add({ reasoning: 'r', content: '', ids: [1] });
    excluded.add({ reasoning: '', content: 'ok', ids: [2, 3] });
    expect(ids(excluded.finish())).toEqual([2, 3]);
    // A chunk carrying both cannot have its ids split: the answer is re-encoded.
    const mixed = new OutputCollector(config({ exclude: true }), true, undefined);
    mixed.add({ reasoning: 'r', content: 'ok', ids: [1, 2, 3] });
    expect(ids(mixed.finish())).toEqual([111, 107]);
    const text = new OutputCollector(config({ kind: 'text', exclude: true }), true, undefined);
    text.add({ reasoning: 'r', content: 'answer' });
    expect(text.finish()).toMatchObject({ data: Buffer.from('answer') });
  });

  it("the first token's data is its ids in an ids run, for a logged sample only", () => {
    const logged = new OutputCollector(config(), true, undefined);
    expect(Array.from(decodeTokenIds(logged.add({ reasoning: '', content: 'x', ids: [42] })!, 'int32'))).toEqual([42]);
    const unlogged = new OutputCollector(config(), false, undefined);
    expect(unlogged.add({ reasoning: '', content: 'x', ids: [42] })).toEqual(Buffer.from('x'));
  });
});

describe("SGLang's text-only streams: cumulative or incremental, told apart by the text", () => {
  const stream = (texts: string[], completionTokens = true): string => {
    const reader = new SglangStreamReader(true, config({ kind: 'text', tokenizer: undefined }), undefined);
    const body = texts.map((text, k) => `data: ${JSON.stringify({ text, meta_info: completionTokens ? { completion_tokens: k + 1 } : {} })}\n\n`).join('') + 'data: [DONE]\n\n';
    reader.onData(Buffer.from(body));
    const outcome = reader.onEnd();
    return outcome.ok ? Buffer.from(outcome.data!).toString('utf8') : `failed: ${outcome.message}`;
  };

  it('a cumulative event that repeats the text so far (a held-back character, a final event) adds nothing: it was read as a delta', () => {
    expect(stream(['A', 'A', 'A 🦙', 'A 🦙 ate', 'A 🦙 ate'])).toBe('A 🦙 ate');
    expect(stream(['A', 'A'], false)).toBe('A');
    expect(stream(['The', 'The cat', 'The cat'])).toBe('The cat');
  });

  it('an incremental stream that repeats a delta keeps both', () => {
    expect(stream(['ha', 'ha', '!'])).toBe('haha!');
    expect(stream(['ha', '', 'ha', '!'])).toBe('haha!');
    expect(stream(['The', ' cat'])).toBe('The cat');
  });
});
