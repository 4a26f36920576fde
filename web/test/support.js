// Shared by the node:test suites: paths, the built package, the native CLI, seeded random logits,
// a .npy writer (the files the native CLI reads in the parity tests) and a Blob that streams in
// tiny chunks (for the readers).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { packPackage } from '../pack.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const dist = path.join(root, 'dist');
export const nativeMano = path.resolve(process.env.MANO_BIN ?? path.join(root, 'build/release/native/mano'));

export async function loadPackage() {
  const mano = await import(path.join(dist, 'index.js'));
  await mano.init();
  return mano;
}

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

// mulberry32 + Box-Muller: the same numbers on every run.
export function normalLogits(rows, cols, scale, seed) {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < out.length; i++) {
    const u = Math.max(uniform(), 1e-12), v = uniform();
    out[i] = scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  // a class signal so that rows are not all alike: the row's "true" class gets a boost
  for (let r = 0; r < rows; r++) out[r * cols + (r % cols)] += scale;
  return out;
}

export function writeNpy(file, data, shape) {
  const descr = data instanceof Float64Array ? '<f8' : data instanceof Float32Array ? '<f4'
    : data instanceof Uint16Array ? '<f2' : data instanceof Int32Array ? '<i4' : null;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

export function runNative(args) {
  return JSON.parse(execFileSync(nativeMano, args, { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

// |a - b| <= abs + rel |b|: b is the reference
export function relClose(a, b, rel, abs = 0) {
  return Math.abs(a - b) <= abs + rel * Math.abs(b);
}

// The tolerances of every native-vs-WebAssembly comparison, by what was computed, the same on
// every host (docs/testing.md, "Parity"): native kernels sum in 1 (scalar) to 16 (AVX-512) float
// lanes and WebAssembly in 4, so two builds agree to rounding, never to bits.
// - rel: a scan's values are double sums of float per-row terms, each within ~1e-7 relative.
// - abs: what is fitted over scores (lines, folds, r2, correlations, intervals, audits) is on the
//   accuracy scale, and an intercept or effect near 0 keeps only the scores' absolute error
//   (a fold intercept of -9.4e-4 differs by 2e-9 between AVX2 and WebAssembly).
// - within.correctness: the correctness model is fitted on rows counted by confidence bin; a row
//   whose confidence sits at a bin edge falls on either side by a float's rounding, and one row of
//   a class's ~1e4 calibration rows moves its effect by ~1e-4 (AVX2 against WebAssembly: 6e-6).
export const PARITY = Object.freeze({ rel: 1e-6, abs: 1e-6, within: { correctness: { rel: 1e-3, abs: 1e-3 } } });

// The standard normal distribution function, Phi(x) = erfc(-x / sqrt 2) / 2, with erfc by
// Numerical Recipes' Chebyshev fit (relative error below 1.2e-7): for a calibration line on the
// probit link (docs/cli.md, "Links").
export function normalCdf(x) {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + z / 2);
  const erfc = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? 1 - erfc / 2 : erfc / 2;
}

// Every number in `got` within the tolerance of `want` (same keys, recursively); returns the
// mismatches. `tolerance` is a relative tolerance (then `abs` the absolute one), or an object
// { rel, abs, within: { key: tolerance } } whose `within` holds the tolerances of named subtrees.
export function compareDeep(got, want, tolerance, where = '', abs = 0) {
  const tol = typeof tolerance === 'number' ? { rel: tolerance, abs } : tolerance;
  const out = [];
  if (typeof want === 'number') {
    if (typeof got !== 'number' || !relClose(got, want, tol.rel, tol.abs ?? 0)) out.push(`${where}: ${got} vs ${want}`);
  } else if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) out.push(`${where}: length ${got?.length} vs ${want.length}`);
    else want.forEach((w, i) => out.push(...compareDeep(got[i], w, tol, `${where}[${i}]`)));
  } else if (want && typeof want === 'object') {
    const keys = new Set([...Object.keys(want), ...Object.keys(got ?? {})]);
    for (const k of keys) {
      // an iterative solver's step count depends on the last bits of each pass (MLLS's accelerated
      // EM takes 25 or 26 steps on the native or WebAssembly kernel to the same priors): only its values are compared
      if (k === 'iterations' && typeof want[k] === 'number' && typeof got?.[k] === 'number') continue;
      if (!(k in (got ?? {})) || !(k in want)) out.push(`${where}.${k}: present in only one`);
      else out.push(...compareDeep(got[k], want[k], tol.within?.[k] ?? tol, `${where}.${k}`));
    }
  } else if (got !== want) {
    out.push(`${where}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  }
  return out;
}

// The gzipped size mano.wasm may have (pack.test.js, wasm_binary.test.js), and its history:
// 340 KiB since the label-shift estimators (issue 31), from 300 KiB, which left no room for them; 349 KiB
// since the audit's calls (issue 31, item 4: its CSV reader, sample and PPI, 11.3 KB gzipped, measured);
// 390 KiB since issues 43-45 (measured gzip -9: 346.5 KiB before them; input kinds and the CSV
// column rules +6.2 KB, label-shift copies and small-set intervals to 362,939 bytes, then MLLS's
// accelerated EM, CBPE and COT's auction at K >= 100 in the kernel to 394,654 bytes); 400 KiB
// since issue 50 (measured gzip -9: the audit file checked against its draw, float labels and
// one smallest budget, the interval level's range, and the CSV id and index rules to 406,973 bytes);
// 420 KiB since issue 52 (gzip -9: the constant-score rule and the folds' copy flags, the K = 2
// branch rule and bounds, and the dominant-class label-shift check to 417,170 bytes)
export const MAX_WASM_GZ = 420 * 1024;

export const CHROMIUM = process.env.MANO_CHROMIUM ?? '/usr/bin/chromium';
export const haveChromium = fs.existsSync(CHROMIUM);

const TYPES = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
  '.npy': 'application/octet-stream',
};

// A static server on 127.0.0.1 (port 0) for the files under `dir` and the generated `pages`
// ({ '/path': html }); every path asked for is pushed onto `served`.
export async function serveDirectory(dir, { pages = {}, served = [] } = {}) {
  const http = await import('node:http');
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    served.push(url.pathname);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    if (url.pathname in pages) {
      res.writeHead(200, { 'Content-Type': TYPES['.html'], 'Cache-Control': 'no-store' }).end(pages[url.pathname]);
      return;
    }
    const file = path.join(dir, decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname));
    const type = TYPES[path.extname(file)];
    if (!type || !file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${server.address().port}/` };
}

// Debian's Chromium through playwright-core with the flags DEVELOPERS.md asks for, in a fresh
// profile; records every request and every console error, page error and failed request.
export async function launchChromium({ requests = [], problems = [] } = {}) {
  const { chromium } = await import('playwright-core');
  const profile = tempDir('mano-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
  });
  context.on('request', (r) => requests.push(r.url()));
  const page = context.pages()[0] ?? await context.newPage();
  // a test waits for the state it needs however long a loaded machine takes (no clock limit on
  // waits); a suite's own timeout stops one that never gets there
  page.setDefaultTimeout(0);
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('worker', (w) => w.on('console', (m) => {
    if (m.type() === 'error') problems.push(`worker console.error: ${m.text()}`);
  }));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  const close = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, page, close };
}

// The URLs that left `origin` (data: and blob: URLs stay in the page).
export const foreignRequests = (requests, origin) =>
  requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));

