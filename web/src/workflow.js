// Labeled sets and calibrations: evaluate() and calibrate() (sets given as results, or with
// their logits through the core's family workflow), predictions, and the monitoring rules.
import { InputError, ManoError } from './errors.js';
import { callCore, readerCore as ready } from './core.js';
import { jsonForCore } from './json.js';
import { shownValue } from './text.js';
import { Accumulator } from './accumulator.js';
import { predictWithAudit } from './audit.js';
import { checkLevel, checkOptions, checkShape, columnsOf, coreDefaultMethods, coreOptions, wholeNumber, withDefaultMethods } from './options.js';

const call = (fn) => callCore(ready(), fn);

function setsJson(sets) {
  if (!Array.isArray(sets)) throw new InputError('sets must be an array of { name, group?, result }');
  return JSON.stringify(sets.map((s, i) => {
    if (!s || typeof s.name !== 'string' || !s.result) throw new InputError(`set ${i} must be { name, group?, result }`);
    return s.group === undefined ? { name: s.name, result: s.result } : { name: s.name, group: String(s.group), result: s.result };
  }));
}

const CALIBRATION_NORMALIZATIONS = ['family', 'softrun', 'softmax', 'taylor'];

// The normalization of evaluate() and calibrate(): 'family' (the default) or one of score()'s.
function familyNormalization(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new InputError('options must be an object');
  const { normalization = 'family', taylorOrders, labelShiftCopies, labelShiftSeed, ...rest } = options;
  if (!CALIBRATION_NORMALIZATIONS.includes(normalization)) {
    throw new InputError(`normalization '${normalization}' is not one of ${CALIBRATION_NORMALIZATIONS.join(', ')} ` +
      "('family': one branch chosen for all the sets; 'softrun': each set's own criterion)");
  }
  const family = normalization === 'family';
  checkOptions({ normalization, criterion: rest.criterion });
  return { family, taylorOrders, labelShiftCopies, labelShiftSeed, rest: { ...rest, normalization: family ? 'softrun' : normalization } };
}

// Sets given with their logits ({ name, group?, logits, shape: { rows, cols, dtype? }, labels }),
// scored by the core's family workflow (src/mano/workflow/family.hpp) as `mano eval` and `mano
// calibrate` score a manifest: a first pass with softrun, MaNo alone at the other Taylor orders
// (options.taylorOrders, default [2]), one branch chosen for all the sets, every set scored again
// on it. This function only hands the core a scorer over the arrays; the source set is fitted once.
function withLogits(sets) {
  if (!Array.isArray(sets) || !sets.some((s) => s?.logits !== undefined)) return false;
  sets.forEach((s, i) => {
    if (!s || typeof s.name !== 'string' || s.logits === undefined)
      throw new InputError(`set ${i}: give every set as { name, group?, logits, shape, labels }, or every set as { name, group?, result }`);
    checkShape(s.logits, s.shape);
    if (s.labels === undefined) throw new InputError(`set "${s.name}" has no labels; every set needs them here`);
  });
  return true;
}

// The family options of the core; `calibrating`: calibrate's label-shifted copies of each set
// (options.labelShiftCopies, default 6, 0 for none; options.labelShiftSeed, default 0), which
// evaluate() does not take.
function familyOf(options, calibrating) {
  const { family, taylorOrders = [2], labelShiftCopies, labelShiftSeed, rest } = familyNormalization(options);
  checkOptions({ taylor_orders: taylorOrders });
  const json = { family, taylor_orders: taylorOrders };
  if (calibrating) {
    json.label_shift_copies = {};
    if (labelShiftCopies !== undefined) json.label_shift_copies.copies = wholeNumber(labelShiftCopies, 'labelShiftCopies');
    if (labelShiftSeed !== undefined) json.label_shift_copies.seed = wholeNumber(labelShiftSeed, 'labelShiftSeed');
  } else if (labelShiftCopies !== undefined || labelShiftSeed !== undefined) {
    throw new InputError('labelShiftCopies and labelShiftSeed are calibrate()\'s: evaluate() reports on the sets as they are');
  }
  return { familyJson: JSON.stringify(json), rest };
}

const setNames = (sets) => JSON.stringify(sets.map((s) => (s.group === undefined ? { name: s.name } : { name: s.name, group: String(s.group) })));

