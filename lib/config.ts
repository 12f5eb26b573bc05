/**
 * Config files: mlperf.conf, user.conf and audit.config (spec/10 §4, §5).
 *
 * The values are always computed by the native loader, which reproduces the
 * reference's `TestSettings::FromConfig` exactly (grammar quirks included).
 * Beyond the reference, every file is first linted here: by default a line
 * the reference would misread, silently ignore or reject (a typo'd key, a
 * missing space around `=`, a trailing comment, a value out of range) is a
 * {@link ConfigFileError} naming the file, line, key, value and what is
 * allowed. `lenient: true` applies the files exactly as the reference does
 * and reports those problems as warnings.
 */
import { readFileSync } from 'node:fs';

import { ConfigFileError, SettingsError, type ConfigProblem } from './errors.js';
import {
  loadNative,
  type NativeConfigLoadInput,
  type NativeConfigLoadResult,
  type NativeConfigProvenance,
  type NativeEffectiveRecord,
  type NativeLogEntry,
  type NativeMessage,
  type NativeTestSettings,
} from './native.js';
import { nativeTables, type ConfigConversion } from './native-tables.js';
import {
  resolveTestSettingFields,
  resolveTestSettings,
  SCENARIOS,
  SETTINGS_FIELDS,
  suggestName,
  TEST_MODES,
  toNativeSettings,
  validateSettingValue,
  type Scenario,
  type SettingField,
  type TestSettings,
  type TestSettingsInput,
} from './settings.js';

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

/** A config file: a path (string or `{ path }`), or inline text with an optional display name. */
export type ConfigSource = string | { readonly path: string } | { readonly text: string; readonly name?: string };

/** Which kind of config file: decides which keys it may set (spec/10 §4). */
export type ConfigRole = 'mlperf.conf' | 'user.conf' | 'audit.config';

/** Settings applied on top of the config files (before audit.config), e.g. CLI `--set`. */
export interface SettingsLayer {
  /** How provenance names this layer, e.g. `--set`. */
  readonly label: string;
  readonly settings: TestSettingsInput;
}

/** Options of {@link loadSettings}. */
export interface LoadSettingsOptions {
  /**
   * The system config. Default `'builtin'`: the mlperf.conf compiled into
   * loadgen (LoadGen 6.0.17's). A source replaces it; `false` skips it (only
   * allowed without a user.conf, which always applies mlperf.conf first).
   */
  readonly mlperfConf?: ConfigSource | 'builtin' | false;
  /** user.conf, applied after mlperf.conf (FromConfig with conf_type 1). */
  readonly userConf?: ConfigSource;
  /** audit.config, applied last (model `*`, as StartTest does). */
  readonly auditConf?: ConfigSource;
  /** Model name used for the lookups (`<model>.<scenario>.<key>`); `*` matches only wildcard lines. */
  readonly model: string;
  /** Scenario of the run; also the scenario used for the lookups. */
  readonly scenario: Scenario;
  /** Apply exactly as the reference does; lint problems become warnings. Default false. */
  readonly lenient?: boolean;
  /** Settings before the config files (the reference's TestSettings the user filled in first). */
  readonly base?: TestSettingsInput;
  /** Applied after user.conf and before audit.config, in order. */
  readonly overrides?: readonly SettingsLayer[];
}

/** Where a setting's value came from. */
export type SettingOrigin = 'default' | 'base' | 'argument' | 'mlperf.conf' | 'user.conf' | 'override' | 'audit.config';

/** The source of one setting's effective value. */
export interface SettingSource {
  /** camelCase field name. */
  readonly field: keyof TestSettings;
  /** Reference snake_case field name. */
  readonly snake: string;
  readonly origin: SettingOrigin;
  /** mlperf.conf origin: true for the built-in copy. */
  readonly builtin?: boolean;
  /** Config origins: the file path or name, the 1-based line, the full key that matched and the raw value. */
  readonly file?: string;
  readonly line?: number;
  readonly key?: string;
  readonly value?: string;
  /** Override origin: the layer label (e.g. `--set`). */
  readonly label?: string;
  /** One-line description, e.g. `user.conf:3 resnet50.Server.target_qps = 100`. */
  readonly description: string;
}

/** Result of {@link loadSettings}. */
export interface LoadedSettings {
  /** Every test setting, camelCase, ready for startTest. */
  readonly settings: TestSettingsInput;
  /** Source of every field, in SETTINGS_FIELDS order. */
  readonly provenance: Map<keyof TestSettings, SettingSource>;
  /** Problems that did not stop loading (lint warnings; in lenient mode also lint errors and reference errors). */
  readonly warnings: string[];
  /** The reference TestSettings after everything (snake_case, enums as names, exact uint64 as bigint when large). */
  readonly referenceSettings: Record<string, number | bigint | boolean | string>;
  /** FromConfig return codes: 0 ok, -2 file not opened, -22 a line did not parse (nothing applied from the file). */
  readonly returnCodes: { readonly mlperf?: number; readonly user?: number; readonly audit?: number };
  /** What the reference would log while loading (errors, the audit warning), in order. */
  readonly messages: NativeMessage[];
}

