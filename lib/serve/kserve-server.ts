/**
 * A KServe v2 REST server (Open Inference Protocol) for the bundled demo
 * model on onnxruntime-node: `loadgen serve --model demo-cnn`. Health,
 * server and model metadata, readiness, the repository index and infer with
 * JSON or binary tensors (batch dimension N >= 1). Each request runs as one
 * batch on the demo's inference worker threads (lib/demo/sut.ts), so the
 * event loop only parses and answers.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';

import { SettingsError } from '../errors.js';
import { INPUT_CHANNELS, INPUT_NAME, INPUT_SIZE, NUM_CLASSES, OUTPUT_NAME, SAMPLE_ELEMENTS } from '../demo/model.js';
import { defaultWorkerCount, InferencePool } from '../demo/sut.js';
import { packageRoot } from '../native/index.js';
import { formatShape, readWireTensors, splitBinaryBody, TensorFormatError, jsonDataText } from '../net/v2-tensors.js';
import type { RunningServer, ServeAddress } from './server.js';

export interface KServeServerOptions extends ServeAddress {
  /** Only 'demo-cnn' (the bundled model). */
  model: string;
  /** onnxruntime worker threads (default: one per core, up to 4). */
  workers?: number;
}

/** Models this server can serve. */
export const SERVABLE_MODELS = ['demo-cnn'] as const;
/** Name in `GET /v2`. */
export const KSERVE_SERVER_NAME = 'loadgen-kserve';
/** The one version of the model. */
const MODEL_VERSION = '1';
/** Largest request body accepted (about 5000 samples as JSON). */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 8000;

const SAMPLE_SHAPE = [INPUT_CHANNELS, INPUT_SIZE, INPUT_SIZE];

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Checks a host/port pair (shared with `loadgen serve`). */
export function checkServeAddress(options: ServeAddress): { host: string; port: number } {
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const port = options.port ?? DEFAULT_SERVE_PORT;
  if (typeof host !== 'string' || host === '') throw new SettingsError('host', host, `host must be an address to listen on (e.g. 127.0.0.1), got ${String(host)}`);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SettingsError('port', port, `port must be an integer in [0, 65535] (0: any free port), got ${String(port)}`);
  }
  return { host, port };
}

