// A bad level, Taylor order or criterion-with-family gives one error line from the core's options
// table (src/mano/scan/options_table.hpp), naming the package's spelling of the option: the lines
// tests/python/test_option_errors.py holds the CLI and Python to, in their spellings.
// Run: node --test web/test/option_errors.test.js
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { loadPackage } from './support.js';

let mano;
before(async () => {
  mano = await loadPackage();
});

const LEVEL = 'in (0, 0.999999]';
// three labeled sets given with their logits: the family workflow's options are checked first
const SETS = ['a', 'b', 'c'].map((name) => ({ name, logits: new Float32Array([1, 2, 3, 3, 2, 1]), shape: { rows: 2, cols: 3 },
  labels: new Int32Array([2, 0]) }));

function message(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof mano.InputError, `${e}`);
    assert.ok(!e.message.includes('\n'), e.message);
    return e.message;
  }
  assert.fail('no error');
}

test('the level: the table\'s range in the package\'s spelling', () => {
  assert.equal(message(() => mano.predict({}, {}, { level: 1.5 })), `level must be ${LEVEL}, e.g. 0.9 (got 1.5)`);
  assert.equal(message(() => mano.predictScores({}, 'mano', [0.5], { level: 0 })), `level must be ${LEVEL}, e.g. 0.9 (got 0)`);
  assert.equal(message(() => mano.predict({}, {}, { level: NaN })), `level must be ${LEVEL}, e.g. 0.9 (got nan)`);
  assert.match(message(() => mano.predict({}, {}, { level: 'high' })), /^level must be in \(0, 0\.999999\], e\.g\. 0\.9 \(got "high"\)$/);
});

test('the Taylor orders: the table\'s range in the package\'s spelling', () => {
  assert.equal(message(() => mano.calibrate(SETS, { taylorOrders: [2, 171] })),
    'taylorOrders entries must be a whole number from 1 to 170 (got 171)');
  assert.equal(message(() => mano.calibrate(SETS, { taylorOrders: 5 })),
    'taylorOrders must be a list of whole numbers from 1 to 170 (got 5)');
});

test('a criterion with the normalization family: the core\'s refusal in the package\'s words', () => {
  assert.equal(message(() => mano.calibrate([], { criterion: 3 })),
    "criterion fixes the softrun branch; give it with normalization 'softrun', not 'family'");
  assert.equal(message(() => mano.evaluate(SETS, { normalization: 'family', criterion: 3 })),
    "criterion fixes the softrun branch; give it with normalization 'softrun', not 'family'");
});
