/**
 * Validation: one value against its field (type, range, unit hints), the
 * messages for unknown keys, and the rules across fields and with the QSL
 * that a run's settings must pass once they are complete.
 */
import { SettingsError } from '../errors.js';
import { runSettingLimit } from '../native/tables.js';
import {
  FIELD_BY_NAME,
  FIELD_BY_SNAKE,
  LOG_FIELD_BY_NAME,
  LOG_FIELD_BY_SNAKE,
  type LogSettingField,
  type SettingConstraints,
  type SettingField,
} from './fields.js';
import { closest, echo, hasControlCharacter, invalid, num, show, type Label } from './messages.js';
import type { ResolvedTestSettings, TestSettings } from '../types/settings.js';

const UINT64_MAX = (1n << 64n) - 1n;

// ---------------------------------------------------------------------------
// Per-field validation
// ---------------------------------------------------------------------------

function isNumericString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v));
}

/** A hint for a wrongly typed value, or ''. */
function typeHint(v: unknown, wanted: 'number' | 'boolean'): string {
  if (wanted === 'number' && (isNumericString(v) || typeof v === 'bigint')) {
    const t = typeof v === 'bigint' ? `${v}` : v.trim();
    // Integers past 2^53-1 (e.g. a config's -1 wrapped to 2^64-1) cannot be numbers without losing precision.
    if (/^\d+$/.test(t) && !Number.isSafeInteger(Number(t))) return ` ${echo(t)} is above 2^53-1, which this field does not support.`;
    return ` Pass a number, not a ${typeof v} (${echo(t)}).`;
  }
  if (wanted === 'boolean' && (v === 0 || v === 1 || v === 'true' || v === 'false')) {
    return ` Use ${v === 1 || v === 'true'} (a boolean).`;
  }
  return '';
}

function seedValue(v: unknown, allowed: string, fail: (problem: string) => SettingsError): bigint {
  let s: bigint | undefined;
  if (typeof v === 'bigint') {
    s = v;
  } else if (typeof v === 'number') {
    if (Number.isInteger(v) && !Number.isSafeInteger(v) && v > 0) {
      throw fail(`expected ${allowed}. This number is above 2^53-1 and has lost precision; pass the seed as a decimal string or a bigint.`);
    }
    if (Number.isSafeInteger(v)) s = BigInt(v);
  } else if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) {
    s = BigInt(v.trim());
  }
  if (s === undefined || s < 0n || s > UINT64_MAX) {
    const extra = typeof v === 'string' && /^\s*0x/i.test(v) ? ' Hexadecimal is not accepted; use decimal digits.' : '';
    throw fail(`expected ${allowed}.${extra}`);
  }
  return s;
}

function rangeHint(field: { constraints: SettingConstraints; unit: string }, key: string, v: number): string {
  const c = field.constraints;
  // Only suggest v/100 when that would be accepted (a percentile of 100 has no valid fraction).
  if (c.hint === 'fraction' && v >= 1 && inRange(c, v / 100)) {
    const what = c.exclusiveMax === true ? 'Percentiles' : 'Probabilities';
    return ` ${what} are fractions: did you mean ${num(v / 100)}?`;
  }
  if (c.hint === 'latencyNs' && v > 0 && v < 1000) {
    return ` ${key} is in nanoseconds: ${num(v)} ns is almost certainly a unit mistake; ${num(v)} ms is ${num(v * 1e6)}.`;
  }
  return '';
}

function inRange(c: SettingConstraints, v: number): boolean {
  if (c.zeroAllowedWith !== undefined && v === 0) return true;
  if (c.min !== undefined && (c.exclusiveMin === true ? v <= c.min : v < c.min)) return false;
  if (c.max !== undefined && (c.exclusiveMax === true ? v >= c.max : v > c.max)) return false;
  return true;
}

type AnyField = SettingField | LogSettingField;

