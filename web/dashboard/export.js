// The results as files: JSON in the CLI's shape, a CSV of every set, and the download of either.
import { el } from './page.js';
import { LEVEL, methods, state, valueOf } from './state.js';

// The CLI's shape: {"sets": [{"name", "n", "k", "accuracy"?, "methods", ...}], ...}.
export function exportObject() {
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
      ...(s.prediction?.labels_for_width ? { labels_for_width: s.prediction.labels_for_width } : {}),
      ...(s.prediction?.audit ? { audit: { ...s.prediction.audit, file: s.audit.name } } : {}),
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
      out.timeline.points = t.view.points.map((p) => ({ name: p.label, value: p.y, ...(p.truth ? { truth: true } : {}),
        ...(p.lo !== undefined ? { interval: [p.lo, p.hi] } : {}) }));
    }
  }
  return out;
}

export function csvText() {
  const all = methods();
  const m = state.method;
  // audit columns only when a set was audited, so the file keeps its columns otherwise
  const audited = state.sets.some((s) => s.prediction?.audit);
  const quote = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const lines = [['set', 'n', 'k', 'accuracy', ...all, `estimate_${m}`, 'lower', 'upper', 'estimate', 'estimate_method',
    'estimate_lower', 'estimate_upper', 'estimate_regime', 'class_shift', 'class_shift_outside',
    ...(audited ? ['audit_n', 'audit_accuracy', 'audit_lower', 'audit_upper', 'audit_method', 'audit_wilson_lower', 'audit_wilson_upper'] : []),
  ].join(',')];
  for (const s of state.sets) {
    const a = s.prediction?.audit;
    const p = s.prediction?.methods?.[m];
    const e = s.prediction?.estimate;
    const shift = s.prediction?.shift;
    lines.push([s.name, s.result.n, s.result.k, s.result.accuracy ?? '', ...all.map((x) => valueOf(s.result, x) ?? ''),
      p?.accuracy ?? '', p?.interval[0] ?? '', p?.interval[1] ?? '',
      e?.accuracy ?? '', e?.method ?? '', e?.interval[0] ?? '', e?.interval[1] ?? '', e?.regime ?? '',
      shift?.distance ?? '', shift?.outside ?? '',
      ...(audited ? [a?.n ?? '', a?.accuracy ?? '', a?.interval[0] ?? '', a?.interval[1] ?? '', a?.method ?? '', a?.wilson[0] ?? '', a?.wilson[1] ?? ''] : []),
    ].map(quote).join(','));
  }
  return `${lines.join('\n')}\n`;
}

export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
