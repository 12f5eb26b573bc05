import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { BenchReport } from '../lib/bench.js';
import { repoRoot } from './helpers.js';

// Proves the benchmark works end to end; figures are not asserted (shared,
// noisy machines): speed targets live in `npm run bench`, not in tests.
describe('loadgen bench --tiny --json', () => {
  it('runs every trial in a fresh process and prints the documented document', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'bench', '--tiny', '--json'], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as BenchReport;
    const positive = (n: unknown) => expect(typeof n === 'number' && Number.isFinite(n) && n > 0, String(n)).toBe(true);
    positive(report.platform.clockReadNs);
    positive(report.platform.jsToNativeCallNs);
    positive(report.platform.tsfnWakeNs.p50);
    positive(report.platform.tsfnWakeNs.p99);
    for (const sut of ['null-native', 'wake', 'pure-js']) {
      const rows = report.server.filter((row) => row.sut === sut);
      expect(rows.map((row) => row.targetQps)).toEqual([1000, 10000]);
      for (const row of rows) {
        expect(typeof row.valid).toBe('boolean');
        positive(row.latencyNs.p50 + 1);
        positive(row.latencyNs.p99);
        positive(row.latencyNs.p999);
      }
      positive(report.singleStreamQps[sut as 'wake']);
    }
    positive(report.serverMaxValidQps['null-native']);
    positive(report.serverMaxValidQps.wake);
    positive(report.offlineSamplesPerSec['null-native']);
    positive(report.offlineSamplesPerSec.wake);
    positive(report.bytesPerSample);
    expect(report.machine.node).toBe(process.version);
  }, 300_000);
});
