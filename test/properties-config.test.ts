/**
 * Property tests of the config files (spec/10 §4): the native parser (the
 * reference's FromConfig, through the addon's config.load), the TypeScript
 * lint (lib/config/lint.ts) and loadSettings, on generated texts.
 *
 * - Grammar: a plain state machine written here from spec/10 §4.1 predicts,
 *   for any text, which lines the native parser rejects (by line number),
 *   its return code, and the raw value and line of every key it applies.
 * - Safety: on any text, the lint and loadSettings never throw anything but
 *   a SettingsError (ConfigFileError), and every line the native parser
 *   rejects is an error of the strict lint, naming that line.
 * - Never hangs: texts with 32-KB keys, values and lines, or thousands of
 *   lines, are handled within a time limit (in a child process, killed at it).
 * - Round trip: valid `model.scenario.key = value` lines, with comments and
 *   odd whitespace, load to exactly the settings a model of the lookup
 *   (spec/10 §4.2) written here computes from the same lines.
 */
import { spawnSync } from 'node:child_process';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { CONFIG_KEYS, type ConfigKeyDef, type KeyTarget } from '../lib/config/keys.js';
import { lintConfigText } from '../lib/config/lint.js';
import { loadSettings } from '../lib/config/load-settings.js';
import { ConfigFileError, SettingsError } from '../lib/errors.js';
import { loadNative } from '../lib/native/index.js';
import { FIELD_BY_NAME } from '../lib/settings/fields.js';
import { resolveTestSettingFields } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import { SCENARIOS, TEST_MODES, type Scenario } from '../lib/types/settings.js';
import { validateSettingValue } from '../lib/settings/validate.js';
import { repoRoot } from './helpers.js';
import { PROPERTY_SEED, propertyParams } from './property-params.js';

const nativeConfig = loadNative().config;
const MODEL = 'wan-2.2-t2v'; // dots inside a model name (spec/10 §4.2)

// ---------------------------------------------------------------------------
// The reference grammar (spec/10 §4.1), written plainly
// ---------------------------------------------------------------------------

/** What `istringstream >>` splits on (the "C" locale's isspace). */
const SEPARATORS = /[ \t\n\v\f\r]+/;

/**
 * A token strtoul(base 0) or strtod consumes whole, as glibc does, on the C
 * string (up to the first NUL): decimal and hexadecimal numbers with optional
 * sign, fraction and exponent, inf/infinity, nan and nan(chars).
 */
const WHOLE_NUMBER = new RegExp(
  '^[+-]?(?:inf(?:inity)?|nan(?:\\([A-Za-z0-9_]*\\))?' +
    '|0[xX](?:[0-9a-fA-F]+\\.?[0-9a-fA-F]*|\\.[0-9a-fA-F]+)(?:[pP][+-]?\\d+)?' +
    '|(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)$',
  'i',
);

function isNumberToken(token: string): boolean {
  return WHOLE_NUMBER.test(token.split('\0')[0]!);
}

interface ReferenceParse {
  /** Full key → the last raw value and its line. */
  entries: Map<string, { value: string; line: number }>;
  /** 1-based lines with an error. */
  errorLines: number[];
}

