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
import type { ResolvedTestSettings, TestSettings } from './types.js';

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
  // Division by the QSL's own count (spec/10 §3 Step 4); already ensured by pc >= 1, kept explicit.
  if (settings.scenario === 'SingleStream' && settings.sampleConcatenatePermutation && pc < 1) {
    throw new SettingsError('qsl.performanceSampleCount', pc,
      `Invalid QSL qsl.performanceSampleCount = ${pc}: SingleStream with sampleConcatenatePermutation needs it > 0.`);
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
