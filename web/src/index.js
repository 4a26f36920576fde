// mano-score: estimate a classifier's accuracy on unlabeled data from its logits, in the browser,
// a Worker or Node, with the same WebAssembly core (and the same numbers) as the native `mano`.
import { InputError, LoadError, ManoError } from './errors.js';
import { callCore, setReaderCore } from './core.js';
import { jsonForCore } from './json.js';
import { describeValue } from './text.js';

export { ManoError, InputError, FormatError, LoadError } from './errors.js';
export { openMatrix, openNpy, openSafetensors, readCsv, readMatrix, readNpy, readSafetensors } from './loaders.js';
export { ManoWorker } from './client.js';

// Inputs cross into the WebAssembly heap in chunks of at most this many bytes (at least one row),
// through one scratch area that stops growing once it holds a chunk.
export const CHUNK_BYTES = 4 << 20;

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): validates only where the
// engine has WebAssembly SIMD.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);
const WASM_MAGIC = [0, 97, 115, 109];

let core = null;
let loading = null;

export function simdSupported() {
  return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
}

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined' && typeof importScripts !== 'function';

// Node's file reader, imported only under Node. The specifier is not a literal, so that browser
// bundlers (esbuild, Rollup, webpack, Vite) leave it alone instead of failing to resolve it.
const NODE_FS = ['node:fs', 'promises'].join('/');
async function nodeReadFile(url) {
  const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
  return readFile(url);
}

// import.meta.url, or undefined where a bundle has none (a CommonJS bundle).
function moduleUrl() {
  try {
    return import.meta.url || undefined;
  } catch {
    return undefined;
  }
}

// The URL of mano.wasm: `wasmUrl` (relative to this module), else next to this module. The
// default is written as new URL('./mano.wasm', import.meta.url) so that bundlers (Vite, webpack,
// Parcel) see it and emit mano.wasm with the bundle.
function wasmLocation(wasmUrl) {
  try {
    return wasmUrl === undefined ? new URL('./mano.wasm', import.meta.url) : new URL(wasmUrl, moduleUrl());
  } catch {
    throw new LoadError(`cannot tell where mano.wasm is (${wasmUrl === undefined ? 'this bundle has no import.meta.url, as in a ' +
      'CommonJS bundle' : `'${wasmUrl}' is not a URL and this bundle has no import.meta.url to resolve it against`}): pass ` +
      'init({ wasmBinary: bytes of mano.wasm }) or init({ wasmUrl: an absolute URL })');
  }
}

async function fetchWasm(url) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (cause) {
    throw new LoadError(`could not fetch ${url} (${cause.message}): serve mano.wasm next to the bundle or pass ` +
      'init({ wasmUrl }) or init({ wasmBinary })', { cause });
  }
  if (!response.ok) {
    throw new LoadError(`could not fetch ${url}: the server answered ${response.status} ${response.statusText}; ` +
      'serve mano.wasm next to the bundle or pass init({ wasmUrl }) or init({ wasmBinary })');
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (!WASM_MAGIC.every((b, i) => bytes[i] === b)) {
    const type = response.headers.get('content-type') || 'no content type';
    throw new LoadError(`${url} is not a WebAssembly module (the server answered ${type}): serve mano.wasm ` +
      'next to the bundle or pass init({ wasmUrl })');
  }
  return bytes;
}

async function wasmBytes({ wasmUrl, wasmBinary }) {
  if (wasmBinary !== undefined) {
    const bytes = wasmBinary instanceof ArrayBuffer ? new Uint8Array(wasmBinary)
      : ArrayBuffer.isView(wasmBinary) ? new Uint8Array(wasmBinary.buffer, wasmBinary.byteOffset, wasmBinary.byteLength)
        : null;
    if (!bytes || !WASM_MAGIC.every((b, i) => bytes[i] === b))
      throw new LoadError('init({ wasmBinary }) must be the bytes of mano.wasm (an ArrayBuffer or Uint8Array)');
    return bytes;
  }
  const url = wasmLocation(wasmUrl);
  if (isNode && url.protocol === 'file:') {
    try {
      return new Uint8Array(await nodeReadFile(url));
    } catch (cause) {
      throw new LoadError(`could not read ${url.pathname} (${cause.code || cause.message}): pass init({ wasmUrl }) ` +
        'or init({ wasmBinary })', { cause });
    }
  }
  return fetchWasm(url.href);
}

