// The limits of mano's JSON readers (native/io/json.hpp) for the JSON the package handles in JS:
// the .safetensors header, which it parses itself, and texts it hands to the core, whose reader
// checks them again but only after they were copied into the WebAssembly heap.
import { InputError } from './errors.js';

export const JSON_MAX_DEPTH = 64;

// By kind, as the core names them in its messages (an accumulator state's 4 GiB is longer than
// any JS string).
export const JSON_MAX_BYTES = { calibration: 256 * 2 ** 20 };

// The index of the quote that closes the string whose opening quote is at `start`.
function stringEnd(text, start) {
  for (let end = text.indexOf('"', start + 1); ; end = text.indexOf('"', end + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}

// Why mano's readers refuse `text`, valid JSON (JSON.parse keeps the last of two equal keys, and
// nests as deep as its stack goes), or null: a key twice in one object, or a key or value inside
// more than JSON_MAX_DEPTH arrays and objects; worded, as the core's, to follow what was read.
export function jsonStructureProblem(text) {
  const open = []; // per enclosing array or object: null, or the keys the object has so far
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7d || c === 0x5d) { // } ]
      open.pop();
      keyNext = false;
    } else if (c === 0x2c) { // ,
      keyNext = open[open.length - 1] instanceof Set;
    } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0x3a) { // a value or a key
      if (open.length > JSON_MAX_DEPTH) return `nests deeper than ${JSON_MAX_DEPTH} levels, the limit of mano's JSON readers`;
      if (c === 0x7b || c === 0x5b) { // { [
        open.push(c === 0x7b ? new Set() : null);
        keyNext = c === 0x7b;
      } else if (c === 0x22) { // "
        const end = stringEnd(text, i);
        if (keyNext) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes('\\') ? JSON.parse(`"${raw}"`) : raw;
          const keys = open[open.length - 1];
          if (keys.has(key)) return `has the key "${key.slice(0, 60)}" twice in one object; keep one`;
          keys.add(key);
          keyNext = false;
        }
        i = end;
      }
      // else a number, true, false or null: its other characters are none of the above
    }
  }
  return null;
}

// `value` as the JSON text the core reads as `kind`, refused here when it is over that kind's
// size limit in UTF-8 bytes (never fewer than its UTF-16 length), with the core's message.
export function jsonForCore(value, kind, limit = JSON_MAX_BYTES[kind]) {
  const text = JSON.stringify(value);
  if (typeof text === 'string' && text.length > limit) {
    const bytes = new Blob([text]).size;
    throw new InputError(`${kind}: its JSON is ${bytes} bytes, over the ${limit}-byte limit of mano's ${kind} reader`);
  }
  return text;
}
