/**
 * report.html's section for token runs (use_token_latencies): the limits a
 * Server run was held to and its goodput, TTFT and TPOT histograms and CDFs
 * with those limits, the inter-token latency a network SUT timed from its
 * reads, TTFT and tokens per second over time, and the input and output
 * length histograms; then any other distribution a SUT reported. The
 * script that draws them is appended to the page's chart script.
 */
import type { SutDistribution, TokenLimits } from '../types/api.js';
import type { ReportDistribution } from './distribution.js';

/** The token figures of the reported series in loadgen_report_data.json (native/report_data.cc). */
export interface ReportTokens {
  /** Server token runs: server_ttft_latency / server_tpot_latency (0: no limits apply). */
  ttft_limit_ns: number;
  tpot_limit_ns: number;
  /** Server token runs: issued samples within both limits. */
  goodput?: { within_limits: number; issued_samples: number };
  ttft: ReportDistribution | null;
  tpot: ReportDistribution | null;
  /** Output tokens per successful sample. */
  output_tokens: ReportDistribution | null;
  /**
   * Per window of window_ns (whole windows of the series timeline, holding
   * 20 samples on average): output tokens of the samples completed in it;
   * TTFT percentiles of the first tokens that came in it (null: none).
   */
  timeline: { window_ns: number; completed_tokens: number[]; ttft_p50_ns?: Array<number | null>; ttft_p99_ns?: Array<number | null> };
}

/** The SUT's distributions the token section places itself. */
export const TOKEN_DISTRIBUTIONS = ['inter-token-latency', 'input-tokens'];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function chart(id: string, heading: string, note: string): string {
  return `<section class="chart"><h3>${escapeHtml(heading)}</h3><p class="muted">${escapeHtml(note)}</p><div id="${id}" class="plot"></div></section>`;
}

function pair(left: string, right: string): string {
  return `<div class="pair">${left}${right}</div>`;
}

const ms = (ns: number): string => `${+(ns / 1e6).toPrecision(6)} ms`;

/** Where a limit is drawn, or why not (far beyond every sample: the chart would squash them). */
function limitNote(name: string, limitNs: number, dist: ReportDistribution | null): string {
  if (limitNs <= 0) return '';
  if (dist !== null && limitNs > 3 * dist.max) return ` The ${name} limit, ${ms(limitNs)}, is beyond every sample (the largest: ${ms(dist.max)}); not drawn.`;
  return ` Dashed: p99 and the ${name} limit (${ms(limitNs)}).`;
}

function limitRows(limits: TokenLimits | undefined, tokens: ReportTokens): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  if (limits !== undefined) {
    rows.push(['Limits of', `${limits.model ?? '(settings not from config files)'}, ${limits.scenario}`]);
    rows.push(['TTFT limit', `${ms(limits.ttftNs)} (${limits.ttftSource})`]);
    rows.push(['TPOT limit', `${ms(limits.tpotNs)} (${limits.tpotSource})`]);
    const c = limits.checker;
    if (c !== undefined) {
      rows.push(["Checker's limits", `${c.benchmark} ${c.scenario}: TTFT ${ms(c.ttftNs)}, TPOT ${ms(c.tpotNs)}`]);
      rows.push(["Checker's test (p99 < limit)", `TTFT ${c.ttftMet ? 'yes' : 'NO'}, TPOT ${c.tpotMet ? 'yes' : 'NO'}`]);
    }
  } else if (tokens.ttft_limit_ns > 0) {
    rows.push(['TTFT limit', ms(tokens.ttft_limit_ns)], ['TPOT limit', ms(tokens.tpot_limit_ns)]);
  }
  const g = tokens.goodput;
  if (g !== undefined) {
    const share = g.issued_samples > 0 ? (100 * g.within_limits) / g.issued_samples : 0;
    rows.push(['Goodput', `${share.toFixed(2)} % (${g.within_limits} of ${g.issued_samples} issued samples within both limits)`]);
  }
  return rows;
}

function table(rows: Array<[string, string]>): string {
  return `<table><tbody>${rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</tbody></table>`;
}