/**
 * Checks one value against its field; returns the stored form. Throws
 * SettingsError naming `key` and showing `shown` (the text a `--set` was given).
 */
export function checkValue(label: Label, field: AnyField, key: string, v: unknown, shown: unknown = v): unknown {
  const { kind, constraints: c, allowed } = field;
  const fail = (problem: string): SettingsError => invalid(label, key, shown, problem);
  switch (kind) {
    case 'enum': {
      const values = c.values ?? [];
      if (typeof v === 'string' && values.includes(v)) return v;
      let hint = '';
      if (typeof v === 'string') {
        const lower = v.toLowerCase();
        // 'polling' -> 'poll': a name with a suffix is too many edits away for closest().
        const s = values.find((x) => x.toLowerCase() === lower) ?? closest(v, values) ??
          values.find((x) => x.length >= 3 && lower.startsWith(x.toLowerCase()));
        if (s !== undefined) hint = ` Did you mean '${s}'?`;
      } else if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < values.length) {
        hint = ` Use the name: did you mean '${values[v]}'?`;
      }
      throw fail(`expected ${allowed}.${hint}`);
    }
    case 'bool':
      if (typeof v === 'boolean') return v;
      throw fail(`expected ${allowed}.${typeHint(v, 'boolean')}`);
    case 'string':
      if (typeof v !== 'string') throw fail(`expected ${allowed}.`);
      if (v.includes('\0')) throw fail('expected a string without NUL characters.');
      // prefix/suffix are parts of a file name; directories belong in outdir.
      if (key !== 'outdir' && /[/\\]/.test(v)) {
        throw fail('expected a file name part without path separators; put directories in outdir.');
      }
      if (key !== 'outdir' && hasControlCharacter(v)) {
        throw fail('expected a file name part without control characters (newline, tab, other C0/C1 controls, DEL, U+2028, U+2029).');
      }
      if (key === 'outdir' && v === '') throw fail("expected a non-empty directory path (use '.' for the current directory).");
      return v;
    case 'seed':
      return seedValue(v, allowed, fail);
    case 'double':
      if (typeof v !== 'number') throw fail(`expected ${allowed}.${typeHint(v, 'number')}`);
      if (!Number.isFinite(v)) throw fail(`expected ${allowed}; NaN and Infinity are not allowed.`);
      if (!inRange(c, v)) throw fail(`expected ${allowed}.${rangeHint(field, key, v)}`);
      return v;
    case 'uint64':
    case 'int':
      if (typeof v !== 'number') throw fail(`expected ${allowed}.${typeHint(v, 'number')}`);
      if (!Number.isFinite(v)) throw fail(`expected ${allowed}; NaN and Infinity are not allowed.`);
      if (!Number.isInteger(v)) throw fail(`expected ${allowed}; ${v} is not an integer.${rangeHint(field, key, v)}`);
      if (kind === 'uint64' && v < 0) throw fail(`expected ${allowed}; the field is unsigned.`);
      if (!Number.isSafeInteger(v)) throw fail(`expected ${allowed}; ${v} is above 2^53-1.`);
      if (!inRange(c, v)) throw fail(`expected ${allowed}.${rangeHint(field, key, v)}`);
      return Object.is(v, -0) ? 0 : v;
  }
}

export function assertPlainObject(label: Label, v: unknown): asserts v is Record<string, unknown> {
  const ok = typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map);
  if (!ok) {
    const what = label === 'test setting' ? 'test settings' : 'log settings';
    throw new SettingsError('(input)', v, `Invalid ${what}: expected an object of ${label}s, got ${show(v)}.`);
  }
}

