"""The reader spec's CSV cases: header detection, line ends, delimiters, fields and numbers,
label columns (see make_spec.py for the case format)."""
from spec_support import case, csv, error, labels, lines, q, text_matrix, write, y4

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
     text_matrix([["1.5", "2"], ["3", "4"]]), notes=["column 1 ('') is pandas' index column"],
     note="pd.DataFrame(a).to_csv(): an empty index name, then the column names 0, 1; the index is no class")
case(csv("csv/pandas_index_one_column.csv", ",0\n0,1.5\n1,3\n"), "matrix", text_matrix([["1.5"], ["3"]]),
     notes=["pandas' index"])
case("csv/pandas_index_one_column.csv", "labels", error("'1.5' is not an integer class label"),
     js=error("labels must be integers"), differs="the npm package has no CSV labels file (see csv/one_column_zero.csv)",
     note="a labels read: the index left out, the one column left is the labels")
# Text from the file is escaped in messages, as natively: no escape sequence or bidirectional
# override reaches the terminal
case(csv("csv/control_field.csv", "a,b\n1,\x1b]0;pwn\x07\u202e\n"), "matrix",
     error("'\\x1b]0;pwn\\x07\\xe2\\x80\\xae' is not a number"))
case(csv("csv/control_header.csv", "a\x1b[2J,b\n1,2\n"), "matrix", error("\\x1b[2J"),
     options={"label_column": "zz"}, note="the header's names, listed when the label column is not among them")
case(csv("csv/quoted_names.csv", '"class, 0","class, 1",label\n1.5,2,1\n3,4,0\n'), "matrix",
     text_matrix([["1.5", "2"], ["3", "4"]]), options={"label_column": "label"})
case("csv/quoted_names.csv", "matrix", text_matrix([["1.5"], ["3"]]), options={"label_column": "class, 1"},
     notes=["column 3 ('label') is named as labels but column 2 ('class, 1') is the label column"],
     note="a quoted name may hold the delimiter; a column named label that is not the label column is left out")

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
case("csv/label_by_name.csv", "matrix", error("label column 3 is out of range: the rows have 3 columns"),
     options={"label_column": 3}, note="one rule in both readers (native/io/csv_columns.cpp)")
case("csv/label_by_name.csv", "labels", labels([2, 0]), note="the one column named label is the label column")
case("csv/label_by_name.csv", "matrix", text_matrix([["1.5", "-1"], ["0.25", "3"]]),
     notes=["column 2 ('label') holds labels, not a class: it is the label column"],
     note="left out of the logits without the label column option")
case(csv("csv/no_label_column.csv", "a,b,c\n1.5,2,-1\n0.25,0,3\n"), "labels",
     error("has 3 columns; say which one holds the labels", js="labels must be integers"),
     differs="the npm package has no CSV labels file (see csv/one_column_zero.csv)",
     note="a labels read of a CSV of several columns, none named as labels, needs the label column")
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
     js=error("besides the label"),
     differs="the npm package has no CSV labels file (see csv/one_column_zero.csv)")
case("csv/labels_one_column.csv", "matrix", error("besides the label"), options={"label_column": "label"})

# CSV: columns that are not classes (native/io/csv_columns.hpp): pandas' index, ids, labels

case(csv("csv/pandas_index_label.csv", ",0,1,label\n0,1.5,2,1\n1,3,4,0\n"), "matrix", text_matrix([["1.5", "2"], ["3", "4"]]),
     notes=["pandas' index column", "column 4 ('label') holds labels"],
     note="pd.DataFrame(a).assign(label=y).to_csv(): the index and the label column are no classes")
case("csv/pandas_index_label.csv", "labels", labels([1, 0]))
case(csv("csv/pandas_series.csv", ",0\n0,3\n1,1\n"), "labels", labels([3, 1]), js=error("labels must be integers"),
     differs="the npm package has no CSV labels file (see csv/one_column_zero.csv)",
     note="pd.Series(y).to_csv(): the index left out, the one column left is the labels")
case(csv("csv/unnamed_index.csv", "Unnamed: 0,a,b\n0,1.5,2\n1,3,4\n"), "matrix", text_matrix([["1.5", "2"], ["3", "4"]]),
     notes=["column 1 ('Unnamed: 0') is pandas' index column"],
     note="pd.read_csv(f).to_csv(index=False) of a file that had an index: pandas names it 'Unnamed: 0'")
case(csv("csv/id_columns.csv", " ID ,a,index,b\n7,1.5,0,2\n9,3,1,4\n"), "matrix", text_matrix([["1.5", "2"], ["3", "4"]]),
     notes=["column 1 ('ID') holds ids", "column 3 ('index') holds ids"],
     note="id and index, in any case and with spaces around, are no classes")
case("csv/id_columns.csv", "matrix", error("is not a number"), options={"header": False},
     note="header=false: the names are a row, and not numbers")
case(csv("csv/target_column.csv", "a,b,Target\n1.5,2,1\n3,4,0\n"), "labels", labels([1, 0]),
     note="target (any case) names labels")
case(csv("csv/two_label_columns.csv", "a,label,b,y\n1.5,1,2,1\n3,0,4,0\n"), "matrix",
     error("has 2 columns named as labels ('label', 'y'): say which one holds the labels with"),
     note="several label columns: refused, naming the option")
case("csv/two_label_columns.csv", "labels", error("columns named as labels"))
case("csv/two_label_columns.csv", "matrix", text_matrix([["1.5", "2"], ["3", "4"]]), options={"label_column": "y"},
     notes=["column 2 ('label') is named as labels but column 4 ('y') is the label column"])