/** The "Token latencies" section (empty without token figures). */
export function tokenSection(
  tokens: ReportTokens | undefined,
  limits: TokenLimits | undefined,
  distributions: Record<string, SutDistribution> | undefined,
): string {
  if (tokens === undefined) return '';
  const itl = distributions?.['inter-token-latency'];
  const input = distributions?.['input-tokens'];
  const rows = limitRows(limits, tokens);
  const parts: string[] = ['<h2 id="tokens">Token latencies</h2>'];
  if (rows.length > 0) parts.push(table(rows));
  if (tokens.ttft !== null) {
    parts.push(pair(
      chart('chart-ttft-histogram', 'Time to first token', `From each query's scheduled time to its first token (successful samples).${limitNote('TTFT', tokens.ttft_limit_ns, tokens.ttft)}`),
      chart('chart-ttft-cdf', 'TTFT CDF', 'Fraction of samples whose first token came within each time.'),
    ));
  }
  if (tokens.tpot !== null) {
    parts.push(pair(
      chart('chart-tpot-histogram', 'Time per output token', `(latency - TTFT) / (output tokens - 1), samples with 2 or more tokens.${limitNote('TPOT', tokens.tpot_limit_ns, tokens.tpot)}`),
      chart('chart-tpot-cdf', 'TPOT CDF', 'Fraction of samples within each time per output token.'),
    ));
  }
  if (itl !== undefined) {
    parts.push(pair(
      chart('chart-itl-histogram', itl.title, itl.note),
      chart('chart-itl-cdf', 'Inter-token latency CDF', 'Fraction of gaps within each time (a gap of 0 is two events in one read).'),
    ));
  }
  const windowMs = tokens.timeline.window_ns / 1e6;
  if (tokens.timeline.ttft_p50_ns !== undefined) {
    const drawn = tokens.ttft_limit_ns > 0 && tokens.ttft !== null && tokens.ttft_limit_ns <= 3 * tokens.ttft.max;
    parts.push(chart('chart-ttft-time', 'TTFT over time', `p50 and p99 of the first tokens that came in each ${windowMs} ms window${drawn ? '; dashed: the TTFT limit' : ''}.`));
  }
  parts.push(chart('chart-tokens-time', 'Tokens per second over time', `Output tokens of the samples completed in each ${windowMs} ms window, per second.`));
  const output = tokens.output_tokens !== null
    ? chart('chart-output-tokens', 'Output length', 'Output tokens per successful sample, as the SUT reported them (exact).')
    : '';
  if (input !== undefined) parts.push(pair(chart('chart-input-tokens', input.title, input.note), output));
  else if (output !== '') parts.push(output);
  return `${parts.join('\n')}\n`;
}

/** Charts of a SUT's other distributions (not the token section's), two a row. */
export function sutDistributionSection(distributions: Record<string, SutDistribution> | undefined, tokenRun: boolean): string {
  const keys = Object.keys(distributions ?? {}).filter((k) => !(tokenRun && TOKEN_DISTRIBUTIONS.includes(k)));
  if (keys.length === 0) return '';
  const boxes = keys.map((k) => chart(`chart-sut-${k}`, distributions![k]!.title, distributions![k]!.note));
  const rows: string[] = [];
  for (let i = 0; i < boxes.length; i += 2) rows.push(pair(boxes[i]!, boxes[i + 1] ?? ''));
  return `<h3>Measured by the SUT</h3>\n${rows.join('\n')}\n`;
}

/**
 * Client script: the token charts from R.data.series.tokens and the SUT's
 * distributions (uses the page script's draw(), markers(), xScale() and unitOf()).
 */
