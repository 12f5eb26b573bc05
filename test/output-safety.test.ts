/**
 * Output safety and bad input (issue 11, items 5 and 6): names cannot forge
 * log lines, report.html's inline data survives any string, messages echo a
 * bounded, escaped prefix of the input, a QSL cannot load more samples than
 * it has, and every text path reads integer settings with one grammar.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { lintConfigText } from '../lib/config/lint.js';
import { loadSettings } from '../lib/config/load-settings.js';
import { ConfigFileError, InterfaceError, SettingsError } from '../lib/errors.js';
import { createNullSut, createSyntheticQsl, startTest } from '../lib/index.js';
import { jsonForScript, renderReport, type ReportData } from '../lib/report/report.js';
import { fromSnakeCaseSettings, parseSettingAssignment } from '../lib/settings/assignments.js';
import { resolveLogSettings } from '../lib/settings/log-settings.js';
import { closest, echo, show } from '../lib/settings/messages.js';
import { resolveTestSettings } from '../lib/settings/resolve.js';
import { repoRoot, tempDir } from './helpers.js';
import { expectSettingsError } from './settings-helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const MB = 1 << 20;
const quickOffline = { scenario: 'Offline', minDurationMs: 50, minQueryCount: 100, offlineExpectedQps: 1000 } as const;

function loadgen(args: string[], cwd = repoRoot) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `fn`, expects it to throw, and returns the error with how long it took. */
function timedError(fn: () => unknown): { error: Error; ms: number } {
  const t0 = performance.now();
  try {
    fn();
  } catch (error) {
    return { error: error as Error, ms: performance.now() - t0 };
  }
  throw new Error('expected an error');
}

// Every kind of control character the checks refuse, and how messages show it.
const CONTROLS: Array<[string, string]> = [
  ['\n', '\\n'], ['\r', '\\r'], ['\t', '\\t'], ['\u0000', '\\u0000'], ['\u001b', '\\u001b'],
  ['\u007f', '\\u007f'], ['\u0085', '\\u0085'], ['\u009f', '\\u009f'], ['\u2028', '\\u2028'], ['\u2029', '\\u2029'],
];

