/**
 * Waiting for a node that is not up yet (issue 25): `waitForNodesMs` /
 * `loadgen run --wait-for-nodes SECONDS` probe a node that refuses
 * connections or answers 503 again until it answers, bounded, and say
 * which node and how long when it never does; Ctrl-C ends the wait at once.
 * Every server is on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { NetworkSetupError } from '../lib/errors.js';
import { createNetworkSut } from '../lib/net/transport.js';
import { startOpenAiStub } from '../lib/serve/openai-stub.js';
import { repoRoot, tempDir } from './helpers.js';
import { nodeHandler, testProtocol, testServers } from './net-helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const startServer = testServers();

/** A port nothing listens on (taken from the kernel, then freed). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function loadgen(args: string[]): { child: ReturnType<typeof spawn>; done: Promise<{ status: number | null; stderr: string; stdout: string; ms: number }> } {
  const started = Date.now();
  const child = spawn(process.execPath, [cli, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<{ status: number | null; stderr: string; stdout: string; ms: number }>((resolve) =>
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr, stdout, ms: Date.now() - started });
    }));
  return { child, done };
}

describe('waitForNodesMs', () => {
  it('probes a node that answers 503 again until it is ready; without it the first 503 is final', async () => {
    let readyAt = Date.now() + 800;
    const node = await startServer((req, res, body) => {
      if (req.url === '/name' && Date.now() < readyAt) {
        res.statusCode = 503;
        res.end('loading');
        return;
      }
      nodeHandler('late-node')(req, res, body);
    });
    const once = await createNetworkSut(testProtocol(), { urls: [node.url], transport: 'undici' }).catch((e: unknown) => e);
    expect(once).toBeInstanceOf(NetworkSetupError);
    readyAt = Date.now() + 800;
    const started = Date.now();
    const sut = await createNetworkSut(testProtocol(), { urls: [node.url], transport: 'undici', waitForNodesMs: 10_000 });
    try {
      expect(Date.now() - started).toBeGreaterThanOrEqual(700);
      expect(sut.name).toContain('late-node');
    } finally {
      await sut.close();
    }
  });

  it('does not wait for a node that answers with an error other than 503', async () => {
    const node = await startServer((_req, res) => {
      res.statusCode = 404;
      res.end('no such thing');
    });
    const started = Date.now();
    const error = await createNetworkSut(testProtocol(), { urls: [node.url], transport: 'undici', waitForNodesMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkSetupError);
    expect((error as Error).message).toContain('GET /name answered 404');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('is checked: an integer of ms >= 0', async () => {
    await expect(createNetworkSut(testProtocol(), { urls: ['http://127.0.0.1:1'], waitForNodesMs: -1 })).rejects.toThrow(/waitForNodesMs must be an integer >= 0, got -1/);
  });
});

describe('loadgen run --wait-for-nodes', () => {
  it('gives up after the wait, naming the node, the wait and the last error (exit 2)', async () => {
    const port = await freePort();
    const { done } = loadgen(['run', '--sut', 'kserve', '--url', `http://127.0.0.1:${port}`, '--model', 'demo-cnn', '--wait-for-nodes', '1.5', '--outdir', tempDir()]);
    const r = await done;
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^loadgen: node http://127\\.0\\.0\\.1:${port} did not come up within the 1\\.5 s it was waited for \\(\\d+ probes\\); the last: .*ECONNREFUSED`, 'm'));
    expect(r.ms).toBeGreaterThanOrEqual(1500);
  });

  it('runs once a server that starts late answers', async () => {
    const port = await freePort();
    const dir = tempDir();
    const dataset = join(dir, 'prompts.jsonl');
    writeFileSync(dataset, '{"prompt": "hello", "max_tokens": 4}\n{"prompt": "again", "max_tokens": 4}\n');
    const outdir = join(dir, 'out');
    const { done } = loadgen(['run', '--sut', 'openai', '--url', `http://127.0.0.1:${port}`, '--model', 'loadgen-stub', '--dataset', dataset,
      '--mode', 'AccuracyOnly', '--wait-for-nodes', '30', '--no-progress', '--outdir', outdir]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stub = await startOpenAiStub({ host: '127.0.0.1', port, ttftMs: 1, tpotMs: 1 });
    try {
      const r = await done;
      expect(r.status, r.stderr).toBe(0);
      expect(existsSync(join(outdir, 'mlperf_log_accuracy.json'))).toBe(true);
      expect(readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8')).toContain('loadgen-stub');
    } finally {
      await stub.close();
    }
  });

  it('stops waiting at once on SIGINT (exit 130)', async () => {
    const port = await freePort();
    const { child, done } = loadgen(['run', '--sut', 'kserve', '--url', `http://127.0.0.1:${port}`, '--model', 'demo-cnn', '--wait-for-nodes', '60', '--outdir', tempDir()]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const signalled = Date.now();
    child.kill('SIGINT');
    const r = await done;
    expect(r.status, r.stderr).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(3_000);
  });

  it('refuses a bad value or a SUT without nodes (exit 2)', async () => {
    for (const [args, message] of [
      [['--sut', 'kserve', '--url', 'http://127.0.0.1:1', '--model', 'm', '--wait-for-nodes', 'soon'], /--wait-for-nodes must be a number of seconds from 0 to 2147483, got 'soon'/],
      [['--sut', 'kserve', '--url', 'http://127.0.0.1:1', '--model', 'm', '--wait-for-nodes', '-1'], /--wait-for-nodes must be a number of seconds/],
      [['--sut', 'null', '--wait-for-nodes', '5'], /--wait-for-nodes applies only to a network SUT/],
    ] as [string[], RegExp][]) {
      const r = await loadgen(['run', ...args, '--outdir', tempDir()]).done;
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
