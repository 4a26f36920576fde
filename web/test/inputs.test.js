// What the npm package reads as logits (issue 43, items 11 and 12): a CSV's columns that are not
// classes (pandas' index, ids, labels) are left out and said in the Matrix's notes, and { input }
// reads probabilities and a binary classifier's one column as logits in every call that scores,
// with the calibration's kind enforced. Every number against NumPy (tests/reference/inputs_reference.py,
// run with Debian's /usr/bin/python3; pandas writes the CSVs), within 1e-6 as the native build.
// Run: node --test web/test/inputs.test.js
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadPackage, relClose, root, tempDir } from './support.js';

let mano, dir, want;
before(async () => {
  mano = await loadPackage();
  dir = tempDir('mano-inputs-');
  execFileSync('/usr/bin/python3', [path.join(root, 'tests/reference/inputs_reference.py'), dir], { stdio: 'pipe' });
  want = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const file = (name) => new File([fs.readFileSync(path.join(dir, name))], name);
const npy = async (name) => mano.readNpy(fs.readFileSync(path.join(dir, name)), { name });
const methods = ['mano', 'confscore'];

function same(got, expected, what) {
  assert.ok(relClose(got.methods.mano.score, expected.mano, 1e-6), `${what}: MaNo ${got.methods.mano.score} vs NumPy ${expected.mano}`);
  assert.equal(got.methods.mano.normalization, expected.normalization, what);
  assert.ok(relClose(got.methods.confscore.score, expected.confscore, 1e-6),
    `${what}: ConfScore ${got.methods.confscore.score} vs NumPy ${expected.confscore}`);
}

describe('a CSV\'s columns that are not classes', () => {
  test('pandas\' index is left out, and said', async () => {
    const m = await mano.readMatrix(file('pandas.csv'));
    assert.equal(m.cols, want.k);
    assert.deepEqual(m.notes, ["pandas.csv: column 1 ('') is pandas' index column, not a class: left out of the logits"]);
    same(mano.score(m.data, m, { methods }), want.csv, 'pandas.csv');
  });

  test('the one label column gives the labels; an id column is left out', async () => {
    const m = await mano.readMatrix(file('pandas_labeled.csv'));
    assert.equal(m.cols, want.k);
    assert.equal(m.labelColumn, 'label');
    assert.equal(m.notes.length, 2);
    assert.match(m.notes[1], /column 12 \('label'\) holds labels, not a class: it is the label column/);
    const y = await npy('csv_labels.npy');
    assert.deepEqual(Array.from(m.labels), Array.from(y.data, Number));
    const result = await mano.scoreStream(m, { methods });
    same(result, want.csv, 'pandas_labeled.csv');
    assert.equal(result.accuracy, want.csv.accuracy);
    const ids = await mano.readMatrix(file('ids.csv'));
    same(mano.score(ids.data, ids, { methods }), want.csv, 'ids.csv');
    await assert.rejects(mano.readMatrix(file('two_labels.csv')), (e) => e instanceof mano.FormatError &&
      e.message === "two_labels.csv: has 2 columns named as labels ('label', 'y'): say which one holds the labels with labelColumn (a name or 0-based index)");
  });

  test('the Worker\'s scoreFile gives the notes and the label column', async () => {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const replies = [];
    await handleMessage({ id: 1, op: 'scoreFile', args: { file: file('pandas_labeled.csv'), options: { methods } } }, (r) => replies.push(r));
    const { value } = replies.at(-1);
    assert.equal(value.labelColumn, 'label');
    assert.equal(value.notes.length, 2);
    same(value.result, want.csv, 'scoreFile');
    assert.equal(value.result.accuracy, want.csv.accuracy);
  });
});

describe('{ input }: probabilities and a binary column read as logits', () => {
  for (const [name, input] of [['p.npy', 'probabilities'], ['z.npy', 'binary-logit'], ['pz.npy', 'binary-probability']]) {
    test(`${input}: score, accumulator, scoreStream and the Worker`, async () => {
      const expected = want[input.replace('-', '_')];
      const m = await npy(name);
      const got = mano.score(m.data, m, { methods, input });
      same(got, expected, input);
      assert.equal(got.input, input);
      assert.equal(got.k, input.startsWith('binary') ? 2 : want.k);
      const acc = mano.accumulator(m.cols, { methods, input });
      acc.push(m.data.subarray(0, 100 * m.cols), { dtype: m.dtype }).push(m.data.subarray(100 * m.cols), { dtype: m.dtype });
      same(acc.result(), expected, `${input} accumulator`);
      same(await mano.scoreStream(m, { methods, input }, { chunkRows: 64 }), expected, `${input} scoreStream`);
      const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
      const replies = [];
      await handleMessage({ id: 2, op: 'scoreFile', args: { file: file(name), options: { methods, input } } }, (r) => replies.push(r));
      same(replies.at(-1).value.result, expected, `${input} Worker`);
    });
  }

  test('probabilities read as logits are flagged, with a warning naming { input }', async () => {
    const p = await npy('p.npy');
    const got = mano.score(p.data, p, { methods });
    assert.equal(got.looks_like_probabilities, true);
    assert.deepEqual(got.warnings, ["logits: every row lies in [0, 1] and sums to 1: these look like probabilities, not logits; give " +
      "{ input: 'probabilities' } (read as logits, they give estimates on another scale)"]);
    const logits = await mano.readMatrix(file('pandas.csv'));
    const plain = mano.score(logits.data, logits, { methods });
    assert.equal(plain.looks_like_probabilities, undefined);
    assert.equal(plain.warnings, undefined);
  });

  test('shapes and values that are not of the input kind are refused, naming it', async () => {
    const z = await npy('z.npy');
    assert.throws(() => mano.score(z.data, z), (e) => e instanceof mano.InputError &&
      /got 1 \(a binary classifier's one column: give input binary-logit or binary-probability\)/.test(e.message));
    const p = await npy('p.npy');
    assert.throws(() => mano.score(p.data, p, { input: 'binary-logit' }), /input binary-logit takes one column per row/);
    const bad = Float64Array.from(p.data);
    bad[3 * p.cols + 1] = 1.5;
    assert.throws(() => mano.score(bad, { rows: p.rows, cols: p.cols }, { input: 'probabilities' }), /row 3, column 1: 1\.5 is not a probability/);
    assert.throws(() => mano.score(p.data, p, { input: 'probs' }), /input 'probs' is not one of logits, probabilities/);
    assert.throws(() => mano.score(p.data, p, { input: 3 }), (e) => e instanceof mano.InputError && /options\.input must be/.test(e.message));
  });

  test('the calibration records the input; predict and { calibration } refuse another', async () => {
    const p = await npy('p.npy');
    const rows = 75;
    const y = await npy('csv_labels.npy');
    const sets = [0, 1, 2, 3].map((i) => ({
      name: `s${i}`, logits: p.data.subarray(i * rows * p.cols, (i + 1) * rows * p.cols), shape: { rows, cols: p.cols },
      labels: Int32Array.from(y.data.subarray(i * rows, (i + 1) * rows)),
    }));
    const cal = mano.calibrate(sets, { methods, input: 'probabilities', normalization: 'softrun' });
    assert.equal(cal.options.input, 'probabilities');
    const plain = mano.score(p.data, p, { methods });
    assert.throws(() => mano.predict(cal, plain), /the set is read as input logits but the calibration was fitted on input probabilities/);
    assert.throws(() => mano.score(p.data, p, { calibration: cal }), /fitted on input probabilities/);
    const result = mano.score(p.data, p, { calibration: cal, input: 'probabilities' });
    assert.ok(mano.predict(cal, result).estimate);
    // the audited rows are read as the set is
    const draw = mano.audit(p, 20, { seed: 4, input: 'probabilities' });
    const audited = mano.predict(cal, result, { logits: p, audit: { rows: draw.rows, labels: draw.rows.map((r) => y.data[r]) } });
    assert.equal(audited.audit.n, 20);
    const z = await npy('z.npy');
    assert.match(mano.audit(z, 5, { seed: 1, input: 'binary-logit' }).csv, /each row's true class \(0 to 1\)/);
  });
});
