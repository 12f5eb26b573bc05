/**
 * The production surface of the native addon (bindings/addon.cc and the
 * files it registers): what startTest, the completion calls, the dispatch
 * modes, loadSettings and progress use. The test-only surface (the
 * module's `_internals` export) is declared apart, in internals.ts.
 */
import type { BusyError, NotRunningError, SettingsError } from '../errors.js';
import type { OverheadStatsNs, TestResult } from '../types/api.js';
import type { NativeTables } from './table-types.js';

/** The lib/errors.ts classes the addon throws (bindings/errors.cc). */
export interface NativeErrorClasses {
  BusyError: typeof BusyError;
  NotRunningError: typeof NotRunningError;
  SettingsError: typeof SettingsError;
}

/** Event kinds sent by the native side to the dispatcher (bindings/js_host.h). */
export const HostEventKind = {
  Drain: 0,
  SeriesStarted: 1,
  Load: 2,
  Unload: 3,
  Flush: 4,
  Finished: 5,
} as const;

export type Dispatcher = (kind: number, arg?: unknown, token?: number) => void;

/** Event kinds sent to a registered issue-query thread (bindings/issue_threads.h). */
export const IssueThreadEventKind = { Drain: 0, SeriesStarted: 1, Released: 2 } as const;
/** dispatchNext() results (native/session.h Session::kDispatch*). */
export const DispatchStatus = { Claimed: 1, Idle: 0, SeriesEnded: -1, Over: -2 } as const;
export type IssueThreadDispatcher = (kind: number, published?: number, firstId?: number, index?: number, stride?: number) => void;

export interface NativeSeriesInfo {
  firstId: number;
  samplesPerQuery: number;
  queryCount: number;
  /** Samples of the series (queryCount x samplesPerQuery); their QSL indices come from copySampleIndices. */
  sampleCount: number;
  /** Some sample's response goes to the accuracy log. */
  anySampled: boolean;
  /** Every sample's does (accuracy series); accuracyLogSampled is then empty. */
  allSampled: boolean;
  /** 1 for samples whose response goes to the accuracy log, when some but not all do; else empty. */
  accuracyLogSampled: Uint8Array;
  /** server_coalesce_queries: a drain hands all its due queries to one issueQuery call. */
  coalesced: boolean;
  /** use_token_latencies: completions carry token counts. */
  tokenLatencies: boolean;
  /** A performance series (not an accuracy one). */
  performance: boolean;
}

export interface NativeMessage {
  key: string;
  text: string;
  isError: boolean;
  isWarning: boolean;
}

export interface NativeSummary {
  sampleCount: number;
  queryCount: number;
  overlatencyQueryCount: number;
  minLatencyNs: number;
  maxLatencyNs: number;
  meanLatencyNs: number;
  targetPercentile: number;
  targetPercentileLatencyNs: number;
  targetPercentileQueryLatencyNs: number;
  percentilesNs: Record<string, number>;
  queryMinLatencyNs: number;
  queryMaxLatencyNs: number;
  queryMeanLatencyNs: number;
  queryPercentilesNs: Record<string, number>;
  earlyStoppingLatencySsNs: number;
  earlyStoppingLatencyMsNs: number;
  minDurationMet: boolean;
  minQueriesMet: boolean;
  perfConstraintsMet: boolean;
  earlyStoppingMet: boolean;
  resultValid: boolean;
  earlyStoppingMessage: string;
  minDurationRecommendation: string;
  perfConstraintsRecommendation: string;
  qpsWithLoadgenOverhead: number;
  qpsWithoutLoadgenOverhead: number;
  scheduledSamplesPerSecond: number;
  completedSamplesPerSecond: number;
  samplesPerSecond: number;
  maxLatencySeconds: number;
  finalQueryScheduledTimeSeconds: number;
  finalQueryIssuedTimeSeconds: number;
  finalQueryAllSamplesDoneTimeSeconds: number;
  /** Present with use_token_latencies or infer_token_latencies. */
  tokens?: NativeTokenSummary;
}

