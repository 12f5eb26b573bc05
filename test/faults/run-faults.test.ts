/**
 * The fault-injection suite, whole runs: a server that fails every request
 * in each scenario (issue item 2), FindPeakPerformance against failing and
 * shedding servers (item 3), error bodies quoting pieces of the API key
 * (item 4), servers that close connections or accept few (item 7), the
 * request timeout (item 11), answers before the request was sent whole.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { TestSettingsInput } from '../../lib/index.js';
import { HTTP_FAULTS, ok, response, type Fault } from './fault-server.js';
import {
  API_KEY,
  checkOutcomes,
  checkRunOutputs,
  completedOk,
  detailRecords,
  mapModule,
  runCase,
  SAMPLES,
  singleStream,
  TRANSPORTS,
} from './harness.js';

const all = (): boolean => true;
const odd = (sample: number): boolean => sample % 2 === 1;

/** The good answer after `ms`. */
const slow = (ms: number): Fault => (_r, good) => [{ wait: ms }, { write: ok(good) }];

// Small runs of each scenario, every completion logged.
const SCENARIOS: Record<'Offline' | 'Server' | 'SingleStream', TestSettingsInput> = {
  Offline: { scenario: 'Offline', offlineExpectedQps: 100, minQueryCount: 24, minDurationMs: 0, accuracyLogProbability: 1 } as TestSettingsInput,
  Server: { scenario: 'Server', serverTargetQps: 200, minQueryCount: 24, minDurationMs: 0, accuracyLogProbability: 1 } as TestSettingsInput,
  SingleStream: singleStream(16),
};

describe('item 2: a server that answers 500 to every request', () => {
  const cases = (['Offline', 'Server', 'SingleStream'] as const).flatMap((scenario) => TRANSPORTS.map((transport) => [scenario, transport] as const));
  it.each(cases)('%s over %s: every sample http_status, no impossible figure, the log JSON, the reasons sentences', async (scenario, transport) => {
    const run = await runCase({ protocol: 'openai-stream', transport, server: { fault: HTTP_FAULTS['status-500'] }, settings: SCENARIOS[scenario] });
    checkOutcomes(run, 'http_status', all);
    checkRunOutputs(run);
    const { result } = run;
    expect(completedOk(result)).toBe(0);
    expect(result.valid).toBe(false);
    // The headline figure: a rate of nothing is 0; a latency of nothing is no figure at all.
    expect(Number.isFinite(result.metric.value) && result.metric.value >= 0 && result.metric.value < 1e15, `metric ${result.metric.name} = ${result.metric.value}`).toBe(true);
    if (scenario !== 'SingleStream') expect(result.metric.value, result.metric.name).toBe(0);
    expect(result.checks.perfConstraintsMet, 'performance constraints with nothing completed').toBe(false);
    // Every number the detail log holds is a JSON number (no nan, no inf).
    for (const record of detailRecords(run.outdir)) {
      if (typeof record.value === 'number') expect(Number.isFinite(record.value), String(record.key)).toBe(true);
    }
  });
});

/** A fault that answers 503 at once beyond `limit` requests in flight, and otherwise the good answer after `serviceMs`. */
const shedding = (limit: number, serviceMs: number): Fault => (request, good) =>
  request.inFlight >= limit ? [{ write: response(503, 'Service Unavailable', { 'content-type': 'text/plain' }, 'overloaded') }] : [{ wait: serviceMs }, { write: ok(good) }];

const FIND_PEAK: TestSettingsInput = {
  scenario: 'Server',
  mode: 'FindPeakPerformance',
  serverTargetQps: 10,
  serverTargetLatencyNs: 500_000_000,
  minDurationMs: 200,
  minQueryCount: 8,
  serverFindPeakQpsDecimalsOfPrecision: 0,
} as TestSettingsInput;

// A search that has not ended by then would not end by itself (before the fix it doubled to 40,960 QPS within 15 s).
const FIND_PEAK_STOP_MS = 10_000;

describe('item 3: FindPeakPerformance against servers that fail', () => {
  it.each(TRANSPORTS)('the 500 server: the search ends by itself with no peak (%s)', async (transport) => {
    const run = await runCase({ protocol: 'http', transport, server: { fault: HTTP_FAULTS['status-500'] }, settings: FIND_PEAK, stopAfterMs: FIND_PEAK_STOP_MS });
    expect(run.result.interrupted, 'the search ended by itself').toBeUndefined();
    expect(run.result.findPeak!.peakQps, `trials ${JSON.stringify(run.result.findPeak!.trials.map((t) => t.targetQps))}`).toBe(0);
    expect(run.result.valid).toBe(false);
    checkRunOutputs(run, { oneSeries: false });
  });

  it.each(TRANSPORTS)('a server shedding load beyond 4 in flight (capacity 80/s): no peak above it (%s)', async (transport) => {
    // 4 requests of 50 ms at a time: at most 80 answered a second without a 503.
    const capacity = 4 / 0.05;
    const run = await runCase({ protocol: 'http', transport, server: { fault: shedding(4, 50) }, settings: FIND_PEAK, stopAfterMs: FIND_PEAK_STOP_MS });
    const trials = run.result.findPeak!.trials.map((t) => t.targetQps);
    expect(run.result.interrupted, `the search ended by itself (trials ${JSON.stringify(trials)})`).toBeUndefined();
    expect(run.result.findPeak!.peakQps, `trials ${JSON.stringify(trials)}`).toBeLessThanOrEqual(capacity);
    checkRunOutputs(run, { oneSeries: false });
  });
});

