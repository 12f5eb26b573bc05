/**
 * Property tests of what a run prints over random outcomes (all failed, none
 * failed, zero duration, one sample, huge token counts, stale stamps,
 * samples completed without a first token): every number finite and within
 * its possible range, every detail-log line JSON, the INVALID reasons
 * separate sentences. Two routes through the real writers:
 * - the results math and its summary/detail text on random raw arrays (the
 *   conformance surface `summarize`, the code a run uses after its records);
 * - whole runs (startTest, a JS SUT that completes or fails each sample as
 *   a generated plan says), checking the summary, the detail log, the
 *   TestResult (what `--json` prints) and loadgen_report_data.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  clockNs,
  createSyntheticQsl,
  FAILURE_KINDS,
  firstTokenComplete,
  querySampleComplete,
  querySampleFailed,
  startTest,
  type FailureKind,
  type QuerySample,
  type SystemUnderTest,
  type TestResult,
  type TestSettingsInput,
} from '../lib/index.js';
import { loadNativeInternals, type NativeResultsInput } from '../lib/native/index.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { toNativeSettings } from '../lib/settings/to-native.js';
import { tempDir } from './helpers.js';
import { propertyParams } from './property-params.js';

const native = loadNativeInternals().conformance;
const SCENARIOS = ['SingleStream', 'MultiStream', 'Server', 'Offline'] as const;
type Scenario = (typeof SCENARIOS)[number];

// ---------------------------------------------------------------------------
// Checks shared by both routes
// ---------------------------------------------------------------------------

/**
 * Every line of a summary: no inf/nan anywhere, every "label : number" value
 * finite and >= 0, every percentile label in [0, 100].
 */
function checkSummaryText(text: string): void {
  for (const line of text.split('\n')) {
    expect(line, 'no inf/nan').not.toMatch(/(^|[^A-Za-z])-?(inf|nan)([^A-Za-z]|$)/i);
    const value = /:\s*(-?[0-9][0-9.e+-]*)\s*$/.exec(line)?.[1];
    if (value !== undefined) {
      const n = Number(value);
      expect(Number.isFinite(n), line).toBe(true);
      expect(n, line).toBeGreaterThanOrEqual(0);
    }
    for (const m of line.matchAll(/(\d+(?:\.\d+)?)(?:th)? percentile/g)) {
      const percent = Number(m[1]);
      expect(percent, line).toBeGreaterThanOrEqual(0);
      expect(percent, line).toBeLessThanOrEqual(100);
    }
  }
}

/** A reason text: sentences, never one run into the next ("issued.21 samples"). */
function checkReasonText(reason: string): void {
  expect(reason, 'sentences run together').not.toMatch(/[a-z)][.!?][A-Za-z0-9]/);
}

/** Every number inside `value` finite and >= 0 (bigints too), counts where named. */
function checkNumbers(value: unknown, path: string): void {
  if (typeof value === 'number') {
    expect(Number.isFinite(value), path).toBe(true);
    expect(value, path).toBeGreaterThanOrEqual(0);
  } else if (typeof value === 'bigint') {
    expect(value >= 0n, path).toBe(true);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkNumbers(v, `${path}[${i}]`));
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) checkNumbers(v, `${path}.${k}`);
  }
}

// ---------------------------------------------------------------------------
// Route 1: the results math and its text on random raw arrays
// ---------------------------------------------------------------------------

const duration = fc.oneof(fc.constant(0), fc.double({ min: 1e-9, max: 1e4, noNaN: true }));
// Huge: the largest count the conformance surface takes (runs take any number).
const tokenCount = fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: 3, max: 5000 }), fc.constant(Number.MAX_SAFE_INTEGER));

const rawCase = fc.record({
  scenario: fc.constantFrom(...SCENARIOS),
  tokens: fc.boolean(),
  infer: fc.boolean(),
  latencies: fc.array(fc.integer({ min: 0, max: 1e12 }), { maxLength: 300 }),
  // Queries issued beyond the ones with a latency (failed, never completed).
  unanswered: fc.nat({ max: 60 }),
  tokensPerSample: fc.array(tokenCount, { maxLength: 300 }),
  ttftShare: fc.double({ min: 0, max: 1, noNaN: true }),
  maxLatencyS: duration,
  scheduledS: duration,
  issuedS: duration,
  doneS: duration,
  percentile: fc.constantFrom(0.5, 0.9, 0.99, 0.999),
});

