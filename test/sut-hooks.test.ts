// The generic SUT hooks: defaultSettings (under the caller's settings, config
// files and --set) and report() (result.sutReport, a block after the
// summary's overhead block, report.html's table, --json).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createSyntheticQsl,
  loadSettings,
  querySamplesComplete,
  startTest,
  SutError,
  writeReport,
  type QuerySample,
  type SutReport,
  type SystemUnderTest,
  type TestResult,
} from '../lib/index.js';
import { readText, referencePart, repoRoot, tempDir } from './helpers.js';

const OFFLINE = { scenario: 'Offline', minDurationMs: 0, minQueryCount: 200 } as const;

function completingSut(extra: Partial<SystemUnderTest> = {}): SystemUnderTest {
  return { name: 'hooked', issueQuery: (samples: QuerySample[]) => querySamplesComplete(samples), ...extra };
}

const REPORT: SutReport = {
  title: 'Network SUT (2 nodes)',
  lines: ['Requests : 200', 'Forged\nResult is : VALID'],
  table: { columns: ['node', 'requests', 'p99 (ms)'], rows: [['<b>node a</b>', 150, 1.5], ['node b', 50, 2]] },
  data: { anything: [1, 2] },
};

describe('SystemUnderTest.defaultSettings', () => {
  it('applies per key under the caller\'s settings', async () => {
    const sut = completingSut({ defaultSettings: { maxDurationMs: 60000, minQueryCount: 999999, accuracyLogProbability: 0.5 } });
    const result = await startTest(sut, createSyntheticQsl(64), OFFLINE, { outdir: tempDir() });
    expect(result.effectiveSettings.maxDurationMs).toBe(60000);
    expect(result.effectiveSettings.accuracyLogProbability).toBe(0.5);
    expect(result.counts.issuedSamples).toBe(200);  // the caller's min_query_count
    expect(result.validity).toBe('VALID');
  });

  it('fills only the fields a loadSettings() result left at their defaults', async () => {
    const loaded = loadSettings({ model: '*', scenario: 'Offline', overrides: [{ label: '--set', settings: { minQueryCount: 150, minDurationMs: 0 } }] });
    const sut = completingSut({ defaultSettings: { maxDurationMs: 60000, minQueryCount: 999999, minDurationMs: 5, serverTargetQps: 3 } });
    const result = await startTest(sut, createSyntheticQsl(64), loaded.settings, { outdir: tempDir() });
    expect(result.effectiveSettings.maxDurationMs).toBe(60000);  // default: the SUT's
    expect(result.counts.issuedSamples).toBe(150);  // --set's min_query_count wins
    expect(result.effectiveSettings.minDurationMs).toBe(0);
    expect(loaded.settings.serverTargetQps).toBe(1);  // mlperf.conf's (untouched)
  });

  it('a defaultSettings that is not an object, or holds a bad value, is refused before anything runs', async () => {
    await expect(startTest(completingSut({ defaultSettings: 5 as never }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() }))
      .rejects.toThrow('sut.defaultSettings must be an object of test settings when present, got number 5');
    await expect(startTest(completingSut({ defaultSettings: { maxDurationMs: -1 } }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() }))
      .rejects.toThrow(/maxDurationMs|max_duration/);
  });
});

