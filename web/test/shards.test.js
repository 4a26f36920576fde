// Shard identities in accumulator states, natively and in the package: one state gets one name on
// both, states travel between them unchanged, and merging one shard twice (directly, through a
// merged state that holds it, or as an Accumulator's own rows again) is refused by both with the
// same message.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { compareDeep, loadPackage, nativeMano, normalLogits, tempDir, writeNpy } from './support.js';

let mano;
let dir;
before(async () => {
  mano = await loadPackage();
  dir = tempDir('mano-shards-');
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const cols = 8;
const methods = ['mano', 'confscore', 'entropy', 'nuclear', 'cot'];
const file = (name) => path.join(dir, name);
const readState = (name) => JSON.parse(fs.readFileSync(file(name), 'utf8'));

function native(...args) {
  return execFileSync(nativeMano, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}

// Native states of rows [0, 300) and [300, 700) of one file.
function nativeShards() {
  const q = normalLogits(700, cols, 2, 16);
  writeNpy(file('q.npy'), q, [700, cols]);
  for (const [name, rows] of [['a.json', '0:300'], ['b.json', '300:700']])
    native('score', file('q.npy'), '--rows', rows, '--methods', methods.join(','), '--emit-state', file(name), '--quiet', '--threads', '1');
  return { q, a: readState('a.json'), b: readState('b.json') };
}

const repeated = (id) => (e) => e instanceof mano.InputError &&
  e.message.startsWith(`accumulator state: shard ${id} is already in this accumulator (merging one shard twice`);

test('native states load, merge and serialize in the package exactly as natively', () => {
  const { a, b } = nativeShards();
  assert.equal(a.version, 7);
  assert.match(a.shards[0], /^[0-9a-f]{16}$/);
  assert.deepEqual(mano.accumulatorFromJSON(a).toJSON(), a);
  native('merge', file('a.json'), file('b.json'), '--emit-state', file('ab.json'), '--json');
  const ab = readState('ab.json');
  assert.deepEqual(ab.shards, [a.shards[0], b.shards[0]].sort());
  // the same merge of the same states: the same JSON, shard list included
  assert.deepEqual(mano.accumulatorFromJSON(a).merge(b).toJSON(), ab);
  assert.deepEqual(mano.accumulatorFromJSON(b).merge(mano.accumulatorFromJSON(a)).toJSON().shards, ab.shards);
});

test('the same state gets the same name natively and in WebAssembly', () => {
  // rows of equal logits: every sum is exact, so both builds write one state, byte for byte
  const zeros = new Float32Array(5 * cols);
  writeNpy(file('zeros.npy'), zeros, [5, cols]);
  native('score', file('zeros.npy'), '--methods', 'mano,confscore,nuclear,cot', '--normalization', 'softmax',
    '--emit-state', file('zeros.json'), '--quiet');
  const acc = mano.accumulator(cols, { methods: ['mano', 'confscore', 'nuclear', 'cot'], normalization: 'softmax' });
  assert.deepEqual(acc.push(zeros).toJSON(), readState('zeros.json'));
  assert.equal(acc.toJSON().shards.length, 1);
});

test('merging one shard twice is refused, with the native message', () => {
  const { q, a, b } = nativeShards();
  const id = a.shards[0];
  const proc = spawnSync(nativeMano, ['merge', file('a.json'), file('b.json'), file('a.json')], { encoding: 'utf8' });
  assert.equal(proc.status, 2);
  const prefix = `mano: error: ${file('a.json')}: accumulator state: shard ${id} is already in ${file('a.json')} `;
  assert.ok(proc.stderr.startsWith(prefix), proc.stderr);
  const reason = proc.stderr.slice(prefix.length).trim();
  const same = (e) => e instanceof mano.InputError &&
    e.message === `accumulator state: shard ${id} is already in this accumulator ${reason}`;

  // a state twice, or a merged state holding it
  const total = mano.accumulatorFromJSON(a).merge(b);
  const before = total.toJSON();
  assert.throws(() => total.merge(a), same);
  assert.throws(() => mano.accumulatorFromJSON(a).merge(before), same);
  assert.throws(() => mano.accumulator(cols, { methods }).merge(before).merge(mano.accumulatorFromJSON(a)), same);
  assert.deepEqual(total.toJSON(), before, 'a refused merge changes nothing');
  assert.throws(() => total.merge(total), (e) => e instanceof mano.InputError && /into itself/.test(e.message));

  // an Accumulator's own rows come in as the shard its toJSON() names: twice is refused too
  const part = mano.accumulator(cols, { methods }).push(q.subarray(0, 100 * cols));
  const partId = part.toJSON().shards[0];
  const sum = mano.accumulator(cols, { methods }).merge(part);
  assert.deepEqual(sum.toJSON().shards.includes(partId), true);
  assert.throws(() => sum.merge(part), repeated(partId));
  assert.throws(() => sum.merge(part.toJSON()), repeated(partId));
  const again = mano.accumulator(cols, { methods }).push(q.subarray(0, 100 * cols));
  assert.throws(() => sum.merge(again), repeated(partId), 'the same rows pushed the same way are the same state');

  // a state written by the package is refused natively the same way
  fs.writeFileSync(file('part.json'), JSON.stringify(part.toJSON()));
  fs.writeFileSync(file('sum.json'), JSON.stringify(sum.toJSON()));
  const twice = spawnSync(nativeMano, ['merge', file('sum.json'), file('part.json')], { encoding: 'utf8' });
  assert.equal(twice.status, 2);
  assert.ok(twice.stderr.startsWith(`mano: error: ${file('part.json')}: accumulator state: shard ${partId} is already in ${file('sum.json')} `),
    twice.stderr);
});

test('own rows keep their name once shards come in: neither a merge back nor a saved state counts them twice', () => {
  const q = normalLogits(600, cols, 2, 18);
  const a = mano.accumulator(cols, { methods }).push(q.subarray(0, 300 * cols));
  const b = mano.accumulator(cols, { methods }).push(q.subarray(300 * cols));
  a.merge(b);
  assert.throws(() => b.merge(a), (e) => e instanceof mano.InputError && /already in this accumulator/.test(e.message));
  assert.equal(b.rows, 300, 'b counts its rows once');
  const c = mano.accumulator(cols, { methods }).push(q.subarray(0, 300 * cols));
  const saved = c.toJSON();
  c.merge(mano.accumulator(cols, { methods }).push(q.subarray(300 * cols)));
  assert.throws(() => c.merge(saved), (e) => e instanceof mano.InputError && /already in this accumulator/.test(e.message));
  assert.equal(c.rows, 600);
});

test('an empty state names no shard and merges any number of times; scoreStream still merges its chunks', async () => {
  const empty = mano.accumulator(cols, { methods }).toJSON();
  assert.deepEqual(empty.shards, []);
  const total = mano.accumulator(cols, { methods }).merge(empty).merge(empty);
  assert.equal(total.rows, 0);
  const q = normalLogits(1000, cols, 2, 17);
  const whole = mano.score(q, { rows: 1000, cols }, { methods });
  const chunked = await mano.scoreStream({ rows: 1000, cols, data: q }, { methods }, { chunkResults: 10 });
  assert.equal(chunked.chunks.length, 100);
  assert.deepEqual(compareDeep({ ...chunked, chunks: undefined }, { ...whole, chunks: undefined }, 1e-12), []);
});