const INIT_KEYS = ['wasmUrl', 'wasmBinary'];
let loadedFrom = null; // where the core was (or is being) loaded from: { url } or { binary }

// Where `options` would load the core from, after checking its keys.
function initSource(options) {
  if (options === null || typeof options !== 'object') throw new LoadError('init(options): options must be an object');
  const unknown = Object.keys(options).find((k) => !INIT_KEYS.includes(k));
  if (unknown !== undefined) throw new LoadError(`init: unknown option '${unknown}'; the options are ${INIT_KEYS.join(', ')}`);
  const { wasmUrl, wasmBinary } = options;
  if (wasmBinary !== undefined) return { binary: wasmBinary };
  return { url: String(wasmLocation(wasmUrl)) };
}

function sameSource(a, b) {
  if (a.url !== undefined || b.url !== undefined) return a.url === b.url;
  if (a.binary === b.binary) return true;
  const bytes = (x) => (ArrayBuffer.isView(x) ? new Uint8Array(x.buffer, x.byteOffset, x.byteLength) : new Uint8Array(x));
  const [x, y] = [bytes(a.binary), bytes(b.binary)];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

// Loads the WebAssembly core once; later calls return the same API object. A later call may leave
// the options out or repeat them; other options are refused, as they could not take effect.
export async function init(options = {}) {
  const source = initSource(options);
  if (core || loading) {
    if (Object.keys(options).some((k) => options[k] !== undefined) && !sameSource(source, loadedFrom)) {
      throw new LoadError('init: mano-score is already initialised from ' +
        `${loadedFrom.url ?? 'the wasmBinary given first'}; the core loads once, so later calls take no options or the same ones`);
    }
    if (core) return api;
  }
  if (!loading) {
    loadedFrom = source;
    loading = (async () => {
      if (!simdSupported()) {
        throw new LoadError('this JavaScript engine has no WebAssembly SIMD, which mano-score needs ' +
          '(Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+)');
      }
      const binary = await wasmBytes(options);
      const { default: createManoModule } = await import('./mano.js');
      // locateFile: the glue then never builds new URL('mano.wasm', import.meta.url), which throws
      // in a bundle without import.meta.url; the bytes are given, so nothing is fetched
      core = await createManoModule({ wasmBinary: binary, locateFile: (file) => file, print: () => {}, printErr: () => {} });
      setReaderCore(core);
      return api;
    })().catch((e) => {
      loading = null;
      loadedFrom = null;
      throw e instanceof ManoError ? e : new LoadError(`could not start the WebAssembly core: ${e.message ?? e}`, { cause: e });
    });
  }
  return loading;
}

function ready() {
  if (!core) throw new LoadError('mano-score is not initialised: await init() first');
  return core;
}

const call = (fn) => callCore(core, fn);

const OPTION_KEYS = {
  p: 'p', eta: 'eta', taylorOrder: 'taylor_order', normalization: 'normalization', batchSize: 'batch_size',
  criterion: 'criterion', methods: 'methods', temperature: 'temperature', labelMarginal: 'label_marginal',
};
const EXTRA_OPTION_KEYS = ['source', 'sourceFeatures', 'calibration'];

function dtypeOf(data, declared, what) {
  const byArray = data instanceof Float32Array ? 'float32' : data instanceof Float64Array ? 'float64'
    : data instanceof Uint16Array ? (declared ?? 'float16') : null;
  if (!byArray) {
    throw new InputError(`${what} must be a Float32Array, a Float64Array or a Uint16Array of float16/bfloat16 bits ` +
      `(got ${data?.constructor?.name ?? typeof data})`);
  }
  if (declared !== undefined && declared !== byArray) {
    throw new InputError(`${what}: dtype '${declared}' does not match a ${data.constructor.name}` +
      (data instanceof Uint16Array ? " (use 'float16' or 'bfloat16')" : ''));
  }
  return byArray;
}

function bytesOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function int32Labels(labels, rows, what) {
  if (labels instanceof Int32Array) {
    if (labels.length !== rows) throw new InputError(`${what}: ${labels.length} labels for ${rows} rows`);
    return labels;
  }
  if (!Array.isArray(labels) && !ArrayBuffer.isView(labels))
    throw new InputError(`${what} must be an Int32Array or an array of integers`);
  if (labels.length !== rows) throw new InputError(`${what}: ${labels.length} labels for ${rows} rows`);
  const out = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    const v = Number(labels[i]);
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647)
      throw new InputError(`${what}: label ${i} is ${labels[i]}, not an integer class index`);
    out[i] = v;
  }
  return out;
}

