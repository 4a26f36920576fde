// Text from a file or an option (a name, a field, a header) made safe for a one-line message,
// as the native build makes it (src/mano/base/text.cpp, printable): at most `max` UTF-8 bytes ("..."
// marks a cut), printable ASCII and printable UTF-8 kept, and every other byte written as \xNN:
// controls, C1 controls, and the characters that print as nothing or reorder the text around
// them (zero-width and bidirectional formatting, line and paragraph separators, the byte-order
// mark). A name cannot move the cursor, ring the bell, split the line or reverse it.
import { FormatError } from './errors.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function invisible(cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp === 0xad || cp === 0x61c || (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp === 0xfeff ||
    (cp >= 0xfff9 && cp <= 0xfffb) || cp === 0xfffe || cp === 0xffff || (cp >= 0xe0000 && cp <= 0xe007f);
}

// The length of the well-formed UTF-8 sequence at bytes[i] and its code point; [0] if none.
function utf8Sequence(bytes, i) {
  const c = bytes[i];
  let n = 0;
  let low = 0x80;
  let high = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) [n, low, high] = [3, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf];
  else if (c >= 0xf0 && c <= 0xf4) [n, low, high] = [4, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf];
  if (n === 0 || i + n > bytes.length || bytes[i + 1] < low || bytes[i + 1] > high) return [0];
  let cp = c & (0x7f >> n);
  for (let j = 1; j < n; j++) {
    if ((bytes[i + j] & 0xc0) !== 0x80) return [0];
    cp = (cp << 6) | (bytes[i + j] & 0x3f);
  }
  return [n, cp];
}

export function printable(text, max = Infinity) {
  let bytes = encoder.encode(String(text));
  const cut = bytes.length > max;
  if (cut) bytes = bytes.subarray(0, max);
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const c = bytes[i];
    if (c >= 0x20 && c < 0x7f) {
      out += String.fromCharCode(c);
      i += 1;
      continue;
    }
    const [n, cp] = c >= 0x80 ? utf8Sequence(bytes, i) : [0];
    if (n > 0 && !invisible(cp)) {
      out += decoder.decode(bytes.subarray(i, i + n));
      i += n;
      continue;
    }
    out += `\\x${c.toString(16).padStart(2, '0')}`;
    i += 1;
  }
  return cut ? `${out}...` : out;
}

// A field as a message shows it, as the native CSV reader does (native/io/csv.cpp, shown):
// quoted when short (the text of any number fits), else only its length, so an error never
// repeats a line of a file that is not what it was said to be.
export function shownField(field, what = 'field') {
  const most = 24;
  const bytes = encoder.encode(field).length;
  return bytes <= most ? `'${printable(field, most)}'` : `a ${what} of ${bytes} bytes`;
}

// What a value is, for a message about a wrong type: 'null', 'undefined', 'number', 'Array', ...
export function describeValue(x) {
  if (x === null) return 'null';
  if (typeof x !== 'object') return typeof x;
  return x.constructor?.name ?? 'an object';
}

// A FormatError naming a file, its text shown as the native reader shows it (printable).
export function formatError(message) {
  return new FormatError(printable(message));
}

// A value as a message quotes it: numbers as they are, text in quotes (so that the seed '7' does
// not read as the number 7), anything else by its type (describeValue).
export function shownValue(x) {
  if (typeof x === 'number' || typeof x === 'boolean' || x === undefined || x === null) return String(x);
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'string') return `'${printable(x, 40)}'`;
  return `a value of type ${describeValue(x)}`;
}
