/**
 * Where each setting's value came from: the default, the caller, a config
 * file line, or a layer set in code; and the config lines the reference
 * skipped.
 */
import type { NativeConfigProvenance } from '../native/index.js';
import { FIELD_BY_NAME, SETTINGS_FIELDS, type SettingField } from '../settings/fields.js';
import { echo, PATH_ECHO_LIMIT } from '../settings/messages.js';
import type { TestSettings } from '../types/settings.js';
import { CONFIG_KEYS, SPACE_RE, splitKey } from './keys.js';
import type { SettingOrigin, SettingSource } from './types.js';

const FIELD_BY_SNAKE = new Map<string, SettingField>(SETTINGS_FIELDS.map((f) => [f.snake, f]));

export function recordConfigProvenance(
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
      description: `${echo(p.file, PATH_ECHO_LIMIT)}:${p.line} ${echo(p.key)} = ${echo(p.value)}`,
    });
  }
}

/** Config lines for the token keys that the reference skipped because their flag was off. */
export function skippedConditionalLines(
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
    out.push(`${echo(file, PATH_ECHO_LIMIT)}:${i + 1}: ${echo(tokens[0]!)} = ${echo(tokens[2]!)}: not applied: the reference reads '${k.name}' only when ${flag} is already 1.`);
  });
  return out;
}
