// Type-checked only (web/test/types.test.js runs tsc --noEmit --strict on it): the whole public
// API of 'mano-score' used as a consumer would, through the package's own name (package
// self-reference: "name" + "exports" in package.json), plus `@ts-expect-error` lines that pin
// down misuse the declarations must reject.
import {
  CHUNK_BYTES, FormatError, InputError, LoadError, ManoError, ManoWorker, accumulator, accumulatorFromJSON, audit, calibrate,
  defaultMethods, evaluate, init, methods as methodTable, openNpy, openSafetensors, predict, readCsv, readMatrix, readNpy, readSafetensors,
  score, scoreStream, simdSupported, version, Accumulator,
} from 'mano-score';
import type {
  AccumulatorState, Api, Audit, AuditDraw, CalibrateOptions, Calibration, CalibrationFold, Dtype, Evaluation, InitOptions, LabeledSet, LabelsForWidth,
  LogitsArray, Matrix, MatrixSource, MethodCalibration, MethodInfo, MethodName, NormalizationChoice, Options, Prediction, Result, Shape,
  SummaryStats,
} from 'mano-score';
import { handleMessage } from 'mano-score/worker';

declare const wasmBytes: Uint8Array;
declare const npyBlob: Blob;
declare const file: File;

function logits(matrix: Matrix): LogitsArray {
  if (matrix.data instanceof Int32Array) throw new InputError(`${matrix.name}: integer data is not logits`);
  return matrix.data;
}

function floatDtype(matrix: Matrix): Dtype | undefined {
  return matrix.dtype === 'int32' ? undefined : matrix.dtype;
}

