"""The ``mano`` command from the Python package: ``python -m mano ...`` and the ``mano`` console
script pip installs run the same native CLI (native/cli) that the package ships beside its core,
in mano/_bin, with the arguments given. Every subcommand, option and message is the CLI's own
(docs/cli.md)."""
import os
import pathlib
import sys


def _command() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parent / "_bin" / "mano"


def main() -> None:
    command = _command()
    if not os.access(command, os.X_OK):
        sys.exit(f"mano: error: this Python package has no mano command ({command} is missing): install the wheel or "
                 "`pip install .` (they ship it), or run the mano of a native build (build/release/native/mano)")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command, ["mano", *sys.argv[1:]])


if __name__ == "__main__":
    main()
