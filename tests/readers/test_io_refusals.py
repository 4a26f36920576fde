"""The file readers (native/io) refuse what they cannot read: every kind of bad, limit-breaking or
randomly damaged file read through tests/readers/dump.cpp must exit 2 with one stderr line that
names the file, never crash or hang. (Good files: test_io.py.)
Run: /usr/bin/python3 tests/readers/test_io_refusals.py path/to/mano_io_dump"""
import json
import os
import pathlib
import struct
import sys
import tempfile
import zlib

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

from io_support import (check_error, check_labels, check_matrix, csv_text, dump, npy_bytes, npy_of,  # noqa: E402
                        safetensors_bytes, sample_logits, zip_bytes)


def test_bad_files(tmp, q, y):
    f32 = q.astype(np.float32)
    good = f32.tobytes()
    n, k = q.shape
    shape = f"({n}, {k})"
    bad_npy = {
        "truncated.npy": npy_bytes("'<f4'", shape, good[:-5]),
        "trailing.npy": npy_bytes("'<f4'", shape, good + b"\0" * 8),
        "header_cut.npy": npy_bytes("'<f4'", shape, b"")[:20],
        "bad_magic.npy": b"\x93NUMPX\x01\x00" + npy_bytes("'<f4'", shape, good)[8:],
        "text.npy": b"this is not an array at all\n",
        "complex.npy": npy_bytes("'<c8'", shape, np.zeros(n * k, np.complex64).tobytes()),
        "unicode.npy": npy_bytes("'<U3'", shape, b"\0" * (n * k * 12)),
        "object.npy": npy_bytes("'|O'", shape, b"\0" * (n * k * 8)),
        "int_logits.npy": npy_bytes("'<i8'", shape, np.zeros(n * k, np.int64).tobytes()),
        "structured.npy": npy_bytes("[('a', '<f4')]", shape, good),
        "cube.npy": npy_bytes("'<f4'", "(2, 3, 4)", np.zeros(24, np.float32).tobytes()),
        "vector.npy": npy_bytes("'<f4'", "(12,)", np.zeros(12, np.float32).tobytes()),
        "fortran_garbage.npy": npy_bytes("'<f4'", shape, good, fortran="Maybe"),
        "fortran_missing.npy": npy_bytes("'<f4'", shape, good).replace(b"'fortran_order'", b"'fortran_ordeX'"),
        "negative.npy": npy_bytes("'<f4'", "(-1, 4)", good),
        "huge_shape.npy": npy_bytes("'<f4'", "(99999999999999999999999, 4)", b""),
        "overflow_shape.npy": npy_bytes("'<f4'", "(4611686018427387904, 4611686018427387904)", b""),
        "header_length.npy": npy_bytes("'<f4'", shape, good)[:8] + b"\xff\xff" + npy_bytes("'<f4'", shape, good)[10:],
        "no_columns.npy": npy_bytes("'<f4'", "(5, 0)", b""),
        "version9.npy": b"\x93NUMPY\x09\x00" + npy_bytes("'<f4'", shape, good)[8:],
        "not_a_dict.npy": npy_bytes("'<f4'", shape, good).replace(b"{'descr'", b"['descr'"),
    }
    for name, content in bad_npy.items():
        path = tmp / name
        path.write_bytes(content)
        check_error(path)
    np.save(tmp / "float_labels.npy", q[:, 0])
    check_error(tmp / "float_labels.npy", kind="labels", needle="labels must be integers")
    np.save(tmp / "matrix_labels.npy", np.zeros((5, 3), np.int64))
    check_error(tmp / "matrix_labels.npy", kind="labels", needle="shape (5, 3)")
    np.save(tmp / "u64_labels.npy", np.array([1, 2**63], np.uint64))
    check_error(tmp / "u64_labels.npy", kind="labels", needle="too large")
    check_error(tmp / "complex.npy", needle="dtype '<c8'")
    check_error(tmp / "cube.npy", needle="shape (2, 3, 4)")
    check_error(tmp / "trailing.npy", needle="8 bytes after")
    check_error(tmp / "truncated.npy", needle="truncated")

    # .npz
    np.savez_compressed(tmp / "good.npz", logits=f32, labels=y)
    data = bytearray((tmp / "good.npz").read_bytes())
    corrupt = bytearray(data)
    for i in range(150, 260):
        corrupt[i] ^= 0x5A
    (tmp / "corrupt_deflate.npz").write_bytes(bytes(corrupt))
    check_error(tmp / "corrupt_deflate.npz")
    (tmp / "truncated.npz").write_bytes(bytes(data[: len(data) // 2]))
    check_error(tmp / "truncated.npz")
    (tmp / "empty_archive.npz").write_bytes(zip_bytes([]))
    check_error(tmp / "empty_archive.npz", needle="no arrays")
    check_error(tmp / "good.npz", "--key", "missing", needle="'logits', 'labels'")
    np.savez(tmp / "no_logits.npz", a=f32, b=f32)
    check_error(tmp / "no_logits.npz", needle="'a', 'b'")
    check_error(tmp / "no_logits.npz", kind="labels", needle="'a', 'b'")
    np.savez(tmp / "stored.npz", logits=f32)
    stored = bytearray((tmp / "stored.npz").read_bytes())
    stored[200] ^= 0x01  # inside the data: only the CRC-32 can tell
    (tmp / "crc.npz").write_bytes(bytes(stored))
    check_error(tmp / "crc.npz", needle="CRC-32")
    payload = npy_of(f32)
    (tmp / "crc_deflated.npz").write_bytes(zip_bytes([("logits.npy", payload, 8)]).replace(
        struct.pack("<I", zlib.crc32(payload)), struct.pack("<I", zlib.crc32(payload) ^ 1)))
    check_error(tmp / "crc_deflated.npz", needle="CRC-32")
    (tmp / "bad_member.npz").write_bytes(zip_bytes([("logits.npy", npy_bytes("'<c8'", shape, b"\0" * n * k * 8), 8)]))
    check_error(tmp / "bad_member.npz", needle="logits.npy")
    (tmp / "short_member.npz").write_bytes(zip_bytes([("logits.npy", payload[:-3], 0)]))
    check_error(tmp / "short_member.npz", needle="truncated")
    (tmp / "garbage.npz").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    check_error(tmp / "garbage.npz")

    # .safetensors
    raw = f32.tobytes()
    good_st = safetensors_bytes({"logits": ("F32", f32.shape, raw)})
    (tmp / "beyond.safetensors").write_bytes(good_st[:-16])
    check_error(tmp / "beyond.safetensors", needle="data_offsets")
    text = json.dumps({"logits": {"dtype": "F32", "shape": [n, k], "data_offsets": [0, len(raw)]}}).encode()
    (tmp / "bad_json.safetensors").write_bytes(struct.pack("<Q", len(text)) + text.replace(b"}", b"]", 1) + raw)
    check_error(tmp / "bad_json.safetensors", needle="JSON")
    (tmp / "long_header.safetensors").write_bytes(struct.pack("<Q", 10**12) + good_st[8:])
    check_error(tmp / "long_header.safetensors", needle="header length")
    (tmp / "int_logits.safetensors").write_bytes(safetensors_bytes({"logits": ("I64", y.shape, y.tobytes())}))
    check_error(tmp / "int_logits.safetensors", needle="I64")
    (tmp / "cube.safetensors").write_bytes(safetensors_bytes({"logits": ("F32", (n, k, 1), raw)}))
    check_error(tmp / "cube.safetensors", needle="shape")
    (tmp / "size_mismatch.safetensors").write_bytes(safetensors_bytes({"logits": ("F32", (n, k + 1), raw)}))
    check_error(tmp / "size_mismatch.safetensors", needle="bytes")
    (tmp / "float_labels.safetensors").write_bytes(good_st)
    check_error(tmp / "float_labels.safetensors", kind="labels", needle="F32")
    (tmp / "fp8.safetensors").write_bytes(safetensors_bytes({"logits": ("F8_E4M3", f32.shape, b"\0" * n * k)}))
    check_error(tmp / "fp8.safetensors", needle="F8_E4M3")
    bad_shape = json.dumps({"logits": {"dtype": "F32", "shape": [n, -1], "data_offsets": [0, len(raw)]}}).encode()
    (tmp / "negative.safetensors").write_bytes(struct.pack("<Q", len(bad_shape)) + bad_shape + raw)
    check_error(tmp / "negative.safetensors")
    (tmp / "tiny.safetensors").write_bytes(b"\x01\x02")
    check_error(tmp / "tiny.safetensors")
    (tmp / "missing.safetensors").write_bytes(safetensors_bytes({"a": ("F32", f32.shape, raw),
                                                                 "b": ("F32", f32.shape, raw)}))
    check_error(tmp / "missing.safetensors", needle="'a', 'b'")

    # .csv / .tsv: the files both readers must refuse alike are in the reader spec
    # (tests/readers/spec, checked by tests/readers/test_spec.py and web/test/reader_spec.test.js).

    # raw float32 and unknown formats
    (tmp / "logits.raw").write_bytes(good[:-4])
    check_error(tmp / "logits.raw", "--shape", f"{n},{k}", needle=f"{n * k * 4} bytes")
    check_error(tmp / "logits.raw", needle="unknown format")
    check_error(tmp / "logits.raw", "--shape", f"{n},{k}", kind="labels", needle=".npy")
    check_error(tmp / "logits.raw", "--shape", "4294967296,4294967296", needle="too large")
    check_error(tmp / "does_not_exist.npy", needle="cannot open")
    (tmp / "a_directory.npy").mkdir()
    check_error(tmp / "a_directory.npy", needle="directory")


def test_limits(tmp, q, y):
    """Line endings, the label count a caller needs, non-regular files, and file text in messages."""
    n, k = q.shape
    lines = csv_text(q).splitlines()
    for name, text in (("cr_only.csv", "\r".join(lines) + "\r"), ("cr_no_end.csv", "\r".join(lines)),
                       ("mixed_ends.csv", "\r\n".join(lines[:5]) + "\r" + "\r".join(lines[5:12]) + "\n\r\n\r" +
                        "\n".join(lines[12:]))):
        (tmp / name).write_bytes(text.encode())
        check_matrix(tmp / name, q, "float64")
    path = tmp / "cr_labels.csv"
    path.write_bytes(("y\r" + "\r".join(str(v) for v in y) + "\r").encode())
    check_labels(path, y)
    (tmp / "cr_ragged.csv").write_bytes(b"1,2\r3,4\r\n5\r")
    check_error(tmp / "cr_ragged.csv", needle="line 3 has 1 fields")

    # --expect-rows: a label file with another count is refused before its labels are read.
    np.save(tmp / "y.npy", y)
    np.savez_compressed(tmp / "y.npz", labels=y)
    (tmp / "y.safetensors").write_bytes(safetensors_bytes({"labels": ("I64", y.shape, y.tobytes())}))
    (tmp / "y.csv").write_text("\n".join(map(str, y)) + "\n")
    for name in ("y.npy", "y.npz", "y.safetensors", "y.csv"):
        check_labels(tmp / name, y, "--expect-rows", n)
        check_error(tmp / name, "--expect-rows", n + 1, kind="labels", needle=f"holds {n} labels but {n + 1} are needed")
    # A deflated member of 2^30 int8 labels (1 MB) would take 8 GB as int64: refused first.
    header = npy_bytes("'|i1'", f"({1 << 30},)", b"")
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(16 << 20)
    stream = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    stream += (compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)) * 64 + compressor.flush()
    crc = zlib.crc32(header)
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(stream), len(header) + (1 << 30),
                        10, 0) + b"labels.npy"
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, crc, len(stream),
                          len(header) + (1 << 30), 10, 0, 0, 0, 0, 0, 0) + b"labels.npy"
    (tmp / "bomb.npz").write_bytes(local + stream + central + struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(stream), 0))
    check_error(tmp / "bomb.npz", "--expect-rows", n, kind="labels", needle=f"holds {1 << 30} labels but {n} are needed")

    # Model inputs (tensor_reader) and every other reader refuse what is not a regular file.
    np.save(tmp / "x.npy", np.zeros((2, 3, 4), np.float32))
    proc = dump("tensor", tmp / "x.npy")
    check(proc.returncode == 0 and proc.stdout.split() == [b"2", b"3", b"4"], f"tensor x.npy: {proc.stdout!r} {proc.stderr!r}")
    fifo = tmp / "fifo.npy"
    os.mkfifo(fifo)
    for kind in ("tensor", "matrix", "labels"):
        check_error(fifo, kind=kind, needle="is a FIFO (named pipe), not a regular file", timeout=10)

    # Text from the file in messages: short fields quoted with control, bidirectional and invalid
    # UTF-8 bytes escaped, printable UTF-8 kept; long fields only counted.
    (tmp / "names.csv").write_bytes("classé,\u202eevil,x\n1,2,3\n".encode() + b"4,\xff\x01,6\n")
    check_error(tmp / "names.csv", "--label-column", "nope", needle="'classé', '\\xe2\\x80\\xaeevil', 'x'")
    check_error(tmp / "names.csv", needle="line 3, column 2 ('\\xe2\\x80\\xaeevil'): '\\xff\\x01' is not a number")
    (tmp / "long_field.csv").write_text("1,2\n3,secret-secret-secret-secret\n")
    check_error(tmp / "long_field.csv", needle="line 2, column 2: a field of 27 bytes is not a number")


