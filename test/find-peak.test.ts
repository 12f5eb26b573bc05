import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { querySampleComplete, querySampleFailed, startTest, type QuerySample, type SystemUnderTest, type TestResult } from '../lib/index.js';
import { recordingQsl, tempDir } from './helpers.js';

/** A single-server FIFO that serves `capacityQps` queries per second. */
function capacitySut(capacityQps: number): SystemUnderTest {
  const serviceMs = 1000 / capacityQps;
  const queue: { id: number; due: number }[] = [];
  let busyUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  const pump = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.due <= now) querySampleComplete(queue.shift()!.id);
    if (queue.length > 0) timer = setTimeout(pump, queue[0]!.due - now);
  };
  return {
    name: `capacity-${capacityQps}`,
    issueQuery(samples: QuerySample[]) {
      const now = performance.now();
      for (const s of samples) {
        busyUntil = Math.max(now, busyUntil) + serviceMs;
        queue.push({ id: s.id, due: busyUntil });
      }
      timer ??= setTimeout(pump, Math.max(0, queue[0]!.due - now));
    },
  };
}

/**
 * A server with `slots` requests in service at once, each `serviceMs` long
 * (capacity slots / serviceMs): beyond that it sheds load at once with a 503,
 * as a server behind a concurrency limit does.
 */
function sheddingSut(slots: number, serviceMs: number): SystemUnderTest {
  let inService = 0;
  return {
    name: 'shedding',
    issueQuery(samples: QuerySample[]) {
      for (const s of samples) {
        if (inService >= slots) {
          querySampleFailed(s.id, 'http_status', 'HTTP 503 Service Unavailable');
          continue;
        }
        inService++;
        setTimeout(() => {
          inService--;
          querySampleComplete(s.id);
        }, serviceMs);
      }
    },
  };
}

/** Answers at once, but fails (429) every request beyond `limit` in the last `windowMs`. */
function rateLimitedSut(limit: number, windowMs: number): SystemUnderTest {
  const arrivals: number[] = [];
  return {
    name: 'rate-limited',
    issueQuery(samples: QuerySample[]) {
      const now = performance.now();
      while (arrivals.length > 0 && arrivals[0]! <= now - windowMs) arrivals.shift();
      for (const s of samples) {
        arrivals.push(now);
        if (arrivals.length > limit) querySampleFailed(s.id, 'http_status', 'HTTP 429 Too Many Requests');
        else querySampleComplete(s.id);
      }
    },
  };
}

/** Every trial with a failed sample failed; the widening ended at the first trial that failed. */
function expectFailuresFailTrials(result: TestResult): void {
  const trials = result.findPeak!.trials;
  for (const t of trials) {
    if (t.failedSamples > 0) expect(t.passed).toBe(false);
    expect(t.passed).toBe(t.perfConstraintsMet && t.failedSamples === 0 && t.incompleteSamples === 0);
  }
  const firstFail = trials.findIndex((t) => !t.passed);
  expect(firstFail).toBeGreaterThan(0);
  for (const t of trials.slice(firstFail + 1)) expect(t.targetQps).toBeLessThan(trials[firstFail]!.targetQps);
  const peak = trials.find((t) => t.targetQps === result.findPeak!.peakQps)!;
  expect(peak.passed).toBe(true);
  expect(peak.failedSamples).toBe(0);
}

// Short trials: the searches below take a few seconds.
const quickPeak = {
  scenario: 'Server', mode: 'FindPeakPerformance', serverTargetLatencyNs: 1_000_000_000, minDurationMs: 300,
  minQueryCount: 10, serverFindPeakQpsDecimalsOfPrecision: 0,
} as const;

