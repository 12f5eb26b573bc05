/**
 * The demo SUT: batches queries for onnxruntime (up to a maximum batch size,
 * or whatever has arrived once the oldest sample waited the maximum wait) and
 * runs each batch on an inference worker thread (worker.ts), then completes
 * the batch's samples with their logits as response data.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { querySamplesComplete } from '../api/completion.js';
import { InterfaceError } from '../errors.js';
import { packageRoot } from '../native/index.js';
import type { QuerySample, QuerySampleResponse, SystemUnderTest } from '../types/api.js';
import type { DemoQsl } from './dataset.js';
import {
  DEMO_MODEL_PATH,
  INPUT_CHANNELS,
  INPUT_NAME,
  INPUT_SIZE,
  NUM_CLASSES,
  OUTPUT_BYTES,
  OUTPUT_NAME,
  SAMPLE_ELEMENTS,
} from './model.js';
import type { WorkerConfig, WorkerReply, WorkerRequest } from './worker.js';

/** Execution providers the demo accepts (--ep). */
export const EXECUTION_PROVIDERS = ['cpu', 'cuda'] as const;
export type ExecutionProvider = (typeof EXECUTION_PROVIDERS)[number];

/** Options of {@link InferencePool.create}. */
export interface InferencePoolOptions {
  executionProvider?: ExecutionProvider;
  /** Worker threads, each with its own session. Default {@link defaultWorkerCount}. */
  workers?: number;
  /** onnxruntime intra-op threads per session. Default 1: for a model this small, more sessions beat more threads per session. */
  intraOpNumThreads?: number;
  /** Defaults to the shipped models/demo-cnn.onnx. */
  modelPath?: string;
}

const ORT_PACKAGE = 'onnxruntime-node';

/** One single-threaded session per core, up to 4 (measured best on 2 cores, where intra-op threads mostly spin). */
export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** The installed onnxruntime-node version, or an InterfaceError saying how to install it. */
export function onnxruntimeVersion(): string {
  const require = createRequire(import.meta.url);
  try {
    return (require(`${ORT_PACKAGE}/package.json`) as { version: string }).version;
  } catch {
    throw new InterfaceError(
      'the demo needs onnxruntime-node, an optional dependency of loadgen that is not installed ' +
        '(its install script fails without network access unless told to skip the CUDA download). Install it with: ' +
        'ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node',
    );
  }
}

/** dist/demo/worker.js beside this module, or the built one when running from the TypeScript sources. */
function workerScript(): string {
  const here = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(here)) return here;
  const built = resolve(packageRoot, 'dist', 'demo', 'worker.js');
  if (existsSync(built)) return built;
  throw new InterfaceError(`the demo's inference worker is missing (${here}); run \`npm run build:ts\``);
}

interface Slot {
  worker: Worker;
  inFlight: number;
}

interface Pending {
  resolve: (output: Float32Array) => void;
  reject: (error: Error) => void;
  slot: Slot;
}

/**
 * Inference worker threads, each holding an onnxruntime session of the demo
 * model. {@link run} sends a batch to the least busy worker.
 */
export class InferencePool {
  private readonly slots: Slot[];
  private readonly pending = new Map<number, Pending>();
  private readonly spareInputs: ArrayBuffer[] = [];
  private nextId = 1;
  private closed = false;
  private fatal: Error | undefined;

  private constructor(slots: Slot[]) {
    this.slots = slots;
    for (const slot of slots) {
      slot.worker.on('message', (reply: WorkerReply) => this.onReply(reply));
      slot.worker.on('error', (error) => this.onFatal(error));
      slot.worker.on('exit', (code) => {
        if (!this.closed) this.onFatal(new Error(`an inference worker exited (code ${code})`));
      });
    }
  }

