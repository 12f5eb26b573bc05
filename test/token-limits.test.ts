/**
 * Token constraints: the checker's TTFT/TPOT table, the Interactive variants
 * of the built-in mlperf.conf applied end to end against `loadgen serve`'s
 * OpenAI stub, goodput (exact, from completions with known stamps), the
 * summary's token-limits block (after the reference's lines) and
 * `loadgen check`'s reading of the checker's keys.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  checkRunLog,
  firstTokenComplete,
  LLM_LATENCY_LIMITS,
  limitsFor,
  loadSettings,
  querySampleComplete,
  querySampleFailed,
  startTest,
  type QuerySample,
  type SystemUnderTest,
  type TestResult,
} from '../lib/index.js';
import { startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { type CliRun, recordingQsl, referencePart, repoRoot, runCli, tempDir } from './helpers.js';

const MS = 1_000_000;
/** The models the built-in mlperf.conf names (native/mlperf_conf.cc). */
const kBuiltinModels = [...new Set([...readFileSync(join(repoRoot, 'native', 'mlperf_conf.cc'), 'utf8').matchAll(/^([A-Za-z0-9_.-]+)\.[A-Za-z*]+\.[a-z_]+ = /gm)].map((m) => m[1]!))];

function loadgen(args: string[]): Promise<CliRun> {
  return runCli(args, { timeoutMs: 90_000 });
}

describe("the submission checker's TTFT/TPOT table", () => {
  it.each([
    ['llama3_1-8b', 'Server', 'llama3.1-8b', 2000, 100],
    ['llama3_1-8b-interactive', 'Interactive', 'llama3.1-8b', 500, 30],
    ['llama2-70b', 'Server', 'llama2-70b-99', 2000, 200],
    ['llama2-70b-interactive', 'Interactive', 'llama2-70b-99', 450, 40],
    ['deepseek-r1', 'Server', 'deepseek-r1', 2000, 80],
    ['deepseek-r1-interactive', 'Interactive', 'deepseek-r1', 1500, 15],
    ['gpt-oss-120b', 'Server', 'gpt-oss-120b', 3000, 80],
    ['gpt-oss-120b-interactive', 'Interactive', 'gpt-oss-120b', 2000, 15],
    ['llama3_1-405b', 'Server', 'llama3.1-405b', 6000, 175],
    ['llama3_1-405b-interactive', 'Interactive', 'llama3.1-405b', 4500, 80],
    ['mixtral-8x7b', 'Server', 'mixtral-8x7b', 2000, 200],
  ])('%s: %s limits of %s, TTFT %d ms, TPOT %d ms', (model, scenario, benchmark, ttft, tpot) => {
    expect(limitsFor(model, 'Server')).toEqual({ benchmark, scenario, ttftNs: ttft * MS, tpotNs: tpot * MS });
  });

  it("names the checker's own folders (Interactive under a Server model, v5.0's interactive names) and nothing else", () => {
    expect(limitsFor('llama3.1-8b', 'Server', true)).toMatchObject({ scenario: 'Interactive', ttftNs: 500 * MS });
    expect(limitsFor('llama2-70b-99.9', 'Interactive')).toMatchObject({ benchmark: 'llama2-70b-99.9', ttftNs: 450 * MS, tpotNs: 40 * MS });
    expect(limitsFor('llama2-70b-interactive-99', 'Server')).toMatchObject({ ttftNs: 450 * MS, tpotNs: 40 * MS });
    expect(limitsFor('mixtral-8x7b', 'Server', true)).toBeUndefined();
    expect(limitsFor('llama3_1-8b', 'Offline')).toBeUndefined();
    expect(limitsFor('resnet50', 'Server')).toBeUndefined();
  });

  // Every -interactive model of the built-in mlperf.conf: its Server bounds are the checker's Interactive limits.
  it.each(kBuiltinModels.filter((m) => m.endsWith('-interactive')))('built-in mlperf.conf %s.Server: the Interactive limits', (model) => {
    const { settings } = loadSettings({ model, scenario: 'Server' });
    const limits = limitsFor(model, 'Server');
    expect(limits?.scenario).toBe('Interactive');
    expect(settings.useTokenLatencies).toBe(true);
    expect(settings.serverTtftLatency).toBe(limits!.ttftNs);
    expect(settings.serverTpotLatency).toBe(limits!.tpotNs);
    expect(settings.serverTargetLatencyNs).toBe(0);
  });

  it('every table entry is a positive number of whole ms', () => {
    for (const l of LLM_LATENCY_LIMITS) {
      expect(l.ttftNs % MS).toBe(0);
      expect(l.tpotNs % MS).toBe(0);
      expect(l.ttftNs > l.tpotNs).toBe(true);
    }
  });
});