export function unknownTestKey(key: string, value: unknown): SettingsError {
  const bySnake = FIELD_BY_SNAKE.get(key);
  let problem: string;
  if (bySnake !== undefined) {
    problem = `use ${bySnake.name} (the TypeScript API uses camelCase; snake_case names are for --set and config files).`;
  } else if (LOG_FIELD_BY_NAME.has(key) || LOG_FIELD_BY_SNAKE.has(key)) {
    problem = `${key} is a log setting; pass it in the log settings, not the test settings.`;
  } else {
    const s = closest(key, FIELD_BY_NAME.keys());
    problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen test setting (see SETTINGS_FIELDS).';
  }
  return new SettingsError(key, value, `Unknown test setting '${echo(key)}': ${problem}`);
}

export function unknownLogKey(key: string, value: unknown): SettingsError {
  const bySnake = LOG_FIELD_BY_SNAKE.get(key);
  let problem: string;
  if (bySnake !== undefined) {
    problem = `use ${bySnake.name} (the TypeScript API uses camelCase).`;
  } else if (key === 'logOutput' || key === 'log_output') {
    problem = 'the log output fields are flat here: pass outdir, prefix, suffix, ... directly.';
  } else if (FIELD_BY_NAME.has(key) || FIELD_BY_SNAKE.has(key)) {
    problem = `${key} is a test setting; pass it in the test settings, not the log settings.`;
  } else {
    const s = closest(key, LOG_FIELD_BY_NAME.keys());
    problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen log setting (see LOG_SETTINGS_FIELDS).';
  }
  return new SettingsError(key, value, `Unknown log setting '${echo(key)}': ${problem}`);
}

/**
 * Checks one value of a test setting (camelCase name) on its own and returns
 * the stored form (seeds as bigint). Throws {@link SettingsError} naming the
 * key, the value and what is allowed.
 */
export function validateSettingValue(name: keyof TestSettings, value: unknown): unknown {
  const field = FIELD_BY_NAME.get(name);
  if (field === undefined) throw unknownTestKey(name, value);
  return checkValue('test setting', field, name, value);
}

function conflict(key: keyof TestSettings, value: unknown, message: string): SettingsError {
  return new SettingsError(key, value, `Invalid test setting ${key} = ${show(value)}: ${message}`);
}

/** Cross-field rules that need no QSL. */
export function checkCombinations(s: ResolvedTestSettings): void {
  if (s.serverTargetLatencyNs === 0 && !s.useTokenLatencies) {
    throw conflict('serverTargetLatencyNs', 0,
      'expected an integer >= 1000 (ns); 0 is only allowed with useTokenLatencies = true (TTFT/TPOT bound the latency instead).');
  }
  // The reference generates 0 queries and then reads query -1 (segfault).
  if (s.scenario !== 'Offline' && s.minQueryCount === 0 && s.minDurationMs === 0) {
    throw conflict('minQueryCount', 0,
      `with minDurationMs = 0 the ${s.scenario} scenario would generate no queries; set minQueryCount >= 1 or minDurationMs >= 1.`);
  }
  // Offline's single query holds max(minQueryCount, floor(1.1 * secs * qps)) samples
  // (spec/10 §3 Step 3, same evaluation order); 0 would issue an empty query.
  if (s.scenario === 'Offline' && !s.performanceIssueUnique) {
    const target = Math.trunc(1.1 * (s.minDurationMs / 1000.0) * s.offlineExpectedQps);
    if (Math.max(s.minQueryCount, target) === 0) {
      throw conflict('minQueryCount', 0,
        `the Offline query would hold 0 samples (1.1 x minDurationMs ${s.minDurationMs} ms x offlineExpectedQps ${s.offlineExpectedQps} < 1); set minQueryCount >= 1.`);
    }
  }
  if (s.performanceIssueUnique && s.performanceIssueSame) {
    throw conflict('performanceIssueSame', true,
      'performanceIssueUnique and performanceIssueSame cannot both be true; choose one.');
  }
  // Both hand queries to other threads; one run uses one way.
  if (s.dispatch === 'worker' && s.serverNumIssueQueryThreads !== 0) {
    throw conflict('serverNumIssueQueryThreads', s.serverNumIssueQueryThreads,
      "registered issue-query threads and dispatch 'worker' both hand queries to other threads; use one: " +
        "set serverNumIssueQueryThreads = 0, or dispatch 'wake'.");
  }
  if (s.inferTokenLatencies && s.tokenLatencyScalingFactor === 0) {
    throw conflict('tokenLatencyScalingFactor', 0,
      'expected an integer >= 1 (tokens per sample) when inferTokenLatencies is true.');
  }
  checkRateBounds(s);
}

