// Every failure the package reports is a ManoError (an Error subclass) whose message is the
// core's, or a loader's naming the file and what is wrong with it.
export class ManoError extends Error {}

// Bad input to score/accumulator/evaluate/calibrate/predict: lengths, shapes, values, options.
export class InputError extends ManoError {}

// A file the loaders cannot read: truncated, corrupt, or an unsupported dtype or layout.
export class FormatError extends ManoError {}

// The WebAssembly module could not be loaded (missing SIMD, wrong URL, not initialised).
export class LoadError extends ManoError {}

// Each class by its name, which is given here as text and not read from the class: production
// builds rename classes (minified, InputError.name is 'r'), and the Worker sends errors back by name.
export const ERROR_CLASSES = { ManoError, InputError, FormatError, LoadError };
for (const [name, type] of Object.entries(ERROR_CLASSES)) {
  Object.defineProperty(type.prototype, 'name', { value: name, writable: true, configurable: true });
}