/**
 * A token SUT whose samples are in or out of the limits by wide margins,
 * whatever the machine's load: an "in" first token comes at once (TTFT =
 * the issue's lateness) and an "in" last byte on the next turn of the event
 * loop (TPOT ~ microseconds); an "out" first token comes after a timer of
 * 300 ms (limit 100 ms) and an "out" last byte 40 ms a token after the
 * first token (limit 20 ms): timers never fire early.
 */
function plannedSut(plan: (index: number) => { ttftOut: boolean; tpotOut: boolean; n: number } | 'fail'): SystemUnderTest & { issued: number[] } {
  const issued: number[] = [];
  return {
    name: 'planned-token-sut',
    issued,
    issueQuery(samples: QuerySample[]) {
      for (const s of samples) {
        issued.push(s.index);
        const p = plan(s.index);
        if (p === 'fail') {
          querySampleFailed(s.id, 'http_status', 'planned failure');
          continue;
        }
        const last = (): void => {
          if (p.tpotOut) setTimeout(() => querySampleComplete(s.id, undefined, p.n), (p.n - 1) * 40);
          else setImmediate(() => querySampleComplete(s.id, undefined, p.n));
        };
        if (p.ttftOut) {
          setTimeout(() => {
            firstTokenComplete(s.id, Uint8Array.of(1));
            last();
          }, 300);
        } else {
          firstTokenComplete(s.id, Uint8Array.of(1));
          last();
        }
      }
    },
  };
}

