/**
 * KServe v2 tensors without a server: the .npy and .jsonl data set readers
 * (good and bad files), the datatype conversions, and the infer response
 * reader (JSON, binary extension, malformed answers).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { DatasetError, SettingsError } from '../lib/errors.js';
import { readInferResponse } from '../lib/net/kserve.js';
import { demoTensorDataset, readTensorDataset } from '../lib/net/tensor-datasets.js';
import {
  bfloat16Bits,
  decodeNumbers,
  encodeValues,
  float16Bits,
  float16Value,
  jsonDataText,
} from '../lib/net/v2-tensors.js';
import { demoSample } from '../lib/demo/dataset.js';
import { tempDir } from './helpers.js';

/** A .npy file as numpy writes it (format 1.0, header padded to 64 bytes). */
function npy(descr: string, shape: number[], data: Uint8Array, opts: { version?: number; fortran?: boolean } = {}): Uint8Array {
  const version = opts.version ?? 1;
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': ${opts.fortran ? 'True' : 'False'}, 'shape': ${shapeText}, }`;
  const prefix = version === 1 ? 10 : 12;
  const total = Math.ceil((prefix + header.length + 1) / 64) * 64;
  header = header.padEnd(total - prefix - 1, ' ') + '\n';
  const out = new Uint8Array(prefix + header.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const view = new DataView(out.buffer);
  if (version === 1) view.setUint16(8, header.length, true);
  else view.setUint32(8, header.length, true);
  out.set(new TextEncoder().encode(header), prefix);
  out.set(data, prefix + header.length);
  return out;
}

function file(name: string, content: string | Uint8Array): string {
  const path = join(tempDir('loadgen-kserve-data-'), name);
  writeFileSync(path, content);
  return path;
}

function datasetError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).key).toBe('dataset');
    return (error as Error).message;
  }
  throw new Error('expected a SettingsError');
}

