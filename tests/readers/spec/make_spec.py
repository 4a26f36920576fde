"""Writes the reader spec: the fixture files under tests/readers/spec/ and expected.json, which
both readers' test suites read (native: tests/readers/test_spec.py through tests/readers/dump.cpp;
JS: web/test/reader_spec.test.js through web/src/loaders.js), so the two cannot drift.
Run: /usr/bin/python3 tests/readers/spec/make_spec.py   (rewrites the files; commit them)

Each case of expected.json reads one file as one kind:
  "matrix": logits (open_matrix / readMatrix): {"rows", "cols", "dtype", "values"} row-major;
  "labels": integer labels (read_labels / readMatrix's int32 data or a CSV's label column):
            {"values"}.
Values are float64 numbers (float16, bfloat16 and float32 values widened exactly), with "nan",
"inf", "-inf" and "-0" as strings because JSON has no spelling for them. A refused file is
{"error": PHRASE}: the reader's own error (native: exit 2, one stderr line naming the file; JS:
a FormatError whose message starts with the file's name) holding PHRASE, or any message where
PHRASE is "*"; PHRASE is {"native": ..., "js": ...} where the wording differs.
"options": key, label_column (a string as the CLI passes it; an integer is passed to JS as a
number and to native as its digits), header (true/false; absent: detect), shape (raw files).
A case's "expect" holds for both targets unless it has "native" or "js", which then replace it
for that target; such a case says why in "differs". "targets" (default both) lists where a case
runs at all.

NumPy is the independent reference: it parses the expected numbers (float() is strtod), packs the
binary data, and every .npy written here is loaded back with np.load and compared.
"""
import json
import pathlib
import struct
import zipfile

import numpy as np

from spec_values import floats

HERE = pathlib.Path(__file__).resolve().parent
SUBDIRS = ("csv", "npy", "safetensors", "npz", "raw")
cases = []


# Values and outcomes

def matrix(a, dtype=None):
    a = np.asarray(a)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if dtype is None:
        dtype = {2: "float16", 4: "float32", 8: "float64"}[a.dtype.itemsize] if a.dtype.kind == "f" else "int32"
    values = floats(a) if dtype != "int32" else [int(v) for v in a.ravel()]
    return {"rows": int(a.shape[0]), "cols": int(a.shape[1]), "dtype": dtype, "values": values}


def text_matrix(rows, dtype="float64"):
    """The matrix NumPy's float() (strtod) makes of rows of number spellings."""
    return matrix(np.array([[float(f) for f in row] for row in rows], dtype=np.float64).reshape(len(rows), -1), dtype)


def labels(values):
    return {"values": [int(v) for v in values]}


def error(phrase, js=None):
    return {"error": phrase if js is None else {"native": phrase, "js": js}}


def case(file, kind, expect, options=None, native=None, js=None, differs=None, note=None, targets=None):
    entry = {"id": "", "file": file, "kind": kind}
    if options:
        entry["options"] = options
    entry["expect"] = expect
    if native is not None:
        entry["native"] = native
    if js is not None:
        entry["js"] = js
    assert (native is None and js is None) or differs, f"{file}: a target-specific outcome needs 'differs'"
    if differs:
        entry["differs"] = differs
    if note:
        entry["note"] = note
    if targets:
        entry["targets"] = targets
    suffix = "".join(f" {k}={json.dumps(v)}" for k, v in sorted((options or {}).items()))
    entry["id"] = f"{file} {kind}{suffix}"
    assert all(c["id"] != entry["id"] for c in cases), entry["id"]
    cases.append(entry)


# Writers

def write(rel, data):
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return rel


def npy_bytes(descr, shape, payload, fortran=False, major=1, extra=""):
    """A .npy file as NumPy writes it (header padded to 64 bytes), from its parts, so the bytes do
    not depend on the NumPy version."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': %s, 'fortran_order': %s, 'shape': %s, %s}" % (descr, fortran, shape_text, extra)
    prefix = 10 if major == 1 else 12
    header += " " * ((64 - (len(header) + 1 + prefix) % 64) % 64) + "\n"
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode("latin-1") + payload


def npy_of(a, major=1):
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    payload = a.tobytes(order="F" if fortran else "C")
    return npy_bytes(repr(a.dtype.str), a.shape, payload, fortran=fortran, major=major)


def write_npy(rel, a, major=1):
    write(rel, npy_of(a, major))
    back = np.load(HERE / rel)
    assert back.dtype == a.dtype and back.shape == a.shape and np.array_equal(back, a, equal_nan=True), rel
    return rel


def safetensors_bytes(tensors, metadata=None, trailing=b"", offsets=None):
    """tensors: (name, dtype, shape, raw bytes) in data order; offsets replaces data_offsets."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for i, (name, dtype, shape, raw) in enumerate(tensors):
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": list(offsets[i]) if offsets else [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data + trailing


