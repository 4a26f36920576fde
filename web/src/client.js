// ManoWorker: promises over the Worker entry (`mano-score/worker`), so a page stays responsive
// while large inputs are scored. Create the Worker yourself, as your bundler wants, e.g.
//   new ManoWorker(new Worker(new URL('mano-score/worker', import.meta.url), { type: 'module' }))
import { ERROR_CLASSES, InputError, LoadError, ManoError } from './errors.js';

export class ManoWorker {
  #worker;
  #pending = new Map();
  #next = 1;

  constructor(worker) {
    this.#worker = worker;
    worker.addEventListener('message', (event) => this.#receive(event.data));
    worker.addEventListener('error', (event) => this.#failAll(new LoadError(`the mano-score worker failed: ${event.message ?? 'could not start it'}`)));
  }

  #receive({ id, type, ...rest }) {
    const job = this.#pending.get(id);
    if (!job) return;
    if (type === 'progress') {
      job.onProgress?.(rest.done, rest.total);
      return;
    }
    this.#pending.delete(id);
    if (type === 'result') job.resolve(rest.value);
    else job.reject(new (ERROR_CLASSES[rest.name] ?? ManoError)(rest.message));
  }

  #failAll(error) {
    for (const job of this.#pending.values()) job.reject(error);
    this.#pending.clear();
  }

  // With a `signal`, an abort rejects the promise with signal.reason at once and tells the worker
  // to stop the job between two chunks.
  #call(op, args, { transfer = [], onProgress, signal } = {}) {
    if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function'))
      return Promise.reject(new InputError(`${op}: signal must be an AbortSignal`));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        this.#worker.postMessage({ id: 0, op: 'cancel', args: { id } });
        reject(signal.reason);
      };
      const settled = (fn) => (value) => {
        signal?.removeEventListener('abort', onAbort);
        fn(value);
      };
      this.#pending.set(id, { resolve: settled(resolve), reject: settled(reject), onProgress });
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        this.#worker.postMessage({ id, op, args }, transfer);
      } catch (e) {
        this.#pending.delete(id);
        signal?.removeEventListener('abort', onAbort);
        reject(new InputError(`${op}: its arguments cannot be sent to the worker (${e.message})`));
      }
    });
  }

  init({ wasmUrl, ...rest } = {}) {
    return this.#call('init', wasmUrl === undefined ? rest : { ...rest, wasmUrl: String(wasmUrl) });
  }

  // The data's buffer is transferred to the worker (the array is unusable afterwards) unless
  // { transfer: false }.
  score(data, shape, options = {}, { onProgress, transfer = true, chunkRows, signal } = {}) {
    const list = transfer && ArrayBuffer.isView(data) ? [data.buffer] : [];
    return this.#call('score', { data, shape, options, chunkRows }, { transfer: list, onProgress, signal });
  }

  // A File/Blob (.npy, .safetensors, .csv/.tsv), streamed in the worker; { labels, chunkResults,
  // format, key, labelColumn, header, onProgress, signal } -> { name, result, notes, labelColumn? }.
  scoreFile(file, options = {}, { onProgress, signal, ...rest } = {}) {
    return this.#call('scoreFile', { file, options, ...rest }, { onProgress, signal });
  }

  read(file, options = {}) { return this.#call('read', { file, ...options }); }
  async evaluate(sets, options = {}) {
    const { evaluation, warnings } = await this.#call('evaluate', { sets, options });
    Object.defineProperty(evaluation, 'warnings', { value: warnings, enumerable: false });
    return evaluation;
  }

  async calibrate(sets, options = {}) {
    const { calibration, notes } = await this.#call('calibrate', { sets, options });
    Object.defineProperty(calibration, 'notes', { value: notes, enumerable: false });
    return calibration;
  }

  // Labeled Files scored as `mano calibrate` scores a manifest's sets (the core's family
  // workflow), then evaluated and calibrated, in the worker: sets [{ name, group?, file, labels?,
  // format?, key?, labelColumn?, header? }] -> { sets (their results on the branch chosen for all
  // of them), evaluation, calibration (with its notes), warnings }.
  async calibrateFiles(sets, options = {}, { onProgress, signal } = {}) {
    const { notes, ...out } = await this.#call('calibrateFiles', { sets, options }, { onProgress, signal });
    Object.defineProperty(out.calibration, 'notes', { value: notes, enumerable: false });
    return out;
  }

  // With { audit, logits }: the audited prediction; logits may be the set's File, read in the worker.
  predict(calibration, result, { level = 0.9, ...audited } = {}) {
    return this.#call('predict', { ...audited, calibration, result, level });
  }

  audit(set, budget, options = {}) {
    return this.#call('audit', { set, budget, options });
  }

  predictScores(calibration, method, scores, { level = 0.9 } = {}) {
    return this.#call('predictScores', { calibration, method, scores, level });
  }

  monitor(points, options = {}) { return this.#call('monitor', { points, options }); }

  methods() { return this.#call('methods'); }

  terminate() {
    this.#worker.terminate();
    this.#failAll(new LoadError('the mano-score worker was terminated'));
  }
}
