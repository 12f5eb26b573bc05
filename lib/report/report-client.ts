/**
 * The script inside report.html that draws its charts with uPlot (inlined
 * next to it). Plain ES5-style JavaScript kept as a string: it runs in the
 * viewer's browser, not in Node. Reads the JSON in #report-data (built by
 * lib/report/report.ts) and marks each drawn chart with data-rendered="1".
 */
import { POWER_CHART_JS } from './energy-section.js';
import { TOKEN_CHART_JS } from './token-section.js';

export const REPORT_CLIENT_JS = String.raw`
(function () {
  'use strict';
  var R = JSON.parse(document.getElementById('report-data').textContent);
  var COLORS = { main: '#2563eb', second: '#16a34a', third: '#dc2626', mark: '#dc2626', target: '#9333ea' };
  var charts = [];

  // The width of the chart's box (a full row, or half of one in a .pair).
  function chartWidth(host) {
    var w = host && host.clientWidth > 0 ? host.clientWidth : 0;
    if (w === 0) {
      var main = document.querySelector('main');
      w = (main ? main.clientWidth : 900) - 16;
    }
    return Math.max(260, Math.min(1100, w));
  }

  // A display unit for ns values of this magnitude (as the page's server side picks them).
  function unitOf(maxNs) {
    if (maxNs >= 1e7) return { name: 'ms', div: 1e6 };
    if (maxNs >= 1e4) return { name: 'µs', div: 1e3 };
    return { name: 'ns', div: 1 };
  }

  // Dashed marker lines drawn by a uPlot draw hook: {x|y, label, color}.
  function markers(lines) {
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          var pr = window.devicePixelRatio || 1;
          ctx.save();
          ctx.lineWidth = 2 * pr;
          ctx.setLineDash([6 * pr, 4 * pr]);
          ctx.font = (11 * pr) + 'px sans-serif';
          var left = u.bbox.left, top = u.bbox.top, right = left + u.bbox.width, bottom = top + u.bbox.height;
          lines.forEach(function (m, i) {
            ctx.strokeStyle = m.color;
            ctx.fillStyle = m.color;
            if (m.x != null && isFinite(m.x)) {
              var x = u.valToPos(m.x, 'x', true);
              if (x < left || x > right) return;
              ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
              // Label beside the line, on its left when it is near the right edge.
              var w = ctx.measureText(m.label).width;
              var tx = x + 4 * pr + w > right ? x - 4 * pr - w : x + 4 * pr;
              ctx.fillText(m.label, tx, top + (14 + 14 * i) * pr);
            } else if (m.y != null && isFinite(m.y)) {
              var y = u.valToPos(m.y, m.scale || 'y', true);
              if (y < top || y > bottom) return;
              ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(right, y); ctx.stroke();
              // Near the top (a CDF's 99 %): under the line, where a CDF's left part is low.
              ctx.fillText(m.label, left + 6 * pr, y - top < 16 * pr ? y + 14 * pr : y - 4 * pr);
            }
          });
          ctx.restore();
        }]
      }
    };
  }

  function draw(id, opts, data) {
    var host = document.getElementById(id);
    if (!host) return;
    opts.width = chartWidth(host);
    opts.height = opts.height || 260;
    opts.legend = opts.legend || { show: true };
    var u = new uPlot(opts, data, host);
    charts.push(u);
    host.setAttribute('data-rendered', '1');
  }

  function xScale(log) {
    return log ? { time: false, distr: 3, log: 10 } : { time: false };
  }

  // A histogram as a filled step line over its bin edges (works on log axes too).
  function histogram(id, dist, unit, label, marks) {
    var h = dist.histogram;
    var xs = h.edges.map(function (e) { return e / unit.div; });
    var ys = h.counts.concat([0]);
    draw(id, {
      scales: { x: xScale(h.scale === 'log') },
      axes: [{ label: label + ' (' + unit.name + ')' }, { label: 'samples' }],
      series: [
        { label: label, value: function (u, v) { return v == null ? '-' : v.toPrecision(4) + ' ' + unit.name; } },
        { label: 'count', stroke: COLORS.main, fill: 'rgba(37,99,235,0.25)', width: 1,
          paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } }
      ],
      plugins: marks ? [markers(marks)] : []
    }, [xs, ys]);
  }

  var d = R.data && R.data.series;
  if (d) {
    var U = R.unit, OU = R.overheadUnit;
    var lat = R.scenario === 'MultiStream' && d.query_latency ? d.query_latency : d.sample_latency;
    var latMarks = [];
    if (R.targetPercentileLatencyNs > 0) {
      latMarks.push({ x: R.targetPercentileLatencyNs / U.div, color: COLORS.target,
        label: 'p' + R.targetPercentileLabel + ' = ' + (R.targetPercentileLatencyNs / U.div).toPrecision(4) + ' ' + U.name });
    }
    if (R.boundNs > 0) {
      latMarks.push({ x: R.boundNs / U.div, color: COLORS.mark,
        label: 'bound ' + (R.boundNs / U.div).toPrecision(4) + ' ' + U.name });
    }
    if (lat) {
      histogram('chart-latency-histogram', lat, U, 'latency', latMarks);
      var cdfMarks = latMarks.slice();
      if (R.targetPercentile > 0) {
        cdfMarks.push({ y: R.targetPercentile * 100, color: COLORS.target, label: 'target ' + R.targetPercentileLabel + '%' });
      }
      draw('chart-latency-cdf', {
        scales: { x: xScale(lat.histogram.scale === 'log'), y: { range: [0, 100] } },
        axes: [{ label: 'latency (' + U.name + ')' }, { label: 'percentile (%)' }],
        series: [
          { label: 'latency', value: function (u, v) { return v == null ? '-' : v.toPrecision(4) + ' ' + U.name; } },
          { label: 'percentile', stroke: COLORS.main, width: 2 }
        ],
        plugins: [markers(cdfMarks)]
      }, [lat.ns.map(function (v) { return Math.max(v, 1) / U.div; }), lat.p.map(function (p) { return p * 100; })]);
    }

    var tl = d.timeline;
    var ws = tl.window_ns / 1e9;
    var t = tl.issued_queries.map(function (_, i) { return (i + 1) * ws; });
    function perSecond(a) { return a.map(function (v) { return v / ws; }); }
    function scaled(a) { return a.map(function (v) { return v == null ? null : v / U.div; }); }
    draw('chart-qps-time', {
      scales: { x: { time: false } },
      axes: [{ label: 'time (s)' }, { label: 'per second' }],
      series: [
        { label: 'time (s)' },
        { label: 'issued queries/s', stroke: COLORS.main, width: 1.5 },
        { label: 'completed samples/s', stroke: COLORS.second, width: 1.5 }
      ]
    }, [t, perSecond(tl.issued_queries), perSecond(tl.completed_samples)]);
    draw('chart-latency-time', {
      scales: { x: { time: false } },
      axes: [{ label: 'completion time (s)' }, { label: 'latency (' + U.name + ')' }],
      series: [
        { label: 'time (s)' },
        { label: 'p50', stroke: COLORS.second, width: 1.5 },
        { label: 'p99', stroke: COLORS.main, width: 1.5 },
        { label: 'max', stroke: COLORS.third, width: 1 }
      ],
      plugins: R.boundNs > 0 ? [markers([{ y: R.boundNs / U.div, color: COLORS.mark, label: 'bound' }])] : []
    }, [t, scaled(tl.latency_p50_ns), scaled(tl.latency_p99_ns), scaled(tl.latency_max_ns)]);
    if (d.issue_lateness) histogram('chart-issue-lateness', d.issue_lateness, OU, 'issue lateness', null);
    if (d.delivery_lag) histogram('chart-delivery-lag', d.delivery_lag, OU, 'delivery lag', null);
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
