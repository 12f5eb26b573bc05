/**
 * Tensors of the KServe v2 / Open Inference Protocol: datatypes, the raw
 * little-endian bytes loadgen keeps them in, and their two wire forms (JSON
 * `data` arrays; the binary tensor data extension). Shared by the client
 * protocol (kserve.ts), its data sets and the demo server.
 *
 * Raw layout: each element little-endian in its datatype's size (BOOL one
 * byte 0/1; FP16/BF16 two bytes); BYTES elements as a 4-byte little-endian
 * length followed by that many bytes, as the binary extension sends them.
 */

export const V2_DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BF16',
  'BYTES',
] as const;
export type V2Datatype = (typeof V2_DATATYPES)[number];

const ELEMENT_BYTES: Record<Exclude<V2Datatype, 'BYTES'>, number> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BF16: 2,
};

export function isV2Datatype(value: unknown): value is V2Datatype {
  return typeof value === 'string' && (V2_DATATYPES as readonly string[]).includes(value);
}

/** Bytes per element; undefined for BYTES (variable length). */
export function elementBytes(datatype: V2Datatype): number | undefined {
  return datatype === 'BYTES' ? undefined : ELEMENT_BYTES[datatype];
}

/** Elements of a shape (the product of its dimensions; 1 for a scalar). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** '[1,3,32,32]' for messages. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

/** A tensor problem; callers prefix where it was found. */
export class TensorFormatError extends Error {}

const INTEGER_RANGE: Partial<Record<V2Datatype, [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
};

/** The largest finite value of each float type, for messages. */
const FLOAT_MAX = { FP16: 65504, BF16: 3.3895313892515355e38, FP32: 3.4028234663852886e38, FP64: Number.MAX_VALUE } as const;
/** The exponent bits of the 16-bit float types: all set is infinity or NaN. */
const FLOAT_EXPONENT = { FP16: 0x7c00, BF16: 0x7f80 } as const;

/**
 * The index of the first element of raw little-endian float data (FP16,
 * FP32 or FP64) that is NaN or infinite, or -1 when every one is finite.
 */
export function firstNonFinite(datatype: 'FP16' | 'FP32' | 'FP64', bytes: Uint8Array): number {
  if (datatype === 'FP16') {
    for (let i = 0; i + 1 < bytes.length; i += 2) if (((bytes[i]! | (bytes[i + 1]! << 8)) & 0x7c00) === 0x7c00) return i / 2;
    return -1;
  }
  const size = datatype === 'FP32' ? 4 : 8;
  // A typed array over the bytes needs them aligned: a copy when they are not.
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const n = Math.floor(aligned.length / size);
  const values = size === 4 ? new Float32Array(aligned.buffer, aligned.byteOffset, n) : new Float64Array(aligned.buffer, aligned.byteOffset, n);
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v - v !== 0) return i;
  }
  return -1;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Appends every leaf of a (possibly nested) JSON array: v2 allows row-major data flat or nested. */
export function flattenData(data: readonly unknown[]): unknown[] {
  if (!data.some(Array.isArray)) return data as unknown[];
  const out: unknown[] = [];
  const walk = (values: readonly unknown[]): void => {
    for (const v of values) {
      if (Array.isArray(v)) walk(v);
      else out.push(v);
    }
  };
  walk(data);
  return out;
}

/**
 * JSON `data` values (flat) to raw bytes of `datatype`. Throws a
 * TensorFormatError naming the first value that does not fit.
 */
export function encodeValues(datatype: V2Datatype, values: readonly unknown[]): Uint8Array {
  const bad = (i: number, what: string): TensorFormatError =>
    new TensorFormatError(`data[${i}] = ${short(values[i])} is not ${what}`);
  if (datatype === 'BYTES') {
    const parts: Uint8Array[] = [];
    let total = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (typeof v !== 'string') throw bad(i, 'a string (BYTES)');
      const bytes = utf8.encode(v);
      parts.push(bytes);
      total += 4 + bytes.length;
    }
    const out = new Uint8Array(total);
    const view = new DataView(out.buffer);
    let at = 0;
    for (const p of parts) {
      view.setUint32(at, p.length, true);
      out.set(p, at + 4);
      at += 4 + p.length;
    }
    return out;
  }
  const size = ELEMENT_BYTES[datatype];
  const out = new Uint8Array(values.length * size);
  const view = new DataView(out.buffer);
  switch (datatype) {
    case 'BOOL':
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (typeof v !== 'boolean') throw bad(i, 'a boolean (BOOL)');
        out[i] = v ? 1 : 0;
      }
      return out;
    case 'FP16':
    case 'BF16':
    case 'FP32':
    case 'FP64': {
      // A value the type cannot hold would be sent as infinity: refused, as NaN is.
      const range = `a finite number in the ${datatype} range (|x| <= ${FLOAT_MAX[datatype]})`;
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(i, range);
        if (datatype === 'FP32') {
          if (!Number.isFinite(Math.fround(v))) throw bad(i, range);
          view.setFloat32(i * 4, v, true);
        } else if (datatype === 'FP64') {
          view.setFloat64(i * 8, v, true);
        } else {
          const bits = datatype === 'FP16' ? float16Bits(v) : bfloat16Bits(v);
          if ((bits & FLOAT_EXPONENT[datatype]) === FLOAT_EXPONENT[datatype]) throw bad(i, range);
          view.setUint16(i * 2, bits, true);
        }
      }
      return out;
    }
    case 'INT64':
    case 'UINT64':
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        // Beyond 2^53 a JSON number is no longer the integer it was written as.
        if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(i, `an integer of at most 2^53 - 1 in magnitude (${datatype} values beyond it lose digits as JSON numbers)`);
        if (datatype === 'UINT64' && v < 0) throw bad(i, 'an integer >= 0 (UINT64)');
        if (datatype === 'INT64') view.setBigInt64(i * 8, BigInt(v), true);
        else view.setBigUint64(i * 8, BigInt(v), true);
      }
      return out;
    default: {
      const [lo, hi] = INTEGER_RANGE[datatype]!;
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw bad(i, `an integer in [${lo}, ${hi}] (${datatype})`);
        if (size === 1) view.setUint8(i, v & 0xff);
        else if (size === 2) view.setUint16(i * 2, v & 0xffff, true);
        else view.setUint32(i * 4, v >>> 0, true);
      }
      return out;
    }
  }
}

