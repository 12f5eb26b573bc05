/**
 * Live progress of the run in this process, for API users (the CLI's
 * display, lib/report/progress.ts, reads the same snapshot).
 */
import { loadNative, type NativeProgress } from '../native/index.js';

/**
 * The running series' counters and running latency histogram (approximate
 * percentiles, within 0.8 %), or null when no run is active. Cheap: it never
 * reads the per-sample records, so it may be polled from a timer.
 */
export function currentProgress(): NativeProgress | null {
  return loadNative().progress();
}