def npz_bytes(members, deflate):
    """An .npz (a zip of .npy members) with fixed timestamps, so it is the same on every run."""
    import io
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, a in members:
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            archive.writestr(info, npy_of(a))
    return buffer.getvalue()


def csv(rel, text):
    return write(rel, text)


# Data

rng = np.random.default_rng(20250301)
q = np.round(rng.standard_normal((4, 3)) * 8, 3)  # short decimal spellings
y4 = np.array([2, 0, 1, 2], np.int64)


def lines(values, delimiter=","):
    return [delimiter.join(repr(float(v)) for v in row) for row in values]


# CSV: header detection

rows = lines(q)
spelled = [row.split(",") for row in rows]
case(csv("csv/pandas_header.csv", "0,1,2\n" + "\n".join(rows[:2]) + "\n"), "matrix", text_matrix(spelled[:2]),
     note="pd.DataFrame(a).to_csv(index=False): the column names of an unnamed array, 0..n-1, are a header")
case("csv/pandas_header.csv", "matrix", text_matrix([["0", "1", "2"]] + spelled[:2]), options={"header": False},
     note="header=false makes the first line data")
case(csv("csv/pandas_header_label.csv", "0,1\n0.5,1\n-1.25,0\n2,1\n"), "matrix", text_matrix([["0.5"], ["-1.25"], ["2"]]),
     options={"label_column": "1"}, note="a pandas header with the label column named '1'")
case("csv/pandas_header_label.csv", "labels", labels([1, 0, 1]), options={"label_column": "1"})
case("csv/pandas_header_label.csv", "labels", labels([1, 0, 1]), options={"label_column": 1})
case("csv/pandas_header_label.csv", "matrix", text_matrix([["0.5", "1"], ["-1.25", "0"], ["2", "1"]]),
     note="without a label column both columns are logits")
case(csv("csv/pandas_header_named_label.csv", "0,1,2,label\n" + "\n".join(r + f",{v}" for r, v in zip(rows, y4)) + "\n"),
     "labels", labels(y4), options={"label_column": "label"},
     note="pd.DataFrame(a).assign(label=y).to_csv(index=False)")
case("csv/pandas_header_named_label.csv", "matrix", text_matrix(spelled), options={"label_column": "label"})
case(csv("csv/pandas_header.tsv", "0\t1\t2\n" + "\n".join(lines(q[:2], "\t")) + "\n"), "matrix", text_matrix(spelled[:2]),
     note="to_csv(sep='\\t')")
case(csv("csv/pandas_header_quoted.csv", '"0","1","2"\n' + "\n".join(rows[:2]) + "\n"), "matrix",
     text_matrix(spelled[:2]), note="to_csv(quoting=csv.QUOTE_ALL) quotes the names")
case(csv("csv/pandas_header_spaced.csv", " 0 , +1 ,2\n1,2,3\n"), "matrix", text_matrix([["1", "2", "3"]]),
     note="the rule compares the numbers the fields spell: ' +1 ' is 1")
case(csv("csv/counts_from_one.csv", "1,2,3\n4,5,6\n"), "matrix", text_matrix([["1", "2", "3"], ["4", "5", "6"]]),
     note="1, 2, 3 does not count from 0: data")
case(csv("csv/counts_with_point.csv", "0.0,1.0,2.0\n4,5,6\n"), "matrix",
     text_matrix([["0.0", "1.0", "2.0"], ["4", "5", "6"]]), note="0.0, 1.0, 2.0 is written as numbers: data")
case(csv("csv/counts_down.csv", "1,0\n3,4\n"), "matrix", text_matrix([["1", "0"], ["3", "4"]]))
case(csv("csv/one_column_zero.csv", "0\n1\n2\n"), "matrix", text_matrix([["0"], ["1"], ["2"]]),
     note="one field is never a counting header: a labels column starting with class 0 is data")
case("csv/one_column_zero.csv", "labels", labels([0, 1, 2]),
     js=error("labels must be integers"),
     differs="the npm package has no CSV labels file: readMatrix gives a float64 column, which the worker refuses "
             "as labels; a CSV's labels come from its label column (labelColumn)")
case(csv("csv/named_header.csv", "a,b,c\n" + "\n".join(rows) + "\n"), "matrix", text_matrix(spelled))
case("csv/named_header.csv", "matrix", text_matrix(spelled), options={"header": True})
case(csv("csv/no_header.csv", "\n".join(rows) + "\n"), "matrix", text_matrix(spelled))
case("csv/no_header.csv", "matrix", text_matrix(spelled[1:]), options={"header": True},
     note="header=true takes the first line as names, whatever it holds")
case(csv("csv/nan_header.csv", "nan,inf,-inf\n1,2,3\n"), "matrix", text_matrix([["nan", "inf", "-inf"], ["1", "2", "3"]]),
     note="nan and inf spell numbers, so that line is data")
