/**
 * Shared fast-check parameters of the property tests (test/properties-*.test.ts):
 * a fixed seed, so a failure reproduces on every machine, and a bounded
 * number of runs, so each file stays well under 30 s on a busy 2-core machine.
 * fast-check's failure message names the seed and the path of the shrunk
 * counterexample; LOADGEN_FC_SEED replays (or varies) the seed and
 * LOADGEN_FC_RUNS_SCALE multiplies every numRuns (e.g. 10 for a longer local hunt).
 */
import type { Parameters } from 'fast-check';

const DEFAULT_SEED = 20261123;

export const PROPERTY_SEED: number = (() => {
  const raw = process.env['LOADGEN_FC_SEED'];
  return raw !== undefined && /^-?\d+$/.test(raw) ? Number(raw) : DEFAULT_SEED;
})();

const RUNS_SCALE: number = (() => {
  const raw = Number(process.env['LOADGEN_FC_RUNS_SCALE'] ?? '1');
  return Number.isFinite(raw) && raw > 0 ? raw : 1;
})();

/** fc.assert parameters: the fixed seed and `numRuns` (scaled by LOADGEN_FC_RUNS_SCALE). */
export function propertyParams<T>(numRuns: number): Parameters<T> {
  return { seed: PROPERTY_SEED, numRuns: Math.max(1, Math.round(numRuns * RUNS_SCALE)) };
}
