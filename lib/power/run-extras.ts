/**
 * After a run: the inferred results and the power figures, added to the
 * result, appended to the summary as blocks after the loadgen overhead block
 * (before the SUT's own block; nothing above them moves, so the reference's
 * parsers read the summary as before) and to the report data report.html draws.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { formatSutReportBlock, reportDataFileName } from '../fs/log-files.js';
import type { TestResult } from '../types/api.js';
import type { PowerResult } from '../types/power.js';
import type { ResolvedLogSettings } from '../types/settings.js';
import { energyOverWindow, parsePowerTimestamp, powerProblems, type PowerReading } from './energy.js';
import { formatFigure, INFERRED_TITLE, inferredLines, inferredResults } from './inferred.js';

export type { PowerResult } from '../types/power.js';

export const POWER_TITLE = 'Power (measured by loadgen; not a SPEC PTDaemon measurement)';

/** What the sampler gathered, with how it was read. */
export interface PowerRun {
  source: string;
  intervalMs: number;
  readings: readonly PowerReading[];
}

/** The power window of a detail log: the last power_begin/power_end pair (the reported series'). */
export function powerWindowOf(detailText: string): { begin: string; end: string } | undefined {
  let begin: string | undefined;
  let end: string | undefined;
  for (const line of detailText.split('\n')) {
    if (!line.includes('"power_')) continue;
    const m = /"key"\s*:\s*"(power_begin|power_end)"\s*,\s*"value"\s*:\s*"([^"]*)"/.exec(line);
    if (m === null) continue;
    if (m[1] === 'power_begin') begin = m[2];
    else end = m[2];
  }
  return begin !== undefined && end !== undefined ? { begin, end } : undefined;
}

/** The power figures of a run from its readings and power window. */
export function powerResult(run: PowerRun, window: { begin: string; end: string } | undefined, result: Pick<TestResult, 'counts'>): PowerResult {
  const beginMs = window !== undefined ? parsePowerTimestamp(window.begin) : undefined;
  const endMs = window !== undefined ? parsePowerTimestamp(window.end) : undefined;
  const origin = beginMs ?? run.readings[0]?.atMs ?? 0;
  const readings = run.readings.map((r) => ({ t: (r.atMs - origin) / 1000, watts: r.watts, ...(r.error !== undefined ? { error: r.error } : {}) }));
  const base = { source: run.source, intervalMs: run.intervalMs, method: 'rectangle' as const, readings };
  if (beginMs === undefined || endMs === undefined || endMs < beginMs) {
    return {
      ...base, samples: 0, failedReadings: run.readings.filter((r) => r.error !== undefined).length,
      averageWatts: null, energyJoules: null, energyPerSampleJoules: null, energyPerQueryJoules: null, samplesPerJoule: null,
      meetsRules: false,
      problems: [window === undefined ? 'no power_begin/power_end in the detail log (no detail log written?): no power window' : `unreadable power window ${window.begin} .. ${window.end}`],
    };
  }
  const energy = energyOverWindow(run.readings, beginMs, endMs);
  const problems = powerProblems(energy);
  const { completedSamples, issuedQueries } = result.counts;
  // No reading covers any of the window: its energy and power are unknown, not 0.
  // A window of no length held by a reading has that reading's power and no energy.
  const instant = energy.instantWatts ?? null;
  const joules = energy.coveredMs > 0 ? energy.energyJoules : instant !== null ? 0 : null;
  if (joules === null) problems.push('no two good readings enclose any of the run: no energy or average power');
  if (joules !== null && completedSamples === 0) problems.push('no sample completed: no energy per sample or samples per joule');
  if (joules !== null && issuedQueries === 0) problems.push('no query was issued: no energy per query');
  return {
    ...base,
    window: { begin: window!.begin, end: window!.end, seconds: (endMs - beginMs) / 1000 },
    samples: energy.samples,
    failedReadings: energy.failedReadings,
    averageWatts: energy.coveredMs > 0 ? joules! / (energy.coveredMs / 1000) : instant,
    energyJoules: joules,
    energyPerSampleJoules: joules !== null && completedSamples > 0 ? joules / completedSamples : null,
    energyPerQueryJoules: joules !== null && issuedQueries > 0 ? joules / issuedQueries : null,
    // Some samples over no energy (a source that read 0 W) has no finite rate.
    samplesPerJoule: joules !== null && joules > 0 && completedSamples > 0 ? completedSamples / joules : null,
    meetsRules: problems.length === 0,
    problems,
  };
}

