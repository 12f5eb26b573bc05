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
 * turn), so an early timer is re-armed. With `spinMs`, the last `spinMs` (at
 * least 1 ms) are waited in setImmediate turns (other requests are still
 * served between them): microseconds late, at the cost of a busy loop. Without,
 * timers only: up to ~1 ms late, no CPU spent waiting (a busy loop per token
 * made the stub a CPU-bound bottleneck at a few hundred streams).
 */
export function runAt(dueNs: number, fn: () => void, spinMs: number, timer: RunTimer = {}): RunTimer {
  const check = (): void => {
    const remainingMs = (dueNs - Number(process.hrtime.bigint())) / 1e6;
    timer.timeout = undefined;
    timer.immediate = undefined;
    if (remainingMs <= 0) fn();
    else if (spinMs === 0) timer.timeout = setTimeout(check, Math.max(1, Math.ceil(remainingMs)));
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
