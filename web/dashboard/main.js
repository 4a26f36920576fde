// The mano dashboard: logit files in, accuracy estimates out, all in a Worker on this machine.
import 'uplot/dist/uPlot.min.css';
import './style.css';

import { ManoWorker } from 'mano-score';
import ManoWorkerScript from 'mano-score/worker?worker';

import { scatterChart, timelineChart } from './charts.js';

const LEVEL = 0.9;
// The timeline of every set in order, one point per set (the other choices are one file in chunks).
const ALL_SETS = '\u0000all sets';
// A recommended method whose held-out error is above this is a poor fit, and the page says so.
const POOR_FIT = 0.1;
// The package's method table gives the order of columns and rows (filled once the worker is up).
let METHOD_ORDER = [];
const LABEL_COLUMNS = ['label', 'labels', 'target', 'y', 'class'];

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const el = (tag, { dataset, ...props } = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  if (dataset) Object.assign(node.dataset, dataset);
  node.append(...children);
  return node;
};

const worker = new ManoWorker(new ManoWorkerScript());
const timelineHelp = $('timeline-note').textContent;

// sets: { name, file, labels?, labelColumn?, scan, result, branch?, prediction? }, in the order they
// came: `scan` is the set scored with per-set softrun (both MaNo branches at once), `result` the
// set as shown and calibrated: on the branch the calibration chose for all sets (`branch`), else
// the scan. `method` is the one the user picked; until then the calibration's recommended one.
const state = {
  sets: [], source: null, evaluation: null, calibration: null, method: null, picked: false, timeline: null,
  // a calibration file (`mano calibrate -o`) dropped in: { name, calibration }; every set is then
  // scored with its options and read with it, instead of a calibration fitted here
  loaded: null,
  // a manifest dropped in ({"source"?, "sets": [{name, group?, logits, labels?}]}): the files it
  // names pair as it says, by file name (a browser sees no paths)
  manifest: null,
  waiting: null,  // labels a manifest names whose logits are still to come: set name -> file
  labelFiles: new Map(),  // every labels file dropped, by file name: the pairing table offers them
};
// The size limits of mano's readers for these JSON files (native/io/json.hpp).
const JSON_LIMITS = { calibration: 256 * 2 ** 20, manifest: 64 * 2 ** 20 };

const valueOf = (result, m) => result?.methods?.[m]?.score ?? result?.methods?.[m]?.accuracy;
const fmt = (x, digits = 4) => (x === undefined || x === null || Number.isNaN(x) ? '–' : Number(x).toFixed(digits));
const pct = (x) => (x === undefined || x === null ? '–' : `${(100 * x).toFixed(1)}%`);
const interval = (p) => `[${pct(p.interval[0])}, ${pct(p.interval[1])}]`;
const branchName = (mano) => (mano ? (mano.normalization === 'taylor' ? `taylor${mano.taylor_order}` : mano.normalization) : '–');
// Labels and a source set change what a scan holds: score the set again.
const forget = (set) => Object.assign(set, { scan: null, result: null, branch: null });

// A file pairs by its last name part: "contrast_0_logits.npy" and "contrast_0_labels.npy" are the
// set "contrast_0". Only a whole final part counts ("label_shift_a0.2_0_logits.npy" is the set
// "label_shift_a0.2_0", "jpeg3_withlabel.csv" the set "jpeg3_withlabel"), and a file with no
// such part is a set of its own name.
const stemOf = (fileName) => fileName.replace(/\.(npy|csv|tsv|safetensors)$/i, '');
const PAIR_PART = /[_.-](logits|labels?)$/i;
function setName(fileName) {
  const stem = stemOf(fileName);
  return stem.replace(PAIR_PART, '') || stem;
}
const isLabelsFile = (f) => /\.(npy|safetensors)$/i.test(f.name) && /^labels?$|[_.-]labels?$/i.test(stemOf(f.name));
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
  const percent = total ? (100 * done) / total : 0;
  box.querySelector('.fill').style.width = `${percent}%`;
  box.setAttribute('aria-valuenow', String(Math.round(percent)));
  box.setAttribute('aria-valuetext', label);
  box.querySelector('.label').textContent = label;
}
const hideProgress = () => { $('progress').hidden = true; };

