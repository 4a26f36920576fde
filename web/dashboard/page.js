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

// Operations asked for and not yet finished (serially): the page is busy until the last one ends.
let pending = 0;
let queue = Promise.resolve();

function showState(busy) {
  const working = busy || pending > 0;
  $('status').dataset.state = working ? 'busy' : state.sets.length || state.history ? 'ready' : 'idle';
  for (const id of ['load-example', 'build-timeline', 'clear']) $(id).disabled = working;
}

export function setStatus(text, busy) {
  $('status').textContent = text;
  showState(busy);
}

// Runs the operations a user asks for (files dropped, a set paired, the example, the timeline)
// one at a time, in order: two at once would score and forget the same sets. The status is busy
// from the moment one is asked for, so whoever waits for "ready" waits for this one too.
export function serially(task) {
  pending += 1;
  showState(true);
  queue = queue.then(task).catch((e) => showError(e.message)).finally(() => {
    pending -= 1;
    showState(false);
  });
  return queue;
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
  const history = state.history ? `The monitoring history ${state.history.name} is open (${state.history.points} point` +
    `${state.history.points === 1 ? '' : 's'}, below).` : '';
  if (!state.sets.length) return history || 'Add files to start.';
  const labeled = state.sets.filter((s) => s.result.accuracy !== undefined).length;
  const unlabeled = state.sets.length - labeled;
  return `${state.sets.length} set${state.sets.length === 1 ? '' : 's'} scored (${labeled} labeled, ${unlabeled} unlabeled)` +
    (state.source ? ', with the source set' : '') + '.' + (history ? ` ${history}` : '');
}
