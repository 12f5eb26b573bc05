/**
 * A SUT module (createSut) for `dispatch: 'worker'`: the JS null SUT, run in
 * each worker. What `loadgen run --sut null` and `loadgen bench` use there.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { packageRoot } from '../native/index.js';
import { createNullSut } from './suts.js';
import type { SystemUnderTest } from '../types/api.js';
import type { DispatchWorkerContext } from '../dispatch/dispatch.js';

/** `options.path` 'objects' (startTest's sutOptions): the object path's null SUT (bench). */
export function createSut(context?: DispatchWorkerContext): SystemUnderTest {
  const path = (context?.options as { path?: unknown } | undefined)?.path === 'objects' ? 'objects' : 'ids';
  return createNullSut('null', path);
}

/** The (compiled) module's URL, for startTest's `sutModule` option. */
export const NULL_SUT_MODULE: string = pathToFileURL(resolve(packageRoot, 'dist', 'suts', 'null-sut-module.js')).href;
