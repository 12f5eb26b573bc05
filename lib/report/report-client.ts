/**
 * The script inside report.html that draws its charts with uPlot (inlined
 * next to it) through the toolkit of chart-client.ts. Plain ES5-style
 * JavaScript kept as a string: it runs in the viewer's browser, not in
 * Node. Reads the JSON in #report-data (built by lib/report/report.ts) and
 * marks each drawn chart with data-rendered="1".
 */
import { CHART_TOOLKIT_JS } from './chart-client.js';
import { POWER_CHART_JS } from './energy-section.js';
import { TOKEN_CHART_JS } from './token-section.js';

export const REPORT_CLIENT_JS = String.raw`
(function () {
  'use strict';
  var R = JSON.parse(document.getElementById('report-data').textContent);
${CHART_TOOLKIT_JS}

  // Sums of each k consecutive windows of counts (exact: counts add up).
  function merged(counts, k) {
    var out = [];
    for (var i = 0; i < counts.length; i += k) {
      var sum = 0;
      for (var j = i; j < Math.min(counts.length, i + k); j++) sum += counts[j];
      out.push(sum);
    }
    return out;
  }
  function maxOf(a) {
    var m = 0;
    a.forEach(function (v) { if (v != null && v > m) m = v; });
    return m;
  }

  var d = R.data && R.data.series;
  if (d) {
    var U = R.unit, OU = R.overheadUnit;
    var lat = R.scenario === 'MultiStream' && d.query_latency ? d.query_latency : d.sample_latency;
    var latMarks = [];
    var pLabel = 'p' + R.targetPercentileLabel;
    if (R.targetPercentileLatencyNs > 0) {
      latMarks.push({ x: R.targetPercentileLatencyNs / U.div, color: COLORS.target,
        label: pLabel + ' ' + labelled(R.targetPercentileLatencyNs / U.div, U) });
    }
    if (R.boundNs > 0) {
      latMarks.push({ x: R.boundNs / U.div, color: COLORS.mark, label: 'bound ' + labelled(R.boundNs / U.div, U),
        name: 'The latency bound, ' + labelled(R.boundNs / U.div, U) + ',' });
    }
    if (lat) {
      histogram('chart-latency-histogram', lat, U, 'latency', { marks: latMarks });
      tail('chart-latency-cdf', lat, lat.ns, U, 'latency', { marks: latMarks, target: R.targetShown ? R.targetPercentile : 0 });
    }

    var tl = d.timeline;
    var ws = tl.window_ns / 1e9;
    // Throughput: whole windows summed until each holds 20 completions on average.
    var k = R.throughputMerge || 1;
    var done = merged(tl.completed_samples, k);
    var issued = merged(tl.issued_queries, k);
    var tws = ws * k;
    plot('chart-qps-time', {
      x: { label: 'time (s)', range: function () { return [0, done.length * tws]; } },
      y: { label: 'per second', range: function (u, min, max) { return [0, Math.max(1, max) * 1.05]; } },
      series: [
        { label: 'issued queries/s', stroke: COLORS.main, width: 1.5 },
        { label: 'completed samples/s', stroke: COLORS.second, width: 1.5 }
      ],
      data: [done.map(function (_, i) { return (i + 0.5) * tws; }),
             issued.map(function (v) { return v / tws; }), done.map(function (v) { return v / tws; })]
    });
    // Latency: p50 under p99 under max, each narrower than the one below, so that a window
    // whose p99 is its max (or p50 its p99) still shows all three.
    var lws = (tl.latency_window_ns || tl.window_ns) / 1e9;
    var scaled = function (a) { return a.map(function (v) { return v == null ? null : v / U.div; }); };
    var p50 = scaled(tl.latency_p50_ns), p99 = scaled(tl.latency_p99_ns), mx = scaled(tl.latency_max_ns);
    var top = maxOf(mx);
    var bound = R.boundNs / U.div;
    var timeHost = document.getElementById('chart-latency-time');
    var boundShown = bound > 0 && bound <= 3 * top;
    if (bound > 0 && !boundShown && timeHost) note(timeHost, 'The latency bound, ' + labelled(bound, U) + ', is beyond every sample (the largest: ' + labelled(top, U) + '); not drawn.');
    // A log axis where the latencies span a factor of 10 or more (p50 far under p99 would lie flat on a linear one).
    var bottom = Math.min.apply(null, p50.filter(function (v) { return v != null && v > 0; }).concat([top || 1]));
    var logTime = !!lat && lat.histogram.scale === 'log' && top >= 10 * bottom;
    // Each window's point at its middle, on an axis from 0 to the last window's end.
    plot('chart-latency-time', {
      x: { label: 'completion time (s)', range: function () { return [0, p50.length * lws]; } },
      y: durationAxis('latency', U, logTime, {
           range: function () {
             var high = Math.max(top, boundShown ? bound : 0);
             return logTime ? [bottom / 1.5, high * 1.5] : [0, high * 1.08 || 1];
           } }),
      series: [
        { label: 'p50', stroke: '#4ade80', width: 3.5, points: pointsFor(p50, 9), value: function (u, v) { return v == null ? '-' : labelled(v, U); } },
        { label: 'p99', stroke: COLORS.main, width: 2, points: pointsFor(p99, 7), value: function (u, v) { return v == null ? '-' : labelled(v, U); } },
        { label: 'max', stroke: COLORS.third, width: 1.25, dash: [5, 3], points: pointsFor(mx, 5), value: function (u, v) { return v == null ? '-' : labelled(v, U); } }
      ],
      data: [p50.map(function (_, i) { return (i + 0.5) * lws; }), p50, p99, mx],
      hmarks: boundShown ? [{ y: bound, color: COLORS.mark, label: 'bound' }] : []
    });
    if (d.issue_lateness) histogram('chart-issue-lateness', d.issue_lateness, OU, 'issue lateness', { what: 'queries' });
    if (d.delivery_lag) histogram('chart-delivery-lag', d.delivery_lag, OU, 'delivery lag', { what: 'queries' });
  }

${POWER_CHART_JS}
${TOKEN_CHART_JS}
  window.addEventListener('resize', function () {
    charts.forEach(function (u) {
      var host = u.root.parentElement;
      // The chart's own width must not hold its box open: measure the box without it.
      u.root.style.display = 'none';
      var w = chartWidth(host);
      u.root.style.display = '';
      u.setSize({ width: w, height: u.height });
    });
  });
  document.body.setAttribute('data-charts', String(charts.length));
})();
`;
