"""Writes the fixtures of web/test/loaders.test.js into the directory given as argv[1]: the files
its JS-only tests need (read ranges, input kinds, streamed CSV). What both readers must read alike
(every dtype, byte order and layout, and the files both refuse) is tests/readers/spec, written by
tests/readers/spec/make_spec.py and read by the native and the JS tests.

NumPy is the independent reference: it writes the .npy files, packs the .safetensors data, and
parses the CSV numbers. expected.json maps each file (or "file#key" for a safetensors tensor)
to {shape, dtype, values | bits, labels?}: float values as float64 numbers, with "nan", "inf",
"-inf" and "-0" as strings because JSON has no spelling for them; float16/bfloat16 as the raw
uint16 bit patterns.
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/readers/spec"))
from spec_values import floats  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(20240917)
expected = {}


def describe(a, bits=None):
    kind = a.dtype.kind
    entry = {"shape": list(a.shape)}
    if kind == "f":
        entry["dtype"] = {2: "float16", 4: "float32", 8: "float64"}[a.dtype.itemsize]
        if a.dtype.itemsize == 2:
            entry["bits"] = a.astype("<f2").view("<u2").ravel(order="C").tolist()
        else:
            entry["values"] = floats(a)
    else:
        entry["dtype"] = "int32"
        entry["values"] = [int(v) for v in a.ravel(order="C")]
    if bits is not None:
        entry["bits"] = bits
    return entry


def save_npy(fname, a, version=None, record=True):
    with open(os.path.join(out, fname), "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    if record:
        expected[fname] = describe(a)


# --- .npy ---------------------------------------------------------------------------------

f32 = (rng.normal(size=(6, 4)) * 10).astype(np.float32)
f32[0, 0] = np.nan
f32[1, 1] = np.inf
f32[2, 2] = -np.inf
f32[3, 3] = -0.0
f32[4, 0] = np.float32(1e-40)  # subnormal
save_npy("f32_le.npy", f32.astype("<f4"))

f16 = (rng.normal(size=(4, 5)) * 100).astype("<f2")
f16[0, 0] = np.nan
f16[0, 1] = -np.inf
f16[1, 0] = np.float16(6e-8)  # subnormal
save_npy("f16_be.npy", f16.astype(">f2"))

fortran64be = np.asfortranarray(rng.normal(size=(50, 7)).astype(">f8"))
save_npy("f64_be_fortran.npy", fortran64be)
save_npy("i64_fortran.npy", np.asfortranarray(rng.integers(0, 1000, size=(4, 3)).astype("<i8")))
save_npy("f32_big.npy", rng.normal(size=(1000, 10)).astype("<f4"))

# A file the loaders must refuse, which an openNpy source still reads in part.
save_npy("i64_too_big.npy", np.array([0, 1, 2**40, 3], "<i8"), record=False)


# --- .safetensors -------------------------------------------------------------------------

ST_CODES = {"<f2": "F16", "<f4": "F32", "<f8": "F64", "|i1": "I8", "<i2": "I16", "<i4": "I32",
            "<i8": "I64", "|u1": "U8", "<u2": "U16", "<u4": "U32", "<u8": "U64"}


def save_st(fname, tensors, metadata=None):
    """tensors: list of (name, safetensors dtype, shape, raw little-endian bytes)."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)  # safetensors pads its header to 8 bytes
    with open(os.path.join(out, fname), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, raw in tensors:
            f.write(raw)


def tensor(name, a):
    a = np.ascontiguousarray(a)
    return (name, ST_CODES[a.dtype.str], a.shape, a.tobytes())


st16 = (rng.normal(size=(3, 4)) * 10).astype("<f2")
save_st("st_f16.safetensors", [tensor("logits", st16)])
expected["st_f16.safetensors"] = describe(st16)

# labels first and a 3-byte tensor before the logits, so their data starts unaligned.
multi_logits = rng.normal(size=(6, 3)).astype("<f4")
multi_labels = rng.integers(0, 3, size=6).astype("<i8")
multi_pad = np.array([1, 2, 255], "|u1")
save_st("st_multi.safetensors",
        [tensor("labels", multi_labels), tensor("pad", multi_pad), tensor("logits", multi_logits)],
        metadata={"format": "pt", "note": "logits and labels"})
expected["st_multi.safetensors"] = describe(multi_logits)
expected["st_multi.safetensors#logits"] = describe(multi_logits)
expected["st_multi.safetensors#labels"] = describe(multi_labels)
expected["st_multi.safetensors#pad"] = describe(multi_pad)

save_st("st_no_choice.safetensors", [tensor("a", np.zeros((2, 2), "<f4")), tensor("b", np.ones((2, 2), "<f4"))])


# --- CSV ----------------------------------------------------------------------------------

spellings = [
    lambda x: repr(float(x)),
    lambda x: "%.3e" % x,
    lambda x: "%g" % x,
    lambda x: "%.17g" % x,
    lambda x: "%+.5f" % x,
]
specials = ["nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "1.", ".5", "-0", "+3", "1e3",
            "-2.5E-3", "  7.25 "]
rows, labels = [], []
for r in range(30):
    fields = []
    for c in range(4):
        if (r * 4 + c) % 7 == 3:
            fields.append(specials[(r * 4 + c) % len(specials)])
        else:
            x = rng.normal() * 10 ** int(rng.integers(-5, 6))
            fields.append(spellings[(r + c) % len(spellings)](x))
    rows.append(fields)
    labels.append(int(rng.integers(0, 4)))
values = np.array([[float(f) for f in fields] for fields in rows])  # Python's float is strtod
csv_expected = {"shape": [30, 4], "dtype": "float64", "values": floats(values), "labels": labels}


def write_text(fname, text):
    with open(os.path.join(out, fname), "w", newline="") as f:
        f.write(text)


write_text("ref.csv", "a,b,c,d,label\n" + "".join(",".join(f + [str(l)]) + "\n" for f, l in zip(rows, labels)))
write_text("ref.tsv", "a\tb\tc\td\tlabel\n" + "".join("\t".join(f + [str(l)]) + "\n" for f, l in zip(rows, labels)))
write_text("ref_crlf_noheader.csv", "".join(",".join([str(l)] + f) + "\r\n" for f, l in zip(rows, labels)))
expected["ref.csv"] = csv_expected
expected["ref.tsv"] = csv_expected
expected["ref_crlf_noheader.csv"] = csv_expected
# np.loadtxt agrees with float() on these spellings; check it so the reference is NumPy's.
loaded = np.loadtxt(os.path.join(out, "ref.csv"), delimiter=",", skiprows=1)
assert np.array_equal(loaded[:, :4], values, equal_nan=True)
assert loaded[:, 4].astype(int).tolist() == labels

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, allow_nan=False)
