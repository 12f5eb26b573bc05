/**
 * `loadgen serve` as a child process on 127.0.0.1, port 0: prints its URL,
 * serves, and closes cleanly (exit 0) on SIGTERM / SIGINT; bad options exit 2
 * before listening.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { repoRoot } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Starts `loadgen serve ...args`, resolves with the URL it prints. */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 60 s; stdout: ${stdout}; stderr: ${stderr}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve({ child, url, stderr: () => stderr, exit });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before printing a URL: ${stderr}`));
    });
  });
}

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, 'serve', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('loadgen serve', () => {
  it('--model demo-cnn --port 0: prints one line with the URL, serves KServe v2, SIGTERM closes it with exit 0', async () => {
    const server = await serve(['--model', 'demo-cnn', '--port', '0', '--workers', '1']);
    const ready = await fetch(`${server.url}/v2/health/ready`);
    expect(ready.status).toBe(200);
    const meta = (await (await fetch(`${server.url}/v2/models/demo-cnn`)).json()) as { name: string };
    expect(meta.name).toBe('demo-cnn');
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
    expect(server.stderr()).toMatch(/SIGTERM received: closing/);
  }, 90_000);

  it('--openai-stub: the token streamer, closed by SIGINT with exit 0', async () => {
    const server = await serve(['--openai-stub', '--ttft-ms', '1', '--tpot-ms', '1', '--port', '0']);
    const models = await fetch(`${server.url}/v1/models`);
    expect(models.status).toBe(200);
    server.child.kill('SIGINT');
    expect(await server.exit).toBe(0);
  }, 90_000);

  it('bad options exit 2 with a clear message', async () => {
    const cases: [string[], RegExp][] = [
      [['--model', 'resnet'], /--model 'resnet' is not bundled: only demo-cnn can be served/],
      [[], /give --model demo-cnn .* or --openai-stub/],
      [['--model', 'demo-cnn', '--openai-stub'], /--model and --openai-stub are two servers/],
      [['--model', 'demo-cnn', '--ttft-ms', '5'], /--ttft-ms applies only with --openai-stub/],
      [['--openai-stub', '--workers', '2'], /--workers applies only with --model/],
      [['--model', 'demo-cnn', '--no-usage', '--stub-model', 'x'], /--stub-model, --no-usage apply only with --openai-stub/],
      [['--model', 'demo-cnn', '--port', '70000'], /--port must be an integer in \[0, 65535\]/],
      [['--openai-stub', '--ttft-ms', 'soon'], /--ttft-ms must be a number of milliseconds/],
    ];
    for (const [args, pattern] of cases) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(pattern);
      expect(r.stdout).toBe('');
    }
  }, 120_000);

  it('a port in use exits 2 naming --port', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = run(['--openai-stub', '--port', String(port)]);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use; choose another --port`));
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 60_000);
});
