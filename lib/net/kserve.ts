/**
 * The KServe v2 / Open Inference Protocol (docs/network-suts.md, "KServe v2"): before the
 * run each node's readiness and the model's metadata are checked against the
 * data set; each sample is one `POST /v2/models/NAME/infer` whose body is
 * built in load(); the response's output tensors are the accuracy data.
 *
 * Accuracy data layout: the response's output tensors in the order the
 * response lists them, each as its raw little-endian values in its declared
 * datatype (JSON data converted to it; BOOL one byte; BYTES each element a
 * 4-byte little-endian length then its bytes), concatenated. For demo-cnn
 * that is the FP32 logits, the same 40 bytes the in-process demo logs.
 */
import { NetworkSetupError, SettingsError } from '../errors.js';
import type { NetworkProtocol, NodeProbe, PreparedRequest, ResponseHeaders, ResponseOutcome, ResponseReader } from './protocol.js';
import { demoTensorDataset, layoutKey, readTensorDataset, type SampleTensor, type TensorDataset } from './tensor-datasets.js';
import { createNetworkSut } from './transport.js';
import type { KServeSutOptions, NetworkSut } from './types.js';
import {
  concatBytes,
  elementCount,
  formatShape,
  headerLengthOf,
  isV2Datatype,
  jsonDataText,
  readWireTensors,
  splitBinaryBody,
  TensorFormatError,
  type V2Datatype,
} from './v2-tensors.js';

/** The bundled model: the only one with a built-in data set. */
export const DEMO_MODEL_NAME = 'demo-cnn';

/** An input or output of a model's v2 metadata. */
export interface KServeTensorMetadata {
  name: string;
  datatype: V2Datatype;
  /** -1: any size. */
  shape: number[];
}

/** What `GET /v2/models/NAME` says (the fields loadgen reads). */
export interface KServeModelMetadata {
  name: string;
  versions?: string[];
  platform?: string;
  inputs: KServeTensorMetadata[];
  outputs: KServeTensorMetadata[];
}

/** The name and shape each data set input is sent with, fixed by the first node's metadata. */
interface InputBinding {
  name: string;
  shape: readonly number[];
}

const MAX_LISTED_MODELS = 20;
/** The binary tensor extension's header: the length of the JSON before the binary data. */
const HEADER_LENGTH = 'inference-header-content-length';
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * The KServe v2 protocol for `createNetworkSut`: reads the data set (`dataset`,
 * or the demo data for model 'demo-cnn'), so a bad file fails before any node
 * is contacted.
 */
