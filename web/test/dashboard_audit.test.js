// Audit mode in the dashboard (build/dashboard) in Debian's Chromium: the example's contrast sets
// with labels calibrate, the blend sets come without; the rows to label of blend_2 are exported
// (they must be the file `mano audit` writes), labeled from blend_2's labels file and given back;
// the audited interval the page shows and exports must be `mano predict --audit`'s. Nothing is
// uploaded: no request leaves 127.0.0.1.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  CHROMIUM, compareDeep, foreignRequests, haveChromium, labeledAudit as labeled, nativeMano, npyLabels, runNative, writeNpy,
} from './support.js';
import { blend, contrast, example, file, openWithExample, ready, site } from './dashboard_support.js';

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const range = ([lo, hi]) => `[${pct(lo)}, ${pct(hi)}]`;


async function downloaded(page, testid) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="${testid}"]`)]);
  return { name: download.suggestedFilename(), text: fs.readFileSync(await download.path(), 'utf8') };
}

const skip = !haveChromium ? `${CHROMIUM} does not exist: no browser to test in`
  : !fs.existsSync(path.join(site, 'index.html')) ? 'build/dashboard is missing: run npm run build' : false;

describe('dashboard audit mode (chromium)', { skip }, () => {
  let browser, server, origin, page, tmp, calFile;
  const requests = [];
  const problems = [];

  before(async () => {
    ({ server, origin, browser, page, tmp } = await openWithExample({ requests, problems, tmpPrefix: 'mano-dashboard-audit-' }));
    const manifest = path.join(tmp, 'contrast.json');
    fs.writeFileSync(manifest, JSON.stringify({
      source: { logits: file('source_logits.npy'), labels: file('source_labels.npy') },
      sets: contrast.map((name) => ({ name, logits: file(`${name}_logits.npy`), labels: file(`${name}_labels.npy`) })),
    }));
    calFile = path.join(tmp, 'cal.json');
    execFileSync(nativeMano, ['calibrate', manifest, '--allow-outside-paths', '-o', calFile, '--quiet']);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('a set wider than 0.25 says how many labels would bring it to ±0.125, as mano predict does', async () => {
    // a small batch: 100 rows of blend_3, whose interval is wider than 0.25
    const small = path.join(tmp, 'small_logits.npy');
    const bytes = fs.readFileSync(file('blend_3_logits.npy'));
    const start = bytes.byteOffset + 10 + bytes.readUInt16LE(8);  // a version 1 .npy header
    writeNpy(small, new Float32Array(bytes.buffer.slice(start, start + 100 * 10 * 4)), [100, 10]);
    await page.setInputFiles('[data-testid="file-input"]', small);
    await ready(page);
    const want = runNative(['predict', '--calibration', calFile, '--json', '--quiet', small]);
    assert.ok(want.labels_for_width, `100 rows of blend_3 give an interval wider than 0.25: ${JSON.stringify(want.estimate)}`);
    // it is the seventh unlabeled set: past the headline's six cards, the Audit panel says it
    await page.selectOption('[data-testid="audit-set"]', 'small');
    const note = await page.locator('[data-testid="audit-note"]').textContent();
    assert.ok(note.includes(`${want.labels_for_width.n} labels would bring it to ±0.125`), note);
    assert.equal(await page.locator('[data-testid="audit-budget"]').inputValue(), String(want.labels_for_width.n));
    assert.equal(await page.locator('[data-testid="audit-panel"]').isVisible(), true);
  });

  test('the rows to label are mano audit\'s file; the labeled file back gives mano predict --audit\'s interval', async () => {
    await page.selectOption('[data-testid="audit-set"]', 'blend_2');
    await page.fill('[data-testid="audit-budget"]', '40');
    await page.fill('[data-testid="audit-seed"]', '7');
    const rows = await downloaded(page, 'audit-export');
    assert.equal(rows.name, 'blend_2_audit.csv');
    const cliRows = path.join(tmp, 'cli_rows.csv');
    // run where the file is, so that the comment line names it as the browser does (a page sees no paths)
    execFileSync(nativeMano, ['audit', 'blend_2_logits.npy', '--budget', '40', '--seed', '7', '-o', cliRows], { cwd: example });
    assert.equal(rows.text, fs.readFileSync(cliRows, 'utf8'), 'the CSV mano audit writes, byte for byte');

    const labels = npyLabels(file('blend_2_labels.npy'));
    const labeledFile = path.join(tmp, 'blend_2_labeled.csv');
    fs.writeFileSync(labeledFile, labeled(rows.text, labels));
    const want = runNative(['predict', '--calibration', calFile, '--json', '--quiet', file('blend_2_logits.npy'), '--audit', labeledFile]);
    assert.equal(want.audit.method, 'ppi');
    await page.setInputFiles('[data-testid="audit-file"]', labeledFile);
    const shown = page.locator('[data-testid="estimate-card"][data-name="blend_2"] [data-testid="audited"]');
    await shown.waitFor({ timeout: 30_000 });
    const a = want.audit;
    assert.equal(await shown.textContent(), `${pct(a.accuracy)} ${range(a.interval)} from ${a.n} labeled rows with the ` +
      `correctness model (PPI) · labels alone (Wilson) ${range(a.wilson)}`);
    const card = await page.locator('[data-testid="estimate-card"][data-name="blend_2"]').textContent();
    assert.ok(card.startsWith('Audited accuracy · blend_2'), card);
    assert.ok(card.includes(`label-free: ${pct(want.estimate.accuracy)} ${range(want.estimate.interval)} by ${want.estimate.method}`), card);
    const cells = await page.locator('[data-testid="set-row"][data-name="blend_2"] td').allTextContents();
    assert.ok(cells.includes(`${pct(a.accuracy)} ${range(a.interval)} ${a.n} labels`), cells.join(' | '));

    // the exports carry the audit at full precision
    const json = JSON.parse((await downloaded(page, 'export-json')).text);
    const set = json.sets.find((s) => s.name === 'blend_2');
    assert.deepEqual(compareDeep(set.audit, { ...a, file: 'blend_2_labeled.csv' }, 1e-9), []);
    const csv = (await downloaded(page, 'export-csv')).text.trim().split('\n').map((l) => l.split(','));
    const col = (name) => csv[0].indexOf(name);
    const row = csv.find((r) => r[0] === 'blend_2');
    assert.ok(col('audit_accuracy') > 0, csv[0].join(','));
    assert.equal(Number(row[col('audit_n')]), a.n);
    assert.ok(Math.abs(Number(row[col('audit_lower')]) - a.interval[0]) < 1e-9 && Math.abs(Number(row[col('audit_upper')]) - a.interval[1]) < 1e-9);
    assert.equal(row[col('audit_method')], 'ppi');
    assert.equal(csv.find((r) => r[0] === 'blend_0')[col('audit_n')], '', 'a set not audited has empty audit columns');
  });

  test('under 10 labels the card says Wilson on the labels alone, with mano predict --audit\'s interval', async () => {
    await page.selectOption('[data-testid="audit-set"]', 'blend_1');
    await page.fill('[data-testid="audit-budget"]', '9');
    await page.fill('[data-testid="audit-seed"]', '3');
    const rows = await downloaded(page, 'audit-export');
    const labeledFile = path.join(tmp, 'blend_1_labeled.csv');
    fs.writeFileSync(labeledFile, labeled(rows.text, npyLabels(file('blend_1_labels.npy'))));
    const want = runNative(['predict', '--calibration', calFile, '--json', '--quiet', file('blend_1_logits.npy'), '--audit', labeledFile]);
    assert.equal(want.audit.method, 'wilson');
    await page.setInputFiles('[data-testid="audit-file"]', labeledFile);
    const shown = page.locator('[data-testid="estimate-card"][data-name="blend_1"] [data-testid="audited"]');
    await shown.waitFor({ timeout: 30_000 });
    const a = want.audit;
    assert.equal(await shown.textContent(), `${pct(a.accuracy)} ${range(a.interval)} from 9 labeled rows ` +
      `(n < 10 labels: Wilson on the labels alone) · labels alone (Wilson) ${range(a.wilson)}`);
  });

  test('a bad labeled file is one clear message and the page stays usable', async () => {
    const bad = path.join(tmp, 'bad.csv');
    fs.writeFileSync(bad, 'row,weight,label\n1,1,3\n1,1,4\n');
    await page.setInputFiles('[data-testid="audit-file"]', bad);
    const errors = page.locator('[data-testid="errors"] li');
    await errors.last().waitFor();
    assert.match(await errors.last().textContent(), /^bad\.csv, line 3, column 1 \(row\): row 1 is listed twice/);
    assert.equal(await page.locator('[data-testid="status"]').getAttribute('data-state'), 'ready');
    // the rows of an edited record of the draw (blend_1's labeled file, its seed 3 made 4) are refused too
    const edited = path.join(tmp, 'edited.csv');
    fs.writeFileSync(edited, fs.readFileSync(path.join(tmp, 'blend_1_labeled.csv'), 'utf8').replace('with seed 3 ', 'with seed 4 '));
    await page.setInputFiles('[data-testid="audit-file"]', edited);
    await page.waitForFunction(() => document.querySelector('[data-testid="errors"] li:last-child')?.textContent.startsWith('edited.csv'));
    assert.match(await errors.last().textContent(),
      /^edited\.csv, line \d+, column 1 \(row\): row \d+ is not in the draw of seed 4 \(9 of the 2000 rows\) that line 1 records/);
    assert.equal(await page.locator('[data-testid="status"]').getAttribute('data-state'), 'ready');
  });

  test('nothing left this machine', () => {
    assert.deepEqual(foreignRequests(requests, origin), []);
    assert.deepEqual(problems, []);
  });
});
