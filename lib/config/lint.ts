/**
 * The config-file lint: every line checked against the reference grammar
 * (spec/10 §4.1) and the loadgen field constraints, before anything is
 * applied. A line the reference would misread, silently ignore or reject is
 * an error naming the file, line, key, value and what is allowed.
 */
import { SettingsError, type ConfigProblem } from '../errors.js';
import { FIELD_BY_NAME } from '../settings/fields.js';
import { ECHO_LIMIT, echo, num, PATH_ECHO_LIMIT, suggestName } from '../settings/messages.js';
import { SCENARIOS, TEST_MODES } from '../types/settings.js';
import { numeralLengthProblem, readIntegerText } from '../settings/numerals.js';
import { validateSettingValue } from '../settings/validate.js';
import {
  CONFIG_FILE_KEYS,
  CONFIG_KEY_OF_FIELD,
  CONFIG_KEYS,
  SPACE_RE,
  splitKey,
  UNREAD_KEYS,
  unitText,
  type ConfigKeyDef,
  type KeyTarget,
} from './keys.js';
import type { ConfigRole } from './types.js';

const UINT64_MAX = (1n << 64n) - 1n;
const INT32_MAX = 2147483647n;

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

function unknownKeyProblem(name: string): string {
  const asKey = CONFIG_KEY_OF_FIELD.get(name);
  if (asKey !== undefined) {
    return `'${echo(name)}' is the TestSettings field name; the config key is '${asKey}'${unitText(CONFIG_KEYS.get(asKey)!)}.`;
  }
  if (CONFIG_KEYS.has(name.toLowerCase())) return `config keys are lower case: did you mean '${name.toLowerCase()}'?`;
  const s = suggestName(name, [...CONFIG_KEYS.keys(), ...CONFIG_KEY_OF_FIELD.keys()]);
  const suggestion = s === undefined ? '' : ` Did you mean '${CONFIG_KEY_OF_FIELD.get(s) ?? s}'?`;
  // A name too long to show whole is no typo of a key: the list would only lengthen the message.
  const known = name.length > ECHO_LIMIT
    ? `The ${CONFIG_FILE_KEYS.length} known keys are at most ${Math.max(...CONFIG_FILE_KEYS.map((k) => k.length))} characters long.`
    : `Known keys: ${CONFIG_FILE_KEYS.join(', ')}.`;
  return `unknown config key '${echo(name)}' (the reference stores it and never reads it).${suggestion} ${known}`;
}

