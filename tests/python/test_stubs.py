"""The type stubs (mano/__init__.pyi, mano/dask.pyi) describe the package as it is: every public
function and method has a stub with the same parameters (names, order, kinds, defaults)."""
import ast
import inspect
import pathlib

import pytest

import mano
import mano.dask


def stub_functions(module):
    tree = ast.parse(pathlib.Path(module.__file__).with_suffix(".pyi").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    out[f"{node.name}.{item.name}"] = item
    return out


def stub_parameters(fn):
    a = fn.args
    params = [(x.arg, "positional") for x in a.posonlyargs + a.args]
    if a.vararg:
        params.append((a.vararg.arg, "var_positional"))
    params += [(x.arg, "keyword_only") for x in a.kwonlyargs]
    if a.kwarg:
        params.append((a.kwarg.arg, "var_keyword"))
    return params, [ast.literal_eval(d) for d in a.defaults], [None if d is None else ast.literal_eval(d) for d in a.kw_defaults]


def runtime_parameters(obj):
    kinds = {inspect.Parameter.POSITIONAL_ONLY: "positional", inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
             inspect.Parameter.VAR_POSITIONAL: "var_positional", inspect.Parameter.KEYWORD_ONLY: "keyword_only",
             inspect.Parameter.VAR_KEYWORD: "var_keyword"}
    sig = inspect.signature(obj)
    params = [(p.name, kinds[p.kind]) for p in sig.parameters.values()]
    positional_defaults = [p.default for p in sig.parameters.values()
                           if kinds[p.kind] == "positional" and p.default is not inspect.Parameter.empty]
    kw_defaults = [None if p.default is inspect.Parameter.empty else p.default for p in sig.parameters.values()
                   if kinds[p.kind] == "keyword_only"]
    return params, positional_defaults, kw_defaults


def public(module):
    names = getattr(module, "__all__")
    for name in names:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and obj.__module__.startswith("mano") and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if inspect.isfunction(member) and (not attr.startswith("_") or attr in ("__init__", "__copy__", "__deepcopy__")):
                    yield f"{name}.{attr}", member
                elif isinstance(member, classmethod) and not attr.startswith("_"):
                    yield f"{name}.{attr}", member.__func__


@pytest.mark.parametrize("module", [mano, mano.dask], ids=["mano", "mano.dask"])
def test_every_public_function_has_a_matching_stub(module):
    stubs = stub_functions(module)
    checked = 0
    for name, obj in public(module):
        assert name in stubs, f"{module.__name__}.{name} has no stub"
        got, want = stub_parameters(stubs[name]), runtime_parameters(obj)
        assert got == want, f"{module.__name__}.{name}: stub {got} != runtime {want}"
        checked += 1
    assert checked >= (10 if module is mano else 3)
