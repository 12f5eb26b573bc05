/**
 * No part of a secret is ever written (issue 23, item 4): the API key, the
 * Authorization value and secret request headers are redacted from every
 * message, node name, setup error, log, report and printed line, also when a
 * server quotes them masked ("sk-…0123456789******") or cut, on both
 * transports and in the node probes. The CLI runs in a child process; the
 * servers in this one.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { REDACTED, Secrets, SECRET_HEADER_NAMES } from '../lib/net/secrets.js';
import { testServers } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

const cli = join(repoRoot, 'dist', 'cli.js');
const server = testServers();

const KEY = 'sk-proj-Zq7Wm3Xv9Lp2Rt5Yb8Nc4Hd6Jf1Kg0123456789';
const HEADER_SECRET = 'hdr-4f8a2c9e7b1d3f5a6c8e0b2d4f6a8c0e';
const CUSTOM_SECRET = 'tok-9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b';

/** The ways servers quote a secret back: masked at the end, cut at the start, a middle run, whole, as sent. */
function quotes(secret: string): string[] {
  return [
    `Incorrect API key provided: ${secret.slice(0, -6)}******`,
    `key ****${secret.slice(4)} is not valid`,
    `fragment=${secret.slice(3, 15)};`,
    `you sent ${secret}`,
    `Authorization: Bearer ${secret}`,
  ];
}

/** Fails naming `where` when `text` holds any 8 consecutive characters of `secret`. */
function expectNoPart(text: string, secret: string, where: string): void {
  for (let i = 0; i + 8 <= secret.length; i++) {
    const part = secret.slice(i, i + 8);
    if (text.includes(part)) expect.fail(`${where} holds '${part}' (characters ${i}..${i + 7} of a secret):\n${text.slice(Math.max(0, text.indexOf(part) - 200), text.indexOf(part) + 200)}`);
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

/** Every file of `outdir`, stdout and stderr: no part of any of `secrets`. */
function expectNothingLeaked(outdir: string | undefined, run: CliRun, secrets: readonly string[]): void {
  for (const secret of secrets) {
    expectNoPart(run.stdout, secret, 'stdout');
    expectNoPart(run.stderr, secret, 'stderr');
    if (outdir === undefined) continue;
    for (const file of filesUnder(outdir)) expectNoPart(readFileSync(file, 'utf8'), secret, file);
  }
}

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const dir = tempDir();
const dataset = join(dir, 'prompts.jsonl');
writeFileSync(dataset, `${['one', 'two', 'three', 'four'].map((p) => JSON.stringify({ prompt: p, max_tokens: 4 })).join('\n')}\n`);

// Sample i is POST /infer; the node's name is what GET /name answers.
const mapModule = join(dir, 'map.mjs');
writeFileSync(mapModule, `export const totalSampleCount = 16;
export function request(index) { return { method: 'POST', path: '/infer', body: { x: index } }; }
export async function name(node) { return Buffer.from((await node.request('GET', '/name')).body).toString('utf8'); }
`);

// The same with secret headers: one by its name, one the module marks.
const headerModule = join(dir, 'headers.mjs');
writeFileSync(headerModule, `export const totalSampleCount = 16;
export const secretHeaders = ['X-Custom-Token'];
export function request(index) {
  return { method: 'POST', path: '/infer', headers: { 'x-api-key': ${JSON.stringify(HEADER_SECRET)}, 'x-custom-token': ${JSON.stringify(CUSTOM_SECRET)} }, body: { x: index } };
}
`);

// A secret header whose value differs per sample: the later ones become known as the samples load.
const perSampleSecret = (index: number): string => `per-sample-${String(index).padStart(2, '0')}-${HEADER_SECRET.slice(4)}`;
const perSampleModule = join(dir, 'per-sample.mjs');
writeFileSync(perSampleModule, `export const totalSampleCount = 16;
export function request(index) {
  return { method: 'POST', path: '/infer', headers: { 'x-api-key': 'per-sample-' + String(index).padStart(2, '0') + '-' + ${JSON.stringify(HEADER_SECRET.slice(4))} }, body: { x: index } };
}
`);

// A module whose own errors quote the key it reads from the environment.
const throwingModule = join(dir, 'throwing.mjs');
writeFileSync(throwingModule, `export const totalSampleCount = 16;
const key = process.env.LOADGEN_TEST_KEY;
export function request(index) {
  if (index === 9) throw new Error('cannot sign sample 9 with ' + key.slice(0, -4));
  return { method: 'POST', path: '/infer', body: { x: index } };
}
// Sample 0 maps (it is tried before the run); every other answer throws.
export function response({ index }) { if (index !== 0) throw new Error('the answer did not carry ' + key.slice(5)); }
`);

const offline = ['--scenario', 'Offline', '--set', 'min_duration_ms=0', '--set', 'min_query_count=16', '--set', 'offline_expected_qps=1000', '--no-progress'];

/** Answers each request with an error status whose body quotes what it got, masked one way or another. */
function echoingNode(statusOf: (n: number) => number) {
  let n = 0;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const sent = [String(req.headers.authorization ?? '').replace(/^Bearer /, ''), String(req.headers['x-api-key'] ?? ''), String(req.headers['x-custom-token'] ?? '')]
      .filter((s) => s !== '');
    const k = n++;
    if (req.url === '/name') {
      res.end(`node of ${sent.map((s) => s.slice(2)).join(' ')}`);
      return;
    }
    res.statusCode = statusOf(k);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: { message: sent.map((s) => quotes(s)[k % 5]!).join(' / ') } }));
  };
}

