/**
 * `loadgen bench`: loadgen's own cost on this machine. Every trial runs in a
 * fresh process (lib/bench-trial.ts); each is repeated and reported as the
 * median with its spread (min..max). The report ends with the issue-5
 * targets evaluated against the figures (formatTargets).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { CpuNoise } from './native/index.js';

/**
 * Who runs the SUT in a trial. `wake`, `poll`, `worker`: the JS null SUT
 * with that dispatch mode (`worker`: in 1 worker thread). `pure-js` is a
 * plain TypeScript Poisson issuer, no native core.
 */
export type BenchSut = 'null-native' | 'wake' | 'poll' | 'worker' | 'pure-js';

export const BENCH_SUTS: readonly BenchSut[] = ['null-native', 'wake', 'poll', 'worker', 'pure-js'];

export interface Percentiles {
  p50: number;
  p99: number;
  p999: number;
}

/** One trial's request, passed to lib/bench-trial.ts as JSON. */
export type TrialSpec =
  | { kind: 'platform'; tsfnWakes: number }
  /** loadNativeInternals().bench.cpuNoise on `cpu` (-1: unpinned). */
  | { kind: 'cpu-noise'; cpu: number; durationMs: number }
  | {
      kind: 'server';
      sut: BenchSut;
      targetQps: number;
      durationMs: number;
      targetLatencyNs: number;
      /** The issue thread on CPU 1 (issueThreadCpu); the orchestrator runs the process on CPU 0. */
      pinned?: boolean;
      /** The dispatchSpinUs setting ('worker' only). */
      dispatchSpinUs?: number;
      /** The wakeLeadUs setting ('wake' only). */
      wakeLeadUs?: number;
    }
  | { kind: 'peak'; sut: BenchSut; baseQps: number; durationMs: number; targetLatencyNs: number }
  | { kind: 'single-stream'; sut: BenchSut; durationMs: number }
  | { kind: 'offline'; sut: BenchSut; samples: number }
  | { kind: 'memory'; targetQps: number; durationMs: number };

export interface PlatformTrial {
  clockReadNs: number;
  jsToNativeCallNs: number;
  tsfnWakeNs: { p50: number; p99: number };
}

export interface ServerTrial {
  valid: boolean;
  achievedQps: number;
  latencyNs: Percentiles;
  /** Issued − scheduled, per query (for pure-js: its issue time − scheduled). */
  issueLatenessNs: Percentiles | null;
  /** SUT received − scheduled, per query. */
  deliveryLagNs: Percentiles | null;
  /** The trial ran pinned: its issue thread on CPU 1 (pure-js: it was asked to; the taskset is its only pin). */
  pinned: boolean;
}

export interface PeakTrial {
  /** Highest valid Server QPS found (0: not even the base rate was valid). */
  peakQps: number;
  /** Server runs the search made. */
  trials: number;
}