// ---------------------------------------------------------------------------
// The config keys (spec/10 §2 "Config key", §4.3)
// ---------------------------------------------------------------------------

/** How a raw value becomes the field value (native/config_keys.h). */
type Conversion = ConfigConversion;

interface KeyTarget {
  /** Fixed scenario the lookup uses, or 'arg' for the scenario argument. */
  readonly scenario: Scenario | 'arg';
  readonly field: keyof TestSettings;
  readonly conversion: Conversion;
  readonly multiplier: number;
}

interface ConfigKeyDef {
  readonly targets: readonly KeyTarget[];
  /** Read only from mlperf.conf (conf_type 0). */
  readonly mlperfOnly?: boolean;
  /** Read only when this flag is already true at that point of the call. */
  readonly onlyWith?: keyof TestSettings;
  /** Unit of the value in the file. */
  readonly unit?: 'ms' | 'percent';
}

/**
 * The keys the native parser applies (its table, native/config_keys.h), in
 * its order; a key's targets in scenario order, as messages name them.
 */
function configKeysFromNative(): Map<string, ConfigKeyDef> {
  const camel = new Map(SETTINGS_FIELDS.map((f) => [f.snake, f.name]));
  const rank = (scenario: Scenario | 'arg'): number => (scenario === 'arg' ? -1 : SCENARIOS.indexOf(scenario));
  const keys = new Map<string, ConfigKeyDef & { targets: KeyTarget[] }>();
  for (const row of nativeTables().configKeys) {
    let def = keys.get(row.key);
    if (def === undefined) {
      def = {
        targets: [],
        ...(row.mlperfOnly ? { mlperfOnly: true } : {}),
        ...(row.onlyWith !== undefined ? { onlyWith: camel.get(row.onlyWith)! } : {}),
        ...(row.unit === 'ms' || row.unit === 'percent' ? { unit: row.unit } : {}),
      };
      keys.set(row.key, def);
    }
    def.targets.push({ scenario: row.scenario, field: camel.get(row.field)!, conversion: row.conversion, multiplier: row.multiplier });
  }
  for (const def of keys.values()) def.targets.sort((x, y) => rank(x.scenario) - rank(y.scenario));
  return keys;
}

const CONFIG_KEYS: ReadonlyMap<string, ConfigKeyDef> = configKeysFromNative();

/** Keys the shipped mlperf.conf contains but the reference never reads. */
const UNREAD_KEYS: ReadonlyMap<string, string> = new Map([
  ['target_duration', 'the reference never reads target_duration'],
]);

/** Every key a config file may contain (the reference reads them), in the order of spec/10 §4.3. */
export const CONFIG_FILE_KEYS: readonly string[] = Object.freeze([...CONFIG_KEYS.keys()]);

const FIELD_BY_NAME = new Map<string, SettingField>(SETTINGS_FIELDS.map((f) => [f.name, f]));
const FIELD_BY_SNAKE = new Map<string, SettingField>(SETTINGS_FIELDS.map((f) => [f.snake, f]));
/** A TestSettings field name → its config key (users often write the field name). */
const CONFIG_KEY_OF_FIELD = new Map<string, string>();
for (const [key, def] of CONFIG_KEYS) {
  for (const target of def.targets) {
    const snake = FIELD_BY_NAME.get(target.field)!.snake;
    if (snake !== key) CONFIG_KEY_OF_FIELD.set(snake, key);
  }
}

const UINT64_MAX = (1n << 64n) - 1n;
const INT32_MAX = 2147483647n;

// ---------------------------------------------------------------------------
// Lint
// ---------------------------------------------------------------------------

/** The characters the reference's tokenizer (`istringstream >>`) treats as separators. */
const SPACE_RE = /[ \t\n\v\f\r]+/;

