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

export type Transport = 'native' | 'undici';
/** Both transports where the native client exists (Linux), else undici alone. */
export const TRANSPORTS: readonly Transport[] = loadNative().nativeHttpAvailable ? ['native', 'undici'] : ['undici'];

/** Every case runs with this key: none of its 8-character pieces may appear in anything written. */
export const API_KEY = 'sk-proj-Fault0123456789abcdefXYZ';
/** Samples in every data set (sample i names itself in its request body). */
export const SAMPLES = 8;

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
}

/** A network SUT of `protocol` against `url`, with the API key. */
export async function createSut(protocol: FaultProtocol, url: string, options: SutOptions): Promise<NetworkSut> {
  const common = {
    urls: [url],
    transport: options.transport,
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    apiKey: options.apiKey ?? API_KEY,
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
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
  /** Stops the run after this long (a run that would not end by itself). */
  stopAfterMs?: number;
}

/** Starts the server and the SUT, runs, and closes both; what the run left. */
export async function runCase(options: CaseOptions): Promise<CaseRun> {
  const server = await startFaultServer({ protocol: options.protocol, ...options.server });
  try {
    const sut = await createSut(options.protocol, server.url, options);
    try {
      const outdir = tempDir('loadgen-fault-run-');
      const controller = new AbortController();
      const timer = options.stopAfterMs !== undefined ? setTimeout(() => controller.abort(new Error(`the test stopped the run after ${options.stopAfterMs} ms`)), options.stopAfterMs) : undefined;
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

/** (c) Every ':::MLLOG ' line of the detail log is JSON; returns the parsed records. */
export function detailRecords(outdir: string): Record<string, unknown>[] {
  const text = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
  const records: Record<string, unknown>[] = [];
  for (const [n, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const at = line.indexOf(':::MLLOG ');
    expect(at, `detail log line ${n + 1} has no :::MLLOG prefix: ${line.slice(0, 120)}`).toBeGreaterThanOrEqual(0);
    let record: unknown;
    try {
      record = JSON.parse(line.slice(at + ':::MLLOG '.length));
    } catch (error) {
      throw new Error(`detail log line ${n + 1} is not JSON (${(error as Error).message}): ${line.slice(0, 200)}`);
    }
    records.push(record as Record<string, unknown>);
  }
  return records;
}

/**
 * (d) Impossible figures in a summary: a number that is not finite (nan,
 * inf), beyond 1e15 (no rate, latency or count of a short run comes near),
 * negative where a figure is printed, or 'Performance constraints satisfied
 * : Yes' beside zero completed samples. Returns the problems found.
 */
export function impossibleFigures(summary: string, completedOk: number): string[] {
  const problems: string[] = [];
  for (const line of summary.split('\n')) {
    const colon = line.indexOf(' : ');
    if (colon < 0) continue;
    const label = line.slice(0, colon).trim();
    const value = line.slice(colon + 3).trim();
    if (/\b(-?nan|-?inf(inity)?)\b/i.test(value)) problems.push(`not finite: ${line}`);
    // Dates and text values hold no figure; a figure is a value that starts as a number.
    const figure = /^[-+]?\d[\d.,]*(e[-+]?\d+)?/i.exec(value);
    if (figure === null) continue;
    const number = Number(figure[0].replace(/,/g, ''));
    if (!Number.isFinite(number)) problems.push(`not finite: ${line}`);
    else if (Math.abs(number) > 1e15) problems.push(`beyond 1e15: ${line}`);
    else if (number < 0 && !/seed|cpu|affinity/i.test(label)) problems.push(`negative: ${line}`);
  }
  if (completedOk === 0 && /Performance constraints satisfied\s*:\s*Yes/.test(summary)) problems.push("'Performance constraints satisfied : Yes' with no completed sample");
  return problems;
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
 * statistics. `expectKeyFree` false: only the whole key is checked.
 */
export function checkRunOutputs(run: CaseRun): void {
  const { result, outdir, stats } = run;
  const failed = failedOf(result);
  // (b) A run with a failed sample is INVALID and says so.
  if (failed.total > 0) {
    expect(result.valid, 'a run with failed samples is INVALID').toBe(false);
    expect(result.invalidReasons.join(' '), 'the reasons name the failures').toMatch(/samples? failed/);
  }
  // (c)
  detailRecords(outdir);
  // (d)
  const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
  expect(impossibleFigures(summary, completedOk(result)), 'impossible figures in the summary').toEqual([]);
  for (const reason of result.invalidReasons) expect(reason.trim(), 'an INVALID reason is a sentence').toMatch(/[.!:)\]]$/);
  // (e)
  const written = filesUnder(outdir).map((f) => [f, readFileSync(f, 'latin1')] as const);
  written.push(['result', jsonText(result)], ['sut.stats()', jsonText(stats)], ['sut report', jsonText(run.report ?? null)]);
  for (const [where, text] of written) expect(keyPieceIn(text), `a piece of the API key in ${where}`).toBeUndefined();
  // (f) The nodes' counts are the result's.
  for (const kind of FAILURE_KINDS) {
    const counted = stats.nodes.reduce((sum, node) => sum + node.failed[kind], 0);
    expect(counted, `sut.stats() failed.${kind} vs result.errors.failedSamples`).toBe(failed.byKind[kind]);
  }
  expect(stats.nodes.reduce((sum, node) => sum + node.completed, 0), 'sut.stats() completed vs the result').toBe(completedOk(result));
  // A bound on memory: nothing in these runs needs more than a few hundred MB.
  expect(process.memoryUsage().rss, 'RSS of the test process').toBeLessThan(1.5 * 2 ** 30);
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
  expect(result.counts.completedSamples, 'every issued sample ends').toBe(result.counts.issuedSamples);
  expect(issued.length, 'the trace lists every issued sample').toBe(result.counts.issuedSamples);
  const hit = expected === 'ok' ? 0 : issued.filter((sample) => faulted(sample)).length;
  const describe = `failed ${JSON.stringify(nonZero(failed.byKind))}, ${logged.length} completed of ${result.counts.issuedSamples}, ${hit} faulted`;
  expect(nonZero(failed.byKind), `the failures (${describe})`).toEqual(hit === 0 ? {} : { [expected]: hit });
  expect(logged.length, `the completed samples (${describe})`).toBe(result.counts.issuedSamples - hit);
  if (expected !== 'ok') {
    expect(hit, 'a faulted sample was issued').toBeGreaterThan(0);
    expect(logged.filter((sample) => faulted(sample)), `faulted samples that completed (${describe})`).toEqual([]);
  }
}

/** JSON of anything a result holds (bigints as strings). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

function nonZero(byKind: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(byKind).filter(([, n]) => n !== 0));
}