  /**
   * Starts the workers and opens their sessions. Rejects with an
   * InterfaceError when onnxruntime-node is missing or the execution provider
   * cannot be used (e.g. CUDA on a machine without it).
   */
  static async create(options: InferencePoolOptions = {}): Promise<InferencePool> {
    onnxruntimeVersion();
    const ep = options.executionProvider ?? 'cpu';
    const count = options.workers ?? defaultWorkerCount();
    const config: WorkerConfig = {
      modelPath: options.modelPath ?? DEMO_MODEL_PATH,
      executionProvider: ep,
      intraOpNumThreads: options.intraOpNumThreads ?? 1,
      inputName: INPUT_NAME,
      outputName: OUTPUT_NAME,
      sampleShape: [INPUT_CHANNELS, INPUT_SIZE, INPUT_SIZE],
    };
    if (!existsSync(config.modelPath)) {
      throw new InterfaceError(`the demo model ${config.modelPath} is missing; regenerate it with node scripts/make-demo-model.mjs`);
    }
    const script = workerScript();
    const workers = Array.from({ length: count }, () => new Worker(script, { workerData: config, execArgv: [] }));
    const started = await Promise.allSettled(workers.map((worker) => waitReady(worker)));
    const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure !== undefined) {
      await Promise.all(workers.map((w) => w.terminate()));
      const reason = (failure.reason as Error).message;
      if (ep === 'cuda') {
        throw new InterfaceError(
          `CUDA execution provider not available: ${firstLine(reason)}; install onnxruntime-node with CUDA support ` +
            '(ONNXRUNTIME_NODE_INSTALL=cuda12) on a machine with an NVIDIA GPU, or use --ep cpu',
        );
      }
      throw new InterfaceError(`onnxruntime could not load the demo model with the ${ep} execution provider: ${reason}`);
    }
    return new InferencePool(workers.map((worker) => ({ worker, inFlight: 0 })));
  }

  /** Batches sent and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Number of workers. */
  get size(): number {
    return this.slots.length;
  }

  /** A buffer for a batch of up to `samples` samples (reused after a batch returns). */
  takeInputBuffer(samples: number): Float32Array {
    const bytes = samples * SAMPLE_ELEMENTS * 4;
    while (this.spareInputs.length > 0) {
      const buffer = this.spareInputs.pop()!;
      if (buffer.byteLength >= bytes) return new Float32Array(buffer);
    }
    return new Float32Array(samples * SAMPLE_ELEMENTS);
  }

  /**
   * Runs the first `batch` samples of `input` (whose buffer is transferred
   * to the worker and recycled) and resolves with batch × NUM_CLASSES logits.
   */
  run(input: Float32Array, batch: number): Promise<Float32Array> {
    if (this.fatal !== undefined) return Promise.reject(this.fatal);
    if (this.closed) return Promise.reject(new Error('the inference pool is closed'));
    let slot = this.slots[0]!;
    for (const s of this.slots) if (s.inFlight < slot.inFlight) slot = s;
    const id = this.nextId++;
    slot.inFlight++;
    return new Promise<Float32Array>((resolveRun, rejectRun) => {
      this.pending.set(id, { resolve: resolveRun, reject: rejectRun, slot });
      const request: WorkerRequest = { id, batch, input: input.buffer as ArrayBuffer };
      slot.worker.postMessage(request, [request.input]);
    });
  }

  /** Stops the workers; batches still running are rejected. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    for (const p of this.pending.values()) p.reject(new Error('the inference pool was closed'));
    this.pending.clear();
  }

  private onReply(reply: WorkerReply): void {
    const entry = this.pending.get(reply.id);
    if (entry === undefined) return;
    this.pending.delete(reply.id);
    entry.slot.inFlight--;
    this.spareInputs.push(reply.input);
    if (reply.type === 'result') entry.resolve(reply.output);
    else entry.reject(new Error(`onnxruntime failed on a batch: ${reply.message}`));
  }

  private onFatal(error: Error): void {
    this.fatal ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

function firstLine(text: string): string {
  // onnxruntime's messages carry ANSI colours and its log lines after the first.
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/\u001b\[[0-9;]*m/g, '');
  return clean.split('\n')[0]!.trim();
}

function waitReady(worker: Worker): Promise<void> {
  return new Promise<void>((resolveReady, rejectReady) => {
    const onMessage = (message: { type?: string; message?: string }): void => {
      cleanup();
      if (message.type === 'ready') resolveReady();
      else rejectReady(new Error(message.message ?? 'the inference worker failed to start'));
    };
    const onError = (error: Error): void => {
      cleanup();
      rejectReady(error);
    };
    const onExit = (code: number): void => {
      cleanup();
      rejectReady(new Error(`the inference worker exited during start-up (code ${code})`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/** Options of {@link createDemoSut}. */
export interface BatchingOptions {
  /** Most samples per onnxruntime run. Default 32. */
  maxBatchSize?: number;
  /** Longest a sample waits for its batch to fill, ms (0: run whatever is there). Default 2. */
  maxWaitMs?: number;
  /** Batches in flight per worker: one running, the next already queued there. Default 2. */
  depthPerWorker?: number;
}

/** The demo SUT plus what the demo reads from it afterwards. */
export interface DemoSut extends SystemUnderTest {
  /** The first inference failure of the run (its samples were completed without data). */
  readonly failure: Error | undefined;
  /** Batches run and samples in them since creation. */
  readonly stats: { batches: number; samples: number };
  /**
   * Since reset(): when the first query arrived and when each batch's
   * samples were completed (performance.now() ms, with the batch's sample
   * count), for the rate profile of an Offline run (lib/demo/rate.ts).
   */
  readonly timeline: DemoTimeline;
  /** Forgets the failure, statistics and timeline (between runs). */
  reset(): void;
}

