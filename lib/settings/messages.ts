/**
 * How settings problems are told: values shown as the user wrote them, and
 * "did you mean" suggestions (edit distance, case and `_` ignored).
 */
import { SettingsError } from '../errors.js';

/** Renders a user value for a message: strings quoted, bigints with `n`. */
export function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (v === undefined || v === null || typeof v === 'boolean' || typeof v === 'symbol') return String(v);
  if (typeof v === 'function') return '[function]';
  try {
    const s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
    if (s !== undefined) return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    // Cyclic or otherwise unserialisable: fall through.
  }
  return Object.prototype.toString.call(v);
}

/** Shortest decimal form of a computed hint value (99.9 / 100 → 0.999, not 0.9990000000000001). */
export function num(x: number): string {
  return String(Number(x.toPrecision(12)));
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Case/underscore-insensitive form: `server_target_qps` and `serverTargetQPS` both → `servertargetqps`. */
function squash(s: string): string {
  return s.replace(/[_.\-\s]/g, '').toLowerCase();
}

/** Closest candidate to `input`, or undefined when nothing is plausibly meant. */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const target = squash(input);
  const list = [...candidates];
  // A unique prefix ('perf' -> 'PerformanceOnly') is a clearer intent than edit distance.
  const prefixed = target.length >= 3 ? list.filter((c) => squash(c).startsWith(target)) : [];
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of list) {
    const d = editDistance(target, squash(c));
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  // Short inputs are close to too many names ('min' is 2 edits from 'mode'); allow fewer edits.
  const limit = target.length <= 4 ? 1 : Math.max(2, Math.floor(target.length / 4));
  return bestDistance <= limit ? best : undefined;
}

export type Label = 'test setting' | 'log setting';

export function invalid(label: Label, key: string, value: unknown, problem: string): SettingsError {
  return new SettingsError(key, value, `Invalid ${label} ${key} = ${show(value)}: ${problem}`);
}

/**
 * The candidate closest to `input` (edit distance, case and `_` ignored), or
 * undefined when nothing is plausibly meant. Used for did-you-mean hints.
 * @internal
 */
export function suggestName(input: string, candidates: Iterable<string>): string | undefined {
  return closest(input, candidates);
}