function referenceParse(text: string): ReferenceParse {
  const entries = new Map<string, { value: string; line: number }>();
  const errorLines: number[] = [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  lines.forEach((line, i) => {
    let state: 'key' | 'equals' | 'value' = 'key';
    let key = '';
    for (const token of line.split(SEPARATORS).filter((t) => t !== '')) {
      if (token === '#' && state !== 'value') break;
      if (state === 'value') {
        if (!isNumberToken(token)) {
          errorLines.push(i + 1);
          break;
        }
        entries.set(key, { value: token, line: i + 1 });
      } else if (state === 'equals') {
        if (token !== '=') {
          errorLines.push(i + 1);
          break;
        }
        state = 'value';
      } else {
        key = token;
        state = 'equals';
      }
    }
  });
  return { entries, errorLines };
}

/** The native parse of `text` as the mlperf.conf (conf_type 0: every key is read). */
function nativeLoad(text: string, scenario: Scenario = 'Server') {
  return nativeConfig.load({
    model: MODEL,
    scenario,
    base: toNativeSettings(resolveTestSettingFields({ scenario })),
    mlperfConfText: text,
    mlperfConfLabel: 'gen.conf',
  });
}

function lineOfMessage(text: string): number {
  const m = /line=(\d+)$/.exec(text);
  if (m === null) throw new Error(`config error without a line: ${text}`);
  return Number(m[1]);
}

// ---------------------------------------------------------------------------
// Generators of arbitrary texts
// ---------------------------------------------------------------------------

/** Keys the lookup reads (all in wildcard form, so each has exactly one candidate line). */
const READ_KEYS = ['*.*.min_query_count', '*.*.min_duration', '*.*.max_query_count', '*.*.qsl_rng_seed',
  '*.*.target_qps', '*.*.performance_sample_count_override', '*.*.accuracy_log_sampling_target'];

const token = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...READ_KEYS, `${MODEL}.*.min_query_count`, 'a.b.c', 'x', '#x', '#', '#', '=', '=', '=', 'a=5', '=5', 'k=') },
  { weight: 4, arbitrary: fc.constantFrom(
    '5', '0', '-5', '+5', '010', '08', '0x10', '0x', '0X1p3', '0x1p', '0x.8', '1e3', '1e', '1e+', '1.', '.5', '.', '+', '-',
    'inf', 'INFINITY', '-Inf', 'nan', 'NaN(abc)', 'nan(', 'nan()', 'infin', '5\0x', '\0', '1e400', '9'.repeat(30), '1,5', '١', 'é',
  ) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...'0123456789.eExXpP+-#=*abcnNiIfF()\0é_'.split('')), minLength: 1, maxLength: 6 }) },
);

const separator = fc.constantFrom(' ', ' ', ' ', '  ', '\t', '\r', '\v', '\f', ' \t ');

const line = fc.tuple(
  fc.constantFrom('', '', ' ', '\t'),
  fc.array(fc.tuple(token, separator), { maxLength: 6 }),
  fc.constantFrom('', '', ' ', '\r'),
).map(([lead, parts, trail]) => lead + parts.map(([t, s], i) => (i === parts.length - 1 ? t : t + s)).join('') + trail);

/** `key = number` lines (mostly numbers the grammar accepts), so that some texts parse cleanly. */
const wellFormedLine = fc
  .tuple(fc.constantFrom(...READ_KEYS, `${MODEL}.*.min_query_count`, 'a.b.c'), separator, separator,
    fc.oneof(fc.constantFrom('5', '0x10', '010', '1e3', '.5', 'inf', 'nan', '-5', '+7', '1e', '0x'), fc.integer({ min: 0, max: 1e6 }).map(String)))
  .map(([key, s1, s2, value]) => `${key}${s1}=${s2}${value}`);

const configText = fc
  .tuple(fc.array(fc.oneof({ weight: 2, arbitrary: line }, { weight: 3, arbitrary: wellFormedLine }, { weight: 1, arbitrary: fc.constantFrom('', '# c', '#') }), { maxLength: 20 }), fc.boolean())
  .map(([lines, finalNewline]) => lines.join('\n') + (finalNewline ? '\n' : ''));

// ---------------------------------------------------------------------------
// Generators of valid settings lines
// ---------------------------------------------------------------------------

