/**
 * The chart toolkit inside report.html (plain ES5-style JavaScript kept as a
 * string, run in the viewer's browser): plot() lays out a uPlot chart so
 * that no text meets another or the data. Axes are as wide as their tick
 * labels (the title beside them, never on them); tick labels are thinned
 * until none overlaps and none is cut at the edge; marker labels sit outside
 * the plot area: a vertical marker's above it (one row, or a row each when
 * two would meet), a horizontal marker's in a gutter on the right; a marker
 * beyond the axis is said in a note under the chart instead. histogram() and
 * tail() draw a distribution (ReportDistribution: ns; SutDistribution:
 * values) as bins and as its tail, 1 - p on a log axis from p50 to p99.99.
 */
export const CHART_TOOLKIT_JS = String.raw`
  var COLORS = { main: '#2563eb', second: '#16a34a', third: '#dc2626', mark: '#dc2626', target: '#9333ea' };
  var FAMILY = 'system-ui, -apple-system, "Segoe UI", sans-serif';
  var TICK_FONT = '12px ' + FAMILY;
  var TITLE_FONT = 'bold 12px ' + FAMILY;
  var MARK_FONT = '12px ' + FAMILY;
  var ROW = 16;        // one row of marker labels above the plot (CSS px)
  var RIGHT = 22;      // the plot's right margin without a gutter: room for half a tick label
  var charts = [];
  var measurer = document.createElement('canvas').getContext('2d');

  function textWidth(text, font) {
    measurer.font = font;
    return measurer.measureText(text).width;
  }

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

  function trimZeros(s) { return s.indexOf('.') < 0 ? s : s.replace(/\.?0+$/, ''); }

  // A tick's text: separators below 100,000, then k, M, G; as many decimals as the step between ticks needs.
  function tickText(v, step) {
    if (v == null || !isFinite(v)) return null;
    if (v === 0) return '0';
    var a = Math.abs(v);
    var big = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    if (a >= 1e5) {
      for (var i = 0; i < big.length; i++) {
        if (a >= big[i][0]) return trimZeros((v / big[i][0]).toPrecision(4)) + big[i][1];
      }
    }
    var decimals = step > 0 ? Math.max(0, Math.min(9, -Math.floor(Math.log10(step) + 1e-9))) : 0;
    return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  }

  // A tick of a log axis of durations, in its own unit: "500 ns", "2 µs", "10 ms" (the axis spans several).
  function durationTick(ns) {
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs']];
    for (var i = 0; i < units.length; i++) {
      if (ns >= units[i][0] * (1 - 1e-9)) return trimZeros((ns / units[i][0]).toPrecision(3)) + ' ' + units[i][1];
    }
    return trimZeros(ns.toPrecision(3)) + ' ns';
  }
  // The axis of a distribution's values. Durations on a log scale: each tick says its unit, the
  // title none; on a linear one the title says it. Token counts: plain numbers.
  function durationAxis(label, unit, log, extra) {
    var tokens = unit.name === 'tokens';
    var spec = { label: tokens || log ? label : label + ' (' + unit.name + ')', log: log };
    if (log && !tokens) spec.text = function (v) { return durationTick(v * unit.div); };
    return Object.assign(spec, extra || {});
  }

  // A figure in a legend or a note: 4 significant digits, whole numbers as they are.
  function fmt(v) {
    if (v == null || !isFinite(v)) return '-';
    if (Math.abs(v) >= 1000 || v === Math.round(v)) return Math.round(v).toLocaleString('en-US');
    return trimZeros(v.toPrecision(4));
  }

  function pxRatio() { return window.devicePixelRatio || 1; }

  // Tick labels kept where they fit: in rank order (lower first), none within 8 px
  // of a kept one, none cut at the chart's edge. Splits without a label keep their grid line.
  function thin(u, axisIdx, splits, texts, rank) {
    var axis = u.axes[axisIdx];
    var across = axis.side % 2 === 0;
    var plotStart = across ? u.bbox.left / pxRatio() : u.bbox.top / pxRatio();
    var order = splits.map(function (_, i) { return i; });
    if (rank) order.sort(function (a, b) { return rank(splits[a]) - rank(splits[b]) || a - b; });
    var kept = [];
    var out = texts.map(function () { return null; });
    order.forEach(function (i) {
      var text = texts[i];
      if (text == null) return;
      var at = plotStart + u.valToPos(splits[i], axis.scale);
      if (!isFinite(at)) return;
      var half = across ? textWidth(text, TICK_FONT) / 2 : 7;
      if (across && (at - half < 1 || at + half > u.width - 1)) return;
      for (var k = 0; k < kept.length; k++) {
        if (at - half < kept[k][1] + 8 && at + half > kept[k][0] - 8) return;
      }
      kept.push([at - half, at + half]);
      out[i] = text;
    });
    return out;
  }

  // Splits of a log axis within [min, max]: 1-9 x 10^k where a decade is 150 px or more,
  // 1, 2, 5 x 10^k down to 50 px, 1 and 3 below; labels ranked 1, 5, 2, then the rest.
  function logSplits(u, axisIdx, min, max) {
    var out = [];
    if (!(min > 0) || !(max > min)) return [min];
    var across = u.axes[axisIdx].side % 2 === 0;
    var length = (across ? u.bbox.width : u.bbox.height) / pxRatio();
    var decade = length / Math.max(0.3, Math.log10(max / min));
    var mantissas = !(decade > 0) || decade >= 150 ? [1, 2, 3, 4, 5, 6, 7, 8, 9] : decade >= 50 ? [1, 2, 5] : [1, 3];
    for (var e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
      for (var j = 0; j < mantissas.length; j++) {
        var m = mantissas[j];
        var v = +(m * Math.pow(10, e)).toPrecision(12);
        if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) out.push(v);
      }
    }
    return out;
  }
  function logRank(v) {
    var m = Math.round(v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9)));
    return m === 1 ? 0 : m === 5 ? 1 : m === 2 ? 2 : 3;
  }

  // An axis as wide as its labels: ticks, then the labels, then the title beside them.
  function axisOf(spec, side) {
    var across = side % 2 === 0;
    var a = {
      side: side,
      label: spec.label,
      font: TICK_FONT,
      labelFont: TITLE_FONT,
      labelSize: 18,
      labelGap: 0,
      gap: 5,
      ticks: { size: 6 },
      size: function (u, values) {
        if (across) return 6 + 5 + 16;
        var widest = 0;
        (values || []).forEach(function (t) { if (t != null) widest = Math.max(widest, textWidth(String(t), TICK_FONT)); });
        return Math.ceil(6 + 5 + Math.max(widest, 8) + 6);
      }
    };
    // Every split reaches values() (uPlot's log filter would blank some): thin() picks the labels.
    a.filter = function (u, splits) { return splits; };
    if (spec.log) a.splits = logSplits;
    if (spec.splits) a.splits = spec.splits;
    a.values = function (u, splits, axisIdx, space, incr) {
      var texts = splits.map(function (v) {
        return spec.text ? spec.text(v) : tickText(v, spec.log ? v : incr);
      });
      return thin(u, axisIdx, splits, texts, spec.rank || (spec.log ? logRank : null));
    };
    return a;
  }

  // Where the vertical markers' labels go: x, the label's left edge and width (CSS px from the canvas' left).
  function placeVertical(u, marks) {
    var left = u.bbox.left / pxRatio(), right = left + u.bbox.width / pxRatio();
    return marks.map(function (m) {
      var x = left + u.valToPos(m.x, 'x');
      var w = textWidth(m.label, MARK_FONT);
      var at = x + 4 + w <= right ? x + 4 : x - 4 - w;
      return { x: x, left: Math.max(left, at), width: w };
    });
  }
  // One row when no two labels come within 24 px of each other, else a row each.
  function rowsFor(places) {
    for (var i = 0; i < places.length; i++) {
      for (var j = i + 1; j < places.length; j++) {
        var a = places[i], b = places[j];
        if (a.left < b.left + b.width + 24 && b.left < a.left + a.width + 24) return places.length;
      }
    }
    return places.length > 0 ? 1 : 0;
  }

  function inRange(u, key, v) {
    var s = u.scales[key];
    return s.min != null && v >= s.min && v <= s.max;
  }

  // A note under the chart (a marker beyond the axis, values the axis cannot show).
  function note(host, text) {
    var p = document.createElement('p');
    p.className = 'muted chart-note';
    p.textContent = text;
    host.parentNode.appendChild(p);
  }

  /**
   * c: { height, x: {label, log, range, legend}, y: {label, log, range, splits, text, rank},
   *      series: [uPlot series], data: [xs, ys...], vmarks: [{x, label, color}],
   *      hmarks: [{y, label, color}], bands, drawClear(u) }
   */
  function plot(id, c) {
    var host = document.getElementById(id);
    if (!host) return null;
    var vmarks = (c.vmarks || []).filter(function (m) { return m.x != null && isFinite(m.x); });
    var hmarks = (c.hmarks || []).filter(function (m) { return m.y != null && isFinite(m.y); });
    var gutter = 0;
    hmarks.forEach(function (m) { gutter = Math.max(gutter, textWidth(m.label, MARK_FONT) + 12); });
    var rows = vmarks.length;
    function shownV(u) { return vmarks.filter(function (m) { return inRange(u, 'x', m.x); }); }
    function scale(spec) {
      var s = spec.log ? { distr: 3, log: 10 } : {};
      if (spec.range) s.range = spec.range;
      return s;
    }
    var xs = scale(c.x);
    xs.time = false;
    var opts = {
      width: chartWidth(host),
      height: c.height || 250,
      legend: { show: true },
      scales: { x: xs, y: scale(c.y) },
      padding: [
        function (u) {
          if (vmarks.length === 0 || u.scales.x.min == null) return vmarks.length > 0 ? vmarks.length * ROW + 8 : 10;
          rows = rowsFor(placeVertical(u, shownV(u)));
          return Math.max(10, rows * ROW + 8);
        },
        Math.max(RIGHT, gutter),
        null,
        null
      ],
      axes: [axisOf(c.x, 2), axisOf(c.y, 3)],
      series: [{ label: c.x.label, value: c.x.legend || function (u, v) { return v == null ? '-' : fmt(v); } }].concat(c.series),
      hooks: {
        drawClear: c.drawClear ? [c.drawClear] : [],
        draw: [function (u) { drawMarks(u, shownV(u), hmarks, rows); }]
      }
    };
    if (c.bands) opts.bands = c.bands;
    var u = new uPlot(opts, c.data, host);
    charts.push(u);
    host.setAttribute('data-rendered', '1');
    return u;
  }

  // Dashed marker lines in the plot; their labels above it (vertical) or in the right gutter (horizontal).
  function drawMarks(u, vmarks, hmarks, rows) {
    var ctx = u.ctx;
    var pr = pxRatio();
    var left = u.bbox.left, top = u.bbox.top, right = left + u.bbox.width, bottom = top + u.bbox.height;
    ctx.save();
    ctx.lineWidth = 1.5 * pr;
    ctx.setLineDash([6 * pr, 4 * pr]);
    ctx.font = (12 * pr) + 'px ' + FAMILY;
    var places = placeVertical(u, vmarks);
    var oneRow = rows <= 1;
    vmarks.forEach(function (m, i) {
      var x = Math.round(places[i].x * pr);
      ctx.strokeStyle = m.color;
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
      ctx.fillStyle = m.color;
      ctx.textBaseline = 'bottom';
      ctx.textAlign = 'left';
      var row = oneRow ? 0 : vmarks.length - 1 - i;
      ctx.fillText(m.label, places[i].left * pr, top - (4 + row * ROW) * pr);
    });
    var labels = [];
    hmarks.forEach(function (m) {
      if (!inRange(u, m.scale || 'y', m.y)) return;
      var y = Math.round(u.valToPos(m.y, m.scale || 'y', true));
      ctx.strokeStyle = m.color;
      ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(right, y); ctx.stroke();
      labels.push({ y: y, m: m });
    });
    // Gutter labels at their line's height, pushed apart when two would meet.
    labels.sort(function (a, b) { return a.y - b.y; });
    var last = -Infinity;
    labels.forEach(function (l) {
      var y = Math.max(l.y, last + ROW * pr);
      last = y;
      ctx.fillStyle = l.m.color;
      ctx.textBaseline = 'middle';
      ctx.textAlign = 'left';
      ctx.fillText(l.m.label, right + 6 * pr, y);
    });
    ctx.restore();
  }

  // Points on a line when it has few values, or one with no neighbour (which would draw nothing).
  function pointsFor(values, size) {
    var shown = 0, lone = false;
    for (var i = 0; i < values.length; i++) {
      if (values[i] == null) continue;
      shown++;
      if ((i === 0 || values[i - 1] == null) && (i === values.length - 1 || values[i + 1] == null)) lone = true;
    }
    return { show: lone || shown <= 60, size: size || 6 };
  }

  function labelled(v, unit) { return fmt(v) + ' ' + unit.name; }
  function singular(noun) { return noun === 'queries' ? 'query' : noun.replace(/s$/, ''); }
  function counted(n, noun) { return n.toLocaleString('en-US') + ' ' + (n === 1 ? singular(noun) : noun); }

  // The x range of a distribution's chart: its data, and each marker that leaves the data a third
  // of the axis or more, on its scale (a farther one would squash the data: said in a note instead).
  function spanWith(lo, hi, marks, host, what, log) {
    var out = [];
    var far = function (a, b) { return log ? Math.log(b / a) : b - a; };
    marks.forEach(function (m) {
      var inLog = !log || m.x > 0;
      var nlo = Math.min(lo, m.x), nhi = Math.max(hi, m.x);
      if (inLog && far(nlo, nhi) <= 3 * far(lo, hi)) {
        hi = Math.max(hi, m.x * 1.04);
        lo = Math.min(lo, m.x * 0.96);
        out.push(m);
      } else if (host) {
        note(host, (m.name || m.label) + ' is ' + (m.x > hi ? 'beyond' : 'below') + ' every ' + what + ' (the ' + (m.x > hi ? 'largest' : 'smallest') + ': ' +
          (m.x > hi ? m.largest : m.smallest) + '); not drawn.');
      }
    });
    return { lo: lo, hi: hi, marks: out };
  }

  // A distribution's range, ±5 % around its one value when every value is the same.
  function rangeOf(dist, lo, hi, unit, marks, host, what, log) {
    var one = dist.min === dist.max;
    if (one) {
      var v = dist.min / unit.div;
      lo = v > 0 ? v * 0.95 : -1;
      hi = v > 0 ? v * 1.05 : 1;
    }
    else if (hi > lo) hi += (hi - lo) * 0.02;  // room for the last step's drop at the edge
    var named = marks.map(function (m) {
      return Object.assign({ largest: labelled(dist.max / unit.div, unit), smallest: labelled(dist.min / unit.div, unit) }, m);
    });
    var span = spanWith(lo, hi, named, host, singular(what), log && !one);
    span.one = one;
    return span;
  }

  /**
   * A histogram (a filled step line over the bins' edges; log bins on a log axis).
   * o: { what: 'samples', marks: [{x, label, color}] } (x in the unit).
   */
  function histogram(id, dist, unit, label, o) {
    var host = document.getElementById(id);
    if (!host || !dist || dist.count === 0) return;
    o = o || {};
    var what = o.what || 'samples';
    var marks = o.marks || [];
    if (dist.min === dist.max && unit.name !== 'tokens' && dist.min > 0) {
      // One value: the unit that value reads best in (the caller's fits a whole family of charts).
      var own = unitOf(dist.min);
      marks = marks.map(function (m) { return Object.assign({}, m, { x: m.x * unit.div / own.div }); });
      unit = own;
    }
    var h = dist.histogram;
    var log = h.scale === 'log';
    var xs = h.edges.map(function (e) { return e / unit.div; });
    var ys = h.counts.concat([0]);
    var hi = xs[xs.length - 1];
    var span = rangeOf(dist, xs[0], hi, unit, marks, host, what, log);
    if (span.one) {
      // One value: a bar of the axis' 1 % at it (its bin is 1 ns wide, too thin to see).
      var v = dist.min / unit.div, w = (span.hi - span.lo) / 200;
      xs = [v - w, v + w];
      ys = [dist.count, 0];
      log = false;
      note(host, (dist.count === 1 ? 'The one ' + singular(what) : 'Every one of the ' + counted(dist.count, what)) + ': ' + labelled(v, unit) + '.');
    }
    if (h.above > 0) note(host, counted(h.above, what) + ' above ' + labelled(hi, unit) + ' (beyond p99.9, up to ' + labelled(dist.max / unit.div, unit) + '): not drawn.');
    if (h.zeros > 0) note(host, counted(h.zeros, what) + ' at 0 (' + fmt(100 * h.zeros / dist.count) + ' %): not on the log axis.');
    plot(id, {
      height: o.height,
      x: durationAxis(label, unit, log, { range: function () { return [span.lo, span.hi]; },
           legend: function (u, v) { return v == null ? '-' : labelled(v, unit); } }),
      y: { label: what, range: function (u, min, max) { return [0, Math.max(1, max) * 1.05]; } },
      series: [{ label: what, stroke: COLORS.main, fill: 'rgba(37,99,235,0.25)', width: 1,
                 paths: uPlot.paths.stepped({ align: 1 }), points: { show: false },
                 value: function (u, v) { return v == null ? '-' : v.toLocaleString('en-US'); } }],
      data: [xs, ys],
      vmarks: span.marks
    });
  }

  var TAIL_TICKS = [[0.5, 'p50'], [0.1, 'p90'], [0.05, 'p95'], [0.03, 'p97'], [0.01, 'p99'], [0.001, 'p99.9'], [0.0001, 'p99.99']];
  var MLPERF_PERCENTILES = [0.5, 0.9, 0.95, 0.97, 0.99, 0.999];

  function percentileText(p) { return 'p' + trimZeros((100 * p).toFixed(4)); }

  /**
   * The tail: the value at each percentile p from p50 to p99.99, with 1 - p on
   * a log axis (p50 at the top), the percentiles MLPerf reports as dots.
   * o: { what, target (fraction, 0: none), marks: [{x, label, color}] }.
   */
  function tail(id, dist, values, unit, label, o) {
    var host = document.getElementById(id);
    if (!host || !dist || dist.count === 0) return;
    o = o || {};
    var what = o.what || 'samples';
    var xs = [], curve = [], dots = [];
    for (var i = 0; i < dist.p.length; i++) {
      var p = dist.p[i];
      if (p < 0.5 - 1e-12 || 1 - p < 1e-4 - 1e-12) continue;
      xs.push(values[i] / unit.div);
      curve.push(1 - p);
      var mlperf = MLPERF_PERCENTILES.some(function (q) { return Math.abs(q - p) < 1e-9; });
      dots.push(mlperf ? 1 - p : null);
    }
    if (xs.length === 0) return;
    // A log axis as the histogram's, unless the tail spans less than a factor of 10 (a log axis would
    // have a tick or two), or the median is 0 (half the gaps of a stream can be).
    var log = dist.histogram.scale === 'log' && xs[0] > 0 && xs[xs.length - 1] >= 10 * xs[0];
    var span = rangeOf(dist, xs[0], xs[xs.length - 1], unit, o.marks || [], host, what, log);
    if (span.one) log = false;
    var n = dist.count;
    if (n < 1e4) {
      note(host, 'Grey: beyond one ' + singular(what) + ' in ' + n.toLocaleString('en-US') + ' (the run\'s count); every percentile there is the largest, ' + labelled(dist.max / unit.div, unit) + '.');
    }
    var hmarks = o.target > 0 && o.target < 1 ? [{ y: 1 - o.target, label: 'target ' + percentileText(o.target), color: COLORS.target }] : [];
    plot(id, {
      height: o.height || 270,
      x: durationAxis(label, unit, log, { range: function () { return [span.lo, span.hi]; },
           legend: function (u, v) { return v == null ? '-' : labelled(v, unit); } }),
      y: { label: 'percentile', log: true, range: function () { return [1e-4, 0.5]; },
           splits: function () { return TAIL_TICKS.map(function (t) { return t[0]; }); },
           text: function (v) {
             for (var k = 0; k < TAIL_TICKS.length; k++) if (Math.abs(TAIL_TICKS[k][0] - v) < 1e-12) return TAIL_TICKS[k][1];
             return null;
           },
           rank: function (v) { return [0.5, 0.01, 0.001, 0.0001, 0.1, 0.05, 0.03].indexOf(v); } },
      series: [
        // Steps: the share of slower samples holds between two values and drops at each.
        { label: 'percentile', stroke: COLORS.main, width: 2, points: { show: false }, paths: uPlot.paths.stepped({ align: 1 }),
          value: function (u, v) { return v == null ? '-' : percentileText(1 - v); } },
        { label: 'MLPerf percentiles', stroke: COLORS.main, fill: '#fff', width: 0, paths: function () { return null; },
          points: { show: true, size: 7, width: 2, stroke: COLORS.main, fill: '#fff' },
          value: function (u, v) { return v == null ? '' : percentileText(1 - v); } }
      ],
      data: [xs, curve, dots],
      vmarks: span.marks,
      hmarks: hmarks,
      drawClear: n < 1e4 ? function (u) {
        var y = u.valToPos(1 / n, 'y', true);
        var bottom = u.bbox.top + u.bbox.height;
        if (!(y < bottom)) return;
        u.ctx.save();
        u.ctx.fillStyle = 'rgba(107,114,128,0.14)';
        u.ctx.fillRect(u.bbox.left, Math.max(u.bbox.top, y), u.bbox.width, bottom - Math.max(u.bbox.top, y));
        u.ctx.restore();
      } : null
    });
  }
`;
