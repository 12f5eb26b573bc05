/**
 * Runs of the fault-injection suite: a network SUT of any protocol on either
 * transport against a fault server, one startTest per case with its own
 * outdir, and the checks every case makes of what the run wrote: the detail
 * log parses line by line, the summary holds no impossible figure, no
 * fragment of the API key appears anywhere, the SUT's statistics count the
 * failures the result counts.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'vitest';

import { createHttpSut, createKServeSut, createOpenAiSut, startTest } from '../../lib/index.js';
import type { TestResult, TestSettingsInput } from '../../lib/index.js';
import { loadNative } from '../../lib/native/index.js';
import { FAILURE_KINDS, type FailureKind } from '../../lib/net/protocol.js';
import type { NetworkStats, NetworkSut } from '../../lib/net/types.js';
import { tempDir } from '../helpers.js';
import { FAULT_MODEL, startFaultServer, type FaultProtocol, type FaultServer, type FaultServerOptions } from './fault-server.js';

/** 'native-2': the native transport with two client threads (each reading its own connections). */
export type Transport = 'native' | 'native-2' | 'undici';
/** Both transports where the native client exists (Linux), else undici alone. */
export const TRANSPORTS: readonly Transport[] = loadNative().nativeHttpAvailable ? ['native', 'undici'] : ['undici'];
/** TRANSPORTS and the native transport with two client threads (the raw faults of http-faults.test.ts). */
export const THREADED_TRANSPORTS: readonly Transport[] = loadNative().nativeHttpAvailable ? ['native', 'native-2', 'undici'] : ['undici'];

/**
 * Every case runs with this key: none of its 8-character pieces may appear
 * in anything written. No piece is all hexadecimal, so hashes and hex data
 * in the logs never match one by chance.
 */
export const API_KEY = 'sk-proj-FaultKey-q7Zt2mWx9RvLp4Ns';
/** Samples in every data set (sample i names itself in its request body). */
export const SAMPLES = 10;

/** A sample's expected end: completed, or failed with this kind. */
export type Outcome = 'ok' | FailureKind;

const dataDir = tempDir('loadgen-faults-');
/** The OpenAI data set: prompt 'sample i'. */
export const OPENAI_DATASET = join(dataDir, 'prompts.jsonl');
writeFileSync(OPENAI_DATASET, Array.from({ length: SAMPLES }, (_, i) => JSON.stringify({ prompt: `sample ${i}`, max_tokens: 4 })).join('\n'));
/** The KServe data set: input x, FP32 [1,1], holding i. */
export const KSERVE_DATASET = join(dataDir, 'inputs.jsonl');
writeFileSync(KSERVE_DATASET, Array.from({ length: SAMPLES }, (_, i) => JSON.stringify([{ name: 'x', datatype: 'FP32', shape: [1, 1], data: [i] }])).join('\n'));

/** Writes a --request module (http protocol) into the data folder; returns its path. */
export function mapModule(name: string, source: string): string {
  const path = join(dataDir, `${name}.mjs`);
  writeFileSync(path, source);
  return path;
}

/**
 * The http protocol's module: sample i is POST /infer {"x": i}; a body must
 * be JSON or empty (an API whose empty answers are fine), else response() throws.
 */
export const HTTP_MAP = mapModule(
  'json-map',
  `export const totalSampleCount = ${SAMPLES};
export function request(index) { return { method: 'POST', path: '/infer', body: { x: index } }; }
export function response({ body }) {
  if (body.length === 0) return { data: '' };
  JSON.parse(Buffer.from(body).toString('utf8'));
  return { data: body };
}
`,
);

export interface SutOptions {
  transport: Transport;
  requestTimeoutMs?: number;
  connections?: number;
  /** The http protocol's module (default HTTP_MAP). */
  request?: string;
  apiKey?: string;
  signal?: AbortSignal;
}

