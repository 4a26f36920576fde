// The mano dashboard: logit files in, accuracy estimates out, all in a Worker on this machine.
// This is its entry: the page's controls wired to the other modules, and the Worker started.
import 'uplot/dist/uPlot.min.css';
import './style.css';

import { describeAudit, exportAuditRows, readAuditFile } from './audit.js';
import { csvText, download, exportObject } from './export.js';
import { addFiles, repair } from './files.js';
import { drawHistory, isHistoryFile, openHistory } from './history.js';
import { $, serially, setStatus, showError, summaryText } from './page.js';
import { render, renderHeadline, selectMethod } from './render.js';
import { setMethodTable, state, worker } from './state.js';
import { buildTimeline, drawTimeline } from './timeline.js';

const timelineHelp = $('timeline-note').textContent;

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
    loaded: null, manifest: null, waiting: null, labelFiles: new Map(), history: null,
  });
  $('errors').replaceChildren();
  $('timeline').replaceChildren();
  $('timeline-note').textContent = timelineHelp;
  $('timeline-alerts').replaceChildren();
  $('history-panel').hidden = true;
  render();
  setStatus(summaryText(), false);
}

// A monitoring history (.db) opens as its timeline; the other files are sets, manifests, calibrations.
async function addAny(fileList) {
  const files = [...fileList];
  for (const f of files.filter(isHistoryFile)) await openHistory(f);
  const rest = files.filter((f) => !isHistoryFile(f));
  if (rest.length) await addFiles(rest);
  else setStatus(summaryText(), false);
}

// a set paired with other labels in the pairing table (render.js asks)
$('pairing-table').addEventListener('pair', (e) => serially(() => repair(e.detail.set, e.detail.labels)));

const input = $('file-input');
input.addEventListener('change', () => {
  const files = [...input.files];
  input.value = '';
  serially(() => addAny(files));
});
const zone = $('dropzone');
zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
zone.addEventListener('dragleave', () => zone.classList.remove('over'));
zone.addEventListener('drop', (e) => {
  e.preventDefault();
  zone.classList.remove('over');
  const files = [...e.dataTransfer.files];
  serially(() => addAny(files));
});
$('load-example').onclick = () => serially(loadExample);
$('clear').onclick = () => serially(clearAll);
// what draws the sets waits for an operation in progress: until it ends, its sets are not all scored
$('method-select').onchange = (e) => serially(() => selectMethod(e.target.value));
$('build-timeline').onclick = () => serially(buildTimeline);
$('threshold').onchange = () => serially(() => { renderHeadline(); if (state.timeline) drawTimeline(); });
$('reference').onchange = () => serially(() => { if (state.timeline) drawTimeline(); });
$('history-reference').onchange = drawHistory;
$('export-json').onclick = () => download('mano-results.json', `${JSON.stringify(exportObject(), null, 1)}\n`, 'application/json');
$('export-csv').onclick = () => download('mano-results.csv', csvText(), 'text/csv');
// the calibration as `mano calibrate -o` writes it: drop it here again, or give it to mano predict
$('save-calibration').onclick = () => download(state.loaded?.name ?? 'mano-calibration.json',
  `${JSON.stringify(state.calibration, (k, v) => (k === 'notes' ? undefined : v), 1)}\n`, 'application/json');
// audit mode: the rows to label out, the labeled file back in (read here, never uploaded)
$('audit-set').onchange = () => describeAudit(true);
$('audit-export').onclick = exportAuditRows;
const auditInput = $('audit-file');
auditInput.addEventListener('change', async () => {
  const [file] = auditInput.files;
  auditInput.value = '';
  if (file) serially(async () => { if (await readAuditFile(file)) render(); });
});
worker.init().catch((e) => showError(e.message));
// asked for before any file can be scored, so the worker answers it first
worker.methods().then(setMethodTable).catch(() => {});
setStatus(summaryText(), false);
