// The Worker entry (`mano-score/worker`): scoring, file reading and calibration off the page's
// main thread. Talk to it with ManoWorker (from 'mano-score'), or post { id, op, args } yourself:
// replies are { id, type: 'progress', done, total }, { id, type: 'result', value } and
// { id, type: 'error', name, message }. Typed arrays in args may be transferred.
// { op: 'cancel', args: { id } } stops job `id` (score, scoreFile) between two chunks; it then
// replies { id, type: 'cancelled' } instead of a result. A cancel gets no reply of its own.
import {
  CHUNK_BYTES, audit, calibrate, evaluate, init, methods, monitor, openMatrix, openNpy, openSafetensors, predict, predictScores, readCsv, readMatrix,
  score, scoreStream,
} from './index.js';
import { calibrateScored, copyRows, evaluateScored, scoreFamilyAsync } from './workflow.js';
import { predictWithAuditRead } from './audit.js';
import { InputError, ManoError } from './errors.js';

const OPENERS = { npy: openNpy, safetensors: openSafetensors, csv: readCsv };

// A File/Blob as something scoreStream streams (openMatrix), or read as the `format` given.
function openFile(file, { format, ...how } = {}) {
  if (format === undefined) return openMatrix(file, how);
  if (!Object.hasOwn(OPENERS, format)) throw new InputError(`${file.name ?? 'input'}: unknown format '${format}' (npy, safetensors or csv)`);
  return OPENERS[format](file, how);
}

// The rows `distinct` (sorted) of a source, read in spans of at most CHUNK_BYTES: a Blob read is a
// round trip in a browser (Chromium took ~1 ms each), so a label-shifted copy's scattered rows,
// read run by run, cost a calibration ten times what it costs in Node. -> { data, at: row -> its place }
async function spannedRows(source, distinct) {
  const span = Math.max(1, Math.floor(CHUNK_BYTES / (source.cols * 8)));
  const parts = [];
  const at = new Map();
  let placed = 0;
  for (let i = 0; i < distinct.length;) {
    const first = distinct[i];
    let j = i;
    while (j < distinct.length && distinct[j] < first + span) at.set(distinct[j], placed + distinct[j++] - first);
    const count = distinct[j - 1] - first + 1;
    parts.push(await source.read(first, count));
    placed += count;
    i = j;
  }
  const data = new parts[0].constructor(placed * source.cols);
  parts.reduce((offset, p) => (data.set(p, offset), offset + p.length), 0);
  return { data, at };
}

const isBlob = (x) => x !== null && typeof x === 'object' && typeof x.slice === 'function' && typeof x.arrayBuffer === 'function';

// The labels of a source's rows: an Int32Array, or a file of integers (Blob).
async function labelsFor(source, labels) {
  if (labels === undefined || labels === null) return undefined;
  const labelArray = ArrayBuffer.isView(labels) ? labels : (await readMatrix(labels)).data;
  if (!(labelArray instanceof Int32Array))
    throw new InputError(`${labels.name ?? 'labels'}: labels must be integers (got ${labelArray.constructor.name})`);
  if (labelArray.length !== source.rows)
    throw new InputError(`${labels.name ?? 'labels'}: ${labelArray.length} labels for the ${source.rows} rows of ${source.name}` +
      ' (labels pair with logits one per row, in order)');
  return labelArray;
}