// ---------------------------------------------------------------------------
// Rates: a run that ends, a generation that fits
// ---------------------------------------------------------------------------

/**
 * The longest expected issue time accepted for a Server run, in s: 7 days,
 * the core's bound (native/settings_fields.h says why). A bound from
 * max_duration_ms would not do: the schedule is generated whole before the
 * run, whatever ends it, and tiny rates overflow it (5e-324 queries/s).
 */
const MAX_EXPECTED_ISSUE_S = runSettingLimit('expected_issue_time_s').max;
/** Samples one series may generate: the core's limit (native/settings_fields.h). */
const GENERATED_SAMPLE_LIMIT = runSettingLimit('generated_sample_count').max;
/** The largest Poisson count n whose 6-sigma reserve n + 6 sqrt(n) + 16 stays within the limit. */
const MAX_SERVER_DURATION_QUERIES = (Math.sqrt(GENERATED_SAMPLE_LIMIT - 7) - 3) ** 2;

/** `x` rounded up (`up`) or down to 6 significant digits, for a limit a user can type back. */
function limitText(x: number, up: boolean): string {
  let r = Number(x.toPrecision(6));
  const step = 10 ** (Math.floor(Math.log10(Math.abs(r))) - 5);
  if (up && r < x) r += step;
  if (!up && r > x) r -= step;
  return num(r);
}

function duration(seconds: number): string {
  if (seconds < 2 * 86400) return `${num(Number((seconds / 3600).toPrecision(3)))} hours`;
  if (seconds < 2 * 365 * 86400) return `${num(Number((seconds / 86400).toPrecision(3)))} days`;
  return `${Number((seconds / (365 * 86400)).toPrecision(3)).toExponential(2).replace(/\.?0*e\+?/, 'e')} years`;
}

/**
 * Server: the queries a performance series generates for its duration
 * (spec/20 §3.5), estimated high as the core reserves for them: each gap is
 * truncated to whole ns, which makes the count gen * (e^(qps/1e9) - 1)
 * rather than gen * qps / 1e9 at very high rates, plus a 6-sigma margin.
 */
function serverDurationQueries(minDurationMs: number, qps: number): number {
  const genNs = minDurationMs * 1e6;
  if (genNs === 0) return 0;
  const n = Math.max((genNs * qps) / 1e9, genNs * Math.expm1(qps / 1e9));
  return n + 6 * Math.sqrt(n) + 16;
}

/**
 * Server: the rate must issue `queries` within {@link MAX_EXPECTED_ISSUE_S}
 * (`what` names where the count comes from).
 */
function checkServerIssueTime(s: ResolvedTestSettings, queries: number, what: string): void {
  const seconds = queries / s.serverTargetQps;
  if (seconds <= MAX_EXPECTED_ISSUE_S) return;
  const time = Number.isFinite(seconds) ? `take about ${duration(seconds)} to issue` : 'cannot be scheduled (their gaps overflow)';
  throw conflict('serverTargetQps', s.serverTargetQps,
    `at this rate the run's ${queries} queries (${what}) ${time}; ` +
      `loadgen refuses Server runs whose expected issue time exceeds ${duration(MAX_EXPECTED_ISSUE_S)} (${MAX_EXPECTED_ISSUE_S} s). ` +
      `For these settings serverTargetQps must be at least ${limitText(queries / MAX_EXPECTED_ISSUE_S, true)} (queries/s).`);
}

