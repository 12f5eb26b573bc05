import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { type BenchReport } from '../lib/bench/bench.js';
import { clientThreadCounts } from '../lib/bench/net.js';
import { BENCH_SUTS } from '../lib/bench/trials.js';
import { repoRoot } from './helpers.js';

// Proves the benchmark works end to end; figures are not asserted (shared,
// noisy machines): speed targets live in `npm run bench`, not in tests.
describe('loadgen bench --tiny --json', () => {
  it('runs every trial in a fresh process and prints the documented document', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--tiny', '--json'], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as BenchReport;
    const finite = (n: unknown) => expect(typeof n === 'number' && Number.isFinite(n), String(n)).toBe(true);
    const positive = (n: unknown) => expect(typeof n === 'number' && Number.isFinite(n) && n > 0, String(n)).toBe(true);
    const nonNegative = (n: unknown) => expect(typeof n === 'number' && Number.isFinite(n) && n >= 0, String(n)).toBe(true);
    positive(report.platform.clockReadNs);
    positive(report.platform.jsToNativeCallNs);
    positive(report.platform.tsfnWakeNs.p50);
    positive(report.platform.tsfnWakeNs.p99);

    const noise = report.platform.cpuNoise;
    finite(noise.cpu);
    expect(typeof noise.pinned).toBe('boolean');
    expect(typeof noise.restOnCpu0).toBe('boolean');
    positive(noise.durationNs);
    for (const n of [noise.gapsPerSecond, noise.lostFraction, noise.gapNs.p50, noise.gapNs.p99, noise.gapNs.max,
      noise.residualNs.p50, noise.residualNs.p99, noise.residualNs.p999]) nonNegative(n);

    for (const sut of BENCH_SUTS) {
      const rows = report.server.filter((row) => row.sut === sut && !row.pinRequested && row.dispatchSpinUs === 0 && row.wakeLeadUs === 0);
      expect(rows.map((row) => row.targetQps)).toEqual([1000, 10000]);
      for (const row of rows) {
        expect(typeof row.valid).toBe('boolean');
        expect(row.pinned).toBe(false);
        positive(row.latencyNs.p50 + 1);
        positive(row.latencyNs.p99);
        positive(row.latencyNs.p999);
      }
      positive(report.singleStreamQps[sut]);
      positive(report.offlineSamplesPerSec[sut]);
      // 0 when not even the base rate was valid (a busy machine); a number either way.
      nonNegative(report.serverMaxValidQps[sut]);
    }
    // The pinned path runs in CI; whether it could pin depends on the machine.
    const pinnedRows = report.server.filter((row) => row.pinRequested);
    expect(pinnedRows.map((row) => [row.sut, row.targetQps])).toEqual([['null-native', 1000]]);
    expect(typeof pinnedRows[0]!.pinned).toBe('boolean');
    positive(pinnedRows[0]!.latencyNs.p99);
    // The wake-lead row (wakeLeadUs) runs in CI too.
    const leadRows = report.server.filter((row) => row.wakeLeadUs > 0);
    expect(leadRows.map((row) => [row.sut, row.targetQps, row.wakeLeadUs])).toEqual([['wake', 1000, 100]]);
    expect(leadRows[0]!.deliveryLagNs?.p50).toBeGreaterThanOrEqual(0);
    // Each peak row: one search and its confirming runs (tiny: 1 of 0.2 s) with resnet50's Server settings.
    expect(report.peakProcedure).toMatchObject({ confirmRuns: 1, confirmSeconds: 0.2 });
    expect(report.peakProcedure.settings).toMatchObject({
      model: 'resnet50', targetLatencyNs: 15_000_000, targetLatencyPercentile: 0.99, minQueryCount: 100, minDurationMs: 200, mlperfConfMinDurationMs: 600_000,
    });
    expect(report.serverPeaks.map((p) => p.sut)).toEqual([...BENCH_SUTS]);
    // FindPeakPerformance's bracket ran its trials; on a machine loaded beyond its
    // cores even the base rate can fail a 0.2-s trial (peak 0), as the search may.
    const nullNativeBracket = report.serverPeaks.find((p) => p.sut === 'null-native')!.bracket;
    positive(nullNativeBracket.trials);
    nonNegative(nullNativeBracket.peakQps);
    for (const peak of report.serverPeaks) {
      expect(report.serverMaxValidQps[peak.sut]).toBe(peak.confirmedQps);
      expect(peak.highestValidQps).toBeGreaterThanOrEqual(peak.confirmedQps);
      expect(peak.runs.length).toBeLessThanOrEqual(report.peakProcedure.maxRuns);
      nonNegative(peak.bracket.peakQps);
      // Whether a rate is confirmed depends on the machine's load: the row ran its search either way.
      expect(peak.runs.length).toBeGreaterThan(0);
      if (peak.confirmedQps > 0) {
        const confirming = peak.runs[peak.runs.length - 1]!;
        expect(confirming).toMatchObject({ phase: 'confirm', valid: true, targetQps: peak.confirmedQps });
        expect(confirming.durationS).toBeGreaterThanOrEqual(0.2 * 0.9);
        expect(confirming.queries).toBeGreaterThanOrEqual(100);
      }
    }
    // Memory at two run lengths, 4x apart.
    expect(report.bytesPerSampleByRun).toHaveLength(2);
    expect(report.bytesPerSampleByRun[1]!.samples).toBeGreaterThan(3 * report.bytesPerSampleByRun[0]!.samples);
    positive(report.bytesPerSample);

    // The network rows (issue 12) run in tiny form too; a row that cannot run says why.
    const net = report.network;
    expect(net.connections).toBe(32);
    expect(net.server?.clockShared).toBe(true);
    for (const row of net.closedLoop) expect(row.requestsPerSec !== null || typeof row.note === 'string').toBe(true);
    const scaling = clientThreadCounts(availableParallelism()).map((n) => `native-x${n}`);
    expect(net.peaks.map((p) => p.dispatch)).toEqual(['native', 'native-noread', 'native-thread', ...scaling, 'wake', 'poll', 'worker']);
    // With wrk on PATH, its one-connection round trip is the floor; without it, null.
    if (net.closedLoop.find((row) => row.tool === 'wrk')?.requestsPerSec) expect(net.floorNs!.p50).toBeGreaterThan(0);
    else expect(net.floorNs).toBeNull();

    // The issue-24 row: loadgen accuracy on a generated CNN-sized set (500 samples in tiny form: 'n/a').
    expect(report.targets).toHaveLength(15);
    const accuracy = (report as BenchReport & { accuracy: { samples: number; wallSeconds: number } }).accuracy;
    expect(accuracy.samples).toBe(500);
    positive(accuracy.wallSeconds);
    expect(report.targets[14]).toMatchObject({ holds: 'n/a' });
    // The network targets end with the client's own TTFT error against the idle round trip.
    expect(report.targets[13]!.target).toContain("the client's own TTFT error");
    for (const target of report.targets) {
      expect(typeof target.target).toBe('string');
      expect(typeof target.measured).toBe('string');
      expect(['yes', 'no', 'n/a']).toContain(target.holds);
    }
    expect(report.machine.node).toBe(process.version);
  }, 300_000);
});