/** A network SUT of `protocol` against `url`, with the API key. */
export async function createSut(protocol: FaultProtocol, url: string, options: SutOptions): Promise<NetworkSut> {
  const common = {
    urls: [url],
    transport: options.transport === 'native-2' ? 'native' as const : options.transport,
    ...(options.transport === 'native-2' ? { clientThreads: Math.min(2, options.connections ?? 2) } : {}),
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    apiKey: options.apiKey ?? API_KEY,
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  switch (protocol) {
    case 'openai-stream':
      return createOpenAiSut({ ...common, model: FAULT_MODEL, dataset: OPENAI_DATASET, stream: true });
    case 'openai-whole':
      return createOpenAiSut({ ...common, model: FAULT_MODEL, dataset: OPENAI_DATASET, stream: false });
    case 'kserve':
      return createKServeSut({ ...common, model: FAULT_MODEL, dataset: KSERVE_DATASET });
    case 'http':
      return createHttpSut({ ...common, request: options.request ?? HTTP_MAP });
  }
}

/** A small SingleStream run: every completed response logged (accuracy_log_probability 1). */
export function singleStream(queries: number): TestSettingsInput {
  return { scenario: 'SingleStream', minQueryCount: queries, minDurationMs: 0, singleStreamExpectedLatencyNs: 2_000_000, accuracyLogProbability: 1 } as TestSettingsInput;
}

export interface CaseRun {
  result: TestResult;
  outdir: string;
  stats: NetworkStats;
  report: unknown;
  server: FaultServer;
  /** The qsl_idx of each accuracy-log record (the completed samples, every one logged). */
  logged: number[];
  /** The sample index of each issued sample (the trace's Sample events). */
  issued: number[];
}

export interface CaseOptions extends SutOptions {
  protocol: FaultProtocol;
  server: Omit<FaultServerOptions, 'protocol'>;
  settings: TestSettingsInput;
  /** Stops the run after this long (default 20 s: a run that would not end by itself). */
  stopAfterMs?: number;
}

/** Longest a case's run may take before the test stops it (none of them needs a tenth of it). */
export const CASE_STOP_MS = 20_000;

/** Starts the server and the SUT, runs, and closes both; what the run left. */
export async function runCase(options: CaseOptions): Promise<CaseRun> {
  const server = await startFaultServer({ protocol: options.protocol, ...options.server });
  const controller = new AbortController();
  try {
    const sut = await createSut(options.protocol, server.url, { ...options, signal: controller.signal });
    try {
      const outdir = tempDir('loadgen-fault-run-');
      const stopAfterMs = options.stopAfterMs ?? CASE_STOP_MS;
      const timer = setTimeout(() => controller.abort(new Error(`the test stopped the run after ${stopAfterMs} ms`)), stopAfterMs);
      let result: TestResult;
      try {
        result = await startTest(sut, sut.qsl, options.settings, { outdir, enableTrace: true }, { signal: controller.signal, auditConfig: false });
      } finally {
        clearTimeout(timer);
      }
      const report = (sut as NetworkSut & { report?: () => unknown }).report?.();
      return { result, outdir, stats: sut.stats(), report, server, logged: accuracyIndices(outdir), issued: tracedSamples(outdir) };
    } finally {
      await sut.close();
    }
  } finally {
    await server.close();
  }
}

/** The qsl_idx of every record of the outdir's accuracy log. */
export function accuracyIndices(outdir: string): number[] {
  let text: string;
  try {
    text = readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8');
  } catch {
    return [];
  }
  return (JSON.parse(text) as { qsl_idx: number }[]).map((r) => r.qsl_idx);
}

/** The sample_idx of every Sample begin event of the outdir's trace. */
export function tracedSamples(outdir: string): number[] {
  let text: string;
  try {
    text = readFileSync(join(outdir, 'mlperf_log_trace.json'), 'utf8');
  } catch {
    return [];
  }
  if (text.trim() === '') return [];
  const trace = JSON.parse(text) as { traceEvents?: { name?: string; ph?: string; args?: { sample_idx?: number } }[] } | { name?: string; ph?: string; args?: { sample_idx?: number } }[];
  const events = Array.isArray(trace) ? trace : (trace.traceEvents ?? []);
  return events.filter((e) => e.name === 'Sample' && e.ph === 'b').map((e) => e.args!.sample_idx!);
}

export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

/** Every 8-character piece of the key (what a partly masked key still shows). */
export function keyPieces(key = API_KEY): string[] {
  const pieces: string[] = [];
  for (let i = 0; i + 8 <= key.length; i++) pieces.push(key.slice(i, i + 8));
  return pieces;
}

/** The first piece of the key `text` holds, or undefined. */
export function keyPieceIn(text: string, key = API_KEY): string | undefined {
  return keyPieces(key).find((piece) => text.includes(piece));
}

/** (c) Every ':::MLLOG ' line of the detail log is JSON (each one that is not, a soft failure); returns the parsed records. */
export function detailRecords(outdir: string): Record<string, unknown>[] {
  const text = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
  const records: Record<string, unknown>[] = [];
  const bad: string[] = [];
  for (const [n, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const at = line.indexOf(':::MLLOG ');
    try {
      if (at < 0) throw new Error('no :::MLLOG prefix');
      records.push(JSON.parse(line.slice(at + ':::MLLOG '.length)) as Record<string, unknown>);
    } catch (error) {
      bad.push(`line ${n + 1} (${(error as Error).message}): ${line.slice(0, 160)}`);
    }
  }
  expect.soft(bad, 'detail log lines that are not JSON').toEqual([]);
  // A failed sample's line carries the time it failed: possible (finite, not before the log's start,
  // not after its last line) and in the order the samples failed.
  const times = records.map((r) => r.time_ms as number);
  const last = Math.max(...times.filter((t) => Number.isFinite(t)));
  const failed = records.filter((r) => typeof r.value === 'string' && r.value.startsWith('Sample failed (')).map((r) => r.time_ms as number);
  expect.soft(failed.filter((t) => !Number.isFinite(t) || t < 0 || t > last), "'Sample failed' times not possible").toEqual([]);
  expect.soft(failed.filter((t, i) => i > 0 && t < failed[i - 1]!), "'Sample failed' lines out of order").toEqual([]);
  return records;
}

/**
 * (d) Impossible figures in a summary: in every "label : value" line, a
 * number that is not finite (nan, inf), beyond 1e15 (no rate, latency or
 * count of a short run comes near), or negative; and 'Performance
 * constraints satisfied : Yes' beside zero completed samples. Returns the
 * problems found.
 */
export function impossibleFigures(summary: string, completedOk: number): string[] {
  const problems: string[] = [];
  for (const line of summary.split('\n')) {
    if (/\b(nan|inf|infinity)\b/i.test(line)) problems.push(`not finite: ${line}`);
    const field = /^\s*([^:]+?)\s*:\s+(.*)$/.exec(line);
    if (field === null) continue;
    const [, label, value] = field as unknown as [string, string, string];
    // Seeds and CPU numbers may be negative settings; dates are not figures.
    if (/seed|cpu/i.test(label) || /\d{4}-\d\d-\d\d/.test(value)) continue;
    for (const match of value.matchAll(/(^|[^\w.])(-?\d[\d,]*(\.\d+)?(e[-+]?\d+)?)/gi)) {
      const number = Number(match[2]!.replace(/,/g, ''));
      if (!Number.isFinite(number)) problems.push(`not finite: ${line}`);
      else if (Math.abs(number) > 1e15) problems.push(`beyond 1e15: ${line}`);
      else if (number < 0) problems.push(`negative: ${line}`);
    }
  }
  if (completedOk === 0 && /Performance constraints satisfied\s*:\s*Yes/.test(summary)) problems.push("'Performance constraints satisfied : Yes' with no completed sample");
  return problems;
}

/** Sentences run together ('...were issued.21 samples failed'): a period between a letter and a digit or capital. */
export function runTogether(text: string): string[] {
  return [...text.matchAll(/[a-z]\.(\d|[A-Z])/g)].map((m) => text.slice(Math.max(0, m.index - 40), m.index + 40));
}

/** The failed samples of a result, by kind. */
export function failedOf(result: TestResult): { total: number; byKind: Record<FailureKind, number> } {
  return (result.errors as unknown as { failedSamples: { total: number; byKind: Record<FailureKind, number> } }).failedSamples;
}

/** Samples that completed (not failed). */
export function completedOk(result: TestResult): number {
  return result.counts.completedSamples - failedOf(result).total;
}

/**
 * The checks of every case that hold whatever the fault: the verdict against
 * the failures, (c) the detail log, (d) the summary, (e) the key, (f) the
 * statistics (`oneSeries` false: the run had several, the stats count them all).
 */
export function checkRunOutputs(run: CaseRun, options: { oneSeries?: boolean } = {}): void {
  const { result, outdir, stats } = run;
  const failed = failedOf(result);
  // (b) A run with a failed sample is INVALID and says so. FindPeakPerformance
  // reports one trial: the failures of the trials that only bounded the search
  // are counted in result.errors but are not that trial's.
  const trials = result.findPeak?.trials;
  const reported = trials?.filter((t) => t.targetQps === result.findPeak!.peakQps).at(-1);
  const reportedFailed = trials === undefined ? failed.total : reported === undefined ? failed.total : reported.failedSamples;
  if (reportedFailed > 0) {
    expect.soft(result.valid, 'a run with failed samples is INVALID').toBe(false);
    expect.soft(result.invalidReasons.join(' '), 'the reasons name the failures').toMatch(/samples? failed/);
  }
  // (c)
  const records = detailRecords(outdir);
  // (d)
  const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
  expect.soft(impossibleFigures(summary, completedOk(result)), 'impossible figures in the summary').toEqual([]);
  // The verdict's reasons are separate sentences wherever they are joined.
  const reasons = records.filter((r) => r.key === 'result_invalid_reason').map((r) => String(r.value));
  expect.soft(runTogether([summary, ...reasons, ...result.invalidReasons].join('\n')), 'sentences run together').toEqual([]);
  // (e)
  const written = filesUnder(outdir).map((f) => [f, readFileSync(f, 'latin1')] as const);
  written.push(['result', jsonText(result)], ['sut.stats()', jsonText(stats)], ['sut report', jsonText(run.report ?? null)]);
  for (const [where, text] of written) expect.soft(keyPieceIn(text), `a piece of the API key in ${where}`).toBeUndefined();
  // A bound on memory: nothing in these runs needs more than a few hundred MB.
  expect.soft(process.memoryUsage().rss, 'RSS of the test process').toBeLessThan(1.5 * 2 ** 30);
  // (f) The nodes' counts are the result's (when the run was one series: FindPeakPerformance's result is its peak trial's).
  if (options.oneSeries === false) return;
  for (const kind of FAILURE_KINDS) {
    const counted = stats.nodes.reduce((sum, node) => sum + node.failed[kind], 0);
    expect.soft(counted, `sut.stats() failed.${kind} vs result.errors.failedSamples`).toBe(failed.byKind[kind]);
  }
  expect.soft(stats.nodes.reduce((sum, node) => sum + node.completed, 0), 'sut.stats() completed vs the result').toBe(completedOk(result));
}

/**
 * (a) Each sample's end: every issued sample `faulted` says fails with
 * `expected` (or completes for 'ok'), every other completes. The trace says
 * which samples were issued, the accuracy log (every completion logged)
 * which completed.
 */
export function checkOutcomes(run: CaseRun, expected: Outcome, faulted: (sample: number) => boolean): void {
  const { result, logged, issued } = run;
  const failed = failedOf(result);
  expect.soft(result.interrupted, 'the run ended by itself').toBeUndefined();
  expect.soft(result.counts.completedSamples, 'every issued sample ends').toBe(result.counts.issuedSamples);
  expect.soft(issued.length, 'the trace lists every issued sample').toBe(result.counts.issuedSamples);
  const hit = expected === 'ok' ? 0 : issued.filter((sample) => faulted(sample)).length;
  const describe = `failed ${JSON.stringify(nonZero(failed.byKind))}, ${logged.length} completed of ${result.counts.issuedSamples}, ${hit} faulted`;
  expect.soft(nonZero(failed.byKind), `the failures (${describe})`).toEqual(hit === 0 ? {} : { [expected]: hit });
  expect.soft(logged.length, `the completed samples (${describe})`).toBe(result.counts.issuedSamples - hit);
  if (expected !== 'ok') {
    expect.soft(hit, 'a faulted sample was issued').toBeGreaterThan(0);
    expect.soft(logged.filter((sample) => faulted(sample)), `faulted samples that completed (${describe})`).toEqual([]);
  }
}

/** JSON of anything a result holds (bigints as strings). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

function nonZero(byKind: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(byKind).filter(([, n]) => n !== 0));
}
