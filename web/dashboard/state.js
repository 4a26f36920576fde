// The dashboard's shared state: the sets and what was computed from them, the Worker that scores
// them, the constants of the page and the options every set is scored with.
import { ManoWorker } from 'mano-score';
import ManoWorkerScript from 'mano-score/worker?worker';

export const LEVEL = 0.9;
// The timeline of every set in order, one point per set (the other choices are one file in chunks).
export const ALL_SETS = '\u0000all sets';
// A recommended method whose held-out error is above this is a poor fit, and the page says so.
export const POOR_FIT = 0.1;
// The package's method table gives the order of columns and rows and each method's facts (filled
// once the worker is up).
export let METHOD_ORDER = [];
let METHOD_INFO = new Map();
export const setMethodTable = (table) => {
  METHOD_ORDER = table.map((m) => m.name);
  METHOD_INFO = new Map(table.map((m) => [m.name, m]));
};
export const methodInfo = (name) => METHOD_INFO.get(name);
// The method whose estimate is the label-shift regime's (the table's estimates_label_shift).
export const labelShiftMethod = () => [...METHOD_INFO.values()].find((m) => m.estimates_label_shift)?.name;

export const worker = new ManoWorker(new ManoWorkerScript());

// sets: { name, file, labels?, labelColumn?, notes?, scan, result, branch?, prediction? }, in the order they
// came: `scan` is the set scored with per-set softrun (both MaNo branches at once), `result` the
// set as shown and calibrated: as the calibration scored it (`branch` names that calibration),
// else the scan. `method` is the one the user picked; until then the calibration's recommended one.
export const state = {
  sets: [], source: null, evaluation: null, calibration: null, method: null, picked: false, timeline: null,
  // a calibration file (`mano calibrate -o`) dropped in: { name, calibration }; every set is then
  // scored with its options and read with it, instead of a calibration fitted here
  loaded: null,
  // a manifest dropped in ({"source"?, "sets": [{name, group?, logits, labels?}]}): the files it
  // names pair as it says, by file name (a browser sees no paths)
  manifest: null,
  waiting: null,  // labels a manifest names whose logits are still to come: set name -> file
  labelFiles: new Map(),  // every labels file dropped, by file name: the pairing table offers them
  history: null,  // the monitoring history opened (history.js): { name, points }
};

// A set whose estimate stands for its accuracy (a headline card, the audit): one without labels, or
// any set read with a calibration file; a labeled set calibrated here shows its estimate beside its
// truth in the sets table only (the calibration was fitted on it).
export const estimated = (s) => Boolean(s.prediction?.estimate) && (Boolean(state.loaded) || s.result.accuracy === undefined);
export const valueOf = (result, m) => result?.methods?.[m]?.score ?? result?.methods?.[m]?.accuracy;
// Labels and a source set change what a scan holds: score the set again.
export const forget = (set) => Object.assign(set, { scan: null, result: null, branch: null });

export const options = () => (state.source ? { source: state.source } : {});
// The methods the sets have, in the package's order.
export function methods() {
  const present = new Set(state.sets.flatMap((s) => Object.keys(s.result.methods)));
  return METHOD_ORDER.filter((m) => present.has(m));
}
