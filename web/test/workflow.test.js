// The family workflow (src/mano/workflow/family.hpp) through the npm package: sets given with their
// logits are scored, the branch chosen and the lines fitted as `mano eval` and `mano calibrate`
// do, on the committed benchmark manifests (bench/digits_c, bench/fashion_mnist_c), with every
// option the CLI has for it (taylorOrders, the source set, temperature 'fit').
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { compareDeep, PARITY, loadPackage, nativeMano, root, runNative, tempDir } from './support.js';

const mano = await loadPackage();

// Every set of a manifest with its logits and labels, and its source set.
async function readManifest(file) {
  const dir = path.dirname(file);
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  const load = (f) => mano.readNpy(fs.readFileSync(path.join(dir, f)));
  const sets = [];
  for (const s of manifest.sets) {
    const m = await load(s.logits);
    sets.push({ name: s.name, group: s.group, logits: m.data, shape: { rows: m.rows, cols: m.cols }, labels: (await load(s.labels)).data });
  }
  const src = await load(manifest.source.logits);
  return { sets, source: { logits: src.data, labels: (await load(manifest.source.labels)).data } };
}

// DoC is ConfScore moved by a constant: their held-out errors tie to the last bits, so the
// ranking is compared by method.
const byMethod = (cal) => ({ ...cal, ranking: Object.fromEntries((cal.ranking ?? []).map((r) => [r.method, r.logo_mae])) });

describe('evaluate and calibrate of sets given as logits equal mano eval and mano calibrate', () => {
  let tmp;
  before(() => { tmp = tempDir('mano-workflow-'); });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const cases = [
    { manifest: 'bench/digits_c/data/cnn/manifest.json', cli: ['--taylor-orders', '1,2,3'], options: { taylorOrders: [1, 2, 3] } },
    { manifest: 'bench/fashion_mnist_c/data/mlp/manifest.json', cli: ['--temperature', 'fit'], options: { temperature: 'fit' } },
  ];
  for (const c of cases) {
    test(`${c.manifest} ${c.cli.join(' ')}`, async () => {
      const file = path.join(root, c.manifest);
      const { sets, source } = await readManifest(file);
      const options = { source, ...c.options };

      const calFile = path.join(tmp, 'cal.json');
      execFileSync(nativeMano, ['calibrate', file, '-o', calFile, '--quiet', ...c.cli]);
      const want = JSON.parse(fs.readFileSync(calFile, 'utf8'));
      const got = mano.calibrate(sets, options);
      assert.ok(want.normalization && got.normalization, 'a branch chosen for the family');
      if (c.options.taylorOrders)
        assert.deepEqual(Object.keys(got.normalization.errors).sort(), ['softmax', ...c.options.taylorOrders.map((o) => `taylor${o}`)].sort());
      // native and WebAssembly kernels agree within 1e-6 relative (docs/testing.md); residuals, of
      // accuracies near 1, within 1e-7
      assert.deepEqual(compareDeep(byMethod(JSON.parse(JSON.stringify(got))), byMethod(want), PARITY), []);

      const wantEval = runNative(['eval', '--json', '--quiet', file, ...c.cli]);
      const gotEval = mano.evaluate(sets, options);
      assert.deepEqual(compareDeep(gotEval, wantEval, PARITY), []);
      assert.ok(Array.isArray(gotEval.warnings));
    });
  }

  test('the options of the family are checked as the CLI checks them', async () => {
    const { sets } = await readManifest(path.join(root, 'bench/digits_c/data/cnn/manifest.json'));
    const few = sets.slice(0, 4);
    assert.throws(() => mano.calibrate(few, { taylorOrders: [0] }), (e) => e instanceof mano.InputError && /taylorOrders/.test(e.message));
    assert.throws(() => mano.calibrate(few, { criterion: 3 }), (e) => e instanceof mano.InputError && /criterion fixes the softrun branch/.test(e.message));
    assert.throws(() => mano.calibrate([few[0], { name: 'x', result: {} }]),
      (e) => e instanceof mano.InputError && /every set as/.test(e.message));
    assert.throws(() => mano.calibrate([{ ...few[0], labels: undefined }, ...few.slice(1)]),
      (e) => e instanceof mano.InputError && /has no labels/.test(e.message));
    assert.throws(() => mano.calibrate(few.map((s) => ({ name: s.name, result: {} })), { taylorOrders: [1] }),
      (e) => e instanceof mano.InputError && /give the sets with their logits/.test(e.message));
    // normalization softrun: each set's own criterion, no branch chosen, as mano calibrate --normalization softrun
    const own = mano.calibrate(few, { normalization: 'softrun', methods: ['mano', 'confscore'] });
    assert.equal(own.normalization, undefined);
  });
});

