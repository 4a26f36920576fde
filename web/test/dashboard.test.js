// The dashboard (build/dashboard, built by `npm run build`) in Debian's Chromium: the bundled
// example's files go in through the file input (contrast sets with labels, blend sets without,
// the source set); the exported JSON and the displayed numbers must equal the native CLI's for
// the same files (1e-6 relative): scores (`mano eval`, and `mano score` on the branch the
// calibration chose for all sets), the calibration (`mano calibrate`), the estimates
// (`mano predict`) and a timeline (`mano score --chunk-size`).
// A malformed file gets a clear message and the page stays usable; no request leaves
// 127.0.0.1; full-page screenshots of each state are saved to build/artifacts/dashboard*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  CHROMIUM, compareDeep, PARITY, foreignRequests, haveChromium, nativeMano, normalLogits, root, runNative, writeNpy,
} from './support.js';
import { blend, contrast, example, file, hangGuard, openWithExample, ready, site } from './dashboard_support.js';

const artifacts = path.join(root, 'build/artifacts');
const sourceFlags = ['--source-logits', file('source_logits.npy'), '--source-labels', file('source_labels.npy')];


// The options that score a set on the MaNo branch a calibration chose for all its sets.
const branchFlags = (n) => ['--normalization', n.normalization, '--taylor-order', String(n.taylor_order)];
const pct = (x) => `${(100 * x).toFixed(1)}%`;

// DoC is ConfScore moved by a constant: their held-out errors tie to the last bit, and the
// order of the two in "ranking" follows each build's rounding. Compared by method instead.
function byMethod(cal) {
  return { ...cal, ranking: Object.fromEntries((cal.ranking ?? []).map((r) => [r.method, r.logo_mae])) };
}

async function exported(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-json"]')]);
  return JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
}

const skip = !haveChromium ? `${CHROMIUM} does not exist: no browser to test in`
  : !fs.existsSync(path.join(site, 'index.html')) ? 'build/dashboard is missing: run npm run build' : false;

