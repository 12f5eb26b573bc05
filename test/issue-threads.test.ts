import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import { createSyntheticQsl, querySamplesComplete, startTest, type QuerySample } from '../lib/index.js';
import { repoRoot, tempDir } from './helpers.js';

interface TraceEvent {
  name: string;
  ph: string;
  id?: number;
  ts?: number;
  args?: Record<string, number>;
}

function readTrace(outdir: string): { traceEvents: TraceEvent[]; displayTimeUnit: string; otherData: { ts: number; version: string } } {
  return JSON.parse(readFileSync(join(outdir, 'mlperf_log_trace.json'), 'utf8'));
}

function detailLines(outdir: string, pattern: RegExp): string[] {
  return readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')
    .split('\n')
    .filter((line) => pattern.test(line));
}

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* a slow SUT holding the JS thread */
  }
}

describe('server_coalesce_queries', () => {
  it('merges the backlog of a slow JS SUT into one issueQuery call; every sample keeps its own latency', async () => {
    const outdir = tempDir();
    const calls: QuerySample[][] = [];
    const sut = {
      name: 'slow',
      issueQuery(samples: QuerySample[]) {
        calls.push(samples);
        busyWait(2);
        querySamplesComplete(samples);
      },
    };
    const result = await startTest(
      sut,
      createSyntheticQsl(256),
      { scenario: 'Server', serverTargetQps: 5000, minDurationMs: 300, minQueryCount: 500, serverCoalesceQueries: true,
        serverTargetLatencyNs: 1_000_000_000 },
      { outdir, enableTrace: true },
    );
    const ids = calls.flat().map((s) => s.id);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    expect(ids.length).toBe(result.counts.issuedSamples);
    expect(new Set(ids).size).toBe(ids.length);
    // Coalesced: far fewer calls than queries, some with many samples.
    expect(calls.length).toBeLessThan(ids.length / 3);
    expect(Math.max(...calls.map((c) => c.length))).toBeGreaterThan(3);
    expect(result.valid).toBe(true);

    // Samples of one call completed together but keep their own scheduled times.
    const trace = readTrace(outdir);
    const begins = new Map<number, TraceEvent>();
    const ends = new Map<number, TraceEvent>();
    for (const e of trace.traceEvents) {
      if (e.name === 'Sample' && e.ph === 'b') begins.set(e.id!, e);
      if (e.name === 'Sample' && e.ph === 'e') ends.set(e.id!, e);
    }
    const big = calls.find((c) => c.length > 3)!;
    // Sample seq = id - the series' first id (its first sample has seq 0); ids continue across runs.
    const firstId = Math.min(...ids);
    const seqs = big.map((s) => s.id - firstId);
    const completes = seqs.map((k) => begins.get(k)!.args!.complete_ns!);
    const scheduled = seqs.map((k) => begins.get(k)!.ts!);
    const endTs = seqs.map((k) => ends.get(k)!.ts!);
    expect(new Set(endTs).size).toBe(1);
    expect(new Set(completes).size).toBe(big.length);
    for (let i = 1; i < seqs.length; i++) expect(scheduled[i]!).toBeGreaterThanOrEqual(scheduled[i - 1]!);
    expect(completes[0]!).toBeGreaterThan(completes[completes.length - 1]!);
  });
});

describe('mlperf_log_trace.json', () => {
  it('is valid JSON with one Sample begin/end pair per issued sample when tracing is on', async () => {
    const outdir = tempDir();
    const result = await startTest(
      {
        name: 'immediate',
        issueQuery: (samples) => {
          setImmediate(() => querySamplesComplete(samples));
        },
      },
      createSyntheticQsl(64),
      { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 200, minQueryCount: 200 },
      { outdir, enableTrace: true },
    );
    const trace = readTrace(outdir);
    expect(trace.displayTimeUnit).toBe('ns');
    expect(trace.otherData.version).toBe('MLPerf LoadGen v1.0');
    expect(trace.otherData.ts).toBeGreaterThan(1.5e15);  // µs since the epoch
    expect(trace.traceEvents.at(-1)).toEqual({ name: 'LastTrace' });
    const begins = trace.traceEvents.filter((e) => e.name === 'Sample' && e.ph === 'b');
    const ends = new Map(trace.traceEvents.filter((e) => e.name === 'Sample' && e.ph === 'e').map((e) => [e.id, e]));
    const counters = trace.traceEvents.filter((e) => e.name === 'Latency' && e.ph === 'C');
    expect(begins.length).toBe(result.counts.issuedSamples);
    expect(ends.size).toBe(result.counts.issuedSamples);
    expect(counters.length).toBe(result.counts.issuedSamples);
    expect(new Set(begins.map((e) => e.id)).size).toBe(begins.length);
    for (const b of begins) {
      const e = ends.get(b.id)!;
      const a = b.args!;
      expect(a.sample_seq).toBe(b.id);
      expect(a.issue_start_ns).toBeGreaterThanOrEqual(0);
      expect(a.complete_ns).toBeGreaterThanOrEqual(a.issue_start_ns!);
      // end - begin (µs, 3 decimals) is the latency complete_ns.
      expect(Math.abs((e.ts! - b.ts!) * 1000 - a.complete_ns!)).toBeLessThan(2);
    }
    expect(trace.traceEvents.some((e) => e.name === 'GenerateQueries' && e.ph === 'X')).toBe(true);
  });

  it('exists and is empty when tracing is off', async () => {
    const outdir = tempDir();
    await startTest(
      { name: 'immediate', issueQuery: (samples) => querySamplesComplete(samples) },
      createSyntheticQsl(64),
      { scenario: 'Offline', minDurationMs: 10, minQueryCount: 1 },
      { outdir },
    );
    const path = join(outdir, 'mlperf_log_trace.json');
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).size).toBe(0);
  });
});

