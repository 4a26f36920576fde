"""What the file reader suites share (test_io.py, test_io_refusals.py): the driver they run
(tests/readers/dump.cpp, the first argument), its checks of values and of error lines, the files
they write by hand, and the logits and labels both read."""
import io
import json
import struct
import subprocess
import sys
import zlib

import numpy as np

from harness import check

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




def sample_logits():
    """23 x 5 logits with a -0.0 and a large value, and labels in [0, 5)."""
    rng = np.random.default_rng(2024)
    n, k = 23, 5
    q = rng.standard_normal((n, k)) * 10
    q[0, 0], q[1, 1] = -0.0, 65000.0
    y = rng.integers(0, k, n).astype(np.int64)
    return q, y
