/**
 * The issue-5 targets, each evaluated against the figures of a report that
 * decide it ('n/a' when a figure was not measured).
 */
import type { BenchReport, BenchTarget, ServerRow } from './report-types.js';
import { fmt, us } from './figures.js';
import { evaluateNetworkTargets } from './net-format.js';
import { BENCH_SUTS, offlineSamples, type BenchSut } from './trials.js';

/** The rate the issue-5 targets are stated at. */
const TARGET_QPS = 10000;

/** A 10k QPS row: pinned, or the plain one (unpinned, not a failed pin, default dispatchSpinUs and wakeLeadUs). */
function targetRow(r: BenchReport, sut: BenchSut, pinned: boolean): ServerRow | undefined {
  return r.server.find((row) =>
    row.sut === sut && row.targetQps === TARGET_QPS && !row.dispatchSpinUs && !row.wakeLeadUs &&
    (pinned ? row.pinned : !row.pinned && !row.pinRequested));
}

/** The unpinned 10k QPS row of `sut` with a non-default dispatch option (`option` > 0). */
function optionRow(r: BenchReport, sut: BenchSut, option: (row: ServerRow) => number): ServerRow | undefined {
  return r.server.find((row) => row.sut === sut && row.targetQps === TARGET_QPS && !row.pinned && !row.pinRequested && option(row) > 0);
}

/** Every check must hold; one that fails decides 'no', one with a missing figure (undefined) 'n/a'. */
function allHold(checks: (boolean | undefined)[]): BenchTarget['holds'] {
  if (checks.includes(false)) return 'no';
  return checks.includes(undefined) ? 'n/a' : 'yes';
}

function atMost(value: number | undefined, bound: number | undefined): boolean | undefined {
  return value === undefined || bound === undefined || Number.isNaN(value) || Number.isNaN(bound) ? undefined : value <= bound;
}

function atLeast(value: number | undefined, bound: number): boolean | undefined {
  return value === undefined || Number.isNaN(value) ? undefined : value >= bound;
}

