/**
 * The generic SUT hooks startTest serves (a network SUT uses both):
 * `defaultSettings`, applied under the caller's settings, and `report()`,
 * the SUT's own block after the run — in the result, appended to the
 * summary (after the loadgen overhead block, so every line the reference's
 * tools read stays where it was), and in the report data report.html draws.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { defaultedSettingFields } from '../config/load-settings.js';
import { InterfaceError } from '../errors.js';
import { formatSutReportBlock, reportDataFileName } from '../fs/log-files.js';
import { echo } from '../settings/messages.js';
import type { ResolvedLogSettings, TestSettingsInput } from '../types/settings.js';
import { describe, messageOf } from './checks.js';
import type { SutDistribution, SutReport, SystemUnderTest, TestResult } from '../types/api.js';

export { formatSutReportBlock } from '../fs/log-files.js';

/** Longest title or line of the summary block, and most lines, in characters / lines. */
const MAX_LINE_CHARS = 500;
const MAX_LINES = 1000;

/**
 * `settings` with the SUT's defaultSettings under it, per key: a key the
 * caller gave wins; so does one a loadSettings() result took from a file or
 * a layer (only its 'default' fields take the SUT's). Checked as an object;
 * each value is checked with the rest of the settings.
 */
export function withSutDefaults(sut: Pick<SystemUnderTest, 'defaultSettings'>, settings: TestSettingsInput): TestSettingsInput {
  const defaults: unknown = sut.defaultSettings;
  if (defaults === undefined) return settings;
  if (typeof defaults !== 'object' || defaults === null || Array.isArray(defaults))
    throw new InterfaceError(`sut.defaultSettings must be an object of test settings when present, got ${describe(defaults)}`);
  const defaulted = defaultedSettingFields(settings);
  const merged: Record<string, unknown> = { ...settings };
  for (const [key, value] of Object.entries(defaults)) {
    if (value === undefined) continue;
    if (merged[key] === undefined || defaulted?.has(key) === true) merged[key] = value;
  }
  return merged as TestSettingsInput;
}

/**
 * Calls the SUT's report() (if any) once the run is over and adds what it
 * returns to `result` (sutReport, summaryText), the summary file and the
 * report data file. A throw, or something that is not a SutReport, becomes
 * `result.sutReportError`; the run's verdict never changes.
 */
export function addSutReport(sut: Pick<SystemUnderTest, 'report'>, result: TestResult, log: ResolvedLogSettings): void {
  if (typeof sut.report !== 'function') return;
  let report: SutReport | undefined;
  try {
    report = checkedReport(sut.report());
  } catch (error) {
    result.sutReportError = `sut.report() ${error instanceof InterfaceError ? '' : 'threw: '}${messageOf(error)}`;
    return;
  }
  if (report === undefined) return;
  result.sutReport = report;
  const block = formatSutReportBlock(report);
  result.summaryText += block;
  try {
    if (result.files.summary !== undefined) appendFileSync(result.files.summary, block);
    if (log.copySummaryToStdout) process.stdout.write(block);
    addToReportData(join(log.outdir, reportDataFileName(result.testDatetime, log.suffix, log.prefixWithDatetime)), report);
  } catch (error) {
    result.sutReportError = `sut.report(): the block was not written to the logs: ${messageOf(error)}`;
  }
}

/**
 * report.html is drawn from the log folder alone: the block goes into the
 * report data as `sut_report` (the rest of the file is kept byte for byte).
 */
function addToReportData(path: string, report: SutReport): void {
  const entry = {
    title: report.title, lines: report.lines,
    ...(report.table !== undefined ? { table: report.table } : {}),
    ...(report.distributions !== undefined ? { distributions: report.distributions } : {}),
  };
  appendToReportData(path, { sut_report: entry });
}

/**
 * Adds top-level entries to a report data file (kept byte for byte
 * otherwise); nothing when the run wrote none (reportData: false).
 */