// The requests of a FamilyRun (the core's family_scoring: which set to score with which pass),
// each { index, pass: 'first' | 'variant' | 'rescore' | 'copy', keys: the option keys the pass
// sets, in the core's names, wantsLabels: whether the set's labels go back with its result,
// rows: a copy's rows of the set (in order, repeats included) }. Each is answered (answer(),
// refuse()) before the next is asked for.
function* familyRequests(run) {
  for (let r = JSON.parse(call(() => run.next())); r !== null; r = JSON.parse(call(() => run.next()))) {
    const { pass, labels: wantsLabels = false, rows, copy, ...keys } = r.pass;
    yield { index: r.index, pass, keys, wantsLabels, rows };
  }
}

// A set scored: its result, the options it was scored with (the core's JSON), and its labels
// when the request wanted them.
const answer = (run, result, usedJson, labels) =>
  call(() => run.give(JSON.stringify(result), usedJson, labels ? JSON.stringify(Array.from(labels)) : ''));

// The rows of a copy (`rows` of the set, repeats included) and their labels, in order, from
// `data` (cols per row) where row r of the set is row `where(r)` (default r itself).
export function copyRows(data, cols, labels, rows, where = (r) => r) {
  const out = new data.constructor(rows.length * cols);
  rows.forEach((r, i) => out.set(data.subarray(where(r) * cols, (where(r) + 1) * cols), i * cols));
  return { data: out, labels: Int32Array.from(rows, (r) => labels[r]) };
}
// The scorer failed with a ManoError: an InputError again, unless the pass is a variant.
function refuse(run, e) {
  if (!(e instanceof ManoError)) throw e;
  call(() => run.fail(e.message));
}

function startFamily(sets, options, calibrating) {
  const { familyJson, rest } = familyOf(options, calibrating);
  return { run: call(() => ready().familyRun(setNames(sets), familyJson)), rest };
}

function finishFamily(run) {
  const { scored, warnings } = JSON.parse(call(() => run.finish()));
  return { scored: JSON.stringify(scored), warnings };
}

// The inputs the prepared options carry (src/mano/scan/resolve.hpp's, beside the rows' own).
const preparedInputs = (prepared) => [...(prepared.source ? ['source'] : []), ...(prepared.source_features ? ['source_features'] : [])];

// One set scored from its arrays on a pass: { result, used: the options JSON it was scored with }.
function scoreArrays(s, prepared, rest, pass, keys, copied) {
  const { rows } = checkShape(s.logits, s.shape);
  const opts = { ...prepared, ...keys };
  if (rest.methods === undefined && keys.methods === undefined)
    opts.methods = coreDefaultMethods(s.shape.cols, rows, preparedInputs(prepared), rest.input);
  const used = JSON.stringify(opts);
  const acc = new Accumulator(call(() => ready().makeAccumulator(s.shape.cols, used)), s.shape.cols);
  try {
    if (pass === 'copy') {
      const copy = copyRows(s.logits, s.shape.cols, s.labels, copied);
      acc.push(copy.data, { ...s.shape, rows: copied.length, labels: copy.labels });
    } else {
      acc.push(s.logits, { ...s.shape, labels: pass === 'variant' ? undefined : s.labels });
    }
    return { result: acc.result(), used };
  } finally {
    acc.dispose();
  }
}

// Sets given with their logits, scored synchronously by the core's one driver (score_family in
// bindings/common/json_calls.hpp), which calls back for each request; the source set is fitted once.
function scoredFamily(sets, options, calibrating = false) {
  const { familyJson, rest } = familyOf(options, calibrating);
  const prepared = JSON.parse(coreOptions(rest, sets[0].shape.cols));
  let thrown;  // an error that is not the input's: the run stops, and it is thrown again
  const score = (index, passJson) => {
    const { pass, labels: wantsLabels = false, rows, copy, ...keys } = JSON.parse(passJson);
    const s = sets[index];
    try {
      const { result, used } = scoreArrays(s, prepared, rest, pass, keys, rows);
      return { result: JSON.stringify(result), options: used, labels: wantsLabels ? JSON.stringify(Array.from(s.labels)) : '' };
    } catch (e) {
      if (e instanceof ManoError) return { error: e.message };
      thrown = e;
      return { abort: true };
    }
  };
  let out;
  try {
    out = JSON.parse(call(() => ready().scoreFamily(setNames(sets), familyJson, score)));
  } catch (e) {
    throw thrown ?? e;
  }
  return { scored: JSON.stringify(out.scored), warnings: out.warnings };
}