export interface BenchOptions {
  /** Short durations and one repetition: proves the benchmark works (CI). */
  tiny?: boolean;
  repeat?: number;
  /** Progress lines go here (stderr by default). */
  log?: (line: string) => void;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface ServerRow {
  sut: BenchSut;
  targetQps: number;
  valid: boolean;
  latencyNs: Percentiles;
  issueLatenessNs: Percentiles | null;
  deliveryLagNs: Percentiles | null;
  achievedQps: Spread;
  repetitions: number;
  /** Issue thread alone on CPU 1, the rest of the process on CPU 0 (pure-js: the process on CPU 0). */
  pinned: boolean;
  /** The row asked for pinning; `pinned` is false when this machine could not pin. */
  pinRequested: boolean;
  /** The dispatchSpinUs setting the row ran with (0: the default, idle workers sleep). */
  dispatchSpinUs: number;
  /** The wakeLeadUs setting the row ran with (0: the default, woken when a query is published). */
  wakeLeadUs: number;
  /**
   * Pinned rows: the CPU-noise floor on CPU 1 (lateness p99/p99.9 at a
   * random instant), probed right before each repetition (medians): the
   * host's preemptions vary by the minute.
   */
  floorNs?: { p99: number; p999: number };
}

/** Medians of loadNativeInternals().bench.cpuNoise over the repetitions. */
export interface CpuNoiseFigure {
  /** The CPU probed (-1: the probe thread was not pinned). */
  cpu: number;
  /** The probe thread was pinned to `cpu` in every repetition. */
  pinned: boolean;
  /** The rest of the process ran on CPU 0 (taskset), as in the pinned Server rows. */
  restOnCpu0: boolean;
  durationNs: number;
  gapsPerSecond: number;
  /** Share of the time the probe thread did not run. */
  lostFraction: number;
  gapNs: { p50: number; p99: number; max: number };
  /** Delay an event due at a uniformly random instant sees there: the floor of issue lateness on that CPU. */
  residualNs: { p50: number; p99: number; p999: number };
}

/** One issue-5 target against this run's figures. */
export interface BenchTarget {
  target: string;
  measured: string;
  /** 'n/a': a figure it needs was not measured in this run (e.g. the tiny configuration). */
  holds: 'yes' | 'no' | 'n/a';
}

export interface BenchReport {
  date: string;
  machine: { cpu: string; cpus: number; node: string; platform: string };
  config: { tiny: boolean; repeat: number };
  platform: {
    clockReadNs: number;
    jsToNativeCallNs: number;
    tsfnWakeNs: { p50: number; p99: number };
    cpuNoise: CpuNoiseFigure;
  };
  server: ServerRow[];
  serverMaxValidQps: Partial<Record<BenchSut, number>>;
  singleStreamQps: Partial<Record<BenchSut, number>>;
  singleStreamP90Ns: Partial<Record<BenchSut, number>>;
  offlineSamplesPerSec: Partial<Record<BenchSut, number>>;
  bytesPerSample: number;
  bytesPerSampleByRun: { samples: number; bytesPerSample: number }[];
  targets: BenchTarget[];
}

const trialScript = join(dirname(fileURLToPath(import.meta.url)), 'bench-trial.js');

/** CPUs this process may run on (Linux: /proc/self/status Cpus_allowed_list, e.g. "0-3,8"); null elsewhere. */
function allowedCpus(): Set<number> | null {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (!list) return null;
    const allowed = new Set<number>();
    for (const range of list.split(',')) {
      const [first, last = first] = range.split('-').map(Number);
      for (let cpu = first!; cpu <= last!; cpu++) allowed.add(cpu);
    }
    return allowed;
  } catch {
    return null;
  }
}

function findOnPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

let taskset: string | null | undefined;

/**
 * The taskset that confines a trial process to CPU 0 (leaving CPU 1 to the
 * issue thread), or null when this machine cannot pin: not Linux, fewer
 * than 2 CPUs, CPU 0 or 1 outside this process's cpuset, or no taskset.
 */
export function pinningTaskset(): string | null {
  if (taskset !== undefined) return taskset;
  const allowed = process.platform === 'linux' && cpus().length >= 2 ? allowedCpus() : null;
  taskset = allowed?.has(0) && allowed.has(1) ? findOnPath('taskset') : null;
  return taskset;
}

export interface TrialOptions {
  /** Run the trial process under `taskset -c 0` (see {@link pinningTaskset}). */
  onCpu0?: boolean;
}

/** Runs one trial in a fresh Node process and returns what it printed. */
export function runTrial<T>(spec: TrialSpec, options: TrialOptions = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const trialArgs = [trialScript, JSON.stringify(spec)];
    let command = process.execPath;
    let args = trialArgs;
    if (options.onCpu0) {
      const tasksetPath = pinningTaskset();
      if (!tasksetPath) {
        reject(new Error('bench trial: pinning to CPU 0 needs Linux, 2 CPUs and taskset on PATH'));
        return;
      }
      command = tasksetPath;
      args = ['-c', '0', process.execPath, ...trialArgs];
    }
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`bench trial ${JSON.stringify(spec)} failed (exit ${code}): ${err.trim()}`));
        return;
      }
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as T);
      } catch {
        reject(new Error(`bench trial ${JSON.stringify(spec)} printed no result: ${out}${err}`));
      }
    });
  });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function spread(values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function medianPercentiles(values: (Percentiles | null)[]): Percentiles | null {
  const present = values.filter((v): v is Percentiles => v !== null);
  if (present.length === 0) return null;
  return {
    p50: median(present.map((v) => v.p50)),
    p99: median(present.map((v) => v.p99)),
    p999: median(present.map((v) => v.p999)),
  };
}

/** `before` runs ahead of each repetition (a paired probe). */
async function repeatTrial<T>(spec: TrialSpec, repeat: number, options: TrialOptions = {}, before?: () => Promise<void>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < repeat; i++) {
    await before?.();
    results.push(await runTrial<T>(spec, options));
  }
  return results;
}

