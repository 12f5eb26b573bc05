/**
 * startTest: validates everything, hands the run to the native core and
 * serves its requests (issue queries, load/unload samples) on this thread.
 */
import { mkdir } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deserialize } from 'node:v8';

import { setActiveSeries } from './active.js';
import { applyAuditConfig } from './config.js';
import { DispatchWorkerPool, PollLoop } from './dispatch.js';
import { drainQueries, newDrainState, startDrainSeries, type DrainState } from './drain.js';
import { resetHandOver } from './handover.js';
import { InterfaceError, LogOutputError, RunFailedError, SutError } from './errors.js';
import { HostEventKind, loadNative, type NativeAddon, type NativeMessage, type NativeOutcome, type NativeTokenSummary } from './native/index.js';
import {
  assertRunnableMode,
  resolveLogSettings,
  resolveQslDependentChecks,
  resolveTestSettings,
  toNativeSettings,
  type LogSettingsInput,
  type ResolvedLogSettings,
  type ResolvedTestSettings,
  type TestMode,
  type TestSettingsInput,
} from './settings.js';
import { isNullNativeSut } from './suts.js';
import type {
  LatencyPercentilesNs,
  QuerySampleLibrary,
  SystemUnderTest,
  TestResult,
  TokenResult,
} from './types.js';

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
  sutModule?: string | URL;
}

/** The audit.config file name the reference's StartTest uses by default. */
export const DEFAULT_AUDIT_CONFIG = 'audit.config';

/**
 * Runs one test and resolves with its result once the logs are written.
 * Rejects with a SettingsError / InterfaceError before anything starts when an
 * input is invalid, with a BusyError when a test runs already in this process,
 * with a SutError (cause: what was thrown, result: the partial result) when
 * the SUT or QSL fails during the run, and with a RunFailedError when the run
 * ended without a result.
 */
export function startTest(
  sut: SystemUnderTest,
  qsl: QuerySampleLibrary,
  settings?: TestSettingsInput,
  logSettings?: LogSettingsInput,
  options?: StartTestOptions,
): Promise<TestResult>;
/** `dispatch: 'worker'`: the SUTs live in the workers; `sut` only names them (flushQueries, if any, is called here too). */
export function startTest(
  sut: Pick<SystemUnderTest, 'name' | 'flushQueries'>,
  qsl: QuerySampleLibrary,
  settings: TestSettingsInput & { dispatch: 'worker' },
  logSettings?: LogSettingsInput,
  options?: StartTestOptions,
): Promise<TestResult>;
export async function startTest(
  sut: SystemUnderTest | Pick<SystemUnderTest, 'name' | 'flushQueries'>,
  qsl: QuerySampleLibrary,
  settings: TestSettingsInput = {},
  logSettings: LogSettingsInput = {},
  options: StartTestOptions = {},
): Promise<TestResult> {
  const workerDispatch = (settings as { dispatch?: unknown } | undefined)?.dispatch === 'worker';
  checkSut(sut as SystemUnderTest, !workerDispatch);
  checkQsl(qsl);
  let resolved = resolveTestSettings(settings);
  // StartTest applies audit.config to the requested settings before test05
  // and the derivation (spec/00 §6 step 9); the core does the rest.
  const preRunMessages: NativeMessage[] = [];
  const auditPath = options.auditConfig ?? DEFAULT_AUDIT_CONFIG;
  if (auditPath !== false) {
    if (typeof auditPath !== 'string' || auditPath === '') {
      throw new InterfaceError(`options.auditConfig must be a non-empty path or false, got ${describe(auditPath)}`);
    }
    const audit = applyAuditConfig(resolved, auditPath, options.lenientConfig === true);
    if (audit.found) {
      resolved = resolveTestSettings(audit.settings);
      preRunMessages.push(...audit.messages);
      for (const warning of audit.warnings) process.emitWarning(warning, { code: 'LOADGEN_AUDIT_CONFIG' });
    }
  }
  assertRunnableMode(resolved);
  resolveQslDependentChecks(resolved, qsl);
  const sutModule = checkDispatch(sut as SystemUnderTest, resolved, options.sutModule);
  const log = resolveLogSettings(logSettings);
  const native = loadNative();
  // The one busy check (BusyError), native: worker threads share the process.
  // The slot is this thread's until releaseRun(), past the run's end.
  native.reserveRun();
  try {
    try {
      await mkdir(log.outdir, { recursive: true });
    } catch (cause) {
      throw new LogOutputError(`cannot create the log directory outdir='${log.outdir}': ${(cause as Error).message}`, cause);
    }
    native.takeWorkerError();  // a stale error of an earlier run
    let pool: DispatchWorkerPool | undefined;
    if (sutModule !== undefined) {
      try {
        pool = await DispatchWorkerPool.start(sutModule, resolved.dispatchWorkers);
      } catch (cause) {
        throw new SutError(`a dispatch worker failed before the run started: ${messageOf(cause)}`, cause, undefined);
      }
    }
    try {
      return await new ActiveRun(native, sut as SystemUnderTest, qsl, resolved, log, preRunMessages, pool).run();
    } catch (error) {
      await pool?.terminate();
      throw error;
    }
  } finally {
    native.releaseRun();
  }
}