/** Checks one value against every field the key reaches from this scenario segment. */
function checkValue(def: ConfigKeyDef, name: string, targets: readonly KeyTarget[], raw: string): string | undefined {
  const tooLong = numeralLengthProblem(raw);
  if (tooLong !== undefined) return `expected ${allowedInFile(def, targets[0]!)}; ${tooLong}.`;
  if (LEADING_ZERO_RE.test(raw)) {
    return `'${echo(raw)}' has a leading zero: the reference reads it as octal (${referenceInteger(raw)}); write the number without leading zeros.`;
  }
  const hex = HEX_INT_RE.test(raw);
  if (!hex && !DEC_FLOAT_RE.test(raw)) {
    return `'${echo(raw)}' is not a decimal number (NaN, Infinity and hexadecimal fractions are not accepted); expected ${allowedInFile(def, targets[0]!)}.`;
  }
  const numeric = hex ? Number(BigInt(raw.replace('+', ''))) : Number(raw);
  for (const target of targets) {
    const allowed = allowedInFile(def, target);
    const field = FIELD_BY_NAME.get(target.field)!;
    let value: unknown;
    if (target.conversion === 'double') {
      value = numeric * target.multiplier;
    } else {
      if (NEG_INT_RE.test(raw) || raw.startsWith('-')) {
        return `expected ${allowed}; the reference reads '${echo(raw)}' as ${referenceInteger(raw)} (unsigned).`;
      }
      const read = referenceInteger(raw);
      // The exact text decides (numerals.ts), not Number(raw): 0.000…01 is 0 as a double.
      const integer = hex ? undefined : readIntegerText(raw);
      if (integer !== undefined && !integer.ok) {
        return `expected ${allowed}; '${name}' is read as an integer, so the reference reads '${echo(raw)}' as ${read}: ${integer.problem}.`;
      }
      const scaled = read * BigInt(target.multiplier);
      if (scaled > UINT64_MAX) return `expected ${allowed}; ${echo(raw)} overflows 64 bits.`;
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
          else if (scaled > BigInt(Number.MAX_SAFE_INTEGER)) return `expected ${allowed}; ${echo(raw)} is above 2^53-1 once converted.`;
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
      `'${echo(first)}' starts a comment without a space after '#': the reference reads it as a key and rejects the whole file. Write '# ${echo(first.slice(1))}'.`);
  }
  if (tokens.length === 1) {
    const eq = first.indexOf('=');
    if (eq >= 0) {
      return err(first.slice(0, eq), first.slice(eq + 1),
        `'${echo(first)}' needs spaces around '=': the reference silently ignores this line. Write '${echo(first.slice(0, eq))} = ${echo(first.slice(eq + 1))}'.`);
    }
    return err(first, '', `expected '<model>.<scenario>.<key> = <value>'; a key alone is silently ignored by the reference.`);
  }
  const key = first;
  const second = tokens[1]!;
  if (key.endsWith('=')) {
    return err(key.slice(0, -1), tokens.slice(1).join(' '), `'${echo(key)}' needs a space before '=': the reference rejects the whole file.`);
  }
  if (second === '#') return err(key, '', `'${echo(key)}' has no value (the reference ignores the line): expected '${echo(key)} = <value>'.`);
  if (second !== '=') {
    const glued = second.startsWith('=') ? ` Write '${echo(key)} = ${echo(second.slice(1))}'.` : '';
    return err(key, tokens.slice(1).join(' '), `expected '=' after '${echo(key)}', found '${echo(second)}': the reference rejects the whole file.${glued}`);
  }
  if (tokens.length === 2) return err(key, '', `'${echo(key)} =' has no value (the reference ignores the line).`);
  const raw = tokens[2]!;
  if (tokens.length > 3) {
    const rest = tokens.slice(3).join(' ');
    if (tokens[3]!.startsWith('#')) {
      return err(key, raw, `trailing comment '${echo(rest)}': the reference reads '#' as a value and rejects the whole file. Put comments on their own line.`);
    }
    return err(key, `${raw} ${rest}`, `one value per line expected, found '${echo(`${raw} ${rest}`)}' (the reference keeps the last one).`);
  }
  const parsed = splitKey(key);
  if (parsed === undefined) {
    return err(key, raw, `'${echo(key)}' is not '<model>.<scenario>.<key>' (use '*' for any model or scenario): the reference never matches it.`);
  }
  if (parsed.scenario !== '*' && !(SCENARIOS as readonly string[]).includes(parsed.scenario)) {
    const s = suggestName(parsed.scenario, SCENARIOS);
    return err(key, raw, `unknown scenario '${echo(parsed.scenario)}' in '${echo(key)}': expected one of ${SCENARIOS.join(', ')} or '*'${s !== undefined ? `; did you mean '${s}'?` : '.'}`);
  }
  const def = CONFIG_KEYS.get(parsed.name);
  if (def === undefined) {
    const unread = UNREAD_KEYS.get(parsed.name);
    if (unread !== undefined) return warn(key, raw, `${unread}; the line has no effect.`);
    if (/^test\d{2}_\w+$/.test(parsed.name)) {
      return warn(key, raw, `'${echo(parsed.name)}' is a compliance-test key LoadGen ignores (used by the compliance scripts).`);
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
      problems.push({ ...p, file, line: lineNo, message: `${echo(file, PATH_ECHO_LIMIT)}:${lineNo}: ${echo(tokens.join(' '))}: ${p.text}` });
      if (p.severity === 'error') return;
    }
    if (tokens.length >= 3 && tokens[1] === '=' && !tokens[0]!.startsWith('#')) {
      const earlier = seen.get(tokens[0]!);
      if (earlier !== undefined) {
        problems.push({
          severity: 'warning', key: tokens[0]!, value: tokens[2]!, file, line: lineNo,
          message: `${echo(file, PATH_ECHO_LIMIT)}:${lineNo}: ${echo(tokens[0]!)} = ${echo(tokens[2]!)}: repeats the key of line ${earlier}; this later line wins.`,
          text: 'repeated key',
        });
      }
      seen.set(tokens[0]!, lineNo);
    }
  });
  return problems;
}
