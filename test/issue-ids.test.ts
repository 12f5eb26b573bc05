// The typed-array issue path (issueQueryIds, issue 13 item 2): every sample
// exactly once with the ids and QSL indices the object path gets, in every
// scenario and dispatch mode; the lent arrays fail clearly after the call.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createSyntheticQsl,
  InterfaceError,
  querySampleComplete,
  querySamplesCompleteIds,
  registerIssueQueryThread,
  startTest,
  SutError,
  type QuerySample,
  type SystemUnderTest,
  type TestResult,
  type TestSettingsInput,
} from '../lib/index.js';
import { repoRoot, tempDir } from './helpers.js';

const fixture = (name: string) => join(repoRoot, 'test', 'fixtures', name);

const SCENARIOS = {
  SingleStream: { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 0, minQueryCount: 300 },
  MultiStream: { scenario: 'MultiStream', multiStreamExpectedLatencyNs: 2000, multiStreamSamplesPerQuery: 8, minDurationMs: 0, minQueryCount: 100 },
  Server: { scenario: 'Server', serverTargetQps: 5000, minDurationMs: 0, minQueryCount: 500 },
  Offline: { scenario: 'Offline', minDurationMs: 0, minQueryCount: 3000 },
} satisfies Record<string, TestSettingsInput>;
type ScenarioName = keyof typeof SCENARIOS;

const indexBytes = (index: number) => new Uint8Array(new Uint32Array([index]).buffer);

/** Completes each sample with the QSL index it received as its response (4 bytes, little-endian). */
function recordingSut(path: 'ids' | 'objects', busyFirstMs = 0): SystemUnderTest & { calls: number } {
  const busy = (sut: { calls: number }) => {
    if (sut.calls++ !== 0 || busyFirstMs === 0) return;
    const end = performance.now() + busyFirstMs;
    while (performance.now() < end) {
      /* a backlog builds up behind this call */
    }
  };
  if (path === 'objects') {
    const sut = {
      name: 'recording-objects',
      calls: 0,
      issueQuery(samples: QuerySample[]) {
        busy(sut);
        for (const s of samples) querySampleComplete(s.id, indexBytes(s.index));
      },
    };
    return sut;
  }
  const sut = {
    name: 'recording-ids',
    calls: 0,
    issueQueryIds(ids: Float64Array, indices: Uint32Array, count: number) {
      busy(sut);
      for (let i = 0; i < count; i++) querySampleComplete(ids[i]!, indexBytes(indices[i]!));
    },
  };
  return sut;
}

interface AccuracyRecord {
  seq_id: number;
  qsl_idx: number;
  data: string;
}

/**
 * Every issued sample completed once, each with the QSL index the core
 * issued it with; returns the QSL indices by sample (seq_id order).
 */
function deliveredIndices(result: TestResult): number[] {
  expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
  expect(result.errors.invalidIds + result.errors.duplicateIds + result.errors.unissuedIds).toBe(0);
  const records = JSON.parse(readFileSync(result.files.accuracyLog!, 'utf8')) as AccuracyRecord[];
  expect(records.length).toBe(result.counts.issuedSamples);
  expect(new Set(records.map((r) => r.seq_id)).size).toBe(records.length);
  for (const r of records) expect(Buffer.from(r.data, 'hex').readUInt32LE(0)).toBe(r.qsl_idx);
  return records.sort((a, b) => a.seq_id - b.seq_id).map((r) => r.qsl_idx);
}

async function run(sut: SystemUnderTest, settings: TestSettingsInput, options = {}): Promise<TestResult> {
  return startTest(sut, createSyntheticQsl(256), { ...settings, accuracyLogProbability: 1 }, { outdir: tempDir() }, options);
}

describe.each(['wake', 'poll'] as const)("issueQueryIds, dispatch '%s'", (dispatch) => {
  it.each(Object.keys(SCENARIOS) as ScenarioName[])('%s: each sample once, the object path\'s ids and indices', async (scenario) => {
    const settings = { ...SCENARIOS[scenario], dispatch };
    const byIds = await run(recordingSut('ids'), settings);
    const byObjects = await run(recordingSut('objects'), settings);
    expect(byIds.counts.issuedSamples).toBe(byObjects.counts.issuedSamples);
    expect(deliveredIndices(byIds)).toEqual(deliveredIndices(byObjects));
  });

  it('Server with server_coalesce_queries: a coalesced backlog arrives in one call, each sample once', async () => {
    const settings = { ...SCENARIOS.Server, dispatch, serverCoalesceQueries: true, serverTargetLatencyNs: 1e9 };
    const ids = recordingSut('ids', 20);
    const byIds = await run(ids, settings);
    const byObjects = await run(recordingSut('objects', 20), settings);
    expect(ids.calls).toBeLessThan(byIds.counts.issuedQueries);  // coalesced
    expect(deliveredIndices(byIds)).toEqual(deliveredIndices(byObjects));
  });
});

