/**
 * What the completion calls need to know about the series running in this
 * thread: which samples' responses go to the accuracy log, and whether its
 * queries reach the SUT through issueQueryIds (lent arrays).
 */
export const activeSeries = {
  firstId: 0,
  /** 1 where the sample's response is logged; indexed by id - firstId. */
  accuracyLogSampled: new Uint8Array(0) as Uint8Array,
  /** False when no sample of the series is logged: completions skip the lookup. */
  anySampled: false,
  /** use_token_latencies: completions pass token counts (set once a series, so the off path stays one check). */
  tokens: false,
  /**
   * Set when this thread hands queries to issueQueryIds: a NaN id in a
   * completion is then a lent array used after its call (lib/dispatch/lent-query.ts),
   * reported here (the run fails with it). Undefined: NaN ids are only counted.
   */
  onLentIdsMisuse: undefined as ((error: Error) => void) | undefined,
};

export function setActiveSeries(
  firstId: number,
  accuracyLogSampled: Uint8Array,
  tokens = false,
  onLentIdsMisuse?: (error: Error) => void,
): void {
  activeSeries.firstId = firstId;
  activeSeries.accuracyLogSampled = accuracyLogSampled;
  activeSeries.anySampled = accuracyLogSampled.includes(1);
  activeSeries.tokens = tokens;
  activeSeries.onLentIdsMisuse = onLentIdsMisuse;
}

/** True when the response of sample `id` must be written to the accuracy log. */
export function wantsResponse(id: number): boolean {
  if (!activeSeries.anySampled) return false;
  const k = id - activeSeries.firstId;
  return k >= 0 && k < activeSeries.accuracyLogSampled.length && activeSeries.accuracyLogSampled[k] === 1;
}