/** Same grammar the reference accepts as a number, restricted to what means what it looks like. */
const NEG_INT_RE = /^-\d+$/;
const HEX_INT_RE = /^\+?0[xX][0-9a-fA-F]+$/;
const LEADING_ZERO_RE = /^[+-]?0\d+$/;
const DEC_FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The integer the reference's `strtoull(raw, nullptr, 0)` reads (prefix parse, wrapping negatives). */
function referenceInteger(raw: string): bigint {
  const m = /^\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)?/.exec(raw);
  if (m === null || m[2] === undefined) return 0n;
  const digits = m[2];
  let v: bigint;
  if (/^0[xX]/.test(digits)) v = BigInt(digits);
  else if (digits.length > 1 && digits.startsWith('0')) v = BigInt(`0o${digits.slice(1)}`);
  else v = BigInt(digits);
  if (v > UINT64_MAX) v = UINT64_MAX; // strtoull saturates
  return m[1] === '-' ? (UINT64_MAX + 1n - v) & UINT64_MAX : v;
}

/** Rounds computed bounds for messages (0.001, not 0.0010000000000000002). */
function num(x: number): string {
  return String(Number(x.toPrecision(12)));
}

function unitText(def: ConfigKeyDef): string {
  return def.unit === 'ms' ? ' (ms)' : def.unit === 'percent' ? ' (percent)' : '';
}

/** What a config value may be, in the file's units. */
function allowedInFile(def: ConfigKeyDef, target: KeyTarget): string {
  const field = FIELD_BY_NAME.get(target.field)!;
  const c = field.constraints;
  const u = unitText(def);
  switch (target.conversion) {
    case 'mode':
      return TEST_MODES.map((m, i) => `${i} (${m})`).join(', ').replace(/, ([^,]*)$/, ' or $1');
    case 'eq1':
    case 'nonzero':
      return '0 or 1';
    case 'int32':
      return 'an integer in [0, 2147483647] (0 = unlimited)';
    case 'int': {
      if (field.kind === 'seed') return 'an integer in [0, 18446744073709551615]';
      const zero = c.zeroAllowedWith !== undefined ? `, or 0 when ${FIELD_BY_NAME.get(c.zeroAllowedWith)!.snake} is 1` : '';
      const min = c.min !== undefined ? Math.ceil(c.min / target.multiplier - 1e-9) : 0;
      return min > 0 ? `an integer >= ${min}${u}${zero}` : `a non-negative integer${u}`;
    }
    case 'double': {
      const m = target.multiplier;
      if (c.min !== undefined && c.max !== undefined) {
        return `a number in ${c.exclusiveMin === true ? '(' : '['}${num(c.min / m)}, ${num(c.max / m)}${c.exclusiveMax === true ? ')' : ']'}${u}`;
      }
      if (c.min !== undefined) return `a number ${c.exclusiveMin === true ? '>' : '>='} ${num(c.min / m)}${u}`;
      return `a finite number${u}`;
    }
  }
}

interface LineProblem {
  severity: 'error' | 'warning';
  key: string;
  value: string;
  text: string;
}

/** A parsed setting line: `<model>.<scenario>.<name> = <value>`. */
interface ParsedKey {
  model: string;
  scenario: string;
  name: string;
}

function splitKey(full: string): ParsedKey | undefined {
  const last = full.lastIndexOf('.');
  if (last <= 0) return undefined;
  const second = full.lastIndexOf('.', last - 1);
  if (second <= 0) return undefined;
  return { model: full.slice(0, second), scenario: full.slice(second + 1, last), name: full.slice(last + 1) };
}

function unknownKeyProblem(name: string): string {
  const asKey = CONFIG_KEY_OF_FIELD.get(name);
  if (asKey !== undefined) {
    return `'${name}' is the TestSettings field name; the config key is '${asKey}'${unitText(CONFIG_KEYS.get(asKey)!)}.`;
  }
  if (CONFIG_KEYS.has(name.toLowerCase())) return `config keys are lower case: did you mean '${name.toLowerCase()}'?`;
  const s = suggestName(name, [...CONFIG_KEYS.keys(), ...CONFIG_KEY_OF_FIELD.keys()]);
  const suggestion = s === undefined ? '' : ` Did you mean '${CONFIG_KEY_OF_FIELD.get(s) ?? s}'?`;
  return `unknown config key '${name}' (the reference stores it and never reads it).${suggestion} Known keys: ${CONFIG_FILE_KEYS.join(', ')}.`;
}