describe("issueQueryIds, dispatch 'worker'", () => {
  it.each(Object.keys(SCENARIOS) as ScenarioName[])('%s with 2 workers: each sample once, the object path\'s indices', async (scenario) => {
    const settings = { ...SCENARIOS[scenario], dispatch: 'worker', dispatchWorkers: 2 } as const;
    const module = { sutModule: fixture('recording-sut-module.mjs') };
    const byIds = await run({ name: 'workers' }, settings, module);
    const byObjects = await run({ name: 'workers' }, settings, { ...module, sutOptions: { path: 'objects' } });
    expect(deliveredIndices(byIds)).toEqual(deliveredIndices(byObjects));
  });

  it('a worker SUT completing lent ids after its call fails the run with the clear error', async () => {
    const error = await run({ name: 'workers' }, { ...SCENARIOS.Offline, dispatch: 'worker' },
      { sutModule: fixture('recording-sut-module.mjs'), sutOptions: { misuse: true } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    expect((error as Error).message).toMatch(/valid only during the call/);
  });
});

describe('issueQueryIds on a registered issue-query thread', () => {
  it('Server: each sample once, the object path\'s indices', async () => {
    const settings = { ...SCENARIOS.Server, serverNumIssueQueryThreads: 1 };
    const main = { name: 'main', issueQuery: () => { throw new Error('the run thread got a query'); } };
    const results: TestResult[] = [];
    for (const path of ['ids', 'objects'] as const) {
      const registration = registerIssueQueryThread(recordingSut(path));
      results.push(await run(main, settings));
      await registration.released;
    }
    expect(deliveredIndices(results[0]!)).toEqual(deliveredIndices(results[1]!));
  });
});

describe('issueQueryIds: the arrays are valid only during the call', () => {
  it('ids kept past a synchronous call read NaN / 0xFFFFFFFF; completing them throws and ends the run, logs written', async () => {
    let kept: { ids: Float64Array; indices: Uint32Array; count: number } | undefined;
    let thrown: unknown;
    const outdir = tempDir();
    const sut = {
      name: 'keeps-ids',
      issueQueryIds(ids: Float64Array, indices: Uint32Array, count: number) {
        expect(Number.isInteger(ids[0])).toBe(true);
        kept = { ids, indices, count };
        setTimeout(() => {
          try {
            querySamplesCompleteIds(ids, count);
          } catch (error) {
            thrown = error;
          }
        }, 5);
      },
    };
    const error = await startTest(sut, createSyntheticQsl(64), SCENARIOS.Offline, { outdir }).catch((e: unknown) => e);
    expect(Number.isNaN(kept!.ids[0])).toBe(true);
    expect(Number.isNaN(kept!.ids[kept!.count - 1])).toBe(true);
    expect(kept!.indices[0]).toBe(0xffffffff);
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toMatch(/querySamplesCompleteIds.*valid only during the call.*ids\.slice\(0, count\)/s);
    expect(error).toBeInstanceOf(SutError);
    expect((error as SutError).cause).toBe(thrown);
    expect((error as Error).message).toMatch(/a completion call failed: .*valid only during the call/);
    expect(existsSync(join(outdir, 'mlperf_log_detail.txt'))).toBe(true);
  });

  it('an async issueQueryIds completing after an await gets the error; the run ends', async () => {
    const sut = {
      name: 'async-ids',
      async issueQueryIds(ids: Float64Array, _indices: Uint32Array, count: number) {
        await null;
        querySamplesCompleteIds(ids, count);
      },
    };
    for (const scenario of ['SingleStream', 'Offline'] as const) {
      const error = await startTest(sut, createSyntheticQsl(64), SCENARIOS[scenario], { outdir: tempDir() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SutError);
      expect((error as Error).message).toMatch(/valid only during the call/);
    }
  });

  it('single completions with a kept id fail the same way', async () => {
    const sut = {
      name: 'kept-single',
      issueQueryIds(ids: Float64Array, _indices: Uint32Array, count: number) {
        const copy = ids.slice(0, count);  // the documented way keeps working
        querySamplesCompleteIds(copy.subarray(0, count - 1), count - 1);
        setTimeout(() => {
          try {
            querySampleComplete(ids[count - 1]!);
          } catch {
            /* the run fails with it */
          }
        }, 1);
      },
    };
    const error = await startTest(sut, createSyntheticQsl(64), SCENARIOS.Offline, { outdir: tempDir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    expect((error as Error).message).toMatch(/querySampleComplete\(id\).*valid only during the call/);
  });

  it('copies made inside the call complete later without error', async () => {
    const sut = {
      name: 'copies',
      issueQueryIds(ids: Float64Array, _indices: Uint32Array, count: number) {
        const copy = ids.slice(0, count);
        setTimeout(() => querySamplesCompleteIds(copy, count), 1);
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64), SCENARIOS.Offline, { outdir: tempDir() });
    expect(result.validity).toBe('VALID');
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
  });
});

describe('SUT interface checks', () => {
  it('a SUT with neither issueQuery nor issueQueryIds is an InterfaceError before anything starts', async () => {
    const outdir = join(tempDir(), 'never-created');
    const error = await startTest({ name: 'nothing' } as SystemUnderTest, createSyntheticQsl(8), {}, { outdir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterfaceError);
    expect((error as Error).message).toMatch(/sut\.issueQuery must be a function \(or sut\.issueQueryIds one\), got undefined/);
    expect(existsSync(outdir)).toBe(false);
    const bad = await startTest({ name: 'bad', issueQueryIds: 5 } as unknown as SystemUnderTest, createSyntheticQsl(8), {}, { outdir })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InterfaceError);
    expect((bad as Error).message).toMatch(/sut\.issueQueryIds must be a function when present, got number 5/);
    expect(() => registerIssueQueryThread({} as SystemUnderTest)).toThrow(InterfaceError);
  });

  it('a NaN id is only counted when the SUT takes objects (no lent arrays)', async () => {
    let first = true;
    const sut = {
      name: 'nan-objects',
      issueQuery(samples: QuerySample[]) {
        if (first) querySampleComplete(Number.NaN);
        first = false;
        querySamplesCompleteIds(Float64Array.from(samples, (s) => s.id));
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64), SCENARIOS.Offline, { outdir: tempDir() });
    expect(result.errors.invalidIds).toBe(1);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
  });
});
