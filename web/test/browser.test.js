// The package in a real browser (Debian chromium through playwright-core), served from the repo
// root by a tiny static server: the page imports /dist/index.js, scores on the main thread and in a
// module Worker (ManoWorker: score with progress, scoreFile on a File), and gets the same numbers
// as Node (same .wasm: 1e-9 relative) and as the native CLI (1e-6 relative). A bad call is a typed
// error that leaves the page able to score; the page loads nothing from any other origin and logs
// no errors.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  CHROMIUM, compareDeep, foreignRequests, haveChromium, launchChromium, loadPackage, relClose, root, runNative, serveDirectory,
} from './support.js';

const ROWS = 500;
const COLS = 10;
const EXAMPLE = 'tests/data/example/contrast_0_logits.npy';

// The logits both sides build: the same formula in the page and here.
const logitsSource = `(rows, cols) => {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < out.length; i++) out[i] = Math.sin(i * 12.9898) * 4;
  return out;
}`;
// eslint-disable-next-line no-new-func
const makeLogits = new Function(`return ${logitsSource}`)();

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>mano-score smoke</title><link rel="icon" href="data:,"></head>
<body>
<script type="module">
import * as mano from '/dist/index.js';
const makeLogits = ${logitsSource};
const rows = ${ROWS}, cols = ${COLS};
const out = {};
const describeError = (e) => ({
  name: e?.name, message: String(e?.message ?? e), isInputError: e instanceof mano.InputError,
  isManoError: e instanceof mano.ManoError,
});
try {
  out.simd = mano.simdSupported();
  await mano.init();
  const data = makeLogits(rows, cols);
  out.data = Array.from(data);
  out.version = mano.version();
  out.architecture = mano.accumulator(cols, { methods: ['mano'] }).architecture;
  out.main = mano.score(data, { rows, cols });

  try {
    mano.score(new Float32Array(7), { rows: 2, cols: 3 });
    out.bad = { threw: false };
  } catch (e) {
    out.bad = { threw: true, ...describeError(e) };
  }
  out.afterBad = mano.score(data, { rows, cols }).methods.mano.score;

  const worker = new mano.ManoWorker(new Worker('/dist/worker.js', { type: 'module' }));
  out.workerInit = await worker.init();
  out.progress = [];
  out.worker = await worker.score(data.slice(), { rows, cols }, {},
    { chunkRows: 100, onProgress: (done, total) => out.progress.push([done, total]) });
  try {
    await worker.score(new Float32Array(7), { rows: 2, cols: 3 });
    out.workerBad = { threw: false };
  } catch (e) {
    out.workerBad = { threw: true, ...describeError(e) };
  }
  const response = await fetch('/${EXAMPLE}');
  const bytes = await response.arrayBuffer();
  out.fileProgress = [];
  out.file = await worker.scoreFile(new File([bytes], 'contrast_0_logits.npy'), {},
    { onProgress: (done, total) => out.fileProgress.push([done, total]) });
  worker.terminate();
} catch (e) {
  out.error = String(e?.stack ?? e);
}
window.__results = out;
</script>
</body></html>
`;

describe('browser (chromium)', { skip: !haveChromium && `${CHROMIUM} does not exist: no browser to test in` }, () => {
  let browser;
  let server;
  let origin;
  let results;
  let nodeResult;
  const served = [];
  const requests = [];
  const problems = [];

  before(async () => {
    const mano = await loadPackage();
    nodeResult = mano.score(makeLogits(ROWS, COLS), { rows: ROWS, cols: COLS });
    ({ server, origin } = await serveDirectory(root, { pages: { '/smoke.html': PAGE }, served }));
    browser = await launchChromium({ requests, problems });
    await browser.page.goto(`${origin}smoke.html`);
    await browser.page.waitForFunction(() => window.__results !== undefined, null, { timeout: 30_000 });
    results = await browser.page.evaluate(() => window.__results);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  });

  test('the page ran to the end without errors', () => {
    assert.equal(results.error, undefined, results.error);
    assert.deepEqual(problems, []);
  });

  test('WebAssembly SIMD is there (no SIMD-missing LoadError) and the kernel is wasm-simd128', () => {
    assert.equal(results.simd, true);
    assert.equal(results.architecture, 'wasm-simd128');
    assert.match(results.version, /^\d+\.\d+\.\d+$/);
  });

  test('the main thread scores as Node does (same .wasm: 1e-9 relative)', () => {
    assert.deepEqual(results.data, Array.from(makeLogits(ROWS, COLS)), 'the page built other logits than Node');
    assert.equal(results.main.n, ROWS);
    assert.equal(results.main.k, COLS);
    assert.ok(relClose(results.main.methods.mano.score, nodeResult.methods.mano.score, 1e-9),
      `MaNo ${results.main.methods.mano.score} (page) vs ${nodeResult.methods.mano.score} (Node)`);
    assert.deepEqual(compareDeep(results.main, nodeResult, 1e-9, 'result'), []);
  });

  // The Worker pushes the file in chunks, so the nuclear norms' K x K Gram matrices add their
  // rows in another order: their smallest eigenvalues (float rounding in the probability rows)
  // move, and their square roots carry that up to ~1e-9 relative: the whole result is held to
  // 1e-8, MaNo to 1e-9.
  test('the module Worker scores as Node does and reports progress', () => {
    assert.equal(results.workerInit, true);
    assert.ok(relClose(results.worker.methods.mano.score, nodeResult.methods.mano.score, 1e-9),
      `MaNo ${results.worker.methods.mano.score} (worker) vs ${nodeResult.methods.mano.score} (Node)`);
    assert.deepEqual(compareDeep(results.worker, nodeResult, 1e-8, 'result'), []);
    assert.ok(results.progress.length >= 1, 'no progress message arrived');
    for (const [done, total] of results.progress) {
      assert.equal(total, ROWS);
      assert.ok(done > 0 && done <= ROWS);
    }
    assert.deepEqual(results.progress.at(-1), [ROWS, ROWS]);
  });

  test('ManoWorker.scoreFile on a File gets the native CLI\'s MaNo score (1e-6 relative)', () => {
    const native = runNative(['score', '--json', '--quiet', path.join(root, EXAMPLE)]);
    assert.equal(results.file.name, 'contrast_0_logits.npy');
    assert.equal(results.file.result.n, native.n ?? results.file.result.n);
    assert.equal(results.file.result.k, native.k);
    const a = results.file.result.methods.mano.score;
    const b = native.methods.mano.score;
    assert.ok(relClose(a, b, 1e-6), `MaNo ${a} (worker scoreFile) vs ${b} (native CLI)`);
    assert.ok(results.fileProgress.length >= 1);
  });

  test('a wrong length is an InputError naming the lengths, and the page still scores', () => {
    assert.equal(results.bad.threw, true);
    assert.equal(results.bad.isInputError, true, `${results.bad.name}: ${results.bad.message}`);
    assert.equal(results.bad.name, 'InputError');
    assert.match(results.bad.message, /7 values/);
    assert.match(results.bad.message, /2 x 3 = 6/);
    assert.equal(results.afterBad, nodeResult.methods.mano.score);
    // the same through the worker: the error class crosses postMessage
    assert.equal(results.workerBad.threw, true);
    assert.equal(results.workerBad.isInputError, true, `${results.workerBad.name}: ${results.workerBad.message}`);
    assert.match(results.workerBad.message, /7 values/);
  });

  test('every request stays on the test server\'s origin', () => {
    // the recorder sees the worker's requests too (its module graph, its own mano.wasm fetch)
    assert.ok(requests.includes(`${origin}dist/worker.js`), `requests seen: ${requests.join(', ')}`);
    assert.ok(requests.filter((u) => u === `${origin}dist/mano.wasm`).length >= 2, 'the worker\'s mano.wasm fetch was not seen');
    assert.deepEqual(foreignRequests(requests, origin), [], 'requests to other origins');
    for (const p of ['/smoke.html', '/dist/index.js', '/dist/mano.js', '/dist/mano.wasm', '/dist/worker.js', `/${EXAMPLE}`])
      assert.ok(served.includes(p), `the server never served ${p} (served: ${served.join(', ')})`);
  });
});
