// Energy (issue 14 item 4): the rectangle-rule arithmetic on known readings,
// the sources (a scripted --power-command, a fake powercap tree, a fake
// nvidia-smi), the flags, and a run's result, summary block and report.html.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import {
  createSyntheticQsl,
  energyOverWindow,
  parsePowerTimestamp,
  powerProblems,
  querySamplesComplete,
  SettingsError,
  startTest,
  writeReport,
  type PowerReading,
  type QuerySample,
  resolveLogSettings,
  type SystemUnderTest,
  type TestResult,
} from '../lib/index.js';
import { addInferredAndPower, powerLines, powerResult } from '../lib/power/run-extras.js';
import { createPowerSource, monotonicWallClock } from '../lib/power/sources.js';
import { delayedSut, repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

/** A copy of folder `source` in a new temp folder that every user can read (folders 0755, files 0644); its path. */
function worldReadableCopy(source: string): string {
  const root = tempDir('loadgen-readable-');
  const copy = join(root, basename(source));
  cpSync(source, copy, { recursive: true });
  const open = (path: string): void => {
    if (statSync(path).isDirectory()) {
      chmodSync(path, 0o755);
      for (const name of readdirSync(path)) open(join(path, name));
    } else {
      chmodSync(path, 0o644);
    }
  };
  open(root);
  return copy;
}

function completingSut(): SystemUnderTest {
  return { name: 'completing', issueQuery: (samples: QuerySample[]) => querySamplesComplete(samples) };
}

/** An executable shell script in a fresh folder. */
function script(body: string, name = 'watts.sh'): string {
  const dir = tempDir('loadgen-power-');
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A script printing 10, 20, 30, … W on successive calls (then `after` from call `failFrom` on). */
function countingScript(failFrom = Infinity, after = 'echo n/a'): string {
  const dir = tempDir('loadgen-power-');
  const counter = join(dir, 'count');
  return script(`n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}\n` +
    `if [ $n -ge ${Number.isFinite(failFrom) ? failFrom : 999999999} ]; then ${after}; exit 0; fi\necho $((n*10))`);
}

// About 300 ms: 300 queries of a SUT answering after 1 ms.
const SS = { scenario: 'SingleStream', minDurationMs: 300, minQueryCount: 100, singleStreamExpectedLatencyNs: 1_000_000 } as const;

/** Σ watts_i × the part of (t_{i-1}, t_i] inside [0, seconds], written out independently of the library. */
function expectedJoules(readings: { t: number; watts: number | null; error?: string }[], seconds: number): number {
  const good = readings.filter((r) => r.error === undefined);
  let joules = 0;
  for (let i = 1; i < good.length; ++i) {
    const overlap = Math.min(good[i]!.t, seconds) - Math.max(good[i - 1]!.t, 0);
    if (overlap > 0) joules += good[i]!.watts! * overlap;
  }
  return joules;
}

describe('energy arithmetic (rectangle rule: each reading x the time since the previous one)', () => {
  const readings: PowerReading[] = [
    { atMs: 0, watts: 10 },
    { atMs: 1000, watts: 20 },
    { atMs: 2000, watts: 30 },
    { atMs: 3000, watts: 40 },
  ];

  it('clips each reading\'s interval to the window: 20 W x 0.5 s + 30 W x 1 s + 40 W x 0.5 s = 60 J over 2 s, 30 W', () => {
    const e = energyOverWindow(readings, 500, 2500);
    expect(e.energyJoules).toBe(60);
    expect(e.coveredMs).toBe(2000);
    expect(e.samples).toBe(3);
    expect(e.maxGapMs).toBe(1000);
    expect(e.uncoveredStartMs).toBe(0);
    expect(e.uncoveredEndMs).toBe(0);
    // The first reading only marks time: its 10 W covers nothing before it.
    expect(energyOverWindow(readings, 0, 3000).energyJoules).toBe(20 + 30 + 40);
  });

  it('a failed reading is skipped and flagged; the next good reading covers its time', () => {
    const withFailure: PowerReading[] = [...readings.slice(0, 2), { atMs: 1500, watts: null, error: 'the power command gave no answer within 2000 ms' }, ...readings.slice(2)];
    const e = energyOverWindow(withFailure, 500, 2500);
    expect(e.energyJoules).toBe(60);
    expect(e.failedReadings).toBe(1);
    expect(powerProblems(e, 3)).toEqual(['1 reading failed during the run (first: the power command gave no answer within 2000 ms); their time is covered by the next good reading']);
  });

  it('flags too few readings, gaps over a second, and a window the readings do not cover', () => {
    const sparse: PowerReading[] = [{ atMs: 100, watts: 5 }, { atMs: 1700, watts: 5 }];
    const e = energyOverWindow(sparse, 0, 2000);
    expect(e.energyJoules).toBe(8);  // 5 W x 1.6 s
    expect(e.uncoveredStartMs).toBe(100);
    expect(e.uncoveredEndMs).toBe(300);
    const problems = powerProblems(e);
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/only 1 power readings cover the run; the power rules require at least 60/);
    expect(problems[1]).toBe('1600 ms between two readings; the power rules require a reading at least once a second');
    expect(problems[2]).toBe('the first 100 ms of the run have no reading');
    expect(problems[3]).toMatch(/^the last 300 ms of the run have no reading/);
    expect(powerProblems(energyOverWindow(readings, 500, 2500), 3)).toEqual([]);
  });

  it('reads the detail log\'s power timestamps as UTC', () => {
    expect(parsePowerTimestamp('11-23-2026 17:20:01.123')).toBe(Date.UTC(2026, 10, 23, 17, 20, 1, 123));
    expect(parsePowerTimestamp('2026-11-23 17:20:01')).toBeUndefined();
  });
});

describe('power sources', () => {
  it('RAPL: sums the packages (not their subzones) and unwraps a counter past max_energy_range_uj', async () => {
    const root = tempDir('loadgen-rapl-');
    const zone = (name: string, uj: number, max = 1_000_000): void => {
      mkdirSync(join(root, name), { recursive: true });
      writeFileSync(join(root, name, 'energy_uj'), `${uj}\n`);
      writeFileSync(join(root, name, 'max_energy_range_uj'), `${max}\n`);
    };
    zone('intel-rapl:0', 100_000);
    zone('intel-rapl:0:0', 5_000);  // a part of package 0: never added
    zone('intel-rapl:1', 990_000);
    const source = createPowerSource({ source: 'rapl', raplPath: root });
    const first = await source.read(1000);
    expect(first.watts).toBeNull();  // a time mark
    await new Promise((r) => setTimeout(r, 40));
    writeFileSync(join(root, 'intel-rapl:0', 'energy_uj'), '600000\n');  // +0.5 J
    writeFileSync(join(root, 'intel-rapl:0:0', 'energy_uj'), '905000\n');
    writeFileSync(join(root, 'intel-rapl:1', 'energy_uj'), '240000\n');  // wrapped: +10 000 + 240 000 µJ
    const second = await source.read(1000);
    expect(second.error).toBeUndefined();
    expect((second.watts! * (second.atMs - first.atMs)) / 1000).toBeCloseTo(0.75, 12);
  });

  it('RAPL counters readable only by root (Linux\'s default): says so and how to fix it', async () => {
    const root = tempDir('loadgen-rapl-');
    chmodSync(root, 0o755);
    mkdirSync(join(root, 'intel-rapl:0'), { mode: 0o755 });
    writeFileSync(join(root, 'intel-rapl:0', 'energy_uj'), '1\n', { mode: 0o600 });
    writeFileSync(join(root, 'intel-rapl:0', 'max_energy_range_uj'), '100\n');
    let error: string | undefined;
    if (process.getuid?.() === 0) {
      // Root reads anything: read as 'nobody' in a child, as a user would.
      // The child imports a world-readable copy of dist/: nobody may not be
      // able to read the checkout (a clone in a private 0700 folder).
      const dist = worldReadableCopy(join(repoRoot, 'dist'));
      const code = `import { createPowerSource } from ${JSON.stringify(pathToFileURL(join(dist, 'power', 'sources.js')).href)};\n` +
        `const r = await createPowerSource({ source: 'rapl', raplPath: ${JSON.stringify(root)} }).read(1000); console.log(r.error);`;
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30_000 });
      expect(r.stderr).toBe('');
      error = r.stdout.trim();
    } else {
      error = (await createPowerSource({ source: 'rapl', raplPath: root }).read(1000)).error;
    }
    expect(error).toBe(`${join(root, 'intel-rapl:0', 'energy_uj')} is not readable by this user (Linux restricts RAPL counters to root): ` +
      `run as root, or make it readable (sudo chmod a+r ${join(root, 'intel-rapl:*', 'energy_uj')})`);
  });

  it('RAPL / nvidia-smi that are not there: a clear message', async () => {
    const none = await createPowerSource({ source: 'rapl', raplPath: tempDir() }).read(1000);
    expect(none.error).toMatch(/no RAPL domains .*intel-rapl:N.*exposes no powercap energy counters/);
    const smi = await createPowerSource({ source: 'nvidia-smi', command: join(tempDir(), 'nvidia-smi') }).read(1000);
    expect(smi.error).toBe('nvidia-smi not found on PATH (no NVIDIA driver on this machine)');
  });

  it('nvidia-smi: every GPU\'s power.draw summed; [N/A] is not a number', async () => {
    const fake = script('[ "$1 $2" = "--query-gpu=power.draw --format=csv,noheader,nounits" ] || exit 9\nprintf "70.25\\n30.5\\n"', 'nvidia-smi');
    expect((await createPowerSource({ source: 'nvidia-smi', command: fake }).read(1000)).watts).toBe(100.75);
    const na = script('echo "[N/A]"', 'nvidia-smi');
    expect((await createPowerSource({ source: 'nvidia-smi', command: na }).read(1000)).error).toBe("nvidia-smi printed '[N/A]', not power draws in watts");
  });

  it('a command runs in one shell started once (no process spawned from the JS thread per reading), ended by close()', async () => {
    const source = createPowerSource({ source: 'command', command: 'echo $$' });  // $$: the loop shell's pid
    const pids: Array<number | null> = [];
    for (let i = 0; i < 3; ++i) pids.push((await source.read(2000)).watts);
    expect(new Set(pids).size).toBe(1);
    expect(pids[0]).not.toBe(process.pid);
    source.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(() => process.kill(pids[0]!, 0)).toThrow(/ESRCH/);
  });

  it('a command that hangs is killed with its children after the timeout', async () => {
    const marker = join(tempDir(), 'alive');
    const hang = script(`(sleep 2; touch ${marker}) & sleep 5`);
    const reading = await createPowerSource({ source: 'command', command: hang }).read(200);
    expect(reading.error).toBe('the power command gave no answer within 200 ms');
    await new Promise((r) => setTimeout(r, 2300));
    expect(existsSync(marker)).toBe(false);
  }, 10_000);
});

