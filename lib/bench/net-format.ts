/**
 * The network rows as text, and the issue-12 targets evaluated against them.
 */
import type { BenchTarget } from './report-types.js';
import { fmt, us } from './figures.js';
import { dispatchLabel, nativeDispatchThreads } from './net-labels.js';
import { median } from './median.js';
import type { NetworkBenchReport, PeakRow } from './net.js';
import { describePeak, describeRuns } from './peak.js';
import { cpuListText, SERVER_LIMIT_BUSY } from './cpu-layout.js';

/** What a target needs: a missing figure (undefined/NaN) makes it 'n/a'; one failing check 'no'. */
function holds(checks: (boolean | undefined)[]): BenchTarget['holds'] {
  if (checks.includes(false)) return 'no';
  return checks.includes(undefined) || checks.length === 0 ? 'n/a' : 'yes';
}

function atMost(value: number | undefined, bound: number): boolean | undefined {
  return value === undefined || Number.isNaN(value) ? undefined : value <= bound;
}

/** The client-share row at `qps` read as the C floor is (JS reading no body), else the one there is (older reports). */
function likeTheFloor(n: NetworkBenchReport, qps: number): NetworkBenchReport['clientShare'][number] | undefined {
  const rows = n.clientShare.filter((r) => r.targetQps === qps);
  return rows.find((r) => r.bodiesReadInJs === false) ?? rows[0];
}

/** The issue-12 targets (docs/overhead-and-benchmarks.md, "Benchmarks of the network path"; benchmarks/RESULTS.md). */
export function evaluateNetworkTargets(n: NetworkBenchReport): BenchTarget[] {
  const targets: BenchTarget[] = [];
  const autocannon = n.closedLoop.find((row) => row.tool === 'autocannon')?.requestsPerSec?.median;
  const wrk = n.closedLoop.find((row) => row.tool === 'wrk')?.requestsPerSec?.median;
  const peaks = n.peaks.filter((p) => p.runs.length > 0);
  const best = peaks.length ? Math.max(...peaks.map((p) => p.peakQps)) : undefined;
  const metBy = autocannon === undefined ? [] : peaks.filter((p) => p.peakQps >= autocannon).map((p) => p.dispatch);
  targets.push({
    target: `network: loadgen's open-loop VALID Server rate (p99 <= 10 ms), confirmed by ${n.confirmation.confirmRuns} consecutive VALID ` +
      `${n.confirmation.confirmSeconds}-s runs, >= autocannon's closed-loop rate, same server and connections`,
    // The confirmed peaks decide; a higher single VALID run is shown, labelled unconfirmed.
    measured: `${n.peaks.map((p) => `${p.dispatch} ${fmt(p.runs.length ? p.peakQps : undefined)}` +
      (p.highestValidQps > p.peakQps ? ` (single run ${fmt(p.highestValidQps)}, unconfirmed)` : '')).join(', ')} confirmed vs autocannon ${fmt(autocannon)}` +
      ` (wrk ${fmt(wrk)}) requests/s, ${n.connections} connections` + (metBy.length ? `; met by ${metBy.join(' and ')}` : ''),
    holds: best === undefined || autocannon === undefined ? 'n/a' : best >= autocannon ? 'yes' : 'no',
  });

  const shares = [1000, 10_000].map((qps) => ({ qps, row: likeTheFloor(n, qps) }));
  targets.push({
    target: "network: the client's share of each request's latency (loadgen's latency - server send-recv) p50 <= 50 us at 1k and 10k requests/s",
    measured: shares.map(({ qps, row }) => `${fmt(qps)}/s: p50 ${us(row?.clientNs.p50)} us, p99 ${us(row?.clientNs.p99)} us` +
      (row ? ` (${row.dispatch})` : '')).join('; '),
    holds: holds(shares.map(({ row }) => atMost(row?.clientNs.p50, 50_000))),
  });
  // Against the C open-loop floor (spin: its issue path waits as loadgen's does) at the same rate and server.
  const share10k = shares[1]!.row;
  const floor10k = n.floorClient?.find((r) => r.targetQps === 10_000 && r.mode === 'spin');
  targets.push({
    target: "network: the client's share p99 at 10k requests/s <= 2 x the C open-loop floor's (spin), same server, JS reading no body as the floor",
    measured: share10k && floor10k
      ? `p99 ${us(share10k.clientNs.p99)} us against 2 x ${us(floor10k.clientNs.p99)} us (${fmt(share10k.clientNs.p99 / floor10k.clientNs.p99, 2)} x)` +
        (share10k.bodiesReadInJs === false ? '' : '; the row read every body in JS')
      : '-',
    holds: holds([share10k && floor10k && share10k.bodiesReadInJs === false ? atMost(share10k.clientNs.p99, 2 * floor10k.clientNs.p99) : undefined]),
  });

  const t = n.tokens;
  targets.push({
    target: "network: TTFT and TPOT error against the OpenAI stub's schedule p99 <= 200 us at 20 requests/s",
    measured: t
      ? `TTFT error p50 ${us(t.ttftErrorNs.p50)} us, p99 ${us(t.ttftErrorNs.p99)} us; TPOT error p50 ${us(t.tpotErrorNs.p50)} us, p99 ${us(t.tpotErrorNs.p99)} us ` +
        `(schedule ${t.ttftMs} ms + ${t.tpotMs} ms/token, ${t.outputTokens} tokens)`
      : '-',
    holds: holds([atMost(t?.ttftErrorNs.p99, 200_000), atMost(t?.tpotErrorNs.p99, 200_000)]),
  });
  const c = t?.clientTtftErrorNs ?? undefined;
  const floorP99 = t?.floorNs?.p99;
  targets.push({
    target: "network: the client's own TTFT error (its TTFT - the stub's hold, request by request) p99 <= the idle round trip's p99 + 200 us",
    measured: c && floorP99 !== undefined
      ? `p50 ${us(c.p50)} us, p99 ${us(c.p99)} us against ${us(floorP99)} + 200 us (${fmt(c.matched)} of ${fmt(c.requests)} requests paired)`
      : '-',
    holds: holds([c && floorP99 !== undefined ? atMost(c.p99, floorP99 + 200_000) : undefined]),
  });
  return targets;
}

