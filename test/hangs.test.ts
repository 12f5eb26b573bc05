// Nothing hangs (issue 11, item 4): QSL calls time out, rates whose run
// could not end are refused, every wait of a Server run respects
// max_duration, and an outdir that cannot be made is bad input.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createNullSut,
  createSyntheticQsl,
  LogOutputError,
  resolveTestSettings,
  SettingsError,
  startTest,
  SutError,
  type QuerySampleLibrary,
  type TestResult,
} from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { toNativeRunConfig } from '../lib/settings/to-native.js';
import { DEFAULT_LOG_SETTINGS } from '../lib/settings/fields.js';
import { repoRoot, tempDir } from './helpers.js';

const quickServer = { scenario: 'Server', serverTargetQps: 3000, minDurationMs: 200, minQueryCount: 500 } as const;
const cli = join(repoRoot, 'dist', 'cli.js');

function qslWith(load: () => unknown, unload: () => unknown = () => undefined): QuerySampleLibrary {
  return {
    name: 'qsl-under-test',
    totalSampleCount: 8,
    performanceSampleCount: 8,
    loadSamplesToRam: load as QuerySampleLibrary['loadSamplesToRam'],
    unloadSamplesFromRam: unload as QuerySampleLibrary['unloadSamplesFromRam'],
  };
}

