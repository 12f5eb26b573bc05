/**
 * The conformance runner: checks this implementation against a directory of
 * reference vectors laid out like the golden set (`rng_primitives.json`,
 * `perf_sample_sets.json`, `query_traces/*.json`, `real_runs.json`,
 * `accuracy_log_sampling.json`, `early_stopping.json`, `results_math.json`,
 * `settings_derivation.json`), following "How to drive an implementation
 * against each file" of the golden README.
 *
 * Nothing here knows particular cases: files are recognised by `file_kind`,
 * cases by their `id` (or a synthesized id for rows without one), and every
 * comparison is driven by what the expected value holds.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { Runner, type ConformanceSink, type ConformanceTotals, type Json } from './case-runner.js';
import { checkRealRuns, checkAccuracyLogSampling } from './check-real-runs.js';
import { checkRngPrimitives } from './check-rng.js';
import { checkSettingsDerivation } from './check-settings.js';
import { checkEarlyStopping, checkResultsMath } from './check-statistics.js';
import { checkPerfSampleSets, checkQueryTrace } from './check-traces.js';
import { show } from './compare.js';

type Checker = (r: Runner, file: string, json: Json) => Promise<void>;

/** Checkers by `file_kind`, in the order files of each kind are run. */
const CHECKERS: [kind: string, checker: Checker][] = [
  ['rng_primitives', checkRngPrimitives],
  ['perf_sample_sets', checkPerfSampleSets],
  ['query_trace', checkQueryTrace],
  ['real_runs', checkRealRuns],
  ['accuracy_log_sampling', checkAccuracyLogSampling],
  ['early_stopping', checkEarlyStopping],
  ['results_math', checkResultsMath],
  ['settings_derivation', checkSettingsDerivation],
];

/** Sub-folders of the vector layout that hold vector files (`logs/` is format reference only). */
const VECTOR_SUBDIRS = ['query_traces'];

/** The vector files of `dir` (relative paths): its `*.json` and those of `query_traces/`. */
export function findVectorFiles(dir: string): string[] {
  const files: string[] = [];
  const jsonIn = (sub: string): string[] => {
    const full = sub === '' ? dir : join(dir, sub);
    let names: string[];
    try {
      if (!statSync(full).isDirectory()) return [];
      names = readdirSync(full);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json') && statSync(join(full, n)).isFile())
      .sort()
      .map((n) => (sub === '' ? n : `${sub}/${n}`));
  };
  files.push(...jsonIn(''));
  for (const sub of VECTOR_SUBDIRS) files.push(...jsonIn(sub));
  return files;
}

/**
 * Checks the implementation against every vector file of `dir`. Writes one
 * line per case (`PASS <file>#<id>` or `FAIL <file>#<id>: <first difference>`)
 * and a last line `N passed, N failed`. A file that cannot be read or has an
 * unknown `file_kind` counts as one failed case.
 */
export async function runConformance(dir: string, sink: ConformanceSink): Promise<ConformanceTotals> {
  const r = new Runner(sink);
  const loaded: { file: string; kind: string; json: Json }[] = [];
  for (const file of findVectorFiles(dir)) {
    let json: Json;
    try {
      json = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Json;
    } catch (error) {
      await r.check(file, 'file', () => `cannot read: ${(error as Error).message}`);
      continue;
    }
    loaded.push({ file, kind: String(json.file_kind), json });
  }
  const order = (kind: string): number => {
    const i = CHECKERS.findIndex(([k]) => k === kind);
    return i < 0 ? CHECKERS.length : i;
  };
  loaded.sort((a, b) => order(a.kind) - order(b.kind) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  for (const { file, kind, json } of loaded) {
    const checker = CHECKERS.find(([k]) => k === kind)?.[1];
    if (checker === undefined) {
      await r.check(file, 'file', () => `unknown file_kind ${show(json.file_kind)}`);
      continue;
    }
    try {
      await checker(r, file, json);
    } catch (error) {
      // A malformed file (no cases, bad table) fails as a whole; the others still run.
      await r.check(file, 'file', () => `malformed vector file: ${(error as Error).message}`);
    }
  }
  sink.write(`${r.passed} passed, ${r.failed} failed`);
  return { passed: r.passed, failed: r.failed };
}

