/**
 * early_stopping.json and results_math.json: the early-stopping estimates
 * and the summary statistics, detail-log entries and summary text.
 */
import type { NativeResultsInput } from '../native/index.js';
import { traceInputFromCase } from '../cli/trace.js';
import { firstDifference, firstOf, logEntries, textDifference } from './compare.js';
import { caseId, casesOf, conformance, optional, type Json, type Runner } from './case-runner.js';

/** Rows of a `{columns, rows}` table as objects keyed by column name. */
function tableRows(table: unknown): Json[] {
  const t = table as { columns?: unknown; rows?: unknown };
  if (!Array.isArray(t?.columns) || !Array.isArray(t.rows)) throw new Error('expected {columns, rows}');
  const columns = t.columns as string[];
  return (t.rows as unknown[][]).map((row) => Object.fromEntries(columns.map((name, i) => [name, row[i]])));
}

const ODDS_TOLERANCE = 1e-9;

export async function checkEarlyStopping(r: Runner, file: string, json: Json): Promise<void> {
  if (json.server_min_passing !== undefined) {
    for (const row of tableRows(json.server_min_passing)) {
      const p = row.percentile as number;
      const t = row.overlatency_count_t as number;
      await r.check(file, `server_min_passing[p=${p},t=${t}]`, () => {
        const h = conformance().earlyStoppingMinPassing(t, p);
        return firstOf(
          () => optional(row, 'h', h),
          () => optional(row, 'min_total_queries', h + t),
        );
      });
    }
  }
  const estimates = (json.latency_rank_estimates ?? []) as Json[];
  for (const row of estimates) {
    const scenario = row.scenario as 'SingleStream' | 'MultiStream';
    const p = row.p as number;
    const n = row.n as number;
    await r.check(file, `latency_rank_estimates[${scenario},p=${p},n=${n}]`, () => {
      const e = conformance().earlyStoppingEstimate(scenario, p, n);
      const t = e.rankIndex === null ? null : n - e.rankIndex;
      const actual: Json = {
        early_stopping_met: e.earlyStoppingMet,
        min_queries_needed: e.minQueriesNeeded,
        t,
        discarded_highest: t === null ? null : t - 1,
        rank_index: e.rankIndex,
        rank_index_p99_for_multistream_inference: e.rankIndexP99,
        recommendation: e.recommendation,
      };
      const expected = Object.fromEntries(Object.entries(row).filter(([k]) => k in actual));
      return firstDifference(expected, actual);
    });
  }
  if (json.odds !== undefined) {
    for (const row of tableRows(json.odds)) {
      const p = row.percentile as number;
      const t = row.t as number;
      const h = row.h as number;
      await r.check(file, `odds[p=${p},t=${t},h=${h}]`, () =>
        optional(row, 'odds', conformance().earlyStoppingOdds(h, t, p), { relTol: ODDS_TOLERANCE }),
      );
    }
  }
  if (json.lbeta !== undefined) {
    for (const row of tableRows(json.lbeta)) {
      const x = row.x as number;
      const y = row.y as number;
      await r.check(file, `lbeta[x=${x},y=${y}]`, () =>
        optional(row, 'lbeta', conformance().earlyStoppingLbeta(x, y), { relTol: ODDS_TOLERANCE }),
      );
    }
  }
}

const RESULTS_INPUT_NAMES: Record<string, keyof NativeResultsInput> = {
  sample_latencies_ns: 'sampleLatenciesNs',
  query_latencies_ns: 'queryLatenciesNs',
  queries_issued: 'queriesIssued',
  max_latency_s: 'maxLatencyS',
  final_query_scheduled_time_s: 'finalQueryScheduledTimeS',
  final_query_issued_time_s: 'finalQueryIssuedTimeS',
  final_query_all_samples_done_time_s: 'finalQueryAllSamplesDoneTimeS',
  tokens_per_sample: 'tokensPerSample',
  first_token_latencies_ns: 'firstTokenLatenciesNs',
  time_per_output_token_ns: 'timePerOutputTokenNs',
};

function resultsInput(input: Json): NativeResultsInput {
  const out: Record<string, unknown> = {};
  for (const [golden, native] of Object.entries(RESULTS_INPUT_NAMES)) {
    const v = input[golden];
    if (v === undefined || v === null) continue;
    out[native] = Array.isArray(v) ? Float64Array.from(v as number[]) : v;
  }
  return out as unknown as NativeResultsInput;
}

export async function checkResultsMath(r: Runner, file: string, json: Json): Promise<void> {
  const cases = casesOf(json);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    await r.check(file, caseId(c, i), () => {
      const { settings, qslTotal, qslPerformance } = traceInputFromCase(c);
      const summary = typeof c.summary_text === 'string' ? c.summary_text : '';
      // The SUT name is not a separate field: the summary's header holds it.
      const sutName = /^SUT name : (.*)$/m.exec(summary)?.[1] ?? 'GoldenSUT';
      const res = conformance().summarize(settings, qslTotal, qslPerformance, resultsInput(c.input as Json), sutName);
      return firstOf(
        () => {
          if (c.effective === undefined) return undefined;
          const derived = conformance().deriveEffective(settings, qslTotal, qslPerformance, true);
          return firstDifference(c.effective, derived.effective, 'effective');
        },
        () => optional(c, 'outputs', res.outputs),
        () => (typeof c.summary_text === 'string' ? textDifference(c.summary_text, res.summaryText, 'summary_text') : undefined),
        () => optional(c, 'detail_log', logEntries(res.detail)),
      );
    });
  }
}
