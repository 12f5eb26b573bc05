/**
 * Waiting for a node that is not up yet (TransportOptions.waitForNodesMs,
 * `loadgen run --wait-for-nodes`): a node that could not be reached, or that
 * answered 503 Service Unavailable (a server still loading its model), is
 * probed again every NODE_WAIT_RETRY_MS until its probe passes or the wait
 * is over; any other failure is final at once. The run's stop ends the wait
 * at once.
 */
import { NetworkSetupError } from '../errors.js';
import type { NodeProbe } from './protocol.js';

/** A node that is not up yet is probed again after this long. */
export const NODE_WAIT_RETRY_MS = 250;
/** HTTP 503 Service Unavailable: a server that is starting answers it. */
const NOT_READY_STATUS = 503;

/** Probe failures where the node could not be reached at all (not an answer it gave). */
const unreachable = new WeakSet<object>();

/** Marks a probe failure as "the node could not be reached" (worth waiting for); returns it. */
export function markUnreachable<T extends object>(error: T): T {
  unreachable.add(error);
  return error;
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, stop: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolvePause, rejectPause) => {
    if (stop?.aborted === true) {
      rejectPause(stop.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      rejectPause(stop!.reason);
    };
    const timer = setTimeout(() => {
      stop?.removeEventListener('abort', onAbort);
      resolvePause();
    }, ms);
    stop?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `probe` over `node` until it passes; with `waitMs` > 0 a failure
 * because the node is not up is retried until `waitMs` has passed (the last
 * probe comes once it has). `failure` turns a final error into the one to
 * throw, which names the wait when there was one.
 */
export async function probeUntilUp(
  node: NodeProbe,
  waitMs: number,
  stop: AbortSignal | undefined,
  probe: (node: NodeProbe) => Promise<string>,
  failure: (error: unknown) => NetworkSetupError,
): Promise<string> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    let notReady = false;
    const watched: NodeProbe = {
      origin: node.origin,
      request: async (method, path, body, headers) => {
        const response = await node.request(method, path, body, headers);
        if (response.status === NOT_READY_STATUS) notReady = true;
        return response;
      },
    };
    try {
      return await probe(watched);
    } catch (error) {
      if (stop?.aborted === true) throw stop.reason;
      const retryable = notReady || (typeof error === 'object' && error !== null && unreachable.has(error));
      const waited = Date.now() - started;
      if (waitMs > 0 && retryable && waited < waitMs) {
        await pause(Math.min(NODE_WAIT_RETRY_MS, waitMs - waited), stop);
        continue;
      }
      const final = failure(error);
      if (waitMs > 0 && retryable) {
        throw new NetworkSetupError(
          `node ${node.origin} did not come up within the ${+(waitMs / 1000).toPrecision(6)} s it was waited for (${attempt} probes); the last: ${final.message}`,
          { url: node.origin, cause: error },
        );
      }
      throw final;
    }
  }
}
