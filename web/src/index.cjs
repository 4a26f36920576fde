'use strict';
// CommonJS entry of mano-score (package.json "exports" → "require"): the package is ES modules,
// which Node 20.19+ and 22.12+ can require(); older Node gets a message saying what to do
// instead of ERR_REQUIRE_ESM.
try {
  module.exports = require('./index.js');
} catch (e) {
  if (e && e.code === 'ERR_REQUIRE_ESM') {
    throw new Error(`mano-score is an ES module, and this Node (${process.version}) does not require() ES modules ` +
      "(Node 20.19+ and 22.12+ do, unless run with --no-experimental-require-module): use " +
      "`const mano = await import('mano-score')`", { cause: e });
  }
  throw e;
}