/** One row of a scaling table: the native transport's confirmed peak with `threads` client threads. */
export interface ScalingRow {
  threads: number;
  /** Every response body read by the mapping in JS ('native', 'native-xN'); false: none ('native-noread', 'native-noread-xN'). */
  bodiesReadInJs: boolean;
  peakQps: number;
  /** peakQps against the one-thread row's (undefined without one, or when it confirmed none). */
  vsOneThread: number | undefined;
  /** Medians over the confirming runs (undefined when none confirmed or not measured). */
  cpuPerRequestNs: number | undefined;
  /** Of that CPU time, the kernel's share (0..1). */
  kernelCpuShare: number | undefined;
  serverBusy: number | undefined;
  clientCpus: number[] | undefined;
  serverCpus: number[] | undefined;
  /** What stopped the next higher rate: the lowest INVALID run above the peak, read as the server's or the client's limit. */
  limit: string;
}

/** ' (K % in the kernel)' for a known share, '' otherwise. */
function kernelText(share: number | undefined): string {
  return share === undefined || !Number.isFinite(share) ? '' : ` (${Math.round(share * 100)} % in the kernel)`;
}

function limitOf(p: PeakRow): string {
  if (p.note !== undefined) return `failed: ${p.note}`;
  if (p.peakQps === 0) return 'no rate was confirmed';
  const above = p.runs.filter((r) => !r.valid && r.targetQps > p.peakQps).sort((a, b) => a.targetQps - b.targetQps)[0];
  if (above === undefined) return "not reached: no run above the peak failed (the search's budget ended)";
  const at = `at ${fmt(above.targetQps)}/s`;
  if (above.failed) return `${fmt(above.failed)} requests failed ${at}`;
  if (above.serverBusy === undefined) return `the first INVALID run ${at} (server busy not measured)`;
  const busy = `${Math.round(above.serverBusy * 100)} % busy`;
  return above.serverBusy >= SERVER_LIMIT_BUSY ? `the server (${busy} ${at})` : `the client (the server ${busy} ${at})`;
}

/**
 * The native rows by client threads (1: the single-thread row), each family (bodies read in JS or
 * not) in thread order, a family with one row left out.
 */
