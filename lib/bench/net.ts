/**
 * The network rows of `loadgen bench` (issue 12): on 127.0.0.1, a server that
 * answers at once with its own time stamps (benchmarks/stamp-server.c built
 * with the system compiler, or node:http in its own process, whichever
 * answers faster), the client on the first CPU and the server on the rest
 * (lib/bench/cpu-layout.ts; a row of N client threads on N + 1 CPUs, its
 * own server on the rest), the server's busy share saying when it was the limit:
 *   - the closed-loop rates of autocannon and wrk (each skipped with a note
 *     when not installed);
 *   - loadgen's highest VALID open-loop Server rate, the native transport (inline,
 *     reactor thread, and 2, 4, ... client threads), undici on the JS thread (wake, poll)
 *     and in worker threads, each peak confirmed by
 *     consecutive VALID runs (lib/bench/peak.ts);
 *   - the client's own share of each request's latency (loadgen's latency
 *     minus the server's send − recv) at 1k, 10k and (full runs) 100k requests/s;
 *   - TTFT and TPOT against the OpenAI stub streamer's schedule at 20 requests/s
 *     (the stub on the server's CPUs, the client on the client's).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadNative } from '../native/index.js';
import { median } from './median.js';
import { serverStampedShare } from './net-share.js';
import { measureTokenRow, type TokenRow } from './net-ttft.js';
import { clientShareDispatch, dispatchLabel, nativeDispatchThreads } from './net-labels.js';
import { findConfirmedPeak, formatPeakRun, peakConfirmation, type PeakConfirmation, type PeakRun } from './peak.js';
import { buildStampServer, checkClock, startServer, type BenchServer } from './net-servers.js';
import { busyShare, clientCpusWanted, cpuListText, netCpuLayout, processCpuSeconds, serverLimit } from './cpu-layout.js';
import { allowedCpuList, cpuTaskset, findOnPath, runTrial, type NetServerTrial, type Percentiles } from './trials.js';
import {
  autocannonRate, autocannonScript, buildFloorClient, NET_CONNECTIONS, parseWrkLatency, runClient, runFloorClient, wrkRate,
  type ClosedLoopRun, type FloorMode, type FloorRun,
} from './net-tools.js';

export { checkClock, NET_CONNECTIONS, parseWrkLatency };
export type { TokenRow };


/** The open-loop rows' latency bound (Server target latency, p99). */
const NET_TARGET_LATENCY_NS = 10_000_000;

/**
 * 'native': the core's HTTP client (transport 'native'), the issue thread reading the responses
 * as it waits (inline); 'native-thread': the same with its reactor thread reading them
 * (inlineReactor false); 'native-xN': N client threads (clientThreads N, each reading its
 * share of the connections on its own thread); 'native-noread' ('native-noread-xN'): 'native' ('native-xN') with no body read in JS
 * (readEveryResponse false: the transport's own cost, as the C floor's); the others: undici on the
 * JS thread with that dispatch mode. Every row but 'native-noread' reads each body in the mapping.
 */
export type NetDispatch = 'native' | 'native-noread' | 'native-thread' | `native-x${number}` | `native-noread-x${number}` | 'wake' | 'poll' | 'worker';

/**
 * The client-thread counts of the scaling rows: 2, 4, 8, ... up to the
 * CPUs this process may use less one (the server's), at least 2 (then the
 * threads share the client's CPU: the row says what that costs).
 */
export function clientThreadCounts(cpus: number): number[] {
  const counts: number[] = [];
  for (let n = 2; n <= Math.max(2, Math.min(64, cpus - 1)); n *= 2) counts.push(n);
  return counts;
}


export interface NetSpread {
  median: number;
  min: number;
  max: number;
}

/** A closed-loop tool's rate, or why it was not measured. */
export interface ClosedLoopRow {
  tool: 'autocannon' | 'wrk';
  requestsPerSec: NetSpread | null;
  /** The server's CPUs' busy share over the tool's runs (median; 0..1): near 1, the server was the limit. Absent: not measured. */
  serverBusy?: number;
  /** The tool's own CPU time per request (it and its children, as the kernel counted them; median). Absent: not measured. */
  cpuPerRequestNs?: number;
  /** Of that CPU time, the kernel's share (system time; median, 0..1): on loopback most of a client's work. Absent: not measured. */
  kernelCpuShare?: number;
  note?: string;
}

