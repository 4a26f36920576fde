// The page's small parts: DOM helpers, number formatting, and the status line, progress bar and
// error list.
import { state } from './state.js';

export const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
export const el = (tag, { dataset, ...props } = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  if (dataset) Object.assign(node.dataset, dataset);
  node.append(...children);
  return node;
};

export const fmt = (x, digits = 4) => (x === undefined || x === null || Number.isNaN(x) ? '–' : Number(x).toFixed(digits));
export const pct = (x) => (x === undefined || x === null ? '–' : `${(100 * x).toFixed(1)}%`);
export const interval = (p) => `[${pct(p.interval[0])}, ${pct(p.interval[1])}]`;
export const branchName = (mano) => (mano ? (mano.normalization === 'taylor' ? `taylor${mano.taylor_order}` : mano.normalization) : '–');

export function setStatus(text, busy) {
  const s = $('status');
  s.textContent = text;
  s.dataset.state = busy ? 'busy' : state.sets.length ? 'ready' : 'idle';
  for (const id of ['load-example', 'build-timeline', 'clear']) $(id).disabled = busy;
}

export function showProgress(label, done, total) {
  const box = $('progress');
  box.hidden = false;
  const percent = total ? (100 * done) / total : 0;
  box.querySelector('.fill').style.width = `${percent}%`;
  box.setAttribute('aria-valuenow', String(Math.round(percent)));
  box.setAttribute('aria-valuetext', label);
  box.querySelector('.label').textContent = label;
}
export const hideProgress = () => { $('progress').hidden = true; };

export function showError(message) {
  const close = el('button', { type: 'button', textContent: '✕', title: 'Dismiss this message' });
  close.setAttribute('aria-label', 'Dismiss this message');
  const item = el('li', {}, el('span', { textContent: message }), close);
  close.onclick = () => item.remove();
  $('errors').append(item);
}

export function summaryText() {
  if (!state.sets.length) return 'Add files to start.';
  const labeled = state.sets.filter((s) => s.result.accuracy !== undefined).length;
  const unlabeled = state.sets.length - labeled;
  return `${state.sets.length} set${state.sets.length === 1 ? '' : 's'} scored (${labeled} labeled, ${unlabeled} unlabeled)` +
    (state.source ? ', with the source set' : '') + '.';
}
