/**
 * Output token ids as mlperf_log_accuracy.json's `data`: little-endian
 * int32 or int64, as MLCommons' evaluation scripts read them
 * (`np.frombuffer(bytes.fromhex(data), dtype)`), and back.
 *
 * The default per benchmark is what the reference implementation writes
 * and its documented evaluation command reads (mlcommons/inference,
 * language/*): every LLM reference SUT logs `np.int32` ids and its README
 * runs the evaluator with `--dtype int32` (llama2-70b SUT.py/SUT_API.py,
 * mixtral-8x7b SUT.py, llama3.1-8b and llama3.1-405b SUT_VLLM.py,
 * deepseek-r1 mlperf/*_sut.py, whose eval_accuracy.py defaults to int32;
 * gpt-oss-120b's eval_mlperf_accuracy.py unpacks '<i' int32 only) — except
 * GPT-J, whose PyTorch backend logs the int64 tensor `generate` returns and
 * whose README runs evaluation.py without --dtype (its default: int64).
 * Note that evaluate-accuracy.py / evaluation.py of llama2-70b, mixtral,
 * llama3.1-8b and llama3.1-405b default to int64 when --dtype is not given:
 * pass the --dtype the summary prints.
 */

export const ACCURACY_DTYPES = ['int32', 'int64'] as const;
export type AccuracyDtype = (typeof ACCURACY_DTYPES)[number];

/** The dtype when no benchmark is named: what every current LLM reference SUT writes. */
export const DEFAULT_ACCURACY_DTYPE: AccuracyDtype = 'int32';

/** Per benchmark (mlperf.conf model names; -interactive and -edge variants share their base's). */
export const ACCURACY_DTYPE_BY_BENCHMARK: Readonly<Record<string, AccuracyDtype>> = Object.freeze({
  gptj: 'int64',
  'llama2-70b': 'int32',
  'mixtral-8x7b': 'int32',
  'llama3_1-8b': 'int32',
  'llama3_1-405b': 'int32',
  'deepseek-r1': 'int32',
  'gpt-oss-120b': 'int32',
});

/** The benchmark's base name: 'llama3_1-8b-interactive' -> 'llama3_1-8b'; also accepts 'llama3.1-8b'. */
export function benchmarkBase(name: string): string {
  return name.replace(/-(interactive|edge)$/, '').replace(/^llama3\.1-/, 'llama3_1-');
}

/** The dtype MLCommons' evaluator reads for `benchmark` (DEFAULT_ACCURACY_DTYPE for none or one not listed). */
export function accuracyDtypeFor(benchmark: string | undefined): AccuracyDtype {
  if (benchmark === undefined) return DEFAULT_ACCURACY_DTYPE;
  const base = benchmarkBase(benchmark);
  return Object.hasOwn(ACCURACY_DTYPE_BY_BENCHMARK, base) ? ACCURACY_DTYPE_BY_BENCHMARK[base]! : DEFAULT_ACCURACY_DTYPE;
}

/** Bytes per id. */
export function dtypeBytes(dtype: AccuracyDtype): 4 | 8 {
  return dtype === 'int64' ? 8 : 4;
}

/** Token ids as little-endian int32/int64 bytes (the accuracy log's data). Ids must be integers in 0..2^31-1. */
export function encodeTokenIds(ids: ArrayLike<number>, dtype: AccuracyDtype): Uint8Array {
  const width = dtypeBytes(dtype);
  const bytes = new Uint8Array(ids.length * width);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (dtype === 'int32') view.setInt32(i * 4, id, true);
    else {
      view.setInt32(i * 8, id, true);
      // The high word: ids are non-negative, below 2^31.
      view.setInt32(i * 8 + 4, id < 0 ? -1 : 0, true);
    }
  }
  return bytes;
}

/**
 * The ids of an accuracy-log entry's bytes. A RangeError when the length is
 * not a whole number of ids or an id is negative or above 2^31-1 (not ids
 * of this dtype: the wrong --accuracy-dtype, or text).
 */
export function decodeTokenIds(bytes: Uint8Array, dtype: AccuracyDtype): Int32Array {
  const width = dtypeBytes(dtype);
  if (bytes.length % width !== 0) throw new RangeError(`${bytes.length} bytes are not a whole number of ${dtype} token ids`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ids = new Int32Array(bytes.length / width);
  for (let i = 0; i < ids.length; i++) {
    const low = view.getInt32(i * width, true);
    const high = width === 8 ? view.getInt32(i * 8 + 4, true) : 0;
    if (low < 0 || high !== 0) {
      const value = width === 8 ? String(view.getBigInt64(i * 8, true)) : String(low);
      throw new RangeError(`id ${i} is ${value}, not a token id (0..${2 ** 31 - 1}): is the data ${dtype}?`);
    }
    ids[i] = low;
  }
  return ids;
}
