// The bundler matrix, from the packed tarball installed offline into an empty project, as a web
// developer meets the package: one consumer (init, a score, a bad call that must raise an error
// that is `instanceof InputError`) built by Vite, esbuild, webpack and Rollup (production, minified
// where the bundler minifies) and loaded as a plain <script type=module> without a bundler, each
// run in Debian's Chromium; Node ESM, Node require() and an esbuild CommonJS bundle for Node; and
// the type declarations under TypeScript's node10, node16 and bundler resolution, and without the
// DOM lib. The recipes are the ones docs/npm.md gives.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { CHROMIUM, haveChromium, installPacked, launchChromium, loadPackage, root, serveDirectory, tempDir } from './support.js';

const require = createRequire(import.meta.url);

// What every build runs: its outcome as plain data (globalThis.__mano in a page, stdout in Node).
const CONSUMER = `import { init, score, InputError } from 'mano-score';

export async function run(initOptions) {
  await init(initOptions);
  const logits = new Float32Array(60).map((_, i) => Math.sin(i * 12.9898) * 4);
  const value = score(logits, { rows: 6, cols: 10 }, { methods: ['mano'] }).methods.mano.score;
  let error = null;
  try {
    score(logits, { rows: 7, cols: 10 });
  } catch (e) {
    error = { instanceOf: e instanceof InputError, name: e.name, message: e.message };
  }
  return { value, error };
}
`;
const PAGE_ENTRY = `import { run } from './consumer.js';
run().then((r) => { globalThis.__mano = r; }, (e) => { globalThis.__mano = { failed: String(e && e.message || e) }; });
`;
const PAGE = '<!doctype html><meta charset="utf-8"><title>consumer</title><script type="module" src="./main.js"></script>\n';

