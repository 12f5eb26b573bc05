/**
 * `loadgen run` with a SUT (`--sut null`, `null-native` or a module; without
 * `--sut` it runs the built-in demo): settings from the options or config
 * files, the run, and what it prints.
 */
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { invalidRunHint } from '../api/invalid-hint.js';
import { startTest } from '../api/start-test.js';
import type { QuerySampleLibrary, SystemUnderTest, TestResult } from '../types/api.js';
import { demoOnlyOptionsUsed, runDemoCommand, type DemoCliOptions } from './demo-command.js';
import { MODULE_LOAD_TIMEOUT_MS, settleWithin, thrownText } from '../api/user-calls.js';
import { InterfaceError, SettingsError } from '../errors.js';
import { settingsFromAssignments } from '../settings/assignments.js';
import { SETTINGS_FIELDS } from '../settings/fields.js';
import { closest } from '../settings/messages.js';
import type { TestSettingsInput } from '../types/settings.js';
import { NULL_SUT_MODULE } from '../suts/null-sut-module.js';
import { withNullSutDefaults } from '../suts/null-defaults.js';
import { createNullNativeSut, createNullSut, createSyntheticQsl } from '../suts/suts.js';
import { loadCliSettings, settingsSource, usesConfigFiles } from './config.js';
import { checkNetworkOptions, configModelView, createCliNetworkSut, isNetworkSut, runTargetQps, type NetworkCliOptions } from './network.js';
import { CLI_JS_THREAD_NICE } from '../net/transport.js';
import { EXIT_INVALID, EXIT_VALID } from './exit-codes.js';
import { phase, runWithSignals, type RunSignals } from './interrupt.js';
import { cliSecrets } from './output-secrets.js';
import { powerFromCli, type PowerCliOptions } from './power-options.js';
import { runProgress, writeRunReport } from './report.js';
import { checkRunCheckFlags, runCheck, type RunCheckOptions } from './rules-commands.js';

/** --sut values other than a module path. */
const BUILTIN_SUTS = ['null', 'null-native'] as const;
/** Where `loadgen run` without --sut (the demo) writes its <Scenario>/ folders by default. */
export const DEMO_OUTDIR = 'out/demo';
/** camelCase setting -> the reference's snake_case name, for messages. */
const SNAKE_NAME = new Map<string, string>(SETTINGS_FIELDS.map((f) => [f.name, f.snake]));

export interface RunOptions extends Partial<Omit<NetworkCliOptions, 'sut' | 'model' | 'mlperfConf' | 'userConf'>>, PowerCliOptions {
  sut?: string;
  scenario?: string;
  mode?: string;
  set: string[];
  /** Absent: '.' (the demo: out/demo). */
  outdir?: string;
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
  /** --check / --force / --division (lib/cli/rules-commands.ts). */
  check?: RunCheckOptions['check'];
  force?: boolean;
  division?: string;
}

/**
 * Loads a user module exporting createSut() and createQsl() (both may be async).
 * `inWorkers` (dispatch 'worker'): createSut() runs in the workers, not here.
 * The import (its top-level await) and each call must settle within
 * `timeoutMs` (0: no limit): an InterfaceError naming it otherwise.
 * `signal` aborted: stops waiting for the import or either call at once (rejecting with its reason).
 */