function wholeNumber(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) throw new InputError(`${what} must be a whole number >= 0 (got ${value})`);
  return value;
}

// The core's options JSON from the JS option object (camelCase keys), with what a labeled source
// set teaches (temperature, ATC/DoC thresholds) fitted by the core.
function coreOptions(options, cols) {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new InputError('options must be an object');
  if (options.calibration !== undefined) return calibrationOptions(options, cols);
  const partial = {};
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (key in OPTION_KEYS) partial[OPTION_KEYS[key]] = value;
    else if (!EXTRA_OPTION_KEYS.includes(key)) {
      throw new InputError(`unknown option '${key}'; the options are ${[...Object.keys(OPTION_KEYS), ...EXTRA_OPTION_KEYS].join(', ')}`);
    }
  }
  if (partial.normalization === 'family')
    throw new InputError("normalization 'family' chooses one branch for a family of sets: it is an option of calibrate(); " +
      "score each set with 'softrun' (the default), which keeps both branches");
  const fitTemperature = partial.temperature === 'fit';
  if (fitTemperature) delete partial.temperature;
  if (partial.label_marginal === 'uniform') delete partial.label_marginal;
  let sourceLogits = null, sourceLabels = null, sourceRows = 0, sourceType = 'float32';
  const source = options.source;
  if (source !== undefined) {
    if (source === null || typeof source !== 'object' || !source.logits || !source.labels)
      throw new InputError('options.source must be { logits, labels } (labeled source validation logits)');
    sourceType = dtypeOf(source.logits, source.dtype, 'options.source.logits');
    if (source.logits.length % cols !== 0)
      throw new InputError(`options.source.logits has ${source.logits.length} values, not a multiple of ${cols} classes`);
    sourceRows = source.logits.length / cols;
    // a source of another class count can still divide by cols: say what the sizes imply
    const labelCount = source.labels?.length;
    if (Number.isSafeInteger(labelCount) && labelCount > 0 && labelCount !== sourceRows && source.logits.length % labelCount === 0)
      throw new InputError(`options.source.labels: ${labelCount} labels for ${sourceRows} rows (the ` +
        `${source.logits.length} source logits read as rows of the target's ${cols} classes; as ${labelCount} rows they ` +
        `would have ${source.logits.length / labelCount} classes: the source must be the same model's logits on labeled data)`);
    sourceLogits = bytesOf(source.logits);
    sourceLabels = bytesOf(int32Labels(source.labels, sourceRows, 'options.source.labels'));
  }
  let features = null, featureCols = 0;
  if (options.sourceFeatures !== undefined) {
    const f = options.sourceFeatures;
    if (!f || !(f.data instanceof Float64Array || f.data instanceof Float32Array) || !Number.isSafeInteger(f.cols) || f.cols < 1)
      throw new InputError('options.sourceFeatures must be { data: Float32Array | Float64Array, cols }');
    if (f.data.length % f.cols !== 0) throw new InputError(`options.sourceFeatures.data is not a multiple of ${f.cols} columns`);
    features = bytesOf(Float64Array.from(f.data));
    featureCols = f.cols;
  }
  return call(() => core.prepareOptions(JSON.stringify(partial), sourceLogits, sourceRows, cols, sourceType,
    sourceLabels, fitTemperature, features, featureCols));
}

