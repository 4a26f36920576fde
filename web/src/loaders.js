// Readers for the files logits and labels come in: NumPy .npy, .safetensors and CSV/TSV text.
//
// A Matrix is { name, rows, cols, dtype, data, labels?, labelColumn?, notes? } (a CSV's label column
// and its columns left out, src/csv.js): data is row-major in host byte order,
// a Float32Array/Float64Array for float32/float64, a Uint16Array of the raw bit patterns for
// float16/bfloat16, an Int32Array for integer arrays (dtype 'int32').
// A MatrixSource is { name, rows, cols, dtype, read(first, count) } for reading a big file a
// block of rows at a time; from a Blob/File only the requested bytes are read.
import { FormatError, InputError } from './errors.js';
import { callCore, readerCore } from './core.js';
import { CsvParser, csvOptions } from './csv.js';
import { describeValue, formatError, printable } from './text.js';

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const INT32_MAX = 2147483647;
const CSV_CHUNK = 1 << 20;
const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

// Public API

export async function openNpy(input, opts) {
  opts = checkOpts(opts);
  const name = displayName(input, opts);
  const src = byteSource(input, name);
  return makeSource(src, name, await parseNpyHeader(src, name));
}

export async function openSafetensors(input, opts) {
  opts = checkOpts(opts);
  const name = displayName(input, opts);
  if (opts.key !== undefined && typeof opts.key !== 'string') {
    throw new InputError(printable(`${name}: opts.key must be a string`));
  }
  const src = byteSource(input, name);
  return makeSource(src, name, await parseSafetensorsHeader(src, name, opts.key));
}

export async function readNpy(input, opts) {
  return readAll(await openNpy(input, opts));
}

export async function readSafetensors(input, opts) {
  return readAll(await openSafetensors(input, opts));
}

export async function readCsv(input, opts) {
  opts = checkOpts(opts);
  const name = displayName(input, opts);
  const src = byteSource(input, name); // validates the input's type
  const parser = new CsvParser(name, csvOptions(name, opts));
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk, stream) => {
    try {
      return decoder.decode(chunk, { stream });
    } catch {
      throw formatError(`${name}: is not valid UTF-8 text`);
    }
  };
  // Only the unfinished last line of each chunk is carried over, so the whole text is never
  // held as one string.
  let carry = '';
  for await (const chunk of byteChunks(input, src, name)) {
    carry = parser.feed(carry + decode(chunk, true));
  }
  return parser.finish(parser.feed(carry + decode(new Uint8Array(0), false)));
}

// The format of an input: the magic bytes decide, then the name's extension (so a damaged
// file with a telling extension gets that reader's specific complaint).
async function formatOf(input, name) {
  const src = byteSource(input, name);
  const head = await src.read(0, Math.min(src.size, 16));
  if (hasNpyMagic(head)) return 'npy';
  if (looksLikeSafetensors(head, src.size)) return 'safetensors';
  const lower = name.toLowerCase();
  if (lower.endsWith('.csv') || lower.endsWith('.tsv')) return 'csv';
  if (lower.endsWith('.npy')) return 'npy';
  if (lower.endsWith('.safetensors')) return 'safetensors';
  throw formatError(
    `${name}: is not a format this package reads; it knows .npy (NumPy), .safetensors, ` +
      `and CSV/TSV text (by the extension .csv or .tsv)`,
  );
}

export async function readMatrix(input, opts) {
  opts = checkOpts(opts);
  const name = displayName(input, opts);
  const read = { npy: readNpy, safetensors: readSafetensors, csv: readCsv }[await formatOf(input, name)];
  return read(input, { ...opts, name });
}

// Like readMatrix, but .npy and .safetensors come back as a MatrixSource that reads only the
// rows asked for; CSV (which has no row index) is parsed whole into a Matrix.
export async function openMatrix(input, opts) {
  opts = checkOpts(opts);
  const name = displayName(input, opts);
  const open = { npy: openNpy, safetensors: openSafetensors, csv: readCsv }[await formatOf(input, name)];
  return open(input, { ...opts, name });
}

// Inputs

function checkOpts(opts) {
  if (opts === undefined) return {};
  if (opts === null || typeof opts !== 'object') throw new InputError('options must be an object');
  return opts;
}

function isBlob(x) {
  return (
    x !== null &&
    typeof x === 'object' &&
    typeof x.size === 'number' &&
    typeof x.slice === 'function' &&
    typeof x.arrayBuffer === 'function'
  );
}

function isArrayBuffer(x) {
  return (
    x instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)
  );
}

// The name of an input given without one (bytes, a Blob without a name, no opts.name).
export const UNNAMED = 'input';

function displayName(input, opts) {
  if (opts.name !== undefined) {
    if (typeof opts.name !== 'string') throw new InputError('opts.name must be a string');
    return opts.name;
  }
  if (isBlob(input) && typeof input.name === 'string' && input.name !== '') return input.name;
  return UNNAMED;
}

