/**
 * The benchmark report as plain text, ending with the targets table.
 */
import type { BenchReport, CpuNoiseFigure } from './report-types.js';
import { fmt, serverRowLabel, us } from './figures.js';
import { formatNetworkBench } from './net-format.js';
import { describePeak, describeRuns } from './peak.js';
import { formatTargets } from './targets.js';
import { BENCH_SUTS, type BenchSut } from './trials.js';

/** The CPU-noise line: how often the (pinned) CPU is taken away, and the lateness floor that sets. */
function formatCpuNoise(n: CpuNoiseFigure): string {
  const where = n.pinned ? `pinned CPU ${n.cpu}${n.restOnCpu0 ? '' : ' (rest of the process not confined to CPU 0)'}` : 'unpinned thread';
  return `${where} noise: ${fmt(n.gapsPerSecond)} gaps/s, ${fmt(n.lostFraction * 100, 3)}% of time lost, gap p99 ${us(n.gapNs.p99)} us; ` +
    `lateness floor at a random instant p99 ${us(n.residualNs.p99)} us, p99.9 ${us(n.residualNs.p999)} us`;
}

/** The report as a plain-text table, followed by the targets table. */
export function formatBenchReport(r: BenchReport): string {
  const lines: string[] = [];
  lines.push(`loadgen bench — ${r.date} — ${r.machine.cpu} (${r.machine.cpus} CPUs), Node ${r.machine.node}`);
  lines.push(`medians of ${r.config.repeat} fresh-process trial(s)${r.config.tiny ? ' (tiny configuration)' : ''}`);
  lines.push('');
  lines.push(`platform: clock read ${fmt(r.platform.clockReadNs, 1)} ns, JS->native call ${fmt(r.platform.jsToNativeCallNs, 1)} ns, ` +
    `threadsafe-function wake p50 ${us(r.platform.tsfnWakeNs.p50)} us, p99 ${us(r.platform.tsfnWakeNs.p99)} us`);
  lines.push(formatCpuNoise(r.platform.cpuNoise));
  lines.push('');
  const labelWidth = Math.max(31, ...r.server.map((row) => serverRowLabel(row).length));
  lines.push(`${'Server (latencies in us)'.padEnd(labelWidth)} valid  achieved QPS    lat p50   lat p99  lat p99.9   late p50  late p99   lag p50   lag p99`);
  for (const row of r.server) {
    lines.push(
      `${serverRowLabel(row).padEnd(labelWidth)} ${(row.valid ? 'yes' : 'NO').padEnd(5)} ${fmt(row.achievedQps.median).padStart(13)}` +
        ` ${us(row.latencyNs.p50).padStart(10)} ${us(row.latencyNs.p99).padStart(9)} ${us(row.latencyNs.p999).padStart(10)}` +
        ` ${us(row.issueLatenessNs?.p50).padStart(10)} ${us(row.issueLatenessNs?.p99).padStart(9)}` +
        ` ${us(row.deliveryLagNs?.p50).padStart(9)} ${us(row.deliveryLagNs?.p99).padStart(9)}`,
    );
  }
  lines.push('');
  const keyed = (title: string, values: Partial<Record<BenchSut, number>>, unit: string) =>
    `${title.padEnd(30)} ${BENCH_SUTS.map((s) => `${s}: ${fmt(values[s])}`).join('   ')} ${unit}`;
  const p = r.peakProcedure;
  const st = p.settings;
  lines.push(`highest VALID Server QPS: confirmed by ${p.confirmRuns} consecutive VALID run(s) of ${p.confirmSeconds} s, each a fresh process ` +
    `(${st.model} Server, built-in mlperf.conf: p${fmt(st.targetLatencyPercentile * 100)} <= ${fmt(st.targetLatencyNs / 1e6)} ms, early stopping, ` +
    `min_query_count ${fmt(st.minQueryCount)}, min_duration ${fmt(st.minDurationMs / 1000, 1)} s (mlperf.conf: ${fmt(st.mlperfConfMinDurationMs / 1000)} s)); ` +
    `one search per row, not x${r.config.repeat}: the confirmation replaces the repetitions`);
  for (const row of r.serverPeaks) {
    lines.push(`  ${row.sut.padEnd(12)} ${describePeak(row, p)}`);
    lines.push(`  ${''.padEnd(12)} bracket ${fmt(row.bracket.peakQps)} (${row.sut === 'pure-js' ? 'doubling and bisection' : 'FindPeakPerformance'}, ${row.bracket.trials} trials of ${row.bracket.trialSeconds} s); ` +
      `runs (c: confirming, ✗ INVALID): ${describeRuns(row.runs)}`);
  }
  lines.push(keyed('SingleStream queries/s', r.singleStreamQps, ''));
  lines.push(keyed('SingleStream p90 latency', r.singleStreamP90Ns, 'ns'));
  lines.push(keyed('Offline samples/s', r.offlineSamplesPerSec, ''));
  lines.push(`  (the JS null SUT above takes issueQueryIds; on the object path, issueQuery, dispatch wake: SingleStream ${fmt(r.objectPath.singleStreamQps)} queries/s, ` +
    `p90 ${fmt(r.objectPath.singleStreamP90Ns)} ns; Offline ${fmt(r.objectPath.offlineSamplesPerSec)} samples/s)`);
  lines.push(`memory per recorded sample      ${r.bytesPerSampleByRun.map((m) => `${fmt(m.bytesPerSample, 1)} B over ${fmt(m.samples)} samples`).join(', ')}`);
  lines.push('');
  lines.push(formatNetworkBench(r.network));
  lines.push('');
  lines.push(formatTargets(r));
  return lines.join('\n');
}
