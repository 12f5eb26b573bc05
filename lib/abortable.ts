/**
 * Waiting on work that cannot be cancelled itself (a module's top-level
 * await, a user callback, a probe) no longer than a stop signal allows.
 */

/**
 * `promise`, or a rejection with `signal.reason` as soon as `signal` aborts
 * (at once when it is aborted already). The work goes on unobserved: a later
 * rejection of `promise` is handled, never an unhandled rejection.
 */
export function untilAborted<T>(promise: PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
  const work = Promise.resolve(promise);
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      work.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Lets timers, I/O and signal handlers run (between slices of long synchronous work). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
