/**
 * What the rules are checked against: the settings of one run, requested and
 * effective, under the reference's names (the detail log's `requested_*` and
 * `effective_*` keys without the prefix), whether they come from config
 * files before a run or from a finished run's detail log.
 */
import type { Scenario } from '../types/settings.js';

/** A setting's value: numbers, exact 64-bit seeds as bigint, flags and names. */
export type FactValue = number | bigint | boolean | string;

/** The settings of one run (or planned run). */
export interface RunFacts {
  readonly scenario: Scenario;
  /** Effective test mode (PerformanceOnly, AccuracyOnly, SubmissionRun, FindPeakPerformance). */
  readonly mode: string;
  /** The requested TestSettings under the reference's snake_case names. */
  readonly requested: Readonly<Record<string, FactValue>>;
  /** The effective settings (spec/10 §3) under the golden files' names (mode, min_duration_ms, ...). */
  readonly effective: Readonly<Record<string, FactValue>>;
  /** The QSL's (data set's) total and performance sample counts. */
  readonly qslTotal: number;
  readonly qslPerformance: number;
  /** Where a requested setting came from (snake name -> e.g. `user.conf:3 resnet50.Server.target_qps = 100`). */
  readonly sources?: ReadonlyMap<string, string>;
  /** Finished runs: the detail log's result entries (result_validity, early_stopping_met, num_errors, ...). */
  readonly results?: Readonly<Record<string, unknown>>;
}

/** A number from a fact record (seeds and flags converted); NaN when absent. */
export function factNumber(record: Readonly<Record<string, FactValue>>, key: string): number {
  const v = record[key];
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v)) return Number(v);
  return Number.NaN;
}

/** An exact 64-bit value (seeds) from a fact record; undefined when absent. */
export function factSeed(record: Readonly<Record<string, FactValue>>, key: string): bigint | undefined {
  const v = record[key];
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

/** A flag from a fact record (false when absent). */
export function factFlag(record: Readonly<Record<string, FactValue>>, key: string): boolean {
  const v = record[key];
  return v === true || v === 1 || v === 'true' || (typeof v === 'bigint' && v !== 0n);
}