export async function createKServeProtocol(options: KServeSutOptions): Promise<NetworkProtocol> {
  if (options === null || typeof options !== 'object') throw new TypeError('createKServeProtocol: options must be an object');
  const model = options.model;
  if (typeof model !== 'string' || model.trim() === '' || /[\s/?#]/.test(model)) {
    throw new SettingsError('model', model, `model must be the served model's name (no spaces, '/', '?' or '#'), got ${JSON.stringify(model) ?? String(model)}`);
  }
  if (options.binaryTensors !== undefined && typeof options.binaryTensors !== 'boolean') {
    throw new SettingsError('binaryTensors', options.binaryTensors, `binaryTensors must be true or false, got ${String(options.binaryTensors)}`);
  }
  let dataset: TensorDataset;
  if (options.dataset === undefined) {
    if (model !== DEMO_MODEL_NAME) {
      throw new SettingsError('dataset', undefined, `model '${model}' needs a dataset (a .npy or .jsonl file of input tensors); only ${DEMO_MODEL_NAME} has built-in data`);
    }
    dataset = demoTensorDataset();
  } else {
    dataset = readTensorDataset(options.dataset);
  }
  const total = dataset.totalSampleCount;
  const performance = options.performanceSampleCount ?? total;
  if (!Number.isSafeInteger(performance) || performance < 1 || performance > total) {
    throw new SettingsError('performanceSampleCount', performance, `performanceSampleCount must be an integer in [1, ${total}] (the data set's samples), got ${String(performance)}`);
  }
  const protocol = new KServeProtocol(model, dataset, performance, options.binaryTensors === true);
  if (options.resolvedInputs !== undefined) protocol.useResolvedInputs(options.resolvedInputs);
  return protocol;
}

/**
 * `createNetworkSut(await createKServeProtocol(options), options)`, with the
 * probed input names and shapes added to the options the SUT keeps, for its
 * dispatch workers.
 */
export async function createKServeSut(options: KServeSutOptions): Promise<NetworkSut> {
  const protocol = (await createKServeProtocol(options)) as KServeProtocol;
  // The transport reads these options when a run starts (to re-create the
  // protocol in each dispatch worker), after the probes fixed the bindings.
  const sutOptions: KServeSutOptions = { ...options };
  const sut = await createNetworkSut(protocol, sutOptions);
  sutOptions.resolvedInputs = protocol.resolvedInputs();
  return sut;
}

class KServeProtocol implements NetworkProtocol {
  readonly kind = 'kserve';
  readonly streamsTokens = false;
  readonly totalSampleCount: number;
  /**
   * Binary outputs: where their JSON ends is a response header. Read in
   * either mode: a server may answer binary outputs though not asked.
   */
  readonly responseHeaders: readonly string[] = [HEADER_LENGTH];
  private readonly requests: (PreparedRequest | undefined)[];
  private readonly inferPath: string;
  private bindings: InputBinding[][] | undefined;
  /** The node whose metadata fixed the bindings (for a mismatch between nodes). */
  private boundBy = '';
  private bindingKey = '';
  /** Layout key -> index into the bindings (data sets of several layouts). */
  private layoutIndex: Map<string, number> | undefined;

  constructor(
    private readonly model: string,
    private readonly dataset: TensorDataset,
    readonly performanceSampleCount: number,
    private readonly binaryTensors: boolean,
  ) {
    this.totalSampleCount = dataset.totalSampleCount;
    this.requests = new Array<PreparedRequest | undefined>(this.totalSampleCount);
    this.inferPath = `/v2/models/${encodeURIComponent(model)}/infer`;
  }

  /** The bindings the probes fixed (undefined before any probe). */
  resolvedInputs(): InputBinding[][] | undefined {
    return this.bindings;
  }

  /** Takes bindings fixed elsewhere (a dispatch worker: the main thread probed). */
  useResolvedInputs(resolved: NonNullable<KServeSutOptions['resolvedInputs']>): void {
    const layouts = this.dataset.layoutSamples();
    const ok =
      Array.isArray(resolved) &&
      resolved.length === layouts.length &&
      resolved.every(
        (binding, l) =>
          Array.isArray(binding) &&
          binding.length === this.dataset.inputs(layouts[l]!).length &&
          binding.every((b) => typeof b?.name === 'string' && Array.isArray(b.shape) && b.shape.every((d: number) => Number.isSafeInteger(d) && d >= 0)),
      );
    if (!ok) throw new SettingsError('resolvedInputs', '<bindings>', 'resolvedInputs does not match the data set (set by createKServeSut; leave it unset)');
    this.bindings = resolved.map((binding) => binding.map((b: { name: string; shape: readonly number[] }) => ({ name: b.name, shape: [...b.shape] })));
    this.bindingKey = JSON.stringify(this.bindings);
    this.boundBy = 'the resolvedInputs option';
  }

  async probe(node: NodeProbe): Promise<string> {
    const model = this.model;
    const modelPath = `/v2/models/${encodeURIComponent(model)}`;
    const ready = await get(node, '/v2/health/ready');
    if (ready.status !== 200) {
      throw new NetworkSetupError(`KServe node ${node.origin} is not ready: GET /v2/health/ready answered ${ready.status}${errorText(ready.body)}`, { url: node.origin });
    }
    const metaResponse = await get(node, modelPath);
    if (metaResponse.status === 404) {
      const served = await listModels(node);
      throw new NetworkSetupError(
        `KServe node ${node.origin} has no model '${model}' (GET ${modelPath} answered 404${errorText(metaResponse.body)})` +
          (served !== undefined ? `; it serves: ${served.length > 0 ? served.join(', ') : 'no models'}` : ''),
        { url: node.origin },
      );
    }
    if (metaResponse.status !== 200) {
      throw new NetworkSetupError(`KServe node ${node.origin}: GET ${modelPath} answered ${metaResponse.status}${errorText(metaResponse.body)}`, { url: node.origin });
    }
    const metadata = parseModelMetadata(metaResponse.body, `KServe node ${node.origin}: GET ${modelPath}`);
    const modelReady = await get(node, `${modelPath}/ready`);
    if (modelReady.status !== 200) {
      throw new NetworkSetupError(`KServe node ${node.origin}: model '${model}' is not ready (GET ${modelPath}/ready answered ${modelReady.status}${errorText(modelReady.body)})`, { url: node.origin });
    }
    const bindings = bindInputs(metadata, this.dataset, `KServe node ${node.origin}`);
    const key = JSON.stringify(bindings);
    if (this.bindings === undefined) {
      this.bindings = bindings;
      this.bindingKey = key;
      this.boundBy = node.origin;
    } else if (key !== this.bindingKey) {
      throw new NetworkSetupError(
        `KServe nodes ${this.boundBy} and ${node.origin} describe model '${model}' differently (inputs ${describeInputs(metadata.inputs)} on ${node.origin}): every node must serve the same model`,
        { url: node.origin },
      );
    }
    const server = await get(node, '/v2');
    let serverName = 'KServe v2 server';
    if (server.status === 200) {
      const info = parseJson(server.body) as { name?: unknown; version?: unknown } | undefined;
      const name = typeof info?.name === 'string' && info.name !== '' ? info.name : undefined;
      const version = typeof info?.version === 'string' && info.version !== '' ? info.version : undefined;
      if (name !== undefined) serverName = version !== undefined ? `${name} ${version}` : name;
    }
    const version = metadata.versions?.length === 1 ? ` v${metadata.versions[0]}` : '';
    return `${serverName} (model ${model}${version})`;
  }

  load(indices: readonly number[]): void {
    const bindings = this.bindings;
    if (bindings === undefined) throw new NetworkSetupError('KServe protocol: load() before any node was probed (the model metadata decides input names and shapes)');
    for (const index of indices) {
      if (!Number.isSafeInteger(index) || index < 0 || index >= this.totalSampleCount) {
        throw new RangeError(`KServe protocol: sample index ${index} is outside [0, ${this.totalSampleCount})`);
      }
      if (this.requests[index] !== undefined) continue;
      const tensors = this.dataset.inputs(index);
      const binding = bindings[this.layoutOf(tensors)]!;
      this.requests[index] = this.binaryTensors ? this.binaryRequest(tensors, binding, index) : this.jsonRequest(tensors, binding, index);
    }
  }

  unload(indices: readonly number[]): void {
    for (const index of indices) {
      if (Number.isSafeInteger(index) && index >= 0 && index < this.totalSampleCount) this.requests[index] = undefined;
    }
  }

  request(index: number): PreparedRequest {
    const request = this.requests[index];
    if (request === undefined) throw new RangeError(`KServe protocol: sample ${index} is not loaded`);
    return request;
  }

  reader(index: number, wantData: boolean): ResponseReader {
    void index;
    return new InferResponseReader(wantData);
  }

  describe(): string {
    return `KServe v2 model ${this.model}, ${this.binaryTensors ? 'binary tensor data extension' : 'JSON tensors'}, inputs from ${this.dataset.description}`;
  }

  /** Index into the bindings of the layout `tensors` share (bindings follow dataset.layoutSamples()). */
  private layoutOf(tensors: readonly SampleTensor[]): number {
    const samples = this.dataset.layoutSamples();
    if (samples.length === 1) return 0;
    this.layoutIndex ??= new Map(samples.map((sample, i) => [layoutKey(this.dataset.inputs(sample)), i]));
    const index = this.layoutIndex.get(layoutKey(tensors));
    // The readers list every layout they hold: a miss is a bug, not bad input.
    if (index === undefined) throw new Error('KServe protocol: a sample whose input layout the data set did not list');
    return index;
  }

  private jsonRequest(tensors: readonly SampleTensor[], binding: readonly InputBinding[], index: number): PreparedRequest {
    const parts: string[] = [];
    for (let k = 0; k < tensors.length; k++) {
      const t = tensors[k]!;
      let data: string;
      try {
        data = jsonDataText(t.datatype, t.data);
      } catch (error) {
        throw new SettingsError('dataset', this.dataset.description, `${this.dataset.where(index)}: input '${binding[k]!.name}': ${(error as Error).message}`);
      }
      parts.push(`{"name":${JSON.stringify(binding[k]!.name)},"shape":${JSON.stringify(binding[k]!.shape)},"datatype":"${t.datatype}","data":${data}}`);
    }
    return {
      method: 'POST',
      path: this.inferPath,
      headers: { 'content-type': 'application/json' },
      body: utf8.encode(`{"inputs":[${parts.join(',')}]}`),
    };
  }

  private binaryRequest(tensors: readonly SampleTensor[], binding: readonly InputBinding[], index: number): PreparedRequest {
    void index;
    const header = {
      inputs: tensors.map((t, k) => ({
        name: binding[k]!.name,
        shape: binding[k]!.shape,
        datatype: t.datatype,
        parameters: { binary_data_size: t.data.length },
      })),
      // Ask for binary outputs too: the response is then raw bytes, no JSON numbers to parse.
      parameters: { binary_data_output: true },
    };
    const headerBytes = utf8.encode(JSON.stringify(header));
    return {
      method: 'POST',
      path: this.inferPath,
      headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(headerBytes.length) },
      body: concatBytes([headerBytes, ...tensors.map((t) => t.data)]),
    };
  }
}

