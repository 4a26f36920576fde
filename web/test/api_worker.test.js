// The Worker protocol (handleMessage, as the Worker runs it) and cancelling Worker jobs with an
// AbortSignal, against the main thread's results.
// Run: node --test web/test/api_worker.test.js
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';

import { compareDeep, PARITY, loadPackage, normalLogits, root, runNative } from './support.js';

let mano;
before(async () => {
  mano = await loadPackage();
});

describe('worker protocol (handleMessage, as the Worker runs it)', () => {
  test('score reports progress then the result; errors come back typed', async () => {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const rows = 20000, cols = 100;
    const q = normalLogits(rows, cols, 2, 3);
    const replies = [];
    await handleMessage({ id: 7, op: 'score', args: { data: q, shape: { rows, cols }, options: { methods: ['mano'] }, chunkRows: 1000 } },
      (m) => replies.push(m));
    const last = replies.at(-1);
    assert.equal(last.type, 'result');
    assert.ok(replies.some((m) => m.type === 'progress' && m.done === rows && m.total === rows));
    assert.deepEqual(compareDeep(last.value, mano.score(q, { rows, cols }, { methods: ['mano'] }), 1e-12), []);
    const errors = [];
    await handleMessage({ id: 8, op: 'score', args: { data: q, shape: { rows: 3, cols }, options: {} } }, (m) => errors.push(m));
    assert.equal(errors.at(-1).type, 'error');
    assert.equal(errors.at(-1).name, 'InputError');
    const file = new File([fs.readFileSync(path.join(root, 'tests/data/example/blend_0_logits.npy'))], 'blend_0_logits.npy');
    const labels = new File([fs.readFileSync(path.join(root, 'tests/data/example/blend_0_labels.npy'))], 'blend_0_labels.npy');
    const fileReplies = [];
    await handleMessage({ id: 9, op: 'scoreFile', args: { file, labels, options: {}, chunkResults: 500 } }, (m) => fileReplies.push(m));
    const value = fileReplies.at(-1).value;
    assert.equal(fileReplies.at(-1).type, 'result', JSON.stringify(fileReplies.at(-1)));
    assert.equal(value.name, 'blend_0_logits.npy');
    assert.equal(value.result.chunks.length, 4);
    assert.ok(value.result.accuracy > 0.5);
    const want = runNative(['score', '--json', '--quiet', path.join(root, 'tests/data/example/blend_0_logits.npy')]);
    assert.deepEqual(compareDeep(value.result.methods, want.methods, PARITY), []);
  });

  test('operations are own properties; malformed arguments are InputErrors, not internal errors', async () => {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const reply = async (message) => {
      const replies = [];
      await handleMessage(message, (m) => replies.push(m));
      return replies.at(-1);
    };
    for (const op of ['constructor', 'valueOf', 'toString', '__proto__', 'hasOwnProperty', 42, undefined]) {
      const r = await reply({ id: 1, op, args: { x: 1 } });
      assert.equal(r.type, 'error', `${String(op)}: ${JSON.stringify(r)}`);
      assert.equal(r.name, 'InputError');
      assert.match(r.message, /^unknown operation/);
    }
    const q = normalLogits(10, 4, 2, 5);
    const cases = [
      [{ data: Array.from(q), shape: { rows: 10, cols: 4 }, options: {} }, /data must be a typed array.*got Array/],
      [{ data: q, options: {} }, /args\.shape must be/],
      [{ data: q, shape: null, options: {} }, /args\.shape must be/],
      [{ data: q, shape: { rows: 10, cols: 4 }, options: {}, chunkRows: NaN }, /chunkRows must be a whole number/],
      [{ data: q, shape: { rows: 10, cols: 4 }, options: {}, chunkRows: 0.5 }, /chunkRows must be a whole number/],
    ];
    for (const [args, message] of cases) {
      const r = await reply({ id: 2, op: 'score', args });
      assert.equal(r.type, 'error', JSON.stringify(r));
      assert.equal(r.name, 'InputError', r.message);
      assert.match(r.message, message);
      assert.doesNotMatch(r.message, /internal error/);
    }
  });
});

describe('cancelling Worker jobs (AbortSignal)', () => {
  // A Worker run in this thread: messages go through handleMessage one macrotask later, so a
  // cancel posted mid-job arrives between two chunks, as it would in a real Worker.
  async function inThreadWorker() {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const listeners = [];
    const seen = [];
    return {
      seen,
      addEventListener(type, fn) { if (type === 'message') listeners.push(fn); },
      postMessage(message) {
        setImmediate(() => handleMessage(message, (reply) => {
          seen.push(reply);
          setImmediate(() => listeners.forEach((fn) => fn({ data: reply })));
        }));
      },
      terminate() {},
    };
  }

  test('an abort rejects with the signal\'s reason and stops the job between chunks; the worker goes on', async () => {
    const raw = await inThreadWorker();
    const worker = new mano.ManoWorker(raw);
    const rows = 40000, cols = 100, chunkRows = 500;
    const q = normalLogits(rows, cols, 2, 11);
    await assert.rejects(worker.score(q.slice(), { rows, cols }, {}, { signal: AbortSignal.abort() }),
      (e) => e.name === 'AbortError');
    await assert.rejects(worker.score(q.slice(), { rows, cols }, {}, { signal: {} }),
      (e) => e instanceof mano.InputError && /signal must be an AbortSignal/.test(e.message));
    const controller = new AbortController();
    const job = worker.score(q.slice(), { rows, cols }, { methods: ['mano'] },
      { chunkRows, signal: controller.signal, onProgress: () => controller.abort(new Error('enough')) });
    await assert.rejects(job, (e) => e.message === 'enough');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const progress = raw.seen.filter((m) => m.type === 'progress').length;
    assert.ok(progress < rows / chunkRows / 2, `${progress} progress replies: the job did not stop early`);
    assert.equal(raw.seen.at(-1).type, 'cancelled');
    assert.ok(!raw.seen.some((m) => m.type === 'result'));
    const r = await worker.score(q.slice(0, 1000 * cols), { rows: 1000, cols }, { methods: ['mano'] }, { signal: new AbortController().signal });
    assert.deepEqual(compareDeep(r, mano.score(q.slice(0, 1000 * cols), { rows: 1000, cols }, { methods: ['mano'] }), 1e-12), []);
  });

  test('scoreStream refuses labels of another length than the rows', async () => {
    const rows = 100, cols = 4;
    const q = normalLogits(rows, cols, 2, 13);
    await assert.rejects(mano.scoreStream({ rows, cols, data: q }, {}, { labels: new Int32Array(150) }),
      (e) => e instanceof mano.InputError && /labels: 150 labels for 100 rows/.test(e.message));
  });

  test('scoreStream on the main thread takes a signal too', async () => {
    const rows = 5000, cols = 10;
    const q = normalLogits(rows, cols, 2, 12);
    const controller = new AbortController();
    await assert.rejects(mano.scoreStream({ rows, cols, data: q }, {}, { chunkRows: 100, signal: controller.signal,
      onProgress: (done) => done >= 1000 && controller.abort() }), (e) => e.name === 'AbortError');
  });
});