/** When a run's samples arrived and were completed (performance.now() ms). */
export interface DemoTimeline {
  /** The first issueQuery since reset(); NaN before it. */
  firstIssueMs: number;
  /** Completed batches in completion order: their time and sample count. */
  completedAtMs: number[];
  completedSamples: number[];
}

export const DEFAULT_MAX_BATCH_SIZE = 32;
export const DEFAULT_MAX_WAIT_MS = 2;

/**
 * The batching SUT. issueQuery only queues samples; batches go to the pool
 * when full, when the oldest queued sample has waited `maxWaitMs`, or at
 * flushQueries — as long as fewer than workers × depth batches are in flight,
 * otherwise as soon as one returns.
 */
export function createDemoSut(pool: InferencePool, qsl: DemoQsl, options: BatchingOptions = {}): DemoSut {
  const maxBatch = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const capacity = pool.size * (options.depthPerWorker ?? 2);
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new InterfaceError(`max batch size must be an integer >= 1, got ${maxBatch}`);
  if (!Number.isFinite(maxWaitMs) || maxWaitMs < 0) throw new InterfaceError(`max wait must be a number of ms >= 0, got ${maxWaitMs}`);

  // A FIFO with a moving head: Offline queues every sample at once, and
  // shift() on a long array would be quadratic.
  let queue: QuerySample[] = [];
  let arrivals: number[] = [];
  let head = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing = false;
  let failure: Error | undefined;
  const stats = { batches: 0, samples: 0 };
  const timeline: DemoTimeline = { firstIssueMs: Number.NaN, completedAtMs: [], completedSamples: [] };

  const queued = (): number => queue.length - head;

  function pump(): void {
    while (queued() > 0 && pool.inFlight < capacity) {
      const n = queued();
      if (n < maxBatch && !flushing) {
        const waited = performance.now() - arrivals[head]!;
        if (waited < maxWaitMs) {
          armTimer(maxWaitMs - waited);
          return;
        }
      }
      dispatch(Math.min(n, maxBatch));
    }
    if (queued() === 0) {
      flushing = false;
      queue = [];
      arrivals = [];
      head = 0;
    } else if (head > 4096 && head * 2 > queue.length) {
      queue = queue.slice(head);
      arrivals = arrivals.slice(head);
      head = 0;
    }
  }

  function armTimer(ms: number): void {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      pump();
    }, Math.max(0, ms));
  }

  function dispatch(n: number): void {
    const samples = queue.slice(head, head + n);
    head += n;
    let input: Float32Array;
    try {
      input = pool.takeInputBuffer(maxBatch);
      for (let i = 0; i < n; i++) input.set(qsl.sampleData(samples[i]!.index), i * SAMPLE_ELEMENTS);
    } catch (error) {
      failure ??= error as Error;
      querySamplesComplete(samples);
      return;
    }
    stats.batches++;
    stats.samples += n;
    pool.run(input, n).then(
      (logits) => {
        const responses: QuerySampleResponse[] = new Array(n);
        for (let i = 0; i < n; i++) {
          responses[i] = { id: samples[i]!.id, data: new Uint8Array(logits.buffer, logits.byteOffset + i * OUTPUT_BYTES, OUTPUT_BYTES) };
        }
        timeline.completedAtMs.push(performance.now());
        timeline.completedSamples.push(n);
        querySamplesComplete(responses);
        pump();
      },
      (error: Error) => {
        // There is no way to abort a run from here: complete the samples
        // without data so it ends, and let the demo report the failure.
        failure ??= error;
        querySamplesComplete(samples);
        pump();
      },
    );
  }

  return {
    name: `demo-cnn-onnxruntime (batch<=${maxBatch}, wait<=${maxWaitMs}ms, ${pool.size} worker${pool.size === 1 ? '' : 's'})`,
    get failure(): Error | undefined {
      return failure;
    },
    get stats(): { batches: number; samples: number } {
      return stats;
    },
    timeline,
    reset(): void {
      failure = undefined;
      stats.batches = 0;
      stats.samples = 0;
      timeline.firstIssueMs = Number.NaN;
      timeline.completedAtMs = [];
      timeline.completedSamples = [];
    },
    issueQuery(samples: QuerySample[]): void {
      const now = performance.now();
      if (Number.isNaN(timeline.firstIssueMs)) timeline.firstIssueMs = now;
      for (const s of samples) {
        queue.push(s);
        arrivals.push(now);
      }
      pump();
    },
    flushQueries(): void {
      flushing = true;
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      pump();
    },
  };
}

/** Logits per sample in a response. */
export const RESPONSE_FLOATS = NUM_CLASSES;
