"""Set functions (the standard's "Set Functions" chapter).

Uniqueness is value equality (``xp.equal``): ``-0.0`` and ``0.0`` are one value (represented by
whichever comes first in ``x``), and every NaN, and every complex value with a NaN component,
is distinct from every other value, with a count of one. Unique values come in ascending order
(the order of ``xp.sort``: NaNs last); ``indices`` are first occurrences.

The ``unique_*`` functions have data-dependent result shapes and work eagerly. One kernel,
compiled once per input shape and dtype, sorts ``x`` and computes every result padded to
``x.size`` together with the number of unique values; the padded results are read back to the
host, cut to that number and put back on ``x``'s device (``inverse_indices`` has ``x``'s shape
and stays on the device). Cutting on the host avoids compiling a kernel for every distinct
number of unique values, which would cost far more than the copies. Under a JAX trace they
raise :class:`xp._errors.DataDependentShapeError`.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.core
import jax.numpy as jnp
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._elementwise import operands
from xp._errors import DataDependentShapeError, describe, fail
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._searching import promote_pair, put_like
from xp._typing import ArrayLike


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


# --- isin -----------------------------------------------------------------------------------


@api
def isin(x1: ArrayLike | int, x2: ArrayLike | int, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` equals some element of ``x2`` (is not in it, if ``invert``).

    The result is boolean, of ``x1``'s shape (0-d for a scalar ``x1``). Elements are compared
    in the promoted dtype, by value equality: NaN is in nothing, ``-0.0`` is in ``[0.0]``. One of
    ``x1`` and ``x2`` may be a Python scalar, which takes the other's dtype under the scalar rules.
    """
    if type(x1) in boundary.PY_SCALARS and type(x2) in boundary.PY_SCALARS:
        fail(TypeError, f"at least one of x1 and x2 must be an array, got {describe(x1)} and {describe(x2)}")
    v1, v2 = operands(None, x1, x2)
    return wrap(_isin(v1, v2, boundary.boolean(invert, "invert")))


_COMPARE_ALL_LIMIT = 1 << 16
"""Up to this many element pairs, ``isin`` compares every pair; beyond, it binary-searches."""


@functools.partial(kernel, static_argnames="invert")
def _isin(x1: Any, x2: Any, invert: bool) -> Any:
    dtype = promote_pair(x1, x2)
    elements = x1.astype(dtype).reshape(-1)
    tests = x2.astype(dtype).reshape(-1)
    if boundary.symbolic(elements.size) or boundary.symbolic(tests.size):
        # sizes jax.export leaves symbolic: every pair, as jax.numpy's isin always (a binary search
        # needs the length of what it searches known)
        found = jnp.any(elements[:, None] == tests[None, :], axis=1)
    elif tests.size == 0:
        found = jnp.zeros(elements.shape, dt.bool)
    elif tests.size <= 16 or elements.size * tests.size <= _COMPARE_ALL_LIMIT:
        found = jnp.any(elements[:, None] == tests[None, :], axis=1)
    else:
        ordered = lax.sort(tests)
        position = jnp.searchsorted(ordered, elements)
        found = jnp.take(ordered, position, mode="clip") == elements
    found = found.reshape(x1.shape)
    return ~found if invert else found


# --- unique ---------------------------------------------------------------------------------


@api
def unique_all(x: ArrayLike, /) -> UniqueAllResult:
    """The unique values of ``x`` (flattened), their first indices, the inverse and the counts.

    Eager only (see the module); ``inverse_indices`` has ``x``'s shape.
    """
    value = _eager(x, "unique_all")
    values, indices, counts, inverse = _unique(value, indices=True, counts=True, inverse=True)
    return UniqueAllResult(values, indices, inverse, counts)


@api
def unique_counts(x: ArrayLike, /) -> UniqueCountsResult:
    """The unique values of ``x`` (flattened) and how many times each occurs. Eager only."""
    value = _eager(x, "unique_counts")
    values, _, counts, _ = _unique(value, indices=False, counts=True, inverse=False)
    return UniqueCountsResult(values, counts)