/**
 * Raw bytes of `datatype` as the text of a JSON `data` array. FP32 values are
 * written with 9 significant digits, which read back to the same float32, so
 * the server sees exactly the data set's values in fewer bytes.
 */
export function jsonDataText(datatype: V2Datatype, bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  switch (datatype) {
    case 'BYTES':
      for (const element of splitBytesElements(bytes)) parts.push(JSON.stringify(utf8Decoder.decode(element)));
      break;
    case 'BOOL':
      for (let i = 0; i < bytes.length; i++) parts.push(bytes[i] !== 0 ? 'true' : 'false');
      break;
    case 'FP32':
      // toPrecision(9) is already valid JSON for finite values (e.g. '-1.23456791e-7') and 2-3x faster than the shortest form.
      for (let i = 0; i < bytes.length; i += 4) {
        const v = view.getFloat32(i, true);
        parts.push(Number.isFinite(v) ? v.toPrecision(9) : jsonNumber(v));
      }
      break;
    default:
      for (const v of decodeNumbers(datatype, bytes)) parts.push(jsonNumber(v));
  }
  return `[${parts.join(',')}]`;
}

function jsonNumber(v: number | bigint): string {
  if (typeof v === 'number' && !Number.isFinite(v)) {
    throw new TensorFormatError(`${v} cannot be sent as JSON: use the binary tensor data extension (binaryTensors)`);
  }
  return String(v);
}

/** Raw bytes of a numeric or BOOL datatype as numbers (bigints for 64-bit integers). */
export function decodeNumbers(datatype: Exclude<V2Datatype, 'BYTES'>, bytes: Uint8Array): (number | bigint)[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = ELEMENT_BYTES[datatype];
  const n = Math.floor(bytes.length / size);
  const out: (number | bigint)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const at = i * size;
    switch (datatype) {
      case 'BOOL': out[i] = bytes[at] !== 0 ? 1 : 0; break;
      case 'UINT8': out[i] = view.getUint8(at); break;
      case 'UINT16': out[i] = view.getUint16(at, true); break;
      case 'UINT32': out[i] = view.getUint32(at, true); break;
      case 'UINT64': out[i] = view.getBigUint64(at, true); break;
      case 'INT8': out[i] = view.getInt8(at); break;
      case 'INT16': out[i] = view.getInt16(at, true); break;
      case 'INT32': out[i] = view.getInt32(at, true); break;
      case 'INT64': out[i] = view.getBigInt64(at, true); break;
      case 'FP16': out[i] = float16Value(view.getUint16(at, true)); break;
      case 'BF16': out[i] = new Float32Array(new Uint32Array([view.getUint16(at, true) << 16]).buffer)[0]!; break;
      case 'FP32': out[i] = view.getFloat32(at, true); break;
      case 'FP64': out[i] = view.getFloat64(at, true); break;
    }
  }
  return out;
}

/** The elements of raw BYTES data; throws when the length prefixes do not add up. */
export function splitBytesElements(bytes: Uint8Array): Uint8Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 4 > bytes.length) throw new TensorFormatError(`BYTES data ends inside a length prefix at byte ${at}`);
    const n = view.getUint32(at, true);
    if (at + 4 + n > bytes.length) throw new TensorFormatError(`BYTES element at byte ${at} claims ${n} bytes, ${bytes.length - at - 4} remain`);
    out.push(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return out;
}

/** Elements in raw data of `datatype` (BYTES: counted through the length prefixes). */
export function rawElementCount(datatype: V2Datatype, bytes: Uint8Array): number {
  const size = elementBytes(datatype);
  if (size === undefined) return splitBytesElements(bytes).length;
  if (bytes.length % size !== 0) throw new TensorFormatError(`${bytes.length} bytes are not a whole number of ${datatype} elements (${size} bytes each)`);
  return bytes.length / size;
}

