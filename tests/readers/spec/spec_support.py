"""What the reader spec's case lists (spec_csv_cases.py, spec_binary_cases.py) share: the cases
they add to, the outcomes a case expects, the writers of fixture files, and the sample values.
make_spec.py writes expected.json from them."""
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


def case(file, kind, expect, options=None, native=None, js=None, differs=None, note=None, targets=None, notes=None):
    entry = {"id": "", "file": file, "kind": kind}
    if options:
        entry["options"] = options
    entry["expect"] = expect
    if notes:
        assert kind == "matrix" and "error" not in expect, f"{file}: notes are a matrix read's"
        entry["notes"] = notes
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
