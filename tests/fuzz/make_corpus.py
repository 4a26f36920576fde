"""Writes the seed corpora of the libFuzzer targets (tests/fuzz/corpus/<target>/seed_*): small
valid files of every layout the readers take and slightly broken ones. Inputs the fuzzer found
and merged in (named by their SHA-1) are left alone. Deterministic (zip timestamps are fixed);
run with Debian's Python: /usr/bin/python3 tests/fuzz/make_corpus.py [MANO] (with the mano binary, also
the accumulator states and calibrations it writes)"""
import io
import json
import pathlib
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

root = pathlib.Path(__file__).resolve().parent / "corpus"
rng = np.random.default_rng(7)


def put(target, name, data):
    folder = root / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ("seed_" + name)).write_bytes(data if isinstance(data, bytes) else data.encode())


def npy(array, version=None, fortran=False):
    f = io.BytesIO()
    np.lib.format.write_array(f, np.asfortranarray(array) if fortran else np.ascontiguousarray(array), version=version)
    return f.getvalue()


def npy_with_header(header, data=b""):
    """A version 1.0 .npy file with this header dict text, padded as numpy pads it."""
    text = header.encode("latin1")
    pad = -(10 + len(text) + 1) % 64
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text) + pad + 1) + text + b" " * pad + b"\n" + data


def npz(members, compression=zipfile.ZIP_STORED, zip64=False):
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w") as z:
        for name, payload in members.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            with z.open(info, "w", force_zip64=zip64) as out:
                out.write(payload if isinstance(payload, bytes) else npy(payload))
    return f.getvalue()


def safetensors(tensors, metadata=None):
    header, blobs, at = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, array) in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def bf16(array):
    return (np.asarray(array, np.float32).view(np.uint32) >> 16).astype(np.uint16)


logits = (rng.standard_normal((4, 3)) * 3).astype(np.float32)
labels = np.array([0, 2, 1, 2], np.int64)

# .npy
put("npy", "f4_4x3.npy", npy(logits))
put("npy", "f8_2x5.npy", npy(rng.standard_normal((2, 5))))
put("npy", "f2_3x4.npy", npy(rng.standard_normal((3, 4)).astype(np.float16)))
put("npy", "f4_big_endian.npy", npy(logits.astype(">f4")))
put("npy", "f4_fortran.npy", npy(logits, fortran=True))
put("npy", "f8_big_endian_fortran.npy", npy(rng.standard_normal((3, 2)).astype(">f8"), fortran=True))
put("npy", "f4_version2.npy", npy(logits, version=(2, 0)))
put("npy", "f4_version3.npy", npy(logits, version=(3, 0)))
put("npy", "f4_0x4.npy", npy(np.zeros((0, 4), np.float32)))
put("npy", "f4_with_nan_inf.npy", npy(np.array([[np.nan, np.inf], [-np.inf, 1e38]], np.float32)))
put("npy", "labels_i8.npy", npy(labels))
put("npy", "labels_u1.npy", npy(labels.astype(np.uint8)))
put("npy", "labels_i4_column.npy", npy(labels.astype(np.int32).reshape(-1, 1)))
put("npy", "labels_big_endian_i2.npy", npy(labels.astype(">i2")))
put("npy", "labels_u8_too_large.npy", npy(np.array([1, 2**63 + 5], np.uint64)))
put("npy", "bad_3x0.npy", npy(np.zeros((3, 0), np.float32)))
put("npy", "bad_1d_float.npy", npy(np.ones(3, np.float32)))
put("npy", "bad_3d.npy", npy(np.ones((2, 2, 2), np.float32)))
put("npy", "bad_truncated.npy", npy(logits)[:-5])
put("npy", "bad_trailing.npy", npy(logits) + b"\0\0\0\0")
put("npy", "bad_version.npy", b"\x93NUMPY\x04\x00" + npy(logits)[8:])
put("npy", "bad_structured.npy", npy(np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")])))
put("npy", "bad_complex.npy", npy(np.zeros((2, 2), np.complex64)))
put("npy", "bad_huge_shape.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"))
put("npy", "bad_overflow_shape.npy",
    npy_with_header("{'descr': '<f8', 'fortran_order': True, 'shape': (18446744073709551615, 3), }"))
put("npy", "bad_zero_cols.npy",
    npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 0), }"))
put("npy", "bad_header_keys.npy", npy_with_header("{'descr': '<f4', 'shape': (1, 1), 'extra': 1}", b"\0" * 4))
put("npy", "bad_header_length.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr'")

