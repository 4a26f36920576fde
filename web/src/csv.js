// CSV and TSV text (readCsv in loaders.js): the options, the number syntax the native reader
// reads (std::from_chars), the first-line rule (data, or a header) and the streaming parser.
// Which columns are classes (pandas' index, id and label columns, the label column option, and an
// index known by its first rows' values) is the core's rule, the native reader's too
// (native/io/csv_columns.hpp).
import { InputError } from './errors.js';
import { callCore, readerCore } from './core.js';
import { formatError, printable, shownField } from './text.js';

const INT32_MAX = 2147483647;

// CSV / TSV

export function csvOptions(name, opts) {
  let delimiter = opts.delimiter;
  // A .csv written with tabs: the tab is taken when the first line has no comma (as natively).
  const detectTab = delimiter === undefined && !name.toLowerCase().endsWith('.tsv');
  if (delimiter === undefined) delimiter = detectTab ? ',' : '\t';
  if (typeof delimiter !== 'string' || delimiter.length !== 1 || ' "\r\n'.includes(delimiter)) {
    throw new InputError(printable(`${name}: opts.delimiter must be one character such as ',' or '\\t'`));
  }
  const header = opts.header;
  if (header !== undefined && typeof header !== 'boolean') {
    throw new InputError(printable(`${name}: opts.header must be true, false or undefined (detect)`));
  }
  const labelColumn = opts.labelColumn;
  const validLabel =
    labelColumn === undefined ||
    typeof labelColumn === 'string' ||
    (Number.isSafeInteger(labelColumn) && labelColumn >= 0);
  if (!validLabel) {
    throw new InputError(printable(`${name}: opts.labelColumn must be a column name or a 0-based column index`));
  }
  return { delimiter, detectTab, header, labelColumn };
}

const DECIMAL = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const SPECIAL = {
  nan: NaN, '+nan': NaN, '-nan': NaN,
  inf: Infinity, '+inf': Infinity, '-inf': -Infinity,
  infinity: Infinity, '+infinity': Infinity, '-infinity': -Infinity,
};
const NAN_PAYLOAD = /^[+-]?nan\([0-9A-Za-z_]*\)$/i;
const INT32_MIN = -2147483648;

// The number a field spells, or undefined: what the native reader's std::from_chars reads
// (strtod's spellings), which refuses a number out of float64's range, one that rounds to
// infinity or a nonzero one that rounds to zero.
function parseNumber(field) {
  const s = field.trim();
  if (DECIMAL.test(s)) {
    const x = Number(s);
    if (!Number.isFinite(x) || (x === 0 && /[1-9]/.test(s.split(/[eE]/)[0]))) return undefined;
    return x;
  }
  const lower = s.toLowerCase();
  if (Object.hasOwn(SPECIAL, lower)) return SPECIAL[lower];
  return NAN_PAYLOAD.test(s) ? NaN : undefined;
}

// A first line is data when every field is a number, and a header when none is, or when its
// numbers are 0, 1, 2, ... in order beside names (the column names pandas writes for an unnamed
// array, pd.DataFrame(a).to_csv(); an empty first field is pandas' index). Anything else is
// refused: a line of numbers with a malformed one ("1,,2", "1d3,2") must not pass for a header
// and drop a row. The native reader's rule (native/io/csv.cpp); tests/readers/spec holds both.
function firstLineIsHeader(fields, name, line) {
  let numbers = 0;
  let countsUp = true;
  let other;
  let misfit;
  fields.forEach((field, j) => {
    const value = parseNumber(field);
    if (value !== undefined) {
      countsUp = countsUp && value === numbers && !field.includes('.');
      numbers += 1;
      return;
    }
    other ??= j;
    if (misfit === undefined && j > 0 && field.trim() === '') misfit = j;
  });
  if (numbers > 0 && other !== undefined && (!countsUp || misfit !== undefined)) {
    const j = misfit ?? other;
    const what = fields[j].trim() === '' ? 'an empty field' : `${shownField(fields[j])}, not a number,`;
    throw formatError(`${name}: line ${line}, column ${j + 1}: ${what} in a line of numbers: the first line is neither a ` +
      "header (names, or pandas' 0, 1, 2, ...) nor a row of numbers (set the header option if it is a header)");
  }
  return other !== undefined || (countsUp && numbers > 1);
}

