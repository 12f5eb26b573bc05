/**
 * The fault-injection suite through `loadgen run`: the exit code, stdout
 * (text and --json) and stderr of runs against a server that fails every
 * request (issue item 2), one whose errors quote pieces of the API key
 * (item 4), and a mapping module whose async response() rejects (item 6).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { tempDir } from '../helpers.js';
import { KEY_ENV, runCli } from './cli.js';
import { API_KEY, detailRecords, filesUnder, impossibleFigures, keyPieceIn, mapModule, OPENAI_DATASET, runTogether, SAMPLES, TRANSPORTS } from './harness.js';
import { FAULT_MODEL, HTTP_FAULTS, response, startFaultServer, type FaultServer, type FaultServerOptions } from './fault-server.js';

const EXIT_INVALID = 1;

const servers: FaultServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function server(options: FaultServerOptions): Promise<FaultServer> {
  const s = await startFaultServer(options);
  servers.push(s);
  return s;
}

const openai = (url: string): string[] => ['--sut', 'openai', '--url', url, '--model', FAULT_MODEL, '--dataset', OPENAI_DATASET, '--api-key-env', KEY_ENV];
const quick = ['--set', 'min_duration_ms=0', '--set', 'min_query_count=16', '--no-progress'];

/**
 * What every CLI case checks of its outdir: the detail log JSON, the summary
 * possible, no piece of the key. `completedOk`: the samples that completed
 * (undefined: some, not counted here).
 */
function checkOutdir(outdir: string, completedOk?: number): void {
  expect.soft(existsSync(join(outdir, 'mlperf_log_summary.txt')), 'summary written').toBe(true);
  if (!existsSync(join(outdir, 'mlperf_log_summary.txt'))) return;
  const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
  expect.soft(summary).toMatch(/Result is : INVALID/);
  expect.soft(impossibleFigures(summary, completedOk ?? 1), 'impossible figures').toEqual([]);
  expect.soft(runTogether(summary), 'sentences run together').toEqual([]);
  detailRecords(outdir);
  for (const file of filesUnder(outdir)) expect.soft(keyPieceIn(readFileSync(file, 'latin1')), file).toBeUndefined();
}

describe('loadgen run against faults', () => {
  it.each(TRANSPORTS)('item 2: every request 500, --json (%s): exit 1, every figure possible, no key', async (transport) => {
    const s = await server({ protocol: 'openai-stream', fault: HTTP_FAULTS['status-500'] });
    const outdir = tempDir('loadgen-fault-cli-');
    const run = await runCli([...openai(s.url), '--transport', transport, '--scenario', 'Offline', ...quick, '--json', '--outdir', outdir]);
    expect.soft(run.code, run.stderr).toBe(EXIT_INVALID);
    expect.soft(run.stderr.trim(), 'stderr').toBe('');
    const result = JSON.parse(run.stdout) as { metric: { value: number }; counts: { issuedSamples: number }; errors: { failedSamples: { total: number; byKind: Record<string, number> } }; invalidReasons: string[] };
    expect.soft(result.errors.failedSamples.byKind.http_status, 'every sample http_status').toBe(result.counts.issuedSamples);
    expect.soft(result.metric.value, 'samples per second of nothing').toBe(0);
    expect.soft(runTogether(result.invalidReasons.join('\n')), 'reasons run together').toEqual([]);
    expect.soft(keyPieceIn(run.stdout + run.stderr)).toBeUndefined();
    checkOutdir(outdir, 0);
  });

  it.each(TRANSPORTS)('item 4: a 401 quoting the key but its last 6 characters (%s): no 8 characters of it in stdout, stderr or any file', async (transport) => {
    const quoting = (): { write: Buffer }[] => [
      {
        write: response(401, 'Unauthorized', { 'content-type': 'application/json' }, JSON.stringify({ error: { message: `Incorrect API key provided: ${API_KEY.slice(0, -6)}******. Yours ends ${API_KEY.slice(-8)}.`, code: 'invalid_api_key' } })),
      },
    ];
    const s = await server({ protocol: 'openai-stream', fault: quoting, faulted: (r) => r.sample % 2 === 1 });
    const outdir = tempDir('loadgen-fault-cli-');
    const run = await runCli([...openai(s.url), '--transport', transport, '--scenario', 'SingleStream', ...quick, '--outdir', outdir]);
    expect.soft(run.code, run.stderr).toBe(EXIT_INVALID);
    expect.soft(keyPieceIn(run.stdout), 'stdout').toBeUndefined();
    expect.soft(keyPieceIn(run.stderr), 'stderr').toBeUndefined();
    expect.soft(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toContain('HTTP 401');
    checkOutdir(outdir);
  });

  it.each(TRANSPORTS)('item 6: an async response() that rejects (%s): the run goes on, exit 1, every log written', async (transport) => {
    const rejecting = mapModule(
      'async-reject',
      `export const totalSampleCount = ${SAMPLES};
export function request(index) { return { method: 'POST', path: '/infer', body: { x: index } }; }
export async function response({ index }) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  if (index % 2 === 1) throw new Error('async mapping failed');
  return { data: 'ok-' + index };
}
`,
    );
    const s = await server({ protocol: 'http' });
    const outdir = tempDir('loadgen-fault-cli-');
    const run = await runCli(['--sut', 'http', '--url', s.url, '--request', rejecting, '--api-key-env', KEY_ENV, '--transport', transport, '--scenario', 'SingleStream', ...quick, '--json', '--outdir', outdir]);
    expect.soft(run.code, run.stderr).toBe(EXIT_INVALID);
    expect.soft(run.stderr, 'stderr').not.toMatch(/unhandled|async mapping failed/i);
    let failed: Record<string, number> = {};
    try {
      failed = (JSON.parse(run.stdout) as { errors: { failedSamples: { byKind: Record<string, number> } } }).errors.failedSamples.byKind;
    } catch {
      expect.soft(run.stdout.slice(0, 200), 'stdout is the --json result').toMatch(/^\{/);
    }
    expect.soft(failed.malformed_response ?? 0, 'the rejected samples failed as malformed_response').toBeGreaterThan(0);
    const detail = join(outdir, 'mlperf_log_detail.txt');
    expect.soft(existsSync(detail) ? readFileSync(detail, 'utf8') : '', 'the detail log names the rejection').toMatch(/async mapping failed/);
    checkOutdir(outdir);
  });
});