export type { PeakRun };

export interface PeakRow {
  dispatch: NetDispatch;
  /** Highest rate confirmed by consecutive VALID runs (the report's confirmation); 0 when none was. */
  peakQps: number;
  /** Highest rate a single run was VALID at: unconfirmed when above peakQps. */
  highestValidQps: number;
  /** Every run, search and confirmation, in order. */
  runs: PeakRun[];
  /** The CPUs of the row's client process and of its server (lib/bench/cpu-layout.ts); absent when not pinned. */
  clientCpus?: number[];
  serverCpus?: number[];
  /** Set when a run above the confirmed peak failed with the server's CPUs >= SERVER_LIMIT_BUSY busy: the server, not the client, was the limit. */
  serverLimit?: string;
  note?: string;
}

/** The client's share of each request's latency at one rate (medians over repetitions). */
export interface ClientShareRow {
  targetQps: number;
  dispatch: NetDispatch;
  valid: boolean;
  achievedQps: number;
  /** loadgen's latency (scheduled -> response read) of each sample. */
  latencyNs: Percentiles;
  /** The server's own time (send − recv). */
  serverNs: Percentiles;
  /** latency − (send − recv), per sample. */
  clientNs: Percentiles;
  /** Of which: scheduled -> in the SUT's issueQuery (the core's delivery lag); null when not reported. */
  deliveryLagNs: Percentiles | null;
  /** The client process's CPU time per request (all threads): what one CPU can serve is ~1e9 / this. */
  cpuPerRequestNs: number;
  /** Samples matched with a server record (of those issued), last repetition. */
  matched: number;
  samples: number;
  /**
   * The server's stamps came in each response's body, read by the mapping in JS (every body on the JS
   * thread); false: from the C server's own record, JS reading no body, as the C floor (net-share.ts).
   * Absent in older reports: true.
   */
  bodiesReadInJs?: boolean;
}

/**
 * The C open-loop floor (benchmarks/floor-client.c: one thread, epoll, no
 * HTTP library, no JS) at one rate and wait mode, against the client-share
 * rows' server on the same CPUs: the least an open-loop client pays here.
 * Medians over the repetitions.
 */
export interface FloorClientRow {
  targetQps: number;
  mode: FloorMode;
  /** Every repetition's p99 latency within the open-loop rows' bound (10 ms). */
  valid: boolean;
  achievedQps: number;
  latencyNs: Percentiles;
  /** latency - the server's send - recv, per request, as the client-share rows count it. */
  clientNs: Percentiles;
  /** Scheduled time -> the request's write. */
  latenessNs: Percentiles;
  cpuPerRequestNs: number;
}

export interface NetworkBenchReport {
  connections: number;
  /** The peak rows' confirmation: consecutive VALID runs of this length (each also the search's run length). */
  confirmation: PeakConfirmation;
  server: {
    /** The server the rows ran against. */
    kind: 'c' | 'node';
    /** The closed-loop probe of each candidate (requests/s; null: not available, see notes). */
    probes: { kind: 'c' | 'node'; requestsPerSec: number | null; note?: string }[];
    /** The server and the clients on separate CPUs (`layout`). */
    pinned: boolean;
    /**
     * The CPUs this process may use, and the layout of the single-thread rows (closed loop,
     * single-thread peaks, client share): the client on the first, the server (one C process
     * per CPU on one port) on the rest. A row of N client threads has N + 1 client CPUs and
     * its own server on the rest (PeakRow.clientCpus/serverCpus). Absent in older reports.
     */
    cpus?: { allowed: number[]; client: number[]; server: number[] };
    /** Every server stamp fell between the client's clockNs() before and after the request. */
    clockShared: boolean;
    clockChecks: number;
    /**
     * The client-share rows and the wrk floor ran against the C server polling
     * epoll without sleeping ('c-spin'), so its receive stamp is not late by
     * its own wake-up (30-90 us on an idle vCPU) which is not the client's; or
     * against the server above when the C server could not be built.
     */
    shareServer?: 'c-spin' | 'c' | 'node';
  } | null;
  closedLoop: ClosedLoopRow[];
  peaks: PeakRow[];
  clientShare: ClientShareRow[];
  /** The C open-loop floor at the client-share rates, both wait modes (absent in older reports; empty when it could not be built). */
  floorClient?: FloorClientRow[];
  /** The C open-loop floor's confirmed peak ('spin'), searched and confirmed as loadgen's rows are; absent in older reports. */
  floorPeak?: Omit<PeakRow, 'dispatch'>;
  /**
   * The round trip without a Node client: `wrk -t1 -c1 --latency` (closed loop, one
   * connection) on the same server and CPUs: the kernel's loopback and both sides' wake-ups.
   * Medians over the repetitions; null without wrk.
   */
  floorNs: { p50: number; p99: number } | null;
  tokens: TokenRow | null;
  /** /proc/loadavg's 1-minute load at the start and the end (null elsewhere): how busy the machine was. */
  loadAverage: { start: number; end: number } | null;
  /** 'scaling': a run of the scaling rows only (closed loop and the native peaks by client threads, no body in JS); absent: every row. */
  rows?: 'scaling';
  notes: string[];
}

