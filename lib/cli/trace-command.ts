/**
 * `loadgen trace`: the pre-generated query trace of a test, from a golden
 * case file or from the options, written as JSON to stdout or a file.
 */
import { createWriteStream } from 'node:fs';

import { InterfaceError } from '../errors.js';
import type { TestSettingsInput } from '../settings/types.js';
import { traceInputFromAssignments, traceInputFromCaseFile, writeTrace, type TraceInput } from './trace.js';

export interface TraceOptions {
  case?: string;
  scenario?: string;
  mode?: string;
  set: string[];
  qslTotal?: number;
  qslPerformance?: number;
  output?: string;
}

export async function traceCommand(options: TraceOptions): Promise<number> {
  let input: TraceInput;
  if (options.case !== undefined) {
    const extra = [
      options.set.length > 0 ? '--set' : '',
      options.scenario !== undefined ? '--scenario' : '',
      options.mode !== undefined ? '--mode' : '',
      options.qslTotal !== undefined ? '--qsl-total' : '',
      options.qslPerformance !== undefined ? '--qsl-performance' : '',
    ].filter((o) => o !== '');
    if (extra.length > 0) {
      throw new InterfaceError(`--case takes its settings and QSL sizes from the file; do not combine it with ${extra.join(', ')}.`);
    }
    input = traceInputFromCaseFile(options.case);
  } else {
    const overrides: TestSettingsInput = {};
    if (options.scenario !== undefined) overrides.scenario = options.scenario as TestSettingsInput['scenario'];
    if (options.mode !== undefined) overrides.mode = options.mode as TestSettingsInput['mode'];
    const total = options.qslTotal ?? 1024;
    input = traceInputFromAssignments(options.set, total, options.qslPerformance ?? total, overrides);
  }
  if (options.output === undefined) {
    // `loadgen trace … | head` closes the pipe early: that is not an error.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
    });
    await writeTrace(input, process.stdout);
    return 0;
  }
  const file = createWriteStream(options.output);
  const opened = new Promise<void>((resolveOpen, reject) => {
    file.once('open', () => resolveOpen());
    file.once('error', reject);
  });
  try {
    await opened;
  } catch (cause) {
    throw new InterfaceError(`--output ${options.output}: cannot write the file: ${(cause as Error).message}`);
  }
  await writeTrace(input, file);
  await new Promise<void>((resolveEnd, reject) => {
    file.once('error', reject);
    file.end(() => resolveEnd());
  });
  return 0;
}