/** The value a target field gets from `raw` (spec/10 §4.2 conversions), or undefined when it is not allowed. */
function convert(target: KeyTarget, raw: string): unknown {
  const field = FIELD_BY_NAME.get(target.field)!;
  let value: unknown;
  switch (target.conversion) {
    case 'double':
      value = Number(raw) * target.multiplier;
      break;
    case 'mode':
      value = TEST_MODES[Number(raw)];
      break;
    case 'eq1':
    case 'nonzero':
      // Flags are written 0 or 1 (the lint rejects the reference's other readings).
      if (raw !== '0' && raw !== '1') return undefined;
      value = raw === '1';
      break;
    default: {
      const scaled = BigInt(raw) * BigInt(target.multiplier);
      value = field.kind === 'seed' ? scaled : Number(scaled);
    }
  }
  try {
    return validateSettingValue(target.field, value);
  } catch {
    return undefined;
  }
}

/** The targets a line with this scenario segment can reach (as the lint filters them). */
function targetsOf(def: ConfigKeyDef, scenarioSegment: string): KeyTarget[] {
  return def.targets.filter((t) => t.scenario === 'arg' || scenarioSegment === '*' || t.scenario === scenarioSegment);
}

/** Value texts: integers for integer targets, decimal numbers in several spellings for doubles. */
function valueText(targets: readonly KeyTarget[]): fc.Arbitrary<string> {
  const integerOnly = targets.some((t) => t.conversion !== 'double');
  const ints = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 2 ** 31 - 1 })).map(String);
  const texts = integerOnly
    ? ints
    : fc.oneof(ints, fc.double({ min: 1e-3, max: 1e6, noNaN: true }).map(String), fc.integer({ min: 1, max: 99 }).map((n) => `${n}.5`),
      fc.integer({ min: 1, max: 9 }).map((n) => `${n}e2`));
  return texts.filter((raw) => targets.every((t) => convert(t, raw) !== undefined));
}

/** Keys that are read unconditionally (not only after another flag). */
const PLAIN_KEYS = [...CONFIG_KEYS].filter(([, def]) => def.onlyWith === undefined).map(([name]) => name);

const settingLine = fc
  .tuple(fc.constantFrom(MODEL, '*', 'other-model'), fc.constantFrom('*', ...SCENARIOS), fc.constantFrom(...PLAIN_KEYS))
  .chain(([model, scenario, name]) => {
    const targets = targetsOf(CONFIG_KEYS.get(name)!, scenario);
    return fc.tuple(fc.constant(`${model}.${scenario}.${name}`), targets.length === 0 ? fc.constant('1') : valueText(targets), separator, separator);
  })
  .map(([key, value, s1, s2]) => ({ key, value, text: `${key}${s1}=${s2}${value}` }));

const commentLine = fc.oneof(
  fc.constant(''),
  fc.constantFrom(' ', '\t', '\r'),
  fc.string({ maxLength: 20 }).map((s) => `# ${s.replace(/\n/g, ' ')}`),
  fc.constantFrom('#', '####', '  # indented comment = 5', '#\tx = 1'),
);

const validText = fc
  .array(fc.oneof({ weight: 3, arbitrary: settingLine }, { weight: 1, arbitrary: commentLine.map((text) => ({ key: undefined, value: undefined, text })) }), { maxLength: 30 })
  .map((lines) => ({ lines, text: lines.map((l) => l.text).join('\n') + '\n' }));

