// The WASM MaNo kernel under Node against a plain-JS MaNo and the native kernels, in one run:
//   node bench/perf/wasm.mjs [ROWS] [COLS]      (default 20000 x 1000; needs npm run build)
// Medians of 5 runs. WASM and plain JS are timed in this process on the same Float32Array; the
// native CLI (`mano score --methods mano --threads 1 --arch A`) is timed as a whole process on
// the same values in a .npy file, so its numbers include reading the file (an upper bound).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { loadPackage, nativeMano, normalLogits, writeNpy } from '../../web/test/support.js';

const rows = Number(process.argv[2] ?? 20000), cols = Number(process.argv[3] ?? 1000);
const logits = rows * cols;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => median(Array.from({ length: 5 }, () => {
  const t = performance.now();
  fn();
  return performance.now() - t;
}));

// The authors' recipe in plain JS: the criterion, then the chosen normalization, then the p-norm.
function plainMano(q, p = 4, eta = 5) {
  let phi = 0;
  for (let i = 0; i < rows; i++) {
    let m = -Infinity, sum = 0;
    for (let j = 0; j < cols; j++) { const x = q[i * cols + j]; if (x > m) m = x; sum += x; }
    let s = 0;
    for (let j = 0; j < cols; j++) s += Math.exp(q[i * cols + j] - m);
    phi += m + Math.log(s) - sum / cols;
  }
  phi /= rows;
  let total = 0;
  const v = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    let m = -Infinity;
    for (let j = 0; j < cols; j++) m = Math.max(m, q[i * cols + j]);
    let s = 0;
    if (phi > eta) {
      for (let j = 0; j < cols; j++) { v[j] = Math.exp(q[i * cols + j] - m); s += v[j]; }
    } else {
      let lo = Infinity;
      for (let j = 0; j < cols; j++) { const x = q[i * cols + j]; v[j] = 1 + x + x * x / 2; lo = Math.min(lo, v[j]); }
      for (let j = 0; j < cols; j++) { v[j] -= lo; s += v[j]; }
    }
    for (let j = 0; j < cols; j++) total += (v[j] / s) ** p;
  }
  return (total / logits) ** (1 / p);
}

const mano = await loadPackage();
const q = normalLogits(rows, cols, 2, 1);
const wasm = time(() => mano.score(q, { rows, cols }, { methods: ['mano'] }));
const js = time(() => plainMano(q));
const check = Math.abs(plainMano(q) / mano.score(q, { rows, cols }, { methods: ['mano'] }).methods.mano.score - 1);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mano-bench-'));
const file = path.join(dir, 'logits.npy');
writeNpy(file, q, [rows, cols]);
const archs = ['sse4.2', 'avx2', 'avx512'];
const native = {};
for (const arch of archs) {
  try {
    native[arch] = time(() => execFileSync(nativeMano, ['score', file, '--methods', 'mano', '--threads', '1', '--arch', arch, '--quiet']));
  } catch {
    // this CPU lacks the architecture
  }
}
fs.rmSync(dir, { recursive: true });

const ns = (ms) => ((ms * 1e6) / logits).toFixed(2);
console.log(`MaNo on ${rows} x ${cols} float32 (${os.cpus()[0].model}), median of 5, ns per logit:`);
console.log(`  wasm (Node ${process.versions.node})   ${ns(wasm)}`);
console.log(`  plain JS                ${ns(js)}   (wasm is ${(js / wasm).toFixed(1)}x faster; scores agree to ${check.toExponential(1)})`);
for (const [arch, ms] of Object.entries(native))
  console.log(`  native ${arch.padEnd(7)} 1 thread ${ns(ms)}   (whole process incl. reading the file; wasm / native = ${(wasm / ms).toFixed(2)})`);
