/**
 * The typed-array issue path (SystemUnderTest.issueQueryIds): a query goes
 * to the SUT as ids and QSL indices in arrays loadgen reuses from call to
 * call (no object per sample, no allocation per call once they are large
 * enough). They are lent for the duration of the call only: when it
 * returns, the entries handed out are poisoned (ids NaN, indices
 * 0xFFFFFFFF), so a completion made later with them is caught as a NaN id
 * (lib/api/completion.ts) instead of completing whatever the arrays hold by
 * then. Outside a call every entry is poisoned.
 */
import type { SystemUnderTest } from '../types/api.js';

/** The QSL index a lent `indices` array holds outside its call. */
export const POISONED_INDEX = 0xffffffff;

/** A thread's (or drain state's) lent arrays. */
export interface LentQuery {
  ids: Float64Array;
  indices: Uint32Array;
  /** A call holds the arrays (a nested issue gets arrays of its own). */
  lent: boolean;
}

export function newLentQuery(): LentQuery {
  return { ids: new Float64Array(0), indices: new Uint32Array(0), lent: false };
}

/** The SUT takes queries as typed arrays. */
export function usesIssueQueryIds(sut: Pick<SystemUnderTest, 'issueQueryIds'>): boolean {
  return typeof sut.issueQueryIds === 'function';
}

/** Arrays of at least `count` entries, all poisoned (grown 2x so a growing query size reallocates rarely). */
export function lendable(lent: LentQuery, count: number): LentQuery {
  if (lent.lent) return { ids: poisonedIds(count), indices: poisonedIndices(count), lent: false };
  if (count > lent.ids.length) {
    const size = Math.max(count, lent.ids.length * 2, 16);
    lent.ids = poisonedIds(size);
    lent.indices = poisonedIndices(size);
  }
  return lent;
}

function poisonedIds(n: number): Float64Array {
  return new Float64Array(n).fill(Number.NaN);
}

function poisonedIndices(n: number): Uint32Array {
  return new Uint32Array(n).fill(POISONED_INDEX);
}

/** After the call: the `count` entries handed out read NaN / 0xFFFFFFFF again. */
export function poison(lent: LentQuery, count: number): void {
  lent.lent = false;
  if (count <= 8) {
    for (let i = 0; i < count; i++) {
      lent.ids[i] = Number.NaN;
      lent.indices[i] = POISONED_INDEX;
    }
  } else {
    lent.ids.fill(Number.NaN, 0, count);
    lent.indices.fill(POISONED_INDEX, 0, count);
  }
}

/**
 * Calls sut.issueQueryIds with the `count` entries of `lent` (filled by the
 * caller) and poisons them when it returns or throws. Returns what it returned.
 */
export function issueLent(sut: Pick<SystemUnderTest, 'issueQueryIds'>, lent: LentQuery, count: number): unknown {
  lent.lent = true;
  try {
    return sut.issueQueryIds!(lent.ids, lent.indices, count);
  } finally {
    poison(lent, count);
  }
}

/** What a completion call with a poisoned id throws (and the run fails with). */
export function lentIdsMisuse(call: string): TypeError {
  return new TypeError(
    `${call}: a sample id is NaN. The ids and indices arrays issueQueryIds receives are valid only during the ` +
      'call: loadgen reuses them, and when the call returns (an async one: at its first await) their entries ' +
      'read NaN and 0xFFFFFFFF. Copy what is completed later (ids.slice(0, count)), or complete inside the call. ' +
      'The run is aborted.',
  );
}
