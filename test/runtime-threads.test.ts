/**
 * The runtime's helper threads at idle priority (bindings/runtime_threads.cc,
 * native/runtime_threads.h): in a fresh process whose libuv thread pool was
 * started before the addon loaded, idleRuntimeThreads() moves V8's threads
 * to SCHED_IDLE but neither the main thread nor any thread of the pool (each
 * pool thread reads its own /proc/thread-self/sched); with the pool busy,
 * it moves nothing and says why; a second call gives the first answer.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { repoRoot } from './helpers.js';

const linux = process.platform === 'linux';
const nativeIndex = pathToFileURL(join(repoRoot, 'dist', 'native', 'index.js')).href;

/** Runs `body` in a fresh node process after an fs call (the pool exists) and the addon's load; returns its JSON line. */
function inFreshProcess(body: string, env: Record<string, string> = {}): Record<string, unknown> {
  const script = `
import { readdirSync, readFile, readFileSync } from 'node:fs';
const policy = (text) => Number(/^policy\\s*:\\s*(\\d+)/m.exec(text)[1]);
const onPool = () => new Promise((resolve, reject) => readFile('/proc/thread-self/sched', 'utf8', (e, t) => (e ? reject(e) : resolve(policy(t)))));
await onPool();
const { loadNative } = await import(${JSON.stringify(nativeIndex)});
const native = loadNative();
${body}
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe.skipIf(!linux)('idleRuntimeThreads', () => {
  it("moves V8's threads, never the main thread or libuv's pool; the first answer stands", () => {
    const out = inFreshProcess(`
const moved = await native.idleRuntimeThreads();
const again = await native.idleRuntimeThreads();
const pool = await Promise.all(Array.from({ length: 16 }, onPool));
const main = policy(readFileSync('/proc/thread-self/sched', 'utf8'));
const idle = readdirSync('/proc/self/task').filter((t) => policy(readFileSync('/proc/self/task/' + t + '/sched', 'utf8')) === 5).length;
console.log(JSON.stringify({ moved, again, pool, main, idle }));
`);
    const moved = out.moved as { idle: number; note: string };
    expect(moved.idle).toBeGreaterThan(0);
    expect(moved.note).toBe('');
    expect(out.again).toEqual(moved);
    expect(out.idle).toBe(moved.idle);
    expect(out.main).toBe(0);
    expect(out.pool).toEqual(Array.from({ length: 16 }, () => 0));
  });

  it('moves nothing while a pool thread is busy, and says so', () => {
    const out = inFreshProcess(`
const { pbkdf2 } = await import('node:crypto');
const busy = new Promise((resolve) => pbkdf2('key', 'salt', 5_000_000, 32, 'sha256', resolve));
const moved = await native.idleRuntimeThreads();
await busy;
const idle = readdirSync('/proc/self/task').filter((t) => policy(readFileSync('/proc/self/task/' + t + '/sched', 'utf8')) === 5).length;
console.log(JSON.stringify({ moved, idle }));
`, { UV_THREADPOOL_SIZE: '2' });
    expect(out.moved).toEqual({ idle: 0, note: "libuv's thread pool answered with 1 of its 2 threads (others busy): none moved, so as never to starve the pool" });
    expect(out.idle).toBe(0);
  });
});