describe('.npy data sets', () => {
  it('reads <f4 (v1 header): first axis = samples, each sample its own bytes', () => {
    const values = Float32Array.from({ length: 2 * 3 * 4 }, (_, i) => i / 8);
    const path = file('x.npy', npy('<f4', [2, 3, 4], new Uint8Array(values.buffer)));
    const ds = readTensorDataset(path);
    expect(ds.totalSampleCount).toBe(2);
    const [t] = ds.inputs(1);
    expect(t!.name).toBeUndefined();
    expect(t!.datatype).toBe('FP32');
    expect(t!.shape).toEqual([3, 4]);
    expect(t!.batchFree).toBe(true);
    expect(Array.from(new Float32Array(t!.data.buffer, t!.data.byteOffset, 12))).toEqual(Array.from(values.subarray(12)));
    expect(ds.where(1)).toBe(`${path} sample 1`);
    expect(ds.description).toContain('FP32');
  });

  it('reads v2 headers and maps every supported dtype', () => {
    const cases: [string, string, number][] = [
      ['<f2', 'FP16', 2], ['<f8', 'FP64', 8], ['|i1', 'INT8', 1], ['<i2', 'INT16', 2], ['<i4', 'INT32', 4], ['<i8', 'INT64', 8],
      ['|u1', 'UINT8', 1], ['<u2', 'UINT16', 2], ['<u4', 'UINT32', 4], ['<u8', 'UINT64', 8], ['|b1', 'BOOL', 1],
    ];
    for (const [descr, datatype, size] of cases) {
      const ds = readTensorDataset(file('a.npy', npy(descr, [3, 2], new Uint8Array(3 * 2 * size), { version: 2 })));
      expect(ds.inputs(2)[0]!.datatype).toBe(datatype);
      expect(ds.inputs(2)[0]!.data.length).toBe(2 * size);
    }
    // One-dimensional: each sample is a scalar.
    expect(readTensorDataset(file('s.npy', npy('<i8', [5], new Uint8Array(40)))).inputs(4)[0]!.shape).toEqual([]);
  });

  it('refuses bad files naming the file and the problem', () => {
    expect(datasetError(() => readTensorDataset(file('x.npz', 'x')))).toMatch(/must end in \.npy .* or \.jsonl/);
    expect(datasetError(() => readTensorDataset(join(tempDir(), 'missing.npy')))).toMatch(/missing\.npy: cannot be read/);
    expect(datasetError(() => readTensorDataset(file('bad.npy', 'not numpy at all')))).toMatch(/bad\.npy: not a \.npy file/);
    const f4 = new Uint8Array(4 * 6);
    expect(datasetError(() => readTensorDataset(file('big.npy', npy('>f4', [2, 3], f4))))).toMatch(/big-endian; save it little-endian/);
    expect(datasetError(() => readTensorDataset(file('u.npy', npy('<U8', [2], new Uint8Array(64)))))).toMatch(/dtype '<U8' is not supported/);
    expect(datasetError(() => readTensorDataset(file('c.npy', npy('<c8', [2], new Uint8Array(16)))))).toMatch(/dtype '<c8' is not supported/);
    expect(datasetError(() => readTensorDataset(file('f.npy', npy('<f4', [2, 3], f4, { fortran: true }))))).toMatch(/Fortran/);
    expect(datasetError(() => readTensorDataset(file('short.npy', npy('<f4', [2, 3], f4.subarray(4)))))).toMatch(
      /short\.npy: the data at offset 128 holds 20 bytes; shape \[2,3\] of '<f4' needs 24/,
    );
    expect(datasetError(() => readTensorDataset(file('empty.npy', npy('<f4', [0, 3], new Uint8Array(0)))))).toMatch(/no samples/);
    expect(datasetError(() => readTensorDataset(file('scalar.npy', npy('<f4', [], new Uint8Array(4)))))).toMatch(/scalar/);
    const v9 = npy('<f4', [1], new Uint8Array(4));
    v9[6] = 9;
    expect(datasetError(() => readTensorDataset(file('v9.npy', v9)))).toMatch(/format version 9\.0 is not supported/);
    const cut = npy('<f4', [1], new Uint8Array(4));
    new DataView(cut.buffer).setUint16(8, 5000, true);
    expect(datasetError(() => readTensorDataset(file('cut.npy', cut)))).toMatch(/header claims 5000 bytes at offset 10/);
  });

  it('refuses NaN and infinities in float data (they would be sent to the server), naming the sample, element and value', () => {
    const f4 = Float32Array.from({ length: 12 }, (_, i) => i);
    f4[7] = Number.NaN;
    expect(datasetError(() => readTensorDataset(file('nan.npy', npy('<f4', [3, 2, 2], new Uint8Array(f4.buffer)))))).toMatch(
      /nan\.npy: sample 1, element 3 \(byte 156\) is NaN: float inputs sent to a server must be finite numbers/,
    );
    const f8 = new Float64Array([1, 2, Number.NEGATIVE_INFINITY]);
    expect(datasetError(() => readTensorDataset(file('inf.npy', npy('<f8', [3], new Uint8Array(f8.buffer)))))).toMatch(/inf\.npy: sample 2, element 0 .* is -Infinity/);
    const f2 = new Uint8Array(8);
    new DataView(f2.buffer).setUint16(6, 0x7c00, true);
    expect(datasetError(() => readTensorDataset(file('h.npy', npy('<f2', [2, 2], f2))))).toMatch(/h\.npy: sample 1, element 1 .* is Infinity/);
    // Integers cannot hold either; finite floats are read as before.
    expect(readTensorDataset(file('ok.npy', npy('<f4', [3, 4], new Uint8Array(Float32Array.from({ length: 12 }, (_, i) => -i * 1e30).buffer)))).totalSampleCount).toBe(3);
  });
});

