/**
 * One run on the JS thread: starts the native core and serves its events
 * (drain published queries, series start, QSL load/unload, flush, finish)
 * until the result is ready.
 */
import { deserialize } from 'node:v8';

import { DispatchWorkerPool, PollLoop } from '../dispatch/dispatch.js';
import { drainQueries, newDrainState, startDrainSeries, type DrainState } from '../dispatch/drain.js';
import { resetHandOver } from '../dispatch/handover.js';
import { usesIssueQueryIds } from '../dispatch/lent-query.js';
import { RunFailedError, SutError } from '../errors.js';
import { HostEventKind, type NativeAddon, type NativeHttpSut, type NativeOutcome, type NativeRunConfig } from '../native/index.js';
import type { ResolvedTestSettings } from '../types/settings.js';
import { setActiveSeries } from '../dispatch/active.js';
import { messageOf } from './checks.js';
import { serveQslCall } from './qsl-calls.js';
import { toTestResult } from './result.js';
import type { QuerySampleLibrary, SystemUnderTest, TestResult } from '../types/api.js';

/** One run: serves the native side's events on the JS thread. */
export class ActiveRun {
  private readonly queries: DrainState = newDrainState();
  private failure: { error: unknown; where: string } | undefined;
  private resolve!: (result: TestResult) => void;
  private reject!: (error: unknown) => void;

  constructor(
    private readonly native: NativeAddon,
    private readonly sut: SystemUnderTest,
    private readonly qsl: QuerySampleLibrary,
    private readonly settings: ResolvedTestSettings,
    private readonly config: NativeRunConfig,
    private readonly pool?: DispatchWorkerPool,
    private readonly signal?: AbortSignal,
    private readonly nativeSut?: NativeHttpSut,
  ) {
    // dispatch 'poll': drains in event-loop turns while a series issues
    // (not with a SUT inside the core: the issue thread hands it the queries).
    if (settings.dispatch === 'poll' && nativeSut === undefined) {
      this.poll = new PollLoop(native, (published) => {
        try {
          this.drain(published);
          return this.queries.returnedPromise;
        } catch (error) {
          this.fail(error, 'loadgen');
          return true;
        }
      });
    }
  }

  private readonly poll: PollLoop | undefined;

  run(): Promise<TestResult> {
    const promise = new Promise<TestResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.pool?.listen((error, index) => this.fail(error, `dispatch worker ${index}`));
    this.native.start(this.config, this.dispatch, this.nativeSut);
    // Listened to from the start to the end of the run only (finished()).
    if (this.signal?.aborted) this.interrupt();
    else this.signal?.addEventListener('abort', this.interrupt, { once: true });
    return promise;
  }

  private readonly interrupt = (): void => {
    this.native.interrupt(interruptReasonOf(this.signal?.reason));
  };

  // Must never throw: it runs inside the native threadsafe-function callback.
  private readonly dispatch = (kind: number, arg?: unknown, token?: number): void => {
    try {
      switch (kind) {
        case HostEventKind.Drain:
          this.drain(arg as number);
          break;
        case HostEventKind.SeriesStarted: {
          try {
            const info = this.native.seriesInfo();
            startDrainSeries(this.queries, info);
            setActiveSeries(info.firstId, info, info.tokenLatencies,
              usesIssueQueryIds(this.sut) ? this.lentIdsMisuse : undefined);
            resetHandOver(this.drainHandedOver);
            this.poll?.start();
          } finally {
            // A SUT inside the core (the native HTTP transport) issues once this thread knows the series (token given).
            if (token !== undefined) this.native.acknowledge(token);
          }
          break;
        }
        case HostEventKind.Load:
          serveQslCall(this.native, this.qsl, 'loadSamplesToRam', arg as Uint32Array, token!, this.recordFailure,
            this.settings.qslTimeoutMs, this.signal);
          break;
        case HostEventKind.Unload:
          serveQslCall(this.native, this.qsl, 'unloadSamplesFromRam', arg as Uint32Array, token!, this.recordFailure,
            this.settings.qslTimeoutMs, this.signal);
          break;
        case HostEventKind.Flush:
          this.poll?.stop(true);  // the last query is published: take it, then flush
          this.sut.flushQueries?.();
          break;
        case HostEventKind.Finished:
          this.finished();
          break;
      }
    } catch (error) {
      this.fail(error, kind === HostEventKind.Flush ? 'sut.flushQueries' : 'loadgen');
    }
  };

