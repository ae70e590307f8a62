"""Linear algebra functions of the main namespace (the standard's "Linear Algebra Functions").

``xp.linalg.matmul``, ``matrix_transpose``, ``tensordot`` and ``vecdot`` are these same
functions. Operands must be numeric (``bool`` is rejected, as in the standard's categories);
the result has the promoted dtype, and integer products wrap around like integer arithmetic.

Products are computed at full precision (float32 products as float32, not through the
reduced-precision passes some accelerators use by default), unless the user has set JAX's
``jax_default_matmul_precision`` (``jax.default_matmul_precision("bfloat16")``, ...): then they
follow it (xp/_precision.py, docs/jax.md).

``matrix_transpose`` of an xp array is a view, like ``permute_dims``: writing into the result
writes into ``x``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _resharding as resharding
from xp import _views as views
from xp._array import Array, wrap
from xp._errors import AxisError, describe, fail
from xp._precision import full_precision_kernel
from xp._routing import api
from xp._typing import ArrayLike


def numeric_pair(x1: Any, x2: Any) -> np.dtype:
    """The promoted dtype of two numeric operands (a trace-time check in the kernels)."""
    for value, name in ((x1, "x1"), (x2, "x2")):
        if value.dtype not in dt.NUMERIC:
            fail(TypeError, f"{name} must have a numeric dtype, got {value.dtype}")
    try:
        return dt.promote(x1.dtype, x2.dtype)
    except dt.PromotionError as e:
        fail(TypeError, f"x1 and x2: {e}")


def shapes_of(x1: Any, x2: Any) -> str:
    return f"shapes {tuple(x1.shape)} and {tuple(x2.shape)}"


# --- matmul ---------------------------------------------------------------------------------


@api
def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix product, with the standard's rules for 1-d operands and batch broadcasting.

    A 1-d ``x1`` is a row vector and a 1-d ``x2`` a column vector, and the added axis is
    removed from the result; the batch axes (all but the last two) broadcast.
    """
    return wrap(_matmul(boundary.array(x1, "x1"), boundary.array(x2, "x2")))


