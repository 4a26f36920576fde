// Does the dashboard score at the library's pace? The same files (the 26 .npy files of
// tests/data/example that the dashboard's tests drop: 12 sets with their labels and the source
// set) timed twice on this machine: (i) the package under Node (dist/), making the calls the
// dashboard needs in its Worker's own operations (web/src/worker.js: read the source, calibrate
// the labeled files as `mano calibrate` does, score each unlabeled set with the calibration,
// predict every set), and (ii) the dashboard in Debian's Chromium, from dropping the files until
// its sets table shows every set's estimate. Prints both, and their ratio (issue 53: at most 2).
//   npm run build && node bench/perf/dashboard_speed.mjs [--quick] [--runs N]
// --quick: 3 labeled sets and 1 unlabeled one (what web/test/dashboard_speed.test.js runs).
import fs from 'node:fs';
import path from 'node:path';

import { launchChromium, root, serveDirectory } from '../../web/test/support.js';

const quick = process.argv.includes('--quick');
const runsAt = process.argv.indexOf('--runs');
const runs = runsAt > 0 ? Number(process.argv[runsAt + 1]) : quick ? 1 : 3;
const example = path.join(root, 'tests/data/example');
const site = path.join(root, 'build/dashboard');
const LEVEL = 0.9;

// the files: every .npy of the example (or, --quick, three labeled sets and one unlabeled)
const names = quick
  ? ['contrast_0', 'contrast_1', 'contrast_2'].flatMap((s) => [`${s}_logits.npy`, `${s}_labels.npy`])
    .concat(['blend_0_logits.npy', 'source_logits.npy', 'source_labels.npy'])
  : fs.readdirSync(example).filter((n) => n.endsWith('.npy')).sort();
const setsOf = (list) => list.filter((n) => n.endsWith('_logits.npy') && !n.startsWith('source'))
  .map((n) => n.replace(/_logits\.npy$/, '')).map((name) => ({ name, labels: list.includes(`${name}_labels.npy`) }));
const sets = setsOf(names);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// (i) the Worker's operations called in this process (the module the dashboard's Worker runs)
async function nodeRun(handleMessage) {
  const file = (n) => new File([fs.readFileSync(path.join(example, n))], n);
  let id = 0;
  const call = (op, args) => new Promise((resolve, reject) => {
    handleMessage({ id: ++id, op, args }, (m) => {
      if (m.type === 'result') resolve(m.value);
      else if (m.type === 'error') reject(new Error(`${op}: ${m.message}`));
    });
  });
  const started = performance.now();
  const [logits, labels] = [await call('read', { file: file('source_logits.npy') }), await call('read', { file: file('source_labels.npy') })];
  const options = { source: { logits: logits.data, labels: labels.data, dtype: logits.dtype } };
  const labeled = sets.filter((s) => s.labels);
  const family = await call('calibrateFiles', {
    sets: labeled.map((s) => ({ name: s.name, file: file(`${s.name}_logits.npy`), labels: file(`${s.name}_labels.npy`) })), options,
  });
  const { calibration } = family;
  const estimates = [];
  for (const s of sets) {
    const result = s.labels ? family.sets.find((x) => x.name === s.name).result
      : (await call('scoreFile', { file: file(`${s.name}_logits.npy`), options: { calibration } })).result;
    estimates.push((await call('predict', { calibration, result, level: LEVEL })).estimate);
  }
  if (estimates.some((e) => !e)) throw new Error('node: a set has no estimate');
  return (performance.now() - started) / 1000;
}

