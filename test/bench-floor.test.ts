// The network bench's C open-loop floor (benchmarks/floor-client.c) and the
// closed-loop tools' measured CPU (lib/bench/net-tools.ts).
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

import { afterAll, describe, expect, it } from 'vitest';

import type { NetworkBenchReport } from '../lib/bench/net.js';
import { formatNetworkBench } from '../lib/bench/net-format.js';
import { buildStampServer, startServer, type BenchServer } from '../lib/bench/net-servers.js';
import { buildFloorClient, parseFloorRun, runClient, runFloorClient } from '../lib/bench/net-tools.js';
import { tempDir } from './helpers.js';

const dirs: string[] = [];
const servers: BenchServer[] = [];
const netServers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const s of netServers) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function built(): { floor: string; stamp: string } | null {
  const dir = tempDir('loadgen-floor-test-');
  dirs.push(dir);
  const floor = buildFloorClient(dir);
  const stamp = buildStampServer(dir);
  if ('note' in floor || 'note' in stamp) {
    // No compiler (or not Linux): the bench leaves the floor out with this note.
    expect('note' in floor ? floor.note : '').toMatch(/compiler|Linux|checkout|^$/);
    return null;
  }
  return { floor: floor.path, stamp: stamp.path };
}

/** A TCP server on 127.0.0.1 that answers every request's first bytes with `reply` (and closes when `close`). */
async function fakeServer(reply: string, close = false): Promise<string> {
  const server = createServer((socket) => {
    socket.on('data', () => {
      if (close) socket.destroy();
      else socket.write(reply);
    });
    socket.on('error', () => undefined);
  });
  netServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

describe('network bench: the C open-loop floor client', () => {
  it.each(['sleep', 'spin'] as const)('runs open loop against the stamp server (%s): every figure possible', async (mode) => {
    const paths = built();
    if (paths === null) return;
    const server = await startServer('c', null, paths.stamp);
    servers.push(server);
    const r = await runFloorClient(paths.floor, server.url, 2000, 500, 100, mode, null);
    // Poisson arrivals at 2,000/s for 0.5 s: ~1,000 requests (10 sigma either side is 684..1,316).
    expect(r.targetQps).toBe(2000);
    expect(r.requests).toBeGreaterThan(684);
    expect(r.requests).toBeLessThan(1316);
    expect(r.achievedQps).toBeGreaterThan(1000);
    expect(r.cpuPerRequestNs).toBeGreaterThan(0);
    for (const p of [r.latencyNs, r.clientNs, r.serverNs, r.latenessNs]) {
      expect(p.p50).toBeLessThanOrEqual(p.p99);
      expect(p.p99).toBeLessThanOrEqual(p.p999);
    }
    expect(r.serverNs.p50).toBeGreaterThan(0);
    expect(r.latenessNs.p50).toBeGreaterThanOrEqual(0);
    // The client's share is the latency less the server's own time, and the write comes before the response.
    expect(r.clientNs.p50).toBeGreaterThan(0);
    expect(r.clientNs.p50).toBeLessThanOrEqual(r.latencyNs.p50);
    expect(r.latenessNs.p50).toBeLessThan(r.latencyNs.p50);
    await server.close();
  }, 30_000);

  it('fails, naming why, on a server that answers 500, closes connections, sends no stamps, or is not there', async () => {
    const paths = built();
    if (paths === null) return;
    const run = (url: string) => runFloorClient(paths.floor, url, 500, 200, 0, 'sleep', null);
    await expect(run(await fakeServer('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n'))).rejects.toThrow(/the floor client failed: response: not 200/);
    await expect(run(await fakeServer('', true))).rejects.toThrow(/the floor client failed: read: (the server closed a connection|Connection reset by peer)/);
    await expect(run(await fakeServer(`HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n${'x'.repeat(39)}\n`))).rejects.toThrow(/no stamps in the body/);
    const gone = await fakeServer('');
    netServers.pop()!.close();
    await expect(run(gone)).rejects.toThrow(/the floor client failed: connect: Connection refused/);
    // Arguments out of range are refused before any connection.
    await expect(runFloorClient(paths.floor, gone, 0, 200, 0, 'sleep', null)).rejects.toThrow(/RATE must be in \(0, 1e7\]/);
    await expect(runFloorClient(paths.floor, 'http://localhost:80', 10, 200, 0, 'sleep', null)).rejects.toThrow(/127\.0\.0\.1 only/);
  }, 30_000);

  it('refuses a result line with a missing or non-finite figure', () => {
    const good = {
      targetQps: 1, requests: 1, achievedQps: 1, maxQueued: 0, cpuPerRequestNs: 1,
      latencyNs: { p50: 1, p99: 1, p999: 1 }, serverNs: { p50: 1, p99: 1, p999: 1 }, clientNs: { p50: 1, p99: 1, p999: 1 }, latenessNs: { p50: 0, p99: 0, p999: 0 },
    };
    expect(parseFloorRun(JSON.stringify(good)).requests).toBe(1);
    expect(() => parseFloorRun(JSON.stringify({ ...good, cpuPerRequestNs: null }))).toThrow(/no finite cpuPerRequestNs/);
    expect(() => parseFloorRun(JSON.stringify({ ...good, clientNs: { p50: 1, p99: 1 } }))).toThrow(/no clientNs percentiles/);
    expect(() => parseFloorRun('{"error":"send: Broken pipe"}')).toThrow(/the floor client failed: send: Broken pipe/);
    expect(() => parseFloorRun('Segmentation fault')).toThrow(/printed no result/);
  });
});

describe('network bench: a client process\'s own CPU', () => {
  it('counts the CPU of the command it waited for, and leaves its output as it was', async () => {
    const r = await runClient(process.execPath, ['-e', 'const t = Date.now(); while (Date.now() - t < 300); console.log("done")'], null, 20_000);
    expect(r.stdout).toBe('done\n');
    if (process.platform !== 'linux') return;
    // 0.3 s of busy loop (and Node's start): at least 0.25 s, at most what a few CPUs could give it.
    expect(r.cpuSeconds).toBeGreaterThanOrEqual(0.25);
    expect(r.cpuSeconds).toBeLessThan(10);
  });

  it('keeps the command\'s exit status and kills the command itself at the timeout', async () => {
    await expect(runClient(process.execPath, ['-e', 'process.exit(3)'], null, 20_000)).rejects.toThrow(/failed \(3\)/);
    const start = Date.now();
    await expect(runClient(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], null, 300)).rejects.toThrow(/failed/);
    expect(Date.now() - start).toBeLessThan(10_000);
  });

  it('prints the closed-loop tools\' CPU per request and the floor rows', () => {
    const report: NetworkBenchReport = {
      connections: 32, confirmation: { confirmRuns: 3, confirmSeconds: 10 },
      server: { kind: 'c', probes: [], pinned: true, clockShared: true, clockChecks: 1, shareServer: 'c-spin' },
      closedLoop: [{ tool: 'wrk', requestsPerSec: { median: 100_000, min: 90_000, max: 110_000 }, serverBusy: 0.5, cpuPerRequestNs: 7_600 }],
      peaks: [],
      floorPeak: { peakQps: 70_000, highestValidQps: 80_000, runs: [{ targetQps: 70_000, valid: true, latencyP99Ns: 1e6, achievedQps: 70_000, phase: 'confirm', cpuPerRequestNs: 12_000 }] },
      clientShare: [],
      floorClient: [{ targetQps: 10_000, mode: 'spin', valid: true, achievedQps: 10_000, latencyNs: { p50: 30_000, p99: 100_000, p999: 2e6 },
        clientNs: { p50: 29_000, p99: 99_000, p999: 2e6 }, latenessNs: { p50: 8000, p99: 58_000, p999: 2e6 }, cpuPerRequestNs: 37_000 }],
      floorNs: null, tokens: null, loadAverage: null, notes: [],
    };
    const text = formatNetworkBench(report);
    expect(text).toContain('server CPUs 50 % busy; its own CPU 7.60 us/request');
    expect(text).toMatch(/open-loop floor, C client \(spin\) +70,000/);
    expect(text).toMatch(/10,000 requests\/s, C floor \(spin\) +yes +30\.00 +100\.00 +- +29\.00 +99\.00 +2,000\.00 +8\.00 +58\.00 +37\.00/);
  });
});