# .npz
pair = {"logits.npy": logits, "labels.npy": labels}
put("npz", "stored.npz", npz(pair))
put("npz", "deflated.npz", npz(pair, zipfile.ZIP_DEFLATED))
put("npz", "deflated_one_member.npz", npz({"x.npy": rng.standard_normal((5, 2)).astype(np.float16)}, zipfile.ZIP_DEFLATED))
put("npz", "deflated_fortran.npz", npz({"logits.npy": np.asfortranarray(logits)}, zipfile.ZIP_DEFLATED))
put("npz", "stored_fortran_big_endian.npz", npz({"logits.npy": np.asfortranarray(logits.astype(">f4"))}))
put("npz", "zip64.npz", npz(pair, zipfile.ZIP_DEFLATED, zip64=True))
put("npz", "stored_zip64.npz", npz({"labels.npy": labels}, zip64=True))
put("npz", "deflated_100_rows.npz", npz({"logits.npy": rng.standard_normal((100, 3)).astype(np.float32)}, zipfile.ZIP_DEFLATED))
put("npz", "bad_no_arrays.npz", npz({}))
put("npz", "bad_bzip2.npz", npz({"logits.npy": logits}, zipfile.ZIP_BZIP2))
put("npz", "bad_truncated.npz", npz(pair)[:-30])
stored = bytearray(npz({"logits.npy": logits}))
stored[stored.find(logits.tobytes()) + 5] ^= 0x40  # a data byte: the CRC-32 no longer matches
put("npz", "bad_crc.npz", bytes(stored))
deflated = bytearray(npz({"logits.npy": logits}, zipfile.ZIP_DEFLATED))
deflated[60] ^= 0xFF
put("npz", "bad_deflate.npz", bytes(deflated))
put("npz", "bad_member_text.npz", npz({"logits.npy": b"not a .npy member"}))

# .safetensors
put("safetensors", "f32.safetensors", safetensors({"logits": ("F32", logits)}))
put("safetensors", "f16_bf16.safetensors",
    safetensors({"logits": ("F16", logits.astype(np.float16)), "other": ("BF16", bf16(logits))}))
put("safetensors", "bf16_only.safetensors", safetensors({"scores": ("BF16", bf16(logits))}))
put("safetensors", "f64_labels_metadata.safetensors",
    safetensors({"logits": ("F64", logits.astype(np.float64)), "labels": ("I64", labels)}, {"format": "pt"}))
put("safetensors", "labels_u8.safetensors", safetensors({"labels": ("U8", labels.astype(np.uint8))}))
put("safetensors", "labels_i32_column.safetensors", safetensors({"labels": ("I32", labels.astype(np.int32).reshape(-1, 1))}))
put("safetensors", "empty_0x3.safetensors", safetensors({"logits": ("F32", np.zeros((0, 3), np.float32))}))
good = safetensors({"logits": ("F32", logits)})
put("safetensors", "bad_truncated.safetensors", good[:-6])
put("safetensors", "bad_header_length.safetensors", struct.pack("<Q", 2**40) + good[8:])
put("safetensors", "bad_not_json.safetensors", struct.pack("<Q", 8) + b"{logits:")
put("safetensors", "bad_offsets.safetensors",
    struct.pack("<Q", 64) + json.dumps({"logits": {"dtype": "F32", "shape": [4, 3], "data_offsets": [8, 4]}}).encode().ljust(64) + bytes(48))
put("safetensors", "bad_huge_shape.safetensors",
    struct.pack("<Q", 80) + json.dumps({"logits": {"dtype": "F32", "shape": [2**62, 2**3], "data_offsets": [0, 0]}}).encode().ljust(80))
put("safetensors", "bad_3x0.safetensors", safetensors({"logits": ("F32", np.zeros((3, 0), np.float32))}))
put("safetensors", "bad_dtype.safetensors", safetensors({"logits": ("I64", labels.reshape(2, 2))}))


# .csv / .tsv: the first byte is the target's option byte (see fuzz_csv.cpp).
def csv_seed(name, options, text):
    put("csv", name, bytes([options]) + text.encode())