export interface NativeTokenSummary {
  useTokenLatencies: boolean;
  inferTokenLatencies: boolean;
  tokenCount: number;
  ttftMinNs: number;
  ttftMaxNs: number;
  ttftMeanNs: number;
  ttftTargetPercentileNs: number;
  ttftPercentilesNs: Record<string, number>;
  tpotMinNs: number;
  tpotMaxNs: number;
  tpotMeanNs: number;
  tpotTargetPercentileNs: number;
  tpotPercentilesNs: Record<string, number>;
  tokensPerSecond: number;
  completedTokensPerSecond: number;
  tpsWithLoadgenOverhead: number;
  tpsWithoutLoadgenOverhead: number;
  inferredTokensPerSecond: number;
  inferredCompletedTokensPerSecond: number;
  ttftEarlyStoppingMessage: string;
  tpotEarlyStoppingMessage: string;
  /** Server token runs: issued samples within both the TTFT and TPOT bounds, and the issued samples (0 and 0 elsewhere). */
  goodputSamples: number;
  goodputIssuedSamples: number;
}

export interface NativeEffectiveSettings {
  scenario: string;
  mode: string;
  samplesPerQuery: number;
  targetQps: number;
  targetLatencyNs: number;
  targetLatencyPercentile: number;
  maxAsyncQueries: number;
  targetDurationMs: number;
  minDurationMs: number;
  maxDurationMs: number;
  minQueryCount: number;
  maxQueryCount: number;
  minSampleCount: number;
  qslRngSeed: bigint;
  sampleIndexRngSeed: bigint;
  scheduleRngSeed: bigint;
  accuracyLogRngSeed: bigint;
  accuracyLogProbability: number;
  accuracyLogSamplingTarget: number;
  printTimestamps: boolean;
  performanceIssueUnique: boolean;
  performanceIssueSame: boolean;
  performanceIssueSameIndex: number;
  performanceSampleCount: number;
  accuracySampleCount: number;
  sampleConcatenatePermutation: boolean;
  useTokenLatencies: boolean;
  serverTtftLatency: number;
  serverTpotLatency: number;
  inferTokenLatencies: boolean;
  tokenLatencyScalingFactor: number;
}

export interface NativeOutcome {
  hasSummary: boolean;
  /** The mode that ran (after the test05 override). */
  mode: string;
  accuracyLogPath: string;
  accuracyLogRecords: number;
  seriesCount: number;
  testDatetime: string;
  summaryPath: string;
  summaryText: string;
  detailLogPath: string;
  effective: NativeEffectiveSettings;
  aborted: boolean;
  abortReason: string;
  /** Stopped on request (interrupt()); the reason is also the first of extraInvalidReasons. */
  interrupted: boolean;
  interruptReason: string;
  errorCount: number;
  warningCount: number;
  messages: NativeMessage[];
  extraInvalidReasons: string[];
  /** The same counts the result reports (TestResult['counts']). */
  counts: TestResult['counts'];
  /** Samples completed as failed (failSample), by tables.failureKinds name. */
  failedSamples: { total: number; byKind: Record<string, number> };
  completionErrors: {
    invalidIds: number;
    unissuedIds: number;
    staleIds: number;
    duplicateIds: number;
    firstInvalidId: number;
    firstDuplicateId: number;
    firstTokenAfterCompletion: number;
    duplicateFirstTokens: number;
    missingFirstTokens: number;
    zeroTokens: number;
    negativeTokens: number;
    oneToken: number;
  };
  summary?: NativeSummary;
  peakTrials: { targetQps: number; perfConstraintsMet: boolean; targetPercentileLatencyNs: number; queriesIssued: number; failedSamples: number; incompleteSamples: number; passed: boolean }[];
  peakQps: number;
  overhead?: { issueLatenessNs: OverheadStatsNs; deliveryLagNs: OverheadStatsNs | null };
}

/** A uint64 from the native side: a number when it is a safe integer, else a bigint. */
export type NativeU64 = number | bigint;

/** A sample's response data as the completion calls take it (undefined: none). */
export type ResponseData = ArrayBufferView | ArrayBuffer | undefined;

/**
 * Reference TestSettings with the reference's snake_case names, as the native
 * side reads them: scenario/mode as their integer enum values (0..3), seeds as
 * bigint (or safe integers), every field present. Built by toNativeSettings()
 * or, for reference vectors, from their `settings` objects.
 */
export type NativeTestSettings = Record<string, number | boolean | bigint | string>;

