/**
 * The power and inferred-result figures a run adds to its result
 * (lib/power computes them; TestResult carries them).
 */

/** One inferred figure: its value, unit and how it was computed. */
export interface InferredFigure {
  value: number;
  unit: 'ms' | 'samples/s';
  /** The arithmetic in words, with the base figure, e.g. `8 x 12.5 ms (early stopping 99th percentile estimate)`. */
  basis: string;
}

/**
 * What a SingleStream or MultiStream run lets a submitter infer. Every figure
 * is labelled inferred: it was not measured in the scenario it names.
 */
export interface InferredResults {
  /** The scenario of the run the figures are inferred from. */
  from: 'SingleStream' | 'MultiStream';
  /** The base run's verdict: an inferred result is only as valid as its base. */
  baseValidity: 'VALID' | 'INVALID';
  /** SingleStream only: the MultiStream result (99th-percentile query latency), ms. */
  multiStream?: InferredFigure;
  /** The Offline result, samples per second. */
  offline: InferredFigure;
  /** Offline samples per joule at the base run's measured average power (present with `result.power`). */
  offlineSamplesPerJoule?: number;
  /** What the reader must know (a fallback basis, a samples_per_query other than the rules'). */
  notes: string[];
}

/** The energy of a run (`result.power`). */
export interface PowerResult {
  /** The source, e.g. `command: ./watts.sh`, `rapl (/sys/class/powercap)`. */
  source: string;
  intervalMs: number;
  /** The detail log's power_begin / power_end (UTC) and the seconds between them; absent when there was none. */
  window?: { begin: string; end: string; seconds: number };
  /** Readings covering the window. */
  samples: number;
  failedReadings: number;
  /**
   * Energy / covered time, W. Every figure here is null when it has no value
   * (no reading covers the window, no sample completed, no energy measured);
   * `problems` says why. A 0 is a measured 0, never a missing figure.
   */
  averageWatts: number | null;
  energyJoules: number | null;
  /** Over the completed samples / the issued queries (`result_query_count`) of the reported series. */
  energyPerSampleJoules: number | null;
  energyPerQueryJoules: number | null;
  samplesPerJoule: number | null;
  /** How energy is summed: each reading × the time since the previous one (the power rules' sum). */
  method: 'rectangle';
  /** False when anything below flags the figures. */
  meetsRules: boolean;
  /** Why the figures do not meet the power rules (few readings, gaps, failures, an uncovered window). */
  problems: string[];
  /** Every reading: seconds from power_begin (or the first reading), watts or null, the failure. */
  readings: { t: number; watts: number | null; error?: string }[];
}