export const TOKEN_CHART_JS = String.raw`
  // A distribution (ReportDistribution: ns; SutDistribution: values) as a histogram and a CDF, with dashed marks.
  function distCharts(histId, cdfId, dist, unit, label, limit, limitLabel) {
    if (!dist || dist.count === 0) return;
    var values = dist.ns || dist.values;
    var h = dist.histogram;
    var log = h.scale === 'log';
    var marks = [];
    var p99 = null;
    for (var i = 0; i < dist.p.length; i++) if (Math.abs(dist.p[i] - 0.99) < 1e-9) p99 = values[i];
    if (p99 != null && (!log || p99 > 0)) marks.push({ x: p99 / unit.div, color: COLORS.target, label: 'p99 ' + fmt(p99 / unit.div) + ' ' + unit.name });
    var hi = h.edges[h.edges.length - 1];
    var shown = limit > 0 && limit <= 3 * dist.max;
    if (shown) marks.push({ x: limit / unit.div, color: COLORS.mark, label: limitLabel + ' ' + fmt(limit / unit.div) + ' ' + unit.name });
    var xmax = Math.max(hi, shown ? limit * 1.05 : 0) / unit.div;
    var xmin = h.edges[0] / unit.div;
    var xs = h.edges.map(function (e) { return e / unit.div; });
    var ys = h.counts.concat([0]);
    var range = function () { return [log ? Math.max(xmin, 1e-9) : xmin, xmax]; };
    draw(histId, {
      height: 220,
      scales: { x: Object.assign(xScale(log), { range: range }) },
      axes: [{ label: label + ' (' + unit.name + ')' }, { label: 'count' }],
      series: [
        { label: label, value: function (u, v) { return v == null ? '-' : fmt(v) + ' ' + unit.name; } },
        { label: 'count', stroke: COLORS.main, fill: 'rgba(37,99,235,0.25)', width: 1,
          paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } }
      ],
      plugins: [markers(marks)]
    }, [xs, ys]);
    var cx = [], cy = [];
    for (var k = 0; k < dist.p.length; k++) {
      if (log && values[k] <= 0) continue;
      cx.push(values[k] / unit.div);
      cy.push(dist.p[k] * 100);
    }
    var cdfMarks = marks.concat([{ y: 99, color: COLORS.target, label: '99 %' }]);
    draw(cdfId, {
      height: 220,
      scales: { x: Object.assign(xScale(log), { range: range }), y: { range: [0, 100] } },
      axes: [{ label: label + ' (' + unit.name + ')' }, { label: 'percentile (%)' }],
      series: [
        { label: label, value: function (u, v) { return v == null ? '-' : fmt(v) + ' ' + unit.name; } },
        { label: 'percentile', stroke: COLORS.main, width: 2 }
      ],
      plugins: [markers(cdfMarks)]
    }, [cx, cy]);
  }

  function fmt(v) { return v >= 100 ? String(Math.round(v)) : v.toPrecision(3); }

  var T = d && d.tokens;
  var SD = (R.data && R.data.sut_report && R.data.sut_report.distributions) || {};
  if (T) {
    var tunit = unitOf(Math.max(T.ttft ? T.ttft.max : 0, T.ttft_limit_ns));
    var punit = unitOf(Math.max(T.tpot ? T.tpot.max : 0, T.tpot_limit_ns));
    distCharts('chart-ttft-histogram', 'chart-ttft-cdf', T.ttft, tunit, 'TTFT', T.ttft_limit_ns, 'TTFT limit');
    distCharts('chart-tpot-histogram', 'chart-tpot-cdf', T.tpot, punit, 'TPOT', T.tpot_limit_ns, 'TPOT limit');
    var itl = SD['inter-token-latency'];
    if (itl) distCharts('chart-itl-histogram', 'chart-itl-cdf', itl, unitOf(itl.max), 'gap', 0, '');
    var tws = T.timeline.window_ns / 1e9;
    var tt = T.timeline.completed_tokens.map(function (_, i) { return (i + 1) * tws; });
    if (T.timeline.ttft_p50_ns) {
      var sc = function (a) { return a.map(function (v) { return v == null ? null : v / tunit.div; }); };
      draw('chart-ttft-time', {
        height: 220,
        scales: { x: { time: false } },
        axes: [{ label: 'time (s)' }, { label: 'TTFT (' + tunit.name + ')' }],
        series: [
          { label: 'time (s)' },
          { label: 'p50', stroke: COLORS.second, width: 1.5, spanGaps: true },
          { label: 'p99', stroke: COLORS.main, width: 1.5, spanGaps: true }
        ],
        plugins: T.ttft_limit_ns > 0 && T.ttft && T.ttft_limit_ns <= 3 * T.ttft.max
          ? [markers([{ y: T.ttft_limit_ns / tunit.div, color: COLORS.mark, label: 'TTFT limit' }])] : []
      }, [tt, sc(T.timeline.ttft_p50_ns), sc(T.timeline.ttft_p99_ns)]);
    }
    draw('chart-tokens-time', {
      height: 220,
      scales: { x: { time: false } },
      axes: [{ label: 'time (s)' }, { label: 'tokens per second' }],
      series: [
        { label: 'time (s)' },
        { label: 'output tokens/s', stroke: COLORS.main, width: 1.5 }
      ]
    }, [tt, T.timeline.completed_tokens.map(function (v) { return v / tws; })]);
    var TOK = { name: 'tokens', div: 1 };
    if (SD['input-tokens']) histogramOnly('chart-input-tokens', SD['input-tokens'], TOK, 'input tokens');
    if (T.output_tokens) histogramOnly('chart-output-tokens', T.output_tokens, TOK, 'output tokens');
  }
  Object.keys(SD).forEach(function (k) {
    if (T && (k === 'inter-token-latency' || k === 'input-tokens')) return;
    var sd = SD[k];
    var u = sd.unit === 'ns' ? unitOf(sd.max) : { name: 'tokens', div: 1 };
    histogramOnly('chart-sut-' + k, sd, u, sd.title);
  });

  function histogramOnly(id, dist, unit, label) {
    var h = dist.histogram;
    draw(id, {
      height: 220,
      scales: { x: xScale(h.scale === 'log') },
      axes: [{ label: label + ' (' + unit.name + ')' }, { label: 'count' }],
      series: [
        { label: label, value: function (u, v) { return v == null ? '-' : fmt(v) + ' ' + unit.name; } },
        { label: 'count', stroke: COLORS.main, fill: 'rgba(37,99,235,0.25)', width: 1,
          paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } }
      ]
    }, [h.edges.map(function (e) { return e / unit.div; }), h.counts.concat([0])]);
  }
`;