/** LOADGEN_ISSUE_THREAD_WAIT_MS: shortens the 10 s issue-thread registration wait (tests). */
function issueThreadWaitOverride(): { issue_thread_wait_ms?: number } {
  const raw = process.env['LOADGEN_ISSUE_THREAD_WAIT_MS'];
  if (raw === undefined || !/^\d+$/.test(raw)) return {};
  return { issue_thread_wait_ms: Number(raw) };
}

/** The dispatch mode's own rules; returns the sutModule URL to start workers from. */
function checkDispatch(sut: SystemUnderTest, s: ResolvedTestSettings, sutModule: unknown): string | undefined {
  if (s.dispatch !== 'wake' && isNullNativeSut(sut))
    throw new InterfaceError(`the null-native SUT completes inside the native core; dispatch '${s.dispatch}' does not apply (use dispatch 'wake')`);
  if (sutModule === undefined) return undefined;
  if (s.dispatch !== 'worker')
    throw new InterfaceError(`options.sutModule starts SUTs in worker threads; it needs dispatch 'worker' (dispatch is '${s.dispatch}')`);
  if (sutModule instanceof URL) return sutModule.href;
  if (typeof sutModule !== 'string' || sutModule === '')
    throw new InterfaceError(`options.sutModule must be a module path or URL, got ${describe(sutModule)}`);
  return /^[a-z][a-z0-9+.-]*:/i.test(sutModule) && !/^[a-z]:[\\/]/i.test(sutModule)
    ? sutModule
    : pathToFileURL(resolvePath(process.cwd(), sutModule)).href;
}

function checkSut(sut: SystemUnderTest, needsIssueQuery = true): void {
  if (typeof sut !== 'object' || sut === null) throw new InterfaceError(`sut must be an object, got ${describe(sut)}`);
  if (typeof sut.name !== 'string') throw new InterfaceError(`sut.name must be a string, got ${describe(sut.name)}`);
  if (needsIssueQuery && typeof sut.issueQuery !== 'function')
    throw new InterfaceError(`sut.issueQuery must be a function, got ${describe(sut.issueQuery)}`);
  if (sut.flushQueries !== undefined && typeof sut.flushQueries !== 'function')
    throw new InterfaceError(`sut.flushQueries must be a function when present, got ${describe(sut.flushQueries)}`);
}