# A first line with numbers in it is data, or pandas' 0, 1, 2, ... names: a malformed number
# there must not turn the line into a header and drop a row
neither = "neither a header"
for rel, text in [("csv/first_line_empty_field.csv", "1,,2\n3,4,5\n"), ("csv/first_line_1d3.csv", "1d3,2\n3,4\n"),
                  ("csv/first_line_hex.csv", "0x1p3,2\n3,4\n"), ("csv/first_line_underscore.csv", "1_0,2\n3,4\n"),
                  ("csv/first_line_tab.csv", "1,5\t2\n3,4\n"), ("csv/first_line_counts_gap.csv", "0,,1\n3,4,5\n")]:
    case(csv(rel, text), "matrix", error(neither), note="a line of numbers with one that is not: refused, naming it")
case("csv/first_line_1d3.csv", "matrix", text_matrix([["3", "4"]]), options={"header": True},
     note="header=true says the line is names")
case(csv("csv/pandas_index_header.csv", ",0,1\n0,1.5,2\n1,3,4\n"), "matrix",
     text_matrix([["0", "1.5", "2"], ["1", "3", "4"]]),
     note="pd.DataFrame(a).to_csv(): an empty index name, then the column names 0, 1")
case(csv("csv/pandas_index_one_column.csv", ",0\n0,1.5\n1,3\n"), "matrix", text_matrix([["0", "1.5"], ["1", "3"]]))
# Text from the file is escaped in messages, as natively: no escape sequence or bidirectional
# override reaches the terminal
case(csv("csv/control_field.csv", "a,b\n1,\x1b]0;pwn\x07\u202e\n"), "matrix",
     error("'\\x1b]0;pwn\\x07\\xe2\\x80\\xae' is not a number"))
case(csv("csv/control_header.csv", "a\x1b[2J,b\n1,2\n"), "matrix", error("\\x1b[2J"),
     options={"label_column": "zz"}, note="the header's names, listed when the label column is not among them")
case(csv("csv/quoted_names.csv", '"class, 0","class, 1",label\n1.5,2,1\n3,4,0\n'), "matrix",
     text_matrix([["1.5", "2"], ["3", "4"]]), options={"label_column": "label"})
case("csv/quoted_names.csv", "matrix", text_matrix([["1.5", "1"], ["3", "0"]]), options={"label_column": "class, 1"},
     note="a quoted name may hold the delimiter")

# CSV: line ends, blank lines, byte-order mark, delimiters

case(csv("csv/crlf.csv", "a,b,c\r\n" + "\r\n".join(rows) + "\r\n"), "matrix", text_matrix(spelled))
case(csv("csv/cr.csv", "a,b,c\r" + "\r".join(rows) + "\r"), "matrix", text_matrix(spelled),
     note="classic Mac OS line ends")
case(csv("csv/cr_no_final.csv", "\r".join(rows)), "matrix", text_matrix(spelled))
case(csv("csv/mixed_ends.csv", "a,b,c\r\n" + rows[0] + "\r" + rows[1] + "\n\r\n\r" + rows[2] + "\n" + rows[3]),
     "matrix", text_matrix(spelled), note="\\r\\n, \\r and \\n in one file, blank lines between")
case(csv("csv/no_final_newline.csv", "\n".join(rows)), "matrix", text_matrix(spelled))
case(csv("csv/blank_lines.csv", "\n\na,b,c\n\n" + "\n\n".join(rows) + "\n\n\n"), "matrix", text_matrix(spelled))
case(csv("csv/bom.csv", "\ufeffa,b\n1,2\n"), "matrix", text_matrix([["1", "2"]]), note="a UTF-8 byte-order mark")
case("csv/bom.csv", "labels", labels([1]), options={"label_column": "a"},
     note="the mark is not part of the first name")
case(csv("csv/space_line.csv", "a,b\n1,2\n   \n3,4\n"), "matrix", text_matrix([["1", "2"], ["3", "4"]]),
     note="a line of spaces is blank")
case(csv("csv/plain.tsv", "a\tb\tc\n" + "\n".join(lines(q, "\t")) + "\n"), "matrix", text_matrix(spelled))
case(csv("csv/no_header.tsv", "\n".join(lines(q, "\t")) + "\n"), "matrix", text_matrix(spelled))
case(csv("csv/tabs.csv", "a\tb\tc\n" + "\n".join(lines(q, "\t")) + "\n"), "matrix", text_matrix(spelled),
     note="a .csv whose first line has tabs and no comma is read with tabs")
case(csv("csv/UPPER.CSV", "\n".join(rows) + "\n"), "matrix", text_matrix(spelled), note="extensions in any case")
case(csv("csv/semicolons.csv", "a;b\n1;2\n"), "matrix", error("'1;2' is not a number"),
     note="neither reader guesses ';'")

# CSV: fields and numbers

case(csv("csv/spaces_quotes_signs.csv", "a,b,c\n 1.5 ,\t2, 3\n\"4\",\"-5.5\",\"+6\"\n+7,-0,+.5\n"), "matrix",
     text_matrix([["1.5", "2", "3"], ["4", "-5.5", "6"], ["7", "-0", ".5"]]),
     note="spaces and tabs around fields, quoted numbers, + signs")