async function loadModuleSut(path: string, inWorkers: boolean, signal: AbortSignal, timeoutMs = MODULE_LOAD_TIMEOUT_MS): Promise<{ sut: SystemUnderTest; qsl: QuerySampleLibrary }> {
  const file = resolve(process.cwd(), path);
  if (!existsSync(file)) {
    const s = closest(path, BUILTIN_SUTS);
    throw new InterfaceError(
      `--sut ${path}: no such file${s !== undefined ? ` (did you mean '${s}'?)` : ''}. --sut takes ` +
        `${BUILTIN_SUTS.map((n) => `'${n}'`).join(', ')} or the path of a module exporting createSut() and createQsl().`,
    );
  }
  const url = pathToFileURL(file).href;
  const bounded = <T>(value: T | PromiseLike<T>, what: string): Promise<T> =>
    settleWithin(value, timeoutMs, `--sut ${path}: ${what}`, () =>
      new InterfaceError(`--sut ${path}: ${what} did not settle within ${timeoutMs} ms (a promise that never settles?; --module-timeout-ms)`));
  let mod: Record<string, unknown>;
  try {
    mod = await bounded(phase(signal, import(url)) as Promise<Record<string, unknown>>, 'importing the module (its top-level await)');
  } catch (cause) {
    if (signal.aborted) throw signal.reason;
    if (cause instanceof InterfaceError) throw cause;
    throw new InterfaceError(`--sut ${path}: cannot import the module: ${thrownText(cause)}`);
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
    : ((await bounded(phase(signal, (mod.createSut as () => unknown)()), 'createSut()')) as SystemUnderTest);
  const qsl = (await bounded(phase(signal, (mod.createQsl as () => unknown)()), 'createQsl()')) as QuerySampleLibrary;
  return { sut, qsl };
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

export async function runCommand(input: RunOptions): Promise<number> {
  // SIGINT/SIGTERM from the first phase on, until the output is written (lib/cli/interrupt.ts).
  return runWithSignals((signal, signals) => runPhases(input, signal, signals));
}

/** The command's phases; each ends at once when `signal` aborts. */
async function runPhases(input: RunOptions, signal: AbortSignal, signals: RunSignals): Promise<number> {
  checkNetworkOptions({ url: [], stream: true, ...input } as NetworkCliOptions);
  const power = powerFromCli(input);
  checkRunCheckFlags(input, input.sut !== undefined);
  // No --sut: the built-in onnxruntime demo (lib/demo/), its logs under out/demo
  // (git-ignored in a clone) unless --outdir says otherwise.
  if (input.sut === undefined) {
    return runDemoCommand({ ...input, outdir: input.outdir ?? DEMO_OUTDIR } as RunOptions & DemoCliOptions);
  }
  // A network SUT's --model is the served model: config lookups use --config-model.
  const options = configModelView({ url: [], stream: true, ...input, sut: input.sut, outdir: input.outdir ?? '.' });
  const network = isNetworkSut(options.sut);
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
  // A signal during the (synchronous) settings phase: nothing more starts.
  signal.throwIfAborted();

  let sut!: SystemUnderTest;
  let qsl!: QuerySampleLibrary;
  // dispatch 'worker': the SUT is created in each worker from a module.
  const inWorkers = settings.dispatch === 'worker';
  // Dispatch workers send through their own undici pools: before any node is contacted.
  if (network && inWorkers && options.transport === 'native')
    throw new SettingsError('--transport', 'native', "--transport native cannot serve --set dispatch=worker: dispatch workers send through their own undici pools; use --transport auto or undici with dispatch=worker, or dispatch=wake/poll with --transport native");
  if (network && inWorkers && options.requestLog !== undefined)
    throw new SettingsError('--request-log', options.requestLog, '--request-log cannot be used with --set dispatch=worker: the log is written from the thread that reads the responses; use dispatch=wake (the default) or dispatch=poll');
  let sutModule: string | undefined;
  let source = settingsSource(options);
  if (options.sut === 'null' || options.sut === 'null-native') {
    if (!usesConfigFiles(options)) {
      const defaults = withNullSutDefaults(options.sut, settings);
      settings = defaults.settings;
      if (defaults.applied.length > 0) {
        const shown = defaults.applied.map((k) => `${SNAKE_NAME.get(k) ?? k}=${String(settings[k])}`).join(', ');
        source += `; the ${options.sut} SUT's defaults: ${shown}`;
        if (!options.quiet && !options.json) process.stderr.write(`loadgen: ${options.sut} SUT defaults: ${shown} (--set any of them to change it)\n`);
      }
    }
    sut = options.sut === 'null' ? createNullSut() : createNullNativeSut();
    if (inWorkers && options.sut === 'null') sutModule = NULL_SUT_MODULE;
    qsl = createSyntheticQsl(options.qslTotal, options.qslPerformance ?? options.qslTotal);
  } else if (!network) {
    ({ sut, qsl } = await loadModuleSut(options.sut, inWorkers, signal, options.moduleTimeoutMs));
    if (inWorkers) sutModule = pathToFileURL(resolve(process.cwd(), options.sut)).href;
  }

  // A network SUT reads its data set and probes its nodes under the signal (its
  // requests end at once); with dispatch 'worker' it brings its own worker
  // module (startTest takes it from the SUT).
  const networkSut = network ? await createCliNetworkSut({
    ...(input as NetworkCliOptions), url: options.url, stream: options.stream, targetQps: runTargetQps(settings),
    // The JS thread yields to the issue thread (10) unless dispatch workers (its children: they would inherit it) or undici read the responses.
    jsThreadNice: (input as NetworkCliOptions).jsThreadNice ?? (inWorkers || options.transport === 'undici' ? 0 : CLI_JS_THREAD_NICE),
  }, signal) : undefined;
  if (networkSut !== undefined) {
    sut = networkSut;
    qsl = networkSut.qsl;
  }
  try {
    return await runAndReport();
  } finally {
    await networkSut?.close();
  }

  async function runAndReport(): Promise<number> {
    // --check: the rules first; a refused run starts nothing.
    const refused = runCheck(options, qsl, options.quiet === true || options.json === true);
    if (refused !== undefined) return refused;
    signal.throwIfAborted();
    // From here a signal stops the run, whose logs are written.
    signals.enter('run');
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
      ...(power !== undefined ? { power } : {}),
      // --no-report: exactly the reference's files (a submission folder's).
      reportData: options.report,
      signal,
    }).finally(() => progress.stop());
    const reportPath = writeRunReport(result, options);
    const hint = invalidRunHint(result);
    // Whatever reached the result, no part of the API key is printed (lib/net/secrets.ts).
    if (options.json) {
      // The result, with where its settings came from and, when INVALID, the --set to try.
      const out = { ...result, settingsSource: source, ...(hint !== undefined ? { hint } : {}) };
      process.stdout.write(`${cliSecrets.redact(JSON.stringify(out, jsonReplacer, 2))}\n`);
    } else if (!options.quiet) {
      process.stdout.write(cliSecrets.redact(result.summaryText));
      if (result.files.summary) process.stdout.write(`\nSummary written to ${result.files.summary}\n`);
      if (reportPath !== undefined) process.stdout.write(`Report written to ${reportPath}\n`);
      process.stdout.write(`Settings: ${source}\n`);
    }
    if (hint !== undefined && !options.quiet && !options.json) process.stderr.write(`loadgen: hint: ${hint}\n`);
    return result.valid ? EXIT_VALID : EXIT_INVALID;
  }
}
