/**
 * The native outcome of a run turned into the public, plain-data TestResult.
 */
import type { NativeOutcome, NativeTokenSummary } from '../native/index.js';
import { FAILURE_KINDS, type FailureKind } from '../types/failure-kinds.js';
import type { ResolvedTestSettings, TestMode } from '../types/settings.js';
import type { LatencyPercentilesNs, TestResult, TokenResult } from '../types/api.js';

function percentiles(values: Record<string, number> | undefined): LatencyPercentilesNs {
  const v = values ?? {};
  return { 50: v['50'] ?? 0, 90: v['90'] ?? 0, 95: v['95'] ?? 0, 97: v['97'] ?? 0, 99: v['99'] ?? 0, 99.9: v['99.9'] ?? 0 };
}

/**
 * An INVALID reason as a sentence (as the core writes them in the summary
 * and detail log): trailing blanks dropped, a period added unless it ends in
 * '.', '!' or '?', so reasons joined by a space never run together.
 */
export function asSentence(reason: string): string {
  const text = reason.trimEnd();
  return text === '' || /[.!?]$/.test(text) ? text : `${text}.`;
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
      if (scenario === 'Server') {
        const issued = t.goodputIssuedSamples;
        result.goodput = { withinLimits: t.goodputSamples, issuedSamples: issued, share: issued > 0 ? t.goodputSamples / issued : 0 };
      }
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

function failedSamples(failed: NativeOutcome['failedSamples']): TestResult['errors']['failedSamples'] {
  const byKind = {} as Record<FailureKind, number>;
  for (const kind of FAILURE_KINDS) byKind[kind] = failed.byKind[kind] ?? 0;
  return { total: failed.total, byKind };
}

/** The completion calls' errors, as the detail log's error lines count them. */
const COMPLETION_ERRORS: [keyof NativeOutcome['completionErrors'], string][] = [
  ['duplicateIds', 'samples completed twice'],
  ['invalidIds', 'ids not of the series'],
  ['staleIds', 'late ids of an earlier series'],
  ['unissuedIds', 'ids not issued yet'],
  ['duplicateFirstTokens', 'first tokens given twice'],
  ['firstTokenAfterCompletion', 'first tokens after the completion'],
  ['zeroTokens', 'completions with no token count or 0'],
  ['negativeTokens', 'negative token counts'],
  ['oneToken', 'token counts of 1'],
];

/** An accuracy run's errors in the detail log: the first message, or the completion calls' errors by kind. */
function loggedErrorsReason(outcome: NativeOutcome): string {
  const n = outcome.errorCount;
  const first = outcome.messages.find((m) => m.isError);
  const kinds = COMPLETION_ERRORS.filter(([key]) => outcome.completionErrors[key] > 0).map(([key, text]) => `${text}: ${outcome.completionErrors[key]}`);
  const which = first !== undefined ? `; the first: ${first.text}` : kinds.length > 0 ? ` (${kinds.join(', ')})` : '';
  return `${n} error${n === 1 ? ' was' : 's were'} logged in mlperf_log_detail.txt${which}; MLCommons' checker fails an accuracy run with any`;
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
  // issued sample completed, nothing failed and no error was logged (MLCommons'
  // checker fails an accuracy log folder whose detail log holds any error).
  const accuracyOnly = mode === 'AccuracyOnly';
  const valid = accuracyOnly
    ? !outcome.aborted && outcome.extraInvalidReasons.length === 0 && outcome.counts.issuedSamples > 0 && outcome.errorCount === 0
    : s !== undefined && s.resultValid;
  const invalidReasons: string[] = [];
  if (accuracyOnly) {
    invalidReasons.push(...outcome.extraInvalidReasons);
    if (outcome.errorCount > 0 && invalidReasons.length === 0) invalidReasons.push(loggedErrorsReason(outcome));
    if (!valid && invalidReasons.length === 0) invalidReasons.push('No samples were issued.');
  } else if (s === undefined && outcome.interrupted) {
    invalidReasons.push(...outcome.extraInvalidReasons);  // the interrupt's reason first
  } else if (s === undefined) {
    invalidReasons.push(outcome.aborted ? `The run was aborted: ${outcome.abortReason}` : 'The run produced no results.');
  } else if (!valid) {
    if (!s.perfConstraintsMet) invalidReasons.push(s.perfConstraintsRecommendation);
    if (!s.minDurationMet) invalidReasons.push(s.minDurationRecommendation);
    if (!s.minQueriesMet) invalidReasons.push('The test exited early, before enough queries were issued.');
    if (!s.earlyStoppingMet) invalidReasons.push(`Early stopping not satisfied:\n${earlyStoppingText(s.earlyStoppingMessage, s.tokens)}`);
    invalidReasons.push(...outcome.extraInvalidReasons);
  }
  for (let i = 0; i < invalidReasons.length; i++) invalidReasons[i] = asSentence(invalidReasons[i]!);
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
    ...(outcome.interrupted ? { interrupted: outcome.interruptReason } : {}),
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
      staleIds: outcome.completionErrors.staleIds,
      duplicateIds: outcome.completionErrors.duplicateIds,
      failedSamples: failedSamples(outcome.failedSamples),
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