specials = [["nan", "NaN", "-nan", "+nan"], ["inf", "-inf", "Infinity", "-INFINITY"], ["1.", ".5", "-0", "+3"],
            ["1e3", "-2.5E-3", "5e+2", "00"], ["1e-310", "4.9e-324", "1.7976931348623157e308", "3e-324"]]
case(csv("csv/number_spellings.csv", "\n".join(",".join(r) for r in specials) + "\n"), "matrix", text_matrix(specials),
     note="what strtod reads: nan/inf in any case and sign, subnormals, the largest double")
case(csv("csv/overflow.csv", "1,2\n3,1e400\n"), "matrix", error("'1e400' is not a number"),
     note="a number beyond the float64 range (std::from_chars: out of range)")
case(csv("csv/overflow_rounding.csv", "1,2\n3,1.7976931348623159e308\n"), "matrix",
     error("'1.7976931348623159e308' is not a number"), note="rounds to infinity")
case(csv("csv/underflow.csv", "1,2\n3,1e-400\n"), "matrix", error("'1e-400' is not a number"),
     note="a nonzero number that rounds to 0 (std::from_chars: out of range); Python's float() gives 0.0")
case(csv("csv/hex.csv", "a,b\n0x10,1\n"), "matrix", error("'0x10' is not a number"))
for word in ("1_000", "1e", "infinit", "--1", "1.2.3"):
    name = "csv/bad_number_" + word.replace(".", "p").replace("-", "m").replace("_", "u") + ".csv"
    case(csv(name, f"1,2\n1,{word}\n"), "matrix", error(f"line 2, column 2: '{word}' is not a number"))
case(csv("csv/plus_minus.csv", "a,b\n1,+-1\n"), "matrix", error("'+-1' is not a number"))
case(csv("csv/plus_minus_label.csv", "a,b,label\n1,2,+-1\n"), "labels", error("'+-1' is not an integer class label"),
     options={"label_column": "label"})
case(csv("csv/nan_payload.csv", "a,b\n1,nan(123)\n"), "matrix", text_matrix([["1", "nan"]]),
     note="std::from_chars and strtod read nan(chars)")
case(csv("csv/empty_field.csv", "a,b,c\n1,,3\n"), "matrix", error("empty"))
case(csv("csv/not_a_number.csv", "a,b,c\n1,2,3\n4,abc,6\n"), "matrix", error("'abc' is not a number"),
     note="native also names the column: line 3, column 2 ('b')")
case(csv("csv/not_a_number_no_header.csv", "1,2,3\n4,5,6\n7,abc,9\n"), "matrix",
     error("line 3, column 2: 'abc' is not a number"))
case(csv("csv/ragged.csv", "1,2\n3,4\n5\n"), "matrix",
     error("line 3 has 1 fields but the first row has 2", js="line 3 has 1 field but line 1 has 2"))
case(csv("csv/ragged_after_header.csv", "a,b,c\n1,2\n"), "matrix",
     error("line 2 has 2 fields but the header has 3", js="line 2 has 2 fields but line 1 has 3"))
case(csv("csv/ragged_header.tsv", "a\tb\n1\t2\n3\n"), "matrix",
     error("line 3 has 1 fields but the header has 2", js="line 3 has 1 field but line 1 has 2"))
case(csv("csv/cr_ragged.csv", "1,2\r3,4\r\n5\r"), "matrix", error("line 3 has 1 field"))
case(csv("csv/wide_row.csv", "1,2\n3,4,5\n"), "matrix", error("line 2 has 3 fields"))
case(csv("csv/empty.csv", ""), "matrix", error("is empty"))
case(csv("csv/only_blank_lines.csv", "\n\r\n\r\n\n"), "matrix", error("has no rows"))
case(csv("csv/header_only.csv", "a,b,c\n"), "matrix", error("no data rows"))
case(csv("csv/header_only_pandas.csv", "0,1,2\r\n\r\n"), "matrix", error("no data rows"))
case(csv("csv/quote_then_text.csv", 'a,b\n1,"2"x\n'), "matrix", error("line 2, column 2"))
case(csv("csv/multiline_quoted.csv", '"multi\nline",b\n1,2\n3,4\n'), "matrix", text_matrix([["1", "2"], ["3", "4"]]),
     native=error("*"),
     differs="JS reads a quoted field across lines (RFC 4180); native reads one row per line, so the first line "
             "is a header of one name and the next has two fields")
case(write("csv/latin1_name.csv", "clas\xe9,b\n1,2\n".encode("latin-1")), "matrix", text_matrix([["1", "2"]]),
     js=error("UTF-8"),
     differs="JS decodes the text as UTF-8 and refuses invalid bytes; native never decodes, so a Latin-1 name is "
             "just bytes (its numbers are ASCII either way)")

# CSV: label columns

case(csv("csv/label_by_name.csv", "a,label,b\n1.5,2,-1\n0.25,0,3\n"), "matrix", text_matrix([["1.5", "-1"], ["0.25", "3"]]),
     options={"label_column": "label"})