function medianCpuNoise(trials: CpuNoise[], restOnCpu0: boolean): CpuNoiseFigure {
  const m = (get: (n: CpuNoise) => number) => median(trials.map(get));
  return {
    cpu: trials[0]?.cpu ?? -1,
    pinned: trials.every((t) => t.pinned),
    restOnCpu0,
    durationNs: m((t) => t.durationNs),
    gapsPerSecond: m((t) => t.gapsPerSecond),
    lostFraction: m((t) => t.lostFraction),
    gapNs: { p50: m((t) => t.gapNs.p50), p99: m((t) => t.gapNs.p99), max: m((t) => t.gapNs.max) },
    residualNs: { p50: m((t) => t.residualNs.p50), p99: m((t) => t.residualNs.p99), p999: m((t) => t.residualNs.p999) },
  };
}

/** Offline sample count: the target is stated for 1M samples. */
function offlineSamples(tiny: boolean): number {
  return tiny ? 100_000 : 1_000_000;
}

/** What a Server row asks for, before it runs. */
interface ServerRun {
  sut: BenchSut;
  targetQps: number;
  pin: boolean;
  dispatchSpinUs: number;
  wakeLeadUs: number;
}

function serverRowLabel(row: Pick<ServerRow, 'sut' | 'targetQps' | 'pinned' | 'pinRequested' | 'dispatchSpinUs' | 'wakeLeadUs'>): string {
  const pin = row.pinned ? ' pinned' : row.pinRequested ? ' (could not pin)' : '';
  const spin = row.dispatchSpinUs ? ` spin ${fmt(row.dispatchSpinUs)}us` : '';
  const lead = row.wakeLeadUs ? ` lead ${fmt(row.wakeLeadUs)}us` : '';
  return `${row.sut} @ ${fmt(row.targetQps)} QPS${pin}${spin}${lead}`;
}

