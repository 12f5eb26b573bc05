/**
 * `loadgen run` without --sut: the demo's CLI options and command (kept out of
 * cli.ts, which only routes here).
 */
import { Command, InvalidArgumentError } from 'commander';

import { choiceOption, positiveInteger } from './options.js';
import { runWithSignals } from './interrupt.js';
import { powerFromCli, type PowerCliOptions } from './power-options.js';
import { runProgress, writeRunReport } from './report.js';
import { InterfaceError } from '../errors.js';
import { settingsFromAssignments } from '../settings/assignments.js';
import { type LogSettingsInput, type TestSettingsInput } from '../types/settings.js';
import { demoRunHint, describeRun, runDemo } from '../demo/run.js';
import { EXECUTION_PROVIDERS, type ExecutionProvider } from '../demo/sut.js';

/** The `run` options the demo reads (a subset of cli.ts's RunOptions plus its own). */
export interface DemoCliOptions extends PowerCliOptions {
  scenario?: string;
  mode?: string;
  set: string[];
  outdir: string;
  logPrefix?: string;
  logSuffix?: string;
  prefixWithDatetime?: boolean;
  json?: boolean;
  quiet?: boolean;
  mlperfConf?: string;
  userConf?: string;
  model?: string;
  lenient?: boolean;
  auditConf?: string;
  auditConfig: boolean;
  /** false with --no-progress / --no-report. */
  progress?: boolean;
  report?: boolean;
  ep?: string;
  batchSize?: number;
  maxWaitMs?: number;
  workers?: number;
}

function nonNegativeNumber(name: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
      throw new InvalidArgumentError(`${name} must be a number >= 0, got '${value}'.`);
    }
    return n;
  };
}

/** Adds the demo's options to the `run` command. */
export function addDemoOptions(run: Command): void {
  run
    .addOption(choiceOption('--ep <provider>', 'demo: onnxruntime execution provider', EXECUTION_PROVIDERS))
    .option('--batch-size <n>', 'demo: most samples per onnxruntime run (default 32)', positiveInteger('--batch-size'))
    .option('--max-wait-ms <ms>', 'demo: longest a sample waits for its batch to fill (default 2)', nonNegativeNumber('--max-wait-ms'))
    .option('--workers <n>', 'demo: inference worker threads, one onnxruntime session each (default: one per core, up to 4)', positiveInteger('--workers'))
    .addHelpText(
      'after',
      '\nWithout --sut, runs the built-in demo: onnxruntime-node runs a small CNN (models/demo-cnn.onnx) over a\n' +
        'synthetic data set, Offline then Server, 10 s each (--set min_duration_ms=… to change), logs under\n' +
        '<outdir>/Offline and <outdir>/Server. The Server rate is half the Offline rate, or less where the\n' +
        'Offline run\'s slowest windows were slower (a busy machine); a Server run over its latency bound runs\n' +
        'once more at a lower rate. --mode AccuracyOnly (logs under <outdir>/Offline/accuracy) checks every\n' +
        'output against a TypeScript computation of the model. Exit status as above; 1 also when an output\n' +
        'does not match; 2 when onnxruntime-node or the execution provider is unavailable.',
    );
}

/** The options that only mean something to the demo, when a --sut is given. */
export function demoOnlyOptionsUsed(o: Partial<DemoCliOptions>): string[] {
  return [
    o.ep !== undefined ? '--ep' : '',
    o.batchSize !== undefined ? '--batch-size' : '',
    o.maxWaitMs !== undefined ? '--max-wait-ms' : '',
    o.workers !== undefined ? '--workers' : '',
  ].filter((s) => s !== '');
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * Runs the demo for `loadgen run` without --sut. Returns the exit status:
 * 0 every run VALID and every output matched, 1 otherwise; throws
 * InterfaceError (status 2) when onnxruntime-node or the execution provider
 * is unavailable, LoadgenError (status 3) when inference failed.
 */
export async function runDemoCommand(options: DemoCliOptions): Promise<number> {
  if (options.mlperfConf !== undefined || options.userConf !== undefined || options.model !== undefined) {
    throw new InterfaceError('the demo takes its settings from --set, --scenario and --mode; --mlperf-conf, --user-conf and --model need --sut');
  }
  const settings: TestSettingsInput = settingsFromAssignments(options.set);
  const power = powerFromCli(options);
  if (options.scenario !== undefined) settings.scenario = options.scenario as TestSettingsInput['scenario'];
  if (options.mode !== undefined) settings.mode = options.mode as TestSettingsInput['mode'];
  const logSettings: LogSettingsInput = {
    ...(options.logPrefix !== undefined ? { prefix: options.logPrefix } : {}),
    ...(options.logSuffix !== undefined ? { suffix: options.logSuffix } : {}),
    ...(options.prefixWithDatetime ? { prefixWithDatetime: true } : {}),
  };
  const progress = !options.quiet && !options.json;
  // SIGINT/SIGTERM stop the scenario running and skip the rest (lib/cli/interrupt.ts).
  return runWithSignals(async (signal, signals) => {
    // The demo's runs write their logs when stopped.
    signals.enter('run');
    const outcome = await runDemo({
      outdir: options.outdir,
      settings,
      logSettings,
      executionProvider: (options.ep ?? 'cpu') as ExecutionProvider,
      ...(options.batchSize !== undefined ? { maxBatchSize: options.batchSize } : {}),
      ...(options.maxWaitMs !== undefined ? { maxWaitMs: options.maxWaitMs } : {}),
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
      startTestOptions: {
        auditConfig: options.auditConfig ? (options.auditConf ?? 'audit.config') : false,
        lenientConfig: options.lenient === true,
        ...(power !== undefined ? { power } : {}),
        reportData: options.report !== false,
        signal,
      },
      ...(progress ? { log: (line: string) => process.stderr.write(`${line}\n`) } : {}),
      startProgress: (_scenario, dir) => {
        const handle = runProgress({ ...options, outdir: dir });
        return () => handle.stop();
      },
      afterRun: (run) => writeRunReport(run.result, { ...options, outdir: run.outdir }),
    });
    if (options.json) {
      process.stdout.write(`${JSON.stringify(outcome, jsonReplacer, 2)}\n`);
    } else if (!options.quiet) {
      for (const run of outcome.runs) {
        process.stdout.write(`${describeRun(run)}\n  logs: ${run.result.files.summary ?? run.outdir}\n`);
        if (run.report !== undefined) process.stdout.write(`  report: ${run.report}\n`);
        const hint = demoRunHint(run);
        if (hint !== undefined) process.stdout.write(`  hint: ${hint}\n`);
      }
      // As `loadgen run` says where its settings came from (lib/cli/config.ts).
      const given = options.set.length > 0 || options.mode !== undefined ? ', then --set/--mode' : '';
      process.stdout.write(`Settings: the TestSettings defaults (no mlperf.conf; seeds 0), with the demo's min_duration_ms ${settings.minDurationMs ?? 10_000} ` +
        `and the rates it measured where --set gives none${given}\n`);
    }
    return outcome.ok ? 0 : 1;
  });
}
