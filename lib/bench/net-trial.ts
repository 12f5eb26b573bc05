/**
 * The network trials of `loadgen bench` (run by lib/bench/trial.ts in a fresh
 * process): an open-loop Server run against the stamp server, with the
 * client's share of each request's latency, and a token-latency run against
 * the OpenAI stub streamer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTest } from '../api/start-test.js';
import type { TestResult } from '../api/types.js';
import { createOpenAiSut } from '../net/openai.js';
import type { NetworkProtocol, NodeProbe, PreparedRequest, ResponseOutcome, ResponseReader } from '../net/protocol.js';
import { createNetworkSut } from '../net/transport.js';
import type { NetworkStats } from '../net/types.js';
import type { NetServerTrial, NetTokensTrial, Percentiles, TrialSpec } from './trials.js';

/** Distinct sample indices: a sample is issued ~once per 6 s at 10k/s, so an index is never twice in flight. */
const STAMP_SAMPLES = 65_536;

function percentilesOf(values: Float64Array): Percentiles {
  const s = Float64Array.from(values).sort();
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999) };
}

/**
 * The server's stamps of each answered request, by sample index, in the order
 * they completed. Growable typed arrays: one push per response, no object.
 */
export class StampRecords {
  count = 0;
  index = new Float64Array(1 << 16);
  recv = new Float64Array(1 << 16);
  send = new Float64Array(1 << 16);

  push(index: number, recv: number, send: number): void {
    if (this.count === this.index.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.index = grow(this.index);
      this.recv = grow(this.recv);
      this.send = grow(this.send);
    }
    this.index[this.count] = index;
    this.recv[this.count] = recv;
    this.send[this.count] = send;
    this.count++;
  }
}

/** Parses a 19-digit decimal at `at` (CLOCK_MONOTONIC ns, < 2^53 for ~104 days of uptime). */
function digits19(bytes: Uint8Array, at: number): number {
  let n = 0;
  for (let i = at; i < at + 19; i++) {
    const d = bytes[i]! - 48;
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
}

/** GET /s/<index> on benchmarks/stamp-server.c (or net-serve.js stamp): the body is "RECV SEND\n". */
export class StampProtocol implements NetworkProtocol {
  readonly kind = 'bench-stamp';
  readonly totalSampleCount = STAMP_SAMPLES;
  readonly performanceSampleCount = STAMP_SAMPLES;
  readonly streamsTokens = false;
  readonly records = new StampRecords();
  private readonly requests: (PreparedRequest | undefined)[] = new Array(STAMP_SAMPLES);

  async probe(node: NodeProbe): Promise<string> {
    const r = await node.request('GET', '/name');
    if (r.status !== 200 || r.body.length !== 40) throw new Error(`${node.origin} is not the bench's stamp server (status ${r.status})`);
    return 'stamp-server';
  }

  load(indices: readonly number[]): void {
    for (const i of indices) this.requests[i] = { method: 'GET', path: `/s/${i}`, headers: {} };
  }

  unload(indices: readonly number[]): void {
    for (const i of indices) this.requests[i] = undefined;
  }

  request(index: number): PreparedRequest {
    const r = this.requests[index];
    if (r === undefined) throw new Error(`bench-stamp: sample ${index} is not loaded`);
    return r;
  }

  reader(index: number): ResponseReader {
    const records = this.records;
    let body: Uint8Array | null = null;
    let length = 0;
    return {
      onData(chunk: Uint8Array): undefined {
        if (body === null && chunk.length >= 40) body = chunk;
        else {
          const joined = new Uint8Array(length + chunk.length);
          if (body) joined.set(body.subarray(0, length));
          joined.set(chunk, length);
          body = joined;
        }
        length = body.length;
        return undefined;
      },
      onEnd(): ResponseOutcome {
        const recv = body && length === 40 ? digits19(body, 0) : Number.NaN;
        const send = body && length === 40 ? digits19(body, 20) : Number.NaN;
        if (Number.isNaN(recv) || Number.isNaN(send)) return { ok: false, kind: 'malformed_response', message: 'no stamps in the body' };
        records.push(index, recv, send);
        return { ok: true };
      },
    };
  }
}

/** Per sample of the trace: its index, scheduled time (us from the trace origin) and latency (ns). */
export interface TracedSample {
  idx: number;
  scheduledUs: number;
  latencyNs: number;
}

export function readTrace(path: string): TracedSample[] {
  const samples: TracedSample[] = [];
  const begin = /"name":"Sample".*"ph":"b".*"ts":(-?[\d.]+),"args":\{.*"sample_idx":(\d+),.*"complete_ns":(-?\d+)\}/;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = begin.exec(line);
    if (m) samples.push({ idx: Number(m[2]), scheduledUs: Number(m[1]), latencyNs: Number(m[3]) });
  }
  return samples;
}

/**
 * Pairs each traced sample with its server record: per sample index, the
 * k-th issue with the k-th request the server answered (indices are ~never
 * in flight twice; an index whose counts differ is left out).
 */
