/**
 * The mark of the null-native SUT (lib/suts creates it), which startTest
 * completes inside the native core instead of calling into JS.
 */
import type { SystemUnderTest } from '../types/api.js';

/** Marks the SUT that completes every query inside the native issue thread. */
export const NATIVE_NULL_SUT: unique symbol = Symbol.for('loadgen.nullNativeSut');

export interface NullNativeSut extends SystemUnderTest {
  readonly [NATIVE_NULL_SUT]: true;
}

export function isNullNativeSut(sut: SystemUnderTest): sut is NullNativeSut {
  return (sut as Partial<NullNativeSut>)[NATIVE_NULL_SUT] === true;
}
