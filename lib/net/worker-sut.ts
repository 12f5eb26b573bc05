/**
 * The dispatch-worker module of the network SUTs (`dispatch: 'worker'`):
 * each worker re-creates the protocol from the SUT's plain options, loads
 * every sample's request, and sends the queries the native core hands it
 * over its own pools. The main thread probed the nodes already.
 */
import type { DispatchWorkerContext } from '../dispatch/dispatch.js';
import type { ClientConfig } from './client-config.js';
import { NetworkClient } from './client.js';
import type { NodeAddress } from './nodes.js';
import { nodeSlice } from './node-stats.js';
import { createRegisteredProtocol } from './registry.js';
import type { QuerySample, SystemUnderTest } from '../api/types.js';

/** What the main thread's NetworkSut hands each worker (structured-cloned). */
export interface NetworkWorkerOptions {
  kind: string;
  protocolOptions: unknown;
  addresses: NodeAddress[];
  config: ClientConfig;
  /** workerCount × nodes stats slices (shared). */
  stats: Float64Array;
  /** Non-zero once the run was stopped: in-flight requests are cancelled. */
  cancelled: Int32Array;
}

export async function createSut(context: DispatchWorkerContext): Promise<Pick<SystemUnderTest, 'issueQuery' | 'flushQueries'>> {
  const o = context.options as NetworkWorkerOptions;
  const protocol = await createRegisteredProtocol(o.kind, o.protocolOptions);
  const all = Array.from({ length: protocol.totalSampleCount }, (_, i) => i);
  await protocol.load(all);
  const nodes = o.addresses.length;
  const client = new NetworkClient(
    protocol,
    o.addresses,
    o.config,
    o.addresses.map((_, i) => nodeSlice(o.stats, nodes, context.workerIndex, i)),
    o.cancelled,
  );
  return {
    issueQuery: (samples: QuerySample[]) => client.issue(samples),
  };
}
