// The reader spec (tests/readers/spec/expected.json) against the npm package's readers
// (web/src/loaders.js, which the build copies into dist/): each case's file read as logits
// (readMatrix) or labels must give exactly the values and shape the spec says, or a FormatError
// whose message starts with the file's name and holds the spec's phrase. tests/readers/test_spec.py
// holds the native readers to the same cases.
// The package has no labels reader of its own: labels are a CSV's label column, or what
// readMatrix reads from a labels file, which the worker (web/src/worker.js) takes only as int32;
// labels() below does the same and asks for one column (one label per row).
// Run: node --test web/test/reader_spec.test.js
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chunkedBlob, loadPackage } from './support.js';

// The package as built (dist/): its readers hand .npy and .safetensors headers to the core.
const { readMatrix, FormatError } = await loadPackage();

const spec = join(dirname(fileURLToPath(import.meta.url)), '../../tests/readers/spec');
const { cases } = JSON.parse(readFileSync(join(spec, 'expected.json'), 'utf8'));

const SPECIAL = { nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 };

// float16 / bfloat16 bit patterns as the numbers they hold.
const scratch = new DataView(new ArrayBuffer(4));
function half(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}
function bfloat(bits) {
  scratch.setUint32(0, bits << 16);
  return scratch.getFloat32(0);
}
const widen = { float16: half, bfloat16: bfloat };

function options(opts = {}) {
  const out = {};
  if (opts.key !== undefined) out.key = opts.key;
  if (opts.label_column !== undefined) out.labelColumn = opts.label_column;
  if (opts.header !== undefined) out.header = opts.header;
  return out;
}

async function labels(input, opts) {
  const m = await readMatrix(input, opts);
  if (m.labels !== undefined) return Array.from(m.labels); // a CSV's label column, given or named as labels
  if (m.dtype !== 'int32') throw new Error(`labels must be integers (got ${m.dtype})`);
  if (m.cols !== 1) throw new Error(`labels must be one column (got ${m.cols})`);
  return Array.from(m.data);
}

// Every kind of input the readers take: whole bytes (an ArrayBuffer, a typed array at an odd
// offset), a Blob/File read in slices, and for text a stream of 1-byte chunks.
function inputs(bytes, name) {
  const padded = new Uint8Array(bytes.length + 8);
  padded.set(bytes, 3);
  const list = [
    ['ArrayBuffer', bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), { name }],
    ['Uint8Array at offset 3', padded.subarray(3, 3 + bytes.length), { name }],
    ['Blob', new Blob([bytes]), { name }],
    ['File', new File([bytes], name), {}],
  ];
  if (/\.(csv|tsv)$/i.test(name)) list.push(['1-byte stream', chunkedBlob(bytes, name, 1), {}]);
  return list;
}

function checkMatrix(m, want, name) {
  assert.equal(m.name, name);
  assert.deepEqual([m.rows, m.cols, m.dtype], [want.rows, want.cols, want.dtype]);
  assert.equal(m.data.length, want.values.length);
  const value = widen[m.dtype] ?? ((x) => x);
  for (let i = 0; i < want.values.length; i++) {
    const w = SPECIAL[want.values[i]] ?? want.values[i];
    const g = value(m.data[i]);
    if (!Object.is(g, w)) assert.fail(`element ${i}: got ${g}, want ${w}`);
  }
}

describe('reader spec', () => {
  const run = cases.filter((c) => (c.targets ?? ['native', 'js']).includes('js'));
  test('the spec has its cases', () => assert.ok(run.length > 100, `${run.length} cases`));
  for (const c of run) {
    const outcome = c.js ?? c.expect;
    test(c.id + (c.js ? ' (JS outcome)' : ''), async () => {
      const bytes = new Uint8Array(readFileSync(join(spec, c.file)));
      const name = basename(c.file);
      for (const [kind, input, base] of inputs(bytes, name)) {
        const opts = { ...base, ...options(c.options) };
        const read = c.kind === 'labels' ? labels(input, opts) : readMatrix(input, opts);
        if (outcome.error !== undefined) {
          const phrase = typeof outcome.error === 'string' ? outcome.error : outcome.error.js;
          await assert.rejects(read, (e) => {
            const own = e instanceof FormatError && e.message.startsWith(`${name}: `);
            const harness = c.kind === 'labels' && !(e instanceof FormatError) && /^labels must be/.test(e.message);
            assert.ok(own || harness, `${kind}: ${e?.constructor?.name}: ${e?.message}`);
            assert.ok(phrase === '*' || e.message.includes(phrase), `${kind}: "${e.message}" should hold "${phrase}"`);
            return true;
          }, kind);
        } else if (c.kind === 'labels') {
          assert.deepEqual(await read, outcome.values, kind);
        } else {
          const m = await read;
          checkMatrix(m, outcome, name);
          const notes = m.notes ?? [];
          const want = c.notes ?? [];
          assert.equal(notes.length, want.length, `${kind}: notes ${JSON.stringify(notes)}, want ${JSON.stringify(want)}`);
          want.forEach((phrase, i) => assert.ok(notes[i].includes(phrase), `${kind}: note "${notes[i]}" should hold "${phrase}"`));
        }
      }
    });
  }
});
