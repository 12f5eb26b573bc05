/**
 * An inference worker thread: owns one onnxruntime InferenceSession and runs
 * the batches the main thread posts. onnxruntime-node's `session.run` computes
 * on the calling JS thread (its promise only defers the call), so the demo
 * runs it here to keep loadgen's thread free to issue and complete queries.
 *
 * Protocol: workerData is {@link WorkerConfig}; the worker posts
 * `{ type: 'ready' }` or `{ type: 'error', message }` once, then answers each
 * {@link WorkerRequest} with a {@link WorkerReply} (buffers are transferred).
 */
import { parentPort, workerData } from 'node:worker_threads';

/** What the worker needs to open its session. */
export interface WorkerConfig {
  modelPath: string;
  executionProvider: string;
  intraOpNumThreads: number;
  inputName: string;
  outputName: string;
  /** Shape of one sample, after the batch dimension. */
  sampleShape: number[];
}

/** One batch: `batch` samples at the start of `input` (a transferred buffer). */
export interface WorkerRequest {
  id: number;
  batch: number;
  input: ArrayBuffer;
}

/** The batch's logits, and the input buffer handed back for reuse. */
export type WorkerReply =
  | { type: 'result'; id: number; output: Float32Array; input: ArrayBuffer }
  | { type: 'failed'; id: number; message: string; input: ArrayBuffer };

/** The part of onnxruntime-node's API the worker uses (typed here: the package is optional). */
interface OrtTensor {
  readonly data: unknown;
}
interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
}
interface OrtModule {
  env: { logLevel?: string };
  Tensor: new (type: 'float32', data: Float32Array, dims: number[]) => OrtTensor;
  InferenceSession: {
    create(path: string, options: Record<string, unknown>): Promise<OrtSession>;
  };
}

// In a variable so TypeScript does not need the optional package's types to build.
const ORT_PACKAGE = 'onnxruntime-node';

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('lib/demo/worker.js must run as a worker thread');
  const config = workerData as WorkerConfig;
  let ort: OrtModule;
  let session: OrtSession;
  try {
    const mod = (await import(ORT_PACKAGE)) as { default?: OrtModule } & OrtModule;
    ort = mod.default ?? mod;
    // Failures are reported through the rejected promise; onnxruntime's own
    // log lines on stderr would only repeat them.
    ort.env.logLevel = 'fatal';
    session = await ort.InferenceSession.create(config.modelPath, {
      executionProviders: [config.executionProvider],
      intraOpNumThreads: config.intraOpNumThreads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      logSeverityLevel: 4,
    });
  } catch (cause) {
    port.postMessage({ type: 'error', message: (cause as Error)?.message ?? String(cause) });
    return;
  }
  const sampleElements = config.sampleShape.reduce((a, b) => a * b, 1);
  port.on('message', (request: WorkerRequest) => {
    const input = new Float32Array(request.input, 0, request.batch * sampleElements);
    const tensor = new ort.Tensor('float32', input, [request.batch, ...config.sampleShape]);
    session.run({ [config.inputName]: tensor }).then(
      (outputs) => {
        // A copy: the result may live in memory onnxruntime owns, which cannot be transferred.
        const output = Float32Array.from(outputs[config.outputName]!.data as Float32Array);
        const reply: WorkerReply = { type: 'result', id: request.id, output, input: request.input };
        port.postMessage(reply, [output.buffer, request.input]);
      },
      (cause: unknown) => {
        const reply: WorkerReply = { type: 'failed', id: request.id, message: (cause as Error)?.message ?? String(cause), input: request.input };
        port.postMessage(reply, [request.input]);
      },
    );
  });
  port.postMessage({ type: 'ready' });
}

void main();
