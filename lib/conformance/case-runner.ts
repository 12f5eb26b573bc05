/**
 * The conformance runner's plumbing: one case at a time, each a PASS or a
 * FAIL line with its first difference; a case that throws fails alone.
 */
import type { NativeConformance } from '../native/index.js';
import { nativeConformance } from '../cli/trace.js';
import { firstDifference, integerValue, isTruncated, show, type CompareOptions } from './compare.js';

/** Where the runner writes its lines (`PASS …`, `FAIL …`, the totals). */
export interface ConformanceSink {
  write(line: string): void;
}

/** Case counts of one runner invocation. */
export interface ConformanceTotals {
  passed: number;
  failed: number;
}

export type Json = Record<string, unknown>;
type CaseCheck = () => string | undefined | Promise<string | undefined>;

export class Runner {
  passed = 0;
  failed = 0;
  constructor(private readonly sink: ConformanceSink) {}

  /** Runs one case; a thrown error is that case's failure, never the runner's. */
  async check(file: string, id: string, check: CaseCheck): Promise<void> {
    let difference: string | undefined;
    try {
      difference = await check();
    } catch (error) {
      difference = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (difference === undefined) {
      this.passed++;
      this.sink.write(`PASS ${file}#${id}`);
    } else {
      this.failed++;
      this.sink.write(`FAIL ${file}#${id}: ${difference.replace(/\n/g, '\\n')}`);
    }
  }
}

export function conformance(): NativeConformance {
  return nativeConformance();
}

export function casesOf(json: Json): Json[] {
  if (!Array.isArray(json.cases)) throw new Error("no 'cases' array");
  return json.cases as Json[];
}

export function caseId(c: Json, index: number): string {
  return typeof c.id === 'string' && c.id !== '' ? c.id : `cases[${index}]`;
}

export function seedOf(v: unknown): bigint {
  const big = integerValue(v);
  if (big === undefined) throw new Error(`bad seed ${show(v)}`);
  return big;
}

export function lengthOf(v: unknown): number {
  if (isTruncated(v)) return v.length;
  if (Array.isArray(v)) return v.length;
  throw new Error(`expected a sequence, got ${show(v)}`);
}

/** Compares `c[key]` with `actual` when the case holds that key. */
export function optional(c: Json, key: string, actual: unknown, options: CompareOptions = {}): string | undefined {
  return c[key] === undefined ? undefined : firstDifference(c[key], actual, key, options);
}