@api
def unique_inverse(x: ArrayLike, /) -> UniqueInverseResult:
    """The unique values of ``x`` (flattened) and the indices into them that rebuild ``x``.

    Eager only; ``inverse_indices`` has ``x``'s shape.
    """
    value = _eager(x, "unique_inverse")
    values, _, _, inverse = _unique(value, indices=False, counts=False, inverse=True)
    return UniqueInverseResult(values, inverse)


@api
def unique_values(x: ArrayLike, /) -> Array:
    """The unique values of ``x`` (flattened), in ascending order. Eager only."""
    value = _eager(x, "unique_values")
    return _unique(value, indices=False, counts=False, inverse=False)[0]


def _eager(x: Any, name: str) -> Any:
    value = boundary.array(x, "x")
    if isinstance(value, Tracer):
        fail(DataDependentShapeError, "the number of unique values depends on the values of x, so the "
               "result's shape cannot be known while tracing (jax.jit, jax.vmap); call "
               f"xp.{name} outside the transformation (jax.numpy.unique with size= is a non-standard "
               "alternative with a padded, fixed-size result)")  # fmt: skip
    return value


def _unique(value: Any, indices: bool, counts: bool, inverse: bool) -> tuple[Any, Any, Any, Any]:
    """(values, indices, counts, inverse) as Arrays, None where not asked for."""
    number, padded, inverse_value = _unique_kernel(value, indices, counts, inverse)
    host = jax.device_get((number, padded))
    n = int(host[0])
    cut = put_like([p[:n] for p in host[1]], value)
    results: list[Any] = [wrap(cut.pop(0))]
    results.append(wrap(cut.pop(0)) if indices else None)
    results.append(wrap(cut.pop(0)) if counts else None)
    results.append(wrap(inverse_value) if inverse else None)
    return results[0], results[1], results[2], results[3]


@functools.partial(kernel, static_argnames=("indices", "counts", "inverse"))
def _unique_kernel(x: Any, indices: bool, counts: bool, inverse: bool) -> tuple[Any, list[Any], Any]:
    """The number of unique values; values, indices, counts padded to ``x.size``; the inverse."""
    index_dtype = dt.default_int()
    size = x.size
    flat = x.reshape(-1)
    if size == 0:
        empty = jnp.zeros((0,), index_dtype)
        padded = [flat] + [empty] * (indices + counts)
        return jnp.zeros((), index_dtype), padded, jnp.zeros(x.shape, index_dtype) if inverse else None
    positions = lax.iota(index_dtype, size)
    keys: tuple[Any, ...] = (flat,)
    if jnp.iscomplexobj(flat):
        # lax.sort orders complex numbers by (real, imag), which would put -inf+nanj first;
        # the standard's order puts every value with a NaN component last
        has_nan = jnp.isnan(flat.real) | jnp.isnan(flat.imag)
        keys = (has_nan.astype(jnp.int8), jnp.where(has_nan, 0, flat.real), jnp.where(has_nan, 0, flat.imag))
    order = lax.sort((*keys, positions), num_keys=len(keys), is_stable=True)[-1]
    ordered = flat[order]  # the input's own values (the sort's copies may canonicalize NaNs)
    # a group starts where a value differs from its predecessor: NaNs differ from everything
    starts_group = jnp.concatenate([jnp.ones((1,), dt.bool), ordered[1:] != ordered[:-1]])
    group = jnp.cumsum(starts_group, dtype=index_dtype) - 1
    number = group[-1] + 1
    # starts[k]: the sorted position where group k begins; `size` past the last group
    starts = jnp.full((size,), size, index_dtype).at[jnp.where(starts_group, group, size)].set(positions, mode="drop")
    first = jnp.minimum(starts, size - 1)
    padded = [ordered[first]]
    if indices:
        padded.append(order[first])  # the sort is stable: a group's first element occurs first
    if counts:
        padded.append(jnp.append(starts[1:], size) - starts)
    inverse_value = None
    if inverse:
        inverse_value = jnp.zeros((size,), index_dtype).at[order].set(group).reshape(x.shape)
    return number, padded, inverse_value