/** The issue-5 targets, each with the figures of this report that decide it. */
export function evaluateTargets(r: BenchReport): BenchTarget[] {
  const targets: BenchTarget[] = [];

  const poll = targetRow(r, 'poll', false)?.deliveryLagNs;
  const pureJs = targetRow(r, 'pure-js', false)?.issueLatenessNs;
  targets.push({
    target: 'poll delivery lag <= pure-JS issue lateness at 10k QPS (p50, p99)',
    measured: `p50 ${us(poll?.p50)} us vs ${us(pureJs?.p50)} us; p99 ${us(poll?.p99)} us vs ${us(pureJs?.p99)} us`,
    holds: allHold([atMost(poll?.p50, pureJs?.p50), atMost(poll?.p99, pureJs?.p99)]),
  });

  // The default wake, and one with a wake lead (wakeLeadUs). Either may meet it.
  const wakeP99 = r.platform.tsfnWakeNs.p99;
  const wakeRows = [
    { label: 'default', row: targetRow(r, 'wake', false) },
    { label: 'lead', row: optionRow(r, 'wake', (row) => row.wakeLeadUs) },
  ].map(({ label, row }) => {
    const p99 = row?.deliveryLagNs?.p99;
    return { label: row?.wakeLeadUs ? `lead ${fmt(row.wakeLeadUs)}us` : label, p99, meets: allHold([atMost(p99, 2 * wakeP99)]) };
  });
  const wakeMetBy = wakeRows.filter((w) => w.meets === 'yes').map((w) => w.label);
  targets.push({
    target: 'wake delivery lag p99 <= 2 x raw threadsafe-function wake p99',
    measured: wakeRows.map((w) => `${w.label}: ${us(w.p99)} us`).join(', ') + ` at 10k QPS vs 2 x ${us(wakeP99)} us` +
      (wakeMetBy.length ? `; met by ${wakeMetBy.join(' and ')}` : ''),
    holds: wakeMetBy.length ? 'yes' : wakeRows.some((w) => w.meets === 'n/a') ? 'n/a' : 'no',
  });

  // The default worker sleeps when idle; a spinning one (dispatchSpinUs) skips the futex wake. Either may meet it.
  const workerRows = [
    { name: 'default', row: targetRow(r, 'worker', false) },
    { name: 'spinning', row: optionRow(r, 'worker', (row) => row.dispatchSpinUs) },
  ].map(({ name, row }) => {
    const lag = row?.deliveryLagNs ?? undefined;
    const label = row?.dispatchSpinUs ? `spin ${fmt(row.dispatchSpinUs)}us` : name;
    return { label, lag, meets: allHold([atMost(lag?.p50, 5000), atMost(lag?.p99, 100_000)]) };
  });
  const metBy = workerRows.filter((w) => w.meets === 'yes').map((w) => w.label);
  targets.push({
    target: 'worker delivery lag p50 <= 5 us, p99 <= 100 us at 10k QPS',
    measured: workerRows.map((w) => `${w.label}: p50 ${us(w.lag?.p50)} us, p99 ${us(w.lag?.p99)} us`).join('; ') +
      (metBy.length ? `; met by ${metBy.join(' and ')}` : ''),
    holds: metBy.length ? 'yes' : workerRows.some((w) => w.meets === 'n/a') ? 'n/a' : 'no',
  });

  // Each pinned row with the CPU-1 noise floor probed right before its repetitions.
  const pinnedLateness = BENCH_SUTS.map((sut) => {
    const row = targetRow(r, sut, true);
    return { sut, p99: row?.issueLatenessNs?.p99, floor: row?.floorNs?.p99 };
  });
  targets.push({
    target: 'issue lateness p99 <= 1 us at 10k QPS, issue thread pinned, every SUT',
    measured: pinnedLateness.map((l) => `${l.sut} ${us(l.p99)} us (floor ${us(l.floor)} us)`).join(', ') +
      '; floor: lateness p99 at a random instant on CPU 1, from its noise probed before each repetition',
    holds: allHold(pinnedLateness.map((l) => atMost(l.p99, 1000))),
  });

  // The confirmed peaks only; an unconfirmed single VALID run is shown, not judged.
  const peaks = r.serverMaxValidQps;
  const c = r.peakProcedure;
  const unconfirmed = (sut: BenchSut) => {
    const row = r.serverPeaks?.find((p) => p.sut === sut);
    return row && row.highestValidQps > row.confirmedQps ? ` (single run ${fmt(row.highestValidQps)}, unconfirmed)` : '';
  };
  targets.push({
    target: `highest VALID Server QPS, confirmed by ${c?.confirmRuns ?? '-'} consecutive VALID ${c?.confirmSeconds ?? '-'}-s runs: ` +
      'JS null (wake, poll, worker) >= 1,000,000; null-native >= 2,000,000',
    measured: (['wake', 'poll', 'worker', 'null-native'] as const).map((sut) => `${sut} ${fmt(peaks[sut])}${unconfirmed(sut)}`).join(', '),
    holds: allHold([
      atLeast(peaks.wake, 1_000_000),
      atLeast(peaks.poll, 1_000_000),
      atLeast(peaks.worker, 1_000_000),
      atLeast(peaks['null-native'], 2_000_000),
    ]),
  });

  // Issue 13: the JS SUT's tail at 100k QPS, either dispatch mode on the main thread (unpinned rows of 10 s).
  const tail = (['wake', 'poll'] as const).map((sut) => {
    const row = r.server.find((x) => x.sut === sut && x.targetQps === 100_000 && !x.pinned && !x.pinRequested && !x.dispatchSpinUs && !x.wakeLeadUs);
    const l = row?.latencyNs;
    return { sut, l, meets: allHold([atMost(l?.p50, 10_000), atMost(l?.p99, 200_000)]) };
  });
  const tailMetBy = tail.filter((t) => t.meets === 'yes').map((t) => t.sut);
  targets.push({
    target: 'JS null SUT at 100k QPS (wake or poll): latency p50 <= 10 us, p99 <= 200 us',
    measured: tail.map((t) => `${t.sut}: p50 ${us(t.l?.p50)} us, p99 ${us(t.l?.p99)} us`).join('; ') +
      (tailMetBy.length ? `; met by ${tailMetBy.join(' and ')}` : ''),
    holds: tailMetBy.length ? 'yes' : tail.some((t) => t.meets === 'n/a') ? 'n/a' : 'no',
  });

  targets.push({
    target: 'SingleStream with the JS null SUT (wake) >= 3,000,000 queries/s, p90 <= 300 ns',
    measured: `wake ${fmt(r.singleStreamQps.wake)} queries/s, p90 ${fmt(r.singleStreamP90Ns?.wake)} ns`,
    holds: allHold([atLeast(r.singleStreamQps.wake, 3_000_000), atMost(r.singleStreamP90Ns?.wake, 300)]),
  });

  // The best dispatch mode for the row (issue 13: "best dispatch mode for the row").
  const jsOffline = (['wake', 'poll', 'worker'] as const).map((sut) => ({ sut, v: r.offlineSamplesPerSec[sut] }));
  const bestOffline = jsOffline.reduce((a, b) => ((b.v ?? -1) > (a.v ?? -1) ? b : a));
  targets.push({
    target: 'Offline 1M samples, JS null SUT (best dispatch mode) >= 30,000,000 samples/s',
    measured: `${jsOffline.map((o) => `${o.sut} ${fmt(o.v)}`).join(', ')} (${fmt(offlineSamples(r.config.tiny))} samples)`,
    holds: allHold([atLeast(bestOffline.v, 30_000_000)]),
  });

  // Flat: the longest run's bytes per sample at most 1.25x the shortest's (a fixed cost shrinks per sample; a per-sample leak grows).
  const byLength = [...r.bytesPerSampleByRun].sort((a, b) => a.samples - b.samples);
  const shortest = byLength[0];
  const longest = byLength[byLength.length - 1];
  const flat = byLength.length >= 2 && longest!.samples > shortest!.samples ? atMost(longest!.bytesPerSample, 1.25 * shortest!.bytesPerSample) : undefined;
  targets.push({
    target: '<= 64 bytes per recorded sample, flat with run length',
    measured: (r.bytesPerSampleByRun.map((m) => `${fmt(m.bytesPerSample, 1)} B over ${fmt(m.samples)}`).join(', ') || '-') +
      (flat === undefined ? '' : `; longest run ${flat ? '<=' : '>'} 1.25 x the shortest's`),
    holds: allHold([...r.bytesPerSampleByRun.map((m) => atMost(m.bytesPerSample, 64)), flat]),
  });
  targets.push(...evaluateNetworkTargets(r.network));
  return targets;
}

/** Targets as a Markdown table (`| Target | Measured | Holds |`). */
export function targetsTable(targets: readonly BenchTarget[]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return [
    '| Target | Measured | Holds |',
    '|---|---|---|',
    ...targets.map((t) => `| ${cell(t.target)} | ${cell(t.measured)} | ${t.holds} |`),
  ].join('\n');
}

/** The issue-5 and issue-12 targets as a Markdown table. */
export function formatTargets(r: BenchReport): string {
  return targetsTable(evaluateTargets(r));
}

