// Scoring and calibration: each set scored in the Worker, then the evaluation, calibration and
// predictions of `mano eval`, `mano calibrate` and `mano predict` (or those of a calibration file).
import { hideProgress, showError, showProgress } from './page.js';
import { render } from './render.js';
import { familyOptions, LEVEL, options, state, worker } from './state.js';

async function scoreFile(set, how, label) {
  showProgress(label, 0, 1);
  const { result } = await worker.scoreFile(set.file, how, {
    labels: set.labels,
    labelColumn: set.labelColumn,
    onProgress: (done, total) => showProgress(`${label}: ${done.toLocaleString()} of ${total.toLocaleString()} rows`, done, total),
  });
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
  render();
}

// With three or more labeled sets: MaNo's branch chosen once for all of them (from their scans),
// every set scored on it, then the evaluation, the calibration and predictions for the rest: the
// numbers of `mano eval`, `mano calibrate` and `mano predict` on the same files.
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
