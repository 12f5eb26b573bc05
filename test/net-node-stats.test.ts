import { describe, expect, it } from 'vitest';

import { createStatsBuffer, nodeSlice, NodeStatsRecorder, summarizeNode } from '../lib/net/node-stats.js';
import { networkReport } from '../lib/net/report.js';

describe('per-node statistics', () => {
  it('percentiles within 1% of the exact ones; max and mean exact; counts by kind', () => {
    const buffer = createStatsBuffer(2, 1, false);
    const node = new NodeStatsRecorder(nodeSlice(buffer, 2, 0, 1));
    const other = new NodeStatsRecorder(nodeSlice(buffer, 2, 0, 0));
    const latencies: number[] = [];
    let x = 12345;
    for (let i = 0; i < 10_000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      latencies.push(50_000 + (x % 5_000_000));  // 50 us .. 5 ms
    }
    for (const l of latencies) {
      node.requested();
      node.completed(l);
    }
    node.requested();
    node.failed('timeout');
    other.requested();
    const s = summarizeNode([buffer], 2, 1, 'http://n', 'n');
    const sorted = [...latencies].sort((a, b) => a - b);
    const exact = (p: number): number => sorted[Math.ceil(p * sorted.length) - 1]!;
    for (const [p, got] of [[0.5, s.latencyNs.p50], [0.9, s.latencyNs.p90], [0.99, s.latencyNs.p99]] as const) {
      expect(Math.abs(got - exact(p)) / exact(p)).toBeLessThan(0.01);
    }
    expect(s.latencyNs.max).toBe(sorted.at(-1));
    expect(s.latencyNs.mean).toBe(Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length));
    expect(s.requests).toBe(10_001);
    expect(s.completed).toBe(10_000);
    expect(s.failed).toEqual({ http_status: 0, connection: 0, malformed_response: 0, timeout: 1, cancelled: 0, no_first_token: 0 });
    expect(summarizeNode([buffer], 2, 0, 'http://o', 'o').requests).toBe(1);
  });

  it('sums the slices of several threads and buffers (dispatch workers)', () => {
    const main = createStatsBuffer(1, 1, false);
    const workers = createStatsBuffer(1, 2, true);
    new NodeStatsRecorder(nodeSlice(main, 1, 0, 0)).completed(1000);
    new NodeStatsRecorder(nodeSlice(workers, 1, 0, 0)).completed(2000);
    new NodeStatsRecorder(nodeSlice(workers, 1, 1, 0)).completed(9000);
    const s = summarizeNode([main, workers], 1, 0, 'http://n', 'n');
    expect(s.completed).toBe(3);
    expect(s.latencyNs.max).toBe(9000);
    expect(s.latencyNs.mean).toBe(4000);
  });

  it('a node with no response read whole shows no latency figures, not zeros', () => {
    const buffer = createStatsBuffer(1, 1, false);
    const node = new NodeStatsRecorder(nodeSlice(buffer, 1, 0, 0));
    for (let i = 0; i < 3; i++) {
      node.requested();
      node.failed('http_status');
    }
    const s = summarizeNode([buffer], 1, 0, 'http://n', 'n');
    expect(s.latencyNs.measured).toBe(0);
    const report = networkReport({ protocol: 'http', balance: 'round-robin', transport: 'native', dispatchWorkers: false, nodes: [s] } as never, undefined);
    expect(report.lines).toContain('  Latency (ms, request sent to last byte read) : none measured (no response was read whole)');
    expect(report.table.rows[0]!.slice(-5)).toEqual(['', '', '', '', '']);
  });
});