/**
 * Rates (and expected latencies, and counts) whose run could not end or
 * whose query generation would exceed the core's limit of 2^32 samples per
 * series: refused before anything starts, naming the field and the bound
 * for these settings. The native core checks the same (check_run_bounds).
 */
export function checkRateBounds(s: ResolvedTestSettings): void {
  const limit = GENERATED_SAMPLE_LIMIT;
  const tooMany = (key: keyof TestSettings, value: unknown, samples: number, bound: string): SettingsError =>
    conflict(key, value,
      `the ${s.scenario} run would generate ${Number.isFinite(samples) ? `about ${num(Number(samples.toPrecision(4)))}` : 'unboundedly many'} samples in one series; ` +
        `the core holds at most ${limit} (2^32). ${bound}`);
  const minQueries = s.minQueryCount;
  switch (s.scenario) {
    case 'Server': {
      checkServerIssueTime(s, Math.max(minQueries, 1), 'minQueryCount, at least 1');
      if (minQueries > limit) throw tooMany('minQueryCount', minQueries, minQueries, `minQueryCount must be at most ${limit}.`);
      const queries = serverDurationQueries(s.minDurationMs, s.serverTargetQps);
      if (queries > limit) {
        const maxQps = 1e9 * Math.log1p(MAX_SERVER_DURATION_QUERIES / (s.minDurationMs * 1e6));
        throw tooMany('serverTargetQps', s.serverTargetQps, queries,
          `For minDurationMs ${s.minDurationMs} serverTargetQps must be at most ${limitText(maxQps, false)}.`);
      }
      return;
    }
    case 'SingleStream':
    case 'MultiStream': {
      const key = s.scenario === 'SingleStream' ? 'singleStreamExpectedLatencyNs' : 'multiStreamExpectedLatencyNs';
      const latencyNs = s[key];
      const samplesPerQuery = s.scenario === 'MultiStream' ? s.multiStreamSamplesPerQuery : 1;
      // The core's evaluation (spec/20 §3.4): period = int64((1 / (1e9 / latency)) * 1e9).
      const genNs = 2 * s.minDurationMs * 1e6;
      const periodNs = Math.trunc((1.0 / (1e9 / latencyNs)) * 1e9);
      if (genNs > 0 && !(periodNs > 0 && periodNs < 2 ** 63)) {
        throw conflict(key, latencyNs, 'expected at most 9.2e18 ns: the query period it implies must fit in int64 nanoseconds.');
      }
      const maxQueries = Math.floor(limit / samplesPerQuery);
      if (minQueries > maxQueries) {
        throw tooMany('minQueryCount', minQueries, minQueries * samplesPerQuery,
          `minQueryCount must be at most ${maxQueries} here (${limit} / ${samplesPerQuery} samples per query).`);
      }
      const byDuration = genNs > 0 ? Math.trunc(genNs / periodNs + 2) : 0;
      if (byDuration > maxQueries) {
        throw tooMany(key, latencyNs, byDuration * samplesPerQuery,
          `For minDurationMs ${s.minDurationMs} ${key} must be at least ${limitText(genNs / (maxQueries - 2), true)} (ns).`);
      }
      return;
    }
    case 'Offline': {
      if (s.performanceIssueUnique) return;  // the query holds the loaded set
      // spec/10 §3 Step 3, same evaluation order.
      const seconds = s.minDurationMs / 1000.0;
      const target = Math.trunc(1.1 * seconds * s.offlineExpectedQps);
      if (minQueries > limit) throw tooMany('minQueryCount', minQueries, minQueries, `minQueryCount must be at most ${limit}.`);
      if (target > limit) {
        throw tooMany('offlineExpectedQps', s.offlineExpectedQps, target,
          `For minDurationMs ${s.minDurationMs} offlineExpectedQps must be at most ${limitText(limit / (1.1 * seconds), false)}.`);
      }
      return;
    }
  }
}

