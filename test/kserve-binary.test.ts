/**
 * KServe binary tensor outputs read by the response's
 * Inference-Header-Content-Length, end to end: outputs made only of
 * whitespace bytes complete, a header length the body cannot hold fails the
 * sample. The native client hands over bodies only, so binary outputs are
 * read through undici.
 */
import type { ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { createKServeSut, SettingsError, startTest } from '../lib/index.js';
import { loadNative } from '../lib/native/index.js';
import { testServers } from './net-helpers.js';
import { tempDir } from './helpers.js';

const server = testServers();
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

describe('KServe binary outputs by Inference-Header-Content-Length', () => {
  it('a UINT8 [1,1] output whose byte is 10 (a line feed) completes, its byte logged', async () => {
    const url = await node(binaryAnswer(10));
    const sut = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true });
    const outdir = tempDir();
    try {
      expect(sut.stats().transport).toBe('undici');
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
    const sut = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true });
    const outdir = tempDir();
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir });
      expect(result.errors.failedSamples?.byKind.malformed_response).toBe(4);
      expect(readFileSync(join(outdir, 'mlperf_log_detail.txt'), 'utf8')).toMatch(/Inference-Header-Content-Length 999999 exceeds the body's \d+ bytes/);
    } finally {
      await sut.close();
    }
  });

  it.skipIf(!loadNative().nativeHttpAvailable)("transport 'native' cannot read response headers: refused before the run, naming the header", async () => {
    const url = await node(binaryAnswer(10));
    const error = await createKServeSut({ urls: [url], model: 'm', dataset, binaryTensors: true, transport: 'native' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as Error).message).toMatch(/transport 'native' cannot serve this SUT: the kserve protocol reads the response header inference-header-content-length/);
    // JSON tensors need no header: native serves them.
    const json = await node((res) => res.end(JSON.stringify({ outputs: [{ name: 'y', datatype: 'UINT8', shape: [1, 1], data: [10] }] })));
    const sut = await createKServeSut({ urls: [json], model: 'm', dataset, transport: 'native' });
    try {
      const result = await startTest(sut, sut.qsl, { scenario: 'Offline', mode: 'AccuracyOnly' }, { outdir: tempDir() });
      expect(result.errors.count).toBe(0);
      expect(sut.stats().transport).toBe('native');
    } finally {
      await sut.close();
    }
  });
});
