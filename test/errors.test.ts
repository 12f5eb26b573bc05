import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  BusyError,
  createNullSut,
  createSyntheticQsl,
  InterfaceError,
  querySampleComplete,
  querySamplesComplete,
  querySamplesCompleteIds,
  SettingsError,
  startTest,
  SutError,
  type QuerySample,
  type SystemUnderTest,
  type TestResult,
} from '../lib/index.js';
import { loadNative, loadNativeInternals } from '../lib/native/index.js';
import { readText, tempDir } from './helpers.js';

// Server needs >= 459 queries for early stopping at the 99th percentile.
const quickServer = { scenario: 'Server', serverTargetQps: 3000, minDurationMs: 200, minQueryCount: 500 } as const;

describe('bad input is rejected before anything starts', () => {
  it.each([
    [{ scenario: 'server' }, 'scenario', "'Server'"],
    [{ serverTargetQps: -5, scenario: 'Server' }, 'serverTargetQps', '-5'],
    [{ serverTargetQps: 0, scenario: 'Server' }, 'serverTargetQps', '0'],
    [{ minDurationMs: 1.5 }, 'minDurationMs', '1.5'],
    [{ serverTargetLatencyPercentile: 99 }, 'serverTargetLatencyPercentile', '0.99'],
    [{ serverTargetLatencyNs: 10 }, 'serverTargetLatencyNs', 'unit'],
    [{ serverTargetQpss: 10 }, 'serverTargetQpss', 'serverTargetQps'],
    [{ server_target_qps: 10 }, 'server_target_qps', 'serverTargetQps'],
    [{ minQueryCount: 0, minDurationMs: 0 }, 'minQueryCount', '0'],
    [{ multiStreamSamplesPerQuery: 0 }, 'multiStreamSamplesPerQuery', '0'],
    [{ qslRngSeed: '18446744073709551616' }, 'qslRngSeed', '18446744073709551616'],
  ])('%j', async (settings, key, mention) => {
    const error = await startTest(createNullSut(), createSyntheticQsl(8), settings as never, { outdir: tempDir() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).code).toBe('ERR_LOADGEN_INVALID_SETTING');
    expect((error as SettingsError).key).toBe(key);
    expect((error as Error).message).toContain(mention);
    expect(loadNative().isRunning()).toBe(false);
  });

  it('rejects FindPeakPerformance outside Server', async () => {
    const error = await startTest(createNullSut(), createSyntheticQsl(8), { mode: 'FindPeakPerformance' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as Error).message).toContain("scenario is 'SingleStream'");
  });

  it('checks the QSL counts and the SUT shape', async () => {
    await expect(startTest(createNullSut(), createSyntheticQsl(0, 0), {})).rejects.toThrow(/totalSampleCount/);
    await expect(startTest({ name: 'x' } as unknown as SystemUnderTest, createSyntheticQsl(8), {})).rejects.toBeInstanceOf(
      InterfaceError,
    );
    await expect(
      startTest(createNullSut(), { name: 'q', totalSampleCount: 8, performanceSampleCount: 8 } as never, {}),
    ).rejects.toThrow(/loadSamplesToRam/);
    await expect(
      startTest(createNullSut(), createSyntheticQsl(8), { performanceIssueSame: true, performanceIssueSameIndex: 8 }),
    ).rejects.toThrow(/performanceIssueSameIndex/);
    await expect(startTest(createNullSut(), createSyntheticQsl(8), {}, { outdir: '' })).rejects.toBeInstanceOf(SettingsError);
  });
});

describe('one run at a time', () => {
  it('a second concurrent startTest gets a clear error and the first completes', async () => {
    const first = startTest(createNullSut(), createSyntheticQsl(64), quickServer, { outdir: tempDir() });
    const second = startTest(createNullSut(), createSyntheticQsl(64), quickServer, { outdir: tempDir() });
    await expect(second).rejects.toBeInstanceOf(BusyError);
    await expect(second).rejects.toThrow(/already running/);
    const result = await first;
    expect(result.valid).toBe(true);
    // And afterwards a new run starts normally.
    expect((await startTest(createNullSut(), createSyntheticQsl(64), quickServer, { outdir: tempDir() })).valid).toBe(true);
  });
});