/** Runs the whole benchmark and returns every figure. */
export async function runBenchmark(options: BenchOptions = {}): Promise<BenchReport> {
  const tiny = options.tiny ?? false;
  const repeat = options.repeat ?? (tiny ? 1 : 3);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const serverMs = tiny ? 300 : 3000;
  const targetLatencyNs = 10_000_000;
  const canPin = pinningTaskset() !== null;

  log(`platform probes (x${repeat})`);
  const platform = await repeatTrial<PlatformTrial>({ kind: 'platform', tsfnWakes: tiny ? 200 : 5000 }, repeat);

  // CPU 1 with the rest of the process on CPU 0: the setting of the pinned Server rows.
  const noiseCpu = cpus().length >= 2 ? 1 : -1;
  log(`CPU noise on ${noiseCpu >= 0 ? `CPU ${noiseCpu}` : 'an unpinned thread'}${canPin ? ', the process on CPU 0' : ''} (x${repeat})`);
  const noiseTrials = await repeatTrial<CpuNoise>(
    { kind: 'cpu-noise', cpu: noiseCpu, durationMs: tiny ? 200 : 2000 },
    repeat,
    { onCpu0: canPin },
  );
  for (const warning of new Set(noiseTrials.map((t) => t.warning).filter((w) => w !== undefined))) log(`  ${warning}`);

  const serverRuns: ServerRun[] = [];
  const rates = tiny ? [1000, 10000] : [1000, 10000, 100000];
  for (const sut of BENCH_SUTS) {
    for (const targetQps of rates) serverRuns.push({ sut, targetQps, pin: false, dispatchSpinUs: 0, wakeLeadUs: 0 });
  }
  if (tiny) {
    serverRuns.push({ sut: 'null-native', targetQps: 1000, pin: true, dispatchSpinUs: 0, wakeLeadUs: 0 });
    serverRuns.push({ sut: 'wake', targetQps: 1000, pin: false, dispatchSpinUs: 0, wakeLeadUs: 100 });
  } else {
    // The issue-5 lateness target is stated pinned; a spinning worker skips
    // the futex wake, a wake lead the threadsafe-function wake-up.
    for (const sut of BENCH_SUTS) serverRuns.push({ sut, targetQps: 10000, pin: true, dispatchSpinUs: 0, wakeLeadUs: 0 });
    serverRuns.push({ sut: 'worker', targetQps: 10000, pin: false, dispatchSpinUs: 200, wakeLeadUs: 0 });
    serverRuns.push({ sut: 'wake', targetQps: 10000, pin: false, dispatchSpinUs: 0, wakeLeadUs: 100 });
  }
  const server: ServerRow[] = [];
  for (const run of serverRuns) {
    const pinned = run.pin && canPin;
    const label = serverRowLabel({ ...run, pinned, pinRequested: run.pin });
    log(`server ${label} (x${repeat})`);
    const floors: CpuNoise[] = [];
    const trials = await repeatTrial<ServerTrial>(
      {
        kind: 'server',
        sut: run.sut,
        targetQps: run.targetQps,
        durationMs: serverMs,
        targetLatencyNs,
        ...(pinned ? { pinned: true } : {}),
        ...(run.dispatchSpinUs ? { dispatchSpinUs: run.dispatchSpinUs } : {}),
        ...(run.wakeLeadUs ? { wakeLeadUs: run.wakeLeadUs } : {}),
      },
      repeat,
      { onCpu0: pinned },
      pinned ? async () => void floors.push(await runTrial<CpuNoise>({ kind: 'cpu-noise', cpu: 1, durationMs: tiny ? 200 : 2000 }, { onCpu0: true })) : undefined,
    );
    server.push({
      sut: run.sut,
      targetQps: run.targetQps,
      valid: trials.every((t) => t.valid),
      latencyNs: medianPercentiles(trials.map((t) => t.latencyNs))!,
      issueLatenessNs: medianPercentiles(trials.map((t) => t.issueLatenessNs)),
      deliveryLagNs: medianPercentiles(trials.map((t) => t.deliveryLagNs)),
      achievedQps: spread(trials.map((t) => t.achievedQps)),
      repetitions: trials.length,
      pinned: pinned && trials.every((t) => t.pinned),
      pinRequested: run.pin,
      dispatchSpinUs: run.dispatchSpinUs,
      wakeLeadUs: run.wakeLeadUs,
      ...(floors.length
        ? { floorNs: { p99: median(floors.map((f) => f.residualNs.p99)), p999: median(floors.map((f) => f.residualNs.p999)) } }
        : {}),
    });
  }

  const serverMaxValidQps: BenchReport['serverMaxValidQps'] = {};
  for (const sut of BENCH_SUTS) {
    log(`peak Server QPS ${sut} (x${repeat})`);
    // A search is ~30 Server runs (bisection to 1 QPS); tiny keeps each short.
    const peaks = await repeatTrial<PeakTrial>(
      { kind: 'peak', sut, baseQps: tiny ? 20000 : 50000, durationMs: tiny ? 100 : 1000, targetLatencyNs },
      repeat,
    );
    serverMaxValidQps[sut] = median(peaks.map((p) => p.peakQps));
  }

  const singleStreamQps: BenchReport['singleStreamQps'] = {};
  const singleStreamP90Ns: BenchReport['singleStreamP90Ns'] = {};
  for (const sut of BENCH_SUTS) {
    log(`single-stream ${sut} (x${repeat})`);
    const trials = await repeatTrial<{ qps: number; p90Ns: number }>(
      { kind: 'single-stream', sut, durationMs: tiny ? 200 : 2000 },
      repeat,
    );
    singleStreamQps[sut] = median(trials.map((t) => t.qps));
    singleStreamP90Ns[sut] = median(trials.map((t) => t.p90Ns));
  }

  const offlineSamplesPerSec: BenchReport['offlineSamplesPerSec'] = {};
  for (const sut of BENCH_SUTS) {
    log(`offline ${sut} (x${repeat})`);
    const trials = await repeatTrial<{ samplesPerSecond: number }>(
      { kind: 'offline', sut, samples: offlineSamples(tiny) },
      repeat,
    );
    offlineSamplesPerSec[sut] = median(trials.map((t) => t.samplesPerSecond));
  }

  log('memory per sample');
  const memoryRuns = tiny ? [500] : [2000, 8000];
  const bytesPerSampleByRun: BenchReport['bytesPerSampleByRun'] = [];
  for (const durationMs of memoryRuns) {
    bytesPerSampleByRun.push(await runTrial({ kind: 'memory', targetQps: tiny ? 50_000 : 200_000, durationMs }));
  }

  const report: BenchReport = {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cpus: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    config: { tiny, repeat },
    platform: {
      clockReadNs: median(platform.map((p) => p.clockReadNs)),
      jsToNativeCallNs: median(platform.map((p) => p.jsToNativeCallNs)),
      tsfnWakeNs: {
        p50: median(platform.map((p) => p.tsfnWakeNs.p50)),
        p99: median(platform.map((p) => p.tsfnWakeNs.p99)),
      },
      cpuNoise: medianCpuNoise(noiseTrials, canPin),
    },
    server,
    serverMaxValidQps,
    singleStreamQps,
    singleStreamP90Ns,
    offlineSamplesPerSec,
    bytesPerSample: Math.max(...bytesPerSampleByRun.map((r) => r.bytesPerSample)),
    bytesPerSampleByRun,
    targets: [],
  };
  report.targets = evaluateTargets(report);
  return report;
}

