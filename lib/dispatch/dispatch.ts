/**
 * Dispatch modes other than `wake` (docs/overhead-and-benchmarks.md, "Dispatch modes"):
 *
 * - `poll`: while a series runs, the thread that started the test polls the
 *   published-query count in a setImmediate loop and drains it. No wake-up
 *   costs; the event loop keeps turning (timers and I/O of the SUT work); the
 *   thread stays busy.
 * - `worker`: SUTs run in worker threads that take queries straight from the
 *   native core ({@link runDispatchWorker}); the main thread only starts the
 *   run and receives the result.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serialize } from 'node:v8';
import { threadId, Worker } from 'node:worker_threads';

import { setActiveSeries } from './active.js';
import { checkIssueMethods } from './sut-checks.js';
import { InterfaceError } from '../errors.js';
import { watchRejection } from './drain.js';
import { issueLent, lendable, newLentQuery, usesIssueQueryIds } from './lent-query.js';
import { coverSamples, newSampleIndexWindow, resetSampleIndexWindow } from './sample-indices.js';
import {
  DispatchStatus,
  IssueThreadEventKind,
  loadNative,
  packageRoot,
  type NativeAddon,
  type NativeSeriesInfo,
} from '../native/index.js';
import type { QuerySample, SystemUnderTest } from '../types/api.js';

/**
 * `poll`: a turn of the event loop takes queries for as long as they keep
 * coming, up to {@link POLL_SLICE_MS}, then lets the loop turn (timers, I/O,
 * an async SUT's completions). At high rates a turn per query cost more
 * than the query: an Immediate allocated (~190 B of garbage per query,
 * scavenges every ~40 ms at 800k QPS) and an epoll_wait per turn.
 */
export class PollLoop {
  private immediate: NodeJS.Immediate | undefined;
  /** The published count the last turn drained up to. */
  private seen = 0;

  /**
   * `drain` drains the queries below `published` and returns whether an
   * issue call returned a promise: the turn ends there, so that microtasks
   * (where such a SUT may complete) run before the next queries.
   */
  constructor(
    private readonly native: NativeAddon,
    private readonly drain: (published: number) => boolean,
  ) {}

  start(): void {
    this.seen = 0;
    if (this.immediate === undefined) this.immediate = setImmediate(this.tick);
  }

  /** Drains what is published now, then stops (end of the series). */
  stop(finalDrain: boolean): void {
    if (this.immediate === undefined) return;
    clearImmediate(this.immediate);
    this.immediate = undefined;
    if (finalDrain) this.drain(this.native.publishedQueries());
  }

  private readonly tick = (): void => {
    this.immediate = setImmediate(this.tick);  // first: a throwing drain must not end the loop silently
    const immediate = this.immediate;
    let sliceEnd = 0;
    for (;;) {
      // Spins in native code when a Server query is about to be due (and
      // issues it at its due time if the issue thread is late): the turn
      // that takes it is already running when it is published.
      const before = this.seen;
      this.seen = this.native.pollPublished(before);
      if (this.seen === before) return;  // none due within the spin window
      if (this.drain(this.seen) || this.immediate !== immediate) return;  // a promise, or stop()ped (and maybe restarted)
      const now = performance.now();
      if (sliceEnd === 0) sliceEnd = now + POLL_SLICE_MS;
      else if (now >= sliceEnd) return;
    }
  };
}

/** How long one event-loop turn of `poll` keeps taking queries (the pollPublished spin is up to ~100 us too). */
export const POLL_SLICE_MS = 0.1;

/** What {@link runDispatchWorker} needs of a SUT: issueQuery or issueQueryIds (preferred when both). */
export type WorkerSut = Pick<SystemUnderTest, 'issueQuery' | 'issueQueryIds' | 'flushQueries'>;

/** What a {@link runDispatchWorker} SUT module exports (`startTest`'s `sutModule` option). */
export interface DispatchWorkerContext {
  /** 0-based index of this worker among the run's workers. */
  workerIndex: number;
  /** How many workers the run started (`dispatchWorkers`). */
  workerCount: number;
  /** startTest's `sutOptions`, structured-cloned into this worker (absent when none were given). */
  options?: unknown;
}

