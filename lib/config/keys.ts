/**
 * The config keys a file may hold (spec/10 §2 "Config key", §4.3): which
 * TestSettings field each sets, for which scenario, how its text is read,
 * and in which file.
 */
import { nativeTables, type ConfigConversion } from '../native/tables.js';
import { FIELD_BY_NAME, SETTINGS_FIELDS } from '../settings/fields.js';
import { SCENARIOS, type Scenario, type TestSettings } from '../types/settings.js';

/** How a raw value becomes the field value (native/config_keys.h). */
export type Conversion = ConfigConversion;

export interface KeyTarget {
  /** Fixed scenario the lookup uses, or 'arg' for the scenario argument. */
  readonly scenario: Scenario | 'arg';
  readonly field: keyof TestSettings;
  readonly conversion: Conversion;
  readonly multiplier: number;
}

export interface ConfigKeyDef {
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

export const CONFIG_KEYS: ReadonlyMap<string, ConfigKeyDef> = configKeysFromNative();

/** Keys the shipped mlperf.conf contains but the reference never reads. */
export const UNREAD_KEYS: ReadonlyMap<string, string> = new Map([
  ['target_duration', 'the reference never reads target_duration'],
]);

/** Every key a config file may contain (the reference reads them), in the order of spec/10 §4.3. */
export const CONFIG_FILE_KEYS: readonly string[] = Object.freeze([...CONFIG_KEYS.keys()]);

/** A TestSettings field name → its config key (users often write the field name). */
export const CONFIG_KEY_OF_FIELD = new Map<string, string>();
for (const [key, def] of CONFIG_KEYS) {
  for (const target of def.targets) {
    const snake = FIELD_BY_NAME.get(target.field)!.snake;
    if (snake !== key) CONFIG_KEY_OF_FIELD.set(snake, key);
  }
}

/** The characters the reference's tokenizer (`istringstream >>`) treats as separators. */
export const SPACE_RE = /[ \t\n\v\f\r]+/;

export function unitText(def: ConfigKeyDef): string {
  return def.unit === 'ms' ? ' (ms)' : def.unit === 'percent' ? ' (percent)' : '';
}

/** A parsed setting line: `<model>.<scenario>.<name> = <value>`. */
export interface ParsedKey {
  model: string;
  scenario: string;
  name: string;
}

export function splitKey(full: string): ParsedKey | undefined {
  const last = full.lastIndexOf('.');
  if (last <= 0) return undefined;
  const second = full.lastIndexOf('.', last - 1);
  if (second <= 0) return undefined;
  return { model: full.slice(0, second), scenario: full.slice(second + 1, last), name: full.slice(last + 1) };
}
