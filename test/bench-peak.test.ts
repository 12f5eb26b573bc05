import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { BenchReport } from '../lib/bench/bench.js';
import { describePeak, findConfirmedPeak, MAX_STEP_DOWN, peakConfirmation, type PeakProcedureOptions, type PeakRun } from '../lib/bench/peak.js';
import { evaluateTargets } from '../lib/bench/targets.js';
import { repoRoot } from './helpers.js';

/** A fake Server run: VALID at or below `capacity` unless `fails(qps, attempt)` says this attempt stalls. */
function fake(capacity: number, fails: (qps: number, attempt: number) => boolean = () => false) {
  const attempts = new Map<number, number>();
  const calls: { qps: number; phase: string }[] = [];
  const run = async (qps: number, phase: 'search' | 'confirm'): Promise<PeakRun> => {
    const attempt = (attempts.get(qps) ?? 0) + 1;
    attempts.set(qps, attempt);
    calls.push({ qps, phase });
    const valid = qps <= capacity && !fails(qps, attempt);
    return { targetQps: qps, valid, latencyP99Ns: valid ? 1e6 : 2e7, achievedQps: qps, durationS: 10, queries: qps * 10 };
  };
  return { run, calls };
}

const options = (o: Partial<PeakProcedureOptions> = {}): PeakProcedureOptions => ({
  startQps: 10_000, precision: 0.05, confirmRuns: 3, stepDown: 0.07, maxRuns: 20, minQps: 100, ...o,
});

