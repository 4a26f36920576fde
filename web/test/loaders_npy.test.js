// Tests of web/src/loaders.js's .npy reader (readNpy, openNpy) against files NumPy writes
// (make_loader_fixtures.py) and hand-made broken files; what the native reader must read alike
// is the reader spec, tests/readers/spec (reader_spec.test.js).
// Run: node --test web/test/loaders_npy.test.js
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { chunkedBlob } from './support.js';
import {
  openNpy,
  readMatrix,
  readNpy,
  checkData,
  checkMatrix,
  concat,
  expected,
  fixture,
  inputKinds,
  needsNumpy,
  npyBytes,
  rejectsFormat,
  rejectsInput,
  specFile,
} from './loader_support.js';

// .npy

describe('readNpy', needsNumpy, () => {
  // Every other dtype, byte order and layout: tests/readers/spec (reader_spec.test.js).
  const files = ['f32_le.npy', 'f16_be.npy', 'f64_be_fortran.npy', 'i64_fortran.npy', 'f32_big.npy'];
  for (const file of files) {
    test(file, async () => {
      for (const [kind, input, opts, name] of inputKinds(fixture(file), file)) {
        await test(kind, async () => checkMatrix(await readNpy(input, opts), expected[file], name));
      }
      const viaSniffing = await readMatrix(fixture(file));
      checkMatrix(viaSniffing, expected[file], 'input');
    });
  }

  test('the result owns an aligned copy of the data', async () => {
    const bytes = fixture('f32_le.npy');
    const m = await readNpy(bytes);
    assert.notEqual(m.data.buffer, bytes.buffer);
    assert.equal(m.data.byteOffset % 4, 0);
  });
});

describe('openNpy read ranges', needsNumpy, () => {
  const ranges = [[0, 1], [0, 0], [3, 0], [17, 5], [1, 1], [0, 50]];
  const bigRanges = [[0, 1], [0, 0], [500, 37], [999, 1], [1000, 0], [0, 1000], [123, 456]];
  for (const [file, list] of [
    ['f32_big.npy', bigRanges],
    ['f64_be_fortran.npy', ranges.concat([[49, 1], [50, 0]])],
    ['f16_be.npy', [[0, 4], [1, 2], [3, 1], [4, 0]]],
  ]) {
    test(file, async () => {
      const exp = expected[file];
      for (const [kind, input, opts, name] of inputKinds(fixture(file), file)) {
        const source = await openNpy(input, opts);
        assert.equal(source.name, name, kind);
        assert.equal(source.rows, exp.shape[0]);
        assert.equal(source.cols, exp.shape[1]);
        assert.equal(source.dtype, exp.dtype);
        for (const [first, count] of list) {
          if (first + count > exp.shape[0]) continue;
          checkData(await source.read(first, count), exp, first, count);
        }
      }
    });
  }

  test('a Blob source reads only the requested rows', async () => {
    const bytes = fixture('f32_big.npy');
    const blob = chunkedBlob(bytes, 'big.npy');
    const source = await openNpy(blob);
    blob.slices.length = 0;
    checkData(await source.read(500, 37), expected['f32_big.npy'], 500, 37);
    assert.equal(blob.slices.length, 1);
    const [a, b] = blob.slices[0];
    assert.equal(b - a, 37 * 10 * 4);
    assert.equal(a, bytes.length - (1000 - 500) * 40);
  });

  test('read outside [0, rows] is an InputError', async () => {
    const source = await openNpy(fixture('f32_le.npy'), { name: 'x.npy' });
    for (const [first, count] of [[-1, 1], [5, 2], [7, 0], [0, 7], [0.5, 1], [0, -1], [NaN, 1], ['0', 1]]) {
      await rejectsInput(source.read(first, count), 'x.npy');
    }
    assert.equal((await source.read(6, 0)).length, 0);
  });
});

