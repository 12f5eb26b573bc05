/**
 * One settings record in its three forms: the reference's (snake_case, enum
 * names), the native input (enum integers) and camelCase settings.
 */
import type { NativeTestSettings } from '../native/index.js';
import { SETTINGS_FIELDS } from '../settings/fields.js';
import { SCENARIOS, TEST_MODES, type TestSettingsInput } from '../types/settings.js';
import type { Problems } from './sources.js';

/** Reference record (enum names) → the native input form (enum integers). */
export function toNativeRecord(rec: Record<string, number | bigint | boolean | string>): NativeTestSettings {
  const out: NativeTestSettings = { ...rec };
  out.scenario = (SCENARIOS as readonly string[]).indexOf(String(rec.scenario));
  out.mode = (TEST_MODES as readonly string[]).indexOf(String(rec.mode));
  return out;
}

/** Native input form → reference record (enum names). */
export function fromNativeRecord(rec: NativeTestSettings): Record<string, number | bigint | boolean | string> {
  const out: Record<string, number | bigint | boolean | string> = {};
  for (const f of SETTINGS_FIELDS) {
    if (f.extension) continue;
    const v = rec[f.snake]!;
    out[f.snake] = f.kind === 'enum' ? (f.constraints.values ?? [])[Number(v)]! : (v as number | bigint | boolean | string);
  }
  return out;
}

/** Reference record → camelCase settings; extension fields come from `base`. */
export function toCamelSettings(
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
