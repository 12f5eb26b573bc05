/**
 * The energy arithmetic of a run's power readings, by the power rules
 * (seeds/002 §4): energy = Σ reading × the time since the previous reading,
 * over the readings that cover the run's power window (power_begin to
 * power_end of the detail log). Each reading stands for the interval that
 * ends at it — what a RAPL counter difference or a meter's averaged draw is.
 */

/** One reading of a power source. */
export interface PowerReading {
  /** Wall clock, ms since the Unix epoch (the clock power_begin/power_end are written in). */
  atMs: number;
  /** Watts over the interval ending here; null: a time mark only (a RAPL source's first counter reading). */
  watts: number | null;
  /** Why this reading failed (no answer, non-numeric output, …); such a reading is never used. */
  error?: string;
}

/** The rules' minimum readings of a run (seeds/002 §3.5: max(a run, 60 power samples)). */
export const RULES_MIN_POWER_SAMPLES = 60;
/** The rules' slowest reading rate: one a second (seeds/002 §3.4). */
export const RULES_MAX_READING_GAP_MS = 1000;
/** Tolerance on that gap for timer jitter of a loaded machine (a 1 Hz source is read every 1000 ms ± a few). */
export const READING_GAP_JITTER_MS = 100;

/** What {@link energyOverWindow} computes. */
export interface WindowEnergy {
  energyJoules: number;
  /** Time of the window covered by readings, ms (the window minus its uncovered start and end). */
  coveredMs: number;
  /** Readings that cover some of the window. */
  samples: number;
  /** Failed readings taken inside the window. */
  failedReadings: number;
  /** The first failure's message, if any. */
  firstFailure?: string;
  /** Longest time between two consecutive good readings that cover the window, ms. */
  maxGapMs: number;
  /** Window time before the first good reading / after the last one, ms (0 when covered). */
  uncoveredStartMs: number;
  uncoveredEndMs: number;
  /**
   * A window of no length (power_begin = power_end: a run shorter than the
   * timestamps' millisecond): the watts of the reading whose interval holds
   * that instant, null when none does. Undefined for a window with a length.
   */
  instantWatts?: number | null;
}

/**
 * The energy of the window [beginMs, endMs] by the rectangle rule: every
 * good reading i (after the first) contributes watts_i × the part of
 * (t_{i−1}, t_i] inside the window. Failed readings are skipped (the next
 * good reading covers their time; the gap shows in maxGapMs).
 */
export function energyOverWindow(readings: readonly PowerReading[], beginMs: number, endMs: number): WindowEnergy {
  const good = readings.filter((r) => r.error === undefined).sort((a, b) => a.atMs - b.atMs);
  // Failures count from power_begin until a good reading covers power_end (the one meant to cover the tail too).
  const tailCoveredAt = good.find((r) => r.atMs >= endMs)?.atMs ?? Infinity;
  const failed = readings.filter((r) => r.error !== undefined && r.atMs >= beginMs && r.atMs <= tailCoveredAt);
  let energyJoules = 0;
  let coveredMs = 0;
  let samples = 0;
  let maxGapMs = 0;
  for (let i = 1; i < good.length; ++i) {
    const previous = good[i - 1]!;
    const current = good[i]!;
    const lo = Math.max(previous.atMs, beginMs);
    const hi = Math.min(current.atMs, endMs);
    if (hi <= lo || current.watts === null) continue;
    energyJoules += (current.watts * (hi - lo)) / 1000;
    coveredMs += hi - lo;
    samples += 1;
    maxGapMs = Math.max(maxGapMs, current.atMs - previous.atMs);
  }
  const first = good[0];
  const last = good[good.length - 1];
  const span = Math.max(0, endMs - beginMs);
  // Reading i stands for (t_{i-1}, t_i]: the one whose interval holds the instant.
  const holding = span === 0 ? good.find((r, i) => i > 0 && good[i - 1]!.atMs < beginMs && beginMs <= r.atMs && r.watts !== null) : undefined;
  return {
    ...(span === 0 ? { instantWatts: holding?.watts ?? null } : {}),
    energyJoules,
    coveredMs,
    samples,
    failedReadings: failed.length,
    ...(failed[0]?.error !== undefined ? { firstFailure: failed[0].error } : {}),
    maxGapMs,
    uncoveredStartMs: first === undefined ? span : Math.min(span, Math.max(0, first.atMs - beginMs)),
    uncoveredEndMs: last === undefined ? span : Math.min(span, Math.max(0, endMs - last.atMs)),
  };
}

/**
 * Why the readings do not meet the power rules (empty when they do): too
 * few readings, a gap longer than a second, failed readings, or a window
 * the readings do not cover. A flagged figure is reported, never averaged silently.
 */
export function powerProblems(energy: WindowEnergy, minSamples = RULES_MIN_POWER_SAMPLES): string[] {
  const problems: string[] = [];
  if (energy.samples < minSamples) {
    problems.push(`only ${energy.samples} power readings cover the run; the power rules require at least ${minSamples} (a run of ${minSamples} s or more at 1 reading/s)`);
  }
  if (energy.maxGapMs > RULES_MAX_READING_GAP_MS + READING_GAP_JITTER_MS) {
    problems.push(`${Math.round(energy.maxGapMs)} ms between two readings; the power rules require a reading at least once a second`);
  }
  if (energy.failedReadings > 0) {
    problems.push(`${energy.failedReadings} reading${energy.failedReadings === 1 ? '' : 's'} failed during the run (first: ${energy.firstFailure ?? '?'}); their time is covered by the next good reading`);
  }
  if (energy.uncoveredStartMs > 0) problems.push(`the first ${Math.ceil(energy.uncoveredStartMs)} ms of the run have no reading`);
  if (energy.uncoveredEndMs > 0) problems.push(`the last ${Math.ceil(energy.uncoveredEndMs)} ms of the run have no reading (the source stopped answering)`);
  return problems;
}

/** power_begin/power_end of the detail log, "MM-DD-YYYY HH:MM:SS.mmm" in UTC, as ms since the epoch. */
export function parsePowerTimestamp(text: string): number | undefined {
  const m = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})$/.exec(text);
  if (m === null) return undefined;
  const [, mo, d, y, h, mi, s, ms] = m.map(Number) as [number, number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s, ms);
}
