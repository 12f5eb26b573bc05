/**
 * Input tensor data sets of the KServe SUT (docs/network-suts.md, "KServe v2"): a NumPy
 * `.npy` file (first axis = samples), JSONL of v2 `inputs` arrays (one line
 * a sample), or the built-in demo data. Each sample's tensors are kept as raw
 * little-endian bytes (v2-tensors.ts); errors name the file, the line or
 * offset and the problem, before any query is issued.
 */
import { readFileSync } from 'node:fs';

import { DatasetError, SettingsError } from '../errors.js';
import { fillDemoSample } from '../demo/dataset.js';
import { DEMO_TOTAL_SAMPLES } from '../demo/dataset.js';
import { INPUT_CHANNELS, INPUT_NAME, INPUT_SIZE, SAMPLE_ELEMENTS } from '../demo/model.js';
import {
  decodeNumbers,
  elementBytes,
  elementCount,
  encodeValues,
  firstNonFinite,
  flattenData,
  formatShape,
  isV2Datatype,
  V2_DATATYPES,
  type V2Datatype,
} from './v2-tensors.js';

/** One input tensor of one sample. */
export interface SampleTensor {
  /** The model input it feeds; undefined for a `.npy` file (the model's only input). */
  readonly name: string | undefined;
  readonly datatype: V2Datatype;
  /** Its shape as sent, or (batchFree) the shape of one sample without a batch dimension. */
  readonly shape: readonly number[];
  /** The shape lacks the batch dimension: [1, ...shape] is sent when the model's input has one more dimension. */
  readonly batchFree?: boolean;
  /** Raw little-endian bytes (an own, aligned buffer). */
  readonly data: Uint8Array;
}

/** Samples of input tensors. */
export interface TensorDataset {
  /** e.g. 'inputs.npy (<f4, 100 samples of [3,32,32])'. */
  readonly description: string;
  readonly totalSampleCount: number;
  /** The tensors of sample `index` (0 <= index < totalSampleCount), freshly built. */
  inputs(index: number): SampleTensor[];
  /** Where sample `index` is, for messages ('data.jsonl:4', 'x.npy sample 3'). */
  where(index: number): string;
  /** One sample of each distinct input layout (names, datatypes, shapes): what the model's metadata is checked against. */
  layoutSamples(): readonly number[];
}

/** The `dataset` option's error: names the file, the line (0: the file as a whole) and what is wrong. */
function datasetError(file: string, message: string, line = 0, field = ''): DatasetError {
  return new DatasetError(file, line, field, `dataset ${file}: ${message}`);
}

/** Reads `.npy` or `.jsonl` by extension. */
export function readTensorDataset(file: string): TensorDataset {
  if (typeof file !== 'string' || file === '') throw new SettingsError('dataset', file, `dataset must be a file path (.npy or .jsonl), got ${String(file)}`);
  const lower = file.toLowerCase();
  if (!lower.endsWith('.npy') && !lower.endsWith('.jsonl')) {
    throw datasetError(file, 'the file name must end in .npy (a NumPy array, first axis = samples) or .jsonl (one v2 `inputs` array a line)');
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw datasetError(file, `cannot be read: ${(error as Error).message}`);
  }
  return lower.endsWith('.npy') ? parseNpy(bytes, file) : parseTensorJsonl(bytes.toString('utf8'), file);
}

/** A sample's input layout (names, datatypes, shapes) as a string: samples of one layout share a metadata check. */
export function layoutKey(tensors: readonly SampleTensor[]): string {
  return tensors.map((t) => `${t.name}\u0000${t.datatype}\u0000${t.shape.join(',')}`).join('\u0001');
}

// --- .npy --------------------------------------------------------------------

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const NPY_TYPES: Record<string, V2Datatype> = {
  b1: 'BOOL',
  u1: 'UINT8',
  u2: 'UINT16',
  u4: 'UINT32',
  u8: 'UINT64',
  i1: 'INT8',
  i2: 'INT16',
  i4: 'INT32',
  i8: 'INT64',
  f2: 'FP16',
  f4: 'FP32',
  f8: 'FP64',
};

/** The array of a `.npy` file: its datatype, shape and where its data starts. */
export interface NpyArray {
  datatype: V2Datatype;
  descr: string;
  shape: number[];
  dataOffset: number;
}