// The operations, looked up as own properties only: 'constructor' or 'valueOf' is no operation.
const ops = Object.assign(Object.create(null), {
  init: (args) => init(args ?? {}).then(() => true),
  // args: { data, shape: { rows, cols, dtype? , labels? }, options, chunkRows? }
  score: ({ data, shape, options, chunkRows }, progress, signal) => {
    if (shape === null || typeof shape !== 'object')
      throw new InputError('score: args.shape must be { rows, cols, dtype?, labels? }');
    return scoreStream({ rows: shape.rows, cols: shape.cols, dtype: shape.dtype, data, labels: shape.labels },
      options, { chunkRows, onProgress: progress, signal });
  },
  // args: { file, labels?: Blob | Int32Array, options, format?, key?, labelColumn?, header?, chunkResults? }
  // -> { name, result, notes (a CSV's columns left out or taken as labels), labelColumn? }
  scoreFile: async ({ file, labels, options, chunkResults, ...how }, progress, signal) => {
    const source = await openFile(file, how);
    const labelArray = await labelsFor(source, labels);
    const result = await scoreStream(source, options, { labels: labelArray, chunkResults, onProgress: progress, signal });
    return { name: source.name, result, notes: source.notes ?? [], ...(source.labelColumn === undefined ? {} : { labelColumn: source.labelColumn }) };
  },
  // args: { sets: [{ name, group?, file, labels?, format?, key?, labelColumn?, header? }], options }:
  // the labeled files scored by the core's family workflow as `mano calibrate` scores a
  // manifest's sets (their label-shifted copies too: options.labelShiftCopies), then evaluated and
  // calibrated -> { sets: [{ name, group?, result }] (on the branch chosen for all of them),
  // evaluation, calibration, notes (the calibration's), warnings }.
  calibrateFiles: async ({ sets, options }, progress, signal) => {
    if (!Array.isArray(sets) || sets.length === 0) throw new InputError('calibrateFiles: args.sets must be a non-empty array');
    const opened = [];
    for (const [i, { file, labels, name, group, options: _, ...how }] of sets.entries()) {
      if (typeof name !== 'string') throw new InputError(`calibrateFiles: set ${i} has no name`);
      const source = await openFile(file, how);
      opened.push({ source, labels: await labelsFor(source, labels) });
    }
    const rows = opened.reduce((sum, o) => sum + o.source.rows, 0);
    let done = 0;
    const labelsOf = (i) => opened[i].labels ?? opened[i].source.labels;
    const { scored, warnings } = await scoreFamilyAsync(sets, options ?? {}, opened[0].source.cols, async (i, opts, pass, copied) => {
      const { source } = opened[i];
      if (pass === 'copy') {
        // a label-shifted copy: only its rows are read (in spans), each distinct one once
        const distinct = [...new Set(copied)].sort((a, b) => a - b);
        const { data, at } = ArrayBuffer.isView(source.data) ? { data: source.data, at: null } : await spannedRows(source, distinct);
        const copy = copyRows(data, source.cols, labelsOf(i), copied, at ? (r) => at.get(r) : undefined);
        return score(copy.data, { rows: copied.length, cols: source.cols, dtype: source.dtype, labels: copy.labels }, opts);
      }
      const result = await scoreStream(source, opts, {
        labels: pass === 'variant' ? undefined : labelsOf(i), signal, onProgress: (at) => progress(done + at, rows),
      });
      done = (done + source.rows) % rows;
      return result;
    }, labelsOf, true);
    const parsed = JSON.parse(scored);
    const calibration = calibrateScored(scored, warnings);
    // the sets themselves; their label-shifted copies are in the calibration's fit only
    const own = parsed.sets.filter((s) => s.copy_of === undefined).map(({ weight, ...s }) => s);
    return { sets: own, evaluation: evaluateScored(scored), calibration, notes: calibration.notes, warnings };
  },
  read: ({ file, ...opts }) => readMatrix(file, opts),
  evaluate: ({ sets, options }) => {
    const evaluation = evaluate(sets, options);
    return { evaluation, warnings: evaluation.warnings ?? [] };
  },
  calibrate: ({ sets, options }) => {
    const calibration = calibrate(sets, options);
    return { calibration, notes: calibration.notes };
  },
  // args: { calibration, result, level, audit?, auditName?, logits?: a Matrix, or a File read with
  // { format?, key?, labelColumn?, header? } (only the audited rows are read where it can) }
  predict: async ({ calibration, result, level, audit: given, auditName, logits, ...how }) => {
    if (given === undefined || !isBlob(logits)) return predict(calibration, result, { level, audit: given, auditName, logits });
    return predictWithAuditRead(calibration, result, { level, audit: given, auditName }, await openFile(logits, how));
  },
  audit: ({ set, budget, options }) => audit(set, budget, options),
  predictScores: ({ calibration, method, scores, level }) => predictScores(calibration, method, scores, { level }),
  monitor: ({ points, options }) => monitor(points, options),
  methods: () => methods(),
});

function transferables(value) {
  const out = [];
  if (value && ArrayBuffer.isView(value.data)) out.push(value.data.buffer);
  if (value && ArrayBuffer.isView(value.labels)) out.push(value.labels.buffer);
  return out;
}

const running = new Map(); // job id -> the AbortController a cancel aborts

// Handles one request; `post(message, transfer)` sends a reply. Exported for tests.
export async function handleMessage(message, post) {
  const { id, op, args } = message ?? {};
  if (op === 'cancel') {
    running.get(args?.id)?.abort();
    return;
  }
  const controller = new AbortController();
  running.set(id, controller);
  try {
    if (typeof op !== 'string' || !Object.hasOwn(ops, op))
      throw new InputError(`unknown operation '${String(op).slice(0, 60)}'; the operations are ${Object.keys(ops).join(', ')}`);
    if (op !== 'init') await init();
    let last = 0;
    const progress = (done, total) => {
      const now = Date.now();
      if (now - last >= 50 || done === total) {
        last = now;
        post({ id, type: 'progress', done, total });
      }
    };
    const value = await ops[op](args ?? {}, progress, controller.signal);
    post({ id, type: 'result', value }, transferables(value));
  } catch (e) {
    if (controller.signal.aborted) {
      post({ id, type: 'cancelled' });
      return;
    }
    const name = e instanceof ManoError ? e.name : 'ManoError';
    const text = e instanceof ManoError ? e.message : `internal error: ${e?.message ?? e}`;
    post({ id, type: 'error', name, message: text });
  } finally {
    running.delete(id);
  }
}

if (typeof self === 'object' && typeof self.postMessage === 'function' && typeof window === 'undefined') {
  self.onmessage = (event) => handleMessage(event.data, (reply, transfer) => self.postMessage(reply, transfer ?? []));
}