/** Checks one value against every field the key reaches from this scenario segment. */
function checkValue(def: ConfigKeyDef, name: string, targets: readonly KeyTarget[], raw: string): string | undefined {
  if (LEADING_ZERO_RE.test(raw)) {
    return `'${raw}' has a leading zero: the reference reads it as octal (${referenceInteger(raw)}); write the number without leading zeros.`;
  }
  const hex = HEX_INT_RE.test(raw);
  if (!hex && !DEC_FLOAT_RE.test(raw)) {
    return `'${raw}' is not a decimal number (NaN, Infinity and hexadecimal fractions are not accepted); expected ${allowedInFile(def, targets[0]!)}.`;
  }
  const numeric = hex ? Number(BigInt(raw.replace('+', ''))) : Number(raw);
  for (const target of targets) {
    const allowed = allowedInFile(def, target);
    const field = FIELD_BY_NAME.get(target.field)!;
    let value: unknown;
    if (target.conversion === 'double') {
      value = numeric * target.multiplier;
    } else {
      if (NEG_INT_RE.test(raw) || (numeric < 0 && !Object.is(numeric, -0))) {
        return `expected ${allowed}; the reference reads '${raw}' as ${referenceInteger(raw)} (unsigned).`;
      }
      const read = referenceInteger(raw);
      if (!hex && Number(read) !== numeric) {
        return `expected ${allowed}; '${name}' is read as an integer, so the reference reads '${raw}' as ${read}.`;
      }
      const scaled = read * BigInt(target.multiplier);
      if (scaled > UINT64_MAX) return `expected ${allowed}; ${raw} overflows 64 bits.`;
      switch (target.conversion) {
        case 'mode':
          if (read > 3n) return `expected ${allowed}.`;
          value = TEST_MODES[Number(read)];
          break;
        case 'eq1':
        case 'nonzero':
          if (read > 1n) return `expected ${allowed}; the reference reads ${read} as ${target.conversion === 'eq1' ? 'false (only 1 is true)' : 'true'}.`;
          value = read === 1n;
          break;
        case 'int32':
          if (read > INT32_MAX) return `expected ${allowed}; the reference stores int(${read}), which is ${BigInt.asIntN(32, read)}.`;
          value = Number(read);
          break;
        default:
          if (field.kind === 'seed') value = scaled;
          else if (scaled > BigInt(Number.MAX_SAFE_INTEGER)) return `expected ${allowed}; ${raw} is above 2^53-1 once converted.`;
          else value = Number(scaled);
      }
    }
    try {
      validateSettingValue(target.field, value);
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error;
      return `expected ${allowed} (it sets ${field.snake}).`;
    }
  }
  return undefined;
}

/** Lints one line; undefined when it is fine. */
function lintLine(tokens: string[], role: ConfigRole): LineProblem | undefined {
  const first = tokens[0]!;
  const err = (key: string, value: string, text: string): LineProblem => ({ severity: 'error', key, value, text });
  const warn = (key: string, value: string, text: string): LineProblem => ({ severity: 'warning', key, value, text });
  if (first === '#') return undefined;
  if (first.startsWith('#')) {
    if (tokens.length === 1) return undefined; // '#####': ignored by the reference too
    return err(first, tokens.slice(1).join(' '),
      `'${first}' starts a comment without a space after '#': the reference reads '${first}' as a key and rejects the whole file. Write '# ${first.slice(1)}'.`);
  }
  if (tokens.length === 1) {
    const eq = first.indexOf('=');
    if (eq >= 0) {
      return err(first.slice(0, eq), first.slice(eq + 1),
        `'${first}' needs spaces around '=': the reference silently ignores this line. Write '${first.slice(0, eq)} = ${first.slice(eq + 1)}'.`);
    }
    return err(first, '', `expected '<model>.<scenario>.<key> = <value>'; a key alone is silently ignored by the reference.`);
  }
  const key = first;
  const second = tokens[1]!;
  if (key.endsWith('=')) {
    return err(key.slice(0, -1), tokens.slice(1).join(' '), `'${key}' needs a space before '=': the reference rejects the whole file.`);
  }
  if (second === '#') return err(key, '', `'${key}' has no value (the reference ignores the line): expected '${key} = <value>'.`);
  if (second !== '=') {
    const glued = second.startsWith('=') ? ` Write '${key} = ${second.slice(1)}'.` : '';
    return err(key, tokens.slice(1).join(' '), `expected '=' after '${key}', found '${second}': the reference rejects the whole file.${glued}`);
  }
  if (tokens.length === 2) return err(key, '', `'${key} =' has no value (the reference ignores the line).`);
  const raw = tokens[2]!;
  if (tokens.length > 3) {
    const rest = tokens.slice(3).join(' ');
    if (tokens[3]!.startsWith('#')) {
      return err(key, raw, `trailing comment '${rest}': the reference reads '#' as a value and rejects the whole file. Put comments on their own line.`);
    }
    return err(key, `${raw} ${rest}`, `one value per line expected, found '${raw} ${rest}' (the reference keeps the last one).`);
  }
  const parsed = splitKey(key);
  if (parsed === undefined) {
    return err(key, raw, `'${key}' is not '<model>.<scenario>.<key>' (use '*' for any model or scenario): the reference never matches it.`);
  }
  if (parsed.scenario !== '*' && !(SCENARIOS as readonly string[]).includes(parsed.scenario)) {
    const s = suggestName(parsed.scenario, SCENARIOS);
    return err(key, raw, `unknown scenario '${parsed.scenario}' in '${key}': expected one of ${SCENARIOS.join(', ')} or '*'${s !== undefined ? `; did you mean '${s}'?` : '.'}`);
  }
  const def = CONFIG_KEYS.get(parsed.name);
  if (def === undefined) {
    const unread = UNREAD_KEYS.get(parsed.name);
    if (unread !== undefined) return warn(key, raw, `${unread}; the line has no effect.`);
    if (/^test\d{2}_\w+$/.test(parsed.name)) {
      return warn(key, raw, `'${parsed.name}' is a compliance-test key LoadGen ignores (used by the compliance scripts).`);
    }
    return err(key, raw, unknownKeyProblem(parsed.name));
  }
  if (def.mlperfOnly === true && role !== 'mlperf.conf') {
    return err(key, raw, `'${parsed.name}' is read only from mlperf.conf; the reference ignores it in ${role}.`);
  }
  if (role === 'audit.config' && parsed.model !== '*') {
    // The shipped TEST04 audit.config has such lines on purpose.
    return warn(key, raw, `model-specific line: audit.config is applied with model '*', so the reference never applies it.`);
  }
  const targets = def.targets.filter((x) => x.scenario === 'arg' || parsed.scenario === '*' || x.scenario === parsed.scenario);
  if (targets.length === 0) {
    const where = [...new Set(def.targets.map((x) => x.scenario))].join(', ');
    return warn(key, raw, `the reference reads '${parsed.name}' only for ${where}; the line has no effect for ${parsed.scenario}.`);
  }
  const problem = checkValue(def, parsed.name, targets, raw);
  if (problem !== undefined) return err(key, raw, problem);
  return undefined;
}

