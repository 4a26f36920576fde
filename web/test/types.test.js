// The declarations as a consumer sees them: tsc --strict (lib checks on) type-checks
// web/test/usage.ts, which imports 'mano-score' and 'mano-score/worker' by name (package
// self-reference through package.json "exports", resolved with nodenext to dist/*.d.ts) and uses
// the whole public API; its `@ts-expect-error` lines must each be an error, or tsc fails.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { root } from './support.js';

const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const FLAGS = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
  '--lib', 'es2022,dom', '--skipLibCheck', 'false', '--pretty', 'false'];

function runTsc(args) {
  return spawnSync(process.execPath, [tsc, ...args], { cwd: root, encoding: 'utf8' });
}

test('tsc --strict accepts web/test/usage.ts, resolving mano-score to its own dist/*.d.ts', (t) => {
  assert.ok(fs.existsSync(tsc), 'typescript is not installed (npm install in the repo root)');
  const started = Date.now();
  const res = runTsc([...FLAGS, '--traceResolution', 'web/test/usage.ts']);
  const ms = Date.now() - started;
  t.diagnostic(`tsc ${runTsc(['--version']).stdout.trim()}: ${ms} ms`);
  // the trace is long: show tsc's diagnostics only
  const diagnostics = `${res.stdout}${res.stderr}`.split('\n').filter((l) => /error TS\d+|^\s{2,}\S/.test(l) && !/^=+ /.test(l));
  assert.equal(res.status, 0, `tsc failed (exit ${res.status}):\n${diagnostics.join('\n') || res.stdout.slice(-4000) + res.stderr}`);
  const resolved = (name) => res.stdout.match(new RegExp(`Module name '${name}' was successfully resolved to '([^']+)'`))?.[1];
  const posix = (p) => p.split(path.sep).join('/');
  assert.equal(resolved('mano-score'), posix(path.join(root, 'dist/index.d.ts')), 'self-reference did not resolve');
  assert.equal(resolved('mano-score/worker'), posix(path.join(root, 'dist/worker.d.ts')), 'self-reference did not resolve');
});
