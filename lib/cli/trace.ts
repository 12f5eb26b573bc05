/**
 * `loadgen trace`: the whole pre-generated query list of a StartTest (load
 * calls, per-query sample indices, Server schedule, generated values),
 * computed by the native core without running anything, and written as JSON
 * in the golden `query_traces` format.
 *
 * Also home of the conversion from reference-named settings objects (golden
 * vectors, `run_settings.json`) to the native settings record, shared with
 * the conformance runner.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';

import { InterfaceError, SettingsError } from '../errors.js';
import {
  loadNativeInternals,
  packageRoot,
  type NativeConformance,
  type NativeEffectiveRecord,
  type NativeTestSettings,
  type NativeTrace,
  type NativeTraceQueries,
} from '../native/index.js';
import { settingsFromAssignments } from '../settings/assignments.js';
import { DEFAULT_TEST_SETTINGS, SETTINGS_FIELDS } from '../settings/fields.js';
import { resolveTestSettings } from '../settings/resolve.js';
import { toNativeSettings } from '../settings/to-native.js';
import { SCENARIOS, TEST_MODES, type TestSettingsInput } from '../types/settings.js';
import { resolveQslDependentChecks } from '../settings/validate.js';

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

const FIELD_BY_SNAKE = new Map(SETTINGS_FIELDS.map((f) => [f.snake, f]));

/** What a trace is computed from: native settings and the QSL's two counts. */
export interface TraceInput {
  /** Reference TestSettings as the native side reads them (see {@link NativeTestSettings}). */
  settings: NativeTestSettings;
  /** The QSL's TotalSampleCount(). */
  qslTotal: number;
  /** The QSL's PerformanceSampleCount(). */
  qslPerformance: number;
  /** Where the settings came from, in words (written as `settings_source`). */
  source?: string;
}

/**
 * Converts a reference-named `TestSettings` object (golden `settings`,
 * `initial_settings`: scenario/mode as enumerator names, seeds and integers
 * above 2^53 as decimal strings) to the native record, without the
 * user-facing validation: the reference accepts values `startTest` rejects,
 * and the vectors must be reproduced exactly. Fields not given keep their
 * defaults; the loadgen extension fields get their defaults.
 * Throws {@link SettingsError} for unknown keys or unparseable values.
 */
export function nativeSettingsFromReference(settings: unknown): NativeTestSettings {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new SettingsError('settings', settings, 'expected a settings object with reference field names');
  }
  const out: NativeTestSettings = toNativeSettings(DEFAULT_TEST_SETTINGS);
  for (const [key, value] of Object.entries(settings as Record<string, unknown>)) {
    const field = FIELD_BY_SNAKE.get(key);
    if (field === undefined) {
      throw new SettingsError(key, value, `Unknown test setting '${key}' (expected a reference TestSettings field name).`);
    }
    const bad = (expected: string): SettingsError =>
      new SettingsError(key, value, `Invalid test setting ${key} = ${JSON.stringify(value)}: expected ${expected}.`);
    switch (field.kind) {
      case 'enum': {
        const names = field.constraints.values ?? [];
        const index = typeof value === 'number' ? value : names.indexOf(String(value));
        if (!Number.isInteger(index) || index < 0 || index >= names.length) throw bad(names.join(', '));
        out[key] = index;
        break;
      }
      case 'bool':
        if (typeof value !== 'boolean') throw bad('true or false');
        out[key] = value;
        break;
      case 'seed':
      case 'uint64':
      case 'int': {
        // Decimal strings carry values above 2^53 (seeds, a wrapped -1); keep them exact.
        if (typeof value === 'string' && /^-?\d+$/.test(value)) {
          const big = BigInt(value);
          out[key] = field.kind === 'seed' || big > BigInt(Number.MAX_SAFE_INTEGER) ? big : Number(big);
        } else if (typeof value === 'number' && Number.isInteger(value)) {
          out[key] = field.kind === 'seed' ? BigInt(value) : value;
        } else if (typeof value === 'bigint') {
          out[key] = value;
        } else {
          throw bad('an integer (or its decimal string)');
        }
        break;
      }
      case 'double':
        if (typeof value !== 'number') throw bad('a number');
        out[key] = value;
        break;
    }
  }
  return out;
}

/** Reads the `settings` and `qsl` objects of a golden-format case file (query_traces/*.json and alike). */
export function traceInputFromCaseFile(path: string): TraceInput {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new InterfaceError(`--case ${path}: cannot read the case file: ${(cause as Error).message}`);
  }
  return traceInputFromCase(json, `--case ${path}`);
}