function showError(message) {
  const close = el('button', { type: 'button', textContent: '✕', title: 'Dismiss this message' });
  close.setAttribute('aria-label', 'Dismiss this message');
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
// The options of the calibration's branch for all sets (as `mano calibrate` and `mano predict`
// score them), or per-set softrun without one.
const familyOptions = (family) => (family
  ? { ...options(), normalization: family.normalization, taylorOrder: family.taylor_order } : options());

async function scoreFile(set, how, label) {
  showProgress(label, 0, 1);
  const { result } = await worker.scoreFile(set.file, how, {
    labels: set.labels,
    labelColumn: set.labelColumn,
    onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total),
  });
  return result;
}

async function scoreSet(set, index, count) {
  set.scan = await scoreFile(set, options(), `Scoring ${set.name} (${index + 1} of ${count})`);
  set.result = set.scan;
  set.branch = null;
}

const baseName = (p) => String(p).split(/[\\/]/).pop();

// A dropped JSON file: a calibration or a manifest; false when it is neither (said why).
async function readJsonFile(f) {
  const limit = Math.max(JSON_LIMITS.calibration, JSON_LIMITS.manifest);
  if (f.size > limit) {
    showError(`${f.name}: ${f.size.toLocaleString()} bytes, over the ${limit.toLocaleString()}-byte limit of mano's calibration reader`);
    return false;
  }
  let doc;
  try {
    doc = JSON.parse(await f.text());
  } catch (e) {
    showError(`${f.name}: not JSON (${e.message})`);
    return false;
  }
  if (doc?.format === 'mano-calibration') {
    state.loaded = { name: f.name, calibration: doc };
    for (const s of state.sets) s.branch = null;  // scored again with its options
    return true;
  }
  if (doc && Array.isArray(doc.sets)) {
    if (f.size > JSON_LIMITS.manifest) {
      showError(`${f.name}: ${f.size.toLocaleString()} bytes, over the ${JSON_LIMITS.manifest.toLocaleString()}-byte limit of mano's manifest reader`);
      return false;
    }
    const bad = doc.sets.findIndex((x) => !x || typeof x.name !== 'string' || !x.name || typeof x.logits !== 'string' ||
      (x.labels !== undefined && typeof x.labels !== 'string') || (x.group !== undefined && typeof x.group !== 'string'));
    if (bad >= 0) {
      showError(`${f.name}: sets[${bad}] must be {"name", "logits", "labels"?, "group"?} with text values`);
      return false;
    }
    const names = new Set();
    for (const x of doc.sets) {
      if (names.has(x.name)) {
        showError(`${f.name}: the set name "${x.name}" is used twice`);
        return false;
      }
      names.add(x.name);
    }
    state.manifest = { name: f.name, source: doc.source, sets: doc.sets };
    return true;
  }
  showError(`${f.name}: neither a calibration (mano calibrate -o, format "mano-calibration") nor a manifest ({"sets": [...]})`);
  return false;
}

// What the manifest says a file is: { set, role: 'logits' | 'labels', group } or { source: role }.
function manifestRole(fileName) {
  const m = state.manifest;
  if (!m) return null;
  if (m.source && baseName(m.source.logits) === fileName) return { source: 'logits' };
  if (m.source && baseName(m.source.labels) === fileName) return { source: 'labels' };
  for (const x of m.sets) {
    if (baseName(x.logits) === fileName) return { set: x.name, role: 'logits', group: x.group ?? '' };
    if (x.labels !== undefined && baseName(x.labels) === fileName) return { set: x.name, role: 'labels', group: x.group ?? '' };
  }
  return null;
}

