// mano-score: estimate a classifier's accuracy on unlabeled data from its logits, in the browser,
// a Worker or Node, with the same WebAssembly core (and the same numbers) as the native `mano`.
import { InputError, LoadError, ManoError } from './errors.js';
import { callCore, setReaderCore } from './core.js';

export { ManoError, InputError, FormatError, LoadError } from './errors.js';
export { openMatrix, openNpy, openSafetensors, readCsv, readMatrix, readNpy, readSafetensors } from './loaders.js';
export { ManoWorker } from './client.js';

import { accumulator, accumulatorFromJSON, score, scoreStream } from './accumulator.js';
import { inputName, wholeNumber } from './options.js';
import { calibrate, evaluate, monitor, predict, predictScores } from './workflow.js';
import { audit } from './audit.js';

export { CHUNK_BYTES, Accumulator, accumulator, accumulatorFromJSON, score, scoreStream } from './accumulator.js';
export { calibrate, evaluate, monitor, predict, predictScores } from './workflow.js';
export { audit } from './audit.js';

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

// The methods computed when none are named, for `rows` rows of `cols` classes (values of the
// input kind `input`: one for a binary column) and the inputs given besides the logits (names as
// in methods()' `needs`: 'source', 'second', 'features', 'source_features').
export function defaultMethods(cols, rows = 0, inputs = [], input = undefined) {
  ready();
  if (!Array.isArray(inputs)) throw new InputError('defaultMethods: inputs must be an array of input names');
  return JSON.parse(call(() => core.defaultMethods(wholeNumber(cols, 'cols'), wholeNumber(rows, 'rows'),
    JSON.stringify(inputs), inputName(input))));
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
  init, score, scoreStream, accumulator, accumulatorFromJSON, evaluate, calibrate, monitor, predict, predictScores, audit, defaultMethods,
  methods, version,
  simdSupported,
};
