/**
 * report.html: one self-contained page (uPlot and the data inlined, nothing
 * fetched) built from a log folder alone: the summary and detail logs plus
 * loadgen_report_data.json, which the core writes after every run
 * (native/report_data.h). `loadgen report <logdir>` and the end of
 * `loadgen run` call {@link writeReport}.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { InterfaceError } from '../errors.js';
import { parseDetailLog, reportFileNameFor, type DetailEntry } from '../fs/log-files.js';
import type { InferredResults } from '../power/inferred.js';
import type { PowerResult } from '../power/run-extras.js';
import type { SutDistribution, TokenLimits } from '../types/api.js';
import { energySections, powerChartBox } from './energy-section.js';
import type { ReportDistribution } from './distribution.js';
import { REPORT_CLIENT_JS } from './report-client.js';
import { sutDistributionSection, tokenSection, type ReportTokens } from './token-section.js';

export { parseDetailLog, reportDataFileName, reportFileNameFor } from '../fs/log-files.js';
export type { ReportDistribution } from './distribution.js';

/** The reported series in loadgen_report_data.json. */
export interface ReportSeries {
  kind: 'accuracy' | 'performance';
  issued_queries: number;
  samples_per_query: number;
  issued_samples: number;
  completed_samples: number;
  duration_ns: number;
  sample_latency: ReportDistribution | null;
  /** MultiStream only. */
  query_latency?: ReportDistribution | null;
  /** Per window of window_ns: issued queries, and completions with their latency percentiles (null: none). */
  timeline: {
    window_ns: number;
    issued_queries: number[];
    completed_samples: number[];
    latency_p50_ns: Array<number | null>;
    latency_p99_ns: Array<number | null>;
    latency_max_ns: Array<number | null>;
    /** The windows of the latency percentiles: whole windows holding 200 samples on average (absent in older data: window_ns). */
    latency_window_ns?: number;
  };
  issue_lateness: ReportDistribution | null;
  delivery_lag: ReportDistribution | null;
  /** Token runs (use_token_latencies): TTFT, TPOT, output lengths, tokens and TTFT over time, goodput. */
  tokens?: ReportTokens;
}

/** loadgen_report_data.json (version 1). */
export interface ReportData {
  format: 'loadgen-report-data';
  version: number;
  test_datetime: string;
  scenario: string;
  mode: string;
  target_latency_ns: number;
  target_latency_percentile: number;
  /** The run measured token latencies: a Server run is then held to TTFT/TPOT, not to target_latency_ns. */
  use_token_latencies?: boolean;
  files: { summary: string; detail: string; accuracy: string; trace: string };
  series: ReportSeries | null;
  /** The SUT's own block (SystemUnderTest.report(), added by startTest after the run). */
  sut_report?: {
    title: string;
    lines: string[];
    table?: { columns: string[]; rows: (string | number)[][] };
    distributions?: Record<string, SutDistribution>;
  };
  /** Server token runs: the limits and where they came from (added by startTest after the run). */
  token_limits?: TokenLimits;
  /** SingleStream/MultiStream: the inferred figures (added by startTest after the run). */
  inferred?: InferredResults;
  /** With startTest's `power` option: the power figures and readings. */
  power?: PowerResult;
}

const DATA_FILE = /^loadgen_(?:.*_)?report_data.*\.json$/;

/** Options of {@link writeReport}. */
export interface WriteReportOptions {
  /** The data file to use (default: the newest loadgen_*report_data*.json in the folder). */
  dataFile?: string;
  /** Where to write the page (default: report.html beside the data, see {@link reportFileNameFor}). */
  output?: string;
}

/**
 * Builds report.html from a log folder and returns its path. Throws an
 * InterfaceError when the folder has neither report data nor a summary log.
 */