async function addFiles(fileList) {
  let files = [...fileList];
  if (!files.length) return;
  setStatus('Working…', true);
  try {
    // JSON first: a manifest says how the other files pair, a calibration how to score them
    for (const f of files.filter((x) => /\.json$/i.test(x.name))) await readJsonFile(f);
    files = files.filter((x) => !/\.json$/i.test(x.name));
    // the manifest's files pair as it says; the others by their names
    const byManifest = files.map((f) => [f, manifestRole(f.name)]).filter(([, r]) => r);
    const listed = new Set(byManifest.map(([f]) => f));
    const unlisted = files.filter((f) => !listed.has(f));
    const labelsFiles = new Map(unlisted.filter(isLabelsFile).map((f) => [setName(f.name), f]));
    const logitsFiles = unlisted.filter((f) => !isLabelsFile(f));
    for (const [f, r] of byManifest) {
      if (r.source) continue;
      if (r.role === 'labels') labelsFiles.set(r.set, f);
    }
    // The source set first: every set is scored with it (ATC, DoC); a manifest's "source", or
    // files named source*
    const sourcePairs = logitsFiles.filter((f) => isSource(setName(f.name))).map((f) => {
      const labels = labelsFiles.get(setName(f.name));
      labelsFiles.delete(setName(f.name));
      return [f, labels];
    });
    const manifestSource = byManifest.find(([, r]) => r.source === 'logits')?.[0];
    if (manifestSource) sourcePairs.push([manifestSource, byManifest.find(([, r]) => r.source === 'labels')?.[0]]);
    for (const [f, labels] of sourcePairs) {
      if (!labels) {
        showError(`${f.name}: a source set needs its labels (${manifestSource === f ? baseName(state.manifest.source.labels) : `${setName(f.name)}_labels.npy`}, dropped with it); it was skipped`);
        continue;
      }
      try {
        const [logits, y] = [await worker.read(f), await worker.read(labels)];
        if (y.dtype !== 'int32') throw new Error(`${labels.name}: labels must be integers`);
        state.source = { logits: logits.data, labels: y.data, dtype: logits.dtype };
        for (const s of state.sets) forget(s);  // rescored with the source below
      } catch (e) {
        showError(e.message);
      }
    }
    // the labels files left (a source's are its own): the pairing table offers them
    for (const f of labelsFiles.values()) state.labelFiles.set(f.name, f);
    const setFiles = [...logitsFiles.filter((f) => !isSource(setName(f.name))).map((f) => [f, setName(f.name), '']),
      ...byManifest.filter(([, r]) => r.role === 'logits').map(([f, r]) => [f, r.set, r.group])];
    for (const [f, name, group] of setFiles) {
      const set = forget({ name, group, file: f, labels: labelsFiles.get(name) ?? state.waiting?.get(name) });
      labelsFiles.delete(name);
      state.waiting?.delete(name);
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
        forget(set);
      } else if (state.manifest?.sets.some((x) => x.name === name)) {
        (state.waiting ??= new Map()).set(name, labels);  // its logits are still to come
      } else {
        showError(`${labels.name}: no logits file for these labels (expected a file named like ${name}_logits.npy, or a manifest ` +
          'naming both); pair it with its logits in the pairing table under Sets');
      }
    }
    await rescore();
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}

