/**
 * The fault-injection suite, what a well-framed 2xx carries: SSE oddities
 * and streams without text (issue item 1), whole completions that cannot be
 * read, KServe binary outputs (item 12), and mapping modules whose async
 * response() rejects or resolves (item 6), on both transports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { KSERVE_FAULTS, SSE_FAULTS, WHOLE_FAULTS, type Fault, type FaultProtocol } from './fault-server.js';
import { checkOutcomes, checkRunOutputs, mapModule, runCase, SAMPLES, singleStream, TRANSPORTS, type CaseRun, type Outcome } from './harness.js';

interface Row {
  name: string;
  protocol: FaultProtocol;
  fault: Fault;
  expected: Outcome;
  /** Which samples get the fault (default: the odd ones when it fails them, else all). */
  faulted?: (sample: number) => boolean;
  /** More checks of the run. */
  check?: (run: CaseRun) => void;
}

const odd = (sample: number): boolean => sample % 2 === 1;
const all = (): boolean => true;

/** A token-latency run that completed its samples timed their first tokens too. */
function firstTokensTimed(run: CaseRun): void {
  const tokens = run.result.tokens;
  expect(tokens, 'token results').toBeDefined();
  expect(tokens!.errors.missingFirstToken, 'samples without a first token').toBe(0);
  expect(tokens!.ttftNs!.min, 'the shortest TTFT').toBeGreaterThan(0);
  expect(tokens!.ttftNs!.max, 'the longest TTFT').toBeLessThanOrEqual(run.result.latencyNs.max);
}

/** No TTFT or TPOT figure is negative or beyond any latency of the run. */
function tokenFiguresPossible(run: CaseRun): void {
  const tokens = run.result.tokens;
  if (tokens?.ttftNs === undefined) return;
  for (const [name, figures] of [['ttft', tokens.ttftNs], ['tpot', tokens.tpotNs]] as const) {
    if (figures === undefined) continue;
    for (const value of [figures.min, figures.max, figures.mean, ...Object.values(figures.percentiles)]) {
      expect(Number.isFinite(value) && value >= 0, `${name} figure ${value}`).toBe(true);
    }
  }
}

