/**
 * Loads `--tokenizer FILE` for the LLM protocols (lib/tokenizer).
 */
import type { LlmTokenizer } from './tokenizer-port.js';

export async function loadLlmTokenizer(file: string): Promise<LlmTokenizer> {
  void file;
  throw new Error('tokenizer: not merged yet');
}
