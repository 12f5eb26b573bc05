#!/usr/bin/env node
/**
 * The `loadgen` command.
 *
 * Exit codes: 0 the run completed and is VALID; 1 it completed INVALID;
 * 2 bad input (settings, options, SUT module); 3 the run failed (the SUT or
 * QSL threw, or loadgen itself failed).
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { Command, CommanderError, Option } from 'commander';

import { formatBenchReport, runBenchmark } from './bench.js';
import { addConfigOptions, loadCliSettings, registerSettingsCommand, usesConfigFiles } from './config-cli.js';
import { InterfaceError, LoadgenError, SettingsError, SutError } from './errors.js';
import { packageRoot } from './native/index.js';
import { startTest } from './run.js';
import { SCENARIOS, settingsFromAssignments, TEST_MODES, type TestSettingsInput } from './settings.js';
import { NULL_SUT_MODULE } from './null-sut-module.js';
import { createNullNativeSut, createNullSut, createSyntheticQsl } from './suts.js';
import { traceInputFromAssignments, traceInputFromCaseFile, writeTrace, type TraceInput } from './trace.js';
import type { QuerySampleLibrary, SystemUnderTest, TestResult } from './types.js';
import { collect, positiveInteger } from './cli-options.js';
import { registerReportCommand, runProgress, writeRunReport } from './cli-report.js';
import { addDemoOptions, demoOnlyOptionsUsed, runDemoCommand, type DemoCliOptions } from './demo/cli.js';

const EXIT_VALID = 0;
const EXIT_INVALID = 1;
const EXIT_BAD_INPUT = 2;
const EXIT_RUN_FAILED = 3;

interface RunOptions {
  sut?: string;
  scenario?: string;
  mode?: string;
  set: string[];
  outdir: string;
  logPrefix?: string;
  logSuffix?: string;
  prefixWithDatetime?: boolean;
  qslTotal: number;
  qslPerformance?: number;
  json?: boolean;
  quiet?: boolean;
  /** false with --no-progress / --no-report. */
  progress: boolean;
  report: boolean;
  mlperfConf?: string;
  userConf?: string;
  model?: string;
  lenient?: boolean;
  auditConf?: string;
  /** false with --no-audit-config. */
  auditConfig: boolean;
}

