import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createNullNativeSut,
  createNullSut,
  createSyntheticQsl,
  startTest,
  type Scenario,
  type TestSettingsInput,
} from '../lib/index.js';
import { delayedSut, goldenDir, hasGolden, readText, recordingQsl, summaryLayout, tempDir } from './helpers.js';

// Settings that give a VALID run with an instant SUT on a slow machine too
// (the same shape as the golden example logs' runs).
const validSettings: Record<Scenario, TestSettingsInput> = {
  // SingleStream/MultiStream hand the next query over inside the completion
  // call: an instant JS SUT runs at 1-4M queries/s, faster than the 2 queries
  // per expected latency (>= 1 us) that are generated per unit of duration. So
  // the query count, not the duration, sizes these runs (else they run out).
  SingleStream: { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 10, minQueryCount: 200_000 },
  MultiStream: {
    scenario: 'MultiStream',
    multiStreamExpectedLatencyNs: 2000,
    multiStreamSamplesPerQuery: 8,
    minDurationMs: 10,
    minQueryCount: 100_000,
  },
  Server: { scenario: 'Server', serverTargetQps: 2000, serverTargetLatencyNs: 50_000_000, minDurationMs: 500, minQueryCount: 100 },
  Offline: { scenario: 'Offline', offlineExpectedQps: 1_000_000, minDurationMs: 0, minQueryCount: 24576 },
};

const scenarios: Scenario[] = ['SingleStream', 'MultiStream', 'Server', 'Offline'];

describe.each(scenarios)('%s with the JS null SUT', (scenario) => {
  it('runs VALID, counts every sample and writes the summary in the reference layout', async () => {
    const outdir = tempDir();
    const qsl = recordingQsl(1000, 256);
    const result = await startTest(createNullSut(), qsl, validSettings[scenario], { outdir });

    expect(result.scenario).toBe(scenario);
    expect(result.mode).toBe('PerformanceOnly');
    expect(result.invalidReasons).toEqual([]);
    expect(result.validity).toBe('VALID');
    expect(result.errors.count).toBe(0);
    expect(result.counts.issuedSamples).toBe(result.counts.completedSamples);
    expect(result.counts.incompleteSamples).toBe(0);
    expect(result.counts.issuedQueries).toBeGreaterThan(0);
    expect(result.latencyNs.min).toBeGreaterThanOrEqual(0);
    expect(result.latencyNs.max).toBeGreaterThanOrEqual(result.percentilesNs[99]);
    expect(result.percentilesNs[99]).toBeGreaterThanOrEqual(result.percentilesNs[50]);
    expect(qsl.calls).toEqual(['load', 'unload']);
    expect(qsl.loaded[0]!.length).toBe(scenario === 'MultiStream' ? 256 + 7 : 256);

    const summaryPath = join(outdir, 'mlperf_log_summary.txt');
    expect(result.files.summary).toBe(summaryPath);
    const text = readText(summaryPath);
    expect(text).toBe(result.summaryText);
    expect(text).toContain(`Scenario : ${scenario}\n`);
    expect(text).toContain('Result is : VALID\n');

    if (scenario === 'SingleStream') expect(result.qpsWithLoadgenOverhead).toBeGreaterThan(0);
    if (scenario === 'Server') {
      expect(result.metric.name).toBe('completed samples per second');
      expect(result.completedSamplesPerSecond).toBeGreaterThan(1000);
    }
    if (scenario === 'Offline') {
      expect(result.counts.issuedQueries).toBe(1);
      expect(result.counts.issuedSamples).toBe(24576);
      expect(result.samplesPerSecond).toBeGreaterThan(0);
    }
    if (scenario === 'MultiStream') {
      expect(result.counts.issuedSamples).toBe(result.counts.issuedQueries * 8);
      expect(result.queryPercentilesNs![99]).toBe(result.targetPercentileLatencyNs);
    }
  });

  it.skipIf(!hasGolden)('matches the golden summary line by line, values aside', async () => {
    const outdir = tempDir();
    const result = await startTest(createNullSut(), createSyntheticQsl(1000, 256), validSettings[scenario], { outdir });
    const golden = readText(join(goldenDir, 'logs', scenario, 'performance', 'mlperf_log_summary.txt'));
    const ours = summaryLayout(result.summaryText);
    const theirs = summaryLayout(golden);
    // The golden runs had other settings in two places that change the text's values only.
    expect(ours).toEqual(theirs);
  });
});