// { size, read(a, b) -> Promise<Uint8Array> }; read returns a copy the caller owns, starting at
// offset 0 of its buffer, so it can be byte-swapped in place and viewed as any typed array.
function byteSource(input, name) {
  let bytes = null;
  if (isArrayBuffer(input)) bytes = new Uint8Array(input);
  else if (ArrayBuffer.isView(input)) {
    bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }
  if (bytes) return { size: bytes.length, bytes, read: async (a, b) => bytes.slice(a, b) };
  if (isBlob(input)) {
    return {
      size: input.size,
      async read(a, b) {
        let buffer;
        try {
          buffer = await input.slice(a, b).arrayBuffer();
        } catch (e) {
          throw formatError(`${name}: could not be read (${e?.message ?? e})`, { cause: e });
        }
        if (buffer.byteLength !== b - a) {
          throw formatError(`${name}: changed size while it was being read`);
        }
        return new Uint8Array(buffer);
      },
    };
  }
  throw new InputError(
    printable(`${name}: expected an ArrayBuffer, a typed array, a Blob or a File, got ${describeValue(input)}`),
  );
}


async function* byteChunks(input, src, name) {
  if (src.bytes) {
    for (let a = 0; a < src.size; a += CSV_CHUNK) yield src.bytes.subarray(a, a + CSV_CHUNK);
    return;
  }
  if (typeof input.stream !== 'function') {
    for (let a = 0; a < src.size; a += CSV_CHUNK) yield await src.read(a, Math.min(src.size, a + CSV_CHUNK));
    return;
  }
  let reader;
  try {
    reader = input.stream().getReader();
  } catch (e) {
    throw formatError(`${name}: could not be read (${e?.message ?? e})`, { cause: e });
  }
  let done = false;
  try {
    while (!done) {
      let step;
      try {
        step = await reader.read();
      } catch (e) {
        done = true;
        throw formatError(`${name}: could not be read (${e?.message ?? e})`, { cause: e });
      }
      done = step.done;
      if (!done) yield step.value;
    }
  } finally {
    // A parse error stops the reading early; let the stream release the file.
    if (!done) reader.cancel().catch(() => {});
  }
}

// Sources and decoding

// layout: { rows, cols, dtype, kind: 'f'|'i'|'u', itemsize, little, dataStart, fortran }
function makeSource(src, name, layout) {
  const { rows, cols, itemsize, dataStart } = layout;
  const rowBytes = cols * itemsize;
  let whole = null;
  return {
    name,
    rows,
    cols,
    dtype: layout.dtype,
    async read(first, count) {
      checkRange(name, first, count, rows);
      if (layout.fortran && rows > 1 && cols > 1) {
        // A Fortran-order file stores each column contiguously, so any block of rows is
        // scattered over the whole file: read and transpose the whole array once, keep it.
        whole ??= readFortran(src, name, layout);
        return (await whole).slice(first * cols, (first + count) * cols);
      }
      const bytes = await src.read(dataStart + first * rowBytes, dataStart + (first + count) * rowBytes);
      return decode(bytes, layout, name, (i) => first + Math.floor(i / cols));
    },
  };
}

function checkRange(name, first, count, rows) {
  const ok =
    Number.isSafeInteger(first) && Number.isSafeInteger(count) && first >= 0 && count >= 0 &&
    first + count <= rows;
  if (!ok) {
    throw new InputError(
      printable(`${name}: read(${first}, ${count}) asks for rows outside the ${rows} rows [0, ${rows}) it has`),
    );
  }
}

async function readFortran(src, name, layout) {
  const { rows, cols } = layout;
  const bytes = await src.read(layout.dataStart, layout.dataStart + rows * cols * layout.itemsize);
  const byColumn = decode(bytes, layout, name, (i) => i % rows);
  const out = new byColumn.constructor(rows * cols);
  for (let j = 0; j < cols; j++) {
    const column = j * rows;
    for (let i = 0; i < rows; i++) out[i * cols + j] = byColumn[column + i];
  }
  return out;
}

async function readAll(source) {
  const data = await source.read(0, source.rows);
  return { name: source.name, rows: source.rows, cols: source.cols, dtype: source.dtype, data };
}

// bytes: an owned copy (see byteSource); rowOf maps an element index to its row, for errors.
function decode(bytes, layout, name, rowOf) {
  const { kind, itemsize, little } = layout;
  if (kind !== 'f') return decodeIntegers(bytes, layout, name, rowOf);
  if (bytes.byteOffset % itemsize !== 0) bytes = bytes.slice();
  if (little !== HOST_LITTLE_ENDIAN) swapBytes(bytes, itemsize);
  const n = bytes.length / itemsize;
  if (itemsize === 2) return new Uint16Array(bytes.buffer, bytes.byteOffset, n);
  if (itemsize === 4) return new Float32Array(bytes.buffer, bytes.byteOffset, n);
  return new Float64Array(bytes.buffer, bytes.byteOffset, n);
}

function swapBytes(bytes, itemsize) {
  for (let p = 0; p < bytes.length; p += itemsize) {
    for (let a = p, b = p + itemsize - 1; a < b; a++, b--) {
      const t = bytes[a];
      bytes[a] = bytes[b];
      bytes[b] = t;
    }
  }
}