  private drain(published: number): void {
    if (this.failure !== undefined) return;
    drainQueries(this.native, this.sut, this.queries, published, this.issueFailed);
  }

  private readonly issueFailed = (error: unknown): void => {
    this.fail(error, usesIssueQueryIds(this.sut) ? 'sut.issueQueryIds' : 'sut.issueQuery');
  };

  // A completion call with an id of a lent array after its call (lib/dispatch/lent-query.ts).
  private readonly lentIdsMisuse = (error: Error): void => {
    this.fail(error, 'a completion call');
  };

  // Queries a completion call issued itself (lib/dispatch/handover.ts), outside a drain.
  private readonly drainHandedOver = (published: number): void => {
    try {
      this.drain(published);
    } catch (error) {
      this.fail(error, 'loadgen');
    }
  };

  private readonly recordFailure = (error: unknown, where: string): void => {
    this.failure ??= { error, where };
  };

  private fail(error: unknown, where: string): void {
    if (this.failure !== undefined) return;
    this.recordFailure(error, where);
    this.native.abort(`${where} threw: ${messageOf(error)}`);
  }

  private finished(): void {
    this.signal?.removeEventListener('abort', this.interrupt);
    this.poll?.stop(false);
    setActiveSeries(0, new Uint8Array(0));
    resetHandOver();
    let outcome: NativeOutcome;
    try {
      outcome = this.native.finish();
    } catch (error) {
      this.reject(error);
      return;
    }
    const result = toTestResult(outcome, this.settings, this.sut.name, this.qsl.name);
    // Started workers end (released) before the result: their errors count.
    if (this.pool !== undefined) void this.pool.close().then(() => this.settle(outcome, result));
    else this.settle(outcome, result);
  }

  private settle(outcome: NativeOutcome, result: TestResult): void {
    // What a worker's SUT threw (runDispatchWorker), serialized across threads.
    const stored = this.native.takeWorkerError();
    if (stored !== undefined && this.failure === undefined) {
      let error: unknown;
      try {
        error = deserialize(stored);
      } catch {
        error = new Error(outcome.abortReason);
      }
      this.recordFailure(error, 'sut.issueQuery in a dispatch worker');
    }
    if (this.failure !== undefined) {
      const { error, where } = this.failure;
      this.reject(new SutError(`the run was aborted because ${where} failed: ${messageOf(error)}`, error, result));
    } else if (outcome.aborted && !outcome.hasSummary && outcome.mode !== 'AccuracyOnly') {
      this.reject(new RunFailedError(`the run failed: ${outcome.abortReason}`));
    } else {
      this.resolve(result);
    }
  }
}

/** Longest interrupt reason written to the logs, in characters. */
const MAX_INTERRUPT_REASON_CHARS = 500;

/**
 * The reason the logs and the result give for a run stopped by an aborted
 * AbortSignal: `interrupted: <message>`, the message being the abort
 * reason's (an Error's message, else the reason as text), or the message
 * alone when it already begins with 'interrupted' (the CLI's
 * 'interrupted by SIGINT'). Control characters are escaped (a reason must
 * not forge a line of the summary) and it is cut to 500 characters.
 */
export function interruptReasonOf(reason: unknown): string {
  let message: string;
  try {
    message = String(reason instanceof Error ? reason.message : reason);
  } catch {
    message = 'the run was aborted';  // a reason that cannot be turned into text
  }
  message = message.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const chars = Array.from(message);
  if (chars.length > MAX_INTERRUPT_REASON_CHARS) message = `${chars.slice(0, MAX_INTERRUPT_REASON_CHARS).join('')}…`;
  return /^interrupted\b/.test(message) ? message : `interrupted: ${message}`;
}
