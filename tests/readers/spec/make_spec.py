"""Writes the reader spec: the fixture files under tests/readers/spec/ and expected.json, which
both readers' test suites read (native: tests/readers/test_spec.py through tests/readers/dump.cpp;
JS: web/test/reader_spec.test.js through web/src/loaders.js), so the two cannot drift.
Run: /usr/bin/python3 tests/readers/spec/make_spec.py   (rewrites the files; commit them)
The cases are listed in spec_csv_cases.py and spec_binary_cases.py; spec_support.py holds the
outcomes, the file writers and the sample values they share.

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
"notes" (matrix reads): one phrase per note the reader gives (native: matrix_reader::notes, JS:
the Matrix's notes), in order: the CSV columns left out of the logits or taken as labels
(native/io/csv_columns.hpp); a matrix case without "notes" expects none.
A case's "expect" holds for both targets unless it has "native" or "js", which then replace it
for that target; such a case says why in "differs". "targets" (default both) lists where a case
runs at all.

NumPy is the independent reference: it parses the expected numbers (float() is strtod), packs the
binary data, and every .npy written here is loaded back with np.load and compared.
"""
import json

from spec_support import HERE, SUBDIRS, cases


def main():
    # Importing a case list adds its cases: CSV first, then binary, the order of expected.json.
    import spec_csv_cases  # noqa: F401
    import spec_binary_cases  # noqa: F401
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
