import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import { createNullSut, createSyntheticQsl, startTest } from '../lib/index.js';
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
