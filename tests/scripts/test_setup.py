#!/usr/bin/env python3
""".ci/setup waits for the dpkg lock instead of failing at once (a fresh cloud VM runs unattended
upgrades at boot), and says so: run with stand-ins for apt-get, dpkg-query, id and lslocks on PATH
(every package missing, the lock held), every apt-get call must carry apt's lock timeout, and the
output must say that it waits and for how long."""
import os
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]

STANDINS = {
    "apt-get": 'echo "$@" >> "$MANO_TEST_LOG"\n',
    "dpkg-query": "exit 1\n",  # nothing is installed
    "id": 'if [ "$1" = -u ]; then echo 0; else /usr/bin/id "$@"; fi\n',
    "lslocks": "echo /var/lib/dpkg/lock-frontend\n",  # another install holds the lock
    "dpkg": "exit 0\n",
}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = pathlib.Path(tmp) / "bin"
        bin_dir.mkdir()
        for name, body in STANDINS.items():
            (bin_dir / name).write_text("#!/bin/sh\n" + body)
            (bin_dir / name).chmod(0o755)
        log = pathlib.Path(tmp) / "apt-get.log"
        env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin", MANO_TEST_LOG=str(log), MANO_APT_LOCK_TIMEOUT="42")
        proc = subprocess.run(["bash", str(REPO / ".ci/setup"), "native"], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        calls = log.read_text().splitlines()
        assert [c.split()[2] for c in calls] == ["update", "install"], calls
        for call in calls:
            assert call.startswith("-o DPkg::Lock::Timeout=42 "), f"apt-get without the lock timeout: {call}"
        assert "holds the dpkg lock" in proc.stdout and "waits up to 42 s" in proc.stdout, proc.stdout
    print("setup: every apt-get waits for the dpkg lock, and says so when another install holds it")


if __name__ == "__main__":
    main()
