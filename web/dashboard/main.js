// The mano dashboard: logit files in, accuracy estimates out, all in a Worker on this machine.
import 'uplot/dist/uPlot.min.css';
import './style.css';

import { ManoWorker } from 'mano-score';
import ManoWorkerScript from 'mano-score/worker?worker';

import { scatterChart, timelineChart } from './charts.js';

const LEVEL = 0.9;
const METHOD_ORDER = ['mano', 'confscore', 'entropy', 'nuclear', 'mde', 'cot', 'atc_mc', 'atc_ne', 'doc', 'agreement',
  'dispersion', 'frechet', 'confscore_softrun', 'nuclear_softrun'];
const LABEL_COLUMNS = ['label', 'labels', 'target', 'y', 'class'];

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

const worker = new ManoWorker(new ManoWorkerScript());
const timelineHelp = $('timeline-note').textContent;

// sets: { name, file, labels?, labelColumn?, result, prediction? }, in the order they came.
const state = { sets: [], source: null, evaluation: null, calibration: null, method: 'mano', timeline: null };

const valueOf = (result, m) => result?.methods?.[m]?.score ?? result?.methods?.[m]?.accuracy;
const fmt = (x, digits = 4) => (x === undefined || x === null || Number.isNaN(x) ? '–' : Number(x).toFixed(digits));
const pct = (x) => (x === undefined || x === null ? '–' : `${(100 * x).toFixed(1)}%`);

// "contrast_0_logits.npy" and "contrast_0_labels.npy" -> "contrast_0"
function setName(fileName) {
  const stem = fileName.replace(/\.(npy|csv|tsv|safetensors)$/i, '');
  return stem.replace(/([_.-]?)(logits|labels?)([_.-]?)/i, (m, a, word, b) => (a && b ? a : '')) || stem;
}
const isLabelsFile = (f) => /labels?/i.test(f.name.replace(/\.(npy|safetensors)$/i, '')) && /\.(npy|safetensors)$/i.test(f.name);
const isSource = (name) => /^source/i.test(name);

function setStatus(text, busy) {
  const s = $('status');
  s.textContent = text;
  s.dataset.state = busy ? 'busy' : state.sets.length ? 'ready' : 'idle';
  for (const id of ['load-example', 'build-timeline', 'clear']) $(id).disabled = busy;
}

function showProgress(label, done, total) {
  const box = $('progress');
  box.hidden = false;
  box.querySelector('.fill').style.width = `${total ? (100 * done) / total : 0}%`;
  box.querySelector('.label').textContent = label;
}
const hideProgress = () => { $('progress').hidden = true; };

function showError(message) {
  const close = el('button', { type: 'button', textContent: '✕', title: 'dismiss' });
  const item = el('li', {}, el('span', { textContent: message }), close);
  close.onclick = () => item.remove();
  $('errors').append(item);
}

// The label column of a CSV, when its header has one of the usual names.
async function csvLabelColumn(file) {
  const head = await file.slice(0, 65536).text();
  const first = head.split(/\r?\n/).find((line) => line.trim() !== '') ?? '';
  const delimiter = /\.tsv$/i.test(file.name) ? '\t' : ',';
  const names = first.split(delimiter).map((f) => f.trim().replace(/^"|"$/g, '').toLowerCase());
  const i = names.findIndex((n) => LABEL_COLUMNS.includes(n));
  return i >= 0 ? first.split(delimiter)[i].trim().replace(/^"|"$/g, '') : undefined;
}

const options = () => (state.source ? { source: state.source } : {});

async function scoreSet(set, index, count) {
  const label = `Scoring ${set.name} (${index + 1} of ${count})`;
  showProgress(label, 0, 1);
  const { result } = await worker.scoreFile(set.file, options(), {
    labels: set.labels,
    labelColumn: set.labelColumn,
    onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total),
  });
  set.result = result;
}

