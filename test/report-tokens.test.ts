/// <reference lib="dom" />
/**
 * report.html of token runs: the token section (limits and goodput, TTFT,
 * TPOT and inter-token histograms and CDFs, TTFT and tokens per second over
 * time, output lengths), no end-to-end bound where a run is held to TTFT
 * and TPOT, and the page drawn whole in headless Chromium (as
 * test/report.test.ts finds it: CHROME_PATH, PUPPETEER_EXECUTABLE_PATH or
 * /usr/bin/chromium; skipped with a warning outside CI without one).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseSummary, type ReportData } from '../lib/report/report.js';
import { startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { type CliRun, runCli, tempDir } from './helpers.js';

const chromium = [process.env.CHROME_PATH, process.env.PUPPETEER_EXECUTABLE_PATH, '/usr/bin/chromium'].find((p) => p !== undefined && p !== '' && existsSync(p));
const skipBrowser = chromium === undefined && !process.env.CI;
if (skipBrowser) console.warn('report-tokens.test.ts: skipping the headless Chromium checks: no Chromium (apt-get install chromium, or set CHROME_PATH)');

function loadgen(args: string[]): Promise<CliRun> {
  return runCli(args, { timeoutMs: 90_000 });
}

/** The JSON the page's script draws from. */
function clientData(html: string): { boundNs: number; data: ReportData } {
  const m = /<script id="report-data" type="application\/json">(.*?)<\/script>/s.exec(html);
  return JSON.parse(m![1]!) as { boundNs: number; data: ReportData };
}

const TOKEN_CHARTS = [
  'chart-ttft-histogram', 'chart-ttft-cdf', 'chart-tpot-histogram', 'chart-tpot-cdf', 'chart-itl-histogram', 'chart-itl-cdf',
  'chart-ttft-time', 'chart-tokens-time', 'chart-output-tokens',
];

describe('the summary of a token run as report.html reads it', () => {
  it('lists a TTFT/TPOT early-stopping heading only with the lines under it', () => {
    const summary = ['================================================', 'MLPerf Results Summary', '================================================',
      'Result is : INVALID', '  Early stopping satisfied: NO', 'Recommendations:', 'TTFT Early Stopping Result:', '', 'TPOT Early Stopping Result:',
      ' * Run unsuccessful.', ' * Processed 300 queries.', ''].join('\n');
    expect(parseSummary(summary).earlyStopping).toEqual(['TPOT Early Stopping Result:', 'Run unsuccessful.', 'Processed 300 queries.']);
  });
});