describe('startTest({ power })', () => {
  it('a scripted source: energy = Σ reading x time since the previous one over power_begin..power_end, in the result, summary and report.html', async () => {
    const outdir = tempDir();
    const result = await startTest(delayedSut(1), createSyntheticQsl(64), SS, { outdir },
      { power: { source: 'command', command: countingScript(), intervalMs: 20 } });
    const power = result.power!;
    expect(power.source).toMatch(/^command: .*watts\.sh$/);
    expect(power.method).toBe('rectangle');
    const detail = readFileSync(result.files.detail!, 'utf8');
    expect(detail).toContain(`"key": "power_begin", "value": "${power.window!.begin}"`);
    expect(detail).toContain(`"key": "power_end", "value": "${power.window!.end}"`);
    // The readings print 10, 20, 30, … W in order, the first before the run, the last after it.
    const watts = power.readings.map((r) => r.watts);
    expect(watts).toEqual(watts.map((_, i) => 10 * (i + 1)));
    expect(power.readings[0]!.t).toBeLessThanOrEqual(0);
    expect(power.readings[power.readings.length - 1]!.t).toBeGreaterThanOrEqual(power.window!.seconds);
    expect(power.energyJoules).toBeCloseTo(expectedJoules(power.readings, power.window!.seconds), 9);
    expect(power.averageWatts).toBeCloseTo(power.energyJoules! / power.window!.seconds, 9);
    expect(power.energyPerSampleJoules).toBe(power.energyJoules! / result.counts.completedSamples);
    expect(power.energyPerQueryJoules).toBe(power.energyJoules! / result.counts.issuedQueries);
    expect(power.samplesPerJoule).toBe(result.counts.completedSamples / power.energyJoules!);
    // A run of well under a minute: fewer readings than the rules' 60, flagged.
    expect(power.meetsRules).toBe(false);
    expect(power.problems[0]).toMatch(/^only \d+ power readings cover the run; the power rules require at least 60/);
    // The inferred Offline figure per joule uses the measured average power.
    expect(result.inferred!.offlineSamplesPerJoule).toBe(result.inferred!.offline.value / power.averageWatts!);

    const summary = readFileSync(result.files.summary!, 'utf8');
    expect(summary).toBe(result.summaryText);
    expect(summary.indexOf('Power (measured by loadgen')).toBeGreaterThan(summary.indexOf('Inferred results'));
    expect(summary.indexOf('Inferred results')).toBeGreaterThan(summary.indexOf('Due = scheduled time'));
    expect(summary).toContain('Power result : FLAGGED\nFlagged: only ');
    const html = readFileSync(writeReport(outdir), 'utf8');
    expect(html).toContain('id="chart-power-time"');
    expect(html).toContain('<h2 id="power">Power</h2>');
    // Stopped with the run: no reading after it.
    const count = power.readings.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(result.power!.readings.length).toBe(count);
  });

  it('a constant 42.5 W: average power 42.5 W, energy 42.5 W x the window exactly', async () => {
    // A SUT of 1 ms: the run lasts its 300 ms (an instant SUT ends SingleStream's
    // generated queries within a millisecond: a window of no length, tested below).
    const result = await startTest(delayedSut(1), createSyntheticQsl(64), SS, { outdir: tempDir() },
      { power: { source: 'command', command: script('echo 42.5'), intervalMs: 25 } });
    // On failure, say what the sampler saw (a CI run once got no covered window here).
    const seen = JSON.stringify({ window: result.power!.window, problems: result.power!.problems, readings: result.power!.readings });
    expect(result.power!.averageWatts, seen).toBeCloseTo(42.5, 9);
    expect(result.power!.energyJoules, seen).toBeCloseTo(42.5 * result.power!.window!.seconds, 9);
    expect(result.power!.failedReadings, seen).toBe(0);
  });

  it('non-numeric output during the run is flagged, never averaged', async () => {
    const result = await startTest(delayedSut(1), createSyntheticQsl(64), SS, { outdir: tempDir() },
      { power: { source: 'command', command: countingScript(4), intervalMs: 20 } });
    const power = result.power!;
    expect(power.failedReadings).toBeGreaterThan(0);
    expect(power.meetsRules).toBe(false);
    expect(power.problems.join('\n')).toContain("printed 'n/a', not a number of watts");
    expect(power.problems.join('\n')).toMatch(/the last \d+ ms of the run have no reading \(the source stopped answering\)/);
    // Only readings 2 and 3 (20 W, 30 W) carry energy.
    expect(power.energyJoules).toBeCloseTo(expectedJoules(power.readings, power.window!.seconds), 9);
    expect(power.readings.filter((r) => r.error === undefined).map((r) => r.watts)).toEqual([10, 20, 30]);
  });

  it('a source that cannot be read, or bad options: SettingsError before anything runs', async () => {
    const outdir = tempDir();
    const run = (power: unknown) => startTest(completingSut(), createSyntheticQsl(64), SS, { outdir }, { power: power as never });
    await expect(run({ source: 'command', command: script('echo oops >&2; exit 3') }))
      .rejects.toThrow("--power command: no power readings here: the power command exited with 3: oops");
    await expect(run({ source: 'nvidia-smi', command: join(tempDir(), 'nvidia-smi') })).rejects.toThrow(/nvidia-smi not found on PATH/);
    await expect(run({ source: 'rapl', raplPath: tempDir() })).rejects.toBeInstanceOf(SettingsError);
    await expect(run({ source: 'watts' })).rejects.toThrow('power.source must be one of rapl, nvidia-smi, command, got watts');
    await expect(run({ source: 'command', command: 'echo 1', intervalMs: 2000 })).rejects.toThrow(/power.intervalMs must be an integer from 10 to 1000/);
    await expect(run({ source: 'command' })).rejects.toThrow(/needs power.command/);
    expect(readdirSync(outdir).filter((f) => f.startsWith('mlperf_log'))).toEqual([]);
  });
});

