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

/** The dashed lines (the page's script says under the chart when a limit is too far from the samples to draw). */
function limitNote(name: string, limitNs: number): string {
  return limitNs > 0 ? ` Dashed, labelled above: p99 and the ${name} limit (${ms(limitNs)}; a note says when it is too far to draw).` : ' Dashed: p99.';
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
      chart('chart-ttft-histogram', 'Time to first token', `From each query's scheduled time to its first token (successful samples).${limitNote('TTFT', tokens.ttft_limit_ns)}`),
      chart('chart-ttft-cdf', 'TTFT percentiles (the tail)', 'The TTFT at each percentile from p50 to p99.99 (1 - p on a log axis); dots: p50, p90, p95, p97, p99, p99.9.'),
    ));
  }
  if (tokens.tpot !== null) {
    parts.push(pair(
      chart('chart-tpot-histogram', 'Time per output token', `(latency - TTFT) / (output tokens - 1), samples with 2 or more tokens.${limitNote('TPOT', tokens.tpot_limit_ns)}`),
      chart('chart-tpot-cdf', 'TPOT percentiles (the tail)', 'The TPOT at each percentile from p50 to p99.99 (1 - p on a log axis); dots: p50, p90, p95, p97, p99, p99.9.'),
    ));
  }
  if (itl !== undefined) {
    parts.push(pair(
      chart('chart-itl-histogram', itl.title, itl.note),
      chart('chart-itl-cdf', 'Inter-token latency percentiles (the tail)', 'The gap at each percentile from p50 to p99.99 (1 - p on a log axis; a gap of 0 is two events in one read).'),
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
 * distributions (uses the page script's toolkit: plot(), histogram(), tail(), unitOf()).
 */
export const TOKEN_CHART_JS = String.raw`
  // A distribution (ReportDistribution: ns; SutDistribution: values) as a histogram and its tail,
  // with its p99 and its limit dashed (a limit beyond 3x the largest value is said, not drawn).
  function distCharts(histId, tailId, dist, unit, label, limit, limitLabel, what) {
    if (!dist || dist.count === 0) return;
    var values = dist.ns || dist.values;
    var marks = [];
    var tp = R.targetPercentile > 0 ? R.targetPercentile : 0.99;
    for (var i = 0; i < dist.p.length; i++) {
      if (Math.abs(dist.p[i] - tp) < 1e-9 && (dist.histogram.scale !== 'log' || values[i] > 0)) {
        marks.push({ x: values[i] / unit.div, color: COLORS.target, label: percentileText(tp) + ' ' + labelled(values[i] / unit.div, unit) });
      }
    }
    if (limit > 0) {
      marks.push({ x: limit / unit.div, color: COLORS.mark, label: limitLabel + ' ' + labelled(limit / unit.div, unit),
        name: 'The ' + limitLabel + ', ' + labelled(limit / unit.div, unit) + ',' });
    }
    histogram(histId, dist, unit, label, { marks: marks, height: 230, what: what });
    tail(tailId, dist, values, unit, label, { marks: marks, target: R.targetShown ? R.targetPercentile : 0, height: 250, what: what });
  }

  var T = d && d.tokens;
  var SD = (R.data && R.data.sut_report && R.data.sut_report.distributions) || {};
  if (T) {
    var tunit = unitOf(Math.max(T.ttft ? T.ttft.max : 0, T.ttft_limit_ns));
    var punit = unitOf(Math.max(T.tpot ? T.tpot.max : 0, T.tpot_limit_ns));
    distCharts('chart-ttft-histogram', 'chart-ttft-cdf', T.ttft, tunit, 'TTFT', T.ttft_limit_ns, 'TTFT limit');
    distCharts('chart-tpot-histogram', 'chart-tpot-cdf', T.tpot, punit, 'TPOT', T.tpot_limit_ns, 'TPOT limit');
    var itl = SD['inter-token-latency'];
    if (itl) distCharts('chart-itl-histogram', 'chart-itl-cdf', itl, unitOf(itl.max), 'gap', 0, '', 'gaps');
    var tws = T.timeline.window_ns / 1e9;
    var tt = T.timeline.completed_tokens.map(function (_, i) { return (i + 0.5) * tws; });
    var tspan = function () { return [0, tt.length * tws]; };
    if (T.timeline.ttft_p50_ns) {
      var sc = function (a) { return a.map(function (v) { return v == null ? null : v / tunit.div; }); };
      var t50 = sc(T.timeline.ttft_p50_ns), t99 = sc(T.timeline.ttft_p99_ns);
      var ttop = Math.max(maxOf(t50), maxOf(t99));
      var tlimit = T.ttft_limit_ns / tunit.div;
      var limitShown = tlimit > 0 && T.ttft && tlimit <= 3 * T.ttft.max / tunit.div;
      plot('chart-ttft-time', {
        height: 230,
        x: { label: 'time (s)', range: tspan },
        y: { label: 'TTFT (' + tunit.name + ')', range: function () { return [0, Math.max(ttop, limitShown ? tlimit : 0) * 1.08 || 1]; } },
        series: [
          { label: 'p50', stroke: '#4ade80', width: 3.5, spanGaps: true, points: pointsFor(t50, 9), value: function (u, v) { return v == null ? '-' : labelled(v, tunit); } },
          { label: 'p99', stroke: COLORS.main, width: 2, spanGaps: true, points: pointsFor(t99, 7), value: function (u, v) { return v == null ? '-' : labelled(v, tunit); } }
        ],
        data: [tt, t50, t99],
        hmarks: limitShown ? [{ y: tlimit, color: COLORS.mark, label: 'TTFT limit' }] : []
      });
    }
    plot('chart-tokens-time', {
      height: 230,
      x: { label: 'time (s)', range: tspan },
      y: { label: 'tokens per second', range: function (u, min, max) { return [0, Math.max(1, max) * 1.05]; } },
      series: [{ label: 'output tokens/s', stroke: COLORS.main, width: 1.5 }],
      data: [tt, T.timeline.completed_tokens.map(function (v) { return v / tws; })]
    });
    var TOK = { name: 'tokens', div: 1 };
    if (SD['input-tokens']) histogram('chart-input-tokens', SD['input-tokens'], TOK, 'input tokens', { height: 230 });
    if (T.output_tokens) histogram('chart-output-tokens', T.output_tokens, TOK, 'output tokens', { height: 230 });
  }
  Object.keys(SD).forEach(function (k) {
    if (T && (k === 'inter-token-latency' || k === 'input-tokens')) return;
    var sd = SD[k];
    var u = sd.unit === 'ns' ? unitOf(sd.max) : { name: 'tokens', div: 1 };
    histogram('chart-sut-' + k, sd, u, sd.title, { height: 230 });
  });
`;