async function addFiles(fileList) {
  const files = [...fileList];
  if (!files.length) return;
  const labelsFiles = new Map(files.filter(isLabelsFile).map((f) => [setName(f.name), f]));
  const logitsFiles = files.filter((f) => !isLabelsFile(f));
  setStatus('Working…', true);
  try {
    // The source set first: every set is scored with it (ATC, DoC).
    for (const f of logitsFiles.filter((f) => isSource(setName(f.name)))) {
      const labels = labelsFiles.get(setName(f.name));
      labelsFiles.delete(setName(f.name));
      if (!labels) {
        showError(`${f.name}: a source set needs its labels (${setName(f.name)}_labels.npy); it was skipped`);
        continue;
      }
      try {
        const [logits, y] = [await worker.read(f), await worker.read(labels)];
        if (y.dtype !== 'int32') throw new Error(`${labels.name}: labels must be integers`);
        state.source = { logits: logits.data, labels: y.data, dtype: logits.dtype };
        for (const s of state.sets) s.result = null;  // rescored with the source below
      } catch (e) {
        showError(e.message);
      }
    }
    for (const f of logitsFiles.filter((f) => !isSource(setName(f.name)))) {
      const name = setName(f.name);
      const set = { name, file: f, labels: labelsFiles.get(name), result: null };
      labelsFiles.delete(name);
      if (/\.(csv|tsv)$/i.test(f.name)) set.labelColumn = await csvLabelColumn(f);
      const old = state.sets.findIndex((s) => s.name === name);
      if (old >= 0) state.sets.splice(old, 1, set);
      else state.sets.push(set);
    }
    // labels dropped later than their logits
    for (const [name, labels] of labelsFiles) {
      const set = state.sets.find((s) => s.name === name);
      if (set) {
        set.labels = labels;
        set.result = null;
      } else {
        showError(`${labels.name}: no logits file for these labels (expected a file named like ${name}_logits.npy)`);
      }
    }
    await rescore();
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}

async function rescore() {
  const todo = state.sets.filter((s) => !s.result);
  for (const [i, set] of todo.entries()) {
    try {
      await scoreSet(set, i, todo.length);
    } catch (e) {
      showError(e.message.startsWith(set.file.name) ? e.message : `${set.file.name}: ${e.message}`);
      state.sets.splice(state.sets.indexOf(set), 1);
    }
  }
  await analyse();
  render();
}

// With three or more labeled sets: the evaluation, a calibration, and predictions for the rest.
async function analyse() {
  state.evaluation = null;
  state.calibration = null;
  for (const s of state.sets) s.prediction = undefined;
  const labeled = state.sets.filter((s) => s.result.accuracy !== undefined);
  if (labeled.length < 3) return;
  const sets = labeled.map((s) => ({ name: s.name, result: s.result }));
  try {
    state.evaluation = await worker.evaluate(sets);
    state.calibration = await worker.calibrate(sets, options());
    for (const s of state.sets.filter((x) => x.result.accuracy === undefined))
      s.prediction = await worker.predict(state.calibration, s.result, { level: LEVEL });
  } catch (e) {
    showError(`calibration: ${e.message}`);
  }
}

function summaryText() {
  if (!state.sets.length) return 'Add files to start.';
  const labeled = state.sets.filter((s) => s.result.accuracy !== undefined).length;
  const unlabeled = state.sets.length - labeled;
  return `${state.sets.length} set${state.sets.length === 1 ? '' : 's'} scored (${labeled} labeled, ${unlabeled} unlabeled)` +
    (state.source ? ', with the source set' : '') + '.';
}

function methods() {
  const present = new Set(state.sets.flatMap((s) => Object.keys(s.result.methods)));
  return METHOD_ORDER.filter((m) => present.has(m));
}

function render() {
  const has = state.sets.length > 0;
  $('sets-panel').hidden = !has;
  $('timeline-panel').hidden = !has;
  $('headline').hidden = !has;
  if (!has) {
    $('calibration-panel').hidden = true;
    return;
  }
  const all = methods();
  if (!all.includes(state.method)) state.method = all[0];
  $('method-select').replaceChildren(...all.map((m) => el('option', { value: m, textContent: m, selected: m === state.method })));
  renderHeadline();
  renderTable(all);
  renderCalibration();
  const files = $('timeline-file');
  const chosen = files.value;
  files.replaceChildren(...state.sets.map((s) => el('option', { value: s.name, textContent: `${s.name} (${s.result.n} rows)` })));
  if (state.sets.some((s) => s.name === chosen)) files.value = chosen;
}

function renderHeadline() {
  const m = state.method;
  const cards = [];
  const unlabeled = state.sets.filter((s) => s.prediction?.methods?.[m]);
  for (const s of unlabeled.slice(0, 6)) {
    const p = s.prediction.methods[m];
    const alert = p.accuracy < Number($('threshold').value);
    cards.push(el('div', { className: `card${alert ? ' alert' : ''}` },
      el('div', { className: 'what', textContent: `Estimated accuracy · ${s.name}` }),
      el('div', { className: 'big', textContent: pct(p.accuracy) }),
      el('div', { className: 'range', textContent: `${Math.round(LEVEL * 100)}% interval ${pct(p.interval[0])} – ${pct(p.interval[1])}` +
        ` · ${m}${p.extrapolated ? ' · outside the calibrated range' : ''}` })));
  }
  if (unlabeled.length > 6) cards.push(el('div', { className: 'card' }, el('div', { className: 'what', textContent: `and ${unlabeled.length - 6} more sets in the table below` })));
  if (!state.calibration) {
    const s = state.sets.find((x) => x.result.accuracy === undefined) ?? state.sets[0];
    cards.push(el('div', { className: 'card' },
      el('div', { className: 'what', textContent: `${m} score · ${s.name}` }),
      el('div', { className: 'big', textContent: fmt(valueOf(s.result, m)) }),
      el('div', { className: 'range', textContent: 'Add at least 3 labeled sets (logits + labels) to turn scores into accuracy estimates with intervals.' })));
  }
  const best = state.evaluation && Object.entries(state.evaluation.summary).sort((a, b) => a[1].mae - b[1].mae)[0];
  if (best) {
    cards.push(el('div', { className: 'card' },
      el('div', { className: 'what', textContent: 'Most accurate method on your labeled sets (leave-one-out)' }),
      el('div', { className: 'big', textContent: best[0] }),
      el('div', { className: 'range', textContent: `mean abs. error ${pct(best[1].mae)} · R² ${fmt(best[1].r2, 3)} · ρ ${fmt(best[1].spearman, 3)}` })));
  }
  $('headline').replaceChildren(...cards);
}

function renderTable(all) {
  const m = state.method;
  const head = ['set', 'N', 'K', 'true accuracy'];
  if (state.calibration) head.push(`estimate (${m}) [${Math.round(LEVEL * 100)}%]`);
  head.push('MaNo criterion', 'branch', ...all);
  const rows = state.sets.map((s) => {
    const cells = [s.name, s.result.n.toLocaleString(), s.result.k, pct(s.result.accuracy)];
    if (state.calibration) {
      const p = s.prediction?.methods?.[m];
      cells.push(p ? el('span', {}, pct(p.accuracy), el('span', { className: 'interval', textContent: ` [${pct(p.interval[0])}, ${pct(p.interval[1])}]` })) : '–');
    }
    cells.push(fmt(s.result.methods.mano?.criterion, 3), s.result.methods.mano?.normalization ?? '–', ...all.map((x) => fmt(valueOf(s.result, x))));
    const tr = el('tr', { className: s.result.accuracy === undefined ? 'unlabeled' : '' },
      ...cells.map((c, i) => el('td', { className: head[i] === m ? 'selected' : '' }, c)));
    tr.dataset.testid = 'set-row';
    tr.dataset.name = s.name;
    return tr;
  });
  $('sets-table').replaceChildren(
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { textContent: h, className: h === m ? 'selected' : '' })))),
    el('tbody', {}, ...rows));
}