async function rescore() {
  const todo = state.sets.filter((s) => !s.scan);
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

// With three or more labeled sets: MaNo's branch chosen once for all of them (from their scans),
// every set scored on it, then the evaluation, the calibration and predictions for the rest: the
// numbers of `mano eval`, `mano calibrate` and `mano predict` on the same files.
async function analyse() {
  state.evaluation = null;
  state.calibration = null;
  for (const s of state.sets) s.prediction = undefined;
  const labeled = state.sets.filter((s) => s.scan.accuracy !== undefined);
  if (state.loaded) {
    await analyseWithLoaded(labeled);
    return;
  }
  if (labeled.length < 3) {
    for (const s of state.sets) Object.assign(s, { result: s.scan, branch: null });
    return;
  }
  try {
    const chosen = await worker.calibrate(labeled.map((s) => ({ name: s.name, result: s.scan })), options());
    const family = chosen.normalization;
    const todo = state.sets.filter((s) => (family ? s.branch !== family.variant : s.result !== s.scan));
    for (const [i, s] of todo.entries()) {
      s.result = family
        ? await scoreFile(s, familyOptions(family), `Scoring ${s.name} with MaNo ${family.variant}, the branch for all sets (${i + 1} of ${todo.length})`)
        : s.scan;
      s.branch = family?.variant ?? null;
    }
    const sets = labeled.map((s) => ({ name: s.name, result: s.result }));
    state.evaluation = await worker.evaluate(sets);
    if (family) {
      state.calibration = await worker.calibrate(sets, familyOptions(family));
      state.calibration.normalization = family;
    } else {
      state.calibration = chosen;
    }
    for (const s of state.sets.filter((x) => x.result.accuracy === undefined))
      s.prediction = await worker.predict(state.calibration, s.result, { level: LEVEL });
  } catch (e) {
    showError(`calibration: ${e.message}`);
  } finally {
    hideProgress();
  }
}

// With a calibration file: every set scored with its options (as `mano predict` scores them) and
// read with it, labeled sets too (their estimates beside the truth); the labeled sets' evaluation
// when there are three or more.
async function analyseWithLoaded(labeled) {
  const { name, calibration } = state.loaded;
  try {
    const todo = state.sets.filter((s) => s.branch !== `file:${name}`);
    for (const [i, s] of todo.entries()) {
      s.result = await scoreFile(s, { calibration }, `Scoring ${s.name} as ${name} says (${i + 1} of ${todo.length})`);
      s.branch = `file:${name}`;
    }
    state.calibration = calibration;
    for (const s of state.sets) s.prediction = await worker.predict(calibration, s.result, { level: LEVEL });
    if (labeled.length >= 3) state.evaluation = await worker.evaluate(labeled.map((s) => ({ name: s.name, result: s.result })));
  } catch (e) {
    showError(`${name}: ${e.message}`);
    state.loaded = null;
    for (const s of state.sets) Object.assign(s, { result: s.scan, branch: null, prediction: undefined });
    state.calibration = null;
  } finally {
    hideProgress();
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
  if (!state.picked || !all.includes(state.method)) {
    const recommended = state.calibration?.recommended;
    state.method = all.includes(recommended) ? recommended : all.includes('mano') ? 'mano' : all[0];
  }
  $('method-select').replaceChildren(...all.map((m) => el('option', {
    value: m, textContent: m === state.calibration?.recommended ? `${m} (recommended)` : m, selected: m === state.method,
  })));
  $('save-calibration').hidden = !state.calibration;
  renderHeadline();
  renderTable(all);
  renderCalibration();
  const files = $('timeline-file');
  const chosen = files.value;
  files.replaceChildren(el('option', { value: ALL_SETS, textContent: `all ${state.sets.length} sets, in order (one point each)` }),
    ...state.sets.map((s) => el('option', { value: s.name, textContent: `${s.name} in chunks (${s.result.n} rows)` })));
  if (state.sets.some((s) => s.name === chosen)) files.value = chosen;
}

// Why a set's estimate is not the recommended method's, or is less sure than it looks.
function estimateWarnings(s) {
  const e = s.prediction.estimate;
  const out = [];
  if (s.prediction.shift?.outside) {
    const recommended = state.calibration.recommended;
    out.push(`class proportions outside the calibrated range (shift ${pct(s.prediction.shift.distance)}, ` +
      `calibrated up to ${pct(s.prediction.shift.range)} + ${pct(s.prediction.shift.allowance)} sampling noise)` +
      (e.fallback ? `: by ${e.method} instead of ${recommended}, which assumes them` : `; ${e.method} does not assume them`));
  } else if (e.fallback) {
    out.push(`by ${e.method}: the recommended ${state.calibration.recommended} has no score for this set`);
  }
  if (e.extrapolated) out.push(`the ${e.method} score lies outside the calibrated range`);
  return out;
}

function renderHeadline() {
  const m = state.method;
  const cards = [];
  const unlabeled = state.sets.filter((s) => s.prediction?.estimate);
  for (const s of unlabeled.slice(0, 6)) {
    const e = s.prediction.estimate;
    const alert = e.accuracy < Number($('threshold').value);
    const warnings = estimateWarnings(s);
    cards.push(el('div', { className: `card${alert ? ' alert' : ''}`, dataset: { testid: 'estimate-card', name: s.name } },
      el('div', { className: 'what', textContent: `Estimated accuracy · ${s.name}` }),
      el('div', { className: 'big', textContent: pct(e.accuracy) }),
      el('div', { className: 'range', textContent: `${interval(e)} by ${e.method} · ${Math.round(LEVEL * 100)}% interval` }),
      ...warnings.map((w) => el('div', { className: 'warning', textContent: `⚠ ${w}` }))));
  }
  if (unlabeled.length > 6) cards.push(el('div', { className: 'card' }, el('div', { className: 'what', textContent: `and ${unlabeled.length - 6} more sets in the table below` })));
  if (!state.calibration) {
    const s = state.sets.find((x) => x.result.accuracy === undefined) ?? state.sets[0];
    cards.push(el('div', { className: 'card' },
      el('div', { className: 'what', textContent: `${m} score · ${s.name}` }),
      el('div', { className: 'big', textContent: fmt(valueOf(s.result, m)) }),
      el('div', { className: 'range', textContent: 'Add at least 3 labeled sets (logits + labels) to turn scores into accuracy estimates with intervals.' })));
  }
  const cal = state.calibration;
  const recommended = cal?.recommended && cal.methods[cal.recommended];
  const best = !recommended && state.evaluation && Object.entries(state.evaluation.summary).sort((a, b) => a[1].mae - b[1].mae)[0];
  if (recommended) {
    cards.push(el('div', { className: 'card', dataset: { testid: 'recommended-card' } },
      el('div', { className: 'what', textContent: state.loaded ? `Recommended method, from ${state.loaded.name}`
        : 'Recommended method: the lowest error on held-out labeled sets' }),
      el('div', { className: 'big', textContent: cal.recommended }),
      el('div', { className: 'range', textContent: `mean abs. error ${pct(recommended.logo_mae)} held out` +
        (cal.normalization ? ` · MaNo normalization ${cal.normalization.variant} for all sets` : '') }),
      ...(recommended.logo_mae > POOR_FIT ? [el('div', { className: 'warning', dataset: { testid: 'poor-fit' },
        textContent: `⚠ a poor fit: even the best method missed held-out sets by ${pct(recommended.logo_mae)} on average; ` +
          'read the estimates as rough, and add labeled sets of other shifts' })] : [])));
  } else if (best) {
    cards.push(el('div', { className: 'card' },
      el('div', { className: 'what', textContent: 'Most accurate method on your labeled sets (leave-one-out)' }),
      el('div', { className: 'big', textContent: best[0] }),
      el('div', { className: 'range', textContent: `mean abs. error ${pct(best[1].mae)} · R² ${fmt(best[1].r2, 3)} · ρ ${fmt(best[1].spearman, 3)}` })));
  }
  $('headline').replaceChildren(...cards);
}

// The sets table: each set's estimate and the selected method's score and estimate (it fits a
// 1440 px window); every method's value goes to the scores table below it.
function renderTable(all) {
  const m = state.method;
  const level = `[${Math.round(LEVEL * 100)}%]`;
  const head = ['set', 'N', 'K', 'true accuracy'];
  if (state.calibration) head.push(`estimate ${level}`, 'class shift');
  head.push(m);
  if (state.calibration) head.push(`estimate (${m}) ${level}`);
  head.push('MaNo criterion', 'branch');
  // the sets to estimate first, then the labeled ones (each group in the order added)
  const ordered = [...state.sets.filter((s) => s.result.accuracy === undefined), ...state.sets.filter((s) => s.result.accuracy !== undefined)];
  const rows = ordered.map((s) => {
    const cells = [s.name, s.result.n.toLocaleString(), s.result.k, pct(s.result.accuracy)];
    if (state.calibration) {
      const e = s.prediction?.estimate;
      const warnings = e ? estimateWarnings(s) : [];
      cells.push(e ? el('span', { title: warnings.join('; ') }, pct(e.accuracy),
        el('span', { className: 'interval', textContent: ` ${interval(e)} ${e.method}${warnings.length ? ' ⚠' : ''}` })) : '–');
      const shift = s.prediction?.shift;
      cells.push(shift ? el('span', { className: shift.outside ? 'outside' : '', title: `calibrated up to ${pct(shift.range)} + ${pct(shift.allowance)} sampling noise` },
        `${pct(shift.distance)}${shift.outside ? ' outside' : ''}`) : '–');
    }
    cells.push(fmt(valueOf(s.result, m)));
    if (state.calibration) {
      const p = s.prediction?.methods?.[m];
      cells.push(p ? el('span', {}, pct(p.accuracy), el('span', { className: 'interval', textContent: ` ${interval(p)}` })) : '–');
    }
    cells.push(fmt(s.result.methods.mano?.criterion, 3), branchName(s.result.methods.mano));
    const tr = el('tr', { className: s.result.accuracy === undefined ? 'unlabeled' : '' },
      ...cells.map((c, i) => el('td', { className: head[i] === m ? 'selected' : '' }, c)));
    tr.dataset.testid = 'set-row';
    tr.dataset.name = s.name;
    return tr;
  });
  $('sets-table').replaceChildren(
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { textContent: h, className: h === m ? 'selected' : '', scope: 'col' })))),
    el('tbody', {}, ...rows));
  renderPairing();
  $('scores-table').replaceChildren(
    el('thead', {}, el('tr', {}, ...['set', ...all].map((h) => el('th', { textContent: h, className: h === m ? 'selected' : '', scope: 'col' })))),
    el('tbody', {}, ...state.sets.map((s) => el('tr', {},
      el('td', { textContent: s.name }), ...all.map((x) => el('td', { className: x === m ? 'selected' : '', textContent: fmt(valueOf(s.result, x)) }))))));
}