export function clientShare(samples: TracedSample[], records: StampRecords): NonNullable<NetServerTrial['share']> {
  const byIdx = new Map<number, { recv: number; send: number }[]>();
  for (let i = 0; i < records.count; i++) {
    const idx = records.index[i]!;
    let list = byIdx.get(idx);
    if (!list) byIdx.set(idx, (list = []));
    list.push({ recv: records.recv[i]!, send: records.send[i]! });
  }
  const traced = new Map<number, TracedSample[]>();
  for (const s of samples) {
    let list = traced.get(s.idx);
    if (!list) traced.set(s.idx, (list = []));
    list.push(s);
  }
  const latency: number[] = [];
  const server: number[] = [];
  const client: number[] = [];
  for (const [idx, list] of traced) {
    const stamps = byIdx.get(idx);
    if (!stamps || stamps.length !== list.length) continue;
    list.sort((a, b) => a.scheduledUs - b.scheduledUs);
    stamps.sort((a, b) => a.recv - b.recv);
    for (let k = 0; k < list.length; k++) {
      const serverNs = stamps[k]!.send - stamps[k]!.recv;
      latency.push(list[k]!.latencyNs);
      server.push(serverNs);
      client.push(list[k]!.latencyNs - serverNs);
    }
  }
  return {
    samples: samples.length,
    matched: client.length,
    latencyNs: percentilesOf(Float64Array.from(latency)),
    serverNs: percentilesOf(Float64Array.from(server)),
    clientNs: percentilesOf(Float64Array.from(client)),
  };
}

function resultPercentiles(r: TestResult): Percentiles {
  return { p50: r.percentilesNs[50], p99: r.percentilesNs[99], p999: r.percentilesNs[99.9] };
}


function failedRequests(stats: NetworkStats): number {
  return stats.nodes.reduce((sum, node) => sum + Object.values(node.failed).reduce((a, b) => a + b, 0), 0);
}

export async function netServer(spec: Extract<TrialSpec, { kind: 'net-server' }>): Promise<NetServerTrial> {
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-net-trial-'));
  const protocol = new StampProtocol();
  const sut = await createNetworkSut(protocol, { urls: [spec.url], connections: spec.connections, requestTimeoutMs: 30_000 });
  try {
    if (spec.warmupMs > 0) {
      // Warm-up (JIT, connections) in a run of its own, not measured: its records are dropped.
      const warmDir = mkdtempSync(join(tmpdir(), 'loadgen-net-warmup-'));
      try {
        await startTest(sut, sut.qsl, {
          dispatch: spec.dispatch,
          scenario: 'Server',
          serverTargetQps: Math.min(spec.targetQps, 5000),
          minDurationMs: spec.warmupMs,
          minQueryCount: 1,
        }, { outdir: warmDir });
      } finally {
        rmSync(warmDir, { recursive: true, force: true });
      }
      protocol.records.count = 0;
    }
    const failedBefore = failedRequests(sut.stats());
    const r = await startTest(sut, sut.qsl, {
      dispatch: spec.dispatch,
      scenario: 'Server',
      serverTargetQps: spec.targetQps,
      serverTargetLatencyNs: spec.targetLatencyNs,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir, enableTrace: spec.clientShare });
    return {
      valid: r.valid,
      achievedQps: r.completedSamplesPerSecond ?? 0,
      latencyNs: resultPercentiles(r),
      failed: failedRequests(sut.stats()) - failedBefore,
      ...(spec.clientShare ? { share: clientShare(readTrace(join(outdir, 'mlperf_log_trace.json')), protocol.records) } : {}),
    };
  } finally {
    await sut.close();
    rmSync(outdir, { recursive: true, force: true });
  }
}

export async function netTokens(spec: Extract<TrialSpec, { kind: 'net-tokens' }>): Promise<NetTokensTrial> {
  const outdir = mkdtempSync(join(tmpdir(), 'loadgen-net-trial-'));
  const dataset = join(outdir, 'prompts.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < 64; i++) lines.push(JSON.stringify({ prompt: `bench prompt ${i}`, max_tokens: spec.outputTokens }));
  writeFileSync(dataset, `${lines.join('\n')}\n`);
  const sut = await createOpenAiSut({ urls: [spec.url], model: 'stub', dataset, maxTokens: spec.outputTokens });
  try {
    const r = await startTest(sut, sut.qsl, {
      scenario: 'Server',
      serverTargetQps: spec.targetQps,
      useTokenLatencies: true,
      minDurationMs: spec.durationMs,
      minQueryCount: 1,
    }, { outdir });
    const ttft = r.tokens?.ttftNs?.percentiles;
    const tpot = r.tokens?.tpotNs?.percentiles;
    if (!ttft || !tpot) throw new Error('the run reported no TTFT/TPOT');
    return {
      valid: r.valid,
      ttftNs: { p50: ttft[50], p99: ttft[99], p999: ttft[99.9] },
      tpotNs: { p50: tpot[50], p99: tpot[99], p999: tpot[99.9] },
    };
  } finally {
    await sut.close();
    rmSync(outdir, { recursive: true, force: true });
  }
}
