// The packed tarball (web/pack.mjs, `npm run package`) smoke test: it holds only package.json,
// README/LICENSE and dist/*; it installs offline into an empty project (no runtime dependencies);
// a consumer script there imports 'mano-score' by name, resolves 'mano-score/worker' and
// 'mano-score/mano.wasm', scores the bundled example and matches the native CLI (1e-6 relative);
// the gzipped .wasm stays small. Its README is web/README.md, for npm users: its example runs as
// it is in the installed project and predicts what `mano predict` does, and it names no command
// of the repository's.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

import { installPacked, MAX_WASM_GZ, nativeMano, relClose, root, runNative, runNpm, runPack, tempDir } from './support.js';

const example = path.join(root, 'tests/data/example/contrast_0_logits.npy');

describe('npm pack', () => {
  let work;
  let tarball;
  let project;
  let installMode = 'offline';

  before(() => {
    work = tempDir('mano-pack-');
    const cache = path.join(work, 'npm-cache');
    const dest = path.join(work, 'pack');
    fs.mkdirSync(dest);
    const packed = runPack(['--json', '--pack-destination', dest], cache);
    assert.equal(packed.status, 0, `npm pack failed:\n${packed.stdout}\n${packed.stderr}`);
    const [info] = JSON.parse(packed.stdout);
    tarball = path.join(dest, info.filename);
    assert.ok(fs.existsSync(tarball), `no tarball at ${tarball}`);

    project = path.join(work, 'consumer');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }, null, 2));
    const install = ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball];
    let res = runNpm(['install', '--offline', ...install.slice(1)], project, cache);
    if (res.status !== 0) {
      installMode = 'online (--offline failed)';
      res = runNpm(install, project, cache);
    }
    assert.equal(res.status, 0, `npm install failed:\n${res.stdout}\n${res.stderr}`);
  });

  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('the tarball holds only package.json, README/LICENSE and dist/*', (t) => {
    const entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean)
      .map((e) => e.replace(/^package\//, ''));
    const allowed = /^(package\.json|README(\.md)?|LICEN[CS]E(\.md|\.txt)?|dist\/[^/]+)$/i;
    assert.deepEqual(entries.filter((e) => !allowed.test(e)), [], 'unexpected files in the tarball');
    for (const needed of ['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/worker.js', 'dist/worker.d.ts',
      'dist/mano.js', 'dist/mano.wasm', 'dist/errors.js', 'dist/loaders.js', 'dist/core.js', 'dist/client.js',
      'dist/methods.d.ts', 'dist/shapes.d.ts']) {
      assert.ok(entries.includes(needed), `${needed} is missing from the tarball`);
    }
    const wasm = fs.readFileSync(path.join(project, 'node_modules/mano-score/dist/mano.wasm'));
    assert.deepEqual(wasm, fs.readFileSync(path.join(root, 'dist/mano.wasm')), 'the installed mano.wasm differs from dist/');
    const gz = gzipSync(wasm, { level: 9 }).length;
    const size = fs.statSync(tarball).size;
    t.diagnostic(`tarball ${path.basename(tarball)}: ${size} bytes (${(size / 1024).toFixed(1)} KiB), ` +
      `${entries.length} files, installed ${installMode}; dist/mano.wasm ${wasm.length} bytes, gzip -9 ${gz} bytes (${(gz / 1024).toFixed(1)} KiB)`);
    assert.ok(gz <= MAX_WASM_GZ, `gzipped mano.wasm is ${gz} bytes, over ${MAX_WASM_GZ}`);
  });

  test('a consumer imports it by name and gets the native CLI\'s MaNo score', () => {
    const file = path.join(project, 'contrast_0_logits.npy');
    fs.copyFileSync(example, file);
    fs.writeFileSync(path.join(project, 'use.mjs'), `
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { init, readNpy, score, ManoWorker, InputError } from 'mano-score';
import { handleMessage } from 'mano-score/worker';

const wasm = fileURLToPath(import.meta.resolve('mano-score/mano.wasm'));
const workerEntry = fileURLToPath(import.meta.resolve('mano-score/worker'));
const api = await init();
const m = await readNpy(await readFile('contrast_0_logits.npy'));
const r = score(m.data, m);
let typedError = false;
try { score(new Float32Array(3), { rows: 2, cols: 2 }); } catch (e) { typedError = e instanceof InputError; }
console.log(JSON.stringify({
  wasm, workerEntry, version: api.version(), rows: m.rows, cols: m.cols, result: r, typedError,
  manoWorker: typeof ManoWorker, handleMessage: typeof handleMessage,
}));
`);
    const out = execFileSync(process.execPath, ['use.mjs'], { cwd: project, encoding: 'utf8' });
    const got = JSON.parse(out.trim().split('\n').pop());
    const installed = fs.realpathSync(path.join(project, 'node_modules/mano-score'));
    assert.equal(fs.realpathSync(got.wasm), path.join(installed, 'dist/mano.wasm'));
    assert.equal(fs.realpathSync(got.workerEntry), path.join(installed, 'dist/worker.js'));
    assert.ok(!got.wasm.startsWith(path.join(root, 'dist')), 'resolved to the repo, not the installed copy');
    assert.equal(got.manoWorker, 'function');
    assert.equal(got.handleMessage, 'function');
    assert.equal(got.typedError, true);
    assert.match(got.version, /^\d+\.\d+\.\d+$/);
    assert.equal(got.result.n, got.rows);
    assert.equal(got.result.k, got.cols);

    const native = runNative(['score', '--json', '--quiet', file]);
    const a = got.result.methods.mano.score;
    const b = native.methods.mano.score;
    assert.ok(relClose(a, b, 1e-6), `MaNo ${a} (installed package) vs ${b} (native CLI)`);
    assert.ok(relClose(got.result.methods.mano.criterion, native.methods.mano.criterion, 1e-6));
  });

  // The package is ES modules only: CommonJS gets it through Node's require() of ES modules (Node
  // 20.19+ and 22.12+); docs/npm.md says so, and import() for older Node.
  test('a CommonJS consumer require()s it by name on a Node that loads ES modules with require',
    { skip: !process.features.require_module && `Node ${process.version} cannot require() ES modules` }, () => {
      fs.writeFileSync(path.join(project, 'use.cjs'), `
const { init, score, InputError } = require('mano-score');
init().then(() => {
  const r = score(new Float32Array([1, 2, 3, 4, 5, 6]), { rows: 2, cols: 3 }, { methods: ['mano'] });
  console.log(JSON.stringify({ score: r.methods.mano.score, inputError: typeof InputError }));
});
`);
      const out = execFileSync(process.execPath, ['use.cjs'], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const got = JSON.parse(out.trim().split('\n').pop());
      assert.equal(got.inputError, 'function');
      assert.ok(got.score > 0 && got.score < 1, String(got.score));
    });
});

