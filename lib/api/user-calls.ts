/**
 * Promises that user code hands over before a run (a module's import with
 * its top-level await, createSut(), a mapping module's name()...): each is
 * awaited within a timeout, with an error naming the function, and listed
 * while pending, so a command whose event loop ran dry can say what it was
 * still waiting for. A synchronous function that never returns cannot be
 * stopped from its own thread: only promises are bounded here.
 */

/** How long importing a user module (its top-level await) and its createSut()/createQsl() may take by default. */
export const MODULE_LOAD_TIMEOUT_MS = 30_000;

// What is being waited for, by description (a count: the same call may be pending twice).
const pending = new Map<string, number>();

/** The user calls being waited for now, e.g. "--request ./map.mjs: importing the module". */
export function pendingUserCalls(): string[] {
  return [...pending.keys()];
}

/** True for a promise or another thenable. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * `value` once it settles (at once when it is not a promise), or
 * `timeoutError()` thrown when it has not settled within `timeoutMs` (0: no
 * limit). `what` names the call while it is pending. The timer keeps the
 * process alive (nothing else may while a run is being set up); a settle
 * after the timeout is ignored, a rejection then too.
 */
export async function settleWithin<T>(value: T | PromiseLike<T>, timeoutMs: number, what: string, timeoutError: () => Error): Promise<T> {
  if (!isThenable(value)) return value;
  pending.set(what, (pending.get(what) ?? 0) + 1);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      if (timeoutMs > 0) timer = setTimeout(() => reject(timeoutError()), timeoutMs);
      Promise.resolve(value).then(resolve, reject);
    });
  } finally {
    clearTimeout(timer);
    const n = pending.get(what)! - 1;
    if (n === 0) pending.delete(what);
    else pending.set(what, n);
  }
}

/** A short text of a thrown value: an Error's message, else the value. */
export function thrownText(error: unknown): string {
  let text: string;
  try {
    text = error instanceof Error ? error.message : typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    text = Object.prototype.toString.call(error);
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
