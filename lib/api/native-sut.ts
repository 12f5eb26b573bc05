/**
 * A SUT whose requests the core itself sends (a network SUT on the native
 * HTTP client, lib/net/native-transport.ts) carries its native handle under
 * this symbol: startTest hands it to the core, which then issues to it from
 * the issue thread instead of calling issueQuery.
 */
import type { NativeHttpSut } from '../native/index.js';

export const NATIVE_SUT = Symbol.for('loadgen.nativeSut');

export function nativeSutOf(sut: unknown): NativeHttpSut | undefined {
  if (typeof sut !== 'object' || sut === null) return undefined;
  return (sut as { [NATIVE_SUT]?: NativeHttpSut })[NATIVE_SUT];
}
