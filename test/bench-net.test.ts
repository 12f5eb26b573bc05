import { spawnSync } from 'node:child_process';
import { rmSync, symlinkSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { checkClock, clientThreadCounts, parseWrkLatency, type NetworkBenchReport } from '../lib/bench/net.js';
import { clientShareDispatch } from '../lib/bench/net-labels.js';
import { buildStampServer, idleRoundTripNs, startServer, type BenchServer } from '../lib/bench/net-servers.js';
import { evaluateNetworkTargets, formatNetworkBench, scalingRows } from '../lib/bench/net-format.js';
import * as netMap from '../lib/bench/net-map.js';
import { kernelShareOf } from '../lib/bench/net-tools.js';
import { clientShare, netTokens, readTrace, type TracedSample } from '../lib/bench/net-trial.js';
import { createNullSut, createSyntheticQsl, startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { repoRoot, tempDir } from './helpers.js';

const dirs: string[] = [];
const servers: BenchServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('network bench: stamp servers', () => {
  // Each server answers with CLOCK_MONOTONIC stamps that fall inside the client's clockNs() window.
  it.each(['c', 'node'] as const)('the %s stamp server answers with stamps on the core clock', async (kind) => {
    const dir = tempDir('loadgen-net-bench-test-');
    dirs.push(dir);
    const built = buildStampServer(dir);
    if (kind === 'c' && 'note' in built) {
      // No compiler on this machine: the bench skips the C server with this note.
      expect(built.note).toMatch(/compiler|Linux|checkout/);
      return;
    }
    const server = await startServer(kind, null, 'path' in built ? built.path : undefined);
    servers.push(server);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await checkClock(server.url, 5)).toBe(true);
    const res = await fetch(`${server.url}/s/7`, { method: 'POST', body: 'x'.repeat(100) });
    const body = await res.text();
    expect(body).toMatch(/^\d{19} \d{19}\n$/);
    expect(res.headers.get('x-recv-ns')).toBe(body.slice(0, 19));
    expect(res.headers.get('x-send-ns')).toBe(body.slice(20, 39));
    await server.close();
  });
});

describe('network bench: stamp protocol and client share', () => {
  it('the mapping module reads the stamps from the body and refuses a body without them', () => {
    expect(netMap.request(3)).toEqual({ method: 'GET', path: '/s/3' });
    const before = netMap.stampRecords.count;
    netMap.response({ index: 3, body: new TextEncoder().encode('0000000000000001000 0000000000000001250\n') });
    const at = netMap.stampRecords.count - 1;
    expect(at).toBe(before);
    const r = netMap.stampRecords;
    expect([r.index[at], r.recv[at], r.send[at]]).toEqual([3, 1000, 1250]);
    expect(() => netMap.response({ index: 3, body: new TextEncoder().encode('hello') })).toThrow(/no server stamps/);
    expect(() => netMap.response({ index: 3, body: new TextEncoder().encode('000000000000000100x 0000000000000001250\n') })).toThrow(/no server stamps/);
    expect(netMap.stampRecords.count).toBe(before + 1);
  });

  it('records grow past their first capacity', () => {
    const records = new netMap.StampRecords();
    for (let i = 0; i < 70_000; i++) records.push(i, 2 * i, 3 * i);
    expect(records.count).toBe(70_000);
    expect([records.index[69_999], records.recv[69_999], records.send[69_999]]).toEqual([69_999, 139_998, 209_997]);
  });

  it('pairs each traced sample with its server record per index, in order, and subtracts the server time', () => {
    const records = new netMap.StampRecords();
    // Index 5 twice (server times 100 and 300 ns), index 6 once (200 ns), index 9 answered but its count differs.
    records.push(5, 10_000, 10_100);
    records.push(6, 20_000, 20_200);
    records.push(5, 90_000, 90_300);
    records.push(9, 1, 2);
    records.push(9, 3, 4);
    const samples: TracedSample[] = [
      { idx: 5, scheduledUs: 80, latencyNs: 20_000 },
      { idx: 6, scheduledUs: 15, latencyNs: 10_000 },
      { idx: 5, scheduledUs: 5, latencyNs: 6_000 },
      { idx: 9, scheduledUs: 1, latencyNs: 1_000 },
    ];
    const share = clientShare(samples, records);
    expect(share.samples).toBe(4);
    expect(share.matched).toBe(3);
    // Client shares: 6000-100, 20000-300, 10000-200 -> sorted 5900, 9800, 19700.
    expect(share.clientNs.p50).toBe(9800);
    expect(share.clientNs.p99).toBe(19700);
    expect(share.serverNs.p50).toBe(200);
  });

  it("reads every sample of a run's trace (index, scheduled time, latency)", async () => {
    const outdir = tempDir('loadgen-net-bench-trace-');
    dirs.push(outdir);
    const r = await startTest(createNullSut('null'), createSyntheticQsl(64), {
      scenario: 'Server', serverTargetQps: 2000, minDurationMs: 200, minQueryCount: 1,
    }, { outdir, enableTrace: true });
    const samples = readTrace(join(outdir, 'mlperf_log_trace.json'));
    expect(samples.length).toBe(r.counts.issuedSamples);
    for (const s of samples) {
      expect(s.idx).toBeGreaterThanOrEqual(0);
      expect(s.idx).toBeLessThan(64);
      expect(s.latencyNs).toBeGreaterThanOrEqual(0);
    }
    const sorted = [...samples.map((s) => s.latencyNs)].sort((a, b) => a - b);
    expect(sorted[sorted.length - 1]).toBe(r.latencyNs.max);
  });
});

describe('network bench: the kernel share of a CPU time', () => {
  it('is system over user + system, within 0..1, and unknown without time counted', () => {
    expect(kernelShareOf(2, 1.5)).toBe(0.75);
    expect(kernelShareOf(1, 1.2)).toBe(1); // tick rounding of the two counts
    expect(kernelShareOf(1, -0.1)).toBe(0);
    expect(kernelShareOf(0, 0)).toBeNull();
    expect(kernelShareOf(null, 1)).toBeNull();
    expect(kernelShareOf(1, null)).toBeNull();
    expect(kernelShareOf(1, Number.NaN)).toBeNull();
  });
});

describe('network bench: wrk --latency', () => {
  it('reads the 50% and 99% lines in their units, and refuses output without them', () => {
    const out = '  Latency Distribution\n     50%   29.00us\n     75%   35.00us\n     90%    1.20ms\n     99%    2.00s \n  1000 requests';
    expect(parseWrkLatency(out)).toEqual({ p50: 29_000, p99: 2e9 });
    expect(parseWrkLatency('     50%  128.00us\n     99%    1.20ms\n').p99).toBeCloseTo(1.2e6);
    expect(() => parseWrkLatency('Requests/sec: 100')).toThrow(/no latency distribution/);
  });
});

describe('network bench: targets', () => {
  const base: NetworkBenchReport = {
    connections: 32,
    confirmation: { confirmRuns: 3, confirmSeconds: 10 },
    server: { kind: 'c', probes: [], pinned: true, clockShared: true, clockChecks: 1 },
    closedLoop: [
      { tool: 'autocannon', requestsPerSec: { median: 20_000, min: 19_000, max: 21_000 } },
      { tool: 'wrk', requestsPerSec: null, note: 'wrk is not on PATH' },
    ],
    peaks: [
      { dispatch: 'wake', peakQps: 18_000, highestValidQps: 18_000, runs: [{ targetQps: 18_000, valid: true, latencyP99Ns: 1, achievedQps: 1, failed: 0 }] },
      { dispatch: 'worker', peakQps: 25_000, highestValidQps: 25_000, runs: [{ targetQps: 25_000, valid: true, latencyP99Ns: 1, achievedQps: 1, failed: 0 }] },
    ],
    floorNs: null,
    clientShare: [1000, 10_000].map((targetQps) => ({
      targetQps, dispatch: 'wake' as const, valid: true, achievedQps: targetQps,
      latencyNs: { p50: 60_000, p99: 90_000, p999: 1 }, serverNs: { p50: 3000, p99: 5000, p999: 1 },
      clientNs: { p50: targetQps === 1000 ? 40_000 : 55_000, p99: 80_000, p999: 1 }, deliveryLagNs: null, cpuPerRequestNs: 30_000, matched: 1, samples: 1,
    })),
    tokens: { targetQps: 20, ttftMs: 20, tpotMs: 5, outputTokens: 16, valid: true, ttftErrorNs: { p50: 1, p99: 150_000 }, tpotErrorNs: { p50: 1, p99: 100_000 }, stubLatenessNs: null, stubTimerSpinMs: 1, warmupMs: 3000, clientPinned: false, deliveryLagNs: null, floorNs: null },
    loadAverage: null,
    notes: [],
  };

  it('holds when any dispatch mode reaches autocannon, checks p50 at both rates and both token errors', () => {
    const t = evaluateNetworkTargets(base);
    expect(t.map((x) => x.holds)).toEqual(['yes', 'no', 'n/a', 'yes', 'n/a']);
    // The client's own TTFT error against the idle round trip + 200 us.
    const withOwn = (p99: number) => evaluateNetworkTargets({
      ...base, tokens: { ...base.tokens!, floorNs: { gapMs: 50, p50: 400_000, p99: 1_000_000 }, clientTtftErrorNs: { p50: 500_000, p99, matched: 190, requests: 200 } },
    })[4]!;
    expect(withOwn(1_200_000).holds).toBe('yes');
    expect(withOwn(1_200_001).holds).toBe('no');
    expect(withOwn(1_200_000).measured).toBe('p50 500.00 us, p99 1,200.00 us against 1,000.00 + 200 us (190 of 200 requests paired)');
    expect(t[0]!.measured).toContain('met by worker');
    expect(t[0]!.target).toContain('confirmed by 3 consecutive VALID 10-s runs');
    // Judged on the confirmed peak only: a single VALID run above autocannon does not meet it.
    const unconfirmed = evaluateNetworkTargets({ ...base, peaks: [{ ...base.peaks[0]!, peakQps: 0, highestValidQps: 30_000 }] });
    expect(unconfirmed[0]!.holds).toBe('no');
    expect(unconfirmed[0]!.measured).toContain('wake 0 (single run 30,000, unconfirmed)');
    expect(t[0]!.measured).toContain('wrk -');
  });

  it("judges the client share p99 at 10k/s against twice the C floor's, on the row read as the floor is", () => {
    const floor = (p99: number) => ({
      targetQps: 10_000, mode: 'spin' as const, valid: true, achievedQps: 10_000, latencyNs: { p50: 1, p99: 1, p999: 1 },
      clientNs: { p50: 30_000, p99, p999: 1 }, latenessNs: { p50: 1, p99: 1, p999: 1 }, cpuPerRequestNs: 1,
    });
    const row = (p99: number, bodiesReadInJs?: boolean) => ({
      ...base.clientShare[1]!, clientNs: { p50: 30_000, p99, p999: 1 }, ...(bodiesReadInJs !== undefined ? { bodiesReadInJs } : {}),
    });
    const judge = (rows: NetworkBenchReport['clientShare'], floorP99 = 50_000) =>
      evaluateNetworkTargets({ ...base, clientShare: rows, floorClient: [floor(floorP99), { ...floor(1), mode: 'sleep' }] })[2]!;
    expect(judge([row(100_000, false)])).toMatchObject({ holds: 'yes', measured: 'p99 100.00 us against 2 x 50.00 us (2.00 x)' });
    expect(judge([row(100_001, false)]).holds).toBe('no');
    // The row with every body read in JS is shown beside it; the one read as the floor decides.
    expect(judge([row(300_000, true), row(90_000, false)]).holds).toBe('yes');
    expect(judge([row(90_000, false), row(300_000, true)]).holds).toBe('yes');
    // Only a row that read every body (an older report): shown, not judged.
    expect(judge([row(90_000)])).toMatchObject({ holds: 'n/a', measured: expect.stringContaining('the row read every body in JS') });
    expect(judge([])).toMatchObject({ holds: 'n/a', measured: '-' });
    expect(formatNetworkBench({ ...base, clientShare: [row(90_000, false), row(300_000, true)] })).toMatch(/10,000 requests\/s, wake {2,}.*\n {2}10,000 requests\/s, wake \+ JS/);
  });

  it('the token row names the transport that ran', () => {
    expect(formatNetworkBench({ ...base, tokens: { ...base.tokens!, transport: 'native' } })).toMatch(/TTFT error p50 .* \(transport native\)/);
    expect(formatNetworkBench({ ...base, tokens: { ...base.tokens!, clientTtftErrorNs: { p50: 500_000, p99: 900_000, matched: 190, requests: 200 } } }))
      .toContain("the client's own TTFT error (TTFT - the stub's hold, by request): p50 500.00 us, p99 900.00 us (190 of 200 requests paired, the runs pooled)");
  });

  it('says where each process ran, how busy the server was and when it was the limit', () => {
    const text = formatNetworkBench({
      ...base,
      server: { ...base.server!, cpus: { allowed: [0, 1, 2, 3], client: [0], server: [1, 2, 3] } },
      closedLoop: [
        { tool: 'autocannon', requestsPerSec: { median: 20_000, min: 19_000, max: 21_000 }, serverBusy: 0.35 },
        { tool: 'wrk', requestsPerSec: { median: 120_000, min: 119_000, max: 121_000 }, serverBusy: 0.96, cpuPerRequestNs: 7570, kernelCpuShare: 0.81 },
      ],
      peaks: [
        { ...base.peaks[0]!, clientCpus: [0], serverCpus: [1, 2, 3] },
        { dispatch: 'native-x2', peakQps: 50_000, highestValidQps: 50_000, runs: base.peaks[0]!.runs, clientCpus: [0, 1, 2], serverCpus: [3],
          serverLimit: 'the server was the limit: its CPUs were 97 % busy in the INVALID run at 60,000 requests/s' },
      ],
    });
    expect(text).toContain('server on CPUs 1-3 (a C process on each), clients on CPU 0');
    expect(text).toMatch(/autocannon closed loop +20,000 requests\/s \(19,000\.\.21,000\), server CPUs 35 % busy\n/);
    expect(text).toContain('server CPUs 96 % busy (the server was the limit); its own CPU 7.57 us/request (81 % in the kernel)');
    expect(text).toContain('client on CPUs 0-2, its own server on 3');
    expect(text).toContain('the server was the limit: its CPUs were 97 % busy in the INVALID run at 60,000 requests/s');
    // The single-thread row ran in the common layout: no line of its own.
    expect(text.match(/its own server on/g)).toHaveLength(1);
  });

  it('puts the native rows in a scaling table by client threads, each with its CPU, server busy and what failed the next rate', () => {
    const run = (targetQps: number, valid: boolean, phase: 'search' | 'confirm', more: { serverBusy?: number; cpuPerRequestNs?: number; kernelCpuShare?: number; failed?: number } = {}) =>
      ({ targetQps, valid, phase, latencyP99Ns: 1, achievedQps: targetQps, failed: 0, ...more });
    const report: NetworkBenchReport = {
      ...base,
      peaks: [
        { dispatch: 'native-x4', peakQps: 0, highestValidQps: 0, runs: [], note: 'the native HTTP client is not available on win32' },
        { dispatch: 'native', peakQps: 100_000, highestValidQps: 100_000, clientCpus: [0], serverCpus: [1, 2, 3],
          runs: [run(100_000, true, 'search'), run(200_000, false, 'search', { serverBusy: 0.4 }), run(150_000, false, 'search', { serverBusy: 0.5 }),
            run(100_000, true, 'confirm', { cpuPerRequestNs: 9000, serverBusy: 0.3, kernelCpuShare: 0.7 }), run(100_000, true, 'confirm', { cpuPerRequestNs: 11_000, serverBusy: 0.5, kernelCpuShare: 0.8 })] },
        { dispatch: 'wake', peakQps: 20_000, highestValidQps: 20_000, runs: [run(20_000, true, 'confirm')] },
        { dispatch: 'native-x2', peakQps: 180_000, highestValidQps: 180_000, clientCpus: [0, 1, 2], serverCpus: [3],
          runs: [run(180_000, true, 'confirm', { cpuPerRequestNs: 8000, serverBusy: 0.95, kernelCpuShare: 0.784 }), run(190_000, false, 'search', { serverBusy: 0.97, kernelCpuShare: 0.1 })] },
        { dispatch: 'native-x8', peakQps: 300_000, highestValidQps: 300_000, runs: [run(300_000, true, 'search'), run(300_000, true, 'confirm'), run(330_000, false, 'search', { failed: 12 })] },
        { dispatch: 'native-x16', peakQps: 400_000, highestValidQps: 400_000, runs: [run(400_000, true, 'confirm')] },
        // The family with no body read in JS: a table of its own, against its own one-thread row.
        { dispatch: 'native-noread-x2', peakQps: 250_000, highestValidQps: 250_000, runs: [run(250_000, true, 'confirm')] },
        { dispatch: 'native-noread', peakQps: 125_000, highestValidQps: 125_000, runs: [run(125_000, true, 'confirm')] },
        { dispatch: 'native-thread', peakQps: 90_000, highestValidQps: 90_000, runs: [run(90_000, true, 'confirm')] },
      ],
    };
    const rows = scalingRows(report);
    expect(rows.map((r) => [r.threads, r.peakQps, r.bodiesReadInJs])).toEqual([
      [1, 100_000, true], [2, 180_000, true], [4, 0, true], [8, 300_000, true], [16, 400_000, true], [1, 125_000, false], [2, 250_000, false]]);
    expect(rows[6]!.vsOneThread).toBe(2);
    // Medians of the confirming runs only; the search's runs at the same rate do not count.
    expect(rows[0]).toMatchObject({ vsOneThread: 1, cpuPerRequestNs: 10_000, serverBusy: 0.4, limit: 'the client (the server 50 % busy at 150,000/s)' });
    expect(rows[0]!.kernelCpuShare).toBeCloseTo(0.75, 10);
    expect(rows[1]).toMatchObject({ vsOneThread: 1.8, cpuPerRequestNs: 8000, kernelCpuShare: 0.784, limit: 'the server (97 % busy at 190,000/s)' });
    expect(rows[3]!.kernelCpuShare).toBeUndefined();
    expect(rows[2]).toMatchObject({ vsOneThread: undefined, cpuPerRequestNs: undefined, limit: 'failed: the native HTTP client is not available on win32' });
    expect(rows[3]).toMatchObject({ vsOneThread: 3, serverBusy: undefined, limit: '12 requests failed at 330,000/s' });
    expect(rows[4]!.limit).toBe("not reached: no run above the peak failed (the search's budget ended)");
    const text = formatNetworkBench(report);
    expect(text).toMatch(/scaling, native, bodies in JS [^\n]*\n(  \d+ client threads?[^\n]*\n){5}  scaling, native, no body in JS [^\n]*\n(  \d+ client threads?[^\n]*\n){2}/);
    expect(text).toMatch(/\n {2}2 client threads \(client CPUs 0-2, server 3\) +180,000\/s {3}1\.80 x {2}CPU {3}8\.00 us\/req \(78 % in the kernel\) {2}server 95 % busy; limit: the server \(97 % busy at 190,000\/s\)/);
    // A row with no share measured says nothing of the kernel.
    expect(text).toMatch(/\n {2}8 client threads +300,000\/s {3}3\.00 x {2}CPU +- us\/req {2}server - busy/);
    // Without two native rows there is no table; a run of the scaling rows only prints no share or floor rows.
    expect(scalingRows({ ...base, peaks: [report.peaks[1]!, report.peaks[2]!, report.peaks[7]!] })).toEqual([]);
    expect(formatNetworkBench(base)).not.toContain('scaling, native');
    const scalingOnly = formatNetworkBench({ ...report, rows: 'scaling', clientShare: [], tokens: null, notes: ['scaling rows only'] });
    expect(scalingOnly).not.toMatch(/client share|floor: wrk/);
    expect(scalingOnly).toMatch(/note: scaling rows only$/);
  });

  it("is 'n/a' when a figure is missing (no autocannon, no token run)", () => {
    const t = evaluateNetworkTargets({ ...base, closedLoop: [], clientShare: [], tokens: null });
    expect(t.map((x) => x.holds)).toEqual(['n/a', 'n/a', 'n/a', 'n/a', 'n/a']);
  });
});

describe('network bench: the client-share rows\' mode', () => {
  const row = (dispatch: string, peakQps: number, highestValidQps: number) =>
    ({ dispatch, peakQps, highestValidQps, runs: [] }) as unknown as NetworkBenchReport['peaks'][number];

  it('is the faster single-thread mode by the highest rate VALID, confirmed or not: an unconfirmed native beats a confirmed undici', () => {
    // 2026-11-29: native VALID up to 82,879/s but each confirmation had one INVALID run; undici wake confirmed 18,499/s.
    expect(clientShareDispatch([row('native', 0, 82_879), row('wake', 18_499, 19_891), row('poll', 15_334, 15_334)])).toBe('native');
    expect(clientShareDispatch([row('native', 40_000, 45_000), row('wake', 30_000, 50_000)])).toBe('wake');
    // A tie: the confirmed one.
    expect(clientShareDispatch([row('native', 0, 30_000), row('wake', 30_000, 30_000)])).toBe('wake');
  });

  it('never picks the worker mode or a row of several client threads; wake when nothing else ran', () => {
    expect(clientShareDispatch([row('worker', 90_000, 90_000), row('native-x2', 80_000, 80_000), row('poll', 10_000, 10_000)])).toBe('poll');
    expect(clientShareDispatch([])).toBe('wake');
    // The row with no body read in JS is not a mode of the share rows (they choose how the stamps are read).
    expect(clientShareDispatch([row('native-noread', 90_000, 90_000), row('native', 80_000, 80_000)])).toBe('native');
  });
});

describe('network bench: the token row', () => {
  const streamed = (url: string) =>
    fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'loadgen-stub', prompt: 'a b', max_tokens: 3, stream: true }),
    }).then((res) => res.text());

  it("leaves the warm-up's requests out of the stub's lateness, and the stub is never early", async () => {
    const stub = await startServer('openai-stub', null, undefined, { ttftMs: 2, tpotMs: 1, timerSpinMs: 1 });
    servers.push(stub);
    await stub.ask('lateness', 'LATENESS ');
    for (let i = 0; i < 3; i++) expect(await streamed(stub.url)).toMatch(/\[DONE\]/);
    const lateness = JSON.parse(await stub.ask('lateness 1', 'LATENESS ')) as { requests: number; ttftNs: { p50: number } };
    expect(lateness.requests).toBe(2);
    expect(lateness.ttftNs.p50).toBeGreaterThanOrEqual(0);
  });

  it('runs an unmeasured warm-up at the rate first (none with warmupMs 0) and reports the delivery lag', async () => {
    const stub = await startServer('openai-stub', null, undefined, { ttftMs: 2, tpotMs: 1 });
    servers.push(stub);
    const spec = { kind: 'net-tokens' as const, url: stub.url, targetQps: 50, durationMs: 300, outputTokens: 3 };
    const warmed = await netTokens({ ...spec, warmupMs: 300 });
    expect(warmed.warmupRequests).toBeGreaterThan(0);
    expect(warmed.deliveryLagNs?.p50).toBeGreaterThanOrEqual(0);
    expect(warmed.ttftNs.p50).toBeGreaterThan(2e6);
    // Each measured request's TTFT, paired from the trace and the request log, none of the warm-up's.
    expect(warmed.requests.length).toBeGreaterThan(5);
    for (const [idx, ttftNs] of warmed.requests) {
      expect(idx).toBeGreaterThanOrEqual(0);
      expect(idx).toBeLessThan(64);
      expect(ttftNs).toBeGreaterThan(2e6);
      expect(ttftNs).toBeLessThan(1e9);
    }
    // The same TTFTs the core counted: none above its highest (p99.9 of a handful is the highest).
    expect(Math.max(...warmed.requests.map(([, t]) => t))).toBeLessThanOrEqual(warmed.ttftNs.p999);
    // 'auto' by default: the native client on Linux; the row says which ran.
    expect(warmed.transport).toBe(loadNative().nativeHttpAvailable ? 'native' : 'undici');
    const cold = await netTokens({ ...spec, warmupMs: 0, transport: 'undici' });
    expect(cold.warmupRequests).toBe(0);
    expect(cold.transport).toBe('undici');
  }, 30_000);

  it('measures the floor: a 1-byte round trip to the echo process after each idle gap', async () => {
    const echo = await startServer('echo', null);
    servers.push(echo);
    expect(echo.url).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    const started = Date.now();
    const floor = await idleRoundTripNs(echo.url, 20, 10);
    expect(Date.now() - started).toBeGreaterThanOrEqual(10 * 20 - 5);
    expect(floor.p50).toBeGreaterThan(0);
    expect(floor.p99).toBeGreaterThanOrEqual(floor.p50);
    await echo.close();
  });

  it('fails the floor, without a hang, when the echo goes away mid-measurement', async () => {
    const echo = await startServer('echo', null);
    servers.push(echo);
    const floor = idleRoundTripNs(echo.url, 20, 1000);
    setTimeout(() => void echo.close(), 100);
    await expect(floor).rejects.toThrow(/echo at tcp:\/\/127\.0\.0\.1:\d+ closed the connection|ECONNRESET|EPIPE/);
  });
});

