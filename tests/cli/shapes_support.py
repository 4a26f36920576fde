"""Checks a JSON value against one definition of the schema files (src/mano/schema/*.schema.json,
read as bindings/make_types.py reads them: their $defs are one namespace), with jsonschema
(Debian's python3-jsonschema)."""
import functools
import pathlib
import sys

import jsonschema

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bindings"))
from make_types import load_schema  # noqa: E402

from harness import check  # noqa: E402


@functools.lru_cache(maxsize=None)
def validator(name):
    """A validator of one definition, resolving its $refs within the schema."""
    shapes = load_schema()
    schema = {"$schema": shapes["$schema"], "$defs": shapes["$defs"], "$ref": f"#/$defs/{name}"}
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def conforms(name, value, what):
    errors = sorted(validator(name).iter_errors(value), key=lambda e: list(e.absolute_path))
    detail = "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:160]}" for e in errors[:3])
    check(not errors, f"{what} is a {name}" + (f": {detail}" if detail else ""))