/** The settings the lines give, by the lookup of spec/10 §4.2 (last line wins per full key). */
function modelSettings(lines: readonly { key?: string; value?: string }[], scenario: Scenario): Record<string, unknown> {
  const map = new Map<string, string>();
  for (const l of lines) if (l.key !== undefined) map.set(l.key, l.value!);
  const out: Record<string, unknown> = { ...resolveTestSettingFields({ scenario }) };
  for (const [name, def] of CONFIG_KEYS) {
    if (def.onlyWith !== undefined) continue;
    for (const target of def.targets) {
      const s = target.scenario === 'arg' ? scenario : target.scenario;
      const raw = [`${MODEL}.${s}.${name}`, `*.${s}.${name}`, `${MODEL}.*.${name}`, `*.*.${name}`].map((k) => map.get(k)).find((v) => v !== undefined);
      if (raw !== undefined) out[target.field] = convert(target, raw);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

describe('config parser on generated texts', () => {
  it('the native parser rejects exactly the lines the grammar rejects, and keeps the last value of each key', () => {
    let applied = 0;
    fc.assert(
      fc.property(configText, (text) => {
        const ref = referenceParse(text);
        const r = nativeLoad(text);
        const errors = r.messages.filter((m) => m.isError);
        expect(errors.map((m) => lineOfMessage(m.text)), JSON.stringify(text)).toEqual(ref.errorLines);
        expect(r.returnCodes.mlperf).toBe(ref.errorLines.length > 0 ? -22 : 0);
        if (ref.errorLines.length > 0) {
          expect(r.provenance).toEqual([]); // nothing applied from a rejected file
          return;
        }
        if (r.provenance.length > 0) applied++;
        for (const p of r.provenance) {
          expect(ref.entries.get(p.key), `${p.key} applied from line ${p.line}`).toEqual({ value: p.value, line: p.line });
        }
        for (const key of READ_KEYS) {
          const name = key.slice('*.*.'.length);
          if (!ref.entries.has(key) || ref.entries.has(`${MODEL}.*.${name}`)) continue;
          expect(r.provenance.some((p) => p.key === key), `${key} is applied`).toBe(true);
        }
      }),
      propertyParams(400),
    );
    // Not vacuous: some generated texts parse cleanly and set fields.
    expect(applied).toBeGreaterThan(0);
  });

  it('the lint and loadSettings throw only SettingsErrors; every line the parser rejects is a lint error on that line', () => {
    fc.assert(
      fc.property(configText, fc.constantFrom(...SCENARIOS), fc.boolean(), (text, scenario, lenient) => {
        const problems = lintConfigText(text, 'gen.conf', 'user.conf');
        const lintErrorLines = new Set(problems.filter((p) => p.severity === 'error').map((p) => p.line));
        for (const p of problems) expect(p.message.startsWith(`gen.conf:${p.line}: `), p.message).toBe(true);
        for (const lineNo of referenceParse(text).errorLines) expect(lintErrorLines.has(lineNo), `line ${lineNo} of ${JSON.stringify(text)}`).toBe(true);
        try {
          loadSettings({ model: MODEL, scenario, userConf: { text, name: 'gen.conf' }, lenient });
        } catch (error) {
          expect(error, String((error as Error)?.stack ?? error)).toBeInstanceOf(SettingsError);
          if (!lenient && lintErrorLines.size > 0) expect(error).toBeInstanceOf(ConfigFileError);
        }
      }),
      propertyParams(300),
    );
  });

  it('config.load given any input object throws a TypeError or an Error naming config.load, never crashes', () => {
    const hostile = fc.oneof(
      fc.constantFrom<unknown>(undefined, null, Number.NaN, -0, Number.POSITIVE_INFINITY, 1e300, -1, 2 ** 64, 1.5, '', 'x', '5', true, 5n, 2n ** 70n,
        -1n, [], {}, Symbol('s'), () => 0, Object.create(null) as unknown),
      fc.anything(),
    );
    const snakeFields = Object.keys(toNativeSettings(resolveTestSettingFields({})));
    const input = fc.record({
      model: fc.oneof(fc.constant<unknown>(MODEL), hostile),
      scenario: fc.oneof(fc.constantFrom<unknown>(...SCENARIOS), hostile),
      base: fc.oneof(
        fc.tuple(fc.constantFrom(...snakeFields), hostile).map(([k, v]) => ({ ...toNativeSettings(resolveTestSettingFields({})), [k]: v }) as unknown),
        hostile,
      ),
      mlperfConfText: fc.oneof(fc.constant<unknown>(undefined), configText, hostile),
      userConfText: fc.oneof(fc.constant<unknown>(undefined), configText, hostile),
      withMlperfConf: fc.oneof(fc.constant<unknown>(undefined), fc.boolean(), hostile),
    }, { requiredKeys: ['model', 'scenario', 'base'] });
    fc.assert(
      fc.property(input, (value) => {
        try {
          nativeConfig.load(value as unknown as Parameters<typeof nativeConfig.load>[0]);
        } catch (error) {
          const ok = error instanceof TypeError || error instanceof RangeError || (error instanceof Error && error.message.startsWith('config.load'));
          expect(ok, String((error as Error)?.stack ?? error)).toBe(true);
        }
      }),
      propertyParams(300),
    );
  });

  it('never hangs: long keys, values and lines (up to 32 KB) are linted and parsed within the time limit, in a child process', () => {
    // A child process, killed at the limit: a parser stuck in native code could not be interrupted in this one.
    const script = `
      import fc from 'fast-check';
      import { lintConfigText } from './dist/config/lint.js';
      import { loadSettings } from './dist/config/load-settings.js';
      import { SettingsError } from './dist/errors.js';
      const piece = fc.oneof(
        fc.integer({ min: 1, max: 32768 }).map((n) => 'k'.repeat(n) + '.Server.target_qps = 1'),
        fc.integer({ min: 1, max: 32768 }).map((n) => '*.*.min_query_count = ' + '9'.repeat(n)),
        fc.integer({ min: 1, max: 32768 }).map((n) => '*.*.' + 'x'.repeat(n) + ' = 1'),
        fc.integer({ min: 1, max: 4000 }).map((n) => '*.*.min_query_count = 1\\n'.repeat(n)),
        fc.integer({ min: 1, max: 8000 }).map((n) => '*.*.min_query_count = ' + '1 '.repeat(n)),
        fc.integer({ min: 1, max: 32768 }).map((n) => '#'.repeat(n) + ' x'),
        fc.integer({ min: 1, max: 32768 }).map((n) => '\\0'.repeat(n)),
      );
      fc.assert(fc.property(fc.array(piece, { minLength: 1, maxLength: 3 }), (pieces) => {
        const text = pieces.join('\\n');
        lintConfigText(text, 'long.conf', 'user.conf');
        try {
          loadSettings({ model: 'm', scenario: 'Server', userConf: { text, name: 'long.conf' }, lenient: true });
          loadSettings({ model: 'm', scenario: 'Server', userConf: { text, name: 'long.conf' } });
        } catch (error) {
          if (!(error instanceof SettingsError)) throw error;
        }
      }), { seed: ${PROPERTY_SEED}, numRuns: 20 });
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8', timeout: 50_000 });
    expect(r.error, 'the child was killed at the time limit').toBeUndefined();
    expect(r.status, r.stderr.slice(0, 4000)).toBe(0);
  }, 60_000);

  it('valid lines with comments and any whitespace load to the settings the lookup model computes', () => {
    fc.assert(
      fc.property(validText, fc.constantFrom(...SCENARIOS), ({ lines, text }, scenario) => {
        const lint = lintConfigText(text, 'gen.conf', 'mlperf.conf');
        expect(lint.filter((p) => p.severity === 'error').map((p) => p.message)).toEqual([]);
        const loaded = loadSettings({ model: MODEL, scenario, mlperfConf: { text, name: 'gen.conf' }, lenient: true });
        expect(loaded.returnCodes.mlperf).toBe(0);
        const want = modelSettings(lines, scenario);
        for (const [name, value] of Object.entries(want)) {
          expect((loaded.settings as Record<string, unknown>)[name], `${name} from ${JSON.stringify(text)}`).toEqual(value);
        }
        // Strict loading accepts the same lines: it only adds the cross-field rules.
        try {
          expect(loadSettings({ model: MODEL, scenario, mlperfConf: { text, name: 'gen.conf' } }).settings).toEqual(loaded.settings);
        } catch (error) {
          expect(error).toBeInstanceOf(SettingsError);
          expect(error).not.toBeInstanceOf(ConfigFileError);
        }
      }),
      propertyParams(300),
    );
  });
});
