/**
 * The config keys a file may hold (spec/10 §2 "Config key", §4.3): which
 * TestSettings field each sets, for which scenario, how its text is read,
 * and in which file.
 */
import { FIELD_BY_NAME } from '../settings/fields.js';
import type { Scenario, TestSettings } from '../settings/types.js';

/** How a raw value becomes the field value. */
export type Conversion =
  | 'int' // strtoull(raw) * multiplier
  | 'int32' // int(strtoull(raw)): max_async_queries
  | 'double' // strtod(raw) * multiplier
  | 'eq1' // boolean: value == 1
  | 'nonzero' // boolean: value != 0
  | 'mode'; // 0..3

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
  readonly onlyWith?: 'useTokenLatencies' | 'inferTokenLatencies';
  /** Unit of the value in the file. */
  readonly unit?: 'ms' | 'percent';
}

const t = (scenario: Scenario | 'arg', field: keyof TestSettings, conversion: Conversion, multiplier = 1): KeyTarget => ({
  scenario, field, conversion, multiplier,
});

export const CONFIG_KEYS: ReadonlyMap<string, ConfigKeyDef> = new Map<string, ConfigKeyDef>([
  ['mode', { targets: [t('arg', 'mode', 'mode')] }],
  ['qsl_rng_seed', { targets: [t('arg', 'qslRngSeed', 'int')], mlperfOnly: true }],
  ['sample_index_rng_seed', { targets: [t('arg', 'sampleIndexRngSeed', 'int')], mlperfOnly: true }],
  ['schedule_rng_seed', { targets: [t('arg', 'scheduleRngSeed', 'int')], mlperfOnly: true }],
  ['accuracy_log_probability', { targets: [t('arg', 'accuracyLogProbability', 'double', 0.01)], mlperfOnly: true, unit: 'percent' }],
  ['test05', { targets: [t('arg', 'test05', 'eq1')], mlperfOnly: true }],
  ['test05_qsl_rng_seed', { targets: [t('arg', 'test05QslRngSeed', 'int')], mlperfOnly: true }],
  ['test05_sample_index_rng_seed', { targets: [t('arg', 'test05SampleIndexRngSeed', 'int')], mlperfOnly: true }],
  ['test05_schedule_rng_seed', { targets: [t('arg', 'test05ScheduleRngSeed', 'int')], mlperfOnly: true }],
  ['use_token_latencies', { targets: [t('arg', 'useTokenLatencies', 'eq1')] }],
  ['ttft_latency', { targets: [t('Server', 'serverTtftLatency', 'int', 1e6)], onlyWith: 'useTokenLatencies', unit: 'ms' }],
  ['tpot_latency', { targets: [t('Server', 'serverTpotLatency', 'int', 1e6)], onlyWith: 'useTokenLatencies', unit: 'ms' }],
  ['infer_token_latencies', { targets: [t('arg', 'inferTokenLatencies', 'eq1')] }],
  ['token_latency_scaling_factor', { targets: [t('arg', 'tokenLatencyScalingFactor', 'int')], onlyWith: 'inferTokenLatencies' }],
  ['target_latency_percentile', {
    targets: [
      t('SingleStream', 'singleStreamTargetLatencyPercentile', 'double', 0.01),
      t('MultiStream', 'multiStreamTargetLatencyPercentile', 'double', 0.01),
      t('Server', 'serverTargetLatencyPercentile', 'double', 0.01),
    ],
    unit: 'percent',
  }],
  ['samples_per_query', { targets: [t('MultiStream', 'multiStreamSamplesPerQuery', 'int')] }],
  ['target_latency', {
    targets: [
      t('SingleStream', 'singleStreamExpectedLatencyNs', 'double', 1e6),
      t('MultiStream', 'multiStreamExpectedLatencyNs', 'double', 1e6),
      t('Server', 'serverTargetLatencyNs', 'int', 1e6),
    ],
    unit: 'ms',
  }],
  ['performance_issue_unique', { targets: [t('arg', 'performanceIssueUnique', 'nonzero')] }],
  ['performance_issue_same', { targets: [t('arg', 'performanceIssueSame', 'nonzero')] }],
  ['performance_issue_same_index', { targets: [t('arg', 'performanceIssueSameIndex', 'int')] }],
  ['sample_concatenate_permutation', { targets: [t('arg', 'sampleConcatenatePermutation', 'eq1')] }],
  ['coalesce_queries', { targets: [t('Server', 'serverCoalesceQueries', 'nonzero')] }],
  ['max_async_queries', { targets: [t('Server', 'serverMaxAsyncQueries', 'int32')] }],
  ['min_duration', { targets: [t('arg', 'minDurationMs', 'int')], unit: 'ms' }],
  ['max_duration', { targets: [t('arg', 'maxDurationMs', 'int')], unit: 'ms' }],
  ['min_query_count', { targets: [t('arg', 'minQueryCount', 'int')] }],
  ['max_query_count', { targets: [t('arg', 'maxQueryCount', 'int')] }],
  ['performance_sample_count_override', { targets: [t('arg', 'performanceSampleCountOverride', 'int')] }],
  ['accuracy_sample_count_override', { targets: [t('arg', 'accuracySampleCountOverride', 'int')] }],
  ['target_qps', { targets: [t('Server', 'serverTargetQps', 'double'), t('Offline', 'offlineExpectedQps', 'double')] }],
  ['print_timestamps', { targets: [t('arg', 'printTimestamps', 'nonzero')] }],
  ['accuracy_log_rng_seed', { targets: [t('arg', 'accuracyLogRngSeed', 'int')] }],
  ['accuracy_log_sampling_target', { targets: [t('arg', 'accuracyLogSamplingTarget', 'int')] }],
]);

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
