/**
 * Stopping a run on request: SIGINT/SIGTERM in the `loadgen` command (exit
 * 130/143, logs and report written, a second signal exits at once), in
 * every phase of the command (module import, node probes, data set, QSL
 * load), an AbortSignal in startTest's options, and the removal of an
 * earlier run's files from the outdir.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createNullNativeSut,
  createNullSut,
  createSyntheticQsl,
  LogOutputError,
  querySamplesComplete,
  startTest,
  type QuerySample,
  type SystemUnderTest,
  type TestResult,
} from '../lib/index.js';
import { interruptReasonOf } from '../lib/api/active-run.js';
import { runFileNames } from '../lib/api/stale-files.js';
import { INDEX_COPY_SLICE, serveQslCall } from '../lib/api/qsl-calls.js';
import { runWithSignals } from '../lib/cli/interrupt.js';
import { loadNative, type NativeAddon } from '../lib/native/index.js';
import { readText, repoRoot, tempDir } from './helpers.js';
import { testServers } from './net-helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

/** Polls `ready` every 25 ms; fails after `timeoutMs`, naming `what`. */
async function waitFor(what: string, ready: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `loadgen <args>` with a progress line every 50 ms on stderr. */
function startCli(args: string[], env: Record<string, string> = {}): CliRun {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOADGEN_PROGRESS_INTERVAL_MS: '50', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Resolves with the exit, or kills the child and fails after `timeoutMs`. */
async function exitWithin(run: CliRun, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit within ${timeoutMs} ms; stderr:\n${run.stderr()}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([run.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Issued queries > 0 in a progress line: the run is issuing. */
const issuing = (stderr: string): boolean => /issued [1-9]\d* quer/.test(stderr);

describe('loadgen run stopped by a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: the run ends early, every log and report.html are written, exit %d', async (signal, code) => {
    const outdir = tempDir();
    // What an earlier, complete run left: replaced, never kept beside the new logs.
    for (const name of ['mlperf_log_summary.txt', 'mlperf_log_detail.txt', 'report.html', 'loadgen_report_data.json']) {
      writeFileSync(join(outdir, name), 'an earlier run\n');
    }
    const run = startCli(['run', '--sut', 'null', '--scenario', 'Server', '--set', 'server_target_qps=500',
      '--set', 'min_duration_ms=600000', '--set', 'accuracy_log_probability=0.1', '--outdir', outdir]);
    await waitFor('progress of the run', () => issuing(run.stderr()));
    run.child.kill(signal);
    const exit = await exitWithin(run, 20_000);
    expect(exit).toEqual({ code, signal: null });
    expect(run.stderr()).toContain(`loadgen: ${signal} received: stopping the run and writing its logs`);

    const reason = `interrupted by ${signal}`;
    const summary = readText(join(outdir, 'mlperf_log_summary.txt'));
    expect(summary).toContain('Result is : INVALID\n');
    expect(summary).toContain(`Recommendations:\n * ${reason}.\n`);  // every reason a sentence
    expect(summary).toMatch(/ERRORS? encountered/);
    expect(run.stdout()).toContain(summary.split('\n')[0]!);
    // Every detail-log line is a complete record; the stop and the verdict are in it.
    const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
    expect(detail.endsWith('\n')).toBe(true);
    const records = detail.trim().split('\n').map((line) => {
      expect(line.startsWith(':::MLLOG ')).toBe(true);
      return JSON.parse(line.slice(':::MLLOG '.length)) as { key: string; value: unknown };
    });
    expect(records.some((r) => r.key === 'error_runtime' && String(r.value).startsWith(`Ending early: ${reason}. query_count `))).toBe(true);
    expect(records.find((r) => r.key === 'result_validity')?.value).toBe('INVALID');
    expect(String(records.find((r) => r.key === 'result_invalid_reason')?.value)).toContain(reason);
    expect(() => JSON.parse(readText(join(outdir, 'mlperf_log_accuracy.json')))).not.toThrow();
    const data = JSON.parse(readText(join(outdir, 'loadgen_report_data.json'))) as { format: string };
    expect(data.format).toBe('loadgen-report-data');
    const report = readText(join(outdir, 'report.html'));
    expect(report).not.toBe('an earlier run\n');
    expect(report).toContain('<!DOCTYPE html>');
  }, 60_000);

  it('a second signal exits at once with the same code', async () => {
    const outdir = tempDir();
    // Each query completes 30 s after issue: after the first signal the run waits for it.
    const run = startCli(['run', '--sut', join(repoRoot, 'test', 'fixtures', 'slow-sut.mjs'), '--scenario', 'SingleStream',
      '--set', 'min_duration_ms=600000', '--outdir', outdir], { LOADGEN_TEST_SUT_DELAY_MS: '30000' });
    await waitFor('progress of the run', () => issuing(run.stderr()));
    run.child.kill('SIGINT');
    await waitFor('the note of the first signal', () => run.stderr().includes('SIGINT received'));
    await new Promise((r) => setTimeout(r, 200));
    expect(run.child.exitCode).toBe(null);  // still waiting for its query
    const second = Date.now();
    run.child.kill('SIGTERM');
    const exit = await exitWithin(run, 10_000);
    expect(exit).toEqual({ code: 130, signal: null });
    expect(Date.now() - second).toBeLessThan(5_000);
  }, 60_000);

  it('the handlers exist only while the command does', async () => {
    const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
    const code = await runWithSignals(async (signal) => {
      expect(process.listenerCount('SIGINT')).toBe(before.int + 1);
      expect(process.listenerCount('SIGTERM')).toBe(before.term + 1);
      expect(signal.aborted).toBe(false);
      return 7;
    });
    expect(code).toBe(7);
    expect(process.listenerCount('SIGINT')).toBe(before.int);
    expect(process.listenerCount('SIGTERM')).toBe(before.term);
    // Also when the run throws.
    await expect(runWithSignals(async () => {
      throw new Error('failed');
    })).rejects.toThrow('failed');
    expect(process.listenerCount('SIGINT')).toBe(before.int);
    expect(process.listenerCount('SIGTERM')).toBe(before.term);
  });

  it('a signal before the run starts: startTest refuses it, the command exits with the signal code', async () => {
    const code = await runWithSignals(async (signal) => {
      // The handler just installed (the last one), called as a real signal would call it.
      (process.listeners('SIGTERM').at(-1) as () => void)();
      expect(signal.aborted).toBe(true);
      await startTest(createNullNativeSut(), createSyntheticQsl(16), {}, { outdir: tempDir() }, { signal });
      return 0;
    });
    expect(code).toBe(143);
  });
});

describe('loadgen run: the first signal ends every phase', () => {
  const server = testServers();
  const fixture = (name: string): string => join(repoRoot, 'test', 'fixtures', name);

  /** Once `ready`, sends `signal` and expects the exit with its code within 5 s (a phase that would not end takes a minute). */
  async function stopWhen(run: CliRun, what: string, ready: () => boolean, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT'): Promise<void> {
    await waitFor(what, ready);
    const sent = Date.now();
    run.child.kill(signal);
    const exit = await exitWithin(run, 30_000);
    expect(exit, run.stderr()).toEqual({ code: signal === 'SIGINT' ? 130 : 143, signal: null });
    expect(Date.now() - sent).toBeLessThan(5_000);
  }

  /** A phase before the run: the note says no logs are written, and none are. */
  function expectNothingWritten(run: CliRun, outdir: string, signal = 'SIGINT'): void {
    expect(run.stderr()).toContain(`loadgen: ${signal} received before the run started: stopping; no logs are written`);
    expect(existsSync(outdir)).toBe(false);
    expect(run.stdout()).toBe('');
  }

  /** A run that started: its summary says why it stopped and every detail-log line is a complete record. */
  function expectRunLogs(run: CliRun, outdir: string): void {
    expect(run.stderr()).toContain('loadgen: SIGINT received: stopping the run and writing its logs');
    expect(readText(join(outdir, 'mlperf_log_summary.txt'))).toContain('Recommendations:\n * interrupted by SIGINT.\n');
    const detail = readText(join(outdir, 'mlperf_log_detail.txt'));
    expect(detail.endsWith('\n')).toBe(true);
    for (const line of detail.trim().split('\n')) {
      expect(line.startsWith(':::MLLOG ')).toBe(true);
      expect(() => JSON.parse(line.slice(':::MLLOG '.length))).not.toThrow();
    }
  }

  it('module import: a --sut module whose top-level await does not settle', async () => {
    const outdir = join(tempDir(), 'out');
    const run = startCli(['run', '--sut', fixture('hanging-import-sut.mjs'), '--outdir', outdir]);
    await stopWhen(run, 'the import', () => run.stderr().includes('fixture: importing'));
    expectNothingWritten(run, outdir);
  }, 60_000);

  it('node probes: a node that never answers GET /v1/models (SIGTERM: 143, not the probe timeout\'s exit 2)', async () => {
    const node = await server(() => undefined);
    const dataset = join(tempDir(), 'prompts.jsonl');
    writeFileSync(dataset, '{"prompt": "hello"}\n');
    const outdir = join(tempDir(), 'out');
    const run = startCli(['run', '--sut', 'openai', '--url', node.url, '--model', 'm', '--dataset', dataset, '--outdir', outdir]);
    await stopWhen(run, 'the probe', () => (node.hits.get('/v1/models') ?? 0) > 0, 'SIGTERM');
    expectNothingWritten(run, outdir, 'SIGTERM');
  }, 60_000);

  it("node probes: a mapping module whose name() takes a minute", async () => {
    const node = await server();
    const outdir = join(tempDir(), 'out');
    const run = startCli(['run', '--sut', 'http', '--url', node.url, '--request', fixture('slow-name-map.mjs'), '--outdir', outdir]);
    await stopWhen(run, 'name()', () => run.stderr().includes('fixture: naming the node'));
    expectNothingWritten(run, outdir);
  }, 60_000);

  it('data set: checking a data set of a million prompts; no node is asked anything', async () => {
    const node = await server(() => undefined);
    const dir = tempDir();
    // Fed through a FIFO: the file is whole once this side closes it, and the check of its lines begins.
    const dataset = join(dir, 'prompts.jsonl');
    execFileSync('mkfifo', [dataset]);
    const outdir = join(dir, 'out');
    const run = startCli(['run', '--sut', 'openai', '--url', node.url, '--model', 'm', '--dataset', dataset, '--outdir', outdir]);
    const fifo = await open(dataset, 'w');
    const lines = Array.from({ length: 10_000 }, (_, i) => `{"prompt": "prompt ${i}", "max_tokens": 4}`).join('\n') + '\n';
    for (let i = 0; i < 100; i++) await fifo.write(lines);
    await fifo.close();
    await stopWhen(run, 'the data set', () => true);
    expectNothingWritten(run, outdir);
    expect(node.hits.get('/v1/models') ?? 0).toBe(0);
  }, 60_000);

  it.each(['undici', 'native'] as const)('QSL load: 300000 of 4294967295 samples of a mapping module, 50 us each (--transport %s): the run stops, its logs written', async (transport) => {
    const node = await server();
    const outdir = tempDir();
    const run = startCli(['run', '--sut', 'http', '--url', node.url, '--request', fixture('big-load-map.mjs'), '--transport', transport, '--scenario', 'Offline', '--outdir', outdir]);
    await stopWhen(run, 'the load', () => run.stderr().includes('fixture: building requests'));
    expectRunLogs(run, outdir);
    expect(node.hits.get('/infer') ?? 0).toBe(0);  // nothing issued: the run stopped before it began
  }, 60_000);

  it('set building: 20 million samples, a signal while the core shuffles or logs them: the run stops at once, its logs written', async () => {
    const outdir = tempDir();
    const detail = join(outdir, 'mlperf_log_detail.txt');
    const run = startCli(['run', '--sut', fixture('huge-set-sut.mjs'), '--scenario', 'Offline', '--outdir', outdir], { HUGE_PERF: '20000000' });
    // The core flushes the phase's first line before it builds the set (~1 s of shuffling, then 170 MB of loaded_qsl_set).
    await stopWhen(run, 'the set', () => existsSync(detail) && fileHead(detail, 1 << 18).includes('"Starting performance mode"'));
    expectRunLogs(run, outdir);
    expect(run.stderr()).not.toContain('fixture: loading');  // never loaded: the run stopped first
    const records = readText(detail).trim().split('\n').map((line) => JSON.parse(line.slice(':::MLLOG '.length)) as { key: string; value: unknown });
    // Not the whole list: the set's building and logging stopped at the signal.
    const listed = records.filter((r) => r.key === 'loaded_qsl_set').map((r) => (r.value as number[]).length);
    expect(listed.every((n) => n < 20_000_000), `loaded_qsl_set lengths ${listed.join(', ')}`).toBe(true);
    if (listed.length > 0) {
      expect(records.some((r) => r.key === 'warning_generic_message' && String(r.value).startsWith(`loaded_qsl_set lists the first ${listed[0]} of the set's 20000000 samples`))).toBe(true);
    }
  }, 60_000);

  it('QSL load: a module QSL whose asynchronous load takes a minute', async () => {
    const outdir = tempDir();
    const run = startCli(['run', '--sut', fixture('slow-load-sut.mjs'), '--scenario', 'Offline', '--outdir', outdir]);
    await stopWhen(run, 'the load', () => run.stderr().includes('fixture: loading samples'));
    expectRunLogs(run, outdir);
  }, 60_000);
});

describe('loadgen run: a sample set too large to load', () => {
  const fixture = join(repoRoot, 'test', 'fixtures', 'huge-set-sut.mjs');

  it.each([
    ['4294967295 of 4294967295 samples', { HUGE_PERF: '4294967295' }, [], 'qsl.performanceSampleCount = 4294967295'],
    ['an override of 100000001', { HUGE_PERF: '1000' }, ['--set', 'performance_sample_count_override=100000001'], 'performanceSampleCountOverride = 100000001'],
    ['an accuracy run over 4294967295 samples', { HUGE_PERF: '1000' }, ['--mode', 'AccuracyOnly'], 'qsl.totalSampleCount = 4294967295'],
  ] as const)('%s: refused at once (exit 2), naming the count and the limit, nothing written', async (_, env, args, named) => {
    const outdir = join(tempDir(), 'out');
    const run = startCli(['run', '--sut', fixture, '--scenario', 'Offline', ...args, '--outdir', outdir], env);
    const exit = await exitWithin(run, 20_000);
    expect(exit, run.stderr()).toEqual({ code: 2, signal: null });
    expect(run.stderr()).toContain(`Invalid ${named}: the `);
    expect(run.stderr()).toContain('more than the 100000000 loadgen can shuffle and load at once');
    expect(existsSync(outdir)).toBe(false);
  }, 30_000);
});

describe('a QSL call over a large set', () => {
  /** Calls serveQslCall for `method` with `n` indices (i * 3); returns what the QSL and the core were given. */
  function serve(method: 'loadSamplesToRam' | 'unloadSamplesFromRam', n: number, stop?: AbortSignal) {
    const indices = new Uint32Array(n);
    for (let i = 0; i < n; i++) indices[i] = i * 3;
    const seen = { lists: [] as number[][], acks: [] as [number, string | undefined][] };
    const native = { acknowledge: (token: number, error?: string) => seen.acks.push([token, error]) } as unknown as NativeAddon;
    const qsl = {
      name: 'q', totalSampleCount: 3 * n, performanceSampleCount: n,
      loadSamplesToRam: (list: number[]) => void seen.lists.push(list),
      unloadSamplesFromRam: (list: number[]) => void seen.lists.push(list),
    };
    serveQslCall(native, qsl, method, indices, 7, () => undefined, 0, stop);
    return seen;
  }

  it('the QSL gets every index, in order, in a number[]; the core its acknowledgement', async () => {
    const seen = serve('loadSamplesToRam', 3 * INDEX_COPY_SLICE + 5);
    await waitFor('the acknowledgement', () => seen.acks.length > 0);
    expect(seen.lists).toHaveLength(1);
    const list = seen.lists[0]!;
    expect(Array.isArray(list)).toBe(true);
    expect(list.length).toBe(3 * INDEX_COPY_SLICE + 5);
    expect(list.every((v, i) => v === i * 3)).toBe(true);
    expect(seen.acks).toEqual([[7, undefined]]);
  });

  it('a signal while its indices are copied acknowledges at once, and the load is never made', async () => {
    const controller = new AbortController();
    const seen = serve('loadSamplesToRam', 4 * INDEX_COPY_SLICE, controller.signal);
    // The copy yields to the event loop between slices: the signal is handled there.
    expect(seen.lists).toHaveLength(0);
    controller.abort();
    expect(seen.acks).toEqual([[7, undefined]]);
    await new Promise((resolve) => setTimeout(resolve, 200));  // long past the copy
    expect(seen.lists).toHaveLength(0);
    expect(seen.acks).toHaveLength(1);
  });

  it('an unload is still made after the signal (the QSL may hold what it loaded)', async () => {
    const controller = new AbortController();
    const seen = serve('unloadSamplesFromRam', 2 * INDEX_COPY_SLICE, controller.signal);
    controller.abort();
    await waitFor('the unload', () => seen.lists.length > 0);
    expect(seen.lists[0]!.length).toBe(2 * INDEX_COPY_SLICE);
    expect(seen.acks).toEqual([[7, undefined]]);
  });
});

/** The first `bytes` of a file (a growing log is not read whole). */
function fileHead(path: string, bytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** A SUT that completes every sample after `delayMs` and calls `onQuery` first. */
function callbackSut(delayMs: number, onQuery: (n: number) => void): SystemUnderTest {
  let n = 0;
  return {
    name: 'callback',
    issueQuery(samples: QuerySample[]) {
      onQuery(++n);
      if (delayMs === 0) querySamplesComplete(samples);
      else setTimeout(() => querySamplesComplete(samples), delayMs);
    },
  };
}

function expectInterrupted(result: TestResult, reason: string): void {
  expect(result.valid).toBe(false);
  expect(result.validity).toBe('INVALID');
  expect(result.interrupted).toBe(reason);
  expect(result.invalidReasons).toContain(`${reason}.`);  // every reason a sentence
  expect(result.counts.incompleteSamples).toBe(0);
  expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
  const summary = readText(result.files.summary!);
  expect(summary).toContain('Result is : INVALID\n');
  expect(summary).toContain(`\n * ${reason}.\n`);
  expect(readText(result.files.detail!)).toContain(`"Ending early: ${reason}`);
  expect(() => JSON.parse(readText(result.files.accuracyLog!))).not.toThrow();
}

describe('startTest with an AbortSignal', () => {
  it.each(['wake', 'poll'] as const)('Server (dispatch %s): aborted during the run, resolves INVALID and interrupted with its logs', async (dispatch) => {
    const controller = new AbortController();
    const sut = callbackSut(0, (n) => {
      if (n === 200) controller.abort(new Error('stopped by the user'));
    });
    const started = Date.now();
    const result = await startTest(sut, createSyntheticQsl(1024),
      { scenario: 'Server', serverTargetQps: 1000, minDurationMs: 600_000, dispatch },
      { outdir: tempDir() }, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(30_000);
    expectInterrupted(result, 'interrupted: stopped by the user');
    expect(result.counts.issuedQueries).toBeGreaterThanOrEqual(200);
    expect(result.counts.issuedQueries).toBeLessThan(result.counts.generatedQueries);
    expect(result.checks.minDurationMet).toBe(false);
    expect(result.errors.messages.some((m) => m.text.startsWith('Ending early: interrupted: stopped by the user. query_count '))).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  }, 60_000);

  it('SingleStream: aborted while a query is with the SUT, that query is waited for', async () => {
    const controller = new AbortController();
    const sut = callbackSut(300, (n) => {
      if (n === 3) setTimeout(() => controller.abort(), 50);
    });
    const result = await startTest(sut, createSyntheticQsl(64), { scenario: 'SingleStream', minDurationMs: 600_000 },
      { outdir: tempDir() }, { signal: controller.signal });
    // The default reason, a DOMException AbortError.
    expectInterrupted(result, 'interrupted: This operation was aborted');
    expect(result.counts.issuedQueries).toBe(3);
  }, 60_000);

  it('SubmissionRun: aborted in the accuracy phase, the performance phase never runs', async () => {
    const controller = new AbortController();
    const sut = callbackSut(1, (n) => {
      if (n === 10) controller.abort('enough');
    });
    const result = await startTest(sut, createSyntheticQsl(256), { scenario: 'SingleStream', mode: 'SubmissionRun', minDurationMs: 600_000 },
      { outdir: tempDir() }, { signal: controller.signal });
    expectInterrupted(result, 'interrupted: enough');
    expect(result.mode).toBe('SubmissionRun');
    expect(result.invalidReasons[0]).toBe('interrupted: enough.');
    expect(result.counts.issuedQueries).toBeLessThan(256);
    expect(readText(result.files.summary!).startsWith('Result is : INVALID\nRecommendations:\n * interrupted: enough.\n')).toBe(true);
    const detail = readText(result.files.detail!);
    expect(detail).toContain('"Starting accuracy mode"');
    expect(detail).not.toContain('"Starting performance mode"');
  }, 60_000);

  it('already aborted: rejects with the reason before anything starts', async () => {
    const outdir = join(tempDir(), 'never-created');
    const reason = new Error('not now');
    let issued = 0;
    const sut = callbackSut(0, () => issued++);
    await expect(startTest(sut, createSyntheticQsl(16), {}, { outdir }, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(startTest(sut, createSyntheticQsl(16), {}, { outdir }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(issued).toBe(0);
    expect(existsSync(outdir)).toBe(false);
    expect(loadNative().isRunning()).toBe(false);
  });

  it('a signal that is not an AbortSignal is a TypeError', async () => {
    await expect(startTest(createNullSut(), createSyntheticQsl(16), {}, { outdir: tempDir() },
      { signal: { aborted: false } as unknown as AbortSignal })).rejects.toThrow(TypeError);
    await expect(startTest(createNullSut(), createSyntheticQsl(16), {}, { outdir: tempDir() },
      { signal: { aborted: false } as unknown as AbortSignal })).rejects.toThrow(/options\.signal must be an AbortSignal/);
  });

  it('100 runs with one signal leave no listener on it, none on the process', async () => {
    const controller = new AbortController();
    const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
    const outdir = tempDir();
    for (let i = 0; i < 100; i++) {
      const result = await startTest(createNullNativeSut(), createSyntheticQsl(16), { scenario: 'Offline', minQueryCount: 1, minDurationMs: 0 },
        { outdir }, { signal: controller.signal });
      expect(result.interrupted).toBeUndefined();
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(process.listenerCount('SIGINT')).toBe(before.int);
    expect(process.listenerCount('SIGTERM')).toBe(before.term);
    // Aborting now reaches no run.
    controller.abort();
    expect(loadNative().isRunning()).toBe(false);
  }, 120_000);

  it('the reason is bounded and cannot forge summary lines', () => {
    expect(interruptReasonOf(new Error('x\nResult is : VALID'))).toBe('interrupted: x\\u000aResult is : VALID');
    expect(interruptReasonOf('interrupted by SIGINT')).toBe('interrupted by SIGINT');
    expect(interruptReasonOf(new Error('interrupted by SIGTERM'))).toBe('interrupted by SIGTERM');
    expect(interruptReasonOf(42)).toBe('interrupted: 42');
    expect(interruptReasonOf('y'.repeat(10_000))).toBe(`interrupted: ${'y'.repeat(500)}…`);
    expect(interruptReasonOf({ toString: () => { throw new Error('no'); } })).toBe('interrupted: the run was aborted');
  });
});

describe('files of an earlier run', () => {
  const decoys = ['mlperf_log_summary.txt.bak', 'other_summary.txt', 'mlperf_log_summary_old.txt', 'report-old.html', 'notes.txt'];

  function seed(outdir: string, names: string[]): void {
    for (const name of names) writeFileSync(join(outdir, name), 'an earlier run\n');
  }

  it('are removed before the run: exactly the names it writes, nothing else', async () => {
    const outdir = tempDir();
    const names = runFileNames({ outdir, prefix: 'mlperf_log_', suffix: '', prefixWithDatetime: false } as never);
    expect(names).toEqual(['mlperf_log_summary.txt', 'mlperf_log_detail.txt', 'mlperf_log_accuracy.json', 'mlperf_log_trace.json',
      'loadgen_report_data.json', 'report.html']);
    seed(outdir, [...names, ...decoys]);
    const result = await startTest(createNullNativeSut(), createSyntheticQsl(16), { scenario: 'Offline', minQueryCount: 1, minDurationMs: 0 }, { outdir });
    expect(result.valid).toBe(true);
    // startTest writes no report.html: an old one must not describe this run.
    expect(existsSync(join(outdir, 'report.html'))).toBe(false);
    for (const name of names.filter((n) => n !== 'report.html')) expect(readText(join(outdir, name))).not.toBe('an earlier run\n');
    for (const name of decoys) expect(readText(join(outdir, name))).toBe('an earlier run\n');
  });

  it('with a prefix and suffix: their names only', async () => {
    const outdir = tempDir();
    seed(outdir, ['mlperf_log_summary.txt', 'report.html', 'run_summary-a.txt', 'report-a.html', 'loadgen_report_data-a.json']);
    await startTest(createNullNativeSut(), createSyntheticQsl(16), { scenario: 'Offline', minQueryCount: 1, minDurationMs: 0 },
      { outdir, prefix: 'run_', suffix: '-a' });
    expect(existsSync(join(outdir, 'report-a.html'))).toBe(false);
    expect(readText(join(outdir, 'run_summary-a.txt'))).toContain('Result is : VALID');
    // Another prefix/suffix's files stay.
    expect(readText(join(outdir, 'mlperf_log_summary.txt'))).toBe('an earlier run\n');
    expect(readText(join(outdir, 'report.html'))).toBe('an earlier run\n');
  });

  it('with prefixWithDatetime nothing is removed (the names hold the run time)', async () => {
    const outdir = tempDir();
    seed(outdir, ['mlperf_log_summary.txt', 'report.html']);
    await startTest(createNullNativeSut(), createSyntheticQsl(16), { scenario: 'Offline', minQueryCount: 1, minDurationMs: 0 },
      { outdir, prefixWithDatetime: true });
    expect(readText(join(outdir, 'mlperf_log_summary.txt'))).toBe('an earlier run\n');
    expect(readText(join(outdir, 'report.html'))).toBe('an earlier run\n');
    expect(readdirSync(outdir).some((n) => /^mlperf_log_.+_summary\.txt$/.test(n))).toBe(true);
  });

  it('one that cannot be removed is a LogOutputError naming it, before the run starts', async () => {
    const outdir = tempDir();
    mkdirSync(join(outdir, 'mlperf_log_summary.txt'));
    writeFileSync(join(outdir, 'mlperf_log_summary.txt', 'keep'), 'x');
    const error = await startTest(createNullNativeSut(), createSyntheticQsl(16), { scenario: 'Offline', minQueryCount: 1, minDurationMs: 0 }, { outdir })
      .then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(LogOutputError);
    expect((error as Error).message).toContain(join(outdir, 'mlperf_log_summary.txt'));
    expect(readFileSync(join(outdir, 'mlperf_log_summary.txt', 'keep'), 'utf8')).toBe('x');
    expect(existsSync(join(outdir, 'mlperf_log_detail.txt'))).toBe(false);
    expect(loadNative().isRunning()).toBe(false);
  });
});