// The pairing table: each set's logits file and its labels, which the user can change; a CSV's
// label column is shown as it is.
function renderPairing() {
  const labelNames = [...state.labelFiles.keys()].sort();
  const rows = state.sets.map((s) => {
    let labelsCell;
    if (s.labelColumn) {
      labelsCell = `column "${s.labelColumn}" of ${s.file.name}`;
    } else {
      const select = el('select', { ariaLabel: `labels of ${s.name}` },
        el('option', { value: '', textContent: 'none (unlabeled)' }),
        ...labelNames.map((n) => el('option', { value: n, textContent: n, selected: s.labels?.name === n })));
      select.dataset.testid = 'pair-labels';
      select.dataset.name = s.name;
      select.onchange = () => repair(s, select.value ? state.labelFiles.get(select.value) : undefined);
      labelsCell = select;
    }
    return el('tr', {}, el('td', { textContent: s.name }), el('td', { textContent: s.file.name }), el('td', {}, labelsCell));
  });
  // a labels file no set uses yet: open the table, so that it is paired by hand
  const used = new Set(state.sets.map((x) => x.labels?.name).filter(Boolean));
  if (labelNames.some((n) => !used.has(n))) $('pairing').open = true;
  $('pairing-table').replaceChildren(
    el('thead', {}, el('tr', {}, ...['set', 'logits file', 'labels file'].map((h) => el('th', { textContent: h, scope: 'col' })))),
    el('tbody', {}, ...rows));
}

