// What the page shows of the sets: the headline cards, the sets, scores and pairing tables, the
// calibration panel with its chart, and the method the user selects.
import { auditText, labelsNeededText, range, renderAudit } from './audit.js';
import { scatterChart } from './charts.js';
import { $, branchName, el, fmt, interval, pct } from './page.js';
import { ALL_SETS, estimated, LEVEL, labelShiftMethod, METHOD_ORDER, methodInfo, methods, POOR_FIT, state, valueOf, worker } from './state.js';
import { drawTimeline } from './timeline.js';

export function render() {
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
  renderAudit();
  const files = $('timeline-file');
  const chosen = files.value;
  files.replaceChildren(el('option', { value: ALL_SETS, textContent: `all ${state.sets.length} sets, in order (one point each)` }),
    ...state.sets.map((s) => el('option', { value: s.name, textContent: `${s.name} in chunks (${s.result.n} rows)` })));
  if (state.sets.some((s) => s.name === chosen)) files.value = chosen;
}

// Which regime chose a set's estimate, in the words of the prediction's own fields (regime,
// label_shift: src/mano/prediction/prediction.cpp, as `mano predict` says them), and why it may be
// less sure than it looks.
function estimateWarnings(s) {
  const e = s.prediction.estimate;
  const check = s.prediction.label_shift;
  const out = [];
  if (e.regime === 'label_shift') {
    out.push(`label-shift regime: the set passes the label-shift check (its confidence is what the source's confidence by ` +
      `class predicts at the class priors MLLS estimated, off by ${pct(check.gap)}, within ${pct(check.allowance)}), so the estimate is ${e.method}'s`);
  } else if (e.method !== state.calibration.recommended) {
    out.push(`by ${e.method}: the recommended ${state.calibration.recommended} has no score for this set`);
  }
  if (check?.reason) out.push(`the estimate's interval holds both regimes' (label shift and general): ${check.reason}`);
  if (s.prediction.shift?.outside) {
    out.push(`class proportions outside the calibrated range (shift ${pct(s.prediction.shift.distance)}, ` +
      `calibrated up to ${pct(s.prediction.shift.range)} + ${pct(s.prediction.shift.allowance)} sampling noise)`);
  }
  if (e.extrapolated) out.push(`the ${e.method} score lies outside the calibrated range`);
  return out;
}