// (i') the same through the package's array API, for reference: every file read whole
// (readMatrix), the labeled sets calibrated (calibrate), each set scored with the calibration
// (score) and predicted (predict)
async function nodeArrayRun(mano) {
  const started = performance.now();
  const read = async (n) => mano.readMatrix(fs.readFileSync(path.join(example, n)), { name: n });
  const [logits, labels] = [await read('source_logits.npy'), await read('source_labels.npy')];
  const options = { source: { logits: logits.data, labels: labels.data, dtype: logits.dtype } };
  const matrices = new Map();
  for (const s of sets) matrices.set(s.name, await read(`${s.name}_logits.npy`));
  const labeled = [];
  for (const s of sets.filter((x) => x.labels)) {
    const m = matrices.get(s.name);
    labeled.push({ name: s.name, logits: m.data, shape: { rows: m.rows, cols: m.cols, dtype: m.dtype }, labels: (await read(`${s.name}_labels.npy`)).data });
  }
  const calibration = mano.calibrate(labeled, options);
  for (const s of sets) {
    const m = matrices.get(s.name);
    const result = mano.score(m.data, { rows: m.rows, cols: m.cols, dtype: m.dtype }, { calibration });
    if (!mano.predict(calibration, result, { level: LEVEL }).estimate) throw new Error('node: a set has no estimate');
  }
  return (performance.now() - started) / 1000;
}

// (ii) the dashboard: the files dropped into its file input, until it is done (its status goes
// from idle to ready: web/dashboard/page.js); -> { seconds, shown: the sets whose estimate it shows }
async function dashboardRun(page) {
  const started = performance.now();
  await page.setInputFiles('[data-testid="file-input"]', names.map((n) => path.join(example, n)));
  await page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state === 'ready', null,
    { timeout: 0, polling: 50 });
  const seconds = (performance.now() - started) / 1000;
  const shown = await page.evaluate(() => {
    const head = [...document.querySelectorAll('[data-testid="sets-table"] th')].map((th) => th.textContent);
    const at = head.findIndex((h) => h.startsWith('estimate ['));
    return [...document.querySelectorAll('[data-testid="set-row"]')].filter((r) => at >= 0 && r.children[at].textContent !== '–').length;
  });
  return { seconds, shown };
}

const mano = await import(path.join(root, 'dist/index.js'));
await mano.init();
const { handleMessage } = await import(path.join(root, 'dist/worker.js'));
const nodeTimes = [];
const arrayTimes = [];
for (let i = 0; i < runs; i++) {
  nodeTimes.push(await nodeRun(handleMessage));
  arrayTimes.push(await nodeArrayRun(mano));
}

const { server, origin } = await serveDirectory(site);
const browser = await launchChromium();
const dashTimes = [];
let shownAll = 0;
try {
  const { page } = browser;
  await page.setViewportSize({ width: 1360, height: 900 });
  await page.goto(origin);
  for (let i = 0; i < runs; i++) {
    if (i > 0) {
      await page.click('[data-testid="clear"]');
      await page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state === 'idle', null, { timeout: 0 });
    }
    const { seconds, shown } = await dashboardRun(page);
    dashTimes.push(seconds);
    shownAll = shown;
  }
  const errors = await page.locator('[data-testid="errors"] li').allTextContents();
  if (errors.length) throw new Error(`the dashboard showed errors: ${errors.join(' / ')}`);
} finally {
  await browser.close();
  server.close();
}
const [node, dash] = [median(nodeTimes), median(dashTimes)];
const labeledCount = sets.filter((s) => s.labels).length;
console.log(`${names.length} files of tests/data/example: ${sets.length} sets (${labeledCount} labeled) and the source set; median of ${runs}`);
console.log(`  node (dist/, the Worker's operations in process): ${node.toFixed(2)} s`);
console.log(`  node (dist/, arrays: readMatrix, calibrate, score, predict): ${median(arrayTimes).toFixed(2)} s`);
console.log(`  dashboard (Chromium, drop to done): ${dash.toFixed(2)} s, ` +
  `${shownAll === sets.length ? 'every set\'s estimate shown' : `the estimates of ${shownAll} of the ${sets.length} sets shown`}`);
console.log(`  ratio dashboard / node: ${(dash / node).toFixed(2)} (against the arrays: ${(dash / median(arrayTimes)).toFixed(2)})`);
