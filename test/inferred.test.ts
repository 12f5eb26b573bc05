// Inferred results (the edge rules of seeds/000): the arithmetic on the
// rules' own examples, the runs' blocks in the summary after the overhead
// block, report data and report.html.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { createSyntheticQsl, inferredResults, querySamplesComplete, startTest, writeReport, type QuerySample, type SystemUnderTest, type TestResult } from '../lib/index.js';
import { tempDir } from './helpers.js';

const MS = 1e6;

/** The fields inferredResults reads, of a run with these latencies. */
function fakeResult(scenario: TestResult['scenario'], f: { meanNs: number; p99Ns?: number; estimateNs?: number; queryMeanNs?: number; spq?: number }): TestResult {
  return {
    scenario,
    mode: 'PerformanceOnly',
    validity: 'VALID',
    latencyNs: { min: 0, max: 0, mean: f.meanNs },
    percentilesNs: { 50: 0, 90: 0, 95: 0, 97: 0, 99: f.p99Ns ?? 0, 99.9: 0 },
    earlyStopping: { met: true, message: '', latencySsNs: 0, latencyMsNs: f.estimateNs ?? 0 },
    ...(f.queryMeanNs !== undefined ? { queryLatencyNs: { min: 0, max: 0, mean: f.queryMeanNs } } : {}),
    effectiveSettings: { samplesPerQuery: f.spq ?? 1 },
  } as unknown as TestResult;
}

function completingSut(): SystemUnderTest {
  return { name: 'completing', issueQuery: (samples: QuerySample[]) => querySamplesComplete(samples) };
}

describe('inferredResults: the rules\' arithmetic', () => {
  it('SingleStream, 99th percentile estimate 25 ms: MultiStream 8 x 25 = 200 ms; mean 25 ms: Offline 1000 / 25 = 40/s', () => {
    const inferred = inferredResults(fakeResult('SingleStream', { meanNs: 25 * MS, p99Ns: 30 * MS, estimateNs: 25 * MS }))!;
    expect(inferred.from).toBe('SingleStream');
    expect(inferred.multiStream).toEqual({ value: 200, unit: 'ms', basis: '8 x 25 ms (early stopping 99th percentile estimate)' });
    expect(inferred.offline).toEqual({ value: 40, unit: 'samples/s', basis: '1000 / 25 ms (mean latency)' });
    expect(inferred.notes).toEqual([]);
  });

  it('SingleStream without an early stopping 99th estimate: 8 x the measured 99th percentile, with a note', () => {
    const inferred = inferredResults(fakeResult('SingleStream', { meanNs: 2 * MS, p99Ns: 3.5 * MS, estimateNs: 0 }))!;
    expect(inferred.multiStream!.value).toBe(28);
    expect(inferred.multiStream!.basis).toBe('8 x 3.5 ms (99th percentile latency)');
    expect(inferred.offline.value).toBe(500);
    expect(inferred.notes[0]).toMatch(/measured 99th percentile was used/);
  });

  it('MultiStream, mean query latency 200 ms, 8 samples per query: Offline 8000 / 200 = 40/s', () => {
    const inferred = inferredResults(fakeResult('MultiStream', { meanNs: 1, queryMeanNs: 200 * MS, spq: 8 }))!;
    expect(inferred.multiStream).toBeUndefined();
    expect(inferred.offline).toEqual({ value: 40, unit: 'samples/s', basis: '8000 / 200 ms (mean query latency)' });
    expect(inferred.notes).toEqual([]);
    const four = inferredResults(fakeResult('MultiStream', { meanNs: 1, queryMeanNs: 200 * MS, spq: 4 }))!;
    expect(four.offline.value).toBe(20);
    expect(four.notes[0]).toMatch(/samples_per_query is 4, not the rules' 8/);
  });

  it('nothing for Server, Offline, accuracy-only runs or runs without latencies', () => {
    expect(inferredResults(fakeResult('Server', { meanNs: MS }))).toBeUndefined();
    expect(inferredResults(fakeResult('Offline', { meanNs: MS }))).toBeUndefined();
    expect(inferredResults({ ...fakeResult('SingleStream', { meanNs: MS }), mode: 'AccuracyOnly' })).toBeUndefined();
    expect(inferredResults(fakeResult('SingleStream', { meanNs: 0 }))).toBeUndefined();
  });
});

describe('inferred results of a run', () => {
  it('SingleStream: result.inferred agrees with the reference\'s own figures; a block after the overhead block; report.html', async () => {
    const outdir = tempDir();
    const result = await startTest(completingSut(), createSyntheticQsl(64),
      { scenario: 'SingleStream', minDurationMs: 50, minQueryCount: 2000, singleStreamExpectedLatencyNs: 10000 }, { outdir });
    const inferred = result.inferred!;
    expect(inferred.from).toBe('SingleStream');
    // Offline from SingleStream is the reference's result_qps_without_loadgen_overhead.
    expect(inferred.offline.value).toBeCloseTo(result.qpsWithoutLoadgenOverhead!, 6);
    expect(inferred.offline.value).toBe(1000 / (result.latencyNs.mean / MS));
    expect(result.earlyStopping.latencyMsNs).toBeGreaterThan(0);
    expect(inferred.multiStream!.value).toBe((8 * result.earlyStopping.latencyMsNs) / MS);
    expect(inferred.baseValidity).toBe(result.validity);

    const summary = readFileSync(result.files.summary!, 'utf8');
    expect(summary).toBe(result.summaryText);
    const overheadEnd = summary.indexOf('Due = scheduled time');
    const block = summary.indexOf('Inferred results (edge rules; not measured)');
    expect(overheadEnd).toBeGreaterThan(0);
    expect(block).toBeGreaterThan(overheadEnd);
    expect(summary).toContain('Offline samples per second (inferred) : ');
    expect(summary).toContain('MultiStream 99th percentile latency (ms) (inferred) : ');

    const data = JSON.parse(readFileSync(join(outdir, 'loadgen_report_data.json'), 'utf8')) as { inferred: unknown; series: unknown };
    expect(data.inferred).toEqual(JSON.parse(JSON.stringify(inferred)));
    expect(data.series).not.toBeNull();
    const html = readFileSync(writeReport(outdir), 'utf8');
    expect(html).toContain('<h2 id="inferred">Inferred results');
    expect(html).toContain('Offline samples per second (inferred)');
  });

  it('MultiStream: Offline = 1000 x samples per query / mean query latency (ms); Offline runs have none', async () => {
    const result = await startTest(completingSut(), createSyntheticQsl(64),
      { scenario: 'MultiStream', minDurationMs: 50, minQueryCount: 1000, multiStreamExpectedLatencyNs: 10000 }, { outdir: tempDir() });
    expect(result.effectiveSettings.samplesPerQuery).toBe(8);
    expect(result.inferred!.offline.value).toBe(8000 / (result.queryLatencyNs!.mean / MS));
    expect(result.inferred!.multiStream).toBeUndefined();
    const offline = await startTest(completingSut(), createSyntheticQsl(64), { scenario: 'Offline', minDurationMs: 0, minQueryCount: 100 }, { outdir: tempDir() });
    expect(offline.inferred).toBeUndefined();
    expect(offline.summaryText).not.toContain('Inferred results');
  });
});