export function scalingRows(n: NetworkBenchReport): ScalingRow[] {
  const all = n.peaks.map((p) => ({ p, of: nativeDispatchThreads(p.dispatch) }))
    .filter((r): r is { p: PeakRow; of: { threads: number; bodiesReadInJs: boolean } } => r.of !== undefined);
  return [true, false].flatMap((bodiesReadInJs) => {
    const rows = all.filter((r) => r.of.bodiesReadInJs === bodiesReadInJs).sort((a, b) => a.of.threads - b.of.threads);
    return rows.length < 2 ? [] : familyRows(rows.map((r) => ({ p: r.p, threads: r.of.threads })), bodiesReadInJs);
  });
}

function familyRows(rows: { p: PeakRow; threads: number }[], bodiesReadInJs: boolean): ScalingRow[] {
  const one = rows.find((r) => r.threads === 1)?.p.peakQps;
  return rows.map(({ p, threads }) => {
    const confirming = p.peakQps > 0 ? p.runs.filter((r) => r.phase === 'confirm' && r.valid && r.targetQps === p.peakQps) : [];
    const of = (values: (number | undefined)[]) => {
      const known = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
      return known.length ? median(known) : undefined;
    };
    return {
      threads,
      bodiesReadInJs,
      peakQps: p.peakQps,
      vsOneThread: one !== undefined && one > 0 && p.peakQps > 0 ? p.peakQps / one : undefined,
      cpuPerRequestNs: of(confirming.map((r) => r.cpuPerRequestNs)),
      kernelCpuShare: of(confirming.map((r) => r.kernelCpuShare)),
      serverBusy: of(confirming.map((r) => r.serverBusy)),
      clientCpus: p.clientCpus,
      serverCpus: p.serverCpus,
      limit: limitOf(p),
    };
  });
}

