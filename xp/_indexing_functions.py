"""Indexing functions (the standard's "Indexing Functions" chapter): ``take``, ``take_along_axis``.

Indices are integer arrays (signed or unsigned); a negative index counts from the end of the
axis. Out-of-bounds indices (outside ``[-n, n)`` for an axis of size ``n``):

- **eagerly** (concrete indices) raise IndexError naming the offending index, before anything
  is computed. The indices' smallest and largest are read by ``xp._indexing_advanced.index_range`` (on
  CPU, NumPy reading the indices in place): the gathering kernel that follows is dispatched
  asynchronously, like jax.numpy's;
- **constant** (NumPy arrays) are checked on their own values before they are converted, also
  inside a traced function (with 64-bit mode off a conversion would wrap ``2**32 + 1`` to 1);
- **under a JAX trace** (``jax.jit``, ``vmap``, traced indices) cannot be checked, and are
  clamped to the axis, as XLA's gather does (an index past the end takes the last element, one
  before ``-n`` the first); in checked mode (``xp.checked``, docs/checked.md) they are checked
  when the computation runs.

An axis of size 0 has no valid index at all, so taking a non-empty set of indices from it is an
IndexError under a trace too (shapes are static).
"""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, JaxArrayImpl, wrap
from xp._checked import emitted as checks
from xp._errors import fail
from xp._indexing_advanced import check_decided, in_bounds, index_range
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._typing import ArrayLike


@api
def take(x: ArrayLike, indices: ArrayLike, /, *, axis: int | None = None) -> Array:
    """The elements of ``x`` at ``indices`` (1-d, integer) along ``axis``.

    ``axis`` may be omitted only for 1-d ``x``; a 0-d ``x`` is an error. The result has the
    shape of ``x`` with ``axis`` replaced by the length of ``indices``.
    """
    if type(x) is Array and type(indices) is Array and type(x._value) is JaxArrayImpl:  # see in_bounds
        value, index = x._value, indices._value
        shape = value.aval.shape  # (see xp.Array.shape)
        ndim = len(shape)
        # (no axis for x of several dimensions: ndim, out of range, for the general path's error)
        position = (0 if ndim == 1 else ndim) if axis is None else axis
        if type(position) is int and -ndim <= position < ndim and in_bounds(index, shape[position], 1):
            return wrap(_take(value, index, position % ndim))
    # (each array's shape is read once: a jax array's ndim and size are Python properties
    # computed from it, 0.1-0.2 µs a read, on a call of about 10 µs)
    value = boundary.array(x, "x")
    shape = value.shape
    if not shape:
        fail(ValueError, "x must have at least one dimension, got a 0-d array")
    if axis is None:
        if len(shape) > 1:
            fail(ValueError, f"axis is required when x has more than one dimension, got shape {tuple(shape)}")
        position = 0
    else:
        position = boundary.axis(axis, len(shape))
    check_constant(indices, shape[position], position)
    index = boundary.array(indices, "indices")
    if len(index.shape) != 1:
        fail(ValueError, f"indices must be 1-dimensional, got shape {tuple(index.shape)}")
    return _gather(_take, value, index, position, "xp.take")


@api
def take_along_axis(x: ArrayLike, indices: ArrayLike, /, *, axis: int = -1) -> Array:
    """The elements of ``x`` at ``indices`` along ``axis``, matched index by index.

    ``indices`` has as many dimensions as ``x``; its other axes broadcast with those of ``x``.
    The result has the broadcast shape, with ``axis`` the length of that axis of ``indices``.
    """
    if type(x) is Array and type(indices) is Array and type(x._value) is JaxArrayImpl:  # see in_bounds
        value, index = x._value, indices._value
        shape = value.aval.shape  # (see xp.Array.shape)
        ndim = len(shape)
        if type(axis) is int and -ndim <= axis < ndim and in_bounds(index, shape[axis], ndim):
            return wrap(_take_along_axis(value, index, axis % ndim))
    value = boundary.array(x, "x")
    position = boundary.axis(axis, value.ndim)
    if value.ndim:
        check_constant(indices, value.shape[position], position)
    index = boundary.array(indices, "indices")
    if index.ndim != value.ndim:
        fail(ValueError, f"indices must have as many dimensions as x ({value.ndim}), got shape {tuple(index.shape)}")
    return _gather(_take_along_axis, value, index, position, "xp.take_along_axis")