describe('print_timestamps', () => {
  it('prints the reference lines around the performance run', () => {
    const outdir = tempDir();
    const out = execFileSync(process.execPath, [join(repoRoot, 'test', 'fixtures', 'print-timestamps.mjs'), outdir], {
      encoding: 'utf8',
    });
    const lines = out.split('\n');
    const start = lines.findIndex((l) => /^Loadgen :: Perf mode start\. system_clock Timestamp = \d+$/.test(l));
    expect(start).toBeGreaterThanOrEqual(0);
    expect(lines[start + 1]).toMatch(/^Loadgen :: Perf mode stop\. systme_clock Timestamp = \d+$/);
    const pc = /^Loadgen :: PerfClock Perf duration = (\d+)ms$/.exec(lines[start + 2]!);
    const sc = /^Loadgen :: system_clock Perf duration = (\d+)ms$/.exec(lines[start + 3]!);
    expect(pc && sc).toBeTruthy();
    expect(Number(pc![1])).toBeGreaterThanOrEqual(150);
    expect(lines[start + 4]).toMatch(/^Loadgen :: PerfClock\/system_clock ratio = \d+\.\d{4}$/);
    const ratio = Number(pc![1]) / Number(sc![1]);
    const clockMessages = detailLines(outdir, /PerfClock and system_clock differ/);
    // The check of spec/60 §1.2 fires only when the clocks disagree.
    expect(clockMessages.length).toBe(Math.abs(ratio - 1) > 0.001 ? 1 : 0);
    expect(out).toContain('RESULT VALID');
  });
});

describe('server_num_issue_query_threads', () => {
  it('delivers query i to registered worker i mod n on its own thread; all complete; VALID', async () => {
    const outdir = tempDir();
    const workers = [0, 1].map(() => new Worker(join(repoRoot, 'test', 'fixtures', 'issue-thread-worker.mjs')));
    type Message = { kind: string; index?: number; threadId: number; received?: number[]; calls?: number };
    const reports = workers.map(
      (w) =>
        new Promise<Message[]>((resolve, reject) => {
          const all: Message[] = [];
          w.on('message', (m: Message) => {
            all.push(m);
            if (m.kind === 'released') resolve(all);
          });
          w.once('error', reject);
        }),
    );
    const mainSut = { name: 'main', issueQuery: () => { throw new Error('the main thread got a query'); } };
    const result = await startTest(
      mainSut,
      createSyntheticQsl(64),
      { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 300, minQueryCount: 300, serverNumIssueQueryThreads: 2 },
      { outdir },
    );
    const messages = await Promise.all(reports);
    await Promise.all(workers.map((w) => w.terminate()));
    expect(result.validity).toBe('VALID');
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    let total = 0;
    // The series' first id (ids continue across the runs of a process).
    const firstId = Math.min(...messages.flatMap((all) => all.find((m) => m.kind === 'released')!.received!));
    for (const all of messages) {
      const registered = all.find((m) => m.kind === 'registered')!;
      const released = all.find((m) => m.kind === 'released')!;
      const i = registered.index!;
      expect(released.received!.length).toBeGreaterThan(0);
      // Sample id = first id + query, and query q goes to thread q % 2.
      for (const id of released.received!) expect((id - firstId) % 2).toBe(i);
      total += released.received!.length;
    }
    expect(total).toBe(result.counts.issuedSamples);
    const registeredLines = detailLines(outdir, /Registered IssueQueryThread\[\d\]\. thread ID : \d+/);
    expect(registeredLines.length).toBe(2);
    expect(detailLines(outdir, /Mismatch between settings/).length).toBe(0);
  });

  it('logs the mismatch after the wait and proceeds with the registered threads', () => {
    const outdir = tempDir();
    const out = execFileSync(process.execPath, [join(repoRoot, 'test', 'fixtures', 'issue-thread-mismatch.mjs'), outdir], {
      encoding: 'utf8',
      env: { ...process.env, LOADGEN_ISSUE_THREAD_WAIT_MS: '500' },
    });
    const report = JSON.parse(out.trim().split('\n').at(-1)!) as {
      elapsedMs: number; seen: number; issued: number; completed: number; messages: { text: string; isError: boolean }[];
    };
    expect(report.elapsedMs).toBeGreaterThanOrEqual(500);
    expect(report.seen).toBe(report.issued);
    expect(report.completed).toBe(report.issued);
    expect(report.messages.map((m) => m.text)).toContain(
      'Mismatch between settings and number of registered IssueQueryThreads! settings.server_num_issue_query_threads = 2 but 1 threads registered.',
    );
    expect(detailLines(outdir, /"key": "error_runtime".*Mismatch between settings/).length).toBe(1);
    expect(detailLines(outdir, /Registered IssueQueryThread\[0\]\. thread ID : 0/).length).toBe(1);
  });
});
