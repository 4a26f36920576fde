// Scoring and calibration: each set scored in the Worker, then the evaluation, calibration and
// predictions of `mano eval`, `mano calibrate` and `mano predict` (or those of a calibration file).
// It draws nothing: its callers (files.js) render what it leaves in the state.
import { predictAudited } from './audit.js';
import { hideProgress, showError, showProgress } from './page.js';
import { LEVEL, options, state, worker } from './state.js';

// A CSV's label column is the reader's to find (the one column named label, labels, y or target;
// native/io/csv_columns.hpp), and what it left out of the logits comes back as the file's notes.
async function scoreFile(set, how, label) {
  showProgress(label, 0, 1);
  const { result, notes, labelColumn } = await worker.scoreFile(set.file, how, {
    labels: set.labels,
    onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total),
  });
  Object.assign(set, { notes, labelColumn });
  return result;
}

export async function scoreSet(set, index, count) {
  set.scan = await scoreFile(set, options(), `Scoring ${set.name} (${index + 1} of ${count})`);
  set.result = set.scan;
  set.branch = null;
}

export async function rescore() {
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
}

// With three or more labeled sets: the labeled files scored, evaluated and calibrated in the
// Worker by the package's calibrateFiles (the core's family workflow: MaNo's branch chosen once
// for all of them, as `mano eval` and `mano calibrate` do), then every other set scored and read
// with that calibration, as `mano predict` does.
export async function analyse() {
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
    const label = `Scoring the ${labeled.length} labeled sets as mano calibrate does`;
    showProgress(label, 0, 1);
    const family = await worker.calibrateFiles(
      labeled.map((s) => ({ name: s.name, file: s.file, labels: s.labels, labelColumn: s.labelColumn })), options(),
      { onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total) });
    labeled.forEach((s, i) => Object.assign(s, { result: family.sets[i].result, branch: 'calibrated here' }));
    state.evaluation = family.evaluation;
    state.calibration = family.calibration;
    const unlabeled = state.sets.filter((s) => s.scan.accuracy === undefined);
    await predictWith(unlabeled, family.calibration, `calibration:${JSON.stringify(family.calibration)}`, 'the calibration');
  } catch (e) {
    showError(`calibration: ${e.message}`);
  } finally {
    hideProgress();
  }
}

// Each set scored with the calibration's options (as `mano predict` scores it; once per
// calibration, which `key` names) and read with it.
async function predictWith(sets, calibration, key, name) {
  const todo = sets.filter((s) => s.branch !== key);
  for (const [i, s] of todo.entries()) {
    s.result = await scoreFile(s, { calibration }, `Scoring ${s.name} as ${name} says (${i + 1} of ${todo.length})`);
    s.branch = key;
  }
  for (const s of sets) {
    s.prediction = await worker.predict(calibration, s.result, { level: LEVEL });
    if (s.audit) await auditAgain(s);
  }
}

// A set audited before: its labeled file read again with this calibration (dropped if it no longer fits).
async function auditAgain(s) {
  try {
    s.prediction = await predictAudited(s, s.audit);
  } catch (e) {
    showError(`${s.audit.name}: ${e.message}; the audit of ${s.name} is dropped`);
    s.audit = undefined;
  }
}

// With a calibration file: every set scored with its options and read with it, labeled sets too
// (their estimates beside the truth); the labeled sets' evaluation when there are three or more.
async function analyseWithLoaded(labeled) {
  const { name, calibration } = state.loaded;
  try {
    await predictWith(state.sets, calibration, `file:${name}`, name);
    state.calibration = calibration;
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