async function renderCalibration() {
  const panel = $('calibration-panel');
  const labeled = state.sets.filter((s) => s.result.accuracy !== undefined);
  panel.hidden = !state.evaluation;
  if (!state.evaluation) return;
  const m = state.method;
  panel.querySelector('.note').textContent = `${labeled.length} labeled sets; R², Spearman ρ and Kendall τ across them, ` +
    'and the mean absolute error of the fitted line when each set is left out.';
  const summary = state.evaluation.summary;
  const rows = Object.keys(summary).sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)).map((x) => {
    const tr = el('tr', { className: x === m ? 'selected' : '' },
      ...[x, fmt(summary[x].r2, 3), fmt(summary[x].spearman, 3), fmt(summary[x].kendall, 3), pct(summary[x].mae)]
        .map((c) => el('td', { className: x === m ? 'selected' : '', textContent: c })));
    tr.style.cursor = 'pointer';
    tr.onclick = () => selectMethod(x);
    return tr;
  });
  $('summary-table').replaceChildren(
    el('thead', {}, el('tr', {}, ...['method', 'R²', 'ρ', 'τ', 'LOO MAE'].map((h) => el('th', { textContent: h })))),
    el('tbody', {}, ...rows));
  const calibrated = state.calibration?.methods?.[m];
  if (!calibrated) {
    $('scatter').replaceChildren(el('p', { className: 'note', textContent: `${m} has no calibration (${(state.calibration?.notes ?? []).join('; ') || 'not fitted'}).` }));
    return;
  }
  const xs = labeled.map((s) => valueOf(s.result, m));
  const lo = Math.min(...xs), hi = Math.max(...xs), pad = (hi - lo) * 0.1 || 0.01;
  const gridX = Array.from({ length: 41 }, (_, i) => lo - pad + ((hi - lo + 2 * pad) * i) / 40);
  const band = await worker.predictScores(state.calibration, m, gridX, { level: LEVEL });
  scatterChart($('scatter'), {
    method: m,
    level: LEVEL,
    labeled: labeled.map((s) => ({ name: s.name, x: valueOf(s.result, m), y: s.result.accuracy })),
    unlabeled: state.sets.filter((s) => s.prediction?.methods?.[m])
      .map((s) => ({ name: s.name, x: valueOf(s.result, m), y: s.prediction.methods[m].accuracy })),
    grid: gridX.map((x, i) => ({ x, fit: band[i].accuracy, lo: band[i].interval[0], hi: band[i].interval[1] })),
  });
}