@full_precision_kernel
def _matmul(x1: Any, x2: Any) -> Any:
    dtype = numeric_pair(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        fail(ValueError, f"x1 and x2 must have at least one dimension, got {shapes_of(x1, x2)}")
    inner1 = x1.shape[-1]
    inner2 = x2.shape[-2] if x2.ndim > 1 else x2.shape[0]
    if inner1 != inner2:
        fail(ValueError, f"the last axis of x1 ({inner1}) must have the size of the "
               f"{'second-to-last' if x2.ndim > 1 else 'only'} axis of x2 ({inner2}): {shapes_of(x1, x2)}")  # fmt: skip
    try:
        jnp.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        fail(ValueError, f"the batch axes of x1 and x2 cannot be broadcast together: {shapes_of(x1, x2)}")
    placement = resharding.product_sharding(x1, x2)  # None unless sharded over Explicit mesh axes
    x1, x2 = x1.astype(dtype), x2.astype(dtype)
    if placement is None:
        plain = functools.partial(jnp.matmul, preferred_element_type=dtype)
        return _on_each_platform(plain, wide_integer_matmul, x1, x2)
    return jnp.matmul(x1, x2, preferred_element_type=dtype, out_sharding=placement)


# --- 64-bit integer products on a TPU ------------------------------------------------------

WIDE_INTEGERS = frozenset({np.dtype(np.int64), np.dtype(np.uint64)})

PRODUCT_CHUNK = 1 << 22
"""How many products :func:`wide_integer_matmul` forms at once by default (32 MB of 64-bit integers)."""


def _on_each_platform(plain: Callable[[Any, Any], Any], on_tpu: Callable[[Any, Any], Any], x1: Any, x2: Any) -> Any:
    """``plain(x1, x2)``; for 64-bit integers, ``on_tpu(x1, x2)`` (:func:`wide_integer_matmul`'s
    formulation) where the program runs on a TPU (chosen when it is lowered)."""
    if x1.dtype not in WIDE_INTEGERS:
        return plain(x1, x2)
    return lax.platform_dependent(x1, x2, tpu=on_tpu, default=plain)


def wide_integer_matmul(x1: Any, x2: Any, products: int = PRODUCT_CHUNK) -> Any:
    """``matmul`` of 64-bit integers as sums of element-wise products, which XLA:TPU computes
    exactly (its matrix unit has no 64-bit integers, and XLA:TPU does not lower their ``dot``:
    "While rewriting computation to not contain X64 element types ... not implemented"). Wraps
    around as the product does; the inner axis in chunks of at most ``products`` products at once."""
    row, column = x1.ndim == 1, x2.ndim == 1
    x1 = x1[None, :] if row else x1
    x2 = x2[:, None] if column else x2
    (n, k), m = x1.shape[-2:], x2.shape[-1]
    batch = jnp.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    total = jnp.zeros((*batch, n, m), x1.dtype)
    if k > 0:
        chunk = max(1, min(k, products // max(1, math.prod(batch) * n * m)))
        steps = -(-k // chunk)
        padding = steps * chunk - k  # (zeros, which add nothing)
        x1 = jnp.pad(x1, [(0, 0)] * (x1.ndim - 1) + [(0, padding)])
        x2 = jnp.pad(x2, [(0, 0)] * (x2.ndim - 2) + [(0, padding), (0, 0)])

        def add_chunk(i: Any, total: Any) -> Any:
            a = lax.dynamic_slice_in_dim(x1, i * chunk, chunk, axis=-1)
            b = lax.dynamic_slice_in_dim(x2, i * chunk, chunk, axis=-2)
            return total + jnp.sum(a[..., :, :, None] * b[..., None, :, :], axis=-2, dtype=total.dtype)

        total = add_chunk(0, total) if steps == 1 else lax.fori_loop(0, steps, add_chunk, total)
    if row:
        total = total[..., 0, :]
    return total[..., 0] if column else total


def wide_integer_tensordot(x1: Any, x2: Any, axes: tuple[Sequence[int], Sequence[int]]) -> Any:
    """``tensordot`` of 64-bit integers through :func:`wide_integer_matmul`: the contracted axes
    of ``x1`` moved last and those of ``x2`` first, each side flattened to a matrix."""
    first, second = tuple(axes[0]), tuple(axes[1])
    free1 = [a for a in range(x1.ndim) if a not in first]
    free2 = [a for a in range(x2.ndim) if a not in second]
    size = math.prod(x1.shape[a] for a in first)
    left = jnp.transpose(x1, (*free1, *first)).reshape(math.prod(x1.shape[a] for a in free1), size)
    right = jnp.transpose(x2, (*second, *free2)).reshape(size, math.prod(x2.shape[a] for a in free2))
    shape = tuple(x1.shape[a] for a in free1) + tuple(x2.shape[a] for a in free2)
    return wide_integer_matmul(left, right).reshape(shape)


# --- matrix_transpose -----------------------------------------------------------------------


@api
def matrix_transpose(x: ArrayLike, /) -> Array:
    """``x`` with its last two axes swapped (a view of ``x`` when ``x`` is an xp array)."""
    value = boundary.array(x, "x")
    if value.ndim < 2:
        fail(ValueError, f"x must have at least 2 dimensions, got shape {tuple(value.shape)}")
    return views.view_or_copy(x, value, views.MATRIX_TRANSPOSE)


# --- tensordot ------------------------------------------------------------------------------

_AXES_EXPECTED = "a non-negative int or a pair of sequences of axes (x1_axes, x2_axes)"


@api
def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Sum of products over the last ``axes`` axes of ``x1`` and the first ``axes`` of ``x2``,
    or over the pairs of axes ``axes = (x1_axes, x2_axes)``.

    The result's axes are the remaining axes of ``x1``, then those of ``x2``. Contracted axes
    must have equal sizes (they are not broadcast) and may not repeat. As in NumPy, a pair of
    ints ``(a1, a2)`` stands for ``((a1,), (a2,))``.
    """
    return wrap(_tensordot(boundary.array(x1, "x1"), boundary.array(x2, "x2"), _axes_argument(axes)))


def _axes_argument(axes: Any) -> int | tuple[tuple[int, ...], tuple[int, ...]]:
    """``axes`` of tensordot in a hashable form (checked against the arrays in the kernel)."""
    if type(axes) is int:
        if axes < 0:
            fail(ValueError, f"axes must be non-negative, got {axes}")
        return axes
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            fail(TypeError, f"axes must be {_AXES_EXPECTED}, got a sequence of length {len(axes)}")
        pair = []
        for i, part in enumerate(axes):
            param = f"axes[{i}]"
            if isinstance(part, (tuple, list)):
                pair.append(tuple(boundary.integer(a, f"{param}[{j}]") for j, a in enumerate(part)))
            elif isinstance(part, bool) or not hasattr(part, "__index__"):
                fail(TypeError, f"{param} must be a sequence of axes, got {describe(part)}")
            else:
                pair.append((boundary.integer(part, param),))
        return pair[0], pair[1]
    if isinstance(axes, bool) or not hasattr(axes, "__index__"):
        fail(TypeError, f"axes must be {_AXES_EXPECTED}, got {describe(axes)}")
    return boundary.non_negative(axes, "axes")


@functools.partial(full_precision_kernel, static_argnames="axes")
def _tensordot(x1: Any, x2: Any, axes: int | tuple[tuple[int, ...], tuple[int, ...]]) -> Any:
    dtype = numeric_pair(x1, x2)
    if isinstance(axes, int):
        if axes > x1.ndim or axes > x2.ndim:
            fail(ValueError, f"axes={axes} exceeds the dimensions of x1 ({x1.ndim}) or x2 ({x2.ndim})")
        first, second = tuple(range(x1.ndim - axes, x1.ndim)), tuple(range(axes))
    else:
        first = tuple(boundary.axis(a, x1.ndim, "axes[0]") for a in axes[0])
        second = tuple(boundary.axis(a, x2.ndim, "axes[1]") for a in axes[1])
        for part, name in ((first, "axes[0]"), (second, "axes[1]")):
            if len(set(part)) != len(part):
                fail(ValueError, f"{name} has repeated axes: {part}")
        if len(first) != len(second):
            fail(ValueError, f"axes must name as many axes of x1 as of x2, got {len(first)} and {len(second)}")
    for a1, a2 in zip(first, second, strict=True):
        if x1.shape[a1] != x2.shape[a2]:
            fail(ValueError, f"axis {a1} of x1 (size {x1.shape[a1]}) and axis {a2} of x2 "
                   f"(size {x2.shape[a2]}) must have the same size: {shapes_of(x1, x2)}")  # fmt: skip
    plain = functools.partial(jnp.tensordot, axes=(first, second), preferred_element_type=dtype)
    on_tpu = functools.partial(wide_integer_tensordot, axes=(first, second))
    return _on_each_platform(plain, on_tpu, x1.astype(dtype), x2.astype(dtype))


# --- vecdot ---------------------------------------------------------------------------------


def vector_axis(axis: int, x1: Any, x2: Any) -> int:
    """The negative axis of ``x1`` and ``x2`` holding vectors (for vecdot and cross; trace time).

    The standard counts ``axis`` from the end, in ``[-min(x1.ndim, x2.ndim), -1]``, since the
    vector axis is never broadcast. A non-negative axis is taken only when both arrays have
    the same number of dimensions (where it is unambiguous). The other axes must broadcast;
    the caller checks the sizes along the vector axis.
    """
    low = min(x1.ndim, x2.ndim)
    if low == 0:
        fail(ValueError, f"x1 and x2 must have at least one dimension, got {shapes_of(x1, x2)}")
    if 0 <= axis < x1.ndim and x1.ndim == x2.ndim:
        axis -= x1.ndim
    elif 0 <= axis < low:
        fail(AxisError, f"axis={axis} must be negative (counted from the last axis) when x1 and x2 have "
               f"different numbers of dimensions: {shapes_of(x1, x2)}")  # fmt: skip
    elif not -low <= axis <= -1:
        fail(AxisError, f"axis={axis} is out of bounds: it must be in [-{low}, -1] for {shapes_of(x1, x2)} "
               f"(the vector axis is not broadcast)")  # fmt: skip
    try:
        jnp.broadcast_shapes(_without(x1.shape, axis), _without(x2.shape, axis))
    except ValueError:
        fail(ValueError, f"x1 and x2 cannot be broadcast together (apart from axis {axis}): {shapes_of(x1, x2)}")
    return axis


def _without(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return shape[:axis] + shape[axis:][1:]


@api
def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Dot product ``sum(conj(x1) * x2)`` over ``axis``, broadcasting the other axes.

    ``axis`` counts from the end (see the standard); the vector axis must have the same size
    in both arrays.
    """
    return wrap(_vecdot(boundary.array(x1, "x1"), boundary.array(x2, "x2"), boundary.integer(axis, "axis")))


@functools.partial(full_precision_kernel, static_argnames="axis")
def _vecdot(x1: Any, x2: Any, axis: int) -> Any:
    dtype = numeric_pair(x1, x2)
    axis = vector_axis(axis, x1, x2)
    if x1.shape[axis] != x2.shape[axis]:
        fail(ValueError, f"x1 and x2 must have the same size along axis {axis}: {shapes_of(x1, x2)}")
    x1, x2 = x1.astype(dtype), x2.astype(dtype)
    if dtype.kind == "c":
        x1 = jnp.conj(x1)
    return jnp.sum(x1 * x2, axis=axis, dtype=dtype)
