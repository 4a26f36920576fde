// The .wasm is the SIMD build it claims to be: the kernel runs on f32x4/f64x2 instructions
// (xsimd's SSE4.1 path mapped onto WASM SIMD), and the module stays small.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';

import { dist, MAX_WASM_GZ } from './support.js';

const wasm = path.join(dist, 'mano.wasm');

test('the kernel uses WebAssembly SIMD (wasm-objdump -d)', (t) => {
  const text = execFileSync('wasm-objdump', ['-d', wasm], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const count = (op) => (text.match(new RegExp(`\\b${op.replace('.', '\\.')}\\b`, 'g')) ?? []).length;
  const ops = ['f32x4.add', 'f32x4.mul', 'f32x4.max', 'f64x2.add', 'f64x2.mul', 'f32x4.convert_i32x4_s'];
  const counts = Object.fromEntries(ops.map((op) => [op, count(op)]));
  t.diagnostic(JSON.stringify(counts));
  for (const op of ['f32x4.add', 'f32x4.mul', 'f64x2.add', 'f64x2.mul']) assert.ok(counts[op] > 0, `${op} is missing`);
});

test(`mano.wasm is at most ${MAX_WASM_GZ / 1024} KiB gzipped (web/test/support.js says why)`, (t) => {
  const raw = fs.readFileSync(wasm);
  const gz = gzipSync(raw, { level: 9 }).length;
  t.diagnostic(`mano.wasm ${raw.length} bytes, ${gz} gzipped`);
  assert.ok(gz <= MAX_WASM_GZ, `${gz} bytes gzipped`);
});
