/**
 * `loadgen trace`: the pre-generated query trace of a test, from a golden
 * case file or from the options, written as JSON to stdout or a file.
 */
import { createWriteStream } from 'node:fs';

import { InterfaceError } from '../errors.js';
import type { TestSettingsInput } from '../types/settings.js';
import { loadCliSettings, settingsSource, usesConfigFiles, type ConfigCliOptions } from './config.js';
import { traceInputFromAssignments, traceInputFromCaseFile, traceInputFromSettings, writeTrace, type TraceInput } from './trace.js';

export interface TraceOptions extends ConfigCliOptions {
  case?: string;
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
      options.model !== undefined ? '--model' : '',
      options.userConf !== undefined ? '--user-conf' : '',
      options.mlperfConf !== undefined ? '--mlperf-conf' : '',
    ].filter((o) => o !== '');
    if (extra.length > 0) {
      throw new InterfaceError(`--case takes its settings and QSL sizes from the file; do not combine it with ${extra.join(', ')}.`);
    }
    input = { ...traceInputFromCaseFile(options.case), source: `the case file ${options.case}` };
  } else {
    const total = options.qslTotal ?? 1024;
    const performance = options.qslPerformance ?? total;
    // The same settings `loadgen run` uses with these options (lib/cli/config.ts).
    if (usesConfigFiles(options)) {
      const loaded = loadCliSettings(options, false);
      for (const w of loaded.warnings) process.stderr.write(`loadgen: warning: ${w}\n`);
      input = traceInputFromSettings(loaded.settings, total, performance);
    } else {
      const overrides: TestSettingsInput = {};
      if (options.scenario !== undefined) overrides.scenario = options.scenario as TestSettingsInput['scenario'];
      if (options.mode !== undefined) overrides.mode = options.mode as TestSettingsInput['mode'];
      input = traceInputFromAssignments(options.set, total, performance, overrides);
    }
    input.source = settingsSource(options);
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