/**
 * A SUT that knows how to run in dispatch workers (the network SUTs): with
 * `dispatch: 'worker'` and no `sutModule`, startTest starts `module` with
 * the options `options(workerCount)` returns (structured-cloned).
 */
export const DISPATCH_WORKER_PLAN = Symbol.for('loadgen.dispatchWorkerPlan');

export interface DispatchWorkerPlan {
  module: string;
  options(workerCount: number): unknown;
}

/** The plan of a SUT that has one. */
export function dispatchWorkerPlanOf(sut: unknown): DispatchWorkerPlan | undefined {
  if (typeof sut !== 'object' || sut === null) return undefined;
  const plan = (sut as { [DISPATCH_WORKER_PLAN]?: unknown })[DISPATCH_WORKER_PLAN];
  return typeof plan === 'object' && plan !== null ? (plan as DispatchWorkerPlan) : undefined;
}

/**
 * Serves loadgen runs from this (worker) thread with `dispatch: 'worker'`:
 * creates the SUT, registers, and calls `sut.issueQueryIds` (else
 * `sut.issueQuery`) here with queries taken straight from the native core. Completions are the usual
 * synchronous calls (querySamplesComplete etc.) made from this thread.
 * `sut.flushQueries` is called once per series after its last query was
 * taken. A throw (or rejected promise) from the SUT aborts the run;
 * startTest rejects with it as the cause. Resolves when the run that used
 * this worker is over (registrations are released when any run ends).
 */
export async function runDispatchWorker(
  createSut: () => WorkerSut | Promise<WorkerSut>,
  options: { onRegistered?: () => void } = {},
): Promise<void> {
  if (typeof createSut !== 'function') throw new InterfaceError('runDispatchWorker(createSut) expects a function returning a SUT');
  const sut = await createSut();
  checkIssueMethods(sut, 'runDispatchWorker: createSut() must return an object with an issueQuery or issueQueryIds function');
  const byIds = usesIssueQueryIds(sut);
  const lentQuery = newLentQuery();
  const sampleIndex = newSampleIndexWindow();
  const native = loadNative();
  const out = new Float64Array(3);
  let info: NativeSeriesInfo | undefined;
  let flushed = 0;  // first id of the last series flushed here
  let stopped = false;
  let resolveReleased!: () => void;
  const released = new Promise<void>((resolve) => {
    resolveReleased = resolve;
  });

  const fail = (error: unknown): void => {
    if (stopped) return;
    stopped = true;
    let bytes: Uint8Array | undefined;
    try {
      bytes = serialize(error);
    } catch {
      bytes = serialize(new Error(String(error)));
    }
    const message = error instanceof Error ? error.message : String(error);
    native.abortWithError(`sut.issueQuery threw in dispatch worker thread ${threadId}: ${message}`, bytes);
  };

  const issue = (firstId: number, first: number, count: number): void => {
    if (info === undefined || info.firstId !== firstId) {
      info = native.seriesInfo();
      setActiveSeries(info.firstId, info, info.tokenLatencies, byIds ? fail : undefined);
      resetSampleIndexWindow(sampleIndex, info.firstId, info.sampleCount);
      if (info.firstId !== firstId) return;  // claimed from a series that already ended
    }
    if (!coverSamples(native, sampleIndex, first, first + count)) return;  // that series ended meanwhile
    const { indices: index, start } = sampleIndex;
    let returned: unknown;
    try {
      if (byIds) {
        const lent = lendable(lentQuery, count);
        const { ids, indices } = lent;
        for (let i = 0; i < count; i++) ids[i] = firstId + first + i;
        if (count > 64) indices.set(index.subarray(first - start, first - start + count));
        else for (let i = 0; i < count; i++) indices[i] = index[first - start + i]!;
        returned = issueLent(sut, lent, count);
      } else {
        const samples: QuerySample[] = new Array(count);
        for (let i = 0; i < count; i++) samples[i] = { id: firstId + first + i, index: index[first - start + i]! };
        returned = sut.issueQuery!(samples);
      }
    } catch (error) {
      fail(error);
      return;
    }
    watchRejection(returned, fail);
  };

  // Takes work until none is left (at most a budget, so this thread's event
  // loop turns: an async SUT completes there), then yields. dispatchNext
  // blocks briefly in native code when nothing is published.
  const turn = (): void => {
    if (stopped) return;
    for (let i = 0; i < 256; i++) {
      const status = native.dispatchNext(out, flushed);
      if (status === DispatchStatus.Claimed) {
        issue(out[0]!, out[1]!, out[2]!);
        if (stopped) return;
      } else if (status === DispatchStatus.SeriesEnded) {
        flushed = out[0]!;
        try {
          sut.flushQueries?.();
        } catch (error) {
          fail(error);
          return;
        }
      } else if (status === DispatchStatus.Over) {
        setTimeout(turn, 1);  // Released follows
        return;
      } else {
        break;
      }
    }
    setImmediate(turn);
  };

  native.registerDispatchWorker((kind: number) => {
    if (kind !== IssueThreadEventKind.Released) return;
    stopped = true;
    setActiveSeries(0, new Uint8Array(0));
    resolveReleased();
  }, threadId);
  options.onRegistered?.();
  setImmediate(turn);
  await released;
}

