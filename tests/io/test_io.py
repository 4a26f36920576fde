"""The file readers (native/io) against NumPy: every format, dtype, byte order and layout read
through tests/io/dump.cpp in several chunk sizes and start rows must give back exactly the stored
values; every kind of bad file must exit 2 with one stderr line that names the file.
Run: /usr/bin/python3 tests/io/test_io.py path/to/mano_io_dump"""
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

DUMP = sys.argv[1]


def dump(kind, path, *args, timeout=120):
    """Runs the driver; one that runs past `timeout` seconds (a read that blocks) is killed and
    reported as exit -9."""
    try:
        return subprocess.run([DUMP, kind, str(path), *map(str, args)], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([DUMP], -9, b"", f"killed after {timeout} s\n".encode())


def check_matrix(path, expected, dtype, *args, sequential=False):
    """Reads `path` with chunks of 1, 7 and more than N rows from several start rows."""
    expected = np.asarray(expected, dtype=np.float64)
    n, k = expected.shape
    header = f"{n} {k} {dtype} {'sequential' if sequential else 'random'}"
    for chunk in (1, 7, n + 5):
        for start in sorted({0, min(3, n), n // 2, max(n - 1, 0)}):
            proc = dump("matrix", path, *args, "--chunk", chunk, "--start", start)
            what = f"{path.name} {' '.join(map(str, args))} chunk {chunk} start {start}"
            if proc.returncode != 0:
                check(False, f"{what}: exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()}")
                return
            got = np.frombuffer(proc.stdout, dtype="<f8")
            want = np.concatenate([expected[start:], expected[:start]]).ravel()
            ok = got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
            check(ok and proc.stderr.decode().strip() == header,
                  f"{what}: got {got[:6]}... ({got.size} values, {proc.stderr.decode().strip()!r}), "
                  f"want {want[:6]}... ({want.size} values, {header!r})")


def check_labels(path, expected, *args):
    proc = dump("labels", path, *args)
    what = f"labels {path.name} {' '.join(map(str, args))}"
    if proc.returncode != 0:
        check(False, f"{what}: exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()}")
        return
    got = np.frombuffer(proc.stdout, dtype="<i8")
    check(np.array_equal(got, np.asarray(expected, dtype=np.int64).ravel()), f"{what}: got {got[:8]}")


def check_error(path, *args, kind="matrix", needle=None, timeout=120):
    proc = dump(kind, path, *args, timeout=timeout)
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    ok = proc.returncode == 2 and len(lines) == 1 and path.name in lines[0]
    if needle is not None:
        ok = ok and needle in lines[0]
    check(ok, f"bad {kind} {path.name} {' '.join(map(str, args))}: exit {proc.returncode}, stderr {lines}"
              + (f", expected {needle!r}" if needle else ""))


def npy_bytes(descr, shape, payload, fortran="False", major=1):
    header = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    header += " " * ((64 - (len(header) + 11) % 64) % 64) + "\n"
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + payload


def npy_of(array, version=None):
    import io
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version)
    return buffer.getvalue()


def zip_bytes(members, zip64=False, zip64_eocd=False):
    """A zip archive written by hand: (name, payload, method) members, optionally with every size
    and offset in ZIP64 extra fields and a ZIP64 end-of-central-directory record."""
    out, central = b"", b""
    for name, payload, method in members:
        if method == 8:
            compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
            data = compressor.compress(payload) + compressor.flush()
        else:
            data = payload
        crc, raw_name, offset = zlib.crc32(payload), name.encode(), len(out)
        if zip64:
            local_extra = struct.pack("<HHQQ", 1, 16, len(payload), len(data))
            out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 45, 0, method, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                               len(raw_name), len(local_extra)) + raw_name + local_extra + data
            extra = struct.pack("<HHQQQ", 1, 24, len(payload), len(data), offset)
            central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45, 0, method, 0, 0x21, crc, 0xFFFFFFFF,
                                   0xFFFFFFFF, len(raw_name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + raw_name + extra
        else:
            out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(data), len(payload),
                               len(raw_name), 0) + raw_name + data
            central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, len(data),
                                   len(payload), len(raw_name), 0, 0, 0, 0, 0, offset) + raw_name
    n, cd_offset = len(members), len(out)
    out += central
    if zip64_eocd:
        record = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n, n, len(central), cd_offset)
        locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(out), 1)
        out += record + locator + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                              0xFFFFFFFF, 0)
    else:
        out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n, n, len(central), cd_offset, 0)
    return out


