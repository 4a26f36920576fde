"""The wheel (pyproject.toml, setup.py) holds the package and nothing else, with the core's version,
and the suite runs against the installed wheel, not the build tree. .ci/wheel builds the wheel,
installs it into a fresh venv and runs tests/python there with MANO_WHEEL naming it; elsewhere
these tests say they skipped."""
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import zipfile

import pytest

import mano

REPO = pathlib.Path(__file__).resolve().parents[2]
WHEEL = os.environ.get("MANO_WHEEL")
needs_wheel = pytest.mark.skipif(not WHEEL, reason="MANO_WHEEL is not set: .ci/wheel sets it to the wheel it built")


def core_version():
    header = (REPO / "src" / "mano" / "base" / "version.hpp").read_text()
    return ".".join(re.search(rf"#define MANO_VERSION_{p} (\d+)", header).group(1) for p in ("MAJOR", "MINOR", "PATCH"))


@needs_wheel
def test_the_wheel_holds_the_package_its_module_and_its_stubs():
    with zipfile.ZipFile(WHEEL) as z:
        names = set(z.namelist())
    package = sorted(n for n in names if n.startswith("mano/"))
    sources = sorted(f"mano/{p.name}" for p in (REPO / "bindings/python/mano").iterdir()
                     if p.suffix in (".py", ".pyi") or p.name == "py.typed")
    module = f"mano/_core{sysconfig.get_config_var('EXT_SUFFIX')}"
    assert package == sorted(sources + [module, "mano/_bin/mano"])
    assert {"mano/frame.py", "mano/plot.py", "mano/torch.py", "mano/__init__.pyi", "mano/py.typed"} <= names
    dist_info = f"mano-{core_version()}.dist-info"
    assert {f"{dist_info}/METADATA", f"{dist_info}/WHEEL", f"{dist_info}/RECORD"} <= names
    assert not [n for n in names if not n.startswith(("mano/", dist_info + "/"))]  # no tests, no build tree
    assert pathlib.Path(WHEEL).name.startswith(f"mano-{core_version()}-")


@needs_wheel
def test_the_metadata_names_the_version_and_the_dependencies():
    with zipfile.ZipFile(WHEEL) as z:
        metadata = z.read(f"mano-{core_version()}.dist-info/METADATA").decode()
    assert re.search(r"^Version: (.*)$", metadata, re.M).group(1) == core_version()
    assert re.search(r"^Requires-Dist: numpy$", metadata, re.M)
    for extra in ("frame", "plot", "torch", "dask"):
        assert f"Provides-Extra: {extra}" in metadata


@needs_wheel
def test_the_suite_runs_against_the_installed_package():
    installed = pathlib.Path(mano.__file__).resolve()
    assert installed.is_relative_to(pathlib.Path(sys.prefix).resolve()), installed
    assert not installed.is_relative_to(REPO / "build" / "release"), installed
    assert mano.__version__ == core_version()


@needs_wheel
def test_the_wheel_installs_the_mano_command_and_python_m_mano():
    """pip's console script and python -m mano run the CLI, with nothing but the venv on PATH."""
    with zipfile.ZipFile(WHEEL) as z:
        entry = next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))
        assert "mano = mano.__main__:main" in z.read(entry).decode()
    bin_dir = pathlib.Path(sys.executable).parent
    env = {"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/")}
    help_text = subprocess.run(["mano", "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0 and "score" in help_text.stdout and "calibrate" in help_text.stdout, help_text.stderr
    version = subprocess.run([sys.executable, "-m", "mano", "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith(f"mano {core_version()}"), version.stderr
    bad = subprocess.run(["mano", "score"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and bad.stderr.count("\n") <= 3, bad.stderr  # the CLI's own error lines


def test_the_namespace_holds_the_api():
    """Beyond __all__: the core module and the public submodules (mano.monitor, mano.dask, ...), not
    the helpers and imports the package was built from (os, json, Union, _sets, ...)."""
    names = {n for n in dir(mano) if not n.startswith("__")}
    submodules = {p.stem for p in pathlib.Path(mano.__file__).parent.glob("*.py") if not p.stem.startswith("_")}
    assert names - set(mano.__all__) <= {"_core"} | submodules, sorted(names - set(mano.__all__))
    assert not {"os", "json", "Union", "Sequence", "annotations", "_sets", "_scoring"} & names
