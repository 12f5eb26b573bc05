import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { traceDifference } from '../lib/conformance/check-traces.js';
import { firstDifference } from '../lib/conformance/compare.js';
import { jsonChunks, nativeSettingsFromReference, writeTrace, traceInputFromCase } from '../lib/cli/trace.js';
import { goldenDir, hasGolden, repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');

function loadgen(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function golden(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(goldenDir, 'query_traces', name), 'utf8')) as Record<string, unknown>;
}

/** `--set` assignments that reproduce a golden `settings` object. */
function assignmentsOf(settings: Record<string, unknown>): string[] {
  return Object.entries(settings).map(([k, v]) => `${k}=${String(v)}`);
}

describe('jsonChunks', () => {
  it('lays out like the golden files: one-space indent, scalar arrays inline, bigint as decimal strings', () => {
    const text = [...jsonChunks({ a: 1, seed: 18446744073709551615n, xs: Uint32Array.of(3, 1, 4), o: { e: [] } })].join('');
    expect(text).toBe('{\n "a": 1,\n "seed": "18446744073709551615",\n "xs": [3,1,4],\n "o": {\n  "e": []\n }\n}');
  });

  it('yields a long array in bounded chunks', () => {
    const big = new Uint32Array(200_000).map((_, i) => i);
    const chunks = [...jsonChunks(big)];
    expect(chunks.length).toBeGreaterThan(5);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan(200_000);
    expect(JSON.parse(chunks.join(''))).toHaveLength(200_000);
  });
});

describe('nativeSettingsFromReference', () => {
  it('maps enum names to their integer values, seeds and > 2^53 integers to bigint, and fills defaults', () => {
    const s = nativeSettingsFromReference({
      scenario: 'Server',
      mode: 'AccuracyOnly',
      qsl_rng_seed: '16159082839903944936',
      max_query_count: '18446744073709551615',
      min_query_count: 7,
    });
    expect(s.scenario).toBe(2);
    expect(s.mode).toBe(1);
    expect(s.qsl_rng_seed).toBe(16159082839903944936n);
    expect(s.max_query_count).toBe(18446744073709551615n);
    expect(s.min_query_count).toBe(7);
    expect(s.issue_thread_cpu).toBe(-1);
    expect(s.completion_timeout_ms).toBe(60000);
    expect(s.server_target_qps).toBe(1);
  });

  it('rejects unknown keys and bad enum names', () => {
    expect(() => nativeSettingsFromReference({ bogus: 1 })).toThrow(/Unknown test setting 'bogus'/);
    expect(() => nativeSettingsFromReference({ scenario: 'Nope' })).toThrow(/SingleStream, MultiStream, Server, Offline/);
  });
});

describe.skipIf(!hasGolden)('loadgen trace against the golden query traces', () => {
  it('--case server_qps1.json prints exactly the file’s phases and effective settings', () => {
    const g = golden('server_qps1.json');
    const r = loadgen(['trace', '--case', join(goldenDir, 'query_traces', 'server_qps1.json')]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out.phases).toEqual(g.phases);
    expect(out.effective).toEqual(g.effective);
    expect(out.qsl).toEqual(g.qsl);
    expect(out.settings).toEqual(g.settings);
    expect(out.logged_errors).toBeUndefined();
  });

  it.each(['ss_submission_run.json', 'ms_accuracy_spq13.json', 'ss_test05.json', 'offline_equal_issue.json', 'server_accuracy.json'])(
    '--case %s equals the file’s phases',
    (name) => {
      const g = golden(name);
      const r = loadgen(['trace', '--case', join(goldenDir, 'query_traces', name)]);
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(out.phases).toEqual(g.phases);
      expect(out.effective).toEqual(g.effective);
    },
  );

  it('a 1.36M-sample trace is complete and matches the truncated golden sequences (length, head, tail, SHA-256)', () => {
    const g = golden('offline_qps123456.json');
    const r = loadgen(['trace', '--case', join(goldenDir, 'query_traces', 'offline_qps123456.json')]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { phases: { load_calls: { queries: { sample_indices: number[] } }[] }[] };
    expect(out.phases[0]!.load_calls[0]!.queries.sample_indices).toHaveLength(1358016);
    expect(traceDifference(g, out as never)).toBeUndefined();
  });

  it('streams: no single write holds the whole trace', async () => {
    const g = golden('offline_qps123456.json');
    const writes: number[] = [];
    const sink = new Writable({
      highWaterMark: 1 << 16,
      write(chunk: Buffer, _enc, done) {
        writes.push(chunk.length);
        setImmediate(done);
      },
    });
    await writeTrace(traceInputFromCase(g), sink);
    const total = writes.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(6_000_000);
    expect(Math.max(...writes)).toBeLessThan(1 << 20);
  });

  it('--set assignments reproduce a golden trace', () => {
    const g = golden('server_qps1.json');
    const q = g.qsl as { total_sample_count: number; performance_sample_count: number };
    const args = ['trace', '--qsl-total', String(q.total_sample_count), '--qsl-performance', String(q.performance_sample_count)];
    for (const a of assignmentsOf(g.settings as Record<string, unknown>)) args.push('--set', a);
    const r = loadgen(args);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as { phases: unknown }).phases).toEqual(g.phases);
  });

  it('--output writes the same JSON to a file', () => {
    const file = join(tempDir(), 'trace.json');
    const r = loadgen(['trace', '--case', join(goldenDir, 'query_traces', 'ms_perf_spq13.json'), '--output', file]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    const out = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(firstDifference(golden('ms_perf_spq13.json').phases, out.phases)).toBeUndefined();
  });
});

describe('loadgen trace input errors', () => {
  it('--set with scenario options prints a trace without any QSL file', () => {
    const r = loadgen(['trace', '--scenario', 'SingleStream', '--set', 'min_duration_ms=0', '--set', 'min_query_count=5',
      '--qsl-total', '20', '--qsl-performance', '10']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { generator: string; phases: { load_calls: { loaded: number[]; queries: { generated_query_count: number } }[] }[] };
    expect(out.generator).toMatch(/^loadgen \d/);
    expect(out.phases[0]!.load_calls[0]!.loaded).toHaveLength(10);
    expect(out.phases[0]!.load_calls[0]!.queries.generated_query_count).toBe(5);
  });

  it('exits 2 on a bad --set, a missing case file, or --case mixed with --set', () => {
    expect(loadgen(['trace', '--set', 'bogus=1']).status).toBe(2);
    const missing = loadgen(['trace', '--case', join(tempDir(), 'nope.json')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the case file/);
    const mixed = loadgen(['trace', '--case', 'x.json', '--set', 'min_query_count=1']);
    expect(mixed.status).toBe(2);
    expect(mixed.stderr).toMatch(/do not combine it with --set/);
  });
});
