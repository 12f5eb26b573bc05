/**
 * createKServeSut against loopback servers: the v2 metadata checks before
 * the run (server down, not ready, unknown model, inputs that do not fit:
 * NetworkSetupError, nothing issued), accuracy mode logging the output
 * tensors (compared with the reference logits), binary tensors end to end,
 * .npy and .jsonl data sets sent as the server expects them.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTest } from '../lib/index.js';
import { NetworkSetupError, SettingsError } from '../lib/errors.js';
import { demoSample } from '../lib/demo/dataset.js';
import { logitsMatch, referenceLogits } from '../lib/demo/reference.js';
import { checkAccuracyLog } from '../lib/demo/run.js';
import { createKServeProtocol, createKServeSut } from '../lib/net/kserve.js';
import type { ResponseOutcome } from '../lib/net/protocol.js';
import { startKServeServer } from '../lib/serve/kserve-server.js';
import type { RunningServer } from '../lib/serve/server.js';
import { startTestServer, type TestServer } from './net-helpers.js';
import { repoRoot, tempDir } from './helpers.js';

let demo: RunningServer;
const fakes: TestServer[] = [];
beforeAll(async () => {
  demo = await startKServeServer({ model: 'demo-cnn', host: '127.0.0.1', port: 0, workers: 1 });
}, 60_000);
afterAll(async () => {
  await Promise.all([demo?.close(), ...fakes.map((f) => f.close())]);
});

const DEMO_META = {
  name: 'demo-cnn',
  versions: ['1'],
  platform: 'onnxruntime_onnx',
  inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 3, 32, 32] }],
  outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 10] }],
};

/** A fake v2 server: `routes` answer by "METHOD path"; everything else 404. Counts infer calls. */
async function fakeServer(routes: Record<string, [number, unknown]>): Promise<TestServer & { infers: () => number }> {
  let infers = 0;
  const server = await startTestServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    if (req.url?.endsWith('/infer')) infers++;
    const [status, body] = routes[key] ?? [404, { error: `no route ${key}` }];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  fakes.push(server);
  return Object.assign(server, { infers: () => infers });
}

function healthy(meta: unknown = DEMO_META, model = 'demo-cnn'): Record<string, [number, unknown]> {
  return {
    'GET /v2': [200, { name: 'fake-triton', version: '2.41.0' }],
    'GET /v2/health/ready': [200, {}],
    [`GET /v2/models/${model}`]: [200, meta],
    [`GET /v2/models/${model}/ready`]: [200, {}],
  };
}

async function setupError(options: Parameters<typeof createKServeSut>[0]): Promise<string> {
  try {
    const sut = await createKServeSut(options);
    await sut.close();
  } catch (error) {
    expect(error).toBeInstanceOf(NetworkSetupError);
    return (error as Error).message;
  }
  throw new Error('expected a NetworkSetupError');
}

const accuracy = { scenario: 'Offline', mode: 'AccuracyOnly' } as const;

