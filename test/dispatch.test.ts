import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import {
  createNullSut,
  createSyntheticQsl,
  NULL_SUT_MODULE,
  querySamplesCompleteIds,
  SettingsError,
  startTest,
  SutError,
  type QuerySample,
  type Scenario,
  type SystemUnderTest,
  type TestResult,
  type TestSettingsInput,
} from '../lib/index.js';
import { repoRoot, tempDir } from './helpers.js';

const fixture = (name: string) => join(repoRoot, 'test', 'fixtures', name);

// Fast and VALID with a SUT that costs nothing, in every mode.
const SCENARIOS: Record<'SingleStream' | 'Server' | 'Offline', TestSettingsInput> = {
  SingleStream: { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 20, minQueryCount: 100 },
  Server: { scenario: 'Server', serverTargetQps: 5000, minDurationMs: 200, minQueryCount: 1000 },
  Offline: { scenario: 'Offline', minDurationMs: 0, minQueryCount: 2000 },
};

/** A JS null SUT that counts every id it receives. */
function countingNullSut(): SystemUnderTest & { seen: Map<number, number> } {
  const seen = new Map<number, number>();
  const inner = createNullSut('counting-null');
  return {
    name: 'counting-null',
    seen,
    issueQuery(samples: QuerySample[]) {
      for (const s of samples) seen.set(s.id, (seen.get(s.id) ?? 0) + 1);
      inner.issueQuery(samples);
    },
  };
}

interface AccuracyRecord {
  seq_id: number;
  qsl_idx: number;
  data: string;
}

function accuracyRecords(result: TestResult): AccuracyRecord[] {
  return JSON.parse(readFileSync(result.files.accuracyLog!, 'utf8')) as AccuracyRecord[];
}

/** The fixture SUT's response: its worker's threadId, 4 bytes little-endian, as hex. */
function threadIdOf(hex: string): number {
  return Buffer.from(hex, 'hex').readUInt32LE(0);
}

function expectDelivered(result: TestResult): void {
  expect(result.validity).toBe('VALID');
  expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
  // Every query has its delivery stamp (the lag is measured over all of them).
  const lag = result.overhead?.deliveryLagNs;
  expect(lag).toBeTruthy();
  expect(lag!.count).toBe(result.counts.issuedQueries);
  expect(lag!.p50).toBeGreaterThanOrEqual(0);
}

describe.each(['wake', 'poll'] as const)("dispatch '%s'", (dispatch) => {
  it.each(Object.keys(SCENARIOS) as (keyof typeof SCENARIOS)[])('%s: VALID, every sample exactly once, delivery stamped', async (scenario) => {
    const sut = countingNullSut();
    const result = await startTest(sut, createSyntheticQsl(256), { ...SCENARIOS[scenario], dispatch }, { outdir: tempDir() });
    expectDelivered(result);
    expect(sut.seen.size).toBe(result.counts.issuedSamples);
    for (const n of sut.seen.values()) expect(n).toBe(1);
    // Consecutive ids from the series' first (ids continue across the runs of a process).
    let first = Infinity;
    for (const id of sut.seen.keys()) first = Math.min(first, id);
    for (let k = 0; k < result.counts.issuedSamples; k++) expect(sut.seen.has(first + k)).toBe(true);
  });
});