case("csv/label_by_name.csv", "labels", labels([2, 0]), options={"label_column": "label"})
case("csv/label_by_name.csv", "labels", labels([2, 0]), options={"label_column": 1})
case("csv/label_by_name.csv", "labels", labels([2, 0]), options={"label_column": "1"},
     note="a label column that is no name but a number is an index, with a header too")
case("csv/label_by_name.csv", "matrix", error("'a', 'label', 'b'"), options={"label_column": "target"},
     note="no such column: the message lists the header's names")
case("csv/label_by_name.csv", "matrix", error("out of range", js="no column 3"), options={"label_column": 3})
case("csv/label_by_name.csv", "labels", error("say which one holds the labels", js="labels must be integers"),
     note="a labels read of a CSV of several columns needs the label column")
case(csv("csv/label_no_header.csv", "2,0.5,1\n0,-0.5,3\n1,7,7\n"), "labels", labels([2, 0, 1]), options={"label_column": 0})
case("csv/label_no_header.csv", "labels", labels([2, 0, 1]), options={"label_column": "0"})
case("csv/label_no_header.csv", "matrix", text_matrix([["0.5", "1"], ["-0.5", "3"], ["7", "7"]]),
     options={"label_column": "0"})
case("csv/label_no_header.csv", "matrix", error("no header"), options={"label_column": "label"})
case("csv/no_header.csv", "matrix", error("has no column"), options={"header": True, "label_column": "1.0x"},
     note="with header=true the first row's numbers are the names")
case(csv("csv/label_no_header.tsv", "2\t0.5\t1\n0\t-0.5\t3\n"), "labels", labels([2, 0]), options={"label_column": "0"})
case(csv("csv/labels_float_spelling.csv", "y,a\n3.0,1\n1e0,2\n+2,3\n"), "labels", labels([3, 1, 2]), options={"label_column": "y"},
     note="pandas writes an integer column that had a NaN as 3.0")
case(csv("csv/labels_negative.csv", "y,a\n-1,1\n0,2\n"), "labels", labels([-1, 0]), options={"label_column": "y"},
     note="the reader keeps the sign; scoring refuses a class outside [0, K)")
case(csv("csv/labels_int32_max.csv", "y,a\n2147483647,1\n-2147483648,2\n"), "labels", labels([2147483647, -2147483648]),
     options={"label_column": "y"})
case(csv("csv/labels_beyond_int32.csv", "y,a\n2147483648,1\n"), "labels", labels([2147483648]),
     options={"label_column": "y"}, js=error("int32"),
     differs="JS holds labels in an Int32Array (as its .npy reader does); native in int64")
case(csv("csv/labels_fraction.csv", "y,a\n1,0.5\n2.5,0.5\n"), "labels", error("line 3, column 1: '2.5' is not an integer"),
     options={"label_column": "y"})
case(csv("csv/labels_nan.csv", "y,a\n1,0.5\nnan,0.5\n"), "labels", error("'nan' is not an integer"),
     options={"label_column": "y"})
case(csv("csv/labels_empty_field.csv", "y,a\n1,0.5\n,0.5\n"), "labels", error("line 3, column 1"),
     options={"label_column": "y"})
case(csv("csv/labels_one_column.csv", "label\n1\n2\n0\n"), "labels", labels([1, 2, 0]),
     js=error("labels must be integers"),
     differs="the npm package has no CSV labels file (see csv/one_column_zero.csv)")
case("csv/labels_one_column.csv", "matrix", error("besides the label"), options={"label_column": "label"})

# .npy

