/**
 * loadgen: the MLPerf Inference LoadGen for Node.js.
 */
export { DEFAULT_AUDIT_CONFIG, startTest, type StartTestOptions } from './run.js';
export {
  applyAuditConfig,
  CONFIG_FILE_KEYS,
  lintConfigText,
  loadSettings,
  type AuditConfigResult,
  type ConfigRole,
  type ConfigSource,
  type LoadedSettings,
  type LoadSettingsOptions,
  type SettingOrigin,
  type SettingSource,
  type SettingsLayer,
} from './config.js';
export { registerIssueQueryThread, type IssueQueryThreadRegistration } from './issue-threads.js';
export { runDispatchWorker, type DispatchWorkerContext } from './dispatch.js';
export { NULL_SUT_MODULE } from './null-sut-module.js';
export {
  firstTokenComplete,
  querySampleComplete,
  querySamplesComplete,
  querySamplesCompleteIds,
} from './completion.js';
export {
  createNullNativeSut,
  createNullSut,
  createSyntheticQsl,
  isNullNativeSut,
  NATIVE_NULL_SUT,
  type NullNativeSut,
} from './suts.js';
export {
  DEFAULT_LOG_SETTINGS,
  DISPATCH_MODES,
  type DispatchMode,
  DEFAULT_TEST_SETTINGS,
  LOG_SETTINGS_FIELDS,
  parseSettingAssignment,
  resolveLogSettings,
  resolveTestSettings,
  SCENARIOS,
  SETTINGS_FIELDS,
  settingsFromAssignments,
  TEST_MODES,
  type LogSettings,
  type LogSettingsInput,
  type ResolvedLogSettings,
  type ResolvedTestSettings,
  type Scenario,
  type TestMode,
  type TestSettings,
  type TestSettingsInput,
} from './settings.js';
export {
  BusyError,
  ConfigFileError,
  InterfaceError,
  LoadgenError,
  LogOutputError,
  NativeLoadError,
  NotRunningError,
  RunFailedError,
  SettingsError,
  SutError,
  type ConfigProblem,
} from './errors.js';
export type {
  LatencyPercentilesNs,
  OverheadStatsNs,
  QuerySample,
  QuerySampleLibrary,
  QuerySampleResponse,
  RunMessage,
  SystemUnderTest,
  TestResult,
  TokenLatencyStatsNs,
  TokenResult,
} from './types.js';
export { startProgress, type ProgressHandle, type ProgressOptions } from './progress.js';
export { reportDataFileName, writeReport, type ReportData, type WriteReportOptions } from './report.js';
export type { NativeProgress } from './native/index.js';
