// Tests of web/src/loaders.js against files NumPy writes (make_loader_fixtures.py, run with
// Debian's /usr/bin/python3 into a temporary directory) and against hand-made broken files.
// What the native readers must read alike (every dtype, byte order, layout and header rule, and
// the files both refuse) is the reader spec, tests/readers/spec, read by reader_spec.test.js;
// this file keeps what only the JS API has (sources read by ranges, input kinds, options, its
// messages), and takes some of its files from the spec.
// Run: node --test web/test/loaders.test.js
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chunkedBlob, loadPackage } from './support.js';

// The package as built (dist/): its readers hand .npy and .safetensors headers to the core.
const { openNpy, openSafetensors, readCsv, readMatrix, readNpy, readSafetensors, FormatError, InputError } =
  await loadPackage();

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mano-loaders-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let expected = null;
let noNumpy = false;
try {
  execFileSync('/usr/bin/python3', [join(here, 'make_loader_fixtures.py'), dir], { stdio: 'pipe' });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));
} catch (e) {
  noNumpy = `the NumPy fixtures could not be made with /usr/bin/python3: ${e.message.split('\n')[0]}`;
}
const needsNumpy = { skip: noNumpy };

const fixture = (file) => readFileSync(join(dir, file));
const specFile = (file) => readFileSync(join(here, '../../tests/readers/spec', file));

// Helpers

// The same bytes as each kind of input: [label, input, opts, display name].
function inputKinds(bytes, name) {
  const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  const padded = new Uint8Array(bytes.length + 8);
  padded.set(bytes, 3);
  return [
    ['ArrayBuffer', arrayBuffer, { name }, name],
    ['Uint8Array subarray at offset 3', padded.subarray(3, 3 + bytes.length), { name }, name],
    ['Blob', new Blob([bytes]), { name }, name],
    ['File', new File([bytes], name), {}, name],
    ['ArrayBuffer without a name', arrayBuffer, {}, 'input'],
  ];
}

const SPECIAL = { nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 };
const expectedValue = (v) => (typeof v === 'string' ? SPECIAL[v] : v);

const ARRAY_TYPES = {
  float16: Uint16Array,
  bfloat16: Uint16Array,
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
};

// Checks a Matrix (or the data read from a MatrixSource) value by value.
function checkData(data, exp, first = 0, count = exp.shape[0]) {
  const cols = exp.shape.length === 2 ? exp.shape[1] : 1;
  assert.ok(data instanceof ARRAY_TYPES[exp.dtype], `data is a ${data.constructor.name}`);
  assert.equal(data.length, count * cols);
  if (exp.bits) {
    assert.deepEqual(Array.from(data), exp.bits.slice(first * cols, (first + count) * cols));
    return;
  }
  for (let i = 0; i < data.length; i++) {
    const want = expectedValue(exp.values[first * cols + i]);
    if (!Object.is(data[i], want)) assert.fail(`element ${first * cols + i}: got ${data[i]}, want ${want}`);
  }
}

function checkMatrix(m, exp, name) {
  assert.equal(m.name, name);
  assert.equal(m.rows, exp.shape[0]);
  assert.equal(m.cols, exp.shape.length === 2 ? exp.shape[1] : 1);
  assert.equal(m.dtype, exp.dtype);
  checkData(m.data, exp);
  if (exp.labels) assert.deepEqual(Array.from(m.labels), exp.labels);
}

// Asserts a FormatError whose message starts with the file's name and mentions every part.
async function rejectsFormat(promise, name, ...parts) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof FormatError, `expected a FormatError, got ${e?.constructor?.name}: ${e?.message}`);
    assert.ok(e instanceof Error);
    assert.ok(e.message.startsWith(`${name}: `), `"${e.message}" should start with "${name}: "`);
    for (const part of parts) assert.ok(e.message.includes(part), `"${e.message}" should mention "${part}"`);
    return true;
  });
}

async function rejectsInput(promise, ...parts) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof InputError, `expected an InputError, got ${e?.constructor?.name}: ${e?.message}`);
    for (const part of parts) assert.ok(e.message.includes(part), `"${e.message}" should mention "${part}"`);
    return true;
  });
}

