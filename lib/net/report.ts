/**
 * The network SUT's block after the summary (the SUT report hook): per-node
 * counts, failures by kind and client-side latency percentiles.
 */
import type { SutReport } from '../api/types.js';
import { FAILURE_KINDS } from './node-stats.js';
import type { StreamReport } from './stream-stats.js';
import type { NetworkStats } from './types.js';

/** SystemUnderTest.report() of a network SUT: `data` is its stats(). */
export interface NetworkSutReport extends SutReport {
  table: { columns: string[]; rows: (string | number)[][] };
  data: NetworkStats;
}

const ms = (ns: number): string => (ns / 1e6).toFixed(3);

export function networkReport(stats: NetworkStats, protocolNote: string | undefined, streams?: StreamReport, requestLog?: string): NetworkSutReport {
  const lines: string[] = [`Nodes : ${stats.nodes.length}`, `Transport : ${stats.transport === 'native' ? "native (the core's HTTP/1.1 client)" : stats.dispatchWorkers ? 'undici (dispatch workers)' : 'undici (JS thread)'}`];
  if (protocolNote !== undefined && protocolNote !== '') lines.push(`Note : ${protocolNote}`);
  if (streams !== undefined) lines.push(...streams.lines);
  if (requestLog !== undefined) lines.push(requestLog);
  const rows: (string | number)[][] = [];
  for (const n of stats.nodes) {
    const failed = FAILURE_KINDS.reduce((sum, k) => sum + n.failed[k], 0);
    const byKind = FAILURE_KINDS.filter((k) => n.failed[k] > 0).map((k) => `${k} ${n.failed[k]}`).join(', ');
    lines.push(`Node ${n.name} (${n.origin})`);
    lines.push(`  Requests : ${n.requests}, completed : ${n.completed}, failed : ${failed}${byKind !== '' ? ` (${byKind})` : ''}`);
    const l = n.latencyNs;
    lines.push(`  Latency (ms, request sent to last byte read) : p50 ${ms(l.p50)}, p90 ${ms(l.p90)}, p99 ${ms(l.p99)}, max ${ms(l.max)}, mean ${ms(l.mean)}`);
    rows.push([n.name, n.origin, n.requests, n.completed, failed, ...FAILURE_KINDS.map((k) => n.failed[k]), ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max), ms(l.mean)]);
  }
  return {
    title: `Network SUT (${stats.protocol}, ${stats.balance})`,
    lines,
    table: {
      columns: ['node', 'url', 'requests', 'completed', 'failed', ...FAILURE_KINDS, 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'mean ms'],
      rows,
    },
    ...(streams !== undefined && Object.keys(streams.distributions).length > 0 ? { distributions: streams.distributions } : {}),
    data: stats,
  };
}
