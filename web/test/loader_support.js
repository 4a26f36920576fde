// What the loader suites (loaders*.test.js) share: the npm package's readers as built (dist/), the
// files NumPy writes for them (make_loader_fixtures.py, run with Debian's /usr/bin/python3 into a
// temporary directory), files of the reader spec (tests/readers/spec), the same bytes as every
// kind of input, checks of values and of errors, and writers of hand-made .npy and .safetensors.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadPackage } from './support.js';

// The package as built (dist/): its readers hand .npy and .safetensors headers to the core.
export const { openNpy, openSafetensors, readCsv, readMatrix, readNpy, readSafetensors, FormatError, InputError } =
  await loadPackage();

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mano-loaders-'));
after(() => rmSync(dir, { recursive: true, force: true }));

export let expected = null;
let noNumpy = false;
try {
  execFileSync('/usr/bin/python3', [join(here, 'make_loader_fixtures.py'), dir], { stdio: 'pipe' });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));
} catch (e) {
  noNumpy = `the NumPy fixtures could not be made with /usr/bin/python3: ${e.message.split('\n')[0]}`;
}
export const needsNumpy = { skip: noNumpy };

export const fixture = (file) => readFileSync(join(dir, file));
export const specFile = (file) => readFileSync(join(here, '../../tests/readers/spec', file));

// Helpers

// The same bytes as each kind of input: [label, input, opts, display name].
export function inputKinds(bytes, name) {
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
export const expectedValue = (v) => (typeof v === 'string' ? SPECIAL[v] : v);

const ARRAY_TYPES = {
  float16: Uint16Array,
  bfloat16: Uint16Array,
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
};

// Checks a Matrix (or the data read from a MatrixSource) value by value.
export function checkData(data, exp, first = 0, count = exp.shape[0]) {
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

export function checkMatrix(m, exp, name) {
  assert.equal(m.name, name);
  assert.equal(m.rows, exp.shape[0]);
  assert.equal(m.cols, exp.shape.length === 2 ? exp.shape[1] : 1);
  assert.equal(m.dtype, exp.dtype);
  checkData(m.data, exp);
  if (exp.labels) assert.deepEqual(Array.from(m.labels), exp.labels);
}

// Asserts a FormatError whose message starts with the file's name and mentions every part.
export async function rejectsFormat(promise, name, ...parts) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof FormatError, `expected a FormatError, got ${e?.constructor?.name}: ${e?.message}`);
    assert.ok(e instanceof Error);
    assert.ok(e.message.startsWith(`${name}: `), `"${e.message}" should start with "${name}: "`);
    for (const part of parts) assert.ok(e.message.includes(part), `"${e.message}" should mention "${part}"`);
    return true;
  });
}

export async function rejectsInput(promise, ...parts) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof InputError, `expected an InputError, got ${e?.constructor?.name}: ${e?.message}`);
    for (const part of parts) assert.ok(e.message.includes(part), `"${e.message}" should mention "${part}"`);
    return true;
  });
}

// A .npy file with the given header text (padded as NumPy pads it) and data.
export function npyBytes(header, data = new Uint8Array(0), major = 1) {
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
export function safetensorsBytes(header, data = new Uint8Array(0), lengthOverride) {
  const text = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(lengthOverride ?? text.length), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  return out;
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const text = (s) => new TextEncoder().encode(s);