/** Parses a `.npy` header (format versions 1, 2 and 3). */
export function parseNpyHeader(bytes: Uint8Array, file: string): NpyArray {
  if (bytes.length < 10 || !NPY_MAGIC.every((b, i) => bytes[i] === b)) throw datasetError(file, 'not a .npy file (it does not start with \\x93NUMPY)');
  const major = bytes[6]!;
  if (major < 1 || major > 3) throw datasetError(file, `.npy format version ${major}.${bytes[7]} is not supported (1, 2 or 3)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lengthBytes = major === 1 ? 2 : 4;
  if (bytes.length < 8 + lengthBytes) throw datasetError(file, 'the header is cut short');
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = 8 + lengthBytes;
  if (start + headerLength > bytes.length) throw datasetError(file, `the header claims ${headerLength} bytes at offset ${start}; the file has ${bytes.length}`);
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(start, start + headerLength));
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header)?.[1];
  if (descr === undefined) {
    throw datasetError(file, /'descr'\s*:\s*\[/.test(header) ? 'structured arrays (several fields) are not supported: save one plain array' : `no 'descr' in the header ${header.trim()}`);
  }
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  if (fortran === undefined) throw datasetError(file, `no 'fortran_order' in the header ${header.trim()}`);
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (shapeText === undefined) throw datasetError(file, `no 'shape' in the header ${header.trim()}`);
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => (/^\d+L?$/.test(s) ? Number.parseInt(s, 10) : NaN));
  if (shape.some((d) => !Number.isSafeInteger(d))) throw datasetError(file, `shape (${shapeText}) is not a tuple of integers`);
  if (shape.length === 0) throw datasetError(file, 'the array is a scalar: its first axis must count the samples');
  const order = descr[0];
  const code = descr.slice(1);
  const datatype = NPY_TYPES[code];
  const supported = 'supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1';
  if (datatype === undefined || !'<>|='.includes(order ?? '')) throw datasetError(file, `dtype '${descr}' is not supported (${supported})`);
  if (order === '>' && elementBytes(datatype)! > 1) {
    throw datasetError(file, `dtype '${descr}' is big-endian; save it little-endian (numpy: arr.astype('<${code}'))`);
  }
  if (fortran === 'True' && shape.filter((d) => d > 1).length > 1) {
    throw datasetError(file, 'the array is in Fortran (column-major) order; save a C-ordered one (numpy: np.ascontiguousarray(arr))');
  }
  return { datatype, descr, shape, dataOffset: start + headerLength };
}

/** A `.npy` data set: sample i is `arr[i]`, sent with a batch dimension of 1 when the model's input has one. */
export function parseNpy(bytes: Uint8Array, file: string): TensorDataset {
  const array = parseNpyHeader(bytes, file);
  const samples = array.shape[0]!;
  if (samples === 0) throw datasetError(file, `shape ${formatShape(array.shape)} has no samples (its first axis is 0)`);
  const sampleShape = array.shape.slice(1);
  const sampleBytes = elementCount(sampleShape) * elementBytes(array.datatype)!;
  const need = samples * sampleBytes;
  const have = bytes.length - array.dataOffset;
  if (have !== need) {
    throw datasetError(file, `the data at offset ${array.dataOffset} holds ${have} bytes; shape ${formatShape(array.shape)} of '${array.descr}' needs ${need}`);
  }
  const base = array.dataOffset;
  // Float inputs go to a server as they are: a NaN or an infinity is bad input, named before the run.
  if (array.datatype === 'FP16' || array.datatype === 'FP32' || array.datatype === 'FP64') {
    const bad = firstNonFinite(array.datatype, bytes.subarray(base));
    if (bad >= 0) {
      const perSample = elementCount(sampleShape);
      const value = decodeNumbers(array.datatype, bytes.slice(base + bad * elementBytes(array.datatype)!, base + (bad + 1) * elementBytes(array.datatype)!))[0];
      throw datasetError(
        file,
        `sample ${Math.floor(bad / perSample)}, element ${bad % perSample} (byte ${base + bad * elementBytes(array.datatype)!}) is ${String(value)}: float inputs sent to a server must be finite numbers`,
      );
    }
  }
  return {
    description: `${file} ('${array.descr}' ${array.datatype}, ${samples} sample${samples === 1 ? '' : 's'} of ${formatShape(sampleShape)})`,
    totalSampleCount: samples,
    inputs: (index) => [
      {
        name: undefined,
        datatype: array.datatype,
        shape: sampleShape,
        batchFree: true,
        // slice copies: an own buffer, aligned for typed-array reads.
        data: bytes.slice(base + index * sampleBytes, base + (index + 1) * sampleBytes),
      },
    ],
    where: (index) => `${file} sample ${index}`,
    layoutSamples: () => [0],
  };
}

// --- .jsonl ------------------------------------------------------------------

/** A JSONL data set: each line a v2 `inputs` array (or an object with `inputs`). */
export function parseTensorJsonl(text: string, file: string): TensorDataset {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const samples: SampleTensor[][] = [];
  const lineOf: number[] = [];
  const layouts = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const at = `line ${i + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      throw datasetError(file, `${at}: not JSON (${(error as Error).message})`, i + 1);
    }
    const inputs = Array.isArray(parsed) ? parsed : (parsed as { inputs?: unknown } | null)?.inputs;
    if (!Array.isArray(inputs) || inputs.length === 0) {
      throw datasetError(file, `${at}: expected a non-empty v2 inputs array ([{ "name", "shape", "datatype", "data" }, ...]) or { "inputs": [...] }`, i + 1, 'inputs');
    }
    const tensors: SampleTensor[] = [];
    for (let k = 0; k < inputs.length; k++) tensors.push(jsonlTensor(inputs[k], `${at}: inputs[${k}]`, file, i + 1));
    const names = new Set<string>();
    for (const t of tensors) {
      if (names.has(t.name!)) throw datasetError(file, `${at}: input '${t.name}' appears twice`, i + 1, 'name');
      names.add(t.name!);
    }
    const key = layoutKey(tensors);
    if (!layouts.has(key)) layouts.set(key, samples.length);
    samples.push(tensors);
    lineOf.push(i + 1);
  }
  if (samples.length === 0) throw datasetError(file, 'has no samples (no non-empty lines)');
  return {
    description: `${file} (JSONL, ${samples.length} sample${samples.length === 1 ? '' : 's'})`,
    totalSampleCount: samples.length,
    inputs: (index) => samples[index]!,
    where: (index) => `${file}:${lineOf[index]}`,
    layoutSamples: () => [...layouts.values()],
  };
}

