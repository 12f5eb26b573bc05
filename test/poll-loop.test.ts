/**
 * dispatch 'poll' (lib/dispatch/dispatch.ts PollLoop) against a fake addon:
 * a turn of the event loop takes queries while they keep coming, for at
 * most POLL_SLICE_MS, and lets the loop turn after that, after a drain
 * whose SUT returned a promise, and when none came within the spin window.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { POLL_SLICE_MS, PollLoop } from '../lib/dispatch/dispatch.js';
import type { NativeAddon } from '../lib/native/index.js';

/** pollPublished publishes one more query a call while `more()` says so. */
function fakeAddon(more: () => boolean): NativeAddon {
  let published = 0;
  return {
    pollPublished: (seen: number) => {
      if (more()) published = Math.max(published, seen) + 1;
      return published;
    },
    publishedQueries: () => published,
  } as unknown as NativeAddon;
}

/** Drains counted per turn of the event loop (the test moves to the next turn). */
function recorder() {
  const drainsPerTurn: number[] = [];
  let turn = -1;
  const nextTurn = (): void => {
    turn = drainsPerTurn.push(0) - 1;
  };
  return { drainsPerTurn, nextTurn, count: () => drainsPerTurn[turn]!++ };
}

const turns = (n: number): Promise<void> =>
  new Promise((resolve) => {
    const step = (left: number): void => {
      if (left === 0) resolve();
      else setImmediate(() => step(left - 1));
    };
    step(n);
  });

let loop: PollLoop | undefined;
afterEach(() => loop?.stop(false));

describe('poll loop', () => {
  it('one turn takes query after query while they keep coming', async () => {
    let left = 50;
    let drains = 0;
    loop = new PollLoop(fakeAddon(() => left-- > 0), () => {
      drains++;
      return false;
    });
    loop.start();
    let firstTurn = 0;
    setImmediate(() => {
      firstTurn = drains;  // queued after the loop's first turn
    });
    await turns(60);
    // At least two a turn (the slice is checked after a drain); usually all 50.
    expect(firstTurn).toBeGreaterThanOrEqual(2);
    expect(drains).toBe(50);
  });

  it(`a turn ends after ${POLL_SLICE_MS} ms of queries: timers and I/O of the SUT still run`, async () => {
    let drains = 0;
    let sliceDrains = 0;
    loop = new PollLoop(fakeAddon(() => true), () => {
      drains++;
      return false;
    });
    loop.start();
    // A timer fires while queries never stop coming: the loop yields.
    const start = performance.now();
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
    sliceDrains = drains;
    expect(performance.now() - start).toBeLessThan(1000);
    expect(sliceDrains).toBeGreaterThan(1);
  });

  it('a drain whose SUT returned a promise ends the turn (its microtasks run first)', async () => {
    let left = 10;
    const r = recorder();
    loop = new PollLoop(fakeAddon(() => left-- > 0), () => {
      r.count();
      return true;
    });
    r.nextTurn();
    loop.start();
    const total = (): number => r.drainsPerTurn.reduce((a, b) => a + b, 0);
    for (let i = 0; i < 200 && total() < 10; i++) {
      await turns(1);
      r.nextTurn();
    }
    expect(r.drainsPerTurn.filter((n) => n > 0).every((n) => n === 1)).toBe(true);
    expect(total()).toBe(10);
  });

  it('stop() inside a drain ends the turn and the loop', async () => {
    let drains = 0;
    const native = fakeAddon(() => true);
    const l = new PollLoop(native, () => {
      if (++drains === 3) l.stop(false);
      return false;
    });
    l.start();
    await turns(3);
    expect(drains).toBe(3);
  });
});
