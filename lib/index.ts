/**
 * loadgen: the MLPerf Inference LoadGen for Node.js.
 */
export { startTest, type RunAbortSignal, type StartTestOptions } from './api/start-test.js';
export { applyAuditConfig, DEFAULT_AUDIT_CONFIG } from './config/audit-config.js';
export { CONFIG_FILE_KEYS } from './config/keys.js';
export { lintConfigText } from './config/lint.js';
export { loadSettings } from './config/load-settings.js';
export {
  type AuditConfigResult,
  type ConfigRole,
  type ConfigSource,
  type LoadedSettings,
  type LoadSettingsOptions,
  type SettingOrigin,
  type SettingSource,
  type SettingsLayer,
} from './config/types.js';
export { registerIssueQueryThread, type IssueQueryThreadRegistration } from './api/issue-threads.js';
export { runDispatchWorker, type DispatchWorkerContext } from './dispatch/dispatch.js';
export { NULL_SUT_MODULE } from './suts/null-sut-module.js';
export {
  clockNs,
  firstTokenComplete,
  querySampleComplete,
  querySampleFailed,
  querySamplesComplete,
  querySamplesCompleteIds,
} from './api/completion.js';
export {
  createNullNativeSut,
  createNullSut,
  createSyntheticQsl,
  isNullNativeSut,
  NATIVE_NULL_SUT,
  type NullNativeSut,
  type NullSut,
  type NullSutPath,
} from './suts/suts.js';
export { parseSettingAssignment, settingsFromAssignments } from './settings/assignments.js';
export { DEFAULT_LOG_SETTINGS, DEFAULT_TEST_SETTINGS, LOG_SETTINGS_FIELDS, SETTINGS_FIELDS } from './settings/fields.js';
export { resolveLogSettings } from './settings/log-settings.js';
export { resolveTestSettings } from './settings/resolve.js';
export {
  DISPATCH_MODES,
  type DispatchMode,
  SCENARIOS,
  TEST_MODES,
  type LogSettings,
  type LogSettingsInput,
  type ResolvedLogSettings,
  type ResolvedTestSettings,
  type Scenario,
  type TestMode,
  type TestSettings,
  type TestSettingsInput,
} from './types/settings.js';
export {
  BusyError,
  ConfigFileError,
  DatasetError,
  InterfaceError,
  LoadgenError,
  LogOutputError,
  NativeLoadError,
  NetworkSetupError,
  NotRunningError,
  RunFailedError,
  SettingsError,
  SutError,
  TokenizerError,
  type ConfigProblem,
  type TokenizerProblem,
} from './errors.js';
export type {
  Goodput,
  LatencyPercentilesNs,
  OverheadStatsNs,
  QuerySample,
  QuerySampleLibrary,
  QuerySampleResponse,
  RunMessage,
  SutDistribution,
  SutReport,
  SystemUnderTest,
  TestResult,
  TokenLatencyStatsNs,
  TokenLimits,
  TokenResult,
} from './types/api.js';
export {
  LLM_LATENCY_LIMITS,
  limitsFor,
  type LlmLatencyLimits,
  type LlmLimitScenario,
} from './config/llm-latency-limits.js';
export { startProgress, type ProgressHandle, type ProgressOptions, type ProgressStream } from './report/progress.js';
export { currentProgress } from './api/progress.js';
export { FAILURE_KINDS, type FailureKind } from './net/protocol.js';
export { reportDataFileName, writeReport, type ReportData, type WriteReportOptions } from './report/report.js';
export { inferredResults, RULES_MULTISTREAM_SAMPLES, type InferredFigure, type InferredResults } from './power/inferred.js';
export { energyOverWindow, parsePowerTimestamp, powerProblems, RULES_MIN_POWER_SAMPLES, type PowerReading, type WindowEnergy } from './power/energy.js';
export { powerResult, powerWindowOf, type PowerResult, type PowerRun } from './power/run-extras.js';
export { POWER_SOURCES, type PowerOptions, type PowerSourceName } from './power/sources.js';
export type { NativePlatformInfo, NativeProgress } from './native/index.js';
export { doctorReport, formatDoctorReport, type BinaryKind, type DoctorReport } from './platform/doctor.js';
export { createNetworkSut, DEFAULT_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT_MS } from './net/transport.js';
export { TRANSPORTS, type TransportChoice } from './net/native-transport.js';
export { createHttpProtocol, createHttpSut } from './net/http-map.js';
export { ACCURACY_DATA, createOpenAiProtocol, createOpenAiSut, OPENAI_APIS, type OpenAiApi } from './net/openai.js';
export { STUB_TEXT_ID_BASE, stubIdTokens, stubOutputIds, stubTextIds } from './serve/stub-ids.js';
export {
  openAiStubOutput,
  openAiStubTokens,
  startOpenAiStub,
  OPENAI_STUB_MODEL,
  STUB_LOGPROB_FORMS,
  type StubLogprobForm,
  type StubOutput,
  type StubPrompt,
  type StubTokenizer,
  type OpenAiStub,
  type OpenAiStubFault,
  type OpenAiStubOptions,
  type OpenAiStubRecord,
} from './serve/openai-stub.js';
export type { RunningServer, ServeAddress } from './serve/server.js';
export {
  BALANCE_POLICIES,
  type BalancePolicy,
  type HttpSutOptions,
  type NetworkNodeStats,
  type NetworkStats,
  type NetworkSut,
  type OpenAiSutOptions,
  type TransportOptions,
} from './net/types.js';
export type { NetworkProtocol, NodeProbe, PreparedRequest, ResponseOutcome, ResponseReader } from './net/protocol.js';
export { createKServeProtocol, createKServeSut } from './net/kserve.js';
export { readDataset, pickleConversionCommand, MAX_DATASET_SAMPLES } from './datasets/read.js';
export {
  DATASET_FORMATS,
  DEFAULT_PROMPT_ID_FIELD,
  DEFAULT_PROMPT_TEXT_FIELDS,
  DEFAULT_TARGET_FIELD,
  MAX_TOKEN_ID,
  type Dataset,
  type DatasetFormat,
  type DatasetOptions,
  type DatasetSample,
  type GenerationParams,
} from './datasets/types.js';
export {
  ACCURACY_DTYPES,
  ACCURACY_DTYPE_BY_BENCHMARK,
  DEFAULT_ACCURACY_DTYPE,
  accuracyDtypeFor,
  decodeTokenIds,
  encodeTokenIds,
  type AccuracyDtype,
} from './datasets/accuracy-ids.js';
export type { KServeSutOptions } from './net/types.js';
export { startKServeServer, type KServeServerOptions } from './serve/kserve-server.js';
export {
  DEFAULT_CONFIDENCE,
  MIN_RUN_DURATION_MS,
  earlyStopping,
  normsInv,
  planEarlyStopping,
  requiredQueries,
  runDuration,
  type EarlyStoppingOptions,
  type EarlyStoppingPlan,
  type EarlyStoppingPlanOptions,
  type EarlyStoppingReport,
  type RunDuration,
  type RunDurationOptions,
  type SampleSize,
  type SampleSizeOptions,
} from './rules/stats.js';
export { checkSettings, type CheckReport, type CheckSettingsOptions, type RuleOutcome, type TokenLimitsApplied } from './rules/check.js';
export { checkRunLog, type CheckRunLogOptions, type RunLogCheck } from './rules/check-logdir.js';
export { DIVISIONS, RUN_RULES, type Division, type RuleViolation, type RunKind, type RunRule } from './rules/closed-rules.js';
export { BENCHMARKS, type Benchmark } from './rules/benchmarks.js';
export type { FactValue, RunFacts } from './rules/facts.js';
export {
  scoreAccuracy,
  accuracyVerdicts,
  type AccuracyOptions,
  type AccuracyReport,
  type AccuracyTokenizer,
  type AccuracyVerdict,
} from './accuracy/score.js';
export { formatAccuracyReport, mlcommonsResultLine } from './accuracy/format.js';
export {
  ACCURACY_BENCHMARKS,
  ACCURACY_BENCHMARK_NAMES,
  accuracyBenchmark,
  type AccuracyBenchmark,
  type AccuracyTarget,
  type ScorerKind,
} from './accuracy/targets.js';
export { RougeScorer, rougeTokenize, MLPERF_ROUGE_TYPES, type RougeScore, type RougeScorerOptions, type RougeType } from './accuracy/rouge.js';
export { porterStem } from './accuracy/porter.js';
export { PunktSentenceTokenizer, type PunktParameters } from './accuracy/punkt.js';
export { builtinPunktParameters, findNltkPunkt, readPunktTab, sentenceSplitterParameters, type SentenceSplitterInfo } from './accuracy/punkt-params.js';
export { readAccuracyLog, detectLogData, type AccuracyLog, type AccuracyLogEntry, type LogDataKind } from './accuracy/log.js';
export { numpyMean, numpyRound, pythonRound } from './accuracy/numeric.js';
export { gsm8kAnswer, gsm8kCorrect, niahExactMatch, qaExactMatch, postprocessText } from './accuracy/metrics.js';
export {
  loadTokenizer,
  SUPPORTED_COMPONENT_TYPES,
  SUPPORTED_MODEL_TYPES,
  type DecodeOptions,
  type EncodeOptions,
  type LoadTokenizerOptions,
  type LogprobTokenCandidates,
  type LogprobTokenForm,
  type LogprobTokenOptions,
  type LogprobTokensResult,
  type Tokenizer,
} from './tokenizer/index.js';