describe('FindPeakPerformance against a SUT that fails requests', () => {
  it('a server shedding load beyond 20 in flight (capacity 200 QPS): the peak is below its capacity, not far above', { timeout: 30_000 }, async () => {
    const outdir = tempDir();
    const result = await startTest(sheddingSut(20, 100), recordingQsl(64), { ...quickPeak, serverTargetQps: 25 }, { outdir });
    expectFailuresFailTrials(result);
    // Its 503s are fast, so the latency bound alone would have widened on and on.
    const peak = result.findPeak!.peakQps;
    expect(peak).toBeGreaterThanOrEqual(25);
    expect(peak).toBeLessThan(200);
    expect(Math.max(...result.findPeak!.trials.map((t) => t.targetQps))).toBeLessThanOrEqual(400);
    expect(result.errors.failedSamples.total).toBeGreaterThan(0);
    expect(result.errors.failedSamples.total).toBe(result.findPeak!.trials.reduce((n, t) => n + t.failedSamples, 0));
    // The failing trials bounded the search; the reported trial had none, so
    // they are not among its reasons (its short trial misses early stopping).
    expect(result.invalidReasons.join('\n')).not.toMatch(/samples? failed/);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toMatch(/Sample failed \(http_status\): HTTP 503 Service Unavailable/);
    expect(detail).toMatch(/FindPeakPerformance: the trial at [\d.]+ fails: \d+ of \d+ samples failed \(http_status \d+\)/);
    expect(detail).toContain(`Found peak performance field: ${peak.toFixed(6)}`);
  });

  it('a server failing requests above a rate (30 in any 200 ms: 150 QPS): the peak is below that rate', { timeout: 30_000 }, async () => {
    const result = await startTest(rateLimitedSut(30, 200), recordingQsl(64), { ...quickPeak, serverTargetQps: 20 }, { outdir: tempDir() });
    expectFailuresFailTrials(result);
    expect(result.findPeak!.peakQps).toBeGreaterThanOrEqual(20);
    expect(result.findPeak!.peakQps).toBeLessThan(150);
  });

  it('a server failing every request: the run ends at the base QPS, naming how many samples failed and how', { timeout: 30_000 }, async () => {
    const failing: SystemUnderTest = {
      name: 'failing',
      issueQuery(samples: QuerySample[]) {
        for (const s of samples) querySampleFailed(s.id, 'connection', 'connect ECONNREFUSED 127.0.0.1:9');
      },
    };
    const result = await startTest(failing, recordingQsl(16), { ...quickPeak, serverTargetQps: 100 }, { outdir: tempDir() });
    const trials = result.findPeak!.trials;
    expect(trials.length).toBe(1);
    expect(trials[0]!.failedSamples).toBe(trials[0]!.queriesIssued);
    expect(trials[0]!.passed).toBe(false);
    expect(result.findPeak!.peakQps).toBe(0);
    expect(result.valid).toBe(false);
    const n = trials[0]!.queriesIssued;
    const error = `FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: No sample completed successfully, so no latency was measured. ${n} of ${n} samples failed (connection ${n}).`;
    expect(result.errors.messages.map((m) => m.text)).toContain(error);
    expect(result.invalidReasons).toContain(`${n} of ${n} samples failed (connection ${n}).`);
  });
});

describe('FindPeakPerformance', () => {
  it('converges near the capacity of a SUT that serves N queries per second', async () => {
    const capacity = 800;
    const qsl = recordingQsl(64);
    // A bound of 100 ms: a rate 1.25x the capacity queues 100 ms by the end of a
    // 400-ms trial (so the peak stays below 1.3x), while a loaded machine's
    // stalls of tens of ms do not fail the rates below the capacity.
    const result = await startTest(capacitySut(capacity), qsl, {
      scenario: 'Server', mode: 'FindPeakPerformance',
      serverTargetQps: 100, serverTargetLatencyNs: 100_000_000, minDurationMs: 400, minQueryCount: 10,
      serverFindPeakQpsDecimalsOfPrecision: 0,
    }, { outdir: tempDir() });
    const peak = result.findPeak!;
    // Boundaries double from the base QPS until a trial fails, then bisect.
    const qps = peak.trials.map((t) => t.targetQps);
    expect(qps.slice(0, 3)).toEqual([100, 200, 400]);
    const firstFail = peak.trials.findIndex((t) => !t.perfConstraintsMet);
    expect(firstFail).toBeGreaterThan(0);
    for (let i = 1; i <= firstFail; i++) expect(qps[i]).toBe(qps[i - 1]! * 2);
    expect(peak.peakQps).toBeGreaterThan(capacity * 0.5);
    expect(peak.peakQps).toBeLessThan(capacity * 1.3);
    // The reported statistics are the peak trial's.
    expect(result.summaryText).toContain('Mode     : FindPeakPerformance\n');
    expect(result.summaryText).toContain(`target_qps : ${peak.peakQps}`.slice(0, 16));
    expect(result.checks.perfConstraintsMet).toBe(true);
    // Precision 0: the final bounds are less than 1 QPS apart.
    const passing = peak.trials.filter((t) => t.perfConstraintsMet).map((t) => t.targetQps);
    const failing = peak.trials.filter((t) => !t.perfConstraintsMet).map((t) => t.targetQps);
    expect(Math.floor(Math.min(...failing))).toBeLessThanOrEqual(Math.floor(Math.max(...passing)) + 1);
    expect(Math.max(...passing)).toBe(peak.peakQps);
    // Base and boundary trials load their own set; the bisection keeps one loaded.
    expect(qsl.calls.filter((c) => c === 'load').length).toBe(firstFail + 1 + (peak.trials.length > firstFail + 1 ? 1 : 0));
  });

  it('stops at the base QPS when it already misses the latency bound', async () => {
    const result = await startTest(capacitySut(200), recordingQsl(16), {
      scenario: 'Server', mode: 'FindPeakPerformance', serverTargetQps: 1000, serverTargetLatencyNs: 5_000_000,
      minDurationMs: 300, minQueryCount: 10,
    }, { outdir: tempDir() });
    expect(result.findPeak!.trials.length).toBe(1);
    expect(result.findPeak!.peakQps).toBe(0);
    expect(result.valid).toBe(false);
    expect(result.errors.messages.map((m) => m.text).join('\n')).toMatch(/Initial lower bound does not satisfy/);
  });
});