// A .npy file with the given header text (padded as NumPy pads it) and data.
function npyBytes(header, data = new Uint8Array(0), major = 1) {
  const text = new TextEncoder().encode(header);
  const preamble = major === 1 ? 10 : 12;
  const padding = (64 - ((preamble + text.length + 1) % 64)) % 64;
  const headerLength = text.length + padding + 1;
  const out = new Uint8Array(preamble + headerLength + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  const dv = new DataView(out.buffer);
  if (major === 1) dv.setUint16(8, headerLength, true);
  else dv.setUint32(8, headerLength, true);
  out.set(text, preamble);
  out.fill(0x20, preamble + text.length, preamble + headerLength - 1);
  out[preamble + headerLength - 1] = 0x0a;
  out.set(data, preamble + headerLength);
  return out;
}

// A .safetensors file with the given header text and data; lengthOverride fakes the length field.
function safetensorsBytes(header, data = new Uint8Array(0), lengthOverride) {
  const text = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(lengthOverride ?? text.length), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  return out;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const text = (s) => new TextEncoder().encode(s);

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

// CSV / TSV

describe('readCsv', () => {
  test('NumPy reference CSV with a header and a label column by name', needsNumpy, async () => {
    for (const [kind, input, opts, name] of inputKinds(fixture('ref.csv'), 'ref.csv')) {
      await test(kind, async () => checkMatrix(await readCsv(input, { ...opts, labelColumn: 'label' }), expected['ref.csv'], name));
    }
    checkMatrix(await readMatrix(new File([fixture('ref.csv')], 'ref.csv'), { labelColumn: 'label' }), expected['ref.csv'], 'ref.csv');
  });

  test('TSV chosen by the name', needsNumpy, async () => {
    checkMatrix(await readCsv(new File([fixture('ref.tsv')], 'ref.tsv'), { labelColumn: 4 }), expected['ref.tsv'], 'ref.tsv');
    checkMatrix(await readMatrix(fixture('ref.tsv'), { name: 'REF.TSV', labelColumn: 'label' }), expected['ref.tsv'], 'REF.TSV');
    checkMatrix(await readCsv(fixture('ref.tsv'), { delimiter: '\t', labelColumn: 'label' }), expected['ref.tsv'], 'input');
  });

  test('CRLF, no header, label column by index, tiny stream chunks', needsNumpy, async () => {
    const bytes = fixture('ref_crlf_noheader.csv');
    const exp = expected['ref_crlf_noheader.csv'];
    checkMatrix(await readCsv(bytes, { labelColumn: 0 }), exp, 'input');
    for (const chunk of [1, 2, 3, 7, 64]) {
      checkMatrix(await readCsv(chunkedBlob(bytes, 'n.csv', chunk), { labelColumn: 0 }), exp, 'n.csv');
    }
    const noLabels = await readCsv(bytes, { name: 'n.csv' });
    assert.equal(noLabels.cols, 5);
    assert.equal(noLabels.labels, undefined);
  });

  test('quotes, blank lines, whitespace, no trailing newline', async () => {
    const csv = '\n\n"first ""x""","se,cond",  "label"  \r\n\r\n  "1.5" ,2,"3"\n\n-4,"inf",0\n   \n5e-1,.25,  7';
    for (const chunk of [1, 2, 5, 1000]) {
      const m = await readCsv(chunkedBlob(text(csv), 'q.csv', chunk), { labelColumn: 'label' });
      assert.deepEqual([m.rows, m.cols, m.dtype], [3, 2, 'float64']);
      assert.deepEqual(Array.from(m.data), [1.5, 2, -4, Infinity, 0.5, 0.25]);
      assert.deepEqual(Array.from(m.labels), [3, 0, 7]);
    }
    const names = text('"first ""x""","se,cond",z\n1,2,3\n4,5,6\n');
    const named = await readCsv(names, { labelColumn: 'first "x"' });
    assert.deepEqual([Array.from(named.labels), Array.from(named.data)], [[1, 4], [2, 3, 5, 6]]);
    const comma = await readCsv(names, { labelColumn: 'se,cond' });
    assert.deepEqual([Array.from(comma.labels), Array.from(comma.data)], [[2, 5], [1, 3, 4, 6]]);
  });

  test('a quoted header field spanning lines, a UTF-8 name split across chunks', async () => {
    const csv = '"multi\nline","clé ✓"\r\n1,2\n3,4\n';
    for (const chunk of [1, 2, 3, 4]) {
      const m = await readCsv(chunkedBlob(text(csv), 'u.csv', chunk), { labelColumn: 'clé ✓' });
      assert.deepEqual(Array.from(m.data), [1, 3]);
      assert.deepEqual(Array.from(m.labels), [2, 4]);
    }
    const m = await readCsv(text(csv), { labelColumn: 'multi\nline' });
    assert.deepEqual(Array.from(m.labels), [1, 3]);
  });

  test('header detection and the header option', async () => {
    const numeric = text('1,2\n3,4\n');
    const detected = await readCsv(numeric);
    assert.deepEqual([detected.rows, Array.from(detected.data)], [2, [1, 2, 3, 4]]);
    const forced = await readCsv(numeric, { header: true });
    assert.deepEqual([forced.rows, Array.from(forced.data)], [1, [3, 4]]);
    await rejectsFormat(readCsv(text('a,b\n'), { name: 'h.csv' }), 'h.csv', 'has a header (line 1) but no data rows');
    await rejectsFormat(readCsv(text('a,b\n1,2\n'), { header: false, name: 'h.csv' }), 'h.csv', 'line 1, column 1', "'a' is not a number");
    const nanHeader = await readCsv(text('nan,Infinity,-inf\n1,2,3\n'));
    assert.equal(nanHeader.rows, 2, 'nan/inf spellings are numbers, so that line is data');
    assert.ok(Number.isNaN(nanHeader.data[0]));
  });

  test('text from the file or the name reaches a message escaped, as natively', async () => {
    const hostile = '\x1b]0;pwn\x07\u202e\x9b';
    for (const [csv, opts] of [
      [`a,b\n1,${hostile}\n`, { name: 'h.csv' }],
      [`a${hostile},b\n1,2\n`, { name: 'h.csv', labelColumn: 'zz' }],
      ['a,b\n1,x\n', { name: `h${hostile}.csv` }],
      ['a,b\n1,2\n', { name: `h${hostile}.csv`, header: 'yes' }],
    ]) {
      const error = await readCsv(text(csv), opts).then(() => null, (e) => e);
      assert.ok(error instanceof FormatError || error instanceof InputError, String(error));
      assert.doesNotMatch(error.message, /[\x00-\x1f\x7f-\x9f\u202e]/u, JSON.stringify(error.message));
      assert.match(error.message, /\\x1b/);
    }
  });

  test('a big file streams from a Blob', async () => {
    const rows = 40000;
    const cols = 6;
    const values = new Float64Array(rows * cols);
    const lines = ['c0,c1,c2,c3,c4,c5,y'];
    for (let r = 0; r < rows; r++) {
      const fields = [];
      for (let c = 0; c < cols; c++) {
        values[r * cols + c] = Math.sin(r * 7 + c) * 10 ** ((r + c) % 9 - 4);
        fields.push(String(values[r * cols + c]));
      }
      lines.push(`${fields.join(',')},${r % 10}`);
    }
    const blob = new Blob([lines.join('\n')]);
    assert.ok(blob.size > 3_000_000);
    const m = await readCsv(blob, { labelColumn: 'y', name: 'big.csv' });
    assert.deepEqual([m.rows, m.cols], [rows, cols]);
    assert.deepEqual(m.data, values);
    assert.equal(m.labels[12345], 5);
  });

  test('refuses broken text', async () => {
    const bad = async (csv, opts, ...parts) => rejectsFormat(readCsv(text(csv), { name: 'bad.csv', ...opts }), 'bad.csv', ...parts);
    await bad('a,b,c\n1,2,3\n4,5\n', {}, 'line 3 has 2 fields but line 1 has 3');
    await bad('\n1,2,3\n4,5,6,7\n', {}, 'line 3 has 4 fields but line 2 has 3');
    await bad('a,b,c\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n13,14,15\n16,17,abc\n', {}, 'line 7, column 3', "'abc' is not a number");
    await bad('a,b,c\n1,1.2.3,3\n', {}, 'line 2, column 2', "'1.2.3'");
    await bad('a,b,c\n1,,3\n', {}, 'line 2, column 2', 'empty');
    for (const word of ['0x10', '1_000', '1e', 'e5', '--1', 'infinit', '+-1', '1,5']) {
      await bad(`a\n${word}\n`, { delimiter: ';' }, 'line 2, column 1', `'${word}'`);
    }
    await bad('', {}, 'is empty');
    await bad('\n \r\n\n', {}, 'has no rows (only blank lines)');
    await bad('a,b\n1,2\n', { labelColumn: 'label' }, "no column named 'label'", "'a', 'b'");
    await bad('1,2\n', { labelColumn: 'label' }, 'no header row');
    await bad('1,2\n', { labelColumn: 2 }, 'no column 2');
    await bad('a,b,label\n1,2,0\n1,2,1.5\n', { labelColumn: 2 }, 'line 3, column 3', "'1.5' is not an integer class label");
    await bad('a,b,label\n1,2,2147483648\n', { labelColumn: 2 }, 'line 2, column 3', 'does not fit in int32');
    await bad('a,b,label\n1,2,nan\n', { labelColumn: 2 }, 'line 2, column 3');
    await bad('label\n1\n', { labelColumn: 0 }, 'no columns of logits');
    await bad('a,b\n1,"2\n3,4\n', {}, 'line 2', 'never closed');
    await bad('a,b\n1,"2"x\n', {}, 'line 2, column 2', 'closing quote');
    await rejectsFormat(readCsv(new Uint8Array([0x61, 0xff, 0x0a, 0x31, 0x0a]), { name: 'u.csv' }), 'u.csv', 'UTF-8');
  });

  test('refuses bad options with an InputError', async () => {
    await rejectsInput(readCsv(text('1\n'), { delimiter: ';;' }), 'delimiter');
    await rejectsInput(readCsv(text('1\n'), { delimiter: '"' }), 'delimiter');
    await rejectsInput(readCsv(text('1\n'), { labelColumn: -1 }), 'labelColumn');
    await rejectsInput(readCsv(text('1\n'), { labelColumn: 1.5 }), 'labelColumn');
    await rejectsInput(readCsv(text('1\n'), { header: 'yes' }), 'header');
  });
});

// readMatrix and inputs

describe('readMatrix', () => {
  test('unknown formats name the formats it knows', async () => {
    await rejectsFormat(readMatrix(text('hello'), { name: 'notes.txt' }), 'notes.txt', '.npy', '.safetensors', '.csv', '.tsv');
    await rejectsFormat(readMatrix(new Uint8Array(0)), 'input', '.npy');
    await rejectsFormat(readMatrix(new File([text('1,2')], 'x.npy')), 'x.npy', 'is not a .npy file');
    await rejectsFormat(readMatrix(new File([text('1,2')], 'x.safetensors')), 'x.safetensors', 'not a valid .safetensors');
    const csv = await readMatrix(new File([text('1,2\n')], 'x.CSV'));
    assert.deepEqual(Array.from(csv.data), [1, 2]);
  });

  test('inputs that are not bytes are InputErrors', async () => {
    for (const input of ['x.npy', 42, null, undefined, {}, [1, 2]]) {
      for (const read of [readNpy, readSafetensors, readCsv, readMatrix, openNpy, openSafetensors]) {
        await rejectsInput(read(input), 'expected an ArrayBuffer');
      }
    }
    await rejectsInput(readNpy(new Uint8Array(0), 'name'), 'options');
    await rejectsInput(readNpy(new Uint8Array(0), { name: 5 }), 'name');
  });

  test('a Blob that cannot be read gives a FormatError', async () => {
    const broken = {
      size: 100,
      name: 'gone.npy',
      slice: () => ({ arrayBuffer: () => Promise.reject(new Error('file was removed')) }),
      arrayBuffer: () => Promise.reject(new Error('file was removed')),
      stream: () => new ReadableStream({ pull: (c) => c.error(new Error('file was removed')) }),
    };
    await rejectsFormat(readNpy(broken), 'gone.npy', 'could not be read', 'file was removed');
    await rejectsFormat(readCsv(broken), 'gone.npy', 'could not be read');
  });
});

// Random damage: every damaged file reads as a matrix of the right shape or is a FormatError.

// mulberry32: a small seeded generator, so a failure can be replayed.
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('random damage gives a matrix of the right shape or a FormatError', { ...needsNumpy, timeout: 120_000 }, async () => {
  const rand = random(20240917);
  const originals = [
    ['f32_le.npy', 128, [6, 4]],
    ['i64_fortran.npy', 128, [4, 3]],
    ['st_multi.safetensors', 8 + 260, [6, 3]],
    ['st_f16.safetensors', 80, [3, 4]],
  ];
  const outcomes = { read: 0, refused: 0 };
  for (let attempt = 0; attempt < 200; attempt++) {
    const [file, headerEnd, [rows, cols]] = originals[attempt % originals.length];
    let bytes = new Uint8Array(fixture(file));
    // Aim most damage at the header, where the parsing is.
    const position = () => Math.floor(rand() < 0.7 ? rand() * Math.min(headerEnd, bytes.length) : rand() * bytes.length);
    const flips = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < flips; k++) bytes[position()] ^= 1 + Math.floor(rand() * 255);
    if (rand() < 0.3) bytes = bytes.slice(0, position());
    const label = `attempt ${attempt} on ${file}`;
    const inputs = [bytes, new File([bytes], `damaged-${file}`)];
    for (const input of inputs) {
      try {
        const m = await readMatrix(input, { name: `damaged-${file}` });
        assert.deepEqual([m.rows, m.cols], [rows, cols], label);
        assert.equal(m.data.length, rows * cols, label);
        outcomes.read++;
      } catch (e) {
        if (!(e instanceof FormatError)) {
          assert.fail(`${label}: ${e?.constructor?.name}: ${e?.message}`);
        }
        assert.ok(e.message.startsWith(`damaged-${file}: `), `${label}: ${e.message}`);
        outcomes.refused++;
      }
    }
  }
  assert.ok(outcomes.read > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
});
