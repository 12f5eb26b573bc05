/**
 * perf_sample_sets.json and query_traces/*.json: the loadable sets and the
 * pre-generated query traces, computed without running anything.
 */
import { computeTrace, traceInputFromCase, type GoldenTrace } from '../cli/trace.js';
import { firstDifference, firstOf } from './compare.js';
import { caseId, casesOf, optional, type Json, type Runner } from './case-runner.js';

interface LoadCallRecord {
  phase: string;
  indices: Uint32Array;
  length: number;
  sample_distribution_end: number;
}

function loadCallsOf(trace: GoldenTrace): LoadCallRecord[] {
  return trace.phases.flatMap((p) =>
    p.load_calls.map((lc) => ({
      phase: p.phase,
      indices: lc.loaded,
      length: lc.loaded.length,
      sample_distribution_end: lc.sample_distribution_end,
    })),
  );
}

/** Every load followed by the unload of the same list (how the reference orders its QSL calls). */
function callOrderOf(loadCount: number): string[] {
  const order: string[] = [];
  for (let i = 0; i < loadCount; i++) order.push(`load:${i}`, `unload:${i}`);
  return order;
}

export async function checkPerfSampleSets(r: Runner, file: string, json: Json): Promise<void> {
  const cases = casesOf(json);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    await r.check(file, caseId(c, i), () => {
      const trace = computeTrace(traceInputFromCase(c));
      const calls = loadCallsOf(trace);
      return firstOf(
        () => optional(c, 'effective_performance_sample_count', trace.effective.performance_sample_count),
        () => optional(c, 'effective_accuracy_sample_count', trace.effective.accuracy_sample_count),
        () => optional(c, 'load_call_count', calls.length),
        () => optional(c, 'load_calls', calls),
        () => optional(c, 'qsl_call_order', callOrderOf(calls.length)),
      );
    });
  }
}

/**
 * Compares golden phases with computed ones. The golden format gives either
 * `samples_per_query` or `query_sizes`; the latter is synthesized on demand.
 */
function phasesDifference(expected: unknown, trace: GoldenTrace, path: string): string | undefined {
  if (!Array.isArray(expected)) return `${path}: expected an array in the vectors`;
  const actual = trace.phases.map((p, pi) => ({
    ...p,
    load_calls: p.load_calls.map((lc, li) => {
      const eq = (expected[pi] as { load_calls?: { queries?: Json }[] } | undefined)?.load_calls?.[li]?.queries;
      if (eq === undefined || eq.query_sizes === undefined) return lc;
      const sizes = new Array<number>(lc.queries.generated_query_count).fill(lc.queries.samples_per_query);
      return { ...lc, queries: { ...lc.queries, query_sizes: sizes } };
    }),
  }));
  return firstDifference(expected, actual, path);
}

/** Compares a whole golden trace object (`effective`, `phases`, `logged_errors`) with a computed one. */
export function traceDifference(expected: Json, trace: GoldenTrace): string | undefined {
  return firstOf(
    () => (expected.effective === undefined ? undefined : firstDifference(expected.effective, trace.effective, 'effective')),
    () => phasesDifference(expected.phases, trace, 'phases'),
    () => firstDifference(expected.logged_errors ?? [], trace.logged_errors ?? [], 'logged_errors'),
  );
}

export async function checkQueryTrace(r: Runner, file: string, json: Json): Promise<void> {
  await r.check(file, caseId(json, 0), () => traceDifference(json, computeTrace(traceInputFromCase(json))));
}
