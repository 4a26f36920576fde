// Types of the mano-score package (dist/index.js).

// methods.d.ts is written at build time from the estimator table (bindings/wasm/method_names.mjs).
import type { MethodName, ResultMethods } from './methods.js';
import type { AuditSample, Calibration, MethodInfo, MethodInput, NormalizationChoice, Prediction, Result } from './shapes.js';
export type { MethodName, ResultMethods };
// shapes.d.ts is generated from the one description of the JSON shapes (src/mano/schema/shapes.schema.json).
export * from './shapes.js';

export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
/** Logits: float32, float64, or the 16-bit patterns of float16/bfloat16 in a Uint16Array. */
export type LogitsArray = Float32Array | Float64Array | Uint16Array;
export type LabelsArray = Int32Array | readonly number[];

export interface Options {
  /** The L_p norm, any p > 1 (default 4). */
  p?: number;
  /** softrun threshold on the criterion (default 5). */
  eta?: number;
  /** Order of the Taylor expansion of exp (default 2). */
  taylorOrder?: number;
  normalization?: 'softrun' | 'softmax' | 'taylor';
  /** Official-code compatibility: average the scores of batches of this many rows (0 = whole set). */
  batchSize?: number;
  /** Official-code compatibility: a fixed criterion instead of the data's. */
  criterion?: number | null;
  /** Methods to compute; default: every method that needs only the target logits. */
  methods?: MethodName[];
  /** Temperature for the softmax-based baselines: a number > 0, or 'fit' on `source` (default 1). */
  temperature?: number | 'fit';
  /** COT's label marginal: K masses summing to 1, 'uniform' (default), or 'source' (from source labels). */
  labelMarginal?: number[] | 'uniform' | 'source';
  /** Labeled source validation logits (same K): ATC-MC, ATC-NE, DoC, temperature 'fit'. */
  source?: { logits: LogitsArray; labels: LabelsArray; dtype?: Dtype };
  /** Penultimate features of the source set, row-major with `cols` columns: Frechet. */
  sourceFeatures?: { data: Float32Array | Float64Array; cols: number };
  /** Collect the correctness histogram (result.correctness) that audits and calibrate's correctness model read. */
  correctnessHistogram?: boolean;
  /**
   * What the values are (default 'logits'): 'probabilities' (a softmax, taken through the log,
   * zeros floored at 1.2e-38), 'binary-logit' (one column, class 1's logit z: the classes [0, z]) or
   * 'binary-probability' (one column, class 1's probability p: [1 - p, p]). Logits whose rows all
   * look like probabilities give the result a non-enumerable `warnings`.
   */
  input?: InputKind;
  /**
   * Score exactly as this calibration's sets were scored (its options, fitted source model
   * included), so that predict(calibration, result) reads the result on its scale. Give no other
   * option but `input`, which must be the calibration's.
   */
  calibration?: Calibration;
}

export type InputKind = 'logits' | 'probabilities' | 'binary-logit' | 'binary-probability';

/** Row-aligned companions of the logits. */
export interface PushExtras {
  /** For a Uint16Array: 'float16' (default) or 'bfloat16'. */
  dtype?: Dtype;
  /** True class labels in [0, K): the result then carries the true accuracy. */
  labels?: LabelsArray;
  /** A second model's logits on the same rows (same type and shape): AgreeScore. */
  second?: LogitsArray;
  /** Penultimate features, rows x featureCols: Dispersion, Frechet. */
  features?: Float32Array | Float64Array;
  featureCols?: number;
}

export interface Shape extends PushExtras {
  rows: number;
  cols: number;
}

/**
 * The serializable state of an accumulator (the native `--emit-state` format). Its `shards` list
 * names the shards it holds (16 hexadecimal digits each, a hash of a state's content), so that a
 * shard merged twice is refused.
 */
export type AccumulatorState = Record<string, unknown>;