case("csv/two_label_columns.csv", "labels", labels([1, 0]), options={"label_column": "label"})
case(csv("csv/ids_and_label_only.csv", "id,label\n7,1\n9,0\n"), "matrix", error("has no logit columns besides the label"))
case(csv("csv/label_column_is_id.csv", "id,a,b\n1,1.5,2\n0,3,4\n"), "labels", labels([1, 0]), options={"label_column": "id"},
     note="a label column option wins over the id rule")

# CSV: ids and indexes under other names (issue 50: df.to_csv() with a named index, a sample_id)

case(csv("csv/id_names.csv", "sample_id,a,Sample ID,b,imageKey,row_index,uuid,c\n"
         "1000,1.5,7,2,k1,0,3f2a-77,-1\n1001,0.25,9,3,k2,1,9c1b-01,0.5\n"), "matrix",
     text_matrix([["1.5", "2", "-1"], ["0.25", "3", "0.5"]]),
     notes=["column 1 ('sample_id') holds ids", "column 3 ('Sample ID') holds ids", "column 5 ('imageKey') holds ids",
            "column 6 ('row_index') holds ids", "column 7 ('uuid') holds ids"],
     note="names that are ids by convention (id, index, row, idx, sample, uid, uuid, key, *_id, *_idx, *_index, "
          "*_key; spaces, '-' and camelCase read as '_') are no classes, and their fields are not read as numbers")
case(csv("csv/row_index.csv", "row,0,1,2\n0,1.5,2,-1\n1,0.25,3,0.5\n"), "matrix",
     text_matrix([["1.5", "2", "-1"], ["0.25", "3", "0.5"]]), notes=["column 1 ('row') holds ids"],
     note="df.index.name = 'row'; df.to_csv()")
case(csv("csv/pandas_named_index.csv", "frame,0,1,2,label\n0,1.5,2,-1,1\n1,0.25,3,0.5,0\n"), "matrix",
     text_matrix([["1.5", "2", "-1"], ["0.25", "3", "0.5"]]),
     notes=["column 1 ('frame') is pandas' index column", "column 5 ('label') holds labels"],
     note="an index of any name before columns named 0, 1, 2, ... (an array's, as pandas names them) is pandas' index")
case("csv/pandas_named_index.csv", "labels", labels([1, 0]))
case(csv("csv/index_by_values.csv", "frame,cat,dog\n0,1.5,2\n1,0.25,3\n2,-1,0.5\n"), "matrix",
     error("column 1 ('frame') holds an index or ids, not a class's logits: its first 3 rows count 0, 1, 2, ...; "
           "drop the column"),
     note="an index under a name of its own, known by its values: refused, naming the fix (mano cannot tell)")
case("csv/index_by_values.csv", "matrix", text_matrix([["1.5", "2"], ["0.25", "3"], ["-1", "0.5"]]),
     options={"label_column": "frame"}, note="the rule reads logit columns only")
case(csv("csv/index_from_one_no_header.csv", "1,0.5,0.25\n2,1.5,-2\n"), "matrix",
     error("column 1 holds an index or ids, not a class's logits: its first 2 rows count 1, 2, 3, ...; drop the "
           "column (pandas: to_csv(index=False)) or name it 'index' or 'id' in a header line"),
     note="pd.DataFrame(a, index=range(1, n + 1)).to_csv(header=False)")
case(csv("csv/ids_by_values.csv", "frame,cat,dog\n17,1.5,2\n3,0.25,3\n8,-1,0.5\n"), "matrix",
     error("its first 3 rows are whole numbers, no two the same, beside the other columns' fractions"),
     note="a shuffled index or ids (df.sample(frac=1).to_csv())")
case(csv("csv/every_column_counts.csv", "a,b\n0,1\n1,2\n2,3\n"), "matrix", text_matrix([["0", "1"], ["1", "2"], ["2", "3"]]),
     note="no column stands out as the index when every column counts")
case(csv("csv/whole_logits.csv", "3,5,1\n0,2,7\n1,-4,2\n"), "matrix", text_matrix([["3", "5", "1"], ["0", "2", "7"], ["1", "-4", "2"]]),
     note="whole-number logits beside whole numbers are logits")
case(csv("csv/saturated_probabilities.csv", "a,b\n1,0.5\n0,0.25\n"), "matrix", text_matrix([["1", "0.5"], ["0", "0.25"]]),
     note="distinct whole numbers need 3 rows: a column of probabilities has only 0 and 1")
case(csv("csv/one_hot_probabilities.csv", "a,b\n0,1\n1,0\n"), "matrix", text_matrix([["0", "1"], ["1", "0"]]),
     note="an index counts past 1, which a column of probabilities never reaches")
count_rows = [[str(i), str(0.5 + i / 8)] for i in range(101)]
count_rows[100][0] = "7"
case(csv("csv/index_first_100_rows.csv", "\n".join(",".join(r) for r in [["n", "x"]] + count_rows) + "\n"), "matrix",
     error("its first 100 rows count 0, 1, 2"), note="the rule reads the first 100 rows (all rows of a shorter file)")
count_rows[99][0] = "7.5"
case(csv("csv/index_broken_in_100_rows.csv", "\n".join(",".join(r) for r in [["n", "x"]] + count_rows) + "\n"), "matrix",
     text_matrix(count_rows), note="a first column that stops counting within the first 100 rows is a class")