describe('bench peak procedure (findConfirmedPeak)', () => {
  it('brackets to the precision, then confirms with N consecutive VALID runs at one rate', async () => {
    const f = fake(23_000);
    const r = await findConfirmedPeak(f.run, options());
    expect(r.confirmedQps).toBeLessThanOrEqual(23_000);
    expect(r.confirmedQps).toBeGreaterThan(23_000 / 1.05);
    const last3 = r.runs.slice(-3);
    expect(last3.map((x) => [x.targetQps, x.phase, x.valid])).toEqual(Array(3).fill([r.confirmedQps, 'confirm', true]));
    expect(r.runs.filter((x) => x.phase === 'confirm')).toHaveLength(3);
    expect(r.highestValidQps).toBe(r.confirmedQps);
    expect(describePeak(r, { confirmRuns: 3, confirmSeconds: 10 })).toMatch(/confirmed by 3 VALID run\(s\) \(10\.0 s\/\d+ q\/p99 1\.00 ms/);
  });

  it('needs consecutive runs: a failed confirming run steps down by stepDown and the count starts again', async () => {
    // The second confirming run at the bracket's top stalls; every other run holds.
    const f = fake(23_000);
    let confirmCalls = 0;
    const run = async (qps: number, phase: 'search' | 'confirm'): Promise<PeakRun> => {
      const r = await f.run(qps, phase);
      return phase === 'confirm' && ++confirmCalls === 2 ? { ...r, valid: false, latencyP99Ns: 2e7 } : r;
    };
    const r = await findConfirmedPeak(run, options());
    const confirms = r.runs.filter((x) => x.phase === 'confirm');
    // Two confirming runs at the top (VALID, INVALID), then 3 VALID at top x 0.93.
    expect(confirms.map((x) => x.valid)).toEqual([true, false, true, true, true]);
    expect(confirms[0]!.targetQps).toBe(confirms[1]!.targetQps);
    expect(r.confirmedQps).toBe(Math.round(confirms[0]!.targetQps * 0.93));
    expect(r.highestValidQps).toBeGreaterThan(r.confirmedQps);
  });

  it('keeps stepping down (not halving) below a rate that passed once, even from a rate never VALID itself; the step doubles per failed rate', async () => {
    // 20k VALID in the search, then every run at 20k and above stalls:
    // 18.6k (7 % down, never VALID) fails too, then 14 % down: 15,996 holds.
    const stalls = fake(17_500);
    const r = await findConfirmedPeak(async (qps, phase) => {
      const run = await stalls.run(qps, phase);
      return qps === 20_000 && phase === 'search' ? { ...run, valid: true } : run;
    }, options({ startQps: 20_000, maxRuns: 14, reservedConfirmations: 3 }));
    const confirms = r.runs.filter((x) => x.phase === 'confirm').map((x) => [x.targetQps, x.valid]);
    expect(confirms.slice(0, 2)).toEqual([[20_000, false], [18_600, false]]);
    expect(r.confirmedQps).toBe(15_996);
  });

  it(`the step down doubles with each failed rate up to ${MAX_STEP_DOWN * 100} %`, async () => {
    // The search finds 100k VALID once; only 40k and below hold.
    const f = fake(40_000);
    const r = await findConfirmedPeak(async (qps, phase) => {
      const run = await f.run(qps, phase);
      return qps === 100_000 && phase === 'search' ? { ...run, valid: true } : run;
    }, options({ startQps: 100_000, maxRuns: 30, reservedConfirmations: 6 }));
    const failed = r.runs.filter((x) => x.phase === 'confirm' && !x.valid).map((x) => x.targetQps);
    // 7, 14, 25, 25 % down from each failed rate.
    expect(failed.slice(0, 5)).toEqual([100_000, 93_000, 79_980, 59_985, 44_989]);
    expect(r.confirmedQps).toBe(33_742);
  });

  it('a rate never VALID is halved in the confirmation; nothing VALID at all gives 0 and no unconfirmed rate', async () => {
    const r = await findConfirmedPeak(fake(0).run, options({ startQps: 1000 }));
    expect(r.confirmedQps).toBe(0);
    expect(r.highestValidQps).toBe(0);
    expect(r.runs.every((x) => x.targetQps >= 100)).toBe(true);
    expect(describePeak(r, { confirmRuns: 3, confirmSeconds: 10 })).toBe('0 confirmed; no run was VALID');
  });

  it('leaves budget for the confirmation: a search that would run on still ends with its 3 confirming runs', async () => {
    // VALID everywhere: doubling alone would use the whole budget.
    const f = fake(Number.POSITIVE_INFINITY);
    const r = await findConfirmedPeak(f.run, options({ startQps: 1000, maxRuns: 10 }));
    expect(r.runs.filter((x) => x.phase === 'search')).toHaveLength(4);
    expect(r.runs.slice(-3).every((x) => x.phase === 'confirm' && x.valid)).toBe(true);
    expect(r.confirmedQps).toBe(8000);
    expect(r.runs.length).toBeLessThanOrEqual(10);
    // Two confirmations' worth is reserved by default; the search gets the rest.
    const g = await findConfirmedPeak(fake(Number.POSITIVE_INFINITY).run, options({ startQps: 1000, maxRuns: 16 }));
    expect(g.runs.filter((x) => x.phase === 'search')).toHaveLength(10);
  });

  it('reports 0 confirmed and the highest single VALID rate, unconfirmed, when the budget ends first', async () => {
    // Every rate stalls on its 2nd run at it: single runs pass, no rate passes twice in a row.
    const f = fake(50_000, (_qps, attempt) => attempt === 2);
    const r = await findConfirmedPeak(f.run, options({ maxRuns: 12 }));
    expect(r.confirmedQps).toBe(0);
    expect(r.highestValidQps).toBeGreaterThan(40_000);
    expect(r.runs.length).toBeLessThanOrEqual(12);
    expect(describePeak(r, { confirmRuns: 3, confirmSeconds: 10 })).toMatch(/^0 confirmed; highest single VALID run [\d,]+ \(UNCONFIRMED\)$/);
  });

  it('never goes above maxQps nor below minQps, and one confirming run is enough with confirmRuns 1', async () => {
    const f = fake(Number.POSITIVE_INFINITY);
    const r = await findConfirmedPeak(f.run, options({ startQps: 3000, maxQps: 5000, confirmRuns: 1 }));
    expect(Math.max(...r.runs.map((x) => x.targetQps))).toBe(5000);
    expect(r.confirmedQps).toBe(5000);
    expect(r.runs.filter((x) => x.phase === 'confirm')).toHaveLength(1);
    const low = await findConfirmedPeak(fake(0).run, options({ startQps: 50 }));
    expect(low.runs).toHaveLength(0);
  });
});

describe('bench peak confirmation options', () => {
  it('defaults to 3 runs of 10 s, 1 of 0.2 s when tiny', () => {
    expect(peakConfirmation(false)).toEqual({ confirmRuns: 3, confirmSeconds: 10 });
    expect(peakConfirmation(true)).toEqual({ confirmRuns: 1, confirmSeconds: 0.2 });
    expect(peakConfirmation(true, { confirmRuns: 2, confirmSeconds: 1.5 })).toEqual({ confirmRuns: 2, confirmSeconds: 1.5 });
  });

  it('refuses bad values naming the option, the value and what is allowed', () => {
    expect(() => peakConfirmation(false, { confirmRuns: 0 })).toThrow(/confirmRuns must be an integer from 1 to 20, got 0/);
    expect(() => peakConfirmation(false, { confirmRuns: 2.5 })).toThrow(/confirmRuns .* got 2\.5/);
    expect(() => peakConfirmation(false, { confirmSeconds: 0 })).toThrow(/confirmSeconds must be a number of seconds from 0\.1 to 3600, got 0/);
    expect(() => peakConfirmation(false, { confirmSeconds: Number.NaN })).toThrow(/confirmSeconds .* got NaN/);
  });
});

describe('loadgen bench --confirm-runs / --confirm-seconds', () => {
  it.each([
    [['--confirm-runs', '0'], /--confirm-runs must be an integer from 1 to 20, got '0'/],
    [['--confirm-runs', '2.5'], /--confirm-runs must be an integer from 1 to 20, got '2\.5'/],
    [['--confirm-runs', '21'], /--confirm-runs must be an integer from 1 to 20, got '21'/],
    [['--confirm-seconds', 'ten'], /--confirm-seconds must be a number of seconds from 0\.1 to 3600, got 'ten'/],
    [['--confirm-seconds', '0.05'], /--confirm-seconds must be a number of seconds from 0\.1 to 3600, got '0\.05'/],
    [['--confirm-seconds', '-1'], /--confirm-seconds/],
    [['--soak', '3', '--confirm-runs', '2'], /cannot be used with option '--confirm-runs/],
  ])('refuses %j before anything runs (exit 2)', (args, message) => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});

describe('bench targets: confirmed peaks and flat memory', () => {
  const report = (o: Partial<BenchReport>): BenchReport => ({
    config: { tiny: false, repeat: 3 },
    platform: { tsfnWakeNs: { p50: 1, p99: 1 } },
    server: [],
    serverMaxValidQps: { wake: 1_200_000, poll: 1_100_000, worker: 1_000_000, 'null-native': 2_500_000 },
    serverPeaks: [],
    peakProcedure: { confirmRuns: 3, confirmSeconds: 10 },
    singleStreamQps: {},
    offlineSamplesPerSec: {},
    bytesPerSampleByRun: [{ samples: 1_000_000, bytesPerSample: 40 }, { samples: 4_000_000, bytesPerSample: 38 }],
    network: { confirmation: { confirmRuns: 3, confirmSeconds: 10 }, closedLoop: [], peaks: [], clientShare: [], tokens: null, connections: 32 },
    ...o,
  } as unknown as BenchReport);
  const peakTarget = (r: BenchReport) => evaluateTargets(r).find((t) => t.target.startsWith('highest VALID Server QPS'))!;
  const memoryTarget = (r: BenchReport) => evaluateTargets(r).find((t) => t.target.startsWith('<= 64 bytes'))!;

  it('judges the confirmed peaks only and shows a higher single run as unconfirmed', () => {
    expect(peakTarget(report({})).holds).toBe('yes');
    expect(peakTarget(report({})).target).toContain('confirmed by 3 consecutive VALID 10-s runs');
    const r = report({
      serverMaxValidQps: { wake: 0, poll: 1_100_000, worker: 1_000_000, 'null-native': 2_500_000 },
      serverPeaks: [{ sut: 'wake', confirmedQps: 0, highestValidQps: 1_500_000, bracket: { peakQps: 2e6, trials: 30, trialSeconds: 1 }, runs: [] }],
    });
    expect(peakTarget(r).holds).toBe('no');
    expect(peakTarget(r).measured).toContain('wake 0 (single run 1,500,000, unconfirmed)');
  });

  it('judges the issue-13 targets: the 100k tail in either mode, SingleStream rate and p90, Offline in the best mode', () => {
    const row = (sut: string, p50: number, p99: number) => ({ sut, targetQps: 100_000, pinned: false, pinRequested: false, latencyNs: { p50, p99, p999: p99 } });
    const find = (r: BenchReport, start: string) => evaluateTargets(r).find((t) => t.target.startsWith(start))!;
    const tail = (server: unknown[]) => find(report({ server } as Partial<BenchReport>), 'JS null SUT at 100k QPS');
    expect(tail([row('wake', 9_000, 250_000), row('poll', 1_000, 150_000)]).holds).toBe('yes');
    expect(tail([row('wake', 9_000, 250_000), row('poll', 1_000, 150_000)]).measured).toContain('met by poll');
    expect(tail([row('wake', 11_000, 150_000), row('poll', 1_000, 250_000)]).holds).toBe('no');
    const single = (qps: number, p90: number) => find(report({ singleStreamQps: { wake: qps }, singleStreamP90Ns: { wake: p90 } }), 'SingleStream');
    expect(single(3_500_000, 250).holds).toBe('yes');
    expect(single(3_500_000, 350).holds).toBe('no');
    expect(single(2_500_000, 250).holds).toBe('no');
    const offline = (o: Record<string, number>) => find(report({ offlineSamplesPerSec: o }), 'Offline 1M samples');
    expect(offline({ wake: 10e6, poll: 31e6, worker: 5e6 }).holds).toBe('yes');
    expect(offline({ wake: 10e6, poll: 29e6, worker: 5e6 }).holds).toBe('no');
  });

  it('memory holds when <= 64 B at both lengths and the longer run is not above 1.25x the shorter', () => {
    expect(memoryTarget(report({})).holds).toBe('yes');
    const growing = report({ bytesPerSampleByRun: [{ samples: 1_000_000, bytesPerSample: 30 }, { samples: 4_000_000, bytesPerSample: 45 }] });
    expect(memoryTarget(growing).holds).toBe('no');
    expect(memoryTarget(growing).measured).toContain("longest run > 1.25 x the shortest's");
    expect(memoryTarget(report({ bytesPerSampleByRun: [{ samples: 1_000_000, bytesPerSample: 30 }] })).holds).toBe('n/a');
  });
});
