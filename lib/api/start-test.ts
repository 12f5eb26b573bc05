/**
 * startTest: the entry of a run. Checks the SUT and QSL, takes the settings
 * one way — resolve the inputs, apply the config layer (audit.config),
 * validate once, convert to the native object — and hands the run to
 * {@link ActiveRun}, which serves it on this thread.
 */
import type { RunAbortSignal } from '../run-abort-signal.js';
import { applyStartTestAuditConfig } from '../config/audit-config.js';
import { settingsOriginOf } from '../config/load-settings.js';
import { dispatchWorkerPlanOf, DispatchWorkerPool } from '../dispatch/dispatch.js';
import { SutError } from '../errors.js';
import { ensureOutputDirectory } from '../fs/output-dir.js';
import { loadNative } from '../native/index.js';
import { addInferredAndPower, type PowerRun } from '../power/run-extras.js';
import { PowerSampler } from '../power/sampler.js';
import { checkPowerOptions, type PowerOptions } from '../power/sources.js';
import { resolveLogSettings } from '../settings/log-settings.js';
import { resolveTestSettingFields } from '../settings/resolve.js';
import { toNativeRunConfig } from '../settings/to-native.js';
import type { LogSettingsInput, TestSettingsInput } from '../types/settings.js';
import { validateRunSettings } from '../settings/validate.js';
import { isNullNativeSut } from './null-native.js';
import { nativeSutOf } from './native-sut.js';
import { ActiveRun } from './active-run.js';
import { checkAuditConfigOption, checkDispatch, checkQsl, checkSut, messageOf } from './checks.js';
import { removeStaleRunFiles } from './stale-files.js';
import { addSutReport, withSutDefaults } from './sut-report.js';
import { addTokenLimits } from './token-limits.js';
import type { QuerySampleLibrary, SystemUnderTest, TestResult } from '../types/api.js';

/** Options of {@link startTest} beyond the reference's settings. */
export interface StartTestOptions {
  /**
   * The audit.config the reference's StartTest looks for: a path (relative to
   * `process.cwd()`), or false to skip it. When the file can be read it is
   * applied on top of the settings (model `*`, the run's scenario) and the
   * reference's warning goes to the detail log. Default `'audit.config'`.
   */
  auditConfig?: string | false;
  /** Apply audit.config exactly as the reference even if it has problems (reported via process.emitWarning). Default false. */
  lenientConfig?: boolean;
  /**
   * `dispatch: 'worker'`: a module exporting `createSut(context)` (a path
   * relative to `process.cwd()`, or a URL). startTest starts
   * `dispatchWorkers` worker threads that each create their SUT with it and
   * serve the run (see runDispatchWorker), and starts the run once all have
   * registered. The `sut` argument then only names the SUT. Without it,
   * startTest waits (10 s) for workers you start yourself that call
   * runDispatchWorker.
   */
  sutModule?: string | { readonly href: string };
  /**
   * `dispatch: 'worker'` with a `sutModule`: a structured-clone value each
   * worker's `createSut(context)` receives as `context.options`.
   */
  sutOptions?: unknown;
  /**
   * Stops the run when aborted, its logs written: issuing ends at once (as
   * the reference's early-outs end it), queries already issued are waited
   * for (up to `completion_timeout_ms`), the remaining phases are skipped,
   * and the promise resolves with an INVALID result whose `interrupted` is
   * the reason (`interrupted: <the abort reason's message>`). A
   * `loadSamplesToRam` or `unloadSamplesFromRam` under way is not waited for
   * (nothing more is issued; a later settle is ignored). Already aborted:
   * startTest rejects with the signal's reason before anything starts.
   */
  signal?: RunAbortSignal;
  /**
   * Measures power during the run (see docs/planning-and-checking.md, "Energy and inferred
   * results"): the source is read every `intervalMs` from just before the
   * run to just after it, and `result.power` gives average power, energy,
   * energy per sample/query and samples per joule over the detail log's
   * power window. A source that cannot be read rejects with a SettingsError
   * (`power`) before anything runs.
   */
  power?: PowerOptions;
  /**
   * Write loadgen_report_data.json beside the logs: what report.html (the
   * CLI's, `loadgen report`, writeReport()) draws its charts from, and
   * where the SUT's report block and the power figures go for it. false:
   * the run writes exactly the reference's files (summary, detail, accuracy
   * and trace logs), as a submission folder must hold; `loadgen report` then
   * builds its page from the summary and detail logs alone, without charts.
   * Default true.
   */
  reportData?: boolean;
}

/** startTest's `signal` option: a standard AbortSignal (lib/run-abort-signal.ts). */
export type { RunAbortSignal } from '../run-abort-signal.js';

/**
 * Runs one test and resolves with its result once the logs are written.
 * Rejects with a SettingsError / InterfaceError before anything starts when an
 * input is invalid (a LogOutputError when `outdir` cannot be created or
 * written in), and with a SutError (cause: what was thrown, result: the
 * partial result) when the SUT or QSL fails during the run (a QSL call that
 * has not settled within `qslTimeoutMs` fails it too). With
 * `options.signal` aborted before the run starts it rejects with the
 * signal's reason; aborted during the run it resolves with the INVALID,
 * interrupted result (see {@link StartTestOptions.signal}).
 */