// { calibration }: every option exactly as the calibration's sets were scored (its fitted source
// model included), so that predict() reads the result on the calibration's own scale; the core
// checks the calibration and the class count, and leaves out the methods that keep every row
// where the row count is unknown or too large for them (calibration.hpp, scoring_options).
const calibrationRows = Symbol('calibrationRows');
function calibrationOptions(options, cols) {
  const others = Object.keys(options).filter((k) => k !== 'calibration' && options[k] !== undefined);
  if (others.length)
    throw new InputError(`options.calibration scores as the calibration's sets were scored: give no other option (got ${others.join(', ')})`);
  const cal = options.calibration;
  if (cal === null || typeof cal !== 'object' || cal.format !== 'mano-calibration' || cal.options === null || typeof cal.options !== 'object')
    throw new InputError("options.calibration must be a calibration: what calibrate() returns or `mano calibrate` writes (format 'mano-calibration')");
  const scoring = JSON.parse(call(() => core.scoringOptions(jsonForCore(cal, 'calibration'), options[calibrationRows] ?? 0, cols)));
  return JSON.stringify(scoring.options);
}

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
      const restored = call(() => core.accumulatorFromState(JSON.stringify(other)));
      try {
        call(() => raw.merge(restored, true));
      } finally {
        restored.delete();
      }
    }
    return this;
  }

  // scoreSource's chunks are parts of one source, not shards: their rows join this one's own.
  [mergePart](part) {
    call(() => this.#live().merge(part.#live(), false));
    return this;
  }

  // The JSON result of docs/cli.md, "JSON result" (plus "accuracy" when labels were pushed).
  result() {
    return JSON.parse(call(() => this.#live().result()));
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

// The methods computed when options.methods is not given, as the native CLI picks them from the
// method table: every method whose inputs were given (source set, second model, features), within
// its size limits (COT only up to 2e6 logits when the row count is known).
function withDefaultMethods(options, cols, rows, extras = {}) {
  if (options?.calibration !== undefined) return rows === undefined ? options : { ...options, [calibrationRows]: rows };
  if (options?.methods !== undefined || !Number.isSafeInteger(cols) || cols < 2) return options;
  const inputs = [];
  if (options.source) inputs.push('source');
  if (extras.second) inputs.push('second');
  if (extras.features) inputs.push('features');
  if (options.sourceFeatures) inputs.push('source_features');
  return { ...options, methods: JSON.parse(call(() => core.defaultMethods(cols, rows ?? 0, JSON.stringify(inputs)))) };
}

// An accumulator of rows with `cols` classes. Without options.methods it computes the defaults
// for rows not known yet: every default method its inputs allow except COT, which keeps every row
// (name it to have it), so that a stream's memory stays bounded.
export function accumulator(cols, options = {}) {
  ready();
  wholeNumber(cols, 'cols');
  const json = coreOptions(withDefaultMethods(options, cols), cols);
  return new Accumulator(call(() => core.makeAccumulator(cols, json)), cols);
}

export function accumulatorFromJSON(state) {
  ready();
  const raw = call(() => core.accumulatorFromState(typeof state === 'string' ? state : JSON.stringify(state)));
  return new Accumulator(raw, raw.cols());
}

function checkShape(data, shape) {
  if (!shape || typeof shape !== 'object') throw new InputError('score(data, { rows, cols }, options): the shape is missing');
  const rows = wholeNumber(shape.rows, 'rows');
  const cols = wholeNumber(shape.cols, 'cols');
  const count = rows * cols;
  if (!Number.isSafeInteger(count)) throw new InputError(`rows x cols = ${rows} x ${cols} is too large to address`);
  if (!data || typeof data.length !== 'number') dtypeOf(data, shape.dtype, 'data');
  if (data.length !== count)
    throw new InputError(`data has ${data.length} values but rows x cols = ${rows} x ${cols} = ${count}`);
  return { rows, cols };
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

// Scores a MatrixSource (openNpy/openSafetensors) or a Matrix chunk by chunk, without holding
// the whole matrix. { chunkRows, labels, onProgress(done, total), chunkResults } -> the result,
// with `chunks: [{ first, rows, result }]` when chunkResults is a number of rows per chunk.
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

export async function scoreSource(source, options = {}, { chunkRows, labels, onProgress, chunkResults, signal } = {}) {
  ready();
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function'))
    throw new InputError('signal must be an AbortSignal');
  if (signal?.aborted) throw signal.reason;
  const rows = wholeNumber(source?.rows, 'source.rows');
  const cols = wholeNumber(source?.cols, 'source.cols');
  if (typeof source.read !== 'function' && !(ArrayBuffer.isView(source.data) && !(source.data instanceof DataView)))
    throw new InputError('data must be a typed array of the logits (Float32Array, Float64Array, or Uint16Array with ' +
      `a dtype), or the source must have read(first, count); got ${describeValue(source.data)}`);
  if (typeof source.read !== 'function' && source.data.length !== rows * cols)
    throw new InputError(`data has ${source.data.length} values but rows x cols = ${rows} x ${cols} = ${rows * cols}`);
  const read = typeof source.read === 'function' ? (first, count) => source.read(first, count)
    : async (first, count) => source.data.subarray(first * cols, (first + count) * cols);
  const labelsAll = labels ?? source.labels;
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
      const extras = { dtype: source.dtype };
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
  const { normalization = 'family', taylorOrders, ...rest } = options;
  if (!CALIBRATION_NORMALIZATIONS.includes(normalization)) {
    throw new InputError(`normalization '${normalization}' is not one of ${CALIBRATION_NORMALIZATIONS.join(', ')} ` +
      "('family': one branch chosen for all the sets; 'softrun': each set's own criterion)");
  }
  const family = normalization === 'family';
  if (family && rest.criterion !== undefined && rest.criterion !== null)
    throw new InputError("a fixed criterion fixes the softrun branch; pass it with normalization 'softrun', not 'family'");
  return { family, taylorOrders, rest: { ...rest, normalization: family ? 'softrun' : normalization } };
}

// Sets given with their logits ({ name, group?, logits, shape: { rows, cols, dtype? }, labels }),
// scored by the core's family workflow (src/mano/workflow.hpp) as `mano eval` and `mano
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

function scoredFamily(sets, options) {
  const { family, taylorOrders = [2], rest } = familyNormalization(options);
  if (!Array.isArray(taylorOrders) || taylorOrders.some((o) => !Number.isInteger(o) || o < 1 || o > 170))
    throw new InputError(`taylorOrders must be an array of whole numbers from 1 to 170 (got ${JSON.stringify(taylorOrders)})`);
  const cols = sets[0].shape.cols;
  const prepared = JSON.parse(coreOptions(rest, cols));
  const inputs = [];
  if (prepared.source) inputs.push('source');
  if (prepared.source_features) inputs.push('source_features');
  const scorer = (index, passJson) => {
    try {
      const s = sets[index];
      const { pass, ...keys } = JSON.parse(passJson);
      const { rows } = checkShape(s.logits, s.shape);
      const opts = { ...prepared, ...keys };
      if (rest.methods === undefined && keys.methods === undefined)
        opts.methods = JSON.parse(call(() => core.defaultMethods(s.shape.cols, rows, JSON.stringify(inputs))));
      const json = JSON.stringify(opts);
      const acc = new Accumulator(call(() => core.makeAccumulator(s.shape.cols, json)), s.shape.cols);
      try {
        acc.push(s.logits, { ...s.shape, labels: pass === 'variant' ? undefined : s.labels });
        return [JSON.stringify(acc.result()), json];
      } finally {
        acc.dispose();
      }
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  };
  const names = JSON.stringify(sets.map((s) => (s.group === undefined ? { name: s.name } : { name: s.name, group: String(s.group) })));
  const { scored, warnings } = JSON.parse(call(() => core.scoreFamily(names, JSON.stringify({ family, taylor_orders: taylorOrders }), scorer)));
  return { scored: JSON.stringify(scored), warnings };
}

const withNotes = (object, notes) => Object.defineProperty(object, 'notes', { value: notes, enumerable: false });

// The paper's protocol over labeled sets (mano eval): per set and per method R2, Pearson,
// Spearman, Kendall, LOO MAE. Sets given as results are evaluated as they are; sets given with
// their logits are scored first by the family workflow (withLogits), and the report then names
// the branch chosen (`normalization`), as `mano eval --json` does, with a non-enumerable
// `warnings`.
export function evaluate(sets, options = {}) {
  ready();
  if (!withLogits(sets)) return JSON.parse(call(() => core.evaluate(setsJson(sets))));
  const { scored, warnings } = scoredFamily(sets, options);
  const { report, notes } = JSON.parse(call(() => core.evaluateFamily(scored)));
  // what `mano eval` says on stderr: an order left out of a set's choice, a summary it could not make
  return Object.defineProperty(report, 'warnings', { value: [...warnings, ...notes], enumerable: false });
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
    const { scored, warnings } = scoredFamily(sets, options);
    const { calibration, notes } = JSON.parse(call(() => core.calibrateFamily(scored)));
    return withNotes(calibration, [...warnings, ...notes]);
  }
  const probe = sets?.[0]?.result?.k;
  const { family, taylorOrders, rest } = familyNormalization(options);
  if (taylorOrders !== undefined)
    throw new InputError('taylorOrders scores MaNo again at other orders: give the sets with their logits, not as results');
  const prepared = coreOptions(rest, wholeNumber(probe, 'sets[0].result.k'));
  const json = JSON.stringify({ ...JSON.parse(prepared), family });
  const { calibration, notes } = JSON.parse(call(() => core.calibrate(setsJson(sets), json)));
  return withNotes(calibration, notes);
}

// The monitoring rules of the core (src/mano/monitoring.hpp) over a timeline: points
// [{ estimate: number | null, se?: the score's standard error, rows? }], and either
// `reference` (the alert line is the mean - 3 sd of the first `reference` points' estimates) or a
// `threshold` given; with the calibrated line's `slope`, whether the points are too small for
// their estimates (sampling noise above 0.05). -> { threshold: { value, reference, mean?, sd? },
// alerts: [indices], noise?: { half_width, rows, rows_needed, limit } }
export function monitor(points, { reference = 0, threshold, slope } = {}) {
  ready();
  if (!Array.isArray(points)) throw new InputError('points must be an array of { estimate, se?, rows? }');
  if (!Number.isSafeInteger(reference) || reference < 0) throw new InputError(`reference must be a whole number of points >= 0 (got ${reference})`);
  if (reference === 0 && typeof threshold !== 'number') throw new InputError('give a reference period (reference > 0) or a threshold');
  const corePoints = points.map((p, i) => {
    if (!p || typeof p !== 'object') throw new InputError(`point ${i} must be { estimate, se?, rows? }`);
    return { estimate: p.estimate ?? null, score_se: p.se ?? null, rows: p.rows ?? 0 };
  });
  return JSON.parse(call(() => core.monitor(JSON.stringify(corePoints), reference, threshold ?? 0, JSON.stringify(slope ?? null))));
}

// Estimated accuracy with a prediction interval for every calibrated method present in `result`.
export function predict(calibration, result, { level = 0.9 } = {}) {
  ready();
  if (!(level > 0 && level < 1)) throw new InputError(`level must be in (0, 1) (got ${level})`);
  return JSON.parse(call(() => core.predict(jsonForCore(calibration, 'calibration'), JSON.stringify(result), level)));
}

// The accuracy the calibration implies for each of `scores` of one method, with the interval
// from the calibration's own uncertainty: [{ accuracy, interval: [lo, hi], extrapolated }].
export function predictScores(calibration, method, scores, { level = 0.9 } = {}) {
  ready();
  if (!(level > 0 && level < 1)) throw new InputError(`level must be in (0, 1) (got ${level})`);
  if (!Array.isArray(scores) && !ArrayBuffer.isView(scores)) throw new InputError('scores must be an array of numbers');
  return JSON.parse(call(() => core.predictScores(jsonForCore(calibration, 'calibration'), String(method),
    JSON.stringify(Array.from(scores, Number)), level)));
}

// The methods computed when none are named, for `rows` rows of `cols` classes and the inputs
// given besides the logits (names as in methods()' `needs`: 'source', 'second', 'features',
// 'source_features').
export function defaultMethods(cols, rows = 0, inputs = []) {
  ready();
  if (!Array.isArray(inputs)) throw new InputError('defaultMethods: inputs must be an array of input names');
  return JSON.parse(call(() => core.defaultMethods(wholeNumber(cols, 'cols'), wholeNumber(rows, 'rows'),
    JSON.stringify(inputs))));
}

// The estimator table: for each method its name, what it returns ('score' or 'accuracy'), the
// inputs it needs besides the logits, whether it is on by default (and up to which size), its
// cost class and a one-line summary; the same table as `mano methods --json`.
export function methods() {
  return JSON.parse(ready().methods()).methods;
}

export function version() {
  return ready().version();
}

const api = {
  init, score, scoreSource, accumulator, accumulatorFromJSON, evaluate, calibrate, monitor, predict, predictScores, defaultMethods,
  methods, version,
  simdSupported,
};