// The README npm shows is the tarball's: web/README.md, for people who install the package.
describe('the packed README', () => {
  let work;
  let project;
  let readme;

  before(() => {
    work = tempDir('mano-readme-');
    ({ project } = installPacked(work));
    readme = fs.readFileSync(path.join(project, 'node_modules/mano-score/README.md'), 'utf8');
  });

  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('is web/README.md and names no command of the repository', () => {
    assert.equal(readme, fs.readFileSync(path.join(root, 'web/README.md'), 'utf8'));
    for (const repositoryOnly of [/npm run (demo|build|test|bench|dashboard)/, /apt-get/, /\.ci\//, /bash /, /sudo/, /build\/release/]) {
      assert.doesNotMatch(readme, repositoryOnly, `the npm README says ${repositoryOnly}, which only the repository has`);
    }
    assert.match(readme, /npm install mano-score/);
    const installed = JSON.parse(fs.readFileSync(path.join(project, 'node_modules/mano-score/package.json'), 'utf8'));
    assert.equal(installed.scripts, undefined, 'the packed package.json keeps the repository\'s scripts');
    assert.equal(installed.devDependencies, undefined);
    // npm pack in the repository would ship the repository's README: its prepack refuses
    const inRepository = runNpm(['pack', '--dry-run'], root, path.join(work, 'npm-cache'));
    assert.notEqual(inRepository.status, 0, 'npm pack in the repository packed');
    assert.match(inRepository.stderr, /npm run package/);
  });

  test('its example runs as it is in the installed project and predicts what mano predict does', () => {
    const example = readme.match(/```js\n([\s\S]*?)```/);
    assert.ok(example, 'the README has no js block');
    const data = path.join(root, 'tests/data/example');
    for (const f of fs.readdirSync(data)) if (f.endsWith('.npy')) fs.copyFileSync(path.join(data, f), path.join(project, f));
    fs.copyFileSync(path.join(data, 'blend_5_logits.npy'), path.join(project, 'new_logits.npy'));
    // the example as it is, then its prediction as JSON for the comparison
    fs.writeFileSync(path.join(project, 'example.mjs'), `${example[1]}\nconsole.log(JSON.stringify(p.estimate));\n`);
    const out = execFileSync(process.execPath, ['example.mjs'], { cwd: project, encoding: 'utf8' }).trim().split('\n');
    assert.equal(out.length, 2, out.join('\n'));
    const got = JSON.parse(out[1]);

    const cal = path.join(work, 'cal.json');
    execFileSync(nativeMano, ['calibrate', path.join(data, 'manifest.json'), '-o', cal, '--quiet']);
    const want = runNative(['predict', '--calibration', cal, '--json', '--quiet', path.join(data, 'blend_5_logits.npy')]).estimate;
    assert.equal(got.method, want.method);
    assert.equal(got.regime, want.regime);
    // the WebAssembly and native kernels agree within 1e-6 relative (docs/testing.md)
    assert.ok(relClose(got.accuracy, want.accuracy, 1e-6), `accuracy ${got.accuracy} (README example) vs ${want.accuracy} (mano predict)`);
    for (const i of [0, 1]) assert.ok(relClose(got.interval[i], want.interval[i], 1e-6), `interval ${got.interval} vs ${want.interval}`);
    assert.ok(out[0].startsWith(`${got.method} ${got.accuracy} [`), `the example printed ${out[0]}`);
  });
});
