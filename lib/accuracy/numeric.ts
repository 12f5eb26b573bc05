/**
 * Arithmetic done the way MLCommons' Python evaluators do it, so that a
 * printed score equals theirs to the last digit: numpy's pairwise summation
 * (np.mean / np.sum of float64), numpy's rounding (`round(np.float64, n)`:
 * scale, rint, unscale) and Python's own `round(float, n)` (correctly
 * rounded, half to even on the exact binary value).
 */

/** numpy's unrolled block: below it a plain loop, up to it 8 accumulators. */
const PAIRWISE_BLOCK = 128;

/**
 * numpy's pairwise sum of a float64 array (numpy's `pairwise_sum`: a plain
 * loop under 8 values, 8 interleaved accumulators up to 128, halves rounded
 * down to a multiple of 8 above). Equal bit for bit to `np.sum(values)`.
 */
export function numpySum(values: ArrayLike<number>, start = 0, count = values.length - start): number {
  if (count < 8) {
    let sum = 0;
    for (let i = 0; i < count; i++) sum += values[start + i]!;
    return sum;
  }
  if (count <= PAIRWISE_BLOCK) {
    let r0 = values[start]!, r1 = values[start + 1]!, r2 = values[start + 2]!, r3 = values[start + 3]!;
    let r4 = values[start + 4]!, r5 = values[start + 5]!, r6 = values[start + 6]!, r7 = values[start + 7]!;
    const whole = count - (count % 8);
    let i = 8;
    for (; i < whole; i += 8) {
      r0 += values[start + i]!; r1 += values[start + i + 1]!; r2 += values[start + i + 2]!; r3 += values[start + i + 3]!;
      r4 += values[start + i + 4]!; r5 += values[start + i + 5]!; r6 += values[start + i + 6]!; r7 += values[start + i + 7]!;
    }
    let sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < count; i++) sum += values[start + i]!;
    return sum;
  }
  let half = Math.floor(count / 2);
  half -= half % 8;
  return numpySum(values, start, half) + numpySum(values, start + half, count - half);
}

/** `np.mean(values)` of float64 values; NaN for none (numpy warns and returns nan). */
export function numpyMean(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  return numpySum(values) / values.length;
}

/** Round half to even, as C's rint() in the default rounding mode. */
export function rint(x: number): number {
  if (!Number.isFinite(x)) return x;
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff < 0.5) return floor;
  if (diff > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** `round(np.float64(x), digits)`: numpy scales by 10^digits, rints and divides back. */
export function numpyRound(x: number, digits: number): number {
  const scale = 10 ** digits;
  return rint(x * scale) / scale;
}

/**
 * Python's `round(x, digits)` for a float (digits >= 0): the decimal with
 * `digits` places nearest the exact binary value of x, ties to even, read
 * back as the nearest double.
 */
export function pythonRound(x: number, digits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const negative = x < 0;
  const { mantissa, exponent } = decompose(Math.abs(x));
  const scale = 10n ** BigInt(digits);
  let quotient: bigint;
  if (exponent >= 0) {
    quotient = (mantissa << BigInt(exponent)) * scale;
  } else {
    const numerator = mantissa * scale;
    const denominator = 1n << BigInt(-exponent);
    quotient = numerator / denominator;
    const twiceRemainder = 2n * (numerator - quotient * denominator);
    if (twiceRemainder > denominator || (twiceRemainder === denominator && quotient % 2n === 1n)) quotient += 1n;
  }
  const rounded = Number(`${quotient}e-${digits}`);
  return negative ? -rounded : rounded;
}

/** x = mantissa * 2^exponent exactly, for a finite positive double. */
function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const high = view.getUint32(0);
  const low = view.getUint32(4);
  const biased = (high >>> 20) & 0x7ff;
  const fraction = (BigInt(high & 0xfffff) << 32n) | BigInt(low);
  if (biased === 0) return { mantissa: fraction, exponent: -1074 };
  return { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/**
 * A float as Python's `str()`/`repr()` prints it (shortest round trip;
 * '44.0' for an integral value; exponent form as Python writes it), for
 * output that reads like MLCommons' printed dicts.
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e16 || abs < 1e-4) {
    const [digits, exp] = x.toExponential().split('e') as [string, string];
    const expNumber = Number(exp);
    const sign = expNumber < 0 ? '-' : '+';
    return `${digits}e${sign}${String(Math.abs(expNumber)).padStart(2, '0')}`;
  }
  const text = String(x);
  return text.includes('.') ? text : `${text}.0`;
}