f32 = (rng.standard_normal((5, 3)) * 10).astype(np.float32)
f32[0, 0], f32[1, 1], f32[2, 2], f32[3, 0], f32[4, 1] = np.nan, np.inf, -np.inf, -0.0, np.float32(1e-40)
f64 = rng.standard_normal((3, 4)) * 1e3
f64[0, 1], f64[1, 2], f64[2, 0] = 1e-310, -0.0, np.nan
f16 = (rng.standard_normal((3, 4)) * 100).astype(np.float16)
f16[0, 0], f16[1, 0], f16[2, 1] = -np.inf, np.float16(6e-8), np.nan
case(write_npy("npy/f32_le.npy", f32.astype("<f4")), "matrix", matrix(f32))
case(write_npy("npy/f32_be.npy", f32.astype(">f4")), "matrix", matrix(f32))
case(write_npy("npy/f64_le.npy", f64.astype("<f8")), "matrix", matrix(f64))
case(write_npy("npy/f64_be.npy", f64.astype(">f8")), "matrix", matrix(f64))
case(write_npy("npy/f16_le.npy", f16.astype("<f2")), "matrix", matrix(f16))
case(write_npy("npy/f16_be.npy", f16.astype(">f2")), "matrix", matrix(f16))
case(write_npy("npy/f32_fortran.npy", np.asfortranarray(f32)), "matrix", matrix(f32))
case(write_npy("npy/f64_be_fortran.npy", np.asfortranarray(f64.astype(">f8"))), "matrix", matrix(f64))
case(write_npy("npy/f32_v2.npy", f32, major=2), "matrix", matrix(f32))
case(write_npy("npy/f32_v3.npy", f32, major=3), "matrix", matrix(f32))
case(write_npy("npy/f32_no_rows.npy", np.zeros((0, 4), np.float32)), "matrix", matrix(np.zeros((0, 4), np.float32)))
case(write_npy("npy/f32_one.npy", np.array([[2.5]], np.float32)), "matrix", matrix(np.array([[2.5]], np.float32)))
case(write("npy/logits.bin", npy_of(f32)), "matrix", matrix(f32), note="the magic string decides, not the extension")
case(write("npy/empty.npy", b""), "matrix", error("is empty"))
case(write("npy/not_npy.npy", b"abc"), "matrix", error("is not a .npy file (its first bytes are not the .npy magic string, byte 0x93 then NUMPY)"))
case(write("npy/f4_no_order.npy", npy_bytes("'|f4'", (2, 2), np.arange(4, dtype="<f4").tobytes())), "matrix",
     matrix(np.arange(4, dtype=np.float32).reshape(2, 2)), note="'|' (no byte order) as host order, as NumPy reads it")
case(write_npy("npy/f32_1d.npy", f32[:, 0].copy()), "matrix", error("2-D"), js=matrix(f32[:, 0]),
     differs="the JS readers are generic (the same readMatrix reads labels): a 1-D array is N x 1; native refuses "
             "1-D logits")
i16m = np.array([[1, -2], [3, 4]], "<i2")
case(write_npy("npy/i16_matrix.npy", i16m), "matrix", error("has dtype"), js=matrix(i16m),
     differs="JS reads integer arrays as int32 (its labels); native refuses integer logits")
case(write("npy/c8.npy", npy_bytes("'<c8'", (2, 2), bytes(32))), "matrix", error("has dtype"))
case(write("npy/bool.npy", npy_bytes("'|b1'", (4,), bytes(4))), "matrix", error("has dtype"))
case(write("npy/structured.npy", npy_bytes("[('a', '<f4')]", (2,), bytes(8))), "matrix", error("structured"))
case(write("npy/cube.npy", npy_bytes("'<f4'", (2, 3, 4), bytes(96))), "matrix", error("shape (2, 3, 4)"))
case(write("npy/scalar.npy", npy_bytes("'<f4'", (), bytes(4))), "matrix", error("shape ()"))
case(write("npy/no_columns.npy", npy_bytes("'<f4'", (3, 0), b"")), "matrix", error("no columns"))
good = npy_of(f32)
case(write("npy/truncated.npy", good[:-4]), "matrix", error("is truncated: its header promises (5, 3)"))
case(write("npy/trailing.npy", good + bytes(8)), "matrix", error("has 8 bytes after the array"))
case(write("npy/header_cut.npy", good[:40]), "matrix", error("*"))
case(write("npy/bad_magic.npy", b"\x93NUMPX" + good[6:]), "matrix", error("not a .npy file"))
case(write("npy/version9.npy", b"\x93NUMPY\x09\x00" + good[8:]), "matrix", error("format version 9.0"))
case(write("npy/fortran_maybe.npy", npy_bytes("'<f4'", (5, 3), f32.tobytes(), fortran="Maybe")), "matrix",
     error("*"))
case(write("npy/extra_key.npy", npy_bytes("'<f4'", (5, 3), f32.tobytes(), extra="'x': 1, ")), "matrix",
     error("unexpected"))
case(write("npy/negative_shape.npy", npy_bytes("'<f4'", (-1, 3), f32.tobytes())), "matrix", error("*"))
case(write("npy/huge_shape.npy", npy_bytes("'<f4'", (99999999999999999999, 2), bytes(8))), "matrix", error("too large"))

# .npy labels

for dt in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"):
    for order in ("<", ">"):
        if dt[1] == "1" and order == ">":
            continue
        descr = ("|" if dt[1] == "1" else order) + dt
        info = np.iinfo(descr)  # the extremes the JS Int32Array holds too
        values = np.array([max(int(info.min), -2**31), 0, 3, min(int(info.max), 2**31 - 1)], descr)
        case(write_npy(f"npy/labels_{dt}{'' if dt[1] == '1' else '_' + ('le' if order == '<' else 'be')}.npy", values),
             "labels", labels(values))
case(write_npy("npy/labels_i1_negative.npy", np.array([-128, -1, 0, 127], "|i1")), "labels", labels([-128, -1, 0, 127]))
case(write_npy("npy/labels_u4_big.npy", np.array([5, 2**31], "<u4")), "labels", labels([5, 2**31]),
     js=error("does not fit in int32"), differs="JS holds labels in an Int32Array; native in int64")