/**
 * Lints a config text against the reference grammar (spec/10 §4.1) and the
 * loadgen field constraints. Returns every problem (errors and warnings) with
 * its 1-based line; the text itself is never applied here.
 */
export function lintConfigText(text: string, file: string, role: ConfigRole): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, number>();
  // Lines as the reference's std::getline splits them ('\n' only; '\r' is a space).
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => {
    const tokens = line.split(SPACE_RE).filter((x) => x !== '');
    if (tokens.length === 0) return;
    const p = lintLine(tokens, role);
    const lineNo = i + 1;
    if (p !== undefined) {
      problems.push({ ...p, file, line: lineNo, message: `${file}:${lineNo}: ${tokens.join(' ')}: ${p.text}` });
      if (p.severity === 'error') return;
    }
    if (tokens.length >= 3 && tokens[1] === '=' && !tokens[0]!.startsWith('#')) {
      const earlier = seen.get(tokens[0]!);
      if (earlier !== undefined) {
        problems.push({
          severity: 'warning', key: tokens[0]!, value: tokens[2]!, file, line: lineNo,
          message: `${file}:${lineNo}: ${tokens[0]} = ${tokens[2]}: repeats the key of line ${earlier}; this later line wins.`,
          text: 'repeated key',
        });
      }
      seen.set(tokens[0]!, lineNo);
    }
  });
  return problems;
}

// ---------------------------------------------------------------------------
// loadSettings
// ---------------------------------------------------------------------------

interface ReadSource {
  /** Name in messages and provenance. */
  label: string;
  /** The text for the lint; undefined when the file could not be read. */
  text: string | undefined;
  readError?: string;
  /** For the native loader. */
  native: { text: string } | { path: string };
}

function readSource(source: ConfigSource, defaultName: string): ReadSource {
  if (typeof source === 'string' || 'path' in source) {
    const path = typeof source === 'string' ? source : source.path;
    try {
      return { label: path, text: readFileSync(path, 'utf8'), native: { path } };
    } catch (error) {
      return { label: path, text: undefined, readError: (error as Error).message, native: { path } };
    }
  }
  if (typeof source.text !== 'string') {
    throw new SettingsError(defaultName, source, `Invalid ${defaultName} source: expected a path or { text }.`);
  }
  return { label: source.name ?? defaultName, text: source.text, native: { text: source.text } };
}

function nativeInput(prefix: 'mlperfConf' | 'userConf' | 'auditConf', s: ReadSource): Partial<NativeConfigLoadInput> {
  return 'path' in s.native
    ? { [`${prefix}Path`]: s.native.path, [`${prefix}Label`]: s.label }
    : { [`${prefix}Text`]: s.native.text, [`${prefix}Label`]: s.label };
}

