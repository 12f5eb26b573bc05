/**
 * real_runs.json and accuracy_log_sampling.json: golden cases run through
 * the public startTest with the reference's null SUT, and the accuracy-log
 * sampling predicted and observed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { querySamplesComplete } from '../api/completion.js';
import { startTest } from '../api/start-test.js';
import type { QuerySample, QuerySampleLibrary, SystemUnderTest } from '../types/api.js';
import { computeTrace, traceInputFromCase, type GoldenTrace } from '../cli/trace.js';
import { loadNative, type NativeAccuracyLogRound } from '../native/index.js';
import { fromSnakeCaseSettings } from '../settings/assignments.js';
import { firstDifference, firstOf, integerValue, isArrayLike, isTruncated, show } from './compare.js';
import { caseId, casesOf, conformance, optional, type Json, type Runner } from './case-runner.js';
import { traceDifference } from './check-traces.js';

interface RealRunRecord {
  loads: number[][];
  callOrder: string[];
  querySizes: number[];
  issued: number[];
  accuracyLog?: { seq_id: number; qsl_idx: number; data: string }[];
}

/** Per-run wall-clock limit; a run that exceeds it is aborted and fails. */
const REAL_RUN_TIMEOUT_MS = 180_000;

function le32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value >>> 0, true);
  return bytes;
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Runs a golden case through the public startTest with the reference's null
 * SUT (every sample completed inside issueQuery with a 4-byte little-endian
 * payload equal to its QSL index) and a QSL recording its calls.
 */