export class CsvParser {
  constructor(name, { delimiter, detectTab, header, labelColumn }) {
    this.name = name;
    this.delimiter = delimiter;
    this.detectTab = detectTab;
    this.header = header;
    this.labelColumn = labelColumn;
    this.line = 0;
    this.pending = null; // a record whose quoted field continues on the next line
    this.pendingLine = 0;
    this.fieldCount = -1;
    this.firstLine = 0;
    this.hasHeader = false;
    this.labelIndex = -1;
    this.skip = null; // per field: not a logit (the label column, a column left out)
    this.notes = [];
    this.cols = 0;
    this.rows = 0;
    this.data = new Float64Array(1024);
    this.labels = new Int32Array(256);
  }

  // Parses the complete lines of text and returns the unfinished rest. Lines end with \n, \r\n
  // or \r; a \r that ends the text may be the first half of a \r\n, so its line waits.
  feed(text) {
    const end = /\r\n?|\n/g;
    let start = 0;
    for (let m = end.exec(text); m !== null; m = end.exec(text)) {
      if (m[0] === '\r' && m.index === text.length - 1) break;
      this.onLine(text.slice(start, m.index));
      start = end.lastIndex;
    }
    return text.slice(start);
  }

  // rest: the last line when the text does not end with a line end (or ends with a \r).
  finish(rest) {
    if (rest.endsWith('\r')) rest = rest.slice(0, -1);
    else if (rest === '') return this.end();
    this.onLine(rest);
    return this.end();
  }

  onLine(line) {
    this.line++;
    if (this.pending !== null) {
      this.record(`${this.pending}\n${line}`, this.pendingLine);
    } else if (line.trim() !== '') {
      this.record(line, this.line);
    }
  }

  record(text, line) {
    if (this.fieldCount < 0 && this.detectTab && !text.includes(',') && text.includes('\t')) this.delimiter = '\t';
    const fields = text.includes('"') ? this.splitQuoted(text, line) : text.split(this.delimiter);
    if (fields === null) {
      this.pending = text;
      this.pendingLine = line;
      return;
    }
    this.pending = null;
    this.onRecord(fields, line);
  }

  // Splits a line with quoted fields; null when a quoted field runs past the end of the line.
  splitQuoted(text, line) {
    const d = this.delimiter;
    const fields = [];
    let i = 0;
    for (;;) {
      let j = i;
      while (text[j] === ' ') j++;
      if (text[j] !== '"') {
        const next = text.indexOf(d, i);
        if (next < 0) {
          fields.push(text.slice(i));
          return fields;
        }
        fields.push(text.slice(i, next));
        i = next + 1;
        continue;
      }
      let value = '';
      let k = j + 1;
      for (;;) {
        const quote = text.indexOf('"', k);
        if (quote < 0) return null;
        value += text.slice(k, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          k = quote + 2;
        } else {
          k = quote + 1;
          break;
        }
      }
      while (text[k] === ' ') k++;
      fields.push(value);
      if (k >= text.length) return fields;
      if (text[k] !== d) {
        throw formatError(
          `${this.name}: line ${line}, column ${fields.length}: unexpected text after a closing quote`,
        );
      }
      i = k + 1;
    }
  }

