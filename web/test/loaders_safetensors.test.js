// Tests of web/src/loaders.js's .safetensors reader (readSafetensors, openSafetensors) against
// files NumPy writes (make_loader_fixtures.py) and hand-made broken files; what the native
// reader must read alike is the reader spec, tests/readers/spec (reader_spec.test.js).
// Run: node --test web/test/loaders_safetensors.test.js
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  openSafetensors,
  readMatrix,
  readSafetensors,
  checkData,
  checkMatrix,
  concat,
  expected,
  fixture,
  inputKinds,
  needsNumpy,
  rejectsFormat,
  rejectsInput,
  safetensorsBytes,
  specFile,
} from './loader_support.js';

// .safetensors

describe('readSafetensors', needsNumpy, () => {
  const cases = [
    // F32, BF16, F64 and the integer dtypes: tests/readers/spec (reader_spec.test.js).
    ['st_f16.safetensors', {}],
    ['st_multi.safetensors', {}],
    ['st_multi.safetensors', { key: 'logits' }],
    ['st_multi.safetensors', { key: 'labels' }],
    ['st_multi.safetensors', { key: 'pad' }],
  ];
  for (const [file, keyOpts] of cases) {
    const id = keyOpts.key ? `${file}#${keyOpts.key}` : file;
    test(id, async () => {
      for (const [kind, input, opts, name] of inputKinds(fixture(file), file)) {
        await test(kind, async () => checkMatrix(await readSafetensors(input, { ...opts, ...keyOpts }), expected[id], name));
      }
      checkMatrix(await readMatrix(fixture(file), keyOpts), expected[id], 'input');
    });
  }

  test('openSafetensors read ranges', async () => {
    const exp = expected['st_multi.safetensors#logits'];
    for (const [kind, input, opts, name] of inputKinds(fixture('st_multi.safetensors'), 'm.safetensors')) {
      const source = await openSafetensors(input, opts);
      assert.deepEqual([source.rows, source.cols, source.dtype], [6, 3, 'float32'], kind);
      for (const [first, count] of [[0, 1], [0, 0], [2, 3], [5, 1], [6, 0], [0, 6]]) {
        checkData(await source.read(first, count), exp, first, count);
      }
      await rejectsInput(source.read(5, 2), `${name}: read(5, 2)`);
    }
  });
});

