// The dashboard opens a monitoring history made by the native CLI (`mano monitor add`) entirely in
// the page (sql.js, bundled), in Debian's Chromium: the alert line, the alerts and each point's
// status are those of `mano monitor report --json` for the same file (the core's rules on both
// sides), for the default reference period and for one given; a file that is not a history gets
// one message naming it and the page stays usable; no request leaves 127.0.0.1.
// The site is build/dashboard (npm run build), or $MANO_DASHBOARD_DIR.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CHROMIUM, foreignRequests, haveChromium, launchChromium, nativeMano, root, serveDirectory, tempDir } from './support.js';

const site = process.env.MANO_DASHBOARD_DIR ?? path.join(root, 'build/dashboard');
const example = path.join(root, 'tests/data/example');
const file = (name) => path.join(example, name);

// mano monitor report --json: [exit status, report]
function report(history, ...args) {
  const run = spawnSync(nativeMano, ['monitor', 'report', history, '--json', ...args], { encoding: 'utf8' });
  assert.ok(run.status === 0 || run.status === 3, run.stderr);
  return [run.status, JSON.parse(run.stdout)];
}

const cliStatus = (p) => (p.reference ? 'reference' : p.calibration_changed ? 'other calibration: not compared'
  : p.estimate === null ? 'no estimate' : p.alert ? 'ALERT' : 'ok');

const skip = !haveChromium ? `${CHROMIUM} does not exist: no browser to test in`
  : !fs.existsSync(path.join(site, 'index.html')) ? `${site} is missing: run npm run build`
    : !fs.existsSync(nativeMano) ? `${nativeMano} is missing: build the CLI` : false;

