// INTERFACE ONLY (issue 12 integration): helper net-kserve replaces this file.
import type { NetworkProtocol } from './protocol.js';
import type { KServeSutOptions, NetworkSut } from './types.js';

export async function createKServeProtocol(options: KServeSutOptions): Promise<NetworkProtocol> {
  void options;
  throw new Error('createKServeProtocol: not built yet');
}

export async function createKServeSut(options: KServeSutOptions): Promise<NetworkSut> {
  void options;
  throw new Error('createKServeSut: not built yet');
}
