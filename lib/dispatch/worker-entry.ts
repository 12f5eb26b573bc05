/**
 * The worker script startTest starts for `dispatch: 'worker'` with a
 * `sutModule`: imports the module, serves the run with its createSut(), and
 * tells the parent once registered (startTest starts the run only then).
 */
import { parentPort, workerData } from 'node:worker_threads';

import { runDispatchWorker, type DispatchWorkerContext } from './dispatch.js';
import { InterfaceError } from '../errors.js';
import type { SystemUnderTest } from '../types/api.js';

const { sutModule, workerIndex, workerCount, options } = workerData as { sutModule: string } & DispatchWorkerContext;
const mod = (await import(sutModule)) as { createSut?: unknown };
if (typeof mod.createSut !== 'function') {
  throw new InterfaceError(`sutModule ${sutModule} must export a function createSut() (found ${typeof mod.createSut})`);
}
const createSut = mod.createSut as (context: DispatchWorkerContext) => SystemUnderTest | Promise<SystemUnderTest>;
await runDispatchWorker(() => createSut({ workerIndex, workerCount, ...(options !== undefined ? { options } : {}) }), {
  onRegistered: () => parentPort?.postMessage({ kind: 'registered' }),
});
// The run released this worker: its exit from now on is the normal end (DispatchWorkerPool).
parentPort?.postMessage({ kind: 'released' });
