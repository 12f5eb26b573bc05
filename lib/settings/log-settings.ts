/**
 * Log settings: validation and defaults.
 */
import { DEFAULT_LOG_SETTINGS, LOG_SETTINGS_FIELDS, LOG_FIELD_BY_NAME } from './fields.js';
import type { ResolvedLogSettings } from '../types/settings.js';
import { assertPlainObject, checkValue, unknownLogKey } from './validate.js';

/**
 * Validates user log settings and fills in defaults (`undefined` = absent).
 * Throws {@link SettingsError} on the first problem. Does not touch the file
 * system (whether `outdir` exists is checked when the logs are opened).
 */
export function resolveLogSettings(input: unknown): ResolvedLogSettings {
  if (input === undefined) return DEFAULT_LOG_SETTINGS;
  assertPlainObject('log setting', input);
  for (const key of Object.keys(input)) {
    if (!LOG_FIELD_BY_NAME.has(key)) throw unknownLogKey(key, input[key]);
  }
  const out: Record<string, unknown> = {};
  for (const f of LOG_SETTINGS_FIELDS) {
    const v = input[f.name];
    out[f.name] = v === undefined ? f.default : checkValue('log setting', f, f.name, v);
  }
  return Object.freeze(out as unknown as ResolvedLogSettings);
}