describe('dashboard: a monitoring history (chromium)', { skip }, () => {
  let browser;
  let server;
  let origin;
  let page;
  let tmp;
  let history;
  const requests = [];
  const problems = [];

  before(async () => {
    tmp = tempDir('mano-monitor-');
    const cal = path.join(tmp, 'cal.json');
    history = path.join(tmp, 'history.db');
    execFileSync(nativeMano, ['calibrate', file('manifest.json'), '-o', cal, '--quiet']);
    const add = (...args) => execFileSync(nativeMano, ['monitor', 'add', history, ...args, '--calibration', cal, '--quiet'], { stdio: 'ignore' });
    add(file('contrast_0_logits.npy'), '--chunk-size', '500', '--at', '2026-11-01');  // the reference period: 4 points
    add(file('blend_0_logits.npy'), '--at', '2026-11-02');
    add(file('contrast_5_logits.npy'), '--at', '2026-11-03');  // a much harder batch
    ({ server, origin } = await serveDirectory(site));
    browser = await launchChromium({ requests, problems });
    page = browser.page;
    await page.goto(origin);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function shown() {
    const note = page.locator('[data-testid="history-note"]');
    const rows = page.locator('[data-testid="history-row"]');
    return {
      threshold: Number(await note.getAttribute('data-threshold')),
      reference: Number(await note.getAttribute('data-reference')),
      alerts: JSON.parse(await note.getAttribute('data-alerts')),
      statuses: await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.status)),
      cells: await rows.evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent))),
      alertText: (await page.locator('[data-testid="history-alerts"] li').allTextContents()).join(' / '),
    };
  }

  test('the page shows the alert line, the alerts and the points of mano monitor report', async () => {
    await page.setInputFiles('[data-testid="file-input"]', history);
    await page.waitForSelector('[data-testid="history-timeline"] canvas', { timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state !== 'busy');
    const [status, want] = report(history);
    // the status says what is open, not "Add files to start"
    assert.equal(await page.locator('[data-testid="status"]').textContent(),
      `The monitoring history history.db is open (${want.points.length} points, below).`);
    assert.equal(status, 3, 'the CLI alerts on the latest point');
    const got = await shown();
    assert.ok(Math.abs(got.threshold - want.threshold.value) < 1e-12, `threshold ${got.threshold} vs ${want.threshold.value}`);
    assert.equal(got.reference, want.reference.points);
    assert.deepEqual(got.alerts, want.alerts);
    assert.deepEqual(got.statuses, want.points.map(cliStatus));
    want.points.forEach((p, i) => {
      assert.equal(got.cells[i][0], p.time);
      assert.equal(got.cells[i][1], p.name);
      assert.equal(got.cells[i][4], `${(100 * p.estimate.accuracy).toFixed(1)}%`);
    });
    assert.match(got.alertText, new RegExp(`^1 point below ${(100 * want.threshold.value).toFixed(1)}%: .*contrast_5_logits\\.npy`));
    assert.match(got.alertText, /latest point: ALERT/);
  });

  test('a reference period given: the same line as mano monitor report --reference', async () => {
    await page.fill('[data-testid="history-reference"]', '5');
    await page.dispatchEvent('[data-testid="history-reference"]', 'change');
    await page.waitForFunction(() => document.querySelector('[data-testid="history-note"]').dataset.reference === '5');
    const [, want] = report(history, '--reference', '5');
    const got = await shown();
    assert.ok(Math.abs(got.threshold - want.threshold.value) < 1e-12);
    assert.deepEqual(got.alerts, want.alerts);
    assert.deepEqual(got.statuses, want.points.map(cliStatus));
  });

  test('the first add alone: not enough points yet, as mano monitor report says (exit 0)', async () => {
    const first = path.join(tmp, 'first.db');
    execFileSync(nativeMano, ['monitor', 'add', first, file('contrast_0_logits.npy'), '--chunk-size', '500', '--at', '2026-11-01',
      '--calibration', path.join(tmp, 'cal.json'), '--quiet'], { stdio: 'ignore' });
    const [status, want] = report(first);
    assert.equal(status, 0);
    assert.equal(want.waiting, true);
    await page.fill('[data-testid="history-reference"]', '');  // the default reference: the first add's points
    await page.setInputFiles('[data-testid="file-input"]', first);
    await page.waitForFunction(() => /not enough points yet/.test(document.querySelector('[data-testid="history-note"]').textContent));
    const got = await shown();
    assert.ok(Math.abs(got.threshold - want.threshold.value) < 1e-12);
    assert.deepEqual(got.alerts, []);
    await page.fill('[data-testid="history-reference"]', '5');
    await page.setInputFiles('[data-testid="file-input"]', history);
    await page.waitForFunction(() => document.querySelector('[data-testid="history-note"]').dataset.reference === '5');
  });

  // A history of schema version 1 (src/mano/schema/history_v1.sql, with points.fallback), as mano
  // wrote them before version 2: the good one's rows copied into it, then one add by the CLI.
  test('a history of schema version 1: shown as mano monitor report shows it', async () => {
    const old = path.join(tmp, 'version1.db');
    execFileSync('/usr/bin/python3', ['-c', [
      'import sqlite3, sys',
      'new, old, sql = sys.argv[1:4]',
      'db = sqlite3.connect(old)',
      'db.executescript(open(sql).read())',
      "db.execute('ATTACH DATABASE ? AS new', (new,))",
      "for t in ('meta', 'calibrations', 'adds', 'estimates'): db.execute(f'INSERT INTO {t} SELECT * FROM new.{t}')",
      "cols = ', '.join(r[1] for r in db.execute('PRAGMA new.table_info(points)'))",
      "db.execute(f'INSERT INTO points ({cols}, fallback) SELECT {cols}, 0 FROM new.points')",
      "db.execute(\"UPDATE meta SET value = '1' WHERE key = 'schema_version'\")",
      "db.commit()",
      "db.execute('DETACH DATABASE new')",
      "db.execute('PRAGMA user_version = 1')",
      'db.close()'].join('\n'), history, old, path.join(root, 'src/mano/schema/history_v1.sql')]);
    execFileSync(nativeMano, ['monitor', 'add', old, file('blend_0_logits.npy'), '--at', '2026-11-04',
      '--calibration', path.join(tmp, 'cal.json'), '--quiet'], { stdio: 'ignore' });
    const [, want] = report(old, '--reference', '5');
    await page.setInputFiles('[data-testid="file-input"]', old);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="history-row"]').length === n, want.points.length);
    const got = await shown();
    assert.ok(Math.abs(got.threshold - want.threshold.value) < 1e-12);
    assert.deepEqual(got.alerts, want.alerts);
    assert.deepEqual(got.statuses, want.points.map(cliStatus));
    await page.setInputFiles('[data-testid="file-input"]', history);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="history-row"]').length === n, want.points.length - 1);
  });

  test('a file that is not a history: one message naming it; the page stays usable', async () => {
    const bad = path.join(tmp, 'notes.db');
    fs.writeFileSync(bad, 'time,accuracy\n2026-11-01,0.9\n'.repeat(20));
    await page.setInputFiles('[data-testid="file-input"]', bad);
    await page.waitForFunction(() => /notes\.db: not a mano history/.test(document.querySelector('[data-testid="errors"]').textContent));
    await page.setInputFiles('[data-testid="file-input"]', history);
    await page.waitForFunction(() => document.querySelector('[data-testid="history-note"]').dataset.reference === '5');
  });

  // A history is untrusted input (docs/monitor.md): a copy of the good one with SQL run on it by
  // Python's sqlite3, then opened in the page.
  function planted(label, ...statements) {
    const copy = path.join(tmp, `${label}.db`);
    fs.copyFileSync(history, copy);
    execFileSync('/usr/bin/python3', ['-c', 'import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n' +
      'for s in sys.argv[2:]:\n    db.execute(s)\ndb.commit()\ndb.close()', copy, ...statements]);
    return copy;
  }
  const recursive = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c';

  test('a planted view or trigger, or a damaged point: one message naming the file, nothing run; the page stays usable', async () => {
    const cases = [
      [planted('view', `CREATE VIEW forever AS ${recursive}`), /view\.db: refused: its schema has a view "forever" that mano does not write/],
      [planted('points_view', 'ALTER TABLE points RENAME TO kept', `CREATE VIEW points AS SELECT * FROM kept, (${recursive})`),
        /points_view\.db: refused: its schema has/],
      [planted('trigger', 'CREATE TRIGGER eat AFTER INSERT ON points BEGIN DELETE FROM points WHERE id < NEW.id; END'),
        /trigger\.db: refused: its schema has a trigger "eat"/],
      [planted('huge', "UPDATE points SET prediction = json_set(prediction, '$.estimate.accuracy', 1e300) WHERE id = 5"),
        /huge\.db: the history is damaged \(point 5: its estimated accuracy is not a number in \[0, 1\]\)/],
      [planted('text', "UPDATE points SET prediction = json_set(prediction, '$.estimate.accuracy', '0.5') WHERE id = 5"),
        /text\.db: the history is damaged \(point 5: its estimated accuracy/],
      // 21 bytes: over the column's limit before its format is read
      [planted('time', "UPDATE points SET time = '10000-01-01T00:30:00Z' WHERE id = 5"),
        /time\.db: the history is damaged \(point 5: its time .*YYYY-MM-DDTHH:MM:SSZ\)/],
    ];
    // Issue 50, finding 4: a value over its column's limit (history_limits.json), refused before it
    // is parsed, and a key that mano does not write; the CLI says the same words
    const limit = JSON.parse(fs.readFileSync(path.join(root, 'src/mano/schema/history_limits.json'), 'utf8')).columns.points.prediction.max_bytes;
    const both = [
      [planted('huge_array', "UPDATE points SET prediction = json_set(prediction, '$.extra', " +
        "json('[' || substr(replace(hex(zeroblob(6000000)), '00', '0,'), 1, 11999999) || ']')) WHERE id = 5"),
        new RegExp(`huge_array\\.db: the history is damaged \\(point 5: its prediction is \\d+ bytes, over the ${limit}-byte limit of points\\.prediction`)],
      [planted('extra_key', "UPDATE points SET prediction = json_set(prediction, '$.extra', json('[1, 2, 3]')) WHERE id = 5"),
        /extra_key\.db: the history is damaged \(point 5: its prediction holds the key "extra", which mano does not write\)/],
      [planted('method_key', "UPDATE points SET prediction = json_set(prediction, '$.methods.mano.extra', 1) WHERE id = 5"),
        /method_key\.db: the history is damaged \(point 5: its prediction holds the key "extra" in methods\.mano, which mano does not write\)/],
      [planted('method', "UPDATE points SET prediction = json_set(prediction, '$.methods.zzz', json_extract(prediction, '$.methods.mano')) WHERE id = 5"),
        /method\.db: the history is damaged \(point 5: its prediction holds the key "zzz" in methods, which mano does not write\)/],
    ];
    for (const [bad, message] of [...cases, ...both]) {
      const cli = spawnSync(nativeMano, ['monitor', 'report', bad], { encoding: 'utf8' });
      assert.equal(cli.status, 2, `the CLI refuses ${bad} too: ${cli.stderr}`);
      if (both.some(([b]) => b === bad)) assert.match(cli.stderr, message);
      await page.setInputFiles('[data-testid="file-input"]', bad);
      await page.waitForFunction((source) => new RegExp(source).test(document.querySelector('[data-testid="errors"]').textContent),
        message.source, { timeout: 30_000 });
    }
    await page.setInputFiles('[data-testid="file-input"]', history);
    await page.waitForFunction(() => document.querySelector('[data-testid="history-note"]').dataset.reference === '5');
  });

  test('axe-core finds no serious or critical accessibility violation with the history shown', async () => {
    // the error list's items (a role="alert" list) are the page's own matter: dismissed first
    const close = page.locator('[data-testid="errors"] li button');
    while (await close.count()) await close.first().click();
    await page.evaluate(fs.readFileSync(path.join(root, 'node_modules/axe-core/axe.min.js'), 'utf8'));
    const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')})`), []);
  });

  test('nothing leaves the machine, and the page logged no error', () => {
    assert.deepEqual(foreignRequests(requests, origin), []);
    assert.deepEqual(problems, []);
  });
});
