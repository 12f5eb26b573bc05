import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import { createNullSut, createSyntheticQsl, startTest, SutError, type TestResult } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { repoRoot, tempDir } from './helpers.js';

const settings = { scenario: 'Server', serverTargetQps: 3000, minDurationMs: 200, minQueryCount: 500 };

function runWorker(file: string, data: unknown, env?: NodeJS.ProcessEnv): Worker {
  return new Worker(join(repoRoot, 'test', 'fixtures', file), { workerData: data, ...(env ? { env } : {}) });
}

describe('startTest from a worker_thread', () => {
  it('runs a test in a worker with its own addon state', async () => {
    const worker = runWorker('worker-run.mjs', { settings, outdir: tempDir() });
    const message = await new Promise<{ validity: string; sutName: string; issued: number; completed: number }>(
      (resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      },
    );
    await worker.terminate();
    expect(message.validity).toBe('VALID');
    expect(message.sutName).toBe('worker-null');
    expect(message.completed).toBe(message.issued);
    // The main thread can run afterwards.
    const result = await startTest(createNullSut(), createSyntheticQsl(64), settings as never, { outdir: tempDir() });
    expect(result.valid).toBe(true);
  });

  it('terminating a worker mid-run stops its run and frees the process for the next one', async () => {
    const worker = runWorker('worker-terminated.mjs', null, { ...process.env, LOADGEN_TEST_OUTDIR: tempDir() });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(loadNative().isRunning()).toBe(false);
    const result = await startTest(createNullSut(), createSyntheticQsl(64), settings as never, { outdir: tempDir() });
    expect(result.valid).toBe(true);
  });
});

/** Runs test/fixtures/terminate-workers.mjs in a child process: its exit code or signal and its output. */
function terminateWorkers(count: number): Promise<{ code: number | null; signal: string | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'test', 'fixtures', 'terminate-workers.mjs'), String(count), tempDir()], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 100_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, output }));
  });
}

describe('terminating workers that run startTest, 200 times', () => {
  // A threadsafe-function callback into an environment that is going away
  // aborted the process (FATAL ERROR: Error::Error napi_define_properties)
  // in about 2 of 3 terminations. In child processes, so that an abort is a
  // failed test, not a dead test runner; two at once, to stay near 30 s.
  it('never crashes the process', { timeout: 120_000 }, async () => {
    const runs = await Promise.all([terminateWorkers(100), terminateWorkers(100)]);
    for (const run of runs) {
      expect(run.output).not.toMatch(/FATAL ERROR/);
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      expect(run.output).toMatch(/terminated 100/);
    }
  });
});

describe("a dispatch worker thread that dies mid-run (dispatch 'worker')", () => {
  it('ends the run with a SutError naming the worker, logs written; the next startTest works', async () => {
    const outdir = tempDir();
    const started = Date.now();
    const error = await startTest(
      { name: 'main' },
      createSyntheticQsl(64),
      { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 2000, minQueryCount: 2000, dispatch: 'worker', dispatchWorkers: 2 },
      { outdir },
      { sutModule: join(repoRoot, 'test', 'fixtures', 'dispatch-exiting-sut.mjs') },
    ).catch((e: unknown) => e);
    // Ended by the death, not by the run's own end (2 s) or a timeout.
    expect(Date.now() - started).toBeLessThan(1900);
    expect(error).toBeInstanceOf(SutError);
    const message = (error as SutError).message;
    expect(message).toMatch(/dispatch worker 1 /);
    expect(message).toMatch(/exited \(code 7\) during the run/);
    // The logs of the aborted run are written, with the reason.
    const result = (error as SutError).result as TestResult;
    expect(result.valid).toBe(false);
    expect(readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8')).toMatch(/Result is : INVALID/);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    // Named by its thread ID, as a registration line names it.
    const thread = /Run aborted: dispatch worker thread (\d+) ended during the run/.exec(detail)?.[1];
    expect(thread).toBeDefined();
    expect(detail).toMatch(new RegExp(`Registered dispatch worker\\[\\d\\]\\. thread ID : ${thread}"`));
    expect(loadNative().isRunning()).toBe(false);
    // The process is free for the next run, also a worker-dispatched one.
    const next = await startTest(createNullSut(), createSyntheticQsl(64), settings as never, { outdir: tempDir() });
    expect(next.valid).toBe(true);
    const again = await startTest(
      { name: 'null' },
      createSyntheticQsl(64),
      { ...settings, dispatch: 'worker', dispatchWorkers: 2 } as never,
      { outdir: tempDir() },
      { sutModule: join(repoRoot, 'test', 'fixtures', 'dispatch-sut-module.mjs') },
    );
    expect(again.valid).toBe(true);
  });
});