async function realRun(c: Json, readAccuracyLog: boolean): Promise<RealRunRecord> {
  const qslCounts = c.qsl as { total_sample_count: number; performance_sample_count: number };
  const record: RealRunRecord = { loads: [], callOrder: [], querySizes: [], issued: [] };
  const sut: SystemUnderTest = {
    name: 'ConformanceNullSUT',
    issueQuery(samples: QuerySample[]): void {
      record.querySizes.push(samples.length);
      for (const s of samples) record.issued.push(s.index);
      querySamplesComplete(samples.map((s) => ({ id: s.id, data: le32(s.index) })));
    },
  };
  const qsl: QuerySampleLibrary = {
    name: 'ConformanceRecordingQSL',
    totalSampleCount: qslCounts.total_sample_count,
    performanceSampleCount: qslCounts.performance_sample_count,
    loadSamplesToRam(indices: number[]): void {
      record.loads.push([...indices]);
      record.callOrder.push(`load:${record.loads.length - 1}`);
    },
    unloadSamplesFromRam(indices: number[]): void {
      let k = record.loads.length - 1;
      while (k >= 0 && !sameList(record.loads[k]!, indices)) k--;
      record.callOrder.push(k >= 0 ? `unload:${k}` : 'unload:(a list never loaded)');
    },
  };
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-conformance-'));
  try {
    const run = startTest(sut, qsl, fromSnakeCaseSettings(c.settings), { outdir });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the run did not finish within ${REAL_RUN_TIMEOUT_MS / 1000} s`)), REAL_RUN_TIMEOUT_MS);
    });
    try {
      await Promise.race([run, timeout]);
    } catch (error) {
      if (timer !== undefined && /did not finish/.test((error as Error).message)) {
        loadNative().abort('conformance runner: run timed out');
        await run.catch(() => undefined);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (readAccuracyLog) {
      const path = join(outdir, 'mlperf_log_accuracy.json');
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        throw new Error('the run wrote no mlperf_log_accuracy.json');
      }
      record.accuracyLog = JSON.parse(text) as RealRunRecord['accuracyLog'];
    }
    return record;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function flatten(trace: GoldenTrace): { queries: number; samples: number[] } {
  let queries = 0;
  const samples: number[] = [];
  for (const p of trace.phases) {
    for (const lc of p.load_calls) {
      queries += lc.queries.generated_query_count;
      for (const s of lc.queries.sample_indices) samples.push(s);
    }
  }
  return { queries, samples };
}

function numberOf(v: unknown): number {
  const big = integerValue(v);
  return big === undefined ? Number(v) : Number(big);
}

/**
 * For a run whose issued count depends on speed: the issued samples must be
 * a prefix of the pre-generated list, and the count must lie within what the
 * stop rule (golden README §9) allows without timing information.
 */
function stopRuleDifference(settings: Json, trace: GoldenTrace, record: RealRunRecord): string | undefined {
  const { queries: generated, samples } = flatten(trace);
  const n = record.issued.length;
  if (n > samples.length) return `issued ${n} samples, more than the ${samples.length} pre-generated`;
  for (let i = 0; i < n; i++) {
    if (record.issued[i] !== samples[i]) return `issued_sample_indices[${i}]: expected ${samples[i]} (pre-generated), got ${record.issued[i]}`;
  }
  const issuedQueries = record.querySizes.length;
  const mode = String(trace.effective.mode);
  if (mode !== 'PerformanceOnly') {
    return issuedQueries === generated ? undefined : `issued ${issuedQueries} queries; a ${mode} run issues all ${generated}`;
  }
  const maxQueries = numberOf(settings.max_query_count ?? 0);
  const maxDuration = numberOf(settings.max_duration_ms ?? 0);
  const upper = maxQueries > 0 ? Math.min(generated, maxQueries) : generated;
  let lower: number;
  if (maxDuration > 0) lower = Math.min(1, upper);
  else if (trace.effective.scenario === 'Server') lower = upper;
  else lower = Math.min(upper, numberOf(trace.effective.min_query_count));
  if (issuedQueries < lower || issuedQueries > upper) {
    return `stop rule: issued ${issuedQueries} queries, expected between ${lower} and ${upper}`;
  }
  return undefined;
}

export async function checkRealRuns(r: Runner, file: string, json: Json): Promise<void> {
  const cases = casesOf(json);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    await r.check(file, caseId(c, i), async () => {
      const trace = computeTrace(traceInputFromCase(c));
      const pre = c.pregenerated as Json | undefined;
      const preDiff = pre === undefined ? undefined : traceDifference(pre, trace);
      if (preDiff !== undefined) return `pregenerated.${preDiff}`;
      const real = c.real as Json;
      const record = await realRun(c, false);
      const deterministic = c.issued_count_is_deterministic !== false;
      const sizes = real.issued_query_sizes;
      return firstOf(
        () => optional(real, 'load_calls', record.loads),
        () => optional(real, 'qsl_call_order', record.callOrder),
        () => (deterministic ? optional(real, 'issued_query_count', record.querySizes.length) : undefined),
        () => (deterministic ? optional(real, 'issued_sample_count', record.issued.length) : undefined),
        () => {
          if (sizes === undefined) return undefined;
          if (isArrayLike(sizes) || isTruncated(sizes)) {
            return deterministic ? firstDifference(sizes, record.querySizes, 'issued_query_sizes') : undefined;
          }
          const { all, count } = sizes as { all: number; count: number };
          const bad = record.querySizes.findIndex((s) => s !== all);
          if (bad >= 0) return `issued_query_sizes[${bad}]: expected ${all}, got ${record.querySizes[bad]}`;
          return deterministic ? firstDifference(count, record.querySizes.length, 'issued_query_sizes.count') : undefined;
        },
        () =>
          deterministic
            ? optional(real, 'issued_sample_indices', record.issued)
            : stopRuleDifference(c.settings as Json, trace, record),
      );
    });
  }
}

function goldenRound(round: NativeAccuracyLogRound): Json {
  return {
    phase: round.phase,
    first_sample_seq_id: round.firstSampleSeqId,
    generated_sample_count: round.generatedSampleCount,
    offset: round.offset,
    effective_probability: round.effectiveProbability,
    first_per_sample_values: round.firstPerSampleValues,
    logged_sample_seq_ids: round.loggedSampleSeqIds,
    logged_qsl_idx: round.loggedQslIdx,
    logged_count: round.loggedSampleSeqIds.length,
  };
}

export async function checkAccuracyLogSampling(r: Runner, file: string, json: Json): Promise<void> {
  const cases = casesOf(json);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    await r.check(file, caseId(c, i), async () => {
      const input = traceInputFromCase(c);
      const rounds = conformance().accuracyLogPrediction(input.settings, input.qslTotal, input.qslPerformance);
      const predicted = optional(c, 'phases', rounds.map(goldenRound));
      if (predicted !== undefined) return predicted;
      const expected = c.real_run as Json | undefined;
      if (expected === undefined) return undefined;
      const record = await realRun(c, true);
      const entries = [...(record.accuracyLog ?? [])].sort((a, b) => a.seq_id - b.seq_id);
      const badData = entries.find((e) => e.data !== Buffer.from(le32(e.qsl_idx)).toString('hex').toUpperCase());
      return firstOf(
        () => optional(expected, 'issued_sample_count', record.issued.length),
        () => optional(expected, 'logged_entry_count', entries.length),
        () => optional(expected, 'logged_seq_ids', entries.map((e) => e.seq_id), {}),
        () => optional(expected, 'logged_qsl_idx', entries.map((e) => e.qsl_idx)),
        () =>
          badData === undefined
            ? undefined
            : `accuracy log entry seq_id ${badData.seq_id}: data ${show(badData.data)} is not the 4-byte little-endian QSL index ${badData.qsl_idx}`,
      );
    });
  }
}
