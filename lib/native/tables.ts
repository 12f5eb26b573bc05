/**
 * The native core's field and key tables (bindings/tables.cc): the config
 * keys the C++ parser applies and the limits of the run settings the addon
 * checks. lib/config/keys.ts lints config files against these keys and
 * lib/settings/fields.ts takes these limits into its schema, so each is stated once,
 * in C++ (native/config_keys.h, native/settings_fields.h).
 * @internal
 */
import { loadNative } from './loader.js';
import type { NativeTables } from './table-types.js';

export type { ConfigConversion, NativeConfigKeyRow, NativeRunSettingLimit, NativeTables } from './table-types.js';

let tables: NativeTables | undefined;

/** The addon's tables (loads the addon). */
export function nativeTables(): NativeTables {
  tables ??= loadNative().tables;
  return tables;
}

/** The limits of one run setting, as settings constraints. */
export function runSettingLimit(name: string): { readonly min: number; readonly max: number } {
  const limit = nativeTables().runSettingLimits[name];
  if (limit === undefined) throw new Error(`loadgen: the native core has no limit for ${name}`);
  return { min: limit.min, max: limit.max };
}
