// The package refuses the JSON mano's native JSON reader refuses (native/io/json.cpp): a key twice
// in one object, a key or value inside more than 64 arrays and objects, and a file kind's size.
// Each text of one corpus is read by the package's WebAssembly core (an accumulator state, through
// that reader) and by the native CLI (the same text as a state file, `mano merge`): both give the
// same reason. (The .safetensors header is read by the native reader's own code in both targets,
// native/io/npy_header.cpp and safetensors_header.cpp: the reader spec, tests/readers/spec, covers it.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { dist, loadPackage, nativeMano, root, tempDir } from './support.js';

// the package's own module for the JSON it handles in JS (not part of its API)
const { jsonForCore, JSON_MAX_BYTES } = await import(path.join(dist, 'json.js'));

const DUPLICATE = (key) => `has the key "${key}" twice in one object; keep one`;
const DEEP = "nests deeper than 64 levels, the limit of mano's JSON readers";

// A value (`inner`) inside `levels` arrays.
const arrays = (levels, inner = '') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
const objects = (levels, inner = '1') => `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;

// [text, the reason it is refused for, or null]
const CORPUS = [
  ['{"a":1,"a":2}', DUPLICATE('a')],
  [' {\n  "a" : 1 ,\r\n\t"a" : [2] }', DUPLICATE('a')],
  ['{"a":1,"b":{"c":true,"c":null}}', DUPLICATE('c')],
  ['{"a":1,"\\u0061":2}', DUPLICATE('a')],
  ['{"a\\\\":1,"a\\\\":2}', DUPLICATE('a\\')],
  ['{"k":-1.5e+3,"l":false,"k":"x"}', DUPLICATE('k')],
  ['{"a":1,"b":{"a":2}}', null],
  ['[{"a":1},{"a":1}]', null],
  ['{"a":"a","b":"a","c":["a","a"]}', null],
  ['{"a\\"":1,"a":2,"x":"\\"","y":"\\\\"}', null],
  [arrays(64, '1'), null],
  [arrays(65, '1'), DEEP],
  [arrays(65), null], // the innermost array is inside 64 and holds nothing
  [arrays(66), DEEP],
  [objects(64), null],
  [objects(65), DEEP],
  [`{"a":${arrays(63, '"x"')},"a":1}`, DUPLICATE('a')],
  [`{"a":${arrays(64, '"x"')},"a":1}`, DEEP], // the first problem met wins
  [`{"b":${arrays(63, '{"k":1,"k":2}')}}`, DEEP],
  [`{"b":${arrays(62, '{"k":1,"k":2}')}}`, DUPLICATE('k')],
];

describe('JSON readers: the package and the native CLI refuse the same texts', () => {
  let mano;
  let work;
  const haveNative = fs.existsSync(nativeMano);

  before(async () => {
    mano = await loadPackage();
    work = tempDir('mano-json-');
  });

  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('the limits are the native reader\'s (native/io/json.hpp)', () => {
    const header = fs.readFileSync(path.join(root, 'native/io/json.hpp'), 'utf8');
    const [, amount, shift] = header.match(/calibration_max_bytes = std::uint64_t\{(\d+)\} << (\d+);/);
    assert.equal(Number(amount) * 2 ** Number(shift), JSON_MAX_BYTES.calibration);
  });

  test('the WebAssembly core (accumulator state)', () => {
    for (const [text, reason] of CORPUS) {
      assert.doesNotThrow(() => JSON.parse(text), text);
      assert.throws(() => mano.accumulatorFromJSON(text), (e) => {
        assert.ok(e instanceof mano.InputError, `${text}: ${e}`);
        if (reason) assert.equal(e.message, `accumulator state: its JSON ${reason}`);
        else assert.doesNotMatch(e.message, /twice in one object|nests deeper/, text);
        return true;
      });
    }
  });

  test('the native CLI gives the same reasons for the same texts as state files',
    { skip: !haveNative && `${nativeMano} does not exist (MANO_BIN)` }, () => {
      CORPUS.forEach(([text, reason], i) => {
        const file = path.join(work, `state${i}.json`);
        fs.writeFileSync(file, text);
        const run = spawnSync(nativeMano, ['merge', file], { encoding: 'utf8' });
        assert.equal(run.status, 2, `${text}: ${run.stderr}`);
        if (reason) assert.equal(run.stderr.trim(), `mano: error: ${file}: accumulator state ${reason}`);
        else assert.doesNotMatch(run.stderr, /twice in one object|nests deeper/, text);
      });
    });

  test('an accumulator state with its row count twice is refused; the same state once reads', () => {
    const acc = mano.accumulator(3, { methods: ['mano'] });
    acc.push(new Float32Array(30).map((_, i) => Math.sin(i)));
    const text = JSON.stringify(acc.toJSON());
    acc.dispose();
    assert.equal(mano.accumulatorFromJSON(text).rows, 10);
    const twice = text.replace(/^\{"/, '{"n":99,"');
    assert.notEqual(twice, text);
    assert.throws(() => mano.accumulatorFromJSON(twice),
      (e) => e instanceof mano.InputError && e.message === `accumulator state: its JSON ${DUPLICATE('n')}`);
  });

  test('a calibration nesting deeper than 64 levels is refused by predict and predictScores', () => {
    const result = mano.score(new Float32Array(30).map((_, i) => Math.sin(i)), { rows: 10, cols: 3 });
    const calibration = { format: 'mano-calibration', extra: JSON.parse(arrays(70)) };
    const refused = (e) => e instanceof mano.InputError && e.message === `calibration: its JSON ${DEEP}`;
    assert.throws(() => mano.predict(calibration, result), refused);
    assert.throws(() => mano.predictScores(calibration, 'mano', [0.5]), refused);
  });

  test('a calibration over its size limit (UTF-8 bytes) is refused before it reaches the core', () => {
    const calibration = { pad: 'é'.repeat(20) }; // JSON of 30 characters, 50 bytes
    assert.equal(jsonForCore(calibration, 'calibration', 50), JSON.stringify(calibration));
    assert.throws(() => jsonForCore(calibration, 'calibration', 29), (e) => e instanceof mano.InputError &&
      e.message === "calibration: its JSON is 50 bytes, over the 29-byte limit of mano's calibration reader");
  });
});
