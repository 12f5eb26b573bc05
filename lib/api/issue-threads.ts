/**
 * Registered issue-query threads (the reference's RegisterIssueQueryThread,
 * spec/30 §6). With server_num_issue_query_threads = n > 0, each series of a
 * run waits up to 10 s for n registrations; in the Server scenario thread i
 * then receives queries i, i + n, i + 2n, ... on its own event loop and its
 * SUT's issueQuery is called there. Completions may be reported from any
 * thread. Registrations are released when the run ends (as the reference
 * releases its registered threads at the end of StartTest).
 */
import { threadId } from 'node:worker_threads';

import { setActiveSeries } from '../dispatch/active.js';
import { drainQueries, newDrainState, startDrainSeries } from '../dispatch/drain.js';
import { checkIssueMethods } from './checks.js';
import { usesIssueQueryIds } from '../dispatch/lent-query.js';
import { IssueThreadEventKind, loadNative } from '../native/index.js';
import type { SystemUnderTest } from '../types/api.js';

export interface IssueQueryThreadRegistration {
  /** Registration order across the process (the reference's thread index). */
  readonly index: number;
  /**
   * Resolves when the registration ends: the run that used it finished (or
   * any run ended), or unregister() was called. Until then the registration
   * keeps this thread's event loop alive.
   */
  readonly released: Promise<void>;
  /** Withdraws the registration (aborts a run that is sending it queries). */
  unregister(): void;
}

/**
 * Joins the current or next loadgen run as an issue-query thread. Call it
 * from each worker thread (or the main thread) that should receive queries;
 * `sut.issueQueryIds` (else `sut.issueQuery`) is called on this thread. Outside the Server scenario the
 * registration is accepted and ignored (the run still waits for it).
 */
export function registerIssueQueryThread(sut: Pick<SystemUnderTest, 'issueQuery' | 'issueQueryIds'>): IssueQueryThreadRegistration {
  checkIssueMethods(sut, 'registerIssueQueryThread(sut) expects an object with an issueQuery or issueQueryIds function');
  const byIds = usesIssueQueryIds(sut);
  const native = loadNative();
  const state = newDrainState();
  let live = false;  // a series of the active run is assigned to this thread
  let resolveReleased!: () => void;
  const released = new Promise<void>((resolve) => {
    resolveReleased = resolve;
  });
  const onError = (error: unknown): void => {
    live = false;
    native.abort(`sut.issueQuery threw on issue-query thread ${threadId}: ${error instanceof Error ? error.message : String(error)}`);
  };
  // Must never throw: it runs inside the native threadsafe-function callback.
  const dispatch = (kind: number, published = 0, firstId = 0, index = 0, stride = 1): void => {
    try {
      switch (kind) {
        case IssueThreadEventKind.SeriesStarted: {
          const info = native.seriesInfo();
          startDrainSeries(state, info, index, stride);
          setActiveSeries(info.firstId, info, info.tokenLatencies, byIds ? onError : undefined);
          live = true;
          // Queries published before this event (whose drain may have been
          // taken by a stale event of the previous series) go out now.
          if (firstId === state.firstId) drainQueries(native, sut, state, published, onError);
          break;
        }
        case IssueThreadEventKind.Drain:
          // A drain left over from an earlier series is ignored; the series'
          // own start event drains what it missed.
          if (live && firstId === state.firstId) drainQueries(native, sut, state, published, onError);
          break;
        case IssueThreadEventKind.Released:
          live = false;
          if (!native.isRunning()) setActiveSeries(0, new Uint8Array(0));
          resolveReleased();
          break;
      }
    } catch (error) {
      onError(error);
    }
  };
  const { index, serial } = native.registerIssueThread(dispatch, threadId);
  return {
    index,
    released,
    unregister() {
      if (native.unregisterIssueThread(serial)) live = false;
    },
  };
}