def safetensors_bytes(tensors, metadata=None):
    """tensors: name -> (dtype, shape, raw bytes)."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def bf16(x):
    """float32 -> bfloat16 by dropping the low 16 bits: (bits, exact values as float64)."""
    bits = (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def csv_text(values, delimiter=",", header=None, labels=None, label_at=None, newline="\n"):
    lines = []
    if header is not None:
        lines.append(delimiter.join(header))
    for i, row in enumerate(values):
        fields = [repr(float(v)) for v in row]
        if labels is not None:
            fields.insert(label_at, str(int(labels[i])))
        lines.append(delimiter.join(fields))
    return newline.join(lines) + newline


def test_npy(tmp, q):
    for dt in ("f2", "f4", "f8"):
        name = {"f2": "float16", "f4": "float32", "f8": "float64"}[dt]
        for order in ("C", "F"):
            for endian in ("<", ">"):
                a = q.astype(endian + dt)
                a = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
                path = tmp / f"q_{dt}_{order}_{'le' if endian == '<' else 'be'}.npy"
                np.save(path, a)
                check_matrix(path, a.astype(np.float64), name)
    for version in ((2, 0), (3, 0)):
        path = tmp / f"version{version[0]}.npy"
        path.write_bytes(npy_of(q.astype(np.float32), version))
        check_matrix(path, q.astype(np.float32), "float32")
    for shape in ((1, 1), (1, 6), (6, 1)):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 2.5
        for order in ("C", "F"):
            path = tmp / f"small_{shape[0]}x{shape[1]}_{order}.npy"
            np.save(path, np.asfortranarray(a) if order == "F" else a)
            check_matrix(path, a, "float32")
    path = tmp / "no_rows.npy"
    np.save(path, np.zeros((0, 4), np.float32))
    proc = dump("matrix", path)
    check(proc.returncode == 0 and proc.stdout == b"" and proc.stderr.decode().strip() == "0 4 float32 random",
          f"(0, 4) .npy: {proc.returncode} {proc.stderr!r}")
    # The extension does not matter when the magic string is there.
    path = tmp / "logits.bin"
    np.save(tmp / "tmp.npy", q.astype(np.float32))
    path.write_bytes((tmp / "tmp.npy").read_bytes())
    check_matrix(path, q.astype(np.float32), "float32")


def test_npz(tmp, q, y):
    f32, f16 = q.astype(np.float32), q.astype(np.float16)
    for save in (np.savez, np.savez_compressed):
        tag = "stored" if save is np.savez else "deflated"
        sequential = save is np.savez_compressed
        path = tmp / f"single_{tag}.npz"
        save(path, whatever=f32)
        check_matrix(path, f32, "float32", sequential=sequential)
        path = tmp / f"positional_{tag}.npz"
        save(path, f16)
        check_matrix(path, f16, "float16", sequential=sequential)
        path = tmp / f"multi_{tag}.npz"
        save(path, logits=f32, labels=y, features=q, source=f16.astype(">f2"))
        check_matrix(path, f32, "float32", sequential=sequential)
        check_matrix(path, q, "float64", "--key", "features", sequential=sequential)
        check_matrix(path, q, "float64", "--key", "features.npy", sequential=sequential)
        check_matrix(path, f16, "float16", "--key", "source", sequential=sequential)
        check_labels(path, y)
        check_labels(path, y, "--key", "labels.npy")
        path = tmp / f"fortran_{tag}.npz"
        save(path, logits=np.asfortranarray(q.astype(">f8")), labels=y.astype(">i4").reshape(-1, 1))
        check_matrix(path, q, "float64")  # a deflated Fortran member is inflated to a temporary file
        check_labels(path, y)
    for method in (0, 8):
        for zip64, zip64_eocd in ((True, False), (True, True), (False, True)):
            path = tmp / f"zip64_{method}_{int(zip64)}{int(zip64_eocd)}.npz"
            path.write_bytes(zip_bytes([("logits.npy", npy_of(f32), method), ("labels.npy", npy_of(y), method)],
                                       zip64=zip64, zip64_eocd=zip64_eocd))
            check_matrix(path, f32, "float32", sequential=method == 8)
            check_labels(path, y)
    # Python's zipfile with force_zip64 (what newer NumPy versions write) and an archive comment.
    path = tmp / "force_zip64.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("logits.npy", "w", force_zip64=True) as member:
            member.write(npy_of(f32))
        archive.comment = b"written by test_io.py"
    check_matrix(path, f32, "float32", sequential=True)


def test_safetensors(tmp, q, y):
    f32 = q.astype(np.float32)
    bits, bf_values = bf16(f32)
    cases = {"F16": (q.astype("<f2"), "float16"), "F32": (f32.astype("<f4"), "float32"),
             "F64": (q.astype("<f8"), "float64")}
    for dtype, (a, name) in cases.items():
        path = tmp / f"q_{dtype}.safetensors"
        path.write_bytes(safetensors_bytes({"logits": (dtype, a.shape, a.tobytes())}))
        check_matrix(path, a, name)
    path = tmp / "q_BF16.safetensors"
    path.write_bytes(safetensors_bytes({"out": ("BF16", bits.shape, bits.astype("<u2").tobytes())}))
    check_matrix(path, bf_values, "bfloat16")
    path = tmp / "multi.safetensors"
    labels_2d = y.reshape(-1, 1)
    path.write_bytes(safetensors_bytes({
        "features": ("F64", q.shape, q.astype("<f8").tobytes()),
        "logits": ("F32", f32.shape, f32.tobytes()),
        "labels": ("I64", y.shape, y.astype("<i8").tobytes()),
        "labels_i32": ("I32", labels_2d.shape, labels_2d.astype("<i4").tobytes()),
        "labels_u8": ("U8", y.shape, y.astype(np.uint8).tobytes()),
        "labels_i16": ("I16", y.shape, (y - 3).astype("<i2").tobytes()),
    }, metadata={"format": "pt"}))
    check_matrix(path, f32, "float32")
    check_matrix(path, q, "float64", "--key", "features")
    check_labels(path, y)
    check_labels(path, y, "--key", "labels_i32")
    check_labels(path, y, "--key", "labels_u8")
    check_labels(path, y - 3, "--key", "labels_i16")
    path = tmp / "no_extension"
    path.write_bytes(safetensors_bytes({"logits": ("F32", f32.shape, f32.tobytes())}))
    check_matrix(path, f32, "float32")


def test_csv(tmp, q, y):
    n, k = q.shape
    names = [f"c{j}" for j in range(k)]
    path = tmp / "plain.csv"
    path.write_text(csv_text(q))
    check_matrix(path, q, "float64")
    check_matrix(path, q, "float64", "--header", "no")
    path = tmp / "header.csv"
    path.write_text(csv_text(q, header=names))
    check_matrix(path, q, "float64")
    check_matrix(path, q, "float64", "--header", "yes")
    path = tmp / "quoted_header_crlf.csv"
    path.write_bytes(csv_text(q, header=[f'"class, {j}"' for j in range(k)], newline="\r\n").encode())
    check_matrix(path, q, "float64")
    path = tmp / "pandas_header.csv"  # a frame of an unnamed array: columns 0..K-1
    path.write_text(csv_text(q, header=[str(j) for j in range(k)]))
    check_matrix(path, q, "float64")
    path = tmp / "label_by_name.csv"
    path.write_text(csv_text(q, header=names[:2] + ["label"] + names[2:], labels=y, label_at=2))
    check_matrix(path, q, "float64", "--label-column", "label")
    check_labels(path, y, "--label-column", "label")
    check_labels(path, y, "--label-column", "2")
    path = tmp / "label_by_index.tsv"
    path.write_text(csv_text(q, delimiter="\t", labels=y, label_at=0))
    check_matrix(path, q, "float64", "--label-column", "0")
    check_labels(path, y, "--label-column", "0")
    path = tmp / "plain.tsv"
    path.write_text(csv_text(q, delimiter="\t", header=names))
    check_matrix(path, q, "float64")
    path = tmp / "tabs.csv"
    path.write_text(csv_text(q, delimiter="\t"))
    check_matrix(path, q, "float64")
    path = tmp / "UPPER.CSV"
    path.write_text(csv_text(q))
    check_matrix(path, q, "float64")
    # Blank lines anywhere, no final newline, spaces around fields, quoted numbers, +signs, nan/inf.
    rows = [", ".join(repr(float(v)) for v in row) for row in q]
    rows[1] = " " + rows[1].replace(", ", " ,") + " "
    rows[2] = ",".join(f'"{float(v)!r}"' for v in q[2])
    rows[3] = ",".join(("+" + repr(float(v))) if v >= 0 else repr(float(v)) for v in q[3])
    path = tmp / "messy.csv"
    path.write_text("\n\n" + "\n\n".join(rows[:10]) + "\r\n\r\n" + "\n".join(rows[10:]))
    check_matrix(path, q, "float64")
    special = np.array([[np.nan, np.inf, -np.inf, 0.0], [-0.0, 1e-310, 1e308, 2.5]])
    path = tmp / "special.csv"
    path.write_text("nan,inf,-inf,0\n-0.0,1e-310,1e308,2.5\n")
    check_matrix(path, special, "float64")
    path = tmp / "one_column.csv"
    path.write_text("label\n" + "\n".join(str(v) for v in y) + "\n")
    check_labels(path, y)
    path = tmp / "float_labels.csv"
    path.write_text("\n".join(f"{float(v)!r},1.5" for v in y) + "\n")
    check_labels(path, y, "--label-column", "0")
    wide = np.random.default_rng(3).standard_normal((4, 30000))  # lines longer than the read buffer
    path = tmp / "wide.csv"
    path.write_text(csv_text(wide))
    check_matrix(path, wide, "float64")
    # More rows than one index stride (1024), so reads start from the sparse row index.
    rng = np.random.default_rng(7)
    big = rng.standard_normal((2600, 3)) * 100
    path = tmp / "big.csv"
    path.write_text(csv_text(big, header=["a", "b", "c"]))
    for chunk, start in ((700, 1500), (1, 2599), (5000, 1024), (1000, 2048)):
        proc = dump("matrix", path, "--chunk", chunk, "--start", start)
        got = np.frombuffer(proc.stdout, dtype="<f8")
        want = np.concatenate([big[start:], big[:start]]).ravel()
        check(proc.returncode == 0 and np.array_equal(got, want), f"big.csv chunk {chunk} start {start}")


def test_raw(tmp, q):
    f32 = q.astype("<f4")
    path = tmp / "logits.f32"
    path.write_bytes(f32.tobytes())
    n, k = q.shape
    check_matrix(path, f32, "float32", "--shape", f"{n},{k}")


def test_labels(tmp, y):
    for dt in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"):
        for endian in ("<", ">"):
            path = tmp / f"y_{dt}_{'le' if endian == '<' else 'be'}.npy"
            np.save(path, y.astype(endian + dt))
            check_labels(path, y)
    path = tmp / "y_negative.npy"
    np.save(path, np.array([-1, -128, 127, 0], np.int8))
    check_labels(path, [-1, -128, 127, 0])
    path = tmp / "y_column.npy"
    np.save(path, np.asfortranarray(y.reshape(-1, 1)))
    check_labels(path, y)
    path = tmp / "y_empty.npy"
    np.save(path, np.zeros(0, np.int64))
    check_labels(path, [])


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
    rng = np.random.default_rng(2024)
    n, k = 23, 5
    q = rng.standard_normal((n, k)) * 10
    q[0, 0], q[1, 1] = -0.0, 65000.0
    y = rng.integers(0, k, n).astype(np.int64)
    with tempfile.TemporaryDirectory() as name:
        tmp = pathlib.Path(name)
        test_npy(tmp, q)
        test_npz(tmp, q, y)
        test_safetensors(tmp, q, y)
        test_csv(tmp, q, y)
        test_raw(tmp, q)
        test_labels(tmp, y)
        test_bad_files(tmp, q, y)
        test_limits(tmp, q, y)
        test_damaged_files(tmp, q, y)
    finish("io: ")


if __name__ == "__main__":
    main()