/** Collects lint problems: errors throw (strict) or become warnings (lenient). */
class Problems {
  readonly warnings: string[] = [];
  private readonly errors: ConfigProblem[] = [];
  constructor(private readonly lenient: boolean) {}

  add(list: readonly ConfigProblem[]): void {
    for (const p of list) {
      if (p.severity === 'error' && !this.lenient) this.errors.push(p);
      else this.warnings.push(p.message);
    }
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw new ConfigFileError(this.errors);
  }
}

function checkReadable(s: ReadSource, role: ConfigRole, problems: Problems): void {
  if (s.text !== undefined) return;
  problems.add([{
    severity: 'error', file: s.label, line: 0, key: role, value: s.label, text: 'cannot read',
    message: `${s.label}: cannot read the ${role} file: ${s.readError ?? 'unknown error'}`,
  }]);
}

/** Reference record (enum names) → the native input form (enum integers). */
function toNativeRecord(rec: Record<string, number | bigint | boolean | string>): NativeTestSettings {
  const out: NativeTestSettings = { ...rec };
  out.scenario = (SCENARIOS as readonly string[]).indexOf(String(rec.scenario));
  out.mode = (TEST_MODES as readonly string[]).indexOf(String(rec.mode));
  return out;
}

/** Turns the reference's own FromConfig messages and codes into warnings (lenient) or errors (strict). */
function reportNative(
  result: NativeConfigLoadResult,
  labels: { mlperf: string; user?: string; audit?: string },
  problems: Problems,
): void {
  const errors = result.messages.filter((m) => m.isError);
  const list: ConfigProblem[] = errors.map((m) => ({
    severity: 'error', file: '', line: 0, key: m.key, value: m.text, text: m.text,
    message: `the reference's FromConfig logs error ${m.key}: ${m.text}`,
  }));
  const codes: [string | undefined, number | undefined][] = [
    [labels.mlperf, result.returnCodes.mlperf], [labels.user, result.returnCodes.user], [labels.audit, result.returnCodes.audit],
  ];
  for (const [label, code] of codes) {
    if (label === undefined || code === undefined || code === 0) continue;
    const what = code === -2 ? 'could not be opened' : 'has a line the reference cannot parse';
    list.push({
      severity: 'error', file: label, line: 0, key: 'returnCode', value: code, text: what,
      message: `${label} ${what}: FromConfig returned ${code} and applied nothing from it.`,
    });
  }
  problems.add(list);
}


function recordConfigProvenance(
  map: Map<keyof TestSettings, SettingSource>,
  records: readonly NativeConfigProvenance[],
  builtin: boolean,
): void {
  for (const p of records) {
    const field = FIELD_BY_SNAKE.get(p.field);
    if (field === undefined) continue;
    const origin: SettingOrigin = p.confType === 0 ? 'mlperf.conf' : p.confType === 1 ? 'user.conf' : 'audit.config';
    map.set(field.name, {
      field: field.name, snake: field.snake, origin,
      ...(origin === 'mlperf.conf' ? { builtin } : {}),
      file: p.file, line: p.line, key: p.key, value: p.value,
      description: `${p.file}:${p.line} ${p.key} = ${p.value}`,
    });
  }
}

/** Config lines for the token keys that the reference skipped because their flag was off. */
function skippedConditionalLines(
  text: string, file: string, model: string, records: readonly NativeConfigProvenance[], flags: Record<string, unknown>,
): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    const tokens = line.split(SPACE_RE).filter((x) => x !== '');
    if (tokens.length !== 3 || tokens[1] !== '=') return;
    const k = splitKey(tokens[0]!);
    const def = k && CONFIG_KEYS.get(k.name);
    if (!k || !def?.onlyWith || (k.model !== '*' && k.model !== model)) return;
    if (records.some((r) => r.file === file && r.line === i + 1)) return;
    const flag = FIELD_BY_NAME.get(def.onlyWith)!.snake;
    if (flags[flag] === true) return; // overridden by a more specific line, not skipped
    out.push(`${file}:${i + 1}: ${tokens[0]} = ${tokens[2]}: not applied: the reference reads '${k.name}' only when ${flag} is already 1.`);
  });
  return out;
}

/**
 * Loads mlperf.conf, user.conf and audit.config for a model and scenario as
 * the reference does (`FromConfig` with conf_type 1, then the StartTest
 * audit.config override), after linting each file. Throws
 * {@link ConfigFileError} (a {@link SettingsError}) listing every problem
 * unless `lenient`. The returned settings pass startTest's validation in
 * strict mode (a value loadgen cannot run is an error naming its config line).
 */