function decodeIntegers(bytes, layout, name, rowOf) {
  const { kind, itemsize, little } = layout;
  const n = bytes.length / itemsize;
  const out = new Int32Array(n);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tooBig = (i, value) =>
    formatError(`${name}: the value ${value} in row ${rowOf(i)} does not fit in int32`);
  const type = kind + itemsize;
  for (let i = 0; i < n; i++) {
    switch (type) {
      case 'i1': out[i] = dv.getInt8(i); break;
      case 'u1': out[i] = bytes[i]; break;
      case 'i2': out[i] = dv.getInt16(2 * i, little); break;
      case 'u2': out[i] = dv.getUint16(2 * i, little); break;
      case 'i4': out[i] = dv.getInt32(4 * i, little); break;
      case 'u4': {
        const v = dv.getUint32(4 * i, little);
        if (v > INT32_MAX) throw tooBig(i, v);
        out[i] = v;
        break;
      }
      default: { // i8, u8: split into 32-bit halves to avoid BigInt on the common path
        const lo = dv.getUint32(8 * i + (little ? 0 : 4), little);
        const hi = dv.getInt32(8 * i + (little ? 4 : 0), little);
        const fits = kind === 'i'
          ? (hi === 0 && lo <= INT32_MAX) || (hi === -1 && lo > INT32_MAX)
          : hi === 0 && lo <= INT32_MAX;
        if (!fits) {
          const v = (BigInt(hi) << 32n) | BigInt(lo);
          throw tooBig(i, kind === 'i' ? v : BigInt.asUintN(64, v));
        }
        out[i] = lo | 0;
      }
    }
  }
  return out;
}

// rows, cols and the byte count of a shape, or a FormatError. subject starts the messages
// ("logits.npy:" or "model.safetensors: tensor 'logits'"); shown is the shape as NumPy prints it.
function matrixShape(subject, dims, itemsize, dtypeText, shown) {
  if (dims.length < 1 || dims.length > 2) {
    throw formatError(`${subject} has shape ${shown}; logits and labels must be 1-D or 2-D arrays`);
  }
  const rows = dims[0];
  const cols = dims.length === 2 ? dims[1] : 1;
  if (cols === 0) throw formatError(`${subject} has no columns (its shape is ${shown})`);
  // Products of integers <= 2^53 that land above MAX_SAFE_INTEGER stay above it when rounded.
  const bytes = rows * cols * itemsize;
  if (!Number.isSafeInteger(rows) || !Number.isSafeInteger(cols) || bytes > Number.MAX_SAFE_INTEGER) {
    throw formatError(`${subject} has shape ${shown} of ${dtypeText}, which is too large`);
  }
  return { rows, cols, bytes };
}

// .npy

function hasNpyMagic(head) {
  return head.length >= 6 && NPY_MAGIC.every((b, i) => head[i] === b);
}

// The header rules are the native reader's, run by the core (native/io/npy_header.cpp): it reads the
// first bytes of the file, at most the longest header the rules allow.
async function parseNpyHeader(src, name) {
  const core = readerCore();
  const head = await src.read(0, Math.min(src.size, core.NPY_MAX_PREFIX_BYTES));
  const header = JSON.parse(callCore(core, () => core.npyHeader(head, src.size, name)));
  const { descr, element } = header;
  if (!element) {
    throw formatError(`${name}: has dtype ${descr}; logits must be float16, float32 or float64 and labels integers`);
  }
  const { rows, cols } = matrixShape(`${name}:`, header.shape, element.itemsize, descr, header.shown);
  return { rows, cols, fortran: header.fortran, dataStart: header.dataOffset, ...element };
}

// .safetensors

function looksLikeSafetensors(head, size) {
  if (head.length < 9 || head[8] !== 0x7b) return false; // '{'
  const dv = new DataView(head.buffer, head.byteOffset, head.length);
  const length = dv.getUint32(0, true);
  return dv.getUint32(4, true) === 0 && length >= 2 && length <= size - 8;
}

// The header rules (every entry, the data section holding the tensors back to back and nothing
// else, the limits) are the native reader's, run by the core (native/io/safetensors_header.cpp).
async function parseSafetensorsHeader(src, name, key = '') {
  const core = readerCore();
  const first = await src.read(0, Math.min(src.size, 8));
  const length = callCore(core, () => core.safetensorsHeaderLength(first, src.size, name));
  const header = await src.read(8, 8 + length);
  const tensor = JSON.parse(callCore(core, () => core.safetensorsHeader(header, src.size, name, key)));
  const { where, dtype, element } = tensor;
  if (!element) {
    throw formatError(
      `${where} has dtype ${dtype}; logits must be F16, BF16, F32 or F64 and labels integers (I8 to I64, U8 to U64)`,
    );
  }
  const { rows, cols } = matrixShape(where, tensor.shape, element.itemsize, dtype, tensor.shown);
  return { rows, cols, fortran: false, dataStart: tensor.offset, ...element };
}
