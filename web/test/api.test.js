// The JS API against the golden vectors the native tests use (tests/golden, from the NumPy/POT
// reference) and against the native CLI on the bundled example (within 1e-6 relative: the WASM
// kernel's float exp rounds differently from the native AVX kernels'); every kind of bad input
// gives a typed error and leaves the module usable.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { compareDeep, loadPackage, nativeMano, normalLogits, root, runNative, tempDir } from './support.js';

let mano;
before(async () => {
  mano = await loadPackage();
});

const golden = (name) => JSON.parse(fs.readFileSync(path.join(root, 'tests/golden', name), 'utf8')).cases;
const readTestNpy = (relative) => mano.readNpy(fs.readFileSync(path.join(root, 'tests', relative)));

function goldenOptions(o) {
  const out = {};
  if (o.p !== undefined) out.p = o.p;
  if (o.eta !== undefined) out.eta = o.eta;
  if (o.taylor_order !== undefined) out.taylorOrder = o.taylor_order;
  if (o.normalization !== undefined) out.normalization = o.normalization;
  if (o.batch_size !== undefined) out.batchSize = o.batch_size;
  if (o.fixed_criterion !== undefined) out.criterion = o.fixed_criterion;
  return out;
}

// Asserts the module still works after an error.
function stillWorks() {
  const r = mano.score(new Float32Array([1, 2, 3, 3, 2, 1]), { rows: 2, cols: 3 }, { methods: ['mano'] });
  assert.ok(r.methods.mano.score > 0 && r.methods.mano.score < 1);
}

