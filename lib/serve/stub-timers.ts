/**
 * The OpenAI stub's token timers: each token at its due time on the
 * monotonic clock, never before it.
 */

/** A pending timer of runAt (cancel with cancelRun). */
export interface RunTimer {
  timeout?: NodeJS.Timeout;
  immediate?: NodeJS.Immediate;
}

/**
 * Runs `fn` at `dueNs` (monotonic clock), never before it: setTimeout can
 * fire up to ~1 ms early (libuv's loop time is in whole ms, read once per loop
 * turn), so an early timer is re-armed, and the last ms (or `spinMs`, if
 * more) is waited in setImmediate turns (other requests are still served
 * between them).
 */
export function runAt(dueNs: number, fn: () => void, spinMs: number, timer: RunTimer = {}): RunTimer {
  const check = (): void => {
    const remainingMs = (dueNs - Number(process.hrtime.bigint())) / 1e6;
    timer.timeout = undefined;
    timer.immediate = undefined;
    if (remainingMs <= 0) fn();
    else if (remainingMs > Math.max(1, spinMs)) timer.timeout = setTimeout(check, remainingMs - spinMs);
    else timer.immediate = setImmediate(check);
  };
  // Never fn() from here: a response already behind its schedule would recurse once per token.
  timer.immediate = setImmediate(check);
  return timer;
}

export function cancelRun(timer: RunTimer | undefined): void {
  if (timer === undefined) return;
  clearTimeout(timer.timeout);
  clearImmediate(timer.immediate);
}
