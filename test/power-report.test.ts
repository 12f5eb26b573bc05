// report.html of a run with power: the power-over-time chart drawn in
// headless Chromium (as test/report.test.ts does for the other charts).
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { createSyntheticQsl, startTest, writeReport } from '../lib/index.js';
import { delayedSut, tempDir } from './helpers.js';
import { installTextRecorder, layoutProblems } from './report-layout-check.js';

const chromium = [process.env.CHROME_PATH, process.env.PUPPETEER_EXECUTABLE_PATH, '/usr/bin/chromium']
  .find((path) => path !== undefined && path !== '' && existsSync(path));
const skipBrowser = chromium === undefined && !process.env.CI;

describe.skipIf(skipBrowser)('report.html with power, in headless Chromium', () => {
  it('draws the power chart beside the latency charts, with the tables, and no console errors', async () => {
    if (chromium === undefined) throw new Error('no Chromium found (CHROME_PATH, PUPPETEER_EXECUTABLE_PATH, /usr/bin/chromium)');
    const outdir = tempDir();
    const watts = join(tempDir(), 'watts.sh');
    const counter = join(tempDir(), 'count');
    writeFileSync(watts, `#!/bin/sh\nn=$(cat ${counter} 2>/dev/null || echo 0); echo $((n+1)) > ${counter}\necho $((20 + n % 7 * 5))\n`);
    chmodSync(watts, 0o755);
    await startTest(delayedSut(1), createSyntheticQsl(64),
      { scenario: 'SingleStream', minDurationMs: 300, minQueryCount: 100, singleStreamExpectedLatencyNs: 1_000_000 }, { outdir },
      { power: { source: 'command', command: watts, intervalMs: 20 } });
    const reportPath = writeReport(outdir);
    const puppeteer = await import('puppeteer-core');
    const browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--no-first-run', '--disable-dev-shm-usage', `--user-data-dir=${mkdtempSync(join(tmpdir(), 'loadgen-chromium-'))}`],
    });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1200, height: 900 });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${String(e)}`));
      await page.evaluateOnNewDocument(installTextRecorder);
      await page.goto(pathToFileURL(reportPath).href, { waitUntil: 'load' });
      await page.waitForSelector('body[data-charts]');
      expect(problems).toEqual([]);
      // power_begin and power_end labelled above the chart, no label over another (test/report-layout-check.ts).
      expect(await page.evaluate(layoutProblems)).toEqual([]);
      if (process.env.LOADGEN_REPORT_SHOTS !== undefined) {
        await (await page.$('#chart-power-time'))!.screenshot({ path: join(process.env.LOADGEN_REPORT_SHOTS, 'power-chart-1200.png') as `${string}.png` });
      }
      const charts = await page.evaluate(() => Array.from(document.querySelectorAll('.plot')).map((el) => {
        const canvas = el.querySelector('canvas');
        let inked = 0;
        if (canvas !== null && canvas.width > 0 && canvas.height > 0) {
          const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
          for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) inked++;
        }
        return { id: el.id, rendered: el.getAttribute('data-rendered'), inked };
      }));
      const ids = charts.map((c) => c.id);
      expect(ids.indexOf('chart-power-time')).toBe(ids.indexOf('chart-latency-time') + 1);
      const power = charts.find((c) => c.id === 'chart-power-time')!;
      expect(power.rendered).toBe('1');
      expect(power.inked).toBeGreaterThan(500);
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).toMatch(/Inferred results/);
      expect(text).toMatch(/Average power \(W\)/);
      expect(text).toMatch(/FLAGGED/);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
