/**
 * `loadgen run` with network SUTs: option errors (exit 2), a node that is
 * down (exit 2, no query), the API key never written anywhere, Ctrl-C with
 * a slow node. The CLI runs in a child process; the servers in this one.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { nodeHandler, startTestServer, testServers } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const mapModule = join(repoRoot, 'test', 'fixtures', 'http-map.mjs');
const server = testServers();

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process's servers; `onSpawn` may signal it. */
function runCli(args: string[], env: NodeJS.ProcessEnv = {}, onSpawn?: (child: ReturnType<typeof spawn>) => void): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    onSpawn?.(child);
  });
}

const short = ['--scenario', 'Server', '--set', 'server_target_qps=100', '--set', 'min_duration_ms=300', '--set', 'min_query_count=20', '--no-progress'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

describe('loadgen run: network options', () => {
  it('refuses options that do not fit, naming them (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['--sut', 'null', '--url', 'http://127.0.0.1:1'], /--url applies only to a network SUT/],
      [['--sut', 'null', '--response-poll-us', '100'], /--response-poll-us applies only to a network SUT/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--response-poll-us', '2000000'], /responsePollUs must be at most 1000000, got 2000000/],
      [['--sut', 'null', '--client-threads', '2'], /--client-threads applies only to a network SUT/],
      [['--sut', 'null', '--no-idle-runtime-threads'], /--no-idle-runtime-threads applies only to a network SUT/],
      [['--sut', 'null', '--js-thread-nice', '5'], /--js-thread-nice applies only to a network SUT/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--js-thread-nice', '20'], /--js-thread-nice must be an integer from 0 to 19, got '20'/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--client-threads', '0'], /--client-threads must be a positive integer or auto, got '0'/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--connections', '2', '--client-threads', '3'], /clientThreads 3 exceeds connections 2/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--transport', 'undici', '--client-threads', '2'], /clientThreads 2 needs the native transport/],
      [['--sut', 'http', '--request', mapModule], /--sut http needs --url/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1'], /--sut http needs --request/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--api', 'chat'], /--api applies only to --sut openai/],
      [['--sut', 'openai', '--url', 'http://127.0.0.1:1', '--dataset', 'x.jsonl'], /--sut openai needs --model/],
      [['--sut', 'http', '--url', 'ftp://127.0.0.1:1', '--request', mapModule], /ftp: is not supported/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--balance', 'random'], /--balance 'random' is not one of/],
      [['--sut', 'http', '--url', 'http://127.0.0.1:1', '--request', mapModule, '--api-key-env', 'LOADGEN_TEST_UNSET_KEY'], /LOADGEN_TEST_UNSET_KEY is not set/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(['run', ...args, '--outdir', tempDir()]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('a node that is down: exit 2 naming its URL, no query sent to the other', async () => {
    const up = await server(nodeHandler('up'));
    const down = await startTestServer();
    await down.close();
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', up.url, '--url', down.url, '--request', mapModule, ...short, '--outdir', outdir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(down.url);
    expect(up.hits.get('/infer')).toBeUndefined();
    expect(existsSync(join(outdir, 'mlperf_log_summary.txt'))).toBe(false);
  });

  it('--sut http runs a mapping module against the nodes', async () => {
    const a = await server(nodeHandler('node-a'));
    const b = await server(nodeHandler('node-b'));
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', a.url, '--url', b.url, '--request', mapModule, '--balance', 'round-robin', ...short, '--outdir', outdir, '--json']);
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout) as { sutName: string; counts: { issuedSamples: number; completedSamples: number } };
    expect(result.sutName).toBe('Network SUT (http): node-a, node-b');
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    // One more: sample 0 sent once before the run, to try the module's response() on a real answer.
    expect((a.hits.get('/infer') ?? 0) + (b.hits.get('/infer') ?? 0)).toBe(result.counts.issuedSamples + 1);
  });

  it("--client-threads auto (the default) plans for the run's target rate and the summary says so; a number is taken as given", async () => {
    const node = await server(nodeHandler('node-auto'));
    const auto = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', mapModule, '--client-threads', 'auto', ...short, '--outdir', tempDir()]);
    expect(auto.stdout).toContain('Client threads : 1 (responses read');
    expect(auto.stdout).toContain('  Chosen : auto: 100 requests/s needs 1 at 40,000/s each');
    const given = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', mapModule, '--client-threads', '1', ...short, '--outdir', tempDir()]);
    expect(given.stdout).toContain('Client threads : 1 (responses read');
    expect(given.stdout).not.toContain('Chosen :');
    // `loadgen run` lowers its JS thread (CLI_JS_THREAD_NICE) unless told not to.
    expect(auto.stdout).toMatch(/^JS thread : nice 10, loadgen's threads on /m);
    const kept = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', mapModule, '--js-thread-nice', '0', ...short, '--outdir', tempDir()]);
    expect(kept.code).not.toBe(2);
    expect(kept.stdout).toContain('Client threads : 1 (responses read');
    expect(kept.stdout).not.toContain('JS thread :');
  });

  it("--set dispatch=worker sends from worker threads; --config-model names the config files' model", async () => {
    const node = await server(nodeHandler('worker-node'));
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'user.conf'), 'netmodel.Server.target_qps = 80\n');
    const before = node.hits.get('/infer') ?? 0;
    const run = await runCli([
      'run', '--sut', 'http', '--url', node.url, '--request', mapModule, '--user-conf', join(dir, 'user.conf'), '--config-model', 'netmodel',
      '--scenario', 'Server', '--set', 'min_duration_ms=300', '--set', 'min_query_count=20', '--set', 'dispatch=worker', '--set', 'dispatch_workers=2',
      '--no-progress', '--outdir', dir, '--json',
    ]);
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout) as { effectiveSettings: Record<string, unknown>; counts: { issuedSamples: number; completedSamples: number }; sutReport?: { data: { nodes: { completed: number }[] } } };
    expect(Number(result.effectiveSettings.targetQps)).toBe(80);
    expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
    // One more: sample 0 sent once before the run, to try the module's response() on a real answer.
    expect((node.hits.get('/infer') ?? 0) - before).toBe(result.counts.issuedSamples + 1);
    expect(result.sutReport?.data.nodes[0]!.completed).toBe(result.counts.issuedSamples);
  });
});