/**
 * Throws {@link SettingsError} (key `mode`) unless the mode can run with
 * these settings: FindPeakPerformance searches Server QPS, so it needs the
 * Server scenario (the reference logs an error and runs nothing otherwise).
 */
export function assertRunnableMode(settings: Pick<ResolvedTestSettings, 'mode' | 'scenario'>): void {
  if (settings.mode === 'FindPeakPerformance' && settings.scenario !== 'Server') {
    throw new SettingsError('mode', settings.mode,
      `mode 'FindPeakPerformance' searches the Server scenario's peak QPS; scenario is '${settings.scenario}'. ` +
        'Use scenario Server, or another mode (PerformanceOnly, AccuracyOnly, SubmissionRun).');
  }
}

// ---------------------------------------------------------------------------
// QSL-dependent checks
// ---------------------------------------------------------------------------

/** The QSL counts {@link resolveQslDependentChecks} needs. */
export interface QslCounts {
  /** Samples in the dataset; integer in [1, 2^32-1]. */
  readonly totalSampleCount: number;
  /** Samples that fit in RAM; integer >= 1 (may exceed totalSampleCount here, as in the reference; startTest refuses that). */
  readonly performanceSampleCount: number;
}

const QSL_TOTAL_LIMIT = runSettingLimit('qsl_total_sample_count');
/**
 * The most samples a run shuffles and loads at once (the core's
 * loaded_sample_count: a number[] for loadSamplesToRam holds at most 2^27 - 3,
 * and 2^32 - 1 indices alone would take the core 17 GB).
 */
const LOADED_SAMPLE_LIMIT = runSettingLimit('loaded_sample_count').max;

/**
 * Checks that need the QSL's counts; call it when the QSL is known, before the
 * run. Throws {@link SettingsError} with keys such as `qsl.totalSampleCount` or
 * the offending setting's camelCase name.
 */
export function resolveQslDependentChecks(settings: ResolvedTestSettings, qsl: QslCounts): void {
  const total: unknown = qsl.totalSampleCount;
  const pc: unknown = qsl.performanceSampleCount;
  if (typeof total !== 'number' || !Number.isInteger(total) || total < QSL_TOTAL_LIMIT.min || total > QSL_TOTAL_LIMIT.max) {
    throw new SettingsError('qsl.totalSampleCount', total,
      `Invalid QSL qsl.totalSampleCount = ${show(total)}: expected an integer in [${QSL_TOTAL_LIMIT.min}, ${QSL_TOTAL_LIMIT.max}].`);
  }
  if (typeof pc !== 'number' || !Number.isSafeInteger(pc) || pc < 1) {
    throw new SettingsError('qsl.performanceSampleCount', pc,
      `Invalid QSL qsl.performanceSampleCount = ${show(pc)}: expected an integer >= 1 (values above totalSampleCount ${total} are capped to it).`);
  }
  const effectivePc = settings.performanceSampleCountOverride === 0 ? pc : settings.performanceSampleCountOverride;
  // The loaded set holds min(pc, total) samples (spec/20 §2); positions past it are out of range.
  const loaded = Math.min(effectivePc, total);
  checkLoadedSetSizes(settings, total, pc);
  if (settings.performanceIssueSame && settings.performanceIssueSameIndex >= loaded) {
    throw new SettingsError('performanceIssueSameIndex', settings.performanceIssueSameIndex,
      `Invalid test setting performanceIssueSameIndex = ${settings.performanceIssueSameIndex}: expected an integer in [0, ${loaded - 1}]; ` +
        `it is a position in the loaded set of ${loaded} samples (min(performance sample count ${effectivePc}, qsl.totalSampleCount ${total})).`);
  }
  // min_q = loaded / pc = 0 when pc > total: 0 queries, and the reference crashes.
  if (settings.scenario === 'Offline' && settings.performanceIssueUnique && effectivePc > total) {
    const key = settings.performanceSampleCountOverride === 0 ? 'qsl.performanceSampleCount' : 'performanceSampleCountOverride';
    throw new SettingsError(key, effectivePc,
      `Invalid ${key} = ${effectivePc}: Offline with performanceIssueUnique needs a performance sample count <= qsl.totalSampleCount (${total}), otherwise no query is generated.`);
  }
  // Server accuracy series honour the schedule too, one query per sample
  // (spec/20 §4); performanceIssueUnique issues the loaded set.
  if (settings.scenario === 'Server') {
    if (settings.mode === 'AccuracyOnly' || settings.mode === 'SubmissionRun') {
      const accuracyCount = Math.min(settings.accuracySampleCountOverride === 0 ? total : settings.accuracySampleCountOverride, total);
      checkServerIssueTime(settings, accuracyCount, 'the accuracy sample count');
    }
    if (settings.performanceIssueUnique) checkServerIssueTime(settings, loaded, 'the loaded set, performanceIssueUnique');
  }
  // Division by the QSL's own count (spec/10 §3 Step 4); already ensured by pc >= 1, kept explicit.
  if (settings.scenario === 'SingleStream' && settings.sampleConcatenatePermutation && pc < 1) {
    throw new SettingsError('qsl.performanceSampleCount', pc,
      `Invalid QSL qsl.performanceSampleCount = ${pc}: SingleStream with sampleConcatenatePermutation needs it > 0.`);
  }
}

