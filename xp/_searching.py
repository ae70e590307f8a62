"""Searching functions (the standard's "Searching Functions" chapter).

Index results (``argmax``, ``count_nonzero``, ``nonzero``, ``searchsorted``) have the default
index dtype: int64 with JAX's 64-bit mode on, int32 otherwise.

``searchsorted`` orders values as ``xp.sort`` does: NaNs after every other value, ``-0.0``
equal to ``0.0``. ``argmax`` and ``argmin`` return the index of the first NaN where there is
one, as NumPy does.

``nonzero`` has a data-dependent result shape. It works eagerly: a kernel computes the mask of
non-zero elements, the mask is read back to the host, and the indices are computed there and
put back on ``x``'s device. Doing the compaction on the host avoids compiling a kernel for
every distinct number of non-zero elements, which would cost far more than the copy. Under a
JAX trace (``jax.jit``, ``jax.vmap``) it raises :class:`xp._errors.DataDependentShapeError`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Literal

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._elementwise import operands
from xp._errors import DataDependentShapeError, describe, fail
from xp._indexing_advanced import index_range
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._typing import ArrayLike
from xp._utility import truth


def check_real(dtype: np.dtype, param: str = "x") -> None:
    """Trace-time check that ``dtype`` is real-valued (an integer or real floating dtype)."""
    if dtype not in dt.REAL_NUMERIC:
        fail(TypeError, f"{param} must have a real-valued dtype, got {dtype}")


def promote_pair(x1: Any, x2: Any) -> np.dtype:
    """Trace-time: the promoted dtype of ``x1`` and ``x2`` (an error where none is usable now)."""
    try:
        return dt.promote(x1.dtype, x2.dtype)
    except dt.PromotionError as e:
        fail(TypeError, f"x1 and x2: {e}")


# --- argmax, argmin -------------------------------------------------------------------------


@api
def argmax(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Indices of the maximum values along ``axis`` (of the flattened array if None).

    The first occurrence wins ties; the index of the first NaN is returned where there is one
    (as in NumPy). An empty reduction is a ValueError.
    """
    if type(x) is Array and axis is None and keepdims is False:
        return wrap(_argmax_whole(x._value))
    value = boundary.array(x, "x")
    index = None if axis is None else boundary.axis(axis, value.ndim)
    return wrap(_arg_reduce(value, index, boundary.boolean(keepdims, "keepdims"), True))


