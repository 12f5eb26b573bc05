/**
 * `loadgen run` with user code that hangs: every promise a module hands over
 * is bounded by a timeout whose error names the function (exit 2 before the
 * run), and a command whose event loop runs dry before it finished never
 * exits as if it had (exit 3, saying what it waited for). Also the network
 * options checked before anything connects. The CLI runs in a child process.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadNative } from '../lib/native/index.js';
import { nodeHandler, testServers } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const server = testServers();
const dir = tempDir('loadgen-hangs-');

function module(name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, lines.join('\n'));
  return file;
}

const tla = module('tla-hangs.mjs', [
  'await new Promise(() => {});',
  'export const totalSampleCount = 4;',
  "export function request() { return { path: '/infer' }; }",
  'export function createSut() { return { name: "x", issueQuery() {} }; }',
  'export function createQsl() { return { name: "q", totalSampleCount: 4, performanceSampleCount: 4, loadSamplesToRam() {}, unloadSamplesFromRam() {} }; }',
]);
const createHangs = module('create-hangs.mjs', [
  'export function createSut() { return new Promise(() => {}); }',
  'export function createQsl() { return { name: "q", totalSampleCount: 4, performanceSampleCount: 4, loadSamplesToRam() {}, unloadSamplesFromRam() {} }; }',
]);
const nameHangs = module('name-hangs.mjs', [
  'export const totalSampleCount = 4;',
  "export function request() { return { path: '/infer' }; }",
  'export function name() { return new Promise(() => {}); }',
]);
const responseHangs = module('response-hangs.mjs', [
  'export const totalSampleCount = 8;',
  "export function request(i) { return { path: '/infer', body: String(i) }; }",
  "export async function name(node) { return Buffer.from((await node.request('GET', '/name')).body).toString(); }",
  // Sample 0 (tried before the run) answers; the others never do.
  "export function response({ index }) { return index === 0 ? { data: 'ok' } : new Promise(() => {}); }",
]);

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runCli(args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

const short = ['--scenario', 'Offline', '--mode', 'AccuracyOnly', '--no-progress'];

describe('user modules that never settle', () => {
  it('--sut module whose top-level await never settles: exit 2 naming the module and the timeout', async () => {
    const run = await runCli(['run', '--sut', tla, '--module-timeout-ms', '300', '--outdir', tempDir()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--sut ${tla}: importing the module (its top-level await) did not settle within 300 ms`);
    expect(run.ms).toBeLessThan(15_000);
  });

  it('with no time limit the command never exits as if it had run: exit 3, saying what it waited for', async () => {
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', tla, '--module-timeout-ms', '0', '--outdir', outdir]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`loadgen: the command did not complete: nothing was left to run while it waited for --sut ${tla}: importing the module (its top-level await)`);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(false);
  });

  it('--sut module whose createSut() never settles: exit 2 naming createSut()', async () => {
    // 3 s: the module's own import must fit in it on a loaded machine; only createSut() hangs.
    const run = await runCli(['run', '--sut', createHangs, '--module-timeout-ms', '3000', '--outdir', tempDir()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--sut ${createHangs}: createSut() did not settle within 3000 ms`);
  });

  it('--request module whose top-level await never settles: exit 2', async () => {
    const node = await server(nodeHandler('n'));
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', tla, '--module-timeout-ms', '300', ...short, '--outdir', tempDir()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--request ${tla}: the module did not finish loading within 300 ms`);
  });

  it('name() that never settles: exit 2 naming name() and the probe timeout', async () => {
    const node = await server(nodeHandler('n'));
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', nameHangs, '--probe-timeout-ms', '300', ...short, '--outdir', tempDir()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/name\(\) did not settle within 300 ms \(the probe timeout\)/);
    expect(node.hits.get('/infer')).toBeUndefined();
  });

  it('an async response() that never settles during the run: those samples fail as timeout, the logs are written (exit 1)', async () => {
    const node = await server(nodeHandler('n'));
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', responseHangs, '--request-timeout-ms', '300', ...short, '--outdir', outdir]);
    expect(run.code).toBe(1);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail.match(/Sample failed \(timeout\)/g)).toHaveLength(7);
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(true);
  });
});

describe('network options checked before anything connects (exit 2)', () => {
  const cases: [string, string[], RegExp][] = [
    ['port 0', ['--url', 'http://127.0.0.1:0'], /urls\[0\] 'http:\/\/127\.0\.0\.1:0': port 0 is not a port a node can listen on/],
    ['port out of range', ['--url', 'http://127.0.0.1:65536'], /port 65536 is not a port/],
    ['a scheme', ['--url', 'ws://127.0.0.1:1'], /scheme ws: is not supported/],
    ['credentials', ['--url', 'http://u:p4ssw0rd@127.0.0.1:1'], /credentials/],
    ['a probe timeout', ['--url', 'http://127.0.0.1:1', '--probe-timeout-ms', '0'], /--probe-timeout-ms must be an integer from 1 to 2147483647/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const run = await runCli(['run', '--sut', 'http', '--request', responseHangs, ...args, ...short, '--outdir', tempDir()]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toContain('p4ssw0rd');
    });
  }

  it('--module-timeout-ms only where a module is loaded', async () => {
    const run = await runCli(['run', '--sut', 'null', '--module-timeout-ms', '100', '--outdir', tempDir()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--module-timeout-ms applies only to a module/);
  });

  it.skipIf(!loadNative().nativeHttpAvailable)('--transport native --set dispatch=worker: exit 2 saying the workers send through undici', async () => {
    const node = await server(nodeHandler('n'));
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', join(repoRoot, 'test', 'fixtures', 'http-map.mjs'), '--transport', 'native', '--set', 'dispatch=worker', ...short, '--outdir', tempDir()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--transport native cannot serve --set dispatch=worker: dispatch workers send through their own undici pools/);
    expect(node.hits.get('/infer')).toBeUndefined();
  });
});