/** The {@link TraceInput} of a parsed case object holding `settings` and `qsl`. */
export function traceInputFromCase(json: unknown, where = 'case'): TraceInput {
  const c = json as { settings?: unknown; qsl?: { total_sample_count?: unknown; performance_sample_count?: unknown } };
  if (typeof c !== 'object' || c === null || typeof c.settings !== 'object' || typeof c.qsl !== 'object' || c.qsl === null) {
    throw new InterfaceError(`${where}: expected an object with 'settings' and 'qsl' (the golden query_traces format)`);
  }
  const total = c.qsl.total_sample_count;
  const performance = c.qsl.performance_sample_count;
  if (typeof total !== 'number' || typeof performance !== 'number') {
    throw new InterfaceError(`${where}: 'qsl' needs numeric total_sample_count and performance_sample_count`);
  }
  return { settings: nativeSettingsFromReference(c.settings), qslTotal: total, qslPerformance: performance };
}

/**
 * The {@link TraceInput} of CLI assignments (`--set key=value`), validated like
 * `startTest` validates its settings (any mode is allowed: nothing runs).
 */
export function traceInputFromAssignments(
  assignments: readonly string[],
  qslTotal: number,
  qslPerformance: number,
  overrides: TestSettingsInput = {},
): TraceInput {
  return traceInputFromSettings({ ...settingsFromAssignments(assignments), ...overrides }, qslTotal, qslPerformance);
}

/** The {@link TraceInput} of settings (e.g. loaded from config files), validated like `startTest` validates them. */
export function traceInputFromSettings(input: TestSettingsInput, qslTotal: number, qslPerformance: number): TraceInput {
  const resolved = resolveTestSettings(input);
  resolveQslDependentChecks(resolved, { totalSampleCount: qslTotal, performanceSampleCount: qslPerformance });
  return { settings: toNativeSettings(resolved), qslTotal, qslPerformance };
}

// ---------------------------------------------------------------------------
// Golden-shaped trace
// ---------------------------------------------------------------------------

/** One round's queries under the golden names; arrays stay typed (no copies). */
export interface GoldenQueries {
  generated_query_count: number;
  generated_samples_per_query: number;
  generated_query_duration_ns: number;
  first_query_seq_id: number;
  first_sample_seq_id: number;
  samples_per_query: number;
  sample_indices: Uint32Array;
  scheduled_ns: Float64Array;
}

/** One load round under the golden names. */
export interface GoldenLoadCall {
  loaded: Uint32Array;
  sample_distribution_end: number;
  queries: GoldenQueries;
}

/** One phase under the golden names. */
export interface GoldenPhase {
  phase: 'accuracy' | 'performance';
  loadable_set_count: number;
  load_calls: GoldenLoadCall[];
}

/** A trace under the golden `query_traces` names. */
export interface GoldenTrace {
  effective: NativeEffectiveRecord;
  phases: GoldenPhase[];
  logged_errors?: { key: string; value_text: string }[];
}

function goldenQueries(q: NativeTraceQueries): GoldenQueries {
  return {
    generated_query_count: q.generatedQueryCount,
    generated_samples_per_query: q.generatedSamplesPerQuery,
    generated_query_duration_ns: q.generatedQueryDurationNs,
    first_query_seq_id: q.firstQuerySeqId,
    first_sample_seq_id: q.firstSampleSeqId,
    samples_per_query: q.samplesPerQuery,
    sample_indices: q.sampleIndices,
    scheduled_ns: q.scheduledNs,
  };
}

/** Renames a native trace to the golden field names (key order as in the golden files). */
export function toGoldenTrace(trace: NativeTrace): GoldenTrace {
  const out: GoldenTrace = {
    effective: trace.effective,
    phases: trace.phases.map((p) => ({
      phase: p.phase,
      loadable_set_count: p.loadableSetCount,
      load_calls: p.loadCalls.map((c) => ({
        loaded: c.loaded,
        sample_distribution_end: c.sampleDistributionEnd,
        queries: goldenQueries(c.queries),
      })),
    })),
  };
  if (trace.loggedErrors.length > 0) {
    out.logged_errors = trace.loggedErrors.map((e) => ({ key: e.key, value_text: e.valueText }));
  }
  return out;
}

/** The native conformance functions; a clear error when the addon predates them. */
export function nativeConformance(): NativeConformance {
  const conformance = loadNativeInternals().conformance as NativeConformance | undefined;
  if (conformance === undefined || typeof conformance.generateTrace !== 'function') {
    throw new Error('the native addon has no conformance functions (rebuild it: npm run build:native)');
  }
  return conformance;
}