export function loadSettings(options: LoadSettingsOptions): LoadedSettings {
  const lenient = options.lenient === true;
  const problems = new Problems(lenient);
  if (typeof options.model !== 'string' || options.model === '' || /\s/.test(options.model)) {
    throw new SettingsError('model', options.model, `Invalid model ${JSON.stringify(options.model)}: expected a non-empty name without spaces (or '*').`);
  }
  const scenario = validateSettingValue('scenario', options.scenario) as Scenario;
  const baseInput: TestSettingsInput = { ...(options.base ?? {}), scenario };
  const base = resolveTestSettingFields(baseInput);

  const provenance = new Map<keyof TestSettings, SettingSource>();
  for (const f of SETTINGS_FIELDS) {
    const given = f.name === 'scenario' ? 'argument' : options.base?.[f.name] !== undefined ? 'base' : 'default';
    provenance.set(f.name, {
      field: f.name, snake: f.snake, origin: given,
      description: given === 'argument' ? 'scenario argument' : given === 'base' ? 'base settings' : 'default',
    });
  }

  // Read and lint every file first: nothing is applied if one is bad.
  const mlperfOpt = options.mlperfConf ?? 'builtin';
  if (mlperfOpt === false && options.userConf !== undefined) {
    throw new SettingsError('mlperfConf', false, 'mlperfConf: false cannot be combined with a user.conf: the reference always applies mlperf.conf with the first user.conf.');
  }
  const mlperf = mlperfOpt === 'builtin' || mlperfOpt === false ? undefined : readSource(mlperfOpt, 'mlperf.conf');
  const user = options.userConf === undefined ? undefined : readSource(options.userConf, 'user.conf');
  const audit = options.auditConf === undefined ? undefined : readSource(options.auditConf, 'audit.config');
  if (mlperf !== undefined) {
    if (mlperf.text === undefined) {
      throw new SettingsError('mlperfConf', mlperf.label, `${mlperf.label}: cannot read the mlperf.conf file: ${mlperf.readError ?? ''}`);
    }
    problems.add(lintConfigText(mlperf.text, mlperf.label, 'mlperf.conf'));
  }
  for (const [s, role] of [[user, 'user.conf'], [audit, 'audit.config']] as const) {
    if (s === undefined) continue;
    checkReadable(s, role, problems);
    if (s.text !== undefined) problems.add(lintConfigText(s.text, s.label, role));
  }
  problems.throwIfAny();

  const native = loadNative().config;
  const mlperfLabel = mlperf?.label ?? 'mlperf.conf (built-in)';
  const builtin = mlperf === undefined;
  const messages: NativeMessage[] = [];
  const returnCodes: { mlperf?: number; user?: number; audit?: number } = {};
  let record: NativeTestSettings = toNativeSettings(base);

  // 1. mlperf.conf + user.conf (one FromConfig call with conf_type 1, or mlperf.conf alone).
  if (mlperfOpt !== false || user !== undefined) {
    const r = native.load({
      model: options.model, scenario, base: record,
      ...(mlperf ? nativeInput('mlperfConf', mlperf) : {}),
      ...(user ? nativeInput('userConf', user) : {}),
    });
    reportNative(r, { mlperf: mlperfLabel, ...(user ? { user: user.label } : {}) }, problems);
    recordConfigProvenance(provenance, r.provenance, builtin);
    messages.push(...r.messages);
    Object.assign(returnCodes, r.returnCodes);
    record = toNativeRecord(r.settings);
    if (user?.text !== undefined && r.returnCodes.user === 0) {
      problems.add(skippedConditionalLines(user.text, user.label, options.model, r.provenance, r.settings).map((message) => ({
        severity: 'warning' as const, file: user.label, line: 0, key: '', value: '', text: message, message,
      })));
    }
  }

  // 2. Layers set in code / on the command line.
  for (const layer of options.overrides ?? []) {
    for (const [name, value] of Object.entries(layer.settings) as [keyof TestSettings, unknown][]) {
      if (value === undefined) continue;
      const f = FIELD_BY_NAME.get(name);
      const stored = validateSettingValue(name, value);
      if (f === undefined) continue;
      record[f.snake] = f.kind === 'enum' ? (f.constraints.values ?? []).indexOf(stored as string) : (stored as number | bigint | boolean);
      provenance.set(f.name, { field: f.name, snake: f.snake, origin: 'override', label: layer.label, description: layer.label });
    }
  }
  if (record.scenario !== SCENARIOS.indexOf(scenario)) {
    throw new SettingsError('scenario', SCENARIOS[Number(record.scenario)], `Invalid override scenario = ${SCENARIOS[Number(record.scenario)]}: the configs were loaded for scenario ${scenario}; change the scenario argument instead.`);
  }

  // 3. audit.config, as StartTest applies it.
  let referenceSettings: Record<string, number | bigint | boolean | string>;
  if (audit !== undefined && audit.text !== undefined) {
    const r = native.load({ model: '*', scenario, base: record, withMlperfConf: false, ...nativeInput('auditConf', audit) });
    reportNative(r, { mlperf: mlperfLabel, audit: audit.label }, problems);
    recordConfigProvenance(provenance, r.provenance, builtin);
    messages.push(...r.messages);
    if (r.returnCodes.audit !== undefined) returnCodes.audit = r.returnCodes.audit;
    referenceSettings = r.settings;
  } else {
    referenceSettings = fromNativeRecord(record);
  }
  problems.throwIfAny();

  const settings = toCamelSettings(referenceSettings, base, problems);
  // Cross-field rules and anything else startTest would reject.
  try {
    resolveTestSettings(settings);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    const src = provenance.get(error.key as keyof TestSettings);
    const where = src && src.origin !== 'default' ? ` (${error.key} comes from ${src.description})` : '';
    if (!lenient) throw new SettingsError(error.key, error.value, `${error.message}${where}`);
    problems.warnings.push(`startTest will reject these settings: ${error.message}${where}`);
  }
  return { settings, provenance, warnings: problems.warnings, referenceSettings, returnCodes, messages };
}