describe('loadgen bench --scaling', () => {
  it('runs the closed loop and the native peaks by client threads, no body in JS, and nothing else', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--scaling', '--tiny', '--json'], {
      cwd: repoRoot, encoding: 'utf8', timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as NetworkBenchReport;
    expect(report.rows).toBe('scaling');
    expect(report.closedLoop.map((row) => row.tool)).toEqual(['autocannon', 'wrk']);
    const threads = clientThreadCounts(availableParallelism()).map((n) => `native-noread-x${n}`);
    expect(report.peaks.map((p) => p.dispatch)).toEqual(['native-noread', ...threads]);
    for (const p of report.peaks) expect(p.runs.length > 0 || p.note !== undefined).toBe(true);
    // Where the client's CPU went: the kernel's share of it, a fraction, on every measured run and closed-loop row.
    for (const run of report.peaks.flatMap((p) => p.runs)) {
      if (run.kernelCpuShare !== undefined) expect(run.kernelCpuShare).toBeGreaterThanOrEqual(0);
      if (run.kernelCpuShare !== undefined) expect(run.kernelCpuShare).toBeLessThanOrEqual(1);
    }
    expect(report.peaks[0]!.runs.some((run) => run.kernelCpuShare !== undefined && run.kernelCpuShare > 0)).toBe(true);
    for (const row of report.closedLoop.filter((c) => c.requestsPerSec !== null)) {
      expect(row.kernelCpuShare).toBeGreaterThanOrEqual(0);
      expect(row.kernelCpuShare).toBeLessThanOrEqual(1);
    }
    expect(report.clientShare).toEqual([]);
    expect(report.floorClient).toEqual([]);
    expect(report.floorPeak).toBeUndefined();
    expect(report.floorNs).toBeNull();
    expect(report.tokens).toBeNull();
    expect(report.loadAverage === null || report.loadAverage.end >= 0).toBe(true);
    expect(report.notes.join('\n')).toMatch(/scaling rows only/);
    // The other benches' options are refused beside it, naming both.
    const both = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--scaling', '--accuracy'], { cwd: repoRoot, encoding: 'utf8' });
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/option '--accuracy' cannot be used with option '--scaling'/);
  });
});