describe('Secrets', () => {
  const secrets = new Secrets();
  secrets.addApiKey(KEY);

  it('hides every run of 8 or more characters of a secret, whole runs, not only the whole key', () => {
    expect(secrets.redact(`Incorrect API key provided: ${KEY.slice(0, -6)}******.`)).toBe(`Incorrect API key provided: ${REDACTED}******.`);
    expect(secrets.redact(`Authorization: Bearer ${KEY}`)).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(secrets.redact(`x ${KEY.slice(4)} y`)).toBe(`x ${REDACTED} y`);
    expect(secrets.redact(`[${KEY.slice(10, 18)}]`)).toBe(`[${REDACTED}]`);
    expect(secrets.redact(`${KEY}${KEY}`)).toBe(REDACTED);
    expect(secrets.redact(`a ${KEY.slice(0, 12)} b ${KEY.slice(20, 30)} c`)).toBe(`a ${REDACTED} b ${REDACTED} c`);
    // 7 characters are not a run; text without any stays the same object.
    const seven = `x ${KEY.slice(20, 27)} y`;
    expect(secrets.redact(seven)).toBe(seven);
    expect(secrets.redact('HTTP 401: nothing secret here at all')).toBe('HTTP 401: nothing secret here at all');
    expect(secrets.redact('')).toBe('');
    expect(secrets.redact('short')).toBe('short');
    for (let i = 0; i + 8 <= KEY.length; i++) expectNoPart(secrets.redact(`>>${KEY.slice(i, i + 8)}<<`), KEY, `window ${i}`);
  });

  it('other secrets and short ones', () => {
    const s = new Secrets();
    expect(s.empty).toBe(true);
    expect(s.redact(KEY)).toBe(KEY);
    s.add('abc');  // shorter than a run: hidden where whole
    s.add('0123456789abcdef');
    s.addApiKey('key-xyz');
    expect(s.redact('abc and 0123456789 and Bearer key-xyz.')).toBe(`${REDACTED} and ${REDACTED} and Bearer ${REDACTED}.`);
    expect(s.redact('ab c')).toBe('ab c');
  });

  it('secret headers: the fixed names in any case, and names a module adds', () => {
    const s = new Secrets();
    for (const name of SECRET_HEADER_NAMES) expect(s.isSecretHeader(name.toUpperCase())).toBe(true);
    expect(s.isSecretHeader('content-type')).toBe(false);
    s.addHeaderNames(['X-Custom-Token']);
    s.addHeaders({ 'X-API-KEY': HEADER_SECRET, 'x-custom-token': CUSTOM_SECRET, accept: 'application/json-whatever' });
    expect(s.redact(`${HEADER_SECRET.slice(1)} ${CUSTOM_SECRET.slice(0, 9)} application/json-whatever`)).toBe(`${REDACTED} ${REDACTED} application/json-whatever`);
    // Of an authorization value, the credentials after the scheme.
    s.addHeaders({ Authorization: 'Basic dXNlcjpwYXNzd29yZA==', 'Proxy-Authorization': 'Bearer proxy-secret-token-1' });
    expect(s.redact('sent Basic dXNlcjpwYXNzd29yZA== and proxy-secret-token')).toBe(`sent Basic ${REDACTED} and ${REDACTED}`);
  });

  it('errors in place: message and stack', () => {
    const s = new Secrets();
    s.addApiKey(KEY);
    const error = new Error(`bad ${KEY.slice(2)}`);
    expect(s.redactError(error)).toBe(error);
    expect(error.message).toBe(`bad ${REDACTED}`);
    expectNoPart(error.stack!, KEY, 'stack');
    expect((s.redactError(`thrown ${KEY}`) as Error).message).toBe(`thrown ${REDACTED}`);
  });

  it('scans a long text in one pass', () => {
    const text = `${'x'.repeat(100_000)}${KEY.slice(5, 20)}${'y'.repeat(100_000)}`;
    const redacted = secrets.redact(text);
    expect(redacted.length).toBe(200_000 + REDACTED.length);
  });
});

