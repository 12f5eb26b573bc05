/**
 * What a transport does with a reader's verdict (ResponseReader.onEnd): a
 * plain outcome is used at once (the hot path: no promise, no timer); a
 * promise (an async user function maps the response) is awaited, bounded by
 * a timer, and its rejection is a failed sample, never an unhandled
 * rejection. Either way the outcome is checked before it reaches the core:
 * a protocol is user code too.
 */
import { thrownText } from '../api/user-calls.js';
import { FAILURE_KINDS, MAX_TOKEN_COUNT, tokenCountProblem, type ResponseOutcome } from './protocol.js';

/** True when `value` is a promise or another thenable (an async verdict). */
export function isPendingOutcome(value: ResponseOutcome | PromiseLike<ResponseOutcome>): value is PromiseLike<ResponseOutcome> {
  // A reader that breaks its contract may hand back anything (null included): checkedOutcome says what.
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * `value` when it is a well-formed outcome, else a 'malformed_response'
 * naming what the reader of protocol `kind` gave: nTokens or inputTokens
 * outside 0..2^31-1 or not an integer, data that is not bytes, an unknown kind.
 * Builds no string unless the outcome is bad (it runs per response).
 */
export function checkedOutcome(value: unknown, kind: string): ResponseOutcome {
  if (typeof value === 'object' && value !== null) {
    const outcome = value as Record<string, unknown>;
    if (outcome.ok === true) {
      const n = outcome.nTokens;
      if (n !== undefined && !(typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_TOKEN_COUNT)) {
        return malformed(`the ${kind} reader: nTokens ${tokenCountProblem(n)}`);
      }
      if (outcome.data !== undefined && !(outcome.data instanceof Uint8Array)) return malformed(`the ${kind} reader: data must be a Uint8Array, got ${typeof outcome.data}`);
      const input = outcome.inputTokens;
      if (input !== undefined && !(typeof input === 'number' && Number.isInteger(input) && input >= 0 && input <= MAX_TOKEN_COUNT)) {
        return malformed(`the ${kind} reader: inputTokens ${tokenCountProblem(input)}`);
      }
      return value as ResponseOutcome;
    }
    if (outcome.ok === false && typeof outcome.message === 'string' && (FAILURE_KINDS as readonly unknown[]).includes(outcome.kind)) return value as ResponseOutcome;
  }
  return malformed(`the ${kind} reader gave ${value === null ? 'null' : typeof value === 'object' ? 'an object that' : typeof value}${typeof value === 'object' && value !== null ? ' is' : ','} not an outcome ({ ok: true, data?, nTokens? } or { ok: false, kind, message })`);
}

/**
 * Calls `done` once with what `pending` (from the reader of protocol `kind`)
 * settles to (checked), with a 'malformed_response' when it rejects, or with
 * a 'timeout' when it has not settled within `timeoutMs`. The timer is unref'd: a run waiting for the
 * sample keeps the process alive, and once the run is over nothing waits.
 * `done` must not throw (a throw is dropped: the run it completes into may
 * have ended).
 */
export function settleOutcome(pending: PromiseLike<ResponseOutcome>, kind: string, timeoutMs: number, done: (outcome: ResponseOutcome) => void): void {
  const what = `the ${kind} reader's outcome`;
  let settled = false;
  const finish = (outcome: ResponseOutcome): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    try {
      done(outcome);
    } catch {
      // Nothing to complete into any more.
    }
  };
  const timer = setTimeout(() => finish({ ok: false, kind: 'timeout', message: `${what} did not settle within ${timeoutMs} ms` }), timeoutMs);
  timer.unref();
  let promise: Promise<ResponseOutcome>;
  try {
    promise = Promise.resolve(pending);
  } catch (error) {
    promise = Promise.reject(error);
  }
  promise.then(
    (value) => finish(checkedOutcome(value, kind)),
    (error: unknown) => finish(malformed(`${what} rejected: ${thrownText(error)}`)),
  );
}

function malformed(message: string): ResponseOutcome {
  return { ok: false, kind: 'malformed_response', message };
}