describe('.jsonl data sets', () => {
  it('reads one v2 inputs array a line (flat or nested data, several inputs, blank lines skipped)', () => {
    const lines = [
      JSON.stringify([{ name: 'ids', datatype: 'INT64', shape: [1, 3], data: [1, 2, 3] }, { name: 'mask', datatype: 'BOOL', shape: [1, 3], data: [[true, false, true]] }]),
      '',
      JSON.stringify({ inputs: [{ name: 'ids', datatype: 'INT64', shape: [1, 2], data: [7, 8] }, { name: 'mask', datatype: 'BOOL', shape: [1, 2], data: [true, true] }] }),
      JSON.stringify([{ name: 'ids', datatype: 'INT64', shape: [1, 3], data: [4, 5, 6] }, { name: 'mask', datatype: 'BOOL', shape: [1, 3], data: [false, false, true] }]),
    ];
    const path = file('d.jsonl', `${lines.join('\n')}\n`);
    const ds = readTensorDataset(path);
    expect(ds.totalSampleCount).toBe(3);
    expect(ds.where(1)).toBe(`${path}:3`);
    const [ids, mask] = ds.inputs(0);
    expect(decodeNumbers('INT64', ids!.data)).toEqual([1n, 2n, 3n]);
    expect(Array.from(mask!.data)).toEqual([1, 0, 1]);
    // Two layouts ([1,3] and [1,2]): the metadata check looks at one sample of each.
    expect(ds.layoutSamples()).toEqual([0, 1]);
  });

  it('refuses bad lines naming the file, the line, the input and the problem', () => {
    const bad = (line: string): string => datasetError(() => readTensorDataset(file('b.jsonl', `${JSON.stringify([{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }])}\n${line}\n`)));
    expect(bad('{oops')).toMatch(/b\.jsonl: line 2: not JSON/);
    expect(bad('{"prompt": "hi"}')).toMatch(/line 2: expected a non-empty v2 inputs array/);
    expect(bad('[]')).toMatch(/line 2: expected a non-empty v2 inputs array/);
    expect(bad('[{"datatype":"FP32","shape":[1],"data":[1]}]')).toMatch(/line 2: inputs\[0\]\.name must be a non-empty string/);
    expect(bad('[{"name":"x","datatype":"FLOAT","shape":[1],"data":[1]}]')).toMatch(/inputs\[0\] 'x': datatype "FLOAT" is not one of BOOL, .*FP32/);
    expect(bad('[{"name":"x","datatype":"FP32","shape":[-1],"data":[1]}]')).toMatch(/shape must be an array of integers >= 0, got \[-1\]/);
    expect(bad('[{"name":"x","datatype":"FP32","shape":[2,2],"data":[1,2,3]}]')).toMatch(/'x': shape \[2,2\] needs 4 values, data has 3/);
    expect(bad('[{"name":"x","datatype":"INT8","shape":[2],"data":[1,200]}]')).toMatch(/'x': data\[1\] = 200 is not an integer in \[-128, 127\] \(INT8\)/);
    expect(bad('[{"name":"x","datatype":"FP32","shape":[1],"data":["a"]}]')).toMatch(/data\[0\] = "a" is not a finite number in the FP32 range/);
    expect(bad('[{"name":"x","datatype":"BOOL","shape":[1],"data":[1]}]')).toMatch(/is not a boolean \(BOOL\)/);
    expect(bad('[{"name":"x","datatype":"FP32","shape":[1],"data":[1]},{"name":"x","datatype":"FP32","shape":[1],"data":[1]}]')).toMatch(/line 2: input 'x' appears twice/);
    expect(datasetError(() => readTensorDataset(file('e.jsonl', '\n\n')))).toMatch(/e\.jsonl: has no samples/);
    // Values the element type cannot hold, named with the file, line, input, element and value.
    expect(bad('[{"name":"x","datatype":"FP32","shape":[2],"data":[1,1e39]}]')).toMatch(
      /b\.jsonl: line 2: inputs\[0\] 'x': data\[1\] = 1e\+39 is not a finite number in the FP32 range \(\|x\| <= 3\.4028234663852886e\+38\)/,
    );
    expect(bad('[{"name":"x","datatype":"FP64","shape":[1],"data":[1e400]}]')).toMatch(/data\[0\] = Infinity is not a finite number in the FP64 range/);
    expect(bad('[{"name":"x","datatype":"FP16","shape":[1],"data":[70000]}]')).toMatch(/data\[0\] = 70000 is not a finite number in the FP16 range \(\|x\| <= 65504\)/);
    expect(bad('[{"name":"x","datatype":"BF16","shape":[1],"data":[-1e39]}]')).toMatch(/data\[0\] = -1e\+39 is not a finite number in the BF16 range/);
    expect(bad('[{"name":"x","datatype":"UINT8","shape":[1],"data":[300]}]')).toMatch(/data\[0\] = 300 is not an integer in \[0, 255\] \(UINT8\)/);
    expect(bad('[{"name":"x","datatype":"INT32","shape":[1],"data":[1.5]}]')).toMatch(/data\[0\] = 1.5 is not an integer in \[-2147483648, 2147483647\] \(INT32\)/);
    expect(bad('[{"name":"x","datatype":"INT64","shape":[1],"data":[1e300]}]')).toMatch(/data\[0\] = 1e\+300 is not an integer of at most 2\^53 - 1 in magnitude \(INT64/);
    expect(bad('[{"name":"x","datatype":"UINT64","shape":[1],"data":[0.5]}]')).toMatch(/data\[0\] = 0.5 is not an integer of at most 2\^53 - 1/);
    // The largest finite values still fit.
    expect(() => readTensorDataset(file('max.jsonl', JSON.stringify([{ name: 'x', datatype: 'FP32', shape: [2], data: [3.4028234663852886e38, -65504] }, { name: 'h', datatype: 'FP16', shape: [1], data: [65504] }])))).not.toThrow();
    // A DatasetError (as the OpenAI SUT's): file, line and field as properties.
    const path = file('l.jsonl', '[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}]\n[{"name":"x","datatype":"FP32","shape":[1],"data":[true]}]\n');
    try {
      readTensorDataset(path);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DatasetError);
      expect(error).toMatchObject({ file: path, line: 2, field: 'data', key: 'dataset' });
    }
  });
});

