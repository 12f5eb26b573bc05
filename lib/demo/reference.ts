/**
 * A pure TypeScript forward pass of the demo model (model.ts), used to check
 * onnxruntime's outputs. Sums run in float64 and each layer's output is
 * stored as float32, as onnxruntime stores its tensors, so the two agree to
 * within float32 rounding of the summation order.
 */
import {
  CONV1_CHANNELS,
  CONV2_CHANNELS,
  demoWeights,
  INPUT_CHANNELS,
  INPUT_SIZE,
  KERNEL,
  NUM_CLASSES,
  SAMPLE_ELEMENTS,
  type DemoWeights,
} from './model.js';

/**
 * Conv2d, stride 1, zero padding KERNEL/2 (same size), then ReLU. NCHW, one
 * sample. Loops run kernel tap by kernel tap over whole rows (an axpy on
 * contiguous memory) into a float64 accumulator: same sums, several times
 * faster in V8 than a per-pixel loop with bounds checks.
 */
function convRelu(
  input: Float32Array,
  channelsIn: number,
  size: number,
  weight: Float32Array,
  bias: Float32Array,
  channelsOut: number,
): Float32Array {
  const out = new Float32Array(channelsOut * size * size);
  const acc = new Float64Array(size * size);
  const pad = (KERNEL - 1) / 2;
  for (let m = 0; m < channelsOut; m++) {
    acc.fill(bias[m]!);
    for (let c = 0; c < channelsIn; c++) {
      const iBase = c * size * size;
      for (let ky = 0; ky < KERNEL; ky++) {
        const dy = ky - pad;
        const yFrom = Math.max(0, -dy);
        const yTo = Math.min(size, size - dy);
        for (let kx = 0; kx < KERNEL; kx++) {
          const dx = kx - pad;
          const xFrom = Math.max(0, -dx);
          const xTo = Math.min(size, size - dx);
          const w = weight[((m * channelsIn + c) * KERNEL + ky) * KERNEL + kx]!;
          for (let y = yFrom; y < yTo; y++) {
            const row = y * size;
            const inRow = iBase + (y + dy) * size + dx;
            for (let x = xFrom; x < xTo; x++) acc[row + x]! += w * input[inRow + x]!;
          }
        }
      }
    }
    const oBase = m * size * size;
    for (let i = 0; i < size * size; i++) {
      const v = acc[i]!;
      out[oBase + i] = v > 0 ? v : 0;
    }
  }
  return out;
}

/** MaxPool 2×2, stride 2. */
function maxPool2(input: Float32Array, channels: number, size: number): Float32Array {
  const half = size / 2;
  const out = new Float32Array(channels * half * half);
  for (let c = 0; c < channels; c++) {
    for (let y = 0; y < half; y++) {
      for (let x = 0; x < half; x++) {
        const i = (c * size + 2 * y) * size + 2 * x;
        out[(c * half + y) * half + x] = Math.max(input[i]!, input[i + 1]!, input[i + size]!, input[i + size + 1]!);
      }
    }
  }
  return out;
}

/**
 * The logits of one sample (SAMPLE_ELEMENTS floats, NCHW) as onnxruntime
 * computes them for models/demo-cnn.onnx.
 */
export function referenceLogits(input: Float32Array, weights: DemoWeights = demoWeights()): Float32Array {
  if (input.length !== SAMPLE_ELEMENTS) throw new RangeError(`expected ${SAMPLE_ELEMENTS} input floats, got ${input.length}`);
  const a1 = convRelu(input, INPUT_CHANNELS, INPUT_SIZE, weights.conv1W, weights.conv1B, CONV1_CHANNELS);
  const half = INPUT_SIZE / 2;
  const p1 = maxPool2(a1, CONV1_CHANNELS, INPUT_SIZE);
  const a2 = convRelu(p1, CONV1_CHANNELS, half, weights.conv2W, weights.conv2B, CONV2_CHANNELS);
  const pooled = new Float32Array(CONV2_CHANNELS);
  const area = half * half;
  for (let c = 0; c < CONV2_CHANNELS; c++) {
    let sum = 0;
    for (let i = 0; i < area; i++) sum += a2[c * area + i]!;
    pooled[c] = sum / area;
  }
  const logits = new Float32Array(NUM_CLASSES);
  for (let k = 0; k < NUM_CLASSES; k++) {
    let sum = weights.fcB[k]!;
    for (let c = 0; c < CONV2_CHANNELS; c++) sum += weights.fcW[k * CONV2_CHANNELS + c]! * pooled[c]!;
    logits[k] = sum;
  }
  return logits;
}

/**
 * True when `actual` matches `expected` element-wise within
 * `tolerance · max(1, |expected|)`: float32 results of two summation orders.
 */
export function logitsMatch(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = DEFAULT_TOLERANCE): boolean {
  if (actual.length !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i]!;
    const diff = Math.abs(actual[i]! - e);
    if (!(diff <= tolerance * Math.max(1, Math.abs(e)))) return false;
  }
  return true;
}

/** Largest element-wise absolute difference (Infinity when the lengths differ or a value is NaN). */
export function maxAbsDiff(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) return Infinity;
  let max = 0;
  for (let i = 0; i < expected.length; i++) {
    const diff = Math.abs(actual[i]! - expected[i]!);
    if (!(diff <= max)) max = Number.isNaN(diff) ? Infinity : diff;
  }
  return max;
}

/** Relative tolerance of the accuracy check (float32 has ~6e-8 relative precision; sums of ~100 terms). */
export const DEFAULT_TOLERANCE = 1e-4;
