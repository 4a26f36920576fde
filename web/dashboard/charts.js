// The dashboard's two charts, drawn with uPlot (canvas, ~50 KB, fast with thousands of points).
import uPlot from 'uplot';

const BLUE = '#2456d6';
const BAND = 'rgba(36, 86, 214, 0.13)';
const ORANGE = '#d9822b';
const RED = '#c8362d';
const GREY = '#5d6678';
const GREEN = '#2a7d4f';

const charts = new Map();
// As wide as its box (at least 240 px: a phone's panel is about 330 px wide).
const chartWidth = (el) => Math.max(240, el.clientWidth);

// A chart in `el`: `alt` is its text alternative (the box is an image to assistive technology,
// and the numbers are in the tables beside it); `describe(i)` names the data point at index i,
// shown in a tooltip at the cursor.
function place(el, opts, data, { alt, describe }) {
  charts.get(el)?.destroy();
  el.replaceChildren();
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', alt);
  const chart = new uPlot({ width: chartWidth(el), height: 340, ...opts, legend: { ...opts.legend, markers },
    plugins: [tooltip(describe)] }, data, el);
  charts.set(el, chart);
  return chart;
}

// The point under the cursor, named: which set a dot is, which rows a chunk holds.
function tooltip(describe) {
  let box;
  return {
    hooks: {
      init: (u) => {
        box = document.createElement('div');
        box.className = 'chart-tip';
        box.dataset.testid = 'chart-tip';
        box.hidden = true;
        u.over.append(box);
      },
      setCursor: (u) => {
        const i = u.cursor.idx;
        const text = i == null ? null : describe(i);
        box.hidden = !text;
        if (!text) return;
        box.textContent = text;
        const x = u.valToPos(u.data[0][i], 'x');
        box.style.left = `${Math.min(x + 10, u.over.clientWidth - box.offsetWidth - 4)}px`;
        box.style.top = `${Math.max(0, u.cursor.top - 30)}px`;
      },
    },
  };
}

// Keeps every chart as wide as its box.
let resizeTimer;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    for (const [el, chart] of charts) chart.setSize({ width: chartWidth(el), height: 340 });
  }, 100);
});

const percent = (u, values) => values.map((v) => `${Math.round(v * 100)}%`);
const dots = (color, size = 9) => ({ paths: () => null, stroke: color, fill: color, points: { show: true, size, fill: color } });
const hidden = { stroke: 'transparent', points: { show: false }, spanGaps: true };
// A band's upper edge: an invisible line (the band between it and the lower edge is the fill),
// whose legend swatch is the band's colour (legendFill, read by the markers below).
const bandEdge = { ...hidden, legendFill: BAND };
const markers = {
  fill: (u, i) => {
    const s = u.series[i];
    if (s.legendFill) return s.legendFill;
    return typeof s.fill === 'function' ? s.fill(u, i) : s.fill ?? null;
  },
};