function selectMethod(m) {
  state.method = m;
  render();
  if (state.timeline) drawTimeline();
}

async function buildTimeline() {
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
    const { result } = await worker.scoreFile(set.file, options(), {
      labels: set.labels,
      labelColumn: set.labelColumn,
      chunkResults: rows,
      onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total),
    });
    const chunks = [];
    for (const c of result.chunks) {
      chunks.push({ ...c, prediction: state.calibration ? await worker.predict(state.calibration, c.result, { level: LEVEL }) : undefined });
    }
    state.timeline = { name: set.name, chunkRows: rows, chunks };
    drawTimeline();
  } catch (e) {
    showError(e.message);
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}

function drawTimeline() {
  const t = state.timeline;
  const m = state.method;
  const threshold = Number($('threshold').value);
  const withBand = Boolean(state.calibration?.methods?.[m]);
  const chunks = t.chunks.map((c) => {
    const p = c.prediction?.methods?.[m];
    return withBand && p ? { first: c.first, y: p.accuracy, lo: p.interval[0], hi: p.interval[1] }
      : { first: c.first, y: valueOf(c.result, m) ?? null };
  });
  const below = chunks.filter((c) => c.y !== null && c.y < threshold);
  $('timeline-note').textContent = `${t.name}: ${t.chunks.length} chunks of ${t.chunkRows} rows, ` +
    (withBand ? `estimated accuracy by ${m} with its ${Math.round(LEVEL * 100)}% interval` : `${m} score (no calibration for it)`) +
    `. ${below.length} chunk${below.length === 1 ? '' : 's'} below ${threshold}` +
    (below.length ? `, starting at rows ${below.slice(0, 8).map((c) => c.first.toLocaleString()).join(', ')}${below.length > 8 ? ', …' : ''}.` : '.');
  timelineChart($('timeline'), { chunks, threshold, withBand, yLabel: withBand ? `estimated accuracy (${m})` : `${m} score` });
}