function jsonlTensor(value: unknown, at: string, file: string, line: number): SampleTensor {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw datasetError(file, `${at} is not an object`, line, 'inputs');
  const t = value as Record<string, unknown>;
  if (typeof t.name !== 'string' || t.name === '') throw datasetError(file, `${at}.name must be a non-empty string`, line, 'name');
  const where = `${at} '${t.name}'`;
  if (!isV2Datatype(t.datatype)) {
    throw datasetError(file, `${where}: datatype ${JSON.stringify(t.datatype) ?? 'missing'} is not one of ${V2_DATATYPES.join(', ')}`, line, 'datatype');
  }
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
    throw datasetError(file, `${where}: shape must be an array of integers >= 0, got ${JSON.stringify(t.shape) ?? 'nothing'}`, line, 'shape');
  }
  if (!Array.isArray(t.data)) throw datasetError(file, `${where}: data must be an array (flat or nested, row-major)`, line, 'data');
  const shape = t.shape as number[];
  const values = flattenData(t.data);
  const count = elementCount(shape);
  if (values.length !== count) throw datasetError(file, `${where}: shape ${formatShape(shape)} needs ${count} values, data has ${values.length}`, line, 'shape');
  let data: Uint8Array;
  try {
    data = encodeValues(t.datatype, values);
  } catch (error) {
    throw datasetError(file, `${where}: ${(error as Error).message}`, line, 'data');
  }
  return { name: t.name, datatype: t.datatype, shape, data };
}

// --- the built-in demo data --------------------------------------------------

/** The demo's synthetic inputs (lib/demo/dataset.ts) as FP32 [1,3,32,32] tensors named like the demo model's input. */
export function demoTensorDataset(totalSampleCount = DEMO_TOTAL_SAMPLES): TensorDataset {
  const shape = [1, INPUT_CHANNELS, INPUT_SIZE, INPUT_SIZE];
  return {
    description: `the built-in demo data (${totalSampleCount} samples of FP32 ${formatShape(shape)})`,
    totalSampleCount,
    inputs: (index) => {
      const values = fillDemoSample(index, new Float32Array(SAMPLE_ELEMENTS));
      return [{ name: INPUT_NAME, datatype: 'FP32', shape, data: new Uint8Array(values.buffer) }];
    },
    where: (index) => `demo sample ${index}`,
    layoutSamples: () => [0],
  };
}
