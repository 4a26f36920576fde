// The WebAssembly core as every part of the package reaches it once init() (index.js) has loaded
// it (options.js, accumulator.js, workflow.js; loaders.js hands it the bytes of .npy and
// .safetensors headers), and the one way a call to the core reports its errors.
import { FormatError, InputError, LoadError, ManoError } from './errors.js';

let loaded = null;

// Called by init() with the module it loaded.
export function setReaderCore(module) {
  loaded = module;
}

export function readerCore() {
  if (!loaded) throw new LoadError('mano-score is not initialised: await init() first');
  return loaded;
}

const ERRORS_BY_KIND = { input: InputError, format: FormatError };

// Runs a raw call of `module` and turns the message it left into an Error subclass.
export function callCore(module, fn) {
  const value = fn();
  const text = module.takeError();
  if (text) {
    const { kind, message } = JSON.parse(text);
    throw new (ERRORS_BY_KIND[kind] ?? ManoError)(message);
  }
  return value;
}