describe('names with control characters', () => {
  it.each(CONTROLS)('sut.name and qsl.name with %j are refused before anything starts', async (c, escaped) => {
    const outdir = join(tempDir(), 'never');
    const forged = `evil${c}Result is : VALID`;
    const sut = { ...createNullSut(), name: forged };
    const e = await startTest(sut, createSyntheticQsl(64), quickOffline, { outdir }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InterfaceError);
    expect((e as Error).message).toContain('sut.name must be printable text without control characters');
    expect((e as Error).message).toContain(`"evil${escaped}Result is : VALID"`);
    const qsl = { ...createSyntheticQsl(64), name: forged };
    const q = await startTest(createNullSut(), qsl, quickOffline, { outdir }).catch((x: unknown) => x);
    expect(q).toBeInstanceOf(InterfaceError);
    expect((q as Error).message).toContain('qsl.name must be printable text');
    expect(existsSync(outdir)).toBe(false);
  });

  it('ordinary names, accents and emoji included, still run and reach the summary as written', async () => {
    const outdir = tempDir();
    const name = 'Résumé SUT 🚀 "quoted" back\\slash';
    const r = await startTest({ ...createNullSut(), name }, createSyntheticQsl(64), quickOffline, { outdir });
    expect(r.summaryText).toContain(`SUT name : ${name}\n`);
  });

  it.each(['prefix', 'suffix'] as const)('log %s with a control character is refused; path separators still are', (key) => {
    expectSettingsError(() => resolveLogSettings({ [key]: 'a\nb' }), key, '"a\\nb"', 'without control characters');
    expectSettingsError(() => resolveLogSettings({ [key]: 'x\u2028' }), key, '"x\\u2028"', 'without control characters');
    expectSettingsError(() => resolveLogSettings({ [key]: 'a/b' }), key, 'path separators');
    expect(resolveLogSettings({ [key]: '<!--<script>' })[key]).toBe('<!--<script>');
  });

  it('the CLI refuses a module SUT named with a newline: exit 2, the name escaped', () => {
    const dir = tempDir();
    const module = join(dir, 'forger.mjs');
    writeFileSync(module, [
      "export function createSut() { return { name: 'x\\nResult is : VALID', issueQuery() {} }; }",
      "export function createQsl() { return { name: 'q', totalSampleCount: 8, performanceSampleCount: 8, loadSamplesToRam() {}, unloadSamplesFromRam() {} }; }",
    ].join('\n'));
    const r = loadgen(['run', '--sut', module, '--scenario', 'Offline', '--outdir', join(dir, 'out'), '--no-audit-config']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('sut.name must be printable text');
    expect(r.stderr).toContain('"x\\nResult is : VALID"');
    expect(r.stderr.split('\n').some((l) => l.startsWith('Result is'))).toBe(false);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});

describe('report.html escapes what it shows', () => {
  const nasty = ['<!--', '<script>', '</script>', '<!--<script>', '</SCRIPT >', '\u2028', '\u2029', '&amp;', ']]>', '"\'\\'];

  function reportData(text: string): ReportData {
    return {
      format: 'loadgen-report-data', version: 1, test_datetime: `2026-01-01T00:00:00Z${text}`,
      scenario: 'Offline', mode: `PerformanceOnly${text}`, target_latency_ns: 0, target_latency_percentile: 0.9,
      files: { summary: `s${text}.txt`, detail: `d${text}.txt`, accuracy: `a${text}.json`, trace: `t${text}.json` },
      series: null,
    };
  }

  /** The JSON between the data block's tags, as a browser's parser would cut it. */
  function embeddedJson(html: string): string {
    const open = '<script id="report-data" type="application/json">';
    const start = html.indexOf(open) + open.length;
    return html.slice(start, html.indexOf('</script>', start));
  }

  it.each(nasty)('inline JSON round-trips %j exactly and holds no markup', (text) => {
    const data = reportData(text);
    const html = renderReport({ summary: '', detail: [{ key: 'sut_name', value: `SUT${text}` }], data });
    const json = embeddedJson(html);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect((JSON.parse(json) as { data: ReportData }).data).toEqual(data);
    // The rest of the page escapes as HTML (the detail log's sut_name, the title).
    if (text.includes('<')) expect(html).not.toContain(`SUT${text}`);
  });

  it('jsonForScript: any string survives JSON.parse unchanged', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => {
      const out = jsonForScript({ s });
      return !/[<>&\u2028\u2029]/.test(out) && (JSON.parse(out) as { s: string }).s === s;
    }), { numRuns: 200 });
  });
});