def test_damaged_files(tmp, q, y):
    """Random byte flips and cuts of valid files: every result is the values or exit 2 with one
    line, never a crash, a hang or another exit code."""
    rng = np.random.default_rng(11)
    f32 = q.astype(np.float32)
    np.save(tmp / "fz_c.npy", f32)
    np.save(tmp / "fz_f.npy", np.asfortranarray(q.astype(">f8")))
    np.savez(tmp / "fz_stored.npz", logits=f32, labels=y)
    np.savez_compressed(tmp / "fz_deflated.npz", logits=f32, labels=y)
    np.savez_compressed(tmp / "fz_fortran.npz", logits=np.asfortranarray(f32))
    (tmp / "fz.safetensors").write_bytes(safetensors_bytes({"logits": ("F32", f32.shape, f32.tobytes()),
                                                             "labels": ("I64", y.shape, y.tobytes())}))
    (tmp / "fz.csv").write_text(csv_text(q, header=["y"] + [f"c{j}" for j in range(q.shape[1])], labels=y, label_at=0))
    for source in sorted(tmp.glob("fz*")):
        original = source.read_bytes()
        for trial in range(30):
            data = bytearray(original)
            if trial % 3 == 0:
                data = data[: int(rng.integers(0, len(data)))]
            else:
                for _ in range(int(rng.integers(1, 4))):
                    at = int(rng.integers(0, len(data)))
                    data[at] = int(rng.integers(0, 256))
            path = tmp / f"damaged_{trial}{source.suffix}"
            path.write_bytes(bytes(data))
            for kind, args in (("matrix", ["--label-column", "y"] if source.suffix == ".csv" else []),
                               ("labels", ["--label-column", "y"] if source.suffix == ".csv" else [])):
                proc = dump(kind, path, *args, "--chunk", 4)
                lines = proc.stderr.decode(errors="replace").strip().splitlines()
                ok = proc.returncode == 0 or (proc.returncode == 2 and len(lines) == 1 and path.name in lines[0])
                check(ok, f"{kind} of {source.name} damaged (trial {trial}): exit {proc.returncode}, stderr {lines}")


def main():
    q, y = sample_logits()
    with tempfile.TemporaryDirectory() as name:
        tmp = pathlib.Path(name)
        test_bad_files(tmp, q, y)
        test_limits(tmp, q, y)
        test_damaged_files(tmp, q, y)
    finish("io refusals: ")


if __name__ == "__main__":
    main()
