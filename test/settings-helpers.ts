/**
 * Shared by the settings tests (settings.test.ts, settings-io.test.ts).
 */
import { expect } from 'vitest';
import { SettingsError } from '../lib/errors.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';

/** Runs `fn`, asserts it throws a SettingsError for `key` whose message contains every fragment. */
export function expectSettingsError(fn: () => unknown, key: string, ...fragments: string[]): SettingsError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(SettingsError);
  const e = err as SettingsError;
  expect(e.code).toBe('ERR_LOADGEN_INVALID_SETTING');
  expect(e.name).toBe('SettingsError');
  expect(e.key).toBe(key);
  for (const f of fragments) expect(e.message).toContain(f);
  return e;
}

export const resolve = (input: unknown) => () => resolveTestSettings(input);

// spec/10 §2, in the reference's field order, with the reference names.
export const REFERENCE_DEFAULTS = {
  scenario: 'SingleStream',
  mode: 'PerformanceOnly',
  single_stream_expected_latency_ns: 1000000,
  single_stream_target_latency_percentile: 0.9,
  multi_stream_expected_latency_ns: 8000000,
  multi_stream_target_latency_percentile: 0.99,
  multi_stream_samples_per_query: 8,
  server_target_qps: 1,
  server_target_latency_ns: 100000000,
  server_target_latency_percentile: 0.99,
  server_coalesce_queries: false,
  server_find_peak_qps_decimals_of_precision: 1,
  server_find_peak_qps_boundary_step_size: 1,
  server_max_async_queries: 0,
  server_num_issue_query_threads: 0,
  offline_expected_qps: 1,
  sample_concatenate_permutation: false,
  min_duration_ms: 10000,
  max_duration_ms: 0,
  min_query_count: 100,
  max_query_count: 0,
  qsl_rng_seed: 0n,
  sample_index_rng_seed: 0n,
  schedule_rng_seed: 0n,
  accuracy_log_rng_seed: 0n,
  accuracy_log_probability: 0,
  accuracy_log_sampling_target: 0,
  test05: false,
  test05_qsl_rng_seed: 0n,
  test05_sample_index_rng_seed: 0n,
  test05_schedule_rng_seed: 0n,
  print_timestamps: false,
  performance_issue_unique: false,
  performance_issue_same: false,
  performance_issue_same_index: 0,
  performance_sample_count_override: 0,
  accuracy_sample_count_override: 0,
  use_token_latencies: false,
  server_ttft_latency: 100000000,
  server_tpot_latency: 100000000,
  infer_token_latencies: false,
  token_latency_scaling_factor: 0, // no C++ initializer; 0 as from Python
} as const;

export const camel = (snake: string): string => snake.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
