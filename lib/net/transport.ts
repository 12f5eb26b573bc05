// INTERFACE ONLY (issue 12 integration): helper net-transport replaces this file.
import type { NetworkProtocol } from './protocol.js';
import type { NetworkSut, TransportOptions } from './types.js';

/** Probes every node (names, readiness), then serves queries over undici pools. */
export async function createNetworkSut(protocol: NetworkProtocol, options: TransportOptions): Promise<NetworkSut> {
  void protocol;
  void options;
  throw new Error('createNetworkSut: not built yet');
}
