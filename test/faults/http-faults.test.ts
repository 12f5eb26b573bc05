/**
 * The fault-injection suite, HTTP exchange: each fault of the table against
 * every protocol on both transports (the native one also with two client
 * threads). A fault is served to the odd samples
 * (the even ones get good answers) when it should fail them, to every sample
 * when they should complete; the kind is the same on both transports (the
 * failure taxonomy of docs/network-suts.md, "Several nodes, failures, timeouts").
 */
import { describe, expect, it } from 'vitest';

import { FAULT_PROTOCOLS, HTTP_FAULTS, type FaultProtocol, type HttpFaultName } from './fault-server.js';
import { checkOutcomes, checkRunOutputs, runCase, singleStream, THREADED_TRANSPORTS, type Outcome } from './harness.js';
import type { TestSettingsInput } from '../../lib/index.js';

interface Row {
  fault: HttpFaultName;
  /** The kind (or 'ok') for every protocol, or per protocol. */
  expected: Outcome | Record<FaultProtocol, Outcome>;
  queries?: number;
  requestTimeoutMs?: number;
  /** The protocols it runs on (default all). */
  protocols?: readonly FaultProtocol[];
  /** Where a transport cannot follow the taxonomy, its outcome and why (docs/network-suts.md's failure table says so too). */
  undici?: { expected: Outcome; why: string };
}

// An empty 2xx body: no stream, no completion, no outputs; a mapped API may take it.
const EMPTY_BODY: Record<FaultProtocol, Outcome> = { 'openai-stream': 'malformed_response', 'openai-whole': 'malformed_response', kserve: 'malformed_response', http: 'ok' };

const ROWS: Row[] = [
  { fault: 'good', expected: 'ok' },
  { fault: 'good-chunked', expected: 'ok' },
  // Closed or reset before the response was complete (after the one retry when no byte had come).
  { fault: 'reset-before-head', expected: 'connection' },
  { fault: 'close-before-head', expected: 'connection' },
  { fault: 'reset-mid-status-line', expected: 'connection' },
  { fault: 'partial-head-close', expected: 'connection' },
  { fault: 'reset-after-head', expected: 'connection' },
  { fault: 'reset-mid-body', expected: 'connection' },
  { fault: 'reset-mid-chunk', expected: 'connection' },
  { fault: 'close-mid-chunk', expected: 'connection' },
  { fault: 'content-length-larger-then-close', expected: 'connection' },
  // Not valid HTTP/1.1, or a body cut short of what the protocol reads.
  { fault: 'content-length-smaller', expected: 'malformed_response' },
  { fault: 'content-length-conflict', expected: 'malformed_response' },
  { fault: 'content-length-invalid', expected: 'malformed_response' },
  { fault: 'bare-lf-head', expected: 'malformed_response' },
  { fault: 'transfer-encoding-and-content-length', expected: 'malformed_response' },
  { fault: 'chunk-size-not-hex', expected: 'malformed_response' },
  { fault: 'chunk-missing-crlf', expected: 'malformed_response' },
  { fault: 'bad-status-line', expected: 'malformed_response' },
  { fault: 'not-http', expected: 'malformed_response' },
  { fault: 'header-without-colon', expected: 'malformed_response' },
  // Slow, interim, old-style or closing answers that are still answers.
  { fault: 'trickle', expected: 'ok', queries: 8 },
  {
    fault: '100-continue',
    expected: 'ok',
    undici: { expected: 'malformed_response', why: 'undici destroys the connection on a 100 Continue it did not ask for (RFC 9110 says skip it; the native client does)' },
  },
  { fault: '103-early-hints', expected: 'ok' },
  { fault: 'http10-close-delimited', expected: 'ok' },
  { fault: 'http11-close-delimited', expected: 'ok' },
  { fault: 'close-after-response', expected: 'ok' },
  // Final answers that are not 2xx (redirects are not followed).
  { fault: 'redirect-301', expected: 'http_status' },
  { fault: 'redirect-302', expected: 'http_status' },
  { fault: 'redirect-307', expected: 'http_status' },
  { fault: 'status-500', expected: 'http_status' },
  { fault: 'status-503', expected: 'http_status' },
  // 2xx without a body: the protocol decides.
  { fault: 'empty-200', expected: EMPTY_BODY },
  { fault: '204-no-content', expected: EMPTY_BODY },
  // No answer: the request timeout ends it.
  { fault: 'never-answers', expected: 'timeout', queries: 6, requestTimeoutMs: 400, protocols: ['openai-stream', 'http'] },
];

const odd = (sample: number): boolean => sample % 2 === 1;

describe.each(ROWS)('fault $fault', (row) => {
  const cases = (row.protocols ?? FAULT_PROTOCOLS).flatMap((protocol) => THREADED_TRANSPORTS.map((transport) => [protocol, transport] as const));
  it.each(cases)('%s over %s', async (protocol, transport) => {
    const expected = transport === 'undici' && row.undici !== undefined ? row.undici.expected : typeof row.expected === 'string' ? row.expected : row.expected[protocol];
    // Faults that fail a sample go to the odd samples only: the even ones must still complete.
    const faulted = expected === 'ok' ? () => true : odd;
    const run = await runCase({
      protocol,
      transport,
      server: { fault: HTTP_FAULTS[row.fault], faulted: (request) => faulted(request.sample) },
      settings: singleStream(row.queries ?? 16),
      requestTimeoutMs: row.requestTimeoutMs ?? 5_000,
    });
    checkOutcomes(run, expected, faulted);
    checkRunOutputs(run);
    if (expected === 'ok') expect(run.result.counts.issuedSamples).toBe(row.queries ?? 16);
  });
});

// Two client threads at a Server rate, several requests out at once: the issue thread writes a
// blocked reactor's requests, hands an awake one's over (native/http_client.h reactor_writes; against
// this Node server few are: native/test/test_http_sut.cc runs that path at 30k/s), and a reactor
// writes the queued ones as responses free connections. Faults still fail exactly the faulted
// samples, each once, with the same kinds; the summary's figures stay possible.
const SERVER_ROWS: { fault: HttpFaultName; expected: Outcome }[] = [
  { fault: 'good', expected: 'ok' },
  { fault: 'status-500', expected: 'http_status' },
  { fault: 'reset-mid-body', expected: 'connection' },
  { fault: 'close-after-response', expected: 'ok' },
];

describe.runIf(THREADED_TRANSPORTS.includes('native-2')).each(SERVER_ROWS)('fault $fault at 4,000 requests/s, two client threads', (row) => {
  it('fails the faulted samples only, each once, with the same kind', async () => {
    const faulted = row.expected === 'ok' ? () => true : odd;
    const run = await runCase({
      protocol: 'http',
      transport: 'native-2',
      connections: 8,
      server: { fault: HTTP_FAULTS[row.fault], faulted: (request) => faulted(request.sample) },
      settings: { scenario: 'Server', serverTargetQps: 4000, minQueryCount: 400, minDurationMs: 0, accuracyLogProbability: 1 } as TestSettingsInput,
    });
    checkOutcomes(run, row.expected, faulted);
    checkRunOutputs(run);
    const threads = run.stats.clientThreads ?? [];
    expect(threads).toHaveLength(2);
    for (const t of threads) expect(t.requestsWritten).toBeLessThanOrEqual(t.responses);
  });
});