describe('messages echo a bounded, escaped prefix of the input', () => {
  const big = 'x'.repeat(MB);

  it('echo/show: at most 80 characters, the rest counted; control characters escaped; surrogate pairs kept whole', () => {
    expect(echo('short')).toBe('short');
    expect(echo(big)).toBe(`${'x'.repeat(80)}\u2026 (${MB - 80} more characters)`);
    expect(show(big)).toBe(`"${'x'.repeat(80)}"\u2026 (${MB - 80} more characters)`);
    expect(echo('a\nb\u0085\u2028')).toBe('a\\nb\\u0085\\u2028');
    expect(show('a\nb\u007f')).toBe('"a\\nb\\u007f"');
    const emoji = `${'e'.repeat(79)}🚀tail`;
    expect(echo(emoji)).toBe(`${'e'.repeat(79)}\u2026 (6 more characters)`);
  });

  it('did-you-mean costs nothing for inputs far longer than any name, and still works for typos', () => {
    const t0 = performance.now();
    expect(closest(big, ['server_target_qps', 'min_duration_ms'])).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(50);
    expect(closest('server_target_qsp', ['server_target_qps', 'min_duration_ms'])).toBe('server_target_qps');
  });

  it.each([
    ['a 1 MB unknown config key', `*.*.${big} = 1\n`],
    ['a 1 MB config value', `*.*.min_query_count = ${'1'.repeat(MB)}\n`],
    ['a 1 MB double config value', `*.Offline.target_qps = ${'1'.repeat(MB)}\n`],
    ['a 1 MB line without =', `*.*.min_query_count ${big}\n`],
    ['a 1 MB comment glued to #', `#${big} more\n`],
  ])('config file: %s gives an error < 1 kB, quickly', (_what, text) => {
    const { error, ms } = timedError(() => loadSettings({ model: '*', scenario: 'Offline', userConf: { text, name: 'user.conf' } }));
    expect(error).toBeInstanceOf(ConfigFileError);
    expect(error.message.length).toBeLessThan(1024);
    expect(error.message).toMatch(/more characters\)/);
    expect(ms).toBeLessThan(2000);
  });

  it('a config file of many bad lines lists 20 of them and counts the rest', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `*.*.nope${i} = 1`).join('\n');
    const { error } = timedError(() => loadSettings({ model: '*', scenario: 'Offline', userConf: { text } }));
    expect((error as ConfigFileError).problems).toHaveLength(1000);
    const lines = error.message.split('\n');
    expect(lines).toHaveLength(21);
    expect(lines[20]).toBe('\u2026 and 980 more problems (ConfigFileError.problems lists them all)');
  });

  it.each([
    ['--set with a 1 MB key', () => parseSettingAssignment(`${big}=1`)],
    ['--set with a 1 MB integer', () => parseSettingAssignment(`min_query_count=${'1'.repeat(MB)}`)],
    ['--set with a 1 MB enum value', () => parseSettingAssignment(`scenario=${big}`)],
    ['--set with a 1 MB text and no =', () => parseSettingAssignment(big)],
    ['a snake_case object with a 1 MB key', () => fromSnakeCaseSettings({ [big]: 1 })],
    ['test settings with a 1 MB key', () => resolveTestSettings({ [big]: 1 })],
    ['test settings with a 1 MB enum value', () => resolveTestSettings({ scenario: big })],
    ['test settings with a 1 MB numeric string', () => resolveTestSettings({ minQueryCount: '1'.repeat(MB) })],
    ['log settings with a 1 MB key', () => resolveLogSettings({ [big]: 1 })],
    ['log settings with a 1 MB suffix', () => resolveLogSettings({ suffix: `/${big}` })],
  ])('%s gives an error < 1 kB, quickly', (_what, fn) => {
    const { error, ms } = timedError(fn);
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message.length).toBeLessThan(1024);
    expect(error.message).toMatch(/more characters\)/);
    expect(ms).toBeLessThan(2000);
  });

  it('the CLI: a 100 kB --set key, --scenario and --qsl-total give short errors and exit 2', () => {
    const long = 'k'.repeat(100_000);
    for (const args of [['--set', `${long}=1`], ['--scenario', long], ['--qsl-total', `1${'0'.repeat(100_000)}x`]]) {
      const r = loadgen(['run', '--sut', 'null', ...args, '--outdir', join(tempDir(), 'o')]);
      expect(r.status, args[0]).toBe(2);
      expect(r.stderr.length, args[0]).toBeLessThan(1024);
    }
  });

  it('startTest describes a huge string argument briefly', async () => {
    const sut = { name: 'x', issueQuery: big } as never;
    const e = await startTest(sut, createSyntheticQsl(8), {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InterfaceError);
    expect((e as Error).message).toContain('sut.issueQuery must be a function');
    expect((e as Error).message.length).toBeLessThan(1024);
  });
});