export function writeReport(logdir: string, options: WriteReportOptions = {}): string {
  if (!existsSync(logdir) || !statSync(logdir).isDirectory()) {
    throw new InterfaceError(`report: '${logdir}' is not a directory`);
  }
  const dataPath = options.dataFile ?? newest(logdir, (name) => DATA_FILE.test(name));
  let data: ReportData | undefined;
  if (dataPath !== undefined) {
    try {
      data = JSON.parse(readFileSync(dataPath, 'utf8')) as ReportData;
    } catch (cause) {
      throw new InterfaceError(`report: cannot read ${dataPath}: ${(cause as Error).message}`);
    }
    if (data.format !== 'loadgen-report-data') throw new InterfaceError(`report: ${dataPath} is not loadgen report data`);
  }
  const dir = dataPath !== undefined ? dirname(dataPath) : logdir;
  const summaryPath = data?.files.summary ? join(dir, data.files.summary) : newest(logdir, (n) => /summary.*\.txt$/.test(n));
  const detailPath = data?.files.detail ? join(dir, data.files.detail) : newest(logdir, (n) => /detail.*\.txt$/.test(n));
  if (data === undefined && summaryPath === undefined) {
    throw new InterfaceError(`report: no loadgen logs in '${logdir}' (expected loadgen_report_data.json or an mlperf_log_summary.txt)`);
  }
  const summary = summaryPath !== undefined && existsSync(summaryPath) ? readFileSync(summaryPath, 'utf8') : '';
  const detail = detailPath !== undefined && existsSync(detailPath) ? parseDetailLog(detailLogTextWithoutLoadedSets(detailPath)) : [];
  const html = renderReport({ summary, detail, ...(data !== undefined ? { data } : {}) });
  const output = options.output ?? join(dir, dataPath !== undefined ? reportFileNameFor(dataPath) : 'report.html');
  writeFileSync(output, html);
  return output;
}

function newest(dir: string, match: (name: string) => boolean): string | undefined {
  let best: { path: string; mtime: number } | undefined;
  for (const name of readdirSync(dir)) {
    if (!match(name)) continue;
    const path = join(dir, name);
    const mtime = statSync(path).mtimeMs;
    if (best === undefined || mtime > best.mtime) best = { path, mtime };
  }
  return best?.path;
}

/**
 * A detail log's text without its loaded_qsl_set lines, which the report
 * does not read: one lists every loaded sample (~150 MB of text for 16
 * million, more than a JS string holds past ~55 million), and parsing it
 * cost a second.
 */
export function detailLogTextWithoutLoadedSets(path: string): string {
  const bytes = readFileSync(path);
  const marker = Buffer.from(':::MLLOG {"key": "loaded_qsl_set"');
  const parts: string[] = [];
  let from = 0;
  for (let at = bytes.indexOf(marker, from); at >= 0; at = bytes.indexOf(marker, from)) {
    parts.push(bytes.toString('utf8', from, at));
    const end = bytes.indexOf(10, at);
    from = end < 0 ? bytes.length : end + 1;
  }
  parts.push(bytes.toString('utf8', from));
  return parts.join('');
}

/** A summary file's parts the report shows. */
export interface ParsedSummary {
  verdict: string;
  /** "label : value" pairs of the results and additional stats. */
  metrics: Array<[string, string]>;
  /** The indented checks under "Result is". */
  checks: Array<[string, string]>;
  /** Bulleted lines under Recommendations and Early Stopping Result. */
  recommendations: string[];
  earlyStopping: string[];
  overhead: Array<[string, string]>;
}

/** Reads the reference-format summary (plus our overhead block). */
export function parseSummary(text: string): ParsedSummary {
  const out: ParsedSummary = { verdict: '', metrics: [], checks: [], recommendations: [], earlyStopping: [], overhead: [] };
  let section = '';
  let list: string[] | undefined;
  let heading: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; ++i) {
    const line = lines[i]!;
    if (/^=+$/.test(line)) {
      if (i + 2 < lines.length && /^=+$/.test(lines[i + 2]!)) {
        section = lines[i + 1]!.trim();
        i += 2;
        list = undefined;
      }
      continue;
    }
    if (line.trim() === '') {
      list = undefined;
      continue;
    }
    if (line === 'Recommendations:') {
      list = out.recommendations;
      continue;
    }
    if (/^.*Early Stopping Result:$/.test(line)) {
      list = out.earlyStopping;
      // A token run's TTFT / TPOT heading is listed only when bullets follow it (TTFT's is empty when TPOT failed).
      heading = line.startsWith('Early') ? undefined : line.trim();
      continue;
    }
    if (list !== undefined && line.startsWith(' * ')) {
      if (heading !== undefined && list === out.earlyStopping) list.push(heading);
      heading = undefined;
      list.push(line.slice(3).trim());
      continue;
    }
    if (list !== undefined && list.length > 0 && line.startsWith(' ')) {
      list[list.length - 1] += ` ${line.trim()}`;  // a wrapped bullet
      continue;
    }
    const m = /^(\s*)(.*?)\s*:\s?(.*)$/.exec(line);
    if (m === null) continue;
    const [, indent, label, value] = m as unknown as [string, string, string, string];
    if (section.startsWith('MLPerf Results Summary')) {
      if (label === 'Result is') out.verdict = value.trim();
      else if (indent!.length > 0) out.checks.push([label, value.trim()]);
      else out.metrics.push([label, value.trim()]);
    } else if (section === 'Additional Stats') {
      out.metrics.push([label, value.trim()]);
    } else if (section.startsWith('Loadgen Overhead') && /\(ns\)$/.test(label)) {
      out.overhead.push([label, value.trim()]);
    }
  }
  return out;
}