describe('a SUT that completes after a fixed delay', () => {
  const delayMs = 4;
  it.each(['SingleStream', 'Server'] as const)('%s latencies reflect the delay', async (scenario) => {
    const sut = delayedSut(delayMs);
    const settings: TestSettingsInput =
      scenario === 'SingleStream'
        ? { scenario, singleStreamExpectedLatencyNs: delayMs * 1e6, minDurationMs: 400, minQueryCount: 20 }
        : { scenario, serverTargetQps: 100, minDurationMs: 400, minQueryCount: 20 };
    const result = await startTest(sut, createSyntheticQsl(64), settings, { outdir: tempDir() });
    const delayNs = delayMs * 1e6;
    // libuv starts a timer from the loop's cached time, which can be up to a
    // millisecond old, so a timer may fire slightly before its delay.
    const timerSlackNs = 1.5e6;
    expect(result.latencyNs.min).toBeGreaterThanOrEqual(delayNs - timerSlackNs);
    expect(result.percentilesNs[50]).toBeGreaterThanOrEqual(delayNs - timerSlackNs);
    expect(result.percentilesNs[50]).toBeLessThan(delayNs + 100e6);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    expect(sut.received.length).toBe(result.counts.issuedQueries);
    if (scenario === 'SingleStream') {
      // One query at a time: the rate cannot exceed 1 / delay.
      expect(result.qpsWithLoadgenOverhead!).toBeLessThanOrEqual(1000 / delayMs);
      expect(result.timing.finalQueryIssuedSeconds).toBeGreaterThanOrEqual(0.4);
    }
  });

  it('MultiStream query latency is the slowest sample of each query', async () => {
    const result = await startTest(
      delayedSut(3),
      createSyntheticQsl(64),
      { scenario: 'MultiStream', multiStreamExpectedLatencyNs: 3e6, multiStreamSamplesPerQuery: 4, minDurationMs: 200, minQueryCount: 10 },
      { outdir: tempDir() },
    );
    expect(result.queryLatencyNs!.min).toBeGreaterThanOrEqual(3e6 - 1.5e6);
    expect(result.queryLatencyNs!.mean).toBeGreaterThanOrEqual(result.latencyNs.mean);
    expect(result.counts.issuedSamples).toBe(4 * result.counts.issuedQueries);
    expect(result.summaryText).toContain('Per-query latency:  \n');
  });

  it('Offline measures the whole query from the start', async () => {
    const result = await startTest(
      delayedSut(20),
      createSyntheticQsl(100),
      { scenario: 'Offline', offlineExpectedQps: 1000, minDurationMs: 10, minQueryCount: 500 },
      { outdir: tempDir() },
    );
    expect(result.counts.issuedSamples).toBe(500);
    expect(result.latencyNs.min).toBeGreaterThanOrEqual(20e6 - 1.5e6);
    expect(result.latencyNs.min).toBe(result.latencyNs.max); // one completion call for all samples
    expect(result.valid).toBe(true);
  });
});

describe('the null-native SUT', () => {
  it('runs Server without any JS on the issue path', async () => {
    const outdir = tempDir();
    const result = await startTest(
      createNullNativeSut(),
      createSyntheticQsl(1024),
      { scenario: 'Server', serverTargetQps: 20000, minDurationMs: 300 },
      { outdir },
    );
    expect(result.valid).toBe(true);
    expect(result.sutName).toBe('null-native');
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(true);
  });
});

describe('log settings', () => {
  it('honours prefix, suffix and the datetime prefix', async () => {
    const outdir = join(tempDir(), 'nested', 'dir');
    const result = await startTest(
      createNullSut(),
      createSyntheticQsl(16),
      { scenario: 'Offline', minDurationMs: 0, minQueryCount: 10 },
      { outdir, prefix: 'run_', suffix: '_a', prefixWithDatetime: true },
    );
    expect(result.files.summary).toBe(join(outdir, `run_${result.testDatetime}_summary_a.txt`));
    expect(existsSync(result.files.summary!)).toBe(true);
    expect(result.testDatetime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});

describe('the README example (with a shorter duration)', () => {
  it('runs as written', async () => {
    const { querySamplesComplete } = await import('../lib/index.js');
    const sut = {
      name: 'my-sut',
      issueQuery(samples: { id: number; index: number }[]) {
        querySamplesComplete(samples.map((s) => ({ id: s.id })));
      },
    };
    const qsl = {
      name: 'my-data',
      totalSampleCount: 1024,
      performanceSampleCount: 1024,
      loadSamplesToRam() {},
      unloadSamplesFromRam() {},
    };
    const result = await startTest(sut, qsl, { scenario: 'Server', serverTargetQps: 500, minDurationMs: 2000 }, { outdir: tempDir() });
    expect(result.validity).toBe('VALID');
    expect(result.percentilesNs[99]).toBeGreaterThan(0);
  });
});

describe('loadgen overhead in every run', () => {
  it.each(scenarios)('%s: issue lateness and delivery lag in the result and after the reference summary', async (scenario) => {
    const result = await startTest(createNullSut(), createSyntheticQsl(1000, 256), validSettings[scenario], { outdir: tempDir() });
    const o = result.overhead!;
    expect(o.issueLatenessNs.count).toBeGreaterThan(0);
    expect(o.deliveryLagNs).not.toBeNull();
    expect(o.deliveryLagNs!.count).toBe(o.issueLatenessNs.count);
    for (const st of [o.issueLatenessNs, o.deliveryLagNs!]) {
      expect(st.p50).toBeLessThanOrEqual(st.p99);
      expect(st.p99).toBeLessThanOrEqual(st.max);
    }
    // Delivery happens after issuing, for the median query at least.
    expect(o.deliveryLagNs!.p50).toBeGreaterThanOrEqual(o.issueLatenessNs.p50);
    const text = result.summaryText;
    const block = text.slice(text.indexOf('Loadgen Overhead'));
    expect(text.indexOf('Loadgen Overhead')).toBeGreaterThan(text.indexOf('No errors encountered during test.'));
    expect(block).toContain(`Issue lateness p99 (ns)         : ${o.issueLatenessNs.p99}\n`);
    expect(block).toContain(`Delivery lag p50 (ns)           : ${o.deliveryLagNs!.p50}\n`);
  });

  it('the null-native SUT has issue lateness but no delivery', async () => {
    const result = await startTest(createNullNativeSut(), createSyntheticQsl(64), validSettings.Server, { outdir: tempDir() });
    expect(result.overhead!.issueLatenessNs.count).toBe(result.counts.issuedQueries);
    expect(result.overhead!.deliveryLagNs).toBeNull();
    expect(result.summaryText).not.toContain('Delivery lag');
  });
});
