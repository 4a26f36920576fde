// bench/perf/dashboard_speed.mjs runs (on its small input, --quick): it times the package under
// Node and the dashboard in Chromium on the same files and prints both and their ratio. The
// times themselves are the bench's to report, never a test's to hold (they depend on the machine).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { CHROMIUM, haveChromium, root } from './support.js';
import { site } from './dashboard_support.js';

const skip = !haveChromium ? `${CHROMIUM} does not exist: no browser to test in`
  : !fs.existsSync(path.join(site, 'index.html')) ? 'build/dashboard is missing: run npm run build' : false;

test('the dashboard speed bench runs and prints both times and their ratio', { skip, timeout: 30 * 60_000 }, () => {
  const out = execFileSync(process.execPath, [path.join(root, 'bench/perf/dashboard_speed.mjs'), '--quick'], { encoding: 'utf8' });
  assert.match(out, /^9 files of tests\/data\/example: 4 sets \(3 labeled\) and the source set; median of 1$/m);
  assert.match(out, /node \(dist\/, the Worker's operations in process\): \d+\.\d\d s/);
  assert.match(out, /dashboard \(Chromium, drop to done\): \d+\.\d\d s, every set's estimate shown/);
  assert.match(out, /ratio dashboard \/ node: \d+\.\d\d/);
});
