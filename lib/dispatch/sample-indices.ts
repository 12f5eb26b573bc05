/**
 * The QSL indices of a series' samples, as a thread that hands queries to a
 * SUT reads them: copied from the core in chunks into one reused array
 * (copySampleIndices), never as one array of the whole series. That array
 * took 84 ms to copy at 10 M queries, on the JS thread at the start of the
 * timed run, and its external memory set off a GC whose marking slowed the
 * next ~100 ms (benchmarks/RESULTS.md, issue 13).
 */
import type { NativeAddon } from '../native/index.js';

/** Samples copied per call at least: one call per ~65 ms at 1 M samples/s. */
export const SAMPLE_INDEX_CHUNK = 65536;

export interface SampleIndexWindow {
  /** indices[k - start] is the QSL index of sample k, for start <= k < end. */
  indices: Uint32Array;
  start: number;
  end: number;
  /** The series (its first sample id) and its sample count. */
  firstId: number;
  sampleCount: number;
}

export function newSampleIndexWindow(): SampleIndexWindow {
  return { indices: new Uint32Array(0), start: 0, end: 0, firstId: 0, sampleCount: 0 };
}

/** A new series: nothing of the last one's is read again. */
export function resetSampleIndexWindow(window: SampleIndexWindow, firstId: number, sampleCount: number): void {
  window.firstId = firstId;
  window.sampleCount = sampleCount;
  window.start = 0;
  window.end = 0;
}

/**
 * Makes the window hold samples [first, end) of its series. False when it
 * cannot: the core runs another series by now (this one is over), or the
 * range is not the series'.
 */
export function coverSamples(native: NativeAddon, window: SampleIndexWindow, first: number, end: number): boolean {
  if (first >= window.start && end <= window.end) return true;
  if (!(first >= 0 && first <= end && end <= window.sampleCount)) return false;
  const count = Math.min(Math.max(end - first, SAMPLE_INDEX_CHUNK), window.sampleCount - first);
  if (count > window.indices.length) window.indices = new Uint32Array(Math.max(count, SAMPLE_INDEX_CHUNK));
  if (!native.copySampleIndices(window.firstId, first, count, window.indices)) {
    window.start = window.end = 0;
    return false;
  }
  window.start = first;
  window.end = first + count;
  return true;
}
