// Audit mode (docs/audit.md), as `mano audit` and `mano predict --audit` run it: the core draws
// the rows to label and writes their CSV, reads the labeled file back, and estimates the set's
// accuracy from those labels; this file only moves the audited rows' logits to it, scored with
// the calibration's scoring options as the CLI scores them.
import { InputError } from './errors.js';
import { callCore, readerCore as ready } from './core.js';
import { jsonForCore } from './json.js';
import { Accumulator } from './accumulator.js';
import { UNNAMED } from './loaders.js';
import { checkLevel, classesOf, coreOptions, dtypeOf, withDefaultMethods } from './options.js';
import { shownValue } from './text.js';

const call = (fn) => callCore(ready(), fn);


// A seed for a draw the caller did not seed: whole, at most 2^53 - 1, recorded in the file.
function randomSeed() {
  const c = globalThis.crypto;
  if (typeof c?.getRandomValues === 'function') {
    const [hi, lo] = c.getRandomValues(new Uint32Array(2));
    return (hi & 0x1fffff) * 2 ** 32 + lo;
  }
  return Math.floor(Math.random() * 2 ** 53);
}

// The rows to label of a set (its row count, or { rows, cols?, name? } such as a Matrix), drawn
// as `mano audit FILE --budget N --seed S` draws them: { rows (ascending), n_rows, seed }, and
// when the set's cols are known `csv`, the file mano audit writes (`source` names the logits in
// its comment line, as the CLI names FILE; default the set's name; `input` what the values are,
// as score() takes it: a binary column's file names the classes 0 and 1).
export function audit(set, budget, { seed, source, input } = {}) {
  ready();
  const described = set !== null && typeof set === 'object';
  const nRows = described ? set.rows : set;
  if (!Number.isSafeInteger(nRows) || nRows < 1)
    throw new InputError(`audit: the set must be its number of rows (>= 1) or { rows, cols } (got ${described ? `rows ${shownValue(nRows)}` : shownValue(set)})`);
  const least = ready().AUDIT_MIN_ROWS;  // the fewest rows predict takes back (src/mano/audit/audit_sample.hpp)
  if (!Number.isSafeInteger(budget) || budget < least)
    throw new InputError(`audit: the budget must be a whole number of rows to label, from ${least} to the set's ${nRows} (got ${shownValue(budget)})`);
  if (seed !== undefined && (!Number.isSafeInteger(seed) || seed < 0))
    throw new InputError(`audit: the seed must be a whole number from 0 to 2^53 - 1 (got ${shownValue(seed)})`);
  const drawSeed = seed ?? randomSeed();
  const out = JSON.parse(call(() => ready().auditSample(nRows, budget, drawSeed)));
  const cols = described ? set.cols : undefined;
  if (cols !== undefined) {
    if (!Number.isSafeInteger(cols) || cols < 1) throw new InputError(`audit: the set's cols must be its columns, >= 1 (got ${shownValue(cols)})`);
    const classes = classesOf(input, cols);
    out.csv = call(() => ready().auditFile(nRows, classes, budget, drawSeed, String(source ?? set.name ?? 'logits')));
  }
  return out;
}

// The labeled audit as { rows: ascending, labels: Int32Array, warnings } for a set of nRows x cols
// logits read from the file `setName` ('' when it has no name): the text of the labeled CSV, or
// { rows, labels } (with `seed` and `n_rows` when it is audit()'s draw with labels added: then
// the rows must be that draw). The core reads both, its messages naming `name`: a draw from a set
// of another size is refused, rows that are not the draw the file records (or the seed given) are
// refused, a file drawn from a file of another name is a warning.
export function auditLabels(given, nRows, cols, name = 'options.audit', setName = '') {
  const core = ready();
  if (typeof given === 'string') {
    if (given.length > core.AUDIT_MAX_BYTES)
      throw new InputError(`${name}: over the ${core.AUDIT_MAX_BYTES >> 20} MiB an audit file may have; an audit lists at most ${core.AUDIT_MAX_ROWS} rows`);
    const parsed = JSON.parse(call(() => core.parseAudit(given, String(name), nRows, cols, String(setName ?? ''))));
    return { rows: parsed.rows, labels: Int32Array.from(parsed.labels), warnings: parsed.warnings ?? [] };
  }
  const { rows, labels, seed, n_rows: drawnRows } = given ?? {};
  const isList = (x) => Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));
  if (!isList(rows) || !isList(labels) || rows.length !== labels.length || rows.length === 0)
    throw new InputError(`${name}: give the labeled audit file's text (mano audit's CSV with a column label), or ` +
      `{ rows, labels } of one length (got ${isList(rows) ? `${rows.length} rows` : 'no rows'} and ${isList(labels) ? `${labels.length} labels` : 'no labels'})`);
  if (rows.length > core.AUDIT_MAX_ROWS) throw new InputError(`${name}: ${rows.length} rows, more than the ${core.AUDIT_MAX_ROWS} an audit may have`);
  const numbers = (list, what) => Array.from(list, (x, i) => {
    const v = Number(x);
    if (!Number.isSafeInteger(v)) {
      throw new InputError(what === 'rows'
        ? `${name}: rows[${i}] is ${shownValue(x)}, not a whole number; give the rows mano audit drew`
        : `${name}: labels[${i}] is ${shownValue(x)}, not a whole number; give row ${Number(rows[i])}'s true class, 0 to ${cols - 1}`);
    }
    return v;
  });
  const checked = { rows: numbers(rows, 'rows'), labels: numbers(labels, 'labels') };
  for (const [key, value] of [['seed', seed], ['n_rows', drawnRows]]) {
    if (value === undefined || value === null) continue;
    if (!Number.isSafeInteger(value) || value < 0)
      throw new InputError(`${name}: ${key} must be a whole number >= 0, as audit() gives it (got ${shownValue(value)})`);
    checked[key] = value;
  }
  const parsed = JSON.parse(call(() => core.auditRows(JSON.stringify(checked), String(name), nRows, cols)));
  return { rows: parsed.rows, labels: Int32Array.from(parsed.labels), warnings: [] };
}