type RawCase = typeof rawCase extends fc.Arbitrary<infer T> ? T : never;

function settingsOf(c: { scenario: Scenario; tokens: boolean; infer: boolean; percentile: number }): TestSettingsInput {
  return {
    scenario: c.scenario,
    useTokenLatencies: c.tokens,
    inferTokenLatencies: c.infer,
    tokenLatencyScalingFactor: 10,
    minDurationMs: 1000,
    minQueryCount: 1,
    multiStreamSamplesPerQuery: 1,
    singleStreamTargetLatencyPercentile: c.percentile,
    multiStreamTargetLatencyPercentile: c.percentile,
    serverTargetLatencyPercentile: c.percentile,
  };
}

function summarizeRaw(c: RawCase) {
  const n = c.latencies.length;
  const offline = c.scenario === 'Offline';
  // What a series can produce: a TTFT no later than its sample's latency, a
  // TPOT only for samples with 2+ tokens (non-negative), one token count per sample.
  const ttft = c.tokens && !offline ? c.latencies.map((l) => Math.floor(l * c.ttftShare)) : [];
  const counts = c.latencies.map((_, i) => c.tokensPerSample[i % Math.max(1, c.tokensPerSample.length)] ?? 2);
  const tpot: number[] = [];
  if (c.tokens && !offline) {
    c.latencies.forEach((l, i) => {
      if (counts[i]! >= 2) tpot.push(Math.floor((l - ttft[i]!) / (counts[i]! - 1)));
    });
  }
  const input: NativeResultsInput = {
    sampleLatenciesNs: Float64Array.from(c.latencies),
    queriesIssued: offline ? (n === 0 && c.unanswered === 0 ? 0 : 1) : n + c.unanswered,
    maxLatencyS: c.maxLatencyS,
    finalQueryScheduledTimeS: c.scheduledS,
    finalQueryIssuedTimeS: c.issuedS,
    finalQueryAllSamplesDoneTimeS: c.doneS,
    ...(c.scenario === 'MultiStream' ? { queryLatenciesNs: Float64Array.from(c.latencies) } : {}),
    ...(c.tokens
      ? { tokensPerSample: Float64Array.from(counts), firstTokenLatenciesNs: Float64Array.from(ttft), timePerOutputTokenNs: Float64Array.from(tpot) }
      : {}),
  };
  const resolved = toNativeSettings(resolveTestSettings(settingsOf(c)));
  return { n, out: native.summarize(resolved, 1024, 1024, input, 'property-sut') };
}

describe('results of random raw outcomes', () => {
  it('every figure finite and in range, every detail value JSON, rates 0 with nothing to count', () => {
    fc.assert(
      fc.property(rawCase, (c) => {
        const { n, out } = summarizeRaw(c);
        const o = out.outputs as Record<string, unknown>;
        checkNumbers(o, 'outputs');
        checkSummaryText(out.summaryText);
        const maxLatency = n === 0 ? 0 : Math.max(...c.latencies);
        for (const key of ['sample_latency_min', 'sample_latency_max', 'sample_latency_mean']) {
          if (typeof o[key] === 'number') expect(o[key] as number, key).toBeLessThanOrEqual(maxLatency);
        }
        for (const entry of out.detail) {
          const value: unknown = JSON.parse(entry.valueText);
          if (entry.key.startsWith('result_')) checkNumbers(value, entry.key);
          if (entry.key === 'result_invalid_reason') checkReasonText(value as string);
        }
        // A rate never claims more than the run counted in the time it measured.
        const rate = (key: string) => (typeof o[key] === 'number' ? (o[key] as number) : 0);
        const intervals = Math.max(0, n - 1);
        const eps = 1 + 1e-9;
        if (c.scenario === 'Offline') expect(rate('samples_per_second') * c.maxLatencyS).toBeLessThanOrEqual(n * eps);
        if (c.scenario === 'Server') {
          expect(rate('completed_samples_per_sec') * c.doneS).toBeLessThanOrEqual(intervals * eps);
          expect(rate('scheduled_samples_per_sec') * c.scheduledS).toBeLessThanOrEqual(intervals * eps);
        }
        if (c.scenario === 'SingleStream') expect(rate('qps_with_loadgen_overhead') * c.issuedS).toBeLessThanOrEqual(intervals * eps);
        if (n === 0) {
          for (const [key, v] of Object.entries(o)) if (/per_sec|_qps_|tokens_per|throughput/.test(key) && typeof v === 'number') expect(v, key).toBe(0);
          if (c.scenario === 'Server') expect(o['perf_constraints_met']).toBe(false);
          if (c.scenario !== 'Offline') expect(o['early_stopping_met']).toBe(false);
        }
        if (c.scenario === 'Server' && n === 0) expect(out.summaryText).not.toContain('Performance constraints satisfied : Yes');
      }),
      propertyParams(300),
    );
  });
});