// Pairs a set with other labels (or none) and scores it again; labels that do not fit its rows
// are refused and the set keeps its pairing.
async function repair(set, labels) {
  const before = set.labels;
  setStatus(`Pairing ${set.name}…`, true);
  try {
    set.labels = labels;
    forget(set);
    try {
      await scoreSet(set, 0, 1);
    } catch (e) {
      showError(e.message);
      set.labels = before;
      forget(set);
      await scoreSet(set, 0, 1);
    }
    await analyse();
    render();
  } finally {
    hideProgress();
    setStatus(summaryText(), false);
  }
}

async function renderCalibration() {
  const panel = $('calibration-panel');
  const labeled = state.sets.filter((s) => s.result.accuracy !== undefined);
  panel.hidden = !state.evaluation;
  if (!state.evaluation) return;
  const m = state.method;
  const cal = state.calibration;
  panel.querySelector('.note').textContent = `${labeled.length} labeled sets; R², Spearman ρ and Kendall τ across them, ` +
    'and the mean absolute error of the fitted line when each set (or each set\'s group) is left out.';
  $('normalization-note').hidden = !cal?.normalization;
  if (cal?.normalization) $('normalization-note').textContent = normalizationText(cal.normalization);
  const summary = state.evaluation.summary;
  // the calibration's leave-one-group-out error (what "recommended" ranks by), else the evaluation's leave-one-out one
  const heldOut = (x) => cal?.methods?.[x]?.logo_mae ?? summary[x].mae;
  const rows = Object.keys(summary).sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)).map((x) => {
    const name = x === cal?.recommended ? `${x} ★` : x === cal?.fallback ? `${x} ☆` : x;
    const tr = el('tr', { className: x === m ? 'selected' : '' },
      ...[name, fmt(summary[x].r2, 3), fmt(summary[x].spearman, 3), fmt(summary[x].kendall, 3), pct(heldOut(x))]
        .map((c) => el('td', { className: x === m ? 'selected' : '', textContent: c })));
    tr.style.cursor = 'pointer';
    tr.onclick = () => selectMethod(x);
    return tr;
  });
  const legend = cal?.recommended ? el('caption', { textContent: `★ recommended (lowest held-out error)` +
    (cal.fallback && cal.fallback !== cal.recommended ? ` · ☆ its stand-in on sets whose class proportions are outside the calibrated range` : '') }) : '';
  $('summary-table').replaceChildren(legend,
    el('thead', {}, el('tr', {}, ...['method', 'R²', 'ρ', 'τ', 'held-out MAE'].map((h) => el('th', { textContent: h })))),
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
  // MaNo and the softrun variants depend on the branch the sets were scored on: name it
  const branch = /^(mano|.*_softrun)$/.test(m) ? branchName(labeled[0]?.result.methods.mano) : null;
  scatterChart($('scatter'), {
    method: m,
    branch: branch && branch !== '–' ? branch : null,
    level: LEVEL,
    labeled: labeled.map((s) => ({ name: s.name, x: valueOf(s.result, m), y: s.result.accuracy })),
    unlabeled: state.sets.filter((s) => s.prediction?.methods?.[m])
      .map((s) => ({ name: s.name, x: valueOf(s.result, m), y: s.prediction.methods[m].accuracy })),
    grid: gridX.map((x, i) => ({ x, fit: band[i].accuracy, lo: band[i].interval[0], hi: band[i].interval[1] })),
  });
}