function fmt(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '-';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function us(n: number | undefined): string {
  return n === undefined ? '-' : fmt(n / 1000, 2);
}

/** The CPU-noise line: how often the (pinned) CPU is taken away, and the lateness floor that sets. */
function formatCpuNoise(n: CpuNoiseFigure): string {
  const where = n.pinned ? `pinned CPU ${n.cpu}${n.restOnCpu0 ? '' : ' (rest of the process not confined to CPU 0)'}` : 'unpinned thread';
  return `${where} noise: ${fmt(n.gapsPerSecond)} gaps/s, ${fmt(n.lostFraction * 100, 3)}% of time lost, gap p99 ${us(n.gapNs.p99)} us; ` +
    `lateness floor at a random instant p99 ${us(n.residualNs.p99)} us, p99.9 ${us(n.residualNs.p999)} us`;
}

/** The report as a plain-text table, followed by the targets table. */
export function formatBenchReport(r: BenchReport): string {
  const lines: string[] = [];
  lines.push(`loadgen bench — ${r.date} — ${r.machine.cpu} (${r.machine.cpus} CPUs), Node ${r.machine.node}`);
  lines.push(`medians of ${r.config.repeat} fresh-process trial(s)${r.config.tiny ? ' (tiny configuration)' : ''}`);
  lines.push('');
  lines.push(`platform: clock read ${fmt(r.platform.clockReadNs, 1)} ns, JS->native call ${fmt(r.platform.jsToNativeCallNs, 1)} ns, ` +
    `threadsafe-function wake p50 ${us(r.platform.tsfnWakeNs.p50)} us, p99 ${us(r.platform.tsfnWakeNs.p99)} us`);
  lines.push(formatCpuNoise(r.platform.cpuNoise));
  lines.push('');
  const labelWidth = Math.max(31, ...r.server.map((row) => serverRowLabel(row).length));
  lines.push(`${'Server (latencies in us)'.padEnd(labelWidth)} valid  achieved QPS    lat p50   lat p99  lat p99.9   late p50  late p99   lag p50   lag p99`);
  for (const row of r.server) {
    lines.push(
      `${serverRowLabel(row).padEnd(labelWidth)} ${(row.valid ? 'yes' : 'NO').padEnd(5)} ${fmt(row.achievedQps.median).padStart(13)}` +
        ` ${us(row.latencyNs.p50).padStart(10)} ${us(row.latencyNs.p99).padStart(9)} ${us(row.latencyNs.p999).padStart(10)}` +
        ` ${us(row.issueLatenessNs?.p50).padStart(10)} ${us(row.issueLatenessNs?.p99).padStart(9)}` +
        ` ${us(row.deliveryLagNs?.p50).padStart(9)} ${us(row.deliveryLagNs?.p99).padStart(9)}`,
    );
  }
  lines.push('');
  const keyed = (title: string, values: Partial<Record<BenchSut, number>>, unit: string) =>
    `${title.padEnd(30)} ${BENCH_SUTS.map((s) => `${s}: ${fmt(values[s])}`).join('   ')} ${unit}`;
  lines.push(keyed('highest VALID Server QPS', r.serverMaxValidQps, ''));
  lines.push(keyed('SingleStream queries/s', r.singleStreamQps, ''));
  lines.push(keyed('SingleStream p90 latency', r.singleStreamP90Ns, 'ns'));
  lines.push(keyed('Offline samples/s', r.offlineSamplesPerSec, ''));
  lines.push(`memory per recorded sample      ${r.bytesPerSampleByRun.map((m) => `${fmt(m.bytesPerSample, 1)} B over ${fmt(m.samples)} samples`).join(', ')}`);
  lines.push('');
  lines.push(formatTargets(r));
  return lines.join('\n');
}

/** The rate the issue-5 targets are stated at. */
const TARGET_QPS = 10000;

/** A 10k QPS row: pinned, or the plain one (unpinned, not a failed pin, default dispatchSpinUs and wakeLeadUs). */
function targetRow(r: BenchReport, sut: BenchSut, pinned: boolean): ServerRow | undefined {
  return r.server.find((row) =>
    row.sut === sut && row.targetQps === TARGET_QPS && !row.dispatchSpinUs && !row.wakeLeadUs &&
    (pinned ? row.pinned : !row.pinned && !row.pinRequested));
}

/** The unpinned 10k QPS row of `sut` with a non-default dispatch option (`option` > 0). */
function optionRow(r: BenchReport, sut: BenchSut, option: (row: ServerRow) => number): ServerRow | undefined {
  return r.server.find((row) => row.sut === sut && row.targetQps === TARGET_QPS && !row.pinned && !row.pinRequested && option(row) > 0);
}

/** Every check must hold; one that fails decides 'no', one with a missing figure (undefined) 'n/a'. */
function allHold(checks: (boolean | undefined)[]): BenchTarget['holds'] {
  if (checks.includes(false)) return 'no';
  return checks.includes(undefined) ? 'n/a' : 'yes';
}

function atMost(value: number | undefined, bound: number | undefined): boolean | undefined {
  return value === undefined || bound === undefined || Number.isNaN(value) || Number.isNaN(bound) ? undefined : value <= bound;
}

function atLeast(value: number | undefined, bound: number): boolean | undefined {
  return value === undefined || Number.isNaN(value) ? undefined : value >= bound;
}

/** The issue-5 targets, each with the figures of this report that decide it. */
export function evaluateTargets(r: BenchReport): BenchTarget[] {
  const targets: BenchTarget[] = [];

  const poll = targetRow(r, 'poll', false)?.deliveryLagNs;
  const pureJs = targetRow(r, 'pure-js', false)?.issueLatenessNs;
  targets.push({
    target: 'poll delivery lag <= pure-JS issue lateness at 10k QPS (p50, p99)',
    measured: `p50 ${us(poll?.p50)} us vs ${us(pureJs?.p50)} us; p99 ${us(poll?.p99)} us vs ${us(pureJs?.p99)} us`,
    holds: allHold([atMost(poll?.p50, pureJs?.p50), atMost(poll?.p99, pureJs?.p99)]),
  });

  // The default wake, and one with a wake lead (wakeLeadUs). Either may meet it.
  const wakeP99 = r.platform.tsfnWakeNs.p99;
  const wakeRows = [
    { label: 'default', row: targetRow(r, 'wake', false) },
    { label: 'lead', row: optionRow(r, 'wake', (row) => row.wakeLeadUs) },
  ].map(({ label, row }) => {
    const p99 = row?.deliveryLagNs?.p99;
    return { label: row?.wakeLeadUs ? `lead ${fmt(row.wakeLeadUs)}us` : label, p99, meets: allHold([atMost(p99, 2 * wakeP99)]) };
  });
  const wakeMetBy = wakeRows.filter((w) => w.meets === 'yes').map((w) => w.label);
  targets.push({
    target: 'wake delivery lag p99 <= 2 x raw threadsafe-function wake p99',
    measured: wakeRows.map((w) => `${w.label}: ${us(w.p99)} us`).join(', ') + ` at 10k QPS vs 2 x ${us(wakeP99)} us` +
      (wakeMetBy.length ? `; met by ${wakeMetBy.join(' and ')}` : ''),
    holds: wakeMetBy.length ? 'yes' : wakeRows.some((w) => w.meets === 'n/a') ? 'n/a' : 'no',
  });

  // The default worker sleeps when idle; a spinning one (dispatchSpinUs) skips the futex wake. Either may meet it.
  const workerRows = [
    { name: 'default', row: targetRow(r, 'worker', false) },
    { name: 'spinning', row: optionRow(r, 'worker', (row) => row.dispatchSpinUs) },
  ].map(({ name, row }) => {
    const lag = row?.deliveryLagNs ?? undefined;
    const label = row?.dispatchSpinUs ? `spin ${fmt(row.dispatchSpinUs)}us` : name;
    return { label, lag, meets: allHold([atMost(lag?.p50, 5000), atMost(lag?.p99, 100_000)]) };
  });
  const metBy = workerRows.filter((w) => w.meets === 'yes').map((w) => w.label);
  targets.push({
    target: 'worker delivery lag p50 <= 5 us, p99 <= 100 us at 10k QPS',
    measured: workerRows.map((w) => `${w.label}: p50 ${us(w.lag?.p50)} us, p99 ${us(w.lag?.p99)} us`).join('; ') +
      (metBy.length ? `; met by ${metBy.join(' and ')}` : ''),
    holds: metBy.length ? 'yes' : workerRows.some((w) => w.meets === 'n/a') ? 'n/a' : 'no',
  });

  // Each pinned row with the CPU-1 noise floor probed right before its repetitions.
  const pinnedLateness = BENCH_SUTS.map((sut) => {
    const row = targetRow(r, sut, true);
    return { sut, p99: row?.issueLatenessNs?.p99, floor: row?.floorNs?.p99 };
  });
  targets.push({
    target: 'issue lateness p99 <= 1 us at 10k QPS, issue thread pinned, every SUT',
    measured: pinnedLateness.map((l) => `${l.sut} ${us(l.p99)} us (floor ${us(l.floor)} us)`).join(', ') +
      '; floor: lateness p99 at a random instant on CPU 1, from its noise probed before each repetition',
    holds: allHold(pinnedLateness.map((l) => atMost(l.p99, 1000))),
  });

  const peaks = r.serverMaxValidQps;
  targets.push({
    target: 'highest VALID Server QPS: JS null (wake, poll, worker) >= 1,000,000; null-native >= 2,000,000',
    measured: (['wake', 'poll', 'worker', 'null-native'] as const).map((sut) => `${sut} ${fmt(peaks[sut])}`).join(', '),
    holds: allHold([
      atLeast(peaks.wake, 1_000_000),
      atLeast(peaks.poll, 1_000_000),
      atLeast(peaks.worker, 1_000_000),
      atLeast(peaks['null-native'], 2_000_000),
    ]),
  });

  targets.push({
    target: 'SingleStream with the JS null SUT >= 500,000 queries/s',
    measured: `wake ${fmt(r.singleStreamQps.wake)}`,
    holds: allHold([atLeast(r.singleStreamQps.wake, 500_000)]),
  });

  targets.push({
    target: 'Offline 1M samples, JS null SUT >= 5,000,000 samples/s',
    measured: `wake ${fmt(r.offlineSamplesPerSec.wake)} (${fmt(offlineSamples(r.config.tiny))} samples)`,
    holds: allHold([atLeast(r.offlineSamplesPerSec.wake, 5_000_000)]),
  });

  targets.push({
    target: '<= 64 bytes per recorded sample, flat with run length',
    measured: r.bytesPerSampleByRun.map((m) => `${fmt(m.bytesPerSample, 1)} B over ${fmt(m.samples)}`).join(', ') || '-',
    holds: allHold(r.bytesPerSampleByRun.length ? r.bytesPerSampleByRun.map((m) => atMost(m.bytesPerSample, 64)) : [undefined]),
  });
  return targets;
}

/** The issue-5 targets as a Markdown table (`| Target | Measured | Holds |`). */
export function formatTargets(r: BenchReport): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return [
    '| Target | Measured | Holds |',
    '|---|---|---|',
    ...evaluateTargets(r).map((t) => `| ${cell(t.target)} | ${cell(t.measured)} | ${t.holds} |`),
  ].join('\n');
}
