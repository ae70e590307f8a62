"""Indexing Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

from typing import Literal

from xp import _boundary as b
from xp._array import Array
from xp._typing import ArrayLike, DTypeLike


@b.api
def take(x: ArrayLike, indices: ArrayLike, /, *, axis: int | None = None) -> Array:
    raise NotImplementedError("xp.take is not implemented yet")


@b.api
def take_along_axis(x: ArrayLike, indices: ArrayLike, /, *, axis: int = -1) -> Array:
    raise NotImplementedError("xp.take_along_axis is not implemented yet")
