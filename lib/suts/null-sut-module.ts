/**
 * A SUT module (createSut) for `dispatch: 'worker'`: the JS null SUT, run in
 * each worker. What `loadgen run --sut null` and `loadgen bench` use there.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { packageRoot } from '../native/index.js';
import { createNullSut } from './suts.js';
import type { SystemUnderTest } from '../api/types.js';

export function createSut(): SystemUnderTest {
  return createNullSut('null');
}

/** The (compiled) module's URL, for startTest's `sutModule` option. */
export const NULL_SUT_MODULE: string = pathToFileURL(resolve(packageRoot, 'dist', 'suts', 'null-sut-module.js')).href;