/** Input of {@link NativeConfig.load}: each config as text or path (not both). */
export interface NativeConfigLoadInput {
  /** Replaces the built-in mlperf.conf (text or a file path); absent = the built-in copy. */
  mlperfConfText?: string;
  mlperfConfPath?: string;
  /** How provenance names the mlperf.conf (default: the path, or "mlperf.conf (built-in)"). */
  mlperfConfLabel?: string;
  /** Without a user.conf: apply mlperf.conf alone (conf_type 0)? Default true. */
  withMlperfConf?: boolean;
  /** user.conf: FromConfig(conf_type 1), which applies mlperf.conf first. A path that cannot be opened gives -2. */
  userConfText?: string;
  userConfPath?: string;
  userConfLabel?: string;
  /** audit.config, applied last as StartTest does (model "*", the settings' scenario, conf_type 2). */
  auditConfText?: string;
  auditConfPath?: string;
  auditConfLabel?: string;
  model: string;
  /** Scenario name used for the lookups (the reference's `scenario` argument). */
  scenario: string;
  /** The settings before the configs (as toNativeSettings gives them). */
  base: NativeTestSettings;
}

/** One field set by a config line (last record of a field wins). */
export interface NativeConfigProvenance {
  /** Reference TestSettings field name, e.g. server_target_latency_ns. */
  field: string;
  /** The full key that matched, e.g. resnet50.Server.target_latency. */
  key: string;
  /** File path or label. */
  file: string;
  /** 1-based line. */
  line: number;
  /** The raw value token. */
  value: string;
  /** 0 mlperf.conf, 1 user.conf, 2 audit.config. */
  confType: number;
}

export interface NativeConfigLoadResult {
  /** TestSettings afterwards under the reference names (enums as names, seeds bigint, other uint64 number or bigint). */
  settings: Record<string, number | bigint | boolean | string>;
  /** FromConfig return codes of the calls made (0, -2, -22). */
  returnCodes: { mlperf?: number; user?: number; audit?: number };
  /** False when an audit path was given but could not be opened (nothing applied, no warning). */
  auditFound: boolean;
  /** What the reference would log (errors, the audit warning), in order. */
  messages: NativeMessage[];
  provenance: NativeConfigProvenance[];
}

/** The core's config-file loader (bindings/config_binding.cc). */
export interface NativeConfig {
  /** One fresh loader per call: as in a fresh process. */
  load(input: NativeConfigLoadInput): NativeConfigLoadResult;
}

/**
 * Flat run configuration read by bindings/convert.cc (`pre_run_messages`:
 * messages logged right after the detail-log header, e.g. the audit.config warning).
 */
export type NativeRunConfig = Record<string, number | boolean | bigint | string | NativeMessage[]>;

/**
 * Live state of the active run (bindings/progress.cc): counters and a running
 * latency histogram of the current series, never its records.
 */
export interface NativeProgress {
  /** 'starting' (series generated, not issuing yet), 'issuing', or 'draining' (issuing ended). */
  phase: 'starting' | 'issuing' | 'draining';
  seriesKind: 'accuracy' | 'performance';
  scenario: string;
  /** 0-based index of the current series; seriesCount: series started so far. */
  seriesIndex: number;
  seriesCount: number;
  /** Since the current series started issuing. */
  elapsedNs: number;
  /** Expected issuing time (minimum duration; Server: last scheduled query); 0 when unknown (accuracy). */
  targetDurationNs: number;
  generatedQueries: number;
  samplesPerQuery: number;
  issuedQueries: number;
  issuedSamples: number;
  completedSamples: number;
  /** Issued samples not completed yet. */
  outstanding: number;
  /** Sample latencies in the histogram so far, and its running percentiles (within 0.8 %). */
  latencyCount: number;
  p50Ns: number;
  p99Ns: number;
  maxNs: number;
}

