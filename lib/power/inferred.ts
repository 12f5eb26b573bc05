/**
 * Inferred results (the closed-division rules for edge systems, seeds/000):
 * a MultiStream result inferred from a SingleStream run, an Offline result
 * from a SingleStream or a MultiStream run, with the arithmetic the
 * MLCommons submission checker applies to the same detail-log keys.
 */
import type { TestResult } from '../types/api.js';
import type { InferredResults } from '../types/power.js';

export type { InferredFigure, InferredResults } from '../types/power.js';

/** Queries in flight in the rules' MultiStream scenario: the factor of the MultiStream inference. */
export const RULES_MULTISTREAM_SAMPLES = 8;

const NS_PER_MS = 1e6;

/**
 * The inferred figures of a SingleStream or MultiStream performance run;
 * undefined for other scenarios, accuracy-only runs and runs without latencies.
 *
 * - MultiStream from SingleStream: 8 x the 99th-percentile latency loadgen
 *   reports — the early-stopping 99th-percentile estimate
 *   (`early_stopping_latency_ms`), or the measured 99th percentile when that
 *   estimate was not computed (too few queries).
 * - Offline from SingleStream: 1000 / mean latency in ms
 *   (= `result_qps_without_loadgen_overhead`).
 * - Offline from MultiStream: 1000 x samples per query / mean query latency
 *   in ms (the rules' 8000 / mean with 8 samples per query).
 */
export function inferredResults(result: TestResult): InferredResults | undefined {
  if (result.mode !== 'PerformanceOnly' && result.mode !== 'SubmissionRun') return undefined;
  const notes: string[] = [];
  if (result.scenario === 'SingleStream') {
    const meanNs = result.latencyNs.mean;
    if (!(meanNs > 0)) return undefined;
    const estimateNs = result.earlyStopping.latencyMsNs;
    const p99Ns = result.percentilesNs[99];
    const useEstimate = estimateNs > 0;
    if (!useEstimate) notes.push('no early stopping 99th percentile estimate (too few queries): the measured 99th percentile was used');
    const baseNs = useEstimate ? estimateNs : p99Ns;
    return {
      from: 'SingleStream',
      baseValidity: result.validity,
      multiStream: {
        value: (RULES_MULTISTREAM_SAMPLES * baseNs) / NS_PER_MS,
        unit: 'ms',
        basis: `${RULES_MULTISTREAM_SAMPLES} x ${formatMs(baseNs)} ms (${useEstimate ? 'early stopping 99th percentile estimate' : '99th percentile latency'})`,
      },
      offline: { value: 1000 / (meanNs / NS_PER_MS), unit: 'samples/s', basis: `1000 / ${formatMs(meanNs)} ms (mean latency)` },
      notes,
    };
  }
  if (result.scenario === 'MultiStream') {
    const meanNs = result.queryLatencyNs?.mean ?? 0;
    if (!(meanNs > 0)) return undefined;
    const samplesPerQuery = Number(result.effectiveSettings.samplesPerQuery ?? RULES_MULTISTREAM_SAMPLES);
    if (samplesPerQuery !== RULES_MULTISTREAM_SAMPLES) {
      notes.push(`samples_per_query is ${samplesPerQuery}, not the rules' ${RULES_MULTISTREAM_SAMPLES}: the Offline figure uses ${samplesPerQuery}`);
    }
    return {
      from: 'MultiStream',
      baseValidity: result.validity,
      offline: {
        value: (1000 * samplesPerQuery) / (meanNs / NS_PER_MS),
        unit: 'samples/s',
        basis: `${1000 * samplesPerQuery} / ${formatMs(meanNs)} ms (mean query latency)`,
      },
      notes,
    };
  }
  return undefined;
}

/** The summary block's lines (the title is {@link INFERRED_TITLE}). */
export function inferredLines(inferred: InferredResults): string[] {
  const lines = [`Inferred from : ${inferred.from} (${inferred.baseValidity}; an inferred result is only as valid as its base)`];
  if (inferred.multiStream !== undefined) {
    lines.push(`MultiStream 99th percentile latency (ms) (inferred) : ${formatFigure(inferred.multiStream.value)}`);
    lines.push(`  = ${inferred.multiStream.basis}`);
  }
  lines.push(`Offline samples per second (inferred) : ${formatFigure(inferred.offline.value)}`);
  lines.push(`  = ${inferred.offline.basis}`);
  if (inferred.offlineSamplesPerJoule !== undefined) {
    lines.push(`Offline samples per joule (inferred) : ${formatFigure(inferred.offlineSamplesPerJoule)}`);
    lines.push('  = inferred samples per second / the base run\'s average power');
  }
  for (const note of inferred.notes) lines.push(`Note: ${note}`);
  return lines;
}

export const INFERRED_TITLE = 'Inferred results (edge rules; not measured)';

/** Milliseconds from ns with up to 6 decimals, trailing zeros dropped. */
function formatMs(ns: number): string {
  return String(Number((ns / NS_PER_MS).toFixed(6)));
}

/** A figure with 6 significant digits at least, no exponent below 1e21. */
export function formatFigure(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return Math.abs(value) >= 1e6 ? value.toFixed(1) : String(Number(value.toPrecision(7)));
}
