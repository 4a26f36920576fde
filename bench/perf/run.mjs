// `npm run bench`: the speed table, every number from this one run on this machine.
// For each shape (random float32 logits, the same file for every contestant): a plain
// memory-read kernel (the machine's limit), the native MaNo kernel per architecture on 1 thread
// and on all cores (bench/perf/bench_kernels.cpp), the WASM build under Node and a plain-JS MaNo
// (here), NumPy and PyTorch computing MaNo as the authors' code does (bench/perf/anchors.py);
// then the nuclear norm against numpy.linalg.svd, COT against POT's ot.emd2; whole `mano score`
// processes (MaNo alone, the nuclear norm on one thread, the default set) against the nuclear norm
// as NumPy (OpenBLAS) and PyTorch users compute it; and the peak RSS of `mano score` on the 200 MB
// file; the Python package against PyTorch and the native kernel, and mano.dask on 1 and 2 workers
// (bench/perf/python.py); and MLLS, CBPE and COT at K = 1000 in WASM against MaNo alone (issue 44).
// Prints Markdown tables and the design targets, met or not.
//   node bench/perf/run.mjs [--quick]     (after npm run build; --quick: the two small shapes)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { loadPackage, nativeMano, normalLogits, root, tempDir, writeNpy } from '../../web/test/support.js';

const quick = process.argv.includes('--quick');
const shapes = [[10000, 10], [10000, 100], [50000, 1000], [1000, 152064]].slice(0, quick ? 2 : 4);
const benchBin = process.env.MANO_BENCH_BIN ?? path.join(root, 'build/release/bench/perf/mano_bench');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function seconds(fn, budget = 20) {
  const times = [];
  const start = performance.now();
  while (times.length < 5 && (times.length < 1 || (performance.now() - start) / 1000 < budget)) {
    const t = performance.now();
    fn();
    times.push((performance.now() - t) / 1000);
  }
  return median(times);
}

// The authors' recipe in plain JS: the criterion, then the chosen normalization, then the p-norm.
function plainMano(q, rows, cols, p = 4, eta = 5) {
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
  return (total / (rows * cols)) ** (1 / p);
}

// Debian's OpenBLAS 0.3.21 does not recognise some recent CPUs and falls back to its SSE3
// (Prescott) kernels, which would make NumPy look 4x slower than users see it: the NumPy/PyTorch
// processes run with the core type this CPU supports (a user's own OPENBLAS_CORETYPE wins), and
// the report names the kernel threadpoolctl says OpenBLAS loaded.
function openblasCoreType() {
  if (process.env.OPENBLAS_CORETYPE) return { name: process.env.OPENBLAS_CORETYPE, from: 'this environment' };
  let flags = [];
  try {
    flags = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '').trim().split(/\s+/);
  } catch {
    return undefined;
  }
  const best = 'the best kernel this CPU runs';
  if (['avx512f', 'avx512cd', 'avx512bw', 'avx512dq', 'avx512vl'].every((f) => flags.includes(f))) return { name: 'SkylakeX', from: best };
  if (['avx2', 'fma'].every((f) => flags.includes(f))) return { name: 'Haswell', from: best };
  return undefined;  // OpenBLAS's own choice
}
const coreType = openblasCoreType();
const anchorEnv = { ...process.env, ...(coreType ? { OPENBLAS_CORETYPE: coreType.name } : {}) };

const dir = tempDir('mano-bench-');
const mano = await loadPackage();
// V8 first runs WebAssembly (and JS) through its baseline compiler and swaps in optimized code a
// moment later, function by function: each contestant is warmed up on each shape's own data for
// half a second first (few classes and many take different kernel paths), so the table shows the
// steady state a long scoring sees.
function warmUp(fn, ms = 500) {
  const until = performance.now() + ms;
  do fn(); while (performance.now() < until);
}
// Logits whose true class stands out, as bench/perf/k1000.py makes them (its own generator here):
// the source's labels are those classes, the target's are shifted to a weaker signal.
function labeledLogits(rows, cols, signal, seed) {
  const q = normalLogits(rows, cols, 2, seed);
  const labels = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    labels[r] = r % cols;  // normalLogits' boosted class
    q[r * cols + (r % cols)] += 2 * signal;
  }
  return { q, labels };
}