export function renderHeadline() {
  const m = state.method;
  const cards = [];
  const unlabeled = state.sets.filter(estimated);
  for (const s of unlabeled.slice(0, 6)) {
    const e = s.prediction.estimate;
    const alert = e.accuracy < Number($('threshold').value);
    const warnings = estimateWarnings(s);
    const a = s.prediction.audit;
    const need = s.prediction.labels_for_width;
    // an audited set: its audited accuracy first, the label-free estimate beside it
    const shown = a ? [
      el('div', { className: 'what', textContent: `Audited accuracy · ${s.name}` }),
      el('div', { className: 'big', textContent: pct(a.accuracy) }),
      el('div', { className: 'range', dataset: { testid: 'audited' }, textContent: auditText(a) }),
      el('div', { className: 'range', textContent: `label-free: ${pct(e.accuracy)} ${interval(e)} by ${e.method} · ${Math.round(LEVEL * 100)}% intervals` }),
    ] : [
      el('div', { className: 'what', textContent: `Estimated accuracy · ${s.name}` }),
      el('div', { className: 'big', textContent: pct(e.accuracy) }),
      el('div', { className: 'range', textContent: `${interval(e)} by ${e.method} · ${Math.round(LEVEL * 100)}% interval` }),
      ...(s.result.accuracy !== undefined ? [el('div', { className: 'range', dataset: { testid: 'card-truth' }, textContent: `true accuracy ${pct(s.result.accuracy)}` })] : []),
      ...(s.prediction.too_small ? [el('div', { className: 'range', dataset: { testid: 'too-small' }, textContent: `${s.prediction.n} rows: too ` +
        `small to judge without labels (fewer than ${s.prediction.too_small.minimum_rows}); label them for its accuracy` })]
        : need ? [el('div', { className: 'range', dataset: { testid: 'labels-needed' }, textContent: `${labelsNeededText(need)} (Audit, below)` })] : []),
    ];
    cards.push(el('div', { className: `card${alert ? ' alert' : ''}`, dataset: { testid: 'estimate-card', name: s.name } },
      ...shown, ...warnings.map((w) => el('div', { className: 'warning', textContent: `⚠ ${w}` }))));
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
  const audited = state.sets.some((s) => s.prediction?.audit);
  if (audited) head.push(`audited ${level}`);
  if (state.calibration) head.push(`estimate ${level}`, 'class shift');
  head.push(m);
  if (state.calibration) head.push(`estimate (${m}) ${level}`);
  head.push('MaNo criterion', 'branch');
  // the sets to estimate first, then the labeled ones (each group in the order added)
  const ordered = [...state.sets.filter((s) => s.result.accuracy === undefined), ...state.sets.filter((s) => s.result.accuracy !== undefined)];
  const rows = ordered.map((s) => {
    const cells = [s.name, s.result.n.toLocaleString(), s.result.k, pct(s.result.accuracy)];
    const a = s.prediction?.audit;
    if (audited) cells.push(a ? el('span', { title: auditText(a) }, pct(a.accuracy), el('span', { className: 'interval', textContent: ` ${range(a.interval)} ${a.n} labels` })) : '–');
    if (state.calibration) {
      const e = s.prediction?.estimate;
      const warnings = e ? estimateWarnings(s) : [];
      // a labeled set calibrated here: its estimate beside its truth (in-sample: the line was fitted on it)
      const inSample = e && !state.loaded && s.result.accuracy !== undefined;
      if (inSample) warnings.unshift('in-sample: the calibration was fitted on this set');
      cells.push(e ? el('span', { title: warnings.join('; ') }, pct(e.accuracy),
        el('span', { className: 'interval', textContent: ` ${interval(e)} ${e.method}${warnings.length > (inSample ? 1 : 0) ? ' ⚠' : ''}` })) : '–');
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

// The pairing table: each set's logits file (with what the reader left out of a CSV) and its
// labels, which the user can change; a CSV's label column is shown as it is.
function renderPairing() {
  const labelNames = [...state.labelFiles.keys()].sort();
  const rows = state.sets.map((s) => {
    let labelsCell;
    if (s.labelColumn !== undefined) {
      labelsCell = typeof s.labelColumn === 'number' ? `column ${s.labelColumn} of ${s.file.name}` : `column "${s.labelColumn}" of ${s.file.name}`;
    } else {
      const select = el('select', { ariaLabel: `labels of ${s.name}` },
        el('option', { value: '', textContent: 'none (unlabeled)' }),
        ...labelNames.map((n) => el('option', { value: n, textContent: n, selected: s.labels?.name === n })));
      select.dataset.testid = 'pair-labels';
      select.dataset.name = s.name;
      // the pairing is changed by files.js (main.js listens): drawing asks, it does not score
      select.onchange = () => $('pairing-table').dispatchEvent(new CustomEvent('pair', {
        detail: { set: s, labels: select.value ? state.labelFiles.get(select.value) : undefined },
      }));
      labelsCell = select;
    }
    const notes = (s.notes ?? []).map((n) => el('div', { className: 'note', dataset: { testid: 'file-note' }, textContent: n }));
    return el('tr', {}, el('td', { textContent: s.name }), el('td', {}, s.file.name, ...notes), el('td', {}, labelsCell));
  });
  // a file the reader left columns out of: open the table, so that it is seen
  if (state.sets.some((s) => s.notes?.length)) $('pairing').open = true;
  // a labels file no set uses yet: open the table, so that it is paired by hand
  const used = new Set(state.sets.map((x) => x.labels?.name).filter(Boolean));
  if (labelNames.some((n) => !used.has(n))) $('pairing').open = true;
  $('pairing-table').replaceChildren(
    el('thead', {}, el('tr', {}, ...['set', 'logits file', 'labels file'].map((h) => el('th', { textContent: h, scope: 'col' })))),
    el('tbody', {}, ...rows));
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
    const name = x === cal?.recommended ? `${x} ★` : x;
    const tr = el('tr', { className: x === m ? 'selected' : '' },
      ...[name, fmt(summary[x].r2, 3), fmt(summary[x].spearman, 3), fmt(summary[x].kendall, 3), pct(heldOut(x))]
        .map((c) => el('td', { className: x === m ? 'selected' : '', textContent: c })));
    tr.style.cursor = 'pointer';
    tr.onclick = () => selectMethod(x);
    return tr;
  });
  const legend = cal?.recommended ? el('caption', { textContent: `★ recommended (lowest held-out error)` +
    (cal.methods?.[labelShiftMethod()] ? ` · ${labelShiftMethod()} on sets that pass the label-shift check` : '') }) : '';
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
  // what the chart shows, taken before the wait: an operation that starts meanwhile forgets sets' results;
  // MaNo and the softrun variants depend on the branch the sets were scored on: name it
  const info = methodInfo(m);
  const branch = info?.softrun_variants || info?.on_softrun_branch ? branchName(labeled[0]?.result.methods.mano) : null;
  const labeledPoints = labeled.map((s) => ({ name: s.name, x: valueOf(s.result, m), y: s.result.accuracy }));
  const unlabeledPoints = state.sets.filter((s) => s.result && s.result.accuracy === undefined && s.prediction?.methods?.[m])
    .map((s) => ({ name: s.name, x: valueOf(s.result, m), y: s.prediction.methods[m].accuracy }));
  const band = await worker.predictScores(state.calibration, m, gridX, { level: LEVEL });
  scatterChart($('scatter'), {
    method: m,
    branch: branch && branch !== '–' ? branch : null,
    level: LEVEL,
    labeled: labeledPoints,
    unlabeled: unlabeledPoints,
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

export function selectMethod(m) {
  state.method = m;
  state.picked = true;
  render();
  if (state.timeline) drawTimeline();
}
