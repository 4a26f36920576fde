// The dashboard's two charts, drawn with uPlot (canvas, ~50 KB, fast with thousands of points).
import uPlot from 'uplot';

const BLUE = '#2456d6';
const BAND = 'rgba(36, 86, 214, 0.13)';
const ORANGE = '#d9822b';
const RED = '#c8362d';
const GREY = '#5d6678';

const charts = new Map();

function place(el, opts, data) {
  charts.get(el)?.destroy();
  el.replaceChildren();
  const chart = new uPlot({ width: Math.max(320, el.clientWidth), height: 340, ...opts }, data, el);
  charts.set(el, chart);
  return chart;
}

// Keeps every chart as wide as its box.
let resizeTimer;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    for (const [el, chart] of charts) chart.setSize({ width: Math.max(320, el.clientWidth), height: 340 });
  }, 100);
});

const percent = (u, values) => values.map((v) => `${Math.round(v * 100)}%`);
const dots = (color, size = 9) => ({ paths: () => null, stroke: color, fill: color, points: { show: true, size, fill: color } });
const hidden = { stroke: 'transparent', points: { show: false }, spanGaps: true };

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
export function scatterChart(el, { method, labeled, unlabeled, grid, level }) {
  const data = merge([
    labeled.map((s) => ({ x: s.x, y: s.y })),
    unlabeled.map((s) => ({ x: s.x, y: s.y })),
    grid.map((g) => ({ x: g.x, y: g.fit })),
    grid.map((g) => ({ x: g.x, y: g.hi })),
    grid.map((g) => ({ x: g.x, y: g.lo })),
  ]);
  const names = new Map([...labeled, ...unlabeled].map((s) => [s.x, s.name]));
  return place(el, {
    title: `${method}: score vs true accuracy`,
    scales: { x: { time: false }, y: { range: (u, lo, hi) => [Math.max(0, Math.min(lo, 1) - 0.05), Math.min(1, hi + 0.05)] } },
    axes: [{ label: `${method} score`, stroke: GREY }, { label: 'accuracy', values: percent, stroke: GREY }],
    legend: { live: false },
    series: [
      { label: 'score', value: (u, v) => (v == null ? '' : `${v.toPrecision(4)}${names.has(v) ? ` (${names.get(v)})` : ''}`) },
      { label: 'labeled set (true accuracy)', ...dots(BLUE) },
      { label: 'unlabeled set (estimate)', ...dots(ORANGE, 10) },
      { label: 'fitted line', stroke: BLUE, width: 2, spanGaps: true, points: { show: false } },
      { label: `${Math.round(level * 100)}% prediction band`, ...hidden },
      { label: '', ...hidden },
    ],
    bands: [{ series: [4, 5], fill: BAND }],
  }, data);
}

// Estimated accuracy (or the score, without a calibration) per chunk of rows, the interval as a
// band, the alert threshold, and the chunks below it in red.
export function timelineChart(el, { chunks, threshold, yLabel, withBand }) {
  const xs = chunks.map((c) => c.first);
  const ys = chunks.map((c) => c.y);
  const series = [
    { label: 'first row' },
    { label: yLabel, stroke: BLUE, width: 2, points: { show: true, size: 5, fill: BLUE } },
    { label: `below ${threshold}`, ...dots(RED, 9) },
    { label: 'alert threshold', stroke: RED, width: 1, dash: [6, 4], points: { show: false } },
  ];
  const data = [xs, ys, ys.map((y) => (y < threshold ? y : null)), xs.map(() => threshold)];
  const opts = {
    scales: { x: { time: false } },
    axes: [{ label: 'row', stroke: GREY }, { label: yLabel, stroke: GREY, ...(withBand ? { values: percent } : {}) }],
    legend: { live: false },
    series,
  };
  if (withBand) {
    series.push({ label: 'interval', ...hidden }, { label: '', ...hidden });
    data.push(chunks.map((c) => c.hi), chunks.map((c) => c.lo));
    opts.bands = [{ series: [4, 5], fill: BAND }];
  }
  return place(el, opts, data);
}
