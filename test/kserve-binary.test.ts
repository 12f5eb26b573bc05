/**
 * KServe binary tensor outputs read by the response's
 * Inference-Header-Content-Length, end to end on both transports (the
 * native client hands the header over with the body): outputs made only of
 * whitespace bytes complete, a header length the body cannot hold fails the
 * sample, and 'auto' picks the native transport for binary tensors.
 */
import type { ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { createKServeSut, startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { testServers } from './net-helpers.js';
import { tempDir } from './helpers.js';

const server = testServers();
const transports = loadNative().nativeHttpAvailable ? (['native', 'undici'] as const) : (['undici'] as const);
const dir = tempDir('loadgen-kserve-binary-');
const dataset = join(dir, 'inputs.jsonl');
writeFileSync(dataset, Array.from({ length: 4 }, (_, i) => JSON.stringify([{ name: 'x', datatype: 'UINT8', shape: [1, 1], data: [i] }])).join('\n'));

/** A KServe v2 node serving model 'm' (UINT8 [1,1] in and out) whose infer answer `answer` writes. */
async function node(answer: (res: ServerResponse, input: Buffer) => void): Promise<string> {
  const s = await server((req, res, body) => {
    const json = (value: unknown): void => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(value));
    };
    if (req.url === '/v2/health/ready' || req.url === '/v2/models/m/ready') return void res.end();
    if (req.url === '/v2') return json({ name: 'fake-kserve', version: '1' });
    if (req.url === '/v2/models/m') {
      return json({ name: 'm', inputs: [{ name: 'x', datatype: 'UINT8', shape: [1, 1] }], outputs: [{ name: 'y', datatype: 'UINT8', shape: [1, 1] }] });
    }
    answer(res, Buffer.from(body, 'latin1'));
  });
  return s.url;
}

/** A binary-extension answer: one UINT8 [1,1] output holding `byte`; the header length may lie. */
function binaryAnswer(byte: number, headerLength?: (jsonLength: number) => string): (res: ServerResponse) => void {
  return (res) => {
    const header = Buffer.from(JSON.stringify({ model_name: 'm', outputs: [{ name: 'y', datatype: 'UINT8', shape: [1, 1], parameters: { binary_data_size: 1 } }] }));
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('inference-header-content-length', headerLength?.(header.length) ?? String(header.length));
    res.end(Buffer.concat([header, Buffer.from([byte])]));
  };
}

describe.each(transports)('KServe binary outputs by Inference-Header-Content-Length, --transport %s', (transport) => {
  it('a UINT8 [1,1] output whose byte is 10 (a line feed) completes, its byte logged', async () => {
    const url = await node(binaryAnswer(10));
    const sut = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true, transport });
    const outdir = tempDir();
    try {
      expect(sut.stats().transport).toBe(transport);
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.errors.count).toBe(0);
      expect(result.counts.completedSamples).toBe(4);
      const records = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { data: string }[];
      expect(records.map((r) => r.data)).toEqual(['0A', '0A', '0A', '0A']);
    } finally {
      await sut.close();
    }
  });

  it('Inference-Header-Content-Length 999999 fails every sample as malformed_response naming it', async () => {
    const url = await node(binaryAnswer(1, () => '999999'));
    const sut = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true, transport });
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.errors.failedSamples?.byKind.malformed_response).toBe(4);
      expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toMatch(/Inference-Header-Content-Length 999999 exceeds the body's \d+ bytes/);
    } finally {
      await sut.close();
    }
  });

  it('the header given twice fails as malformed_response (as undici hands it: both values)', async () => {
    const url = await node((res) => {
      const header = Buffer.from(JSON.stringify({ outputs: [{ name: 'y', datatype: 'UINT8', shape: [1, 1], parameters: { binary_data_size: 1 } }] }));
      res.setHeader('inference-header-content-length', [String(header.length), String(header.length)]);
      res.end(Buffer.concat([header, Buffer.from([7])]));
    });
    const sut = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true, transport });
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.errors.failedSamples?.byKind.malformed_response).toBe(4);
      expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toMatch(/Inference-Header-Content-Length is given 2 times/);
    } finally {
      await sut.close();
    }
  });

  it('binary outputs a JSON-tensor request did not ask for are read by the header too; a JSON answer needs none', async () => {
    const binary = await node(binaryAnswer(65));
    const json = await node((res) => res.end(JSON.stringify({ outputs: [{ name: 'y', datatype: 'UINT8', shape: [1, 1], data: [66] }] })));
    for (const [url, byte] of [[binary, '41'], [json, '42']] as const) {
      const sut = await createKServeSut({ urls: [url], model: 'm', dataset, transport });
      const outdir = tempDir();
      try {
        expect(sut.stats().transport).toBe(transport);
        const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
        expect(result.errors.count).toBe(0);
        const records = JSON.parse(readFileSync(join(outdir, 'mlperf_log_accuracy.json'), 'utf8')) as { data: string }[];
        expect(records.map((r) => r.data)).toEqual([byte, byte, byte, byte]);
      } finally {
        await sut.close();
      }
    }
  });
});

it.skipIf(!loadNative().nativeHttpAvailable)("transport 'auto' picks the native client for binary tensors", async () => {
  const url = await node(binaryAnswer(10));
  const sut = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true });
  try {
    expect(sut.stats().transport).toBe('native');
    const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() });
    expect(result.errors.count).toBe(0);
  } finally {
    await sut.close();
  }
});
