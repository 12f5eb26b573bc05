/**
 * Ready-made SUTs and QSLs for measuring loadgen itself.
 */
import { querySamplesCompleteIds } from '../api/completion.js';
import { NATIVE_NULL_SUT, type NullNativeSut } from '../api/null-native.js';
import type { QuerySample, QuerySampleLibrary, SystemUnderTest } from '../types/api.js';

export { isNullNativeSut, NATIVE_NULL_SUT, type NullNativeSut } from '../api/null-native.js';

/** How a null SUT takes its queries: `ids` (issueQueryIds, the default) or `objects` (issueQuery only). */
export type NullSutPath = 'ids' | 'objects';

/** A null SUT: issueQuery is always there (callers may forward to it). */
export type NullSut = SystemUnderTest & { issueQuery(samples: QuerySample[]): void };

/**
 * A JS SUT that completes every sample inside the call, with the batch
 * completion API: what loadgen costs when the SUT costs nothing. It takes
 * queries through issueQueryIds (no object per sample); with path
 * 'objects' it has only issueQuery, to measure that path.
 */
export function createNullSut(name = 'null', path: NullSutPath = 'ids'): NullSut {
  let scratch = new Float64Array(1);
  const issueQuery = (samples: QuerySample[]): void => {
    const n = samples.length;
    if (n > scratch.length) scratch = new Float64Array(n);
    for (let i = 0; i < n; i++) scratch[i] = samples[i]!.id;
    querySamplesCompleteIds(scratch, n);
  };
  if (path === 'objects') return { name, issueQuery };
  return {
    name,
    issueQuery,
    issueQueryIds(ids: Float64Array, _indices: Uint32Array, count: number): void {
      querySamplesCompleteIds(ids, count);
    },
  };
}

/**
 * The baseline with no JS at all on the path: the core completes each query
 * on its issue thread right after issuing it.
 */
export function createNullNativeSut(name = 'null-native'): NullNativeSut {
  return {
    name,
    [NATIVE_NULL_SUT]: true,
    issueQuery(): void {
      throw new Error('the null-native SUT is completed inside the native core; issueQuery is never called');
    },
  };
}

/** A QSL with no data: loading and unloading are no-ops. */
export function createSyntheticQsl(
  totalSampleCount = 1024,
  performanceSampleCount = totalSampleCount,
  name = 'synthetic',
): QuerySampleLibrary {
  return {
    name,
    totalSampleCount,
    performanceSampleCount,
    loadSamplesToRam(): void {},
    unloadSamplesFromRam(): void {},
  };
}