/** Computes the trace of `input` (test05 applied, nothing run). */
export function computeTrace(input: TraceInput): GoldenTrace {
  return toGoldenTrace(nativeConformance().generateTrace(input.settings, input.qslTotal, input.qslPerformance));
}

/** The settings echoed in the output: reference names, enums as names, no loadgen extensions. */
function referenceSettings(settings: NativeTestSettings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of SETTINGS_FIELDS) {
    if (f.extension) continue;
    const v = settings[f.snake];
    if (f.snake === 'scenario') out[f.snake] = SCENARIOS[v as number] ?? v;
    else if (f.snake === 'mode') out[f.snake] = TEST_MODES[v as number] ?? v;
    else out[f.snake] = v;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Streaming JSON
// ---------------------------------------------------------------------------

type ArrayLikeOfScalars = ArrayLike<unknown> & { length: number };

// Elements per chunk when writing a long array: small enough to keep memory
// flat for million-element traces, large enough to keep write calls few.
const ARRAY_CHUNK = 16384;

function isTypedArray(v: unknown): v is ArrayLikeOfScalars {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

function scalarText(v: unknown): string {
  // Seeds and integers above 2^53 arrive as bigint: decimal strings, as in the golden files.
  if (typeof v === 'bigint') return `"${v.toString()}"`;
  if (v === undefined) return 'null';
  return JSON.stringify(v);
}

function isScalar(v: unknown): boolean {
  return v === null || (typeof v !== 'object' && typeof v !== 'function');
}

/**
 * Yields the JSON text of `value` in pieces, laid out like the golden files
 * (one-space indentation, arrays of scalars on one line). Long arrays are
 * yielded in chunks, so no string ever holds a whole trace.
 */
export function* jsonChunks(value: unknown, indent = 0): Generator<string> {
  if (isTypedArray(value) || (Array.isArray(value) && value.every(isScalar))) {
    const a = value as ArrayLikeOfScalars;
    if (a.length === 0) {
      yield '[]';
      return;
    }
    for (let start = 0; start < a.length; start += ARRAY_CHUNK) {
      const end = Math.min(a.length, start + ARRAY_CHUNK);
      const parts: string[] = new Array(end - start);
      for (let i = start; i < end; i++) parts[i - start] = scalarText(a[i]);
      yield (start === 0 ? '[' : ',') + parts.join(',') + (end === a.length ? ']' : '');
    }
    return;
  }
  const pad = ' '.repeat(indent + 1);
  const close = ' '.repeat(indent);
  if (Array.isArray(value)) {
    yield '[\n';
    for (let i = 0; i < value.length; i++) {
      yield pad;
      yield* jsonChunks(value[i], indent + 1);
      yield i + 1 < value.length ? ',\n' : '\n';
    }
    yield `${close}]`;
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) {
      yield '{}';
      return;
    }
    yield '{\n';
    for (let i = 0; i < entries.length; i++) {
      const [k, v] = entries[i]!;
      yield `${pad}${JSON.stringify(k)}: `;
      yield* jsonChunks(v, indent + 1);
      yield i + 1 < entries.length ? ',\n' : '\n';
    }
    yield `${close}}`;
    return;
  }
  yield scalarText(value);
}

/** Writes the chunks to `out`, batching small pieces and honouring backpressure. */
export async function writeJsonStream(out: Writable, value: unknown): Promise<void> {
  let buffer = '';
  const flush = async (): Promise<void> => {
    if (buffer.length === 0) return;
    const text = buffer;
    buffer = '';
    if (!out.write(text)) {
      await new Promise<void>((resolve, reject) => {
        const onDrain = (): void => {
          out.off('error', onError);
          resolve();
        };
        const onError = (error: Error): void => {
          out.off('drain', onDrain);
          reject(error);
        };
        out.once('drain', onDrain);
        out.once('error', onError);
      });
    }
  };
  for (const chunk of jsonChunks(value)) {
    buffer += chunk;
    if (buffer.length >= 1 << 16) await flush();
  }
  buffer += '\n';
  await flush();
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Computes the trace of `input` and writes it to `out` as one JSON object:
 * `generator` (loadgen and its version), `settings`, `qsl`, `effective`,
 * `phases` (golden `query_traces` layout) and `logged_errors` when the
 * derivation logged any. Streams the arrays.
 */
export async function writeTrace(input: TraceInput, out: Writable): Promise<void> {
  const trace = computeTrace(input);
  await writeJsonStream(out, {
    generator: `loadgen ${packageVersion()}`,
    ...(input.source !== undefined ? { settings_source: input.source } : {}),
    settings: referenceSettings(input.settings),
    qsl: { total_sample_count: input.qslTotal, performance_sample_count: input.qslPerformance },
    ...trace,
  });
}