const ROWS: Row[] = [
  // SSE that is fine however it is cut, ended or decorated.
  { name: 'sse-split-every-byte', protocol: 'openai-stream', fault: SSE_FAULTS['sse-split-every-byte'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-chunked-split-events', protocol: 'openai-stream', fault: SSE_FAULTS['sse-chunked-split-events'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-crlf', protocol: 'openai-stream', fault: SSE_FAULTS['sse-crlf'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-cr', protocol: 'openai-stream', fault: SSE_FAULTS['sse-cr'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-comments-and-unknown-fields', protocol: 'openai-stream', fault: SSE_FAULTS['sse-comments-and-unknown-fields'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-no-final-blank-line', protocol: 'openai-stream', fault: SSE_FAULTS['sse-no-final-blank-line'], expected: 'ok', check: firstTokensTimed },
  // Item 1: generated output of any kind is a first token; none at all is no_first_token.
  { name: 'sse-reasoning-only', protocol: 'openai-stream', fault: SSE_FAULTS['sse-reasoning-only'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-tool-calls-only', protocol: 'openai-stream', fault: SSE_FAULTS['sse-tool-calls-only'], expected: 'ok', check: firstTokensTimed },
  { name: 'sse-usage-no-text (every response)', protocol: 'openai-stream', fault: SSE_FAULTS['sse-usage-no-text'], expected: 'no_first_token', faulted: all, check: tokenFiguresPossible },
  { name: 'sse-usage-no-text (one in five)', protocol: 'openai-stream', fault: SSE_FAULTS['sse-usage-no-text'], expected: 'no_first_token', faulted: (s) => s % 5 === 0, check: tokenFiguresPossible },
  // SSE the protocol cannot read.
  { name: 'sse-missing-done', protocol: 'openai-stream', fault: SSE_FAULTS['sse-missing-done'], expected: 'malformed_response' },
  { name: 'sse-event-error', protocol: 'openai-stream', fault: SSE_FAULTS['sse-event-error'], expected: 'malformed_response' },
  { name: 'sse-error-object', protocol: 'openai-stream', fault: SSE_FAULTS['sse-error-object'], expected: 'malformed_response' },
  { name: 'sse-data-not-json', protocol: 'openai-stream', fault: SSE_FAULTS['sse-data-not-json'], expected: 'malformed_response' },
  { name: 'sse-not-sse', protocol: 'openai-stream', fault: SSE_FAULTS['sse-not-sse'], expected: 'malformed_response' },
  // Whole completions the protocol cannot read.
  { name: 'json-not-json', protocol: 'openai-whole', fault: WHOLE_FAULTS['json-not-json'], expected: 'malformed_response' },
  { name: 'json-error-object', protocol: 'openai-whole', fault: WHOLE_FAULTS['json-error-object'], expected: 'malformed_response' },
  { name: 'json-no-choices', protocol: 'openai-whole', fault: WHOLE_FAULTS['json-no-choices'], expected: 'malformed_response' },
  // Item 12: KServe binary outputs.
  { name: 'kserve-binary-byte', protocol: 'kserve', fault: KSERVE_FAULTS['kserve-binary-byte'], expected: 'ok', check: (run) => expect(accuracyData(run.outdir)).toEqual(new Set(['41'])) },
  { name: 'kserve-binary-whitespace', protocol: 'kserve', fault: KSERVE_FAULTS['kserve-binary-whitespace'], expected: 'ok', check: (run) => expect(accuracyData(run.outdir)).toEqual(new Set(['0A'])) },
  { name: 'kserve-header-length-999999', protocol: 'kserve', fault: KSERVE_FAULTS['kserve-header-length-999999'], expected: 'malformed_response' },
  { name: 'kserve-error-field', protocol: 'kserve', fault: KSERVE_FAULTS['kserve-error-field'], expected: 'malformed_response' },
];

/** The distinct data (hex) of the accuracy log's records. */
function accuracyData(outdir: string): Set<string> {
  const records = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { data: string }[];
  return new Set(records.map((r) => r.data.toUpperCase()));
}

describe.each(ROWS)('$name', (row) => {
  it.each(TRANSPORTS)(`${row.protocol} over %s`, async (transport) => {
    const faulted = row.faulted ?? (row.expected === 'ok' ? all : odd);
    const run = await runCase({
      protocol: row.protocol,
      transport,
      server: { fault: row.fault, faulted: (request) => faulted(request.sample) },
      settings: singleStream(16),
    });
    checkOutcomes(run, row.expected, faulted);
    checkRunOutputs(run);
    row.check?.(run);
  });
});

// Item 6: a mapping module's async response(), rejecting for the odd samples and resolving data for the even.
const ASYNC_MAP = mapModule(
  'async-response',
  `export const totalSampleCount = ${SAMPLES};
export function request(index) { return { method: 'POST', path: '/infer', body: { x: index } }; }
export async function response({ index }) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  if (index % 2 === 1) throw new Error('the mapping rejected sample ' + index);
  return { data: 'mapped-' + index };
}
`,
);

describe('http-map: an async response()', () => {
  it.each(TRANSPORTS)('rejections fail their samples as malformed_response, resolved data is logged (%s)', async (transport) => {
    const run = await runCase({ protocol: 'http', transport, request: ASYNC_MAP, server: {}, settings: singleStream(16) });
    checkOutcomes(run, 'malformed_response', odd);
    checkRunOutputs(run);
    const records = JSON.parse(readFileSync(join(run.outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
    for (const r of records) expect(Buffer.from(r.data, 'hex').toString('utf8'), `sample ${r.qsl_idx}`).toBe(`mapped-${r.qsl_idx}`);
    const detail = readFileSync(join(run.outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toContain('the mapping rejected sample');
  });
});
