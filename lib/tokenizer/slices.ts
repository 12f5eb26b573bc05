/**
 * Long synchronous work in slices: a few milliseconds at a time, with a turn
 * of the event loop between slices (timers, I/O and signal handlers run),
 * stopping when a signal aborts.
 */
import { yieldToEventLoop } from '../abortable.js';
import type { TokenizerAbortSignal } from './types.js';

/** Rejects with the signal's reason once it is aborted. */
export function throwIfAborted(signal: TokenizerAbortSignal | undefined): void {
  if (signal?.aborted === true) throw signal.reason;
}

/** Longest stretch of synchronous work between yields, ms. */
const SLICE_MS = 8;

/**
 * Runs `step(i)` for i in [0, count), yielding to the event loop whenever a
 * slice has run SLICE_MS; rejects with the signal's reason between slices.
 */
export async function inSlices(count: number, step: (i: number) => void, signal?: TokenizerAbortSignal): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < count; i += 1) {
    step(i);
    if ((i & 1023) === 1023 && performance.now() - sliceStart >= SLICE_MS) {
      await yieldToEventLoop();
      throwIfAborted(signal);
      sliceStart = performance.now();
    }
  }
}
