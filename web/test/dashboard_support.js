// What the dashboard's browser tests (dashboard.test.js, dashboard_audit.test.js) share: the
// built page, the example sets they drop into it, and a page opened with them, scored and ready.
import path from 'node:path';

import { launchChromium, root, serveDirectory, tempDir } from './support.js';

export const site = path.join(root, 'build/dashboard');
export const example = path.join(root, 'tests/data/example');
export const contrast = [0, 1, 2, 3, 4, 5].map((i) => `contrast_${i}`);
export const blend = [0, 1, 2, 3, 4, 5].map((i) => `blend_${i}`);
export const file = (name) => path.join(example, name);

// Every operation a test starts (a drop, a click) makes the status busy at once and ready only
// when the page has none left (web/dashboard/page.js, serially), so a test waits for its own
// operation, never for a fixed time. Waits have no clock limit: a loaded machine is slow, not
// wrong; a page that never gets there is stopped by the suite's hang guard (hangGuard).
export const ready = (page) => page.waitForFunction(
  () => document.querySelector('[data-testid="status"]').dataset.state === 'ready', null, { timeout: 0 });
// the whole suite's limit, far above its slowest run: a hang fails instead of holding CI
export const hangGuard = { timeout: 30 * 60_000 };

// The dashboard served from build/dashboard in Chromium, the labeled contrast sets, the unlabeled
// blend sets and the source set dropped in, and every set scored. -> { server, origin, browser,
// page, tmp: a new temporary folder named with `tmpPrefix` }
export async function openWithExample({ requests, problems, tmpPrefix }) {
  const { server, origin } = await serveDirectory(site);
  const browser = await launchChromium({ requests, problems });
  const page = browser.page;
  await page.setViewportSize({ width: 1360, height: 900 });
  await page.goto(origin);
  const tmp = tempDir(tmpPrefix);
  const files = [...contrast.flatMap((s) => [`${s}_logits.npy`, `${s}_labels.npy`]), ...blend.map((s) => `${s}_logits.npy`),
    'source_logits.npy', 'source_labels.npy'].map(file);
  await page.setInputFiles('[data-testid="file-input"]', files);
  await ready(page);
  return { server, origin, browser, page, tmp };
}
