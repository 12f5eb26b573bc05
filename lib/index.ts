/**
 * loadgen: the MLPerf Inference LoadGen for Node.js.
 */
export { startTest } from './run.js';
export { querySampleComplete, querySamplesComplete, querySamplesCompleteIds } from './completion.js';
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
  InterfaceError,
  LoadgenError,
  LogOutputError,
  NativeLoadError,
  NotRunningError,
  SettingsError,
  SutError,
} from './errors.js';
export type {
  LatencyPercentilesNs,
  QuerySample,
  QuerySampleLibrary,
  QuerySampleResponse,
  RunMessage,
  SystemUnderTest,
  TestResult,
} from './types.js';
