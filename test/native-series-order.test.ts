/**
 * The native transport hands responses to JS on its client's threadsafe
 * function, the session announces a series on its own: the event loop may
 * serve either first. Here the JS thread is kept busy from the moment the
 * samples are loaded until well after a server in another thread has
 * answered, so both are pending together; every response must still be read
 * knowing its series (its body in the accuracy log, its tokens counted), as
 * the session issues nothing before JS has taken the series
 * (SessionHost::await_series_started).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { createNetworkSut } from '../lib/net/transport.js';
import { tempDir } from './helpers.js';
import { testProtocol } from './net-helpers.js';

const available = loadNative().nativeHttpAvailable;
const BUSY_MS = 300;

// A server on its own thread: it answers while the JS thread under test is busy.
const SERVER_SOURCE = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    if (req.url === '/name') return res.end('worker-node');
    // Token streams: three chunks, flushed apart.
    res.write('echo:');
    setTimeout(() => { res.write(body); res.end(); }, 2);
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

let worker: Worker;
let url: string;
beforeAll(async () => {
  worker = new Worker(SERVER_SOURCE, { eval: true });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  url = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  worker.postMessage('close');
  await new Promise((resolve) => worker.once('exit', resolve));
});

/** Keeps this thread busy for `ms`, just after the load is acknowledged (two microtask turns later). */
function busyAfterLoad(ms: number): void {
  queueMicrotask(() =>
    queueMicrotask(() => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    }));
}

describe.skipIf(!available)('a native SUT\'s responses and its series', () => {
  for (const tokens of [false, true]) {
    it(`every response of an accuracy run is read with its series known (${tokens ? 'token stream' : 'whole responses'})`, async () => {
      const protocol = testProtocol(8, { tokens });
      const load = protocol.load.bind(protocol);
      protocol.load = (indices) => {
        load(indices);
        busyAfterLoad(BUSY_MS);
      };
      const sut = await createNetworkSut(protocol, { urls: [url], transport: 'native' });
      const outdir = tempDir();
      try {
        const r = await startTest(sut, sut.qsl, { scenario: 'Offline', offlineExpectedQps: 100, minDurationMs: 0, minQueryCount: 1, mode: 'AccuracyOnly' }, { outdir });
        expect(r.counts.completedSamples).toBe(8);
        expect(r.valid).toBe(true);
        const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
        expect(summary).toContain('No errors encountered during test.');
        const log = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { qsl_idx: number; data: string }[];
        expect(log).toHaveLength(8);
        for (const entry of log) expect(Buffer.from(entry.data, 'hex').toString('utf8')).toBe(`echo:sample-${entry.qsl_idx}`);
      } finally {
        await sut.close();
      }
    });
  }
});
