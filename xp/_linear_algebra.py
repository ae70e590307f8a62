"""Linear algebra functions of the main namespace (the standard's "Linear Algebra Functions").

Products use JAX's default matmul precision (``jax.default_matmul_precision`` changes it),
which on some accelerators computes float32 products with reduced-precision inputs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from xp import _boundary as b
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._typing import ArrayLike

kernel = functools.partial(jax.jit, inline=True)


def _numeric_pair(x1: Any, x2: Any) -> np.dtype:
    """The promoted dtype of two numeric operands (trace-time check)."""
    for value, name in ((x1, "x1"), (x2, "x2")):
        if value.dtype not in dt.NUMERIC:
            b.fail(TypeError, f"{name} must have a numeric dtype, got {value.dtype}")
    try:
        return dt.promote(x1.dtype, x2.dtype)
    except dt.PromotionError as e:
        b.fail(TypeError, f"x1 and x2: {e}")


@b.api
def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix product, with the standard's rules for 1-d operands and batch broadcasting."""
    return wrap(_matmul(b.array(x1, "x1"), b.array(x2, "x2")))


@kernel
def _matmul(x1: Any, x2: Any) -> Any:
    dtype = _numeric_pair(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        b.fail(ValueError, f"x1 and x2 must have at least one dimension, got shapes {x1.shape} and {x2.shape}")
    inner1 = x1.shape[-1]
    inner2 = x2.shape[-2] if x2.ndim > 1 else x2.shape[0]
    if inner1 != inner2:
        b.fail(ValueError, f"the last axis of x1 ({inner1}) must match the "
               f"{'second-to-last' if x2.ndim > 1 else 'only'} axis of x2 ({inner2}): shapes {x1.shape} and {x2.shape}")  # fmt: skip
    try:
        np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        b.fail(ValueError, f"the batch dimensions of x1 and x2 cannot be broadcast: shapes {x1.shape} and {x2.shape}")
    return jnp.matmul(x1.astype(dtype), x2.astype(dtype), preferred_element_type=dtype)


@b.api
def matrix_transpose(x: ArrayLike, /) -> Array:
    """``x`` with its last two axes swapped."""
    value = b.array(x, "x")
    if value.ndim < 2:
        b.fail(ValueError, f"x must have at least 2 dimensions, got shape {tuple(value.shape)}")
    return wrap(_matrix_transpose(value))


@kernel
def _matrix_transpose(x: Any) -> Any:
    return jnp.swapaxes(x, -1, -2)


@b.api
def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Sum of products over the last ``axes`` axes of ``x1`` and first of ``x2`` (or the given pairs)."""
    v1, v2 = b.array(x1, "x1"), b.array(x2, "x2")
    if isinstance(axes, tuple | list) and len(axes) == 2 and all(isinstance(a, Sequence) for a in axes):
        first = tuple(b.axis(a, v1.ndim, "axes[0]") for a in axes[0])
        second = tuple(b.axis(a, v2.ndim, "axes[1]") for a in axes[1])
        if len(first) != len(second):
            b.fail(ValueError, f"axes must pair as many axes of x1 as of x2, got {axes}")
    else:
        count = b.non_negative(axes, "axes")
        if count > v1.ndim or count > v2.ndim:
            b.fail(ValueError, f"axes={count} exceeds the dimensions of x1 ({v1.ndim}) or x2 ({v2.ndim})")
        first = tuple(range(v1.ndim - count, v1.ndim))
        second = tuple(range(count))
    for a1, a2 in zip(first, second, strict=True):
        if v1.shape[a1] != v2.shape[a2]:
            b.fail(ValueError, f"axis {a1} of x1 (size {v1.shape[a1]}) and axis {a2} of x2 "
                   f"(size {v2.shape[a2]}) must have the same size")  # fmt: skip
    return wrap(_tensordot(v1, v2, axes=(first, second)))


@functools.partial(kernel, static_argnames="axes")
def _tensordot(x1: Any, x2: Any, axes: tuple[tuple[int, ...], tuple[int, ...]]) -> Any:
    dtype = _numeric_pair(x1, x2)
    return jnp.tensordot(x1.astype(dtype), x2.astype(dtype), axes=axes, preferred_element_type=dtype)


@b.api
def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Dot product ``sum(conj(x1) * x2)`` over ``axis``, broadcasting the other axes."""
    v1, v2 = b.array(x1, "x1"), b.array(x2, "x2")
    try:
        shape = np.broadcast_shapes(v1.shape, v2.shape)
    except ValueError:
        b.fail(ValueError, f"x1 and x2 cannot be broadcast together: shapes {tuple(v1.shape)} and {tuple(v2.shape)}")
    index = b.integer(axis, "axis")
    if not -len(shape) <= index < len(shape) or index >= 0:
        # the standard counts axis against the broadcast shape; a non-negative axis is
        # ambiguous when the ranks differ, so only negative axes are accepted then
        if not (v1.ndim == v2.ndim and 0 <= index < len(shape)):
            b.fail(b.AxisError, f"axis={index} is out of bounds for the broadcast shape {shape}")
        index -= len(shape)
    if v1.shape[index] != v2.shape[index] if -v1.ndim <= index and -v2.ndim <= index else True:
        b.fail(ValueError, f"x1 and x2 must have the same size along axis {index}: shapes "
               f"{tuple(v1.shape)} and {tuple(v2.shape)}")  # fmt: skip
    return wrap(_vecdot(v1, v2, axis=index))


@functools.partial(kernel, static_argnames="axis")
def _vecdot(x1: Any, x2: Any, axis: int) -> Any:
    dtype = _numeric_pair(x1, x2)
    x1, x2 = x1.astype(dtype), x2.astype(dtype)
    if dtype.kind == "c":
        x1 = jnp.conj(x1)
    return jnp.sum(x1 * x2, axis=axis, dtype=dtype)
