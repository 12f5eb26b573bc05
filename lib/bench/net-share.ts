/**
 * The client share from the server's own record of its stamps: the C stamp
 * server keeps each request's sample index, receive and send stamps between
 * a `record` and a `stamps PATH` line on its stdin (benchmarks/stamp-server.c),
 * so the client's JS reads no response body, as the C open-loop floor reads
 * none. With the stamps in the bodies instead, every body goes to the JS
 * thread, which shares the client's CPU with the issue thread: the bench's
 * own instrumentation, not what a run without a response check pays.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { StampRecords } from './net-map.js';
import type { BenchServer } from './net-servers.js';
import { clientShare, readTrace } from './net-trial.js';
import type { NetServerTrial } from './trials.js';

/**
 * The stamps of the server's files ("INDEX RECV SEND" lines), those received
 * at or after `fromNs` (the measured run's start; earlier ones are the
 * warm-up's) and of a sample (index >= 0). A line that is not three integers
 * is an error naming the file's line.
 */
export function readServerStamps(texts: readonly string[], fromNs: number): StampRecords {
  const records = new StampRecords();
  texts.forEach((text, file) => {
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (line === '') return;
      const m = /^(-?\d+) (\d+) (\d+)$/.exec(line);
      if (!m) throw new Error(`the stamp server's record ${file}, line ${i + 1}: '${line.slice(0, 80)}' is not 'INDEX RECV SEND'`);
      const [index, recv, send] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (index >= 0 && recv >= fromNs) records.push(index, recv, send);
    });
  });
  return records;
}

/**
 * Runs `run` (a net-server trial with shareStamps 'server') while the server
 * keeps its stamps, then pairs the trial's trace with them. Throws when the
 * server could not write them or dropped some (more than it keeps).
 */
export async function serverStampedShare(server: BenchServer, run: () => Promise<NetServerTrial>): Promise<NetServerTrial> {
  await server.askEach(() => 'record', 'RECORDING');
  const trial = await run();
  const stamped = trial.serverStamped;
  if (!stamped) throw new Error('the trial kept no trace for the server-stamped client share');
  const dir = mkdtempSync(join(tmpdir(), 'loadgen-net-stamps-'));
  try {
    const files = server.pids.map((_, k) => join(dir, `stamps-${k}.txt`));
    const answers = await server.askEach((k) => `stamps ${files[k]}`, 'STAMPS ');
    for (const answer of answers) {
      if (answer.startsWith('error')) throw new Error(`the stamp server could not write its stamps: ${answer.slice('error '.length)}`);
      const dropped = Number(answer.split(' ')[1]);
      if (dropped > 0) throw new Error(`the stamp server dropped ${dropped} stamps (beyond what it keeps)`);
    }
    const records = readServerStamps(files.map((f) => readFileSync(f, 'utf8')), stamped.fromNs);
    const { serverStamped: _kept, ...rest } = trial;
    return { ...rest, share: clientShare(readTrace(join(stamped.traceDir, 'mlperf_log_trace.json')), records) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(stamped.traceDir, { recursive: true, force: true });
  }
}
