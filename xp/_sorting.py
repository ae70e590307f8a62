"""Sorting functions (the standard's "Sorting Functions" chapter).

The order is XLA's total order on real values: ``-0.0`` and ``0.0`` compare equal (so a stable
sort keeps their relative order) and NaNs are greater than every number, so they come last in
an ascending sort and first in a descending one. ``xp.searchsorted`` uses the same order.

A descending sort is the mirror image of an ascending sort of the reversed array, so with
``stable=True`` equal elements keep their relative order in both directions (NumPy's
``flip(sort(flip(x)))`` idiom); the two reversals are free in XLA. ``stable=False`` lets XLA
pick an unstable sort, which may be faster on accelerators.
"""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._jit import kernel
from xp._routing import api
from xp._searching import check_real
from xp._typing import ArrayLike


@api
def argsort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """The indices that sort ``x`` along ``axis``, in the default index dtype (see the module)."""
    if type(x) is Array and type(axis) is int and axis == -1 and descending is False and stable is True:
        return wrap(_argsort_last(x._value))
    value = boundary.array(x, "x")
    return wrap(
        _argsort(
            value,
            boundary.axis(axis, value.ndim),
            boundary.boolean(descending, "descending"),
            boundary.boolean(stable, "stable"),
        )
    )


@api
def sort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """A copy of ``x`` sorted along ``axis`` (see the module for NaNs and signed zeros)."""
    if type(x) is Array and type(axis) is int and axis == -1 and descending is False and stable is True:
        return wrap(_sort_last(x._value))
    value = boundary.array(x, "x")
    return wrap(
        _sort(
            value,
            boundary.axis(axis, value.ndim),
            boundary.boolean(descending, "descending"),
            boundary.boolean(stable, "stable"),
        )
    )


@functools.partial(kernel, static_argnums=(1, 2, 3))  # axis, descending, stable: positional, the fastest dispatch
def _sort(x: Any, axis: int, descending: bool, stable: bool) -> Any:
    check_real(x.dtype)
    if not descending:
        return lax.sort(x, dimension=axis, is_stable=stable)
    return jnp.flip(lax.sort(jnp.flip(x, axis), dimension=axis, is_stable=stable), axis)


# The kernels of the default calls (the last axis, ascending, stable): the array alone, no
# static arguments to match, no boundary work (as the reductions' default calls:
# xp/_statistical.py). A 0-d array has no last axis: the AxisError comes from tracing it.
@kernel
def _sort_last(x: Any) -> Any:
    return _sort(x, boundary.axis(-1, x.ndim), False, True)


@kernel
def _argsort_last(x: Any) -> Any:
    return _argsort(x, boundary.axis(-1, x.ndim), False, True)


@functools.partial(kernel, static_argnums=(1, 2, 3))  # axis, descending, stable: positional, the fastest dispatch
def _argsort(x: Any, axis: int, descending: bool, stable: bool) -> Any:
    check_real(x.dtype)
    index_dtype = dt.default_int()
    positions = lax.broadcasted_iota(index_dtype, x.shape, axis)
    if not descending:
        return lax.sort((x, positions), dimension=axis, num_keys=1, is_stable=stable)[1]
    # positions in the reversed array j are positions n - 1 - j in x
    order = lax.sort((jnp.flip(x, axis), positions), dimension=axis, num_keys=1, is_stable=stable)[1]
    return jnp.flip(x.shape[axis] - 1 - order, axis).astype(index_dtype)
