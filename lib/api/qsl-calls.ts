/**
 * The core's QSL requests served on the JS thread: loadSamplesToRam and
 * unloadSamplesFromRam (either may be async), acknowledged to the core once
 * they settle.
 */
import type { NativeAddon } from '../native/index.js';
import { messageOf } from './checks.js';
import type { QuerySampleLibrary } from './types.js';

/**
 * Calls `qsl[method]` with the indices and acknowledges `token` when it
 * settles; a failure goes to `onFailure` and its text to the core.
 */
export function serveQslCall(
  native: NativeAddon,
  qsl: QuerySampleLibrary,
  method: 'loadSamplesToRam' | 'unloadSamplesFromRam',
  indices: Uint32Array,
  token: number,
  onFailure: (error: unknown, where: string) => void,
): void {
  const list = Array.from(indices);
  let pending: Promise<void>;
  try {
    pending = Promise.resolve(qsl[method](list));
  } catch (error) {
    pending = Promise.reject(error);
  }
  pending.then(
    () => {
      native.acknowledge(token);
    },
    (error: unknown) => {
      onFailure(error, `qsl.${method}`);
      native.acknowledge(token, `qsl.${method} failed: ${messageOf(error)}`);
    },
  );
}