describe('report.html of a token run', () => {
  let stub: OpenAiStub;
  const dir = tempDir('loadgen-report-tokens-');
  const dataset = join(dir, 'prompts.jsonl');
  let interactive = '';
  let plain = '';
  beforeAll(async () => {
    stub = await startOpenAiStub({ port: 0, ttftMs: 4, tpotMs: 3 });
    writeFileSync(dataset, Array.from({ length: 24 }, (_, i) => `{"prompt": "p${i} a b", "max_tokens": ${3 + (i % 9)}}`).join('\n') + '\n');
    const common = ['run', '--sut', 'openai', '--url', stub.url, '--model', 'loadgen-stub', '--dataset', dataset, '--scenario', 'Server',
      '--set', 'server_target_qps=60', '--set', 'min_duration_ms=600', '--set', 'min_query_count=30', '--no-progress', '--quiet'];
    interactive = join(dir, 'interactive');
    plain = join(dir, 'plain');
    // An Interactive model (target_latency 0, TTFT/TPOT limits), and a run with no config files (LoadGen's default target latency).
    const [a, b] = await Promise.all([
      loadgen([...common, '--config-model', 'llama3_1-8b-interactive', '--outdir', interactive]),
      loadgen([...common, '--outdir', plain]),
    ]);
    for (const r of [a, b]) {
      expect(r.stderr).toBe('');
      expect([0, 1]).toContain(r.status);
    }
  }, 120_000);
  afterAll(async () => {
    await stub.close();
  });

  it.each(['interactive', 'plain'])('%s: the token charts, and no end-to-end bound (the run is held to TTFT and TPOT)', (which) => {
    const outdir = which === 'interactive' ? interactive : plain;
    const html = readFileSync(join(outdir, 'report.html'), 'utf8');
    for (const id of TOKEN_CHARTS) expect(html, id).toContain(`id="${id}"`);
    const { boundNs, data } = clientData(html);
    expect(boundNs).toBe(0);
    expect(data.use_token_latencies).toBe(true);
    const tokens = data.series!.tokens!;
    expect(tokens.ttft!.count).toBe(data.series!.completed_samples);
    expect(tokens.output_tokens!.min).toBeGreaterThanOrEqual(3);
    expect(tokens.output_tokens!.max).toBeLessThanOrEqual(11);
    expect(data.sut_report?.distributions?.['inter-token-latency']?.count).toBeGreaterThan(0);
    expect(html).toContain('No end-to-end bound: a token run is held to its TTFT and TPOT limits');
    if (which === 'interactive') {
      expect([tokens.ttft_limit_ns, tokens.tpot_limit_ns]).toEqual([500e6, 30e6]);
      expect(data.token_limits?.model).toBe('llama3_1-8b-interactive');
      expect(html).toMatch(/<th>Goodput<\/th><td>\d+\.\d\d % \(\d+ of \d+ issued samples within both limits\)<\/td>/);
      expect(html).toContain('<th>Limits of</th><td>llama3_1-8b-interactive, Interactive</td>');
    } else {
      // LoadGen's defaults (100 ms each): still the bounds of a Server token run, and said to be the defaults.
      expect(data.target_latency_ns).toBeGreaterThan(0);
      expect(data.token_limits?.ttftSource).toBe("LoadGen's default (no config line or setting gave it)");
    }
  });

  it.skipIf(skipBrowser)('draws every chart in headless Chromium, readable at 1200 and 800 px (no overflow, no console error)', async () => {
    if (chromium === undefined) throw new Error('no Chromium: apt-get install chromium, or set CHROME_PATH');
    const puppeteer = await import('puppeteer-core');
    const browser = await puppeteer.launch({
      executablePath: chromium, headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', `--user-data-dir=${mkdtempSync(join(tmpdir(), 'loadgen-chromium-'))}`],
    });
    try {
      for (const width of [1200, 800]) {
        const page = await browser.newPage();
        await page.setViewport({ width, height: 900 });
        const problems: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error') problems.push(m.text());
        });
        page.on('pageerror', (e) => problems.push(String(e)));
        await page.goto(pathToFileURL(join(interactive, 'report.html')).href, { waitUntil: 'load' });
        await page.waitForSelector('body[data-charts]');
        expect(problems).toEqual([]);
        const charts = await page.evaluate(() => Array.from(document.querySelectorAll('.plot')).map((el) => {
          const canvas = el.querySelector('canvas');
          let inked = 0;
          if (canvas !== null && canvas.width > 0) {
            const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
            for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) inked++;
          }
          const box = el.getBoundingClientRect();
          return { id: el.id, rendered: el.getAttribute('data-rendered'), right: box.right, parent: el.parentElement!.getBoundingClientRect().right, inked };
        }));
        for (const id of TOKEN_CHARTS) expect(charts.map((c) => c.id)).toContain(id);
        for (const c of charts) {
          expect(c.rendered, c.id).toBe('1');
          expect(c.inked, c.id).toBeGreaterThan(300);
          // Each chart inside its box (a pair's half at 1200 px, a full row at 800 px).
          expect(c.right, c.id).toBeLessThanOrEqual(c.parent + 1);
        }
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        if (process.env.LOADGEN_REPORT_SCREENSHOT !== undefined) {
          await page.screenshot({ path: `${process.env.LOADGEN_REPORT_SCREENSHOT}-${width}.png` as `${string}.png`, fullPage: true });
        }
        await page.close();
      }
    } finally {
      await browser.close();
    }
  }, 120_000);
});
