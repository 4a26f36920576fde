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

// Each set scored on its own (per-set softrun); one that fails is said and dropped.
async function scanAll(todo) {
  for (const [i, set] of todo.entries()) {
    try {
      await scoreSet(set, i, todo.length);
    } catch (e) {
      showError(e.message.startsWith(set.file.name) ? e.message : `${set.file.name}: ${e.message}`);
      state.sets.splice(state.sets.indexOf(set), 1);
    }
  }
}

// Labeled before it is read: a labels file pairs with it, or its scan had labels. A CSV or
// .safetensors file may hold its own labels, which only reading it tells: such files are scanned
// first.
const knownLabeled = (s) => s.labels !== undefined || s.scan?.accuracy !== undefined;
const mayHoldLabels = (s) => s.labels === undefined && /\.(csv|tsv|safetensors)$/i.test(s.file.name);

// A set is scored on its own only where no calibration will score it: the family workflow scores
// the labeled sets and a calibration the others, so scoring each first would do the work twice.
export async function rescore() {
  await scanAll(state.sets.filter((s) => !s.scan && mayHoldLabels(s)));
  await analyse();
}

// With three or more labeled sets: the labeled files scored, evaluated and calibrated in the
// Worker by the package's calibrateFiles (the core's family workflow: MaNo's branch chosen once
// for all of them, as `mano eval` and `mano calibrate` do), then every set read with that
// calibration, as `mano predict` does (the labeled ones on the results the family scored, their
// estimates beside their truth; the others scored with the calibration's options). Without one,
// or when it fails, each set is shown as scanned on its own.
export async function analyse(again = true) {
  state.evaluation = null;
  state.calibration = null;
  for (const s of state.sets) s.prediction = undefined;
  const labeled = state.sets.filter(knownLabeled);
  if (state.loaded) {
    if (await analyseWithLoaded(labeled)) return;
  } else if (labeled.length >= 3) {
    const failed = await calibrateHere(labeled);
    if (!failed) return;
    // a labeled set the family could not read (labels of another length, a broken file) is named
    // and dropped by scoring each on its own; the others are then calibrated again
    const before = state.sets.length;
    await scanAll(labeled.filter((s) => !s.scan));
    if (again && state.sets.length < before) {
      await analyse(false);
      return;
    }
    showError(`calibration: ${failed.message}`);
  }
  await scanAll(state.sets.filter((s) => !s.scan));
  for (const s of state.sets) Object.assign(s, { result: s.scan, branch: null, prediction: undefined });
  state.calibration = null;
  state.evaluation = null;
}

// The family workflow's answer for the labeled sets, kept while they, their files and the source
// set are the same: a file added to the unlabeled ones is read with it, not calibrated again.
let family = null;
const familyKey = (labeled) => [state.source, ...labeled.flatMap((s) => [s, s.file, s.labels, s.labelColumn, s.group])];
const sameKey = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// -> null, or the error that stopped it
async function calibrateHere(labeled) {
  try {
    const key = familyKey(labeled);
    if (!family || !sameKey(family.key, key)) {
      family = null;
      const label = `Scoring the ${labeled.length} labeled sets as mano calibrate does`;
      showProgress(label, 0, 1);
      const answer = await worker.calibrateFiles(
        labeled.map((s) => ({ name: s.name, file: s.file, labels: s.labels, labelColumn: s.labelColumn })), options(),
        { onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total) });
      family = { key, answer, branch: `calibration:${JSON.stringify(answer.calibration)}` };
    }
    const { answer, branch } = family;
    labeled.forEach((s, i) => Object.assign(s, { result: answer.sets[i].result, branch }));
    state.evaluation = answer.evaluation;
    state.calibration = answer.calibration;
    await predictWith(state.sets, answer.calibration, branch, 'the calibration', true);
    return null;
  } catch (e) {
    family = null;
    return e;
  } finally {
    hideProgress();
  }
}

// Each set scored with the calibration's options (as `mano predict` scores it; once per
// calibration, which `key` names) and read with it. `dropFailing`: a set that cannot be scored is
// said and dropped (else its error stops the whole).
async function predictWith(sets, calibration, key, name, dropFailing = false) {
  const todo = sets.filter((s) => s.branch !== key);
  for (const [i, s] of todo.entries()) {
    try {
      s.result = await scoreFile(s, { calibration }, `Scoring ${s.name} as ${name} says (${i + 1} of ${todo.length})`);
      s.branch = key;
    } catch (e) {
      if (!dropFailing) throw e;
      showError(e.message.startsWith(s.file.name) ? e.message : `${s.file.name}: ${e.message}`);
      state.sets.splice(state.sets.indexOf(s), 1);
    }
  }
  for (const s of sets.filter((x) => state.sets.includes(x))) {
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
    return true;
  } catch (e) {
    showError(`${name}: ${e.message}`);
    state.loaded = null;
    return false;
  } finally {
    hideProgress();
  }
}
