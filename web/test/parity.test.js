// Native and WebAssembly give the same numbers: random logits over many shapes (K up to 32000),
// dtypes and options, scored by the native `mano score --json` and by the package, every number
// within 1e-6 relative (DEVELOPERS.md). The reference is the native SSE4.2 kernel, the same
// algorithm as the WASM one (they agree to ~1e-13 but for Eigen's nuclear norm, ~1e-9); against
// the best native kernel (AVX2/AVX-512 with FMA) the values agree to 1e-6 too, but a standard
// error over rows whose values barely vary amplifies float-exp rounding (1e-7 per row), so there
// the "se" fields are held to 1e-4 (or 1e-8 absolute: an se of 4e-9 on a score of 0.7, three rows
// that barely differ, is rounding noise).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { compareDeep, PARITY, loadPackage, nativeMano, normalLogits, tempDir, writeNpy } from './support.js';

let mano;
let dir;
before(async () => {
  mano = await loadPackage();
  dir = tempDir('mano-parity-');
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function native(files, flags = [], arch = 'sse4.2') {
  const out = execFileSync(nativeMano, ['score', '--json', '--quiet', ...(arch ? ['--arch', arch] : []), ...flags, ...files], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return out.trim().split('\n').map((line) => {
    const r = JSON.parse(line);
    delete r.file;
    return r;
  });
}

const shapes = [
  [1, 2], [3, 2], [17, 3], [100, 10], [1000, 10], [257, 100], [2000, 100], [64, 1000], [500, 1001],
  [30, 1500], [10, 4097], [300, 8191], [40, 32000], [5, 32000],
];

test('every default method on random float32 logits of many shapes', () => {
  const files = [];
  const inputs = [];
  shapes.forEach(([rows, cols], i) => {
    const scale = [0.3, 2, 8][i % 3];
    const data = normalLogits(rows, cols, scale, 1000 + i);
    const file = path.join(dir, `shape_${rows}x${cols}.npy`);
    writeNpy(file, data, [rows, cols]);
    files.push(file);
    inputs.push({ rows, cols, data });
  });
  const want = native(files);
  const best = native(files, [], null);
  const withoutSe = (r) => JSON.parse(JSON.stringify(r, (key, value) => (key === 'se' ? undefined : value)));
  inputs.forEach(({ rows, cols, data }, i) => {
    const got = mano.score(data, { rows, cols });
    assert.deepEqual(Object.keys(got.methods).sort(), Object.keys(want[i].methods).sort(), `${rows}x${cols}: same methods`);
    assert.deepEqual(compareDeep(got, want[i], PARITY, `${rows}x${cols}`), []);
    assert.deepEqual(compareDeep(withoutSe(got), withoutSe(best[i]), PARITY, `${rows}x${cols} (best native kernel)`), []);
    assert.deepEqual(compareDeep(got, best[i], 1e-4, `${rows}x${cols} (best native kernel)`, 1e-8), []);
  });
});

test('float64 and float16 files', () => {
  const rows = 700, cols = 37;
  const f32 = normalLogits(rows, cols, 3, 77);
  const f64 = Float64Array.from(f32, (x) => x + 1e-3 * Math.sin(x));
  // float16 bits of the float32 values (round to nearest even), as numpy.astype(float16) does
  const toHalf = (x) => {
    const f = new Float32Array([x]);
    const b = new Uint32Array(f.buffer)[0];
    const sign = (b >>> 16) & 0x8000;
    let exp = ((b >>> 23) & 0xff) - 127 + 15;
    let mant = b & 0x7fffff;
    if (exp <= 0) return sign;  // the test values are far from float16's subnormals
    let half = sign | (exp << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;
    return half;
  };
  const f16 = Uint16Array.from(f32, toHalf);
  const files = [path.join(dir, 'f64.npy'), path.join(dir, 'f16.npy')];
  writeNpy(files[0], f64, [rows, cols]);
  writeNpy(files[1], f16, [rows, cols]);
  const [want64, want16] = native(files);
  assert.deepEqual(compareDeep(mano.score(f64, { rows, cols }), want64, PARITY, 'float64'), []);
  assert.deepEqual(compareDeep(mano.score(f16, { rows, cols, dtype: 'float16' }), want16, PARITY, 'float16'), []);
});

test('options: p, eta, Taylor order, normalization, batches, fixed criterion, temperature', () => {
  const rows = 1500, cols = 20;
  const data = normalLogits(rows, cols, 1.5, 4242);
  const file = path.join(dir, 'options.npy');
  writeNpy(file, data, [rows, cols]);
  const variants = [
    [{ p: 2.5 }, ['--p', '2.5']],
    [{ p: 7, normalization: 'softmax' }, ['--p', '7', '--normalization', 'softmax']],
    [{ normalization: 'taylor', taylorOrder: 3 }, ['--normalization', 'taylor', '--taylor-order', '3']],
    [{ eta: 1 }, ['--eta', '1']],
    [{ batchSize: 128 }, ['--batch-size', '128']],
    [{ criterion: 6 }, ['--criterion', '6']],
    [{ temperature: 1.7 }, ['--temperature', '1.7']],
    [{ methods: ['mano', 'nuclear', 'cot'] }, ['--methods', 'mano,nuclear,cot']],
  ];
  for (const [options, flags] of variants) {
    const [want] = native([file], flags);
    assert.deepEqual(compareDeep(mano.score(data, { rows, cols }, options), want, PARITY, JSON.stringify(options)), []);
  }
});