describe('KServe SUT: v2 checks before the run', () => {
  it('a server that is down: NetworkSetupError naming the node, no hang', async () => {
    const gone = await startTestServer();
    const url = gone.url;
    await gone.close();
    const message = await setupError({ urls: [url], model: 'demo-cnn', connectTimeoutMs: 2000 });
    expect(message).toContain(url.replace('http://', ''));
  });

  it('a server that is not ready', async () => {
    const fake = await fakeServer({ ...healthy(), 'GET /v2/health/ready': [503, { error: 'warming up' }] });
    expect(await setupError({ urls: [fake.url], model: 'demo-cnn' })).toMatch(/is not ready: GET \/v2\/health\/ready answered 503: warming up/);
    expect(fake.infers()).toBe(0);
  });

  it('a model it does not have, listing the models it serves', async () => {
    const fake = await fakeServer({ ...healthy(), 'POST /v2/repository/index': [200, [{ name: 'resnet50' }, { name: 'bert' }]] });
    expect(await setupError({ urls: [fake.url], model: 'yolo', dataset: jsonlFile() })).toMatch(/has no model 'yolo' \(GET \/v2\/models\/yolo answered 404: no route GET \/v2\/models\/yolo\); it serves: resnet50, bert/);
    // Against the real server, without a repository index listing.
    expect(await setupError({ urls: [demo.url], model: 'resnet50', dataset: jsonlFile() })).toMatch(/has no model 'resnet50'.*it serves: demo-cnn/);
  });

  it('a model that is not ready', async () => {
    const fake = await fakeServer({ ...healthy(), 'GET /v2/models/demo-cnn/ready': [400, { error: 'loading' }] });
    expect(await setupError({ urls: [fake.url], model: 'demo-cnn' })).toMatch(/model 'demo-cnn' is not ready .*400: loading/);
  });

  it('inputs that do not fit: name, datatype, shape, element count, missing inputs', async () => {
    const meta = (inputs: unknown[]): unknown => ({ ...DEMO_META, inputs });
    const cases: [unknown[], RegExp][] = [
      [[{ name: 'images', datatype: 'FP32', shape: [-1, 3, 32, 32] }], /input 'input' of demo sample 0 is not an input of the model \(model inputs: images FP32 \[-1,3,32,32\]\)/],
      [[{ name: 'input', datatype: 'FP16', shape: [-1, 3, 32, 32] }], /input 'input': the model expects FP16, demo sample 0 has FP32/],
      [[{ name: 'input', datatype: 'FP32', shape: [-1, 3, 64, 64] }], /input 'input': the model expects shape \[-1,3,64,64\] \(12288 elements with -1 as 1\), demo sample 0 has \[1,3,32,32\] \(3072 elements\)/],
      [[{ name: 'input', datatype: 'FP32', shape: [-1, 3, 32, 32] }, { name: 'mask', datatype: 'BOOL', shape: [-1, 4] }], /demo sample 0 has no input 'mask' \(BOOL \[-1,4\]\)/],
    ];
    for (const [inputs, pattern] of cases) {
      const fake = await fakeServer(healthy(meta(inputs)));
      expect(await setupError({ urls: [fake.url], model: 'demo-cnn' })).toMatch(pattern);
      expect(fake.infers()).toBe(0);
    }
    const broken = await fakeServer(healthy({ name: 'demo-cnn', inputs: 'none' }));
    expect(await setupError({ urls: [broken.url], model: 'demo-cnn' })).toMatch(/the model metadata has no 'inputs' array/);
  });

  it('nodes that describe the model differently', async () => {
    const other = await fakeServer(healthy({ ...DEMO_META, inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 3072] }] }));
    // A .npy of [N,3072] fits both nodes, reshaped differently: refused.
    const npy = npyFile([2, 3072]);
    expect(await setupError({ urls: [demo.url, other.url], model: 'demo-cnn', dataset: npy })).toMatch(/describe model 'demo-cnn' differently/);
  });

  it('refuses bad options before contacting any node', async () => {
    await expect(createKServeProtocol({ urls: ['http://127.0.0.1:9'], model: 'resnet50' })).rejects.toThrow(/model 'resnet50' needs a dataset .*only demo-cnn has built-in data/);
    await expect(createKServeProtocol({ urls: ['http://127.0.0.1:9'], model: 'a b' })).rejects.toBeInstanceOf(SettingsError);
    await expect(createKServeProtocol({ urls: ['http://127.0.0.1:9'], model: 'demo-cnn', performanceSampleCount: 5000 })).rejects.toThrow(/performanceSampleCount must be an integer in \[1, 1024\]/);
    await expect(createKServeProtocol({ urls: ['http://127.0.0.1:9'], model: 'demo-cnn', dataset: join(tempDir(), 'none.npy') })).rejects.toThrow(/none\.npy: cannot be read/);
  });
});

