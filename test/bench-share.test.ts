// The network bench's client share from the C stamp server's own record of
// its stamps (lib/bench/net-share.ts, benchmarks/stamp-server.c's record /
// stamps lines): JS reads no body, as the C open-loop floor reads none.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { stampRecords } from '../lib/bench/net-map.js';
import { buildStampServer, startServer, type BenchServer } from '../lib/bench/net-servers.js';
import { readServerStamps, serverStampedShare } from '../lib/bench/net-share.js';
import { netServer } from '../lib/bench/net-trial.js';
import type { NetServerTrial } from '../lib/bench/trials.js';
import { tempDir } from './helpers.js';

const dirs: string[] = [];
const servers: BenchServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The C stamp server on any CPU; null (and the test passes) where it cannot be built. */
async function stampServer(): Promise<BenchServer | null> {
  const dir = tempDir('loadgen-share-test-');
  dirs.push(dir);
  const built = buildStampServer(dir);
  if ('note' in built) {
    expect(built.note).toMatch(/compiler|Linux|checkout/);
    return null;
  }
  const server = await startServer('c', null, built.path);
  servers.push(server);
  return server;
}

describe("the C stamp server's record of its stamps", () => {
  it('reads the lines received from the run on, of samples only, from every file', () => {
    const records = readServerStamps(['5 100 110\n-1 120 121\n7 90 95\n', '', '9 200 230\n5 300 301\n'], 100);
    expect(records.count).toBe(3);
    expect(Array.from(records.index.subarray(0, 3))).toEqual([5, 9, 5]);
    expect(Array.from(records.recv.subarray(0, 3))).toEqual([100, 200, 300]);
    expect(Array.from(records.send.subarray(0, 3))).toEqual([110, 230, 301]);
  });

  it('names the file and line of a record that is not three integers', () => {
    expect(() => readServerStamps(['1 2 3\n', '1 2 3\n4 5\n'], 0)).toThrow("the stamp server's record 1, line 2: '4 5' is not 'INDEX RECV SEND'");
    expect(() => readServerStamps(['1 2 x\n'], 0)).toThrow(/record 0, line 1/);
  });

  it('keeps each request between record and stamps: its sample index, receive and send stamps', async () => {
    const server = await stampServer();
    if (!server) return;
    const dir = tempDir('loadgen-share-stamps-');
    dirs.push(dir);
    await fetch(`${server.url}/s/3`); // before `record`: not kept
    expect(await server.askEach(() => 'record', 'RECORDING')).toEqual(['']);
    for (const path of ['/s/5', '/s/17', '/name', '/s/x']) expect((await fetch(`${server.url}${path}`)).status).toBe(200);
    const file = join(dir, 'a b.txt');
    expect(await server.askEach(() => `stamps ${file}`, 'STAMPS ')).toEqual(['4 0']);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => l.split(' ').map(Number));
    expect(lines.map(([index]) => index)).toEqual([5, 17, -1, -1]);
    for (const [, recv, send] of lines) {
      expect(recv).toBeGreaterThan(0);
      expect(send).toBeGreaterThanOrEqual(recv!);
    }
    // Stopped keeping: a later request is not in the next file.
    await fetch(`${server.url}/s/9`);
    expect(await server.askEach(() => `stamps ${file}`, 'STAMPS ')).toEqual(['4 0']);
    // A path it cannot write: said, not a crash (it still answers).
    expect((await server.askEach(() => `stamps ${join(dir, 'no', 'such', 'dir')}`, 'STAMPS '))[0]).toMatch(/^error .*no\/such\/dir: No such file/);
    expect((await fetch(`${server.url}/s/1`)).status).toBe(200);
  });

  it('pairs a trial with JS reading no body: every sample matched, the mapping never called', async () => {
    const server = await stampServer();
    if (!server) return;
    stampRecords.count = 0;
    const run = () => netServer({
      kind: 'net-server', url: server.url, dispatch: 'native', targetQps: 1000, durationMs: 300, targetLatencyNs: 15e6,
      connections: 4, warmupMs: 100, clientShare: true, shareStamps: 'server',
    });
    const trial = await serverStampedShare(server, run);
    expect(trial.serverStamped).toBeUndefined();
    expect(trial.share!.samples).toBeGreaterThan(100);
    expect(trial.share!.matched).toBe(trial.share!.samples);
    expect(trial.share!.serverNs.p50).toBeGreaterThanOrEqual(0);
    expect(trial.share!.clientNs.p50).toBeGreaterThan(0);
    expect(trial.share!.clientNs.p50).toBeLessThanOrEqual(trial.share!.latencyNs.p50);
    // The mapping's response() read no body (it keeps the stamps of each body it reads).
    expect(stampRecords.count).toBe(0);
  }, 30_000);

  it("the 'native-noread' row reads no body, and cannot pair a client share from the bodies", async () => {
    const server = await stampServer();
    if (!server) return;
    stampRecords.count = 0;
    const spec = {
      kind: 'net-server' as const, url: server.url, dispatch: 'native-noread' as const, targetQps: 1000, durationMs: 200, targetLatencyNs: 15e6,
      connections: 4, warmupMs: 0, clientShare: false,
    };
    const trial = await netServer(spec);
    expect(trial.achievedQps).toBeGreaterThan(0);
    expect(trial.failed).toBe(0);
    expect(stampRecords.count).toBe(0);
    await expect(netServer({ ...spec, clientShare: true })).rejects.toThrow(/'native-noread' reads no body/);
  }, 30_000);

  it('fails naming why when the server cannot write its stamps, and leaves no trace behind', async () => {
    const server = await stampServer();
    if (!server) return;
    const dir = tempDir('loadgen-share-trace-');
    dirs.push(dir);
    writeFileSync(join(dir, 'mlperf_log_trace.json'), '');
    // The server asked to write where no directory is.
    const broken: BenchServer = { ...server, askEach: (line, prefix) => server.askEach(() => line(0).replace(/^stamps .*/, 'stamps /no/such/dir/x'), prefix) };
    const trial = { valid: true, achievedQps: 1, latencyNs: { p50: 1, p99: 1, p999: 1 }, failed: 0, deliveryLagNs: null, cpuPerRequestNs: 1, serverStamped: { traceDir: dir, fromNs: 0 } };
    await expect(serverStampedShare(broken, async () => trial as NetServerTrial)).rejects.toThrow(/could not write its stamps: \/no\/such\/dir\/x/);
    expect(() => readFileSync(join(dir, 'mlperf_log_trace.json'))).toThrow(/ENOENT/);
    await expect(serverStampedShare(server, async () => ({ ...trial, serverStamped: undefined }) as NetServerTrial)).rejects.toThrow(/kept no trace/);
  });
});