function loadAverage1m(): number | null {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

export interface NetworkBenchOptions {
  tiny: boolean;
  repeat: number;
  /** Default: 3 runs of 10 s (tiny: 1 of 0.2 s). */
  confirmation?: PeakConfirmation;
  log: (line: string) => void;
  /**
   * 'scaling': only the closed-loop rows and the native transport's confirmed peaks, no body read in JS,
   * with 1, 2, 4, ... client threads (issue 26's scaling rows: minutes on a many-core machine, not the
   * full run's half hour).
   */
  rows?: 'all' | 'scaling';
}

function spreadOf(values: number[]): NetSpread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function medianPercentiles(values: Percentiles[]): Percentiles {
  return {
    p50: median(values.map((v) => v.p50)),
    p99: median(values.map((v) => v.p99)),
    p999: median(values.map((v) => v.p999)),
  };
}


/** Runs every network row; a row that cannot run says why in `notes` or its own note. */
export async function runNetworkBench(options: NetworkBenchOptions): Promise<NetworkBenchReport> {
  const { tiny, repeat, log } = options;
  const scalingOnly = options.rows === 'scaling';
  const confirmation = options.confirmation ?? peakConfirmation(tiny);
  const loadAtStart = loadAverage1m();
  const report: NetworkBenchReport = {
    connections: NET_CONNECTIONS, confirmation, server: null, closedLoop: [], peaks: [], clientShare: [], floorClient: [], floorNs: null, tokens: null, loadAverage: null, notes: [],
    ...(scalingOnly ? { rows: 'scaling' as const } : {}),
  };
  const allowed = allowedCpuList();
  const layoutFor = (dispatch: string) => (allowed !== null && cpuTaskset() !== null ? netCpuLayout(allowed, clientCpusWanted(dispatch)) : null);
  // The single-thread rows' layout: the client on the first CPU, the server on the rest.
  const base = layoutFor('native');
  const pin = base !== null;
  const clientCpus = base?.client ?? null;
  if (!pin) report.notes.push('not pinned: the server and the clients share the CPUs (pinning needs Linux, 2 CPUs and taskset)');
  const dir = mkdtempSync(join(tmpdir(), 'loadgen-net-bench-'));
  const started: BenchServer[] = [];
  try {
    const closedSeconds = tiny ? 1 : 10;
    const wrk = findOnPath('wrk');
    const autocannon = autocannonScript();
    // The candidates answer a short closed-loop probe; the faster one serves every row.
    const probeTool = wrk ? 'wrk' : autocannon ? 'autocannon' : null;
    const probe = (url: string) =>
      (wrk ? wrkRate(wrk, url, tiny ? 1 : 3, clientCpus) : autocannonRate(autocannon!, url, tiny ? 1 : 3, clientCpus)).then((r) => r.requestsPerSec);
    const built = buildStampServer(dir);
    const floorBuilt = buildFloorClient(dir);
    if ('note' in floorBuilt) report.notes.push(`open-loop floor: not run: ${floorBuilt.note}`);
    const probes: NonNullable<NetworkBenchReport['server']>['probes'] = [];
    let chosen: BenchServer | null = null;
    let chosenRate = -1;
    for (const kind of ['c', 'node'] as const) {
      if (kind === 'c' && 'note' in built) {
        probes.push({ kind, requestsPerSec: null, note: built.note });
        continue;
      }
      const server = await startServer(kind, base?.server ?? null, 'path' in built ? built.path : undefined);
      started.push(server);
      const rate = probeTool ? await probe(server.url) : null;
      log(`  ${kind} stamp server: ${rate === null ? 'no closed-loop tool to compare' : `${Math.round(rate)} requests/s (${probeTool})`}`);
      probes.push({ kind, requestsPerSec: rate });
      if (chosen === null || (rate ?? 0) > chosenRate) {
        if (chosen) await chosen.close();
        chosen = server;
        chosenRate = rate ?? 0;
      } else {
        await server.close();
      }
    }
    const server = chosen!;
    const clockChecks = tiny ? 20 : 200;
    const clockShared = await checkClock(server.url, clockChecks);
    report.server = {
      kind: server.kind as 'c' | 'node', probes, pinned: pin, clockShared, clockChecks,
      ...(base !== null && allowed !== null ? { cpus: { allowed, client: base.client, server: base.server } } : {}),
    };
    log(`  serving with the ${server.kind} stamp server (${server.url}); clock shared with the client: ${clockShared}`);
    if (!clockShared) report.notes.push("the server's CLOCK_MONOTONIC stamps did not fall inside the client's clockNs() window");

    // Closed loop: autocannon then wrk, alternating over the repetitions; the server's CPU time over each run.
    const rates: Record<'autocannon' | 'wrk', number[]> = { autocannon: [], wrk: [] };
    const cpuPerRequest: Record<'autocannon' | 'wrk', number[]> = { autocannon: [], wrk: [] };
    const busy: Record<'autocannon' | 'wrk', number[]> = { autocannon: [], wrk: [] };
    const kernel: Record<'autocannon' | 'wrk', number[]> = { autocannon: [], wrk: [] };
    const measured = async (tool: 'autocannon' | 'wrk', run: () => Promise<ClosedLoopRun>): Promise<void> => {
      const before = processCpuSeconds(server.pids);
      const start = performance.now();
      const r = await run();
      rates[tool].push(r.requestsPerSec);
      if (r.cpuPerRequestNs !== null) cpuPerRequest[tool].push(r.cpuPerRequestNs);
      if (r.kernelCpuShare !== null) kernel[tool].push(r.kernelCpuShare);
      const share = busyShare(before, processCpuSeconds(server.pids), (performance.now() - start) / 1000, server.cpus.length);
      if (share !== null) busy[tool].push(share);
    };
    for (let i = 0; i < repeat; i++) {
      if (autocannon) await measured('autocannon', () => autocannonRate(autocannon, server.url, closedSeconds, clientCpus));
      if (wrk) await measured('wrk', () => wrkRate(wrk, server.url, closedSeconds, clientCpus));
    }
    const busyOf = (tool: 'autocannon' | 'wrk') => ({
      ...(busy[tool].length > 0 ? { serverBusy: median(busy[tool]) } : {}),
      ...(cpuPerRequest[tool].length > 0 ? { cpuPerRequestNs: median(cpuPerRequest[tool]) } : {}),
      ...(kernel[tool].length > 0 ? { kernelCpuShare: median(kernel[tool]) } : {}),
    });
    report.closedLoop.push(autocannon
      ? { tool: 'autocannon', requestsPerSec: spreadOf(rates.autocannon), ...busyOf('autocannon') }
      : { tool: 'autocannon', requestsPerSec: null, note: 'autocannon is not installed (npm i -D autocannon)' });
    report.closedLoop.push(wrk
      ? { tool: 'wrk', requestsPerSec: spreadOf(rates.wrk), ...busyOf('wrk') }
      : { tool: 'wrk', requestsPerSec: null, note: 'wrk is not on PATH (Debian: apt-get install wrk)' });
    // The client's share and the floor: against the C server in spin mode (see shareServer). It
    // spins on CPU 1, so it runs only for those rows, never beside the server of the other rows.
    const startShareServer = async (): Promise<BenchServer> => ('path' in built ? startServer('c', base?.server ?? null, built.path, undefined, true) : server);
    report.server.shareServer = 'path' in built ? 'c-spin' : (server.kind as 'c' | 'node');
    let shareUrl = server.url;
    if (wrk && !scalingOnly) {
      const spinning = await startShareServer();
      try {
        const floors: { p50: number; p99: number }[] = [];
        for (let i = 0; i < repeat; i++) {
          const seconds = tiny ? 1 : 5;
          floors.push(parseWrkLatency((await runClient(wrk, ['-t1', '-c1', `-d${seconds}s`, '--latency', `${spinning.url}/`], clientCpus, seconds * 1000 + 30_000)).stdout));
        }
        report.floorNs = { p50: median(floors.map((f) => f.p50)), p99: median(floors.map((f) => f.p99)) };
      } finally {
        if (spinning !== server) await spinning.close();
      }
    }
    for (const row of report.closedLoop) {
      log(`  ${row.tool} closed loop, ${NET_CONNECTIONS} connections: ${row.requestsPerSec ? `${Math.round(row.requestsPerSec.median)} requests/s` : row.note}`);
    }

    // Open loop: loadgen's peak per dispatch mode; every run (search and confirmation) has the confirming length.
    const durationMs = Math.round(confirmation.confirmSeconds * 1000);
    // Every measured open-loop run (loadgen's and the C floor's) follows a warm-up run of this length.
    const warmupMs = tiny ? 200 : 2000;
    // The client-share rates, loadgen's and the C floor's: 100k/s too in a full run (issue 26), a rate one
    // client thread may not hold while JS reads every body; the row says so.
    const shareRates = tiny ? [1000, 10_000] : [1000, 10_000, 100_000];
    const serverRun = (
      dispatch: NetDispatch, clientShare: boolean, rowServer: BenchServer = server, cpus: readonly number[] | null = clientCpus,
      shareStamps: 'body' | 'server' = 'body',
    ) => (targetQps: number) =>
      runTrial<NetServerTrial>({
        kind: 'net-server',
        url: clientShare ? shareUrl : rowServer.url,
        dispatch,
        targetQps,
        durationMs,
        targetLatencyNs: NET_TARGET_LATENCY_NS,
        connections: NET_CONNECTIONS,
        warmupMs,
        clientShare,
        ...(shareStamps === 'server' ? { shareStamps } : {}),
        // The server's CPU time over the measured run: the trial reads it (not while sharing: that server spins).
        ...(!clientShare && rowServer.cpus.length > 0 ? { serverPids: rowServer.pids, serverCpus: rowServer.cpus.length } : {}),
      }, cpus !== null ? { cpus } : {});
    const autocannonMedian = report.closedLoop[0]!.requestsPerSec?.median;
    const startQps = tiny ? 1000 : Math.max(1000, Math.round(autocannonMedian ?? 10_000));
    // One search and confirmation for every peak row, loadgen's and the C floor's.
    // Below ~100/s a run has too few queries for early stopping to pass after any late one.
    const peakOptions = {
      startQps, precision: tiny ? 1 : 0.05, confirmRuns: confirmation.confirmRuns, stepDown: 0.07,
      maxRuns: (tiny ? 2 : 8) + 2 * confirmation.confirmRuns, minQps: 100,
    };
    const threadCounts = clientThreadCounts(availableParallelism());
    // The scaling run: the transport's own scaling, JS reading no body (as wrk and the C floor; the full run's
    // rows of several threads read every body on the one JS thread, which then limits them).
    const dispatches: NetDispatch[] = scalingOnly
      ? ['native-noread', ...threadCounts.map((n) => `native-noread-x${n}` as const)]
      : ['native', 'native-noread', 'native-thread', ...threadCounts.map((n) => `native-x${n}` as const), 'wake', 'poll', 'worker'];
    for (const dispatch of dispatches) {
      if (dispatch.startsWith('native') && !loadNative().nativeHttpAvailable) {
        report.peaks.push({ dispatch, peakQps: 0, highestValidQps: 0, runs: [], note: `the native HTTP client is not available on ${process.platform}` });
        continue;
      }
      // A row with more client CPUs than the base layout's has its own server on the CPUs left.
      const layout = layoutFor(dispatch);
      const ownServer = layout !== null && base !== null && layout.client.length !== base.client.length;
      const where = layout !== null ? `; client on CPUs ${cpuListText(layout.client)}, server on ${cpuListText(layout.server)}` : '';
      log(`  peak open-loop Server rate, ${dispatchLabel(dispatch)} ` +
        `(runs of ${durationMs / 1000} s; ${confirmation.confirmRuns} consecutive VALID confirm a peak${where})`);
      let rowServer = server;
      try {
        if (ownServer) rowServer = await startServer(server.kind, layout.server, 'path' in built ? built.path : undefined);
        // A row of N client threads starts where the fewer-thread rows ended: its search does not climb again from autocannon's rate.
        const row = nativeDispatchThreads(dispatch);
        const below = report.peaks.filter((p) => row !== undefined && nativeDispatchThreads(p.dispatch)?.bodiesReadInJs === row.bodiesReadInJs).map((p) => p.peakQps);
        const rowStart = row !== undefined && row.threads > 1 ? Math.max(peakOptions.startQps, ...below) : peakOptions.startQps;
        const peak = await findConfirmedPeak(async (qps, phase) => {
          const t = await serverRun(dispatch, false, rowServer, layout?.client ?? null)(qps);
          const r: PeakRun = {
            targetQps: qps, valid: t.valid, latencyP99Ns: t.latencyNs.p99, achievedQps: t.achievedQps, failed: t.failed, cpuPerRequestNs: t.cpuPerRequestNs,
            ...(t.durationS !== undefined ? { durationS: t.durationS } : {}), ...(t.queries !== undefined ? { queries: t.queries } : {}),
            ...(t.serverBusy !== undefined ? { serverBusy: t.serverBusy } : {}),
            ...(t.kernelCpuShare !== undefined ? { kernelCpuShare: t.kernelCpuShare } : {}),
          };
          log(`    ${formatPeakRun({ ...r, phase })}`);
          return r;
        }, { ...peakOptions, startQps: rowStart });
        const limit = serverLimit(peak.runs, peak.confirmedQps);
        report.peaks.push({
          dispatch, peakQps: peak.confirmedQps, highestValidQps: peak.highestValidQps, runs: peak.runs,
          ...(layout !== null ? { clientCpus: layout.client, serverCpus: layout.server } : {}),
          ...(limit !== undefined ? { serverLimit: limit } : {}),
        });
        if (limit !== undefined) log(`    ${limit}`);
      } catch (error) {
        report.peaks.push({ dispatch, peakQps: 0, highestValidQps: 0, runs: [], note: (error as Error).message.split('\n')[0]! });
        log(`    ${(error as Error).message}`);
      } finally {
        if (rowServer !== server) await rowServer.close();
      }
    }

    if (scalingOnly) {
      report.notes.push('scaling rows only (--scaling): no floor, client-share or token rows in this run');
      return report;
    }

    // The C open-loop floor's peak, on the same server and CPUs, searched and confirmed like the rows above.
    if ('path' in floorBuilt) {
      log(`  peak open-loop rate, the C floor client (spin; runs of ${durationMs / 1000} s)`);
      try {
        const peak = await findConfirmedPeak(async (qps, phase) => {
          const before = processCpuSeconds(server.pids);
          const start = performance.now();
          const f = await runFloorClient(floorBuilt.path, server.url, qps, durationMs, warmupMs, 'spin', clientCpus);
          const serverBusy = busyShare(before, processCpuSeconds(server.pids), (performance.now() - start) / 1000, server.cpus.length);
          const r: PeakRun = {
            targetQps: qps, valid: f.latencyNs.p99 <= NET_TARGET_LATENCY_NS, latencyP99Ns: f.latencyNs.p99, achievedQps: f.achievedQps,
            failed: 0, cpuPerRequestNs: f.cpuPerRequestNs, queries: f.requests, ...(f.achievedQps > 0 ? { durationS: f.requests / f.achievedQps } : {}),
            ...(serverBusy !== null ? { serverBusy } : {}),
          };
          log(`    ${formatPeakRun({ ...r, phase })}`);
          return r;
        }, peakOptions);
        const limit = serverLimit(peak.runs, peak.confirmedQps);
        report.floorPeak = {
          peakQps: peak.confirmedQps, highestValidQps: peak.highestValidQps, runs: peak.runs,
          ...(clientCpus !== null && base !== null ? { clientCpus, serverCpus: base.server } : {}),
          ...(limit !== undefined ? { serverLimit: limit } : {}),
        };
      } catch (error) {
        report.floorPeak = { peakQps: 0, highestValidQps: 0, runs: [], note: (error as Error).message.split('\n')[0]! };
        log(`    ${(error as Error).message}`);
      }
    }

    // The client's share at 1k, 10k and 100k requests/s, with the faster single-thread mode.
    const single = clientShareDispatch(report.peaks);
    const shareServer = await startShareServer();
    if (shareServer !== server) started.push(shareServer);  // closed on a failure too (closing twice is harmless)
    shareUrl = shareServer.url;
    // With the C server: its own record of its stamps, JS reading no body (as the C floor); then once at
    // 10k/s with every body read in JS (the stamps in the bodies), the way the rows of earlier runs were read.
    const serverStamped = shareServer.kind === 'c';
    const shareRows = [
      ...shareRates.map((targetQps) => ({ targetQps, bodiesReadInJs: !serverStamped })),
      ...(serverStamped ? [{ targetQps: 10_000, bodiesReadInJs: true }] : []),
    ];
    for (const { targetQps, bodiesReadInJs } of shareRows) {
      log(`  client share at ${targetQps} requests/s, dispatch ${single}, ${bodiesReadInJs ? 'every body read in JS' : 'no body read in JS'} (x${repeat})`);
      try {
        const trials: NetServerTrial[] = [];
        for (let i = 0; i < repeat; i++) {
          trials.push(bodiesReadInJs
            ? await serverRun(single, true)(targetQps)
            : await serverStampedShare(shareServer, () => serverRun(single, true, server, clientCpus, 'server')(targetQps)));
        }
        const last = trials[trials.length - 1]!;
        report.clientShare.push({
          targetQps,
          dispatch: single,
          valid: trials.every((t) => t.valid),
          achievedQps: median(trials.map((t) => t.achievedQps)),
          latencyNs: medianPercentiles(trials.map((t) => t.share!.latencyNs)),
          serverNs: medianPercentiles(trials.map((t) => t.share!.serverNs)),
          clientNs: medianPercentiles(trials.map((t) => t.share!.clientNs)),
          cpuPerRequestNs: median(trials.map((t) => t.cpuPerRequestNs)),
          deliveryLagNs: trials.every((t) => t.deliveryLagNs) ? medianPercentiles(trials.map((t) => t.deliveryLagNs!)) : null,
          matched: last.share!.matched,
          samples: last.share!.samples,
          bodiesReadInJs,
        });
      } catch (error) {
        report.notes.push(`client share at ${targetQps}${bodiesReadInJs ? ' (every body read in JS)' : ''}: ${(error as Error).message.split('\n')[0]}`);
        log(`    ${(error as Error).message}`);
      }
    }
    // The C open-loop floor at the same rates against the same spinning server, both wait modes.
    if ('path' in floorBuilt) {
      for (const targetQps of shareRates) {
        for (const mode of ['sleep', 'spin'] as const) {
          log(`  open-loop floor at ${targetQps} requests/s, the C client (${mode}, x${repeat})`);
          try {
            const runs: FloorRun[] = [];
            for (let i = 0; i < repeat; i++) runs.push(await runFloorClient(floorBuilt.path, shareUrl, targetQps, durationMs, warmupMs, mode, clientCpus));
            report.floorClient!.push({
              targetQps, mode,
              valid: runs.every((f) => f.latencyNs.p99 <= NET_TARGET_LATENCY_NS),
              achievedQps: median(runs.map((f) => f.achievedQps)),
              latencyNs: medianPercentiles(runs.map((f) => f.latencyNs)),
              clientNs: medianPercentiles(runs.map((f) => f.clientNs)),
              latenessNs: medianPercentiles(runs.map((f) => f.latenessNs)),
              cpuPerRequestNs: median(runs.map((f) => f.cpuPerRequestNs)),
            });
          } catch (error) {
            report.notes.push(`open-loop floor at ${targetQps} (${mode}): ${(error as Error).message.split('\n')[0]}`);
            log(`    ${(error as Error).message}`);
          }
        }
      }
    }
    await server.close();
    if (shareServer !== server) await shareServer.close();

    // TTFT/TPOT against the stub's schedule, the stub in its own process on the server's CPUs.
    report.tokens = await measureTokenRow({ serverCpus: base?.server ?? null, clientCpus, tiny, repeat, log, notes: report.notes, started });
  } finally {
    for (const s of started) await s.close();
    rmSync(dir, { recursive: true, force: true });
    // Here, so that a run of the scaling rows only (returning early) reports it too.
    const loadAtEnd = loadAverage1m();
    if (loadAtStart !== null && loadAtEnd !== null) report.loadAverage = { start: loadAtStart, end: loadAtEnd };
  }
  return report;
}
