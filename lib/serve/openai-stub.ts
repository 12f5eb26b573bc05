// INTERFACE ONLY (issue 12 integration): helper net-openai replaces this file.
import type { RunningServer, ServeAddress } from './server.js';

export interface OpenAiStubOptions extends ServeAddress {
  /** Time to the first content token, ms. */
  ttftMs: number;
  /** Time between content tokens, ms. */
  tpotMs: number;
}

/** A deterministic OpenAI-compatible token streamer (`loadgen serve --openai-stub`). */
export async function startOpenAiStub(options: OpenAiStubOptions): Promise<RunningServer> {
  void options;
  throw new Error('startOpenAiStub: not built yet');
}