describe('tensor conversions', () => {
  it('FP32 JSON text reads back to the same float32 values', () => {
    const values = demoSample(3);
    const text = jsonDataText('FP32', new Uint8Array(values.buffer));
    const back = Float32Array.from(JSON.parse(text) as number[]);
    expect(Array.from(back)).toEqual(Array.from(values));
    // Shorter than the doubles' full digits.
    expect(text.length).toBeLessThan(values.length * 13);
  });

  it('FP16 and BF16 round to nearest even; decode inverts', () => {
    expect(float16Bits(1)).toBe(0x3c00);
    expect(float16Bits(-2)).toBe(0xc000);
    expect(float16Bits(65504)).toBe(0x7bff);
    expect(float16Bits(1e6)).toBe(0x7c00);
    expect(float16Bits(2 ** -24)).toBe(1);
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie: to even
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    for (const v of [0.5, -3.25, 1024, 2 ** -20]) expect(float16Value(float16Bits(v))).toBe(v);
    expect(bfloat16Bits(1)).toBe(0x3f80);
    expect(decodeNumbers('BF16', encodeValues('BF16', [2.5, -1]))).toEqual([2.5, -1]);
    expect(decodeNumbers('FP16', encodeValues('FP16', [0.5, -3.25]))).toEqual([0.5, -3.25]);
  });

  it('BYTES elements carry a 4-byte length; JSON text gives them back as strings', () => {
    const raw = encodeValues('BYTES', ['ab', 'ü']);
    expect(Array.from(raw)).toEqual([2, 0, 0, 0, 0x61, 0x62, 2, 0, 0, 0, 0xc3, 0xbc]);
    expect(jsonDataText('BYTES', raw)).toBe('["ab","ü"]');
  });
});

