import { readFileSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { startServer, TOKEN_ROW_NODE_FLAGS, type BenchServer } from '../lib/bench/net-servers.js';
import { clientTtftError, clientTtftErrors } from '../lib/bench/net-ttft.js';
import { tracedTtfts, type TracedSample } from '../lib/bench/net-trial.js';

const servers: BenchServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

/** A request-log line as lib/net/request-log.ts writes it. */
function logLine(idx: number, sent: number | null, first: number | null, last: number | null, outcome = 'ok'): string {
  return JSON.stringify({
    series: 'performance', id: 0, qsl_index: idx, node: 'http://127.0.0.1:1', sent_ns: sent, first_token_ns: first, last_byte_ns: last,
    input_tokens: null, output_tokens: 3, outcome, failure: outcome === 'ok' ? null : 'http_status',
  });
}

describe("the token row's TTFT by request", () => {
  it('is the traced latency less the first token -> last byte of the logged request, in scheduled order', () => {
    // Index 3 issued twice: the earlier scheduled pairs with the earlier sent.
    const samples: TracedSample[] = [
      { idx: 3, scheduledUs: 200, latencyNs: 50_000_000 },
      { idx: 7, scheduledUs: 100, latencyNs: 40_000_000 },
      { idx: 3, scheduledUs: 10, latencyNs: 30_000_000 },
    ];
    const log = [
      logLine(3, 20_000, 21_000_000, 30_010_000), // the second line: scheduled at 10 us, sent first
      logLine(7, 110_000, 22_000_000, 40_100_000),
      logLine(3, 210_000, 25_000_000, 50_200_000),
    ];
    // Two lines of an earlier run first, skipped.
    const text = [logLine(3, 1, 2, 3), logLine(7, 1, 2, 3), ...log].join('\n') + '\n';
    expect(tracedTtfts(samples, text, 2)).toEqual([
      [3, 30_000_000 - (30_010_000 - 21_000_000)],
      [7, 40_000_000 - (40_100_000 - 22_000_000)],
      [3, 50_000_000 - (50_200_000 - 25_000_000)],
    ]);
  });

  it('leaves out an index whose counts differ and a request without both stamps', () => {
    const samples: TracedSample[] = [
      { idx: 1, scheduledUs: 0, latencyNs: 10 },
      { idx: 2, scheduledUs: 1, latencyNs: 10 },
      { idx: 2, scheduledUs: 2, latencyNs: 10 },
      { idx: 4, scheduledUs: 3, latencyNs: 90 },
      { idx: 5, scheduledUs: 4, latencyNs: 90 },
    ];
    const text = [
      logLine(1, 0, null, 5, 'failed'),
      logLine(2, 1, 2, 3), // one logged, two traced: left out
      logLine(4, 3, 10, 20),
      logLine(5, 4, 10, 20, 'failed'),
      logLine(9, 4, 10, 20), // not traced
    ].join('\n');
    expect(tracedTtfts(samples, text, 0)).toEqual([[4, 80]]);
  });

  it("pairs each TTFT with the stub's hold of the same request: TTFT - hold", () => {
    const requests: [number, number][] = [[1, 20_300_000], [2, 20_500_000], [1, 20_400_000], [9, 21_000_000], [-1, 20_000_000]];
    // Arrival order; index 9 has two holds for one request (left out); -1 (not a bench prompt) never pairs.
    const holds: [number, number][] = [[1, 20_100_000], [2, 20_050_000], [1, 20_350_000], [9, 20_000_000], [9, 20_000_000], [-1, 20_000_000]];
    expect(clientTtftErrors(requests, holds)).toEqual([200_000, 50_000, 450_000]);
    const r = clientTtftError([{ requests, holds }]);
    expect(r).toEqual({ matched: 3, requests: 5, p50: 200_000, p99: 450_000 });
    expect(r!.p50).toBeLessThanOrEqual(r!.p99);
    expect(clientTtftError([{ requests: [[1, 5]], holds: [[2, 5]] }])).toBeNull();
    expect(clientTtftError([{ requests: [], holds: [] }])).toBeNull();
    expect(clientTtftError([])).toBeNull();
  });

  it("pools the runs' pairs: a p99 from all of them, not a median of small runs' p99s", () => {
    // Runs of 100 requests: 300 us each, two at 500 us, and in two of the three runs one at 3 ms. Each
    // of those runs' p99 is its largest (3 ms), so a median of the runs' p99s says 3 ms; pooled, the
    // p99 (rank 297 of 300) lies below the two 3-ms pairs.
    const run = (slow: number) => {
      const requests: [number, number][] = [];
      const holds: [number, number][] = [];
      for (let i = 0; i < 100; i++) {
        requests.push([i, 20_000_000 + (i === slow ? 3_000_000 : i < 2 ? 500_000 : 300_000)]);
        holds.push([i, 20_000_000]);
      }
      return { requests, holds };
    };
    expect(clientTtftError([run(10)])!.p99).toBe(3_000_000);
    expect(clientTtftError([run(-1)])!.p99).toBe(500_000);
    expect(clientTtftError([run(10), run(20), run(-1)])).toEqual({ matched: 300, requests: 300, p50: 300_000, p99: 500_000 });
  });

  it("the stub tells each request's prompt index and hold, the warm-up's left out", async () => {
    const stub = await startServer('openai-stub', null, undefined, { ttftMs: 2, tpotMs: 1, timerSpinMs: 1 });
    servers.push(stub);
    await stub.ask('lateness', 'LATENESS ');
    const send = (prompt: string) =>
      fetch(`${stub.url.replace('tcp://', 'http://')}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'loadgen-stub', prompt, max_tokens: 3, stream: true }),
      }).then((res) => res.text());
    for (const prompt of ['bench prompt 9', 'bench prompt 17', 'another prompt', 'bench prompt 4x']) expect(await send(prompt)).toMatch(/\[DONE\]/);
    const lateness = JSON.parse(await stub.ask('lateness 1', 'LATENESS ')) as { firstTokenHolds: [number, number][] };
    expect(lateness.firstTokenHolds.map(([idx]) => idx)).toEqual([17, -1, -1]);
    // The stub is never early: each hold is at least its 2-ms first-token delay.
    for (const [, hold] of lateness.firstTokenHolds) {
      expect(hold).toBeGreaterThanOrEqual(2e6);
      expect(hold).toBeLessThan(1e9);
    }
  });

  it("runs the stub and the floor's echo with V8's garbage collection on their main thread", async () => {
    // Their GC helper threads took the one CPU from the main thread while a request waited (TOKEN_ROW_NODE_FLAGS).
    expect(TOKEN_ROW_NODE_FLAGS).toContain('--single-threaded-gc');
    if (process.platform !== 'linux') return;
    const stub = await startServer('openai-stub', null, undefined, { ttftMs: 2, tpotMs: 1 });
    servers.push(stub);
    const echo = await startServer('echo', null);
    servers.push(echo);
    for (const server of [stub, echo]) {
      const argv = readFileSync(`/proc/${server.pids[0]}/cmdline`, 'utf8').split('\0');
      expect(argv).toContain('--single-threaded-gc');
    }
    // The stamp server of the peak rows keeps V8's defaults.
    const node = await startServer('node', null);
    servers.push(node);
    expect(readFileSync(`/proc/${node.pids[0]}/cmdline`, 'utf8').split('\0')).not.toContain('--single-threaded-gc');
  });
});
