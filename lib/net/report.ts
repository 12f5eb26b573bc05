/**
 * The network SUT's block after the summary (the SUT report hook): per-node
 * counts, failures by kind and client-side latency percentiles.
 */
import type { SutReport } from '../types/api.js';
import { FAILURE_KINDS } from './node-stats.js';
import type { StreamReport } from './stream-stats.js';
import type { NetworkStats } from './types.js';

/** SystemUnderTest.report() of a network SUT: `data` is its stats(). */
export interface NetworkSutReport extends SutReport {
  table: { columns: string[]; rows: (string | number)[][] };
  data: NetworkStats;
}

const ms = (ns: number): string => (ns / 1e6).toFixed(3);

/** The native transport's threads: what each read and wrote and its reactor's CPU (since the SUT started), then their connections. */
function clientThreadLines(threads: NonNullable<NetworkStats['clientThreads']>, note: string | undefined): string[] {
  const lines = [`Client threads : ${threads.length} (responses read, requests written and reactor thread CPU since the SUT started)`];
  if (note !== undefined && note !== '') lines.push(`  Chosen : ${note}`);
  threads.forEach((t, k) => {
    const cpu = Number.isFinite(t.reactorCpuMs) && t.reactorCpuMs >= 0 ? t.reactorCpuMs.toFixed(1) : '0.0';
    // Absent with one client thread: the issue thread writes every request itself.
    const written = t.requestsWritten !== undefined ? `, requests written ${t.requestsWritten}` : '';
    lines.push(`  Thread ${k + 1} : responses ${t.responses}${written}, reactor CPU ${cpu} ms`);
  });
  const sum = (get: (t: (typeof threads)[number]) => number): number => threads.reduce((n, t) => n + get(t), 0);
  const retried = sum((t) => t.retriedRequests);
  // A request sent twice is one request in the node's counts, two in the server's log: said, so both add up.
  lines.push(`Connections : opened ${sum((t) => t.openedConnections)}, refused ${sum((t) => t.refusedConnections)}; requests sent again ${retried}` +
    (retried > 0 ? " (their connection closed before any byte of the answer; each counts once in its node's requests, and loadgen's latency spans both tries)" : ''));
  return lines;
}

function jsThreadLine(t: { nice: number; sliceNs: number; note: string }): string {
  const slice = t.sliceNs > 0 ? `loadgen's threads on ${Math.round(t.sliceNs / 1000)}-µs slices, so the issue thread preempts it when it wakes` : "loadgen's threads on the kernel's own slices";
  return `JS thread : nice ${t.nice}, ${slice}${t.note !== '' ? ` (${t.note})` : ''}; jsThreadNice 0 leaves it`;
}

export function networkReport(stats: NetworkStats, protocolNote: string | undefined, accuracyNote?: string, streams?: StreamReport, requestLog?: string): NetworkSutReport {
  const lines: string[] = [`Nodes : ${stats.nodes.length}`, `Transport : ${stats.transport === 'native' ? "native (the core's HTTP/1.1 client)" : stats.dispatchWorkers ? 'undici (dispatch workers)' : 'undici (JS thread)'}`];
  // A protocol's note may have several lines (token sources): each its own line.
  if (protocolNote !== undefined && protocolNote !== '') for (const note of protocolNote.split('\n')) lines.push(`Note : ${note}`);
  if (accuracyNote !== undefined && accuracyNote !== '') lines.push(`Accuracy data : ${accuracyNote}`);
  if (streams !== undefined) lines.push(...streams.lines);
  if (requestLog !== undefined) lines.push(requestLog);
  if (stats.clientThreads !== undefined) lines.push(...clientThreadLines(stats.clientThreads, stats.clientThreadsNote));
  if (stats.runtimeThreadsIdle !== undefined && stats.runtimeThreadsIdle > 0)
    lines.push(`Runtime threads : ${stats.runtimeThreadsIdle} at idle priority (V8's GC and compiler workers: they yield to the issue thread; idleRuntimeThreads false keeps them)`);
  else if (stats.runtimeThreadsNote !== undefined && stats.runtimeThreadsNote !== '') lines.push(`Runtime threads : none at idle priority (${stats.runtimeThreadsNote})`);
  if (stats.jsThread !== undefined) lines.push(jsThreadLine(stats.jsThread));
  const rows: (string | number)[][] = [];
  for (const n of stats.nodes) {
    const failed = FAILURE_KINDS.reduce((sum, k) => sum + n.failed[k], 0);
    const byKind = FAILURE_KINDS.filter((k) => n.failed[k] > 0).map((k) => `${k} ${n.failed[k]}`).join(', ');
    lines.push(`Node ${n.name} (${n.origin})`);
    lines.push(`  Requests : ${n.requests}, completed : ${n.completed}, failed : ${failed}${byKind !== '' ? ` (${byKind})` : ''}`);
    const l = n.latencyNs;
    // No response read whole: no latency to show (never a row of zeros).
    const figures = l.measured === 0 ? ['', '', '', '', ''] : [ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max), ms(l.mean)];
    lines.push(
      l.measured === 0
        ? '  Latency (ms, request sent to last byte read) : none measured (no response was read whole)'
        : `  Latency (ms, request sent to last byte read) : p50 ${figures[0]}, p90 ${figures[1]}, p99 ${figures[2]}, max ${figures[3]}, mean ${figures[4]}`,
    );
    rows.push([n.name, n.origin, n.requests, n.completed, failed, ...FAILURE_KINDS.map((k) => n.failed[k]), ...figures]);
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