describe('goodput', () => {
  // Limits 100 ms / 20 ms (plannedSut).
  const plan = (i: number): { ttftOut: boolean; tpotOut: boolean; n: number } | 'fail' => {
    if (i % 7 === 0) return 'fail';
    return { ttftOut: i % 3 === 0, tpotOut: i % 5 === 0, n: i % 11 === 0 ? 1 : 4 };
  };
  const within = (i: number): boolean => i % 7 !== 0 && i % 3 !== 0 && i % 5 !== 0 && i % 11 !== 0;
  let result: TestResult;
  let issued: number[];

  beforeAll(async () => {
    const sut = plannedSut(plan);
    result = await startTest(sut, recordingQsl(64, 64), {
      scenario: 'Server', serverTargetQps: 400, minDurationMs: 300, minQueryCount: 120,
      useTokenLatencies: true, serverTtftLatency: 100 * MS, serverTpotLatency: 20 * MS,
    }, { outdir: tempDir() });
    issued = sut.issued;
  });

  it('counts the issued samples within both limits: failed, one-token and over-limit samples are not', () => {
    const expected = issued.filter(within).length;
    expect(issued.length).toBeGreaterThanOrEqual(120);
    expect(result.tokens?.goodput).toEqual({ withinLimits: expected, issuedSamples: issued.length, share: expected / issued.length });
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(issued.length);
  });

  it('says which limits applied and where they came from, in the result and the summary block after the reference\'s lines', () => {
    expect(result.tokens?.limits).toEqual({
      scenario: 'Server', ttftNs: 100 * MS, tpotNs: 20 * MS,
      ttftSource: 'the settings passed to startTest', tpotSource: 'the settings passed to startTest',
    });
    const summary = readFileSync(result.files.summary!, 'utf8');
    expect(summary).toBe(result.summaryText);
    const block = summary.slice(summary.indexOf('Token Latency Limits (loadgen for Node.js)'));
    const g = result.tokens!.goodput!;
    expect(block).toContain(`Goodput                         : ${(g.share * 100).toFixed(2)} % (${g.withinLimits} of ${g.issuedSamples} issued samples within both limits)`);
    expect(block).toContain('TTFT limit (ns)                 : 100000000 (the settings passed to startTest)');
    // loadgen's blocks come after every line the reference writes.
    expect(referencePart(summary)).not.toContain('Token Latency Limits');
    expect(summary.indexOf('Loadgen Overhead')).toBeLessThan(summary.indexOf('Token Latency Limits'));
    // None of its lines is one MLCommons' scripts read (TEST04's line regexes, the checker's summary lines).
    for (const line of block.split('\n')) {
      expect(line).not.toMatch(/^Scenario|^Result is|Completed samples per second|Samples per second|Early stopping .*percentile estimate|^target_latency \(ns\)/);
    }
  });

  it('the report data holds the same goodput and the per-sample token distributions', () => {
    const data = JSON.parse(readFileSync(join(result.files.summary!, '..', 'loadgen_report_data.json'), 'utf8')) as {
      use_token_latencies: boolean;
      series: { completed_samples: number; tokens: { goodput: unknown; ttft: { count: number }; tpot: { count: number }; output_tokens: { count: number }; timeline: { completed_tokens: number[] } } };
      token_limits: unknown;
    };
    const g = result.tokens!.goodput!;
    expect(data.use_token_latencies).toBe(true);
    expect(data.series.tokens.goodput).toEqual({ within_limits: g.withinLimits, issued_samples: g.issuedSamples });
    expect(data.series.tokens.ttft.count).toBe(data.series.completed_samples);
    expect(data.series.tokens.output_tokens.count).toBe(data.series.completed_samples);
    // The one-token samples have no TPOT.
    expect(data.series.tokens.tpot.count).toBe(issued.filter((i) => i % 7 !== 0 && i % 11 !== 0).length);
    expect(data.series.tokens.timeline.completed_tokens.reduce((a, b) => a + b, 0)).toBe(result.tokens!.tokenCount);
    expect(data.token_limits).toEqual(result.tokens!.limits);
  });

  it('no goodput and no limits block outside Server', async () => {
    const single = await startTest(plannedSut(() => ({ ttftOut: false, tpotOut: false, n: 3 })), recordingQsl(8, 8), {
      scenario: 'SingleStream', minDurationMs: 0, minQueryCount: 20, useTokenLatencies: true,
    }, { outdir: tempDir() });
    expect(single.tokens?.ttftNs).toBeDefined();
    expect(single.tokens?.goodput).toBeUndefined();
    expect(single.tokens?.limits).toBeUndefined();
    expect(single.summaryText).not.toContain('Token Latency Limits');
  });
});