/** Native input form → reference record (enum names). */
function fromNativeRecord(rec: NativeTestSettings): Record<string, number | bigint | boolean | string> {
  const out: Record<string, number | bigint | boolean | string> = {};
  for (const f of SETTINGS_FIELDS) {
    if (f.extension) continue;
    const v = rec[f.snake]!;
    out[f.snake] = f.kind === 'enum' ? (f.constraints.values ?? [])[Number(v)]! : (v as number | bigint | boolean | string);
  }
  return out;
}

/** Reference record → camelCase settings; extension fields come from `base`. */
function toCamelSettings(
  rec: Record<string, number | bigint | boolean | string>,
  base: TestSettingsInput,
  problems: Problems,
): TestSettingsInput {
  const out: Record<string, unknown> = {};
  for (const f of SETTINGS_FIELDS) {
    if (f.extension) {
      out[f.name] = base[f.name];
      continue;
    }
    let v = rec[f.snake];
    if (typeof v === 'bigint' && f.kind !== 'seed') {
      // Only reachable leniently (e.g. '-1' wrapped to 2^64-1).
      problems.warnings.push(`${f.snake} = ${v} is above 2^53-1; loadgen cannot run with it (startTest will reject it).`);
      v = Number(v);
    }
    if (typeof v === 'number' && f.kind === 'seed') v = BigInt(v);
    out[f.name] = v;
  }
  return out as TestSettingsInput;
}

// ---------------------------------------------------------------------------
// audit.config at startTest, effective settings
// ---------------------------------------------------------------------------

/** Result of {@link applyAuditConfig}. */
export interface AuditConfigResult {
  /** False when the file could not be opened (nothing applied, as in the reference). */
  readonly found: boolean;
  readonly settings: TestSettingsInput;
  /** What the reference logs (the fixed warning, FromConfig errors): goes to the detail log. */
  readonly messages: NativeMessage[];
  readonly warnings: string[];
}

/**
 * The audit.config override of StartTest (spec/10 §5): if `path` can be
 * read, lints it (strict unless `lenient`) and applies it with model `*` and
 * the settings' scenario on top of `settings`.
 */
export function applyAuditConfig(settings: TestSettingsInput, path: string, lenient = false): AuditConfigResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { found: false, settings, messages: [], warnings: [] };
  }
  const problems = new Problems(lenient);
  problems.add(lintConfigText(text, path, 'audit.config'));
  problems.throwIfAny();
  const base = resolveTestSettingFields(settings);
  const r = loadNative().config.load({
    model: '*', scenario: base.scenario, base: toNativeSettings(base), withMlperfConf: false, auditConfPath: path,
  });
  if (!r.auditFound) return { found: false, settings, messages: [], warnings: [] };
  reportNative(r, { mlperf: '', audit: path }, problems);
  problems.throwIfAny();
  return { found: true, settings: toCamelSettings(r.settings, base, problems), messages: r.messages, warnings: problems.warnings };
}

/** Effective settings (spec/10 §3) of loaded settings, as StartTest derives them (test05 applied). */
export function deriveEffectiveSettings(
  loaded: Pick<LoadedSettings, 'referenceSettings'>,
  qslTotal: number,
  qslPerformance: number,
): { effective: NativeEffectiveRecord; loggedErrors: NativeLogEntry[] } {
  return loadNative().conformance.deriveEffective(toNativeRecord(loaded.referenceSettings), qslTotal, qslPerformance, true);
}