describe('infer response reader', () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
  const logits = Float32Array.from([0.5, -1.25, 3]);

  it('JSON outputs become their raw little-endian bytes, in response order', () => {
    const body = enc(JSON.stringify({
      model_name: 'm',
      outputs: [
        { name: 'logits', datatype: 'FP32', shape: [1, 3], data: [[0.5, -1.25, 3]] },
        { name: 'label', datatype: 'INT32', shape: [1], data: [2] },
      ],
    }));
    const outcome = readInferResponse(body, true);
    expect(outcome.ok).toBe(true);
    const data = (outcome as { data: Uint8Array }).data;
    expect(data.length).toBe(16);
    expect(Array.from(new Float32Array(data.slice(0, 12).buffer))).toEqual(Array.from(logits));
    expect(new DataView(data.buffer, data.byteOffset).getInt32(12, true)).toBe(2);
    expect(readInferResponse(body, false)).toEqual({ ok: true });
  });

  // A binary-extension body: the JSON header, then each output's bytes; its header length is the JSON's.
  const binaryBody = (outputs: { name: string; datatype: string; shape: number[]; bytes: Uint8Array }[]): { body: Uint8Array; length: string } => {
    const header = enc(JSON.stringify({ model_name: 'm', outputs: outputs.map((o) => ({ name: o.name, datatype: o.datatype, shape: o.shape, parameters: { binary_data_size: o.bytes.length } })) }));
    return { body: new Uint8Array([...header, ...outputs.flatMap((o) => [...o.bytes])]), length: String(header.length) };
  };

  it('binary-extension outputs are read by Inference-Header-Content-Length, whatever their bytes', () => {
    // A UINT8 [1,1] output whose byte is 10 (a line feed): all whitespace after the JSON, still data.
    const newline = binaryBody([{ name: 'o', datatype: 'UINT8', shape: [1, 1], bytes: new Uint8Array([10]) }]);
    expect(readInferResponse(newline.body, true, newline.length)).toEqual({ ok: true, data: new Uint8Array([10]) });
    const spaces = binaryBody([{ name: 'o', datatype: 'UINT8', shape: [4], bytes: new Uint8Array([32, 9, 13, 10]) }]);
    expect(readInferResponse(spaces.body, true, spaces.length)).toEqual({ ok: true, data: new Uint8Array([32, 9, 13, 10]) });
    // FP32, BYTES and several outputs, in order.
    const bytes = encodeValues('BYTES', ['a b', '']);
    const several = binaryBody([
      { name: 'logits', datatype: 'FP32', shape: [1, 3], bytes: new Uint8Array(logits.buffer) },
      { name: 'text', datatype: 'BYTES', shape: [2], bytes },
      { name: 'flag', datatype: 'BOOL', shape: [1], bytes: new Uint8Array([1]) },
    ]);
    const outcome = readInferResponse(several.body, true, several.length) as { ok: true; data: Uint8Array };
    expect(outcome.ok).toBe(true);
    expect(Array.from(new Float32Array(outcome.data.slice(0, 12).buffer))).toEqual(Array.from(logits));
    expect(Array.from(outcome.data.slice(12))).toEqual([...bytes, 1]);
    // A JSON body may say its length too.
    const json = enc('{"outputs":[{"name":"o","datatype":"INT32","shape":[1],"data":[7]}]}');
    expect(readInferResponse(json, true, String(json.length))).toEqual({ ok: true, data: new Uint8Array([7, 0, 0, 0]) });
  });

  it('a wrong Inference-Header-Content-Length, or sizes that do not add up, is malformed naming the header and values', () => {
    const fp32 = binaryBody([{ name: 'o', datatype: 'FP32', shape: [3], bytes: new Uint8Array(logits.buffer) }]);
    const n = fp32.body.length;
    const jsonLength = Number(fp32.length);
    const message = (body: Uint8Array, length: string | string[] | undefined): string => {
      const outcome = readInferResponse(body, true, length);
      expect(outcome.ok, String(length)).toBe(false);
      expect(outcome).toMatchObject({ kind: 'malformed_response' });
      return (outcome as { message: string }).message;
    };
    expect(message(fp32.body, '999999')).toBe(`the infer response: Inference-Header-Content-Length 999999 exceeds the body's ${n} bytes`);
    for (const bad of ['-1', '1.5', 'abc', '', '0x10', '1e3']) expect(message(fp32.body, bad)).toContain(`Inference-Header-Content-Length "${bad}" is not a non-negative integer`);
    expect(message(fp32.body, [fp32.length, fp32.length])).toContain('Inference-Header-Content-Length is given 2 times');
    // Too short a header length cuts the JSON; too long takes binary bytes into it.
    expect(message(fp32.body, String(jsonLength - 1))).toMatch(/not JSON/);
    expect(message(fp32.body, String(jsonLength + 4))).toMatch(/not JSON/);
    // Binary data without the header: the body is all JSON.
    expect(message(fp32.body, undefined)).toMatch(/not JSON/);
    const short = new Uint8Array([...enc('{"outputs":[{"name":"o","datatype":"FP32","shape":[3],"parameters":{"binary_data_size":12}}]}'), 1, 2, 3, 4]);
    expect(message(short, String(short.length - 4))).toBe(
      `the infer response: outputs[0] 'o': binary_data_size 12 at byte 0 of the binary data, which holds 4 (Inference-Header-Content-Length ${short.length - 4} of a ${short.length}-byte body)`,
    );
    const extra = new Uint8Array([...enc('{"outputs":[{"name":"o","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]}'), 1, 2, 3, 4, 5]);
    expect(message(extra, String(extra.length - 5))).toMatch(/1 bytes of binary data after the last tensor \(Inference-Header-Content-Length \d+ of a \d+-byte body\)/);
    const noHeader = enc('{"outputs":[{"name":"o","datatype":"UINT8","shape":[1],"parameters":{"binary_data_size":1}}]}');
    expect(message(noHeader, undefined)).toMatch(/binary_data_size 1 at byte 0 of the binary data, which holds 0 \(the response has no Inference-Header-Content-Length: all of its body is JSON\)/);
  });

  it('malformed answers: not JSON, an error field, no outputs, wrong counts', () => {
    const kind = (body: string | Uint8Array): string => {
      const outcome = readInferResponse(typeof body === 'string' ? enc(body) : body, true);
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return '';
      expect(outcome.kind).toBe('malformed_response');
      return outcome.message;
    };
    expect(kind('<html>')).toMatch(/not JSON/);
    expect(kind('')).toMatch(/not JSON/);
    expect(kind('{"error":"model crashed"}')).toMatch(/the server answered an error: model crashed/);
    expect(kind('{"model_name":"m"}')).toMatch(/no outputs/);
    expect(kind('{"outputs":[{"name":"o","datatype":"FP32","shape":[2],"data":[1]}]}')).toMatch(/shape \[2\] needs 2 elements, the data has 1/);
    expect(kind('{"outputs":[{"name":"o","datatype":"FP32","shape":[1]}]}')).toMatch(/no data/);
  });
});

describe('the built-in demo data', () => {
  it('is the demo QSL\'s samples as FP32 [1,3,32,32] named like the model input', () => {
    const ds = demoTensorDataset();
    expect(ds.totalSampleCount).toBe(1024);
    const [t] = ds.inputs(7);
    expect(t).toMatchObject({ name: 'input', datatype: 'FP32', shape: [1, 3, 32, 32] });
    expect(Array.from(new Float32Array(t!.data.buffer))).toEqual(Array.from(demoSample(7)));
  });
});
