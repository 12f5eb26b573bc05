// INTERFACE ONLY (issue 12 integration): helper net-openai replaces this file.
import type { NetworkProtocol } from './protocol.js';
import type { NetworkSut, OpenAiSutOptions } from './types.js';

export async function createOpenAiProtocol(options: OpenAiSutOptions): Promise<NetworkProtocol> {
  void options;
  throw new Error('createOpenAiProtocol: not built yet');
}

export async function createOpenAiSut(options: OpenAiSutOptions): Promise<NetworkSut> {
  void options;
  throw new Error('createOpenAiSut: not built yet');
}
