/**
 * The dispatch-worker module of the network SUTs (`dispatch: 'worker'`):
 * each worker re-creates the protocol from the SUT's plain options, loads
 * every sample's request, and sends the queries the native core hands it
 * over its own pools. The main thread probed the nodes already.
 */
import type { DispatchWorkerContext } from '../dispatch/dispatch.js';
import { NetworkClient } from './client.js';
import { nodeSlice } from './node-stats.js';
import { createRegisteredProtocol } from './registry.js';
import { secretsOf } from './secrets.js';
import { streamSlice } from './stream-stats.js';
import type { NetworkWorkerOptions } from './worker-options.js';
import type { QuerySample, SystemUnderTest } from '../types/api.js';

export type { NetworkWorkerOptions } from './worker-options.js';

export async function createSut(context: DispatchWorkerContext): Promise<Pick<SystemUnderTest, 'issueQuery' | 'flushQueries'>> {
  const o = context.options as NetworkWorkerOptions;
  const protocol = await createRegisteredProtocol(o.kind, o.protocolOptions);
  // Errors go to the main thread's logs and stderr: no part of a secret in them.
  const secrets = secretsOf(protocol, o.config.apiKey);
  const all = Array.from({ length: protocol.totalSampleCount }, (_, i) => i);
  try {
    await protocol.load(all);
  } catch (error) {
    throw secrets.redactError(error);
  }
  const nodes = o.addresses.length;
  const client = new NetworkClient(
    protocol,
    o.addresses,
    o.config,
    o.addresses.map((_, i) => nodeSlice(o.stats, nodes, context.workerIndex, i)),
    o.cancelled,
    { streamSlice: streamSlice(o.streams, context.workerIndex) },
  );
  return {
    issueQuery: (samples: QuerySample[]) => {
      try {
        client.issue(samples);
      } catch (error) {
        throw secrets.redactError(error);
      }
    },
  };
}
