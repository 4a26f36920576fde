// The JS API against the golden vectors the native tests use (tests/golden, from the NumPy/POT
// reference) and against the native CLI on its inputs (within 1e-6 relative: the WASM kernel's
// float exp rounds differently from the native AVX kernels'); init and its LoadErrors. The
// workflow: api_workflow.test.js; bad input: api_bad_input.test.js; the Worker: api_worker.test.js.
// Run: node --test web/test/api.test.js
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';

import { compareDeep, loadPackage, nativeMano, normalLogits, PARITY, root, runNative, tempDir } from './support.js';

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
    assert.deepEqual(compareDeep(got, want, PARITY), []);
    assert.throws(() => mano.score(target.data, target, { labelMarginal: 'source' }),
      (e) => e instanceof mano.InputError && /labelMarginal 'source' needs options.source/.test(e.message));
  });
});

test('the native CLI used for references exists', () => {
  assert.ok(fs.existsSync(nativeMano), `${nativeMano}: build the native tree first (npm run build)`);
});