/** IEEE half-precision bits of `v`, rounded to nearest even. */
export function float16Bits(v: number): number {
  const f32 = new Float32Array([v]);
  const x = new Uint32Array(f32.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa rounds up into the exponent, as it should.
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}

/** The value of IEEE half-precision bits. */
export function float16Value(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** bfloat16 bits of `v` (the float32's upper half, rounded to nearest even). */
export function bfloat16Bits(v: number): number {
  const x = new Uint32Array(new Float32Array([v]).buffer)[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return (x >>> 16) | 0x40;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

function short(value: unknown): string {
  // Numbers as they are: JSON would write an infinity (1e400 in a file) as null.
  const text = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? String(value) : String(JSON.stringify(value) ?? value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** One output (or input) tensor as a v2 message carries it. */
export interface WireTensor {
  name: string;
  datatype: V2Datatype;
  shape: number[];
  /** Raw bytes (layout above). */
  data: Uint8Array;
}

/**
 * Reads the tensors of a v2 message (`inputs` of a request, `outputs` of a
 * response): JSON data or binary-extension data (`parameters.binary_data_size`,
 * raw bytes after the JSON header in tensor order). Checks names, datatypes,
 * shapes and element counts; throws TensorFormatError.
 */
export function readWireTensors(field: 'inputs' | 'outputs', message: Record<string, unknown>, binary: Uint8Array): WireTensor[] {
  const list = message[field];
  if (!Array.isArray(list) || list.length === 0) throw new TensorFormatError(`no ${field} (a non-empty array of tensors)`);
  const out: WireTensor[] = [];
  let cursor = 0;
  for (let k = 0; k < list.length; k++) {
    const t = list[k] as Record<string, unknown> | null;
    const at = `${field}[${k}]`;
    if (t === null || typeof t !== 'object' || Array.isArray(t)) throw new TensorFormatError(`${at} is not an object`);
    const { name, datatype, shape } = t;
    if (typeof name !== 'string' || name === '') throw new TensorFormatError(`${at}.name is missing`);
    const where = `${at} '${name}'`;
    if (!isV2Datatype(datatype)) throw new TensorFormatError(`${where}: datatype ${short(datatype)} is not one of ${V2_DATATYPES.join(', ')}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
      throw new TensorFormatError(`${where}: shape ${short(shape)} is not an array of integers >= 0`);
    }
    const dims = shape as number[];
    const count = elementCount(dims);
    const params = t.parameters as Record<string, unknown> | undefined;
    const binarySize = params !== null && typeof params === 'object' ? params.binary_data_size : undefined;
    let data: Uint8Array;
    if (binarySize !== undefined) {
      if (!Number.isSafeInteger(binarySize) || (binarySize as number) < 0) throw new TensorFormatError(`${where}: binary_data_size ${short(binarySize)} is not an integer >= 0`);
      const size = binarySize as number;
      if (cursor + size > binary.length) {
        throw new TensorFormatError(`${where}: binary_data_size ${size} at byte ${cursor} of the binary data, which holds ${binary.length}`);
      }
      data = binary.subarray(cursor, cursor + size);
      cursor += size;
    } else {
      if (!Array.isArray(t.data)) throw new TensorFormatError(`${where}: no data (a JSON array, or parameters.binary_data_size)`);
      try {
        data = encodeValues(datatype, flattenData(t.data));
      } catch (error) {
        throw new TensorFormatError(`${where}: ${(error as Error).message}`);
      }
    }
    let got: number;
    try {
      got = rawElementCount(datatype, data);
    } catch (error) {
      throw new TensorFormatError(`${where}: ${(error as Error).message}`);
    }
    if (got !== count) throw new TensorFormatError(`${where}: shape ${formatShape(dims)} needs ${count} elements, the data has ${got}`);
    out.push({ name, datatype, shape: dims, data });
  }
  if (cursor !== binary.length) throw new TensorFormatError(`${binary.length - cursor} bytes of binary data after the last tensor`);
  return out;
}

/**
 * Splits a binary-extension body at `headerLength` (its
 * Inference-Header-Content-Length): the JSON header is exactly that many
 * bytes, the binary data the rest (any bytes, whitespace too).
 */
export function splitBinaryBody(body: Uint8Array, headerLength: number): { header: Uint8Array; binary: Uint8Array } {
  if (headerLength > body.length) throw new TensorFormatError(`Inference-Header-Content-Length ${headerLength} exceeds the body's ${body.length} bytes`);
  return { header: body.subarray(0, headerLength), binary: body.subarray(headerLength) };
}

/**
 * An Inference-Header-Content-Length value as a transport read it (a
 * string; an array when the header came more than once) as a byte count, or
 * undefined when absent. Throws TensorFormatError naming the value when it
 * is not one non-negative integer.
 */
export function headerLengthOf(value: string | readonly string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new TensorFormatError(`Inference-Header-Content-Length is given ${value.length} times (${value.map((v) => short(v)).join(', ')}); it must be given once`);
  const text = value.trim();
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new TensorFormatError(`Inference-Header-Content-Length ${short(value)} is not a non-negative integer`);
  return n;
}

/** Concatenates byte arrays. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
