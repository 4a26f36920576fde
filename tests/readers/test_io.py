"""The file readers (native/io) against NumPy: every format, dtype, byte order and layout read
through tests/readers/dump.cpp in several chunk sizes and start rows must give back exactly the
stored values. (Bad files: test_io_refusals.py.)
Run: /usr/bin/python3 tests/readers/test_io.py path/to/mano_io_dump"""
import pathlib
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

from io_support import (bf16, check_labels, check_matrix, csv_text, dump, npy_of, safetensors_bytes,  # noqa: E402
                        sample_logits, zip_bytes)


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


def main():
    q, y = sample_logits()
    with tempfile.TemporaryDirectory() as name:
        tmp = pathlib.Path(name)
        test_npy(tmp, q)
        test_npz(tmp, q, y)
        test_safetensors(tmp, q, y)
        test_csv(tmp, q, y)
        test_raw(tmp, q)
        test_labels(tmp, y)
    finish("io: ")


if __name__ == "__main__":
    main()
