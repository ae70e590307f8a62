"""Searching Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

from typing import Literal

from xp import _boundary as b
from xp._array import Array
from xp._typing import ArrayLike, DTypeLike


@b.api
def argmax(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    raise NotImplementedError("xp.argmax is not implemented yet")


@b.api
def argmin(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    raise NotImplementedError("xp.argmin is not implemented yet")


@b.api
def count_nonzero(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    raise NotImplementedError("xp.count_nonzero is not implemented yet")


@b.api
def nonzero(x: ArrayLike, /) -> tuple[Array, ...]:
    raise NotImplementedError("xp.nonzero is not implemented yet")


@b.api
def searchsorted(
    x1: ArrayLike,
    x2: ArrayLike | int | float,
    /,
    *,
    side: Literal["left", "right"] = "left",
    sorter: ArrayLike | None = None,
) -> Array:
    raise NotImplementedError("xp.searchsorted is not implemented yet")


@b.api
def where(
    condition: ArrayLike, x1: ArrayLike | int | float | complex | bool, x2: ArrayLike | int | float | complex | bool, /
) -> Array:
    raise NotImplementedError("xp.where is not implemented yet")