csv_seed("plain.csv", 0, "1.5,-2,3e2\n0,1,2.25\n")
csv_seed("header_label.csv", (3 << 2) | 64, "a,b,label\n1,2,0\n3,4,1\n-1.5,2e-3,1\n")
csv_seed("label_index_no_header.csv", 1 | (1 << 2) | 64, "0,1.0,2.0\n1,3.0,4.0\n")
csv_seed("pandas_index_header.csv", 0, ",0,1,2\n0,0.1,0.2,0.3\n1,0.4,0.5,0.6\n")
csv_seed("tsv_header.tsv", 2 | 32, "x\ty\n1\t2\n3\t4\n")
csv_seed("tabs_in_csv.csv", 0, "1\t2\t3\n4\t5\t6\n")
csv_seed("quoted.csv", 2 | (3 << 2) | 64, '"a","b ""q""","label"\n"1","2.5","3"\n4,5,6\n')
csv_seed("crlf_bom.csv", 0, "\ufeffp,q\r\n1,2\r\n\r\n3,4\r\n")
csv_seed("blank_lines.csv", 1, "\n\n1,2\n\n3,4\n\n")
csv_seed("labels_only.csv", 64, "label\n1\n2.0\n+3\n")
csv_seed("index_stride.csv", 0, "".join(f"{i},{i * 0.5}\n" for i in range(1100)))
csv_seed("bad_ragged.csv", 0, "1,2,3\n4,5\n")
csv_seed("bad_not_number.csv", 1, "1,2\n3,x\n")
csv_seed("bad_label_column.csv", (7 << 2) | 64, "a,b\n1,2\n")
csv_seed("bad_only_label.csv", 2 | (3 << 2), "label\n1\n")
csv_seed("nan_inf.csv", 1, "nan,inf\n-inf,1e400\n")

# Raw float32: five bytes of shape (see fuzz_raw.cpp), then the data.
def raw_seed(name, flags, rows, cols, data):
    put("raw", name, struct.pack("<BHH", flags, rows, cols) + data)


raw_seed("4x3.f32", 0, 4, 3, logits.tobytes())
raw_seed("1x1.f32", 0, 1, 1, struct.pack("<f", 2.5))
raw_seed("bad_size.f32", 0, 3, 3, logits.tobytes())
raw_seed("bad_overflow.f32", 3, 1, 1, b"\0" * 16)
raw_seed("bad_max.f32", 4, 0, 4, b"\0" * 16)
raw_seed("npy_content.f32", 0, 4, 3, npy(logits))


# Labels: the first byte picks the format and the key (see fuzz_labels.cpp).
def label_seed(name, options, data):
    put("labels", name, bytes([options]) + (data.encode() if isinstance(data, str) else data))


label_seed("i8.npy", 0, npy(labels))
label_seed("u2_column.npy", 0, npy(labels.astype(np.uint16).reshape(-1, 1)))
label_seed("stored.npz", 1, npz(pair))
label_seed("deflated_key.npz", 1 | (1 << 2), npz(pair, zipfile.ZIP_DEFLATED))
label_seed("deflated_y.npz", 1 | (2 << 2), npz({"y.npy": labels.astype(np.int16), "x.npy": logits}, zipfile.ZIP_DEFLATED))
label_seed("one_column.csv", 2, "3\n1\n4\n1\n5\n")
label_seed("header_label.csv", 2 | (1 << 2) | (2 << 4), "f,labels\n0.5,1\n0.25,2\n")
label_seed("index.csv", 2 | (3 << 2), "7,a\n8,b\n")
label_seed("i64.safetensors", 3, safetensors({"labels": ("I64", labels), "logits": ("F32", logits)}))
label_seed("u64.safetensors", 3 | (1 << 2), safetensors({"labels": ("U64", labels.astype(np.uint64))}))
label_seed("bad_float.npy", 0, npy(logits))
label_seed("bad_2d.safetensors", 3, safetensors({"labels": ("I32", labels.astype(np.int32).reshape(2, 2))}))

# Manifests.
example = {
    "source": {"logits": "source_logits.npy", "labels": "source_labels.npy"},
    "sets": [
        {"name": "contrast_0", "group": "contrast", "logits": "contrast_0_logits.npy", "labels": "contrast_0_labels.npy"},
        {"name": "noise_1", "group": "noise", "logits": "../other/noise_1.npz", "labels": "/abs/noise_1_labels.npy"},
    ],
}
put("manifest", "example.json", json.dumps(example, indent=1))
put("manifest", "no_source.json", json.dumps({"sets": [{"name": "a", "logits": "a.csv"}]}))
put("manifest", "unicode.json", json.dumps({"sets": [{"name": "\u00e9t\u00e9 \u2028", "logits": "./x/../y.safetensors"}]}))
put("manifest", "bad_duplicate.json", json.dumps({"sets": [{"name": "a", "logits": "a"}, {"name": "a", "logits": "b"}]}))
put("manifest", "bad_unknown_key.json", json.dumps({"sets": [{"name": "a", "logits": "a", "label": "b"}]}))
put("manifest", "bad_empty_sets.json", '{"sets": []}')
put("manifest", "bad_source.json", '{"source": {"logits": "s"}, "sets": [{"name": "a", "logits": "a"}]}')
put("manifest", "bad_types.json", '{"sets": [{"name": 3, "logits": null}]}')
put("manifest", "bad_json.json", '{"sets": [{"name": "a",')
put("manifest", "bad_number_overflow.json", '{"sets": [{"name": "a", "logits": "a"}], "x": 1e999}')
put("manifest", "bad_newline_key.json", '{"sets": [{"name": "a", "logits": "a", "a\\nb": 1}]}')