describe('loadgen run: the API key and Ctrl-C', () => {
  const key = 'sk-loadgen-test-7f3a9c1e55d04b2b';

  it('sends the key as a bearer token and never writes it: logs, report, stdout, stderr, --json', async () => {
    let authorized = 0;
    // Answers every third request with an error that echoes the key back, and names itself with it too.
    const node = await server((req, res, body) => {
      if (req.headers.authorization === `Bearer ${key}`) authorized++;
      if (req.url === '/name') {
        res.end(`node with ${req.headers.authorization ?? ''}`);
        return;
      }
      const x = (JSON.parse(body) as { x: number }).x;
      if (x % 3 === 0) {
        res.statusCode = 401;
        res.end(`bad token ${req.headers.authorization ?? ''}`);
      } else res.end(`echo:${body}`);
    });
    for (const json of [false, true]) {
      const outdir = tempDir();
      const run = await runCli(
        ['run', '--sut', 'http', '--url', node.url, '--request', mapModule, '--api-key-env', 'LOADGEN_TEST_KEY', ...short, '--outdir', outdir, ...(json ? ['--json'] : [])],
        { LOADGEN_TEST_KEY: key },
      );
      expect(run.code).toBe(1);  // INVALID: failed samples
      expect(run.stdout + run.stderr).not.toContain(key);
      const files = filesUnder(outdir);
      expect(files.some((f) => f.endsWith('mlperf_log_detail.txt'))).toBe(true);
      for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(key);
      const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
      expect(detail).toContain('HTTP 401: bad token Bearer <redacted>');
    }
    expect(authorized).toBeGreaterThan(20);
  });

  it('Ctrl-C with a slow node ends the run at once with the logs written (exit 130)', async () => {
    const slow = await server(nodeHandler('slow', () => undefined));
    const outdir = tempDir();
    let signalledAt = 0;
    const run = await runCli(
      // The node never answers: sample 0's try before the run gives up after the probe timeout.
      ['run', '--sut', 'http', '--url', slow.url, '--request', mapModule, '--probe-timeout-ms', '500', '--scenario', 'Server', '--set', 'server_target_qps=50', '--set', 'min_duration_ms=60000', '--set', 'min_query_count=100', '--no-progress', '--outdir', outdir],
      {},
      (child) => {
        const poll = setInterval(() => {
          // Signalled once requests are outstanding at the node.
          if ((slow.hits.get('/infer') ?? 0) >= 10) {
            clearInterval(poll);
            signalledAt = Date.now();
            child.kill('SIGINT');
          }
        }, 20);
      },
    );
    expect(run.code).toBe(130);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    const summary = readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8');
    expect(summary).toContain('INVALID');
    expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toMatch(/cancelled/);
  });
});

describe('loadgen run: https nodes and --http2', () => {
  it('speaks HTTP/2 to an https node with --http2, HTTP/1.1 without', async () => {
    const { execFileSync } = await import('node:child_process');
    const { createSecureServer } = await import('node:http2');
    const dir = tempDir();
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const versions = new Map<string, number>();
    const h2 = createSecureServer({ key: readFileSync(key), cert: readFileSync(cert), allowHTTP1: true }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/name') return void res.end('tls-node');
        versions.set(req.httpVersion, (versions.get(req.httpVersion) ?? 0) + 1);
        res.end(`echo:${body}`);
      });
    });
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(h2.address() as { port: number }).port}`;
    try {
      for (const http2 of [true, false]) {
        versions.clear();
        const run = await runCli(['run', '--sut', 'http', '--url', url, '--request', mapModule, ...short, '--outdir', tempDir(), '--json', ...(http2 ? ['--http2'] : [])], {
          NODE_EXTRA_CA_CERTS: cert,
        });
        expect(run.stderr).toBe('');
        const result = JSON.parse(run.stdout) as { counts: { issuedSamples: number; completedSamples: number } };
        expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
        // One more: sample 0 sent once before the run, to try the module's response() on a real answer.
        expect(Object.fromEntries(versions)).toEqual({ [http2 ? '2.0' : '1.1']: result.counts.issuedSamples + 1 });
      }
    } finally {
      await new Promise<void>((resolve) => h2.close(() => resolve()));
    }
  });
});
