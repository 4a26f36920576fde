// The package's options: camelCase JS objects and typed arrays checked and turned into the
// core's options JSON (the labeled source set fitted by the core), the methods computed when none
// are named, and the checks of a shape and its inputs every scoring call shares.
import { InputError } from './errors.js';
import { callCore, readerCore as ready } from './core.js';
import { jsonForCore } from './json.js';
import { shownValue } from './text.js';

const call = (fn) => callCore(ready(), fn);

const OPTION_KEYS = {
  p: 'p', eta: 'eta', taylorOrder: 'taylor_order', normalization: 'normalization', batchSize: 'batch_size',
  criterion: 'criterion', methods: 'methods', temperature: 'temperature', labelMarginal: 'label_marginal',
  correctnessHistogram: 'correctness_histogram', input: 'input',
};
const EXTRA_OPTION_KEYS = ['source', 'sourceFeatures', 'calibration'];

export function dtypeOf(data, declared, what) {
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

export function bytesOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

export function int32Labels(labels, rows, what) {
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

export function wholeNumber(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) throw new InputError(`${what} must be a whole number >= 0 (got ${shownValue(value)})`);
  return value;
}

// The core's options JSON from the JS option object (camelCase keys), with what a labeled source
// set teaches (temperature, ATC/DoC thresholds) fitted by the ready().
export function coreOptions(options, cols) {
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
  return call(() => ready().prepareOptions(JSON.stringify(partial), sourceLogits, sourceRows, cols, sourceType,
    sourceLabels, fitTemperature, features, featureCols));
}

// { calibration }: every option exactly as the calibration's sets were scored (its fitted source
// model included), so that predict() reads the result on the calibration's own scale; the core
// checks the calibration and the class count, and leaves out the methods that keep every row
// where the row count is unknown or too large for them (src/mano/prediction/prediction.hpp, scoring_options).
export const calibrationRows = Symbol('calibrationRows');
export function calibrationOptions(options, cols) {
  const others = Object.keys(options).filter((k) => k !== 'calibration' && k !== 'input' && options[k] !== undefined);
  if (others.length)
    throw new InputError(`options.calibration scores as the calibration's sets were scored: give no other option but input (got ${others.join(', ')})`);
  const cal = options.calibration;
  // the core checks the rest (calibration_file.cpp), as it does the CLI's --calibration
  if (cal === null || typeof cal !== 'object')
    throw new InputError("options.calibration must be a calibration: what calibrate() returns or `mano calibrate` writes (format 'mano-calibration')");
  const scoring = JSON.parse(call(() => ready().scoringOptions(jsonForCore(cal, 'calibration'), options[calibrationRows] ?? 0, cols,
    inputName(options.input))));
  return JSON.stringify(scoring.options);
}

// The methods computed when options.methods is not given, as the native CLI picks them from the
// method table: every method whose inputs were given (source set, second model, features), within
// its size limits (COT only up to 2e6 logits when the row count is known).
export function withDefaultMethods(options, cols, rows, extras = {}) {
  if (options?.calibration !== undefined) return rows === undefined ? options : { ...options, [calibrationRows]: rows };
  if (options?.methods !== undefined || !Number.isSafeInteger(cols) || cols < 2) return options;
  const inputs = [];
  if (options.source) inputs.push('source');
  if (extras.second) inputs.push('second');
  if (extras.features) inputs.push('features');
  if (options.sourceFeatures) inputs.push('source_features');
  return { ...options, methods: coreDefaultMethods(cols, rows, inputs, options.input) };
}

// The core's method resolver (src/mano/scan/resolve.hpp) for rows of `cols` values (`rows`: 0 or
// undefined when not known) and the inputs named ('source', 'second', 'features', 'source_features').
export const coreDefaultMethods = (cols, rows, inputs, input) =>
  JSON.parse(call(() => ready().defaultMethods(cols, rows ?? 0, JSON.stringify(inputs), inputName(input))));

// options.input, what the values are: 'logits' (undefined), 'probabilities', 'binary-logit' or
// 'binary-probability' (src/mano/scan/input_kind.hpp; the core checks the name).
export function inputName(input) {
  if (input === undefined) return 'logits';
  if (typeof input !== 'string')
    throw new InputError(`options.input must be 'logits', 'probabilities', 'binary-logit' or 'binary-probability' (got ${shownValue(input)})`);
  return input;
}

// A value as the options table's JSON takes it: JSON has no NaN or Infinity, which go as text.
const coreValue = (v) => (typeof v === 'number' && !Number.isFinite(v)) || typeof v === 'bigint' ? String(v)
  : Array.isArray(v) ? v.map(coreValue) : v;

// Checks option values (by the core's names: level, taylor_orders, criterion, normalization)
// against the core's options table (src/mano/scan/options_table.hpp), its errors naming the
// package's spelling (taylorOrders); returns the table.
export function checkOptions(values) {
  const request = { front_end: 'npm', values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, coreValue(v)])) };
  return JSON.parse(call(() => ready().optionsTable(JSON.stringify(request)))).table;
}

// An interval's level: the core's range, row "level" of the options table.
export function checkLevel(level) {
  checkOptions({ level });
}

// The classes of rows of `cols` values of an input kind (2 for a binary column), and back.
export const classesOf = (input, cols) => call(() => ready().classesOf(inputName(input), cols));
export const columnsOf = (input, classes) => call(() => ready().columnsOf(inputName(input), classes));

// A result whose rows all looked like probabilities gets a non-enumerable `warnings` naming { input }.
export function withProbabilitiesWarning(result, where = 'logits') {
  if (!result.looks_like_probabilities) return result;
  const warning = ready().probabilitiesWarning(where, "{ input: 'probabilities' }");
  return Object.defineProperty(result, 'warnings', { value: [warning], enumerable: false, configurable: true });
}

export function checkShape(data, shape) {
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
