// INTERFACE ONLY (issue 12 integration): helper net-transport replaces this file.
import type { NetworkProtocol } from './protocol.js';
import type { HttpSutOptions, NetworkSut } from './types.js';

export async function createHttpProtocol(options: HttpSutOptions): Promise<NetworkProtocol> {
  void options;
  throw new Error('createHttpProtocol: not built yet');
}

export async function createHttpSut(options: HttpSutOptions): Promise<NetworkSut> {
  void options;
  throw new Error('createHttpSut: not built yet');
}