// Runs of consecutive audited rows, at most 4096 rows each: one read each, as the CLI reads them.
function* runs(rows) {
  for (let i = 0; i < rows.length;) {
    let j = i + 1;
    while (j < rows.length && rows[j] === rows[j - 1] + 1 && j - i < 4096) ++j;
    yield [i, j];
    i = j;
  }
}

// The audited rows' logits, in the order of `rows`: from a Matrix's data at once, or read run
// by run from a MatrixSource (read(first, count), a Blob read only where the rows are).
export function auditedLogits(matrix, rows) {
  const { data, cols } = matrix;
  const out = new data.constructor(rows.length * cols);
  for (const [i, j] of runs(rows)) out.set(data.subarray(rows[i] * cols, (rows[j - 1] + 1) * cols), i * cols);
  return out;
}

export async function auditedLogitsRead(source, rows) {
  if (ArrayBuffer.isView(source.data)) return auditedLogits(source, rows);
  const parts = [];
  for (const [i, j] of runs(rows)) parts.push([i, await source.read(rows[i], j - i)]);
  const out = new parts[0][1].constructor(rows.length * source.cols);
  for (const [i, part] of parts) out.set(part, i * source.cols);
  return out;
}

// The file a Matrix or MatrixSource was read from ('' when it was given without a name).
const setNameOf = (m) => (typeof m.name === 'string' && m.name !== UNNAMED ? m.name : '');

// The set the audit is of: `logits` must be the rows `result` was scored from.
export function checkAuditedSet(result, logits) {
  if (logits === null || typeof logits !== 'object' || !Number.isSafeInteger(logits.rows) || !Number.isSafeInteger(logits.cols))
    throw new InputError('options.audit needs options.logits, the logits the result was scored from ({ data, rows, cols, dtype? }, ' +
      'a Matrix of readMatrix): the audited rows are scored from them');
  if (logits.rows !== result?.n || (logits.cols >= 1 && classesOf(result?.input, logits.cols)) !== result?.k)
    throw new InputError(`options.logits has ${logits.rows} x ${logits.cols} logits but the result is of ${result?.n} rows of ` +
      `${result?.k} classes: give the logits the result was scored from`);
}

// The prediction with its audit, from the audited rows' logits (in the order of labels.rows, `cols`
// values each): scored with their labels and the calibration's scoring options for the whole set
// (its correctness histogram included), as `mano predict --audit` scores them.
export function auditedPrediction(calibration, result, level, labels, rowsLogits, dtype, cols) {
  checkLevel(level);
  const options = coreOptions(withDefaultMethods({ calibration, input: result.input }, cols, result.n), cols);
  const acc = new Accumulator(call(() => ready().makeAccumulator(cols, options)), cols);
  let audited;
  try {
    acc.push(rowsLogits, { dtype, labels: labels.labels });
    audited = acc.result();
  } finally {
    acc.dispose();
  }
  return JSON.parse(call(() => ready().predictAudited(jsonForCore(calibration, 'calibration'), JSON.stringify(result),
    JSON.stringify(audited), level, JSON.stringify(labels.warnings))));
}

// predict(calibration, result, { level, audit, auditName, logits }) with an audit, synchronously
// over a Matrix; auditedPredictionRead the same over a MatrixSource (the Worker's Files).
export function predictWithAudit(calibration, result, { level = 0.9, audit: given, auditName, logits }) {
  checkLevel(level);
  checkAuditedSet(result, logits);
  const dtype = dtypeOf(logits.data, logits.dtype, 'options.logits.data');
  const labels = auditLabels(given, result.n, result.k, auditName, setNameOf(logits));
  return auditedPrediction(calibration, result, level, labels, auditedLogits(logits, labels.rows), dtype, logits.cols);
}

export async function predictWithAuditRead(calibration, result, { level = 0.9, audit: given, auditName }, source) {
  ready();
  checkLevel(level);
  checkAuditedSet(result, source);
  const labels = auditLabels(given, result.n, result.k, auditName, setNameOf(source));
  const rowsLogits = await auditedLogitsRead(source, labels.rows);
  return auditedPrediction(calibration, result, level, labels, rowsLogits,
    dtypeOf(rowsLogits, source.dtype === 'int32' ? undefined : source.dtype, `${source.name ?? 'logits'}`), source.cols);
}