/** Worker threads startTest started for `dispatch: 'worker'` with a `sutModule`. */
export class DispatchWorkerPool {
  private readonly workers: Worker[] = [];
  private readonly exits: Promise<void>[] = [];
  private onError: ((error: unknown, index: number) => void) | undefined;
  private failedEarly: { error: unknown; index: number } | undefined;
  /** From terminate(): the pool ends its workers itself. */
  private terminating = false;

  /** Starts `count` workers importing `sutModule` (`options`: each createSut's context.options); resolves once all registered. */
  static async start(sutModule: string, count: number, options?: unknown): Promise<DispatchWorkerPool> {
    const pool = new DispatchWorkerPool();
    // The compiled entry (also when this module runs from the TypeScript sources).
    const entry = pathToFileURL(resolve(packageRoot, 'dist', 'dispatch', 'worker-entry.js'));
    const ready: Promise<void>[] = [];
    for (let index = 0; index < count; index++) {
      const worker = new Worker(entry, {
        workerData: { sutModule, workerIndex: index, workerCount: count, ...(options !== undefined ? { options } : {}) },
      });
      pool.workers.push(worker);
      ready.push(
        new Promise<void>((resolve, reject) => {
          worker.once('message', () => resolve());  // the first message: registered
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new InterfaceError(`dispatch worker ${index} exited (code ${code}) before it registered`)));
        }),
      );
      worker.on('error', (error) => pool.report(error, index));
      // A worker serves until the run releases it (worker-entry.ts then says
      // so; Node delivers a worker's messages before its 'exit'). Ending before
      // (process.exit in the SUT, a terminate()) leaves its claimed samples
      // outstanding: the core aborts the run when its thread goes, and this
      // names the worker. An 'error' was reported already.
      let released = false;
      let failed = false;
      worker.on('message', (message: { kind?: string }) => {
        if (message?.kind === 'released') released = true;
      });
      worker.once('error', () => {
        failed = true;
      });
      const threadId = worker.threadId;
      pool.exits.push(
        new Promise<void>((resolve) =>
          worker.once('exit', (code) => {
            if (!released && !failed && !pool.terminating)
              pool.report(new InterfaceError(`dispatch worker ${index} (thread ${threadId}) exited (code ${code}) during the run`), index);
            resolve();
          }),
        ),
      );
    }
    try {
      await Promise.all(ready);
    } catch (error) {
      await pool.terminate();
      throw error;
    }
    return pool;
  }

  /**
   * Errors a worker raises from now on (uncaught in the worker: it has
   * ended), and a worker's exit before the run released it.
   */
  listen(onError: (error: unknown, index: number) => void): void {
    this.onError = onError;
    if (this.failedEarly !== undefined) onError(this.failedEarly.error, this.failedEarly.index);
  }

  private report(error: unknown, index: number): void {
    if (this.onError !== undefined) this.onError(error, index);
    else this.failedEarly ??= { error, index };
  }

  /** After the run: waits for the workers to end (released), terminating stragglers. */
  async close(graceMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(this.exits), timeout]);
    clearTimeout(timer);
    await this.terminate();
  }

  async terminate(): Promise<void> {
    this.terminating = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
