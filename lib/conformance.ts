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
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { querySamplesComplete } from './completion.js';
import {
  loadNative,
  type NativeAccuracyLogRound,
  type NativeConformance,
  type NativeLogEntry,
  type NativeResultsInput,
} from './native/index.js';
import { startTest } from './run.js';
import { fromSnakeCaseSettings } from './settings.js';
import { computeTrace, nativeConformance, nativeSettingsFromReference, traceInputFromCase, type GoldenTrace } from './trace.js';
import type { QuerySample, QuerySampleLibrary, SystemUnderTest } from './types.js';

/** Where the runner writes its lines (`PASS …`, `FAIL …`, the totals). */
export interface ConformanceSink {
  write(line: string): void;
}

/** Case counts of one runner invocation. */
export interface ConformanceTotals {
  passed: number;
  failed: number;
}

// ---------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------

/** A golden truncated integer sequence (sequences longer than 4096, and middle rounds). */
interface TruncatedSequence {
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

function isTruncated(v: unknown): v is TruncatedSequence {
  const t = v as Partial<TruncatedSequence> | null;
  return typeof t === 'object' && t !== null && t.truncated === true && Array.isArray(t.head) && Array.isArray(t.tail);
}

function isArrayLike(v: unknown): v is Indexable {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

const INTEGER_TEXT = /^-?\d+$/;

function show(v: unknown): string {
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
function integerValue(v: unknown): bigint | undefined {
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
function textDifference(expected: string, actual: string, what: string): string | undefined {
  if (expected === actual) return undefined;
  const e = expected.split('\n');
  const a = actual.split('\n');
  for (let i = 0; i < Math.max(e.length, a.length); i++) {
    if (e[i] !== a[i]) return `${what} line ${i + 1}: expected ${show(e[i])}, got ${show(a[i])}`;
  }
  return `${what}: texts differ`;
}

function logEntries(entries: readonly NativeLogEntry[]): { key: string; value_text: string }[] {
  return entries.map((e) => ({ key: e.key, value_text: e.valueText }));
}

/** Compares a golden `{key: value_text}` object with logged entries, key order included. */
function logObjectDifference(expected: Record<string, unknown>, actual: readonly NativeLogEntry[], path: string): string | undefined {
  const keys = actual.map((e) => e.key);
  const d = firstDifference(Object.keys(expected), keys, `${path} keys`);
  if (d !== undefined) return d;
  const values: Record<string, string> = {};
  for (const e of actual) values[e.key] = e.valueText;
  return firstDifference(expected, values, path);
}

/** The first defined difference of several lazily computed checks. */
function firstOf(...checks: (() => string | undefined)[]): string | undefined {
  for (const check of checks) {
    const d = check();
    if (d !== undefined) return d;
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Runner plumbing
// ---------------------------------------------------------------------------

type Json = Record<string, unknown>;
type CaseCheck = () => string | undefined | Promise<string | undefined>;

class Runner {
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

function conformance(): NativeConformance {
  return nativeConformance();
}

function casesOf(json: Json): Json[] {
  if (!Array.isArray(json.cases)) throw new Error("no 'cases' array");
  return json.cases as Json[];
}

function caseId(c: Json, index: number): string {
  return typeof c.id === 'string' && c.id !== '' ? c.id : `cases[${index}]`;
}

function seedOf(v: unknown): bigint {
  const big = integerValue(v);
  if (big === undefined) throw new Error(`bad seed ${show(v)}`);
  return big;
}

function lengthOf(v: unknown): number {
  if (isTruncated(v)) return v.length;
  if (Array.isArray(v)) return v.length;
  throw new Error(`expected a sequence, got ${show(v)}`);
}

// ---------------------------------------------------------------------------
// rng_primitives.json
// ---------------------------------------------------------------------------

const META_KEYS = new Set(['reference', 'toolchain', 'file_kind', 'set', 'description', 'notes']);

async function checkRngPrimitives(r: Runner, file: string, json: Json): Promise<void> {
  for (const [section, value] of Object.entries(json)) {
    if (META_KEYS.has(section)) continue;
    if (section === 'mt19937_default_constructed_first') {
      await r.check(file, section, () => {
        const n = lengthOf(value);
        return firstDifference(value, conformance().mt19937Outputs(5489n, n), section);
      });
      continue;
    }
    if (!Array.isArray(value)) {
      await r.check(file, section, () => `unknown section '${section}' (not checked)`);
      continue;
    }
    for (let i = 0; i < value.length; i++) {
      const row = value[i] as Json;
      const id = `${section}[${i}]`;
      await r.check(file, id, () => checkRngRow(section, row));
    }
  }
}

function checkRngRow(section: string, row: Json): string | undefined {
  const c = conformance();
  switch (section) {
    case 'mt19937_raw': {
      const count = Math.max(lengthOf(row.first), row.output_10000 !== undefined ? 10000 : 0);
      const out = c.mt19937Outputs(seedOf(row.seed), count);
      return firstOf(
        () => firstDifference(row.first, out.subarray(0, lengthOf(row.first)), 'first'),
        () => (row.output_10000 === undefined ? undefined : firstDifference(row.output_10000, out[9999], 'output_10000')),
      );
    }
    case 'uniform_real_0_1': {
      const got = c.uniformReal(seedOf(row.seed), lengthOf(row.values));
      return firstOf(
        () => firstDifference(row.values, got.values, 'values'),
        () => (row.engine_draws === undefined ? undefined : firstDifference(row.engine_draws, got.engineDraws, 'engine_draws')),
      );
    }
    case 'server_interarrival_ns': {
      const nd = row.delta_ns === undefined ? 0 : lengthOf(row.delta_ns);
      const ne = row.exp_seconds === undefined ? 0 : lengthOf(row.exp_seconds);
      const got = c.serverInterarrival(seedOf(row.seed), row.qps as number, Math.max(nd, ne));
      return firstOf(
        () => (nd === 0 ? undefined : firstDifference(row.delta_ns, got.deltaNs.subarray(0, nd), 'delta_ns')),
        () => (ne === 0 ? undefined : firstDifference(row.exp_seconds, got.expSeconds.subarray(0, ne), 'exp_seconds')),
      );
    }
    case 'fixed_period_ns':
      return firstDifference(row.period_ns, c.fixedPeriodNs(row.qps as number), 'period_ns');
    case 'uniform_int': {
      const got = c.uniformInt(seedOf(row.seed), row.n as number, lengthOf(row.values));
      return firstOf(
        () => firstDifference(row.values, got.values, 'values'),
        () => (row.engine_draws === undefined ? undefined : firstDifference(row.engine_draws, got.engineDraws, 'engine_draws')),
      );
    }
    case 'shuffle': {
      const got = c.shuffle(seedOf(row.seed), row.n as number);
      return firstOf(
        () => firstDifference(row.result, got.result, 'result'),
        () => (row.engine_draws === undefined ? undefined : firstDifference(row.engine_draws, got.engineDraws, 'engine_draws')),
        () =>
          row.next_engine_output === undefined ? undefined : firstDifference(row.next_engine_output, got.nextEngineOutput, 'next_engine_output'),
      );
    }
    default:
      return `unknown section '${section}' (not checked)`;
  }
}

// ---------------------------------------------------------------------------
// perf_sample_sets.json
// ---------------------------------------------------------------------------

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

async function checkPerfSampleSets(r: Runner, file: string, json: Json): Promise<void> {
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

/** Compares `c[key]` with `actual` when the case holds that key. */
function optional(c: Json, key: string, actual: unknown, options: CompareOptions = {}): string | undefined {
  return c[key] === undefined ? undefined : firstDifference(c[key], actual, key, options);
}

// ---------------------------------------------------------------------------
// query_traces/*.json
// ---------------------------------------------------------------------------

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

async function checkQueryTrace(r: Runner, file: string, json: Json): Promise<void> {
  await r.check(file, caseId(json, 0), () => traceDifference(json, computeTrace(traceInputFromCase(json))));
}

// ---------------------------------------------------------------------------
// Real runs (real_runs.json, accuracy_log_sampling.json real_run)
// ---------------------------------------------------------------------------

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

async function checkRealRuns(r: Runner, file: string, json: Json): Promise<void> {
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

// ---------------------------------------------------------------------------
// accuracy_log_sampling.json
// ---------------------------------------------------------------------------

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

async function checkAccuracyLogSampling(r: Runner, file: string, json: Json): Promise<void> {
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

// ---------------------------------------------------------------------------
// early_stopping.json
// ---------------------------------------------------------------------------

/** Rows of a `{columns, rows}` table as objects keyed by column name. */
function tableRows(table: unknown): Json[] {
  const t = table as { columns?: unknown; rows?: unknown };
  if (!Array.isArray(t?.columns) || !Array.isArray(t.rows)) throw new Error('expected {columns, rows}');
  const columns = t.columns as string[];
  return (t.rows as unknown[][]).map((row) => Object.fromEntries(columns.map((name, i) => [name, row[i]])));
}

const ODDS_TOLERANCE = 1e-9;

async function checkEarlyStopping(r: Runner, file: string, json: Json): Promise<void> {
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

// ---------------------------------------------------------------------------
// results_math.json
// ---------------------------------------------------------------------------

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

async function checkResultsMath(r: Runner, file: string, json: Json): Promise<void> {
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

// ---------------------------------------------------------------------------
// settings_derivation.json
// ---------------------------------------------------------------------------

function userConfText(v: unknown, what: string): string | null {
  const u = v as { text?: unknown; missing?: unknown } | undefined;
  if (u?.missing === true) return null;
  if (typeof u?.text === 'string') return u.text;
  throw new Error(`${what}: expected {text} or {missing: true}`);
}

async function checkSettingsDerivation(r: Runner, file: string, json: Json): Promise<void> {
  const cases = casesOf(json);
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    await r.check(file, caseId(c, i), () => {
      const mlperf = c.mlperf_conf as { source?: string; text?: string } | undefined;
      if (mlperf !== undefined && mlperf.source !== 'builtin' && typeof mlperf.text !== 'string') {
        return `mlperf_conf: unsupported source ${show(mlperf.source)}`;
      }
      const qsl = c.qsl as { total_sample_count: number; performance_sample_count: number };
      const result = conformance().configDerive({
        ...(mlperf?.source === 'builtin' || mlperf === undefined ? {} : { mlperfConfText: mlperf.text }),
        userConfText: userConfText(c.user_conf, 'user_conf'),
        ...(c.user_conf_second_call === undefined
          ? {}
          : { secondUserConfText: userConfText(c.user_conf_second_call, 'user_conf_second_call') }),
        model: String(c.model),
        scenario: String(c.config_scenario),
        initial: nativeSettingsFromReference(c.initial_settings),
        qslTotal: qsl.total_sample_count,
        qslPerformance: qsl.performance_sample_count,
      });
      return firstOf(
        () => optional(c, 'from_config_return_code', result.returnCode),
        () => optional(c, 'second_from_config_return_code', result.secondReturnCode),
        () => optional(c, 'settings_after_from_config', result.settingsAfter),
        () => optional(c, 'effective', result.effective),
        () =>
          c.logged_requested === undefined
            ? undefined
            : logObjectDifference(c.logged_requested as Json, result.loggedRequested, 'logged_requested'),
        () =>
          c.logged_effective === undefined
            ? undefined
            : logObjectDifference(c.logged_effective as Json, result.loggedEffective, 'logged_effective'),
        () => firstDifference(c.logged_errors ?? [], logEntries(result.loggedErrors), 'logged_errors'),
      );
    });
  }
}

// ---------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------

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
