// Packs the npm package as its users get it: npm always ships the package root's README, and the
// repository's README.md is for the repository, so the package is staged in a temporary folder
// with web/README.md as its README, package.json without the repository's scripts and
// devDependencies, LICENSE and dist/, and `npm pack` runs there.
// Usage: node web/pack.mjs [npm pack's options, e.g. --json --pack-destination DIR]
// (a relative --pack-destination is taken from the folder this runs in; default: that folder).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The staged package's files, in `dir`; the package.json of the repository, less what only the
// repository runs.
export function stagePackage(dir) {
  if (!fs.existsSync(path.join(root, 'dist/mano.wasm')))
    throw new Error(`${path.join(root, 'dist')} has no mano.wasm: build the package first (bash .ci/build all)`);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  delete manifest.scripts;
  delete manifest.devDependencies;
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.copyFileSync(path.join(root, 'web/README.md'), path.join(dir, 'README.md'));
  fs.copyFileSync(path.join(root, 'LICENSE'), path.join(dir, 'LICENSE'));
  fs.cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true });
}

// `npm pack ARGS` in a staged copy of the package, with `env`: spawnSync's result (stdout, stderr,
// status), e.g. for --json.
export function packPackage(args, { env = process.env } = {}) {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'mano-score-'));
  try {
    stagePackage(stage);
    // npm pack runs in the staged folder: the destination is resolved from here
    const rest = [];
    let destination = process.cwd();
    for (let i = 0; i < args.length; i++) {
      if (args[i] === '--pack-destination' && i + 1 < args.length) destination = path.resolve(args[++i]);
      else if (args[i].startsWith('--pack-destination=')) destination = path.resolve(args[i].slice(19));
      else rest.push(args[i]);
    }
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    return spawnSync(npm, ['pack', ...rest, '--pack-destination', destination], { cwd: stage, env, encoding: 'utf8' });
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--prepack') {
    // package.json's prepack: `npm pack` or `npm publish` in the repository would ship its README
    console.error('mano-score: pack the package with `npm run package` (node web/pack.mjs), which ships web/README.md as its README');
    process.exit(1);
  }
  try {
    const res = packPackage(process.argv.slice(2));
    process.stdout.write(res.stdout ?? '');
    process.stderr.write(res.stderr ?? '');
    process.exitCode = res.status ?? 1;
  } catch (e) {
    console.error(`mano pack: ${e.message}`);
    process.exitCode = 1;
  }
}