describe('init', () => {
  test('is idempotent and reports the SIMD kernel', async () => {
    const again = await mano.init();
    assert.equal(typeof again.score, 'function');
    assert.equal(mano.simdSupported(), true);
    assert.equal(mano.accumulator(4).architecture, 'wasm-simd128');
    assert.match(mano.version(), /^\d+\.\d+\.\d+$/);
  });
  test('a wrong wasmBinary is a LoadError that says what to pass', async () => {
    // A fresh copy of the package (its own init state): dist/ copied aside, its modules loaded anew.
    const copy = tempDir('mano-fresh-');
    fs.cpSync(path.join(root, 'dist'), copy, { recursive: true });
    fs.writeFileSync(path.join(copy, 'package.json'), '{"type": "module"}\n');
    const fresh = await import(pathToFileURL(path.join(copy, 'index.js')).href);
    await assert.rejects(fresh.init({ wasmBinary: new Uint8Array([1, 2, 3, 4]) }),
      (e) => e instanceof fresh.LoadError && /bytes of mano\.wasm/.test(e.message));
    assert.throws(() => fresh.score(new Float32Array(4), { rows: 2, cols: 2 }),
      (e) => e instanceof fresh.LoadError && /await init\(\) first/.test(e.message));
    await assert.rejects(fresh.init({ wasmUrl: new URL('file:///nonexistent/mano.wasm') }),
      (e) => e instanceof fresh.LoadError && /nonexistent/.test(e.message));
    const api = await fresh.init({ wasmBinary: fs.readFileSync(path.join(root, 'dist/mano.wasm')) });
    assert.equal(typeof api.score, 'function');
    fs.rmSync(copy, { recursive: true, force: true });
  });
  test('unknown init options and a later init with other options are LoadErrors; the same ones are fine', async () => {
    await assert.rejects(mano.init({ wasmURL: 'x' }), (e) => e instanceof mano.LoadError && /unknown option 'wasmURL'/.test(e.message));
    await assert.rejects(mano.init(null), (e) => e instanceof mano.LoadError && /must be an object/.test(e.message));
    await assert.rejects(mano.init({ wasmUrl: 'https://example.invalid/mano.wasm' }),
      (e) => e instanceof mano.LoadError && /already initialised from file:.*mano\.wasm; the core loads once/.test(e.message));
    // the URL it was loaded from, spelled out, and no options at all, are the same
    assert.equal(typeof (await mano.init({ wasmUrl: new URL('mano.wasm', pathToFileURL(path.join(root, 'dist/'))) })).score, 'function');
    assert.equal(typeof (await mano.init({ wasmUrl: undefined })).score, 'function');
    const fresh = await import(`${path.join(root, 'dist/index.js')}?binary=1`);
    const bytes = fs.readFileSync(path.join(root, 'dist/mano.wasm'));
    await fresh.init({ wasmBinary: bytes });
    assert.equal(typeof (await fresh.init({ wasmBinary: new Uint8Array(bytes) })).score, 'function');
    await assert.rejects(fresh.init({ wasmBinary: bytes.subarray(0, 100) }), (e) => e instanceof fresh.LoadError && /the wasmBinary given first/.test(e.message));
    await assert.rejects(fresh.init({ wasmUrl: new URL('file:///elsewhere/mano.wasm') }), fresh.LoadError);
  });
  test('an engine without WebAssembly SIMD gets a LoadError saying so', async () => {
    const fresh = await import(`${path.join(root, 'dist/index.js')}?nosimd=1`);
    const validate = WebAssembly.validate;
    WebAssembly.validate = () => false;
    try {
      await assert.rejects(fresh.init(), (e) => e instanceof fresh.LoadError && /no WebAssembly SIMD/.test(e.message));
    } finally {
      WebAssembly.validate = validate;
    }
  });
  test('a URL that serves HTML or 404 is a LoadError naming what the server answered', async (t) => {
    const server = http.createServer((req, res) => {
      if (req.url === '/page.wasm') res.writeHead(200, { 'content-type': 'text/html' }).end('<html>index</html>');
      else res.writeHead(404, 'Not Found').end();
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const base = `http://127.0.0.1:${server.address().port}`;
    const fresh = await import(`${path.join(root, 'dist/index.js')}?url=1`);
    await assert.rejects(fresh.init({ wasmUrl: `${base}/page.wasm` }),
      (e) => e instanceof fresh.LoadError && /not a WebAssembly module \(the server answered text\/html\)/.test(e.message));
    await assert.rejects(fresh.init({ wasmUrl: `${base}/missing.wasm` }),
      (e) => e instanceof fresh.LoadError && /answered 404/.test(e.message) && /wasmUrl/.test(e.message));
  });
});

describe('golden vectors (tests/golden, NumPy reference)', () => {
  test('MaNo: every case of mano.json within 1e-6 relative', async () => {
    const cases = golden('mano.json');
    assert.ok(cases.length >= 40);
    for (const c of cases) {
      const m = await readTestNpy(c.file);
      const r = mano.score(m.data, m, { ...goldenOptions(c.options), methods: ['mano'] });
      const e = c.expected;
      assert.equal(r.methods.mano.normalization, e.normalization, c.name);
      assert.deepEqual(compareDeep(r.methods.mano.score, e.score, 1e-6, `${c.name} score`), []);
      assert.deepEqual(compareDeep(r.methods.mano.criterion, e.criterion, 1e-6, `${c.name} criterion`), []);
      if (e.batches !== undefined) assert.equal(r.methods.mano.batches, e.batches, c.name);
    }
  });
  test('baselines: every case of baselines.json within 1e-6 relative (1e-9 absolute near 0)', async () => {
    const cases = golden('baselines.json');
    assert.ok(cases.length >= 20);
    for (const c of cases) {
      const m = await readTestNpy(c.file);
      const r = mano.score(m.data, m, { temperature: c.temperature });
      for (const [method, values] of Object.entries(c.expected)) {
        for (const [key, want] of Object.entries(values)) {
          const got = r.methods[method]?.[key];
          assert.ok(Math.abs(got - want) <= 1e-6 * Math.max(Math.abs(want), 1e-3),
            `${c.name} ${method}.${key}: ${got} vs ${want}`);
        }
      }
    }
  });
});

describe('inputs', () => {
  test('float64, float16 and bfloat16 bits give the numbers of their float32 values', () => {
    const rows = 300, cols = 7;
    const f32 = normalLogits(rows, cols, 2, 5);
    // values exactly representable in bfloat16 (8 significant bits) are exact in every type
    const exact = f32.map((x) => Math.round(x * 16) / 16);
    const u32 = new Uint32Array(exact.buffer);
    const bf16 = Uint16Array.from(u32, (x) => x >>> 16);
    const f16 = Uint16Array.from(exact, (x) => {
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, x);
      const b = view.getUint32(0);
      const sign = (b >>> 16) & 0x8000, exp = ((b >>> 23) & 0xff) - 127 + 15, mant = (b >>> 13) & 0x3ff;
      return x === 0 ? sign : sign | (exp << 10) | mant;
    });
    const want = mano.score(exact, { rows, cols });
    for (const [data, dtype] of [[Float64Array.from(exact), undefined], [f16, 'float16'], [bf16, 'bfloat16']]) {
      const got = mano.score(data, { rows, cols, dtype });
      assert.deepEqual(compareDeep(got, want, 1e-12), [], dtype ?? 'float64');
    }
  });
  test('an accumulator fed in pieces equals one score(); state round-trips and merges', () => {
    const rows = 1000, cols = 12;
    const q = normalLogits(rows, cols, 3, 9);
    const options = { methods: ['mano', 'confscore', 'entropy', 'nuclear', 'mde', 'cot'] };
    const whole = mano.score(q, { rows, cols }, options);
    const a = mano.accumulator(cols, options);
    a.push(q.subarray(0, 37 * cols)).push(q.subarray(37 * cols, 400 * cols));
    const b = mano.accumulatorFromJSON(JSON.parse(JSON.stringify(mano.accumulator(cols, options).push(q.subarray(400 * cols)).toJSON())));
    a.merge(b);
    assert.equal(a.rows, rows);
    assert.deepEqual(compareDeep(a.result(), whole, 1e-12), []);
    const c = mano.accumulator(cols, options).push(q.subarray(0, 400 * cols)).merge(b.toJSON());
    assert.deepEqual(compareDeep(c.result(), whole, 1e-12), []);
    a.dispose();
    assert.throws(() => a.result(), (e) => e instanceof mano.InputError && /disposed/.test(e.message));
  });
  test('inputs larger than the scratch buffer go through in chunks (all or nothing)', () => {
    const cols = 10;
    const rows = Math.ceil((3 * mano.CHUNK_BYTES) / (cols * 4)) + 17;
    const q = normalLogits(rows, cols, 2, 11);
    const labels = Int32Array.from({ length: rows }, (_, i) => i % cols);
    const options = { methods: ['mano', 'confscore', 'entropy'] };
    const r = mano.score(q, { rows, cols, labels }, options);
    assert.equal(r.n, rows);
    let correct = 0;
    for (let i = 0; i < rows; i++) {
      let best = 0;
      for (let j = 1; j < cols; j++) if (q[i * cols + j] > q[i * cols + best]) best = j;
      correct += best === labels[i];
    }
    assert.equal(r.accuracy, correct / rows);
    const acc = mano.accumulator(cols, options);
    acc.push(q.subarray(0, 100 * cols));
    const bad = q.slice();
    bad[(rows - 5) * cols + 3] = NaN;
    assert.throws(() => acc.push(bad), (e) => e instanceof mano.InputError && new RegExp(`row ${100 + rows - 5}, column 3`).test(e.message));
    assert.equal(acc.rows, 100, 'a failed push leaves the accumulator as it was');
    const fine = mano.score(q.subarray(0, 100 * cols), { rows: 100, cols }, options);
    assert.deepEqual(compareDeep(acc.result(), fine, 0), []);
  });
  test('source set: ATC, DoC and a fitted temperature match the native CLI', async () => {
    const dir = path.join(root, 'tests/data/example');
    const source = await mano.readNpy(fs.readFileSync(path.join(dir, 'source_logits.npy')));
    const labels = (await mano.readNpy(fs.readFileSync(path.join(dir, 'source_labels.npy')))).data;
    const target = await mano.readNpy(fs.readFileSync(path.join(dir, 'blend_2_logits.npy')));
    const got = mano.score(target.data, target, { source: { logits: source.data, labels }, temperature: 'fit', labelMarginal: 'source' });
    const want = runNative(['score', '--json', '--quiet', path.join(dir, 'blend_2_logits.npy'), '--source-logits',
      path.join(dir, 'source_logits.npy'), '--source-labels', path.join(dir, 'source_labels.npy'), '--temperature', 'fit',
      '--label-marginal', 'source']);
    delete want.file;
    assert.deepEqual(compareDeep(got, want, 1e-6), []);
    assert.throws(() => mano.score(target.data, target, { labelMarginal: 'source' }),
      (e) => e instanceof mano.InputError && /labelMarginal 'source' needs options.source/.test(e.message));
  });
});

describe('evaluate, calibrate, predict (the CLI semantics)', () => {
  const dir = path.join(root, 'tests/data/example');
  const manifestFile = path.join(dir, 'manifest.json');
  let source;
  let matrices;  // name -> { m, labels, group }
  let scans;     // every set scored once with the defaults (per-set softrun: both MaNo branches)
  let tmp;
  // Scores the sets again as `mano eval` / `calibrate` / `predict` do once the family's branch is known.
  const onBranch = (sets, choice) => sets.map((s) => {
    const { m, labels } = matrices.get(s.name);
    const options = { source, normalization: choice.normalization, taylorOrder: choice.taylor_order };
    return { ...s, result: mano.score(m.data, { rows: m.rows, cols: m.cols, labels: s.result.accuracy === undefined ? undefined : labels }, options) };
  });
  // DoC is ConfScore moved by a constant, so their held-out errors tie up to the last bits (the
  // core compares them at 1e-9, then by registry order): compare the ranking by method, and check
  // its order separately.
  const byMethod = (cal) => {
    const ranking = cal.ranking ?? [];
    ranking.forEach((r, i) => assert.ok(i === 0 || ranking[i - 1].logo_mae <= r.logo_mae + 1e-9, `ranking is best first at ${r.method}`));
    return { ...cal, ranking: Object.fromEntries(ranking.map((r) => [r.method, r.logo_mae])) };
  };
  const withoutName = (p) => {
    const out = { ...p };
    delete out.name;
    delete out.group;
    return out;
  };

  before(async () => {
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    const load = async (f) => mano.readNpy(fs.readFileSync(path.join(dir, f)));
    source = { logits: (await load(manifest.source.logits)).data, labels: (await load(manifest.source.labels)).data };
    matrices = new Map();
    scans = [];
    for (const s of manifest.sets) {
      const m = await load(s.logits);
      const labels = (await load(s.labels)).data;
      matrices.set(s.name, { m, labels });
      scans.push({ name: s.name, group: s.group, result: mano.score(m.data, { rows: m.rows, cols: m.cols, labels }, { source }) });
    }
    tmp = tempDir('mano-cal-');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('a calibration file of the CLI scores and predicts new logits as mano predict does', () => {
    const file = path.join(tmp, 'cli_cal.json');
    execFileSync(nativeMano, ['calibrate', manifestFile, '-o', file, '--quiet']);
    const cal = JSON.parse(fs.readFileSync(file, 'utf8'));
    const { m } = matrices.get('contrast_3');
    const result = mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: cal });
    const got = mano.predict(cal, result);
    const want = runNative(['predict', '--calibration', file, '--json', '--quiet', path.join(dir, 'contrast_3_logits.npy')]);
    assert.deepEqual(compareDeep(got.estimate, want.estimate, 1e-6, 'estimate'), []);
    assert.deepEqual(compareDeep(got.methods, want.methods, 1e-6, 'methods'), []);
    assert.throws(() => mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: cal, p: 3 }),
      (e) => e instanceof mano.InputError && /give no other option \(got p\)/.test(e.message));
    assert.throws(() => mano.score(m.data.subarray(0, 20 * 5), { rows: 20, cols: 5 }, { calibration: cal }),
      (e) => e instanceof mano.InputError && e.message === 'the logits have 5 classes but the calibration was fitted on logits with 10');
    assert.throws(() => mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: { format: 'other' } }),
      (e) => e instanceof mano.InputError && /must be a calibration/.test(e.message));
  });

  test('evaluate on the family\'s branch equals mano eval', () => {
    const nativeEval = runNative(['eval', '--json', manifestFile]);
    const choice = mano.calibrate(scans, { source }).normalization;
    const want = { ...nativeEval.normalization };
    delete want.per_set;
    assert.deepEqual(compareDeep(choice, want, 1e-6), [], 'the branch chosen over all 12 sets (2 groups)');
    const evaluation = mano.evaluate(onBranch(scans, choice));
    assert.deepEqual(compareDeep(evaluation.summary, nativeEval.summary, 1e-6), []);
    assert.deepEqual(compareDeep(evaluation.groups, nativeEval.groups, 1e-6), []);
    assert.deepEqual(compareDeep(evaluation.sets.map((s) => s.methods), nativeEval.sets.map((s) => s.methods), 1e-6), []);
  });

  test('calibrate (normalization family) and predict equal mano calibrate / mano predict', () => {
    const calFile = path.join(tmp, 'cal.json');
    execFileSync(nativeMano, ['calibrate', manifestFile, '-o', calFile, '--group', 'contrast', '--quiet']);
    const nativeCal = JSON.parse(fs.readFileSync(calFile, 'utf8'));
    assert.equal(nativeCal.normalization.by, 'leave-one-group-out');
    const contrast = scans.filter((s) => s.group === 'contrast');

    // One pass over sets scored once: the branch, MaNo's line and folds, the recommendation and the
    // class-shift reference are the CLI's. The softrun baselines leave (the sets' own branch was
    // softmax, the family's is not): `mano calibrate` scored them again on the family's branch.
    const once = mano.calibrate(contrast, { source });
    assert.equal(once.version, 2);
    assert.deepEqual(compareDeep(once.normalization, nativeCal.normalization, 1e-6), []);
    assert.deepEqual(compareDeep(once.methods.mano, nativeCal.methods.mano, 1e-6), []);
    assert.deepEqual(compareDeep(once.shift, nativeCal.shift, 1e-6), []);
    assert.deepEqual(compareDeep(once.options, nativeCal.options, 1e-6, '', 0).filter((d) => !d.startsWith('.methods')), []);
    assert.equal(once.recommended, nativeCal.recommended);
    assert.equal(once.fallback, nativeCal.fallback);
    assert.ok(contrast.every((s) => s.result.methods.mano.normalization === 'softmax'), 'the example\'s sets are on softmax one by one');
    assert.notEqual(once.normalization.variant, 'softmax', 'and the family takes the other branch');
    assert.ok(!('nuclear_softrun' in once.methods) && once.notes.some((n) => /nuclear_softrun/.test(n)), once.notes.join('; '));

    // Scored again on the family's branch, as the CLI does: the whole calibration is the CLI's.
    const family = once.normalization;
    const calibration = mano.calibrate(onBranch(contrast, family),
      { source, normalization: family.normalization, taylorOrder: family.taylor_order });
    assert.equal(calibration.normalization, undefined, 'a forced branch records no choice');
    calibration.normalization = family;
    assert.deepEqual(compareDeep(byMethod(JSON.parse(JSON.stringify(calibration))), byMethod(nativeCal), 1e-6), []);
    assert.ok(Array.isArray(calibration.notes));
    assert.ok(calibration.methods.mano.folds.length === 6 && calibration.methods.mano.folds.every((f) => f.residuals.length === 1),
      'one group: every set is its own fold');

    const nativePredict = runNative(['predict', '--calibration', calFile, '--manifest', manifestFile,
      '--group', 'blend', '--json', '--level', '0.8']);
    const blendScans = scans.filter((s) => s.group === 'blend');
    const blend = onBranch(blendScans, family);
    blend.forEach((s, i) => {
      const p = mano.predict(calibration, s.result, { level: 0.8 });
      const want = withoutName(nativePredict.sets[i]);
      assert.deepEqual(compareDeep(p, want, 1e-6), [], s.name);
      assert.ok(p.estimate && p.shift, `${s.name}: estimate and shift`);
      assert.equal(p.estimate.method, calibration.recommended);
      assert.deepEqual(p.estimate.interval, p.methods[p.estimate.method].interval);
    });
    // A set scored once (per-set softrun) is predicted through its MaNo variants: the same
    // estimate, its interval without the score's own noise (so inside the CLI's), the same shift.
    blendScans.forEach((s, i) => {
      const p = mano.predict(calibration, s.result, { level: 0.8 });
      const want = nativePredict.sets[i];
      assert.equal(p.estimate.method, want.estimate.method);
      assert.deepEqual(compareDeep(p.estimate.accuracy, want.estimate.accuracy, 1e-6), [], s.name);
      assert.ok(p.estimate.interval[0] >= want.estimate.interval[0] - 1e-9 && p.estimate.interval[1] <= want.estimate.interval[1] + 1e-9,
        `${s.name}: ${p.estimate.interval} inside ${want.estimate.interval}`);
      assert.deepEqual(compareDeep(p.shift, want.shift, 1e-6), [], s.name);
    });

    // predictScores is predict without the score's own standard error
    const noSe = JSON.parse(JSON.stringify(blend[0].result, (key, value) => (key === 'se' ? undefined : value)));
    const byScore = mano.predictScores(calibration, 'mano', [noSe.methods.mano.score], { level: 0.8 })[0];
    const full = mano.predict(calibration, noSe, { level: 0.8 }).methods.mano;
    assert.deepEqual(compareDeep(byScore, { score: full.score, accuracy: full.accuracy, interval: full.interval, extrapolated: full.extrapolated }, 1e-15), []);
    assert.throws(() => mano.predictScores(calibration, 'frechet', [1]), (e) => e instanceof mano.InputError && /no method 'frechet'/.test(e.message));
    // a line far outside [0, 1] keeps an honest interval and says so (the CLI's rule, from the core)
    const [huge] = mano.predictScores(calibration, 'mano', [1e308]);
    assert.deepEqual([huge.interval, huge.out_of_range], [[0, 1], 'above']);
    const uniform = mano.predict(calibration, mano.score(new Float32Array(2000 * 10), { rows: 2000, cols: 10 }, { calibration }));
    assert.equal(uniform.methods.mano.accuracy, 0);
    assert.equal(uniform.methods.mano.out_of_range, 'below');
    assert.ok(uniform.methods.mano.interval[1] > 0.05, String(uniform.methods.mano.interval));
    // the JS calibration files are ones the CLI reads, the one-pass one included
    for (const [name, cal] of [['js_cal.json', calibration], ['js_once.json', once]]) {
      fs.writeFileSync(path.join(tmp, name), JSON.stringify(cal));
      const again = runNative(['predict', '--calibration', path.join(tmp, name), '--manifest', manifestFile, '--group', 'blend',
        '--json', '--level', '0.8']);
      const js = blend.map((s) => mano.predict(cal, s.result, { level: 0.8 }));
      assert.deepEqual(compareDeep(again.sets.map(withoutName), js, 1e-6), [], name);
    }
  });

  test("normalization 'softrun' keeps each set's own branch, as mano calibrate --normalization softrun", () => {
    const calFile = path.join(tmp, 'per_set.json');
    execFileSync(nativeMano, ['calibrate', manifestFile, '-o', calFile, '--group', 'contrast', '--normalization', 'softrun', '--quiet']);
    const nativeCal = JSON.parse(fs.readFileSync(calFile, 'utf8'));
    const contrast = scans.filter((s) => s.group === 'contrast');
    const calibration = mano.calibrate(contrast, { source, normalization: 'softrun' });
    assert.ok(!('normalization' in calibration), 'no family choice is recorded');
    assert.equal(calibration.options.normalization, 'softrun');
    assert.deepEqual(compareDeep(byMethod(JSON.parse(JSON.stringify(calibration))), byMethod(nativeCal), 1e-6), []);
    // MaNo's line is fitted on each set's own (softmax) score, not the family's
    assert.deepEqual(compareDeep(calibration.methods.mano.score_max, Math.max(...contrast.map((s) => s.result.methods.mano.score)), 1e-15), []);
    const family = mano.calibrate(contrast, { source, normalization: 'family' });
    assert.notEqual(family.methods.mano.slope, calibration.methods.mano.slope);
    const nativePredict = runNative(['predict', '--calibration', calFile, '--manifest', manifestFile, '--group', 'blend', '--json']);
    scans.filter((s) => s.group === 'blend').forEach((s, i) => {
      assert.deepEqual(compareDeep(mano.predict(calibration, s.result), withoutName(nativePredict.sets[i]), 1e-6), [], s.name);
    });
  });
});