describe('powerResult: a figure with no value is null, never 0', () => {
  const window = { begin: '01-01-2026 00:00:01.000', end: '01-01-2026 00:00:02.000' };
  const at = (s: number) => Date.UTC(2026, 0, 1, 0, 0, s);
  const counts = (completedSamples: number, issuedQueries: number) => ({ counts: { completedSamples, issuedQueries } }) as Pick<TestResult, 'counts'>;

  it('no reading encloses any of the window: energy, average and every ratio are null, flagged, printed as "no value"', () => {
    // Both readings before power_begin (a source that stopped answering, or a wall clock stepped back).
    const power = powerResult({ source: 's', intervalMs: 100, readings: [{ atMs: at(0), watts: 5 }, { atMs: at(0) + 500, watts: 5 }] }, window, counts(10, 10));
    expect([power.averageWatts, power.energyJoules, power.energyPerSampleJoules, power.energyPerQueryJoules, power.samplesPerJoule]).toEqual([null, null, null, null, null]);
    expect(power.meetsRules).toBe(false);
    expect(power.problems).toContain('no two good readings enclose any of the run: no energy or average power');
    const lines = powerLines(power).join('\n');
    expect(lines).toContain('Average power (W) : no value\n');
    expect(lines).not.toMatch(/: 0\n/);
  });

  it('no completed sample: energy and power measured, the per-sample figures null and flagged', () => {
    const power = powerResult({ source: 's', intervalMs: 100, readings: [{ atMs: at(0), watts: 7 }, { atMs: at(3), watts: 7 }] }, window, counts(0, 4));
    expect(power.averageWatts).toBe(7);
    expect(power.energyJoules).toBe(7);
    expect(power.energyPerQueryJoules).toBe(7 / 4);
    expect(power.energyPerSampleJoules).toBeNull();
    expect(power.samplesPerJoule).toBeNull();
    expect(power.problems).toContain('no sample completed: no energy per sample or samples per joule');
  });

  it('a window of no length (a run within one millisecond) held by a reading: its watts, 0 J, no samples per joule', () => {
    const instant = { begin: '01-01-2026 00:00:01.000', end: '01-01-2026 00:00:01.000' };
    const readings = [{ atMs: at(0), watts: 3 }, { atMs: at(0) + 990, watts: 42.5 }, { atMs: at(1) + 30, watts: 9 }];
    const power = powerResult({ source: 's', intervalMs: 25, readings }, instant, counts(300, 300));
    expect(power.window!.seconds).toBe(0);
    expect(power.averageWatts).toBe(9);
    expect(power.energyJoules).toBe(0);
    expect(power.samplesPerJoule).toBeNull();
    expect(power.problems).not.toContain('no two good readings enclose any of the run: no energy or average power');
    expect(JSON.stringify(power)).not.toMatch(/Infinity|NaN/);
    // No reading after the instant: nothing holds it.
    const unheld = powerResult({ source: 's', intervalMs: 25, readings: readings.slice(0, 2) }, instant, counts(300, 300));
    expect([unheld.averageWatts, unheld.energyJoules]).toEqual([null, null]);
  });

  it('a source that reads 0 W: energy 0 J is a figure, samples per joule (infinite) is null', () => {
    const power = powerResult({ source: 's', intervalMs: 100, readings: [{ atMs: at(0), watts: 0 }, { atMs: at(3), watts: 0 }] }, window, counts(10, 10));
    expect(power.energyJoules).toBe(0);
    expect(power.averageWatts).toBe(0);
    expect(power.samplesPerJoule).toBeNull();
    expect(JSON.stringify(power)).not.toMatch(/Infinity|NaN/);
  });
});

