import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadNative } from '../lib/native/index.js';
import { startOpenAiStub, type OpenAiStub } from '../lib/serve/openai-stub.js';
import { readText, repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const KEY = 'sk-cli-secret-0123456789abcdef';

// The stub runs in this process: the CLI must run without blocking its event loop.
function loadgen(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: repoRoot, env: { ...process.env, OPENAI_API_KEY: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const dir = tempDir('loadgen-openai-cli-');
const dataset = join(dir, 'prompts.jsonl');
writeFileSync(dataset, ['{"prompt": "Tell me a story", "max_tokens": 8}', '{"messages": [{"role": "user", "content": "Hello there"}], "max_tokens": 4}'].join('\n') + '\n');

const nativeHttp = loadNative().nativeHttpAvailable;

describe('loadgen run --sut openai', () => {
  let stub: OpenAiStub;
  beforeAll(async () => {
    stub = await startOpenAiStub({ port: 0, ttftMs: 5, tpotMs: 1, apiKey: KEY });
  });
  afterAll(async () => {
    await stub.close();
  });

  const base = (): string[] => ['run', '--sut', 'openai', '--url', stub.url, '--model', 'loadgen-stub', '--dataset', dataset, '--no-progress'];

  it('runs with the key from OPENAI_API_KEY, token latencies on, and never writes the key', async () => {
    const outdir = join(tempDir(), 'out');
    const r = await loadgen([...base(), '--scenario', 'Server', '--set', 'server_target_qps=20', '--set', 'min_duration_ms=500', '--set', 'min_query_count=10', '--outdir', outdir, '--json'], {
      OPENAI_API_KEY: KEY,
    });
    expect(r.stderr).not.toMatch(/error/i);
    expect([0, 1]).toContain(r.status);
    const result = JSON.parse(r.stdout) as { sutName: string; tokens?: { tokenCount: number; ttftNs: unknown }; errors: { count: number } };
    expect(result.sutName).toContain('Network SUT');
    expect(result.sutName).toContain('loadgen-stub (loadgen-stub)');
    expect(result.errors.count).toBe(0);
    expect(result.tokens?.tokenCount).toBeGreaterThan(0);
    expect(result.tokens?.ttftNs).toBeDefined();
    const summary = readText(join(outdir, 'mlperf_log_summary.txt'));
    expect(summary).toContain('TTFT');
    // The SUT block after the summary says where the token counts came from.
    expect(summary).toMatch(/output tokens: usage in (\d+) of \1 responses \(chunks with output otherwise\)/);
    // 'auto': the token streams go through the native client where it exists.
    expect(summary).toContain(nativeHttp ? "Transport : native (the core's HTTP/1.1 client)" : 'Transport : undici (JS thread)');
    const secret = KEY.slice(3);
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
    const files = filesUnder(outdir);
    expect(files.length).toBeGreaterThan(2);
    for (const file of files) expect(readFileSync(file, 'latin1')).not.toContain(secret);
  });

  it('a refused key is exit 2 without the key; --api-key-env names another variable', async () => {
    const refused = await loadgen([...base(), '--outdir', join(tempDir(), 'o')], { OPENAI_API_KEY: 'sk-wrong-0000000000' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/refused the API key \(HTTP 401\)/);
    expect(refused.stderr + refused.stdout).not.toContain('wrong-0000');
    const named = await loadgen([...base(), '--api-key-env', 'MY_KEY', '--mode', 'AccuracyOnly', '--outdir', join(tempDir(), 'o'), '--json'], { MY_KEY: KEY });
    expect(named.stderr).toBe('');
    expect(named.status).toBe(0);
    expect(named.stdout).not.toContain(KEY.slice(3));
  });

  it('--no-stream and --api completions run from the command line', async () => {
    const transport = nativeHttp ? ['--transport', 'native'] : [];
    const noStream = await loadgen([...base(), ...transport, '--no-stream', '--mode', 'AccuracyOnly', '--outdir', join(tempDir(), 'o'), '--json'], { OPENAI_API_KEY: KEY });
    expect(noStream.stderr).toBe('');
    expect(noStream.status).toBe(0);
    // No first token can be timed without a stream: token latencies are not defaulted on.
    expect((JSON.parse(noStream.stdout) as { tokens?: unknown }).tokens).toBeUndefined();
    const prompts = join(dir, 'prompts-only.jsonl');
    writeFileSync(prompts, '{"prompt": "a b c", "max_tokens": 3}\n');
    const before = stub.requestCount;
    const outdir = join(tempDir(), 'o');
    const completions = await loadgen(
      ['run', '--sut', 'openai', '--url', stub.url, '--model', 'loadgen-stub', '--dataset', prompts, '--api', 'completions', '--mode', 'AccuracyOnly', '--outdir', outdir],
      { OPENAI_API_KEY: KEY },
    );
    expect(completions.stderr).toBe('');
    expect(completions.status).toBe(0);
    expect(stub.requestCount).toBe(before + 1);
    // The stub's text for 'a b c', its first token and the usage count.
    expect(readText(join(outdir, 'mlperf_log_accuracy.json'))).toContain('"qsl_idx" : 0, "data" : "6120622063", "token_data" : "61", "token_count" : 3 }');
  });

  it('a bad data set line is exit 2 naming the file, line and field, before any request', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"prompt": "a"}\n\n{"prompt": "b", "max_tokens": -3}\n');
    const before = stub.requestCount;
    const r = await loadgen(['run', '--sut', 'openai', '--url', stub.url, '--model', 'loadgen-stub', '--dataset', bad, '--outdir', join(tempDir(), 'o')], { OPENAI_API_KEY: KEY });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`dataset ${bad}:3: max_tokens: must be an integer in 1..2147483647, got -3`);
    expect(stub.requestCount).toBe(before);
  });

  it('--api completions with a messages line is exit 2; a model the node lacks is exit 2', async () => {
    const r = await loadgen([...base(), '--api', 'completions', '--outdir', join(tempDir(), 'o')], { OPENAI_API_KEY: KEY });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/prompts\.jsonl:2: messages: is for --api chat/);
    const m = await loadgen(['run', '--sut', 'openai', '--url', stub.url, '--model', 'nope', '--dataset', dataset, '--outdir', join(tempDir(), 'o')], { OPENAI_API_KEY: KEY });
    expect(m.status).toBe(2);
    expect(m.stderr).toMatch(/does not serve the model 'nope'; it lists 'loadgen-stub'/);
  });
});
