// The JS API on every kind of bad input: a typed error with a clear message, and the module
// stays usable.
// Run: node --test web/test/api_bad_input.test.js
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadPackage, root } from './support.js';

let mano;
before(async () => {
  mano = await loadPackage();
});

// Asserts the module still works after an error.
function stillWorks() {
  const r = mano.score(new Float32Array([1, 2, 3, 3, 2, 1]), { rows: 2, cols: 3 }, { methods: ['mano'] });
  assert.ok(r.methods.mano.score > 0 && r.methods.mano.score < 1);
}

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
    ['predict level', () => mano.predict({}, {}, { level: 2 }), 'InputError', /level must be in \(0, 0\.999999\], e\.g\. 0\.9 \(got 2\)/],
    // 0.5 + level / 2 rounds to 1 (before: an internal "student_t_quantile: ... (got 1)")
    ['predict level next to 1', () => mano.predict({}, {}, { level: 0.9999999999999999 }), 'InputError', /level must be in \(0, 0\.999999\]/],
    ['calibrate normalization', () => mano.calibrate([], { normalization: 'per-set' }), 'InputError',
      /normalization 'per-set' is not one of family, softrun, softmax, taylor/],
    ['calibrate family with a fixed criterion', () => mano.calibrate([], { criterion: 5 }), 'InputError',
      /^criterion fixes the softrun branch; give it with normalization 'softrun', not 'family'$/],
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