export function startTest(
  sut: SystemUnderTest,
  qsl: QuerySampleLibrary,
  settings?: TestSettingsInput,
  logSettings?: LogSettingsInput,
  options?: StartTestOptions,
): Promise<TestResult>;
/** `dispatch: 'worker'`: the SUTs live in the workers; `sut` only names them (flushQueries, defaultSettings and report, if any, are used here too). */
export function startTest(
  sut: Pick<SystemUnderTest, 'name' | 'flushQueries' | 'defaultSettings' | 'report'>,
  qsl: QuerySampleLibrary,
  settings: TestSettingsInput & { dispatch: 'worker' },
  logSettings?: LogSettingsInput,
  options?: StartTestOptions,
): Promise<TestResult>;
export async function startTest(
  sut: SystemUnderTest | Pick<SystemUnderTest, 'name' | 'flushQueries' | 'defaultSettings' | 'report'>,
  qsl: QuerySampleLibrary,
  settings: TestSettingsInput = {},
  logSettings: LogSettingsInput = {},
  options: StartTestOptions = {},
): Promise<TestResult> {
  const signal = checkSignal(options.signal);
  if (options.reportData !== undefined && typeof options.reportData !== 'boolean') {
    throw new TypeError(`startTest: options.reportData must be a boolean, got ${options.reportData === null ? 'null' : typeof options.reportData}`);
  }
  signal?.throwIfAborted();
  // Where the token limits came from (the summary says): read before the SUT's defaults copy the settings.
  const origin = typeof settings === 'object' && settings !== null ? settingsOriginOf(settings) : undefined;
  const input = settings;
  const sutDefaults = typeof sut === 'object' && sut !== null ? (sut.defaultSettings as TestSettingsInput | undefined) : undefined;
  if (typeof sut === 'object' && sut !== null) settings = withSutDefaults(sut, settings);
  const workerDispatch = (settings as { dispatch?: unknown } | undefined)?.dispatch === 'worker';
  checkSut(sut as SystemUnderTest, !workerDispatch);
  checkQsl(qsl);
  // The settings' one way. 1. The inputs, each field checked, defaults filled in.
  const requested = resolveTestSettingFields(settings);
  // 2. The config layer: StartTest applies audit.config to the requested
  // settings before test05 and the derivation (spec/00 §6 step 9; the core
  // does the rest). mlperf.conf and user.conf came before, via loadSettings.
  const auditPath = checkAuditConfigOption(options.auditConfig);
  const audited = applyStartTestAuditConfig(requested, auditPath, options.lenientConfig === true);
  const resolved = audited.settings;
  // 3. Validated once, complete: the cross-field rules, the mode, the QSL's counts.
  validateRunSettings(resolved, qsl);
  // A SUT that brings its own worker module (network SUTs) needs no sutModule.
  const plan = resolved.dispatch === 'worker' && options.sutModule === undefined ? dispatchWorkerPlanOf(sut) : undefined;
  const sutModule = checkDispatch(sut as SystemUnderTest, resolved, options.sutModule ?? plan?.module);
  const sutOptions = plan !== undefined ? plan.options(resolved.dispatchWorkers) : options.sutOptions;
  const log = resolveLogSettings(logSettings);
  const power = options.power !== undefined ? checkPowerOptions(options.power) : undefined;
  // 4. The flat object the native core reads.
  const config = toNativeRunConfig(resolved, log, {
    qsl,
    sutName: sut.name,
    completeOnIssueThread: isNullNativeSut(sut as SystemUnderTest),
    preRunMessages: audited.messages,
    ...(options.reportData !== undefined ? { reportData: options.reportData } : {}),
  });
  const native = loadNative();
  // The one busy check (BusyError), native: worker threads share the process.
  // The slot is this thread's until releaseRun(), past the run's end.
  native.reserveRun();
  try {
    await ensureOutputDirectory(log.outdir);
    removeStaleRunFiles(log);
    native.takeWorkerError();  // a stale error of an earlier run
    let pool: DispatchWorkerPool | undefined;
    if (sutModule !== undefined) {
      try {
        pool = await DispatchWorkerPool.start(sutModule, resolved.dispatchWorkers, sutOptions);
      } catch (cause) {
        throw new SutError(`a dispatch worker failed before the run started: ${messageOf(cause)}`, cause, undefined);
      }
    }
    let sampler: PowerSampler | undefined;
    const powerRun = async (): Promise<PowerRun | undefined> =>
      sampler === undefined ? undefined : { source: sampler.description, intervalMs: sampler.intervalMs, readings: await sampler.stop() };
    try {
      signal?.throwIfAborted();  // aborted while preparing: nothing ran yet
      // The first reading is taken before the run starts (an unreadable source fails here).
      if (power !== undefined) sampler = await PowerSampler.start(power);
      // A SUT inside the core (the native HTTP client) takes the queries, unless dispatch workers do.
      const nativeSut = resolved.dispatch === 'worker' ? undefined : nativeSutOf(sut);
      const result = await new ActiveRun(native, sut as SystemUnderTest, qsl, resolved, config, pool, signal, nativeSut).run();
      addInferredAndPower(result, log, await powerRun());
      addTokenLimits(result, log, origin, input, sutDefaults);
      addSutReport(sut, result, log);
      return result;
    } catch (error) {
      // A failed run whose logs were written still gets the SUT's block.
      if (error instanceof SutError && typeof error.result === 'object' && error.result !== null) {
        addInferredAndPower(error.result as TestResult, log, await powerRun());
        addTokenLimits(error.result as TestResult, log, origin, input, sutDefaults);
        addSutReport(sut, error.result as TestResult, log);
      }
      await sampler?.stop();
      await pool?.terminate();
      throw error;
    }
  } finally {
    native.releaseRun();
  }
}

/** options.signal: an AbortSignal or absent. */
function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal === undefined || signal instanceof AbortSignal) return signal;
  const got = signal === null ? 'null' : typeof signal === 'object' ? 'an object that is not an AbortSignal' : `a ${typeof signal}`;
  throw new TypeError(`startTest: options.signal must be an AbortSignal (e.g. from new AbortController()), got ${got}`);
}
