/**
 * Where the network bench's processes run (issue 26): the client's CPUs
 * first, the server's the rest, so neither waits for the other's CPU and
 * the server has every core the client does not use. A row of N client
 * threads gets N + 1 CPUs (the issue thread and N reactors; the JS thread
 * shares them), a single-thread row one; the server keeps at least one.
 * The server's busy share over a measured run says when it, not the
 * client, was the limit.
 */
import { procStatFields } from '../platform/proc-stat.js';
import { nativeDispatchThreads } from './net-labels.js';
import type { PeakRun } from './peak.js';

export interface NetCpuLayout {
  /** CPUs of the client process (the trial, wrk, autocannon). */
  client: number[];
  /** CPUs of the server: one stamp-server process on each. */
  server: number[];
}

/** A server whose CPUs were busy this share of a run or more is reported as the limit. */
export const SERVER_LIMIT_BUSY = 0.9;

/** The CPUs a network row's client wants: N + 1 for N client threads ('native-xN', 'native-noread-xN'), else one. */
export function clientCpusWanted(dispatch: string): number {
  const threads = nativeDispatchThreads(dispatch)?.threads ?? 1;
  return threads > 1 ? threads + 1 : 1;
}

/**
 * The first `wanted` of `allowed` (sorted) for the client, at most all but
 * one; the rest for the server. Null when fewer than two CPUs are allowed
 * (nothing to separate).
 */
export function netCpuLayout(allowed: readonly number[], wanted: number): NetCpuLayout | null {
  const cpus = [...new Set(allowed)].filter((c) => Number.isSafeInteger(c) && c >= 0).sort((a, b) => a - b);
  if (cpus.length < 2) return null;
  const client = Math.max(1, Math.min(Math.floor(wanted), cpus.length - 1));
  return { client: cpus.slice(0, client), server: cpus.slice(client) };
}

/** taskset's list form: [0, 1, 2, 5] -> '0-2,5'. */
export function cpuListText(cpus: readonly number[]): string {
  const parts: string[] = [];
  const sorted = [...cpus].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Linux's /proc/<pid>/stat counts CPU time in USER_HZ ticks, 100 a second in the ABI on every architecture. */
const USER_HZ = 100;

/**
 * CPU seconds (user + system, every thread) each process has used so far,
 * from /proc/<pid>/stat; NaN for one that cannot be read (gone, not Linux).
 */
export function processCpuSeconds(pids: readonly number[]): number[] {
  return pids.map((pid) => {
    const fields = procStatFields(pid);
    // utime and stime are fields 14 and 15.
    const ticks = fields === undefined ? Number.NaN : Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / USER_HZ : Number.NaN;
  });
}

/**
 * The share of the server's CPUs its processes kept busy between two
 * readings `wallSeconds` apart: 0..1 (clamped: tick rounding), or null when
 * a reading is missing or the interval is empty.
 */
export function busyShare(before: readonly number[], after: readonly number[], wallSeconds: number, cpus: number): number | null {
  if (before.length === 0 || before.length !== after.length || !(wallSeconds > 0) || !(cpus > 0)) return null;
  let used = 0;
  for (let i = 0; i < before.length; i++) {
    const d = after[i]! - before[i]!;
    if (!Number.isFinite(d) || d < 0) return null;
    used += d;
  }
  return Math.min(1, used / (wallSeconds * cpus));
}

/**
 * Why the server, not the client, limited a peak row: a run above the
 * confirmed peak that failed while the server's CPUs were at least
 * SERVER_LIMIT_BUSY busy (undefined when none did, or none was measured).
 */
export function serverLimit(runs: readonly PeakRun[], confirmedQps: number): string | undefined {
  const busy = runs.filter((r) => !r.valid && r.targetQps > confirmedQps && r.serverBusy !== undefined && r.serverBusy >= SERVER_LIMIT_BUSY)
    .sort((a, b) => a.targetQps - b.targetQps)[0];
  if (busy === undefined) return undefined;
  return `the server was the limit: its CPUs were ${Math.round(busy.serverBusy! * 100)} % busy in the INVALID run at ${Math.round(busy.targetQps).toLocaleString('en-US')} requests/s`;
}
