/**
 * The native addon, from TypeScript: its loader (loader.ts), the one
 * declaration of its production surface (addon.ts) and, apart, of its
 * test-only surface (internals.ts: not public API).
 */
export { loadedAddonFile, loadNative, loadNativeInternals, packageRoot } from './loader.js';
export { nativeTables, runSettingLimit, type NativeTables } from './tables.js';
export {
  DispatchStatus,
  HostEventKind,
  IssueThreadEventKind,
  type Dispatcher,
  type IssueThreadDispatcher,
  type NativeAddon,
  type NativeConfig,
  type NativeConfigLoadInput,
  type NativeConfigLoadResult,
  type NativeConfigProvenance,
  type NativeEffectiveSettings,
  type NativeErrorClasses,
  type NativeMessage,
  type NativeOutcome,
  type NativePlatformInfo,
  type NativeProgress,
  type NativeRunConfig,
  type NativeHttpSut,
  type NativeHttpSutOptions,
  type NativeSeriesInfo,
  type NativeSummary,
  type NativeTestSettings,
  type NativeTokenSummary,
  type NativeU64,
} from './addon.js';
export type {
  CpuNoise,
  NativeAccuracyLogRound,
  NativeBench,
  NativeConfigCase,
  NativeConfigResult,
  NativeConformance,
  NativeEarlyStoppingEstimate,
  NativeEffectiveRecord,
  NativeInternals,
  NativeLogEntry,
  NativeResults,
  NativeResultsInput,
  NativeRules,
  NativeServerEarlyStopping,
  NativeTrace,
  NativeTraceLoadCall,
  NativeTracePhase,
  NativeTraceQueries,
} from './internals.js';