describe('monotonicWallClock', () => {
  it('reads the wall clock once: a wall clock stepped back afterwards moves no reading', () => {
    const realNow = Date.now;
    const clock = monotonicWallClock();
    const before = clock();
    try {
      Date.now = () => realNow() - 3_600_000;  // NTP stepped the clock back an hour
      const after = clock();
      expect(after).toBeGreaterThanOrEqual(before);
      expect(after - before).toBeLessThan(1000);
    } finally {
      Date.now = realNow;
    }
  });
});

describe('addInferredAndPower', () => {
  it('flags a run without a power window, and a FindPeakPerformance run (a window per trial)', () => {
    const result = {
      scenario: 'Server', mode: 'FindPeakPerformance', files: {}, summaryText: '', testDatetime: 'x',
      counts: { completedSamples: 10, issuedQueries: 10 },
    } as unknown as TestResult;
    addInferredAndPower(result, resolveLogSettings({ outdir: tempDir() }), { source: 'test', intervalMs: 100, readings: [{ atMs: 0, watts: 1 }] });
    expect(result.power!.meetsRules).toBe(false);
    expect(result.power!.problems).toEqual([
      'no power_begin/power_end in the detail log (no detail log written?): no power window',
      "FindPeakPerformance: the power window is the last trial's, the per-sample figures divide by the peak trial's counts",
    ]);
    expect(result.summaryText).toContain('Flagged: FindPeakPerformance: the power window');
  });
});