describe('completions with bad ids are counted, never written', () => {
  it('counts invalid, duplicate and not-yet-issued ids and reports them', async () => {
    let maxSeenId = 0;
    let firstId: number | undefined;  // ids continue across the runs of a process
    const sut: SystemUnderTest = {
      name: 'sloppy',
      issueQuery(samples: QuerySample[]) {
        const id = samples[0]!.id;
        maxSeenId = Math.max(maxSeenId, id);
        firstId ??= id;
        if (id === firstId) {
          querySampleComplete(0);
          querySampleComplete(-3);
          querySampleComplete(1.5);
          querySampleComplete(Number.NaN);
          querySampleComplete(2 ** 60);
          querySamplesCompleteIds(new Float64Array([1e15, Number.POSITIVE_INFINITY]));
          querySampleComplete(id + 10); // a sample of this run not issued yet
        }
        querySamplesComplete(samples);
        if (id === firstId + 1) querySamplesComplete(samples); // duplicate
      },
    };
    const outdir = tempDir();
    const result = await startTest(sut, createSyntheticQsl(64), { ...quickServer, minQueryCount: 20 }, { outdir });
    expect(result.errors.invalidIds).toBe(7);
    expect(result.errors.unissuedIds).toBe(1);
    expect(result.errors.duplicateIds).toBe(1);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    expect(result.errors.count).toBe(9);
    expect(readText(join(outdir, 'mlperf_log_summary.txt'))).toContain('9 ERRORS encountered. See detailed log.');
  });

  it('completion calls outside a run are ignored, not thrown', () => {
    const before = loadNativeInternals().completionsOutsideRun();
    expect(() => querySampleComplete(5)).not.toThrow();
    expect(() => querySamplesComplete([{ id: 1 }, { id: 2 }])).not.toThrow();
    expect(loadNativeInternals().completionsOutsideRun()).toBe(before + 3);
  });

  it('rejects a batch that is not a typed array of ids', () => {
    expect(() => querySamplesCompleteIds([1, 2] as unknown as Float64Array)).toThrow(TypeError);
    expect(() => querySamplesCompleteIds(new Int8Array(2) as unknown as Float64Array)).toThrow(/Float64Array or a Uint32Array/);
    expect(() => querySamplesCompleteIds(new Float64Array(2), 3)).toThrow(RangeError);
  });
});

describe('a SUT that fails', () => {
  it('issueQuery throwing ends the run, writes the logs and rejects with the error attached', async () => {
    const boom = new Error('model exploded');
    let calls = 0;
    const sut: SystemUnderTest = {
      name: 'thrower',
      issueQuery(samples: QuerySample[]) {
        calls += 1;
        if (calls === 5) throw boom;
        querySamplesComplete(samples);
      },
    };
    const outdir = tempDir();
    const error = await startTest(sut, createSyntheticQsl(64), quickServer, { outdir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    expect((error as SutError).cause).toBe(boom);
    expect((error as Error).message).toContain('model exploded');
    const result = (error as SutError).result as TestResult;
    expect(result.valid).toBe(false);
    expect(result.invalidReasons.join('\n')).toContain('model exploded');
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(true);
    expect(readText(join(outdir, 'mlperf_log_summary.txt'))).toContain('Result is : INVALID');
    expect(loadNative().isRunning()).toBe(false);
  });

  it('an async issueQuery that rejects ends the run too', async () => {
    const sut: SystemUnderTest = {
      name: 'async-thrower',
      async issueQuery() {
        throw new Error('async failure');
      },
    };
    await expect(startTest(sut, createSyntheticQsl(8), quickServer, { outdir: tempDir() })).rejects.toThrow(/async failure/);
  });

  it('a QSL whose load rejects ends the run before issuing', async () => {
    const qsl = {
      ...createSyntheticQsl(8),
      async loadSamplesToRam() {
        throw new Error('disk gone');
      },
    };
    const error = await startTest(createNullSut(), qsl, quickServer, { outdir: tempDir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    expect((error as Error).message).toMatch(/loadSamplesToRam.*disk gone/);
    expect(((error as SutError).result as TestResult).counts.issuedQueries).toBe(0);
  });

  it('a SUT that never answers: Server ends at max duration, INVALID and explained', async () => {
    const started = Date.now();
    const silent: SystemUnderTest = { name: 'silent', issueQuery() {} };
    const result = await startTest(
      silent,
      createSyntheticQsl(8),
      { scenario: 'Server', serverTargetQps: 100, minDurationMs: 1000, maxDurationMs: 300 },
      { outdir: tempDir() },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.valid).toBe(false);
    expect(result.counts.completedSamples).toBe(0);
    expect(result.counts.incompleteSamples).toBe(result.counts.issuedSamples);
    expect(result.invalidReasons.join('\n')).toMatch(/never completed/);
    expect(result.errors.messages.map((m) => m.text).join('\n')).toMatch(/Max test duration reached/);
  });

  it('a SUT that never answers: SingleStream ends after the completion timeout', async () => {
    const started = Date.now();
    const result = await startTest(
      { name: 'silent', issueQuery() {} },
      createSyntheticQsl(8),
      { scenario: 'SingleStream', minDurationMs: 100, completionTimeoutMs: 300 },
      { outdir: tempDir() },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.valid).toBe(false);
    expect(result.counts.issuedQueries).toBe(1);
    expect(result.invalidReasons.join('\n')).toMatch(/stopped completing samples/);
  });
});
