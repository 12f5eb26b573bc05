/**
 * Numbers written as text (`--set` values and config-file values): the one
 * grammar both read an integer setting with, and the length bound both
 * apply before parsing anything.
 *
 * An integer setting takes a decimal integer: digits without leading zeros,
 * optionally followed by a fraction of zeros only (`1024`, `1024.0`, since
 * the reference's `strtoull` reads those as written). A non-zero fraction
 * (`1.5`, `0.000…01`) or an exponent (`1e3`) is refused: the reference's
 * `strtoull` stops at the `.` or `e` and would read `1e3` as 1. Config files
 * also take hexadecimal (`0x20`), which the reference reads exactly.
 */

/** Longest numeric text read (a double's shortest form needs at most 24 characters). */
export const MAX_NUMERAL_LENGTH = 64;

const INTEGER_TEXT_RE = /^([+-]?)(0|[1-9]\d*)(?:\.0*)?$/;

/** What {@link readIntegerText} found. */
export type IntegerText =
  | { readonly ok: true; readonly value: bigint; readonly negative: boolean }
  | { readonly ok: false; readonly problem: string };

/**
 * Reads the text of an integer setting (already trimmed). `value` is exact;
 * `negative` is true for any leading `-` (so `-0` too). On failure, `problem`
 * says why in words that fit after "expected <allowed>; ".
 */
export function readIntegerText(text: string): IntegerText {
  if (text.length > MAX_NUMERAL_LENGTH) return { ok: false, problem: tooLong(text) };
  const m = INTEGER_TEXT_RE.exec(text);
  if (m !== null) return { ok: true, value: BigInt(`${m[1] === '-' ? '-' : ''}${m[2]}`), negative: m[1] === '-' };
  if (/^[+-]?0\d/.test(text)) {
    return { ok: false, problem: 'write it without leading zeros (config files read a leading 0 as octal)' };
  }
  return { ok: false, problem: 'it is not an integer in decimal digits (no fraction other than .0, no exponent)' };
}

/** The problem of a numeral longer than {@link MAX_NUMERAL_LENGTH}, or undefined. */
export function numeralLengthProblem(text: string): string | undefined {
  return text.length > MAX_NUMERAL_LENGTH ? tooLong(text) : undefined;
}

function tooLong(text: string): string {
  return `the text is ${text.length} characters long; a number takes at most ${MAX_NUMERAL_LENGTH}`;
}
