/**
 * SingleStream/MultiStream hand-over. A completion call made on the thread
 * that started the run may issue the next query inside the call (the core
 * stamps its issue time, runs the stop checks and publishes it) and return
 * the new published-query count. No wake from the issue thread comes for
 * such a query: the drain loop running right now (the SUT completed inside
 * issueQuery) takes it when issueQuery returns, otherwise a microtask drains
 * it. A thread round trip per query is what this saves (see
 * benchmarks/RESULTS.md).
 */
export const handOver = {
  /** The published-query count the latest hand-over of this series reported (0: none). */
  published: 0,
  /** A drain loop runs on this thread: it re-reads `published` after each issueQuery. */
  draining: false,
  /** A microtask or an immediate is going to drain. */
  scheduled: false,
  /** Drains the series' queries below `published`; undefined outside a series. */
  drain: undefined as ((published: number) => void) | undefined,
};

/** A drain loop that kept taking handed-over queries for this long yields to the event loop. */
export const HAND_OVER_SLICE_MS = 2;

/** At each series' start (the counts restart) and when the run ends (no drain). */
export function resetHandOver(drain?: (published: number) => void): void {
  handOver.published = 0;
  handOver.drain = drain;
}

/** Called with what a completion call returned. */
export function noteHandOver(published: number | undefined): void {
  if (published === undefined) return;
  if (published > handOver.published) handOver.published = published;
  if (handOver.draining || handOver.scheduled || handOver.drain === undefined) return;
  handOver.scheduled = true;
  queueMicrotask(drainHandedOver);
}

/** A drain loop stops taking handed-over queries: they are drained after the event loop's turn. */
export function yieldHandOver(): void {
  if (handOver.scheduled || handOver.drain === undefined) return;
  handOver.scheduled = true;
  setImmediate(drainHandedOver);
}

function drainHandedOver(): void {
  handOver.scheduled = false;
  handOver.drain?.(handOver.published);
}
