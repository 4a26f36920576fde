// Audit mode in the package against the native CLI: audit() draws the rows `mano audit` draws and
// writes its file byte for byte; predict(..., { audit, logits }) is `mano predict --audit --json`;
// every bad audit is one InputError naming what to fix. On the bundled example (tests/data/example).
// Run: MANO_BIN=build/release/native/mano node --test web/test/audit.test.js
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { compareDeep, PARITY, labeledAudit as labeled, loadPackage, nativeMano, root, runNative, tempDir } from './support.js';

let mano;
let tmp;
const example = path.join(root, 'tests/data/example');
// the path as the CLI is given it: its audit file's comment line names it so
const logitsFile = path.relative(root, path.join(example, 'contrast_3_logits.npy'));
let m;        // the set's Matrix
let labels;   // its true classes
let calFile, cal, result;

function cliAudit(budget, seed) {
  const out = path.join(tmp, `audit_${budget}_${seed}.csv`);
  execFileSync(nativeMano, ['audit', logitsFile, '--budget', String(budget), '--seed', String(seed), '-o', out], { cwd: root });
  return fs.readFileSync(out, 'utf8');
}

before(async () => {
  mano = await loadPackage();
  tmp = tempDir('mano-audit-');
  m = await mano.readNpy(fs.readFileSync(path.join(root, logitsFile)), { name: 'contrast_3_logits.npy' });
  labels = (await mano.readNpy(fs.readFileSync(path.join(example, 'contrast_3_labels.npy')))).data;
  calFile = path.join(tmp, 'cal.json');
  execFileSync(nativeMano, ['calibrate', path.join(example, 'manifest.json'), '-o', calFile, '--quiet']);
  cal = JSON.parse(fs.readFileSync(calFile, 'utf8'));
  result = mano.score(m.data, m, { calibration: cal });
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('audit(): the rows mano audit draws', () => {
  test('the rows and the CSV text equal mano audit\'s for several seeds and budgets', () => {
    for (const [budget, seed] of [[2, 0], [2, 1], [30, 7], [100, 123456789], [1999, 42], [2000, 2 ** 53 - 1]]) {
      const csv = cliAudit(budget, seed);
      const draw = mano.audit(m, budget, { seed, source: logitsFile });
      assert.equal(draw.csv, csv, `budget ${budget}, seed ${seed}: the file mano audit writes`);
      const rows = csv.split('\n').filter((l) => /^\d+,1$/.test(l)).map((l) => Number(l.split(',')[0]));
      assert.deepEqual(draw.rows, rows, `budget ${budget}, seed ${seed}`);
      assert.equal(draw.n_rows, 2000);
      assert.equal(draw.seed, seed);
      assert.deepEqual(mano.audit(2000, budget, { seed }), { rows, n_rows: 2000, seed }, 'a row count: the rows, no CSV');
    }
  });

  test('without a seed: a random one, recorded, that draws the same rows again', () => {
    const a = mano.audit({ rows: 2000, cols: 10, name: 'x.npy' }, 20);
    assert.ok(Number.isSafeInteger(a.seed) && a.seed >= 0);
    assert.match(a.csv, new RegExp(`^# mano audit: 20 of the 2000 rows of x\\.npy drawn .* with seed ${a.seed} `));
    assert.deepEqual(mano.audit(2000, 20, { seed: a.seed }).rows, a.rows);
  });

  test('a bad budget, seed or set is one InputError naming what to fix', () => {
    const bad = (fn, re) => assert.throws(fn, (e) => e instanceof mano.InputError && re.test(e.message), String(re));
    bad(() => mano.audit(m, 0), /^audit: the budget must be a whole number of rows to label, from 2 to the set's 2000 \(got 0\)$/);
    // the fewest rows predict takes back (the core's AUDIT_MIN_ROWS), so a drawn file is never refused for its size
    bad(() => mano.audit(m, 1), /^audit: the budget must be a whole number of rows to label, from 2 to the set's 2000 \(got 1\)$/);
    bad(() => mano.audit(m, -3), /^audit: the budget must be a whole number of rows to label, from 2 to the set's 2000 \(got -3\)$/);
    bad(() => mano.audit(m, 2.5), /budget must be a whole number .*got 2\.5/);
    bad(() => mano.audit(m, 2001), /^a budget of 2001 rows is more than the set's 2000 rows; label them all, or give a budget up to 2000$/);
    bad(() => mano.audit(m, 10, { seed: -1 }), /^audit: the seed must be a whole number from 0 to 2\^53 - 1 \(got -1\)$/);
    bad(() => mano.audit(m, 10, { seed: 2 ** 53 }), /seed must be a whole number/);
    // text is quoted, so the seed '7' does not read as the number 7
    bad(() => mano.audit(m, 10, { seed: '7' }), /^audit: the seed must be a whole number from 0 to 2\^53 - 1 \(got '7'\)$/);
    bad(() => mano.audit(m, '20'), /budget must be a whole number .*\(got '20'\)$/);
    bad(() => mano.audit(0, 1), /the set must be its number of rows/);
    bad(() => mano.audit({ rows: 10, cols: 1 }, 2), /logits need at least 2 columns \(classes\); got 1 \(a binary classifier/);
  });
});

describe('predict with an audit: mano predict --audit', () => {
  // The audit and the label-free estimate within the native-vs-WebAssembly tolerance (PARITY in
  // support.js: the audit's interval sums the scan's per-row values), labels_for_width exactly.
  const relOK = (got, want) => {
    assert.deepEqual(compareDeep(got.audit, want.audit, PARITY, 'audit'), []);
    assert.deepEqual(got.labels_for_width, want.labels_for_width);
    assert.deepEqual(compareDeep(got.estimate, want.estimate, PARITY, 'estimate'), []);
    assert.equal(got.n, want.n);
  };
  const cliPredict = (auditFile, level = 0.9) => {
    const out = runNative(['predict', '--calibration', calFile, '--json', '--quiet', '--level', String(level), logitsFile,
      ...(auditFile ? ['--audit', auditFile] : [])]);
    delete out.file;
    return out;
  };

  test('the audited prediction equals the CLI\'s (PPI; Wilson on the labels alone under 10), for several draws and levels', () => {
    for (const [budget, seed, level] of [[30, 7, 0.9], [100, 3, 0.8], [2, 11, 0.95], [9, 4, 0.9], [10, 4, 0.9], [500, 2 ** 40, 0.9]]) {
      const text = labeled(cliAudit(budget, seed), labels);
      const file = path.join(tmp, `labeled_${budget}_${seed}.csv`);
      fs.writeFileSync(file, text);
      const want = cliPredict(file, level);
      assert.equal(want.audit.method, budget < 10 ? 'wilson' : 'ppi');
      assert.equal(want.audit.reason, budget < 10 ? 'n < 10 labels: Wilson on the labels alone' : undefined);
      if (budget < 10) assert.deepEqual(want.audit.interval, want.audit.wilson);
      assert.equal(want.audit.n, budget);
      const got = mano.predict(cal, result, { level, audit: text, logits: m });
      relOK(got, want);
      // the same labels as { rows, labels }, in any order
      const { rows } = mano.audit(m, budget, { seed });
      const shuffled = rows.map((r, i) => [r, labels[r], (i * 7919) % rows.length]).sort((a, b) => a[2] - b[2]);
      relOK(mano.predict(cal, result, { level, logits: m, audit: { rows: shuffled.map((x) => x[0]), labels: shuffled.map((x) => x[1]) } }), want);
    }
  });

  test('labels_for_width appears where mano predict shows it, with or without an audit', () => {
    const want = cliPredict();
    assert.ok(want.labels_for_width, 'the example\'s interval is wider than 0.25');
    const got = mano.predict(cal, result);
    relOK(got, want);
    assert.deepEqual(got.labels_for_width, want.labels_for_width);
    const text = labeled(cliAudit(30, 7), labels);
    assert.deepEqual(mano.predict(cal, result, { audit: text, logits: m }).labels_for_width, want.labels_for_width);
  });

  test('a set of one row gets no labels advice: an audit needs 2 labeled rows', async () => {
    const x = await mano.readNpy(fs.readFileSync(path.join(example, 'contrast_0_logits.npy')));
    const row = Float32Array.from(x.data.subarray(10, 20), (v) => v * 0.2);
    const one = mano.predict(cal, mano.score(row, { rows: 1, cols: 10 }, { calibration: cal }));
    assert.ok(one.estimate.interval[1] - one.estimate.interval[0] > 0.25, 'an interval wider than 0.25');
    assert.equal(one.labels_for_width, undefined);
  });

  test('without a correctness model the audit is the labels\' Wilson interval, as the CLI\'s', () => {
    const plain = { ...cal, options: { ...cal.options } };
    delete plain.correctness;
    const plainFile = path.join(tmp, 'plain.json');
    fs.writeFileSync(plainFile, JSON.stringify(plain));
    const text = labeled(cliAudit(40, 5), labels);
    const auditFile = path.join(tmp, 'labeled_plain.csv');
    fs.writeFileSync(auditFile, text);
    const want = runNative(['predict', '--calibration', plainFile, '--json', '--quiet', logitsFile, '--audit', auditFile]);
    delete want.file;
    assert.equal(want.audit.method, 'wilson');
    const plainResult = mano.score(m.data, m, { calibration: plain });
    relOK(mano.predict(plain, plainResult, { audit: text, logits: m }), want);
  });

  test('the Worker reads the audited rows of the set\'s File', async () => {
    const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
    const text = labeled(cliAudit(30, 7), labels);
    const file = new Blob([fs.readFileSync(path.join(root, logitsFile))]);
    const replies = [];
    await handleMessage({ id: 1, op: 'predict', args: { calibration: cal, result, level: 0.9, audit: text, logits: file } }, (r) => replies.push(r));
    assert.equal(replies.at(-1).type, 'result', JSON.stringify(replies.at(-1)));
    relOK(replies.at(-1).value, mano.predict(cal, result, { audit: text, logits: m }));
    const drawn = [];
    await handleMessage({ id: 2, op: 'audit', args: { set: { rows: 2000, cols: 10 }, budget: 30, options: { seed: 7, source: logitsFile } } },
      (r) => drawn.push(r));
    assert.equal(drawn.at(-1).value.csv, cliAudit(30, 7));
  });

  test('an audit belongs to its set: another size is refused, another file name warned of, as mano predict --audit', () => {
    const text = labeled(cliAudit(30, 7), labels);
    const small = { data: m.data.subarray(0, 1000 * 10), rows: 1000, cols: 10, name: 'contrast_3_logits.npy' };
    assert.throws(() => mano.predict(cal, mano.score(small.data, small, { calibration: cal }), { audit: text, logits: small, auditName: 'rows.csv' }),
      (e) => e instanceof mano.InputError && e.message === `rows.csv, line 1: this audit was drawn from the 2000 rows of ${logitsFile}, ` +
        'but the set has 1000 rows: its labels are another set\'s rows; draw the audit from this set (mano audit)', 'another size');
    const renamed = { ...m, name: 'other_logits.npy' };
    const got = mano.predict(cal, result, { audit: text, logits: renamed, auditName: 'rows.csv' });
    const note = `rows.csv was drawn from ${logitsFile}, not from other_logits.npy (both have 2000 rows): check that its labels are this set's rows`;
    assert.deepEqual(got.audit.warnings, [note]);
    // the CLI says the same of a file of that name
    const auditFile = path.join(tmp, 'rows.csv');
    fs.writeFileSync(auditFile, text);
    const other = path.join(tmp, 'other_logits.npy');
    fs.copyFileSync(path.join(root, logitsFile), other);
    const want = runNative(['predict', '--calibration', calFile, '--json', '--quiet', other, '--audit', auditFile]);
    assert.deepEqual(want.audit.warnings, [note.replace('rows.csv', auditFile).replace('other_logits.npy', other)]);
    assert.equal(mano.predict(cal, result, { audit: text, logits: m }).audit.warnings, undefined);
  });

  test('the rows are the draw the file or the seed records, recomputed: swapped rows and edited records are refused', () => {
    const text = labeled(cliAudit(30, 5), labels);
    const want = mano.predict(cal, result, { audit: text, logits: m }).audit;
    const lines = text.split('\n');
    const draw = mano.audit(m, 30, { seed: 5 });
    const predicted = (r) => { let best = 0; for (let c = 1; c < 10; c++) if (m.data[r * 10 + c] > m.data[r * 10 + best]) best = c; return best; };
    // the red team's file: the wrongly classified drawn rows swapped for correct rows not drawn
    const wrong = draw.rows.filter((r) => predicted(r) !== Number(labels[r]));
    const right = Array.from({ length: 2000 }, (_, r) => r).filter((r) => !draw.rows.includes(r) && predicted(r) === Number(labels[r]));
    assert.ok(wrong.length >= 3, `the draw has wrongly classified rows (${wrong.length})`);
    const swap = new Map(wrong.map((r, i) => [r, right[i]]));
    const swapped = draw.rows.map((r) => swap.get(r) ?? r);
    const first = draw.rows.findIndex((r) => swap.has(r));
    const swappedText = lines.map((l, i) => (i >= 2 && i - 2 < swapped.length ? `${swapped[i - 2]},1,${labels[swapped[i - 2]]}` : l)).join('\n');
    const refused = (audit, message) => assert.throws(() => mano.predict(cal, result, { audit, logits: m, auditName: 'rows.csv' }),
      (e) => e instanceof mano.InputError && (typeof message === 'string' ? e.message === message : message.test(e.message)), String(message));
    refused(swappedText, `rows.csv, line ${first + 3}, column 1 (row): row ${swapped[first]} is not in the draw of seed 5 (30 of the 2000 rows) ` +
      'that line 1 records: the rows or line 1 were edited; label the rows of that draw, or draw them again (mano audit)');
    refused(text.replace('with seed 5 ', 'with seed 6 '), /^rows\.csv, line \d+, column 1 \(row\): row \d+ is not in the draw of seed 6 \(30 of the 2000 rows\)/);
    refused(text.replace('# mano audit: 30 of', '# mano audit: 31 of'), /is not in the draw of seed 5 \(31 of the 2000 rows\) that line 1 records \(30 rows given\)/);
    refused(text.replace('with seed 5 ', 'with seed five '), /^rows\.csv, line 1: this line starts as mano audit's record of the draw but does not read as one/);
    // audit()'s draw with its labels added: the seed and n_rows it carries are checked
    const withLabels = { ...draw, labels: draw.rows.map((r) => labels[r]) };
    assert.deepEqual(compareDeep(mano.predict(cal, result, { audit: withLabels, logits: m }).audit, want, 1e-12, 'audit'), []);
    refused({ ...draw, rows: swapped, labels: swapped.map((r) => labels[r]) },
      `rows.csv: rows[${first}]: row ${swapped[first]} is not in the draw of seed 5 (30 of the 2000 rows): the rows or the seed were ` +
      'changed; give the rows mano audit drew with that seed, or draw them again');
    refused({ ...withLabels, n_rows: 4000 }, /^rows\.csv: the rows were drawn from a set of 4000 rows \(n_rows\), but the set has 2000 rows/);
    refused({ ...withLabels, seed: '5' }, /^rows\.csv: seed must be a whole number >= 0, as audit\(\) gives it \(got '5'\)$/);
    // without a seed, { rows, labels } is taken as given
    assert.equal(mano.predict(cal, result, { audit: { rows: swapped, labels: swapped.map((r) => labels[r]) }, logits: m }).audit.n, 30);
    // labels written as floats (pandas, a column that held a NaN): 3.0 is 3; 3.5 is refused
    const floats = text.replace(/^(\d+,1,)(\d+)$/gm, '$1$2.0');
    assert.notEqual(floats, text);
    assert.deepEqual(compareDeep(mano.predict(cal, result, { audit: floats, logits: m }).audit, want, 1e-12, 'audit'), []);
    refused(text.replace(/^(\d+,1,)(\d+)$/m, '$1$2.5'), /^rows\.csv, line 3, column 3 \(label\): "\d\.5" is not a class index/);
  });

  test('every bad audit is one InputError naming what to fix', () => {
    const good = labeled(cliAudit(30, 7), labels);
    const lines = good.split('\n');
    const bad = (audit, re, extra = {}) => assert.throws(() => mano.predict(cal, result, { audit, logits: m, auditName: 'rows.csv', ...extra }),
      (e) => e instanceof mano.InputError && re.test(e.message), `${re}`);
    const edit = (i, line) => lines.map((l, j) => (j === i ? line : l)).join('\n');
    const [row0] = lines[2].split(',');
    bad(edit(2, '2000,1,3'), /^rows\.csv, line 3, column 1 \(row\): row 2000 is outside the set's rows 0 to 1999/);
    bad(edit(3, `${row0},1,4`), new RegExp(`^rows\\.csv, line 4, column 1 \\(row\\): row ${row0} is listed twice`));
    bad(edit(2, `${row0},1,10`), /^rows\.csv, line 3, column 3 \(label\): label 10 is outside the classes 0 to 9/);
    bad(edit(2, `${row0},1,-1`), /^rows\.csv, line 3, column 3 \(label\)/);
    bad(labeled(cliAudit(30, 7), labels).replace(',label', '').replace(/,\d+\n/g, '\n'), /^rows\.csv, line 2: the header \(row,weight\) has no column label/);
    bad(lines.slice(0, 3).join('\n'), /^rows\.csv: 1 labeled row; an audit needs at least 2: label every row mano audit drew/);
    bad('', /^rows\.csv: empty/);
    bad({ rows: [1, 2000], labels: [0, 0] }, /^rows\.csv: rows\[1\] is 2000, outside the set's rows 0 to 1999/);
    bad({ rows: [5, 5], labels: [0, 1] }, /^rows\.csv: row 5 is listed twice \(rows\[0\] and rows\[1\]\); label each row once$/);
    bad({ rows: [5, 6], labels: [0, 10] }, /^rows\.csv: labels\[1\] is 10, outside the classes 0 to 9; give row 6's true class$/);
    bad({ rows: [5, 6], labels: [0] }, /of one length \(got 2 rows and 1 labels\)/);
    bad({ rows: [5, 6], labels: [0, 6.5] }, /^rows\.csv: labels\[1\] is 6\.5, not a whole number; give row 6's true class, 0 to 9$/);
    bad({ rows: [5, 6.5], labels: [0, 1] }, /^rows\.csv: rows\[1\] is 6\.5, not a whole number; give the rows mano audit drew$/);
    bad(good, /options\.audit needs options\.logits/, { logits: undefined });
    bad(good, /options\.logits has 20 x 10 logits but the result is of 2000 rows of 10 classes/,
      { logits: { data: m.data.subarray(0, 200), rows: 20, cols: 10 } });
    assert.throws(() => mano.predict(cal, result, { logits: m }), (e) => e instanceof mano.InputError && /options\.logits is read for options\.audit/.test(e.message));
    assert.throws(() => mano.predict(cal, result, { audit: good, logits: m, level: 1 }), (e) => e instanceof mano.InputError && /level must be in \(0, 0\.999999\]/.test(e.message));
  });
});