describe('readNpy refuses broken files', needsNumpy, () => {
  const good = () => new Uint8Array(fixture('f32_le.npy'));

  test('bad magic', async () => {
    const bytes = good();
    bytes[0] = 0x92;
    await rejectsFormat(readNpy(bytes, { name: 'logits.npy' }), 'logits.npy', 'is not a .npy file', 'NUMPY');
    await rejectsFormat(readNpy(new Uint8Array(3), { name: 'tiny.npy' }), 'tiny.npy', 'is not a .npy file');
    await rejectsFormat(readNpy(new Uint8Array(0)), 'input', 'is empty');
  });

  test('bad version', async () => {
    for (const [major, minor] of [[4, 0], [0, 0], [1, 1]]) {
      const bytes = good();
      bytes[6] = major;
      bytes[7] = minor;
      await rejectsFormat(readNpy(bytes, { name: 'v.npy' }), 'v.npy', `version ${major}.${minor}`);
    }
  });

  test('truncated header', async () => {
    for (const end of [7, 9, 11, 50, 127]) {
      await rejectsFormat(readNpy(good().slice(0, end), { name: 'cut.npy' }), 'cut.npy', 'is truncated inside its .npy header');
    }
  });

  test('truncated or extra data', async () => {
    const bytes = good();
    await rejectsFormat(
      readNpy(bytes.slice(0, bytes.length - 4), { name: 'logits.npy' }),
      'logits.npy',
      "is truncated: its header promises (6, 4) '<f4' (96 bytes of data) but only 92 bytes follow the header",
    );
    await rejectsFormat(
      readNpy(concat(bytes, new Uint8Array(4)), { name: 'logits.npy' }),
      'logits.npy',
      'has 4 bytes after the array its header describes',
    );
    await rejectsFormat(
      openNpy(new Blob([bytes.slice(0, 130)]), { name: 'b.npy' }),
      'b.npy',
      'but only 2 bytes follow the header',
    );
  });

  test('unsupported dtypes', async () => {
    await rejectsFormat(
      readNpy(specFile('npy/c8.npy'), { name: 'logits.npy' }),
      'logits.npy',
      'has dtype <c8; logits must be float16, float32 or float64 and labels integers',
    );
    await rejectsFormat(readNpy(specFile('npy/bool.npy'), { name: 'b.npy' }), 'b.npy', 'has dtype |b1');
    await rejectsFormat(readNpy(specFile('npy/structured.npy'), { name: 's.npy' }), 's.npy', 'structured');
    for (const descr of ['<f16', '<U3', 'f4', '<f1', '<M8[ns]']) {
      const bytes = npyBytes(`{'descr': '${descr}', 'fortran_order': False, 'shape': (1,), }`, new Uint8Array(4));
      await rejectsFormat(readNpy(bytes, { name: 'd.npy' }), 'd.npy', `has dtype ${descr};`);
    }
  });

  test('shapes that are not a matrix', async () => {
    await rejectsFormat(readNpy(specFile('npy/cube.npy'), { name: 'x.npy' }), 'x.npy', 'has shape (2, 3, 4)');
    await rejectsFormat(readNpy(specFile('npy/scalar.npy'), { name: 'x.npy' }), 'x.npy', 'has shape ()');
    await rejectsFormat(readNpy(specFile('npy/no_columns.npy'), { name: 'x.npy' }), 'x.npy', 'has no columns', '(3, 0)');
  });

  test('huge shapes are errors, not allocations', async () => {
    const cases = [
      ['(99999999999999999999, 2)', 'too large'],
      ['(4294967296, 4294967296)', 'too large'],
      ['(100000000, 10)', '(4000000000 bytes of data) but only 8 bytes follow'],
      ['(2251799813685248,)', '(9007199254740992 bytes of data) but only 8 bytes follow'],
    ];
    for (const [shape, why] of cases) {
      const bytes = npyBytes(`{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`, new Uint8Array(8));
      await rejectsFormat(readNpy(bytes, { name: 'h.npy' }), 'h.npy', shape, why);
    }
  });

  test('headers that are not the dict NumPy writes', async () => {
    const cases = [
      ["['descr', '<f4']", "is not a valid dictionary (expected '{' at character 0)"],
      ["{'descr': '<f4', 'fortran_order': False}", "has no 'shape' entry"],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "has an unexpected entry 'x'"],
      ["{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "has fortran_order '0', not True or False"],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "has a 'shape' that is not a tuple: (2)"],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 'has a negative dimension in its shape (-2,)'],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "has a 'shape' that is not a tuple"],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,),", 'is not a valid dictionary (expected a quoted key)'],
      ["{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "is not a valid dictionary (expected ',' or '}' at character 16)"],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 'has text after its dictionary'],
      ["{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}", "is not a valid dictionary (expected ':' at character 10)"],
      ["{'descr': <f4, 'fortran_order': False, 'shape': (2,)}", "has a 'descr' that is not a dtype string"],
      ['('.repeat(5000) + ')'.repeat(5000), "is not a valid dictionary (expected '{' at character 0)"],
      ['', "is not a valid dictionary (expected '{' at character"],
    ];
    for (const [header, why] of cases) {
      await rejectsFormat(readNpy(npyBytes(header, new Uint8Array(8)), { name: 'h.npy' }), 'h.npy', why);
    }
  });

  test('a hand-made header in NumPy style, version 2, reads', async () => {
    const data = new Float32Array([1, 2, 3, 4, 5, 6]);
    const bytes = npyBytes(`{"descr":"<f4","fortran_order":True,"shape":(2,3,),}`, new Uint8Array(data.buffer), 2);
    const m = await readNpy(bytes);
    assert.deepEqual([m.rows, m.cols], [2, 3]);
    assert.deepEqual(Array.from(m.data), [1, 3, 5, 2, 4, 6]);
  });

  test('integers outside int32 name the row', async () => {
    await rejectsFormat(readNpy(fixture('i64_too_big.npy'), { name: 'l.npy' }), 'l.npy', '1099511627776', 'row 2');
    await rejectsFormat(readNpy(specFile('npy/labels_u4_big.npy'), { name: 'l.npy' }), 'l.npy', '2147483648', 'row 1');
    const source = await openNpy(fixture('i64_too_big.npy'), { name: 'l.npy' });
    checkData(await source.read(0, 2), { shape: [4], dtype: 'int32', values: [0, 1, 2, 3] }, 0, 2);
    await rejectsFormat(source.read(1, 3), 'l.npy', 'row 2');
  });
});
