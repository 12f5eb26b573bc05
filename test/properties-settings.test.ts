/**
 * Property tests of the settings validation (lib/settings/resolve.ts,
 * validate.ts) on generated TestSettingsInput objects: valid values, values
 * of the wrong type, NaN, ±Infinity, huge numbers, negative zero and hostile
 * objects. Every input is either accepted, and then the native derivation of
 * the effective settings succeeds on it, or rejected with a SettingsError
 * whose message names the field. No other outcome.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { loadSettings } from '../lib/config/load-settings.js';
import { SettingsError } from '../lib/errors.js';
import { loadNativeInternals } from '../lib/native/index.js';
import { FIELD_BY_NAME, SETTINGS_FIELDS, type SettingField } from '../lib/settings/fields.js';
import { parseSettingAssignment } from '../lib/settings/assignments.js';
import { resolveTestSettingFields, resolveTestSettings } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import { SCENARIOS, type ResolvedTestSettings, type TestSettingsInput } from '../lib/types/settings.js';
import { validateRunSettings } from '../lib/settings/validate.js';
import { propertyParams } from './property-params.js';

const native = loadNativeInternals().conformance;
const UINT64_MAX = (1n << 64n) - 1n;

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/** A value the field's own rules accept (cross-field rules may still reject the whole). */
function validValue(f: SettingField): fc.Arbitrary<unknown> {
  const c = f.constraints;
  switch (f.kind) {
    case 'enum':
      return fc.constantFrom(...(c.values ?? []));
    case 'bool':
      return fc.boolean();
    case 'seed':
      return fc.oneof(
        fc.bigInt({ min: 0n, max: UINT64_MAX }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.bigInt({ min: 0n, max: UINT64_MAX }).map(String),
      );
    case 'double': {
      const min = c.min ?? -Number.MAX_VALUE;
      const max = c.max ?? Number.MAX_VALUE;
      return fc.oneof(
        fc.double({ min, max, minExcluded: c.exclusiveMin === true, maxExcluded: c.exclusiveMax === true, noNaN: true, noDefaultInfinity: true }),
        // Ordinary magnitudes: most settings people write.
        fc.double({ min: Math.max(min, 0), max: Math.min(max, 1e7), minExcluded: c.exclusiveMin === true, maxExcluded: c.exclusiveMax === true, noNaN: true }),
      );
    }
    case 'uint64':
    case 'int': {
      const min = c.min ?? 0;
      const max = c.max ?? Number.MAX_SAFE_INTEGER;
      const ints = fc.oneof(fc.integer({ min, max }), fc.integer({ min, max: Math.min(max, Math.max(min, 100_000)) }));
      return c.zeroAllowedWith !== undefined ? fc.oneof(ints, fc.constant(0)) : ints;
    }
  }
}

/** Values of every wrong sort: wrong types, non-finite, huge, fractional, negative zero, hostile objects. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1e300, -1e300, Number.MAX_VALUE,
    Number.MIN_VALUE, 5e-324, -1, 0.5, 1.5, 2 ** 53, 2 ** 53 + 2, 2 ** 64, -(2 ** 63),
    '', ' ', '5', '0x10', '1e3', 'NaN', 'Infinity', 'abc', '-1', `${UINT64_MAX + 1n}`,
    true, false, null, 0n, -1n, 5n, UINT64_MAX + 1n, 2n ** 200n, [], [1], {}, { valueOf: () => 5 },
    Object.create(null) as unknown, new Number(5), Symbol('x'), () => 1, new Date(0), new Map(),
    'SingleStream', 'wake',
  ),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.bigInt(),
);

/** An input object: a random subset of fields with valid values, and sometimes one hostile value. */
const settingsInput: fc.Arbitrary<{ input: Record<string, unknown>; hostileKey: string | undefined }> = fc
  .tuple(
    fc.record(Object.fromEntries(SETTINGS_FIELDS.map((f) => [f.name, validValue(f)])), { requiredKeys: [] }),
    fc.option(fc.tuple(fc.constantFrom(...SETTINGS_FIELDS.map((f) => f.name as string)), hostileValue), { freq: 2 }),
  )
  .map(([valid, hostile]) => {
    const input: Record<string, unknown> = { ...valid };
    if (hostile === null) return { input, hostileKey: undefined };
    input[hostile[0]] = hostile[1];
    return { input, hostileKey: hostile[0] };
  });

const qslCounts = fc.record({
  totalSampleCount: fc.oneof(fc.integer({ min: 1, max: 5000 }), fc.constant(0xffffffff)),
  performanceSampleCount: fc.integer({ min: 1, max: 5000 }),
});

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

/** A rejection: a SettingsError naming a field (or '(input)' for a non-object) in its message. */
function expectNamedRejection(error: unknown): SettingsError {
  expect(error, String((error as Error)?.stack ?? error)).toBeInstanceOf(SettingsError);
  const e = error as SettingsError;
  const known = e.key === '(input)' || FIELD_BY_NAME.has(e.key) || e.key.startsWith('qsl.');
  expect(known, `error key ${e.key}: ${e.message}`).toBe(true);
  expect(e.message, e.message).toContain(e.key === '(input)' ? 'test settings' : e.key);
  return e;
}

/** Every effective value the native derivation returns is a finite number, a bigint, a boolean or a name. */
function expectDerivable(resolved: ResolvedTestSettings, qsl: { totalSampleCount: number; performanceSampleCount: number }): void {
  const { effective } = native.deriveEffective(toNativeSettings(resolved), qsl.totalSampleCount, qsl.performanceSampleCount, true);
  for (const [key, value] of Object.entries(effective)) {
    const ok = typeof value === 'bigint' || typeof value === 'boolean' || typeof value === 'string' ||
      (typeof value === 'number' && Number.isFinite(value));
    expect(ok, `effective ${key} = ${String(value)}`).toBe(true);
  }
}

describe('settings validation on generated inputs', () => {
  it('accepts (and the native derivation succeeds) or rejects with a SettingsError naming the field', () => {
    let accepted = 0;
    fc.assert(
      fc.property(settingsInput, qslCounts, ({ input, hostileKey }, qsl) => {
        let resolved: ResolvedTestSettings;
        try {
          resolved = resolveTestSettings(input);
        } catch (error) {
          const e = expectNamedRejection(error);
          // With one hostile value, the error names that field, or the value passes its own field's check.
          if (hostileKey !== undefined && e.key !== hostileKey) {
            expect(() => resolveTestSettingFields({ [hostileKey]: input[hostileKey] }), `${hostileKey} alone`).not.toThrow();
          }
          return;
        }
        // Accepted values are stored in their checked form.
        for (const f of SETTINGS_FIELDS) {
          const v = resolved[f.name];
          if (f.kind === 'double') expect(Number.isFinite(v), f.name).toBe(true);
          if (f.kind === 'uint64' || f.kind === 'int') expect(Number.isSafeInteger(v) && !Object.is(v, -0), f.name).toBe(true);
          if (f.kind === 'seed') expect(typeof v === 'bigint' && v >= 0n && v <= UINT64_MAX, f.name).toBe(true);
        }
        try {
          validateRunSettings(resolved, qsl);
        } catch (error) {
          expectNamedRejection(error);
          return;
        }
        expectDerivable(resolved, qsl);
        accepted++;
      }),
      propertyParams(400),
    );
    // Not vacuous: some generated inputs get all the way to the native derivation.
    expect(accepted).toBeGreaterThan(0);
  });

  it('a value that is not a settings object is a SettingsError, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(hostileValue, fc.array(fc.anything(), { maxLength: 3 })), (value) => {
        fc.pre(value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Map);
        try {
          resolveTestSettings(value);
        } catch (error) {
          expectNamedRejection(error);
          return;
        }
        // Only undefined means "all defaults".
        expect(value).toBeUndefined();
      }),
      propertyParams(200),
    );
  });

  it('unknown keys (any spelling) are a SettingsError naming the key', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 30 }), hostileValue, (key, value) => {
        fc.pre(!FIELD_BY_NAME.has(key) && key !== '__proto__');
        try {
          resolveTestSettings({ [key]: value });
        } catch (error) {
          expect(error).toBeInstanceOf(SettingsError);
          expect((error as SettingsError).key).toBe(key);
          expect((error as SettingsError).message).toContain(key);
          return;
        }
        throw new Error(`unknown key ${JSON.stringify(key)} was accepted`);
      }),
      propertyParams(200),
    );
  });

  it('--set key=value: a valid value written as text parses back to the same value', () => {
    const assignment = fc.constantFrom(...SETTINGS_FIELDS).chain((f) => fc.tuple(fc.constant(f), validValue(f), fc.boolean()));
    fc.assert(
      fc.property(assignment, ([f, value, snake]) => {
        const text = typeof value === 'bigint' ? `${value}` : String(value);
        const parsed = parseSettingAssignment(`${snake ? f.snake : f.name}=${text}`);
        expect(parsed.key).toBe(f.name);
        const want = f.kind === 'seed' ? BigInt(text) : value;
        // -0 is written '0'.
        expect(parsed.value === want || (typeof want === 'number' && Object.is(parsed.value, want + 0)), `${f.snake}=${text}`).toBe(true);
      }),
      propertyParams(400),
    );
  });

  it('--set with any text returns an assignment or throws a SettingsError naming the key', () => {
    const keys = fc.oneof(fc.constantFrom(...SETTINGS_FIELDS.flatMap((f) => [f.snake, f.name])), fc.string({ maxLength: 12 }));
    const values = fc.oneof(
      fc.constantFrom('', ' ', 'true', 'TRUE', '1', '0', '-0', '1e3', '1e400', '0x10', 'NaN', 'Infinity', '-1', '1.5', ' 7 ', '+3',
        '18446744073709551616', `${2 ** 53}`, 'Server', 'server', '2', '99', '1e-400', `0.${'0'.repeat(400)}1`),
      fc.string({ maxLength: 12 }),
      fc.double().map(String),
    );
    fc.assert(
      fc.property(keys, values, fc.boolean(), (key, value, withEquals) => {
        const text = withEquals ? `${key}=${value}` : key;
        try {
          parseSettingAssignment(text);
        } catch (error) {
          expect(error, String((error as Error)?.stack ?? error)).toBeInstanceOf(SettingsError);
          const e = error as SettingsError;
          expect(e.message.includes(e.key) || e.message.includes(JSON.stringify(text)), e.message).toBe(true);
        }
      }),
      propertyParams(400),
    );
  });

  it('loadSettings with generated base settings (the built-in mlperf.conf applied natively on top) returns or throws a SettingsError', () => {
    fc.assert(
      fc.property(settingsInput, fc.constantFrom(...SCENARIOS), ({ input }, scenario) => {
        const base = { ...input } as TestSettingsInput;
        delete (base as Record<string, unknown>).scenario;
        try {
          const loaded = loadSettings({ model: 'resnet50', scenario, base });
          // What loadSettings returns passes startTest's validation.
          resolveTestSettings(loaded.settings);
        } catch (error) {
          expectNamedRejection(error);
        }
      }),
      propertyParams(150),
    );
  });
});
