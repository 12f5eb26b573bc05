/**
 * A request made before the run through a node's undici pool (probes, a
 * protocol's checkBeforeRun): bounded by the probe timeout and a body
 * limit, ended at once by the run's stop, and every failure a
 * NetworkSetupError naming the node (its message redacted).
 */
import { NetworkSetupError } from '../errors.js';
import { markUnreachable } from './node-wait.js';
import { TIMEOUT_CODES } from './undici-errors.js';
import type { ConnectionPool, PooledRequest } from './undici-pool.js';

/** Largest probe response read (metadata, model lists). */
export const PROBE_BODY_LIMIT = 8 << 20;

/** One probe request: `fullPath` (with the node's base path) is sent, `path` named in messages. */
export async function probeRequest<T extends PooledRequest>(
  pool: ConnectionPool<T>,
  label: string,
  fullPath: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  timeoutMs: number,
  redact: (text: string) => string,
  stop?: AbortSignal,
  bodyLimit = PROBE_BODY_LIMIT,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Uint8Array }> {
  const timeout = AbortSignal.timeout(timeoutMs);
  // The run's stop ends a probe at once too (a node that never answers must not hold a Ctrl-C).
  const signal = stop === undefined ? timeout : AbortSignal.any([timeout, stop]);
  try {
    const response = await pool.request({
      method,
      path: fullPath,
      headers,
      ...(body !== undefined ? { body } : {}),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of response.body) {
      length += (chunk as Buffer).length;
      if (length > bodyLimit) {
        response.body.destroy();
        throw new NetworkSetupError(`node ${label}: ${method} ${path} answered with more than ${bodyLimit} bytes`, { url: label });
      }
      chunks.push(chunk as Buffer);
    }
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
  } catch (error) {
    if (stop?.aborted === true) throw stop.reason;
    if (error instanceof NetworkSetupError) throw error;
    const code = (error as { code?: unknown }).code;
    // The connection's own cap (the protocol's response limit) ended the body first.
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
      throw new NetworkSetupError(`node ${label}: ${method} ${path} answered with more than ${Math.min(bodyLimit, pool.maxResponseBytes)} bytes`, { url: label });
    const timedOut = timeout.aborted || (typeof code === 'string' && TIMEOUT_CODES.has(code));
    const why = timedOut
      ? `no answer within ${timeoutMs} ms`
      : `cannot connect or read: ${(error as Error)?.message ?? String(error)}${typeof code === 'string' ? ` (${code})` : ''}`;
    throw markUnreachable(new NetworkSetupError(`node ${label} is not reachable: ${method} ${path}: ${redact(why)}`, { url: label, cause: error }));
  }
}