/** test/fixtures/secret-redaction.json: the cases native/http_secrets.cc's tests read too. */
interface RedactionCase {
  name: string;
  add?: string[];
  apiKey?: string;
  headerNames?: string[];
  headers?: Record<string, string>[];
  secrets: string[];
  texts: [string, string][];
}

describe('the shared redaction cases (the native client applies the same rule to its own messages)', () => {
  const fixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'secret-redaction.json'), 'utf8')) as { redacted: string; cases: RedactionCase[] };

  it('uses the same marker', () => {
    expect(fixture.redacted).toBe(REDACTED);
  });

  it.each(fixture.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const s = new Secrets();
    for (const secret of c.add ?? []) s.add(secret);
    s.addApiKey(c.apiKey);
    if (c.headerNames !== undefined) s.addHeaderNames(c.headerNames);
    for (const headers of c.headers ?? []) s.addHeaders(headers);
    // What the native binding is handed.
    expect(s.list()).toEqual(c.secrets);
    expect(s.size).toBe(c.secrets.length);
    for (const [text, redacted] of c.texts) expect(s.redact(text), JSON.stringify(text)).toBe(redacted);
  });
});

describe('loadgen run: no part of a secret is written', () => {
  it.each([
    ['undici', false],
    ['undici', true],
    ['native', false],
    ['native', true],
  ] as const)('--sut http, --transport %s (--json %s): a server that quotes the key masked, cut and whole in 401/500 bodies and its name', async (transport, json) => {
    const node = await server(echoingNode((n) => (n % 2 === 0 ? 401 : 500)));
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', mapModule, '--api-key-env', 'LOADGEN_TEST_KEY', '--transport', transport,
      ...offline, '--outdir', outdir, ...(json ? ['--json'] : [])], { LOADGEN_TEST_KEY: KEY });
    expect(run.code, run.stderr).toBe(1);  // INVALID: every sample failed
    expectNothingLeaked(outdir, run, [KEY]);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toContain('Sample failed (http_status)');
    expect(detail).toContain(`Incorrect API key provided: ${REDACTED}******`);
    expect(detail).toContain(`"sut_name", "value": "Network SUT (http): node of ${REDACTED}"`);
    if (json) expect((JSON.parse(run.stdout) as { errors: { failedSamples: { byKind: { http_status: number } } } }).errors.failedSamples.byKind.http_status).toBe(16);
  });

  it.each(['undici', 'native'] as const)('--sut openai, --transport %s: error statuses and error events in a stream that quote the key', async (transport) => {
    let n = 0;
    const node = await server((req, res) => {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (req.url === '/v1/models') {
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm' }] }));
        return;
      }
      const k = n++;
      if (k % 2 === 0) {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: { message: quotes(key)[k % 5] } }));
        return;
      }
      res.setHeader('content-type', 'text/event-stream');
      res.end(`data: ${JSON.stringify({ error: { message: quotes(key)[k % 5] } })}\n\ndata: [DONE]\n\n`);
    });
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'openai', '--url', node.url, '--model', 'm', '--dataset', dataset, '--transport', transport,
      '--scenario', 'Offline', '--set', 'min_duration_ms=0', '--set', 'min_query_count=8', '--set', 'offline_expected_qps=1000', '--no-progress', '--outdir', outdir, '--json'],
    { OPENAI_API_KEY: KEY });
    expect(run.code, run.stderr).toBe(1);
    expectNothingLeaked(outdir, run, [KEY]);
    const result = JSON.parse(run.stdout) as { errors: { failedSamples: { byKind: Record<string, number> } } };
    expect(result.errors.failedSamples.byKind.http_status).toBeGreaterThan(0);
    expect(result.errors.failedSamples.byKind.malformed_response).toBeGreaterThan(0);
  });

  it.each(['undici', 'native'] as const)('--transport %s: secret headers of a mapping module (by name, and marked with secretHeaders), without an API key', async (transport) => {
    const node = await server(echoingNode(() => 403));
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', headerModule, '--transport', transport, ...offline, '--outdir', outdir]);
    expect(run.code, run.stderr).toBe(1);
    expectNothingLeaked(outdir, run, [HEADER_SECRET, CUSTOM_SECRET]);
    expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toContain(`HTTP 403: {\\"error\\":{\\"message\\":\\"Incorrect API key provided: ${REDACTED}******`);
  });

  it.each(['undici', 'native'] as const)('--transport %s --no-read-every-response: secret header values that differ per sample, and the key', async (transport) => {
    const node = await server(echoingNode((n) => (n % 2 === 0 ? 401 : 500)));
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', perSampleModule, '--api-key-env', 'LOADGEN_TEST_KEY', '--transport', transport,
      '--no-read-every-response', ...offline, '--outdir', outdir], { LOADGEN_TEST_KEY: KEY });
    expect(run.code, run.stderr).toBe(1);
    expectNothingLeaked(outdir, run, [KEY, ...Array.from({ length: 16 }, (_, i) => perSampleSecret(i))]);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toContain(`Incorrect API key provided: ${REDACTED}******`);
    expect(detail.match(/Sample failed \(http_status\)/g)?.length).toBe(16);
  });

  it('a mapping module whose errors quote the key: its load failure (stderr, detail log) and its response() throws', async () => {
    const node = await server((_req, res) => res.end('ok'));
    const outdir = tempDir();
    const run = await runCli(['run', '--sut', 'http', '--url', node.url, '--request', throwingModule, '--api-key-env', 'LOADGEN_TEST_KEY', '--transport', 'undici',
      ...offline, '--outdir', outdir], { LOADGEN_TEST_KEY: KEY });
    expect(run.code).toBe(3);  // the QSL load failed
    expect(run.stderr).toContain(`request(9) threw: cannot sign sample 9 with ${REDACTED}`);
    expectNothingLeaked(outdir, run, [KEY]);
    expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toContain(`cannot sign sample 9 with ${REDACTED}`);
  });
});