  onRecord(fields, line) {
    if (this.fieldCount < 0) {
      this.fieldCount = fields.length;
      this.firstLine = line;
      this.hasHeader = this.header ?? firstLineIsHeader(fields, this.name, line);
      this.resolveLabelColumn(this.hasHeader ? fields.map((f) => f.trim()) : null);
      if (this.hasHeader) return;
    }
    const { name, labelIndex } = this;
    if (fields.length !== this.fieldCount) {
      throw formatError(
        `${name}: line ${line} has ${plural(fields.length, 'field')} but line ${this.firstLine} has ${this.fieldCount}`,
      );
    }
    if (this.data.length < (this.rows + 1) * this.cols) {
      this.data = grow(this.data, (this.rows + 1) * this.cols);
    }
    let p = this.rows * this.cols;
    for (let j = 0; j < fields.length; j++) {
      const field = fields[j];
      const value = parseNumber(field);
      if (this.skip[j] && j !== labelIndex) continue;
      if (j === labelIndex) {
        if (!Number.isInteger(value)) {
          throw formatError(`${name}: line ${line}, column ${j + 1}: ${shownField(field)} is not an integer class label`);
        }
        if (value < INT32_MIN || value > INT32_MAX) {
          throw formatError(`${name}: line ${line}, column ${j + 1}: the label ${shownField(field)} does not fit in int32`);
        }
        if (this.labels.length <= this.rows) this.labels = grow(this.labels, this.rows + 1);
        this.labels[this.rows] = value;
      } else {
        if (value === undefined) {
          const why = field.trim() === '' ? 'the field is empty' : `${shownField(field)} is not a number`;
          throw formatError(`${name}: line ${line}, column ${j + 1}: ${why}`);
        }
        this.data[p++] = value;
      }
    }
    this.rows++;
    if (this.rows === readerCore().CSV_INDEX_ROWS) this.checkIndexColumn();
  }

  // The core's index rule on the first rows read (all of them in a shorter file), as natively.
  checkIndexColumn() {
    const core = readerCore();
    const rows = Math.min(this.rows, core.CSV_INDEX_ROWS);
    const first = this.data.subarray(0, rows * this.cols);
    const bytes = new Uint8Array(first.buffer, first.byteOffset, first.byteLength);
    callCore(core, () => core.csvIndexColumn(this.name, this.namesText, this.fieldCount, this.labelOption, 'labelColumn',
      typeof this.labelColumn === 'number', bytes, rows));
  }

  // The label column, the columns left out and the notes saying so, from the core.
  resolveLabelColumn(headerNames) {
    const { name, labelColumn } = this;
    const core = readerCore();
    const option = labelColumn === undefined ? '' : String(labelColumn);
    const names = headerNames === null ? '' : headerNames.map((h) => `${h}\0`).join('');
    this.namesText = names;
    this.labelOption = option;
    const columns = JSON.parse(callCore(core, () => core.csvColumns(name, names, this.fieldCount, option, 'labelColumn',
      typeof labelColumn === 'number')));
    this.skip = new Array(this.fieldCount).fill(false);
    for (const j of columns.dropped) this.skip[j] = true;
    if (columns.label !== null) {
      this.labelIndex = columns.label;
      this.labelName = headerNames === null ? columns.label : headerNames[columns.label];
      this.skip[columns.label] = true;
    }
    this.notes = columns.notes;
    this.cols = this.fieldCount - columns.dropped.length - (columns.label !== null ? 1 : 0);
  }

  end() {
    if (this.pending !== null) {
      throw formatError(`${this.name}: line ${this.pendingLine}: a quoted field is never closed`);
    }
    if (this.fieldCount < 0) {
      throw formatError(`${this.name}: ${this.line === 0 ? 'is empty' : 'has no rows (only blank lines)'}`);
    }
    if (this.hasHeader && this.rows === 0) {
      throw formatError(`${this.name}: has a header (line ${this.firstLine}) but no data rows`);
    }
    if (this.rows < readerCore().CSV_INDEX_ROWS) this.checkIndexColumn();
    const matrix = {
      name: this.name,
      rows: this.rows,
      cols: this.cols,
      dtype: 'float64',
      data: this.data.slice(0, this.rows * this.cols),
    };
    if (this.labelIndex >= 0) Object.assign(matrix, { labels: this.labels.slice(0, this.rows), labelColumn: this.labelName });
    if (this.notes.length > 0) matrix.notes = this.notes;
    return matrix;
  }
}

function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function grow(array, atLeast) {
  const bigger = new array.constructor(Math.max(atLeast, array.length * 2));
  bigger.set(array);
  return bigger;
}
