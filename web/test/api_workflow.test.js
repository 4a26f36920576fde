// The JS API's evaluate, calibrate and predict against the native CLI (mano eval, calibrate,
// predict) on the bundled example (tests/data/example).
// Run: node --test web/test/api_workflow.test.js
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { compareDeep, PARITY, loadPackage, nativeMano, normalCdf, root, runNative, tempDir } from './support.js';

let mano;
before(async () => {
  mano = await loadPackage();
});

describe('evaluate, calibrate, predict (the CLI semantics)', () => {
  const dir = path.join(root, 'tests/data/example');
  const manifestFile = path.join(dir, 'manifest.json');
  let source;
  let matrices;  // name -> { m, labels, group }
  let scans;     // every set scored once with the defaults (per-set softrun: both MaNo branches)
  let tmp;
  // Scores the sets again as `mano eval` / `calibrate` / `predict` do once the family's branch is known.
  const onBranch = (sets, choice) => sets.map((s) => {
    const { m, labels } = matrices.get(s.name);
    const options = { source, normalization: choice.normalization, taylorOrder: choice.taylor_order, correctnessHistogram: true };
    return { ...s, result: mano.score(m.data, { rows: m.rows, cols: m.cols, labels: s.result.accuracy === undefined ? undefined : labels }, options) };
  });
  // DoC is ConfScore moved by a constant, so their held-out errors tie up to the last bits (the
  // core compares them at 1e-9, then by registry order): compare the ranking by method, and check
  // its order separately.
  const byMethod = (cal) => {
    const ranking = cal.ranking ?? [];
    ranking.forEach((r, i) => assert.ok(i === 0 || ranking[i - 1].logo_mae <= r.logo_mae + 1e-9, `ranking is best first at ${r.method}`));
    return { ...cal, ranking: Object.fromEntries(ranking.map((r) => [r.method, r.logo_mae])) };
  };
  const withoutName = (p) => {
    const out = { ...p };
    delete out.name;
    delete out.group;
    return out;
  };

  before(async () => {
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    const load = async (f) => mano.readNpy(fs.readFileSync(path.join(dir, f)));
    source = { logits: (await load(manifest.source.logits)).data, labels: (await load(manifest.source.labels)).data };
    matrices = new Map();
    scans = [];
    for (const s of manifest.sets) {
      const m = await load(s.logits);
      const labels = (await load(s.labels)).data;
      matrices.set(s.name, { m, labels });
      scans.push({ name: s.name, group: s.group, result: mano.score(m.data, { rows: m.rows, cols: m.cols, labels }, { source, correctnessHistogram: true }) });
    }
    tmp = tempDir('mano-cal-');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('a calibration file of the CLI scores and predicts new logits as mano predict does', () => {
    const file = path.join(tmp, 'cli_cal.json');
    execFileSync(nativeMano, ['calibrate', manifestFile, '-o', file, '--quiet']);
    const cal = JSON.parse(fs.readFileSync(file, 'utf8'));
    const { m } = matrices.get('contrast_3');
    const result = mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: cal });
    const got = mano.predict(cal, result);
    const want = runNative(['predict', '--calibration', file, '--json', '--quiet', path.join(dir, 'contrast_3_logits.npy')]);
    assert.deepEqual(compareDeep(got.estimate, want.estimate, PARITY, 'estimate'), []);
    assert.deepEqual(compareDeep(got.methods, want.methods, PARITY, 'methods'), []);
    assert.throws(() => mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: cal, p: 3 }),
      (e) => e instanceof mano.InputError && /give no other option but input \(got p\)/.test(e.message));
    assert.throws(() => mano.score(m.data.subarray(0, 20 * 5), { rows: 20, cols: 5 }, { calibration: cal }),
      (e) => e instanceof mano.InputError && e.message === 'the logits have 5 classes but the calibration was fitted on logits with 10');
    assert.throws(() => mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: { format: 'other' } }),
      (e) => e instanceof mano.InputError && /calibration: not a mano calibration \("format" is not "mano-calibration"\)/.test(e.message));
    assert.throws(() => mano.score(m.data, { rows: m.rows, cols: m.cols }, { calibration: 'cal.json' }),
      (e) => e instanceof mano.InputError && /must be a calibration/.test(e.message));
  });

  test('evaluate on the family\'s branch equals mano eval', () => {
    const nativeEval = runNative(['eval', '--json', manifestFile]);
    const choice = mano.calibrate(scans, { source }).normalization;
    const want = { ...nativeEval.normalization };
    delete want.per_set;
    assert.deepEqual(compareDeep(choice, want, PARITY), [], 'the branch chosen over all 12 sets (2 groups)');
    const evaluation = mano.evaluate(onBranch(scans, choice));
    assert.deepEqual(compareDeep(evaluation.summary, nativeEval.summary, PARITY), []);
    assert.deepEqual(compareDeep(evaluation.groups, nativeEval.groups, PARITY), []);
    assert.deepEqual(compareDeep(evaluation.sets.map((s) => s.methods), nativeEval.sets.map((s) => s.methods), PARITY), []);
  });

  test('calibrate (normalization family) and predict equal mano calibrate / mano predict', () => {
    const calFile = path.join(tmp, 'cal.json');
    execFileSync(nativeMano, ['calibrate', manifestFile, '-o', calFile, '--group', 'contrast', '--quiet', '--label-shift-copies', '0']);
    const nativeCal = JSON.parse(fs.readFileSync(calFile, 'utf8'));
    assert.equal(nativeCal.normalization.by, 'leave-one-group-out');
    const contrast = scans.filter((s) => s.group === 'contrast');

    // One pass over sets scored once: the branch, MaNo's line and folds, the recommendation and the
    // class-shift reference are the CLI's. The softrun baselines leave (the sets' own branch was
    // softmax, the family's is not): `mano calibrate` scored them again on the family's branch.
    const once = mano.calibrate(contrast, { source });
    assert.equal(once.version, 2);
    assert.deepEqual(compareDeep(once.normalization, nativeCal.normalization, PARITY), []);
    assert.deepEqual(compareDeep(once.methods.mano, nativeCal.methods.mano, PARITY), []);
    assert.deepEqual(compareDeep(once.shift, nativeCal.shift, PARITY), []);
    assert.deepEqual(compareDeep(once.options, nativeCal.options, 1e-6, '', 0).filter((d) => !d.startsWith('.methods')), []);
    assert.equal(once.recommended, nativeCal.recommended);
    assert.ok(contrast.every((s) => s.result.methods.mano.normalization === 'softmax'), 'the example\'s sets are on softmax one by one');
    assert.notEqual(once.normalization.variant, 'softmax', 'and the family takes the other branch');
    assert.ok(!('nuclear_softrun' in once.methods) && once.notes.some((n) => /nuclear_softrun/.test(n)), once.notes.join('; '));

    // Scored again on the family's branch, as the CLI does: the whole calibration is the CLI's.
    const family = once.normalization;
    const calibration = mano.calibrate(onBranch(contrast, family),
      { source, normalization: family.normalization, taylorOrder: family.taylor_order });
    assert.equal(calibration.normalization, undefined, 'a forced branch records no choice');
    calibration.normalization = family;
    assert.deepEqual(compareDeep(byMethod(JSON.parse(JSON.stringify(calibration))), byMethod(nativeCal), PARITY), []);
    assert.ok(Array.isArray(calibration.notes));
    assert.ok(calibration.methods.mano.folds.length === 6 && calibration.methods.mano.folds.every((f) => f.residuals.length === 1),
      'one group: every set is its own fold');

    const nativePredict = runNative(['predict', '--calibration', calFile, '--manifest', manifestFile,
      '--group', 'blend', '--json', '--level', '0.8']);
    const blendScans = scans.filter((s) => s.group === 'blend');
    const blend = onBranch(blendScans, family);
    blend.forEach((s, i) => {
      const p = mano.predict(calibration, s.result, { level: 0.8 });
      const want = withoutName(nativePredict.sets[i]);
      assert.deepEqual(compareDeep(p, want, PARITY), [], s.name);
      assert.ok(p.estimate && p.shift, `${s.name}: estimate and shift`);
      // the regime: MLLS's own estimate on a set that passed the label-shift check, else the line's
      if (p.estimate.regime === 'label_shift') {
        assert.ok(p.label_shift.passed && p.estimate.method === 'mlls', s.name);
      } else {
        assert.equal(p.estimate.method, calibration.recommended);
        assert.deepEqual(p.estimate.interval, p.methods[p.estimate.method].interval);
      }
    });
    // A set scored once (per-set softrun) is predicted through its MaNo variants: the same
    // estimate, its interval without the score's own noise (so inside the CLI's), the same shift.
    blendScans.forEach((s, i) => {
      const p = mano.predict(calibration, s.result, { level: 0.8 });
      const want = nativePredict.sets[i];
      assert.equal(p.estimate.method, want.estimate.method);
      assert.deepEqual(compareDeep(p.estimate.accuracy, want.estimate.accuracy, PARITY), [], s.name);
      assert.ok(p.estimate.interval[0] >= want.estimate.interval[0] - 1e-9 && p.estimate.interval[1] <= want.estimate.interval[1] + 1e-9,
        `${s.name}: ${p.estimate.interval} inside ${want.estimate.interval}`);
      assert.deepEqual(compareDeep(p.shift, want.shift, PARITY), [], s.name);
    });

    // predictScores is predict without the score's own standard error
    const noSe = JSON.parse(JSON.stringify(blend[0].result, (key, value) => (key === 'se' ? undefined : value)));
    const byScore = mano.predictScores(calibration, 'mano', [noSe.methods.mano.score], { level: 0.8 })[0];
    const full = mano.predict(calibration, noSe, { level: 0.8 }).methods.mano;
    assert.deepEqual(compareDeep(byScore, { score: full.score, accuracy: full.accuracy, interval: byScore.interval, slope: full.slope, extrapolated: full.extrapolated }, 1e-15), []);
    // the set's interval is for its own rows' accuracy: the population's band, widened by their sampling
    assert.ok(full.interval[0] <= byScore.interval[0] && byScore.interval[1] <= full.interval[1], JSON.stringify([full.interval, byScore.interval]));
    // a set of 5 rows is too small to judge, from the core, as the CLI says it
    const tiny = mano.predict(calibration, mano.score(new Float32Array(5 * 10).map((_, i) => (i % 11) * 0.3), { rows: 5, cols: 10 }, { calibration }));
    assert.deepEqual(tiny.too_small, { rows: 5, minimum_rows: 10 });
    assert.throws(() => mano.predictScores(calibration, 'frechet', [1]), (e) => e instanceof mano.InputError && /no method 'frechet'/.test(e.message));
    // a line far outside [0, 1] keeps an honest interval and says so (the CLI's rule, from the core)
    const [huge] = mano.predictScores(calibration, 'mano', [1e308]);
    const uniform = mano.predict(calibration, mano.score(new Float32Array(2000 * 10), { rows: 2000, cols: 10 }, { calibration }));
    if (calibration.methods.mano.link === 'probit') {
      // the probit line bends toward 0 and 1: nothing to clip, and still no single point
      assert.ok(huge.out_of_range === undefined && huge.interval[1] - huge.interval[0] > 1e-3, JSON.stringify(huge));
      assert.ok(uniform.methods.mano.accuracy < 1e-3 && uniform.methods.mano.out_of_range === undefined &&
        uniform.methods.mano.interval[1] - uniform.methods.mano.interval[0] > 1e-3, JSON.stringify(uniform.methods.mano));
    } else {
      assert.deepEqual([huge.interval, huge.out_of_range], [[0, 1], 'above']);
      assert.equal(uniform.methods.mano.accuracy, 0);
      assert.equal(uniform.methods.mano.out_of_range, 'below');
      assert.ok(uniform.methods.mano.interval[1] > 0.05, String(uniform.methods.mano.interval));
    }
    // the JS calibration files are ones the CLI reads, the one-pass one included
    for (const [name, cal] of [['js_cal.json', calibration], ['js_once.json', once]]) {
      fs.writeFileSync(path.join(tmp, name), JSON.stringify(cal));
      const again = runNative(['predict', '--calibration', path.join(tmp, name), '--manifest', manifestFile, '--group', 'blend',
        '--json', '--level', '0.8']);
      const js = blend.map((s) => mano.predict(cal, s.result, { level: 0.8 }));
      assert.deepEqual(compareDeep(again.sets.map(withoutName), js, PARITY), [], name);
    }
  });

  test("normalization 'softrun' keeps each set's own branch, as mano calibrate --normalization softrun", () => {
    const calFile = path.join(tmp, 'per_set.json');
    execFileSync(nativeMano, ['calibrate', manifestFile, '-o', calFile, '--group', 'contrast', '--normalization', 'softrun', '--quiet', '--label-shift-copies', '0']);
    const nativeCal = JSON.parse(fs.readFileSync(calFile, 'utf8'));
    const contrast = scans.filter((s) => s.group === 'contrast');
    const calibration = mano.calibrate(contrast, { source, normalization: 'softrun' });
    assert.ok(!('normalization' in calibration), 'no family choice is recorded');
    assert.equal(calibration.options.normalization, 'softrun');
    assert.deepEqual(compareDeep(byMethod(JSON.parse(JSON.stringify(calibration))), byMethod(nativeCal), PARITY), []);
    // MaNo's line is fitted on each set's own (softmax) score, not the family's (on the probit
    // link its score range is on the probit scale: read back through Phi)
    const highest = Math.max(...contrast.map((s) => s.result.methods.mano.score));
    if (calibration.methods.mano.link === 'probit') {
      assert.deepEqual(compareDeep(normalCdf(calibration.methods.mano.score_max), Math.min(Math.max(highest, 1e-3), 1 - 1e-3), 1e-6), []);
    } else {
      assert.deepEqual(compareDeep(calibration.methods.mano.score_max, highest, 1e-15), []);
    }
    const family = mano.calibrate(contrast, { source, normalization: 'family' });
    assert.notEqual(family.methods.mano.slope, calibration.methods.mano.slope);
    const nativePredict = runNative(['predict', '--calibration', calFile, '--manifest', manifestFile, '--group', 'blend', '--json']);
    scans.filter((s) => s.group === 'blend').forEach((s, i) => {
      assert.deepEqual(compareDeep(mano.predict(calibration, s.result), withoutName(nativePredict.sets[i]), PARITY), [], s.name);
    });
  });
});