// A pass's option keys (the core's names, src/mano/workflow/family.hpp pass::to_json) as the package's.
const PASS_OPTION_KEYS = {
  normalization: 'normalization', taylor_order: 'taylorOrder', methods: 'methods', correctness_histogram: 'correctnessHistogram',
};

// The family workflow over sets whose rows are read asynchronously (Files in the Worker), one
// awaited read at a time: `scoreSet(index, options, pass, rows)` answers each request with a
// promise of that set's result scored with these options (the package's, as score() takes them):
// all its rows, or on a 'copy' pass the `rows` given (in order, repeats included) with their
// labels; the rows' labels are not needed on a 'variant' pass. `labelsOf(index)` gives a set's
// labels (an Int32Array) when the core asks for them. sets: [{ name, group? }], `cols` their
// classes; `calibrating`: calibrate's label-shifted copies too. -> { scored (the core's JSON
// text), warnings }.
export async function scoreFamilyAsync(sets, options, cols, scoreSet, labelsOf, calibrating = false) {
  ready();
  if (!Array.isArray(sets) || sets.some((s) => !s || typeof s.name !== 'string'))
    throw new InputError('sets must be an array of { name, group?, ... }');
  const { run, rest } = startFamily(sets, options, calibrating);
  try {
    // the options each set was scored with, as the core writes them: the source set fitted once
    const prepared = JSON.parse(coreOptions(rest, cols));
    for (const { index, pass, keys, wantsLabels, rows } of familyRequests(run)) {
      const opts = { ...rest };
      for (const [key, value] of Object.entries(keys)) opts[PASS_OPTION_KEYS[key]] = value;
      let result;
      try {
        result = await scoreSet(index, opts, pass, rows);
      } catch (e) {
        refuse(run, e);
        continue;
      }
      const used = { ...prepared, ...keys };
      if (keys.methods === undefined) used.methods = withDefaultMethods(opts, cols, result.n).methods ?? prepared.methods;
      answer(run, result, JSON.stringify(used), wantsLabels ? labelsOf(index) : undefined);
    }
    return finishFamily(run);
  } finally {
    run.delete();
  }
}

const withNotes = (object, notes) => Object.defineProperty(object, 'notes', { value: notes, enumerable: false });

// mano eval and mano calibrate over a scored family (scoredFamily, scoreFamilyAsync).
export function evaluateScored(scored, warnings = []) {
  const { report, notes } = JSON.parse(call(() => ready().evaluateFamily(scored)));
  // what `mano eval` says on stderr: an order left out of a set's choice, a summary it could not make
  return Object.defineProperty(report, 'warnings', { value: [...warnings, ...notes], enumerable: false });
}

export function calibrateScored(scored, warnings = []) {
  const { calibration, notes } = JSON.parse(call(() => ready().calibrateFamily(scored)));
  return withNotes(calibration, [...warnings, ...notes]);
}

// The paper's protocol over labeled sets (mano eval): per set and per method R2, Pearson,
// Spearman, Kendall, LOO MAE. Sets given as results are evaluated as they are; sets given with
// their logits are scored first by the family workflow (withLogits), and the report then names
// the branch chosen (`normalization`), as `mano eval --json` does, with a non-enumerable
// `warnings`.
export function evaluate(sets, options = {}) {
  ready();
  if (!withLogits(sets)) return JSON.parse(call(() => ready().evaluate(setsJson(sets))));
  const { scored, warnings } = scoredFamily(sets, options);
  return evaluateScored(scored, warnings);
}