/** new NativeHttpSut(options): checked by the binding (TypeError naming the field). */
export interface NativeHttpSutOptions {
  nodes: readonly { host: string; port: number; label: string }[];
  connectionsPerNode?: number;
  leastOutstanding?: boolean;
  connectTimeoutMs?: number;
  /** 0: none. */
  requestTimeoutMs?: number;
  nodeBackoffMs?: number;
  /** A response body beyond this fails as malformed_response as its bytes pass it (default 64 MiB). */
  maxBodyBytes?: number;
  reactorCpu?: number;
  /** The reactor's poll budget limit after each request, µs (native/http_client.h response_poll_ns; 0: never poll). */
  responsePollUs?: number;
  /** Server series: the issue thread reads the responses while it waits (native/http_client.h inline_reactor; default true). */
  inlineReactor?: boolean;
  /** Clients, each with its reactor thread and its share of the connections (native/http_sut.h; 1 to 64, at most connectionsPerNode). */
  clientThreads?: number;
  /** Every body goes to onResponses, not only the accuracy-logged samples'. */
  hostReadsEveryBody?: boolean;
  /**
   * Failed requests go to onResponses too (failure kind and message in their
   * record), and JS fails their samples with the native stamp: a per-request
   * log sees every request. Whole responses only (onStream gets every outcome).
   */
  hostReadsEveryOutcome?: boolean;
  /**
   * The secrets (lib/net/secrets.ts Secrets.list()) no failure message the
   * client writes may carry any run of 8 or more characters of (shorter
   * ones: whole); replaced by '<redacted>'. setSecrets() replaces them.
   */
  secrets?: readonly string[];
  /**
   * Lowercase names (at most 8) of response headers whose values a 2xx
   * response hands over (each value at most 256 bytes, all at most 1 KiB:
   * beyond, the response is malformed_response).
   */
  responseHeaders?: readonly string[];
  /**
   * Responses whose bodies JS reads, stamped already (their last byte's
   * clockNs()), one call per batch: response i is meta[10i..10i+9] = id, QSL
   * index, stamp, node, offset and length of its body in `data` (a failure's
   * message), offset and length of its headers in `data` (the listed ones it
   * carried: per value one entry [index in responseHeaders: 1 byte][length:
   * 2 bytes, little-endian][the value's bytes]), when the request was sent
   * (clockNs(); 0: never), failure kind (-1: none; else the index in
   * tables.failureKinds: only with hostReadsEveryOutcome).
   */
  onResponses?: (meta: Float64Array, data: Uint8Array, count: number) => void;
  /**
   * Streamed responses (token streams): every 2xx body reaches onStream as it
   * is read, and the client completes nothing itself (required then, instead
   * of onResponses).
   */
  streamBodies?: boolean;
  /**
   * Stream events, one call per batch: event i is meta[9i..9i+8] = id, stamp
   * (clockNs() of the read that brought the bytes / of the end or failure),
   * offset and length in `data` (the body bytes; a failure's message; the
   * headers' entries, as onResponses'), event (0 bytes, 1 end, 2 failed,
   * 3 headers: once per 2xx response before its bytes, when responseHeaders
   * lists any), QSL index, node, failure kind (index in tables.failureKinds),
   * and for an end or failure when its request was sent (clockNs(); 0: never).
   */
  onStream?: (meta: Float64Array, data: Uint8Array, count: number) => void;
}

/** One client thread's counts (native/http_client.h HttpReactorCounts). */
export interface NativeReactorCounts {
  polledEvents: number;
  /** Connection events (mostly responses) the issue thread read while it waited (inline issuing). */
  inlineEvents: number;
  blockingWaits: number;
  sendWakes: number;
  pollBudgetNs: number;
  /** Requests the issue thread handed to this client thread to write (several client threads: each writes its own). */
  handedWrites: number;
  openedConnections: number;
  refusedConnections: number;
  retriedRequests: number;
  /** Outcomes handed over (completed or failed requests), whichever thread read them. */
  responses: number;
  /** CPU time of the reactor thread (not of the issue thread's inline reading), to ~1 ms. */
  reactorCpuNs: number;
}

/**
 * The native HTTP client of a network SUT (native/http_client.h): the issue
 * thread sends each request, a reactor thread reads and completes it.
 */
export interface NativeHttpSut {
  /** Request of QSL index `index`: `line`, the node's Host line, then `rest`. Only while nothing is outstanding. */
  setRequest(index: number, line: Uint8Array, rest: Uint8Array): void;
  /** Many at once: request indices[i] is data[layout[4i], +layout[4i+1]) then data[layout[4i+2], +layout[4i+3]). */
  setRequests(indices: Uint32Array, data: Uint8Array, layout: Uint32Array): void;
  clearRequests(): void;
  /** Replaces the secrets (as the `secrets` option) once more became known. */
  setSecrets(secrets: readonly string[]): void;
  /** Opens one connection per node (more open as requests wait for one): '' or why not (naming the node). */
  start(): Promise<string>;
  cancelAll(message: string): void;
  /** Between series: what the last one left outstanding fails as cancelled, completing no sample; later requests go out. */
  cancelOutstanding(message: string): void;
  outstanding(): number;
  /** tables.nodeStatsLength values per node, node after node. */
  nodeStats(): Float64Array;
  /**
   * How the reactor threads waited, and their connections, since start
   * (native/http_client.h HttpReactorCounts): summed over the client
   * threads, and each one's in `threads`.
   */
  reactorCounts(): NativeReactorCounts & { threads: NativeReactorCounts[] };
  close(): void;
}

