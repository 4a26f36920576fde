"""Hostile input files against `mano score`: for every reader (.npy, .npz stored and deflated,
.csv, .tsv, .safetensors, raw float32, labels) a file that is not a regular file, an archive or
header that is ambiguous or claims far more than it holds, or a ~1 GB file (built sparse, so the
suite stays fast) must give exit 2 with one stderr line naming the file, or a result, within
64 MB of peak memory above a tiny file's, in bounded time; no error line may repeat file text
that is not a short field.
Run: /usr/bin/python3 tests/readers/test_hostile_files.py path/to/mano"""
import json
import os
import pathlib
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

MANO = sys.argv[1]
REPO = pathlib.Path(__file__).resolve().parents[2]
GB = 1 << 30
SLACK_MB = 64  # peak memory allowed above the tiny file's
results = []   # (case, peak MB, seconds), printed at the end


# Runs a command and reports its exit status and peak memory. Peak RSS is measured in a small
# process of its own: a child's ru_maxrss starts from the memory of the process that forked it,
# and this test's own process grows with the files it builds.
WRAPPER = """
import os, signal, sys
pid = os.posix_spawn(sys.argv[3], sys.argv[3:], os.environ)
signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
signal.alarm(int(sys.argv[2]))
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def measure(args, timeout=60):
    """Runs mano; returns (exit status, stdout, stderr, peak RSS in MB, seconds). A run past
    `timeout` seconds is killed (exit -9)."""
    with tempfile.NamedTemporaryFile() as report:
        start = time.monotonic()
        proc = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", WRAPPER, report.name, str(timeout), MANO,
                               *map(str, args)], capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout + 30)
        seconds = time.monotonic() - start
        rc, peak_kb = map(int, pathlib.Path(report.name).read_text().split())
    return rc, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"), peak_kb / 1024, seconds


BASE_MB = 0.0


def expect(case, args, path, needle=None, may_work=False, timeout=60, absent=()):
    """`mano score ARGS` exits 2 with one line naming `path` (and holding `needle`), or exits 0
    when `may_work`; peak memory stays within SLACK_MB of the tiny file's."""
    rc, out, err, peak, seconds = measure(["score", *args], timeout)
    results.append((case, peak, seconds))
    lines = err.strip().splitlines()
    refused = rc == 2 and len(lines) == 1 and pathlib.Path(path).name in lines[0] and out == ""
    if needle is not None:
        refused = refused and needle in lines[0]
    check(refused or (may_work and rc == 0), f"{case}: exit {rc}, stderr {err.strip()[:400]!r}"
                                             + (f", expected {needle!r}" if needle else ""))
    check(peak <= BASE_MB + SLACK_MB, f"{case}: peak memory {peak:.0f} MB, over {BASE_MB:.0f} + {SLACK_MB} MB")
    for text in absent:
        check(text not in err, f"{case}: the error repeats {text!r} from the file: {err.strip()!r}")
    return rc, out, err


def sparse(path, head, size, tail=b""):
    """A file of `size` bytes: `head`, zeros the file system does not store, then `tail`."""
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size - len(tail))
        f.seek(size - len(tail))
        f.write(tail)
    return path


def npy_header(descr, shape, fortran=False, major=1, length=None):
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    text += " " * ((64 - (len(text) + 11) % 64) % 64) + "\n"
    n = len(text) if length is None else length
    return b"\x93NUMPY" + bytes([major, 0]) + (struct.pack("<H", n) if major == 1 else struct.pack("<I", n)) + text.encode()


def zip_archive(members):
    """A zip of (name, data, compressed size, size, crc, method, name in the local header) members;
    past 65535 members, with a ZIP64 end record."""
    out, central, at = [], [], 0
    for name, data, compressed, size, crc, method, local_name in members:
        out.append(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, compressed, size,
                               len(local_name), 0) + local_name + data)
        central.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, compressed,
                                   size, len(name), 0, 0, 0, 0, 0, at) + name)
        at += len(out[-1])
    central = b"".join(central)
    n, end = len(members), b""
    if n > 0xFFFF:
        end = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n, n, len(central), at) + \
            struct.pack("<4sIQI", b"PK\x06\x07", 0, at + len(central), 1)
    count = min(n, 0xFFFF)
    return b"".join(out) + central + end + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count,
                                                        len(central), at, 0)


