/**
 * jsThreadNice (native/core_threads.h, bindings/runtime_threads.cc): once the
 * native transport starts, the JS thread runs at that nice value, and the
 * core's threads (the reactors, each run's issue thread: started from a
 * thread that kept the process's priority) at nice 0 with the kernel's
 * shortest slice; the block says so. In a fresh process: the change lasts
 * for the process.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { SettingsError } from '../lib/errors.js';
import { checkTransportOptions } from '../lib/net/transport.js';
import { loadNative } from '../lib/native/index.js';
import { repoRoot } from './helpers.js';

const linux = process.platform === 'linux';
const dist = (path: string) => pathToFileURL(join(repoRoot, 'dist', path)).href;

describe('jsThreadNice', () => {
  it('is an integer 0..19, 0 by default, and not for undici', () => {
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'] }).jsThreadNice).toBe(0);
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'], jsThreadNice: 10 }).jsThreadNice).toBe(10);
    for (const bad of [-1, 20, 1.5, '10'])
      expect(() => checkTransportOptions({ urls: ['http://127.0.0.1:1'], jsThreadNice: bad } as never)).toThrow(SettingsError);
    expect(() => checkTransportOptions({ urls: ['http://127.0.0.1:1'], jsThreadNice: 20 })).toThrow(/jsThreadNice must be at most 19, got 20/);
    expect(() => checkTransportOptions({ urls: ['http://127.0.0.1:1'], jsThreadNice: 5, transport: 'undici' }))
      .toThrow(/jsThreadNice 5 applies to the native transport .*not 'undici'/);
    expect(() => loadNative().yieldJsThread(0)).toThrow(/nice must be an integer from 1 to 19/);
    expect(() => loadNative().yieldJsThread(Number.NaN)).toThrow(/nice must be an integer from 1 to 19/);
  });

  it.skipIf(!linux || !loadNative().nativeHttpAvailable)("lowers the JS thread, never the core's threads, which get short slices; the block says so", () => {
    const script = `
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { startTest } = await import(${JSON.stringify(dist('index.js'))});
const { createNetworkSut } = await import(${JSON.stringify(dist('net/transport.js'))});
const server = createServer((req, res) => { req.resume(); req.on('end', () => res.end(req.url === '/name' ? 'yield-node' : 'ok')); });
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const field = (text, name) => Number(new RegExp('^' + name + '\\\\s*:\\\\s*(-?\\\\d+)', 'm').exec(text)?.[1] ?? -1);
const threads = () => readdirSync('/proc/self/task').map((tid) => {
  const sched = readFileSync('/proc/self/task/' + tid + '/sched', 'utf8');
  const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
  const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  return { tid: Number(tid), policy: field(sched, 'policy'), nice, slice: field(sched, 'se.slice') };
});
const protocol = {
  kind: 'yield', totalSampleCount: 8, performanceSampleCount: 8,
  async probe(node) { const r = await node.request('GET', '/name'); return Buffer.from(r.body).toString(); },
  load() {}, unload() {},
  request(i) { return { method: 'POST', path: '/infer', headers: { 'content-type': 'text/plain' }, body: 'sample-' + i }; },
  // The first response read during the run lists the threads: the run's issue thread is alive then.
  reader() { return { onData() {}, onEnd() { if (during.length === 0 && running) during = threads(); return { ok: true }; } }; },
};
let during = [];
let running = false;
const sut = await createNetworkSut(protocol, { urls: ['http://127.0.0.1:' + server.address().port], transport: 'native', jsThreadNice: 10 });
// libuv's pool starts all its threads at its first use: before the snapshot, so that only the run's own threads are new.
await (await import('node:fs/promises')).readFile('/proc/self/stat');
const before = new Set(threads().map((t) => t.tid));
running = true;
await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 200, minDurationMs: 400, minQueryCount: 1 }, { outdir: mkdtempSync(join(tmpdir(), 'yield-')) });
running = false;
const main = threads().find((t) => t.tid === process.pid);
const started = during.filter((t) => !before.has(t.tid) && t.policy === 0);
const report = sut.report().lines;
const stats = sut.stats().jsThread;
await sut.close();
server.close();
console.log(JSON.stringify({ main, started, stats, line: report.find((l) => l.startsWith('JS thread :')) }));
`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      main: { nice: number }; started: { nice: number; slice: number }[]; stats: { nice: number; sliceNs: number; note: string }; line: string;
    };
    expect(out.main.nice).toBe(10);
    expect(out.stats.nice).toBe(10);
    // The run's issue thread (started after the transport): the process's priority, the short slice where the kernel has it.
    expect(out.started.length).toBeGreaterThan(0);
    for (const t of out.started) expect(t.nice).toBe(0);
    if (out.stats.sliceNs > 0) {
      expect(out.stats.sliceNs).toBe(100_000);
      for (const t of out.started) expect(t.slice).toBe(100_000);
      expect(out.line).toBe("JS thread : nice 10, loadgen's threads on 100-µs slices, so the issue thread preempts it when it wakes; jsThreadNice 0 leaves it");
    } else {
      expect(out.stats.note).toMatch(/custom slices need Linux 6\.12/);
    }
  });
});
