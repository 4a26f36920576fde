// The dashboard (build/dashboard) in Debian's Chromium, on what it says rather than what it
// computes (dashboard.test.js holds the numbers against the CLI): with every set labeled, each
// set's estimate beside its truth (those of `mano predict` with the page's calibration); the
// regime in the words of the prediction's own fields; the timeline's true-accuracy points, its
// alerts and its last tick; and .npz files (numpy.savez, stored and deflated) opened as the CLI reads them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CHROMIUM, compareDeep, PARITY, haveChromium, launchChromium, nativeMano, runNative, serveDirectory, tempDir } from './support.js';
import { blend, contrast, example, file, hangGuard, ready, site } from './dashboard_support.js';

const everyFile = fs.readdirSync(example).filter((n) => n.endsWith('.npy')).sort().map(file);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
// the page's operation ended, whatever it left (ready with sets, idle without)
const settled = (page) => page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state !== 'busy', null, { timeout: 0 });

async function exported(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-json"]')]);
  return JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
}

// the set rows' cells under the table's header, by set name
async function tableCells(page) {
  return page.evaluate(() => {
    const head = [...document.querySelectorAll('[data-testid="sets-table"] th')].map((th) => th.textContent);
    return Object.fromEntries([...document.querySelectorAll('[data-testid="set-row"]')].map((tr) =>
      [tr.dataset.name, Object.fromEntries(head.map((h, i) => [h, { text: tr.children[i].textContent, title: tr.children[i].firstElementChild?.title ?? '' }]))]));
  });
}

const skip = !haveChromium ? `${CHROMIUM} does not exist: no browser to test in`
  : !fs.existsSync(path.join(site, 'index.html')) ? 'build/dashboard is missing: run npm run build'
    : !fs.existsSync(nativeMano) ? `${nativeMano} is missing: build the CLI` : false;

