/**
 * The fault-injection suite, huge bodies (issue item 10): a 100 MB answer,
 * and four at once, fail their samples as malformed_response (over the 64
 * MiB limit) and the client's memory stays bounded. The CLI runs in a child
 * process whose peak RSS (VmHWM) is compared with the same run against a
 * server of small answers; the server runs here and writes its 100 MB from
 * one reused buffer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { tempDir } from '../helpers.js';
import { barrier, FAULT_MODEL, head, startFaultServer, type Fault, type FaultProtocol, type FaultServer } from './fault-server.js';
import { KEY_ENV, runCli } from './cli.js';
import { HTTP_MAP, keyPieceIn, OPENAI_DATASET, TRANSPORTS } from './harness.js';

const MB = 1024 * 1024;
const HUGE = 100 * MB;
/** The protocols' limit on one answer's body. */
const LIMIT = 64 * MB;
/**
 * Growth of the peak RSS a run may show over its small-answer twin: at most
 * the limit per answer under way (what a reader may keep before it knows the
 * body is too long), and 64 MB for the rest; never the bodies themselves.
 */
const rssBound = (answers: number): number => answers * LIMIT + 64 * MB;

/** 100 MB answers whose last byte waits for every answer to have sent the rest: all of them under way at once. */
const hugeBodies = (answers: number): Fault => {
  const together = barrier(answers);
  return (_r, good) => [
    { write: head(200, 'OK', { 'content-type': good.contentType, 'content-length': String(HUGE) }) },
    { filler: HUGE - 1 },
    { until: together },
    { filler: 1 },
  ];
};

const servers: FaultServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

type Protocol = Extract<FaultProtocol, 'openai-whole' | 'http'>;

async function run(protocol: Protocol, transport: string, fault: Fault | undefined, queries: 1 | 4) {
  const server = await startFaultServer({ protocol, ...(fault !== undefined ? { fault } : {}) });
  servers.push(server);
  const outdir = tempDir('loadgen-fault-memory-');
  const sut =
    protocol === 'openai-whole'
      ? ['--sut', 'openai', '--no-stream', '--model', FAULT_MODEL, '--dataset', OPENAI_DATASET]
      : ['--sut', 'http', '--request', HTTP_MAP];
  // Offline issues every query at once: four bodies arrive together.
  const scenario = ['--scenario', 'Offline', '--set', `min_query_count=${queries}`, '--set', 'min_duration_ms=0', '--set', `offline_expected_qps=${queries}`];
  const cli = await runCli([...sut, '--url', server.url, '--transport', transport, '--api-key-env', KEY_ENV, ...scenario, '--no-progress', '--json', '--outdir', outdir]);
  return { cli, outdir };
}

describe('item 10: 100 MB answers', () => {
  const cases = (['openai-whole', 'http'] as const).flatMap((protocol) =>
    TRANSPORTS.flatMap((transport) => [[protocol, transport, 1] as const, ...(protocol === 'openai-whole' ? [[protocol, transport, 4] as const] : [])]),
  );
  it.each(cases)('%s over %s, %i at once: malformed_response, RSS bounded', async (protocol, transport, queries) => {
    // The twin with small answers runs beside it: its peak is the baseline.
    const [base, huge] = await Promise.all([run(protocol, transport, undefined, queries), run(protocol, transport, hugeBodies(queries), queries)]);
    // The only line: the mapping module's try of sample 0 before the run met the same 100 MB answer (the run goes on).
    const warnings = huge.cli.stderr.split('\n').filter((line) => line.trim() !== '' && !line.includes('LOADGEN_HTTP_MAP_UNCHECKED') && !line.includes('--trace-warnings'));
    expect(warnings, 'stderr').toEqual([]);
    if (protocol === 'http') expect(huge.cli.stderr).toMatch(/were not tried before the run: .*answered with more than 67108864 bytes/);
    const result = JSON.parse(huge.cli.stdout) as { counts: { issuedSamples: number }; errors: { failedSamples: { total: number; byKind: Record<string, number> } } };
    expect.soft(huge.cli.code, 'exit code: INVALID').toBe(1);
    expect.soft(result.errors.failedSamples.byKind.malformed_response, `failed ${JSON.stringify(result.errors.failedSamples)}`).toBe(result.counts.issuedSamples);
    const growth = huge.cli.peakRss - base.cli.peakRss;
    const bound = rssBound(queries);
    expect.soft(base.cli.peakRss, 'peak RSS read').toBeGreaterThan(0);
    expect.soft(growth, `peak RSS ${(huge.cli.peakRss / MB).toFixed(0)} MB vs ${(base.cli.peakRss / MB).toFixed(0)} MB with small answers`).toBeLessThan(bound);
    const summary = join(huge.outdir, 'mlperf_log_summary.txt');
    expect.soft(existsSync(summary), 'summary written').toBe(true);
    for (const text of [huge.cli.stdout, huge.cli.stderr, existsSync(summary) ? readFileSync(summary, 'utf8') : '']) expect.soft(keyPieceIn(text)).toBeUndefined();
  });
});
