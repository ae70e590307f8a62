"""Sorting Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

from typing import Literal

from xp import _boundary as b
from xp._array import Array
from xp._typing import ArrayLike, DTypeLike


@b.api
def argsort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    raise NotImplementedError("xp.argsort is not implemented yet")


@b.api
def sort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    raise NotImplementedError("xp.sort is not implemented yet")
