/**
 * The conformance runner's diff engine: the first difference between a
 * golden value and a computed one, as `path: expected X, got Y`. Integers
 * compare by value across number / bigint / decimal string; golden truncated
 * sequences by length, head, tail and SHA-256.
 */
import { createHash } from 'node:crypto';

import type { NativeLogEntry } from '../native/index.js';

/** A golden truncated integer sequence (sequences longer than 4096, and middle rounds). */
export interface TruncatedSequence {
  truncated: true;
  length: number;
  head: unknown[];
  tail: unknown[];
  sha256: string;
}

/** Comparison options. */
export interface CompareOptions {
  /** Relative tolerance for non-integral doubles (0 = exact). */
  relTol?: number;
}

type Indexable = ArrayLike<unknown>;

export function isTruncated(v: unknown): v is TruncatedSequence {
  const t = v as Partial<TruncatedSequence> | null;
  return typeof t === 'object' && t !== null && t.truncated === true && Array.isArray(t.head) && Array.isArray(t.tail);
}

export function isArrayLike(v: unknown): v is Indexable {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

const INTEGER_TEXT = /^-?\d+$/;

export function show(v: unknown): string {
  let text: string;
  if (typeof v === 'bigint') text = `${v}n`;
  else if (v === undefined) text = 'undefined';
  else if (isArrayLike(v) && !Array.isArray(v)) text = `${v.constructor.name}(${v.length})`;
  else {
    try {
      text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
    } catch {
      text = String(v);
    }
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Integer value of a number / bigint / decimal string, or undefined when it is not an integer. */
export function integerValue(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && INTEGER_TEXT.test(v)) return BigInt(v);
  return undefined;
}

function decimalText(v: unknown): string {
  return typeof v === 'number' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
}

/**
 * SHA-256 of a sequence's decimal numbers joined by commas (the golden
 * convention), hashed in chunks so a long sequence never becomes one string.
 */
export function sequenceSha256(values: Indexable): string {
  const hash = createHash('sha256');
  const chunk = 8192;
  for (let start = 0; start < values.length; start += chunk) {
    const end = Math.min(values.length, start + chunk);
    const parts: string[] = new Array(end - start);
    for (let i = start; i < end; i++) parts[i - start] = decimalText(values[i]);
    hash.update((start === 0 ? '' : ',') + parts.join(','));
  }
  return hash.digest('hex');
}

function sameScalar(expected: unknown, actual: unknown, options: CompareOptions): boolean {
  if (typeof expected === 'number') {
    if (typeof actual === 'number') {
      if (expected === actual || (Number.isNaN(expected) && Number.isNaN(actual))) return true;
      const tol = options.relTol ?? 0;
      return tol > 0 && !Number.isInteger(expected) && Math.abs(expected - actual) <= tol * Math.max(Math.abs(expected), Math.abs(actual));
    }
    const e = integerValue(expected);
    return e !== undefined && e === integerValue(actual);
  }
  if (typeof expected === 'string' && INTEGER_TEXT.test(expected) && (typeof actual === 'number' || typeof actual === 'bigint')) {
    return integerValue(actual) === BigInt(expected);
  }
  if (typeof expected === 'bigint') return integerValue(actual) === expected;
  if (expected === null) return actual === null || actual === undefined;
  return expected === actual;
}

function join2(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/**
 * The first difference between an expected golden value and an actual one,
 * as `path: expected X, got Y`, or undefined when they agree. Integers compare
 * by value across number / bigint / decimal string; a golden truncated
 * sequence is compared by length, head, tail and SHA-256; objects are compared
 * on the expected keys only (in the expected order).
 */
export function firstDifference(expected: unknown, actual: unknown, path = '', options: CompareOptions = {}): string | undefined {
  const where = path === '' ? '(value)' : path;
  if (isTruncated(expected)) {
    if (!isArrayLike(actual)) return `${where}: expected a sequence, got ${show(actual)}`;
    if (actual.length !== expected.length) return `${where}.length: expected ${expected.length}, got ${actual.length}`;
    for (let i = 0; i < expected.head.length; i++) {
      if (!sameScalar(expected.head[i], actual[i], options)) return `${where}[${i}]: expected ${show(expected.head[i])}, got ${show(actual[i])}`;
    }
    const base = expected.length - expected.tail.length;
    for (let i = 0; i < expected.tail.length; i++) {
      if (!sameScalar(expected.tail[i], actual[base + i], options))
        return `${where}[${base + i}]: expected ${show(expected.tail[i])}, got ${show(actual[base + i])}`;
    }
    const sha = sequenceSha256(actual);
    if (sha !== expected.sha256) return `${where}.sha256: expected ${expected.sha256}, got ${sha}`;
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!isArrayLike(actual)) return `${where}: expected an array, got ${show(actual)}`;
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) {
      const e: unknown = expected[i];
      const a: unknown = actual[i];
      // Fast path for the long integer arrays of traces.
      if (typeof e === 'number' && typeof a === 'number' && e === a) continue;
      const d = firstDifference(e, a, join2(path, i), options);
      if (d !== undefined) return d;
    }
    if (actual.length !== expected.length) return `${where}.length: expected ${expected.length}, got ${actual.length}`;
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || isArrayLike(actual)) return `${where}: expected an object, got ${show(actual)}`;
    const a = actual as Record<string, unknown>;
    for (const [key, e] of Object.entries(expected)) {
      if (!(key in a)) return `${join2(path, key)}: missing (expected ${show(e)})`;
      const d = firstDifference(e, a[key], join2(path, key), options);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return sameScalar(expected, actual, options) ? undefined : `${where}: expected ${show(expected)}, got ${show(actual)}`;
}

/** First differing line of two texts. */
export function textDifference(expected: string, actual: string, what: string): string | undefined {
  if (expected === actual) return undefined;
  const e = expected.split('\n');
  const a = actual.split('\n');
  for (let i = 0; i < Math.max(e.length, a.length); i++) {
    if (e[i] !== a[i]) return `${what} line ${i + 1}: expected ${show(e[i])}, got ${show(a[i])}`;
  }
  return `${what}: texts differ`;
}

export function logEntries(entries: readonly NativeLogEntry[]): { key: string; value_text: string }[] {
  return entries.map((e) => ({ key: e.key, value_text: e.valueText }));
}

/** Compares a golden `{key: value_text}` object with logged entries, key order included. */
export function logObjectDifference(expected: Record<string, unknown>, actual: readonly NativeLogEntry[], path: string): string | undefined {
  const keys = actual.map((e) => e.key);
  const d = firstDifference(Object.keys(expected), keys, `${path} keys`);
  if (d !== undefined) return d;
  const values: Record<string, string> = {};
  for (const e of actual) values[e.key] = e.valueText;
  return firstDifference(expected, values, path);
}

/** The first defined difference of several lazily computed checks. */
export function firstOf(...checks: (() => string | undefined)[]): string | undefined {
  for (const check of checks) {
    const d = check();
    if (d !== undefined) return d;
  }
  return undefined;
}