// A Blob-like whose stream() hands out tiny chunks and which records the slices asked of it.
export function chunkedBlob(bytes, name, chunk = 3) {
  const blob = new Blob([bytes]);
  const slices = [];
  return {
    name,
    size: blob.size,
    slices,
    slice(a, b) {
      slices.push([a, b]);
      return blob.slice(a, b);
    },
    arrayBuffer: () => blob.arrayBuffer(),
    stream() {
      let at = 0;
      return new ReadableStream({
        pull(controller) {
          if (at >= bytes.length) controller.close();
          else controller.enqueue(bytes.slice(at, (at += chunk)));
        },
      });
    },
  };
}

// The audit file `mano audit` writes (CSV text) with a column label added from the set's labels.
export function labeledAudit(csv, labels) {
  return csv.split('\n').map((line) => {
    if (line === 'row,weight') return 'row,weight,label';
    const m = /^(\d+),1$/.exec(line);
    return m ? `${line},${labels[Number(m[1])]}` : line;
  }).join('\n');
}

// The integer labels of a little-endian .npy file (int32 or int64), as numbers.
export function npyLabels(file) {
  const bytes = fs.readFileSync(file);
  const header = bytes.toString('latin1', 10, 10 + bytes.readUInt16LE(8));
  const data = bytes.subarray(10 + bytes.readUInt16LE(8));
  if (header.includes("'<i8'")) return Array.from({ length: data.length / 8 }, (_, i) => Number(data.readBigInt64LE(8 * i)));
  if (header.includes("'<i4'")) return Array.from({ length: data.length / 4 }, (_, i) => data.readInt32LE(4 * i));
  throw new Error(`${file}: not int32 or int64 labels`);
}

// npm with a private cache and no network chatter, so the tests leave the user's setup alone.
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
export const npmEnv = (cache) => ({ ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false',
  npm_config_fund: 'false', npm_config_audit: 'false', npm_config_loglevel: 'warn' });
export const runNpm = (args, cwd, cache) => spawnSync(npm, args, { cwd, encoding: 'utf8', env: npmEnv(cache) });
// web/pack.mjs: npm pack in a staged copy of the package (its README is web/README.md)
export const runPack = (args, cache) => packPackage(args, { env: npmEnv(cache) });

// The package packed into `work` and installed, offline, into a new ES-module project work/app:
// { project, tarball, cache }. Throws (an assertion) naming the step that failed.
export function installPacked(work) {
  const cache = path.join(work, 'npm-cache');
  const packed = runPack(['--json', '--pack-destination', work], cache);
  if (packed.status !== 0) throw new Error(`web/pack.mjs failed:\n${packed.stdout}\n${packed.stderr}`);
  const tarball = path.join(work, JSON.parse(packed.stdout)[0].filename);
  const project = path.join(work, 'app');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const res = runNpm(['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], project, cache);
  if (res.status !== 0) throw new Error(`npm install --offline of the tarball failed:\n${res.stderr}`);
  return { project, tarball, cache };
}
