/**
 * The native addon's surface: lib/errors.ts classes thrown from C++ with
 * their codes, the one run slot (the busy check), and the test-only surface
 * kept apart from the production one.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import {
  BusyError,
  createNullSut,
  createSyntheticQsl,
  LoadgenError,
  NotRunningError,
  SettingsError,
  startTest,
} from '../lib/index.js';
import { loadNative, loadNativeInternals } from '../lib/native/index.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import { repoRoot, tempDir } from './helpers.js';

/** What `fn` threw (fails the test when it did not throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('errors thrown by the addon are lib/errors.ts classes', () => {
  it('BusyError (ERR_LOADGEN_BUSY) from the run slot', () => {
    const native = loadNative();
    native.reserveRun();
    try {
      const error = thrown(() => native.reserveRun());
      expect(error).toBeInstanceOf(BusyError);
      expect(error).toBeInstanceOf(LoadgenError);
      expect((error as BusyError).code).toBe('ERR_LOADGEN_BUSY');
      expect((error as BusyError).name).toBe('BusyError');
      expect((error as Error).message).toMatch(/already running in this thread/);
    } finally {
      expect(native.releaseRun()).toBe(true);
    }
    expect(native.releaseRun()).toBe(false);
  });

  it('NotRunningError (ERR_LOADGEN_NOT_RUNNING) from calls that need a run', () => {
    const native = loadNative();
    for (const call of [() => native.finish(), () => native.seriesInfo()]) {
      const error = thrown(call);
      expect(error).toBeInstanceOf(NotRunningError);
      expect((error as NotRunningError).code).toBe('ERR_LOADGEN_NOT_RUNNING');
      expect((error as Error).message).toMatch(/no loadgen (test|series) is running/);
    }
  });

  it('SettingsError (ERR_LOADGEN_INVALID_SETTING) from settings the core rejects', () => {
    const settings = toNativeSettings(
      resolveTestSettings({ scenario: 'Offline', performanceIssueSame: true, performanceIssueSameIndex: 100 }),
    );
    const error = thrown(() => loadNativeInternals().conformance.generateTrace(settings, 8, 8));
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).code).toBe('ERR_LOADGEN_INVALID_SETTING');
    expect((error as SettingsError).key).toBe('(settings)');
    expect((error as Error).message).toMatch(/^conformance\.generateTrace: .*performance_issue_same_index 100/);
  });

  it('argument checks stay TypeError and RangeError', () => {
    const native = loadNative();
    expect(thrown(() => native.start(undefined as never, undefined as never))).toBeInstanceOf(TypeError);
    expect(thrown(() => native.completeBatch(new Float64Array(2), 3))).toBeInstanceOf(RangeError);
    expect(native.releaseRun()).toBe(false); // a rejected start took nothing
  });

  it('setErrorClasses checks every class and its code before storing any', () => {
    const native = loadNative();
    expect(thrown(() => native.setErrorClasses({} as never))).toBeInstanceOf(TypeError);
    const swapped = { BusyError: NotRunningError, NotRunningError, SettingsError } as never;
    expect((thrown(() => native.setErrorClasses(swapped)) as Error).message).toMatch(/BusyError instances must have code ERR_LOADGEN_BUSY/);
    // The classes handed over by the loader are still the ones thrown.
    expect(thrown(() => native.finish())).toBeInstanceOf(NotRunningError);
  });
});

describe('one busy check: the process-wide run slot', () => {
  it('startTest in this thread while the slot is held is a BusyError, and nothing starts', async () => {
    const native = loadNative();
    native.reserveRun();
    try {
      const error = await startTest(createNullSut(), createSyntheticQsl(8), {}, { outdir: tempDir() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BusyError);
      expect(native.isRunning()).toBe(false);
    } finally {
      native.releaseRun();
    }
  });

  it('a worker thread gets its own BusyError class while the main thread holds the slot', async () => {
    const native = loadNative();
    native.reserveRun();
    try {
      const worker = new Worker(join(repoRoot, 'test', 'fixtures', 'busy-worker.mjs'), { workerData: { outdir: tempDir() } });
      const message = await new Promise<{ busy: boolean; loadgen: boolean; name: string; code: string; message: string }>(
        (resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        },
      );
      await worker.terminate();
      expect(message).toMatchObject({ busy: true, loadgen: true, name: 'BusyError', code: 'ERR_LOADGEN_BUSY' });
      expect(message.message).toMatch(/already running in this process/);
    } finally {
      native.releaseRun();
    }
  });

  it('the slot is free again once startTest settles', async () => {
    const result = await startTest(createNullSut(), createSyntheticQsl(64), {
      scenario: 'Offline', minDurationMs: 0, minQueryCount: 100,
    }, { outdir: tempDir() });
    expect(result.valid).toBe(true);
    const native = loadNative();
    expect(native.releaseRun()).toBe(false); // startTest gave it back
    native.reserveRun();
    expect(native.releaseRun()).toBe(true);
  });
});

describe('the test-only surface is apart from the production one', () => {
  it('the production addon has no conformance, bench or test counters', () => {
    const native = loadNative() as unknown as Record<string, unknown>;
    for (const name of ['conformance', 'bench', 'completionsOutsideRun']) expect(name in native).toBe(false);
    expect(Object.keys(native).filter((name) => name.startsWith('_'))).toEqual(['_internals']);
    expect(typeof native['config']).toBe('object'); // loadSettings needs it: production
  });

  it('loadNativeInternals() has them', () => {
    const internals = loadNativeInternals();
    expect(typeof internals.conformance.generateTrace).toBe('function');
    expect(typeof internals.conformance.deriveEffective).toBe('function');
    expect(typeof internals.bench.clockReadNs).toBe('function');
    expect(typeof internals.bench.cpuNoise).toBe('function');
    expect(typeof internals.completionsOutsideRun()).toBe('number');
  });
});
