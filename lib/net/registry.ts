/**
 * The protocols a dispatch worker can re-create from plain options (each
 * worker has its own protocol and pools): the kind a protocol reports ->
 * how to build it.
 */
import { createHttpProtocol } from './http-map.js';
import { createKServeProtocol } from './kserve.js';
import { createOpenAiProtocol } from './openai.js';
import type { NetworkProtocol } from './protocol.js';
import type { HttpSutOptions, KServeSutOptions, OpenAiSutOptions } from './types.js';
import type { RegisteredProtocolKind } from './worker-options.js';

export { isRegisteredProtocol } from './worker-options.js';

const PROTOCOLS: Record<string, (options: never) => Promise<NetworkProtocol>> = {
  openai: (options: OpenAiSutOptions) => createOpenAiProtocol(options),
  kserve: (options: KServeSutOptions) => createKServeProtocol(options),
  http: (options: HttpSutOptions) => createHttpProtocol(options),
} satisfies Record<RegisteredProtocolKind, (options: never) => Promise<NetworkProtocol>>;

/** Builds the protocol `kind` from the options its SUT was created with. */
export function createRegisteredProtocol(kind: string, options: unknown): Promise<NetworkProtocol> {
  const create = PROTOCOLS[kind];
  if (create === undefined) throw new Error(`no protocol '${kind}' is registered for dispatch workers (known: ${Object.keys(PROTOCOLS).join(', ')})`);
  return create(options as never);
}
