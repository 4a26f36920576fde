// Tests of web/src/loaders.js's readMatrix (formats by name, inputs that are not bytes, Blobs that
// cannot be read) and of every reader on randomly damaged files. The readers of each format:
// loaders_npy.test.js, loaders_safetensors.test.js, loaders_csv.test.js; what the native readers
// must read alike is the reader spec, tests/readers/spec (reader_spec.test.js).
// Run: node --test web/test/loaders.test.js
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  openNpy,
  openSafetensors,
  readCsv,
  readMatrix,
  readNpy,
  readSafetensors,
  FormatError,
  fixture,
  needsNumpy,
  rejectsFormat,
  rejectsInput,
  text,
} from './loader_support.js';

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