function jsonlFile(): string {
  const path = join(tempDir('loadgen-kserve-sut-'), 'inputs.jsonl');
  const lines = [2, 3].map((i) => JSON.stringify([{ name: 'input', datatype: 'FP32', shape: [1, 3, 32, 32], data: Array.from(demoSample(i)) }]));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** A .npy of demo samples 0.. with the given shape (first axis = samples). */
function npyFile(shape: number[]): string {
  const count = shape[0]!;
  const values = new Float32Array(count * 3072);
  for (let i = 0; i < count; i++) values.set(demoSample(i), i * 3072);
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
  header = header.padEnd(Math.ceil((10 + header.length + 1) / 64) * 64 - 11, ' ') + '\n';
  const bytes = new Uint8Array(10 + header.length + values.byteLength);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  bytes.set(new TextEncoder().encode(header), 10);
  bytes.set(new Uint8Array(values.buffer), 10 + header.length);
  const path = join(tempDir('loadgen-kserve-sut-'), 'inputs.npy');
  writeFileSync(path, bytes);
  return path;
}

interface AccuracyEntry {
  qsl_idx: number;
  data: string;
}

function accuracyEntries(path: string): AccuracyEntry[] {
  return JSON.parse(readFileSync(path, 'utf8')) as AccuracyEntry[];
}

describe('KServe SUT: runs against the demo-cnn server', () => {
  it('accuracy mode logs each sample\'s output tensor: the reference logits (JSON tensors)', async () => {
    const sut = await createKServeSut({ urls: [demo.url], model: 'demo-cnn', performanceSampleCount: 64 });
    try {
      expect(sut.name).toContain('Network SUT');
      expect(sut.name).toMatch(/loadgen-kserve 0\.1\.0 \(model demo-cnn v1\)/);
      const outdir = tempDir('loadgen-kserve-acc-');
      const result = await startTest(sut, sut.qsl, accuracy, { outdir });
      expect(result.counts.issuedSamples).toBe(1024);
      const entries = accuracyEntries(join(outdir, 'mlperf_log_accuracy.json'));
      expect(entries).toHaveLength(1024);
      const first = entries.find((e) => e.qsl_idx === 3)!;
      const logits = new Float32Array(new Uint8Array(Buffer.from(first.data, 'hex')).buffer);
      expect(logits.length).toBe(10);
      expect(logitsMatch(logits, referenceLogits(demoSample(3)))).toBe(true);
      const report = await checkAccuracyLog(join(outdir, 'mlperf_log_accuracy.json'));
      expect(report.matched).toBe(1024);
      expect(sut.stats().nodes[0]!.completed).toBe(1024);
    } finally {
      await sut.close();
    }
  }, 120_000);

  it('binary tensors round trip: the same logits, requests and responses in the binary extension', async () => {
    const sut = await createKServeSut({ urls: [demo.url], model: 'demo-cnn', binaryTensors: true, dataset: npyFile([48, 3, 32, 32]) });
    try {
      const outdir = tempDir('loadgen-kserve-bin-');
      const result = await startTest(sut, sut.qsl, { ...accuracy }, { outdir });
      expect(result.counts.issuedSamples).toBe(48);
      // The .npy holds demo samples 0..47: the demo's accuracy check applies.
      const report = await checkAccuracyLog(join(outdir, 'mlperf_log_accuracy.json'));
      expect(report.matched).toBe(48);
    } finally {
      await sut.close();
    }
  }, 120_000);

  it('the request is built as the server expects it (JSON and binary)', async () => {
    const protocolJson = await createKServeProtocol({ urls: [demo.url], model: 'demo-cnn' });
    const protocolBinary = await createKServeProtocol({ urls: [demo.url], model: 'demo-cnn', binaryTensors: true });
    const probe = {
      origin: demo.url,
      async request(method: 'GET' | 'POST', path: string, body?: string) {
        const res = await fetch(`${demo.url}${path}`, { method, ...(body !== undefined ? { body } : {}) });
        return { status: res.status, headers: {}, body: new Uint8Array(await res.arrayBuffer()) };
      },
    };
    for (const protocol of [protocolJson, protocolBinary]) {
      expect(await protocol.probe(probe)).toBe('loadgen-kserve 0.1.0 (model demo-cnn v1)');
      await protocol.load([5]);
      const request = protocol.request(5);
      expect(request).toMatchObject({ method: 'POST', path: '/v2/models/demo-cnn/infer' });
      const res = await fetch(`${demo.url}${request.path}`, { method: 'POST', headers: request.headers, body: request.body as unknown as BodyInit });
      expect(res.status).toBe(200);
      const reader = protocol.reader(5, true);
      reader.onHeaders?.({ 'inference-header-content-length': res.headers.get('inference-header-content-length') ?? undefined });
      reader.onData(new Uint8Array(await res.arrayBuffer()));
      const outcome = reader.onEnd() as ResponseOutcome;
      expect(outcome.ok).toBe(true);
      const data = (outcome as { data: Uint8Array }).data;
      expect(logitsMatch(new Float32Array(data.slice().buffer), referenceLogits(demoSample(5)))).toBe(true);
      protocol.unload([5]);
      expect(() => protocol.request(5)).toThrow(/not loaded/);
    }
    expect(protocolBinary.request === undefined).toBe(false);
    expect(protocolBinary.describe?.()).toMatch(/binary tensor data extension/);
  });

  it('.npy ([N,3,32,32], batch dimension added) and .jsonl data sets', async () => {
    for (const dataset of [npyFile([4, 3, 32, 32]), npyFile([4, 3072]), jsonlFile()]) {
      const sut = await createKServeSut({ urls: [demo.url], model: 'demo-cnn', dataset });
      try {
        const outdir = tempDir('loadgen-kserve-ds-');
        await startTest(sut, sut.qsl, accuracy, { outdir });
        const entries = accuracyEntries(join(outdir, 'mlperf_log_accuracy.json'));
        expect(entries.length).toBe(sut.qsl.totalSampleCount);
        const offset = dataset.endsWith('.jsonl') ? 2 : 0; // the JSONL file holds demo samples 2 and 3
        for (const e of entries) {
          const logits = new Float32Array(new Uint8Array(Buffer.from(e.data, 'hex')).buffer);
          expect(logitsMatch(logits, referenceLogits(demoSample(e.qsl_idx + offset)))).toBe(true);
        }
      } finally {
        await sut.close();
      }
    }
  }, 120_000);

  it('a performance run is VALID and counts every request on the node', async () => {
    const sut = await createKServeSut({ urls: [demo.url], model: 'demo-cnn', performanceSampleCount: 64 });
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', offlineExpectedQps: 200, minDurationMs: 0, minQueryCount: 200 }, { outdir: tempDir() });
      expect(result.invalidReasons).toEqual([]);
      expect(result.valid).toBe(true);
      expect(sut.stats().nodes[0]!.completed).toBe(result.counts.issuedSamples);
      expect(sut.stats().protocol).toBe('kserve');
    } finally {
      await sut.close();
    }
  }, 120_000);
});