/** A power figure as printed; a figure with no value says so (the Flagged lines say why). */
export function formatPowerFigure(value: number | null): string {
  return value === null ? 'no value' : formatFigure(value);
}

/** The power block's lines. */
export function powerLines(power: PowerResult): string[] {
  const lines = [`Power source : ${power.source}, read every ${power.intervalMs} ms`];
  if (power.window !== undefined) lines.push(`Power window : ${power.window.begin} to ${power.window.end} UTC (${power.window.seconds} s)`);
  lines.push(
    `Power readings in the run : ${power.samples} (failed: ${power.failedReadings})`,
    `Average power (W) : ${formatPowerFigure(power.averageWatts)}`,
    `Energy (J) : ${formatPowerFigure(power.energyJoules)}`,
    `Energy per sample (J) : ${formatPowerFigure(power.energyPerSampleJoules)}`,
    `Energy per query (J) : ${formatPowerFigure(power.energyPerQueryJoules)}`,
    `Samples per joule : ${formatPowerFigure(power.samplesPerJoule)}`,
    'Energy arithmetic : each reading x the time since the previous reading (rectangle rule)',
    `Power result : ${power.meetsRules ? 'meets the power rules (readings, rate, coverage)' : 'FLAGGED'}`,
  );
  for (const p of power.problems) lines.push(`Flagged: ${p}`);
  return lines;
}

/**
 * Adds result.inferred (SingleStream/MultiStream) and result.power (when a
 * sampler ran) with their summary blocks and report data entries. A block
 * that cannot be written to the logs is a warning, never a failed run.
 */
export function addInferredAndPower(result: TestResult, log: ResolvedLogSettings, power: PowerRun | undefined): void {
  const blocks: string[] = [];
  const data: Record<string, unknown> = {};
  if (power !== undefined) {
    let detail = '';
    try {
      if (result.files.detail !== undefined) detail = readFileSync(result.files.detail, 'utf8');
    } catch {
      // No detail log: the result says there is no power window.
    }
    result.power = powerResult(power, powerWindowOf(detail), result);
    if (result.mode === 'FindPeakPerformance') {
      // Each trial has its own window; the figures are the last trial's, the result's counts the peak's.
      result.power.problems.push('FindPeakPerformance: the power window is the last trial\'s, the per-sample figures divide by the peak trial\'s counts');
      result.power.meetsRules = false;
    }
    blocks.push(formatSutReportBlock({ title: POWER_TITLE, lines: powerLines(result.power) }));
    data.power = result.power;
  }
  const inferred = inferredResults(result);
  if (inferred !== undefined) {
    if (result.power !== undefined && result.power.averageWatts !== null && result.power.averageWatts > 0) {
      inferred.offlineSamplesPerJoule = inferred.offline.value / result.power.averageWatts;
    }
    result.inferred = inferred;
    blocks.unshift(formatSutReportBlock({ title: INFERRED_TITLE, lines: inferredLines(inferred) }));
    data.inferred = inferred;
  }
  if (blocks.length === 0) return;
  const text = blocks.join('');
  result.summaryText += text;
  try {
    if (result.files.summary !== undefined) appendFileSync(result.files.summary, text);
    if (log.copySummaryToStdout) process.stdout.write(text);
    addToReportData(join(log.outdir, reportDataFileName(result.testDatetime, log.suffix, log.prefixWithDatetime)), data);
  } catch (error) {
    process.emitWarning(`loadgen: the inferred/power blocks were not written to the logs: ${(error as Error).message}`);
  }
}

/** Adds entries to the report data file, keeping the rest of it byte for byte. */
function addToReportData(path: string, entries: Record<string, unknown>): void {
  if (!existsSync(path)) return;
  const text = readFileSync(path, 'utf8');
  const end = text.lastIndexOf('}');
  if (end < 0) return;
  const added = Object.entries(entries).map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`).join('');
  writeFileSync(path, `${text.slice(0, end)}${added}${text.slice(end)}`);
}