// Seconds of each label-shift method and of MaNo alone, each warmed up once (score() of MLLS runs
// for seconds: one warm-up call is the steady state).
function wasmLabelShift(mano, rows, cols) {
  const source = labeledLogits(rows, cols, 2, 300);
  const target = labeledLogits(rows, cols, 1.5, 301);
  const shape = { rows, cols };
  const time = (options) => {
    const run = () => mano.score(target.q, shape, options);
    run();
    return seconds(run, 30);
  };
  const out = { rows, cols, mano: time({ methods: ['mano'] }) };
  const given = { logits: source.q, labels: source.labels };
  for (const method of ['mlls', 'cbpe', 'cot'])
    out[method] = time(method === 'cot' ? { methods: [method] } : { methods: [method], source: given });
  return out;
}

const results = [];
try {
  for (const [i, [rows, cols]] of shapes.entries()) {
    const file = path.join(dir, `logits_${rows}x${cols}.npy`);
    const q = normalLogits(rows, cols, 2, 100 + i);
    writeNpy(file, q, [rows, cols]);
    const flags = [...(cols <= 1000 ? ['--nuclear'] : []), ...(rows * cols <= 1e6 ? ['--cot'] : [])];
    const native = JSON.parse(execFileSync(benchBin, [file, ...flags], { encoding: 'utf8', maxBuffer: 1 << 26 }));
    const scoreWasm = () => mano.score(q, { rows, cols }, { methods: ['mano'] });
    warmUp(scoreWasm);
    const wasm = seconds(scoreWasm);
    // the package's default set (what score() computes when no methods are named)
    const wasmDefault = seconds(() => mano.score(q, { rows, cols }), 30);
    const wasmNuclear = cols <= 1000 ? seconds(() => mano.score(q, { rows, cols }, { methods: ['nuclear'] }), 30) : undefined;
    warmUp(() => plainMano(q, rows, cols));
    const js = seconds(() => plainMano(q, rows, cols), 30);
    results.push({ rows, cols, file, native, wasm, wasmDefault, wasmNuclear, js });
    process.stderr.write(`bench: ${rows} x ${cols} native + wasm + js done\n`);
  }
  // The nuclear norm in WASM against native SSE4.2 (the same 4-lane Gram update) where the issue
  // names it: many rows (the K x K Gram matrix) and fewer rows than classes (P P^T).
  const nuclearShapes = [];
  for (const [i, [rows, cols]] of [[10000, 1000], [10, 4096]].entries()) {
    const file = path.join(dir, `nuclear_${rows}x${cols}.npy`);
    const q = normalLogits(rows, cols, 2, 200 + i);
    writeNpy(file, q, [rows, cols]);
    const native = JSON.parse(execFileSync(benchBin, [file, '--nuclear', '--repeats', '3'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
    const run = () => mano.score(q, { rows, cols }, { methods: ['nuclear'] });
    warmUp(run);
    nuclearShapes.push({ rows, cols, native, wasm: seconds(run, 30) });
    fs.rmSync(file);
  }
  // The label-shift methods at K = 1000 in WebAssembly (issue 44): 10000 x 1000 float32 logits
  // and a labeled 10000 x 1000 source, each method alone against MaNo alone on the same logits.
  const labelShift = quick ? undefined : wasmLabelShift(mano, 10000, 1000);
  if (labelShift) process.stderr.write('bench: WASM label shift at K = 1000 done\n');
  const anchors = JSON.parse(execFileSync('/usr/bin/python3', [path.join(root, 'bench/perf/anchors.py'), ...results.map((r) => r.file)],
    { encoding: 'utf8', maxBuffer: 1 << 26, env: anchorEnv }));
  process.stderr.write('bench: NumPy/PyTorch anchors done\n');
  for (const r of results) r.anchor = anchors[r.file];
  // Whole `mano score` processes, as a user runs them: MaNo alone, the nuclear norm alone on one
  // thread (against the anchors' Gram + eigvalsh, whose softmax is not timed), the default set.
  const runMano = (args) => execFileSync(nativeMano, ['score', ...args, '--quiet'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  for (const r of results.filter((x) => x.cols <= 1000)) {
    const nuclear = JSON.parse(runMano([r.file, '--methods', 'nuclear', '--threads', '1', '--json']));
    r.whole = {
      mano: seconds(() => runMano([r.file, '--methods', 'mano']), 30),
      nuclear_1: seconds(() => runMano([r.file, '--methods', 'nuclear', '--threads', '1']), 60),
      nuclear_value: nuclear.methods.nuclear.score * Math.sqrt(r.rows * Math.min(r.rows, r.cols)),
      default: seconds(() => runMano([r.file]), 60),
    };
  }
  process.stderr.write('bench: whole mano processes done\n');
  const big = results.find((r) => r.rows === 50000);
  let rss;
  if (big) {
    try {
      execFileSync('/usr/bin/time', ['-v', '-o', path.join(dir, 'rss.txt'), nativeMano, 'score', big.file, '--quiet'], { stdio: 'ignore' });
      rss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(fs.readFileSync(path.join(dir, 'rss.txt'), 'utf8'))[1]) / 1024;
    } catch {
      rss = undefined;
    }
  }
  // The Python package (bench/perf/python.py): mano.score in memory against PyTorch, and
  // mano.dask on 1 and 2 worker processes over ~2 GB of .npy shards.
  let python;
  if (big) {
    python = JSON.parse(execFileSync('/usr/bin/python3', [path.join(root, 'bench/perf/python.py'), big.file, benchBin, '2'],
      { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...anchorEnv, PYTHONPATH: path.join(root, 'build/release/python') } }));
    process.stderr.write('bench: Python package done\n');
  }
  report(results, rss, big && fs.statSync(big.file).size / 1e6, anchors.blas, nuclearShapes, python);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

function report(results, rss, bigMB, blas, nuclearShapes, python) {
  const ns = (s, r) => ((s * 1e9) / (r.rows * r.cols));
  const f = (x, d = 2) => (x === undefined ? '–' : x.toFixed(d));
  // every kernel the CPU ran, the portable scalar one first (bench_kernels lists them best first)
  const archs = [...results[0].native.kernels].reverse();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`CPU: ${cpu}, ${os.cpus().length} cores; Node ${process.versions.node}; medians of repeated runs.`);
  console.log(`NumPy's BLAS: ${blas}${coreType ? ` (OPENBLAS_CORETYPE=${coreType.name}, ${coreType.from}, for the NumPy and PyTorch processes)` : ''}.\n`);
  console.log('MaNo, ns per logit (lower is better); the memory-read kernel only sums the floats: the machine\'s limit.\n');
  console.log(`| shape | memory read (GB/s) | ${archs.join(' | ')} | all ${results[0].native.cores} cores | WASM | plain JS | NumPy | PyTorch 1 thread | PyTorch all |`);
  console.log(`|---|---|${archs.map(() => '---').join('|')}|---|---|---|---|---|---|`);
  for (const r of results) {
    const gbs = (r.rows * r.cols * 4) / r.native.read_1 / 1e9;
    const cells = [`${r.rows}×${r.cols}`, `${f(ns(r.native.read_1, r))} (${f(gbs, 1)})`,
      ...archs.map((a) => (r.native.mano_1[a] === undefined ? '–' : f(ns(r.native.mano_1[a], r)))),
      f(ns(r.native.mano_all, r)), f(ns(r.wasm, r)), f(ns(r.js, r), 1), f(ns(r.anchor.numpy_1, r), 1),
      f(ns(r.anchor.torch_1, r), 1), f(ns(r.anchor.torch_all, r), 1)];
    console.log(`| ${cells.join(' | ')} |`);
  }
  console.log('\nRatios from the same run: PyTorch 1 thread / native (how many times faster), native / memory read.\n');
  console.log('| shape | best arch | PyTorch-1 / best | PyTorch-1 / AVX2 | AVX2 / memory read | AVX2, softmax branch only / memory read | best / memory read | all cores / 1 core (best) | all cores / 1 core (AVX2) | WASM / SSE4.2 | plain JS / WASM |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const best = r.native.mano_1[r.native.best];
    const avx2 = r.native.mano_1.avx2;
    const sse42 = r.native.mano_1['sse4.2'];
    console.log(`| ${r.rows}×${r.cols} | ${r.native.best} | ${f(r.anchor.torch_1 / best, 1)}× | ${avx2 ? `${f(r.anchor.torch_1 / avx2, 1)}×` : '–'} | ` +
      `${avx2 ? `${f(avx2 / r.native.read_1, 2)}×` : '–'} | ` +
      `${r.native.mano_1_avx2_softmax ? `${f(r.native.mano_1_avx2_softmax / r.native.read_1, 2)}×` : '–'} | ` +
      `${f(best / r.native.read_1, 2)}× | ${f(best / r.native.mano_all, 2)}× | ` +
      `${r.native.mano_all_avx2 ? `${f(avx2 / r.native.mano_all_avx2, 2)}×` : '–'} | ` +
      `${sse42 ? `${f(r.wasm / sse42, 2)}×` : '–'} | ${f(r.js / r.wasm, 1)}× |`);
  }
  console.log('\nNuclear norm (seconds) and COT (seconds).\n');
  console.log('| shape | nuclear, 1 thread | nuclear, all cores | numpy.linalg.svd | svd / nuclear | COT | ot.emd2 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results.filter((x) => x.native.nuclear_1 !== undefined || x.native.cot_1 !== undefined)) {
    console.log(`| ${r.rows}×${r.cols} | ${f(r.native.nuclear_1, 3)} | ${f(r.native.nuclear_all, 3)} | ${f(r.anchor.svd, 3)} | ` +
      `${r.anchor.svd && r.native.nuclear_1 ? `${f(r.anchor.svd / r.native.nuclear_1, 1)}×` : '–'} | ${f(r.native.cot_1, 3)} | ${f(r.anchor.emd2, 3)} |`);
  }
  console.log(`\nNuclear norm as users compute it, seconds (NumPy on ${blas}; the softmax not timed), against whole ` +
    '`mano score` processes (reading the file included). Gram = P^T P then eigvalsh; SVD = the singular values.\n');
  const cores = os.cpus().length;
  const ways = ['numpy_gram', 'numpy_svd', 'torch_gram', 'torch_svd'];
  console.log(`| shape | mano --methods nuclear, 1 thread | ${ways.flatMap((w) => [`${w} f32 1`, `${w} f64 1`, `${w} f64 ${cores}`]).join(' | ')} | ` +
    `NumPy Gram f32 1 / mano | |mano − SVD| / SVD | mano --methods mano | default set | default / mano |`);
  console.log(`|---|---|${ways.flatMap(() => ['---', '---', '---']).join('|')}|---|---|---|---|---|`);
  for (const r of results.filter((x) => x.whole && x.anchor.nuclear)) {
    const n = r.anchor.nuclear;
    const cells = [`${r.rows}×${r.cols}`, f(r.whole.nuclear_1, 3),
      ...ways.flatMap((w) => [f(n[`${w}_float32_1`], 3), f(n[`${w}_float64_1`], 3), f(n[`${w}_float64_${cores}`], 3)]),
      `${f(n.numpy_gram_float32_1 / r.whole.nuclear_1, 2)}×`, (Math.abs(r.whole.nuclear_value - n.value) / n.value).toExponential(1),
      f(r.whole.mano, 3), f(r.whole.default, 3), `${f(r.whole.default / r.whole.mano, 1)}×`];
    console.log(`| ${cells.join(' | ')} |`);
  }
  if (rss !== undefined) console.log(`\nPeak RSS of \`mano score\` (default methods) on the ${f(bigMB, 0)} MB file: ${f(rss, 1)} MB.`);
  console.log('\nThe npm package (WASM, in memory, seconds): MaNo alone, the default set, the nuclear norm; native nuclear (1 thread) for comparison.\n');
  console.log('| shape | WASM mano | WASM default | default / mano | WASM nuclear | native nuclear SSE4.2 | native nuclear best | WASM / SSE4.2 |');
  console.log('|---|---|---|---|---|---|---|---|');
  const nuclearRows = [...results.map((r) => ({ rows: r.rows, cols: r.cols, mano: r.wasm, def: r.wasmDefault, nuclear: r.wasmNuclear, native: r.native })),
    ...nuclearShapes.map((r) => ({ rows: r.rows, cols: r.cols, nuclear: r.wasm, native: r.native }))];
  for (const r of nuclearRows) {
    const sse = r.native.nuclear_1_sse42;
    console.log(`| ${r.rows}×${r.cols} | ${f(r.mano, 4)} | ${f(r.def, 4)} | ${r.def ? `${f(r.def / r.mano, 1)}×` : '–'} | ${f(r.nuclear, 4)} | ` +
      `${f(sse, 4)} | ${f(r.native.nuclear_1, 4)} | ${r.nuclear && sse ? `${f(r.nuclear / sse, 2)}×` : '–'} |`);
  }
  const bigRun = results.find((r) => r.rows === 50000);
  if (python && bigRun) {
    const kernel = python.kernel;
    console.log(`\nThe Python package on ${python.shape.join('×')} float32 in memory (seconds): mano.score(q, methods="mano"), against ` +
      `MaNo in PyTorch on 1 thread and the native kernel (${python.kernel_arch}, 1 thread, mano_bench) on the same array, ` +
      'in 3 interleaved rounds (medians).\n');
    console.log('| mano.score, 1 thread | mano.score, all cores | PyTorch 1 thread | native kernel | PyTorch / mano.score | mano.score / kernel | |mano − PyTorch f64| / value |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(`| ${f(python.mano_1, 4)} | ${f(python.mano_all, 4)} | ${f(python.torch_1, 3)} | ${f(kernel, 4)} | ` +
      `${f(python.torch_1 / python.mano_1, 1)}× | ${f(python.mano_1 / kernel, 2)}× | ${python.rel_diff_float64.toExponential(1)} |`);
    const d = python.dask;
    console.log(`\nmano.dask.score on ${f(d.gb, 2)} GB of .npy shards (${d.shards} files, ${d.rows}×${d.cols}, in the page cache), default methods, ` +
      'LocalCluster of worker processes with 1 thread each (seconds):\n');
    console.log('| 1 worker | 2 workers | 1 / 2 | results differ by |');
    console.log('|---|---|---|---|');
    console.log(`| ${f(d.workers_1, 3)} | ${f(d.workers_2, 3)} | ${f(d.workers_1 / d.workers_2, 2)}× | ${d.rel_diff.toExponential(1)} |`);
  }

  if (labelShift) {
    const ls = labelShift;
    console.log(`\nThe label-shift methods in WebAssembly (Node, the same mano.wasm the browser loads), ${ls.rows}×${ls.cols} float32 logits, ` +
      `a labeled ${ls.rows}×${ls.cols} source (seconds, and × MaNo alone in this run):\n`);
    console.log('| MaNo | MLLS | CBPE | COT |');
    console.log('|---|---|---|---|');
    console.log(`| ${f(ls.mano, 3)} | ${f(ls.mlls, 3)} (${f(ls.mlls / ls.mano, 1)}×) | ${f(ls.cbpe, 3)} (${f(ls.cbpe / ls.mano, 1)}×) | ` +
      `${f(ls.cot, 3)} (${f(ls.cot / ls.mano, 1)}×) |`);
  }

  const target = (ok, text) => console.log(`${ok ? 'met    ' : 'NOT met'}  ${text}`);
  console.log('\nDesign targets:');
  const big = results.find((r) => r.rows === 50000);
  if (big) {
    const avx2 = big.native.mano_1.avx2;
    if (avx2) {
      target(big.anchor.torch_1 / avx2 >= 14, `AVX2 1 thread >= 14x PyTorch 1 thread on 50000x1000: ${f(big.anchor.torch_1 / avx2, 1)}x`);
      target(avx2 / big.native.read_1 <= 3, `AVX2 1 thread within 3x of the memory read on 50000x1000: ${f(avx2 / big.native.read_1, 2)}x`);
    }
    const best = big.native.mano_1[big.native.best];
    target(best / big.native.mano_all >= 1.8, `all cores >= 1.8x one core on 50000x1000 (${big.native.best}): ${f(best / big.native.mano_all, 2)}x`);
    if (big.native.mano_all_avx2) target(avx2 / big.native.mano_all_avx2 >= 1.8, `all cores >= 1.8x one core on 50000x1000 (avx2): ${f(avx2 / big.native.mano_all_avx2, 2)}x`);
    if (big.whole && big.anchor.nuclear) {
      const gram = Math.min(big.anchor.nuclear.numpy_gram_float32_1, big.anchor.nuclear.numpy_gram_float64_1);
      target(gram / big.whole.nuclear_1 >= 2, `mano score --methods nuclear --threads 1 (whole process) >= 2x NumPy Gram + eigvalsh on 1 thread (the faster of f32/f64) on 50000x1000: ${f(gram / big.whole.nuclear_1, 2)}x`);
      const rel = Math.abs(big.whole.nuclear_value - big.anchor.nuclear.value) / big.anchor.nuclear.value;
      target(rel <= 1e-6, `nuclear norm within 1e-6 of the SVD's on 50000x1000: ${rel.toExponential(1)}`);
      target(big.whole.default / big.whole.mano <= 10, `default mano score <= 10x --methods mano (whole processes) on 50000x1000: ${f(big.whole.default / big.whole.mano, 1)}x`);
    }
    if (big.native.nuclear_1 && big.anchor.svd) target(big.anchor.svd / big.native.nuclear_1 >= 5, `nuclear >= 5x numpy.linalg.svd on 50000x1000: ${f(big.anchor.svd / big.native.nuclear_1, 1)}x`);
  }
  for (const r of results) {
    const sse42 = r.native.mano_1['sse4.2'];
    if (sse42) target(r.wasm / sse42 <= 2, `WASM within 2x of native SSE4.2 on ${r.rows}x${r.cols}: ${f(r.wasm / sse42, 2)}x`);
    target(r.js / r.wasm >= 5, `WASM >= 5x plain JS on ${r.rows}x${r.cols}: ${f(r.js / r.wasm, 1)}x`);
  }
  for (const r of nuclearShapes)
    if (r.native.nuclear_1_sse42) target(r.wasm / r.native.nuclear_1_sse42 <= 2, `WASM nuclear within 2x of native SSE4.2 on ${r.rows}x${r.cols}: ${f(r.wasm / r.native.nuclear_1_sse42, 2)}x`);
  if (big?.wasmDefault) target(big.wasmDefault / big.wasm <= 10, `npm default score() <= 10x MaNo alone on 50000x1000: ${f(big.wasmDefault / big.wasm, 1)}x`);
  if (python && bigRun) {
    const kernel = python.kernel;
    target(python.torch_1 / python.mano_1 >= 15, `mano.score (Python, 1 thread) >= 15x PyTorch CPU 1 thread on 50000x1000: ${f(python.torch_1 / python.mano_1, 1)}x`);
    target(python.mano_1 / kernel <= 1.2, `mano.score (Python, 1 thread) within 1.2x of the native kernel on 50000x1000: ${f(python.mano_1 / kernel, 2)}x`);
    target(python.dask.workers_1 / python.dask.workers_2 >= 1.6, `mano.dask 2 workers >= 1.6x 1 worker on ${f(python.dask.gb, 1)} GB of .npy shards: ${f(python.dask.workers_1 / python.dask.workers_2, 2)}x`);
  }
  if (labelShift)
    target(labelShift.mlls / labelShift.mano <= 5, `WASM MLLS <= 5x MaNo alone on ${labelShift.rows}x${labelShift.cols} with a labeled source: ` +
      `${f(labelShift.mlls / labelShift.mano, 1)}x`);
  const cotShape = results.find((r) => r.rows === 10000 && r.cols === 10);
  if (cotShape?.native.cot_1 !== undefined) target(cotShape.native.cot_1 < 1, `COT on 10000x10 under 1 s: ${f(cotShape.native.cot_1, 3)} s`);
}