describe('KServe SUT: dispatch workers and the CLI', () => {
  it("dispatch 'worker': the workers send the tensors the main thread's probe fixed (a .npy needs its input name)", async () => {
    const sut = await createKServeSut({ urls: [demo.url], model: 'demo-cnn', dataset: npyFile([24, 3, 32, 32]) });
    try {
      const outdir = tempDir('loadgen-kserve-workers-');
      const result = await startTest(sut, sut.qsl, { scenario: 'Server', mode: 'AccuracyOnly', serverTargetQps: 200, dispatch: 'worker', dispatchWorkers: 2 }, { outdir });
      expect(result.counts.completedSamples).toBe(24);
      expect(result.errors.count).toBe(0);
      const report = await checkAccuracyLog(join(outdir, 'mlperf_log_accuracy.json'));
      expect(report.matched).toBe(24);
    } finally {
      await sut.close();
    }
  }, 120_000);

  /** `loadgen run` in a child process (async: the server lives in this process). */
  function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('exit', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  it('loadgen run --sut kserve: accuracy run logs the logits; an unknown model exits 2 before any query', async () => {
    const dataset = npyFile([8, 3, 32, 32]);
    const outdir = tempDir('loadgen-kserve-cli-');
    const ok = await cli(['run', '--sut', 'kserve', '--url', demo.url, '--model', 'demo-cnn', '--dataset', dataset, '--binary-tensors', '--scenario', 'Offline', '--mode', 'AccuracyOnly', '--outdir', outdir, '--quiet']);
    expect(ok.status, ok.stderr).toBe(0);
    const report = await checkAccuracyLog(join(outdir, 'mlperf_log_accuracy.json'));
    expect(report.matched).toBe(8);
    const detail = readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8');
    expect(detail).toContain('"sut_name", "value": "Network SUT (kserve): loadgen-kserve 0.1.0 (model demo-cnn v1)');

    const missing = await cli(['run', '--sut', 'kserve', '--url', demo.url, '--model', 'resnet50', '--dataset', dataset, '--outdir', tempDir()]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/has no model 'resnet50'.*it serves: demo-cnn/);
    const noData = await cli(['run', '--sut', 'kserve', '--url', demo.url, '--model', 'resnet50', '--outdir', tempDir()]);
    expect(noData.status).toBe(2);
    expect(noData.stderr).toMatch(/needs a dataset/);
  }, 200_000);
});

describe('KServe SUT: failed requests', () => {
  it('a non-2xx status, an error field, a body that is not JSON, missing outputs: counted by kind, the run INVALID', async () => {
    const meta = { name: 'tiny', versions: ['1'], inputs: [{ name: 'x', datatype: 'FP32', shape: [-1, 1] }], outputs: [{ name: 'y', datatype: 'FP32', shape: [-1, 1] }] };
    const routes = healthy(meta, 'tiny');
    const tally = { http_status: 0, malformed_response: 0, ok: 0 };
    const node = await startTestServer((req, res, body) => {
      const route = routes[`${req.method} ${req.url}`];
      if (route !== undefined) {
        res.writeHead(route[0], { 'content-type': 'application/json' });
        res.end(JSON.stringify(route[1]));
        return;
      }
      const i = (JSON.parse(body) as { inputs: { data: number[] }[] }).inputs[0]!.data[0]!;
      res.setHeader('content-type', 'application/json');
      switch (i % 5) {
        case 0:
          tally.http_status++;
          res.statusCode = 500;
          res.end('{"error":"out of memory"}');
          break;
        case 1:
          tally.malformed_response++;
          res.end('{"error":"bad input"}');
          break;
        case 2:
          tally.malformed_response++;
          res.end('<html>');
          break;
        case 3:
          tally.malformed_response++;
          res.end('{"model_name":"tiny"}');
          break;
        default:
          tally.ok++;
          res.end(JSON.stringify({ outputs: [{ name: 'y', datatype: 'FP32', shape: [1, 1], data: [i] }] }));
      }
    });
    fakes.push(node);
    const dataset = join(tempDir('loadgen-kserve-fail-'), 'x.jsonl');
    writeFileSync(dataset, Array.from({ length: 20 }, (_, i) => JSON.stringify([{ name: 'x', datatype: 'FP32', shape: [1, 1], data: [i] }])).join('\n'));
    const sut = await createKServeSut({ urls: [node.url], model: 'tiny', dataset });
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', offlineExpectedQps: 20, minDurationMs: 0, minQueryCount: 20 }, { outdir: tempDir() });
      expect(result.valid).toBe(false);
      expect(result.counts.completedSamples).toBe(result.counts.issuedSamples);
      const failed = (result as unknown as { errors: { failedSamples: { byKind: Record<string, number> } } }).errors.failedSamples;
      expect(tally.http_status).toBeGreaterThan(0);
      expect(failed.byKind.http_status).toBe(tally.http_status);
      expect(failed.byKind.malformed_response).toBe(tally.malformed_response);
      expect(sut.stats().nodes[0]!.completed).toBe(tally.ok);
    } finally {
      await sut.close();
    }
  }, 60_000);
});