export interface NativeAddon {
  /** The core's config-key table and run-setting limits (bindings/tables.cc; lib/native/tables.ts). */
  readonly tables: NativeTables;
  /**
   * Hands lib/errors.ts's classes to this environment's addon (the loader
   * does, once): the addon throws them with their codes.
   */
  setErrorClasses(classes: NativeErrorClasses): void;
  /**
   * The one busy check: takes the process's one run slot for this
   * environment, or throws BusyError (a run, or a reservation, in this or
   * another thread). startTest reserves before anything else and releases
   * when it settles; the slot outlives finish() until then.
   */
  reserveRun(): void;
  /** Gives the slot back; false when this environment does not hold it or its run has not finished. */
  releaseRun(): boolean;
  /**
   * Starts the run in the slot reserveRun() took (without one, start takes it
   * itself: releaseRun() still gives it back). BusyError when a run started
   * here is still active or another environment holds the slot.
   */
  start(config: NativeRunConfig, dispatcher: Dispatcher, nativeSut?: NativeHttpSut): void;
  /** The native HTTP/1.1 client as a SUT inside the core (lib/net/native-transport.ts). */
  readonly NativeHttpSut: new (options: NativeHttpSutOptions) => NativeHttpSut;
  /** Whether this platform has it (Linux: epoll). */
  readonly nativeHttpAvailable: boolean;
  /** The process's open-file limit (RLIMIT_NOFILE, soft); -1 when unlimited or unknown. */
  openFileLimit(): number;
  /** NotRunningError outside a series. */
  seriesInfo(): NativeSeriesInfo;
  /** Queries first, first + stride, ... below end (default first + 1) reached the SUT now. */
  markDispatched(first: number, end?: number, stride?: number): void;
  /**
   * Copies the QSL indices of samples [first, first + count) of the series
   * whose first id is `firstId` into dest[0, count); false when that series
   * is no longer the current one (or the range is not within it).
   */
  copySampleIndices(firstId: number, first: number, count: number, dest: Uint32Array): boolean;
  /**
   * The completion calls return the new published-query count when the call
   * issued the next SingleStream/MultiStream query itself (hand-over, only in
   * the thread that started the run): drain it (lib/dispatch/handover.ts). Else undefined.
   *
   * The same call writes each accuracy-logged sample's response to the
   * accuracy log: `data` (completeOne: the sample's, or the number of bytes
   * copied into responseStaging(); the batch calls: an Array, ids[i]'s at i,
   * at least `count` long), absent or undefined: empty. A value that is not
   * bytes writes no record: check them first.
   */
  completeOne(id: number, data?: ArrayBufferView | ArrayBuffer | number): number | undefined;
  completeBatch(ids: Float64Array | Uint32Array, count?: number, stampNs?: number, data?: readonly ResponseData[]): number | undefined;
  /** Token latencies: completions with each sample's token count (nTokens[i] for ids[i]). */
  completeWithTokens(
    ids: Float64Array | Uint32Array, nTokens: Float64Array, count?: number, stampNs?: number, data?: readonly ResponseData[],
  ): number | undefined;
  /**
   * This environment's staging buffer for one response's bytes (the same
   * Uint8Array every call): completeOne(id, n) logs its first n bytes.
   */
  responseStaging(): Uint8Array;
  /** Token latencies: the first token of sample `id` at `stampNs` (a clockNs() reading; absent: on entry). */
  firstTokenComplete(id: number, data?: ArrayBufferView | ArrayBuffer, stampNs?: number): void;
  /**
   * Sample `id` failed: `kind` indexes tables.failureKinds. Completes it (at
   * `stampNs`, else on entry) like a completion, counted by kind. Returns as
   * the completion calls do (hand-over).
   */
  failSample(id: number, kind: number, message: string, stampNs?: number): number | undefined;
  acknowledge(token: number, error?: string): boolean;
  abort(reason: string): void;
  /**
   * Stops the active run on request (not a failure): issuing ends at once,
   * issued queries are waited for, the remaining phases are skipped, the logs
   * are written and the result is INVALID with `reason`. The first reason
   * wins; nothing happens without an active run.
   */
  interrupt(reason: string): void;
  /** NotRunningError when no run was started in this environment. */
  finish(): NativeOutcome;
  /** A run started in this environment is active (start() to finish()). */
  isRunning(): boolean;
  /** Live progress of the process's active run; null when none is running. Cheap: safe to poll. */
  progress(): NativeProgress | null;
  clockNs(): number;
  /**
   * The current series' start (its clockNs() reading: the origin of its
   * figures) and kind, when its first sample id is `firstId` and it has begun
   * issuing; null otherwise.
   */
  seriesStart(firstId: number): { startNs: number; performance: boolean } | null;
  /**
   * Registers this thread as an issue-query thread (spec/30 §6). Events:
   * (0, published, firstId) drain; (1, published, firstId, index, stride)
   * series started; (2) released.
   */
  registerIssueThread(dispatcher: IssueThreadDispatcher, threadId: number): { index: number; serial: number };
  unregisterIssueThread(serial: number): boolean;
  /** Queries of the current series issued so far (any thread; 0 without a run). */
  publishedQueries(): number;
  /**
   * dispatch 'poll': publishedQueries(), but waits in native code first (at
   * most ~100 us) when nothing beyond `seen` is published: spinning for a
   * Server query due within 50 us, which it issues itself at its due time
   * if the issue thread has not.
   */
  pollPublished(seen: number): number;
  /** dispatch 'worker': registers this thread as a dispatch worker; its dispatcher only hears (2) released. */
  registerDispatchWorker(dispatcher: IssueThreadDispatcher, threadId: number): { index: number; serial: number };
  /**
   * dispatch 'worker': claims the next work of the active run, blocking this
   * thread up to ~20 ms (200 µs while samples are outstanding). Returns
   * {@link DispatchStatus}; Claimed: out = [firstId, firstSample, samples];
   * SeriesEnded: out[0] = the series' firstId (pass it as flushedFirstId next).
   */
  dispatchNext(out: Float64Array, flushedFirstId: number): number;
  /** Aborts the active run from any thread, keeping `serialized` (v8.serialize of the error) for takeWorkerError(). */
  abortWithError(reason: string, serialized?: Uint8Array): boolean;
  /** The serialized error a worker left with abortWithError (cleared by the call). */
  takeWorkerError(): Uint8Array | undefined;
  readonly napiVersion: number;
  readonly config: NativeConfig;
  /** What this build of the addon can do here (bindings/platform_info.cc; `loadgen doctor`). */
  platformInfo(): NativePlatformInfo;
  /**
   * Moves the threads that existed when the addon was first loaded (the V8
   * platform's GC and compiler workers; never the main thread, never libuv's
   * thread pool, which a probe finds first) to SCHED_IDLE, once per process:
   * how many are idle (-1 where the OS has no such policy) and, when none
   * were moved, why (bindings/runtime_threads.cc). Irreversible for the process.
   */
  idleRuntimeThreads(): Promise<{ idle: number; note: string }>;
  /**
   * Lowers the calling JS thread to nice `nice` (1..19) and gives the core's
   * threads (issue threads, HTTP reactors: started from then on by a thread
   * that kept the process's priority) and the process's other normal-policy
   * threads the kernel's shortest slice, once per process (the first answer
   * stands): the nice value now, the slice (0: the kernel keeps its own) and
   * what was not done (native/core_threads.h). Irreversible for the thread.
   */
  yieldJsThread(nice: number): { nice: number; sliceNs: number; note: string };
}

/** The addon's build and its OS facilities (native/platform.h). */
export interface NativePlatformInfo {
  /** The OS and CPU it was compiled for: 'linux' | 'darwin' | 'win32' | 'other', 'x64' | 'arm64' | 'other'. */
  os: string;
  arch: string;
  /** e.g. 'gcc 12.2.0'. */
  compiler: string;
  /** How a waiting thread sleeps: 'futex' (Linux), 'WaitOnAddress' (Windows) or 'condition variable'. */
  waitKind: string;
  futex: boolean;
  /** Whether issueThreadCpu can pin the issue thread (Linux, Windows; not macOS). */
  canPin: boolean;
  knowsCurrentCpu: boolean;
  /** 1 ns timer slack (Linux) or a high-resolution timer (Windows); else plain sleeps. */
  preciseSleep: boolean;
  /** The CPU the calling thread runs on (-1 where unknown). */
  currentCpu: number;
  hardwareThreads: number;
  /** Linux: static libstdc++/libgcc and glibc >= 2.28 symbol versions (cmake/portable_link.cmake). */
  portableLink: boolean;
}