describe("dispatch 'wake' with wakeLeadUs", () => {
  it('Server: every sample exactly once; an async SUT still completes through the event loop', async () => {
    const sut = countingNullSut();
    const result = await startTest(sut, createSyntheticQsl(256), { ...SCENARIOS.Server, serverTargetQps: 20000, wakeLeadUs: 100 }, { outdir: tempDir() });
    expectDelivered(result);
    expect(sut.seen.size).toBe(result.counts.issuedSamples);
    for (const n of sut.seen.values()) expect(n).toBe(1);

    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    const timed = await startTest(
      { name: 'timer-sut', issueQuery: (samples) => void setTimeout(() => querySamplesCompleteIds(Float64Array.from(samples, (s) => s.id)), 0) },
      createSyntheticQsl(64),
      { ...SCENARIOS.Server, serverTargetQps: 20000, wakeLeadUs: 100 },
      { outdir: tempDir() },
    );
    clearInterval(timer);
    expect(timed.counts.completedSamples).toBe(timed.counts.issuedSamples);
    expect(ticks).toBeGreaterThan(20);
  });

  it('rejects a lead above 10 ms before the run starts', async () => {
    await expect(startTest(createNullSut(), createSyntheticQsl(16), { wakeLeadUs: 20000 }, { outdir: tempDir() })).rejects.toThrow(
      /wakeLeadUs.*20000/,
    );
  });
});

describe("dispatch 'poll'", () => {
  it('keeps the event loop turning: timers fire while the SUT completes from one', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    const result = await startTest(
      { name: 'timer-sut', issueQuery: (samples) => void setTimeout(() => querySamplesCompleteIds(Float64Array.from(samples, (s) => s.id)), 0) },
      createSyntheticQsl(64),
      { scenario: 'Server', serverTargetQps: 5000, minDurationMs: 200, minQueryCount: 1000, dispatch: 'poll' },
      { outdir: tempDir() },
    );
    clearInterval(timer);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    expect(result.overhead?.deliveryLagNs?.count).toBe(result.counts.issuedQueries);
    expect(ticks).toBeGreaterThan(20);
  });
});

describe("dispatch 'worker'", () => {
  it.each(Object.keys(SCENARIOS) as Scenario[])('%s with 2 workers: VALID, every sample exactly once, delivery stamped', async (scenario) => {
    const main = { name: 'fixture', issueQuery: () => { throw new Error('the main thread got a query'); } };
    const result = await startTest(
      main,
      createSyntheticQsl(256),
      { ...SCENARIOS[scenario as keyof typeof SCENARIOS], dispatch: 'worker', dispatchWorkers: 2, accuracyLogProbability: 1 },
      { outdir: tempDir() },
      { sutModule: fixture('dispatch-sut-module.mjs') },
    );
    expectDelivered(result);
    // Every sample's response came back from a worker, once.
    const records = accuracyRecords(result);
    expect(records.length).toBe(result.counts.issuedSamples);
    expect(new Set(records.map((r) => r.seq_id)).size).toBe(records.length);
  });

  it('spreads queries over both workers; the main thread stays free; worker data reaches the accuracy log', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    process.env['LOADGEN_TEST_BUSY_US'] = '300';
    let result: TestResult;
    try {
      result = await startTest(
        { name: 'fixture' },
        createSyntheticQsl(256),
        { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 300, minQueryCount: 600, dispatch: 'worker', dispatchWorkers: 2,
          accuracyLogProbability: 1 },
        { outdir: tempDir() },
        { sutModule: fixture('dispatch-sut-module.mjs') },
      );
    } finally {
      delete process.env['LOADGEN_TEST_BUSY_US'];
      clearInterval(timer);
    }
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    const records = accuracyRecords(result);
    expect(records.length).toBe(result.counts.issuedSamples);
    const byThread = new Map<number, number>();
    for (const r of records) byThread.set(threadIdOf(r.data), (byThread.get(threadIdOf(r.data)) ?? 0) + 1);
    expect(byThread.size).toBe(2);
    for (const n of byThread.values()) expect(n).toBeGreaterThan(records.length / 10);
    // ~300 ms of run: the main thread's timers kept firing.
    expect(ticks).toBeGreaterThan(20);
    const detail = readFileSync(result.files.detail!, 'utf8');
    expect(detail.match(/Registered dispatch worker\[\d\]/g)?.length).toBe(2);
  });

  it('serves the null SUT module (what the CLI and bench use) and early stops', async () => {
    const result = await startTest(
      { name: 'null' },
      createSyntheticQsl(256),
      { scenario: 'Server', serverTargetQps: 20000, minDurationMs: 500, minQueryCount: 1000, maxQueryCount: 300, dispatch: 'worker' },
      { outdir: tempDir() },
      { sutModule: NULL_SUT_MODULE },
    );
    expect(result.counts.issuedQueries).toBe(300);
    expect(result.counts.completedSamples).toBe(300);
    expect(result.errors.messages.some((m) => /Max query count reached/.test(m.text))).toBe(true);
  });

  it("rejects startTest with the worker SUT's error as the cause", async () => {
    const error = await startTest(
      { name: 'throwing' },
      createSyntheticQsl(64),
      { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 300, minQueryCount: 100, dispatch: 'worker', dispatchWorkers: 2 },
      { outdir: tempDir() },
      { sutModule: fixture('dispatch-throwing-sut.mjs') },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    const cause = (error as SutError).cause as Error;
    expect(cause).toBeInstanceOf(RangeError);
    expect(cause.message).toBe('boom in the worker');
    expect((error as SutError).message).toContain('boom in the worker');
  });

  it('a module that cannot be loaded rejects before the run starts', async () => {
    const outdir = tempDir();
    const error = await startTest(
      { name: 'missing' }, createSyntheticQsl(64), { dispatch: 'worker' }, { outdir },
      { sutModule: join(outdir, 'no-such-module.mjs') },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(false);
  });

  it('serves workers the user started (runDispatchWorker) without a sutModule', async () => {
    const workers = [0, 1].map(() => new Worker(fixture('dispatch-user-worker.mjs')));
    type Message = { kind: string; threadId: number; received?: number };
    const registered = workers.map((w) => new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    }));
    const released = workers.map((w) => new Promise<Message>((resolve) => {
      w.on('message', (m: Message) => {
        if (m.kind === 'released') resolve(m);
      });
    }));
    await Promise.all(registered);
    const result = await startTest(
      { name: 'user-workers' },
      createSyntheticQsl(64),
      { ...SCENARIOS.Server, dispatch: 'worker', dispatchWorkers: 2 },
      { outdir: tempDir() },
    );
    const reports = await Promise.all(released);
    await Promise.all(workers.map((w) => w.terminate()));
    expect(result.validity).toBe('VALID');
    expect(reports.reduce((sum, m) => sum + m.received!, 0)).toBe(result.counts.issuedSamples);
  });
});