describe('KServe SUT: inputs of several shapes', () => {
  it('a .jsonl of variable-length INT64 inputs: each layout checked against -1 dims, sent with its own shape', async () => {
    const meta = { name: 'seq', inputs: [{ name: 'ids', datatype: 'INT64', shape: [-1, -1] }], outputs: [{ name: 'ids', datatype: 'INT64', shape: [-1, -1] }] };
    const routes = healthy(meta, 'seq');
    const node = await startTestServer((req, res, body) => {
      const route = routes[`${req.method} ${req.url}`];
      res.setHeader('content-type', 'application/json');
      if (route !== undefined) {
        res.statusCode = route[0];
        res.end(JSON.stringify(route[1]));
        return;
      }
      // Echo the input as the output: the accuracy log then shows what was sent.
      const input = (JSON.parse(body) as { inputs: { shape: number[]; data: number[] }[] }).inputs[0]!;
      res.end(JSON.stringify({ outputs: [{ name: 'ids', datatype: 'INT64', shape: input.shape, data: input.data }] }));
    });
    fakes.push(node);
    const rows = [[1, 2], [3, 4, 5], [6], [7, 8, 9]];
    const dataset = join(tempDir('loadgen-kserve-seq-'), 'seq.jsonl');
    writeFileSync(dataset, rows.map((r) => JSON.stringify({ inputs: [{ name: 'ids', datatype: 'INT64', shape: [1, r.length], data: r }] })).join('\n'));
    const sut = await createKServeSut({ urls: [node.url], model: 'seq', dataset });
    try {
      const outdir = tempDir();
      await startTest(sut, sut.qsl, accuracy, { outdir });
      const entries = accuracyEntries(join(outdir, 'mlperf_log_accuracy.json'));
      expect(entries).toHaveLength(4);
      for (const e of entries) {
        const bytes = new Uint8Array(Buffer.from(e.data, 'hex'));
        expect(Array.from(new BigInt64Array(bytes.buffer), Number)).toEqual(rows[e.qsl_idx]);
      }
    } finally {
      await sut.close();
    }
  }, 60_000);
});
