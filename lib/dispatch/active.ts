/**
 * What the completion calls need to know about the series running in this
 * thread: which samples' responses go to the accuracy log, and whether its
 * queries reach the SUT through issueQueryIds (lent arrays).
 */
export const activeSeries = {
  firstId: 0,
  /** 1 where the sample's response is logged; indexed by id - firstId (unless allSampled). */
  accuracyLogSampled: new Uint8Array(0) as Uint8Array,
  /** False when no sample of the series is logged: completions skip the lookup. */
  anySampled: false,
  /** Every sample of the series is logged (accuracy series): ids below firstId + sampleCount. */
  allSampled: false,
  sampleCount: 0,
  /** use_token_latencies: completions pass token counts (set once a series, so the off path stays one check). */
  tokens: false,
  /**
   * A performance series (false: an accuracy series, or none): what network
   * SUTs' own figures (inter-token gaps, input lengths) cover, as the report's.
   */
  performance: false,
  /**
   * Set when this thread hands queries to issueQueryIds: a NaN id in a
   * completion is then a lent array used after its call (lib/dispatch/lent-query.ts),
   * reported here (the run fails with it). Undefined: NaN ids are only counted.
   */
  onLentIdsMisuse: undefined as ((error: Error) => void) | undefined,
};

/** Which samples of a series are logged, as the core's seriesInfo() says. */
export interface AccuracyLogSamples {
  sampleCount: number;
  anySampled: boolean;
  allSampled: boolean;
  accuracyLogSampled: Uint8Array;
  /** A performance series (seriesInfo's; absent: false). */
  performance?: boolean;
}

/** `sampled`: the series' seriesInfo(), or the 0/1 flags of its samples (no sample: an empty array). */
export function setActiveSeries(
  firstId: number,
  sampled: AccuracyLogSamples | Uint8Array,
  tokens = false,
  onLentIdsMisuse?: (error: Error) => void,
): void {
  activeSeries.firstId = firstId;
  if (sampled instanceof Uint8Array) {
    activeSeries.accuracyLogSampled = sampled;
    activeSeries.anySampled = sampled.includes(1);
    activeSeries.allSampled = false;
    activeSeries.sampleCount = sampled.length;
    activeSeries.performance = false;
  } else {
    activeSeries.accuracyLogSampled = sampled.accuracyLogSampled;
    activeSeries.anySampled = sampled.anySampled;
    activeSeries.allSampled = sampled.allSampled;
    activeSeries.sampleCount = sampled.sampleCount;
    activeSeries.performance = sampled.performance === true;
  }
  activeSeries.tokens = tokens;
  activeSeries.onLentIdsMisuse = onLentIdsMisuse;
}

/** True when the response of sample `id` must be written to the accuracy log. */
export function wantsResponse(id: number): boolean {
  if (!activeSeries.anySampled) return false;
  const k = id - activeSeries.firstId;
  if (activeSeries.allSampled) return k >= 0 && k < activeSeries.sampleCount;
  return k >= 0 && k < activeSeries.accuracyLogSampled.length && activeSeries.accuracyLogSampled[k] === 1;
}