describe('the core\'s one synchronous driver of the family workflow (scoreFamily)', () => {
  test('a scorer\'s error is the error on the first pass, a warning on a variant, and any other error stops the run', async () => {
    const { callCore, readerCore } = await import(path.join(root, 'dist/core.js'));
    const core = readerCore();
    const sets = JSON.stringify([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const family = JSON.stringify({ family: true, taylor_orders: [2] });
    const passes = [];
    assert.throws(() => callCore(core, () => core.scoreFamily(sets, family, (i, pass) => {
      passes.push([i, JSON.parse(pass).pass]);
      return { error: 'set a has no rows' };
    })), (e) => e instanceof mano.InputError && e.message === 'set a has no rows');
    assert.deepEqual(passes, [[0, 'first']]);
    assert.throws(() => callCore(core, () => core.scoreFamily(sets, family, () => ({ abort: true }))),
      (e) => e instanceof mano.ManoError && !(e instanceof mano.InputError));
  });
});

describe('the Worker\'s calibrateFiles: the family workflow one awaited read at a time, over Files', () => {
  test('equals calibrate/evaluate over the same sets given as arrays, and mano calibrate', async () => {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const file = path.join(root, 'bench/digits_c/data/cnn/manifest.json');
    const dir = path.dirname(file);
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
    const chosen = manifest.sets.filter((s) => /^(clean|gaussian_noise|rotate|blur)/.test(s.name)).slice(0, 8);
    const blob = (f) => Object.assign(new Blob([fs.readFileSync(path.join(dir, f))]), { name: f });
    const options = { taylorOrders: [1, 2], methods: ['mano', 'confscore', 'entropy'] };
    const replies = [];
    await handleMessage({
      id: 1, op: 'calibrateFiles',
      args: { sets: chosen.map((s) => ({ name: s.name, group: s.group, file: blob(s.logits), labels: blob(s.labels) })), options },
    }, (m) => replies.push(m));
    const reply = replies.find((m) => m.type !== 'progress');
    assert.equal(reply.type, 'result', JSON.stringify(reply));
    const { sets, evaluation, calibration, notes, warnings } = reply.value;
    assert.ok(replies.some((m) => m.type === 'progress'), 'progress was reported');

    const { sets: all } = await readManifest(file);
    const arrays = all.filter((s) => chosen.some((c) => c.name === s.name));
    const want = mano.calibrate(arrays, options);
    assert.deepEqual(compareDeep(calibration, JSON.parse(JSON.stringify(want)), 1e-12), []);
    assert.deepEqual(notes, want.notes);
    assert.deepEqual(warnings, []);
    assert.deepEqual(compareDeep(evaluation, mano.evaluate(arrays, options), 1e-12), []);
    assert.deepEqual(sets.map((s) => s.name), arrays.map((s) => s.name));
    assert.equal(sets[0].result.methods.mano.normalization, calibration.normalization.normalization, 'the sets are on the chosen branch');

    const list = path.join(tempDir('mano-files-'), 'manifest.json');
    fs.writeFileSync(list, JSON.stringify({ sets: chosen.map((s) => ({ ...s, logits: path.join(dir, s.logits), labels: path.join(dir, s.labels) })) }));
    const cal = `${list}.cal.json`;
    execFileSync(nativeMano, ['calibrate', list, '--allow-outside-paths', '-o', cal, '--quiet', '--taylor-orders', '1,2',
      '--methods', 'mano,confscore,entropy']);
    assert.deepEqual(compareDeep(byMethod(calibration), byMethod(JSON.parse(fs.readFileSync(cal, 'utf8'))), PARITY), []);
    fs.rmSync(path.dirname(list), { recursive: true, force: true });
  });

  test('a bad file is one FormatError naming it; no sets is an InputError', async () => {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const bad = Object.assign(new Blob([new Uint8Array([1, 2, 3])]), { name: 'broken.npy' });
    const replies = [];
    await handleMessage({ id: 2, op: 'calibrateFiles', args: { sets: [{ name: 'a', file: bad }], options: {} } }, (m) => replies.push(m));
    const reply = replies.at(-1);
    assert.equal(reply.type, 'error');
    assert.equal(reply.name, 'FormatError');
    assert.match(reply.message, /broken\.npy/);
    replies.length = 0;
    await handleMessage({ id: 3, op: 'calibrateFiles', args: { sets: [], options: {} } }, (m) => replies.push(m));
    assert.match(replies.at(-1).message, /non-empty array/);
  });
});

describe('monitor: the core\'s monitoring rules', () => {
  const points = [0.90, 0.92, 0.88, 0.91, 0.70, 0.89].map((estimate) => ({ estimate, se: 0.02, rows: 500 }));

  test('the reference period\'s mean - 3 sd, the points below it, the too-small warning', () => {
    const got = mano.monitor(points, { reference: 4, slope: 2 });
    const ref = points.slice(0, 4).map((p) => p.estimate);
    const mean = ref.reduce((a, b) => a + b) / 4;
    const sd = Math.sqrt(ref.reduce((a, b) => a + (b - mean) ** 2, 0) / 3);
    assert.ok(Math.abs(got.threshold.value - (mean - 3 * sd)) < 1e-12);
    assert.deepEqual(got.alerts, [4]);
    assert.equal(got.noise.rows_needed, 866);
    assert.equal(got.noise.limit, 0.05);
    assert.equal(mano.monitor(points, { reference: 4, slope: 1 }).noise, undefined);
    // a point's own slope (its prediction's, at its score) wins over the option
    const own = points.map((p) => ({ ...p, slope: 2 }));
    assert.equal(mano.monitor(own, { reference: 4, slope: 1 }).noise.rows_needed, 866);
    assert.equal(mano.monitor(own, { reference: 4 }).noise.rows_needed, 866);
    assert.deepEqual(mano.monitor(points, { threshold: 0.895 }).alerts, [2, 4, 5]);
    // every point in the reference period: not enough points yet, no alert; one point: no line yet
    const waiting = mano.monitor(points, { reference: 6 });
    assert.equal(waiting.waiting, true);
    assert.deepEqual(waiting.alerts, []);
    assert.deepEqual(mano.monitor(points.slice(0, 1), { reference: 1 }).threshold, { reference: 1 });
  });

  test('bad timelines and options are InputErrors', () => {
    const refused = (fn, pattern) => assert.throws(fn, (e) => e instanceof mano.InputError && pattern.test(e.message));
    refused(() => mano.monitor(points), /give a reference period/);
    refused(() => mano.monitor(points, { reference: 1.5 }), /whole number/);
    refused(() => mano.monitor([{ estimate: 'x' }], { threshold: 0.5 }), /"estimate" must be a number/);
    refused(() => mano.monitor([{ estimate: 0.9, slope: 'x' }, { estimate: 0.9 }], { threshold: 0.5 }), /"slope" must be a number/);
    // no accuracy is 1e300: the point is named (a damaged history's, as the dashboard reads one)
    refused(() => mano.monitor([{ estimate: 0.9 }, { estimate: 1e300 }], { threshold: 0.5 }),
      /^point 1: its estimate 1e\+300 is not an accuracy in \[0, 1\]$/);
    refused(() => mano.monitor('points', { threshold: 0.5 }), /must be an array/);
    refused(() => mano.monitor(points, { threshold: Number.NaN }), /must be a number/);
  });
});
