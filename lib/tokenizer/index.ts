/**
 * The tokenizer layer: Hugging Face tokenizer.json files, read with
 * @huggingface/tokenizers (why this library: docs/llm-benchmarks.md, "Tokenizer").
 */
export { loadTokenizer } from './load.js';
export { SUPPORTED_COMPONENT_TYPES, SUPPORTED_MODEL_TYPES } from './validate.js';
export type {
  DecodeOptions,
  EncodeOptions,
  LoadTokenizerOptions,
  LogprobTokenCandidates,
  LogprobTokenForm,
  LogprobTokenOptions,
  LogprobTokensResult,
  Tokenizer,
} from './types.js';
