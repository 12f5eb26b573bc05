/**
 * How settings problems are told: values shown as the user wrote them, and
 * "did you mean" suggestions (edit distance, case and `_` ignored).
 */
import { SettingsError } from '../errors.js';

/**
 * Most characters of one piece of user input a message quotes: a 1 MB key
 * must not become a 2 MB error (nor cost seconds to build).
 */
export const ECHO_LIMIT = 80;

/** File paths in messages: shown longer than other input, still bounded. */
export const PATH_ECHO_LIMIT = 240;

/** Control characters (C0, DEL, C1) and the line/paragraph separators U+2028/U+2029. */
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const HAS_CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** `\n`, `\t`, `\r` by name, every other control character as `\uXXXX`. */
function escapeControl(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (c === '\t') return '\\t';
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** True when `text` holds a control character (C0 incl. \n \r \t, DEL, C1, U+2028/U+2029). */
export function hasControlCharacter(text: string): boolean {
  return HAS_CONTROL_RE.test(text);
}

/** The first `limit` characters of `text` (a surrogate pair is never split) and how many were left out. */
function head(text: string, limit: number): { shown: string; more: number } {
  if (text.length <= limit) return { shown: text, more: 0 };
  const cut = /[\ud800-\udbff]/.test(text[limit - 1]!) ? limit - 1 : limit;
  return { shown: text.slice(0, cut), more: text.length - cut };
}

function moreNote(more: number): string {
  return more > 0 ? `\u2026 (${more} more characters)` : '';
}

/**
 * User text as a message quotes it (unquoted): control characters escaped,
 * at most `limit` characters, then `… (N more characters)`. Costs O(limit)
 * whatever the input's length. Every message that echoes input uses it (or
 * {@link show}, which quotes).
 */
export function echo(text: string, limit = ECHO_LIMIT): string {
  const { shown, more } = head(text, limit);
  return shown.replace(CONTROL_RE, escapeControl) + moreNote(more);
}

/** Renders a user value for a message: strings quoted (capped, see {@link echo}), bigints with `n`. */
export function show(v: unknown): string {
  if (typeof v === 'string') {
    const { shown, more } = head(v, ECHO_LIMIT);
    // JSON escapes C0, quotes and backslashes; DEL, C1 and U+2028/9 are escaped on top.
    return JSON.stringify(shown).replace(CONTROL_RE, escapeControl) + moreNote(more);
  }
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
  const list = [...candidates];
  // The edit distance is at least the length difference, and the limit below
  // is a quarter of the input: an input far longer than every candidate
  // matches none, so it costs nothing (a 1 MB key must not take seconds).
  const longest = Math.max(0, ...list.map((c) => c.length));
  if (input.length > 2 * longest + 8) return undefined;
  const target = squash(input);
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
