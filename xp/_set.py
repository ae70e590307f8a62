"""Set Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

from typing import Literal

from xp import _boundary as b
from xp._array import Array
from xp._typing import ArrayLike, DTypeLike


@b.api
def isin(x1: ArrayLike | int, x2: ArrayLike | int, /, *, invert: bool = False) -> Array:
    raise NotImplementedError("xp.isin is not implemented yet")


@b.api
def unique_all(x: ArrayLike, /) -> tuple[Array, ...]:
    raise NotImplementedError("xp.unique_all is not implemented yet")


@b.api
def unique_counts(x: ArrayLike, /) -> tuple[Array, ...]:
    raise NotImplementedError("xp.unique_counts is not implemented yet")


@b.api
def unique_inverse(x: ArrayLike, /) -> tuple[Array, ...]:
    raise NotImplementedError("xp.unique_inverse is not implemented yet")


@b.api
def unique_values(x: ArrayLike, /) -> Array:
    raise NotImplementedError("xp.unique_values is not implemented yet")
