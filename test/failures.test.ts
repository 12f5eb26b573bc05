// Failed samples (querySampleFailed): completed like any other sample,
// counted by kind, one detail-log error line each, the run INVALID with the
// counts, left out of the statistics; and the optional stamps of
// querySampleComplete / firstTokenComplete (clockNs readings).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import {
  clockNs,
  createSyntheticQsl,
  FAILURE_KINDS,
  firstTokenComplete,
  querySampleComplete,
  querySampleFailed,
  startTest,
  type FailureKind,
  type QuerySample,
  type SystemUnderTest,
  type TestSettingsInput,
} from '../lib/index.js';
import { readText, repoRoot, tempDir } from './helpers.js';
import { startTestServer } from './net-helpers.js';

const MS = 1_000_000;
const fixture = (name: string): string => join(dirname(fileURLToPath(import.meta.url)), 'fixtures', name);

const SCENARIOS: Record<'SingleStream' | 'MultiStream' | 'Server' | 'Offline', TestSettingsInput> = {
  SingleStream: { scenario: 'SingleStream', singleStreamExpectedLatencyNs: 1000, minDurationMs: 0, minQueryCount: 100 },
  MultiStream: { scenario: 'MultiStream', multiStreamExpectedLatencyNs: 1000, minDurationMs: 0, minQueryCount: 100 },
  Server: { scenario: 'Server', serverTargetQps: 5000, minDurationMs: 0, minQueryCount: 500 },
  Offline: { scenario: 'Offline', minDurationMs: 0, minQueryCount: 500 },
};

/**
 * Fails every `every`-th sample it receives with the kinds in turn (the
 * message names the node and the kind, as a network SUT's does); completes
 * the others. `later`: answer from a timer, as a socket would.
 */
function failingSut(every: number, later = false): SystemUnderTest & { failed: Map<FailureKind, number> } {
  const failed = new Map<FailureKind, number>();
  let n = 0;
  const answer = (s: QuerySample): void => {
    if (n++ % every === 0) {
      const kind = FAILURE_KINDS[failed.size === 0 ? 0 : [...failed.values()].reduce((a, b) => a + b) % FAILURE_KINDS.length]!;
      failed.set(kind, (failed.get(kind) ?? 0) + 1);
      querySampleFailed(s.id, kind, `node http://127.0.0.1:9: ${kind}\nnot a log line`);
    } else {
      querySampleComplete(s.id);
    }
  };
  return {
    name: 'failing-sut',
    failed,
    issueQuery(samples) {
      if (later) setTimeout(() => samples.forEach(answer), 0);
      else samples.forEach(answer);
    },
  };
}

function detailEntries(path: string): { key: string; value: unknown; metadata?: { is_error?: boolean } }[] {
  return readText(path)
    .split('\n')
    .filter((l) => l.startsWith(':::MLLOG '))
    .map((l) => JSON.parse(l.slice(9)) as { key: string; value: unknown; metadata?: { is_error?: boolean } });
}

function expectedReason(failed: Map<FailureKind, number>): string {
  const total = [...failed.values()].reduce((a, b) => a + b, 0);
  const parts = FAILURE_KINDS.filter((k) => (failed.get(k) ?? 0) > 0).map((k) => `${k} ${failed.get(k)}`);
  // A sentence, as every reason is (never run into the next one).
  return `${total} ${total === 1 ? 'sample' : 'samples'} failed (${parts.join(', ')}).`;
}

