/**
 * Settings under which the built-in null SUTs give a VALID first run in every
 * scenario (`loadgen run --sut null`).
 *
 * The reference's defaults expect a SUT of ~1 ms a query (SingleStream), 1
 * query/s (Server) or 1 sample/s (Offline): a null SUT answering in ~0.1-0.3 us
 * runs through the queries generated for min_duration in a fraction of it and
 * is INVALID ("min duration not met"; lib/api/invalid-hint.ts says which
 * --set fixes it). The expected latencies cannot go below 1 us (a
 * unit-mistake guard), so SingleStream/MultiStream generate more queries
 * through min_query_count. These values leave a 3-5x margin over the
 * null SUTs' rates on a 2-vCPU machine (JS null, through issueQueryIds: ~5-6 M
 * queries/s SingleStream, ~1.8 M MultiStream, ~60 M samples/s Offline;
 * null-native: ~9 M, ~4.5 M, ~0.5-1 G) while keeping the pre-generated trace
 * under ~150 MB.
 */
import type { Scenario, TestSettingsInput } from '../types/settings.js';

export type NullSutName = 'null' | 'null-native';

const DEFAULTS: Record<NullSutName, Record<Scenario, TestSettingsInput>> = {
  null: {
    SingleStream: { minDurationMs: 50, minQueryCount: 1_000_000 },
    MultiStream: { minDurationMs: 25, minQueryCount: 200_000 },
    Server: { minDurationMs: 1000, serverTargetQps: 10000 },
    Offline: { minDurationMs: 5, offlineExpectedQps: 2e8 },
  },
  'null-native': {
    SingleStream: { minDurationMs: 20, minQueryCount: 1_000_000 },
    MultiStream: { minDurationMs: 20, minQueryCount: 400_000 },
    Server: { minDurationMs: 1000, serverTargetQps: 10000 },
    Offline: { minDurationMs: 2, offlineExpectedQps: 2e9 },
  },
};

/**
 * `settings` with the null SUT's defaults under it: a field the caller set
 * (to anything) wins. Returns the fields taken from the defaults too.
 */
export function withNullSutDefaults(
  sut: NullSutName,
  settings: TestSettingsInput,
): { settings: TestSettingsInput; applied: (keyof TestSettingsInput)[] } {
  const defaults = DEFAULTS[sut][settings.scenario ?? 'SingleStream'];
  const applied = (Object.keys(defaults) as (keyof TestSettingsInput)[]).filter((k) => settings[k] === undefined);
  const out: TestSettingsInput = { ...settings };
  for (const k of applied) (out as Record<string, unknown>)[k] = defaults[k];
  return { settings: out, applied };
}
