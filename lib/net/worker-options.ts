/**
 * What a network SUT hands its dispatch workers (lib/net/worker-sut.ts): the
 * options, and the protocol kinds a worker can re-create
 * (lib/net/registry.ts builds them). Apart from both so that the transport
 * imports neither the worker module nor, through the registry, the protocols.
 */
import type { ClientConfig } from './client-config.js';
import type { NodeAddress } from './nodes.js';

/** What the main thread's NetworkSut hands each worker (structured-cloned). */
export interface NetworkWorkerOptions {
  kind: string;
  protocolOptions: unknown;
  addresses: NodeAddress[];
  config: ClientConfig;
  /** workerCount × nodes stats slices (shared). */
  stats: Float64Array;
  /** workerCount stream-stats slices (shared; lib/net/stream-stats.ts). */
  streams: Float64Array;
  /** Non-zero once the run was stopped: in-flight requests are cancelled. */
  cancelled: Int32Array;
}

/** The protocol kinds lib/net/registry.ts can build in a worker (it fails to compile if the two differ). */
export const REGISTERED_PROTOCOL_KINDS = ['openai', 'kserve', 'http'] as const;

export type RegisteredProtocolKind = (typeof REGISTERED_PROTOCOL_KINDS)[number];

/** True when workers can re-create protocols of this kind. */
export function isRegisteredProtocol(kind: string): boolean {
  return (REGISTERED_PROTOCOL_KINDS as readonly string[]).includes(kind);
}