case(write_npy("npy/labels_column.npy", np.array([[2], [0], [1]], "<i8")), "labels", labels([2, 0, 1]),
     note="an N x 1 array")
case(write_npy("npy/labels_empty.npy", np.zeros(0, "<i8")), "labels", labels([]))
case(write_npy("npy/labels_i8_big.npy", np.array([1, 2**40], "<i8")), "labels", labels([1, 2**40]),
     js=error("does not fit in int32"), differs="JS holds labels in an Int32Array; native in int64")
case(write_npy("npy/labels_u8_huge.npy", np.array([1, 2**63], "<u8")), "labels", error("too large", js="does not fit in int32"))
case(write_npy("npy/labels_float.npy", np.array([1.0, 2.0], "<f8")), "labels", error("labels must be integers"))
case(write_npy("npy/labels_matrix.npy", np.zeros((3, 2), "<i8")), "labels", error("shape (3, 2)", js="one column"))

# .safetensors

def st_raw(a):
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()


st32 = (rng.standard_normal((3, 4)) * 3).astype(np.float32)
st32[0, 0], st32[1, 1] = np.inf, -0.0
bf_bits = (st32.view(np.uint32) >> 16).astype("<u2")
bf_values = (bf_bits.astype(np.uint32) << 16).view(np.float32)
st_labels = np.array([1, 0, 3], "<i8")
case(write("safetensors/f32.safetensors", safetensors_bytes([("logits", "F32", st32.shape, st_raw(st32))])), "matrix",
     matrix(st32))
case(write("safetensors/f16.safetensors", safetensors_bytes([("logits", "F16", f16.shape, st_raw(f16))])), "matrix",
     matrix(f16))
case(write("safetensors/bf16.safetensors", safetensors_bytes([("scores", "BF16", bf_bits.shape, bf_bits.tobytes())])),
     "matrix", matrix(bf_values, "bfloat16"), note="one tensor is read whatever its name")
case(write("safetensors/f64.safetensors", safetensors_bytes([("logits", "F64", f64.shape, st_raw(f64))])), "matrix",
     matrix(f64))
multi = [("labels", "I64", st_labels.shape, st_raw(st_labels)), ("pad", "U8", (3,), bytes([1, 2, 255])),
         ("logits", "F32", st32.shape, st_raw(st32))]
case(write("safetensors/multi.safetensors", safetensors_bytes(multi, metadata={"format": "pt"})), "matrix", matrix(st32),
     note="labels first and 3 bytes before the logits: unaligned data")
case("safetensors/multi.safetensors", "matrix", matrix(st32), options={"key": "logits"})
case("safetensors/multi.safetensors", "labels", labels(st_labels), options={"key": "labels"})
case("safetensors/multi.safetensors", "labels", labels(st_labels), js=error("labels must be integers"),
     differs="native's labels read looks for a tensor named 'labels'; JS's readMatrix picks 'logits' (the worker "
             "then refuses float labels): pass the key")
case("safetensors/multi.safetensors", "matrix", error("'nope'"), options={"key": "nope"})
case(write("safetensors/no_extension", safetensors_bytes([("logits", "F32", st32.shape, st_raw(st32))])), "matrix",
     matrix(st32))
ints = {"i8": np.array([-128, 0, 127], "<i1"), "i16": np.array([-32768, 5, 32767], "<i2"),
        "i32": np.array([[7], [-7]], "<i4"), "u8": np.array([0, 200, 255], "<u1"), "u16": np.array([0, 65535], "<u2"),
        "u32": np.array([0, 2**31 - 1], "<u4"), "u64": np.array([3, 2**31 - 1], "<u8"),
        "i64": np.array([-2**31, 2**31 - 1, 42], "<i8")}
codes = {"i8": "I8", "i16": "I16", "i32": "I32", "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64", "i64": "I64"}
write("safetensors/ints.safetensors", safetensors_bytes([(k, codes[k], v.shape, st_raw(v)) for k, v in ints.items()]))
for k, v in ints.items():
    case("safetensors/ints.safetensors", "labels", labels(v.ravel()), options={"key": k})
case(write("safetensors/labels_i64_big.safetensors", safetensors_bytes([("labels", "I64", (2,), st_raw(np.array([1, -2**35], "<i8")))])),
     "labels", labels([1, -2**35]), js=error("does not fit in int32"),
     differs="JS holds labels in an Int32Array; native in int64")
case(write("safetensors/i64_logits.safetensors", safetensors_bytes([("logits", "I64", (2, 2), st_raw(np.array([[1, 2], [3, 4]], "<i8")))])),
     "matrix", error("has dtype I64"), js=matrix(np.array([[1, 2], [3, 4]], np.int32)),
     differs="JS reads integer tensors as int32 (its labels); native refuses integer logits")
case(write("safetensors/f32_1d.safetensors", safetensors_bytes([("logits", "F32", (3,), st_raw(st32[0, :3].copy()))])),
     "matrix", error("2-D"), js=matrix(st32[0, :3]),
     differs="the JS readers are generic: a 1-D tensor is N x 1; native refuses 1-D logits")
