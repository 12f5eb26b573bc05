/**
 * The core's QSL requests served on the JS thread: loadSamplesToRam and
 * unloadSamplesFromRam (either may be async), acknowledged to the core once
 * they settle, or failed when they have not settled within the QSL timeout.
 */
import type { NativeAddon } from '../native/index.js';
import { messageOf } from './checks.js';
import type { QuerySampleLibrary } from './types.js';

/**
 * Calls `qsl[method]` with the indices and acknowledges `token` when it
 * settles; a failure goes to `onFailure` and its text to the core. When it
 * has not settled within `timeoutMs` (0: no limit) it fails the same way,
 * and a later settle is ignored. When `stop` (the run's signal, which has
 * interrupted the core already) aborts first, the call is acknowledged at
 * once and a later settle is ignored: a stopped run issues nothing more, so
 * it need not wait for a load that may take minutes, only to write its logs.
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
  const list = Array.from(indices);
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
}