describe('loadgen run: node probes that quote the key', () => {
  /** An OpenAI node whose GET /v1/models answers `answer(key)`. */
  async function modelsNode(answer: (key: string) => { status: number; body: unknown }) {
    return server((req, res) => {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      const { status, body } = answer(key);
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
    });
  }

  const openai = (url: string, outdir: string): string[] =>
    ['run', '--sut', 'openai', '--url', url, '--model', 'm', '--dataset', dataset, '--scenario', 'Offline', '--set', 'min_duration_ms=0', '--set', 'min_query_count=4',
      '--set', 'offline_expected_qps=1000', '--no-progress', '--outdir', outdir];

  it.each([
    ['401 quoting the key', (key: string) => ({ status: 401, body: { error: { message: quotes(key)[0] } } }), /the server refused the API key \(HTTP 401\)/],
    ['500 quoting the key', (key: string) => ({ status: 500, body: { error: { message: `${quotes(key)[1]} ${quotes(key)[2]}` } } }), /HTTP 500 '.*': is this an OpenAI-compatible server\?/],
    ['a model list without the model, ids quoting the key', (key: string) => ({ status: 200, body: { data: [{ id: key.slice(0, -6) }, { id: key.slice(6) }] } }), /does not serve the model 'm'; it lists/],
  ])('%s: exit 2, the error names the node, no part of the key', async (_what, answer, message) => {
    const node = await modelsNode(answer);
    const outdir = join(tempDir(), 'never');
    const run = await runCli(openai(node.url, outdir), { OPENAI_API_KEY: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain(node.url);
    expectNothingLeaked(undefined, run, [KEY]);
  });

  it('a model list that names the model with an owner quoting the key: the SUT name (summary, detail log, report) holds none of it', async () => {
    const node = await server((req, res) => {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (req.url === '/v1/models') {
        res.end(JSON.stringify({ data: [{ id: 'm', owned_by: `team ${key.slice(3, -3)}` }] }));
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ choices: [{ message: { content: 'hi' } }], usage: { completion_tokens: 1 } }));
    });
    const outdir = tempDir();
    const run = await runCli([...openai(node.url, outdir), '--no-stream'], { OPENAI_API_KEY: KEY });
    expect(run.code, run.stderr).toBe(0);
    expectNothingLeaked(outdir, run, [KEY]);
    expect(readFileSync(join(outdir, 'mlperf_log_summary.txt'), 'utf8')).toContain(`SUT name : Network SUT (openai): m (team ${REDACTED})`);
  });
});
