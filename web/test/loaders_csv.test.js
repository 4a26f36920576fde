// Tests of the npm package's CSV / TSV reader (readCsv): input kinds, options and messages; what
// the native reader must read alike is the reader spec, tests/readers/spec (reader_spec.test.js).
// Run: node --test web/test/loaders_csv.test.js
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { chunkedBlob, loadPackage } from './support.js';
import {
  readCsv,
  readMatrix,
  FormatError,
  InputError,
  checkMatrix,
  expected,
  fixture,
  inputKinds,
  needsNumpy,
  rejectsFormat,
  rejectsInput,
  text,
} from './loader_support.js';

// CSV / TSV

describe('readCsv', () => {
  test('NumPy reference CSV with a header and a label column by name', needsNumpy, async () => {
    for (const [kind, input, opts, name] of inputKinds(fixture('ref.csv'), 'ref.csv')) {
      await test(kind, async () => checkMatrix(await readCsv(input, { ...opts, labelColumn: 'label' }), expected['ref.csv'], name));
    }
    checkMatrix(await readMatrix(new File([fixture('ref.csv')], 'ref.csv'), { labelColumn: 'label' }), expected['ref.csv'], 'ref.csv');
  });

  test('TSV chosen by the name', needsNumpy, async () => {
    checkMatrix(await readCsv(new File([fixture('ref.tsv')], 'ref.tsv'), { labelColumn: 4 }), expected['ref.tsv'], 'ref.tsv');
    checkMatrix(await readMatrix(fixture('ref.tsv'), { name: 'REF.TSV', labelColumn: 'label' }), expected['ref.tsv'], 'REF.TSV');
    checkMatrix(await readCsv(fixture('ref.tsv'), { delimiter: '\t', labelColumn: 'label' }), expected['ref.tsv'], 'input');
  });

  test('CRLF, no header, label column by index, tiny stream chunks', needsNumpy, async () => {
    const bytes = fixture('ref_crlf_noheader.csv');
    const exp = expected['ref_crlf_noheader.csv'];
    checkMatrix(await readCsv(bytes, { labelColumn: 0 }), exp, 'input');
    for (const chunk of [1, 2, 3, 7, 64]) {
      checkMatrix(await readCsv(chunkedBlob(bytes, 'n.csv', chunk), { labelColumn: 0 }), exp, 'n.csv');
    }
    const noLabels = await readCsv(bytes, { name: 'n.csv' });
    assert.equal(noLabels.cols, 5);
    assert.equal(noLabels.labels, undefined);
  });

  test('quotes, blank lines, whitespace, no trailing newline', async () => {
    const csv = '\n\n"first ""x""","se,cond",  "label"  \r\n\r\n  "1.5" ,2,"3"\n\n-4,"inf",0\n   \n5e-1,.25,  7';
    for (const chunk of [1, 2, 5, 1000]) {
      const m = await readCsv(chunkedBlob(text(csv), 'q.csv', chunk), { labelColumn: 'label' });
      assert.deepEqual([m.rows, m.cols, m.dtype], [3, 2, 'float64']);
      assert.deepEqual(Array.from(m.data), [1.5, 2, -4, Infinity, 0.5, 0.25]);
      assert.deepEqual(Array.from(m.labels), [3, 0, 7]);
    }
    const names = text('"first ""x""","se,cond",z\n1,2,3\n4,5,6\n');
    const named = await readCsv(names, { labelColumn: 'first "x"' });
    assert.deepEqual([Array.from(named.labels), Array.from(named.data)], [[1, 4], [2, 3, 5, 6]]);
    const comma = await readCsv(names, { labelColumn: 'se,cond' });
    assert.deepEqual([Array.from(comma.labels), Array.from(comma.data)], [[2, 5], [1, 3, 4, 6]]);
  });

  test('a quoted header field spanning lines, a UTF-8 name split across chunks', async () => {
    const csv = '"multi\nline","clé ✓"\r\n1,2\n3,4\n';
    for (const chunk of [1, 2, 3, 4]) {
      const m = await readCsv(chunkedBlob(text(csv), 'u.csv', chunk), { labelColumn: 'clé ✓' });
      assert.deepEqual(Array.from(m.data), [1, 3]);
      assert.deepEqual(Array.from(m.labels), [2, 4]);
    }
    const m = await readCsv(text(csv), { labelColumn: 'multi\nline' });
    assert.deepEqual(Array.from(m.labels), [1, 3]);
  });

  test('header detection and the header option', async () => {
    const numeric = text('1,2\n3,4\n');
    const detected = await readCsv(numeric);
    assert.deepEqual([detected.rows, Array.from(detected.data)], [2, [1, 2, 3, 4]]);
    const forced = await readCsv(numeric, { header: true });
    assert.deepEqual([forced.rows, Array.from(forced.data)], [1, [3, 4]]);
    await rejectsFormat(readCsv(text('a,b\n'), { name: 'h.csv' }), 'h.csv', 'has a header (line 1) but no data rows');
    await rejectsFormat(readCsv(text('a,b\n1,2\n'), { header: false, name: 'h.csv' }), 'h.csv', 'line 1, column 1', "'a' is not a number");
    const nanHeader = await readCsv(text('nan,Infinity,-inf\n1,2,3\n'));
    assert.equal(nanHeader.rows, 2, 'nan/inf spellings are numbers, so that line is data');
    assert.ok(Number.isNaN(nanHeader.data[0]));
  });

  test('text from the file or the name reaches a message escaped, as natively', async () => {
    const hostile = '\x1b]0;pwn\x07\u202e\x9b';
    for (const [csv, opts] of [
      [`a,b\n1,${hostile}\n`, { name: 'h.csv' }],
      [`a${hostile},b\n1,2\n`, { name: 'h.csv', labelColumn: 'zz' }],
      ['a,b\n1,x\n', { name: `h${hostile}.csv` }],
      ['a,b\n1,2\n', { name: `h${hostile}.csv`, header: 'yes' }],
    ]) {
      const error = await readCsv(text(csv), opts).then(() => null, (e) => e);
      assert.ok(error instanceof FormatError || error instanceof InputError, String(error));
      assert.doesNotMatch(error.message, /[\x00-\x1f\x7f-\x9f\u202e]/u, JSON.stringify(error.message));
      assert.match(error.message, /\\x1b/);
    }
  });

  test('a big file streams from a Blob', async () => {
    const rows = 40000;
    const cols = 6;
    const values = new Float64Array(rows * cols);
    const lines = ['c0,c1,c2,c3,c4,c5,y'];
    for (let r = 0; r < rows; r++) {
      const fields = [];
      for (let c = 0; c < cols; c++) {
        values[r * cols + c] = Math.sin(r * 7 + c) * 10 ** ((r + c) % 9 - 4);
        fields.push(String(values[r * cols + c]));
      }
      lines.push(`${fields.join(',')},${r % 10}`);
    }
    const blob = new Blob([lines.join('\n')]);
    assert.ok(blob.size > 3_000_000);
    const m = await readCsv(blob, { labelColumn: 'y', name: 'big.csv' });
    assert.deepEqual([m.rows, m.cols], [rows, cols]);
    assert.deepEqual(m.data, values);
    assert.equal(m.labels[12345], 5);
  });

  test('refuses broken text', async () => {
    const bad = async (csv, opts, ...parts) => rejectsFormat(readCsv(text(csv), { name: 'bad.csv', ...opts }), 'bad.csv', ...parts);
    await bad('a,b,c\n1,2,3\n4,5\n', {}, 'line 3 has 2 fields but line 1 has 3');
    await bad('\n1,2,3\n4,5,6,7\n', {}, 'line 3 has 4 fields but line 2 has 3');
    await bad('a,b,c\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n13,14,15\n16,17,abc\n', {}, 'line 7, column 3', "'abc' is not a number");
    await bad('a,b,c\n1,1.2.3,3\n', {}, 'line 2, column 2', "'1.2.3'");
    await bad('a,b,c\n1,,3\n', {}, 'line 2, column 2', 'empty');
    for (const word of ['0x10', '1_000', '1e', 'e5', '--1', 'infinit', '+-1', '1,5']) {
      await bad(`a\n${word}\n`, { delimiter: ';' }, 'line 2, column 1', `'${word}'`);
    }
    await bad('', {}, 'is empty');
    await bad('\n \r\n\n', {}, 'has no rows (only blank lines)');
    // the label column's messages are the native reader's (native/io/csv_columns.cpp)
    await bad('a,b\n1,2\n', { labelColumn: 'label' }, "has no column 'label'; its header has 'a', 'b'");
    await bad('1,2\n', { labelColumn: 'label' }, 'has no header, so the label column must be a 0-based index');
    await bad('1,2\n', { labelColumn: 2 }, 'label column 2 is out of range: the rows have 2 columns');
    await bad('a,b,label\n1,2,0\n1,2,1.5\n', { labelColumn: 2 }, 'line 3, column 3', "'1.5' is not an integer class label");
    await bad('a,b,label\n1,2,2147483648\n', { labelColumn: 2 }, 'line 2, column 3', 'does not fit in int32');
    await bad('a,b,label\n1,2,nan\n', { labelColumn: 2 }, 'line 2, column 3');
    await bad('label\n1\n', { labelColumn: 0 }, 'has no logit columns besides the label column');
    await bad('a,b\n1,"2\n3,4\n', {}, 'line 2', 'never closed');
    await bad('a,b\n1,"2"x\n', {}, 'line 2, column 2', 'closing quote');
    await rejectsFormat(readCsv(new Uint8Array([0x61, 0xff, 0x0a, 0x31, 0x0a]), { name: 'u.csv' }), 'u.csv', 'UTF-8');
  });

  test('ids and an index under any name are no classes, as natively (issue 50)', async () => {
    // df.to_csv() with a named index, or a sample_id column: the ids were scored as a class
    const mano = await loadPackage();
    const q = Array.from({ length: 120 }, (_, i) => [0, 1, 2, 3].map((j) => ((i * 37 + j * 11) % 101) / 16 - 3 + 0.01 * j));
    const csv = (header, id) => text(`${header}\n${q.map((r, i) => [...(id ? [id(i)] : []), ...r].join(',')).join('\n')}\n`);
    const alone = await readCsv(csv('0,1,2,3'), { name: 'q.csv' });
    const confscore = (m) => mano.score(m.data, m, { methods: 'confscore' }).methods.confscore.score;
    const cases = [
      ['row,0,1,2,3', (i) => i, "column 1 ('row') holds ids, not a class: left out of the logits"],
      ['frame,0,1,2,3', (i) => i, "column 1 ('frame') is pandas' index column, not a class: left out of the logits"],
      ['sample_id,a,b,c,d', (i) => 1000 + i, "column 1 ('sample_id') holds ids, not a class: left out of the logits"],
    ];
    for (const [header, id, note] of cases) {
      for (const chunk of [1, 7, 1 << 20]) {
        const m = await readCsv(chunkedBlob(csv(header, id), 'f.csv', chunk));
        assert.deepEqual([m.rows, m.cols, Array.from(m.data)], [alone.rows, alone.cols, Array.from(alone.data)], header);
        assert.deepEqual(m.notes, [`f.csv: ${note}`]);
        assert.equal(confscore(m), confscore(alone), header);
      }
    }
    // an index under a name of its own before classes' names: known by its first 100 rows, refused
    for (const chunk of [1, 7, 1 << 20]) {
      await rejectsFormat(readCsv(chunkedBlob(csv('frame,a,b,c,d', (i) => i), 'f.csv', chunk)), 'f.csv',
        "column 1 ('frame') holds an index or ids, not a class's logits: its first 100 rows count 0, 1, 2, ...; drop the " +
        "column (pandas: to_csv(index=False)) or name it 'index' or 'id', and mano leaves it out");
    }
    const short = text('frame,a,b\n1,0.5,0.25\n2,1.5,-2\n3,0.125,4\n');
    await rejectsFormat(readCsv(short, { name: 's.csv' }), 's.csv', 'its first 3 rows count 1, 2, 3');
    const shuffled = text('frame,a,b\n17,0.5,0.25\n3,1.5,-2\n8,0.125,4\n');
    await rejectsFormat(readCsv(shuffled, { name: 's.csv' }), 's.csv', 'whole numbers, no two the same');
    const labeled = await readCsv(text('frame,a,b\n0,0.5,0.25\n1,1.5,-2\n2,0.125,4\n'), { name: 's.csv', labelColumn: 'frame' });
    assert.deepEqual(Array.from(labeled.labels), [0, 1, 2]);
  });

  test('refuses bad options with an InputError', async () => {
    await rejectsInput(readCsv(text('1\n'), { delimiter: ';;' }), 'delimiter');
    await rejectsInput(readCsv(text('1\n'), { delimiter: '"' }), 'delimiter');
    await rejectsInput(readCsv(text('1\n'), { labelColumn: -1 }), 'labelColumn');
    await rejectsInput(readCsv(text('1\n'), { labelColumn: 1.5 }), 'labelColumn');
    await rejectsInput(readCsv(text('1\n'), { header: 'yes' }), 'header');
  });
});