export class Accumulator {
  private constructor();
  readonly cols: number;
  readonly rows: number;
  readonly architecture: string;
  /** Pushes whole rows (data.length a multiple of cols); all or nothing. */
  push(data: LogitsArray, extras?: PushExtras): this;
  /**
   * Appends another accumulator's rows, as the shard(s) its state names (an Accumulator's own rows
   * as the shard its toJSON() would name). A shard this one holds already is refused (InputError):
   * merging it twice would count its rows twice.
   */
  merge(other: Accumulator | AccumulatorState): this;
  result(): Result;
  toJSON(): AccumulatorState;
  /** Frees the WebAssembly memory now rather than at garbage collection. */
  dispose(): void;
}

export interface LabeledSet {
  name: string;
  group?: string;
  /** A result with `accuracy` (scored with labels). */
  result: Result;
}

/**
 * A labeled set given with its logits: evaluate() and calibrate() score it with the core's family
 * workflow, as `mano eval` and `mano calibrate` score a manifest's sets.
 */
export interface LabeledLogits {
  name: string;
  group?: string;
  logits: LogitsArray;
  shape: { rows: number; cols: number; dtype?: Dtype };
  labels: LabelsArray;
}

export interface SummaryStats { r2: number; pearson: number; spearman: number; kendall: number; mae: number; n: number }
export interface Evaluation {
  sets: { name: string; group?: string; n: number; k: number; accuracy: number; methods: Result['methods'] }[];
  summary: Partial<Record<MethodName, SummaryStats>>;
  groups?: Record<string, Partial<Record<MethodName, SummaryStats>>>;
  notes: string[];
  /** Sets given as logits with normalization 'family': the branch chosen, and MaNo on each set's own. */
  normalization?: NormalizationChoice & { per_set?: SummaryStats };
}

/** A labeled set given as a file, for ManoWorker.calibrateFiles: read as scoreFile reads it. */
export interface LabeledFile extends Pick<ScoreFileOptions, 'labels' | 'format' | 'key' | 'labelColumn' | 'header'> {
  name: string;
  group?: string;
  file: BlobLike;
}

/** calibrate's options: `normalization` may also be 'family' (the default), one softrun branch for all the sets. */
export interface CalibrateOptions extends Omit<Options, 'normalization'> {
  /**
   * 'family' (default): MaNo's branch chosen once for all the sets (by leave-one-group-out error),
   * from sets scored with 'softrun'; 'softrun': each set's own criterion (the paper's literal rule);
   * 'softmax' / 'taylor': forced.
   */
  normalization?: 'family' | 'softrun' | 'softmax' | 'taylor';
  /**
   * normalization 'family' with sets given as logits: the Taylor orders weighed beside
   * taylorOrder (default [2]; the CLI's --taylor-orders).
   */
  taylorOrders?: number[];
  /**
   * calibrate() with sets given as logits: label-shifted copies of each set added to the intervals
   * (Dirichlet class mixes; the CLI's --label-shift-copies, default 6, 0 for none), drawn from
   * labelShiftSeed (default 0).
   */
  labelShiftCopies?: number;
  labelShiftSeed?: number;
}

export interface Matrix {
  name: string;
  rows: number;
  cols: number;
  dtype: Dtype | 'int32';
  data: Float32Array | Float64Array | Uint16Array | Int32Array;
  /** A CSV label column: the label column option's, or the one column named label, labels, y or target. */
  labels?: Int32Array;
  /** That column: its header name, or its 0-based index in a CSV without a header. */
  labelColumn?: string | number;
  /** A CSV's columns left out of the logits (pandas' index, id columns) or taken as labels, one line each. */
  notes?: string[];
}

export interface MatrixSource {
  name: string;
  rows: number;
  cols: number;
  dtype: Dtype | 'int32';
  /** Rows [first, first + count), C order, host byte order; reads only those bytes of a Blob. */
  read(first: number, count: number): Promise<Float32Array | Float64Array | Uint16Array | Int32Array>;
}