/** What {@link renderReport} draws from. */
export interface ReportInputs {
  summary: string;
  detail: DetailEntry[];
  data?: ReportData;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A display unit for ns values of this magnitude. */
function unitFor(maxNs: number): { name: string; div: number } {
  if (maxNs >= 1e7) return { name: 'ms', div: 1e6 };
  if (maxNs >= 1e4) return { name: 'µs', div: 1e3 };
  return { name: 'ns', div: 1 };
}

function valueAt(dist: ReportDistribution | null | undefined, p: number): number {
  if (!dist || dist.p.length === 0) return 0;
  let best = 0;
  for (let i = 0; i < dist.p.length; ++i) if (Math.abs(dist.p[i]! - p) < Math.abs(dist.p[best]! - p)) best = i;
  return dist.ns[best]!;
}

function readable(rows: Array<[string, string]>): Array<[string, string]> {
  return rows.map(([k, v]) => [k, readableNs(k, v)]);
}

function table(rows: Array<[string, string]>, cls = ''): string {
  if (rows.length === 0) return '<p class="muted">None.</p>';
  return `<table class="${cls}"><tbody>${rows
    .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join('')}</tbody></table>`;
}

/** Columns past which a table of few rows reads better turned: a row per column. */
const WIDE_COLUMNS = 8;
const FEW_ROWS = 4;

/**
 * The SUT report's table (a network SUT's per-node figures), with its
 * title. A wide table of a few rows (a node or two, a column per failure
 * kind and percentile) is turned, a row per column and a column per row,
 * so that it fits and its names read whole; a wide table of many rows
 * scrolls in its own box, its first column (the names) kept in view.
 */
function sutReportSection(report: ReportData['sut_report']): string {
  const t = report?.table;
  if (report === undefined || t === undefined) return '';
  const cell = (c: unknown): string => escapeHtml(String(c));
  let html: string;
  if (t.columns.length > WIDE_COLUMNS && t.rows.length <= FEW_ROWS && t.rows.length > 0) {
    const head = `<tr><th>${cell(t.columns[0])}</th>${t.rows.map((r) => `<th scope="col">${cell(r[0])}</th>`).join('')}</tr>`;
    const body = t.columns.slice(1).map((c, i) => `<tr><th scope="row">${cell(c)}</th>${t.rows.map((r) => `<td>${cell(r[i + 1] ?? '')}</td>`).join('')}</tr>`).join('');
    html = `<table class="sut-report turned"><thead>${head}</thead><tbody>${body}</tbody></table>`;
  } else {
    const head = t.columns.map((c) => `<th>${cell(c)}</th>`).join('');
    const body = t.rows.map((r) => `<tr>${r.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`).join('');
    html = `<table class="sut-report"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }
  return `<h2>${cell(report.title)}</h2>\n<div class="scroll">${html}</div>\n`;
}

/** A duration for a caption: "20 ms", "1.5 s". */
function durationText(ns: number): string {
  return ns >= 1e9 ? `${+(ns / 1e9).toPrecision(4)} s` : `${+(ns / 1e6).toPrecision(4)} ms`;
}

/** A summary figure in ns, with the same figure in a unit read at a glance: "147668444 (147.7 ms)". */
function readableNs(label: string, value: string): string {
  if (!/\(ns\)$/.test(label) || !/^\d+$/.test(value)) return value;
  const ns = Number(value);
  const unit = unitFor(ns);
  return unit.div === 1 ? value : `${value} (${+(ns / unit.div).toPrecision(4)} ${unit.name})`;
}

/**
 * Timeline windows summed into one throughput point, so that each holds 20
 * completed samples on average (the page's script sums the counts).
 */
export function throughputMerge(windows: number, completedSamples: number): number {
  return Math.max(1, Math.min(windows, Math.ceil((20 * windows) / Math.max(1, completedSamples))));
}

function uplotAssets(): { js: string; css: string } {
  const require = createRequire(import.meta.url);
  const js = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
  const css = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  return { js, css };
}

/** Inline <script> text cannot contain "</script": escape every "</". For our own code only. */
function scriptSafe(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1');
}

/**
 * JSON for an inline <script> block, safe whatever its strings hold: `<`,
 * `>` and `&` as \u escapes (so neither `</script>` nor `<!--` + `<script`,
 * which would make the parser skip the real `</script>`, can appear), and
 * U+2028/U+2029 escaped too. JSON.parse gives back the same strings.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The complete HTML page. */
export function renderReport(inputs: ReportInputs): string {
  const s = parseSummary(inputs.summary);
  const settings = new Map<string, unknown>();
  const notes: Array<[string, string]> = [];
  let sutName = '';
  for (const e of inputs.detail) {
    if (e.key.startsWith('effective_')) settings.set(e.key.slice('effective_'.length), e.value);
    if (e.key === 'sut_name') sutName = String(e.value);
    if (e.metadata?.is_error || e.metadata?.is_warning) {
      notes.push([e.metadata.is_error ? 'error' : 'warning', typeof e.value === 'string' ? e.value : JSON.stringify(e.value)]);
    }
  }
  const data = inputs.data;
  const scenario = data?.scenario ?? String(settings.get('scenario') ?? '');
  const verdict = s.verdict || String(inputs.detail.find((e) => e.key === 'result_validity')?.value ?? 'UNKNOWN');
  const series = data?.series ?? null;
  const latency = scenario === 'MultiStream' && series?.query_latency ? series.query_latency : series?.sample_latency;
  const targetPercentile = data?.target_latency_percentile ?? Number(settings.get('target_latency_percentile') ?? 0);
  // A token run's Server bounds are TTFT and TPOT: its target latency is no bound (often 0, else a default).
  const tokenRun = data?.use_token_latencies === true || series?.tokens !== undefined;
  const boundNs = scenario === 'Server' && !tokenRun ? (data?.target_latency_ns ?? 0) : 0;
  const overheadMax = Math.max(series?.issue_lateness?.max ?? 0, series?.delivery_lag?.max ?? 0);
  const clientData = {
    scenario,
    data: data ?? null,
    unit: unitFor(Math.max(latency?.max ?? 0, boundNs)),
    overheadUnit: unitFor(overheadMax),
    targetPercentile,
    targetPercentileLabel: String(Math.round(targetPercentile * 1000) / 10),
    targetPercentileLatencyNs: valueAt(latency, targetPercentile),
    // Offline is judged on throughput alone: its percentile is shown, no target.
    targetShown: scenario !== 'Offline' && scenario !== '',
    boundNs,
    throughputMerge: series ? throughputMerge(series.timeline.completed_samples.length, series.completed_samples) : 1,
  };

  const failed = s.checks.filter(([, v]) => v !== 'Yes');
  const reasons = [
    ...failed.map(([k]) => `${k}: No`),
    ...s.recommendations,
    ...(failed.some(([k]) => /early stopping/i.test(k)) ? s.earlyStopping : []),
  ];
  const valid = verdict === 'VALID';
  const title = `loadgen report: ${scenario || 'run'} ${data?.mode ?? ''} ${verdict}`.trim();
  const chart = (id: string, heading: string, note: string): string =>
    `<section class="chart"><h3>${escapeHtml(heading)}</h3><p class="muted">${escapeHtml(note)}</p><div id="${id}" class="plot"></div></section>`;
  const percentileName = `p${clientData.targetPercentileLabel}`;
  const latencyWindowNs = series?.timeline.latency_window_ns ?? series?.timeline.window_ns ?? 0;
  const throughputWindowNs = (series?.timeline.window_ns ?? 0) * clientData.throughputMerge;
  // Samples a window with completions holds on average (windows without any draw nothing).
  const latencyWindows = series?.timeline.latency_p50_ns.filter((v) => v !== null).length ?? 0;
  const perWindow = latencyWindows > 0 ? Math.round(series!.completed_samples / latencyWindows) : 0;
  const charts = series
    ? [
        chart('chart-latency-histogram', `${scenario === 'MultiStream' ? 'Query' : 'Sample'} latency histogram`,
          `Latency from the scheduled time to completion. Dashed, labelled above: ${percentileName}${clientData.targetShown ? ' (the target percentile)' : ''}` +
          (boundNs > 0 ? ' and the latency bound (a note says when it is too far to draw).' : '.') +
          (tokenRun && scenario === 'Server' ? ' No end-to-end bound: a token run is held to its TTFT and TPOT limits (Token latencies).' : '')),
        chart('chart-latency-cdf', 'Latency percentiles (the tail)',
          'The latency at each percentile from p50 to p99.99, the share of slower samples (1 - p) on a log axis; ' +
          'dots: the percentiles the summary reports (p50, p90, p95, p97, p99, p99.9).'),
        chart('chart-latency-time', 'Latency over time',
          `p50, p99 and max of the samples completing in each ${durationText(latencyWindowNs)} window (${perWindow.toLocaleString('en-US')} samples each on average` +
          (perWindow < 100 ? ': a p99 of fewer than 100 samples is their max).' : ').')),
        powerChartBox(data?.power),
        chart('chart-qps-time', 'Throughput over time', `Issued queries and completed samples per second, per ${durationText(throughputWindowNs)} window.`),
        chart('chart-issue-lateness', 'Issue lateness', 'How late each query was issued against when it was due (loadgen overhead).'),
        chart('chart-delivery-lag', 'Delivery lag', 'From when each query was due until the SUT received it.'),
      ].join('\n')
    : `<p class="muted">No performance series was recorded (accuracy-only run, or logs without loadgen_report_data.json): no charts.</p>${powerChartBox(data?.power)}`;
  const { js, css } = uplotAssets();
  const settingsRows: Array<[string, string]> = [...settings.entries()].map(([k, v]) => [k, String(v)]);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #111827; background: #f9fafb; }
main { max-width: 1140px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 4px 0; }
.verdict { display: inline-block; padding: 4px 12px; border-radius: 6px; font-weight: 700; color: #fff; }
.verdict.valid { background: #16a34a; } .verdict.invalid { background: #dc2626; }
.muted { color: #6b7280; font-size: 13px; margin: 2px 0 8px; }
table { border-collapse: collapse; font-size: 13px; background: #fff; }
th, td { text-align: left; padding: 3px 12px 3px 6px; border-bottom: 1px solid #f3f4f6; vertical-align: top; }
th { font-weight: 500; color: #374151; white-space: nowrap; } td { font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.grid { display: flex; flex-wrap: wrap; gap: 24px; }
.chart { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 12px; margin: 16px 0; }
.scroll { overflow-x: auto; max-width: 100%; background-color: #fff;
  /* Shadows at an edge with more to scroll to (the white covers move with the content). */
  background-image: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)), linear-gradient(to left, #fff 30%, rgba(255,255,255,0)),
    radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.18), transparent), radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.18), transparent);
  background-position: left, right, left, right; background-size: 40px 100%, 40px 100%, 14px 100%, 14px 100%;
  background-repeat: no-repeat; background-attachment: local, local, scroll, scroll; }
.scroll > table { background: transparent; }
.sut-report th, .sut-report td { white-space: nowrap; }
.sut-report td { text-align: right; }
.sut-report:not(.turned) td:first-child { text-align: left; }
.sut-report thead th { border-bottom: 1px solid #d1d5db; vertical-align: bottom; }
.sut-report.turned thead th { white-space: normal; min-width: 9em; max-width: 22em; }
.sut-report:not(.turned) tr > :first-child { position: sticky; left: 0; background: #fff; }
.chart-note { margin: 6px 0 0; }
.pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; }
.pair > .chart { margin: 8px 0; min-width: 0; }
@media (max-width: 900px) { .pair { grid-template-columns: minmax(0, 1fr); } }
pre { background: #fff; border: 1px solid #e5e7eb; padding: 12px; overflow-x: auto; font-size: 12px; }
li { margin: 2px 0; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(scenario)} ${escapeHtml(data?.mode ?? '')} <span class="verdict ${valid ? 'valid' : 'invalid'}">${escapeHtml(verdict)}</span></h1>
<p class="muted">SUT ${escapeHtml(sutName || '?')} · ${escapeHtml(data?.test_datetime ?? '')}</p>
<section id="verdict">
${valid ? '<p>Every check passed.</p>' : `<h3>Why the result is ${escapeHtml(verdict)}</h3><ul>${(reasons.length > 0 ? reasons : ['See the summary below.']).map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>`}
${table(s.checks)}
</section>
<h2>Key metrics</h2>
<div class="grid">${table(readable(s.metrics))}${s.overhead.length > 0 ? `<div><h3>Loadgen overhead</h3>${table(readable(s.overhead))}</div>` : ''}</div>
${energySections(data?.inferred, data?.power)}${sutReportSection(data?.sut_report)}${sutDistributionSection(data?.sut_report?.distributions, series?.tokens !== undefined)}
${tokenSection(series?.tokens, data?.token_limits, data?.sut_report?.distributions)}<h2>Charts</h2>
${charts}
<h2>Effective settings</h2>
${table(settingsRows)}
${notes.length > 0 ? `<h2>Errors and warnings</h2>${table(notes)}` : ''}
<h2>Summary log</h2>
<details><summary>mlperf_log_summary.txt</summary><pre>${escapeHtml(inputs.summary)}</pre></details>
</main>
<script id="report-data" type="application/json">${jsonForScript(clientData)}</script>
<script>${scriptSafe(js)}</script>
<script>${scriptSafe(REPORT_CLIENT_JS)}</script>
</body>
</html>
`;
}