/**
 * The sets a run shuffles and loads (spec/20 §2: min(performance sample
 * count, total) for the performance phase, min(accuracy sample count, total)
 * for the accuracy phase) at most {@link LOADED_SAMPLE_LIMIT} samples each,
 * refused naming the count that decides. The core checks the same
 * (check_run_bounds).
 */
function checkLoadedSetSizes(settings: ResolvedTestSettings, total: number, pc: number): void {
  const limit = LOADED_SAMPLE_LIMIT;
  const refuse = (key: string, value: number, loaded: number, what: string, lower: string): SettingsError =>
    new SettingsError(key, value,
      `Invalid ${key} = ${value}: the ${what} would hold ${loaded} samples, more than the ${limit} loadgen can shuffle and load at once ` +
        `(each costs the core 4 bytes and the JS QSL's number[] 8; a JS array holds at most 2^27 - 3). Set ${lower} to at most ${limit}.`);
  if (settings.mode !== 'AccuracyOnly') {
    const overridden = settings.performanceSampleCountOverride !== 0;
    const count = overridden ? settings.performanceSampleCountOverride : pc;
    const loaded = Math.min(count, total);
    if (loaded > limit) {
      throw refuse(overridden ? 'performanceSampleCountOverride' : 'qsl.performanceSampleCount', count, loaded,
        'performance sample set',
        `${overridden ? '' : "the QSL's performanceSampleCount or "}performanceSampleCountOverride (performance_sample_count_override)`);
    }
  }
  if (settings.mode === 'AccuracyOnly' || settings.mode === 'SubmissionRun') {
    const overridden = settings.accuracySampleCountOverride !== 0;
    const count = overridden ? settings.accuracySampleCountOverride : total;
    const loaded = Math.min(count, total);
    if (loaded > limit) {
      throw refuse(overridden ? 'accuracySampleCountOverride' : 'qsl.totalSampleCount', count, loaded,
        "accuracy run's sample list", 'accuracySampleCountOverride (accuracy_sample_count_override)');
    }
  }
}

/**
 * The one validation of a run's complete settings, after every config layer:
 * the cross-field rules, the mode, and the rules that need the QSL's counts.
 * Throws {@link SettingsError} on the first problem.
 */
export function validateRunSettings(settings: ResolvedTestSettings, qsl: QslCounts): void {
  checkCombinations(settings);
  assertRunnableMode(settings);
  resolveQslDependentChecks(settings, qsl);
}