describe('loadgen run --power', () => {
  const loadgen = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  // 2M queries: ~0.3-0.4 s of SingleStream with the JS null SUT, several readings at 50 ms (min_duration alone could be met too late: INVALID).
  const base = ['run', '--sut', 'null', '--scenario', 'SingleStream', '--set', 'min_duration_ms=100', '--set', 'min_query_count=2000000', '--no-progress'];

  it('--power-command CMD: result.power in --json', () => {
    const outdir = tempDir();
    const r = loadgen([...base, '--outdir', outdir, '--json', '--power-command', script('echo 7'), '--power-interval-ms', '50']);
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout) as { power: { averageWatts: number; intervalMs: number }; inferred: { from: string } };
    expect(result.power.averageWatts).toBeCloseTo(7, 9);
    expect(result.power.intervalMs).toBe(50);
    expect(result.inferred.from).toBe('SingleStream');
  });

  it('an unavailable source or a bad option exits 2 before the run, naming it', () => {
    const outdir = tempDir();
    const cases: Array<[string[], RegExp]> = [
      [['--power', 'nvidia-smi'], /nvidia-smi/],
      [['--power', 'command'], /--power command needs --power-command CMD/],
      [['--power', 'rapl', '--power-command', 'echo 1'], /--power-command applies to --power command, not --power rapl/],
      [['--power-command', 'echo 1', '--power-interval-ms', '5000'], /--power-interval-ms must be an integer from 10 to 1000 .* got '5000'/],
      [['--power-interval-ms', '100'], /--power-interval-ms applies only with --power/],
      [['--power', 'watts'], /--power 'watts' is not one of rapl, nvidia-smi, command/],
    ];
    for (const [args, message] of cases) {
      const r = loadgen([...base, '--outdir', outdir, ...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(false);
  });
});