// How the calibration chose MaNo's normalization for all sets.
function normalizationText(n) {
  const how = n.errors
    ? `the lower held-out error (${Object.entries(n.errors).map(([v, e]) => `${v} ${pct(e)}`).join(', ')})`
    : `the criterion over all sets' rows (${fmt(n.pooled_criterion, 3)} ${n.normalization === 'softmax' ? '>' : '≤'} η = ${fmt(n.eta, 2)})`;
  return `MaNo normalization for all sets: ${n.variant}, chosen by ${how}.`;
}

function selectMethod(m) {
  state.method = m;
  state.picked = true;
  render();
  if (state.timeline) drawTimeline();
}

async function buildTimeline() {
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
    const how = state.loaded ? { calibration: state.loaded.calibration } : familyOptions(state.calibration?.normalization);
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
    return withBand && p ? { label, first, rows, y: p.accuracy, lo: p.interval[0], hi: p.interval[1], se: p.se }
      : { label, first, rows, y: valueOf(result, m) ?? null };
  };
  if (t.kind === 'sets') {
    // a labeled set is a point of its true accuracy (a set read with a calibration file has both:
    // the estimate is shown, as for any other set)
    return state.sets.map((s, i) => (withBand && !s.prediction && s.result.accuracy !== undefined
      ? { label: `${s.name} (true accuracy)`, first: i, rows: s.result.n, y: s.result.accuracy, lo: s.result.accuracy, hi: s.result.accuracy }
      : point(s.name, i, s.result.n, s.result, s.prediction)));
  }
  return t.chunks.map((c) => point(`rows ${c.first.toLocaleString()}–${(c.first + c.rows - 1).toLocaleString()}`, c.first, c.rows,
    c.result, c.prediction));
}

// The words for the core's too-small warning (src/mano/monitoring.hpp, monitor().noise).
function noiseText(noise, m) {
  return `${state.timeline.kind === 'sets' ? 'these sets are' : `chunks of ${noise.rows.toLocaleString()} rows are`} small for ${m}: ` +
    `the score's sampling noise alone moves the estimate by ±${pct(noise.half_width)} (90%); about ${noise.rows_needed.toLocaleString()} ` +
    `rows per point bring it to ±${pct(noise.limit)}`;
}