describe('querySampleFailed', () => {
  it.each(Object.keys(SCENARIOS))('%s: counted by kind, an error line each, INVALID with the reason, nothing hangs', async (scenario) => {
    const sut = failingSut(7, scenario === 'SingleStream');
    const result = await startTest(sut, createSyntheticQsl(256), SCENARIOS[scenario as keyof typeof SCENARIOS], { outdir: tempDir() });
    const total = [...sut.failed.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(0);
    expect(result.counts.incompleteSamples).toBe(0);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    expect(result.errors.failedSamples.total).toBe(total);
    for (const kind of FAILURE_KINDS) expect(result.errors.failedSamples.byKind[kind]).toBe(sut.failed.get(kind) ?? 0);
    expect(result.validity).toBe('INVALID');
    const reason = expectedReason(sut.failed);
    expect(result.invalidReasons).toContain(reason);
    expect(result.summaryText).toContain(`Recommendations:\n * ${reason}\n`);
    // The summary's error count is the failure lines.
    expect(result.errors.count).toBe(total);
    expect(result.summaryText).toContain(`${total} ERRORS encountered. See detailed log.`);
    const lines = detailEntries(result.files.detail!).filter((e) => typeof e.value === 'string' && e.value.startsWith('Sample failed ('));
    expect(lines).toHaveLength(total);
    expect(lines.every((e) => e.key === 'error_runtime' && e.metadata?.is_error === true)).toBe(true);
    expect(lines[0]!.value).toBe('Sample failed (http_status): node http://127.0.0.1:9: http_status\\nnot a log line');
    const invalidReason = detailEntries(result.files.detail!).find((e) => e.key === 'result_invalid_reason');
    expect(String(invalidReason?.value)).toContain(reason);
    // The statistics are the successful samples' (the report's charts too).
    if (scenario !== 'MultiStream') expect(result.latencyNs.max).toBeGreaterThan(0);
    const data = JSON.parse(readText(join(dirname(result.files.summary!), 'loadgen_report_data.json'))) as { series: { completed_samples: number } };
    expect(data.series.completed_samples).toBe(result.counts.issuedSamples - total);
  });

  it('AccuracyOnly: a failed sample makes the accuracy run INVALID and writes no accuracy record', async () => {
    const sut = failingSut(16);
    const result = await startTest(sut, createSyntheticQsl(64), { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() });
    expect(result.errors.failedSamples.total).toBe(4);
    expect(result.validity).toBe('INVALID');
    expect(result.invalidReasons).toEqual([expectedReason(sut.failed)]);
    expect(result.accuracyLogRecords).toBe(60);  // the completed ones; a failed sample writes none
  });

  it('a failed sample is not also a token error and is left out of TTFT/TPOT', async () => {
    let n = 0;
    const sut: SystemUnderTest = {
      name: 'llm-failing',
      issueQuery(samples) {
        for (const s of samples) {
          const i = n++;
          setTimeout(() => {
            if (i % 4 === 0) return querySampleFailed(s.id, 'http_status', 'node a: HTTP 503');
            firstTokenComplete(s.id);
            querySampleComplete(s.id, undefined, 4);
          }, 0);
        }
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64),
      { scenario: 'SingleStream', useTokenLatencies: true, singleStreamExpectedLatencyNs: MS, minDurationMs: 0, minQueryCount: 40 },
      { outdir: tempDir() });
    expect(result.errors.failedSamples.byKind.http_status).toBe(10);
    expect(result.tokens!.errors.missingFirstToken).toBe(0);
    expect(result.tokens!.errors.zeroTokens).toBe(0);
    expect(result.tokens!.tokenCount).toBe(30 * 4);
    expect(result.tokens!.ttftNs!.min).toBeGreaterThan(0);
    expect(result.errors.count).toBe(10);
  });

  it('bad, stale and duplicate ids are counted as for completions, with no failure', async () => {
    let first: number | undefined;
    const sut: SystemUnderTest = {
      name: 'bad-ids',
      issueQuery(samples) {
        for (const s of samples) {
          first ??= s.id;
          querySampleComplete(s.id);
        }
        querySampleFailed(samples[0]!.id, 'timeout', 'after its completion');
        querySampleFailed(0.5, 'timeout', 'not an id');
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64), SCENARIOS.Offline, { outdir: tempDir() });
    expect(result.errors.duplicateIds).toBe(1);
    expect(result.errors.invalidIds).toBe(1);
    expect(result.errors.failedSamples.total).toBe(0);
    // An id of the run before: stale.
    const again = await startTest({ name: 'stale', issueQuery(samples) { querySampleFailed(first!, 'timeout', 'late'); samples.forEach((s) => querySampleComplete(s.id)); } },
      createSyntheticQsl(64), SCENARIOS.Offline, { outdir: tempDir() });
    expect(again.errors.staleIds).toBe(1);
    expect(again.errors.failedSamples.total).toBe(0);
    expect(again.validity).toBe('VALID');
  });

  it('bad arguments are a TypeError before anything completes', async () => {
    const errors: unknown[] = [];
    const sut: SystemUnderTest = {
      name: 'bad-args',
      issueQuery(samples) {
        const id = samples[0]!.id;
        for (const call of [
          () => querySampleFailed(String(id) as unknown as number, 'timeout', 'x'),
          () => querySampleFailed(id, 'gone' as FailureKind, 'x'),
          () => querySampleFailed(id, 'timeout', 42 as unknown as string),
          () => querySampleFailed(id, 'timeout', 'x', '1' as unknown as number),
          () => querySampleComplete(id, undefined, undefined, 'now' as unknown as number),
          () => firstTokenComplete(id, undefined, {} as unknown as number),
        ]) {
          try {
            call();
          } catch (error) {
            errors.push(error);
          }
        }
        samples.forEach((s) => querySampleComplete(s.id));
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64), SCENARIOS.Offline, { outdir: tempDir() });
    expect(errors).toHaveLength(6);
    expect(errors.every((e) => e instanceof TypeError)).toBe(true);
    expect(String((errors[1] as Error).message)).toContain("kind must be one of 'http_status', 'connection', 'malformed_response', 'timeout', 'cancelled', 'no_first_token', got 'gone'");
    expect(result.errors.failedSamples.total).toBe(0);
    expect(result.errors.duplicateIds).toBe(0);
    expect(result.validity).toBe('VALID');
  });

  it("dispatch 'worker': failures reported from the worker threads", async () => {
    const result = await startTest(
      { name: 'failing-workers' },
      createSyntheticQsl(256),
      { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 0, minQueryCount: 300, dispatch: 'worker', dispatchWorkers: 2 },
      { outdir: tempDir() },
      { sutModule: fixture('failing-sut-module.mjs') },
    );
    expect(result.counts.incompleteSamples).toBe(0);
    expect(result.errors.failedSamples.byKind.timeout).toBeGreaterThan(0);
    expect(result.errors.failedSamples.total).toBe(result.errors.failedSamples.byKind.timeout);
    expect(result.validity).toBe('INVALID');
    expect(result.invalidReasons).toContain(`${result.errors.failedSamples.total} samples failed (timeout ${result.errors.failedSamples.total}).`);
  });
});

describe('completion stamps (clockNs)', () => {
  it('a stamp in the past is used; one before the series or in the future counts as now', async () => {
    let n = 0;
    const sut: SystemUnderTest = {
      name: 'stamped',
      issueQuery(samples) {
        const s = samples[0]!;
        const received = clockNs();
        const i = n++;
        setTimeout(() => {
          if (i % 3 === 0) {
            // Read when "the bytes arrived", completed 5 ms later: the latency is the stamp's.
            firstTokenComplete(s.id, undefined, received);
            querySampleComplete(s.id, undefined, 3, received + 1000);
          } else if (i % 3 === 1) {
            firstTokenComplete(s.id, undefined, 1);  // before the series: now
            querySampleComplete(s.id, undefined, 3, 1);
          } else {
            firstTokenComplete(s.id, undefined, clockNs() + 3600e9);  // the future: now
            querySampleComplete(s.id, undefined, 3, clockNs() + 3600e9);
          }
        }, 5);
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64),
      { scenario: 'SingleStream', useTokenLatencies: true, singleStreamExpectedLatencyNs: 5 * MS, minDurationMs: 0, minQueryCount: 30 },
      { outdir: tempDir() });
    expect(result.errors.count).toBe(0);
    const t = result.tokens!;
    // A third were stamped at issue (well under the 5 ms timer); the others at least ~4 ms later.
    expect(t.ttftNs!.min).toBeLessThan(3 * MS);
    expect(t.ttftNs!.max).toBeGreaterThanOrEqual(4 * MS);
    expect(result.latencyNs.min).toBeLessThan(3 * MS);
    expect(result.latencyNs.max).toBeGreaterThanOrEqual(4 * MS);
    // The clamped ones are neither negative nor an hour long.
    expect(result.latencyNs.max).toBeLessThan(3600e9);
    expect(t.tpotNs!.min).toBeGreaterThanOrEqual(0);
  });

  it('a stamp from before the query was issued counts as now: no latency, TTFT or TPOT below zero', async () => {
    let first: number | undefined;
    let k = 0;
    const sut: SystemUnderTest = {
      name: 'old-stamps',
      issueQuery(samples) {
        for (const s of samples) {
          const i = k++;
          first ??= clockNs();  // the first query's time: older than every later query
          if (i % 2 === 0) {
            firstTokenComplete(s.id, undefined, first);
            querySampleComplete(s.id, undefined, 3, first);
          } else {
            // The completion stamped before its first token.
            const before = clockNs();
            setTimeout(() => {
              firstTokenComplete(s.id);
              querySampleComplete(s.id, undefined, 3, before);
            }, 1);
          }
        }
      },
    };
    const result = await startTest(sut, createSyntheticQsl(64),
      { scenario: 'SingleStream', useTokenLatencies: true, singleStreamExpectedLatencyNs: MS, minDurationMs: 0, minQueryCount: 30 },
      { outdir: tempDir() });
    expect(result.errors.failedSamples.total).toBe(0);
    expect(result.latencyNs.min).toBeGreaterThanOrEqual(0);
    expect(result.tokens!.ttftNs!.min).toBeGreaterThanOrEqual(0);
    expect(result.tokens!.tpotNs!.min).toBeGreaterThanOrEqual(0);
    expect(result.tokens!.ttftNs!.max).toBeLessThanOrEqual(result.latencyNs.max);
    expect(result.summaryText).not.toMatch(/: -\d/);
  });

  it('clockNs is the core clock in ns', () => {
    const a = clockNs();
    const b = clockNs();
    expect(Number.isSafeInteger(a)).toBe(true);
    expect(b).toBeGreaterThanOrEqual(a);
  });
});

describe('a run where every request fails', () => {
  // The issue's reproduction: the CLI's OpenAI SUT against a server that
  // lists model `m` and answers 500 to everything else. Before: 1.7e19
  // "completed samples per second" (and in --json), "-nan"/"inf" in the
  // detail log, "Performance constraints satisfied : Yes", "Min queries
  // satisfied : NO" beside every query issued, "...were issued.50 samples failed".
  it.each(['Offline', 'Server', 'SingleStream'] as const)('%s: the CLI prints zero rates, no false "Yes", JSON logs and separate sentences', async (scenario) => {
    const server = await startTestServer((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
        return;
      }
      res.statusCode = 500;
      res.end('internal error');
    });
    const dir = tempDir();
    const dataset = join(dir, 'ds.jsonl');
    writeFileSync(dataset, '{"prompt": "a b c", "max_tokens": 4}\n');
    try {
      const args = ['run', '--sut', 'openai', '--url', server.url, '--model', 'm', '--dataset', dataset, '--scenario', scenario,
        '--set', 'min_duration_ms=0', '--set', 'min_query_count=40', '--set', 'server_target_qps=2000', '--outdir', dir, '--json'];
      const { status, stdout } = await new Promise<{ status: number | null; stdout: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], { cwd: dir, env: { ...process.env, OPENAI_API_KEY: '' } });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.resume();
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ status: code, stdout: out });
        });
      });
      expect(status).toBe(1);  // INVALID
      const result = JSON.parse(stdout) as {
        metric: { value: number }; valid: boolean; invalidReasons: string[]; summaryText: string;
        checks: { minQueriesMet: boolean; perfConstraintsMet: boolean }; counts: { issuedSamples: number };
        errors: { failedSamples: { total: number } };
      };
      const n = result.counts.issuedSamples;
      expect(n).toBeGreaterThan(0);
      expect(result.errors.failedSamples.total).toBe(n);
      expect(result.metric.value).toBe(0);
      expect(result.valid).toBe(false);
      expect(result.checks.minQueriesMet).toBe(true);
      expect(result.invalidReasons).toContain(`${n} samples failed (http_status ${n}).`);
      for (const reason of result.invalidReasons) expect(reason).toMatch(/[.!?]$/);
      const summary = result.summaryText;
      expect(summary).not.toMatch(/(^|[^A-Za-z])-?(inf|nan)([^A-Za-z]|$)/im);
      expect(summary).not.toContain('satisfied : Yes\n  Min duration');  // Server's performance constraints
      expect(summary).toContain('  Min queries satisfied : Yes\n');
      for (const line of summary.split('\n')) {
        const value = /:\s*(-?[0-9][0-9.e+-]*)\s*$/.exec(line)?.[1];
        if (value !== undefined) expect(Number(value), line).toBeGreaterThanOrEqual(0);
        if (/per second|QPS/.test(line) && value !== undefined) expect(Number(value), line).toBe(0);
      }
      for (const line of readFileSync(join(dir, 'mlperf_log_detail.txt'), 'utf8').split('\n')) {
        if (line === '') continue;
        const entry = JSON.parse(line.slice(':::MLLOG '.length)) as { key: string; value: unknown };
        if (entry.key === 'result_invalid_reason') expect(entry.value as string).not.toMatch(/[a-z)][.!?][A-Za-z0-9]/);
        if (/^result_.*(per_sec|qps|tokens_per_second|throughput)/.test(entry.key)) expect(entry.value).toBe(0);
      }
    } finally {
      await server.close();
    }
  }, 40_000);
});
