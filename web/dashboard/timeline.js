// The timeline: all sets in order, or one file in chunks, each point an estimate (or a score),
// with the core's alert line and too-small warning.
import { timelineChart } from './charts.js';
import { $, el, hideProgress, pct, setStatus, showError, showProgress, summaryText } from './page.js';
import { ALL_SETS, LEVEL, options, state, valueOf, worker } from './state.js';

export async function buildTimeline() {
  if ($('timeline-file').value === ALL_SETS) {
    state.timeline = { kind: 'sets' };
    drawTimeline();
    return;
  }
  const set = state.sets.find((s) => s.name === $('timeline-file').value);
  const rows = Math.floor(Number($('chunk-rows').value));
  if (!set) return;
  if (!(rows >= 2)) {
    showError('rows per chunk must be a whole number >= 2');
    return;
  }
  setStatus(`Building the timeline of ${set.name}…`, true);
  try {
    const label = `Timeline of ${set.name}, ${rows} rows per chunk`;
    // scored as the calibration's sets were, so that each chunk's estimate has its score's own uncertainty
    const how = state.calibration ? { calibration: state.calibration } : options();
    const { result } = await worker.scoreFile(set.file, how, {
      labels: set.labels,
      labelColumn: set.labelColumn,
      chunkResults: rows,
      onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total),
    });
    const chunks = [];
    for (const c of result.chunks) {
      chunks.push({ ...c, prediction: state.calibration ? await worker.predict(state.calibration, c.result, { level: LEVEL }) : undefined });
    }
    state.timeline = { kind: 'file', name: set.name, chunkRows: rows, chunks };
    drawTimeline();
  } catch (e) {
    showError(e.message);
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}

// The points of the timeline for method m: { label, first, rows, y, lo?, hi?, se? }, as estimated
// accuracies when the calibration has m, else as scores.
function timelinePoints(t, m, withBand) {
  const point = (label, first, rows, result, prediction) => {
    const p = prediction?.methods?.[m];
    return withBand && p ? { label, first, rows, y: p.accuracy, lo: p.interval[0], hi: p.interval[1], se: p.se, slope: p.slope }
      : { label, first, rows, y: valueOf(result, m) ?? null };
  };
  if (t.kind === 'sets') {
    // a labeled set calibrated here is a point of its true accuracy (`truth`; one read with a
    // calibration file has both: the estimate is shown, as for any other set)
    return state.sets.map((s, i) => (withBand && !state.loaded && s.result.accuracy !== undefined
      ? { label: s.name, truth: true, first: i, rows: s.result.n, y: s.result.accuracy, lo: s.result.accuracy, hi: s.result.accuracy }
      : point(s.name, i, s.result.n, s.result, s.prediction)));
  }
  return t.chunks.map((c) => point(`rows ${c.first.toLocaleString()}–${(c.first + c.rows - 1).toLocaleString()}`, c.first, c.rows,
    c.result, c.prediction));
}

// The words for the core's too-small warning (src/mano/workflow/monitoring.hpp, monitor().noise).
function noiseText(noise, m) {
  return `${state.timeline.kind === 'sets' ? 'these sets are' : `chunks of ${noise.rows.toLocaleString()} rows are`} small for ${m}: ` +
    `the score's sampling noise alone moves the estimate by ±${pct(noise.half_width)} (90%); about ${noise.rows_needed.toLocaleString()} ` +
    `rows per point bring it to ±${pct(noise.limit)}`;
}

// The alert line (from the reference period, else the value given), the points below it and the
// too-small warning are the core's monitoring rules (src/mano/workflow/monitoring.hpp, run in the Worker);
// the page draws them and says them in words.
export async function drawTimeline() {
  const t = state.timeline;
  const m = state.method;
  const withBand = Boolean(state.calibration?.methods?.[m]);
  const points = timelinePoints(t, m, withBand);
  const reference = Math.floor(Number($('reference').value)) || 0;
  const unit = t.kind === 'sets' ? 'set' : 'chunk';
  const alerts = [];
  let threshold = null;
  let thresholdText = 'no alert line: a score is not an accuracy (add three or more labeled sets, or a calibration file, to calibrate it)';
  if (withBand) {
    // each point's noise through its prediction's own slope (the line's slope at its score)
    let assessment;
    try {
      assessment = await worker.monitor(points.map((p) => ({ estimate: p.y, se: p.se, slope: p.slope, rows: p.rows })),
        reference > 0 ? { reference } : { threshold: Number($('threshold').value) });
    } catch (e) {
      showError(`timeline: ${e.message}`);
      return;
    }
    if (state.timeline !== t || state.method !== m) return;  // drawn again meanwhile
    const line = assessment.threshold;
    threshold = line.value ?? null;
    thresholdText = assessment.waiting
      ? `not enough points yet: every point is in the reference period of ${line.reference}; later points are compared with its alert line`
      : line.reference > 0
      ? `reference: the first ${line.reference} points, mean ${pct(line.mean)}, standard deviation ${pct(line.sd)}; ` +
        `alert below ${pct(line.value)} (mean − 3 sd)`
      : `alert below ${pct(line.value)} (the value given)`;
    const below = assessment.alerts.map((i) => points[i]);
    if (!assessment.waiting) alerts.push({ alert: below.length > 0,
      text: below.length ? `${below.length} ${unit}${below.length === 1 ? '' : 's'} below ${pct(threshold)}: ` +
        `${below.slice(0, 8).map((p) => `${p.label} (${p.truth ? 'true accuracy ' : ''}${pct(p.y)})`).join(', ')}${below.length > 8 ? ', …' : ''}`
        : `no ${unit} below ${pct(threshold)}` });
    if (assessment.noise) alerts.push({ alert: false, text: `⚠ ${noiseText(assessment.noise, m)}` });
  }
  const what = t.kind === 'sets' ? `all ${points.length} sets in order` : `${t.name}: ${points.length} chunks of ${t.chunkRows} rows`;
  const truths = points.filter((p) => p.truth).length;
  const note = `${what}, ${withBand ? `estimated accuracy by ${m} with its ${Math.round(LEVEL * 100)}% interval` : `${m} score (no calibration for it)`}` +
    `${truths ? ` (the ${truths} labeled set${truths === 1 ? '' : 's'}: true accuracy)` : ''}; ` +
    `${thresholdText}.`;
  t.view = { method: m, threshold, reference, points, alerts: alerts.map((a) => a.text) };
  $('timeline-note').textContent = note;
  $('timeline-alerts').replaceChildren(...alerts.map((a) => el('li', { className: a.alert ? 'alert' : '', textContent: a.text })));
  timelineChart($('timeline'), {
    points, threshold, reference, withBand, unit,
    yLabel: !withBand ? `${m} score` : truths ? 'accuracy' : `estimated accuracy (${m})`, estimateLabel: `estimated accuracy (${m})`, alt: `${note} ${alerts.map((a) => a.text).join('. ')}`,
  });
}
