/**
 * Settings written as text: the CLI's `--set key=value` and objects with the
 * reference's snake_case field names.
 */
import { SettingsError } from '../errors.js';
import { FIELD_BY_NAME, FIELD_BY_SNAKE, LOG_FIELD_BY_NAME, LOG_FIELD_BY_SNAKE, type SettingField } from './fields.js';
import { closest, echo, show } from './messages.js';
import { numeralLengthProblem, readIntegerText } from './numerals.js';
import type { ResolvedTestSettings, TestSettings, TestSettingsInput } from '../types/settings.js';
import { assertPlainObject, checkValue } from './validate.js';

/** One parsed `--set` assignment: a camelCase key and its typed value. */
export type SettingAssignment = {
  [K in keyof TestSettings]: { key: K; value: ResolvedTestSettings[K] };
}[keyof TestSettings];

const DOUBLE_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Parses the text of one value according to the field kind (before range checks). */
function parseText(field: SettingField, key: string, text: string): unknown {
  const t = text.trim();
  const bad = (expected: string): SettingsError =>
    new SettingsError(key, text, `Invalid test setting ${key} = ${show(text)}: expected ${expected}.`);
  switch (field.kind) {
    case 'enum': {
      const values = field.constraints.values ?? [];
      // Integers as in the reference config key `mode` (0..3 = declaration order).
      if (/^\d+$/.test(t) && Number(t) < values.length) return values[Number(t)];
      return t; // checkValue rejects unknown names with a suggestion
    }
    case 'bool': {
      const l = t.toLowerCase();
      if (l === 'true' || l === '1') return true;
      if (l === 'false' || l === '0') return false;
      throw bad('true, false, 1 or 0');
    }
    case 'seed': {
      const r = readIntegerText(t);
      const allowed = 'an unsigned 64-bit integer in decimal digits, 0..18446744073709551615';
      if (!r.ok) throw bad(`${allowed}; ${r.problem}`);
      if (r.negative) throw bad(allowed);
      return r.value;
    }
    case 'uint64':
    case 'int': {
      // The grammar config files use too (numerals.ts): a non-integer is refused, never rounded.
      const r = readIntegerText(t);
      if (!r.ok) throw bad(`${field.allowed} in decimal digits; ${r.problem}`);
      if (field.kind === 'uint64' && r.negative) throw bad(`${field.allowed}; the field is unsigned`);
      return Number(r.value);
    }
    case 'double': {
      const tooLong = numeralLengthProblem(t);
      if (tooLong !== undefined) throw bad(`${field.allowed}; ${tooLong}`);
      if (!DOUBLE_RE.test(t)) throw bad(`${field.allowed} (decimal notation)`);
      return Number(t);
    }
  }
}

/**
 * Parses one CLI `--set key=value`. The key is a reference snake_case name
 * (e.g. `server_target_qps`; `ttft_latency`/`tpot_latency` are accepted too) or
 * a camelCase name. Values: enum names (or their integer values, as in the
 * reference config), booleans true/false/1/0, decimal integers (seeds up to
 * 2^64-1), decimal doubles. The value is range-checked like
 * {@link resolveTestSettings} does for a single field (cross-field rules apply
 * when the whole settings object is resolved).
 */
export function parseSettingAssignment(text: string): SettingAssignment {
  const eq = text.indexOf('=');
  if (eq < 0) {
    throw new SettingsError(text, text, `Invalid --set ${show(text)}: expected key=value, e.g. server_target_qps=100.`);
  }
  const key = text.slice(0, eq).trim();
  const raw = text.slice(eq + 1);
  const field = FIELD_BY_SNAKE.get(key) ?? FIELD_BY_NAME.get(key);
  if (field === undefined) {
    let problem: string;
    if (LOG_FIELD_BY_NAME.has(key) || LOG_FIELD_BY_SNAKE.has(key)) {
      problem = `${key} is a log setting, not a test setting.`;
    } else {
      const s = closest(key, FIELD_BY_SNAKE.keys());
      problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen test setting (`loadgen settings` lists them all, with their values).';
    }
    throw new SettingsError(key, raw, `Unknown test setting '${echo(key)}' in --set ${show(text)}: ${problem}`);
  }
  const parsed = parseText(field, key, raw);
  const value = checkValue('test setting', field, key, parsed, raw);
  return { key: field.name, value } as SettingAssignment;
}

/** Parses a list of `--set key=value` texts into test settings; a later assignment wins. */
export function settingsFromAssignments(list: readonly string[]): TestSettingsInput {
  const out: Record<string, unknown> = {};
  for (const text of list) {
    const { key, value } = parseSettingAssignment(text);
    out[key] = value;
  }
  return out as TestSettingsInput;
}

/**
 * Renames a snake_case settings object (reference field names, e.g. a JSON
 * config or the golden `run_settings.json`) to {@link TestSettingsInput}.
 * Values are passed through unchanged (validate with {@link resolveTestSettings}).
 * Unknown keys throw {@link SettingsError} with a suggestion.
 */
export function fromSnakeCaseSettings(input: unknown): TestSettingsInput {
  assertPlainObject('test setting', input);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const field = FIELD_BY_SNAKE.get(key);
    if (field === undefined) {
      const camel = FIELD_BY_NAME.get(key);
      const s = camel?.snake ?? closest(key, FIELD_BY_SNAKE.keys());
      const problem = s !== undefined ? `did you mean '${s}'?` : 'not a loadgen test setting (see SETTINGS_FIELDS).';
      throw new SettingsError(key, value, `Unknown test setting '${echo(key)}': ${problem}`);
    }
    out[field.name] = value;
  }
  return out as TestSettingsInput;
}
