// Audit mode (mano audit, mano predict --audit): for a set with an estimate, the rows to label as
// the core draws them (downloaded as the CSV `mano audit` writes), the labeled CSV read back,
// and the set predicted again with its audit. Every file stays on this machine.
import { download } from './export.js';
import { $, el, pct, showError } from './page.js';
import { estimated, LEVEL, state, worker } from './state.js';

// The sets an audit can sharpen: those with an estimate from the calibration.
const auditable = () => state.sets.filter(estimated);
const chosen = () => auditable().find((s) => s.name === $('audit-set').value);

export const range = ([lo, hi]) => `[${pct(lo)}, ${pct(hi)}]`;

// "30 labels would bring it to ±0.125", from the core's labels_for_width.
export const labelsNeededText = (need) => `${need.n.toLocaleString()} label${need.n === 1 ? '' : 's'} would bring it to ` +
  `±${(need.width / 2).toFixed(3)}`;

// The audited accuracy in words, Wilson's labels-only interval beside it.
export function auditText(a) {
  const how = a.method === 'ppi' ? 'with the correctness model (PPI)' : `(${a.reason})`;
  const warned = (a.warnings ?? []).map((w) => ` · warning: ${w}`).join('');
  return `${pct(a.accuracy)} ${range(a.interval)} from ${a.n.toLocaleString()} labeled rows ${how} · labels alone (Wilson) ${range(a.wilson)}${warned}`;
}

export function renderAudit() {
  const sets = auditable();
  $('audit-panel').hidden = sets.length === 0;
  if (!sets.length) return;
  const select = $('audit-set');
  const was = select.value;
  select.replaceChildren(...sets.map((s) => el('option', { value: s.name, textContent: s.name })));
  if (sets.some((s) => s.name === was)) select.value = was;
  describeAudit(false);
}

// What the panel says of the chosen set; `suggest`: put its labels_for_width in the budget.
export function describeAudit(suggest = true) {
  const s = chosen();
  if (!s) return;
  const need = s.prediction.labels_for_width;
  const budget = $('audit-budget');
  budget.max = String(s.result.n);
  if (suggest || !budget.value) budget.value = String(Math.min(s.result.n, need?.n ?? 100));
  const e = s.prediction.estimate;
  const lines = [`${s.name}: label-free ${pct(e.accuracy)} ${range(e.interval)} by ${e.method}` +
    (need ? ` · ${labelsNeededText(need)}` : '')];
  if (s.prediction.audit) lines.push(`audited (${s.audit.name}): ${auditText(s.prediction.audit)}`);
  else if (s.draw) lines.push(`${s.draw.file}: ${s.draw.rows} rows to label (seed ${s.draw.seed}); add a column label with each ` +
    `row's true class (0 to ${s.result.k - 1}), then give the file back here`);
  $('audit-note').replaceChildren(...lines.map((t) => el('div', { textContent: t })));
}

// The rows to label of the chosen set, drawn by the core and downloaded as mano audit's CSV.
export async function exportAuditRows() {
  const s = chosen();
  if (!s) return;
  const seedText = $('audit-seed').value.trim();
  const budget = Number($('audit-budget').value);
  try {
    const draw = await worker.audit({ rows: s.result.n, cols: s.result.k, name: s.file.name }, budget,
      seedText === '' ? {} : { seed: Number(seedText) });
    const file = `${s.name}_audit.csv`;
    s.draw = { file, rows: draw.rows.length, seed: draw.seed };
    $('audit-seed').value = String(draw.seed);
    download(file, draw.csv, 'text/csv');
    describeAudit(false);
  } catch (e) {
    showError(`audit of ${s.name}: ${e.message}`);
  }
}

// The audited prediction of a set whose audit is `audit` ({ text, name }), its rows read from its
// file in the Worker.
export const predictAudited = (s, audit) => worker.predict(state.calibration, s.result,
  { level: LEVEL, audit: audit.text, auditName: audit.name, logits: s.file, labelColumn: s.labelColumn });

// A labeled audit file given back: the chosen set predicted again with it. -> whether it was.
export async function readAuditFile(file) {
  const s = chosen();
  if (!s || !state.calibration) return false;
  try {
    const audit = { text: await file.text(), name: file.name };
    s.prediction = await predictAudited(s, audit);
    s.audit = audit;
    return true;
  } catch (e) {
    showError(e.message.startsWith(file.name) ? e.message : `${file.name}: ${e.message}`);
    return false;
  }
}
