/**
 * The demo's data set: synthetic 3×32×32 float inputs, each a deterministic
 * function of its QSL index, so the accuracy check can regenerate any sample
 * without keeping the data set around.
 */
import { InterfaceError } from '../errors.js';
import type { QuerySampleLibrary } from '../types/api.js';
import { INPUT_CHANNELS, INPUT_SIZE, SAMPLE_ELEMENTS, SeededRandom } from './model.js';

/** Samples in the demo data set. */
export const DEMO_TOTAL_SAMPLES = 1024;
/** All of them fit in memory (12 MiB as float32). */
export const DEMO_PERFORMANCE_SAMPLES = 1024;

const DATASET_SEED = 0x51534c00; // "QSL\0"

/**
 * Writes sample `index` into `out` (SAMPLE_ELEMENTS floats): per-channel
 * diagonal stripes whose period and phase depend on the index, plus noise,
 * in [-1, 1]. Structure keeps the logits varied between samples; only integer
 * maths and float32 rounding, so it is reproducible everywhere.
 */
export function fillDemoSample(index: number, out: Float32Array): Float32Array {
  if (out.length < SAMPLE_ELEMENTS) throw new RangeError(`sample buffer holds ${out.length} floats, need ${SAMPLE_ELEMENTS}`);
  const rng = new SeededRandom((DATASET_SEED ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  let k = 0;
  for (let c = 0; c < INPUT_CHANNELS; c++) {
    const period = 4 + ((index * 7 + c * 3) % 13);
    const phase = (index * 11 + c * 5) % period;
    for (let y = 0; y < INPUT_SIZE; y++) {
      for (let x = 0; x < INPUT_SIZE; x++) {
        const stripe = ((x + y + phase) % period) / period; // [0, 1)
        out[k++] = Math.fround(stripe - 0.5 + rng.nextSymmetric(0.5));
      }
    }
  }
  return out;
}

/** A fresh array holding sample `index`. */
export function demoSample(index: number): Float32Array {
  return fillDemoSample(index, new Float32Array(SAMPLE_ELEMENTS));
}

/** The demo QSL: loaded samples are kept as Float32Arrays the SUT reads from. */
export interface DemoQsl extends QuerySampleLibrary {
  /** The loaded input of QSL index `index`; throws when it is not loaded. */
  sampleData(index: number): Float32Array;
  /** How many samples are loaded now. */
  readonly loadedCount: number;
}

/** Creates the demo QSL over {@link DEMO_TOTAL_SAMPLES} synthetic samples. */
export function createDemoQsl(
  totalSampleCount = DEMO_TOTAL_SAMPLES,
  performanceSampleCount = Math.min(DEMO_PERFORMANCE_SAMPLES, totalSampleCount),
): DemoQsl {
  const loaded = new Map<number, Float32Array>();
  return {
    name: 'demo-synthetic-3x32x32',
    totalSampleCount,
    performanceSampleCount,
    get loadedCount(): number {
      return loaded.size;
    },
    loadSamplesToRam(indices: number[]): void {
      // Each sample gets its own buffer, filled before any query for it is
      // issued, so the SUT only copies bytes while the clock runs.
      for (const index of indices) {
        if (!loaded.has(index)) loaded.set(index, demoSample(index));
      }
    },
    unloadSamplesFromRam(indices: number[]): void {
      for (const index of indices) loaded.delete(index);
    },
    sampleData(index: number): Float32Array {
      const data = loaded.get(index);
      if (data === undefined) throw new InterfaceError(`demo QSL: sample ${index} was issued but is not loaded`);
      return data;
    },
  };
}