@api
def argmin(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Indices of the minimum values along ``axis`` (of the flattened array if None).

    The first occurrence wins ties; the index of the first NaN is returned where there is one
    (as in NumPy). An empty reduction is a ValueError.
    """
    if type(x) is Array and axis is None and keepdims is False:
        return wrap(_argmin_whole(x._value))
    value = boundary.array(x, "x")
    index = None if axis is None else boundary.axis(axis, value.ndim)
    return wrap(_arg_reduce(value, index, boundary.boolean(keepdims, "keepdims"), False))


@functools.partial(kernel, static_argnums=(1, 2, 3))  # axis, keepdims, largest
def _arg_reduce(x: Any, axis: int | None, keepdims: bool, largest: bool) -> Any:
    check_real(x.dtype)
    size = x.size if axis is None else x.shape[axis]
    if size == 0:
        where = "x is empty" if axis is None else f"axis {axis} of x has size 0 (shape {x.shape})"
        fail(ValueError, f"{where}: an empty sequence has no {'maximum' if largest else 'minimum'}")
    if x.dtype.kind != "f":
        reduce = jnp.argmax if largest else jnp.argmin
        return reduce(x, axis=axis, keepdims=keepdims).astype(dt.default_int())
    found = _first_extremum(x.reshape(-1) if axis is None else x, 0 if axis is None else axis, largest)
    if keepdims:
        found = jnp.expand_dims(found, tuple(range(x.ndim)) if axis is None else axis)
    return found.astype(dt.default_int())


def _first_extremum(x: Any, axis: int, largest: bool) -> Any:
    """The index along ``axis`` of the first NaN where there is one, else of the first maximum
    (minimum): one reduction over (is NaN, value, index) whose choice between two candidates does
    not depend on the order XLA reduces in. (XLA's own argmax keeps whichever NaN it meets first:
    the first on the CPU, which reduces in order, any of them on a TPU.)"""
    index_dtype = np.dtype(np.int32) if x.shape[axis] < np.iinfo(np.int32).max else dt.default_int()
    index = lax.broadcasted_iota(index_dtype, x.shape, axis)

    def better(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        (a_nan, a_value, a_index), (b_nan, b_value, b_index) = a, b
        beats = a_value > b_value if largest else a_value < b_value
        ties = (a_nan & b_nan) | (a_value == b_value)
        take_a = jnp.where(a_nan != b_nan, a_nan, jnp.where(ties, a_index < b_index, beats))
        return (jnp.where(take_a, a_nan, b_nan), jnp.where(take_a, a_value, b_value),
                jnp.where(take_a, a_index, b_index))  # fmt: skip

    start = (
        np.bool_(False),
        np.array(-np.inf if largest else np.inf, x.dtype),
        np.array(np.iinfo(index_dtype).max, index_dtype),
    )
    return lax.reduce((jnp.isnan(x), x, index), start, better, (axis,))[2]


# The kernels of the default calls (the flattened array): the array alone, no static arguments
# to match, no boundary work (as the statistical reductions' default calls: xp/_statistical.py).


@kernel
def _argmax_whole(x: Any) -> Any:
    return _arg_reduce(x, None, False, True)


@kernel
def _argmin_whole(x: Any) -> Any:
    return _arg_reduce(x, None, False, False)


# --- count_nonzero, nonzero -----------------------------------------------------------------


@api
def count_nonzero(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The number of non-zero elements along ``axis`` (every axis if None; ``()`` counts none).

    A complex element is non-zero if either component is; a boolean one if it is True.
    """
    value = boundary.array(x, "x")
    return wrap(_count_nonzero(value, boundary.axes(axis, value.ndim), boundary.boolean(keepdims, "keepdims")))


@functools.partial(kernel, static_argnums=(1, 2))  # axes, keepdims
def _count_nonzero(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    return jnp.sum(truth(x), axis=axes, keepdims=keepdims, dtype=dt.default_int())


@api
def nonzero(x: ArrayLike, /) -> tuple[Array, ...]:
    """The indices of the non-zero elements of ``x``: one array per axis, in row-major order.

    ``x`` must have at least one dimension. Eager only: the result's shape depends on the
    data, so under ``jax.jit`` or ``jax.vmap`` this raises DataDependentShapeError.
    """
    value = boundary.array(x, "x")
    if value.ndim == 0:
        fail(ValueError, "x must have at least one dimension, got a 0-d array "
               "(reshape it to (1,) first, or test the scalar with bool(x))")  # fmt: skip
    if isinstance(value, Tracer):
        fail(DataDependentShapeError, "the number of non-zero elements depends on the values of x, so the "
               "result's shape cannot be known while tracing (jax.jit, jax.vmap); call xp.nonzero outside the "
               "transformation, or keep the shape static with a mask: xp.where(x != 0, x, fill)")  # fmt: skip
    mask = value if value.dtype == dt.bool else _nonzero_mask(value)
    indices = np.nonzero(np.asarray(mask))
    index_dtype = dt.default_int()
    return tuple(wrap(v) for v in put_like([i.astype(index_dtype, copy=False) for i in indices], value))


@kernel
def _nonzero_mask(x: Any) -> Any:
    return truth(x)


def put_like(host: Sequence[np.ndarray], like: Any) -> list[Any]:
    """Host arrays put where the jax array ``like`` lives (replicated if it spans several devices).

    The last step of the eager data-dependent functions (``nonzero``, ``unique_*``).
    """
    sharding = like.sharding
    devices = sharding.device_set
    target: Any = None
    if len(devices) == 1:
        target = next(iter(devices))
    elif isinstance(sharding, NamedSharding):
        target = NamedSharding(sharding.mesh, PartitionSpec())
    return jax.device_put(list(host), target)


# --- searchsorted ---------------------------------------------------------------------------


@api
def searchsorted(
    x1: ArrayLike,
    x2: ArrayLike | int | float,
    /,
    *,
    side: Literal["left", "right"] = "left",
    sorter: ArrayLike | None = None,
) -> Array:
    """Indices where the elements of ``x2`` would be inserted into the sorted 1-d ``x1``.

    ``x1`` must be sorted in ascending order (as ``xp.sort`` sorts: NaNs last, ``-0.0`` equal to
    ``0.0``), or ``sorter`` must be the indices that sort it, an integer array of ``x1``'s shape.
    A Python scalar ``x2`` takes ``x1``'s dtype under the scalar rules; array operands are
    compared in their promoted dtype. Eagerly, ``sorter`` is checked to be within ``[0, len(x1))``
    (read in place on CPU, one device round trip elsewhere); under a trace an out-of-range
    ``sorter`` gives unspecified indices.
    """
    v1, v2 = operands(None, x1, x2)
    if v1.ndim != 1:
        fail(ValueError, f"x1 must be 1-dimensional, got shape {tuple(v1.shape)}")
    side = boundary.choice(side, ("left", "right"), "side")
    order = None
    if sorter is not None:
        order = boundary.array(sorter, "sorter")
        if order.dtype not in dt.INTEGER:
            fail(TypeError, f"sorter must have an integer dtype, got {order.dtype}")
        if order.shape != v1.shape:
            fail(ValueError, f"sorter must have the shape of x1 {tuple(v1.shape)}, got {tuple(order.shape)}")
        if not isinstance(order, Tracer) and order.size:
            low, high = index_range(order)
            if low < 0 or high >= order.size:
                fail(IndexError, f"sorter holds index {low if low < 0 else high}, out of range for x1 "
                       f"of length {order.size}")  # fmt: skip
    return wrap(_searchsorted(v1, v2, order, side))


@functools.partial(kernel, static_argnames="side")
def _searchsorted(x1: Any, x2: Any, sorter: Any, side: str) -> Any:
    check_real(x1.dtype, "x1")
    check_real(x2.dtype, "x2")
    dtype = promote_pair(x1, x2)
    if sorter is not None:
        x1 = jnp.take(x1, sorter, mode="clip")
    return jnp.searchsorted(x1.astype(dtype), x2.astype(dtype), side=side).astype(dt.default_int())


# --- where ----------------------------------------------------------------------------------


@api
def where(
    condition: ArrayLike, x1: ArrayLike | int | float | complex | bool, x2: ArrayLike | int | float | complex | bool, /
) -> Array:
    """Elements of ``x1`` where ``condition`` is True, of ``x2`` elsewhere (broadcast together).

    ``condition`` must be boolean. The result has the promoted dtype of ``x1`` and ``x2``; one of
    them may be a Python scalar, which takes the other's dtype under the scalar rules.
    """
    cond = condition._value if type(condition) is Array else boundary.array(condition, "condition")
    if type(x1) is Array and type(x2) is Array:
        return wrap(_where(cond, x1._value, x2._value))
    if type(x1) in boundary.PY_SCALARS and type(x2) in boundary.PY_SCALARS:
        fail(TypeError, f"at least one of x1 and x2 must be an array, got {describe(x1)} and {describe(x2)}")
    return wrap(_where(cond, *operands(None, x1, x2)))


@kernel
def _where(condition: Any, x1: Any, x2: Any) -> Any:
    if condition.dtype != dt.bool:
        fail(TypeError, f"condition must have a boolean dtype, got {condition.dtype} (compare it, e.g. x != 0)")
    dtype = promote_pair(x1, x2)
    shapes = (condition.shape, x1.shape, x2.shape)
    try:
        shape = jnp.broadcast_shapes(*shapes)
    except ValueError:
        fail(ValueError, f"condition, x1 and x2 cannot be broadcast together: shapes {shapes}")
    return lax.select(
        jnp.broadcast_to(condition, shape),
        jnp.broadcast_to(x1, shape).astype(dtype),
        jnp.broadcast_to(x2, shape).astype(dtype),
    )