/**
 * Reads one infer response: JSON or binary-extension outputs; an `error`
 * field or missing outputs is malformed. When the response has an
 * Inference-Header-Content-Length header (binary outputs, asked for or
 * not), it says where the JSON ends.
 */
class InferResponseReader implements ResponseReader {
  private readonly chunks: Uint8Array[] = [];
  private headerLength: string | string[] | undefined;

  constructor(private readonly wantData: boolean) {}

  onHeaders(headers: ResponseHeaders): void {
    this.headerLength = headers[HEADER_LENGTH];
  }

  onData(chunk: Uint8Array): undefined {
    this.chunks.push(chunk);
    return undefined;
  }

  onEnd(): ResponseOutcome {
    return readInferResponse(concatBytes(this.chunks.length === 0 ? [new Uint8Array(0)] : this.chunks), this.wantData, this.headerLength);
  }
}

/**
 * An infer response body to an outcome: the outputs' raw bytes (layout in the
 * module comment) when `wantData`. `headerLength` is the response's
 * Inference-Header-Content-Length as read (absent: the body is all JSON):
 * the JSON is exactly that many bytes, the outputs' binary data follows in
 * order, binary_data_size bytes each, and the sizes must add up to the rest
 * of the body exactly. Exported for tests and custom transports.
 */