interface TraceOptions {
  case?: string;
  scenario?: string;
  mode?: string;
  set: string[];
  qslTotal?: number;
  qslPerformance?: number;
  output?: string;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(resolve(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Loads a user module exporting createSut() and createQsl() (both may be async).
 * `inWorkers` (dispatch 'worker'): createSut() runs in the workers, not here.
 */
async function loadModuleSut(path: string, inWorkers = false): Promise<{ sut: SystemUnderTest; qsl: QuerySampleLibrary }> {
  const url = pathToFileURL(resolve(process.cwd(), path)).href;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (cause) {
    throw new InterfaceError(`--sut ${path}: cannot import the module: ${(cause as Error).message}`);
  }
  for (const name of ['createSut', 'createQsl']) {
    if (typeof mod[name] !== 'function') {
      throw new InterfaceError(
        `--sut ${path}: the module must export a function ${name}() (found ${typeof mod[name]}); ` +
          'it may return the object or a promise of it.',
      );
    }
  }
  const sut = inWorkers
    ? ({ name: basename(path).replace(/\.[cm]?[jt]s$/, '') } as SystemUnderTest)
    : ((await (mod.createSut as () => unknown)()) as SystemUnderTest);
  const qsl = (await (mod.createQsl as () => unknown)()) as QuerySampleLibrary;
  return { sut, qsl };
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

async function runCommand(options: RunOptions): Promise<number> {
  // No --sut: the built-in onnxruntime demo (lib/demo/).
  if (options.sut === undefined) return runDemoCommand(options as RunOptions & DemoCliOptions);
  const demoOnly = demoOnlyOptionsUsed(options as Partial<DemoCliOptions>);
  if (demoOnly.length > 0) throw new InterfaceError(`${demoOnly.join(', ')} ${demoOnly.length === 1 ? 'applies' : 'apply'} to the built-in demo only (loadgen run without --sut)`);
  let settings: TestSettingsInput;
  if (usesConfigFiles(options)) {
    // Config files first, then --scenario/--mode/--set on top; audit.config is startTest's.
    const loaded = loadCliSettings(options, false);
    for (const w of loaded.warnings) process.stderr.write(`loadgen: warning: ${w}\n`);
    settings = loaded.settings;
  } else {
    settings = settingsFromAssignments(options.set);
    if (options.scenario !== undefined) settings.scenario = options.scenario as TestSettingsInput['scenario'];
    if (options.mode !== undefined) settings.mode = options.mode as TestSettingsInput['mode'];
  }

  let sut: SystemUnderTest;
  let qsl: QuerySampleLibrary;
  // dispatch 'worker': the SUT is created in each worker from a module.
  const inWorkers = settings.dispatch === 'worker';
  let sutModule: string | undefined;
  if (options.sut === 'null' || options.sut === 'null-native') {
    sut = options.sut === 'null' ? createNullSut() : createNullNativeSut();
    if (inWorkers && options.sut === 'null') sutModule = NULL_SUT_MODULE;
    qsl = createSyntheticQsl(options.qslTotal, options.qslPerformance ?? options.qslTotal);
  } else {
    ({ sut, qsl } = await loadModuleSut(options.sut, inWorkers));
    if (inWorkers) sutModule = pathToFileURL(resolve(process.cwd(), options.sut)).href;
  }

  const progress = runProgress(options);
  const result: TestResult = await startTest(sut, qsl, settings, {
    outdir: options.outdir,
    ...(options.logPrefix !== undefined ? { prefix: options.logPrefix } : {}),
    ...(options.logSuffix !== undefined ? { suffix: options.logSuffix } : {}),
    ...(options.prefixWithDatetime ? { prefixWithDatetime: true } : {}),
  }, {
    auditConfig: options.auditConfig ? (options.auditConf ?? 'audit.config') : false,
    lenientConfig: options.lenient === true,
    ...(sutModule !== undefined ? { sutModule } : {}),
  }).finally(() => progress.stop());
  const reportPath = writeRunReport(result, options);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(result, jsonReplacer, 2)}\n`);
  } else if (!options.quiet) {
    process.stdout.write(result.summaryText);
    if (result.files.summary) process.stdout.write(`\nSummary written to ${result.files.summary}\n`);
    if (reportPath !== undefined) process.stdout.write(`Report written to ${reportPath}\n`);
  }
  return result.valid ? EXIT_VALID : EXIT_INVALID;
}

async function traceCommand(options: TraceOptions): Promise<number> {
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

function buildProgram(): Command {
  const program = new Command();
  program
    .name('loadgen')
    .description('MLPerf Inference LoadGen for Node.js')
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  program
    .command('run')
    .description('run a benchmark against a SUT and write the MLPerf logs')
    .option('--sut <sut>', "'null', 'null-native', or a path to a module exporting createSut() and createQsl() (default: the built-in demo)")
    .addOption(new Option('--scenario <name>', 'test scenario').choices([...SCENARIOS]))
    .addOption(new Option('--mode <name>', 'test mode').choices([...TEST_MODES]))
    .option('--set <key=value>', 'any TestSettings field by its reference name, e.g. server_target_qps=1000 (repeatable)', collect, [])
    .option('--outdir <dir>', 'directory for the log files (created if missing)', '.')
    .option('--log-prefix <prefix>', "log file name prefix (default 'mlperf_log_')")
    .option('--log-suffix <suffix>', 'inserted before each log file extension')
    .option('--prefix-with-datetime', 'insert the test date and time after the prefix')
    .option('--qsl-total <n>', 'total samples of the synthetic QSL used by the null SUTs', positiveInteger('--qsl-total'), 1024)
    .option('--qsl-performance <n>', 'performance sample count of the synthetic QSL (default: --qsl-total)', positiveInteger('--qsl-performance'))
    .option('--json', 'print the result as JSON instead of the summary')
    .option('--quiet', 'print nothing but errors (no progress either)')
    .option('--no-progress', 'no live progress on stderr (a line every 5 s when stderr is not a terminal)')
    .option('--no-report', 'do not write report.html beside the logs')
    .option('--audit-conf <file>', "audit.config to apply at the start of the test (default: 'audit.config' in the working directory, if present)")
    .option('--no-audit-config', 'do not apply an audit.config')
    .addHelpText(
      'after',
      '\nExit status: 0 VALID, 1 INVALID, 2 bad input, 3 the run failed.\n' +
        'Example:\n  loadgen run --sut null --scenario Server --set server_target_qps=1000 \\\n' +
        '    --set min_duration_ms=2000 --set min_query_count=100 --outdir out/server',
    )
    .action(async (options: RunOptions) => {
      process.exitCode = await runCommand(options);
    });

  addConfigOptions(program.commands.find((c) => c.name() === 'run')!);
  addDemoOptions(program.commands.find((c) => c.name() === 'run')!);
  registerSettingsCommand(program);

  program
    .command('trace')
    .description('print the pre-generated query trace of a test (load calls, sample indices, schedule) without running it')
    .option('--case <file.json>', "take 'settings' and 'qsl' from a case file in the golden query_traces format")
    .addOption(new Option('--scenario <name>', 'test scenario').choices([...SCENARIOS]))
    .addOption(new Option('--mode <name>', 'test mode').choices([...TEST_MODES]))
    .option('--set <key=value>', 'any TestSettings field by its reference name, e.g. server_target_qps=1000 (repeatable)', collect, [])
    .option('--qsl-total <n>', 'QSL total sample count (default 1024)', positiveInteger('--qsl-total'))
    .option('--qsl-performance <n>', 'QSL performance sample count (default: --qsl-total)', positiveInteger('--qsl-performance'))
    .option('--output <file>', 'write the JSON to this file instead of stdout')
    .addHelpText(
      'after',
      '\nPrints one JSON object: generator, settings, qsl, effective (derived settings) and phases[] with every\n' +
        'load call and its queries, in the layout of the golden query_traces files. Seeds are decimal strings.\n' +
        'Exit status: 0 written, 2 bad input.\n' +
        'Examples:\n  loadgen trace --case ../shared/golden/query_traces/server_qps1.json\n' +
        '  loadgen trace --scenario Server --set server_target_qps=100 --set min_duration_ms=1000 --qsl-total 5000 --qsl-performance 1024',
    )
    .action(async (options: TraceOptions) => {
      process.exitCode = await traceCommand(options);
    });
  registerReportCommand(program);
  program
    .command('bench')
    .description("measure loadgen's own overhead on this machine (each trial in a fresh process)")
    .option('--json', 'print every figure as one JSON document')
    .option('--tiny', 'short trials, one repetition: only proves the benchmark works')
    .option('--repeat <n>', 'repetitions of each trial (default 3; 1 with --tiny)', positiveInteger('--repeat'))
    .action(async (options: { json?: boolean; tiny?: boolean; repeat?: number }) => {
      const report = await runBenchmark({
        ...(options.tiny ? { tiny: true } : {}),
        ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
      });
      process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatBenchReport(report)}\n`);
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander printed the message already; --help and --version exit 0.
      return error.exitCode === 0 ? 0 : EXIT_BAD_INPUT;
    }
    if (error instanceof SettingsError || error instanceof InterfaceError) {
      process.stderr.write(`loadgen: ${error.message}\n`);
      return EXIT_BAD_INPUT;
    }
    if (error instanceof SutError) {
      process.stderr.write(`loadgen: ${error.message}\n`);
      const result = error.result as TestResult | undefined;
      if (result?.files.summary) process.stderr.write(`Logs were written: ${result.files.summary}\n`);
      return EXIT_RUN_FAILED;
    }
    if (error instanceof LoadgenError) {
      process.stderr.write(`loadgen: ${error.message}\n`);
      return EXIT_RUN_FAILED;
    }
    process.stderr.write(`loadgen: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT_RUN_FAILED;
  }
}

// A reader that goes away (`loadgen run --help | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
