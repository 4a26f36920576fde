// The estimator table reaches the package unchanged: methods() is `mano methods --json`, the
// TypeScript method names are the table's, and the default method set follows its rules.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';

import { loadPackage, root, runNative } from './support.js';

let mano;
before(async () => { mano = await loadPackage(); });

test('methods() is the native table', () => {
  assert.deepEqual(mano.methods(), runNative(['methods', '--json']).methods);
});

test("the TypeScript MethodName union (dist/methods.d.ts, generated) lists the table's names, in its order", () => {
  const dts = fs.readFileSync(path.join(root, 'dist/methods.d.ts'), 'utf8');
  const union = dts.match(/export type MethodName =([^;]+);/)?.[1];
  assert.ok(union, 'no MethodName type in dist/methods.d.ts');
  assert.deepEqual([...union.matchAll(/'([a-z_0-9]+)'/g)].map((m) => m[1]), mano.methods().map((m) => m.name));
});

test('defaultMethods follows the table: inputs, the K limit, the N·K limit', () => {
  const table = mano.methods();
  const expected = (k, n, inputs) => table.filter((m) => m.default && m.needs.every((x) => inputs.includes(x)) &&
    (m.default_max_k === undefined || k <= m.default_max_k) &&
    (m.default_max_logits === undefined || (n > 0 && n * k <= m.default_max_logits))).map((m) => m.name);
  for (const [k, n, inputs] of [[10, 0, []], [10, 300000, []], [5000, 10, []], [10, 100, ['source']],
    [10, 100, ['features']], [10, 100, ['source', 'second', 'features', 'source_features']]]) {
    assert.deepEqual(mano.defaultMethods(k, n, inputs), expected(k, n, inputs), `K ${k}, N ${n}, ${inputs}`);
  }
  assert.throws(() => mano.defaultMethods(10, 0, ['labels']), (e) => e instanceof mano.InputError && /labels/.test(e.message));
});

test('a default score computes the methods the native CLI computes for the same inputs', () => {
  const k = 5, n = 40;
  const data = new Float32Array(n * k).map((_, i) => Math.sin(i * 0.7) * 3);
  const got = Object.keys(mano.score(data, { rows: n, cols: k }).methods).sort();
  assert.deepEqual(got, mano.defaultMethods(k, n).sort());
});