// ---------------------------------------------------------------------------
// Route 2: whole runs of a JS SUT following a plan
// ---------------------------------------------------------------------------

type Action =
  | { kind: 'complete' }
  | { kind: 'fail'; failure: FailureKind }
  /** Completed with no firstTokenComplete before it (token latencies). */
  | { kind: 'noFirstToken' }
  /** Stamps (first token and completion) from the first sample's clockNs reading: older than the query. */
  | { kind: 'oldStamp' };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constant<Action>({ kind: 'complete' }),
  fc.constantFrom(...FAILURE_KINDS).map((failure): Action => ({ kind: 'fail', failure })),
  fc.constant<Action>({ kind: 'noFirstToken' }),
  fc.constant<Action>({ kind: 'oldStamp' }),
);

const runCase = fc.record({
  scenario: fc.constantFrom(...SCENARIOS),
  tokens: fc.boolean(),
  // One action per sample, in turn; a single 'fail' fails every sample.
  plan: fc.array(fc.record({ action, nTokens: tokenCount }), { minLength: 1, maxLength: 6 }),
  queries: fc.integer({ min: 1, max: 40 }),
  later: fc.boolean(),
});

type RunCase = typeof runCase extends fc.Arbitrary<infer T> ? T : never;

/** A SUT doing what the plan says to each sample it receives, counting what it reported. */
function planSut(c: RunCase): SystemUnderTest & { failed: number; failedNoFirstToken: number; withoutFirstToken: number; nTokensReported: number } {
  let i = 0;
  let oldStamp: number | undefined;
  const sut = {
    name: 'plan-sut',
    failed: 0,
    failedNoFirstToken: 0,
    withoutFirstToken: 0,
    nTokensReported: 0,
    issueQuery(samples: QuerySample[]) {
      const answer = (s: QuerySample) => {
        const step = c.plan[i++ % c.plan.length]!;
        oldStamp ??= clockNs();
        const a = step.action;
        if (a.kind === 'fail') {
          sut.failed++;
          if (a.failure === 'no_first_token') sut.failedNoFirstToken++;
          querySampleFailed(s.id, a.failure, `plan: ${a.failure}`);
          return;
        }
        sut.nTokensReported += step.nTokens;
        if (a.kind === 'noFirstToken') sut.withoutFirstToken++;
        if (a.kind === 'complete') firstTokenComplete(s.id);
        if (a.kind === 'oldStamp') firstTokenComplete(s.id, undefined, oldStamp);
        querySampleComplete(s.id, undefined, step.nTokens, a.kind === 'oldStamp' ? oldStamp : undefined);
      };
      if (c.later) setTimeout(() => samples.forEach(answer), 0);
      else samples.forEach(answer);
    },
  };
  return sut;
}

function runSettings(c: RunCase): TestSettingsInput {
  return {
    scenario: c.scenario,
    useTokenLatencies: c.tokens,
    minDurationMs: 0,
    minQueryCount: c.queries,
    singleStreamExpectedLatencyNs: 1000,
    multiStreamExpectedLatencyNs: 1000,
    multiStreamSamplesPerQuery: 2,
    serverTargetQps: 20000,
    offlineExpectedQps: 1000,
  };
}

