// Scoring: the streaming Accumulator (push chunks, merge, state), score() of a whole matrix and
// scoreStream() of a file chunk by chunk.
import { InputError } from './errors.js';
import { callCore, readerCore as ready } from './core.js';
import { describeValue } from './text.js';
import { bytesOf, checkShape, coreOptions, dtypeOf, int32Labels, wholeNumber, withDefaultMethods, withProbabilitiesWarning } from './options.js';

// Inputs cross into the WebAssembly heap in chunks of at most this many bytes (at least one row),
// through one scratch area that stops growing once it holds a chunk.
export const CHUNK_BYTES = 4 << 20;

const call = (fn) => callCore(ready(), fn);

const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((raw) => raw.delete()) : null;

const mergePart = Symbol('mergePart');

// A streaming estimator: push row chunks (any length), merge others, read the result any time.
export class Accumulator {
  #raw;
  #cols;

  constructor(raw, cols) {
    this.#raw = raw;
    this.#cols = cols;
    registry?.register(this, raw, this);
  }

  get cols() { return this.#cols; }
  get rows() { return this.#live().rows(); }
  // The SIMD kernel the core runs ("wasm-simd128").
  get architecture() { return this.#live().architecture(); }

  #live() {
    ready();
    if (!this.#raw) throw new InputError('this accumulator was disposed');
    return this.#raw;
  }

  // data: rows x cols logits, row-major. extras: { dtype, labels, second, features, featureCols }.
  push(data, extras = {}) {
    const raw = this.#live();
    const k = this.#cols;
    const dtype = dtypeOf(data, extras.dtype, 'logits');
    if (data.length % k !== 0)
      throw new InputError(`logits have ${data.length} values, which is not a whole number of rows of ${k} classes`);
    const rows = data.length / k;
    const labels = extras.labels === undefined ? null : int32Labels(extras.labels, rows, 'labels');
    let second = null;
    if (extras.second !== undefined) {
      second = extras.second;
      if (dtypeOf(second, extras.dtype, 'second') !== dtype || second.length !== data.length)
        throw new InputError('second must have the same type and length as the logits (a second model on the same rows)');
    }
    let features = null, featureCols = 0;
    if (extras.features !== undefined) {
      featureCols = wholeNumber(extras.featureCols, 'featureCols');
      if (!(extras.features instanceof Float64Array || extras.features instanceof Float32Array) || featureCols < 1 ||
          extras.features.length !== rows * featureCols)
        throw new InputError(`features must be a Float32Array or Float64Array of rows x featureCols = ${rows} x ${featureCols} values`);
      features = extras.features;
    }
    const rowBytes = k * data.BYTES_PER_ELEMENT * (second ? 2 : 1) + featureCols * 8 + (labels ? 4 : 0);
    const step = Math.max(1, Math.floor(CHUNK_BYTES / rowBytes));
    const base = raw.rows();
    // All or nothing across chunks: push into a copy and keep it only when every chunk went in.
    const target = rows > step ? call(() => raw.clone()) : raw;
    try {
      for (let first = 0; first < rows; first += step) {
        const count = Math.min(step, rows - first);
        const slice = (a, width) => bytesOf(a.subarray(first * width, (first + count) * width));
        call(() => target.push(slice(data, k), count, dtype, labels && slice(labels, 1), second && slice(second, k),
          features && bytesOf(Float64Array.from(features.subarray(first * featureCols, (first + count) * featureCols))),
          featureCols, base + first));
      }
    } catch (e) {
      if (target !== raw) target.delete();
      throw e;
    }
    if (target !== raw) {
      registry?.unregister(this);
      raw.delete();
      this.#raw = target;
      registry?.register(this, target, this);
    }
    return this;
  }

  // Appends another accumulator's rows (an Accumulator, or a state from toJSON()): either way
  // they come in as the shard(s) its state names, and a shard merged twice is refused.
  merge(other) {
    const raw = this.#live();
    if (other instanceof Accumulator) {
      call(() => raw.merge(other.#live(), true));
    } else {
      const restored = call(() => ready().accumulatorFromState(JSON.stringify(other)));
      try {
        call(() => raw.merge(restored, true));
      } finally {
        restored.delete();
      }
    }
    return this;
  }

  // scoreStream's chunks are parts of one source, not shards: their rows join this one's own.
  [mergePart](part) {
    call(() => this.#live().merge(part.#live(), false));
    return this;
  }

  // The JSON result of docs/cli.md, "JSON result" (plus "accuracy" when labels were pushed), with a
  // non-enumerable `warnings` when its rows all looked like probabilities (give { input }).
  result() {
    return withProbabilitiesWarning(JSON.parse(call(() => this.#live().result())));
  }

  // The serializable state: merge it elsewhere, or restore it with accumulatorFromJSON().
  toJSON() {
    return JSON.parse(call(() => this.#live().state()));
  }

  // Frees the WebAssembly memory now instead of when the object is garbage collected.
  dispose() {
    if (!this.#raw) return;
    registry?.unregister(this);
    this.#raw.delete();
    this.#raw = null;
  }
}

// An accumulator of rows of `cols` values (classes; one for a binary options.input). Without options.methods it computes the defaults
// for rows not known yet: every default method its inputs allow except COT, which keeps every row
// (name it to have it), so that a stream's memory stays bounded.
export function accumulator(cols, options = {}) {
  ready();
  wholeNumber(cols, 'cols');
  const json = coreOptions(withDefaultMethods(options, cols), cols);
  return new Accumulator(call(() => ready().makeAccumulator(cols, json)), cols);
}

export function accumulatorFromJSON(state) {
  ready();
  const raw = call(() => ready().accumulatorFromState(typeof state === 'string' ? state : JSON.stringify(state)));
  return new Accumulator(raw, raw.cols());
}

// Scores rows x cols logits at once. shape: { rows, cols, dtype?, labels?, second?, features?, featureCols? }.
export function score(data, shape, options = {}) {
  ready();
  const { rows, cols } = checkShape(data, shape);
  const acc = accumulator(cols, withDefaultMethods(options, cols, rows, shape));
  try {
    acc.push(data, shape);
    return acc.result();
  } finally {
    acc.dispose();
  }
}

// A macrotask boundary (a MessageChannel round trip: unlike setTimeout, never clamped to 4 ms), so
// that an abort posted to a Worker is handled between two chunks.
function nextTask() {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

// Scores a stream of rows (a MatrixSource of openNpy/openSafetensors, or a Matrix) chunk by
// chunk, without holding the whole matrix. { chunkRows, labels, onProgress(done, total),
// chunkResults } -> the result, with `chunks: [{ first, rows, result }]` when chunkResults is a
// number of rows per chunk. (Named for the stream, not the labeled source set of options.source.)
export async function scoreStream(stream, options = {}, { chunkRows, labels, onProgress, chunkResults, signal } = {}) {
  ready();
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function'))
    throw new InputError('signal must be an AbortSignal');
  if (signal?.aborted) throw signal.reason;
  const rows = wholeNumber(stream?.rows, 'stream.rows');
  const cols = wholeNumber(stream?.cols, 'stream.cols');
  if (typeof stream.read !== 'function' && !(ArrayBuffer.isView(stream.data) && !(stream.data instanceof DataView)))
    throw new InputError('data must be a typed array of the logits (Float32Array, Float64Array, or Uint16Array with ' +
      `a dtype), or the stream must have read(first, count); got ${describeValue(stream.data)}`);
  if (typeof stream.read !== 'function' && stream.data.length !== rows * cols)
    throw new InputError(`data has ${stream.data.length} values but rows x cols = ${rows} x ${cols} = ${rows * cols}`);
  const read = typeof stream.read === 'function' ? (first, count) => stream.read(first, count)
    : async (first, count) => stream.data.subarray(first * cols, (first + count) * cols);
  const labelsAll = labels ?? stream.labels;
  if (labelsAll && labelsAll.length !== rows) throw new InputError(`labels: ${labelsAll.length} labels for ${rows} rows`);
  const step = chunkResults != null ? wholeNumber(chunkResults, 'chunkResults')
    : chunkRows != null ? wholeNumber(chunkRows, 'chunkRows') : Math.max(1, Math.floor(CHUNK_BYTES / (cols * 4)));
  if (step < 1) throw new InputError('chunk rows must be at least 1');
  options = withDefaultMethods(options, cols, rows);
  const total = accumulator(cols, options);
  const chunks = [];
  try {
    for (let first = 0; first < rows; first += step) {
      const count = Math.min(step, rows - first);
      const data = await read(first, count);
      const extras = { dtype: stream.dtype };
      if (labelsAll) extras.labels = labelsAll.subarray ? labelsAll.subarray(first, first + count) : Array.prototype.slice.call(labelsAll, first, first + count);
      if (chunkResults) {
        const part = accumulator(cols, options);
        try {
          part.push(data, extras);
          chunks.push({ first, rows: count, result: part.result() });
          total[mergePart](part);
        } finally {
          part.dispose();
        }
      } else {
        total.push(data, extras);
      }
      onProgress?.(first + count, rows);
      if (signal && first + count < rows) {
        await nextTask();
        if (signal.aborted) throw signal.reason;
      }
    }
    const out = total.result();
    if (chunkResults) out.chunks = chunks;
    return out;
  } finally {
    total.dispose();
  }
}
