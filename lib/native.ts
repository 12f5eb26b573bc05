/**
 * The one declaration of the native addon's surface, and its loader.
 * Prebuilt binaries in prebuilds/<platform>-<arch>/ are tried first, then a
 * local build in build/Release (node-gyp-build's order).
 */
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { NativeLoadError } from './errors.js';

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

export interface NativeSeriesInfo {
  firstId: number;
  samplesPerQuery: number;
  queryCount: number;
  /** QSL index of every sample of the series, query by query (a copy). */
  sampleIndex: Uint32Array;
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
  performanceIssueUnique: boolean;
  performanceIssueSame: boolean;
  performanceIssueSameIndex: number;
  performanceSampleCount: number;
  accuracySampleCount: number;
  sampleConcatenatePermutation: boolean;
}

export interface NativeOutcome {
  hasSummary: boolean;
  testDatetime: string;
  summaryPath: string;
  summaryText: string;
  effective: NativeEffectiveSettings;
  aborted: boolean;
  abortReason: string;
  errorCount: number;
  warningCount: number;
  messages: NativeMessage[];
  extraInvalidReasons: string[];
  counts: {
    generatedQueries: number;
    generatedSamples: number;
    issuedQueries: number;
    issuedSamples: number;
    completedSamples: number;
    incompleteSamples: number;
  };
  completionErrors: {
    invalidIds: number;
    unissuedIds: number;
    duplicateIds: number;
    firstInvalidId: number;
    firstDuplicateId: number;
  };
  summary?: NativeSummary;
}

/** Flat run configuration read by bindings/convert.cc. */
export type NativeRunConfig = Record<string, number | boolean | bigint | string>;

export interface NativeAddon {
  start(config: NativeRunConfig, dispatcher: Dispatcher): void;
  seriesInfo(): NativeSeriesInfo;
  markDispatched(query: number): void;
  completeOne(id: number): void;
  completeBatch(ids: Float64Array | Uint32Array, count?: number): void;
  acknowledge(token: number, error?: string): boolean;
  abort(reason: string): void;
  finish(): NativeOutcome;
  isRunning(): boolean;
  completionsOutsideRun(): number;
  clockNs(): number;
  readonly napiVersion: number;
}

/** The package root (one level above lib/ or dist/). */
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

let addon: NativeAddon | undefined;

/** Loads the addon once per environment; throws NativeLoadError with what to do. */
export function loadNative(): NativeAddon {
  if (addon) return addon;
  const require = createRequire(import.meta.url);
  try {
    const load = require('node-gyp-build') as (dir: string) => unknown;
    addon = load(packageRoot) as NativeAddon;
  } catch (cause) {
    throw new NativeLoadError(describeLoadFailure(cause), cause);
  }
  return addon;
}

function libcName(): string {
  if (process.platform !== 'linux') return 'n/a';
  const report = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const glibc = report?.header?.glibcVersionRuntime;
  return glibc ? `glibc ${glibc}` : 'musl (or unknown)';
}

function describeLoadFailure(cause: unknown): string {
  const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  return [
    `loadgen: could not load the native addon for ${process.platform}-${process.arch} ` +
      `(libc: ${libcName()}, Node ${process.versions.node}, N-API ${process.versions.napi}).`,
    `Tried: ${resolve(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`)} and ${resolve(packageRoot, 'build', 'Release')}.`,
    `Reason: ${why}`,
    'To build it from source you need CMake >= 3.15 and a C++17 compiler; then run `npm rebuild loadgen`',
    '(in a clone of the repository: `npm run build:native`).',
  ].join('\n');
}