export function appendToReportData(path: string, entries: Record<string, unknown>): void {
  if (!existsSync(path)) return;
  const text = readFileSync(path, 'utf8');
  const end = text.lastIndexOf('}');
  if (end < 0) return;
  const added = Object.entries(entries).map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`).join('');
  writeFileSync(path, `${text.slice(0, end)}${added}${text.slice(end)}`);
}

/**
 * What report() returned as a SutReport with printable text: control
 * characters escaped (a line must not forge a line of the summary above it),
 * titles and lines capped; undefined stays undefined. Anything else: an
 * InterfaceError naming the field.
 */
function checkedReport(value: unknown): SutReport | undefined {
  if (value === undefined) return undefined;
  const bad = (what: string, got: unknown): InterfaceError => new InterfaceError(`returned ${what}, got ${describe(got)}`);
  if (typeof value !== 'object' || value === null) throw bad('something that is not a SutReport ({ title, lines, table?, data? })', value);
  const { title, lines, table, distributions, data } = value as Record<string, unknown>;
  if (typeof title !== 'string') throw bad('a report whose title is not a string', title);
  if (!Array.isArray(lines) || !lines.every((l) => typeof l === 'string')) throw bad('a report whose lines are not an array of strings', lines);
  const report: SutReport = {
    title: echo(title, MAX_LINE_CHARS),
    lines: (lines as string[]).slice(0, MAX_LINES).map((l) => echo(l, MAX_LINE_CHARS)),
  };
  if (lines.length > MAX_LINES) report.lines.push(`(${lines.length - MAX_LINES} more lines left out)`);
  if (table !== undefined) {
    const { columns, rows } = (typeof table === 'object' && table !== null ? table : {}) as Record<string, unknown>;
    if (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string')) throw bad('a report whose table.columns is not an array of strings', columns);
    if (!Array.isArray(rows) || !rows.every((r) => Array.isArray(r) && r.every((c) => typeof c === 'string' || typeof c === 'number')))
      throw bad('a report whose table.rows is not an array of rows of strings and numbers', rows);
    report.table = { columns: [...(columns as string[])], rows: (rows as (string | number)[][]).map((r) => [...r]) };
  }
  if (distributions !== undefined) report.distributions = checkedDistributions(distributions, bad);
  if (data !== undefined) {
    // It goes into `loadgen run --json`: plain data (bigints are written as text there).
    try {
      JSON.stringify(data, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    } catch (error) {
      throw new InterfaceError(`returned a report whose data cannot be written as JSON: ${messageOf(error)}`);
    }
    report.data = data;
  }
  return report;
}

/** Most distributions a report carries, and most points / bins of one. */
const MAX_DISTRIBUTIONS = 16;
const MAX_POINTS = 1000;

/** A report's distributions, checked (each number finite and >= 0, each array sized): report.html draws them as given. */
function checkedDistributions(value: unknown, bad: (what: string, got: unknown) => InterfaceError): Record<string, SutDistribution> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('a report whose distributions is not an object of distributions', value);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_DISTRIBUTIONS) throw bad(`a report with more than ${MAX_DISTRIBUTIONS} distributions`, entries.length);
  const out: Record<string, SutDistribution> = {};
  for (const [key, d] of entries) {
    const what = `distributions['${echo(key, 40)}']`;
    if (!/^[a-z0-9-]{1,40}$/.test(key)) throw bad(`a report whose ${what} key is not 1 to 40 lowercase letters, digits and '-'`, key);
    const { title, note, unit, count, min, max, mean, p, values, histogram } = (typeof d === 'object' && d !== null ? d : {}) as Record<string, unknown>;
    const figure = (name: string, v: unknown): number => {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw bad(`a report whose ${what}.${name} is not a finite number >= 0`, v);
      return v;
    };
    const figures = (name: string, v: unknown, most: number): number[] => {
      if (!Array.isArray(v) || v.length > most) throw bad(`a report whose ${what}.${name} is not an array of at most ${most} numbers`, v);
      return v.map((x, i) => figure(`${name}[${i}]`, x));
    };
    if (typeof title !== 'string' || typeof note !== 'string') throw bad(`a report whose ${what}.title or .note is not a string`, typeof title !== 'string' ? title : note);
    if (unit !== 'ns' && unit !== 'tokens') throw bad(`a report whose ${what}.unit is not 'ns' or 'tokens'`, unit);
    const cdf = figures('p', p, MAX_POINTS);
    const at = figures('values', values, MAX_POINTS);
    if (cdf.length !== at.length) throw bad(`a report whose ${what}.p and .values differ in length`, `${cdf.length} and ${at.length}`);
    const h = (typeof histogram === 'object' && histogram !== null ? histogram : {}) as Record<string, unknown>;
    if (h.scale !== 'log' && h.scale !== 'linear') throw bad(`a report whose ${what}.histogram.scale is not 'log' or 'linear'`, h.scale);
    const counts = figures('histogram.counts', h.counts, MAX_POINTS);
    const edges = figures('histogram.edges', h.edges, MAX_POINTS + 1);
    if (edges.length !== counts.length + 1) throw bad(`a report whose ${what}.histogram.edges is not one longer than its counts`, `${edges.length} edges, ${counts.length} counts`);
    out[key] = {
      title: echo(title, MAX_LINE_CHARS), note: echo(note, MAX_LINE_CHARS), unit,
      count: figure('count', count), min: figure('min', min), max: figure('max', max), mean: figure('mean', mean),
      p: cdf, values: at,
      histogram: {
        scale: h.scale, edges, counts, above: figure('histogram.above', h.above),
        ...(h.zeros !== undefined ? { zeros: figure('histogram.zeros', h.zeros) } : {}),
      },
    };
  }
  return out;
}
