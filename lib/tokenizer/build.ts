/**
 * Building @huggingface/tokenizers' Tokenizer from a parsed tokenizer.json
 * without holding the event loop for seconds. Its constructor turns a BPE
 * vocabulary and merge list into maps in one synchronous stretch (Llama 3's
 * 128k pieces and 280k merges: over a second on a busy machine), during
 * which no signal handler or timer runs. So the constructor gets the file
 * with an empty vocabulary and merge list, and the same maps, built the same
 * way, are filled here in slices of a few milliseconds with a yield between
 * slices, then put where the constructor would have put them, with the
 * merge ranks in a form that its merging step looks up faster. The fields
 * used are the library's own (pinned version, 0.2.0); test/tokenizer
 * compares every id with Python's tokenizers, so a version that moved them
 * fails there, not silently.
 */
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';

import { TokenizerError } from '../errors.js';
import type { TokenizerAbortSignal } from './types.js';
import { unpacker, type PackedBpe } from './parse.js';
import { inSlices } from './slices.js';
import { checkMerge, checkVocabEntry, SUPPORTED_COMPONENT_TYPES, SUPPORTED_MODEL_TYPES } from './validate.js';

/** A node of the library's BPE merge queue (its `add_node` scores and queues one). */
interface BpeNode {
  token: string;
  next: BpeNode;
  bias: number;
  score: number;
}

/** The library's BPE model fields that its constructor fills from the vocabulary and merges, and its queueing step. */
interface BpeModelFields {
  tokens_to_ids: Map<string, number>;
  vocab: string[];
  merges: string[][];
  bpe_ranks: Map<string, number>;
  unk_token: string | undefined;
  unk_token_id: number | undefined;
  add_node(queue: { push(node: BpeNode): void }, node: BpeNode): void;
  encode(words: string[]): string[];
}

/** Where a SentencePiece-style text splits into words: before a "▁" (a space) that follows another character. */
const WORD_START = /(?<=[^\u2581])(?=\u2581)/u;
/** A piece that spans such a word start: a merge that makes one would join two words. */
const SPANS_WORD_START = /[^\u2581]\u2581/u;

/** The library's fields this layer reads (declared private in its types). */
export interface HfInternals {
  model: { vocab: (string | undefined)[]; tokens_to_ids: Map<string, number> };
  added_tokens: { id: number; content: string; special: boolean }[];
  decoder: unknown;
}

/** The library's constructor, its errors (an unknown component, a bad pattern) turned into TokenizerErrors. */
function construct(file: string, json: Record<string, unknown>): HfTokenizer {
  // The library wants every component key present; tokenizer.json may leave one out (null).
  const complete = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [], ...json };
  try {
    return new HfTokenizer(complete, {});
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TokenizerError(
      file,
      'unsupported',
      `${file}: @huggingface/tokenizers cannot build this tokenizer (${reason}); supported: models ${SUPPORTED_MODEL_TYPES.join(', ')}, ` +
        `pre-tokenizers ${SUPPORTED_COMPONENT_TYPES.pre_tokenizer.join(', ')}, decoders ${SUPPORTED_COMPONENT_TYPES.decoder.join(', ')}`,
      { cause: error },
    );
  }
}

/** A decoder of the library's chain, as this layer adapts it. */
interface DecoderFields {
  config?: { type?: string };
  text_decoder?: unknown;
  decoders?: unknown[];
  added_tokens?: { content: string }[];
  convert_tokens_to_string?(tokens: string[]): string;
  decode_chain?(tokens: string[]): string[];
}

/**
 * Two changes to the library's decoders, found by comparing texts with
 * Python's and by profiling:
 * - Hugging Face's ByteFallback decoder turns a run of byte tokens that is
 *   not valid UTF-8 into one U+FFFD per byte; the library's decodes the run
 *   leniently (one U+FFFD per bad sequence), so a byte run cut inside a
 *   character (a response truncated at max_tokens) decoded to other text.
 *   Each ByteFallback decoder gets the strict rule.
 * - The ByteLevel decoder passes added tokens through as they are and
 *   byte-decodes the runs between them, finding each token among the added
 *   tokens by a linear search (256 of them in Llama 3, 818 in DeepSeek V3):
 *   half of its decode time. The same steps with a set.
 */
function adaptDecoders(decoder: unknown): void {
  const strict = new TextDecoder('utf-8', { fatal: true });
  // Each decoder keeps its tokenizer.json entry as `config`; a Sequence keeps its members as `decoders`.
  const visit = (d: unknown): void => {
    const decoder = d as DecoderFields | null;
    const type = decoder?.config?.type;
    if (decoder === null || type === undefined) return;
    if (type === 'ByteFallback' && decoder.text_decoder !== undefined) {
      decoder.text_decoder = {
        decode: (bytes: Uint8Array) => {
          try {
            return strict.decode(bytes);
          } catch {
            return '\uFFFD'.repeat(bytes.length);
          }
        },
      };
    } else if (type === 'ByteLevel' && Array.isArray(decoder.added_tokens) && typeof decoder.convert_tokens_to_string === 'function' && typeof decoder.decode_chain === 'function') {
      const added = new Set(decoder.added_tokens.map((t) => t.content));
      const toText = decoder.convert_tokens_to_string.bind(decoder);
      decoder.decode_chain = (tokens) => {
        const texts: string[] = [];
        let run: string[] = [];
        for (const token of tokens) {
          if (added.has(token)) {
            if (run.length > 0) texts.push(toText(run));
            run = [];
            texts.push(token);
          } else {
            run.push(token);
          }
        }
        if (run.length > 0) texts.push(toText(run));
        return texts;
      };
    } else if (type === 'Sequence' && Array.isArray(decoder.decoders)) {
      for (const member of decoder.decoders) visit(member);
    }
  };
  visit(decoder);
}

