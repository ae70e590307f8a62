"""Utility Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from xp import _boundary as b
from xp._array import Array, wrap
from xp._typing import ArrayLike, DTypeLike


@b.api
def all(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    value = b.array(x, "x")
    return wrap(_all(value, axes=b.axes(axis, value.ndim), keepdims=b.boolean(keepdims, "keepdims")))


@b.api
def any(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    value = b.array(x, "x")
    return wrap(_any(value, axes=b.axes(axis, value.ndim), keepdims=b.boolean(keepdims, "keepdims")))


@functools.partial(jax.jit, inline=True, static_argnames=("axes", "keepdims"))
def _all(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    return jnp.all(x, axis=axes, keepdims=keepdims)


@functools.partial(jax.jit, inline=True, static_argnames=("axes", "keepdims"))
def _any(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    return jnp.any(x, axis=axes, keepdims=keepdims)


@b.api
def diff(
    x: ArrayLike, /, *, axis: int = -1, n: int = 1, prepend: ArrayLike | None = None, append: ArrayLike | None = None
) -> Array:
    raise NotImplementedError("xp.diff is not implemented yet")
