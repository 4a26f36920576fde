"""Results as they always were (the CLI's JSON as dicts and lists) that a notebook shows as
mano.frame's table: a dict or list subclass with ``_repr_html_``, which pickles and copies as the
plain dict or list (so a result unpickles where mano is not installed)."""
from __future__ import annotations

from typing import Any, Optional

from ._core import InputError


class ResultDict(dict):
    __slots__ = ()

    def _repr_html_(self) -> Optional[str]:
        return _html(self)

    def __reduce__(self) -> tuple:
        return dict, (dict(self),)


class ResultList(list):
    __slots__ = ()

    def _repr_html_(self) -> Optional[str]:
        return _html(self)

    def __reduce__(self) -> tuple:
        return list, (list(self),)


def shown(result: Any) -> Any:
    if isinstance(result, dict):
        return ResultDict(result)
    if isinstance(result, list):
        return ResultList(result)
    return result


def _html(result: Any) -> Optional[str]:
    """mano.frame's table as HTML; None (the plain repr) without pandas or for another shape."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        return None
    from .frame import frame

    try:
        return frame(result)._repr_html_()
    except InputError:
        return None