describe('dispatch settings', () => {
  it("rejects dispatch 'polling' with a did-you-mean, before anything starts", async () => {
    const outdir = join(tempDir(), 'never-created');
    const error = await startTest(createNullSut(), createSyntheticQsl(64), { dispatch: 'polling' as never }, { outdir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).key).toBe('dispatch');
    expect((error as Error).message).toContain("Did you mean 'poll'?");
    expect(existsSync(outdir)).toBe(false);
  });

  it('rejects dispatchWorkers 0 and worker dispatch combined with issue-query threads', async () => {
    const outdir = join(tempDir(), 'never-created');
    const zero = await startTest({ name: 'x' }, createSyntheticQsl(64), { dispatch: 'worker', dispatchWorkers: 0 }, { outdir }).catch((e: unknown) => e);
    expect(zero).toBeInstanceOf(SettingsError);
    expect((zero as SettingsError).key).toBe('dispatchWorkers');
    const both = await startTest({ name: 'x' }, createSyntheticQsl(64),
      { scenario: 'Server', dispatch: 'worker', serverNumIssueQueryThreads: 2 }, { outdir }).catch((e: unknown) => e);
    expect(both).toBeInstanceOf(SettingsError);
    expect(existsSync(outdir)).toBe(false);
  });

  it('accepts --set dispatch=poll', async () => {
    const { settingsFromAssignments } = await import('../lib/index.js');
    expect(settingsFromAssignments(['dispatch=poll', 'dispatch_workers=3', 'dispatch_spin_us=20'])).toEqual({
      dispatch: 'poll', dispatchWorkers: 3, dispatchSpinUs: 20,
    });
  });
});
