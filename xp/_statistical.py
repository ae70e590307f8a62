"""Statistical Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

from typing import Literal

from xp import _boundary as b
from xp._array import Array
from xp._typing import ArrayLike, DTypeLike


@b.api
def cumulative_prod(
    x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None, include_initial: bool = False
) -> Array:
    raise NotImplementedError("xp.cumulative_prod is not implemented yet")


@b.api
def cumulative_sum(
    x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None, include_initial: bool = False
) -> Array:
    raise NotImplementedError("xp.cumulative_sum is not implemented yet")


@b.api
def max(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    raise NotImplementedError("xp.max is not implemented yet")


@b.api
def mean(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    raise NotImplementedError("xp.mean is not implemented yet")


@b.api
def min(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    raise NotImplementedError("xp.min is not implemented yet")


@b.api
def prod(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    dtype: DTypeLike | None = None,
    keepdims: bool = False,
) -> Array:
    raise NotImplementedError("xp.prod is not implemented yet")


@b.api
def std(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    correction: int | float = 0.0,
    keepdims: bool = False,
) -> Array:
    raise NotImplementedError("xp.std is not implemented yet")


@b.api
def sum(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    dtype: DTypeLike | None = None,
    keepdims: bool = False,
) -> Array:
    raise NotImplementedError("xp.sum is not implemented yet")


@b.api
def var(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    correction: int | float = 0.0,
    keepdims: bool = False,
) -> Array:
    raise NotImplementedError("xp.var is not implemented yet")