describe('a QSL cannot load more samples than it has', () => {
  it('startTest refuses performanceSampleCount > totalSampleCount, naming both, before anything starts', async () => {
    const outdir = join(tempDir(), 'never');
    const e = await startTest(createNullSut(), createSyntheticQsl(100, 101), quickOffline, { outdir }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SettingsError);
    expect((e as SettingsError).key).toBe('qsl.performanceSampleCount');
    expect((e as SettingsError).value).toBe(101);
    expect((e as Error).message).toContain('qsl.performanceSampleCount = 101: expected an integer in [1, qsl.totalSampleCount = 100]');
    expect(existsSync(outdir)).toBe(false);
    // Equal counts are fine.
    const r = await startTest(createNullSut(), createSyntheticQsl(100, 100), quickOffline, { outdir: tempDir() });
    expect(r.counts).toBeDefined();
  });

  it('loadgen run: --qsl-performance > --qsl-total is bad input (exit 2)', () => {
    const outdir = join(tempDir(), 'never');
    const r = loadgen(['run', '--sut', 'null', '--scenario', 'Offline', '--qsl-total', '10', '--qsl-performance', '20', '--outdir', outdir]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('qsl.performanceSampleCount = 20: expected an integer in [1, qsl.totalSampleCount = 10]');
    expect(existsSync(outdir)).toBe(false);
  });
});

describe('integer settings: one grammar for --set and config files', () => {
  const tinyFraction = `0.${'0'.repeat(1_000_000)}1`;
  const NON_INTEGERS = ['1.5', '1e-1000000', tinyFraction, '1e3', '1E3', '2.5e3', '0.5', '1.0000000000000001', '.5', '-0.0'];

  const viaSet = (text: string) => () => parseSettingAssignment(`min_query_count=${text}`);
  const viaConfig = (text: string) => () =>
    loadSettings({ model: '*', scenario: 'Offline', userConf: { text: `*.*.min_query_count = ${text}\n` } });

  it.each(NON_INTEGERS.map((t) => [t.length > 40 ? `${t.slice(0, 12)}… (${t.length} chars)` : t, t]))(
    '%s is refused by --set, config files and the API, quickly', (_label, text) => {
      const set = timedError(viaSet(text));
      expect(set.error).toBeInstanceOf(SettingsError);
      expect(set.error.message).toContain('min_query_count');
      expect(set.ms).toBeLessThan(2000);
      const conf = timedError(viaConfig(text));
      expect(conf.error).toBeInstanceOf(ConfigFileError);
      expect(conf.error.message).toContain('min_query_count');
      expect(conf.ms).toBeLessThan(2000);
      // The API takes numbers: the text is a string (refused), its number is refused unless an integer.
      expectSettingsError(() => resolveTestSettings({ minQueryCount: text }), 'minQueryCount');
      const n = Number(text);
      if (!Number.isInteger(n)) expectSettingsError(() => resolveTestSettings({ minQueryCount: n }), 'minQueryCount', 'not an integer');
    });

  it('the messages say what is allowed', () => {
    expect(timedError(viaSet('1.5')).error.message).toContain('not an integer in decimal digits (no fraction other than .0, no exponent)');
    expect(timedError(viaSet(tinyFraction)).error.message).toContain('a number takes at most 64');
    expect(timedError(viaConfig('1e3')).error.message).toContain("reads '1e3' as 1");
    expect(timedError(viaConfig('1e3')).error.message).toContain('not an integer in decimal digits');
    expect(timedError(viaConfig(tinyFraction)).error.message).toContain('a number takes at most 64');
  });

  it('exact integers are read alike: digits, a .0 fraction, a + sign', () => {
    for (const [text, value] of [['1024', 1024], ['1024.0', 1024], ['7.', 7], ['+5', 5], ['0', 0]] as const) {
      expect(parseSettingAssignment(`min_query_count=${text}`).value, text).toBe(value);
      expect(viaConfig(text)().settings.minQueryCount, text).toBe(value);
    }
    expect(parseSettingAssignment('issue_thread_cpu=-1').value).toBe(-1);
  });

  it('property: over decimal numerals, --set accepts exactly what a config file accepts, with the same value', () => {
    const numeral = fc.array(fc.constantFrom('0', '1', '5', '9', '.', 'e', 'E', '+', '-'), { minLength: 1, maxLength: 10 })
      .map((chars) => chars.join(''));
    fc.assert(fc.property(numeral, (text) => {
      let setValue: unknown;
      let setOk = true;
      try {
        setValue = parseSettingAssignment(`min_query_count=${text}`).value;
      } catch (error) {
        if (!(error instanceof SettingsError)) throw error;
        setOk = false;
      }
      const lintOk = !lintConfigText(`*.*.min_query_count = ${text}\n`, 'user.conf', 'user.conf').some((p) => p.severity === 'error');
      if (setOk !== lintOk) return false;
      return !setOk || viaConfig(text)().settings.minQueryCount === setValue;
    }), { numRuns: 400 });
  });
});