/**
 * Builds the library's tokenizer from a validated tokenizer.json, yielding
 * between slices of the BPE maps; `bpe`: the BPE model's vocabulary and
 * merges as the parsing thread packed them (the json then has them empty).
 */
export async function buildHfTokenizer(file: string, json: Record<string, unknown>, bpe: PackedBpe | null, signal?: TokenizerAbortSignal): Promise<HfTokenizer> {
  const model = json.model as Record<string, unknown>;
  if (model.type !== 'BPE' || bpe === null) {
    // WordPiece and Unigram vocabularies are built by the constructor at once (none of the LLMs MLPerf runs has one).
    const tokenizer = construct(file, json);
    adaptDecoders((tokenizer as unknown as HfInternals).decoder);
    return tokenizer;
  }
  if (bpe.badVocab !== null) checkVocabEntry(file, bpe.badVocab[0], JSON.parse(bpe.badVocab[1]) as unknown);
  if (bpe.badMerge !== null) checkMerge(file, bpe.badMerge[0], JSON.parse(bpe.badMerge[1]) as unknown);
  const tokenizer = construct(file, { ...json, model: { ...model, vocab: {}, merges: [] } });
  const fields = (tokenizer as unknown as { model: BpeModelFields }).model;
  if (!(fields.tokens_to_ids instanceof Map) || !Array.isArray(fields.vocab) || !(fields.bpe_ranks instanceof Map) || typeof fields.add_node !== 'function') {
    throw new TokenizerError(file, 'unsupported', `${file}: the installed @huggingface/tokenizers keeps its BPE model in a form this loadgen does not know (it needs 0.2.0)`);
  }
  // As the constructor: tokens_to_ids from the vocabulary's entries in the file's order, vocab[id] = piece, merges as pairs.
  const count = bpe.ids.length;
  const tokensToIds = new Map<string, number>();
  const idsToPieces: string[] = new Array(count);
  const piece = unpacker(bpe.pieces);
  await inSlices(count, (i) => {
    const p = piece(i);
    const id = bpe.ids[i]!;
    checkVocabEntry(file, p, id);
    tokensToIds.set(p, id);
    idsToPieces[id] = p;
  }, signal);
  // The rank of a merge by its left then right piece. The library keys one map by JSON.stringify([left, right])
  // and stringifies each candidate pair while it merges: 45% of Mistral's encode time (a text is one BPE word
  // there), 1.7x faster with two lookups. A later duplicate overrides an earlier one, as in the library and Rust.
  const mergeCount = bpe.left.lengths.length;
  const pairs: string[][] = new Array(mergeCount);
  const ranks = new Map<string, Map<string, number>>();
  const left = unpacker(bpe.left);
  const right = unpacker(bpe.right);
  await inSlices(mergeCount, (i) => {
    const pair = [left(i), right(i)];
    pairs[i] = pair;
    let rights = ranks.get(pair[0]!);
    if (rights === undefined) ranks.set(pair[0]!, (rights = new Map()));
    rights.set(pair[1]!, i);
  }, signal);
  // A file without a pre-tokenizer (Llama 2, Mistral: SentencePiece-style, spaces written "▁") hands the model
  // each text as one word, merged in one priority queue of thousands of symbols and never cached. When no merge
  // makes a piece that spans a word start, no merge can join two words, and merging word by word gives the same
  // pieces: the model then gets words, which its cache also serves (Mistral encode 4 to 10x faster).
  // (With ignore_merges, a word found whole in the vocabulary skips merging: words and texts would differ there.)
  let spansWordStart = (json.pre_tokenizer !== null && json.pre_tokenizer !== undefined) || model.ignore_merges === true;
  if (!spansWordStart) {
    await inSlices(mergeCount, (i) => {
      if (!spansWordStart && SPANS_WORD_START.test(pairs[i]![0]! + pairs[i]![1]!)) spansWordStart = true;
    }, signal);
    if (!spansWordStart) {
      const encodeWords = fields.encode.bind(fields);
      fields.encode = (words) => encodeWords(words.flatMap((word) => word.split(WORD_START)));
    }
  }
  fields.tokens_to_ids = tokensToIds;
  fields.vocab = idsToPieces;
  fields.merges = pairs;
  fields.bpe_ranks = new Map();
  fields.add_node = (queue, node) => {
    const rank = ranks.get(node.token)?.get(node.next.token);
    if (rank !== undefined) {
      node.score = rank + node.bias;
      queue.push(node);
    }
  };
  fields.unk_token_id = fields.unk_token === undefined ? undefined : tokensToIds.get(fields.unk_token);
  // The constructor entered the added tokens into the (then empty) vocabulary: again, into the real one.
  for (const added of (tokenizer as unknown as HfInternals).added_tokens) {
    tokensToIds.set(added.content, added.id);
    idsToPieces[added.id] = added.content;
  }
  adaptDecoders((tokenizer as unknown as HfInternals).decoder);
  return tokenizer;
}