describe('loadgen bench --network --tiny without a compiler, taskset or wrk on PATH', () => {
  it('serves with node:http, runs unpinned and says why each missing row was skipped', () => {
    // A PATH with node alone (the trials run process.execPath; cc, taskset and wrk are not found).
    const bin = tempDir('loadgen-net-bench-path-');
    dirs.push(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--network', '--tiny', '--json'], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, PATH: bin },
    });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as NetworkBenchReport;
    expect(report.server?.kind).toBe('node');
    expect(report.server?.pinned).toBe(false);
    expect(report.server?.probes.find((p) => p.kind === 'c')?.note).toMatch(/no C compiler/);
    expect(report.server?.clockShared).toBe(true);
    expect(report.floorNs).toBeNull();
    expect(report.closedLoop.find((row) => row.tool === 'wrk')).toEqual({ tool: 'wrk', requestsPerSec: null, note: expect.stringMatching(/not on PATH/) });
    expect(report.closedLoop.find((row) => row.tool === 'autocannon')?.requestsPerSec?.median).toBeGreaterThan(0);
    // Its own CPU, counted by the shell that waited for it (builtins only: this PATH has nothing else).
    expect(report.closedLoop.find((row) => row.tool === 'autocannon')?.cpuPerRequestNs).toBeGreaterThan(0);
    expect(report.notes.join('\n')).toMatch(/not pinned/);
    expect(report.notes.join('\n')).toMatch(/open-loop floor: not run: no C compiler/);
    expect(report.floorClient).toEqual([]);
    expect(report.floorPeak).toBeUndefined();
    // The loadgen rows ran through the --sut http path: every sample paired with its server stamps.
    const scaling = clientThreadCounts(availableParallelism()).map((n) => [`native-x${n}`, true]);
    expect(report.peaks.map((p) => [p.dispatch, p.runs.length > 0])).toEqual([['native', true], ['native-noread', true], ['native-thread', true], ...scaling, ['wake', true], ['poll', true], ['worker', true]]);
    // Each peak row: the search's runs and the confirming runs (tiny: 1 of 0.2 s), each with its length.
    expect(report.confirmation).toEqual({ confirmRuns: 1, confirmSeconds: 0.2 });
    for (const peak of report.peaks) {
      expect(peak.highestValidQps).toBeGreaterThanOrEqual(peak.peakQps);
      for (const run of peak.runs) {
        expect(['search', 'confirm']).toContain(run.phase);
        expect(run.durationS).toBeGreaterThan(0);
        expect(run.queries).toBeGreaterThan(0);
      }
    }
    expect(report.clientShare.map((row) => row.targetQps)).toEqual([1000, 10_000]);
    for (const row of report.clientShare) {
      expect(row.matched).toBe(row.samples);
      expect(row.serverNs.p50).toBeGreaterThan(0);
      expect(row.clientNs.p50).toBeGreaterThan(0);
      expect(row.cpuPerRequestNs).toBeGreaterThan(0);
    }
    // The token row, with the stub's own lateness read from the stub's process.
    expect(report.tokens?.stubLatenessNs?.requests).toBeGreaterThan(0);
    expect(Number.isFinite(report.tokens?.ttftErrorNs.p99)).toBe(true);
    expect(report.tokens).toMatchObject({ stubTimerSpinMs: 1, warmupMs: 500, clientPinned: report.server?.pinned ?? false });
    expect(report.tokens?.deliveryLagNs?.p50).toBeGreaterThanOrEqual(0);
    expect(report.tokens?.floorNs).toMatchObject({ gapMs: 50, p50: expect.any(Number) });
    // The client's own TTFT error, request by request: most requests paired, every figure possible
    // (the stub's hold is inside the client's TTFT: the error is the two trips and the issue path, > 0).
    const own = report.tokens?.clientTtftErrorNs;
    expect(own?.matched).toBeGreaterThan(0.9 * own!.requests);
    expect(own?.p50).toBeGreaterThan(0);
    expect(own?.p99).toBeGreaterThanOrEqual(own!.p50);
    // Each request's own error is at most its TTFT error (the stub is never early): so is the p99, within 50 us of rounding.
    expect(own?.p99).toBeLessThanOrEqual(report.tokens!.ttftErrorNs.p99 + 50_000);
  }, 120_000);
});
