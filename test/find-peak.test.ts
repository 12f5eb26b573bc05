import { describe, expect, it } from 'vitest';

import { querySampleComplete, startTest, type QuerySample, type SystemUnderTest } from '../lib/index.js';
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

describe('FindPeakPerformance', () => {
  it('converges near the capacity of a SUT that serves N queries per second', async () => {
    const capacity = 800;
    const qsl = recordingQsl(64);
    const result = await startTest(capacitySut(capacity), qsl, {
      scenario: 'Server', mode: 'FindPeakPerformance',
      serverTargetQps: 100, serverTargetLatencyNs: 25_000_000, minDurationMs: 400, minQueryCount: 10,
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
