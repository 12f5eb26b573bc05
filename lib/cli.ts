#!/usr/bin/env node
/**
 * The `loadgen` command (the package's bin): its commands and options, and
 * how an error becomes an exit code (lib/cli/exit-codes.ts). Each command's
 * work lives in lib/cli/.
 */
// First: `loadgen doctor` must work when the addon, which later imports load, does not.
import './cli/doctor-rescue.js';

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { Command, CommanderError, Option } from 'commander';

import type { TestResult } from './types/api.js';
import { accuracyBenchTarget, formatAccuracyBench, runAccuracyBench } from './bench/accuracy.js';
import { runBenchmark } from './bench/bench.js';
import { formatBenchReport } from './bench/format.js';
import { runNetworkBench } from './bench/net.js';
import { evaluateNetworkTargets, formatNetworkBench } from './bench/net-format.js';
import { targetsTable } from './bench/targets.js';
import { formatSoakReport, runSoak } from './bench/soak.js';
import { formatTokenizerBench, runTokenizerBench } from './bench/tokenizer.js';
import { formatTokensBench, runTokensBench } from './bench/tokens.js';
import { MAX_CONFIRM_RUNS, MAX_CONFIRM_SECONDS, peakConfirmation } from './bench/peak.js';
import { addConfigOptions, registerSettingsCommand } from './cli/config.js';
import { registerAccuracyCommand } from './cli/accuracy-command.js';
import { registerDoctorCommand } from './cli/doctor-command.js';
import { addNetworkOptions, timeoutMs } from './cli/network.js';
import { MODULE_LOAD_TIMEOUT_MS, pendingUserCalls } from './api/user-calls.js';
import { cliSecrets } from './cli/output-secrets.js';
import { EXIT_BAD_INPUT, EXIT_INVALID, EXIT_RUN_FAILED, EXIT_SIGINT, EXIT_SIGTERM, EXIT_VALID } from './cli/exit-codes.js';
import { capErrorOutput, choiceOption, collect, integerInRange, numberInRange, positiveInteger } from './cli/options.js';
import { addPowerOptions } from './cli/power-options.js';
import { registerReportCommand } from './cli/report.js';
import { addRunCheckOptions, registerRulesCommands } from './cli/rules-commands.js';
import { registerServeCommand } from './cli/serve-command.js';
import { DEMO_OUTDIR, runCommand, type RunOptions } from './cli/run-command.js';
import { traceCommand, type TraceOptions } from './cli/trace-command.js';
import { addDemoOptions } from './cli/demo-command.js';
import { InterfaceError, LoadgenError, LogOutputError, NetworkSetupError, SettingsError, SutError } from './errors.js';
import { packageRoot } from './native/index.js';
import { SCENARIOS, TEST_MODES } from './types/settings.js';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(resolve(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function buildProgram(): Command {
  const program = new Command();
  program
    .name('npx loadgen')
    .description('MLPerf Inference LoadGen for Node.js')
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: capErrorOutput })
    .exitOverride();

  program
    .command('run')
    .description('run a benchmark against a SUT and write the MLPerf logs')
    .option('--sut <sut>', "'null', 'null-native', a network SUT ('openai', 'kserve', 'http' with --url), or a path to a module exporting createSut() and createQsl() (default: the built-in demo)")
    .addOption(new Option('--module-timeout-ms <ms>', `a --sut or --request module's import (its top-level await) and createSut()/createQsl() must settle within this (default ${MODULE_LOAD_TIMEOUT_MS}; 0: no limit)`)
      .argParser(timeoutMs('--module-timeout-ms', 0)))
    .addOption(choiceOption('--scenario <name>', 'test scenario', SCENARIOS))
    .addOption(choiceOption('--mode <name>', 'test mode', TEST_MODES))
    .option('--set <key=value>', 'any TestSettings field by its reference name, e.g. server_target_qps=1000 (repeatable)', collect, [])
    .option('--outdir <dir>', `directory for the log files, created if missing (default: '.'; the demo: '${DEMO_OUTDIR}')`)
    .option('--log-prefix <prefix>', "log file name prefix (default 'mlperf_log_')")
    .option('--log-suffix <suffix>', 'inserted before each log file extension')
    .option('--prefix-with-datetime', 'insert the test date and time after the prefix')
    .option('--qsl-total <n>', 'total samples of the synthetic QSL used by the null SUTs', positiveInteger('--qsl-total'), 1024)
    .option('--qsl-performance <n>', 'performance sample count of the synthetic QSL (default: --qsl-total)', positiveInteger('--qsl-performance'))
    .option('--json', 'print the result as JSON instead of the summary')
    .option('--quiet', 'print nothing but errors (no progress either)')
    .option('--no-progress', 'no live progress on stderr (a line every 5 s when stderr is not a terminal)')
    .option('--no-report', "write neither report.html nor loadgen_report_data.json: only the reference's log files (a submission folder)")
    .option('--audit-conf <file>', "audit.config to apply at the start of the test (default: 'audit.config' in the working directory, if present)")
    .option('--no-audit-config', 'do not apply an audit.config')
    .addHelpText(
      'after',
      '\nExit status: 0 VALID, 1 INVALID, 2 bad input, 3 the run failed, 130/143 stopped by SIGINT/SIGTERM\n' +
        '(the logs are written; a second signal exits at once).\n' +
        'Example:\n  npx loadgen run --sut null --scenario Server --set server_target_qps=1000 \\\n' +
        '    --set min_duration_ms=2000 --set min_query_count=100 --outdir out/server',
    )
    .action(async (options: RunOptions) => {
      process.exitCode = await runCommand(options);
    });

  addConfigOptions(program.commands.find((c) => c.name() === 'run')!);
  addNetworkOptions(program.commands.find((c) => c.name() === 'run')!);
  addDemoOptions(program.commands.find((c) => c.name() === 'run')!);
  addPowerOptions(program.commands.find((c) => c.name() === 'run')!);
  addRunCheckOptions(program.commands.find((c) => c.name() === 'run')!);
  registerSettingsCommand(program);

  program
    .command('trace')
    .description('print the pre-generated query trace of a test (load calls, sample indices, schedule) without running it')
    .option('--case <file.json>', "take 'settings' and 'qsl' from a case file in the golden query_traces format")
    .addOption(choiceOption('--scenario <name>', 'test scenario', SCENARIOS))
    .addOption(choiceOption('--mode <name>', 'test mode', TEST_MODES))
    .option('--set <key=value>', 'any TestSettings field by its reference name, e.g. server_target_qps=1000 (repeatable)', collect, [])
    .option('--qsl-total <n>', 'QSL total sample count (default 1024)', positiveInteger('--qsl-total'))
    .option('--qsl-performance <n>', 'QSL performance sample count (default: --qsl-total)', positiveInteger('--qsl-performance'))
    .option('--output <file>', 'write the JSON to this file instead of stdout')
    .addHelpText(
      'after',
      '\nPrints one JSON object: generator, settings_source, settings, qsl, effective (derived settings) and phases[]\n' +
        'with every load call and its queries, in the layout of the golden query_traces files. Seeds are decimal\n' +
        'strings. The settings are those `run` uses with the same options: config files only with --model,\n' +
        '--user-conf or --mlperf-conf (otherwise the TestSettings defaults).\n' +
        'Exit status: 0 written, 2 bad input.\n' +
        'Examples:\n  npx loadgen trace --case ../shared/golden/query_traces/server_qps1.json\n' +
        '  npx loadgen trace --scenario Server --set server_target_qps=100 --set min_duration_ms=1000 --qsl-total 5000 --qsl-performance 1024',
    )
    .action(async (options: TraceOptions) => {
      process.exitCode = await traceCommand(options);
    });
  addConfigOptions(program.commands.find((c) => c.name() === 'trace')!);
  registerReportCommand(program);
  registerRulesCommands(program);
  registerServeCommand(program);
  registerDoctorCommand(program);
  registerAccuracyCommand(program);
  program
    .command('bench')
    .description("measure loadgen's own overhead on this machine (each trial in a fresh process)")
    .option('--json', 'print every figure as one JSON document')
    .option('--tiny', 'short trials, one repetition: only proves the benchmark works')
    .option('--repeat <n>', 'repetitions of each trial (default 3; 1 with --tiny)', positiveInteger('--repeat'))
    .addOption(new Option('--confirm-runs <n>', `consecutive VALID runs that confirm a peak Server rate (1 to ${MAX_CONFIRM_RUNS}; default 3, 1 with --tiny)`)
      .argParser(integerInRange('--confirm-runs', 1, MAX_CONFIRM_RUNS)))
    .addOption(new Option('--confirm-seconds <s>', `length of each peak run (0.1 to ${MAX_CONFIRM_SECONDS}; default 10, 0.2 with --tiny)`)
      .argParser(numberInRange('--confirm-seconds', 0.1, MAX_CONFIRM_SECONDS, 'seconds')))
    .addOption(new Option('--soak <seconds>', 'instead: Server at 100k QPS with the JS null SUT for <seconds> (consecutive runs in this process), RSS every 10 s, lost completions')
      .argParser(positiveInteger('--soak')).conflicts(['tiny', 'repeat', 'confirmRuns', 'confirmSeconds']))
    .addOption(new Option('--soak-run <seconds>', 'length of each run of a soak (default 60)').argParser(positiveInteger('--soak-run')))
    .addOption(new Option('--network', 'only the network rows: stamp server, autocannon, wrk, open-loop peaks, client share, TTFT/TPOT').conflicts(['soak']))
    .addOption(new Option('--scaling', "only the network scaling rows: wrk and autocannon closed loop, then the native transport's confirmed open-loop peak, no body read in JS, with 1, 2, 4, ... client threads up to the CPUs present less one (each with its own server on the CPUs left), client CPU per request and what limited each")
      .conflicts(['soak']))
    .addOption(new Option('--accuracy', 'only the accuracy row: loadgen accuracy on 13,368 generated CNN-length samples (--tiny: 500)').conflicts(['soak', 'network', 'scaling']))
    .addOption(new Option('--tokens', "only the token rows: the client's CPU per streamed token on the native transport (128-token responses at 10, 100 and 1,000 requests/s from the OpenAI stub in its own process), beside mlcommons/endpoints' figures")
      .conflicts(['soak', 'network', 'scaling', 'accuracy', 'confirmRuns', 'confirmSeconds']))
    .addOption(new Option('--tokenizer [file]', "instead: tokenizer encode/decode tokens/s on 10,000 CNN-length texts (200 with --tiny), loadgen's library and Rust tokenizers (default file: Llama 3.1's from the dev dependencies)")
      .conflicts(['soak', 'network', 'scaling', 'accuracy', 'tokens', 'repeat', 'confirmRuns', 'confirmSeconds']))
    .addHelpText('after', '\n--soak exit status: 0 no lost completions and RSS flat (or too short to judge), 1 otherwise.')
    .action(async (options: {
      json?: boolean; tiny?: boolean; repeat?: number; soak?: number; soakRun?: number; network?: boolean; scaling?: boolean; accuracy?: boolean; confirmRuns?: number; confirmSeconds?: number;
      tokenizer?: string | true; tokens?: boolean;
    }) => {
      if (options.tokens) {
        const report = await runTokensBench({
          ...(options.tiny ? { tiny: true } : {}),
          ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
          log: (line) => process.stderr.write(`${line}\n`),
        });
        process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatTokensBench(report)}\n`);
        return;
      }
      if (options.tokenizer !== undefined) {
        const report = await runTokenizerBench({
          ...(typeof options.tokenizer === 'string' ? { file: options.tokenizer } : {}),
          ...(options.tiny ? { tiny: true } : {}),
        });
        process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatTokenizerBench(report)}\n`);
        return;
      }
      if (options.soak !== undefined) {
        const soak = await runSoak({ seconds: options.soak, ...(options.soakRun !== undefined ? { runSeconds: options.soakRun } : {}) });
        process.stdout.write(options.json ? `${JSON.stringify(soak, null, 2)}\n` : `${formatSoakReport(soak)}\n`);
        process.exitCode = soak.passed ? EXIT_VALID : EXIT_INVALID;
        return;
      }
      if (options.soakRun !== undefined) throw new SettingsError('--soak-run', options.soakRun, '--soak-run applies only with --soak <seconds>.');
      const confirmation = peakConfirmation(options.tiny ?? false, {
        ...(options.confirmRuns !== undefined ? { confirmRuns: options.confirmRuns } : {}),
        ...(options.confirmSeconds !== undefined ? { confirmSeconds: options.confirmSeconds } : {}),
      });
      if (options.network || options.scaling) {
        const tiny = options.tiny ?? false;
        const network = await runNetworkBench({
          tiny,
          repeat: options.repeat ?? (tiny ? 1 : 3),
          confirmation,
          ...(options.scaling ? { rows: 'scaling' as const } : {}),
          log: (line) => process.stderr.write(`${line}\n`),
        });
        process.stdout.write(options.json
          ? `${JSON.stringify(network, null, 2)}\n`
          // A scaling run measures the peaks only: the first target alone applies.
          : `${formatNetworkBench(network)}\n\n${targetsTable(evaluateNetworkTargets(network).slice(0, network.rows === 'scaling' ? 1 : undefined))}\n`);
        return;
      }
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const accuracySamples = options.tiny ? 500 : undefined;
      if (options.accuracy) {
        const accuracy = await runAccuracyBench({ ...(accuracySamples !== undefined ? { samples: accuracySamples } : {}), log });
        process.stdout.write(options.json ? `${JSON.stringify(accuracy, null, 2)}\n` : `${formatAccuracyBench(accuracy)}\n\n${targetsTable([accuracyBenchTarget(accuracy)])}\n`);
        return;
      }
      const report = await runBenchmark({
        ...(options.tiny ? { tiny: true } : {}),
        ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
        ...confirmation,
      });
      const accuracy = await runAccuracyBench({ ...(accuracySamples !== undefined ? { samples: accuracySamples } : {}), log });
      report.targets.push(accuracyBenchTarget(accuracy));
      process.stdout.write(options.json ? `${JSON.stringify({ ...report, accuracy }, null, 2)}\n` : `${formatBenchReport(report)}\n\n${formatAccuracyBench(accuracy)}\n\n${targetsTable([accuracyBenchTarget(accuracy)])}\n`);
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
    // An outdir that cannot be created, or a network node that is down or not
    // serving the model, is refused before the run starts: bad input too.
    // No part of the API key is printed, whatever text an error carries (a module's, a server's).
    if (error instanceof SettingsError || error instanceof InterfaceError || error instanceof LogOutputError || error instanceof NetworkSetupError) {
      process.stderr.write(`loadgen: ${cliSecrets.redact(error.message)}\n`);
      return EXIT_BAD_INPUT;
    }
    if (error instanceof SutError) {
      process.stderr.write(`loadgen: ${cliSecrets.redact(error.message)}\n`);
      const result = error.result as TestResult | undefined;
      if (result?.files.summary) process.stderr.write(`Logs were written: ${result.files.summary}\n`);
      return EXIT_RUN_FAILED;
    }
    if (error instanceof LoadgenError) {
      process.stderr.write(`loadgen: ${cliSecrets.redact(error.message)}\n`);
      return EXIT_RUN_FAILED;
    }
    process.stderr.write(`loadgen: unexpected error: ${cliSecrets.redact((error as Error)?.stack ?? String(error))}\n`);
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

// An unfinished command must not exit as if it had finished: when the event
// loop runs dry before main() settles (a promise that never settles, with
// nothing left that could settle it), the exit says the run failed.
let finished = false;
process.on('beforeExit', () => {
  if (finished) return;
  finished = true;
  const waiting = pendingUserCalls();
  process.stderr.write(
    `loadgen: the command did not complete: nothing was left to run while it waited${waiting.length > 0 ? ` for ${waiting.join('; ')}` : ''}` +
      ' (a promise that never settles?); no result was produced\n',
  );
  process.exitCode = EXIT_RUN_FAILED;
});

main(process.argv.slice(2)).then((code) => {
  finished = true;
  process.exitCode = code;
  // Stopped by a signal: what the abandoned phase left (a module's pending
  // import, a probe's socket, a data set being read) must not keep the
  // process alive. It exits once stdout and stderr are flushed (pipes are
  // written asynchronously).
  if (code === EXIT_SIGINT || code === EXIT_SIGTERM) process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
});
