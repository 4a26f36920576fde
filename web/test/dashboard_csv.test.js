// The dashboard (build/dashboard) in Debian's Chromium with CSVs as pandas writes them (issue 43,
// item 11): the index column is left out, the label column gives the labels, and the pairing
// table shows both under the file's name; the set's numbers equal NumPy's
// (tests/reference/inputs_reference.py) within 1e-6.
// Run: node --test web/test/dashboard_csv.test.js
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { haveChromium, CHROMIUM, launchChromium, root, serveDirectory, tempDir } from './support.js';
import { hangGuard, ready, site } from './dashboard_support.js';

const skip = !haveChromium ? `${CHROMIUM} does not exist: no browser to test in`
  : !fs.existsSync(path.join(site, 'index.html')) ? 'build/dashboard is missing: run npm run build' : false;

describe('dashboard: a CSV\'s columns that are not classes (chromium)', { skip, ...hangGuard }, () => {
  let browser, server, dir, want;

  before(async () => {
    dir = tempDir('mano-dashboard-csv-');
    execFileSync('/usr/bin/python3', [path.join(root, 'tests/reference/inputs_reference.py'), dir], { stdio: 'pipe' });
    want = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
    let origin;
    ({ server, origin } = await serveDirectory(site));
    browser = await launchChromium({});
    await browser.page.goto(origin);
    await browser.page.setInputFiles('[data-testid="file-input"]', [path.join(dir, 'pandas_labeled.csv'), path.join(dir, 'ids.csv')]);
    await ready(browser.page);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the pairing table shows what the reader left out and the label column it read', async () => {
    const page = browser.page;
    assert.equal(await page.locator('[data-testid="pairing"]').getAttribute('open'), '', 'the table opens when a CSV had columns left out');
    const notes = await page.locator('[data-testid="file-note"]').allTextContents();
    assert.deepEqual(notes.sort(), [
      "ids.csv: column 1 ('id') holds ids, not a class: left out of the logits",
      "pandas_labeled.csv: column 1 ('') is pandas' index column, not a class: left out of the logits",
      "pandas_labeled.csv: column 12 ('label') holds labels, not a class: it is the label column, left out of the logits",
    ]);
    const rows = await page.locator('[data-testid="pairing-table"] tbody tr').allTextContents();
    assert.ok(rows.some((r) => r.includes('column "label" of pandas_labeled.csv')), rows.join(' | '));
  });

  test('the sets are scored on the classes alone, the labeled one with its labels', async () => {
    const page = browser.page;
    for (const name of ['pandas_labeled', 'ids']) {
      const cells = await page.locator(`[data-testid="set-row"][data-name="${name}"] td`).allTextContents();
      assert.ok(cells.includes(String(want.k)), `${name}: K ${want.k} in ${cells.join(' | ')}`);
      // every method's value, 4 decimals (page.js fmt): MaNo and ConfScore as NumPy's
      const scores = await page.locator('[data-testid="scores-table"] tbody tr').filter({ hasText: name }).first().locator('td').allTextContents();
      for (const m of ['mano', 'confscore'])
        assert.ok(scores.includes(want.csv[m].toFixed(4)), `${name}: ${m} ${want.csv[m]} in ${scores.join(' | ')}`);
    }
    const labeled = await page.locator('[data-testid="set-row"][data-name="pandas_labeled"] td').allTextContents();
    assert.ok(labeled.some((c) => c.includes(`${(100 * want.csv.accuracy).toFixed(1)}%`)),
      `the true accuracy ${want.csv.accuracy} from the label column: ${labeled.join(' | ')}`);
  });
});