function checkQsl(qsl: QuerySampleLibrary): void {
  if (typeof qsl !== 'object' || qsl === null) throw new InterfaceError(`qsl must be an object, got ${describe(qsl)}`);
  if (typeof qsl.name !== 'string') throw new InterfaceError(`qsl.name must be a string, got ${describe(qsl.name)}`);
  for (const key of ['loadSamplesToRam', 'unloadSamplesFromRam'] as const) {
    if (typeof qsl[key] !== 'function') throw new InterfaceError(`qsl.${key} must be a function, got ${describe(qsl[key])}`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  if (typeof value === 'string') return `'${value}'`;
  return `${typeof value} ${String(value)}`;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** One run: serves the native side's events on the JS thread. */
class ActiveRun {
  private readonly queries: DrainState = newDrainState();
  private failure: { error: unknown; where: string } | undefined;
  private resolve!: (result: TestResult) => void;
  private reject!: (error: unknown) => void;

  constructor(
    private readonly native: NativeAddon,
    private readonly sut: SystemUnderTest,
    private readonly qsl: QuerySampleLibrary,
    private readonly settings: ResolvedTestSettings,
    private readonly log: ResolvedLogSettings,
    private readonly preRunMessages: NativeMessage[] = [],
    private readonly pool?: DispatchWorkerPool,
  ) {
    // dispatch 'poll': drains once per event-loop turn while a series issues.
    if (settings.dispatch === 'poll') {
      this.poll = new PollLoop(native, (published) => {
        try {
          this.drain(published);
        } catch (error) {
          this.fail(error, 'loadgen');
        }
      });
    }
  }

  private readonly poll: PollLoop | undefined;

  run(): Promise<TestResult> {
    const promise = new Promise<TestResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const config = {
      ...toNativeSettings(this.settings),
      qsl_total_sample_count: this.qsl.totalSampleCount,
      qsl_performance_sample_count: this.qsl.performanceSampleCount,
      sut_name: this.sut.name,
      qsl_name: this.qsl.name,
      complete_on_issue_thread: isNullNativeSut(this.sut),
      host_loads_samples: true,
      log_outdir: this.log.outdir,
      log_prefix: this.log.prefix,
      log_suffix: this.log.suffix,
      log_prefix_with_datetime: this.log.prefixWithDatetime,
      log_copy_summary_to_stdout: this.log.copySummaryToStdout,
      log_copy_detail_to_stdout: this.log.copyDetailToStdout,
      pre_run_messages: this.preRunMessages,
      log_enable_trace: this.log.enableTrace,
      ...issueThreadWaitOverride(),
    };
    this.pool?.listen((error, index) => this.fail(error, `dispatch worker ${index}`));
    this.native.start(config, this.dispatch);
    return promise;
  }

  // Must never throw: it runs inside the native threadsafe-function callback.
  private readonly dispatch = (kind: number, arg?: unknown, token?: number): void => {
    try {
      switch (kind) {
        case HostEventKind.Drain:
          this.drain(arg as number);
          break;
        case HostEventKind.SeriesStarted: {
          const info = this.native.seriesInfo();
          startDrainSeries(this.queries, info);
          setActiveSeries(info.firstId, info.accuracyLogSampled, info.tokenLatencies);
          resetHandOver(this.drainHandedOver);
          this.poll?.start();
          break;
        }
        case HostEventKind.Load:
          this.callQsl('loadSamplesToRam', arg as Uint32Array, token!);
          break;
        case HostEventKind.Unload:
          this.callQsl('unloadSamplesFromRam', arg as Uint32Array, token!);
          break;
        case HostEventKind.Flush:
          this.poll?.stop(true);  // the last query is published: take it, then flush
          this.sut.flushQueries?.();
          break;
        case HostEventKind.Finished:
          this.finished();
          break;
      }
    } catch (error) {
      this.fail(error, kind === HostEventKind.Flush ? 'sut.flushQueries' : 'loadgen');
    }
  };

  private drain(published: number): void {
    if (this.failure !== undefined) return;
    drainQueries(this.native, this.sut, this.queries, published, (error) => this.fail(error, 'sut.issueQuery'));
  }

  // Queries a completion call issued itself (lib/handover.ts), outside a drain.
  private readonly drainHandedOver = (published: number): void => {
    try {
      this.drain(published);
    } catch (error) {
      this.fail(error, 'loadgen');
    }
  };

  private callQsl(method: 'loadSamplesToRam' | 'unloadSamplesFromRam', indices: Uint32Array, token: number): void {
    const list = Array.from(indices);
    let pending: Promise<void>;
    try {
      pending = Promise.resolve(this.qsl[method](list));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      () => {
        this.native.acknowledge(token);
      },
      (error: unknown) => {
        this.recordFailure(error, `qsl.${method}`);
        this.native.acknowledge(token, `qsl.${method} failed: ${messageOf(error)}`);
      },
    );
  }

  private recordFailure(error: unknown, where: string): void {
    this.failure ??= { error, where };
  }

  private fail(error: unknown, where: string): void {
    if (this.failure !== undefined) return;
    this.recordFailure(error, where);
    this.native.abort(`${where} threw: ${messageOf(error)}`);
  }

  private finished(): void {
    this.poll?.stop(false);
    setActiveSeries(0, new Uint8Array(0));
    resetHandOver();
    let outcome: NativeOutcome;
    try {
      outcome = this.native.finish();
    } catch (error) {
      this.reject(error);
      return;
    }
    const result = toTestResult(outcome, this.settings, this.sut.name, this.qsl.name);
    // Started workers end (released) before the result: their errors count.
    if (this.pool !== undefined) void this.pool.close().then(() => this.settle(outcome, result));
    else this.settle(outcome, result);
  }

  private settle(outcome: NativeOutcome, result: TestResult): void {
    // What a worker's SUT threw (runDispatchWorker), serialized across threads.
    const stored = this.native.takeWorkerError();
    if (stored !== undefined && this.failure === undefined) {
      let error: unknown;
      try {
        error = deserialize(stored);
      } catch {
        error = new Error(outcome.abortReason);
      }
      this.recordFailure(error, 'sut.issueQuery in a dispatch worker');
    }
    if (this.failure !== undefined) {
      const { error, where } = this.failure;
      this.reject(new SutError(`the run was aborted because ${where} failed: ${messageOf(error)}`, error, result));
    } else if (outcome.aborted && !outcome.hasSummary && outcome.mode !== 'AccuracyOnly') {
      this.reject(new RunFailedError(`the run failed: ${outcome.abortReason}`));
    } else {
      this.resolve(result);
    }
  }
}

function percentiles(values: Record<string, number> | undefined): LatencyPercentilesNs {
  const v = values ?? {};
  return { 50: v['50'] ?? 0, 90: v['90'] ?? 0, 95: v['95'] ?? 0, 97: v['97'] ?? 0, 99: v['99'] ?? 0, 99.9: v['99.9'] ?? 0 };
}

function percentLabel(fraction: number): string {
  return (Math.round(fraction * 1000) / 10).toFixed(1);
}

/** With token latencies the summary shows the TTFT and TPOT verdicts instead. */
function earlyStoppingText(message: string, tokens: NativeTokenSummary | undefined): string {
  if (tokens === undefined || !tokens.useTokenLatencies) return message;
  return `TTFT Early Stopping Result:\n${tokens.ttftEarlyStoppingMessage}\nTPOT Early Stopping Result:\n${tokens.tpotEarlyStoppingMessage}`;
}

function tokenResult(
  scenario: ResolvedTestSettings['scenario'],
  t: NativeTokenSummary,
  e: NativeOutcome['completionErrors'],
): TokenResult {
  const result: TokenResult = {
    tokenCount: t.tokenCount,
    errors: {
      missingFirstToken: e.missingFirstTokens,
      firstTokenAfterCompletion: e.firstTokenAfterCompletion,
      duplicateFirstToken: e.duplicateFirstTokens,
      zeroTokens: e.zeroTokens,
      negativeTokens: e.negativeTokens,
      oneToken: e.oneToken,
    },
  };
  if (t.useTokenLatencies) {
    if (scenario === 'Offline') {
      result.tokensPerSecond = t.tokensPerSecond;
    } else {
      result.ttftNs = {
        min: t.ttftMinNs,
        max: t.ttftMaxNs,
        mean: t.ttftMeanNs,
        targetPercentile: t.ttftTargetPercentileNs,
        percentiles: percentiles(t.ttftPercentilesNs),
      };
      result.tpotNs = {
        min: t.tpotMinNs,
        max: t.tpotMaxNs,
        mean: t.tpotMeanNs,
        targetPercentile: t.tpotTargetPercentileNs,
        percentiles: percentiles(t.tpotPercentilesNs),
      };
      result.completedTokensPerSecond = t.completedTokensPerSecond;
      result.earlyStopping = { ttftMessage: t.ttftEarlyStoppingMessage, tpotMessage: t.tpotEarlyStoppingMessage };
    }
    if (scenario === 'SingleStream') {
      result.tpsWithLoadgenOverhead = t.tpsWithLoadgenOverhead;
      result.tpsWithoutLoadgenOverhead = t.tpsWithoutLoadgenOverhead;
    }
  }
  if (t.inferTokenLatencies && scenario === 'Offline') result.inferredTokensPerSecond = t.inferredTokensPerSecond;
  if (t.inferTokenLatencies && scenario === 'Server') result.inferredCompletedTokensPerSecond = t.inferredCompletedTokensPerSecond;
  return result;
}

/** Turns the native outcome into the public, plain-data result. */
export function toTestResult(
  outcome: NativeOutcome,
  settings: ResolvedTestSettings,
  sutName: string,
  qslName: string,
): TestResult {
  const s = outcome.summary;
  const scenario = settings.scenario;
  const mode = outcome.mode as TestMode;
  // An accuracy-only run has no performance checks: it is valid when every
  // issued sample completed and nothing failed.
  const accuracyOnly = mode === 'AccuracyOnly';
  const valid = accuracyOnly
    ? !outcome.aborted && outcome.extraInvalidReasons.length === 0 && outcome.counts.issuedSamples > 0
    : s !== undefined && s.resultValid;
  const invalidReasons: string[] = [];
  if (accuracyOnly) {
    invalidReasons.push(...outcome.extraInvalidReasons);
    if (!valid && invalidReasons.length === 0) invalidReasons.push('No samples were issued.');
  } else if (s === undefined) {
    invalidReasons.push(outcome.aborted ? `The run was aborted: ${outcome.abortReason}` : 'The run produced no results.');
  } else if (!valid) {
    if (!s.perfConstraintsMet) invalidReasons.push(s.perfConstraintsRecommendation);
    if (!s.minDurationMet) invalidReasons.push(s.minDurationRecommendation);
    if (!s.minQueriesMet) invalidReasons.push('The test exited early, before enough queries were issued.');
    if (!s.earlyStoppingMet) invalidReasons.push(`Early stopping not satisfied:\n${earlyStoppingText(s.earlyStoppingMessage, s.tokens)}`);
    invalidReasons.push(...outcome.extraInvalidReasons);
  }
  const percentile = s?.targetPercentile ?? 0;
  let metric: TestResult['metric'];
  switch (scenario) {
    case 'SingleStream':
      metric = { name: `${percentLabel(percentile)}th percentile latency`, value: s?.targetPercentileLatencyNs ?? 0, unit: 'ns' };
      break;
    case 'MultiStream':
      metric = { name: `${percentLabel(percentile)}th percentile query latency`, value: s?.targetPercentileQueryLatencyNs ?? 0, unit: 'ns' };
      break;
    case 'Server':
      metric = { name: 'completed samples per second', value: s?.completedSamplesPerSecond ?? 0, unit: 'samples/s' };
      break;
    default:
      metric = { name: 'samples per second', value: s?.samplesPerSecond ?? 0, unit: 'samples/s' };
  }
  const result: TestResult = {
    scenario,
    mode,
    sutName,
    qslName,
    validity: valid ? 'VALID' : 'INVALID',
    valid,
    invalidReasons,
    metric,
    checks: {
      minDurationMet: s?.minDurationMet ?? false,
      minQueriesMet: s?.minQueriesMet ?? false,
      earlyStoppingMet: s?.earlyStoppingMet ?? false,
      perfConstraintsMet: s?.perfConstraintsMet ?? false,
    },
    earlyStopping: {
      met: s?.earlyStoppingMet ?? false,
      message: s === undefined ? '' : earlyStoppingText(s.earlyStoppingMessage, s.tokens),
      latencySsNs: s?.earlyStoppingLatencySsNs ?? 0,
      latencyMsNs: s?.earlyStoppingLatencyMsNs ?? 0,
    },
    targetLatencyPercentile: percentile,
    targetPercentileLatencyNs:
      scenario === 'MultiStream' ? (s?.targetPercentileQueryLatencyNs ?? 0) : (s?.targetPercentileLatencyNs ?? 0),
    latencyNs: { min: s?.minLatencyNs ?? 0, max: s?.maxLatencyNs ?? 0, mean: s?.meanLatencyNs ?? 0 },
    percentilesNs: percentiles(s?.percentilesNs),
    counts: { ...outcome.counts },
    timing: {
      maxLatencySeconds: s?.maxLatencySeconds ?? 0,
      finalQueryScheduledSeconds: s?.finalQueryScheduledTimeSeconds ?? 0,
      finalQueryIssuedSeconds: s?.finalQueryIssuedTimeSeconds ?? 0,
      finalQueryAllSamplesDoneSeconds: s?.finalQueryAllSamplesDoneTimeSeconds ?? 0,
    },
    errors: {
      count: outcome.errorCount,
      warnings: outcome.warningCount,
      invalidIds: outcome.completionErrors.invalidIds,
      unissuedIds: outcome.completionErrors.unissuedIds,
      duplicateIds: outcome.completionErrors.duplicateIds,
      messages: outcome.messages.filter((m) => m.isError || m.isWarning),
    },
    effectiveSettings: { ...outcome.effective },
    testDatetime: outcome.testDatetime,
    files: {
      ...(outcome.summaryPath ? { summary: outcome.summaryPath } : {}),
      ...(outcome.detailLogPath ? { detail: outcome.detailLogPath } : {}),
      ...(outcome.accuracyLogPath ? { accuracyLog: outcome.accuracyLogPath } : {}),
    },
    accuracyLogRecords: outcome.accuracyLogRecords,
    summaryText: outcome.summaryText,
  };
  if (scenario === 'MultiStream' && s !== undefined) {
    result.queryLatencyNs = { min: s.queryMinLatencyNs, max: s.queryMaxLatencyNs, mean: s.queryMeanLatencyNs };
    result.queryPercentilesNs = percentiles(s.queryPercentilesNs);
  }
  if (scenario === 'SingleStream' && s !== undefined) {
    result.qpsWithLoadgenOverhead = s.qpsWithLoadgenOverhead;
    result.qpsWithoutLoadgenOverhead = s.qpsWithoutLoadgenOverhead;
  }
  if (scenario === 'Server' && s !== undefined) {
    result.overLatencyCount = s.overlatencyQueryCount;
    result.scheduledSamplesPerSecond = s.scheduledSamplesPerSecond;
    result.completedSamplesPerSecond = s.completedSamplesPerSecond;
  }
  if (scenario === 'Offline' && s !== undefined) result.samplesPerSecond = s.samplesPerSecond;
  if (s?.tokens !== undefined) result.tokens = tokenResult(scenario, s.tokens, outcome.completionErrors);
  if (mode === 'FindPeakPerformance') result.findPeak = { peakQps: outcome.peakQps, trials: outcome.peakTrials };
  if (outcome.overhead !== undefined) result.overhead = outcome.overhead;
  return result;
}