// The CLI's shape: {"sets": [{"name", "n", "k", "accuracy"?, "methods", ...}], ...}.
function exportObject() {
  const out = {
    generator: 'mano dashboard',
    level: LEVEL,
    sets: state.sets.map((s) => ({
      name: s.name, n: s.result.n, k: s.result.k,
      ...(s.result.accuracy !== undefined ? { accuracy: s.result.accuracy } : {}),
      methods: s.result.methods,
      ...(s.prediction ? { prediction: s.prediction.methods } : {}),
    })),
  };
  if (state.evaluation) out.evaluation = { summary: state.evaluation.summary, notes: state.evaluation.notes };
  if (state.calibration) out.calibration = state.calibration;
  if (state.timeline) {
    out.timeline = {
      name: state.timeline.name, chunk_rows: state.timeline.chunkRows, threshold: Number($('threshold').value),
      chunks: state.timeline.chunks.map((c) => ({ first: c.first, rows: c.rows, ...c.result, ...(c.prediction ? { prediction: c.prediction.methods } : {}) })),
    };
  }
  return out;
}

function csvText() {
  const all = methods();
  const m = state.method;
  const quote = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const lines = [['set', 'n', 'k', 'accuracy', ...all, `estimate_${m}`, 'lower', 'upper'].join(',')];
  for (const s of state.sets) {
    const p = s.prediction?.methods?.[m];
    lines.push([s.name, s.result.n, s.result.k, s.result.accuracy ?? '', ...all.map((x) => valueOf(s.result, x) ?? ''),
      p?.accuracy ?? '', p?.interval[0] ?? '', p?.interval[1] ?? ''].map(quote).join(','));
  }
  return `${lines.join('\n')}\n`;
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function loadExample() {
  setStatus('Loading the example…', true);
  try {
    const names = await (await fetch('./example/index.json')).json();
    // The blend-shift sets come without their labels: they play the unlabeled new data.
    const wanted = names.filter((n) => !/^blend_\d+_labels/.test(n));
    const files = await Promise.all(wanted.map(async (n) => new File([await (await fetch(`./example/${n}`)).arrayBuffer()], n)));
    await addFiles(files);
  } catch (e) {
    showError(`the example: ${e.message}`);
    setStatus(summaryText(), false);
  }
}

function clearAll() {
  Object.assign(state, { sets: [], source: null, evaluation: null, calibration: null, timeline: null });
  $('errors').replaceChildren();
  $('timeline').replaceChildren();
  $('timeline-note').textContent = timelineHelp;
  render();
  setStatus(summaryText(), false);
}

const input = $('file-input');
input.addEventListener('change', () => {
  addFiles(input.files).finally(() => { input.value = ''; });
});
const zone = $('dropzone');
zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
zone.addEventListener('dragleave', () => zone.classList.remove('over'));
zone.addEventListener('drop', (e) => {
  e.preventDefault();
  zone.classList.remove('over');
  addFiles(e.dataTransfer.files);
});
$('load-example').onclick = loadExample;
$('clear').onclick = clearAll;
$('method-select').onchange = (e) => selectMethod(e.target.value);
$('build-timeline').onclick = buildTimeline;
$('threshold').onchange = () => { renderHeadline(); if (state.timeline) drawTimeline(); };
$('export-json').onclick = () => download('mano-results.json', `${JSON.stringify(exportObject(), null, 1)}\n`, 'application/json');
$('export-csv').onclick = () => download('mano-results.csv', csvText(), 'text/csv');
worker.init().catch((e) => showError(e.message));
setStatus(summaryText(), false);
