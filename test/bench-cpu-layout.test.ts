/**
 * The network bench's CPU layout (lib/bench/cpu-layout.ts): the client's CPUs
 * first, the server's the rest; the C stamp server as one process per CPU on
 * one port; the server's busy share, and when it was the limit.
 */
import { readFileSync, rmSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { busyShare, clientCpusWanted, cpuListText, netCpuLayout, processCpuSeconds, SERVER_LIMIT_BUSY, serverLimit } from '../lib/bench/cpu-layout.js';
import { checkClock } from '../lib/bench/net.js';
import { buildStampServer, startServer } from '../lib/bench/net-servers.js';
import type { PeakRun } from '../lib/bench/peak.js';
import { allowedCpuList } from '../lib/bench/trials.js';
import { tempDir } from './helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('network bench: CPU layout', () => {
  it('gives a row of N client threads N + 1 CPUs, a single-thread row one, and the server the rest (at least one)', () => {
    expect(clientCpusWanted('native')).toBe(1);
    expect(clientCpusWanted('native-thread')).toBe(1);
    expect(clientCpusWanted('wake')).toBe(1);
    expect(clientCpusWanted('native-x2')).toBe(3);
    expect(clientCpusWanted('native-x8')).toBe(9);
    // The scaling run's rows (no body in JS) as their bodies-in-JS twins.
    expect(clientCpusWanted('native-noread')).toBe(1);
    expect(clientCpusWanted('native-noread-x4')).toBe(5);
    const sixteen = Array.from({ length: 16 }, (_, i) => i);
    expect(netCpuLayout(sixteen, 1)).toEqual({ client: [0], server: sixteen.slice(1) });
    expect(netCpuLayout(sixteen, 9)).toEqual({ client: sixteen.slice(0, 9), server: sixteen.slice(9) });
    // Never the server's last CPU.
    expect(netCpuLayout(sixteen, 17)).toEqual({ client: sixteen.slice(0, 15), server: [15] });
    // This machine's two: the rows that want more still leave CPU 1 to the server.
    expect(netCpuLayout([0, 1], 3)).toEqual({ client: [0], server: [1] });
    // A cpuset that is not 0..n: its own CPUs, sorted, once each.
    expect(netCpuLayout([9, 4, 4, 6], 2)).toEqual({ client: [4, 6], server: [9] });
    expect(netCpuLayout([3], 1)).toBeNull();
    expect(netCpuLayout([], 1)).toBeNull();
    expect(cpuListText([0, 1, 2, 5, 7, 8])).toBe('0-2,5,7-8');
    expect(cpuListText([4])).toBe('4');
  });

  it("reads a process's CPU time and the server's busy share, defined for every input", () => {
    const [self] = processCpuSeconds([process.pid]);
    if (process.platform === 'linux') expect(self).toBeGreaterThan(0);
    expect(processCpuSeconds([2 ** 30])[0]).toBeNaN();
    expect(busyShare([1, 2], [1.5, 2.5], 1, 2)).toBe(0.5);
    expect(busyShare([0], [3], 1, 2)).toBe(1);  // tick rounding: clamped
    expect(busyShare([0], [Number.NaN], 1, 1)).toBeNull();
    expect(busyShare([1], [0.5], 1, 1)).toBeNull();
    expect(busyShare([0], [1], 0, 1)).toBeNull();
    expect(busyShare([0], [1], 1, 0)).toBeNull();
    expect(busyShare([], [], 1, 1)).toBeNull();
  });

  it('names the server as the limit only for a failed run above the peak with its CPUs busy', () => {
    const run = (targetQps: number, valid: boolean, serverBusy?: number): PeakRun =>
      ({ targetQps, valid, latencyP99Ns: 1e6, achievedQps: targetQps, ...(serverBusy !== undefined ? { serverBusy } : {}) });
    expect(SERVER_LIMIT_BUSY).toBe(0.9);
    expect(serverLimit([run(1000, true, 0.99), run(2000, false, 0.5)], 1000)).toBeUndefined();
    expect(serverLimit([run(1000, true), run(2000, false)], 1000)).toBeUndefined();
    expect(serverLimit([run(1000, true, 0.6), run(4000, false, 0.97), run(2000, false, 0.93)], 1000))
      .toBe('the server was the limit: its CPUs were 93 % busy in the INVALID run at 2,000 requests/s');
    // Below the peak: a failed run there says nothing about the limit.
    expect(serverLimit([run(500, false, 0.99), run(1000, true, 0.5)], 1000)).toBeUndefined();
  });

  const allowed = allowedCpuList();
  it.skipIf(process.platform !== 'linux' || allowed === null || allowed.length < 2)('the C stamp server runs one process per server CPU on one port', async () => {
    const dir = tempDir('loadgen-net-layout-test-');
    dirs.push(dir);
    const built = buildStampServer(dir);
    if ('note' in built) {
      expect(built.note).toMatch(/compiler|Linux|checkout/);
      return;
    }
    const cpus = allowed!.slice(0, 2);
    const server = await startServer('c', cpus, built.path);
    try {
      expect(server.cpus).toEqual(cpus);
      expect(server.pids).toHaveLength(2);
      expect(new Set(server.pids).size).toBe(2);
      for (const pid of server.pids) expect(processCpuSeconds([pid])[0]).not.toBeNaN();
      // Each pinned to its own CPU.
      const affinity = server.pids.map((pid) => /^Cpus_allowed_list:\s*(\S+)/m.exec(readStatus(pid))?.[1]);
      expect(affinity).toEqual(cpus.map(String));
      expect(await checkClock(server.url, 20)).toBe(true);
    } finally {
      await server.close();
    }
    for (const pid of server.pids) expect(processCpuSeconds([pid])[0]).toBeNaN();
  });
});

function readStatus(pid: number): string {
  return readFileSync(`/proc/${pid}/status`, 'utf8');
}
