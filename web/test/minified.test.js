// The package as a production bundle gets it: a small consumer of `mano-score` (resolved through
// package.json's `exports`, like an installed copy) built by Vite with minification on and
// keep_names off, so every class is renamed (InputError becomes a one-letter name). The page
// bundle and the Worker bundle are minified separately, and the Worker sends errors back by name:
// each bad call must still raise an error that is `instanceof InputError` (FormatError, LoadError)
// with `name === 'InputError'`, on the main thread and through ManoWorker, in Node (the Worker
// bundle run in a worker_threads Worker) and in Debian's Chromium (a module Worker).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { after, before, describe, test } from 'node:test';

import { CHROMIUM, dist, haveChromium, launchChromium, root, serveDirectory, tempDir } from './support.js';

const NAMES = ['ManoError', 'InputError', 'FormatError', 'LoadError'];

// What the consumer does, the same in the page and in Node; `makeWorker` gives a Web Worker
// running the package's Worker entry. Returns plain data (it crosses from the page to the test).
const CONSUMER = `import * as mano from 'mano-score';

const NAMES = ${JSON.stringify(NAMES)};
const logits = new Float32Array(60).map((_, i) => Math.sin(i * 12.9898) * 4);

async function caught(run) {
  try {
    await run();
    return { threw: false };
  } catch (e) {
    const is = Object.fromEntries(NAMES.map((n) => [n, e instanceof mano[n]]));
    return { threw: true, name: e?.name, text: String(e), is, sameClass: NAMES.find((n) => e?.constructor === mano[n]) ?? null };
  }
}

export async function exercise(makeWorker) {
  const out = { classNames: Object.fromEntries(NAMES.map((n) => [n, mano[n].name])) };
  out.loadMain = await caught(() => mano.score(logits, { rows: 20, cols: 3 }));
  await mano.init();
  out.scoreMain = mano.score(logits, { rows: 20, cols: 3 }).methods.mano.score;
  out.inputMain = await caught(() => mano.score(new Float32Array(7), { rows: 2, cols: 3 }));
  out.formatMain = await caught(() => mano.readNpy(new Uint8Array([1, 2, 3, 4])));
  const worker = new mano.ManoWorker(makeWorker());
  try {
    out.scoreWorker = (await worker.score(logits.slice(), { rows: 20, cols: 3 })).methods.mano.score;
    out.inputWorker = await caught(() => worker.score(new Float32Array(7), { rows: 2, cols: 3 }));
    out.formatWorker = await caught(() => worker.read(new Uint8Array([1, 2, 3, 4])));
  } finally {
    worker.terminate();
  }
  return out;
}
`;