describe('readSafetensors refuses broken files', needsNumpy, () => {
  const f32 = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
  const one = (entry) => ({ logits: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16], ...entry } });

  test('header length larger than the file', async () => {
    const bytes = safetensorsBytes(one(), f32, 10000);
    await rejectsFormat(readSafetensors(bytes, { name: 'm.safetensors' }), 'm.safetensors', 'its header length 10000 is larger than the rest of the file (78 bytes)');
    const huge = safetensorsBytes(one(), f32, 2n ** 64n - 1n);
    await rejectsFormat(readSafetensors(huge, { name: 'm.safetensors' }), 'm.safetensors', '18446744073709551615');
    await rejectsFormat(readSafetensors(new Uint8Array(5), { name: 'm.safetensors' }), 'm.safetensors', 'shorter than');
  });

  // The native reader's rules (native/io/safetensors_header.cpp, run by the core); JSON.parse alone would keep
  // the second "logits" and read any depth. __metadata__ is not read: only its depth counts.
  test('a header over 100000000 bytes, a key twice in one object, nesting deeper than 64', async () => {
    const read = (header, length) => readSafetensors(safetensorsBytes(header, f32, length), { name: 'j.safetensors' });
    await rejectsFormat(read(one(), 200_000_000), 'j.safetensors',
      "is not a valid .safetensors file: its header length 200000000 is over the format's limit of 100000000 bytes");
    const entry = '{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}';
    await rejectsFormat(read(`{"logits":${entry},"logits":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}}`), 'j.safetensors',
      'is not a valid .safetensors file: its header has the key "logits" twice in one object; keep one');
    // a value inside 65 arrays and objects (the header's included) is too deep; inside 64 it reads
    const metadata = (levels) => `{"__metadata__":${'['.repeat(levels - 1)}"x"${']'.repeat(levels - 1)},"logits":${entry}}`;
    await rejectsFormat(read(metadata(65)), 'j.safetensors',
      "is not a valid .safetensors file: its header nests deeper than 64 levels, the limit of mano's JSON readers");
    const m = await read(metadata(64));
    assert.deepEqual(Array.from(m.data), [1, 2, 3, 4]);
  });

  test('invalid JSON', async () => {
    for (const header of ['{not json', '', '{"logits": {"dtype": "F32",}}']) {
      await rejectsFormat(
        readSafetensors(safetensorsBytes(header, f32), { name: 'm.safetensors' }),
        'm.safetensors',
        'is not a valid .safetensors file: its header is not valid JSON (',
      );
    }
    const latin = concat(new Uint8Array([4, 0, 0, 0, 0, 0, 0, 0]), new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    await rejectsFormat(readSafetensors(latin, { name: 'm.safetensors' }), 'm.safetensors', 'not valid JSON');
    await rejectsFormat(readSafetensors(safetensorsBytes('[1, 2]'), { name: 'm.safetensors' }), 'm.safetensors', 'not a JSON object');
  });

  test('offsets out of range or not matching the shape', async () => {
    await rejectsFormat(
      readSafetensors(safetensorsBytes(one({ data_offsets: [0, 32], shape: [4, 2] }), f32), { name: 'o.safetensors' }),
      'o.safetensors', "tensor 'logits': its data_offsets [0, 32] lie outside the data section (16 bytes",
    );
    await rejectsFormat(
      readSafetensors(safetensorsBytes(one({ data_offsets: [4, 16] }), f32), { name: 'o.safetensors' }),
      'o.safetensors', "tensor 'logits': has shape (2, 2) of F32 (16 bytes) but its data_offsets span 12 bytes",
    );
    for (const offsets of [[16, 0], [0], [-4, 16], [0, 1e300], 'x', [0, 16.5]]) {
      await rejectsFormat(
        readSafetensors(safetensorsBytes(one({ data_offsets: offsets }), f32), { name: 'o.safetensors' }),
        'o.safetensors', 'data_offsets',
      );
    }
    for (const shape of [[2, -2], 'x', [2.5], null]) {
      await rejectsFormat(
        readSafetensors(safetensorsBytes(one({ shape }), f32), { name: 'o.safetensors' }),
        'o.safetensors', 'shape',
      );
    }
    await rejectsFormat(
      readSafetensors(safetensorsBytes({ logits: [1] }, f32), { name: 'o.safetensors' }),
      'o.safetensors', 'its header entry needs "dtype", "shape" and "data_offsets"',
    );
  });

  test('unsupported dtypes and shapes', async () => {
    await rejectsFormat(readSafetensors(specFile('safetensors/bool.safetensors'), { name: 'b.safetensors' }), 'b.safetensors', 'has dtype BOOL');
    // shapes of 16 bytes, the data's size, where the dtype's size is known
    for (const [dtype, shape] of [['F8_E4M3', [4, 4]], ['C64', [2, 1]], ['toString', [2, 2]], ['__proto__', [2, 2]]]) {
      await rejectsFormat(readSafetensors(safetensorsBytes(one({ dtype, shape }), f32), { name: 'd.safetensors' }), 'd.safetensors', `has dtype ${dtype}`);
    }
    await rejectsFormat(readSafetensors(specFile('safetensors/cube.safetensors'), { name: 's.safetensors' }), 's.safetensors', 'has shape (2, 3, 1)');
    await rejectsFormat(readSafetensors(safetensorsBytes(one({ shape: [], data_offsets: [0, 4] }), f32.subarray(0, 4)), { name: 's.safetensors' }), 's.safetensors', 'has shape ()');
    await rejectsFormat(readSafetensors(safetensorsBytes(one({ shape: [4, 0], data_offsets: [0, 0] }), new Uint8Array(0)), { name: 's.safetensors' }), 's.safetensors', 'has no columns');
    await rejectsFormat(readSafetensors(specFile('safetensors/labels_i64_big.safetensors'), { name: 'i.safetensors' }), 'i.safetensors', '-34359738368', 'row 1');
  });

  test('choosing the tensor', async () => {
    await rejectsFormat(
      readSafetensors(fixture('st_multi.safetensors'), { name: 'm.safetensors', key: 'nope' }),
      'm.safetensors', "has no array 'nope'; it holds", "'labels'", "'pad'", "'logits'",
    );
    await rejectsFormat(
      readSafetensors(fixture('st_multi.safetensors'), { name: 'm.safetensors', key: '__metadata__' }),
      'm.safetensors', "has no array '__metadata__'",
    );
    await rejectsFormat(
      readSafetensors(fixture('st_no_choice.safetensors'), { name: 'n.safetensors' }),
      'n.safetensors', "'a', 'b'", 'pass { key }',
    );
    await rejectsFormat(
      readSafetensors(safetensorsBytes({ __metadata__: { a: 'b' } }), { name: 'e.safetensors' }),
      'e.safetensors', 'is a .safetensors file that holds no arrays',
    );
    const b = await readSafetensors(fixture('st_no_choice.safetensors'), { key: 'b' });
    assert.deepEqual(Array.from(b.data), [1, 1, 1, 1]);
    await rejectsInput(readSafetensors(fixture('st_no_choice.safetensors'), { key: 3 }), 'key');
  });
});
