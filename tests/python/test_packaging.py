"""The wheel (pyproject.toml, setup.py) holds the package and nothing else, with the core's version,
and the suite runs against the installed wheel, not the build tree. .ci/wheel builds the wheel,
installs it into a fresh venv and runs tests/python there with MANO_WHEEL naming it; elsewhere
these tests say they skipped."""
import os
import pathlib
import re
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
    assert package == sorted(sources + [module])
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