/** 'http://127.0.0.1:8000', brackets around an IPv6 address. */
export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A KServe v2 REST server for the bundled model on onnxruntime-node (`loadgen serve --model demo-cnn`). */
export async function startKServeServer(options: KServeServerOptions): Promise<RunningServer> {
  if (options === null || typeof options !== 'object') throw new TypeError('startKServeServer: options must be an object');
  if (!(SERVABLE_MODELS as readonly string[]).includes(options.model)) {
    throw new SettingsError('model', options.model, `model '${String(options.model)}' cannot be served: only ${SERVABLE_MODELS.join(', ')} is bundled`);
  }
  const { host, port } = checkServeAddress(options);
  const workers = options.workers ?? defaultWorkerCount();
  if (!Number.isInteger(workers) || workers < 1) throw new SettingsError('workers', workers, `workers must be an integer >= 1, got ${String(workers)}`);
  const pool = await InferencePool.create({ workers });
  const model = options.model;
  const version = (JSON.parse(readFileSync(resolve(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      sendJson(res, status, { error: (error as Error)?.message ?? String(error) });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const parts = path.split('/').slice(1).map(decodePart);
    if (parts[0] !== 'v2') throw new HttpError(404, `not found: ${clip(path)} (this is a KServe v2 server: try GET /v2)`);
    const method = req.method ?? 'GET';
    const expect = (allowed: 'GET' | 'POST'): void => {
      if (method !== allowed) {
        res.setHeader('allow', allowed);
        throw new HttpError(405, `${method} ${clip(path)}: use ${allowed}`);
      }
    };
    if (parts.length === 1) {
      expect('GET');
      return sendJson(res, 200, { name: KSERVE_SERVER_NAME, version, extensions: ['binary_tensor_data', 'model_repository'] });
    }
    if (parts[1] === 'health' && parts.length === 3 && (parts[2] === 'live' || parts[2] === 'ready')) {
      expect('GET');
      return sendJson(res, 200, parts[2] === 'live' ? { live: true } : { ready: true });
    }
    if (parts[1] === 'repository' && parts[2] === 'index' && parts.length === 3) {
      expect('POST');
      await readBody(req);
      return sendJson(res, 200, [{ name: model, version: MODEL_VERSION, state: 'READY' }]);
    }
    if (parts[1] === 'models' && parts.length >= 3) {
      const name = parts[2]!;
      let rest = parts.slice(3);
      if (name !== model) throw new HttpError(404, `unknown model '${clip(name)}': this server serves ${model}`);
      if (rest[0] === 'versions') {
        if (rest[1] !== MODEL_VERSION) throw new HttpError(404, `model ${model} has no version '${clip(rest[1] ?? '')}' (versions: ${MODEL_VERSION})`);
        rest = rest.slice(2);
      }
      if (rest.length === 0) {
        expect('GET');
        return sendJson(res, 200, {
          name: model,
          versions: [MODEL_VERSION],
          platform: 'onnxruntime_onnx',
          inputs: [{ name: INPUT_NAME, datatype: 'FP32', shape: [-1, ...SAMPLE_SHAPE] }],
          outputs: [{ name: OUTPUT_NAME, datatype: 'FP32', shape: [-1, NUM_CLASSES] }],
        });
      }
      if (rest.length === 1 && rest[0] === 'ready') {
        expect('GET');
        return sendJson(res, 200, { name: model, ready: true });
      }
      if (rest.length === 1 && rest[0] === 'infer') {
        expect('POST');
        return infer(req, res);
      }
    }
    throw new HttpError(404, `not found: ${clip(path)}`);
  }

  async function infer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const headerLengthText = req.headers['inference-header-content-length'];
    let headerLength: number | undefined;
    if (headerLengthText !== undefined) {
      headerLength = Number(headerLengthText);
      if (!Number.isSafeInteger(headerLength) || headerLength < 0) {
        throw new HttpError(400, `Inference-Header-Content-Length must be an integer >= 0, got '${clip(String(headerLengthText))}'`);
      }
    }
    let request: Record<string, unknown>;
    let inputs;
    try {
      // Without Inference-Header-Content-Length the whole body is JSON.
      const { header, binary } = headerLength === undefined ? { header: body, binary: body.subarray(body.length) } : splitBinaryBody(body, headerLength);
      const parsed: unknown = JSON.parse(new TextDecoder().decode(header));
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TensorFormatError('the request is not a JSON object');
      request = parsed as Record<string, unknown>;
      inputs = readWireTensors('inputs', request, binary);
    } catch (error) {
      if (error instanceof SyntaxError) throw new HttpError(400, `the request is not JSON: ${error.message}`);
      if (error instanceof TensorFormatError) throw new HttpError(400, error.message);
      throw error;
    }
    if (inputs.length !== 1 || inputs[0]!.name !== INPUT_NAME) {
      throw new HttpError(400, `model ${model} takes one input '${INPUT_NAME}' (FP32 [-1,${SAMPLE_SHAPE.join(',')}]), got ${inputs.map((t) => `'${clip(t.name)}'`).join(', ')}`);
    }
    const input = inputs[0]!;
    if (input.datatype !== 'FP32') throw new HttpError(400, `input '${INPUT_NAME}' must be FP32, got ${input.datatype}`);
    const shape = input.shape;
    const batch = shape[0] ?? 0;
    if (shape.length !== 4 || batch < 1 || shape[1] !== SAMPLE_SHAPE[0] || shape[2] !== SAMPLE_SHAPE[1] || shape[3] !== SAMPLE_SHAPE[2]) {
      throw new HttpError(400, `input '${INPUT_NAME}' must have shape [N,${SAMPLE_SHAPE.join(',')}] with N >= 1, got ${formatShape(shape)}`);
    }
    const binaryOutput = wantsBinaryOutput(request);
    const buffer = pool.takeInputBuffer(batch);
    buffer.set(new Float32Array(input.data.buffer.slice(input.data.byteOffset, input.data.byteOffset + batch * SAMPLE_ELEMENTS * 4)));
    const logits = await pool.run(buffer, batch);
    const bytes = new Uint8Array(logits.buffer, logits.byteOffset, batch * NUM_CLASSES * 4);
    const output: Record<string, unknown> = { name: OUTPUT_NAME, datatype: 'FP32', shape: [batch, NUM_CLASSES] };
    const answer: Record<string, unknown> = { model_name: model, model_version: MODEL_VERSION };
    if (typeof request.id === 'string') answer.id = request.id;
    answer.outputs = [output];
    if (binaryOutput) {
      output.parameters = { binary_data_size: bytes.length };
      const header = Buffer.from(JSON.stringify(answer));
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': String(header.length),
        'content-length': String(header.length + bytes.length),
      });
      res.end(Buffer.concat([header, bytes]));
      return;
    }
    // The data text is spliced in: JSON.stringify would print each float32 with 17 digits.
    const text = JSON.stringify(answer).replace(/\}\]\}$/, `,"data":${jsonDataText('FP32', bytes)}}]}`);
    sendText(res, 200, text);
  }

  /** Whether the client asked for binary outputs (request-level `binary_data_output`, or per requested output). */
  function wantsBinaryOutput(request: Record<string, unknown>): boolean {
    const params = request.parameters as Record<string, unknown> | undefined;
    let binary = params !== null && typeof params === 'object' && params.binary_data_output === true;
    const outputs = request.outputs;
    if (outputs === undefined) return binary;
    if (!Array.isArray(outputs)) throw new HttpError(400, 'outputs must be an array of { name, parameters? }');
    for (const o of outputs as unknown[]) {
      const out = o as { name?: unknown; parameters?: { binary_data?: unknown } } | null;
      if (out === null || typeof out !== 'object' || out.name !== OUTPUT_NAME) {
        throw new HttpError(400, `model ${model} has one output '${OUTPUT_NAME}', the request asks for ${clip(JSON.stringify(out?.name ?? out))}`);
      }
      if (out.parameters?.binary_data === true) binary = true;
      if (out.parameters?.binary_data === false) binary = false;
    }
    return binary;
  }

  try {
    await new Promise<void>((resolveListen, rejectListen) => {
      server.once('error', rejectListen);
      server.listen(port, host, () => {
        server.off('error', rejectListen);
        resolveListen();
      });
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: serverUrl(host, bound),
    port: bound,
    close(): Promise<void> {
      closing ??= (async () => {
        await new Promise<void>((resolveClose) => {
          server.close(() => resolveClose());
          server.closeAllConnections();
        });
        await pool.close();
      })();
      return closing;
    },
  };
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function readBody(req: IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolveBody, rejectBody) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_REQUEST_BYTES) {
      req.resume();
      rejectBody(new HttpError(413, `the request body has ${declared} bytes; at most ${MAX_REQUEST_BYTES} are accepted`));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > MAX_REQUEST_BYTES) {
        req.destroy();
        rejectBody(new HttpError(413, `the request body exceeds ${MAX_REQUEST_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolveBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', rejectBody);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendText(res, status, JSON.stringify(value));
}

function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = Buffer.from(text);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length) });
  res.end(body);
}

function clip(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
