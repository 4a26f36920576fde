// Tampered calibrations and states (tests/data/tampered/cases.json): the package accepts or
// refuses each exactly as the native CLI does, with the same message. tests/python/test_tampered.py
// holds the Python package to the same cases, so the three front ends agree.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadPackage, nativeMano, root, runNative, tempDir } from './support.js';

const example = path.join(root, 'tests/data/example');
const { cases } = JSON.parse(fs.readFileSync(path.join(root, 'tests/data/tampered/cases.json'), 'utf8'));

// The parents and keys a JSON pointer names ('*' stands for every element of an array).
function resolve(doc, pointer) {
  let targets = [[null, null, doc]];
  for (const part of pointer.replace(/^\//, '').split('/')) {
    targets = targets.flatMap(([, , node]) => (part === '*' ? [...node.keys()] : [Array.isArray(node) ? Number(part) : part])
      .map((key) => [node, key, node[key]]));
  }
  return targets.map(([parent, key]) => [parent, key]);
}

function tampered(base, c) {
  const doc = structuredClone(base);
  for (const [pointer, value] of c.set ?? []) for (const [parent, key] of resolve(doc, pointer)) parent[key] = value;
  if (c.truncate) {
    const [pointer, keep] = c.truncate;
    for (const [parent, key] of resolve(doc, pointer)) parent[key] = parent[key].slice(0, keep);
  }
  if (c.transpose) {
    for (const [parent, key] of resolve(doc, c.transpose)) {
      const m = parent[key];
      const k = Math.round(Math.sqrt(m.length));
      parent[key] = Array.from({ length: k * k }, (_, i) => m[(i % k) * k + Math.floor(i / k)]);
    }
  }
  return doc;
}

let mano;
let dir;
const bases = {};
let result;
before(async () => {
  mano = await loadPackage();
  dir = tempDir('mano-tampered-');
  spawnSync(nativeMano, ['calibrate', path.join(example, 'manifest.json'), '-o', path.join(dir, 'cal.json'), '--quiet']);
  spawnSync(nativeMano, ['score', path.join(example, 'blend_0_logits.npy'), '--methods', 'mano,confscore,nuclear,mde,cot',
    '--emit-state', path.join(dir, 'state.json'), '--quiet']);
  bases.calibration = JSON.parse(fs.readFileSync(path.join(dir, 'cal.json'), 'utf8'));
  bases.state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
  result = runNative(['score', path.join(example, 'blend_0_logits.npy'), '--json', '--quiet']);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

// null when the CLI accepts the file, else its message without 'mano: error: <path>: '
function nativeVerdict(file, kind) {
  const args = kind === 'calibration'
    ? ['predict', '--calibration', file, path.join(example, 'blend_0_logits.npy'), '--json', '--quiet']
    : ['merge', file, '--json'];
  const proc = spawnSync(nativeMano, args, { encoding: 'utf8' });
  if (proc.status === 0) return null;
  assert.equal(proc.status, 2, proc.stderr);
  const prefix = `mano: error: ${file}: `;
  assert.ok(proc.stderr.startsWith(prefix), proc.stderr);
  return proc.stderr.slice(prefix.length).trim();
}

function packageVerdict(doc, kind) {
  try {
    if (kind === 'calibration') mano.predict(doc, result);
    else mano.accumulatorFromJSON(doc).dispose();
  } catch (e) {
    assert.ok(e instanceof mano.InputError, `${e.name}: ${e.message}`);
    return e.message;
  }
  return null;
}

describe('tampered calibrations and states: the package and the CLI agree', () => {
  for (const c of cases) {
    test(c.name, () => {
      const doc = tampered(bases[c.of], c);
      const file = path.join(dir, `${c.name.replace(/\W+/g, '_')}.json`);
      fs.writeFileSync(file, JSON.stringify(doc));
      const native = nativeVerdict(file, c.of);
      const pkg = packageVerdict(doc, c.of);
      if (c.expect === 'accepted') {
        assert.equal(native, null);
        assert.equal(pkg, null);
      } else {
        assert.ok(native?.includes(c.expect), native);
        assert.equal(pkg, native);
      }
    });
  }
});
