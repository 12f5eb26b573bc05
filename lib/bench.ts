/**
 * `loadgen bench`: loadgen's own cost on this machine. Every trial runs in a
 * fresh process (lib/bench-trial.ts); each is repeated and reported as the
 * median with its spread (min..max).
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  | { kind: 'server'; sut: BenchSut; targetQps: number; durationMs: number; targetLatencyNs: number }
  | { kind: 'peak'; sut: Exclude<BenchSut, 'pure-js'>; baseQps: number; durationMs: number; targetLatencyNs: number }
  | { kind: 'single-stream'; sut: BenchSut; durationMs: number }
  | { kind: 'offline'; sut: Exclude<BenchSut, 'pure-js'>; samples: number }
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
}

export interface BenchReport {
  date: string;
  machine: { cpu: string; cpus: number; node: string; platform: string };
  config: { tiny: boolean; repeat: number };
  platform: { clockReadNs: number; jsToNativeCallNs: number; tsfnWakeNs: { p50: number; p99: number } };
  server: ServerRow[];
  serverMaxValidQps: Partial<Record<BenchSut, number>>;
  singleStreamQps: Partial<Record<BenchSut, number>>;
  singleStreamP90Ns: Partial<Record<BenchSut, number>>;
  offlineSamplesPerSec: Partial<Record<BenchSut, number>>;
  bytesPerSample: number;
  bytesPerSampleByRun: { samples: number; bytesPerSample: number }[];
}

const trialScript = join(dirname(fileURLToPath(import.meta.url)), 'bench-trial.js');

/** Runs one trial in a fresh Node process and returns what it printed. */
export function runTrial<T>(spec: TrialSpec): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [trialScript, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
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

async function repeatTrial<T>(spec: TrialSpec, repeat: number): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < repeat; i++) results.push(await runTrial<T>(spec));
  return results;
}

/** Runs the whole benchmark and returns every figure. */
export async function runBenchmark(options: BenchOptions = {}): Promise<BenchReport> {
  const tiny = options.tiny ?? false;
  const repeat = options.repeat ?? (tiny ? 1 : 3);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const serverMs = tiny ? 300 : 3000;
  const targetLatencyNs = 10_000_000;

  log(`platform probes (x${repeat})`);
  const platform = await repeatTrial<PlatformTrial>({ kind: 'platform', tsfnWakes: tiny ? 200 : 5000 }, repeat);

  const server: ServerRow[] = [];
  const rates = tiny ? [1000, 10000] : [1000, 10000, 100000];
  for (const sut of BENCH_SUTS) {
    for (const targetQps of rates) {
      log(`server ${sut} ${targetQps} QPS (x${repeat})`);
      const trials = await repeatTrial<ServerTrial>({ kind: 'server', sut, targetQps, durationMs: serverMs, targetLatencyNs }, repeat);
      server.push({
        sut,
        targetQps,
        valid: trials.every((t) => t.valid),
        latencyNs: medianPercentiles(trials.map((t) => t.latencyNs))!,
        issueLatenessNs: medianPercentiles(trials.map((t) => t.issueLatenessNs)),
        deliveryLagNs: medianPercentiles(trials.map((t) => t.deliveryLagNs)),
        achievedQps: spread(trials.map((t) => t.achievedQps)),
        repetitions: trials.length,
      });
    }
  }

  const serverMaxValidQps: BenchReport['serverMaxValidQps'] = {};
  for (const sut of ['null-native', 'wake'] as const) {
    log(`peak Server QPS ${sut} (x${repeat})`);
    const peaks = await repeatTrial<{ peakQps: number }>(
      { kind: 'peak', sut, baseQps: tiny ? 2000 : 50000, durationMs: tiny ? 200 : 1000, targetLatencyNs },
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
  for (const sut of ['null-native', 'wake', 'poll', 'worker'] as const) {
    log(`offline ${sut} (x${repeat})`);
    const trials = await repeatTrial<{ samplesPerSecond: number }>(
      { kind: 'offline', sut, samples: tiny ? 100_000 : 1_000_000 },
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

  return {
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
    },
    server,
    serverMaxValidQps,
    singleStreamQps,
    singleStreamP90Ns,
    offlineSamplesPerSec,
    bytesPerSample: Math.max(...bytesPerSampleByRun.map((r) => r.bytesPerSample)),
    bytesPerSampleByRun,
  };
}

function fmt(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '-';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function us(n: number | undefined): string {
  return n === undefined ? '-' : fmt(n / 1000, 2);
}

/** The report as a plain-text table. */
export function formatBenchReport(r: BenchReport): string {
  const lines: string[] = [];
  lines.push(`loadgen bench — ${r.date} — ${r.machine.cpu} (${r.machine.cpus} CPUs), Node ${r.machine.node}`);
  lines.push(`medians of ${r.config.repeat} fresh-process trial(s)${r.config.tiny ? ' (tiny configuration)' : ''}`);
  lines.push('');
  lines.push(`platform: clock read ${fmt(r.platform.clockReadNs, 1)} ns, JS->native call ${fmt(r.platform.jsToNativeCallNs, 1)} ns, ` +
    `threadsafe-function wake p50 ${us(r.platform.tsfnWakeNs.p50)} us, p99 ${us(r.platform.tsfnWakeNs.p99)} us`);
  lines.push('');
  lines.push('Server (latencies in us)        valid  achieved QPS    lat p50   lat p99  lat p99.9   late p50  late p99   lag p50   lag p99');
  for (const row of r.server) {
    lines.push(
      `${`${row.sut} @ ${fmt(row.targetQps)} QPS`.padEnd(31)} ${(row.valid ? 'yes' : 'NO').padEnd(5)} ${fmt(row.achievedQps.median).padStart(13)}` +
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
  return lines.join('\n');
}
