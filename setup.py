"""The build step of the Python package (pyproject.toml): the version from the core's one version
header, the extension mano._core built by the CMake target mano_python
(bindings/python/CMakeLists.txt), the one description of how it is built, and the mano command
(target mano) in mano/_bin, which the `mano` console script runs (mano/__main__.py).

MANO_CMAKE_BUILD_DIR=DIR: DIR is a configured build tree (e.g. build/release, configured with
-DMANO_WITH_PYTHON=ON); only the target is built there and packed. Without it, a build tree of
setuptools' own (build/setuptools/temp.*/cmake) is configured, for this interpreter, and kept for
the next build. CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs (default: every core).
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def version() -> str:
    header = (ROOT / "src" / "mano" / "base" / "version.hpp").read_text()
    parts = [re.search(rf"#define MANO_VERSION_{p} (\d+)", header) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        sys.exit("mano setup: src/mano/base/version.hpp has no MANO_VERSION_MAJOR/MINOR/PATCH line")
    return ".".join(m.group(1) for m in parts)


class CMakeTarget(build_ext):
    """Builds mano._core with CMake instead of compiling sources itself."""

    def build_extension(self, ext: Extension) -> None:
        given = os.environ.get("MANO_CMAKE_BUILD_DIR")
        if given:
            tree = pathlib.Path(given).resolve()
            if not (tree / "CMakeCache.txt").is_file():
                sys.exit(f"mano setup: MANO_CMAKE_BUILD_DIR={given} is not a configured CMake build tree (no "
                         f"CMakeCache.txt); configure it with cmake -S . -B {given} -DMANO_WITH_PYTHON=ON, or unset it")
        else:
            tree = pathlib.Path(self.build_temp).resolve() / "cmake"
            self.run_command_line(["cmake", "-S", str(ROOT), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
                                   "-DMANO_WITH_PYTHON=ON", "-DMANO_BUILD_TESTS=OFF", "-DMANO_WITH_TORCH=OFF",
                                   f"-DPython_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        self.run_command_line(["cmake", "--build", str(tree), "--target", "mano_python", "mano", "--parallel", jobs])
        suffix = pathlib.Path(self.get_ext_filename(ext.name)).name  # _core + this interpreter's EXT_SUFFIX
        built = tree / "python" / "mano" / suffix
        if not built.is_file():
            found = sorted(p.name for p in (tree / "python" / "mano").glob("_core*"))
            sys.exit(f"mano setup: {built} was not built ({', '.join(found) or 'no _core module'} found there): the "
                     f"build tree was configured for another Python; configure it with -DPython_EXECUTABLE={sys.executable}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        # the mano command, which the console script and python -m mano run (mano/__main__.py)
        command = target.parent / "_bin" / "mano"
        command.parent.mkdir(exist_ok=True)
        shutil.copyfile(tree / "native" / "mano", command)
        command.chmod(0o755)

    @staticmethod
    def run_command_line(command: list) -> None:
        print("mano setup:", " ".join(command), flush=True)
        if subprocess.run(command).returncode != 0:
            sys.exit(f"mano setup: {' '.join(command)} failed (its output is above)")


(ROOT / "build" / "setuptools").mkdir(parents=True, exist_ok=True)
setup(version=version(), ext_modules=[Extension("mano._core", sources=[])], cmdclass={"build_ext": CMakeTarget},
      # setuptools' own files (lib, temp, bdist, egg-info) under build/setuptools, which is git-ignored
      options={"build": {"build_base": "build/setuptools"}, "egg_info": {"egg_base": "build/setuptools"}})