describe('item 4: an error body quoting pieces of the API key', () => {
  // The way OpenAI quotes a refused key (all but its last 6 characters), and other pieces of 8 or more.
  const quoting: Fault = () => [
    {
      write: response(
        401,
        'Unauthorized',
        { 'content-type': 'application/json', 'www-authenticate': `Bearer realm="${API_KEY.slice(3, 15)}"` },
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${API_KEY.slice(0, -6)}******. Key ends ${API_KEY.slice(-9)}, middle ${API_KEY.slice(8, 16)}.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        }),
      ),
    },
  ];
  const cases = (['openai-stream', 'http'] as const).flatMap((protocol) => TRANSPORTS.map((transport) => [protocol, transport] as const));
  it.each(cases)('%s over %s: the failures are http_status, no 8 characters of the key anywhere', async (protocol, transport) => {
    // The http node also names itself with a piece of the key (GET / answers it in `server`).
    const run = await runCase({ protocol, transport, server: { fault: quoting, faulted: (r) => odd(r.sample), nodeName: `gateway ${API_KEY.slice(5, 20)}` }, settings: singleStream(16) });
    checkOutcomes(run, 'http_status', odd);
    checkRunOutputs(run);
    expect(readFileSync(join(run.outdir, 'mlperf_log_detail.txt'), 'utf8')).toContain('HTTP 401');
  });
});

describe('item 7: servers that close connections or accept few', () => {
  const settings = { scenario: 'Server', serverTargetQps: 300, minQueryCount: 150, minDurationMs: 0, accuracyLogProbability: 1 } as TestSettingsInput;

  it.each(TRANSPORTS)('a close after each response without Connection: close loses no sample (%s)', async (transport) => {
    const closing: Fault = (_r, good) => [{ wait: 2 }, { write: ok(good) }, { end: true }];
    const run = await runCase({ protocol: 'http', transport, server: { fault: closing }, settings });
    checkOutcomes(run, 'ok', all);
    checkRunOutputs(run);
  });

  it.each(TRANSPORTS)('a server that accepts at most 8 connections loses no sample (%s)', async (transport) => {
    const run = await runCase({ protocol: 'http', transport, server: { fault: slow(10), maxConnections: 8 }, settings });
    checkOutcomes(run, 'ok', all);
    checkRunOutputs(run);
    expect(run.server.peakConnections).toBeLessThanOrEqual(8);
  });

  // CI once failed 28 requests of 300 so (the native client's C++ test): a
  // refusal that came over a second after the connection opened read as a
  // stale keep-alive connection, and the request went again on a new
  // connection, refused in turn.
  it.each(TRANSPORTS)('a server that accepts at most 8 connections and closes the rest 1.2 s late loses no sample (%s)', async (transport) => {
    const run = await runCase({
      protocol: 'http',
      transport,
      server: { fault: slow(10), maxConnections: 8, refuseAfterMs: 1200 },
      settings: { scenario: 'Offline', offlineExpectedQps: 200, minQueryCount: 120, minDurationMs: 0, accuracyLogProbability: 1 } as TestSettingsInput,
    });
    checkOutcomes(run, 'ok', all);
    checkRunOutputs(run);
    expect(run.server.peakConnections).toBeLessThanOrEqual(8);
  });
});

describe('item 11: the request timeout', () => {
  it.each(TRANSPORTS)('a 120 ms server with a 100 ms timeout: every sample times out, none completes (%s)', async (transport) => {
    const run = await runCase({ protocol: 'http', transport, server: { fault: slow(120) }, settings: singleStream(10), requestTimeoutMs: 100 });
    checkOutcomes(run, 'timeout', all);
    checkRunOutputs(run);
    expect(completedOk(run.result)).toBe(0);
  });
});

describe('an answer before the request was sent whole', () => {
  // 4 MB request bodies: the server answers on the head, while the client still writes the body.
  const BIG_BODY_MAP = mapModule(
    'big-body',
    `export const totalSampleCount = ${SAMPLES};
const filler = 'f'.repeat(4 * 1024 * 1024);
export function request(index) { return { method: 'POST', path: '/infer', headers: { 'content-type': 'application/json' }, body: '{"x":' + index + ',"pad":"' + filler + '"}' }; }
`,
  );
  const cases = (['200', '413'] as const).flatMap((status) => TRANSPORTS.map((transport) => [status, transport] as const));
  it.each(cases)('an early %s (%s)', async (status, transport) => {
    const early: Fault =
      status === '200'
        ? (_r, good) => [{ write: ok(good) }]
        : () => [{ write: response(413, 'Payload Too Large', { 'content-type': 'text/plain' }, 'too large') }];
    const run = await runCase({ protocol: 'http', transport, request: BIG_BODY_MAP, server: { fault: early, early: true }, settings: singleStream(8) });
    checkOutcomes(run, status === '200' ? 'ok' : 'http_status', all);
    checkRunOutputs(run);
  });
});