describe('bundlers and module systems, from the packed tarball', () => {
  let work;
  let project;
  let expected;
  let browser;
  const problems = [];
  const built = {};  // bundler -> { dir, warnings }

  before(async () => {
    const mano = await loadPackage();
    const logits = new Float32Array(60).map((_, i) => Math.sin(i * 12.9898) * 4);
    expected = mano.score(logits, { rows: 6, cols: 10 }, { methods: ['mano'] }).methods.mano.score;

    work = tempDir('mano-bundlers-');
    ({ project } = installPacked(work));
    fs.writeFileSync(path.join(project, 'consumer.js'), CONSUMER);
    fs.writeFileSync(path.join(project, 'main.js'), PAGE_ENTRY);
    const wasm = path.join(project, 'node_modules/mano-score/dist/mano.wasm');

    // esbuild: bundle and minify; mano.wasm is copied next to the bundle (esbuild has no asset
    // handling for new URL(..., import.meta.url))
    const esbuild = require('esbuild');
    const esDir = path.join(work, 'out/esbuild');
    const es = await esbuild.build({ entryPoints: [path.join(project, 'main.js')], bundle: true, format: 'esm',
      platform: 'browser', minify: true, outfile: path.join(esDir, 'main.js'), absWorkingDir: project, logLevel: 'silent' });
    fs.copyFileSync(wasm, path.join(esDir, 'mano.wasm'));
    built.esbuild = { dir: esDir, warnings: es.warnings.map((w) => w.text) };

    // webpack 5, production: it sees new URL('./mano.wasm', import.meta.url) and emits the asset
    const webpack = require('webpack');
    const wpDir = path.join(work, 'out/webpack');
    const stats = await new Promise((resolve, reject) => webpack({
      mode: 'production', context: project, entry: './main.js', target: 'web',
      output: { path: wpDir, filename: 'main.js', module: true }, experiments: { outputModule: true },
      performance: { hints: false },
    }, (err, s) => (err ? reject(err) : resolve(s))));
    const info = stats.toJson({ all: false, warnings: true, errors: true });
    assert.deepEqual(info.errors.map((e) => e.message), [], 'webpack errors');
    built.webpack = { dir: wpDir, warnings: info.warnings.map((w) => w.message) };

    // Rollup with node-resolve; mano.wasm copied next to the bundle
    const { rollup } = await import(pathToFileURL(require.resolve('rollup')).href);
    const { nodeResolve } = await import(pathToFileURL(require.resolve('@rollup/plugin-node-resolve')).href);
    const rlDir = path.join(work, 'out/rollup');
    const rlWarnings = [];
    const bundle = await rollup({ input: path.join(project, 'main.js'), plugins: [nodeResolve({ browser: true })],
      onwarn: (w) => rlWarnings.push(`${w.code}: ${w.message}`) });
    await bundle.write({ dir: rlDir, format: 'es', entryFileNames: 'main.js' });
    fs.copyFileSync(wasm, path.join(rlDir, 'mano.wasm'));
    built.rollup = { dir: rlDir, warnings: rlWarnings };

    // Vite, production: it sees new URL('./mano.wasm', import.meta.url) and emits the asset
    fs.writeFileSync(path.join(project, 'index.html'), PAGE);
    const { build: viteBuild } = await import(pathToFileURL(require.resolve('vite')).href);
    const viteDir = path.join(work, 'out/vite');
    const viteWarnings = [];
    await viteBuild({ root: project, logLevel: 'silent', configFile: false, build: { outDir: viteDir, emptyOutDir: true, target: 'es2022' },
      customLogger: { info() {}, warn: (m) => viteWarnings.push(m), warnOnce: (m) => viteWarnings.push(m), error: (m) => viteWarnings.push(m),
        clearScreen() {}, hasErrorLogged: () => false, hasWarned: false } });
    built.vite = { dir: viteDir, warnings: viteWarnings, page: fs.readFileSync(path.join(viteDir, 'index.html'), 'utf8') };

    // no bundler: the page imports the installed package's files through an import map
    const plainDir = path.join(work, 'out/plain');
    fs.mkdirSync(plainDir, { recursive: true });
    fs.cpSync(path.join(project, 'node_modules/mano-score/dist'), path.join(plainDir, 'mano-score'), { recursive: true });
    fs.copyFileSync(path.join(project, 'consumer.js'), path.join(plainDir, 'consumer.js'));
    fs.copyFileSync(path.join(project, 'main.js'), path.join(plainDir, 'main.js'));
    built.plain = { dir: plainDir, warnings: [],
      page: '<!doctype html><meta charset="utf-8"><title>consumer</title>' +
        '<script type="importmap">{"imports": {"mano-score": "./mano-score/index.js"}}</script>' +
        '<script type="module" src="./main.js"></script>\n' };
    for (const b of Object.values(built)) fs.writeFileSync(path.join(b.dir, 'index.html'), b.page ?? PAGE);
    if (haveChromium) browser = await launchChromium({ problems });
  });

  after(async () => {
    await browser?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  for (const name of ['vite', 'esbuild', 'webpack', 'rollup', 'plain']) {
    test(`${name}: the page scores and raises InputError`, { skip: !haveChromium && `${CHROMIUM} is missing` }, async (t) => {
      const { dir, warnings } = built[name];
      for (const w of warnings) t.diagnostic(`warning: ${w}`);
      assert.deepEqual(warnings, [], `${name} warned`);
      const { server, origin } = await serveDirectory(dir);
      try {
        const page = browser.page;
        problems.length = 0;
        await page.goto(`${origin}index.html`);
        await page.waitForFunction(() => globalThis.__mano !== undefined, null, { timeout: 15_000 })
          .catch((e) => assert.fail(`${name}: no result in 15 s (${e.message.split('\n')[0]}); the page said: ${problems.join(' / ')}`));
        const r = await page.evaluate(() => globalThis.__mano);
        assert.equal(r.failed, undefined, `${name}: ${r.failed}`);
        assert.ok(Math.abs(r.value - expected) <= 1e-12 * expected, `${name}: ${r.value} != ${expected}`);
        assert.deepEqual({ instanceOf: r.error.instanceOf, name: r.error.name }, { instanceOf: true, name: 'InputError' });
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  }

  test('Node: import and require() of the installed package', () => {
    const esm = `import { run } from './consumer.js';\nconsole.log(JSON.stringify(await run()));\n`;
    fs.writeFileSync(path.join(project, 'esm.mjs'), esm);
    const cjs = `const { init, score, InputError } = require('mano-score');
(async () => {
  await init();
  const logits = new Float32Array(60).map((_, i) => Math.sin(i * 12.9898) * 4);
  console.log(JSON.stringify({ value: score(logits, { rows: 6, cols: 10 }, { methods: ['mano'] }).methods.mano.score }));
})();\n`;
    fs.writeFileSync(path.join(project, 'cjs.cjs'), cjs);
    for (const script of ['esm.mjs', 'cjs.cjs']) {
      const out = JSON.parse(execFileSync(process.execPath, [script], { cwd: project, encoding: 'utf8' }));
      assert.ok(Math.abs(out.value - expected) <= 1e-12 * expected, `${script}: ${out.value}`);
    }
    // a Node that cannot require() ES modules (as before 20.19) gets told what to do instead
    const old = spawnSync(process.execPath, ['--no-experimental-require-module', 'cjs.cjs'], { cwd: project, encoding: 'utf8' });
    assert.notEqual(old.status, 0);
    assert.match(old.stderr, /mano-score is an ES module, and this Node \(v[\d.]+\) does not require\(\) ES modules.*await import\('mano-score'\)/);
  });

  test('an esbuild CommonJS bundle for Node: a clear error without wasmBinary, the right score with it', async () => {
    const src = `const fs = require('node:fs');
const path = require('node:path');
const { init, score } = require('mano-score');
(async () => {
  let message = null;
  try { await init(); } catch (e) { message = e.name + ': ' + e.message; }
  await init({ wasmBinary: fs.readFileSync(path.join(__dirname, 'mano.wasm')) });
  const logits = new Float32Array(60).map((_, i) => Math.sin(i * 12.9898) * 4);
  console.log(JSON.stringify({ message, value: score(logits, { rows: 6, cols: 10 }, { methods: ['mano'] }).methods.mano.score }));
})();\n`;
    fs.writeFileSync(path.join(project, 'node-cjs.cjs'), src);
    const out = path.join(work, 'out/esbuild-cjs');
    await require('esbuild').build({ entryPoints: [path.join(project, 'node-cjs.cjs')], bundle: true, format: 'cjs',
      platform: 'node', outfile: path.join(out, 'main.cjs'), absWorkingDir: project, logLevel: 'silent' });
    fs.copyFileSync(path.join(project, 'node_modules/mano-score/dist/mano.wasm'), path.join(out, 'mano.wasm'));
    const r = JSON.parse(execFileSync(process.execPath, [path.join(out, 'main.cjs')], { encoding: 'utf8' }));
    assert.match(r.message, /^LoadError: cannot tell where mano\.wasm is \(this bundle has no import\.meta\.url.*init\(\{ wasmBinary/);
    assert.ok(Math.abs(r.value - expected) <= 1e-12 * expected);
  });

  for (const [label, options, source] of [
    ['node10', { module: 'commonjs', moduleResolution: 'node10', lib: ['es2022', 'dom'] }, 'types.cts'],
    ['node16', { module: 'node16', moduleResolution: 'node16', lib: ['es2022', 'dom'] }, 'types.mts'],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'] }, 'types.ts'],
    ['no DOM lib and no @types (Node only)', { module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: [] }, 'types.mts'],
  ]) {
    test(`TypeScript, ${label}: the declarations resolve and type-check`, () => {
      const code = `import { init, score, Accumulator, InputError, ManoWorker, type Result } from 'mano-score';
import { handleMessage } from 'mano-score/worker';
export async function use(): Promise<number> {
  await init();
  const r: Result = score(new Float32Array(20), { rows: 2, cols: 10 }, { methods: ['mano'] });
  const acc: Accumulator | null = null;
  const w: ManoWorker | null = null;
  const h: typeof handleMessage | null = null;
  if (r.methods.mano === undefined || acc !== null || w !== null || h !== null) throw new InputError('unreachable');
  return r.methods.mano.score;
}
`;
      fs.writeFileSync(path.join(project, source), code);
      const config = path.join(project, `tsconfig.${label.split(' ')[0]}.json`);
      fs.writeFileSync(config, JSON.stringify({ compilerOptions: { noEmit: true, strict: true, target: 'es2022', skipLibCheck: false,
        ...options }, files: [source] }));
      const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
      const res = spawnSync(process.execPath, [tsc, '--pretty', 'false', '-p', config], { cwd: project, encoding: 'utf8' });
      assert.equal(res.status, 0, `tsc (${label}):\n${res.stdout}${res.stderr}`);
    });
  }
});