// One x axis for several series: the sorted union of their x values, each series null elsewhere.
function merge(columns) {
  const xs = [...new Set(columns.flatMap((c) => c.map((p) => p.x)))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = columns.map((c) => {
    const y = new Array(xs.length).fill(null);
    for (const p of c) y[index.get(p.x)] = p.y;
    return y;
  });
  return [xs, ...ys];
}

// Score (x) vs true accuracy (y) of the labeled sets, the fitted line with its prediction band,
// and the unlabeled sets placed on the line at their scores.
export function scatterChart(el, { method, branch, labeled, unlabeled, grid, level }) {
  const data = merge([
    labeled.map((s) => ({ x: s.x, y: s.y })),
    unlabeled.map((s) => ({ x: s.x, y: s.y })),
    grid.map((g) => ({ x: g.x, y: g.fit })),
    grid.map((g) => ({ x: g.x, y: g.hi })),
    grid.map((g) => ({ x: g.x, y: g.lo })),
  ]);
  const names = new Map([...labeled, ...unlabeled].map((s) => [s.x, s.name]));
  const pct = (v) => `${(100 * v).toFixed(1)}%`;
  const describe = (i) => {
    const [x, truth, estimate] = [data[0][i], data[1][i], data[2][i]];
    if (truth == null && estimate == null) return null;  // a point of the line, not a set
    return `${names.get(x)}: score ${x.toPrecision(4)}, ${truth != null ? `true accuracy ${pct(truth)}` : `estimate ${pct(estimate)}`}`;
  };
  const alt = `${method} score${branch ? ` on MaNo's ${branch} branch` : ''} against true accuracy: ${labeled.length} labeled sets with the line fitted on them and its ` +
    `${Math.round(level * 100)}% prediction band${unlabeled.length ? `, and ${unlabeled.length} unlabeled sets placed on the line at their scores` : ''}. ` +
    'The numbers are in the tables on this page.';
  return place(el, {
    title: `${method}: score vs true accuracy${branch ? ` (MaNo's ${branch} branch for every set)` : ''}`,
    scales: { x: { time: false }, y: { range: (u, lo, hi) => [Math.max(0, Math.min(lo, 1) - 0.05), Math.min(1, hi + 0.05)] } },
    axes: [{ label: `${method} score${branch ? ` (${branch})` : ''}`, stroke: GREY }, { label: 'accuracy', values: percent, stroke: GREY }],
    legend: { live: false },
    series: [
      { label: 'score', value: (u, v) => (v == null ? '' : `${v.toPrecision(4)}${names.has(v) ? ` (${names.get(v)})` : ''}`) },
      { label: 'labeled set (true accuracy)', ...dots(BLUE) },
      { label: 'unlabeled set (estimate)', ...dots(ORANGE, 10) },
      { label: 'fitted line', stroke: BLUE, width: 2, spanGaps: true, points: { show: false } },
      { label: `${Math.round(level * 100)}% prediction band`, ...bandEdge },
      { label: '', ...hidden },
    ],
    bands: [{ series: [4, 5], fill: BAND }],
  }, data, { alt, describe });
}

// The timeline: estimated accuracy (or the score, without a calibration) per point (a chunk of
// rows, or a set), the interval as a band, the alert threshold and the points below it in red;
// the reference period (its first `reference` points) in grey. Without a calibration (withBand
// false) it draws the raw score alone: no alert line, since a threshold on a score is not one on
// accuracy. A point with `truth` (a labeled set) is its true accuracy, drawn as a series of its own.
// The x scale reaches half a step past the first and last points, so that their tick labels are
// drawn whole.
export function timelineChart(el, { points, threshold, reference, yLabel, estimateLabel = yLabel, withBand, unit, alt }) {
  const xs = points.map((p) => p.first);
  const ys = points.map((p) => p.y);
  const truths = points.some((p) => p.truth);
  const series = [
    { label: unit === 'set' ? 'set' : 'first row' },
    { label: estimateLabel, stroke: BLUE, width: 2, spanGaps: true, points: { show: true, size: 5, fill: BLUE } },
  ];
  const data = [xs, truths ? points.map((p) => (p.truth ? null : p.y)) : ys];
  if (truths) {
    series.push({ label: 'true accuracy (labeled set)', ...dots(GREEN, 8) });
    data.push(points.map((p) => (p.truth ? p.y : null)));
  }
  const half = xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) / 2 : 0.5;
  const opts = {
    scales: { x: { time: false, range: (u, lo, hi) => [lo - half, hi + half] } },
    axes: [
      unit === 'set'
        ? { label: 'set, in the order added', stroke: GREY, incrs: [1], values: (u, splits) => splits.map((i) => points[i]?.label ?? '') }
        : { label: 'row', stroke: GREY },
      { label: yLabel, stroke: GREY, ...(withBand ? { values: percent } : {}) },
    ],
    legend: { live: false },
    series,
  };
  if (withBand) {
    const inReference = (i) => i < reference;
    series.push({ label: `below ${Math.round(threshold * 1000) / 10}%`, ...dots(RED, 9) },
      { label: 'alert threshold', stroke: RED, width: 1, dash: [6, 4], points: { show: false } });
    data.push(ys.map((y, i) => (!inReference(i) && y !== null && y < threshold ? y : null)), xs.map(() => threshold));
    if (reference > 0) {
      series.push({ label: `reference (first ${reference})`, ...dots(GREY, 8) });
      data.push(ys.map((y, i) => (inReference(i) ? y : null)));
    }
    // the band's edges last: the lower one is a helper kept out of the legend (style.css)
    series.push({ label: 'interval', ...bandEdge }, { label: '', ...hidden });
    data.push(points.map((p) => p.hi ?? null), points.map((p) => p.lo ?? null));
    opts.bands = [{ series: [series.length - 2, series.length - 1], fill: BAND }];
  }
  const describe = (i) => {
    const p = points[i];
    if (p.y == null) return `${p.label}: no value`;
    const where = unit === 'set' ? `${p.label}${p.truth ? ' (true accuracy)' : ''}` : `rows ${p.first.toLocaleString()}–${(p.first + p.rows - 1).toLocaleString()}`;
    return withBand ? `${where}: ${(100 * p.y).toFixed(1)}% [${(100 * p.lo).toFixed(1)}%, ${(100 * p.hi).toFixed(1)}%]` +
      `${i < reference ? ' (reference)' : p.y < threshold ? ' (below the alert line)' : ''}`
      : `${where}: score ${p.y.toPrecision(4)}`;
  };
  return place(el, opts, data, { alt, describe });
}
