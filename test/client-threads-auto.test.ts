/**
 * clientThreads 'auto' (the default): what the target rate needs at
 * AUTO_REQUESTS_PER_THREAD a thread, up to the cores beside the issue thread
 * (and the JS thread when it reads every body), the connections and the
 * limit; the CLI passes the run's rate; the summary's block says how it chose.
 */
import { describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { SettingsError } from '../lib/errors.js';
import { runTargetQps } from '../lib/cli/network.js';
import { AUTO_REQUESTS_PER_THREAD, autoClientThreads } from '../lib/net/client-threads.js';
import { checkTransportOptions, createNetworkSut } from '../lib/net/transport.js';
import { loadNative } from '../lib/native/index.js';
import { nodeHandler, testProtocol, testServers } from './net-helpers.js';
import { tempDir } from './helpers.js';

const server = testServers();

describe('clientThreads auto', () => {
  const base = { cores: 16, jsReadsBodies: true, connections: 256, max: 64 };

  it('plans one thread per AUTO_REQUESTS_PER_THREAD requests/s, up to the free cores, connections and limit', () => {
    expect(AUTO_REQUESTS_PER_THREAD).toBe(40_000);
    expect(autoClientThreads({ ...base, targetQps: 1000 })).toEqual({ threads: 1, note: 'auto: 1,000 requests/s needs 1 at 40,000/s each' });
    expect(autoClientThreads({ ...base, targetQps: 40_000 }).threads).toBe(1);
    expect(autoClientThreads({ ...base, targetQps: 40_001 }).threads).toBe(2);
    expect(autoClientThreads({ ...base, targetQps: 100_000 })).toEqual({ threads: 3, note: 'auto: 100,000 requests/s needs 3 at 40,000/s each' });
    // 16 cores, the issue thread's and the JS thread's aside: 14.
    expect(autoClientThreads({ ...base, targetQps: 1e6 })).toEqual({
      threads: 14, note: 'auto: 1,000,000 requests/s needs 25 at 40,000/s each; 14 cores free beside the issue thread and the JS thread',
    });
    // No JS per body: only the issue thread's core aside.
    expect(autoClientThreads({ ...base, jsReadsBodies: false, targetQps: 1e6 }).threads).toBe(15);
    expect(autoClientThreads({ ...base, targetQps: 1e6, connections: 4 })).toEqual({
      threads: 4, note: 'auto: 1,000,000 requests/s needs 25 at 40,000/s each; connections 4',
    });
    expect(autoClientThreads({ ...base, cores: 128, targetQps: 1e8 }).note).toMatch(/; the limit of 64$/);
    expect(autoClientThreads({ ...base, cores: 128, targetQps: 1e8 }).threads).toBe(64);
    // A machine with no core free beside them: one (the issue thread reads inline).
    for (const cores of [1, 2]) expect(autoClientThreads({ ...base, cores, targetQps: 1e6 }).threads).toBe(1);
    expect(autoClientThreads({ ...base, cores: 2, targetQps: 1e6 }).note).toMatch(/needs 25 .*; 1 core free beside the issue thread and the JS thread$/);
    // No rate known: one, and the note says why.
    expect(autoClientThreads({ ...base, targetQps: undefined })).toEqual({ threads: 1, note: 'auto: no target rate was given (targetQps), so one' });
    expect(autoClientThreads({ ...base, targetQps: 0.5 }).note).toBe('auto: 0.5 requests/s needs 1 at 40,000/s each');
  });

  it('checkTransportOptions: auto is the default, a number is taken as given, undici gets one', () => {
    const max = loadNative().tables.maxClientThreads;
    const auto = checkTransportOptions({ urls: ['http://127.0.0.1:1'], targetQps: 100_000 }, 16);
    expect(auto).toMatchObject({ clientThreads: 3, clientThreadsAuto: true, clientThreadsNote: 'auto: 100,000 requests/s needs 3 at 40,000/s each' });
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'], clientThreads: 'auto', targetQps: 1e6, readEveryResponse: false }, 8).clientThreads).toBe(7);
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'], targetQps: 1e6, connections: 2 }, 16).clientThreads).toBe(2);
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'], targetQps: 1e9 }, 1024).clientThreads).toBe(max);
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'] }, 16)).toMatchObject({ clientThreads: 1, clientThreadsAuto: true });
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'], clientThreads: 5, targetQps: 1 }, 16)).toMatchObject({ clientThreads: 5, clientThreadsAuto: false, clientThreadsNote: '' });
    expect(checkTransportOptions({ urls: ['http://127.0.0.1:1'], transport: 'undici', targetQps: 1e6 }, 16)).toMatchObject({ clientThreads: 1, clientThreadsNote: '' });
    for (const targetQps of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '100'])
      expect(() => checkTransportOptions({ urls: ['http://127.0.0.1:1'], targetQps } as never, 16)).toThrow(SettingsError);
    expect(() => checkTransportOptions({ urls: ['http://127.0.0.1:1'], targetQps: -1 }, 16)).toThrow(/targetQps must be a finite number > 0 \(requests\/s\), got -1/);
    expect(() => checkTransportOptions({ urls: ['http://127.0.0.1:1'], clientThreads: 'many' } as never, 16)).toThrow(/clientThreads must be an integer >= 1 or 'auto', got 'many'/);
  });

  it("the CLI's rate: a Server run's target, an Offline run's expected rate, none for the others", () => {
    expect(runTargetQps({ scenario: 'Server', serverTargetQps: 250_000 })).toBe(250_000);
    expect(runTargetQps({ scenario: 'Server' })).toBe(1);
    expect(runTargetQps({ scenario: 'Offline', offlineExpectedQps: 9000 })).toBe(9000);
    expect(runTargetQps({ scenario: 'SingleStream', serverTargetQps: 1e6 })).toBeUndefined();
    expect(runTargetQps({ scenario: 'MultiStream' })).toBeUndefined();
    expect(runTargetQps({})).toBeUndefined();
  });

  it.skipIf(!loadNative().nativeHttpAvailable)("the summary's block says how auto chose", async () => {
    const node = await server(nodeHandler('auto-node'));
    const sut = await createNetworkSut(testProtocol(16), { urls: [node.url], transport: 'native', targetQps: 2000 });
    try {
      const r = await startTest(sut, sut.qsl, { scenario: 'Offline', offlineExpectedQps: 100, minDurationMs: 0, minQueryCount: 16 }, { outdir: tempDir() });
      expect(r.counts.completedSamples).toBe(16);
      expect(sut.stats().clientThreadsNote).toBe('auto: 2,000 requests/s needs 1 at 40,000/s each');
      const report = (sut as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines).toContain('  Chosen : auto: 2,000 requests/s needs 1 at 40,000/s each');
    } finally {
      await sut.close();
    }
    // Given: no such line.
    const given = await createNetworkSut(testProtocol(8), { urls: [node.url], transport: 'native', clientThreads: 1 });
    try {
      const report = (given as unknown as { report(): { lines: string[] } }).report();
      expect(report.lines.some((l) => l.startsWith('  Chosen :'))).toBe(false);
    } finally {
      await given.close();
    }
  });
});
