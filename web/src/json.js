// The size limits of mano's JSON readers (native/io/json.hpp) for texts the package hands to the
// core, checked before they are copied into the WebAssembly heap (the core checks them again).
import { InputError } from './errors.js';

// By kind, as the core names them in its messages (an accumulator state's 4 GiB is longer than
// any JS string).
export const JSON_MAX_BYTES = { calibration: 256 * 2 ** 20 };

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
