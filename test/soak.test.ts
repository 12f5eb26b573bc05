import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { rssFlatness, type SoakReport, type SoakRssSample } from '../lib/bench/soak.js';
import { repoRoot } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

/** A sample at `elapsedS` with peak RSS `peakRssMb`, taken at the end of run `endOfRun` when given. */
const at = (elapsedS: number, peakRssMb: number, endOfRun?: number): SoakRssSample =>
  ({ elapsedS, rssMb: peakRssMb / 2, peakRssMb, heapUsedMb: 1, arrayBuffersMb: 0, run: 1, ...(endOfRun !== undefined ? { endOfRun } : {}) });

describe('the soak benchmark', () => {
  it('judges RSS by its peak after the first run ending past the first minute, with 10 % tolerance', () => {
    // Too short to judge: no run ends after the first minute, or no run follows the one that does.
    expect(rssFlatness([at(0, 50), at(3, 300, 1)]).flat).toBeNull();
    expect(rssFlatness([at(0, 50), at(30, 250), at(62, 300, 1)]).flat).toBeNull();
    // The baseline is the peak when run 1 (ending at 62 s) ended, not a sample taken mid-run.
    const flat = rssFlatness([at(0, 50), at(30, 250), at(62, 300, 1), at(70, 300), at(124, 329, 2)]);
    expect(flat).toMatchObject({ baselineMb: 300, maxAfterMb: 329, flat: true });
    expect(flat.ratio).toBeCloseTo(329 / 300, 12);
    const growing = rssFlatness([at(0, 50), at(62, 300, 1), at(124, 320, 2), at(186, 331, 3)]);
    expect(growing).toMatchObject({ maxAfterMb: 331, flat: false });
    expect(growing.criterion).toContain('1.1 x the peak RSS when the first run ending after 60 s ended');
  });

  // Proves it works end to end; no figure or timing is asserted (shared, noisy machines).
  it('`loadgen bench --soak 3 --json` runs, counts every completion and prints the documented document', () => {
    const r = spawnSync(process.execPath, [cli, 'bench', '--soak', '3', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as SoakReport;
    expect(report.config).toMatchObject({ seconds: 3, targetQps: 100_000, runSeconds: 60, sampleIntervalS: 10, scenario: 'Server', dispatch: 'wake', gcBeforeEachRun: true });
    expect(report.runs.length).toBeGreaterThanOrEqual(1);
    for (const run of report.runs) {
      expect(run.issuedSamples).toBeGreaterThan(0);
      expect(run.lostCompletions).toBe(0);
      expect(run.rejectedCompletions).toBe(0);
      expect(run.creditedWithoutCompletion).toBe(0);
      expect(run.completedSamples + run.incompleteSamples).toBe(run.issuedSamples);
      expect(run.sutCompleted).toBe(run.sutReceived);
      expect(typeof run.valid).toBe('boolean');
    }
    expect(report.totals.lostCompletions).toBe(0);
    // A sample at the start and at the end at least; each has RSS and heap figures.
    expect(report.rss.length).toBeGreaterThanOrEqual(2);
    for (const s of report.rss) expect(s.rssMb).toBeGreaterThan(0);
    expect(report.rssFlat.flat).toBeNull();
    expect(report.passed).toBe(true);
    // The progress lines went to stderr.
    expect(r.stderr).toMatch(/t=\s+0\.0 s\s+rss/);
    expect(report.rss.at(-1)!.endOfRun).toBe(report.runs.length);
  }, 60_000);

  it('--soak rejects --tiny and --repeat, and --soak-run needs --soak (exit 2)', () => {
    for (const args of [['--soak', '3', '--tiny'], ['--soak', '3', '--repeat', '2'], ['--soak-run', '5'], ['--soak', '0']]) {
      const r = spawnSync(process.execPath, [cli, 'bench', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
  });
});
