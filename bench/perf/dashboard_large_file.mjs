// Does the dashboard page stay responsive while a large file is scored? Drops one ~200 MB .npy
// (ROWS x COLS float32 logits, default 52429 x 1000) into build/dashboard in Debian's Chromium
// and records, on the page's main thread, every long task (> 50 ms, PerformanceObserver) and the
// worst lateness of a 20 ms timer, next to the time the Worker took to score the file.
//   npm run build && node bench/perf/dashboard_large_file.mjs [ROWS] [COLS]
import fs from 'node:fs';
import path from 'node:path';

import { launchChromium, normalLogits, root, serveDirectory, tempDir, writeNpy } from '../../web/test/support.js';

const rows = Number(process.argv[2] ?? 52429), cols = Number(process.argv[3] ?? 1000);
const dir = tempDir('mano-large-');
const file = path.join(dir, 'large_logits.npy');
// one block of random rows repeated: the values do not matter here, the size does
const block = normalLogits(1000, cols, 2, 7);
const data = new Float32Array(rows * cols);
for (let r = 0; r < rows; r += 1000) data.set(block.subarray(0, Math.min(1000, rows - r) * cols), r * cols);
writeNpy(file, data, [rows, cols]);
const megabytes = fs.statSync(file).size / 1e6;

const { server, origin } = await serveDirectory(path.join(root, 'build/dashboard'));
const browser = await launchChromium();
const { page } = browser;
try {
  await page.goto(origin);
  await page.evaluate(() => {
    window.__probe = { longTasks: [], worstLag: 0 };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__probe.longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: false });
    let last = performance.now();
    setInterval(() => {
      const now = performance.now();
      window.__probe.worstLag = Math.max(window.__probe.worstLag, now - last - 20);
      last = now;
    }, 20);
  });
  const started = Date.now();
  await page.setInputFiles('[data-testid="file-input"]', file);
  await page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state === 'busy', null, { timeout: 60_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid="status"]').dataset.state === 'ready', null,
    { timeout: 600_000, polling: 200 });
  const seconds = (Date.now() - started) / 1000;
  const probe = await page.evaluate(() => window.__probe);
  const errors = await page.locator('[data-testid="errors"] li').allTextContents();
  const longest = Math.max(0, ...probe.longTasks);
  console.log(`dashboard, one ${megabytes.toFixed(0)} MB .npy (${rows} x ${cols} float32), Chromium ${await browser.context.browser()?.version() ?? ''}`);
  console.log(`  scored in the Worker in ${seconds.toFixed(1)} s (${((rows * cols) / seconds / 1e6).toFixed(1)} M logits/s, default methods)`);
  console.log(`  main thread: ${probe.longTasks.length} long tasks (> 50 ms), the longest ${longest.toFixed(0)} ms; ` +
    `worst lateness of a 20 ms timer ${probe.worstLag.toFixed(0)} ms`);
  if (errors.length) console.log(`  errors shown: ${errors.join(' / ')}`);
} finally {
  await browser.close();
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