const PAGE_SCRIPT = `import { exercise } from './consumer.js';

try {
  window.__results = await exercise(() => new Worker(new URL('mano-score/worker', import.meta.url), { type: 'module' }));
} catch (e) {
  window.__results = { error: String(e?.stack ?? e) };
}
`;

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>mano-score minified</title><link rel="icon" href="data:,"></head>
<body><script type="module" src="./page.js"></script></body></html>
`;

// A worker_threads Worker dressed as a module Web Worker: the bundled Worker entry runs with a
// `self` to post from and receives { data } events; messages wait until it has loaded.
function nodeWebWorker(entry) {
  const bootstrap = `
    const { parentPort } = require('node:worker_threads');
    const queue = [];
    globalThis.self = { postMessage: (message, transfer) => parentPort.postMessage(message, transfer) };
    parentPort.on('message', (data) => (self.onmessage ? self.onmessage({ data }) : queue.push(data)));
    import(${JSON.stringify(pathToFileURL(entry).href)})
      .then(() => queue.splice(0).forEach((data) => self.onmessage({ data })));`;
  const thread = new Worker(bootstrap, { eval: true });
  return {
    addEventListener(type, listener) {
      if (type === 'message') thread.on('message', (data) => listener({ data }));
      if (type === 'error') thread.on('error', (e) => listener({ message: e.message }));
    },
    postMessage: (message, transfer) => thread.postMessage(message, transfer),
    terminate: () => thread.terminate(),
  };
}

// Every error check of one run of the consumer.
function checkResults(out, where) {
  assert.equal(out.error, undefined, out.error);
  // otherwise the minifier kept the names and this test would prove nothing
  for (const name of NAMES) assert.notEqual(out.classNames[name], name, `${where}: the bundle kept the class name ${name}`);
  assert.equal(typeof out.scoreMain, 'number');
  assert.equal(out.scoreWorker, out.scoreMain);
  const cases = [
    ['loadMain', 'LoadError', /not initialised/],
    ['inputMain', 'InputError', /7 values/],
    ['formatMain', 'FormatError', /not a \.npy file/],
    ['inputWorker', 'InputError', /7 values/],
    ['formatWorker', 'FormatError', /not a format this package reads/],
  ];
  for (const [key, name, message] of cases) {
    const got = out[key];
    const label = `${where} ${key}: ${JSON.stringify(got)}`;
    assert.equal(got.threw, true, label);
    assert.equal(got.name, name, label);
    assert.equal(got.sameClass, name, label);
    assert.deepEqual(got.is, Object.fromEntries(NAMES.map((n) => [n, n === 'ManoError' || n === name])), label);
    assert.ok(got.text.startsWith(`${name}: `), label);
    assert.match(got.text, message, label);
  }
}

let vite = null;
try {
  vite = await import('vite');
} catch {
  // a devDependency: without it there is nothing to bundle with
}

describe('a minified production bundle (Vite)', { skip: !vite && 'vite is not installed (npm ci)' }, () => {
  let work;
  let out;
  let workerChunk;

  before(async () => {
    assert.ok(fs.existsSync(path.join(dist, 'index.js')), 'dist/ is missing: run npm run build');
    work = tempDir('mano-minified-');
    const app = path.join(work, 'app');
    out = path.join(work, 'out');
    fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true });
    // resolved as an installed package: its package.json `exports`, `browser` condition included
    fs.symlinkSync(root, path.join(app, 'node_modules', 'mano-score'), 'dir');
    fs.writeFileSync(path.join(app, 'consumer.js'), CONSUMER);
    fs.writeFileSync(path.join(app, 'page.js'), PAGE_SCRIPT);
    fs.writeFileSync(path.join(app, 'node.js'), "export { exercise } from './consumer.js';\n");
    fs.writeFileSync(path.join(app, 'index.html'), PAGE);
    await vite.build({
      root: app,
      configFile: false,
      logLevel: 'silent',
      base: './',
      worker: { format: 'es' },
      build: {
        outDir: out,
        emptyOutDir: true,
        target: 'es2022',
        minify: true,
        assetsInlineLimit: 0,
        rolldownOptions: {
          input: { page: path.join(app, 'index.html'), node: path.join(app, 'node.js') },
          preserveEntrySignatures: 'exports-only',
          output: { keepNames: false, entryFileNames: (chunk) => (chunk.name === 'node' ? 'node.js' : 'assets/[name]-[hash].js') },
        },
      },
    });
    const assets = fs.readdirSync(path.join(out, 'assets'));
    const worker = assets.filter((f) => /^worker-.*\.js$/.test(f));
    assert.equal(worker.length, 1, `the build emitted no single Worker chunk: ${assets.join(', ')}`);
    workerChunk = path.join(out, 'assets', worker[0]);
  });

  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('in Node: errors keep their classes and names on the main thread and through the Worker', async () => {
    const { exercise } = await import(pathToFileURL(path.join(out, 'node.js')).href);
    checkResults(await exercise(() => nodeWebWorker(workerChunk)), 'node');
  });

  test('in Chromium: errors keep their classes and names on the page and through a module Worker',
    { skip: !haveChromium && `${CHROMIUM} does not exist: no browser to test in` }, async () => {
      const problems = [];
      const { server, origin } = await serveDirectory(out);
      const browser = await launchChromium({ problems });
      try {
        await browser.page.goto(`${origin}index.html`);
        await browser.page.waitForFunction(() => window.__results !== undefined, null, { timeout: 30_000 });
        checkResults(await browser.page.evaluate(() => window.__results), 'chromium');
        assert.deepEqual(problems, []);
      } finally {
        await browser.close();
        await new Promise((resolve) => server.close(resolve));
      }
    });
});