describe('QSL calls time out (qslTimeoutMs)', () => {
  it('a loadSamplesToRam promise that never settles fails the run, logs written', async () => {
    const outdir = tempDir();
    const started = Date.now();
    const error = await startTest(createNullSut(), qslWith(() => new Promise(() => {})), { ...quickServer, qslTimeoutMs: 300 }, { outdir })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toBeInstanceOf(SutError);
    expect((error as Error).message).toContain('qsl.loadSamplesToRam did not settle within 300 ms (qslTimeoutMs)');
    expect(((error as SutError).result as TestResult).counts.issuedQueries).toBe(0);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(true);
    expect(loadNative().isRunning()).toBe(false);
  });

  it('an unloadSamplesFromRam that never settles fails the run after it was measured', async () => {
    const error = await startTest(createNullSut(), qslWith(() => undefined, () => new Promise(() => {})),
      { ...quickServer, qslTimeoutMs: 200 }, { outdir: tempDir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    expect((error as Error).message).toContain('qsl.unloadSamplesFromRam did not settle within 200 ms (qslTimeoutMs)');
    expect(((error as SutError).result as TestResult).counts.issuedQueries).toBeGreaterThan(0);
  });

  it('a settle after the timeout is harmless: the next run is unaffected', async () => {
    let settle!: () => void;
    const late = new Promise<void>((resolve) => (settle = resolve));
    const error = await startTest(createNullSut(), qslWith(() => late), { ...quickServer, qslTimeoutMs: 100 }, { outdir: tempDir() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    let loads = 0;
    const result = await startTest(createNullSut(), qslWith(async () => {
      loads += 1;
      settle();  // the timed-out call of the earlier run settles during this one
      await late;
    }), { ...quickServer, qslTimeoutMs: 1000 }, { outdir: tempDir() });
    expect(loads).toBe(1);
    expect(result.valid).toBe(true);
  });

  it('0 waits forever; the setting is range-checked', () => {
    expect(resolveTestSettings({ qslTimeoutMs: 0 }).qslTimeoutMs).toBe(0);
    expect(resolveTestSettings({}).qslTimeoutMs).toBe(60000);
    expect(() => resolveTestSettings({ qslTimeoutMs: 2 ** 31 })).toThrow(/qslTimeoutMs = 2147483648: expected an integer in \[0, 2147483647\]/);
  });

  it('the timer does not keep the process alive after the run', () => {
    const script = `
      import { startTest, createNullSut } from ${JSON.stringify(join(repoRoot, 'dist', 'index.js'))};
      const qsl = { name: 'q', totalSampleCount: 8, performanceSampleCount: 8,
        async loadSamplesToRam() {}, async unloadSamplesFromRam() {} };
      const r = await startTest(createNullSut(), qsl,
        { scenario: 'Offline', minDurationMs: 0, minQueryCount: 10, qslTimeoutMs: 60000 }, { outdir: ${JSON.stringify(tempDir())} });
      console.log(r.validity);`;
    const started = Date.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('VALID');
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('rates whose run could not end or whose generation explodes are bad input', () => {
  it.each([
    [{ scenario: 'Server', serverTargetQps: 5e-324 }, 'serverTargetQps', 'at least 0.000165344'],
    [{ scenario: 'Server', serverTargetQps: 1e-9 }, 'serverTargetQps', 'at least 0.000165344'],
    [{ scenario: 'Server', serverTargetQps: 1e-3, minQueryCount: 1000 }, 'serverTargetQps', 'at least 0.00165344'],
    [{ scenario: 'Server', serverTargetQps: 1e-3, mode: 'AccuracyOnly' }, 'serverTargetQps', 'the accuracy sample count'],
    [{ scenario: 'Server', serverTargetQps: 1e300 }, 'serverTargetQps', 'at most 357294000'],
    [{ scenario: 'Server', serverTargetQps: 1e7, minDurationMs: 600000 }, 'serverTargetQps', 'at most 7132120'],
    [{ scenario: 'Offline', offlineExpectedQps: 1e300 }, 'offlineExpectedQps', 'at most 390451000'],
    [{ scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1e300 }, 'singleStreamExpectedLatencyNs', '9.2e18'],
    [{ scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 1e7 }, 'singleStreamExpectedLatencyNs', 'at least 4656.62'],
    [{ scenario: 'MultiStream', minQueryCount: 1e9 }, 'minQueryCount', 'at most 536870912'],
  ])('%j', async (settings, key, mention) => {
    const qsl = createSyntheticQsl(2048, 1024);
    const error = await startTest(createNullSut(), qsl, settings as never, { outdir: tempDir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).key).toBe(key);
    expect((error as Error).message).toContain(mention);
    expect(loadNative().isRunning()).toBe(false);
  });

  it('values within the usual ranges stay accepted', () => {
    for (const s of [
      { scenario: 'Server', serverTargetQps: 1e-3 },  // 100 queries: 27.8 hours
      { scenario: 'Server', serverTargetQps: 0.45, minQueryCount: 270336, minDurationMs: 600000 },
      { scenario: 'Server', serverTargetQps: 4e5, minDurationMs: 600000 },
      { scenario: 'Server', serverTargetQps: 1e300, minDurationMs: 0 },  // every query at 0
      { scenario: 'Offline', offlineExpectedQps: 1e6, minDurationMs: 600000 },
      { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 600000 },
    ] as const) {
      expect(() => resolveTestSettings(s), JSON.stringify(s)).not.toThrow();
    }
  });

  it('the native core refuses them too (never trusting JS)', () => {
    const native = loadNative();
    const config = toNativeRunConfig(resolveTestSettings({ scenario: 'Server' }), DEFAULT_LOG_SETTINGS, {
      qsl: { name: 'q', totalSampleCount: 8, performanceSampleCount: 8 },
      sutName: 's',
      completeOnIssueThread: false,
      preRunMessages: [],
    });
    try {
      expect(() => native.start({ ...config, server_target_qps: 1e-9 }, () => {})).toThrow(SettingsError);
      expect(() => native.start({ ...config, server_target_qps: 1e300 }, () => {})).toThrow(/server_target_qps/);
    } finally {
      native.releaseRun();
    }
    expect(native.isRunning()).toBe(false);
  });
});

describe('every wait respects max_duration_ms', () => {
  it('Server at 0.2 queries/s with maxDurationMs 1000 ends at 1 s, not when the next query is due (4.5 s)', async () => {
    const started = Date.now();
    const result = await startTest(createNullSut(), createSyntheticQsl(8),
      { scenario: 'Server', serverTargetQps: 0.2, minDurationMs: 100, maxDurationMs: 1000 }, { outdir: tempDir() });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(2000);
    expect(result.counts.issuedQueries).toBe(1);
    expect(result.errors.messages.map((m) => m.text).join('\n')).toMatch(/Ending early: Max test duration reached\. duration_ns 100\d{7}/);
  });
});

describe('an outdir that cannot be created is bad input', () => {
  const bad = async (outdir: string): Promise<LogOutputError> => {
    const started = Date.now();
    const error = await startTest(createNullSut(), createSyntheticQsl(8), quickServer, { outdir }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toBeInstanceOf(LogOutputError);
    expect(loadNative().isRunning()).toBe(false);
    return error as LogOutputError;
  };

  it.skipIf(!existsSync('/proc/self'))('/proc/x: refused at once (recursive mkdir spun forever)', async () => {
    expect((await bad('/proc/x/y')).message).toMatch(/outdir='\/proc\/x\/y': '\/proc\/x': .*ENOENT/);
    expect((await bad('/proc')).message).toMatch(/cannot write log files in outdir='\/proc'/);
  });

  it('a path under a regular file names the file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    const error = await bad(join(dir, 'file', 'a', 'b'));
    expect(error.message).toContain(`'${join(dir, 'file')}': it exists and is not a directory`);
  });

  it.skipIf(process.getuid?.() === 0)('an unwritable directory', async () => {
    const dir = tempDir();
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    try {
      expect((await bad(join(locked, 'sub'))).message).toContain('permission denied');
      expect((await bad(locked)).message).toContain('cannot write log files');
    } finally {
      chmodSync(locked, 0o700);
    }
  });

  it('missing components are created, and nothing is left behind', async () => {
    const outdir = join(tempDir(), 'a', 'b', 'c');
    const result = await startTest(createNullSut(), createSyntheticQsl(8), quickServer, { outdir });
    expect(result.valid).toBe(true);
    expect(readdirSync(outdir).filter((f) => f.startsWith('.'))).toEqual([]);
  });
});

describe('the CLI: exit 2 for bad outdir and qps', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [cli, 'run', '--sut', 'null', '--scenario', 'Server', ...args], { encoding: 'utf8', timeout: 60_000 });

  it.skipIf(!existsSync('/proc/self'))('--outdir /proc/x', () => {
    const r = run('--outdir', '/proc/x');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("cannot create the log directory outdir='/proc/x'");
  });

  it.each(['1e300', '1e-9'])('--set server_target_qps=%s', (qps) => {
    const r = run('--set', `server_target_qps=${qps}`, '--outdir', tempDir());
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Invalid test setting serverTargetQps');
  });
});