# Label marginals (COT's --label-marginal FILE).
put("marginal", "uniform.json", json.dumps([0.25, 0.25, 0.25, 0.25]))
put("marginal", "skewed.json", "[0.7, 0.2, 0.1]")
put("marginal", "bad_sum.json", "[0.5, 0.6]")
put("marginal", "bad_negative.json", "[1.5, -0.5]")
put("marginal", "bad_object.json", '{"a": 1}')
put("marginal", "bad_nested.json", "[[[[0.5]]], 0.5]")
put("marginal", "bad_duplicate.json", '[{"a": 1, "a": 2}]')

# Accumulator states and calibrations, written by mano itself (their layout follows the core), when
# the mano binary is given: /usr/bin/python3 tests/fuzz/make_corpus.py build/release/native/mano
if len(sys.argv) > 1:
    mano = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        sets = []
        for i, scale in enumerate([0.5, 1.0, 2.0, 3.0, 4.0]):
            y = rng.integers(0, 3, 24)
            x = rng.normal(size=(24, 3)) + scale * np.eye(3)[y]
            np.save(tmp / f"s{i}.npy", x.astype(np.float32))
            np.save(tmp / f"y{i}.npy", y)
            sets.append({"name": f"s{i}", "group": f"g{i % 4}", "logits": f"s{i}.npy", "labels": f"y{i}.npy"})
        (tmp / "m.json").write_text(json.dumps({"sets": sets}))
        np.savetxt(tmp / "s0.csv", np.column_stack([np.load(tmp / "s0.npy"), np.load(tmp / "y0.npy")]), delimiter=",",
                   fmt="%.6g", header="a,b,c,y", comments="")
        source = ["--source-logits", str(tmp / "s4.npy"), "--source-labels", str(tmp / "y4.npy")]
        np.save(tmp / "f0.npy", rng.normal(size=(24, 4)))
        for args, name in [([], "default"), (["--methods", "mano,confscore,cot"], "three_methods"), (source, "source"),
                           (["--methods", "mano", "--normalization", "taylor"], "taylor"),
                           (source + ["--methods", "mano,cott,atc_ne,doc"], "cott"),
                           (["--methods", "mano,mde,confscore_softrun", "--batch-size", "8"], "batch"),
                           (["--features", str(tmp / "f0.npy"), "--methods", "dispersion,nuclear_softrun,entropy"],
                            "features")]:
            subprocess.run([mano, "score", str(tmp / "s0.csv"), "--label-column", "y", "--emit-state",
                            str(tmp / "state.json"), "--json"] + args, check=True, stdout=subprocess.DEVNULL)
            put("state", name + ".json", (tmp / "state.json").read_bytes())
        for i in (1, 2):
            subprocess.run([mano, "score", str(tmp / f"s{i}.npy"), "--emit-state", str(tmp / f"part{i}.json"), "--json"],
                           check=True, stdout=subprocess.DEVNULL)
        subprocess.run([mano, "merge", str(tmp / "part1.json"), str(tmp / "part2.json"), "--emit-state", str(tmp / "ab.json"),
                        "--json"], check=True, stdout=subprocess.DEVNULL)
        put("state", "merged.json", (tmp / "ab.json").read_bytes())
        (tmp / "m.json").write_text(json.dumps({"source": {"logits": "s4.npy", "labels": "y4.npy"}, "sets": sets}))
        for args, name in [(["--methods", "mano,confscore,atc_mc"], "three_methods"), (["--methods", "mano"], "mano")]:
            subprocess.run([mano, "calibrate", str(tmp / "m.json"), "-o", str(tmp / "cal.json")] + args, check=True,
                           stdout=subprocess.DEVNULL)
            put("calibration", name + ".json", (tmp / "cal.json").read_bytes())
