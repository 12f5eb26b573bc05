/**
 * Resolution: user test settings checked field by field, defaults filled in.
 */
import { DEFAULT_TEST_SETTINGS, FIELD_BY_NAME, SETTINGS_FIELDS } from './fields.js';
import type { ResolvedTestSettings } from '../types/settings.js';
import { assertPlainObject, checkCombinations, checkValue, unknownTestKey } from './validate.js';

/**
 * Validates user test settings and fills in defaults. `undefined` values count
 * as absent. Throws {@link SettingsError} (code `ERR_LOADGEN_INVALID_SETTING`) on
 * the first problem, naming the key, the value and what is allowed. Rejects the
 * inputs that crash or hang the reference (spec/60 §2) that can be detected
 * without the QSL; see {@link resolveQslDependentChecks} for the rest.
 * Accepts every mode name; call {@link assertRunnableMode} before running.
 */
export function resolveTestSettings(input: unknown): ResolvedTestSettings {
  if (input === undefined) return DEFAULT_TEST_SETTINGS;
  const s = resolveTestSettingFields(input);
  checkCombinations(s);
  return s;
}

/**
 * {@link resolveTestSettings} without the cross-field rules: every field is
 * checked on its own and defaults are filled in. For settings that are only
 * an intermediate state (e.g. before config files complete them).
 */
export function resolveTestSettingFields(input: unknown): ResolvedTestSettings {
  if (input === undefined) return DEFAULT_TEST_SETTINGS;
  assertPlainObject('test setting', input);
  for (const key of Object.keys(input)) {
    if (!FIELD_BY_NAME.has(key)) throw unknownTestKey(key, input[key]);
  }
  const out: Record<string, unknown> = {};
  for (const f of SETTINGS_FIELDS) {
    const v = input[f.name];
    out[f.name] = v === undefined ? f.default : checkValue('test setting', f, f.name, v);
  }
  return Object.freeze(out as ResolvedTestSettings);
}