def check_constant(indices: Any, n: int, axis: int) -> None:
    """Check constant (NumPy) integer indices on their own values, before any conversion."""
    if isinstance(indices, np.ndarray) and indices.dtype.kind in "iu" and indices.size:
        _check_bounds(int(indices.min()), int(indices.max()), n, axis)


def _check_bounds(low: int, high: int, n: int, axis: int) -> None:
    check_decided(low, high, n, axis)
    if low < -n or high >= n:
        bad = low if low < -n else high
        fail(IndexError, f"indices holds {bad}, which is out of bounds for axis {axis} of x with size {n}")


def check_traced(index: Any, n: int, axis: int, where: str) -> None:
    """In checked mode, the bounds check of traced indices, when the computation runs."""
    message = f"{where}: indices holds {{}}, which is out of bounds for axis {axis} of x with size {n}"
    checks.index_bounds(index, n, message)


def _gather(gather: Any, value: Any, index: Any, axis: int, where: str) -> Array:
    """Run ``gather`` after the bounds check (see the module): eagerly where the indices are
    concrete, in checked mode where they are traced."""
    if index.dtype not in dt.INTEGER:
        fail(TypeError, f"indices must have an integer dtype, got {index.dtype}")
    n = value.shape[axis]
    if 0 in index.shape:
        return wrap(gather(value, index, axis))
    if n == 0:  # first: no index is in bounds there, traced or not
        fail(IndexError, f"cannot take elements from axis {axis} of x, which has size 0")
    check_indices(index, n, axis, where)
    return wrap(gather(value, index, axis))


def check_indices(index: Any, n: int, axis: int, where: str) -> None:
    """The bounds check of integer indices into an axis of size ``n`` (see the module): eagerly
    where they are concrete, in checked mode where they are traced. Also xp.sparse's."""
    if isinstance(index, Tracer):
        check_traced(index, n, axis, where)
    elif index.size:
        _check_bounds(*index_range(index), n, axis)


def _normalized(index: Any, n: int) -> Any:
    """Indices with negative ones counted from the end, in a signed dtype wide enough for ``n``
    (a symbolic size may be any: the widest)."""
    large = boundary.symbolic(n) or n > np.iinfo(np.int32).max
    wide = dt.int64 if dt.x64_enabled() and (index.dtype.itemsize == 8 or large) else dt.int32
    if index.dtype.kind == "u":
        if index.dtype.itemsize >= wide.itemsize:  # keep huge values huge (clamped) in the conversion
            index = jnp.minimum(index, boundary.size_array(n, index.dtype))
        return index.astype(wide)
    index = index.astype(wide)
    return jnp.where(index < 0, index + boundary.size_array(n, wide), index)


@functools.partial(kernel, static_argnames="axis")
def _take(x: Any, index: Any, axis: int) -> Any:
    n = x.shape[axis]
    return jnp.take(x, _normalized(index, n), axis=axis, mode="clip") if n else _empty_take(x, index, axis)


def _empty_take(x: Any, index: Any, axis: int) -> Any:
    shape = (*x.shape[:axis], index.shape[0], *x.shape[axis + 1 :])
    return jnp.zeros(shape, x.dtype)


@functools.partial(kernel, static_argnames="axis")
def _take_along_axis(x: Any, index: Any, axis: int) -> Any:
    shape = []
    for i, (s, t) in enumerate(zip(x.shape, index.shape, strict=True)):
        if i == axis:
            shape.append(t)
        elif s == t or t == 1 or s == 1:
            shape.append(t if s == 1 else s)
        else:
            fail(ValueError, f"indices of shape {index.shape} cannot be broadcast with x of shape {x.shape} "
                   f"(apart from axis {axis})")  # fmt: skip
    n = x.shape[axis]
    if n:
        out = jnp.take_along_axis(x, _normalized(index, n), axis=axis, mode="clip")
    else:
        out = jnp.zeros(tuple(shape), x.dtype)
    return out