/**
 * What mano-score uses of a Blob (a DOM File or Blob, Node's Blob): these declarations name no
 * DOM type, so that projects without the DOM lib (Node only, `lib: ["es2022"]`) type-check.
 */
export interface BlobLike {
  readonly size: number;
  readonly name?: string;
  slice(start?: number, end?: number): BlobLike;
  arrayBuffer(): Promise<ArrayBuffer>;
}
/** What mano-score uses of an AbortSignal (DOM's or Node's). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
/** A URL as a string, or a URL object (anything whose string form is the URL). */
export type UrlLike = string | { readonly href: string; toString(): string };

export type FileInput = ArrayBuffer | ArrayBufferView | BlobLike;
export interface CsvOptions { labelColumn?: string | number; header?: boolean; delimiter?: string; name?: string }

export interface ScoreStreamOptions {
  chunkRows?: number;
  labels?: LabelsArray;
  onProgress?: (done: number, total: number) => void;
  /** Rows per chunk result (a timeline): the result gets `chunks`. */
  chunkResults?: number;
  /** Stops between two chunks when aborted: the promise rejects with signal.reason. */
  signal?: AbortSignalLike;
}

export interface InitOptions {
  /** Where mano.wasm is (default: next to this module). */
  wasmUrl?: UrlLike;
  /** The bytes of mano.wasm, instead of fetching or reading them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

export interface Api {
  init: typeof init;
  score: typeof score;
  scoreStream: typeof scoreStream;
  accumulator: typeof accumulator;
  accumulatorFromJSON: typeof accumulatorFromJSON;
  evaluate: typeof evaluate;
  calibrate: typeof calibrate;
  predict: typeof predict;
  predictScores: typeof predictScores;
  audit: typeof audit;
  monitor: typeof monitor;
  defaultMethods: typeof defaultMethods;
  methods: typeof methods;
  version: typeof version;
  simdSupported: typeof simdSupported;
}

export const CHUNK_BYTES: number;
/**
 * Loads the WebAssembly core, once. Later calls return the same API; they may leave the options
 * out or repeat them, and other options (or unknown keys) are a LoadError.
 */
export function init(options?: InitOptions): Promise<Api>;
export function simdSupported(): boolean;
export function score(data: LogitsArray, shape: Shape, options?: Options): Result;
export function scoreStream(stream: MatrixSource | Matrix, options?: Options, how?: ScoreStreamOptions): Promise<Result>;
export function accumulator(cols: number, options?: Options): Accumulator;
export function accumulatorFromJSON(state: AccumulatorState | string): Accumulator;
/** With sets given as logits, `options` as calibrate()'s and a non-enumerable `warnings`. */
export function evaluate(sets: LabeledSet[] | LabeledLogits[], options?: CalibrateOptions): Evaluation;
export function calibrate(sets: LabeledSet[] | LabeledLogits[], options?: CalibrateOptions): Calibration;
/**
 * A labeled audit: the text of mano audit's CSV with a column label, or each audited row with its true class
 * (`{ ...audit(set, budget, { seed }), labels }`: with the draw's seed and n_rows, the rows must be that draw).
 */
export type AuditLabelsInput = string | { rows: ArrayLike<number>; labels: ArrayLike<number>; seed?: number; n_rows?: number };
/** The logits a result was scored from (a Matrix of readMatrix qualifies). */
export interface LogitsMatrix { data: LogitsArray; rows: number; cols: number; dtype?: Dtype }
export interface PredictOptions {
  /** The intervals' level (default 0.9). */
  level?: number;
  /** A labeled audit of the set (`mano predict --audit`): the prediction gets `audit`; needs `logits`. */
  audit?: AuditLabelsInput;
  /** What messages call the audit file (default 'options.audit'). */
  auditName?: string;
  /** The logits `result` was scored from: the audited rows are scored from them. */
  logits?: LogitsMatrix;
}
/**
 * The estimates of a set scored with { calibration } (`mano predict --json`), with
 * `labels_for_width` when the estimate's interval is wider than 0.25 and, with options.audit,
 * the audited accuracy (`mano predict --audit`).
 */
export function predict(calibration: Calibration, result: Result, options?: PredictOptions): Prediction;
/** audit(): the draw, and with the set's cols known the CSV text `mano audit -o` writes. */
export interface AuditDraw extends AuditSample { csv?: string }
export interface AuditOptions {
  /** The draw's seed, 0 to 2^53 - 1 (default a random one, recorded in the result and the CSV). */
  seed?: number;
  /** The logits' name in the CSV's comment line, as `mano audit FILE` writes FILE (default set.name, else 'logits'). */
  source?: string;
  /** What the set's values are, as Options.input (a binary column's CSV names the classes 0 and 1). */
  input?: InputKind;
}
/** The rows to label of a set, drawn as `mano audit --budget --seed` draws them. */
export function audit(set: number | { rows: number; cols?: number; name?: string }, budget: number, options?: AuditOptions): AuditDraw;
export interface ScorePrediction {
  score: number;
  accuracy: number;
  interval: [number, number];
  extrapolated: boolean;
  /** The line's value lies below 0 or above 1 at this score: the accuracy is clipped, the interval keeps its width. */
  out_of_range?: 'below' | 'above';
}
/** The accuracy a calibration implies for each score of one method (its prediction band). */
export function predictScores(calibration: Calibration, method: MethodName, scores: ArrayLike<number>,
  options?: { level?: number }): ScorePrediction[];
/** One point of a timeline for monitor(): its estimate (null: none), its score's standard error, its rows. */
export interface TimelinePoint {
  estimate: number | null;
  se?: number;
  /** The prediction's slope: accuracy per unit of score at the point's score (MethodPrediction.slope). */
  slope?: number;
  rows?: number;
}
export interface MonitorOptions {
  /** The alert line from the first `reference` points: mean - 3 sd of their estimates. */
  reference?: number;
  /** The alert line given (when reference is 0). */
  threshold?: number;
  /** The calibrated line's slope, for points without their own (right on the identity link only): with a
   * slope, whether the points are too small (sampling noise). */
  slope?: number;
}
export interface MonitorAssessment {
  threshold: { value: number; reference: number; mean?: number; sd?: number };
  /** Indices of the points from `reference` on whose estimate is below the line. */
  alerts: number[];
  /** The median 90% half-width the score's sampling noise gives the estimates, when above 0.05. */
  noise?: { half_width: number; rows: number; rows_needed: number; limit: number };
}
/** The monitoring rules of the core over a timeline of estimates (the dashboard's alerts). */
export function monitor(points: readonly TimelinePoint[], options?: MonitorOptions): MonitorAssessment;
export function defaultMethods(cols: number, rows?: number, inputs?: readonly MethodInput[], input?: InputKind): MethodName[];
/** The estimator table, in its order (the order of results and columns). */
export function methods(): MethodInfo[];
export function version(): string;

// The readers. Call init() first: the core checks .npy and .safetensors headers with the native
// readers' rules (a LoadError before it is loaded).
export function openNpy(input: FileInput, options?: { name?: string }): Promise<MatrixSource>;
export function openSafetensors(input: FileInput, options?: { key?: string; name?: string }): Promise<MatrixSource>;
export function readNpy(input: FileInput, options?: { name?: string }): Promise<Matrix>;
export function readSafetensors(input: FileInput, options?: { key?: string; name?: string }): Promise<Matrix>;
export function readCsv(input: FileInput, options?: CsvOptions): Promise<Matrix>;
export function readMatrix(input: FileInput, options?: CsvOptions & { key?: string }): Promise<Matrix>;
/** readMatrix, but .npy and .safetensors come back as a MatrixSource that reads only the rows asked for. */
export function openMatrix(input: FileInput, options?: CsvOptions & { key?: string }): Promise<MatrixSource | Matrix>;

/** `name` is written into the package, so it survives minified builds (and crosses from a Worker). */
export class ManoError extends Error {
  name: 'ManoError' | 'InputError' | 'FormatError' | 'LoadError';
}
/** Bad input: lengths, shapes, values (NaN), options. */
export class InputError extends ManoError {
  name: 'InputError';
}
/** A file that cannot be read: truncated, corrupt, unsupported dtype or layout. */
export class FormatError extends ManoError {
  name: 'FormatError';
}
/** The WebAssembly module could not be loaded (no SIMD, wrong URL, not initialised). */
export class LoadError extends ManoError {
  name: 'LoadError';
}

export interface ScoreFileOptions {
  labels?: BlobLike | Int32Array;
  format?: 'npy' | 'safetensors' | 'csv';
  key?: string;
  labelColumn?: string | number;
  header?: boolean;
  chunkResults?: number;
  onProgress?: (done: number, total: number) => void;
  /** Aborting rejects at once with signal.reason, and the worker stops the job between two chunks. */
  signal?: AbortSignalLike;
}

/** What ManoWorker needs of a Worker (a DOM Worker is one; it only transfers ArrayBuffers, so the
 * types need no DOM `Transferable`). */
export interface WorkerLike {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
  addEventListener(type: 'message' | 'error', listener: (event: any) => void): void;
  terminate(): void;
}

/** Promises over the Worker entry `mano-score/worker`. */
export class ManoWorker {
  constructor(worker: WorkerLike);
  init(options?: InitOptions): Promise<true>;
  /** Transfers data's buffer to the worker unless { transfer: false }. */
  score(data: LogitsArray, shape: Shape, options?: Options,
    how?: { onProgress?: (done: number, total: number) => void; transfer?: boolean; chunkRows?: number; signal?: AbortSignalLike }): Promise<Result>;
  /** notes: what the reader left out of a CSV or took as its labels (labelColumn), one line each. */
  scoreFile(file: BlobLike, options?: Options, how?: ScoreFileOptions): Promise<{ name: string; result: Result; notes: string[]; labelColumn?: string | number }>;
  read(file: BlobLike, options?: CsvOptions & { key?: string }): Promise<Matrix>;
  evaluate(sets: LabeledSet[] | LabeledLogits[], options?: CalibrateOptions): Promise<Evaluation>;
  calibrate(sets: LabeledSet[] | LabeledLogits[], options?: CalibrateOptions): Promise<Calibration>;
  /**
   * Labeled files scored as `mano calibrate` scores a manifest's sets (the core's family workflow:
   * one MaNo branch chosen for all of them), then evaluated and calibrated, in the worker.
   */
  calibrateFiles(sets: LabeledFile[], options?: CalibrateOptions,
    how?: { onProgress?: (done: number, total: number) => void; signal?: AbortSignalLike }): Promise<{
    /** Each set's result on the branch chosen for all of them. */
    sets: LabeledSet[];
    evaluation: Evaluation;
    calibration: Calibration;
    /** An extra Taylor order left out of a set's choice, and why. */
    warnings: string[];
  }>;
  /** options.logits may be the set's File (read in the worker, only where the audited rows are), with its reading options. */
  predict(calibration: Calibration, result: Result,
    options?: Omit<PredictOptions, 'logits'> & { logits?: LogitsMatrix | BlobLike } & CsvOptions & { key?: string; format?: 'npy' | 'safetensors' | 'csv' }): Promise<Prediction>;
  audit(set: number | { rows: number; cols?: number; name?: string }, budget: number, options?: AuditOptions): Promise<AuditDraw>;
  predictScores(calibration: Calibration, method: MethodName, scores: ArrayLike<number>,
    options?: { level?: number }): Promise<ScorePrediction[]>;
  monitor(points: readonly TimelinePoint[], options?: MonitorOptions): Promise<MonitorAssessment>;
  /** The estimator table (initialises the worker's module if needed). */
  methods(): Promise<MethodInfo[]>;
  terminate(): void;
}