// A per-method linear calibration score -> accuracy, fitted on >= 3 labeled sets; the object is
// what `mano calibrate` writes (JSON.stringify it to save it), with the notes on methods left out
// in a non-enumerable `notes`. Sets given with their logits are scored by the family workflow
// (withLogits): the calibration is then the one `mano calibrate` writes for the same sets and
// options. Sets given as results (scored with `options`): normalization 'family' (the default)
// chooses MaNo's softrun branch once for all the sets from the variants their softrun scans
// keep, and records it; 'softrun' keeps each set's own branch.
export function calibrate(sets, options = {}) {
  ready();
  if (withLogits(sets)) {
    const { scored, warnings } = scoredFamily(sets, options, true);
    return calibrateScored(scored, warnings);
  }
  const probe = sets?.[0]?.result?.k;
  const { family, taylorOrders, labelShiftCopies, rest } = familyNormalization(options);
  if (labelShiftCopies !== undefined && labelShiftCopies !== 0)
    throw new InputError('labelShiftCopies draws rows of each set: give the sets with their logits, not as results');
  if (taylorOrders !== undefined)
    throw new InputError('taylorOrders scores MaNo again at other orders: give the sets with their logits, not as results');
  const prepared = coreOptions(rest, columnsOf(rest.input, wholeNumber(probe, 'sets[0].result.k')));
  const json = JSON.stringify({ ...JSON.parse(prepared), family });
  const { calibration, notes } = JSON.parse(call(() => ready().calibrate(setsJson(sets), json)));
  return withNotes(calibration, notes);
}

// The monitoring rules of the core (src/mano/workflow/monitoring.hpp) over a timeline: points
// [{ estimate: number | null, se?: the score's standard error, slope?: the prediction's slope (the
// accuracy per unit of score at that score), rows? }], and either `reference` (the alert line is
// the mean - 3 sd of the first `reference` points' estimates) or a `threshold` given; with each
// point's slope (else the option `slope`, the calibrated line's, right on the identity link only),
// whether the points are too small for their estimates (sampling noise above 0.05). -> { threshold: { value, reference, mean?, sd? },
// alerts: [indices], noise?: { half_width, rows, rows_needed, limit } }
export function monitor(points, { reference = 0, threshold, slope } = {}) {
  ready();
  if (!Array.isArray(points)) throw new InputError('points must be an array of { estimate, se?, slope?, rows? }');
  if (!Number.isSafeInteger(reference) || reference < 0) throw new InputError(`reference must be a whole number of points >= 0 (got ${shownValue(reference)})`);
  if (reference === 0 && typeof threshold !== 'number') throw new InputError('give a reference period (reference > 0) or a threshold');
  const corePoints = points.map((p, i) => {
    if (!p || typeof p !== 'object') throw new InputError(`point ${i} must be { estimate, se?, slope?, rows? }`);
    return { estimate: p.estimate ?? null, score_se: p.se ?? null, slope: p.slope ?? null, rows: p.rows ?? 0 };
  });
  return JSON.parse(call(() => ready().monitor(JSON.stringify(corePoints), reference, threshold ?? 0, JSON.stringify(slope ?? null))));
}

// Estimated accuracy with a prediction interval for every calibrated method present in `result`
// (and `labels_for_width` when the estimate's interval is wider than 0.25). With `audit` (the
// labeled audit CSV's text, named `auditName` in messages, or { rows, labels }) and `logits` (the
// Matrix `result` was scored from): `audit`, the accuracy from those labels (audit.js).
export function predict(calibration, result, options = {}) {
  ready();
  const { level = 0.9, audit, logits } = options;
  if (audit !== undefined) return predictWithAudit(calibration, result, options);
  if (logits !== undefined) throw new InputError('options.logits is read for options.audit: give the labeled audit too, or leave logits out');
  checkLevel(level);
  return JSON.parse(call(() => ready().predict(jsonForCore(calibration, 'calibration'), JSON.stringify(result), level)));
}

// The accuracy the calibration implies for each of `scores` of one method, with the interval
// from the calibration's own uncertainty: [{ accuracy, interval: [lo, hi], extrapolated }].
export function predictScores(calibration, method, scores, { level = 0.9 } = {}) {
  ready();
  checkLevel(level);
  if (!Array.isArray(scores) && !ArrayBuffer.isView(scores)) throw new InputError('scores must be an array of numbers');
  return JSON.parse(call(() => ready().predictScores(jsonForCore(calibration, 'calibration'), String(method),
    JSON.stringify(Array.from(scores, Number)), level)));
}
