/**
 * `loadgen serve` as a child process on 127.0.0.1, port 0: prints its URL,
 * serves, and closes cleanly (exit 0) on SIGTERM / SIGINT; bad options exit 2
 * before listening. --ready-file, and the exit of the npm process that
 * started it (a stand-in for npm: test/fixtures/fake-npm/npm-cli.js).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { isNpmCommandLine } from '../lib/cli/parent-watch.js';
import { repoRoot, tempDir } from './helpers.js';

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

/** Whether something accepts a TCP connection at `url`. */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(what: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await what()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return what();
}

/** Pids whose environment holds `entry` (the processes a test started, orphans too). */
function withEnv(entry: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((name) => {
    try {
      return readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(entry);
    } catch {
      return false;
    }
  }).map(Number);
}

describe('loadgen serve in a script', () => {
  it('--ready-file: written once listening (the URL, one line, no temporary file left), removed on exit', async () => {
    const dir = tempDir();
    const file = join(dir, 'stub.url');
    const server = await serve(['--openai-stub', '--port', '0', '--ready-file', file]);
    // The URL line and the file both come once the server listens.
    expect(await answers(server.url)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(`${server.url}\n`);
    expect(readdirSync(dir)).toEqual(['stub.url']);
    server.child.kill('SIGTERM');
    expect(await server.exit, `${server.child.signalCode} ${server.stderr()}`).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it('--ready-file in a folder that does not exist: exit 2 naming it, nothing left listening', () => {
    const file = join(tempDir(), 'missing', 'stub.url');
    const r = run(['--openai-stub', '--port', '0', '--ready-file', file]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^loadgen: --ready-file .*missing\/stub\.url: cannot write it: ENOENT/m);
    expect(r.stdout).toBe('');
  }, 60_000);

  it('recognises npm on a command line: its script, its executable, its process title', () => {
    expect(isNpmCommandLine(['node', '/usr/lib/node_modules/npm/bin/npm-cli.js', 'exec'], undefined)).toBe(true);
    expect(isNpmCommandLine(['/usr/bin/node', '/opt/x/bin/npx-cli.js'], undefined)).toBe(true);
    expect(isNpmCommandLine(['npm exec loadgen serve --openai-stub'], undefined)).toBe(true);
    expect(isNpmCommandLine(['/usr/local/bin/npx', 'loadgen'], undefined)).toBe(true);
    expect(isNpmCommandLine(['node', '/some/fake.js'], '/some/fake.js')).toBe(true);
    expect(isNpmCommandLine(['sh', '-c', "npx loadgen serve"], undefined)).toBe(false);
    expect(isNpmCommandLine(['node', '/repo/dist/cli.js', 'serve'], undefined)).toBe(false);
  });

  const fakeNpm = join(repoRoot, 'test', 'fixtures', 'fake-npm', 'npm-cli.js');
  /** `loadgen serve --openai-stub` started by the stand-in npm; resolves once its ready file holds the URL. */
  async function serveUnderNpm(plain: boolean): Promise<{ npm: ChildProcess; url: string; log: string; marker: string }> {
    const dir = tempDir();
    const file = join(dir, 'stub.url');
    const log = join(dir, 'serve.log');
    const marker = `LOADGEN_SERVE_TEST=${process.pid}-${Date.now()}-${plain}`;
    const npm = spawn(process.execPath, [fakeNpm, log, process.execPath, cli, 'serve', '--openai-stub', '--port', '0', '--ready-file', file], {
      stdio: 'ignore',
      env: { ...process.env, LOADGEN_SERVE_TEST: marker.slice(marker.indexOf('=') + 1), ...(plain ? { FAKE_NPM_PLAIN: '1' } : {}) },
    });
    children.push(npm);
    expect(await until(() => existsSync(file), 30_000), existsSync(log) ? readFileSync(log, 'utf8') : 'no log').toBe(true);
    return { npm, url: readFileSync(file, 'utf8').trim(), log, marker };
  }

  it.skipIf(process.platform !== 'linux')('started by npm, exits once that npm process is killed (SIGKILL: no signal reaches it)', async () => {
    const { npm, url, log, marker } = await serveUnderNpm(false);
    try {
      expect(await answers(url)).toBe(true);
      npm.kill('SIGKILL');
      expect(await until(async () => !(await answers(url)), 3_000), readFileSync(log, 'utf8')).toBe(true);
      expect(await until(() => withEnv(marker).length === 0, 3_000)).toBe(true);
      expect(readFileSync(log, 'utf8')).toMatch(new RegExp(`loadgen serve: npm \\(pid ${npm.pid}\\), which started it, exited: closing`));
    } finally {
      for (const pid of withEnv(marker)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);

  it.skipIf(process.platform !== 'linux')('started by any other parent, keeps serving when that parent is gone', async () => {
    const { npm, url, marker } = await serveUnderNpm(true);
    try {
      npm.kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await answers(url)).toBe(true);
    } finally {
      for (const pid of withEnv(marker)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});
