"""The reader spec's binary cases: .npy logits and labels, .safetensors, .npz and raw float32
(see make_spec.py for the case format). Their random values continue spec_support.rng's
stream after the CSV sample, so spec_csv_cases.py must not draw from it."""
import struct

import numpy as np

from spec_support import (HERE, case, error, labels, matrix, npy_bytes, npy_of, npz_bytes, rng,
                          safetensors_bytes, write, write_npy)

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