export function readInferResponse(body: Uint8Array, wantData: boolean, headerLength?: string | readonly string[]): ResponseOutcome {
  const malformed = (message: string): ResponseOutcome => ({ ok: false, kind: 'malformed_response', message });
  let header: Uint8Array = body;
  let binary: Uint8Array = body.subarray(body.length);
  let length: number | undefined;
  try {
    length = headerLengthOf(headerLength);
    if (length !== undefined) ({ header, binary } = splitBinaryBody(body, length));
  } catch (error) {
    return malformed(`the infer response: ${(error as Error).message}`);
  }
  // Binary data is read by the header's length only: a size that does not add up names it.
  const framing = length === undefined ? ' (the response has no Inference-Header-Content-Length: all of its body is JSON)' : ` (Inference-Header-Content-Length ${length} of a ${body.length}-byte body)`;
  let message: unknown;
  try {
    message = JSON.parse(utf8Decoder.decode(header));
  } catch (error) {
    return malformed(`the infer response is not JSON (${(error as Error).message})`);
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return malformed('the infer response is not a JSON object');
  const fields = message as Record<string, unknown>;
  if (fields.error !== undefined) return malformed(`the server answered an error: ${clip(typeof fields.error === 'string' ? fields.error : JSON.stringify(fields.error))}`);
  let outputs;
  try {
    outputs = readWireTensors('outputs', fields, binary);
  } catch (error) {
    if (error instanceof TensorFormatError) return malformed(`the infer response: ${error.message}${/binary/.test(error.message) ? framing : ''}`);
    throw error;
  }
  if (!wantData) return { ok: true };
  return { ok: true, data: concatBytes(outputs.map((o) => o.data)) };
}

/** Checks `GET /v2/models/NAME`'s answer. */
export function parseModelMetadata(body: Uint8Array, what: string): KServeModelMetadata {
  const meta = parseJson(body) as Record<string, unknown> | undefined;
  if (meta === undefined || meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    throw new NetworkSetupError(`${what}: the model metadata is not a JSON object`);
  }
  const tensors = (field: 'inputs' | 'outputs'): KServeTensorMetadata[] => {
    const list = meta[field];
    if (!Array.isArray(list)) throw new NetworkSetupError(`${what}: the model metadata has no '${field}' array`);
    return list.map((t: unknown, k) => {
      const m = t as Record<string, unknown> | null;
      const ok =
        m !== null &&
        typeof m === 'object' &&
        typeof m.name === 'string' &&
        isV2Datatype(m.datatype) &&
        Array.isArray(m.shape) &&
        m.shape.every((d) => Number.isSafeInteger(d) && (d as number) >= -1);
      if (!ok) throw new NetworkSetupError(`${what}: ${field}[${k}] of the model metadata is not { name, datatype, shape }: ${clip(JSON.stringify(t))}`);
      return { name: m.name as string, datatype: m.datatype as V2Datatype, shape: m.shape as number[] };
    });
  };
  const inputs = tensors('inputs');
  const outputs = tensors('outputs');
  if (inputs.length === 0) throw new NetworkSetupError(`${what}: the model metadata lists no inputs`);
  return {
    name: typeof meta.name === 'string' ? meta.name : '',
    ...(Array.isArray(meta.versions) && meta.versions.every((v) => typeof v === 'string') ? { versions: meta.versions as string[] } : {}),
    ...(typeof meta.platform === 'string' ? { platform: meta.platform } : {}),
    inputs,
    outputs,
  };
}

/**
 * Matches the data set's inputs to the model's: each layout's names,
 * datatypes and shapes (-1 fits any size). A `.npy` input (no name) feeds the
 * model's only input; its samples get a batch dimension of 1 when the model's
 * input has one more dimension, or are reshaped when only the element count
 * agrees with the model's fixed dimensions.
 */
function bindInputs(metadata: KServeModelMetadata, dataset: TensorDataset, node: string): InputBinding[][] {
  return dataset.layoutSamples().map((index) => {
    const tensors = dataset.inputs(index);
    const where = dataset.where(index);
    const model = metadata.name !== '' ? metadata.name : 'the model';
    const fail = (text: string): NetworkSetupError =>
      new NetworkSetupError(`${node}: the data set does not fit ${model}: ${text} (model inputs: ${describeInputs(metadata.inputs)})`);
    const used = new Set<string>();
    const binding = tensors.map((t) => {
      let spec: KServeTensorMetadata | undefined;
      if (t.name === undefined) {
        if (metadata.inputs.length !== 1) throw fail(`${where} holds one unnamed tensor per sample, and the model has ${metadata.inputs.length} inputs; name them in a .jsonl data set`);
        spec = metadata.inputs[0]!;
      } else {
        spec = metadata.inputs.find((m) => m.name === t.name);
        if (spec === undefined) throw fail(`input '${t.name}' of ${where} is not an input of the model`);
      }
      used.add(spec.name);
      if (spec.datatype !== t.datatype) throw fail(`input '${spec.name}': the model expects ${spec.datatype}, ${where} has ${t.datatype}`);
      const shape = fitShape(spec.shape, t);
      if (shape === undefined) {
        const fixed = spec.shape.map((d) => (d === -1 ? 1 : d));
        throw fail(
          `input '${spec.name}': the model expects shape ${formatShape(spec.shape)} (${elementCount(fixed)} elements with -1 as 1), ` +
            `${where} has ${formatShape(t.shape)}${t.batchFree ? ' per sample' : ''} (${elementCount(t.shape)} elements)`,
        );
      }
      return { name: spec.name, shape };
    });
    const missing = metadata.inputs.filter((m) => !used.has(m.name));
    if (missing.length > 0) throw fail(`${where} has no input ${missing.map((m) => `'${m.name}' (${m.datatype} ${formatShape(m.shape)})`).join(', ')}`);
    return binding;
  });
}

/** The shape a tensor is sent with to fit `model` (-1 = any), or undefined. */
function fitShape(model: readonly number[], tensor: SampleTensor): number[] | undefined {
  const fits = (shape: readonly number[]): boolean => shape.length === model.length && shape.every((d, k) => model[k] === -1 || model[k] === d);
  const candidates: (readonly number[])[] = tensor.batchFree ? [[1, ...tensor.shape], tensor.shape] : [tensor.shape];
  for (const c of candidates) if (fits(c)) return [...c];
  if (tensor.batchFree && tensor.datatype !== 'BYTES') {
    // Row-major data reshapes for free: same elements in the same order.
    const reshaped = model.map((d) => (d === -1 ? 1 : d));
    if (elementCount(reshaped) === elementCount(tensor.shape)) return reshaped;
  }
  return undefined;
}

function describeInputs(inputs: readonly KServeTensorMetadata[]): string {
  return inputs.map((m) => `${m.name} ${m.datatype} ${formatShape(m.shape)}`).join(', ');
}

/** A probe request; a node that cannot be reached is a NetworkSetupError naming it. */
async function get(node: NodeProbe, path: string): Promise<{ status: number; body: Uint8Array }> {
  try {
    return await node.request('GET', path);
  } catch (error) {
    if (error instanceof NetworkSetupError) throw error;
    throw new NetworkSetupError(`KServe node ${node.origin} cannot be reached (GET ${path}): ${(error as Error)?.message ?? String(error)}`, { cause: error, url: node.origin });
  }
}

/** The models a node serves (the repository extension's index), or undefined when it does not say. */
async function listModels(node: NodeProbe): Promise<string[] | undefined> {
  try {
    const index = await node.request('POST', '/v2/repository/index', '{}');
    if (index.status !== 200) return undefined;
    const list = parseJson(index.body);
    if (!Array.isArray(list)) return undefined;
    const names = list.map((m: { name?: unknown }) => (typeof m?.name === 'string' ? m.name : undefined)).filter((n): n is string => n !== undefined);
    const unique = [...new Set(names)];
    return unique.length > MAX_LISTED_MODELS ? [...unique.slice(0, MAX_LISTED_MODELS), `… ${unique.length - MAX_LISTED_MODELS} more`] : unique;
  } catch {
    return undefined;
  }
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(utf8Decoder.decode(body));
  } catch {
    return undefined;
  }
}

/** ': <the error field>' of a v2 error body, or ''. */
function errorText(body: Uint8Array): string {
  const parsed = parseJson(body) as { error?: unknown } | undefined;
  return typeof parsed?.error === 'string' ? `: ${clip(parsed.error)}` : '';
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