// The alert line (from the reference period, else the value given), the points below it and the
// too-small warning are the core's monitoring rules (src/mano/monitoring.hpp, run in the Worker);
// the page draws them and says them in words.
async function drawTimeline() {
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
    const slope = state.calibration.methods[m].slope;
    let assessment;
    try {
      assessment = await worker.monitor(points.map((p) => ({ estimate: p.y, se: p.se, rows: p.rows })),
        reference > 0 ? { reference, slope } : { threshold: Number($('threshold').value), slope });
    } catch (e) {
      showError(`timeline: ${e.message}`);
      return;
    }
    if (state.timeline !== t || state.method !== m) return;  // drawn again meanwhile
    const line = assessment.threshold;
    threshold = line.value;
    thresholdText = line.reference > 0
      ? `reference: the first ${line.reference} points, mean ${pct(line.mean)}, standard deviation ${pct(line.sd)}; ` +
        `alert below ${pct(line.value)} (mean − 3 sd)`
      : `alert below ${pct(line.value)} (the value given)`;
    const below = assessment.alerts.map((i) => points[i]);
    alerts.push({ alert: below.length > 0,
      text: below.length ? `${below.length} ${unit}${below.length === 1 ? '' : 's'} below ${pct(threshold)}: ` +
        `${below.slice(0, 8).map((p) => `${p.label} (${pct(p.y)})`).join(', ')}${below.length > 8 ? ', …' : ''}`
        : `no ${unit} below ${pct(threshold)}` });
    if (assessment.noise) alerts.push({ alert: false, text: `⚠ ${noiseText(assessment.noise, m)}` });
  }
  const what = t.kind === 'sets' ? `all ${points.length} sets in order` : `${t.name}: ${points.length} chunks of ${t.chunkRows} rows`;
  const note = `${what}, ${withBand ? `estimated accuracy by ${m} with its ${Math.round(LEVEL * 100)}% interval` : `${m} score (no calibration for it)`}; ` +
    `${thresholdText}.`;
  t.view = { method: m, threshold, reference, points, alerts: alerts.map((a) => a.text) };
  $('timeline-note').textContent = note;
  $('timeline-alerts').replaceChildren(...alerts.map((a) => el('li', { className: a.alert ? 'alert' : '', textContent: a.text })));
  timelineChart($('timeline'), {
    points, threshold, reference, withBand, unit,
    yLabel: withBand ? `estimated accuracy (${m})` : `${m} score`, alt: `${note} ${alerts.map((a) => a.text).join('. ')}`,
  });
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
      ...(s.prediction?.estimate ? { estimate: s.prediction.estimate } : {}),
      ...(s.prediction?.shift ? { shift: s.prediction.shift } : {}),
    })),
  };
  if (state.evaluation) out.evaluation = { summary: state.evaluation.summary, notes: state.evaluation.notes };
  if (state.calibration) out.calibration = state.calibration;
  const t = state.timeline;
  if (t?.view) {
    out.timeline = { of: t.kind === 'sets' ? 'sets' : t.name, method: t.view.method, threshold: t.view.threshold,
      reference: t.view.reference, alerts: t.view.alerts };
    if (t.kind === 'file') {
      out.timeline.chunk_rows = t.chunkRows;
      out.timeline.chunks = t.chunks.map((c) => ({ first: c.first, rows: c.rows, ...c.result, ...(c.prediction ? { prediction: c.prediction.methods } : {}) }));
    } else {
      out.timeline.points = t.view.points.map((p) => ({ name: p.label, value: p.y, ...(p.lo !== undefined ? { interval: [p.lo, p.hi] } : {}) }));
    }
  }
  return out;
}

function csvText() {
  const all = methods();
  const m = state.method;
  const quote = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const lines = [['set', 'n', 'k', 'accuracy', ...all, `estimate_${m}`, 'lower', 'upper', 'estimate', 'estimate_method',
    'estimate_lower', 'estimate_upper', 'estimate_fallback', 'class_shift', 'class_shift_outside'].join(',')];
  for (const s of state.sets) {
    const p = s.prediction?.methods?.[m];
    const e = s.prediction?.estimate;
    const shift = s.prediction?.shift;
    lines.push([s.name, s.result.n, s.result.k, s.result.accuracy ?? '', ...all.map((x) => valueOf(s.result, x) ?? ''),
      p?.accuracy ?? '', p?.interval[0] ?? '', p?.interval[1] ?? '',
      e?.accuracy ?? '', e?.method ?? '', e?.interval[0] ?? '', e?.interval[1] ?? '', e?.fallback ?? '',
      shift?.distance ?? '', shift?.outside ?? ''].map(quote).join(','));
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
  Object.assign(state, {
    sets: [], source: null, evaluation: null, calibration: null, method: null, picked: false, timeline: null,
    loaded: null, manifest: null, waiting: null, labelFiles: new Map(),
  });
  $('errors').replaceChildren();
  $('timeline').replaceChildren();
  $('timeline-note').textContent = timelineHelp;
  $('timeline-alerts').replaceChildren();
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
$('reference').onchange = () => { if (state.timeline) drawTimeline(); };
$('export-json').onclick = () => download('mano-results.json', `${JSON.stringify(exportObject(), null, 1)}\n`, 'application/json');
$('export-csv').onclick = () => download('mano-results.csv', csvText(), 'text/csv');
// the calibration as `mano calibrate -o` writes it: drop it here again, or give it to mano predict
$('save-calibration').onclick = () => download(state.loaded?.name ?? 'mano-calibration.json',
  `${JSON.stringify(state.calibration, (k, v) => (k === 'notes' ? undefined : v), 1)}\n`, 'application/json');
worker.init().catch((e) => showError(e.message));
// asked for before any file can be scored, so the worker answers it first
worker.methods().then((table) => { METHOD_ORDER = table.map((m) => m.name); }).catch(() => {});
setStatus(summaryText(), false);
