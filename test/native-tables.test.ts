// The TypeScript schema and config linter read the native core's tables
// (lib/native/tables.ts): they must agree with them row for row.
import { describe, expect, it } from 'vitest';

import { CONFIG_FILE_KEYS } from '../lib/config/keys.js';
import { nativeTables } from '../lib/native/tables.js';
import { FAILURE_KINDS } from '../lib/net/protocol.js';
import { SETTINGS_FIELDS } from '../lib/settings/fields.js';

describe('native tables', () => {
  it('the settings schema lists the core TestSettings fields, in order, with compatible kinds', () => {
    const reference = SETTINGS_FIELDS.filter((f) => !f.extension);
    expect(reference.map((f) => f.snake)).toEqual(nativeTables().testSettingsFields.map((f) => f.name));
    const kinds: Record<string, string> = { seed: 'uint64' };
    for (const [i, f] of reference.entries()) {
      expect(kinds[f.kind] ?? f.kind, f.snake).toBe(nativeTables().testSettingsFields[i]!.kind);
    }
  });

  it('the linter knows exactly the keys the native parser applies, in its order', () => {
    const keys = [...new Set(nativeTables().configKeys.map((k) => k.key))];
    expect(CONFIG_FILE_KEYS).toEqual(keys);
    const snakes = new Set(SETTINGS_FIELDS.map((f) => f.snake));
    for (const row of nativeTables().configKeys) {
      expect(snakes.has(row.field), row.field).toBe(true);
      if (row.onlyWith !== undefined) expect(snakes.has(row.onlyWith), row.onlyWith).toBe(true);
    }
  });

  it('the run settings take their limits from the core', () => {
    const limits = nativeTables().runSettingLimits;
    for (const f of SETTINGS_FIELDS.filter((x) => x.extension && x.kind !== 'enum')) {
      expect(limits[f.snake], f.snake).toBeDefined();
      expect({ min: f.constraints.min ?? 0, max: f.constraints.max }).toEqual(limits[f.snake]);
    }
    expect(limits.issue_thread_cpu).toEqual({ min: -1, max: 1023 });
  });

  it('the failure kinds of lib/net/protocol.ts are the core\'s, in its order', () => {
    expect([...FAILURE_KINDS]).toEqual(nativeTables().failureKinds);
  });
});