export async function useEverything(): Promise<number> {
  // --- init
  if (!simdSupported()) throw new Error('no WebAssembly SIMD');
  const initOptions: InitOptions = { wasmUrl: new URL('./mano.wasm', import.meta.url) };
  const api: Api = await init(initOptions);
  await init({ wasmUrl: '/assets/mano.wasm' });
  await init({ wasmBinary: wasmBytes });
  await init({ wasmBinary: wasmBytes.buffer as ArrayBuffer });
  await init();
  const v: string = api.version() + version();
  const chunk: number = CHUNK_BYTES;

  // --- score with each array type
  const options: Options = { p: 4, eta: 5, taylorOrder: 2, normalization: 'softrun', methods: ['mano', 'confscore'] };
  const f32: Result = score(new Float32Array(20), { rows: 2, cols: 10 }, options);
  const f64: Result = score(new Float64Array(20), { rows: 2, cols: 10 });
  const f16: Result = score(new Uint16Array(20), { rows: 2, cols: 10, dtype: 'float16' });
  const bf16: Result = score(new Uint16Array(20), { rows: 2, cols: 10, dtype: 'bfloat16' }, { batchSize: 0, criterion: null });
  const labeled = score(new Float32Array(20), { rows: 2, cols: 10, labels: new Int32Array([1, 2]) });
  const labeledArray = score(new Float32Array(20), { rows: 2, cols: 10, labels: [1, 2] }, {
    temperature: 'fit',
    labelMarginal: 'source',
    source: { logits: new Float32Array(30), labels: new Int32Array(3) },
    sourceFeatures: { data: new Float64Array(12), cols: 4 },
  });
  const shape: Shape = {
    rows: 2, cols: 10, second: new Float32Array(20), features: new Float32Array(8), featureCols: 4,
  };
  score(new Float32Array(20), shape, { temperature: 1.5, labelMarginal: [0.5, 0.5] });
  score(new Float32Array(20), shape, { labelMarginal: 'uniform', normalization: 'taylor' });

  // --- result fields
  const manoScore: number | undefined = f32.methods.mano?.score;
  const criterion = f32.methods.mano?.criterion ?? 0;
  const norm: 'softmax' | 'taylor' | undefined = f64.methods.mano?.normalization;
  const cot: number | undefined = f16.methods.cot?.accuracy;
  const atc = bf16.methods.atc_mc?.threshold;
  const trueAccuracy: number | undefined = labeled.accuracy;
  const n: number = labeledArray.n + labeledArray.k;
  const se = f32.methods.confscore?.se;
  const taylor2: number | undefined = f32.methods.mano?.variants?.taylor2;
  const predicted: number[] | undefined = f32.predicted;
  const confidence: number | undefined = f32.confidence;

  // --- accumulators
  const acc: Accumulator = accumulator(10, { methods: ['mano', 'entropy'] });
  acc.push(new Float32Array(20)).push(new Float32Array(10), { labels: [3] });
  const other = accumulator(10, { methods: ['mano', 'entropy'] });
  other.push(new Float64Array(30), { labels: new Int32Array(3) });
  acc.merge(other);
  const state: AccumulatorState = acc.toJSON();
  acc.merge(state);
  const restored = accumulatorFromJSON(state);
  const restored2 = accumulatorFromJSON(JSON.stringify(state));
  const rows: number = acc.rows + restored.cols + restored2.rows;
  const arch: string = acc.architecture;
  const accResult: Result = acc.result();
  acc.dispose();
  other.dispose();
  restored.dispose();
  restored2.dispose();
  if (!(acc instanceof Accumulator)) throw new Error('unreachable');

  // --- loaders and streaming
  const source: MatrixSource = await openNpy(npyBlob, { name: 'logits.npy' });
  const part = await source.read(0, Math.min(100, source.rows));
  const partLength: number = part.length;
  const streamed: Result = await scoreStream(source, { methods: ['mano'] }, {
    chunkRows: 1000,
    onProgress: (done: number, total: number) => console.log(`${done}/${total}`),
    chunkResults: 500,
    signal: AbortSignal.timeout(60_000),
  });
  const timeline = streamed.chunks?.map((c) => [c.first, c.rows, c.result.methods.mano?.score ?? NaN]) ?? [];
  const st = await openSafetensors(await npyBlob.arrayBuffer(), { key: 'logits' });
  await scoreStream(st);

  const m: Matrix = await readNpy(new Uint8Array(16));
  const byMatrix = await scoreStream(m, {}, { labels: m.labels });
  const fromMatrix = score(logits(m), { rows: m.rows, cols: m.cols, dtype: floatDtype(m), labels: m.labels });
  const csv = await readCsv(file, { labelColumn: 'label', header: true, delimiter: ',', name: 'x.csv' });
  const csvLabels: Int32Array | undefined = csv.labels;
  const safetensors = await readSafetensors(new ArrayBuffer(8), { key: 'logits' });
  const any: Matrix = await readMatrix(file, { key: 'logits', labelColumn: 0 });

  // --- evaluation, calibration, prediction
  const sets: LabeledSet[] = [
    { name: 'a', group: 'g', result: labeled },
    { name: 'b', result: labeledArray },
    { name: 'c', result: byMatrix },
  ];
  const evaluation: Evaluation = evaluate(sets);
  const stats: SummaryStats | undefined = evaluation.summary.mano;
  const r2: number = stats?.r2 ?? NaN;
  const groupR2 = evaluation.groups?.g?.mano?.spearman;
  const setAccuracy: number = evaluation.sets[0].accuracy;
  const setMano: number | undefined = evaluation.sets[0].methods.mano?.score;
  const notes: string[] = evaluation.notes;
  const calibration: Calibration = calibrate(sets, { methods: ['mano', 'confscore'] });
  const saved: string = JSON.stringify(calibration);
  const left: string[] | undefined = calibration.notes;
  const calibrateOptions: CalibrateOptions = { normalization: 'family', source: { logits: new Float32Array(30), labels: [0, 1, 2] } };
  const family: Calibration = calibrate(sets, calibrateOptions);
  calibrate(sets, { normalization: 'softrun', p: 4 });
  const choice: NormalizationChoice | undefined = family.normalization;
  const variant: string | undefined = choice?.variant;
  const branch: 'softmax' | 'taylor' | undefined = choice?.normalization;
  const chosenBy: 'leave-one-group-out' | 'pooled criterion' | undefined = choice?.by;
  const variantErrors: Record<string, number> | undefined = choice?.errors;
  const recommended: MethodName | undefined = family.recommended;
  const best: MethodName | undefined = family.ranking?.[0]?.method;
  const fit: MethodCalibration | undefined = family.methods.mano;
  const fold: CalibrationFold | undefined = fit?.folds?.[0];
  const residual: number | undefined = fold?.residuals[0];
  const logoMae: number | undefined = fit?.logo_mae;
  const proportions: number[] | undefined = family.shift?.proportions;
  const calibratedDistance: number | undefined = family.shift?.sets[0]?.distance;
  const prediction: Prediction = predict(JSON.parse(saved) as Calibration, fromMatrix, { level: 0.95 });
  const low: number | undefined = prediction.methods.mano?.interval[0];
  const high = prediction.methods.mano?.interval[1];
  const extrapolated: boolean | undefined = prediction.methods.confscore?.extrapolated;
  const estimateMethod: MethodName | undefined = prediction.estimate?.method;
  const estimateLow: number | undefined = prediction.estimate?.interval[0];
  const regime: 'general' | 'label_shift' | undefined = prediction.estimate?.regime;
  const labelShiftPassed: boolean | undefined = prediction.label_shift?.passed;
  const outside: boolean | undefined = prediction.shift?.outside;
  const shiftDistance: number | undefined = prediction.shift?.distance;
  // audit mode: the rows to label (and mano audit's CSV), then the labeled file back
  const draw: AuditDraw = audit(m, 30, { seed: 7, source: 'logits.npy' });
  const toLabel: number[] = draw.rows;
  const auditCsv: string | undefined = draw.csv;
  const drawnSeed: number = audit(2000, 30).seed;
  const need: LabelsForWidth | undefined = prediction.labels_for_width;
  const needRows: number | undefined = need?.n;
  const audited = predict(JSON.parse(saved) as Calibration, fromMatrix, {
    audit: 'row,weight,label\n1,1,3\n', auditName: 'rows.csv', logits: { data: new Float32Array(20), rows: 2, cols: 10 },
  });
  const auditOf: Audit | undefined = audited.audit;
  const auditMethod: 'ppi' | 'wilson' | undefined = auditOf?.method;
  const wilsonLow: number | undefined = auditOf?.wilson[0];
  predict(JSON.parse(saved) as Calibration, fromMatrix, { audit: { rows: [1, 2], labels: new Int32Array(2) }, logits: { data: new Float32Array(20), rows: 2, cols: 10 } });
  const methods: MethodName[] = defaultMethods(10, 2000);
  const withSource: MethodName[] = defaultMethods(10, 2000, ['source', 'features']);
  // @ts-expect-error: an input the table does not have
  defaultMethods(10, 2000, ['labels']);
  const table: MethodInfo[] = methodTable();
  const accuracyOnes: MethodName[] = table.filter((m) => m.returns === 'accuracy').map((m) => m.name);
  const gramLimit: number | undefined = table[0].default_max_k;

  // --- the Worker client
  const worker = new ManoWorker(new Worker(new URL('mano-score/worker', import.meta.url), { type: 'module' }));
  const started: true = await worker.init({ wasmUrl: '/assets/mano.wasm' });
  const workerTable: MethodInfo[] = await worker.methods();
  const wr: Result = await worker.score(new Float32Array(20), { rows: 2, cols: 10 }, { methods: ['mano'] }, {
    onProgress: (done, total) => console.log(done / total),
    transfer: false,
    chunkRows: 1,
    signal: new AbortController().signal,
  });
  const { name, result } = await worker.scoreFile(file, {}, {
    labels: npyBlob, format: 'npy', chunkResults: 100, onProgress: () => {}, signal: AbortSignal.abort(),
  });
  await worker.scoreFile(file, { p: 3 }, { labels: new Int32Array(2), format: 'csv', labelColumn: 'y', header: true });
  await worker.scoreFile(file, undefined, { format: 'safetensors', key: 'logits' });
  const read: Matrix = await worker.read(file, { key: 'x', delimiter: ';' });
  const wEval: Evaluation = await worker.evaluate(sets);
  const wCal: Calibration = await worker.calibrate(sets, { p: 4, normalization: 'family' });
  const wPred: Prediction = await worker.predict(wCal, wr, { level: 0.8 });
  const wAudited: Prediction = await worker.predict(wCal, wr, { audit: 'row,weight,label\n', auditName: 'rows.csv', logits: file, labelColumn: 'y' });
  const wDraw: AuditDraw = await worker.audit({ rows: 2000, cols: 10, name: 'x.npy' }, 30, { seed: 1 });
  worker.terminate();

  // --- the Worker entry, driven by hand
  await handleMessage({ id: 1, op: 'score', args: {} }, (reply, transfer) => {
    if (reply.type === 'progress') console.log(reply.id, reply.done);
    void transfer;
  });
  // as a Worker entry posts its replies: the transfer list is what postMessage takes
  const port = new MessageChannel().port1;
  await handleMessage({ id: 2, op: 'methods' }, (reply, transfer) => port.postMessage(reply, transfer ?? []));

  // --- errors, narrowed with instanceof
  try {
    score(new Float32Array(3), { rows: 2, cols: 2 });
  } catch (e: unknown) {
    if (e instanceof InputError) {
      const message: string = e.message;
      const base: ManoError = e;
      const name: 'InputError' = e.name;  // the literal name, which survives minification
      console.log(message, base.name, name);
    } else if (e instanceof FormatError || e instanceof LoadError) {
      const err: ManoError = e;
      console.log(err.stack);
    } else if (e instanceof ManoError) {
      const err: Error = e;
      console.log(err.cause);
    } else {
      throw e;
    }
  }
  const made = new InputError('bad', { cause: 1 });
  const isError: boolean = made instanceof Error && made instanceof ManoError;

  // --- misuse the declarations must reject
  // @ts-expect-error an InputError's name is 'InputError', not another class's
  const otherName: 'FormatError' = new InputError('x').name;
  // @ts-expect-error Int8Array is not logits
  score(new Int8Array(4), { rows: 2, cols: 2 });
  // @ts-expect-error an unknown option key
  score(new Float32Array(4), { rows: 2, cols: 2 }, { pNorm: 4 });
  // @ts-expect-error not a method name
  score(new Float32Array(4), { rows: 2, cols: 2 }, { methods: ['manoo'] });
  // @ts-expect-error the shape needs cols
  score(new Float32Array(4), { rows: 2 });
  // @ts-expect-error int32 is no logits dtype
  score(new Float32Array(4), { rows: 2, cols: 2, dtype: 'int32' });
  // @ts-expect-error normalization is one of three names
  accumulator(10, { normalization: 'softplus' });
  // @ts-expect-error 'family' is for calibrate, which sees every set, not for scoring one
  score(new Float32Array(4), { rows: 2, cols: 2 }, { normalization: 'family' });
  // @ts-expect-error calibrate's normalization is one of four names
  calibrate(sets, { normalization: 'per-set' });
  // @ts-expect-error the estimate's interval is a pair of numbers
  const estimateText: string | undefined = prediction.estimate?.interval[1];
  // @ts-expect-error score is synchronous: a Result, not a Promise
  const notAPromise: Promise<Result> = score(new Float32Array(4), { rows: 2, cols: 2 });
  // @ts-expect-error no such Worker method
  worker.scoreMatrix(m);
  // @ts-expect-error the constructor is private: accumulator() makes them
  new Accumulator();
  // @ts-expect-error a Matrix's data may be an Int32Array, which is not logits
  score(m.data, m);
  // @ts-expect-error the interval is a pair of numbers
  const notString: string | undefined = prediction.methods.mano?.interval[0];
  // @ts-expect-error level is an option, not a number argument
  predict(calibration, fromMatrix, 0.9);
  // @ts-expect-error an audit's labels are rows with labels, or the labeled CSV's text
  predict(calibration, fromMatrix, { audit: [1, 2, 3] });
  // @ts-expect-error the synchronous predict reads the audited rows from a Matrix, not a File
  predict(calibration, fromMatrix, { audit: 'row,weight,label\n', logits: file });
  // @ts-expect-error the seed is a number
  audit(2000, 30, { seed: '7' });

  void [v, chunk, manoScore, criterion, norm, cot, atc, trueAccuracy, n, se, rows, arch, accResult, partLength,
    timeline, st, csvLabels, safetensors, any, r2, groupR2, setAccuracy, notes, left, low, high, extrapolated, methods,
    started, name, result, read, wEval, wPred, isError, notAPromise, notString, setMano, taylor2, predicted, confidence,
    variant, branch, chosenBy, variantErrors, recommended, best, residual, logoMae, proportions,
    calibratedDistance, estimateMethod, estimateLow, regime, labelShiftPassed, outside, shiftDistance, estimateText, toLabel, auditCsv,
    drawnSeed, needRows, auditMethod, wilsonLow, wAudited, wDraw];
  return manoScore ?? 0;
}
