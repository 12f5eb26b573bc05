/**
 * Ids are unique across the runs of a process: a late completion of an
 * earlier run's sample is counted as stale and never completes a sample of
 * the run under way (before, every run restarted at id 1).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createSyntheticQsl,
  querySampleComplete,
  querySamplesComplete,
  querySamplesCompleteIds,
  startTest,
  type QuerySample,
  type SystemUnderTest,
} from '../lib/index.js';
import { loadNativeInternals } from '../lib/native/index.js';
import { tempDir } from './helpers.js';

// The SUT answers each query of run 2 after this (a timer: it may fire up to ~1 ms early).
const SUT_DELAY_MS = 5;

describe('a completion that arrives after its run ended', () => {
  it('is counted stale in the next run, never credited; that run keeps its own latencies', async () => {
    let run = 1;
    let held: number | undefined;  // run 1's first id, completed only during run 2
    let firstIdOfRun2: number | undefined;
    const sut: SystemUnderTest = {
      name: 'late-completer',
      issueQuery(samples: QuerySample[]) {
        if (run === 1) {
          // Run 1 (Offline, one query): every sample but the first completes now.
          held = samples[0]!.id;
          querySamplesComplete(samples.slice(1));
          return;
        }
        if (firstIdOfRun2 === undefined) {
          firstIdOfRun2 = samples[0]!.id;
          querySampleComplete(held!);  // the late completion of run 1's sample
        }
        setTimeout(() => querySamplesComplete(samples), SUT_DELAY_MS);
      },
    };
    const qsl = createSyntheticQsl(16);

    const first = await startTest(sut, qsl, { scenario: 'Offline', minQueryCount: 16, minDurationMs: 0, completionTimeoutMs: 200 }, {
      outdir: tempDir(),
    });
    expect(first.counts.incompleteSamples).toBe(1);

    run = 2;
    const outdir = tempDir();
    const second = await startTest(
      sut,
      qsl,
      { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 5_000_000, minQueryCount: 10, minDurationMs: 0 },
      { outdir },
    );
    // Every latency is the SUT's own (about its delay), none the stale call's (~0).
    expect(second.latencyNs.min).toBeGreaterThanOrEqual(SUT_DELAY_MS * 1e6 * 0.5);
    expect(second.errors.duplicateIds).toBe(0);
    expect(second.errors.staleIds).toBe(1);
    expect(second.errors.invalidIds).toBe(0);
    expect(second.counts.completedSamples).toBe(second.counts.issuedSamples);
    // Run 2's ids begin past every id run 1 was given.
    expect(firstIdOfRun2).toBeGreaterThan(held!);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail.match(/late completion for an id of an earlier series or run/g)?.length).toBe(1);
  });
});

describe('completion calls given the wrong types complete nothing', () => {
  it('querySamplesComplete with a single response object throws a TypeError; no id of an earlier batch is completed again', async () => {
    let run = 1;
    const errors: unknown[] = [];
    const sut: SystemUnderTest = {
      name: 'not-an-array',
      issueQuery(samples: QuerySample[]) {
        if (run === 2) {
          try {
            querySamplesComplete({ id: samples[0]!.id } as never);
          } catch (error) {
            errors.push(error);
          }
        }
        querySamplesComplete(samples);
      },
    };
    const settings = { scenario: 'Offline', minQueryCount: 64, minDurationMs: 0 } as const;
    await startTest(sut, createSyntheticQsl(64), settings, { outdir: tempDir() });
    run = 2;
    const second = await startTest(sut, createSyntheticQsl(64), settings, { outdir: tempDir() });
    expect(errors.length).toBe(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect((errors[0] as Error).message).toMatch(/responses must be an array of responses/);
    // Before: the reused buffer's ids (run 1's batch) were completed again.
    expect(second.errors.staleIds + second.errors.duplicateIds + second.errors.invalidIds).toBe(0);
    expect(second.counts.completedSamples).toBe(second.counts.issuedSamples);
  });

  it('querySamplesCompleteIds: the array, count and nTokens are checked before anything is counted', () => {
    const before = loadNativeInternals().completionsOutsideRun();
    const ids = new Float64Array(2);
    expect(() => querySamplesCompleteIds([1, 2] as never)).toThrow(/querySamplesCompleteIds: ids must be a Float64Array or a Uint32Array/);
    expect(() => querySamplesCompleteIds(ids, 2.5)).toThrow(RangeError);
    expect(() => querySamplesCompleteIds(ids, 2.5)).toThrow(/count must be undefined or an integer from 0 to ids.length \(2\), got 2.5/);
    expect(() => querySamplesCompleteIds(ids, 3)).toThrow(/got 3/);
    expect(() => querySamplesCompleteIds(ids, -1)).toThrow(RangeError);
    expect(() => querySamplesCompleteIds(ids, '1' as never)).toThrow(TypeError);
    expect(() => querySamplesCompleteIds(ids, 2, new Float64Array(1))).toThrow(/nTokens must have an element for every id completed \(2\), got 1/);
    expect(() => querySamplesCompleteIds(ids, undefined, [1, 2] as never)).toThrow(/nTokens must be a Float64Array/);
    expect(() => querySamplesCompleteIds(ids, undefined, new Uint32Array(2) as never)).toThrow(TypeError);
    expect(loadNativeInternals().completionsOutsideRun()).toBe(before);
    // Well-formed calls outside a run are only counted.
    querySamplesCompleteIds(ids, 1);
    querySamplesCompleteIds(Uint32Array.from([1, 2]), undefined, Float64Array.from([2, 2]));
    expect(loadNativeInternals().completionsOutsideRun()).toBe(before + 3);
  });
});
