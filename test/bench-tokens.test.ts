/**
 * `loadgen bench --tokens` works: the trial counts every streamed token and
 * the whole client process's CPU, and the command prints its rows beside
 * mlcommons/endpoints' figures. Its figures are not asserted (shared, noisy
 * machines): they are the bench's to report (benchmarks/RESULTS.md).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { startServer, type BenchServer } from '../lib/bench/net-servers.js';
import { netTokenCpu } from '../lib/bench/net-trial.js';
import { connectionsFor, ENDPOINTS_CLIENT, formatTokensBench, TOKEN_BENCH_RATES, type TokensBenchReport } from '../lib/bench/tokens.js';
import { loadNative } from '../lib/native/index.js';
import { repoRoot } from './helpers.js';

const servers: BenchServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('loadgen bench --tokens', () => {
  it.runIf(loadNative().nativeHttpAvailable)('the trial counts every token of every completed response and the process CPU over the measured run', async () => {
    const stub = await startServer('openai-stub', null, undefined, { ttftMs: 2, tpotMs: 1 });
    servers.push(stub);
    const t = await netTokenCpu({ kind: 'net-token-cpu', url: stub.url, targetQps: 50, durationMs: 300, outputTokens: 8, warmupMs: 0, connections: 16 });
    expect(t.transport).toBe('native');
    expect(t.completed).toBeGreaterThan(0);
    expect(t.failed).toBe(0);
    expect(t.tokens).toBe(8 * t.completed);
    expect(t.cpuNs).toBeGreaterThan(0);
    expect(t.wallNs).toBeGreaterThanOrEqual(300e6);
    expect(t.ttftNs!.p50).toBeGreaterThanOrEqual(2e6);
  });

  it("endpoints' figures as its docs state them; connections cover twice the responses in flight", () => {
    expect(ENDPOINTS_CLIENT.workerNsPerRequest).toBeCloseTo(46_667, 0);
    expect(ENDPOINTS_CLIENT.streamingWorkerNsPerRequest).toBeCloseTo(1_059_603, 0);
    expect(Math.round(ENDPOINTS_CLIENT.sseEventsPerRequest)).toBe(880);
    // 10 ms + 127 x 2 ms = 264 ms a response.
    expect(TOKEN_BENCH_RATES.map(connectionsFor)).toEqual([22, 69, 544]);
  });

  it.runIf(loadNative().nativeHttpAvailable)('--tiny --json: a row per rate, every figure finite; the text names the comparison and the machine load', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--tokens', '--tiny', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 180_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as TokensBenchReport;
    expect(report.transport).toBe('native');
    expect(report.outputTokens).toBe(128);
    expect(report.rows.map((row) => row.targetQps)).toEqual([10, 100, 1000]);
    for (const row of report.rows) {
      expect(row.tokens).toBeGreaterThan(0);
      for (const v of [row.cpuPerTokenNs, row.cpuPerRequestNs, row.cpuShare, row.requestsPerCore, row.ratioPerRequest, row.ratioPerEvent]) expect(Number.isFinite(v) && v > 0, String(v)).toBe(true);
      expect(row.ratioPerRequest).toBeCloseTo(row.cpuPerRequestNs / ENDPOINTS_CLIENT.workerNsPerRequest, 6);
    }
    const text = formatTokensBench(report);
    expect(text).toContain("mlcommons/endpoints' client");
    expect(text).toMatch(/Machine load \(1-min load average\)|Note: not pinned/);
    expect(r.stderr).toMatch(/client CPU per token at 1000 requests\/s/);
  }, 200_000);
});
