/**
 * The core's QSL requests served on the JS thread: loadSamplesToRam and
 * unloadSamplesFromRam (either may be async), acknowledged to the core once
 * they settle, or failed when they have not settled within the QSL timeout.
 */
import type { NativeAddon } from '../native/index.js';
import { yieldToEventLoop } from '../abortable.js';
import { messageOf } from './checks.js';
import type { QuerySampleLibrary } from '../types/api.js';

/**
 * Indices copied into the QSL's number[] between two turns of the event
 * loop: a few ms of work. A set of 10^8 samples takes about a second to
 * copy, which a signal must not wait for.
 */
export const INDEX_COPY_SLICE = 1 << 20;

/**
 * Calls `qsl[method]` with the indices and acknowledges `token` when it
 * settles; a failure goes to `onFailure` and its text to the core. When it
 * has not settled within `timeoutMs` (0: no limit) it fails the same way,
 * and a later settle is ignored. When `stop` (the run's signal, which has
 * interrupted the core already) aborts first, the call is acknowledged at
 * once and a later settle is ignored: a stopped run issues nothing more, so
 * it need not wait for a load that may take minutes, only to write its logs.
 * A load given up so before the QSL was called is never called.
 */
export function serveQslCall(
  native: NativeAddon,
  qsl: QuerySampleLibrary,
  method: 'loadSamplesToRam' | 'unloadSamplesFromRam',
  indices: Uint32Array,
  token: number,
  onFailure: (error: unknown, where: string) => void,
  timeoutMs = 0,
  stop?: AbortSignal,
): void {
  const where = `qsl.${method}`;
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fail = (error: unknown): void => {
    onFailure(error, where);
    native.acknowledge(token, `${where} failed: ${messageOf(error)}`);
  };
  if (timeoutMs > 0) {
    // Not unref'd: while the core waits for this call, the timer is what ends the wait.
    timer = setTimeout(() => {
      if (done) return;
      done = true;
      settled();
      fail(new Error(`${where} did not settle within ${timeoutMs} ms (qslTimeoutMs)`));
    }, timeoutMs);
  }
  const onStop = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    native.acknowledge(token);
  };
  if (stop?.aborted === true) {
    // Stopped before the load: nothing will be issued, so nothing is loaded.
    if (method === 'loadSamplesToRam') {
      onStop();
      return;
    }
    queueMicrotask(onStop);
  } else {
    stop?.addEventListener('abort', onStop, { once: true });
  }
  const settled = (): void => stop?.removeEventListener('abort', onStop);
  const call = (list: number[]): void => {
    let pending: Promise<void>;
    try {
      pending = Promise.resolve(qsl[method](list));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      () => {
        settled();
        if (done) return;
        done = true;
        clearTimeout(timer);
        native.acknowledge(token);
      },
      (error: unknown) => {
        settled();
        if (done) return;
        done = true;
        clearTimeout(timer);
        fail(error);
      },
    );
  };
  if (indices.length <= INDEX_COPY_SLICE) {
    call(indexList(indices));
    return;
  }
  // A large set: copied in slices. A load given up meanwhile (stopped, timed
  // out) is not made; an unload still is (the QSL may hold what it loaded).
  const abandoned = method === 'loadSamplesToRam' ? () => done : () => false;
  indexListInSlices(indices, abandoned).then(
    (list) => {
      if (list !== undefined) call(list);
    },
    (error: unknown) => {
      // Only a list too long for a JS array gets here: the core refuses such sets before a run.
      settled();
      if (done) return;
      done = true;
      clearTimeout(timer);
      fail(error);
    },
  );
}

/** The indices as the number[] a QSL takes: one allocation of the final length, no growth. */
export function indexList(indices: Uint32Array): number[] {
  const list = new Array<number>(indices.length);
  for (let i = 0; i < indices.length; i++) list[i] = indices[i]!;
  return list;
}

/**
 * indexList() in slices of INDEX_COPY_SLICE, the event loop running between
 * them; undefined once `abandoned()`.
 */
export async function indexListInSlices(indices: Uint32Array, abandoned: () => boolean): Promise<number[] | undefined> {
  const list = new Array<number>(indices.length);
  for (let at = 0; at < indices.length; at += INDEX_COPY_SLICE) {
    if (abandoned()) return undefined;
    const end = Math.min(at + INDEX_COPY_SLICE, indices.length);
    for (let i = at; i < end; i++) list[i] = indices[i]!;
    await yieldToEventLoop();
  }
  return abandoned() ? undefined : list;
}