describe('dashboard views (chromium)', { skip, ...hangGuard }, () => {
  let browser;
  let server;
  let page;
  let tmp;
  const problems = [];

  before(async () => {
    tmp = tempDir('mano-dashboard-views-');
    ({ server } = await serveDirectory(site));
    browser = await launchChromium({ problems });
    page = browser.page;
    await page.setViewportSize({ width: 1360, height: 900 });
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('with every set labeled, each set shows its estimate beside its truth, as mano predict gives it', async () => {
    await page.setInputFiles('[data-testid="file-input"]', everyFile);
    await ready(page);
    const { sets, calibration } = await exported(page);
    assert.equal(sets.length, 12);
    const cal = path.join(tmp, 'all.json');
    fs.writeFileSync(cal, JSON.stringify(calibration));
    const names = sets.map((s) => s.name);
    const want = execFileSync(nativeMano, ['predict', '--calibration', cal, '--json', '--quiet', ...names.map((n) => file(`${n}_logits.npy`))],
      { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    const cells = await tableCells(page);
    // In-sample, the sets with a method's lowest and highest scores are its calibration range's ends:
    // whether such a score lies beyond them ("extrapolated") turns on rounding, which differs between
    // kernels (native AVX-512 or AVX2, WebAssembly), so it is not compared there.
    const atEdge = (m, score) => {
      const all = want.map((w) => w.methods[m]?.score).filter(Number.isFinite);
      return [Math.min(...all), Math.max(...all)].some((end) => Math.abs(score - end) <= 1e-6 * Math.max(1, Math.abs(end)));
    };
    const comparable = (e, w) => (atEdge(e.method, w.methods[e.method]?.score) ? { ...e, extrapolated: undefined } : e);
    sets.forEach((s, i) => {
      assert.ok(s.accuracy > 0, `${s.name} is labeled`);
      assert.deepEqual(compareDeep(comparable(s.estimate, want[i]), comparable(want[i].estimate, want[i]), PARITY, `${s.name} estimate`), []);
      const row = cells[s.name];
      assert.equal(row['true accuracy'].text, pct(s.accuracy));
      assert.ok(row['estimate [90%]'].text.startsWith(`${pct(s.estimate.accuracy)} [${pct(s.estimate.interval[0])}, `), `${s.name}: ${row['estimate [90%]'].text}`);
      assert.match(row['estimate [90%]'].title, /in-sample: the calibration was fitted on this set/);
    });
    // a labeled set's estimate is not a headline: the truth is known
    assert.equal(await page.locator('[data-testid="estimate-card"]').count(), 0);
  });

  test('a timeline with labeled sets draws them as true accuracy; its alerts say so; its last tick is whole', async () => {
    await page.fill('[data-testid="threshold"]', '0.99');
    await page.selectOption('[data-testid="timeline-file"]', { index: 0 });
    await page.click('[data-testid="build-timeline"]');
    await ready(page);
    await page.waitForSelector('[data-testid="timeline"] canvas');
    const legend = await page.locator('[data-testid="timeline"] .u-legend .u-series').allTextContents();
    assert.ok(legend.some((t) => /true accuracy \(labeled set\)/.test(t)), `legend: ${legend.join(' / ')}`);
    const alerts = (await page.locator('[data-testid="timeline-alerts"] li').allTextContents()).join(' / ');
    assert.match(alerts, /^12 sets below 99\.0%: blend_0 \(true accuracy \d+\.\d%\), /);
    assert.doesNotMatch(alerts, /\(true accuracy\) \(/);
    assert.match(await page.locator('[data-testid="timeline-note"]').textContent(), /the 12 labeled sets: true accuracy/);
    const { timeline } = await exported(page);
    assert.ok(timeline.points.every((p) => p.truth && !/\(/.test(p.name)), JSON.stringify(timeline.points[0]));
    // the x axis's labels (below the plot) leave the canvas's last columns empty: the last one is not cut off
    const inked = await page.evaluate(() => {
      const canvas = document.querySelector('[data-testid="timeline"] canvas');
      const over = document.querySelector('[data-testid="timeline"] .u-over').getBoundingClientRect();
      const box = canvas.getBoundingClientRect();
      const scale = canvas.width / box.width;
      const top = Math.ceil((over.bottom - box.top) * scale);
      const { data } = canvas.getContext('2d').getImageData(canvas.width - 3 * scale, top, 3 * scale, canvas.height - top);
      return data.some((v, i) => i % 4 === 3 && v > 0);
    });
    assert.equal(inked, false, 'the last x tick label reaches the canvas edge');
  });

  test('the regime is said from the prediction\'s own fields, as mano predict reports it', async () => {
    await page.click('[data-testid="clear"]');
    const files = [...contrast.flatMap((s) => [`${s}_logits.npy`, `${s}_labels.npy`]), ...blend.map((s) => `${s}_logits.npy`),
      'source_logits.npy', 'source_labels.npy'].map(file);
    await page.setInputFiles('[data-testid="file-input"]', files);
    await ready(page);
    const { sets } = await exported(page);
    const cells = await tableCells(page);
    for (const name of blend) {
      const s = sets.find((x) => x.name === name);
      const said = cells[name]['estimate [90%]'].title;
      assert.doesNotMatch(said, /class mix moved/, `${name}: ${said}`);
      if (s.estimate.regime === 'label_shift') assert.match(said, /label-shift regime: the set passes the label-shift check/, `${name}: ${said}`);
      else assert.doesNotMatch(said, /label-shift regime/, `${name}: ${said}`);
    }
    assert.ok(sets.some((s) => s.estimate?.regime === 'label_shift'), 'some blend set is in the label-shift regime (else this test checks less)');
  });

  test('an .npz of logits and labels (stored or deflated) and one of a single array open as mano reads them', async () => {
    await page.click('[data-testid="clear"]');
    const [stored, deflated, single] = ['week_a.npz', 'week_b.npz', 'week_c_logits.npz'].map((n) => path.join(tmp, n));
    execFileSync('/usr/bin/python3', ['-c', `import numpy as np, sys
x = np.load(sys.argv[1]); y = np.load(sys.argv[2])
np.savez(sys.argv[3], logits=x, labels=y); np.savez_compressed(sys.argv[4], logits=x, labels=y); np.savez_compressed(sys.argv[5], x)`,
    file('contrast_1_logits.npy'), file('contrast_1_labels.npy'), stored, deflated, single]);
    await page.setInputFiles('[data-testid="file-input"]', [stored, deflated, single]);
    await settled(page);
    const errors = await page.locator('[data-testid="errors"] li').allTextContents();
    assert.deepEqual(errors, []);
    const { sets } = await exported(page);
    assert.deepEqual(sets.map((s) => s.name).sort(), ['week_a', 'week_b', 'week_c']);
    // the CLI reads the archive's logits; its true accuracy is that of the set's own files
    const want = runNative(['score', '--json', '--quiet', '--normalization', 'softrun', stored]);
    const truth = runNative(['eval', '--json', '--quiet', '--normalization', 'softrun', path.join(example, 'manifest.json')])
      .sets.find((x) => x.name === 'contrast_1').accuracy;
    for (const s of sets) {
      assert.deepEqual(compareDeep(s.methods.mano, want.methods.mano, PARITY, s.name), []);
      if (s.name === 'week_c') assert.equal(s.accuracy, undefined);
      else assert.ok(Math.abs(s.accuracy - truth) < 1e-12, `${s.name}: ${s.accuracy} != ${truth}`);
    }
    // a damaged archive: one line naming it, and the page goes on
    const broken = path.join(tmp, 'broken.npz');
    fs.writeFileSync(broken, 'PK not really a zip');
    await page.setInputFiles('[data-testid="file-input"]', broken);
    await settled(page);
    assert.ok((await page.locator('[data-testid="errors"] li').allTextContents()).some((e) => /^broken\.npz: not a ZIP archive/.test(e)));
    assert.deepEqual(problems, []);
  });
});