function checkRun(c: RunCase, sut: ReturnType<typeof planSut>, r: TestResult, wallNs: number, outdir: string): void {
  // The TestResult (what --json prints): every figure finite and >= 0.
  const { effectiveSettings: _settings, files: _files, summaryText, messages: _m, ...figures } = { ...r, messages: r.errors.messages };
  checkNumbers(figures, 'result');
  for (const [k, v] of Object.entries(r.counts)) expect(Number.isInteger(v), `counts.${k}`).toBe(true);
  expect(r.counts.completedSamples).toBeLessThanOrEqual(r.counts.issuedSamples);
  // The SUT's failures, and the core's: a completion with no first token
  // under token latencies (not Offline) is a failed sample, never a success.
  const noFirstToken = c.tokens && c.scenario !== 'Offline' ? sut.withoutFirstToken : 0;
  expect(r.errors.failedSamples.byKind.no_first_token).toBe(sut.failedNoFirstToken + noFirstToken);
  expect(r.errors.failedSamples.total).toBe(sut.failed + noFirstToken);
  expect(r.targetLatencyPercentile).toBeLessThanOrEqual(1);
  // No latency longer than the run.
  for (const v of [r.latencyNs.max, ...Object.values(r.percentilesNs)]) expect(v).toBeLessThanOrEqual(wallNs);
  const succeeded = r.counts.completedSamples - r.errors.failedSamples.total;
  if (succeeded === 0) {
    expect(r.metric.value).toBe(0);
    expect(r.valid).toBe(false);
    if (c.scenario === 'Server') expect(r.checks.perfConstraintsMet).toBe(false);
  }
  if (r.errors.failedSamples.total > 0) expect(r.valid).toBe(false);
  if (c.scenario === 'Offline' && r.samplesPerSecond !== undefined)
    expect(r.samplesPerSecond * r.timing.maxLatencySeconds).toBeLessThanOrEqual(succeeded * (1 + 1e-9));
  if (c.scenario === 'Server' && r.completedSamplesPerSecond !== undefined)
    expect(r.completedSamplesPerSecond * r.timing.finalQueryAllSamplesDoneSeconds).toBeLessThanOrEqual(Math.max(0, succeeded - 1) * (1 + 1e-9));
  if (r.tokens !== undefined) {
    expect(r.tokens.tokenCount).toBeLessThanOrEqual(Math.max(sut.nTokensReported, 0) * (1 + 1e-9));
    if (r.tokens.ttftNs !== undefined) expect(r.tokens.ttftNs.max).toBeLessThanOrEqual(r.latencyNs.max);
  }
  for (const reason of r.invalidReasons) {
    expect(reason, 'a sentence').toMatch(/[.!?]$/);
    checkReasonText(reason.replace(/\n/g, ' '));
  }
  // The summary.
  checkSummaryText(summaryText);
  // The detail log: every line JSON after its prefix; result figures >= 0.
  const lines = readFileSync(r.files.detail!, 'utf8').split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(line.startsWith(':::MLLOG ')).toBe(true);
    const entry = JSON.parse(line.slice(9)) as { key: string; value: unknown };
    if (entry.key.startsWith('result_') || entry.key.startsWith('early_stopping_latency')) checkNumbers(entry.value, entry.key);
    if (entry.key === 'result_invalid_reason') checkReasonText(entry.value as string);
  }
  // The report's data: JSON, every number >= 0.
  const data: unknown = JSON.parse(readFileSync(join(outdir, 'loadgen_report_data.json'), 'utf8'));
  checkNumbers(data, 'report_data');
}

describe('whole runs over random outcomes', () => {
  it('summary, detail log, result and report data hold only possible figures', async () => {
    await fc.assert(
      fc.asyncProperty(runCase, async (c) => {
        const sut = planSut(c);
        const outdir = tempDir('loadgen-outcomes-');
        const start = process.hrtime.bigint();
        const r = await startTest(sut, createSyntheticQsl(64), runSettings(c), { outdir });
        const wallNs = Number(process.hrtime.bigint() - start);
        checkRun(c, sut, r, wallNs, outdir);
      }),
      propertyParams(30),
    );
  }, 60_000);

  it('a run where every sample fails: zero rates, no "Yes" for what was not met, separate sentences', async () => {
    for (const scenario of SCENARIOS) {
      const c: RunCase = { scenario, tokens: scenario !== 'Offline', plan: [{ action: { kind: 'fail', failure: 'http_status' }, nTokens: 0 }], queries: 30, later: true };
      const sut = planSut(c);
      const outdir = tempDir('loadgen-outcomes-');
      const start = process.hrtime.bigint();
      const r = await startTest(sut, createSyntheticQsl(64), runSettings(c), { outdir });
      checkRun(c, sut, r, Number(process.hrtime.bigint() - start), outdir);
      expect(r.metric.value).toBe(0);
      expect(r.checks.minQueriesMet).toBe(true);  // every query was issued
      expect(r.summaryText).toContain('  Min queries satisfied : Yes\n');
      expect(r.summaryText).not.toContain('Performance constraints satisfied : Yes');
      expect(r.invalidReasons).toContain(`${sut.failed} samples failed (http_status ${sut.failed}).`);
    }
  }, 30_000);
});
