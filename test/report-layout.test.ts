/// <reference lib="dom" />
/**
 * report.html reads at a glance: seven real runs through the CLI (a Server,
 * an Offline, a SingleStream and a MultiStream run of the null SUT, an
 * Offline run of the demo, a network run against the demo-cnn KServe server
 * and a token run against the OpenAI stub on five nodes, all on 127.0.0.1),
 * each page opened in headless Chromium at 1,400 and 800 px and checked by
 * test/report-layout-check.ts: no chart label over another, over the plot
 * area or cut at the edge; tables that fit or scroll in their own box, their
 * names on at most two lines; no sideways scroll; no console error.
 * LOADGEN_REPORT_SHOTS=<dir> keeps a full-page screenshot of each
 * (<run>-<width>.png) to look at.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startKServeServer } from '../lib/serve/kserve-server.js';
import { startOpenAiStub } from '../lib/serve/openai-stub.js';
import type { RunningServer } from '../lib/serve/server.js';
import { type CliRun, runCli, tempDir } from './helpers.js';
import { installTextRecorder, layoutProblems } from './report-layout-check.js';

const chromium = [process.env.CHROME_PATH, process.env.PUPPETEER_EXECUTABLE_PATH, '/usr/bin/chromium'].find((p) => p !== undefined && p !== '' && existsSync(p));
const skipBrowser = chromium === undefined && !process.env.CI;
if (skipBrowser) console.warn('report-layout.test.ts: skipping: no Chromium (apt-get install chromium, or set CHROME_PATH)');
const shots = process.env.LOADGEN_REPORT_SHOTS;

function loadgen(args: string[]): Promise<CliRun> {
  return runCli(args, { timeoutMs: 120_000 });
}

/** The run's report.html, from the "Report written to" line. */
async function run(args: string[]): Promise<string> {
  const r = await loadgen(['run', ...args, '--no-progress']);
  // VALID or INVALID (a busy machine may miss a bound): the page is what is checked.
  expect([0, 1], r.stderr).toContain(r.status);
  const path = /(?:Report written to |report: )(\S*report\.html)\n/.exec(r.stdout)?.[1];
  expect(path, r.stdout).toBeDefined();
  return path!;
}

describe.skipIf(skipBrowser)('report.html at a glance (headless Chromium, 1400 and 800 px)', () => {
  const dir = tempDir('loadgen-report-layout-');
  const reports = new Map<string, string>();
  const servers: RunningServer[] = [];

  beforeAll(async () => {
    const kserve = await startKServeServer({ model: 'demo-cnn', host: '127.0.0.1', port: 0, workers: 1 });
    servers.push(kserve);
    // Five nodes: the per-node table has more rows than it turns for (it scrolls in its box, names kept in view).
    const stubs = await Promise.all(Array.from({ length: 5 }, () => startOpenAiStub({ port: 0, ttftMs: 6, tpotMs: 2 })));
    servers.push(...stubs);
    const prompts = join(dir, 'prompts.jsonl');
    writeFileSync(prompts, Array.from({ length: 64 }, (_, i) => `{"prompt": "p${i} a b c", "max_tokens": ${4 + (i % 29)}}`).join('\n') + '\n');
    const short = ['--set', 'min_duration_ms=1500', '--set', 'min_query_count=100'];
    // One at a time: the machine's cores are shared, and each run's figures are its own.
    reports.set('server', await run(['--sut', 'null', '--scenario', 'Server', '--set', 'server_target_qps=2000', ...short, '--outdir', join(dir, 'server')]));
    reports.set('offline-null', await run(['--sut', 'null', '--scenario', 'Offline', '--set', 'min_duration_ms=300', '--outdir', join(dir, 'offline-null')]));
    reports.set('offline', await run(['--scenario', 'Offline', '--set', 'min_duration_ms=1000', '--outdir', join(dir, 'offline')]));
    reports.set('singlestream', await run(['--sut', 'null', '--scenario', 'SingleStream', ...short, '--outdir', join(dir, 'singlestream')]));
    reports.set('multistream', await run(['--sut', 'null', '--scenario', 'MultiStream', ...short, '--outdir', join(dir, 'multistream')]));
    reports.set('network', await run(['--sut', 'kserve', '--url', kserve.url, '--model', 'demo-cnn', '--scenario', 'Server',
      '--set', 'server_target_qps=150', ...short, '--outdir', join(dir, 'network')]));
    reports.set('token', await run(['--sut', 'openai', ...stubs.flatMap((stub) => ['--url', stub.url]), '--model', 'loadgen-stub', '--dataset', prompts,
      '--config-model', 'llama3_1-8b-interactive', '--scenario', 'Server', '--set', 'server_target_qps=50', ...short, '--outdir', join(dir, 'token')]));
  }, 240_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it.each(['server', 'offline-null', 'offline', 'singlestream', 'multistream', 'network', 'token'])('%s: no label over another, over a plot or cut; tables in their box', async (name) => {
    if (chromium === undefined) throw new Error('no Chromium: apt-get install chromium, or set CHROME_PATH');
    const puppeteer = await import('puppeteer-core');
    const browser = await puppeteer.launch({
      executablePath: chromium, headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', `--user-data-dir=${mkdtempSync(join(tmpdir(), 'loadgen-chromium-'))}`],
    });
    try {
      for (const width of [1400, 800]) {
        const page = await browser.newPage();
        await page.setViewport({ width, height: 900 });
        const errors: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error') errors.push(m.text());
        });
        page.on('pageerror', (e) => errors.push(String(e)));
        await page.evaluateOnNewDocument(installTextRecorder);
        await page.goto(pathToFileURL(reports.get(name)!).href, { waitUntil: 'load' });
        await page.waitForSelector('body[data-charts]');
        expect(errors, `${name} at ${width} px`).toEqual([]);
        expect(await page.evaluate(() => document.querySelectorAll('.plot').length)).toBeGreaterThanOrEqual(6);
        if (shots !== undefined) {
          mkdirSync(shots, { recursive: true });
          await page.screenshot({ path: join(shots, `${name}-${width}.png`) as `${string}.png`, fullPage: true });
        }
        expect(await page.evaluate(layoutProblems), `${name} at ${width} px`).toEqual([]);
        await page.close();
      }
    } finally {
      await browser.close();
    }
  }, 120_000);
});
