/**
 * Loads `--tokenizer FILE` for the LLM protocols. The tokenizer itself is
 * lib/tokenizer's (loadTokenizer: a Hugging Face tokenizer.json); until
 * that layer is part of the build, a tokenizer is bad input before the run.
 */
import { SettingsError } from '../../errors.js';
import { echo } from '../../settings/messages.js';
import type { LlmTokenizer } from './tokenizer-port.js';

export async function loadLlmTokenizer(file: string): Promise<LlmTokenizer> {
  throw new SettingsError('tokenizer', file, `--tokenizer ${echo(file)}: this build has no tokenizer layer (lib/tokenizer); run without --tokenizer (ids from the server: return_token_ids, SGLang's output_ids)`);
}