/** The network rows as plain text (no targets table). */
export function formatNetworkBench(n: NetworkBenchReport): string {
  const lines: string[] = [];
  const s = n.server;
  if (s) {
    const probes = s.probes.map((p) => `${p.kind} ${p.requestsPerSec === null ? (p.note ?? '-') : `${fmt(p.requestsPerSec)}/s`}`).join(', ');
    const where = !s.pinned ? ', unpinned'
      : s.cpus ? `, server on CPU${s.cpus.server.length > 1 ? 's' : ''} ${cpuListText(s.cpus.server)} (a C process on each), clients on CPU${s.cpus.client.length > 1 ? 's' : ''} ${cpuListText(s.cpus.client)}`
      : ', server on CPU 1, clients on CPU 0';
    lines.push(`network (127.0.0.1, ${n.connections} keep-alive connections${where}): ` +
      `${s.kind === 'c' ? 'C' : 'node:http'} stamp server (closed-loop probe: ${probes}); ` +
      `its CLOCK_MONOTONIC stamps inside the client's clockNs() window: ${s.clockShared ? 'yes' : 'NO'} (${s.clockChecks} requests)`);
  } else {
    lines.push('network: no server could be started');
  }
  for (const row of n.closedLoop) {
    lines.push(`  ${`${row.tool} closed loop`.padEnd(34)} ${row.requestsPerSec
      ? `${fmt(row.requestsPerSec.median)} requests/s (${fmt(row.requestsPerSec.min)}..${fmt(row.requestsPerSec.max)})` +
        (row.serverBusy !== undefined ? `, server CPUs ${Math.round(row.serverBusy * 100)} % busy${row.serverBusy >= SERVER_LIMIT_BUSY ? ' (the server was the limit)' : ''}` : '') +
        (row.cpuPerRequestNs !== undefined ? `; its own CPU ${us(row.cpuPerRequestNs)} us/request${kernelText(row.kernelCpuShare)}` : '')
      : `skipped: ${row.note}`}`);
  }
  const c = n.confirmation;
  if (n.peaks.length) {
    lines.push(`  ${'open-loop peaks (requests/s)'.padEnd(34)} confirmed by ${c.confirmRuns} consecutive VALID run(s) of ${c.confirmSeconds} s ` +
      '(p99 <= 10 ms, early stopping); one search each (the confirmation replaces repetitions)');
  }
  for (const p of n.peaks) {
    const peak = describePeak({ confirmedQps: p.peakQps, highestValidQps: p.highestValidQps, runs: p.runs }, c);
    lines.push(`  ${`loadgen open loop, ${dispatchLabel(p.dispatch)}`.padEnd(34)} ` +
      `${p.note ? `failed: ${p.note}` : `${peak}; runs (c: confirming, ✗ INVALID): ${describeRuns(p.runs)}`}`);
    // A row whose layout is not the single-thread rows' says where it ran; any row the server limited says so.
    if (p.clientCpus !== undefined && p.serverCpus !== undefined && s?.cpus !== undefined && p.clientCpus.length !== s.cpus.client.length)
      lines.push(`  ${''.padEnd(34)} client on CPUs ${cpuListText(p.clientCpus)}, its own server on ${cpuListText(p.serverCpus)}`);
    if (p.serverLimit !== undefined) lines.push(`  ${''.padEnd(34)} ${p.serverLimit}`);
  }
  const scaled = scalingRows(n);
  for (const bodiesReadInJs of [true, false]) {
    const family = scaled.filter((r) => r.bodiesReadInJs === bodiesReadInJs);
    if (family.length === 0) continue;
    lines.push(`  ${`scaling, native${bodiesReadInJs ? ', bodies in JS' : ', no body in JS'}`.padEnd(34)} ` +
      'confirmed peak; client CPU per request and server busy over the confirming runs; what failed the next rate');
    for (const r of family) {
      const where = r.clientCpus && r.serverCpus ? ` (client CPUs ${cpuListText(r.clientCpus)}, server ${cpuListText(r.serverCpus)})` : '';
      lines.push(`  ${`${r.threads} client thread${r.threads > 1 ? 's' : ''}${where}`.padEnd(34)} ${fmt(r.peakQps).padStart(10)}/s` +
        ` ${r.vsOneThread === undefined ? '     -  ' : `${fmt(r.vsOneThread, 2).padStart(6)} x`}` +
        `  CPU ${us(r.cpuPerRequestNs).padStart(6)} us/req${kernelText(r.kernelCpuShare)}  server ${r.serverBusy === undefined ? '-' : `${Math.round(r.serverBusy * 100)} %`} busy; limit: ${r.limit}`);
    }
  }
  const f = n.floorPeak;
  if (f) {
    const peak = describePeak({ confirmedQps: f.peakQps, highestValidQps: f.highestValidQps, runs: f.runs }, c);
    lines.push(`  ${'open-loop floor, C client (spin)'.padEnd(34)} ` +
      `${f.note ? `failed: ${f.note}` : `${peak}; runs (c: confirming, ✗ INVALID): ${describeRuns(f.runs)}`}`);
    if (f.serverLimit !== undefined) lines.push(`  ${''.padEnd(34)} ${f.serverLimit}`);
  }
  const closing = (): string => {
    if (n.loadAverage) lines.push(`  machine load average (1 min): ${fmt(n.loadAverage.start, 2)} at the start, ${fmt(n.loadAverage.end, 2)} at the end`);
    for (const note of n.notes) lines.push(`  note: ${note}`);
    return lines.join('\n');
  };
  if (n.rows === 'scaling') return closing();
  const cells = (values: string[], widths: number[]) => values.map((v, i) => ` ${v.padStart(widths[i]!)}`).join('');
  const widths = [10, 10, 10, 10, 10, 12, 9, 9, 9];
  if (n.clientShare.length && s?.shareServer === 'c-spin') {
    lines.push(`  ${''.padEnd(34)} client share and floor: against the C server polling epoll (its receive stamp is not late by its own wake-up)`);
  }
  lines.push(`  ${'client share (us)'.padEnd(34)} ${'valid'.padEnd(5)}` +
    cells(['lat p50', 'lat p99', 'server p50', 'client p50', 'client p99', 'client p99.9', 'lag p50', 'lag p99', 'CPU/req'], widths) + '  matched');
  for (const r of n.clientShare) {
    lines.push(`  ${`${fmt(r.targetQps)} requests/s, ${r.dispatch}${r.bodiesReadInJs === false ? '' : ' + JS'}`.padEnd(34)} ${(r.valid ? 'yes' : 'NO').padEnd(5)}` +
      cells([r.latencyNs.p50, r.latencyNs.p99, r.serverNs.p50, r.clientNs.p50, r.clientNs.p99, r.clientNs.p999, r.deliveryLagNs?.p50, r.deliveryLagNs?.p99, r.cpuPerRequestNs].map(us), widths) +
      `  ${fmt(r.matched)}/${fmt(r.samples)}`);
  }
  for (const r of n.floorClient ?? []) {
    lines.push(`  ${`${fmt(r.targetQps)} requests/s, C floor (${r.mode})`.padEnd(34)} ${(r.valid ? 'yes' : 'NO').padEnd(5)}` +
      cells([r.latencyNs.p50, r.latencyNs.p99, undefined, r.clientNs.p50, r.clientNs.p99, r.clientNs.p999, r.latenessNs.p50, r.latenessNs.p99, r.cpuPerRequestNs].map(us), widths));
  }
  if (n.floorClient?.length) {
    lines.push(`  ${''.padEnd(34)} C floor: benchmarks/floor-client.c, one thread, epoll, no JS; lag: scheduled -> its write; ` +
      "sleep: to each due time, spin: through a window before it, as loadgen's issue thread");
  }
  lines.push(`  ${'floor: wrk, 1 connection'.padEnd(34)} ${n.floorNs ? `round trip p50 ${us(n.floorNs.p50)} us, p99 ${us(n.floorNs.p99)} us (closed loop, no Node client)` : 'skipped: wrk is not on PATH'}`);
  if (n.clientShare.length) {
    lines.push(`  ${''.padEnd(34)} CPU/req: the client process's CPU time per request, every thread (the core's issue thread's spin before each due query included)`);
    lines.push(`  ${''.padEnd(34)} + JS: the server's stamps read from every response body by the mapping in JS; else from the C server's own record, JS reading no body (as the C floor)`);
  }
  const t = n.tokens;
  if (t) {
    lines.push(`  ${`OpenAI stub, ${t.targetQps} requests/s`.padEnd(34)} TTFT error p50 ${us(t.ttftErrorNs.p50)} us, p99 ${us(t.ttftErrorNs.p99)} us; ` +
      `TPOT error p50 ${us(t.tpotErrorNs.p50)} us, p99 ${us(t.tpotErrorNs.p99)} us (transport ${t.transport ?? 'undici'})`);
    const l = t.stubLatenessNs;
    if (l) {
      lines.push(`  ${''.padEnd(34)} of which the stub's own timers: first token p50 ${us(l.ttft.p50)} us, p99 ${us(l.ttft.p99)} us; ` +
        `token gap p50 ${us(l.tpot.p50)} us, p99 ${us(l.tpot.p99)} us (${fmt(l.requests)} requests, timerSpinMs ${t.stubTimerSpinMs})`);
    }
    if (t.deliveryLagNs) {
      lines.push(`  ${''.padEnd(34)} and the delivery (scheduled -> issueQuery): p50 ${us(t.deliveryLagNs.p50)} us, p99 ${us(t.deliveryLagNs.p99)} us ` +
        `(after a ${fmt(t.warmupMs / 1000, 1)}-s warm-up run; the client ${t.clientPinned ? 'on the client CPUs' : 'on any CPU'})`);
    }
    if (t.clientTtftErrorNs) {
      const c = t.clientTtftErrorNs;
      lines.push(`  ${''.padEnd(34)} the client's own TTFT error (TTFT - the stub's hold, by request): p50 ${us(c.p50)} us, p99 ${us(c.p99)} us ` +
        `(${fmt(c.matched)} of ${fmt(c.requests)} requests paired, the runs pooled)`);
    }
    if (t.floorNs) {
      lines.push(`  ${''.padEnd(34)} floor: a 1-byte TCP round trip to the stub's CPU after ${fmt(t.floorNs.gapMs)} ms idle: ` +
        `p50 ${us(t.floorNs.p50)} us, p99 ${us(t.floorNs.p99)} us (${fmt(t.floorNs.count ?? 100)} round trips; both wake-ups of a first token, no HTTP)`);
    }
  }
  return closing();
}