describe('bad input: a typed error with a clear message, and the module stays usable', () => {
  const q = new Float32Array([1, 2, 3, 4, 5, 6]);
  const cases = [
    ['wrong length', () => mano.score(q, { rows: 4, cols: 3 }), 'InputError', /6 values but rows x cols = 4 x 3 = 12/],
    ['rows x cols overflow', () => mano.score(q, { rows: 2 ** 40, cols: 2 ** 20 }), 'InputError', /too large/],
    ['negative rows', () => mano.score(q, { rows: -2, cols: 3 }), 'InputError', /rows must be a whole number/],
    ['missing shape', () => mano.score(q), 'InputError', /shape is missing/],
    ['not a typed array', () => mano.score([1, 2, 3, 4], { rows: 2, cols: 2 }), 'InputError', /Float32Array/],
    ['Int32Array logits', () => mano.score(new Int32Array(4), { rows: 2, cols: 2 }), 'InputError', /Float32Array/],
    ['one class', () => mano.score(q, { rows: 6, cols: 1 }), 'InputError', /at least 2 columns/],
    ['NaN', () => mano.score(new Float32Array([1, NaN, 3, 4]), { rows: 2, cols: 2 }), 'InputError', /row 0, column 1: logit is NaN/],
    ['infinity', () => mano.score(new Float64Array([1, 2, Infinity, 4]), { rows: 2, cols: 2 }), 'InputError', /row 1, column 0/],
    ['NaN in the second logits', () => mano.score(new Float32Array([1, 2, 3, 4]), { rows: 2, cols: 2, second: new Float32Array([1, NaN, 3, 4]) }),
      'InputError', /^second: row 0, column 1: logit is NaN/],
    ['unknown option', () => mano.score(q, { rows: 2, cols: 3 }, { pp: 3 }), 'InputError', /unknown option 'pp'/],
    ['p <= 1', () => mano.score(q, { rows: 2, cols: 3 }, { p: 0.5 }), 'InputError', /p/],
    ['unknown method', () => mano.score(q, { rows: 2, cols: 3 }, { methods: ['mano', 'magic'] }), 'InputError', /unknown method 'magic'/],
    ['labels of the wrong length', () => mano.score(q, { rows: 2, cols: 3, labels: [0] }), 'InputError', /1 labels for 2 rows/],
    ['label out of range', () => mano.score(q, { rows: 2, cols: 3, labels: [0, 7] }), 'InputError', /label/],
    ['source of another class count', () => mano.score(q, { rows: 2, cols: 3 }, { source: { logits: new Float32Array(12), labels: [0, 1] } }),
      'InputError', /^options\.source\.labels: 2 labels for 4 rows \(the 12 source logits read as rows of the target's 3 classes; as 2 rows they would have 6 classes: the source must be the same model's logits/],
    ['source labels of the wrong length', () => mano.score(q, { rows: 2, cols: 3 }, { source: { logits: new Float32Array(12), labels: [0, 1, 2, 0, 1] } }),
      'InputError', /^options\.source\.labels: 5 labels for 4 rows$/],
    ['fractional label', () => mano.score(q, { rows: 2, cols: 3, labels: [0, 1.5] }), 'InputError', /label 1 is 1.5/],
    ['temperature fit without source', () => mano.score(q, { rows: 2, cols: 3 }, { temperature: 'fit' }), 'InputError', /needs labeled source/],
    ['dtype mismatch', () => mano.score(q, { rows: 2, cols: 3, dtype: 'float16' }), 'InputError', /does not match/],
    ['bad state', () => mano.accumulatorFromJSON({ format: 'nope' }), 'InputError', /./],
    ['merge of another K', () => mano.accumulator(3).merge(mano.accumulator(4)), 'InputError', /./],
    ['evaluate with 2 sets', () => mano.evaluate([{ name: 'a', result: { n: 1, k: 2, accuracy: 1, methods: {} } }]), 'InputError', /./],
    ['evaluate without accuracy', () => mano.evaluate([1, 2, 3].map((i) => ({ name: `s${i}`, result: mano.score(q, { rows: 2, cols: 3 }) }))),
      'InputError', /accuracy/],
    ['predict with a bad calibration', () => mano.predict({ format: 'x' }, mano.score(q, { rows: 2, cols: 3 })), 'InputError', /calibration/],
    ['predict level', () => mano.predict({}, {}, { level: 2 }), 'InputError', /level must be in \(0, 1\)/],
    ['calibrate normalization', () => mano.calibrate([], { normalization: 'per-set' }), 'InputError',
      /normalization 'per-set' is not one of family, softrun, softmax, taylor/],
    ['calibrate family with a fixed criterion', () => mano.calibrate([], { criterion: 5 }), 'InputError',
      /fixed criterion fixes the softrun branch; pass it with normalization 'softrun'/],
    ['score with normalization family', () => mano.score(q, { rows: 2, cols: 3 }, { normalization: 'family' }), 'InputError',
      /'family' .* is an option of calibrate\(\)/],
  ];
  for (const [name, fn, typeName, pattern] of cases) {
    test(name, () => {
      assert.throws(fn, (e) => {
        assert.ok(e instanceof mano[typeName], `${name}: ${e?.name}: ${e?.message}`);
        assert.ok(e instanceof Error);
        assert.match(e.message, pattern);
        assert.ok(!e.message.includes('\n'), 'one line');
        return true;
      });
      stillWorks();
    });
  }
  test('openMatrix streams .npy, parses CSV whole, and names what it cannot read', async () => {
    const bytes = fs.readFileSync(path.join(root, 'tests/data/example/contrast_0_logits.npy'));
    const source = await mano.openMatrix(new File([bytes], 'x.npy'));
    const whole = await mano.readNpy(bytes);
    assert.equal(typeof source.read, 'function');
    assert.deepEqual(Array.from(await source.read(5, 2)), Array.from(whole.data.subarray(5 * whole.cols, 7 * whole.cols)));
    const csv = await mano.openMatrix(new File(['a,b\n1,2\n3,4\n'], 'x.csv'));
    assert.deepEqual(Array.from(csv.data), [1, 2, 3, 4]);
    await assert.rejects(mano.openMatrix(new File(['hello'], 'notes.txt')),
      (e) => e instanceof mano.FormatError && /notes\.txt: is not a format this package reads/.test(e.message));
  });
  test('corrupt .npy and .safetensors files are FormatErrors', async () => {
    const good = fs.readFileSync(path.join(root, 'tests/data/example/contrast_0_logits.npy'));
    await assert.rejects(mano.readNpy(good.subarray(0, 200), { name: 'cut.npy' }), (e) => e instanceof mano.FormatError && /cut\.npy/.test(e.message));
    const st = Buffer.alloc(16);
    st.writeBigUInt64LE(1000n, 0);
    await assert.rejects(mano.readSafetensors(st, { name: 'bad.safetensors' }),
      (e) => e instanceof mano.FormatError && /bad\.safetensors/.test(e.message));
    stillWorks();
  });
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
    assert.deepEqual(compareDeep(value.result.methods, want.methods, 1e-6), []);
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

  test('scoreSource refuses labels of another length than the rows', async () => {
    const rows = 100, cols = 4;
    const q = normalLogits(rows, cols, 2, 13);
    await assert.rejects(mano.scoreSource({ rows, cols, data: q }, {}, { labels: new Int32Array(150) }),
      (e) => e instanceof mano.InputError && /labels: 150 labels for 100 rows/.test(e.message));
  });

  test('scoreSource on the main thread takes a signal too', async () => {
    const rows = 5000, cols = 10;
    const q = normalLogits(rows, cols, 2, 12);
    const controller = new AbortController();
    await assert.rejects(mano.scoreSource({ rows, cols, data: q }, {}, { chunkRows: 100, signal: controller.signal,
      onProgress: (done) => done >= 1000 && controller.abort() }), (e) => e.name === 'AbortError');
  });
});

test('the native CLI used for references exists', () => {
  assert.ok(fs.existsSync(nativeMano), `${nativeMano}: build the native tree first (npm run build)`);
});