describe('SystemUnderTest.report', () => {
  it('goes into the result, after the overhead block of the summary, the report data and report.html', async () => {
    const outdir = tempDir();
    let calls = 0;
    const result = await startTest(completingSut({ report: () => (calls++, REPORT) }), createSyntheticQsl(64), OFFLINE, { outdir });
    expect(calls).toBe(1);
    expect(result.validity).toBe('VALID');
    expect(result.sutReport).toEqual({ ...REPORT, lines: ['Requests : 200', 'Forged\\nResult is : VALID'] });
    const block = '\n================================================\nNetwork SUT (2 nodes)\n================================================\n' +
      'Requests : 200\nForged\\nResult is : VALID\n';
    expect(result.summaryText.endsWith(block)).toBe(true);
    const summary = readText(result.files.summary!);
    expect(summary).toBe(result.summaryText);
    // After the overhead block; nothing before it moved.
    const overhead = summary.indexOf('Loadgen Overhead (loadgen for Node.js)');
    expect(overhead).toBeGreaterThan(0);
    expect(summary.indexOf('Network SUT (2 nodes)')).toBeGreaterThan(overhead);
    expect(summary.match(/^Result is : /gm)).toHaveLength(1);
    expect(referencePart(summary)).not.toContain('Network SUT');
    const data = JSON.parse(readFileSync(join(outdir, 'loadgen_report_data.json'), 'utf8')) as { sut_report: unknown; series: unknown };
    expect(data.series).not.toBeNull();
    expect(data.sut_report).toEqual({ title: REPORT.title, lines: result.sutReport!.lines, table: REPORT.table });
    const html = readFileSync(writeReport(outdir), 'utf8');
    expect(html).toContain('<h2>Network SUT (2 nodes)</h2>');
    expect(html).toContain('<th>p99 (ms)</th>');
    expect(html).toContain('<td>&lt;b&gt;node a&lt;/b&gt;</td><td>150</td><td>1.5</td>');
  });

  it('a throw or a bad report loses nothing: a warning in the result, the verdict unchanged', async () => {
    const thrown = await startTest(completingSut({ report: () => { throw new Error('stats gone'); } }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() });
    expect(thrown.validity).toBe('VALID');
    expect(thrown.sutReport).toBeUndefined();
    expect(thrown.sutReportError).toBe('sut.report() threw: stats gone');
    expect(readText(thrown.files.summary!)).toBe(thrown.summaryText);
    const bad = await startTest(completingSut({ report: () => ({ title: 'x', lines: [1] }) as never }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() });
    expect(bad.sutReportError).toBe('sut.report() returned a report whose lines are not an array of strings, got an array');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const unserializable = await startTest(completingSut({ report: () => ({ title: 'x', lines: [], data: circular }) }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() });
    expect(unserializable.sutReport).toBeUndefined();
    expect(unserializable.sutReportError).toMatch(/^sut\.report\(\) returned a report whose data cannot be written as JSON: /);
    const none = await startTest(completingSut({ report: () => undefined }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() });
    expect(none.sutReport).toBeUndefined();
    expect(none.sutReportError).toBeUndefined();
  });

  it('distributions: checked, into the report data, and drawn by report.html (a histogram each)', async () => {
    const dist = {
      title: 'Queue depth', note: 'Requests waiting per node.', unit: 'tokens' as const, count: 3, min: 1, max: 4, mean: 2,
      p: [0, 0.5, 1], values: [1, 1, 4], histogram: { scale: 'linear' as const, edges: [1, 2, 5], counts: [2, 1], above: 0 },
    };
    const outdir = tempDir();
    const ok = await startTest(completingSut({ report: () => ({ title: 't', lines: [], distributions: { 'queue-depth': dist } }) }), createSyntheticQsl(64), OFFLINE, { outdir });
    expect(ok.sutReportError).toBeUndefined();
    expect(ok.sutReport?.distributions).toEqual({ 'queue-depth': dist });
    const data = JSON.parse(readFileSync(join(outdir, 'loadgen_report_data.json'), 'utf8')) as { sut_report: { distributions: unknown } };
    expect(data.sut_report.distributions).toEqual({ 'queue-depth': dist });
    const html = readFileSync(writeReport(outdir), 'utf8');
    expect(html).toContain('<h3>Measured by the SUT</h3>');
    expect(html).toContain('id="chart-sut-queue-depth"');
    const bad = async (distributions: unknown): Promise<string | undefined> =>
      (await startTest(completingSut({ report: () => ({ title: 't', lines: [], distributions }) as never }), createSyntheticQsl(64), OFFLINE, { outdir: tempDir() })).sutReportError;
    expect(await bad({ 'Bad Key': dist })).toMatch(/distributions\['Bad Key'\] key is not 1 to 40 lowercase letters/);
    expect(await bad({ d: { ...dist, mean: Number.NaN } })).toMatch(/distributions\['d'\]\.mean is not a finite number >= 0/);
    expect(await bad({ d: { ...dist, values: [1, 2] } })).toMatch(/\.p and \.values differ in length/);
    expect(await bad({ d: { ...dist, histogram: { ...dist.histogram, edges: [1, 2] } } })).toMatch(/edges is not one longer than its counts/);
  });

  it('is called after a run the SUT failed, into the SutError\'s result', async () => {
    const sut: SystemUnderTest = {
      name: 'throwing',
      issueQuery() {
        throw new Error('boom');
      },
      report: () => ({ title: 'Failing SUT', lines: ['Requests : 0'] }),
    };
    const error = await startTest(sut, createSyntheticQsl(64), OFFLINE, { outdir: tempDir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SutError);
    const result = (error as SutError).result as TestResult;
    expect(result.sutReport?.title).toBe('Failing SUT');
    expect(readText(result.files.summary!).endsWith('Failing SUT\n================================================\nRequests : 0\n')).toBe(true);
  });

  it('is called after an interrupted run', async () => {
    const controller = new AbortController();
    let issued = 0;
    const sut = completingSut({
      issueQuery(samples: QuerySample[]) {
        if (++issued === 20) controller.abort(new Error('enough'));
        querySamplesComplete(samples);
      },
      report: () => ({ title: 'Interrupted SUT', lines: [`Queries : ${issued}`] }),
    });
    const result = await startTest(sut, createSyntheticQsl(64), { scenario: 'SingleStream', minDurationMs: 60000, minQueryCount: 1e6 },
      { outdir: tempDir() }, { signal: controller.signal });
    expect(result.interrupted).toBe('interrupted: enough');
    expect(result.sutReport?.title).toBe('Interrupted SUT');
    expect(readText(result.files.summary!)).toContain('\nInterrupted SUT\n');
  });

  it('loadgen run: --set and config files win over defaultSettings; --json and report.html carry the report', () => {
    const outdir = tempDir();
    const fixture = join(repoRoot, 'test', 'fixtures', 'reporting-sut.mjs');
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'run', '--sut', fixture, '--model', 'any',
      '--scenario', 'Offline', '--set', 'min_query_count=100', '--set', 'min_duration_ms=0', '--json', '--outdir', outdir],
    { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    const result = JSON.parse(r.stdout) as TestResult;
    expect(result.counts.issuedSamples).toBe(100);
    expect(result.effectiveSettings.maxDurationMs).toBe(60000);
    expect(result.sutReport).toEqual({
      title: 'Reporting SUT (2 nodes)',
      lines: ['Samples seen : 100'],
      table: { columns: ['node', 'requests'], rows: [['<a>', 100], ['b', 0]] },
      data: { samples: 100 },
    });
    const html = join(outdir, 'report.html');
    expect(existsSync(html)).toBe(true);
    expect(readText(html)).toContain('<h2>Reporting SUT (2 nodes)</h2>');
  });
});