describe('dashboard (chromium)', { skip, ...hangGuard }, () => {
  let browser;
  let server;
  let origin;
  let page;
  let report;
  let tmp;
  const requests = [];
  const problems = [];

  before(async () => {
    ({ server, origin, browser, page, tmp } = await openWithExample({ requests, problems, tmpPrefix: 'mano-dashboard-' }));
    report = await exported(page);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('every set is scored as the native CLI scores it', () => {
    assert.deepEqual(report.sets.map((s) => s.name).sort(), [...contrast, ...blend].sort());
    const manifest = path.join(tmp, 'contrast.json');
    fs.writeFileSync(manifest, JSON.stringify({
      source: { logits: file('source_logits.npy'), labels: file('source_labels.npy') },
      sets: contrast.map((name) => ({ name, logits: file(`${name}_logits.npy`), labels: file(`${name}_labels.npy`) })),
    }));
    const evaluation = runNative(['eval', '--json', '--allow-outside-paths', manifest]);
    assert.equal(report.calibration.normalization.variant, evaluation.normalization.variant);
    for (const want of evaluation.sets) {
      const got = report.sets.find((s) => s.name === want.name);
      assert.deepEqual(compareDeep({ n: got.n, k: got.k, accuracy: got.accuracy, methods: got.methods },
        { n: want.n, k: want.k, accuracy: want.accuracy, methods: want.methods }, PARITY, want.name), []);
    }
    assert.deepEqual(compareDeep(report.evaluation.summary, evaluation.summary, PARITY, 'summary'), []);
    // the unlabeled sets are scored on the branch chosen for the labeled ones
    const scored = execFileSync(nativeMano, ['score', '--json', '--quiet', ...sourceFlags, ...branchFlags(evaluation.normalization),
      ...blend.map((s) => file(`${s}_logits.npy`))], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    blend.forEach((name, i) => {
      const got = report.sets.find((s) => s.name === name);
      assert.equal(got.accuracy, undefined, `${name} was loaded without labels`);
      assert.deepEqual(compareDeep(got.methods, scored[i].methods, PARITY, name), []);
    });
  });

  test('the calibration and the estimates equal mano calibrate / mano predict', () => {
    const manifest = path.join(tmp, 'contrast.json');
    const cal = path.join(tmp, 'cal.json');
    execFileSync(nativeMano, ['calibrate', manifest, '--allow-outside-paths', '-o', cal, '--quiet']);
    const want = JSON.parse(fs.readFileSync(cal, 'utf8'));
    assert.ok(want.normalization && want.recommended, 'the native calibration chose a branch and a method');
    assert.deepEqual(compareDeep(byMethod(report.calibration), byMethod(want), PARITY, 'calibration'), []);
    const list = execFileSync(nativeMano, ['predict', '--calibration', cal, '--json', '--quiet', ...blend.map((s) => file(`${s}_logits.npy`))],
      { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    blend.forEach((name, i) => {
      const got = report.sets.find((s) => s.name === name);
      assert.deepEqual(compareDeep(got.prediction, list[i].methods, PARITY, name), []);
      assert.deepEqual(compareDeep(got.estimate, list[i].estimate, PARITY, `${name} estimate`), []);
      assert.deepEqual(compareDeep(got.shift, list[i].shift, PARITY, `${name} shift`), []);
    });
  });

  test('the page shows the same numbers', async () => {
    const recommended = report.calibration.recommended;
    assert.equal(await page.locator('[data-testid="method-select"]').inputValue(), recommended,
      'the method selector starts on the recommended method');
    const row = page.locator('[data-testid="set-row"][data-name="blend_2"]');
    const cells = await row.locator('td').allTextContents();
    const set = report.sets.find((s) => s.name === 'blend_2');
    const est = set.prediction[recommended];
    assert.ok(cells.includes(`${pct(est.accuracy)} [${pct(est.interval[0])}, ${pct(est.interval[1])}]`),
      `blend_2 row: ${cells.join(' | ')}`);
    assert.ok(cells.includes(set.methods.mano.score.toFixed(4)), `MaNo score of blend_2 not shown: ${cells.join(' | ')}`);
    assert.ok(cells.includes(report.calibration.normalization.variant), `blend_2's MaNo branch not shown: ${cells.join(' | ')}`);
    // the headline: each unlabeled set's recommended estimate, naming its method
    for (const name of ['blend_0', 'blend_1']) {
      const { estimate, shift } = report.sets.find((s) => s.name === name);
      const card = await page.locator(`[data-testid="estimate-card"][data-name="${name}"]`).textContent();
      assert.match(card, new RegExp(`Estimated accuracy · ${name}`));
      assert.ok(card.includes(`${pct(estimate.accuracy)}[${pct(estimate.interval[0])}, ${pct(estimate.interval[1])}] by ${estimate.method} · 90% interval`),
        `${name} card: ${card}`);
      assert.equal(/class proportions outside the calibrated range/.test(card), shift.outside, `${name} card: ${card}`);
    }
    const recommendedCard = await page.locator('[data-testid="recommended-card"]').textContent();
    assert.ok(recommendedCard.includes(recommended) && recommendedCard.includes(report.calibration.normalization.variant), recommendedCard);
    const note = await page.locator('[data-testid="normalization-note"]').textContent();
    assert.match(note, new RegExp(`MaNo normalization for all sets: ${report.calibration.normalization.variant}, chosen by the lower held-out error`));
    assert.equal(await page.locator('[data-testid="scatter"] canvas').count() > 0, true, 'the calibration scatter is drawn');
  });

  test('a timeline of one file equals mano score --chunk-size', async () => {
    await page.selectOption('[data-testid="timeline-file"]', 'blend_1');
    await page.fill('[data-testid="chunk-rows"]', '500');
    await page.fill('[data-testid="threshold"]', '0.9');
    await page.click('[data-testid="build-timeline"]');
    await ready(page);
    await page.waitForSelector('[data-testid="timeline"] canvas');
    const { timeline, calibration } = await exported(page);
    const chunks = execFileSync(nativeMano, ['score', '--json', '--quiet', '--chunk-size', '500', ...sourceFlags,
      ...branchFlags(calibration.normalization), file('blend_1_logits.npy')], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(timeline.chunks.length, chunks.length);
    timeline.chunks.forEach((c, i) => {
      assert.equal(c.first, i * 500);
      assert.deepEqual(compareDeep(c.methods, chunks[i].methods, PARITY, `chunk ${i}`), []);
      assert.ok(c.prediction.mano.interval[0] <= c.prediction.mano.accuracy);
    });
    const alerts = (await page.locator('[data-testid="timeline-alerts"] li').allTextContents()).join(' / ');
    const below = timeline.chunks.filter((c) => c.prediction.mano.accuracy < 0.9).length;
    assert.match(alerts, below ? new RegExp(`^${below} chunks? below 90\\.0%`) : /^no chunk below 90\.0%/);
    assert.equal(timeline.threshold, 0.9);
  });

  test('a timeline of all sets: the reference period sets the alert line (mean - 3 sd), and the alerts are listed', async () => {
    await page.selectOption('[data-testid="timeline-file"]', { index: 0 });
    await page.fill('[data-testid="reference"]', '3');
    await page.click('[data-testid="build-timeline"]');
    await page.waitForSelector('[data-testid="timeline"] canvas');
    const { timeline, sets } = await exported(page);
    assert.equal(timeline.of, 'sets');
    assert.deepEqual(timeline.points.map((p) => p.name.replace(/ \(true accuracy\)$/, '')), sets.map((s) => s.name));
    // the threshold is the first three points' mean minus three standard deviations
    const ref = timeline.points.slice(0, 3).map((p) => p.value);
    const mean = ref.reduce((a, b) => a + b, 0) / 3;
    const sd = Math.sqrt(ref.reduce((a, b) => a + (b - mean) ** 2, 0) / 2);
    assert.ok(Math.abs(timeline.threshold - (mean - 3 * sd)) < 1e-12, `threshold ${timeline.threshold}`);
    const below = timeline.points.slice(3).filter((p) => p.value < timeline.threshold);
    assert.match(timeline.alerts[0], below.length ? new RegExp(`^${below.length} sets? below`) : /^no set below/);
    assert.match(await page.locator('[data-testid="timeline-note"]').textContent(), /reference: the first 3 points.*mean − 3 sd/);
    fs.mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'dashboard-timeline-sets.png'), fullPage: true });
    // a chunked file with small chunks is flagged as too small for the method
    await page.selectOption('[data-testid="timeline-file"]', 'blend_1');
    await page.fill('[data-testid="reference"]', '0');
    await page.fill('[data-testid="chunk-rows"]', '20');
    await page.click('[data-testid="build-timeline"]');
    await ready(page);
    await page.waitForFunction(() => /100 chunks of 20 rows/.test(document.querySelector('[data-testid="timeline-note"]').textContent));
    const alerts = await page.locator('[data-testid="timeline-alerts"] li').allTextContents();
    assert.ok(alerts.some((a) => /chunks of 20 rows are small for mano: .*about [\d,]+ rows per point/.test(a)), alerts.join(' / '));
  });

  test('the CSV export has one line per set', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-csv"]')]);
    const lines = fs.readFileSync(await download.path(), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1 + 12);
    assert.match(lines[0], /^set,n,k,accuracy,mano,/);
    const header = lines[0].split(',');
    const blend0 = lines.find((l) => l.startsWith('blend_0,')).split(',');
    const { estimate, shift } = report.sets.find((s) => s.name === 'blend_0');
    const column = (name) => blend0[header.indexOf(name)];
    assert.equal(Number(column('estimate')), estimate.accuracy);
    assert.equal(column('estimate_method'), estimate.method);
    assert.equal(Number(column('estimate_lower')), estimate.interval[0]);
    assert.equal(column('class_shift_outside'), String(shift.outside));
  });

  test('keyboard and screen-reader users can add files and hear status and errors', async () => {
    // the file input is in the tab order (not display: none) and named; Tab from the page start reaches it
    const input = page.locator('[data-testid="file-input"]');
    assert.equal(await input.evaluate((e) => getComputedStyle(e).display === 'none' || e.tabIndex < 0), false);
    assert.equal(await input.getAttribute('aria-label'), 'Add logit and label files, a manifest or a calibration');
    await page.evaluate(() => document.activeElement?.blur());
    await page.click('h1');  // the sequential focus starting point: the top of the page
    let reached = false;
    for (let i = 0; i < 20 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await input.evaluate((e) => document.activeElement === e);
    }
    assert.ok(reached, 'Tab never focused the file input');
    // status and errors are live regions; the progress bar says how far it is
    assert.equal(await page.locator('[data-testid="status"]').getAttribute('aria-live'), 'polite');
    assert.equal(await page.locator('[data-testid="errors"]').getAttribute('role'), 'alert');
    assert.equal(await page.locator('[data-testid="progress"]').getAttribute('role'), 'progressbar');
  });

  test('a malformed file gets a clear message and the page stays usable; a file dropped meanwhile waits its turn', async () => {
    await page.setInputFiles('[data-testid="file-input"]', { name: 'broken_logits.npy', mimeType: 'application/octet-stream',
      buffer: Buffer.from('\x93NUMPY\x01\x00garbage that is not a header', 'latin1') });
    // dropped before the first is read: run after it, never beside it (two at once scored and
    // forgot the same sets: "Cannot read properties of null (reading 'accuracy')")
    await page.setInputFiles('[data-testid="file-input"]', file('blend_5_labels.npy'));
    await ready(page);
    const errors = await page.locator('[data-testid="errors"] li').allTextContents();
    assert.ok(errors.some((e) => /broken_logits\.npy/.test(e) && /header/.test(e)), `errors shown: ${errors.join(' / ')}`);
    // its dismiss button has a name a screen reader can say (not "✕")
    assert.equal(await page.getByRole('button', { name: 'Dismiss this message' }).count() > 0, true);
    assert.equal(await page.locator('[data-testid="set-row"]').count(), 12, 'the 12 scored sets are still there');
    assert.deepEqual(problems, []);
    const after = await exported(page);
    const set = after.sets.find((s) => s.name === 'blend_5');
    const truth = runNative(['score', '--json', '--quiet', ...branchFlags(after.calibration.normalization), file('blend_5_logits.npy')]);
    assert.ok(set.accuracy > 0 && set.accuracy <= 1, 'labels added later give blend_5 its true accuracy');
    assert.deepEqual(compareDeep(set.methods.mano, truth.methods.mano, PARITY), []);
  });

  test('files pair by their last name part only, and labels of another length are refused', async () => {
    const rows = 300, cols = 10;
    const q = normalLogits(rows, cols, 2, 91);
    const y = Int32Array.from({ length: rows }, (_, i) => i % cols);
    // "label" in a set's name does not make its logits a labels file
    const logits = path.join(tmp, 'label_shift_a0.2_0_logits.npy');
    const labels = path.join(tmp, 'label_shift_a0.2_0_labels.npy');
    writeNpy(logits, q, [rows, cols]);
    writeNpy(labels, y, [rows]);
    await page.setInputFiles('[data-testid="file-input"]', [logits, labels]);
    await ready(page);
    let sets = (await exported(page)).sets;
    const paired = sets.find((s) => s.name === 'label_shift_a0.2_0');
    assert.ok(paired, `the set is named from its logits file: ${sets.map((s) => s.name).join(', ')}`);
    assert.ok(paired.accuracy > 0, 'its labels paired with it');
    // 100 logits with 150 labels: refused with both files named, never an accuracy
    const short = path.join(tmp, 'short_logits.npy');
    const long = path.join(tmp, 'short_labels.npy');
    writeNpy(short, q.subarray(0, 100 * cols), [100, cols]);
    writeNpy(long, y.subarray(0, 150), [150]);
    await page.setInputFiles('[data-testid="file-input"]', [short, long]);
    await ready(page);
    const errors = await page.locator('[data-testid="errors"] li').allTextContents();
    assert.ok(errors.some((e) => /short_labels\.npy: 150 labels for the 100 rows of short_logits\.npy/.test(e)), `errors: ${errors.join(' / ')}`);
    sets = (await exported(page)).sets;
    assert.equal(sets.find((s) => s.name === 'short'), undefined, 'the mismatched set is not shown');
  });

  test('a set whose classes moved is flagged, and its estimate is the one mano predict gives', async () => {
    // confident rows won by classes 0 and 1 only (7:3): label shift, not a corruption
    const rows = 2000, cols = 10;
    const q = normalLogits(rows, cols, 1, 77);
    for (let r = 0; r < rows; r++) q[r * cols + (r % 10 < 7 ? 0 : 1)] += 8;
    const shifted = path.join(tmp, 'moved_logits.npy');
    writeNpy(shifted, q, [rows, cols]);
    await page.setInputFiles('[data-testid="file-input"]', shifted);
    await ready(page);
    const { sets, calibration } = await exported(page);
    const got = sets.find((s) => s.name === 'moved');
    assert.ok(got?.shift?.outside, `the moved set is outside the calibrated class proportions: ${JSON.stringify(got?.shift)}`);
    const card = await page.locator('[data-testid="estimate-card"][data-name="moved"]').textContent();
    assert.match(card, /class proportions outside the calibrated range/);
    const cal = path.join(tmp, 'page_cal.json');
    fs.writeFileSync(cal, JSON.stringify(calibration));
    const want = runNative(['predict', '--calibration', cal, '--json', '--quiet', shifted]);
    assert.deepEqual(compareDeep(got.estimate, want.estimate, PARITY, 'moved estimate'), []);
    assert.deepEqual(compareDeep(got.shift, want.shift, PARITY, 'moved shift'), []);
  });

  test('nothing was fetched from anywhere but the page\'s own origin; no errors logged', async () => {
    assert.deepEqual(foreignRequests(requests, origin), []);
    assert.deepEqual(problems, []);
    const privacy = await page.locator('[data-testid="privacy"]').textContent();
    assert.match(privacy, /never uploaded/);
  });

  test('a manifest pairs files as it says; a calibration file scores and reads sets as mano predict does, and saves back', async () => {
    await page.click('[data-testid="clear"]');
    // files whose names say nothing, paired only by the manifest
    const dir = path.join(tmp, 'by-manifest');
    fs.mkdirSync(dir);
    const sets = contrast.map((name, i) => ({ name: `shift-${i}`, group: 'contrast', logits: `c${i}.npy`, labels: `y${i}.npy` }));
    contrast.forEach((name, i) => {
      fs.copyFileSync(file(`${name}_logits.npy`), path.join(dir, `c${i}.npy`));
      fs.copyFileSync(file(`${name}_labels.npy`), path.join(dir, `y${i}.npy`));
    });
    const manifest = path.join(dir, 'manifest.json');
    fs.writeFileSync(manifest, JSON.stringify({ sets }));
    await page.setInputFiles('[data-testid="file-input"]', [manifest, ...sets.flatMap((x) => [path.join(dir, x.logits), path.join(dir, x.labels)])]);
    await ready(page);
    const paired = (await exported(page)).sets;
    const native = runNative(['eval', '--json', '--quiet', '--normalization', 'softrun', manifest]);
    assert.deepEqual(paired.map((x) => x.name).sort(), sets.map((x) => x.name).sort());
    for (const want of native.sets) {
      const got = paired.find((x) => x.name === want.name);
      assert.ok(Math.abs(got.accuracy - want.accuracy) < 1e-12, `${want.name}: true accuracy ${got.accuracy} != ${want.accuracy}`);
    }
    // a calibration written by the CLI: the new set is scored with its options and read with it
    const cal = path.join(tmp, 'cli-calibration.json');
    execFileSync(nativeMano, ['calibrate', path.join(example, 'manifest.json'), '-o', cal, '--quiet']);
    await page.setInputFiles('[data-testid="file-input"]', [cal, file('blend_2_logits.npy')]);
    await ready(page);
    const { sets: scored, calibration } = await exported(page);
    const want = runNative(['predict', '--calibration', cal, '--json', '--quiet', file('blend_2_logits.npy')]);
    assert.deepEqual(compareDeep(scored.find((x) => x.name === 'blend_2').estimate, want.estimate, PARITY, 'blend_2 estimate'), []);
    assert.match(await page.locator('[data-testid="recommended-card"]').textContent(), /from cli-calibration\.json/);
    const fromFile = JSON.parse(fs.readFileSync(cal, 'utf8'));
    assert.deepEqual(compareDeep(calibration, fromFile, 1e-12, 'calibration'), []);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="save-calibration"]')]);
    assert.deepEqual(compareDeep(JSON.parse(fs.readFileSync(await download.path(), 'utf8')), fromFile, 0, 'saved'), []);
    fs.mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'dashboard-manifest-calibration.png'), fullPage: true });
    // not a calibration nor a manifest: said, and nothing else changes
    const other = path.join(tmp, 'other.json');
    fs.writeFileSync(other, '{"hello": 1}');
    await page.setInputFiles('[data-testid="file-input"]', other);
    await ready(page);
    const errors = await page.locator('[data-testid="errors"] li').allTextContents();
    assert.ok(errors.some((e) => /other\.json: neither a calibration/.test(e)), `errors: ${errors.join(' / ')}`);
  });

  test('the pairing table pairs labels the names did not, and refuses labels of another length', async () => {
    await page.click('[data-testid="clear"]');
    const dir = path.join(tmp, 'pairing');
    fs.mkdirSync(dir);
    const logits = path.join(dir, 'day1_logits.npy');
    const truth = path.join(dir, 'truth_of_day1_labels.npy');
    const other = path.join(dir, 'short_labels.npy');
    fs.copyFileSync(file('contrast_2_logits.npy'), logits);
    fs.copyFileSync(file('contrast_2_labels.npy'), truth);
    writeNpy(other, new Int32Array(7), [7]);
    await page.setInputFiles('[data-testid="file-input"]', [logits, truth, other]);
    await ready(page);
    const select = page.locator('[data-testid="pair-labels"][data-name="day1"]');
    assert.deepEqual((await select.locator('option').allTextContents()).slice(1), ['short_labels.npy', 'truth_of_day1_labels.npy']);
    await select.selectOption('truth_of_day1_labels.npy');
    await ready(page);
    let set = (await exported(page)).sets.find((x) => x.name === 'day1');
    const want = runNative(['eval', '--json', '--quiet', '--normalization', 'softrun', path.join(example, 'manifest.json')])
      .sets.find((x) => x.name === 'contrast_2');
    assert.ok(Math.abs(set.accuracy - want.accuracy) < 1e-12, `paired by hand: ${set.accuracy} != ${want.accuracy}`);
    // 7 labels for 2000 rows: refused, naming both files; the set keeps the labels it had
    await page.locator('[data-testid="pair-labels"][data-name="day1"]').selectOption('short_labels.npy');
    await ready(page);
    const errors = await page.locator('[data-testid="errors"] li').allTextContents();
    assert.ok(errors.some((e) => /short_labels\.npy: 7 labels for the 2000 rows of day1_logits\.npy/.test(e)), errors.join(' / '));
    set = (await exported(page)).sets.find((x) => x.name === 'day1');
    assert.ok(Math.abs(set.accuracy - want.accuracy) < 1e-12, 'the set kept its labels');
    assert.equal(await page.locator('[data-testid="pair-labels"][data-name="day1"]').inputValue(), 'truth_of_day1_labels.npy');
  });

  test('a poor fit is said on the recommended card', async () => {
    await page.click('[data-testid="clear"]');
    // three sets with their labels, and the same logits with labels that disagree with them:
    // equal scores, far apart accuracies, so no line fits and held-out errors are large
    const dir = path.join(tmp, 'poor');
    fs.mkdirSync(dir);
    const files = [];
    for (const name of contrast.slice(0, 3)) {
      const labels = fs.readFileSync(file(`${name}_labels.npy`));
      const header = 10 + labels.readUInt16LE(8);
      const wrong = Buffer.from(labels);
      for (let at = header; at + 8 <= wrong.length; at += 8) wrong.writeBigInt64LE((wrong.readBigInt64LE(at) + 1n) % 10n, at);
      fs.copyFileSync(file(`${name}_logits.npy`), path.join(dir, `${name}_logits.npy`));
      fs.copyFileSync(file(`${name}_labels.npy`), path.join(dir, `${name}_labels.npy`));
      fs.copyFileSync(file(`${name}_logits.npy`), path.join(dir, `${name}x_logits.npy`));
      fs.writeFileSync(path.join(dir, `${name}x_labels.npy`), wrong);
      files.push(...[`${name}_logits.npy`, `${name}_labels.npy`, `${name}x_logits.npy`, `${name}x_labels.npy`].map((f) => path.join(dir, f)));
    }
    await page.setInputFiles('[data-testid="file-input"]', files);
    await ready(page);
    const { calibration } = await exported(page);
    const mae = calibration.methods[calibration.recommended].logo_mae;
    assert.ok(mae > 0.1, `the fit is poor: held-out error ${mae}`);
    assert.match(await page.locator('[data-testid="poor-fit"]').textContent(),
      new RegExp(`a poor fit: even the best method missed held-out sets by ${(100 * mae).toFixed(1)}%`));
  });

  test('a full-page screenshot is saved', async (t) => {
    fs.mkdirSync(artifacts, { recursive: true });
    await page.click('[data-testid="clear"]');
    await page.click('[data-testid="load-example"]');
    await ready(page);
    assert.match(await page.locator('[data-testid="status"]').textContent(), /12 sets scored/);
    assert.equal(await page.locator('[data-testid="set-row"]').count(), 12, 'Load example gives the 12 example sets');
    await page.waitForSelector('[data-testid="scatter"] canvas');
    await page.fill('[data-testid="threshold"]', '0.8');
    await page.selectOption('[data-testid="timeline-file"]', 'blend_1');
    await page.fill('[data-testid="chunk-rows"]', '200');
    await page.click('[data-testid="build-timeline"]');
    await ready(page);
    assert.match(await page.locator('[data-testid="timeline-note"]').textContent(), /10 chunks of 200 rows/);
    const shot = path.join(artifacts, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(fs.statSync(shot).size > 10_000);
    t.diagnostic(`screenshot: ${shot}`);
  });

  test('the charts name what they show: a text alternative, and a tooltip naming the point under the cursor', async () => {
    for (const id of ['scatter', 'timeline']) {
      const chart = page.locator(`[data-testid="${id}"]`);
      assert.equal(await chart.getAttribute('role'), 'img');
      assert.match(await chart.getAttribute('aria-label'), id === 'scatter' ? /labeled sets/ : /chunks of 200 rows/);
    }
    const over = page.locator('[data-testid="scatter"] .u-over');
    const box = await over.boundingBox();
    const seen = new Set();
    for (let x = 2; x < box.width; x += 3) {
      await page.mouse.move(box.x + x, box.y + box.height / 2);
      const tip = page.locator('[data-testid="scatter"] [data-testid="chart-tip"]');
      if (await tip.isVisible()) seen.add(await tip.textContent());
    }
    const named = [...seen].filter((t) => /^(contrast|blend)_\d: score [\d.]+, (true accuracy|estimate) [\d.]+%$/.test(t));
    assert.ok(named.length >= 6, `tooltips seen: ${[...seen].join(' / ')}`);
    // the band's legend swatch is its fill, not an empty box
    const swatch = await page.locator('[data-testid="scatter"] .u-legend .u-series', { hasText: 'prediction band' }).locator('.u-marker')
      .evaluate((m) => getComputedStyle(m).backgroundColor);
    assert.notEqual(swatch, 'rgba(0, 0, 0, 0)', 'the prediction band has a filled legend swatch');
  });

  test('axe-core finds no serious or critical accessibility violation on the full page', async (t) => {
    // the page as the screenshot shows it: sets, estimates, charts, a timeline
    // evaluated through the DevTools protocol: the page's Content-Security-Policy refuses script tags
    await page.evaluate(fs.readFileSync(path.join(root, 'node_modules/axe-core/axe.min.js'), 'utf8'));
    const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    for (const v of results.violations) t.diagnostic(`${v.impact}: ${v.id} (${v.nodes.length} nodes): ${v.help}`);
    assert.deepEqual(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')})`), []);
  });

  for (const width of [390, 1440]) {
    test(`at ${width} px wide nothing overflows the page sideways`, async (t) => {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(200);  // the charts redraw to their new width
      const overflow = await page.evaluate(() => {
        const doc = document.documentElement;
        const wide = [...document.querySelectorAll('body *')].filter((e) => {
          const r = e.getBoundingClientRect();
          return r.width > 0 && (r.right > doc.clientWidth + 1 || r.left < -1) && !e.closest('.table-wrap');
        }).map((e) => `${e.tagName.toLowerCase()}${e.dataset.testid ? `[${e.dataset.testid}]` : e.className ? `.${e.className}` : ''}`);
        return { scroll: doc.scrollWidth, client: doc.clientWidth, wide: [...new Set(wide)].slice(0, 8) };
      });
      const shot = path.join(artifacts, `dashboard-${width}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      t.diagnostic(`screenshot: ${shot}`);
      assert.ok(overflow.scroll <= overflow.client, `the page is ${overflow.scroll} px wide in a ${overflow.client} px window: ${overflow.wide.join(', ')}`);
      assert.deepEqual(overflow.wide, [], 'elements reaching past the window (outside a scroll box)');
    });
  }
});