describe('run --config-model <model>-interactive against the OpenAI stub', () => {
  let stub: OpenAiStub;
  const dir = tempDir('loadgen-interactive-');
  const dataset = join(dir, 'prompts.jsonl');
  beforeAll(async () => {
    // 40 ms between tokens: every sample's TPOT is over the Interactive 30 ms, whatever the machine's load.
    stub = await startOpenAiStub({ port: 0, ttftMs: 5, tpotMs: 40 });
    writeFileSync(dataset, Array.from({ length: 16 }, (_, i) => `{"prompt": "p${i} a b c", "max_tokens": 4}`).join('\n') + '\n');
  });
  afterAll(async () => {
    await stub.close();
  });

  it('applies llama3_1-8b-interactive\'s 500/30 ms, fails TPOT, says so, and `loadgen check` holds the log to the checker\'s keys', async () => {
    const outdir = join(dir, 'results', 'sut', 'llama3.1-8b', 'Interactive', 'performance', 'run_1');
    mkdirSync(outdir, { recursive: true });
    const r = await loadgen(['run', '--sut', 'openai', '--url', stub.url, '--model', 'loadgen-stub', '--dataset', dataset,
      '--config-model', 'llama3_1-8b-interactive', '--scenario', 'Server', '--set', 'server_target_qps=20', '--set', 'min_duration_ms=400',
      '--set', 'min_query_count=8', '--outdir', outdir, '--no-progress', '--no-report', '--json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    const result = JSON.parse(r.stdout) as TestResult;
    expect(result.invalidReasons.join(' ')).toMatch(/TPOT constrain not met/);
    expect(result.tokens?.limits).toMatchObject({
      model: 'llama3_1-8b-interactive', scenario: 'Interactive', ttftNs: 500 * MS, tpotNs: 30 * MS,
      ttftSource: expect.stringMatching(/^mlperf\.conf \(built-in\):\d+ llama3_1-8b-interactive\.Server\.ttft_latency = 500$/),
      tpotSource: expect.stringMatching(/^mlperf\.conf \(built-in\):\d+ llama3_1-8b-interactive\.Server\.tpot_latency = 30$/),
      checker: { benchmark: 'llama3.1-8b', scenario: 'Interactive', ttftNs: 500 * MS, tpotNs: 30 * MS, ttftMet: true, tpotMet: false },
    });
    expect(result.tokens?.goodput).toEqual({ withinLimits: 0, issuedSamples: result.counts.issuedSamples, share: 0 });
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toContain('"key": "requested_server_ttft_latency", "value": 500000000');
    expect(detail).toContain('"key": "requested_server_tpot_latency", "value": 30000000');
    const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
    expect(summary).toContain('ttft_latency (ns): 500000000\ntpot_latency (ns): 30000000\n');
    expect(summary).toMatch(/Limits of {23}: llama3_1-8b-interactive, Interactive/);
    expect(summary).toMatch(/Checker's test {18}: p99 TTFT \d+ ns < 500000000: yes; p99 TPOT \d+ ns < 30000000: NO/);

    // The checker's folder names: llama3.1-8b under Interactive is llama3_1-8b-interactive, held to 500/30 ms.
    const check = checkRunLog(join(dir, 'results', 'sut', 'llama3.1-8b', 'Interactive'));
    expect(check.model).toBe('llama3_1-8b-interactive');
    const run = check.reports[0]!;
    expect(run.tokenLimits).toMatchObject({ benchmark: 'llama3.1-8b', scenario: 'Interactive', ttftNs: 500 * MS, tpotNs: 30 * MS });
    expect(run.tokenLimits?.measured?.tpotP99Ns).toBeGreaterThanOrEqual(40 * MS);
    expect(run.rules.find((x) => x.id === 'token-latency-p99')?.status).toBe('fail');
    const v = run.violations.find((x) => x.rule === 'token-latency-p99')!;
    expect(v.setting).toBe('result_time_per_output_token_99.00_percentile_ns');
    expect(v.message).toMatch(/below 30000000 ns \(llama3\.1-8b Interactive: TPOT under 30 ms\)/);
    expect(run.violations.filter((x) => x.rule === 'token-latency-p99')).toHaveLength(1);
    expect(run.notes.join('\n')).toMatch(/TTFT\/TPOT limits: llama3\.1-8b Interactive, TTFT under 500 ms and TPOT under 30 ms/);

    // The same log in a Server folder of the checker's layout: llama3.1-8b is llama3_1-8b, held to 2000/100 ms, which it meets.
    const serverDir = join(dir, 'results', 'sut', 'llama3.1-8b', 'Server');
    mkdirSync(join(serverDir, 'performance', 'run_1'), { recursive: true });
    writeFileSync(join(serverDir, 'performance', 'run_1', 'mlperf_log_detail.txt'), detail);
    const server = checkRunLog(serverDir);
    expect(server.model).toBe('llama3_1-8b');
    expect(server.reports[0]!.tokenLimits).toMatchObject({ benchmark: 'llama3.1-8b', scenario: 'Server', ttftNs: 2000 * MS, tpotNs: 100 * MS });
    expect(server.reports[0]!.rules.find((x) => x.id === 'token-latency-p99')?.status).toBe('pass');

    // The same from the command line: `loadgen check LOGDIR` exits 1 naming the checker's key; the Server folder passes that rule.
    const cliCheck = await loadgen(['check', join(dir, 'results', 'sut', 'llama3.1-8b', 'Interactive')]);
    expect(cliCheck.stderr).toBe('');
    expect(cliCheck.status).toBe(1);
    expect(cliCheck.stdout).toMatch(/x token-latency-p99: result_time_per_output_token_99\.00_percentile_ns is \d+.*below 30000000 ns \(llama3\.1-8b Interactive: TPOT under 30 ms\)/);
    expect(cliCheck.stdout).toMatch(/note: TTFT\/TPOT limits: llama3\.1-8b Interactive, TTFT under 500 ms and TPOT under 30 ms/);
    const serverJson = await loadgen(['check', serverDir, '--json']);
    const serverReport = (JSON.parse(serverJson.stdout) as { reports: { rules: { id: string; status: string }[]; tokenLimits: { scenario: string } }[] }).reports[0]!;
    expect(serverReport.rules.find((x) => x.id === 'token-latency-p99')?.status).toBe('pass');
    expect(serverReport.tokenLimits.scenario).toBe('Server');
  }, 120_000);

  it('a run within 500/30 ms meets the Interactive limits (goodput 100 %); `loadgen check` before a run names them and refuses looser bounds', async () => {
    const fast = await startOpenAiStub({ port: 0, ttftMs: 2, tpotMs: 2 });
    try {
      const outdir = join(dir, 'within');
      const r = await loadgen(['run', '--sut', 'openai', '--url', fast.url, '--model', 'loadgen-stub', '--dataset', dataset,
        '--config-model', 'llama3_1-8b-interactive', '--scenario', 'Server', '--set', 'server_target_qps=20', '--set', 'min_duration_ms=400',
        '--set', 'min_query_count=8', '--outdir', outdir, '--no-progress', '--no-report', '--json']);
      expect(r.stderr).toBe('');
      const result = JSON.parse(r.stdout) as TestResult;
      expect(result.tokens?.limits).toMatchObject({ scenario: 'Interactive', ttftNs: 500 * MS, tpotNs: 30 * MS, checker: { ttftMet: true, tpotMet: true } });
      expect(result.tokens?.goodput).toEqual({ withinLimits: result.counts.issuedSamples, issuedSamples: result.counts.issuedSamples, share: 1 });
      expect(readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8')).toMatch(/Checker's test {18}: p99 TTFT \d+ ns < 500000000: yes; p99 TPOT \d+ ns < 30000000: yes/);
    } finally {
      await fast.close();
    }
    const planned = await loadgen(['check', '--model', 'llama3_1-8b-interactive', '--scenario', 'Server']);
    expect(planned.status).toBe(0);
    expect(planned.stdout).toMatch(/passed: .*latency-bound/);
    expect(planned.stdout).toContain('note: TTFT/TPOT limits: llama3.1-8b Interactive, TTFT under 500 ms and TPOT under 30 ms');
    const looser = await loadgen(['check', '--model', 'llama3_1-8b-interactive', '--scenario', 'Server', '--set', 'tpot_latency=40000000']);
    expect(looser.status).toBe(1);
    expect(looser.stdout).toMatch(/x latency-bound: server_tpot_latency is 40000000 \(from --set\); the closed division requires at most 30000000 ns/);
  }, 120_000);
});
