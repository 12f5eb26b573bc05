/**
 * report.html's inferred-results and power tables, and the script that
 * draws the power-over-time chart (appended to the page's chart script).
 */
import type { InferredResults } from '../power/inferred.js';
import { inferredLines } from '../power/inferred.js';
import { formatPowerFigure, type PowerResult } from '../power/run-extras.js';

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function rows(pairs: Array<[string, string]>): string {
  return `<table><tbody>${pairs.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</tbody></table>`;
}

/** The "Inferred results" and "Power" sections (empty when the run has neither). */
export function energySections(inferred: InferredResults | undefined, power: PowerResult | undefined): string {
  let html = '';
  if (inferred !== undefined) {
    html += `<h2 id="inferred">Inferred results <span class="muted">(edge rules; inferred from this ${escapeHtml(inferred.from)} run, not measured)</span></h2>\n`;
    html += `<pre class="inferred">${escapeHtml(inferredLines(inferred).join('\n'))}</pre>\n`;
  }
  if (power !== undefined) {
    const pairs: Array<[string, string]> = [
      ['Source', `${power.source}, every ${power.intervalMs} ms`],
      ...(power.window !== undefined ? [['Window (UTC)', `${power.window.begin} to ${power.window.end} (${power.window.seconds} s)`] as [string, string]] : []),
      ['Readings in the run', `${power.samples} (failed: ${power.failedReadings})`],
      ['Average power (W)', formatPowerFigure(power.averageWatts)],
      ['Energy (J)', formatPowerFigure(power.energyJoules)],
      ['Energy per sample (J)', formatPowerFigure(power.energyPerSampleJoules)],
      ['Energy per query (J)', formatPowerFigure(power.energyPerQueryJoules)],
      ['Samples per joule', formatPowerFigure(power.samplesPerJoule)],
      ['Result', power.meetsRules ? 'meets the power rules (readings, rate, coverage)' : 'FLAGGED'],
      ...power.problems.map((p): [string, string] => ['Flagged', p]),
    ];
    html += `<h2 id="power">Power</h2>\n${rows(pairs)}\n`;
  }
  return html;
}

/** The power chart's box, placed beside the latency-over-time chart. */
export function powerChartBox(power: PowerResult | undefined): string {
  if (power === undefined) return '';
  return '<section class="chart"><h3>Power over time</h3><p class="muted">Each reading of the power source (W), in seconds from power_begin; ' +
    'dashed lines: power_begin and power_end. Failed readings are gaps.</p><div id="chart-power-time" class="plot"></div></section>';
}

/** Client script: draws #chart-power-time from R.data.power (uses the page script's plot()). */
export const POWER_CHART_JS = String.raw`
  var P = R.data && R.data.power;
  if (P && P.readings && P.readings.length > 0) {
    var pm = [{ x: 0, color: COLORS.mark, label: 'power_begin' }];
    if (P.window) pm.push({ x: P.window.seconds, color: COLORS.mark, label: 'power_end' });
    plot('chart-power-time', {
      x: { label: 'time from power_begin (s)' },
      y: { label: 'power (W)' },
      series: [
        { label: 'power (W)', stroke: COLORS.main, width: 1.5, spanGaps: false,
          value: function (u, v) { return v == null ? '-' : fmt(v) + ' W'; } }
      ],
      data: [P.readings.map(function (r) { return r.t; }), P.readings.map(function (r) { return r.error === undefined ? r.watts : null; })],
      vmarks: pm
    });
  }
`;