case(write("safetensors/no_choice.safetensors", safetensors_bytes([("a", "F32", (2, 2), bytes(16)), ("b", "F32", (2, 2), bytes(16))])),
     "matrix", error("'a', 'b'"))
case(write("safetensors/no_tensors.safetensors", safetensors_bytes([], metadata={"a": "b"})), "matrix", error("holds no"))
case(write("safetensors/bool.safetensors", safetensors_bytes([("logits", "BOOL", (4,), bytes(4))])), "matrix",
     error("has dtype BOOL"))
case(write("safetensors/cube.safetensors", safetensors_bytes([("logits", "F32", (2, 3, 1), bytes(24))])), "matrix",
     error("shape (2, 3, 1)"))
case(write("safetensors/size_mismatch.safetensors", safetensors_bytes([("logits", "F32", (2, 3), bytes(16))])), "matrix",
     error("bytes"))
case(write("safetensors/trailing.safetensors", safetensors_bytes([("logits", "F32", st32.shape, st_raw(st32))], trailing=bytes(8))),
     "matrix", error("after the last tensor"), note="the format's data section holds the tensors and nothing else")
case(write("safetensors/gap.safetensors", safetensors_bytes([("logits", "F32", (2, 2), bytes(16)), ("labels", "I64", (1,), bytes(8))],
                                                            offsets=[(0, 16), (20, 28)], trailing=bytes(4))),
     "matrix", error("no tensor holds"))
case(write("safetensors/overlap.safetensors", safetensors_bytes([("logits", "F32", (2, 2), bytes(16)), ("labels", "I64", (1,), b"")],
                                                                offsets=[(0, 16), (8, 16)])),
     "matrix", error("overlap"))
case(write("safetensors/bad_other_entry.safetensors",
           safetensors_bytes([("logits", "F32", (2, 2), bytes(16)), ("labels", "I64", (3,), bytes(8))])),
     "matrix", error("tensor 'labels'"), note="every entry is checked, not only the one read")
case(write("safetensors/beyond.safetensors", safetensors_bytes([("logits", "F32", st32.shape, st_raw(st32))])[:-16]),
     "matrix", error("data_offsets"))
case(write("safetensors/long_header.safetensors", struct.pack("<Q", 10000) + b'{"a": 1}'), "matrix", error("header length"))
def st_text(header, data):
    return struct.pack("<Q", len(header)) + header + data


entry = b'{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}'
case(write("safetensors/duplicate_key.safetensors", st_text(b'{"logits":' + entry + b',"logits":' + entry + b'}', bytes(4))),
     "matrix", error("twice"))
case(write("safetensors/bad_json.safetensors", st_text(b'{"logits": {"dtype": "F32",}}', bytes(4))), "matrix", error("JSON"))

# .npz and raw float32: native only

npz_logits = f32[:4].copy()
npz_labels = np.array([1, 0, 2, 2], "<i8")
not_js = "the npm package reads no .npz"
for deflate in (False, True):
    name = write(f"npz/{'deflated' if deflate else 'stored'}.npz", npz_bytes([("logits", npz_logits), ("labels", npz_labels)], deflate))
    with np.load(HERE / name) as archive:
        assert np.array_equal(archive["logits"], npz_logits, equal_nan=True) and np.array_equal(archive["labels"], npz_labels)
    case(name, "matrix", matrix(npz_logits), js=error("not a format this package reads"), differs=not_js)
    case(name, "labels", labels(npz_labels), js=error("not a format this package reads"), differs=not_js)
case(write("npz/fortran.npz", npz_bytes([("logits", np.asfortranarray(f64.astype(">f8")))], True)), "matrix", matrix(f64),
     js=error("not a format this package reads"), differs=not_js)
raw = np.arange(12, dtype="<f4").reshape(3, 4) / 4
case(write("raw/logits.f32", raw.tobytes()), "matrix", matrix(raw), options={"shape": [3, 4]},
     js=error("not a format this package reads"), differs="the npm package reads no raw float32")
case("raw/logits.f32", "matrix", error("unknown format", js="not a format this package reads"),
     note="without a shape a file of no known format is refused")
case(write("raw/notes.txt", "hello\n"), "matrix", error("unknown format", js="not a format this package reads"))


def main():
    for sub in SUBDIRS:  # the corpus is what this script writes: drop files it no longer writes
        for path in (HERE / sub).rglob("*"):
            if path.is_file() and not any(c["file"] == str(path.relative_to(HERE)) for c in cases):
                path.unlink()
    out = ['{"about": "The reader spec: see make_spec.py, which writes this file and the fixtures.",',
           ' "cases": [']
    out.append(",\n".join("  " + json.dumps(c, allow_nan=False) for c in cases))
    out.append(" ]}")
    (HERE / "expected.json").write_text("\n".join(out) + "\n")
    size = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    print(f"{len(cases)} cases, {size} bytes in tests/readers/spec")


main()
