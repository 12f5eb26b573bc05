/**
 * loadgen's native threads carry names (what `top -H`, perf and a debugger
 * show; Node's own threads are all "node"): the issue thread
 * loadgen-issue, the HTTP client's loadgen-http (loadgen-http-K with
 * several client threads).
 */
import { readdirSync, readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { createNetworkSut } from '../lib/net/transport.js';
import { loadNative } from '../lib/native/index.js';
import { nodeHandler, testProtocol, testServers } from './net-helpers.js';
import { tempDir } from './helpers.js';

const server = testServers();

function threadNames(): string[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      return [readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()];
    } catch {
      return []; // a thread that ended meanwhile
    }
  });
}

describe.skipIf(process.platform !== 'linux' || !loadNative().nativeHttpAvailable)('native thread names', () => {
  it('the issue thread and each client thread are named while a run issues', async () => {
    const node = await server(nodeHandler('names-node'));
    const sut = await createNetworkSut(testProtocol(64), { urls: [node.url], transport: 'native', clientThreads: 2, connections: 4 });
    const seen = new Set<string>();
    const timer = setInterval(() => { for (const n of threadNames()) seen.add(n); }, 20);
    try {
      const r = await startTest(sut, sut.qsl, { scenario: 'Server', serverTargetQps: 2000, minDurationMs: 600, minQueryCount: 100 }, { outdir: tempDir() });
      expect(r.counts.completedSamples).toBe(r.counts.issuedSamples);
      const after = threadNames();
      expect(after.filter((n) => n === 'loadgen-http-1')).toHaveLength(1);
      expect(after.filter((n) => n === 'loadgen-http-2')).toHaveLength(1);
    } finally {
      clearInterval(timer);
      await sut.close();
    }
    expect(seen.has('loadgen-issue')).toBe(true);
    // Closed: the reactors are gone.
    expect(threadNames().some((n) => n.startsWith('loadgen-http'))).toBe(false);
  });
});