def stored(name, payload, local_name=None, claimed=None):
    size = len(payload) if claimed is None else claimed
    return (name, payload, size, size, zlib.crc32(payload), 0, local_name or name)


def deflated_zeros(header, zeros):
    """A deflate stream of `header` then `zeros` (a multiple of 16 MiB) zero bytes: (stream, crc).
    After a full flush the compressor starts afresh, so one compressed 16 MiB piece serves them all."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = bytes(16 << 20)
    start = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(header)
    for _ in range(zeros // len(piece)):
        crc = zlib.crc32(piece, crc)
    return start + middle * (zeros // len(piece)) + compressor.flush(), crc


def safetensors(header, data=b""):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def test_not_regular(tmp, tiny):
    """A FIFO (no writer), a socket, a character device and a directory as every kind of input."""
    fifo = tmp / "pipe.npy"
    os.mkfifo(fifo)
    sock_path = tmp / "socket.npy"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    folder = tmp / "folder.csv"
    folder.mkdir()
    cases = [(fifo, "a FIFO"), (sock_path, "a socket"), (pathlib.Path("/dev/zero"), "a character device")]
    for path, needle in cases:
        for role, args in (("logits", [path]), ("features", [tiny, "--features", path]),
                           ("second logits", [tiny, "--second-logits", path]),
                           ("source logits", [tiny, "--source-logits", path, "--source-labels", tmp / "tiny_y.npy"]),
                           ("source labels", [tiny, "--source-logits", tiny, "--source-labels", path])):
            expect(f"{needle} as {role}", args, path, needle, timeout=10)
    rc, _, err, _, _ = measure(["score", tiny, "--source-logits", tiny, "--source-labels", folder])
    check(rc == 2 and len(err.strip().splitlines()) == 1 and "directory" in err, f"a directory as labels: {err!r}")
    server.close()


def test_csv(tmp, tiny):
    rng = np.random.default_rng(5)
    q = rng.standard_normal((40, 4)) * 3
    lines = [",".join(repr(float(v)) for v in row) for row in q]
    outputs = []
    for name, end in (("lf.csv", "\n"), ("crlf.csv", "\r\n"), ("cr.csv", "\r")):
        (tmp / name).write_bytes((end.join(lines) + end).encode())
        rc, out, err, _, _ = measure(["score", tmp / name, "--json"])
        check(rc == 0, f"{name}: exit {rc}, {err.strip()!r}")
        outputs.append(json.loads(out)["methods"] if rc == 0 else None)
    check(outputs[0] is not None and outputs[0] == outputs[1] == outputs[2],
          "LF, CRLF and CR-only line endings give the same scores")
    (tmp / "mixed.csv").write_bytes(("a,b,c,d\r" + "\r\n".join(lines[:20]) + "\n" + "\r".join(lines[20:])).encode())
    rc, out, err, _, _ = measure(["score", tmp / "mixed.csv", "--json"])
    check(rc == 0 and json.loads(out)["n"] == 40, f"mixed line endings and a header: exit {rc}, {err.strip()!r}")

    for ext in ("csv", "tsv"):
        sep = "," if ext == "csv" else "\t"
        path = sparse(tmp / f"one_line.{ext}", b"", GB)
        expect(f"1 GB single-line .{ext}", [path], path, "line 1 is longer than 16777216 bytes")
        path = sparse(tmp / f"third_line.{ext}", f"a{sep}b\n1{sep}2\n".encode(), GB)
        expect(f"1 GB third line .{ext}", [path], path, "line 3 is longer than")
        path = tmp / f"wide.{ext}"
        path.write_bytes((sep.join(["0"] * 3_000_000) + "\n").encode())
        expect(f"3M columns .{ext}", [path], path, "line 1 has 3000000 fields, more than the 262144 columns")
        path = tmp / f"wide_row.{ext}"
        path.write_bytes((f"a{sep}b\n1{sep}2\n" + sep.join(["0"] * 3_000_000) + "\n").encode())
        expect(f"a row of 3M fields .{ext}", [path], path, "line 3 has 3000000 fields but the header has 2")
    path = sparse(tmp / "labels_line.csv", b"", GB)
    expect("1 GB single-line labels .csv", [tiny, "--source-logits", tiny, "--source-labels", path], path, "longer than")

    # A labels file that is not one (here /etc/passwd's shape): no line of it in the message.
    # (as many lines as the logits have rows, so that the count matches and the fields are read)
    secret = "root:x:0:0:root:/root:/bin/bash\n" + "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n" * 10
    path = tmp / "passwd.csv"
    path.write_text(secret)
    expect("passwd as labels", [tiny, "--source-logits", tiny, "--source-labels", path], path,
           "a field of 47 bytes is not an integer class label", absent=("daemon", "root:x"))
    expect("passwd as labels, a column by name", [tiny, "--source-logits", tiny, "--source-labels", path,
                                                  "--label-column", "y"], path, "its header has a name of 31 bytes", absent=("root:x",))
    path = tmp / "control.csv"
    path.write_bytes(b"a,b\n1,\x1b[31mX\xe2\x80\xae\n")
    _, _, err = expect("control characters in a field", [path], path, "'\\x1b[31mX\\xe2\\x80\\xae' is not a number")
    check("\x1b" not in err and "\u202e" not in err, f"control characters reach the terminal: {err!r}")


def test_npy(tmp, tiny):
    path = sparse(tmp / "header_length.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", GB - 64) + b"{", GB)
    expect("a 1 GB .npy header", [path], path, "over mano's limit of 65536")
    path = tmp / "claims.npy"
    path.write_bytes(npy_header("<f4", (10**12, 10)) + bytes(400))
    expect(".npy claiming 10^13 floats", [path], path, "truncated")
    n = GB // 32
    for order in (False, True):
        head = npy_header("<f4", (n, 8), fortran=order)
        path = sparse(tmp / f"zeros_{'F' if order else 'C'}.npy", head, len(head) + n * 32)
        expect(f"1 GB .npy ({'Fortran' if order else 'C'} order), last rows", [path, "--rows", f"{n - 5000}:{n}"],
               path, may_work=True)


def test_npz(tmp, tiny):
    payload = (tmp / "tiny.npy").read_bytes()
    cases = {
        "duplicate.npz": ([stored(b"logits.npy", payload), stored(b"logits.npy", payload)], "two members named 'logits.npy'"),
        "suffix.npz": ([stored(b"logits", payload), stored(b"logits.npy", payload)], "'logits' and 'logits.npy'"),
        "local_name.npz": ([stored(b"logits.npy", payload, local_name=b"labels.npy")], "local header names it 'labels.npy'"),
    }
    for name, (members, needle) in cases.items():
        (tmp / name).write_bytes(zip_archive(members))
        expect(name, [tmp / name], tmp / name, needle)
    (tmp / "trailing.npz").write_bytes(zip_archive([stored(b"logits.npy", payload)]) + b"appended")
    expect("trailing.npz", [tmp / "trailing.npz"], tmp / "trailing.npz", "8 bytes after its end-of-central-directory")
    # Member a's data claims to run over member b's local header.
    (tmp / "overlap.npz").write_bytes(zip_archive([stored(b"a.npy", payload, claimed=len(payload) + 40),
                                                   stored(b"b.npy", payload)]))
    expect("overlap.npz", [tmp / "overlap.npz", "--key", "a"], tmp / "overlap.npz", "overlap another member")
    many = [stored(f"{i}".encode(), b"") for i in range(70_000)]
    (tmp / "many.npz").write_bytes(zip_archive(many))
    expect("70000 members", [tmp / "many.npz"], tmp / "many.npz", "70000 members, more than the 65536")

    # A member that claims 1 GB the archive does not hold.
    head = npy_header("<f4", (GB // 32, 8))
    (tmp / "claims.npz").write_bytes(zip_archive([stored(b"logits.npy", head, claimed=GB)]))
    expect(".npz member claiming 1 GB", [tmp / "claims.npz"], tmp / "claims.npz", "truncated")
    # 1 GB stored (sparse): the last rows are read without the rest; its CRC is never checked.
    n = GB // 32
    data_size = len(head) + n * 32
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 45, 0, 0, 0, 0x21, 0, 0xFFFFFFFF, 0xFFFFFFFF, 10, 20) + \
        b"logits.npy" + struct.pack("<HHQQ", 1, 16, data_size, data_size)
    extra = struct.pack("<HHQQQ", 1, 24, data_size, data_size, 0)
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45, 0, 0, 0, 0x21, 0, 0xFFFFFFFF, 0xFFFFFFFF, 10,
                          len(extra), 0, 0, 0, 0, 0) + b"logits.npy" + extra
    cd_offset = len(local) + data_size
    end = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1, len(central), cd_offset) + \
        struct.pack("<4sIQI", b"PK\x06\x07", 0, cd_offset + len(central), 1) + \
        struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), 0xFFFFFFFF, 0)
    path = sparse(tmp / "stored_1gb.npz", local + head, cd_offset + len(central) + len(end), central + end)
    expect("1 GB stored .npz member, last rows", [path, "--rows", f"{n - 5000}:{n}"], path, may_work=True)

    # Deflate bombs: 1 GB of zero logits from about 1 MB. C order streams; Fortran order would need
    # a 1 GB temporary file and is refused.
    for fortran in (False, True):
        head = npy_header("<f4", (n, 8), fortran=fortran)
        stream, crc = deflated_zeros(head, n * 32)
        members = [(b"logits.npy", stream, len(stream), len(head) + n * 32, crc, 8, b"logits.npy")]
        path = tmp / f"bomb_{'F' if fortran else 'C'}.npz"
        path.write_bytes(zip_archive(members))
        if fortran:
            expect("deflated Fortran-order 1 GB from 1 MB", [path], path, "deflated Fortran-order array")
        else:
            expect("deflated 1 GB from 1 MB, last rows", [path, "--rows", f"{n - 5000}:{n}"], path, may_work=True,
                   timeout=120)


def test_safetensors(tmp, tiny):
    f32 = np.arange(40, dtype="<f4").reshape(10, 4).tobytes()
    entry = {"dtype": "F32", "shape": [10, 4]}
    cases = {
        "overlap": ({"logits": {**entry, "data_offsets": [0, 160]}, "b": {**entry, "data_offsets": [80, 240]}},
                    f32 * 2, "overlap"),
        "gap": ({"logits": {**entry, "data_offsets": [0, 160]}, "b": {**entry, "data_offsets": [168, 328]}},
                f32 * 2 + bytes(8), "8 bytes that no tensor holds"),
        "trailing": ({"logits": {**entry, "data_offsets": [0, 160]}}, f32 + bytes(8), "8 bytes after the last tensor"),
        "size": ({"logits": {**entry, "data_offsets": [0, 120]}}, f32[:120], "but its data_offsets span 120 bytes"),
    }
    for name, (header, data, needle) in cases.items():
        path = tmp / f"{name}.safetensors"
        path.write_bytes(safetensors(header, data))
        expect(f"{name}.safetensors", [path], path, needle)
    path = tmp / "duplicate.safetensors"
    text = b'{"logits": {"dtype": "F32", "shape": [10, 4], "data_offsets": [0, 160]}, ' \
           b'"logits": {"dtype": "F32", "shape": [10, 4], "data_offsets": [0, 160]}}'
    path.write_bytes(safetensors(text, f32))
    expect("duplicate.safetensors", [path], path, "twice")
    path = tmp / "length.safetensors"
    path.write_bytes(struct.pack("<Q", 1 << 60) + b"{}")
    expect("a header length of 2^60", [path], path, "over the format's limit")

    # ~99 MB headers: parsed as they stream, never held whole.
    near = 99_000_000
    hostile = {
        "dims": (b'{"logits": {"dtype": "F32", "data_offsets": [0, 0], "shape": [' + b"1," * (near // 2), "more than 64 dimensions"),
        "string": (b'{"__metadata__": {"a": "' + b"x" * near, "a string longer than 1048576 bytes"),
        "deep": (b'{"__metadata__": ' + b"[" * near, "nests deeper than 64 levels"),
        "spaces": (b"{" + b" " * near + b"}", "run of spaces longer than 1048576 bytes"),
    }
    for name, (text, needle) in hostile.items():
        path = tmp / f"{name}.safetensors"
        path.write_bytes(safetensors(text.ljust(near + 1000, b" ")))
        expect(f"99 MB header ({name})", [path], path, needle)
    names = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(70_000)}
    path = tmp / "many.safetensors"
    path.write_bytes(safetensors(names))
    expect("70000 tensors", [path], path, "more than 65536 tensors")
    n = GB // 32
    text = json.dumps({"logits": {"dtype": "F32", "shape": [n, 8], "data_offsets": [0, n * 32]}}).encode()
    path = sparse(tmp / "zeros.safetensors", safetensors(text), 8 + len(text) + n * 32)
    expect("1 GB .safetensors, last rows", [path, "--rows", f"{n - 5000}:{n}"], path, may_work=True)


def test_raw_and_labels(tmp, tiny):
    n = GB // 32
    path = sparse(tmp / "zeros.f32", b"", GB)
    expect("1 GB raw float32, last rows", [path, "--shape", f"{n},8", "--rows", f"{n - 5000}:{n}"], path, may_work=True)
    expect("raw float32, a shape too large", [path, "--shape", f"{n},9"], path, "bytes")
    expect("raw float32, a shape past 64 bits", [path, "--shape", "4294967296,4294967296"], path, "too large")
    path = tmp / "claims_y.npy"
    path.write_bytes(npy_header("|i1", (10**12,)) + bytes(100))
    expect("labels .npy claiming 10^12", [tiny, "--source-logits", tiny, "--source-labels", path], path, "truncated")
    path = sparse(tmp / "header_y.npy", b"\x93NUMPY\x03\x00" + struct.pack("<I", GB - 64) + b"{", GB)
    expect("labels .npy with a 1 GB header", [tiny, "--source-logits", tiny, "--source-labels", path], path, "65536")


def test_bounded_scoring(tmp):
    """Default scoring and predictions stay under 256 MB on small files that hold many logits: the
    methods that keep every row (COT) run only up to 2e6 logits and K = 100 unasked, with a time
    bounded by N K^2 whatever the rows are (rows on one curve, or few distinct rows, once took the
    network simplex minutes), and a prediction checks K before it scores a row."""
    cal = tmp / "cal.json"
    subprocess.run([MANO, "calibrate", REPO / "tests" / "data" / "example" / "manifest.json", "-o", cal, "--quiet"],
                   check=True, capture_output=True)
    check("cot" in json.loads(cal.read_text())["options"]["methods"], "the example calibration has COT")
    # under AddressSanitizer (.ci/sanitize) every allocation carries shadow memory and a
    # quarantine: the absolute bound is checked natively only
    limit_mb = float("inf") if os.environ.get("MANO_SANITIZED") else 256
    if os.environ.get("MANO_SANITIZED"):
        print("bounded scoring: the 256 MB peak-memory bound is not checked under the sanitizers")

    def zeros_npz(path, rows, cols):
        """An .npz of a float32 zero matrix, deflated as it is written (never whole in memory)."""
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("arr_0.npy", "w", force_zip64=True) as f:
            f.write(npy_header("<f4", (rows, cols)))
            block = bytes(4 * cols * 100_000)
            for first in range(0, rows, 100_000):
                f.write(block[:4 * cols * min(100_000, rows - first)])
        return path

    zeros = zeros_npz(tmp / "zeros.npz", 2_000_000, 10)
    for case, args in (("predict", ["predict", "--calibration", cal, zeros, "--json"]),
                       ("score --calibration", ["score", zeros, "--calibration", cal, "--json"])):
        rc, out, err, peak, seconds = measure(args, timeout=120)
        results.append((f"{case} on 2e7 zero logits in a {zeros.stat().st_size // 1024} KB .npz", peak, seconds))
        check(rc == 0 and "cot left out of this prediction" in err, f"{case} on the zeros .npz: exit {rc}, {err.strip()!r}")
        check(peak <= limit_mb, f"{case} on the zeros .npz: peak memory {peak:.0f} MB, over {limit_mb} MB")
        if rc == 0:
            check("cot" not in json.loads(out)["methods"], f"{case}: COT left out")
    eleven = zeros_npz(tmp / "eleven.npz", 5_000_000, 11)
    rc, out, err, peak, seconds = measure(["predict", "--calibration", cal, eleven], timeout=120)
    results.append((f"predict on 11-class logits (5.5e7 in a {eleven.stat().st_size // 1024} KB .npz)", peak, seconds))
    check(rc == 2 and "the logits have 11 classes but the calibration was fitted on logits with 10" in err
          and peak <= BASE_MB + SLACK_MB, f"an 11-class file refused before scoring: exit {rc}, {peak:.0f} MB, {err!r}")
    # rows that stalled the network simplex: on one curve, and 100 distinct rows repeated
    rng = np.random.default_rng(4)
    curve = tmp / "curve.npy"
    np.save(curve, (np.sin(0.37 * np.arange(2_000_000)).reshape(200_000, 10) * 3).astype(np.float32))
    repeated = tmp / "repeated.npy"
    np.save(repeated, (rng.standard_normal((100, 10)) * 2).astype(np.float32)[rng.integers(0, 100, 200_000)])
    for path in (curve, repeated):
        rc, out, err, peak, seconds = measure(["score", path, "--json"], timeout=300)
        results.append((f"default score of {path.name} (200000 x 10, COT included)", peak, seconds))
        check(rc == 0 and "cot" in json.loads(out or "{}").get("methods", {}), f"{path.name}: exit {rc}, {err!r}")
        check(peak <= limit_mb, f"{path.name}: peak memory {peak:.0f} MB, over {limit_mb} MB")


def main():
    global BASE_MB
    with tempfile.TemporaryDirectory() as name:
        tmp = pathlib.Path(name)
        tiny = tmp / "tiny.npy"
        np.save(tiny, np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32))
        np.save(tmp / "tiny_y.npy", np.arange(10, dtype=np.int64) % 3)
        rc, _, err, BASE_MB, _ = measure(["score", tiny, "--source-logits", tiny, "--source-labels", tmp / "tiny_y.npy"])
        check(rc == 0, f"the tiny file: exit {rc}, {err!r}")
        test_not_regular(tmp, tiny)
        test_csv(tmp, tiny)
        test_npy(tmp, tiny)
        test_npz(tmp, tiny)
        test_safetensors(tmp, tiny)
        test_raw_and_labels(tmp, tiny)
        test_bounded_scoring(tmp)
    if os.environ.get("MANO_READERS_VERBOSE"):
        for case, peak, seconds in results:
            print(f"{peak:7.1f} MB {seconds:6.2f} s  {case}")
    worst = max(results, key=lambda r: r[1])
    slowest = max(results, key=lambda r: r[2])
    print(f"peak memory: tiny file {BASE_MB:.1f} MB; largest {worst[1]:.1f} MB ({worst[0]}); "
          f"slowest {slowest[2]:.1f} s ({slowest[0]})")
    finish("readers: ")


if __name__ == "__main__":
    main()
