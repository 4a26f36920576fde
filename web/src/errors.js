// Every failure the package reports is a ManoError (an Error subclass) whose message is the
// core's, or a loader's naming the file and what is wrong with it.
export class ManoError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

// Bad input to score/accumulator/evaluate/calibrate/predict: lengths, shapes, values, options.
export class InputError extends ManoError {}

// A file the loaders cannot read: truncated, corrupt, or an unsupported dtype or layout.
export class FormatError extends ManoError {}

// The WebAssembly module could not be loaded (missing SIMD, wrong URL, not initialised).
export class LoadError extends ManoError {}
