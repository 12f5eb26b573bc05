/**
 * The demo-cnn KServe v2 server (`loadgen serve --model demo-cnn`): its
 * endpoints, outputs equal to the TypeScript reference (JSON and binary
 * tensors, batches), v2 errors. On 127.0.0.1, port 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SettingsError } from '../lib/errors.js';
import { demoSample } from '../lib/demo/dataset.js';
import { logitsMatch, referenceLogits } from '../lib/demo/reference.js';
import { startKServeServer } from '../lib/serve/kserve-server.js';
import type { RunningServer } from '../lib/serve/server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startKServeServer({ model: 'demo-cnn', host: '127.0.0.1', port: 0, workers: 1 });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

async function call(method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Uint8Array; json: unknown }> {
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body !== undefined ? { body: body as unknown as BodyInit } : {}), signal: AbortSignal.timeout(20_000) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

function inputsOf(indices: number[]): Float32Array {
  const all = new Float32Array(indices.length * 3072);
  indices.forEach((index, k) => all.set(demoSample(index), k * 3072));
  return all;
}

describe('KServe v2 server for demo-cnn', () => {
  it('listens on 127.0.0.1 at the port it reports', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
  });

  it('answers server metadata, health, model metadata, readiness and the repository index', async () => {
    expect((await call('GET', '/v2')).json).toMatchObject({ name: 'loadgen-kserve', extensions: expect.arrayContaining(['binary_tensor_data']) });
    expect(await call('GET', '/v2/health/live')).toMatchObject({ status: 200, json: { live: true } });
    expect(await call('GET', '/v2/health/ready')).toMatchObject({ status: 200, json: { ready: true } });
    const meta = await call('GET', '/v2/models/demo-cnn');
    expect(meta.status).toBe(200);
    expect(meta.json).toEqual({
      name: 'demo-cnn',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 3, 32, 32] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 10] }],
    });
    expect((await call('GET', '/v2/models/demo-cnn/versions/1')).json).toEqual(meta.json);
    expect(await call('GET', '/v2/models/demo-cnn/ready')).toMatchObject({ status: 200, json: { name: 'demo-cnn', ready: true } });
    expect((await call('POST', '/v2/repository/index', '{}')).json).toEqual([{ name: 'demo-cnn', version: '1', state: 'READY' }]);
  });

  it('infers with JSON tensors: a batch of N samples, logits equal to the reference', async () => {
    const indices = [0, 5, 77];
    const body = JSON.stringify({ id: 'r1', inputs: [{ name: 'input', datatype: 'FP32', shape: [3, 3, 32, 32], data: Array.from(inputsOf(indices)) }] });
    const res = await call('POST', '/v2/models/demo-cnn/infer', body, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    const answer = res.json as { id: string; model_name: string; outputs: { name: string; datatype: string; shape: number[]; data: number[] }[] };
    expect(answer).toMatchObject({ id: 'r1', model_name: 'demo-cnn', model_version: '1' });
    expect(answer.outputs).toHaveLength(1);
    expect(answer.outputs[0]).toMatchObject({ name: 'logits', datatype: 'FP32', shape: [3, 10] });
    indices.forEach((index, k) => {
      const got = answer.outputs[0]!.data.slice(k * 10, (k + 1) * 10);
      expect(logitsMatch(got, referenceLogits(demoSample(index)))).toBe(true);
    });
  });

  it('infers with the binary tensor data extension, and answers binary outputs when asked', async () => {
    const input = inputsOf([9, 10]);
    const header = new TextEncoder().encode(JSON.stringify({
      inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 3, 32, 32], parameters: { binary_data_size: input.byteLength } }],
      outputs: [{ name: 'logits', parameters: { binary_data: true } }],
    }));
    const body = new Uint8Array([...header, ...new Uint8Array(input.buffer)]);
    const res = await call('POST', '/v2/models/demo-cnn/infer', body, {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(header.length),
    });
    expect(res.status).toBe(200);
    const headerLength = Number(res.headers.get('inference-header-content-length'));
    const answer = JSON.parse(new TextDecoder().decode(res.bytes.subarray(0, headerLength))) as { outputs: { shape: number[]; parameters: { binary_data_size: number } }[] };
    expect(answer.outputs[0]).toMatchObject({ shape: [2, 10], parameters: { binary_data_size: 80 } });
    const logits = new Float32Array(res.bytes.slice(headerLength).buffer);
    expect(logits.length).toBe(20);
    expect(logitsMatch(logits.subarray(0, 10), referenceLogits(demoSample(9)))).toBe(true);
    expect(logitsMatch(logits.subarray(10), referenceLogits(demoSample(10)))).toBe(true);
    // Binary input, JSON output when not asked for binary.
    const plain = new TextEncoder().encode(JSON.stringify({ inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 3, 32, 32], parameters: { binary_data_size: 3072 * 4 } }] }));
    const res2 = await call('POST', '/v2/models/demo-cnn/infer', new Uint8Array([...plain, ...new Uint8Array(demoSample(9).buffer)]), {
      'inference-header-content-length': String(plain.length),
    });
    const out = (res2.json as { outputs: { data: number[] }[] }).outputs[0]!.data;
    expect(Array.from(Float32Array.from(out))).toEqual(Array.from(logits.subarray(0, 10)));
  });

  it('answers v2 errors: 404 for unknown models and paths, 400 for bad requests, 405 for a wrong method', async () => {
    const unknown = await call('GET', '/v2/models/resnet50');
    expect(unknown.status).toBe(404);
    expect((unknown.json as { error: string }).error).toMatch(/unknown model 'resnet50': this server serves demo-cnn/);
    expect((await call('POST', '/v2/models/resnet50/infer', '{}')).status).toBe(404);
    expect((await call('GET', '/v2/models/demo-cnn/versions/7')).status).toBe(404);
    expect((await call('GET', '/nope')).status).toBe(404);
    const wrongMethod = await call('GET', '/v2/models/demo-cnn/infer');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const bad = async (body: string): Promise<string> => {
      const res = await call('POST', '/v2/models/demo-cnn/infer', body);
      expect(res.status).toBe(400);
      return (res.json as { error: string }).error;
    };
    expect(await bad('{not json')).toMatch(/not JSON/);
    expect(await bad('{}')).toMatch(/no inputs/);
    expect(await bad('{"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}]}')).toMatch(/takes one input 'input'/);
    expect(await bad('{"inputs":[{"name":"input","datatype":"INT32","shape":[1],"data":[1]}]}')).toMatch(/must be FP32/);
    expect(await bad('{"inputs":[{"name":"input","datatype":"FP32","shape":[1,2],"data":[1,2]}]}')).toMatch(/must have shape \[N,3,32,32\] with N >= 1, got \[1,2\]/);
    expect(await bad('{"inputs":[{"name":"input","datatype":"FP32","shape":[0,3,32,32],"data":[]}]}')).toMatch(/N >= 1, got \[0,3,32,32\]/);
    expect(await bad('{"inputs":[{"name":"input","datatype":"FP32","shape":[1,3,32,32],"data":[1,2]}]}')).toMatch(/needs 3072 elements, the data has 2/);
    const okInput = JSON.stringify([{ name: 'input', datatype: 'FP32', shape: [1, 3, 32, 32], data: Array.from(demoSample(0)) }]);
    expect(await bad(`{"inputs":${okInput},"outputs":[{"name":"probs"}]}`)).toMatch(/one output 'logits'/);
    const res = await call('POST', '/v2/models/demo-cnn/infer', '{"inputs":[]}', { 'inference-header-content-length': 'abc' });
    expect(res.status).toBe(400);
  });

  it('refuses models it does not bundle and bad addresses before starting', async () => {
    await expect(startKServeServer({ model: 'resnet50', port: 0 })).rejects.toThrow(/model 'resnet50' cannot be served: only demo-cnn is bundled/);
    await expect(startKServeServer({ model: 'demo-cnn', port: 70000 })).rejects.toBeInstanceOf(SettingsError);
  });
});
