"""Utility functions (the standard's "Utility Functions" chapter): ``all``, ``any``, ``diff``.

``all`` and ``any`` take any dtype and test each element's truth value: non-zero is True, so
NaN and infinities are True and a complex element is True when either component is non-zero.
Over zero elements ``all`` is True and ``any`` is False.

``diff`` takes numeric input (``bool`` is rejected, as by ``subtract``). ``prepend`` and
``append`` are arrays with the shape of ``x`` except along ``axis``, or Python scalars and 0-d
arrays, which are broadcast to one element along ``axis`` (as in NumPy). Their dtypes are
promoted with that of ``x`` by the standard's rules (a Python scalar takes the dtype of ``x``);
the result has the promoted dtype. ``n=0`` returns ``x`` with ``prepend`` and ``append``
joined on; when ``n`` is at least the length of the joined axis, that axis is empty.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._typing import ArrayLike


@api
def all(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Whether every element of ``x`` over ``axis`` is true (non-zero); True over zero elements."""
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_all(value, axes, keep))


@api
def any(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Whether some element of ``x`` over ``axis`` is true (non-zero); False over zero elements."""
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_any(value, axes, keep))


def truth(x: Any) -> Any:
    """Each element's truth value, the one test of every function that reads values as booleans
    (``all``, ``any``, ``count_nonzero``, ``nonzero``, the ``logical_*`` functions, ``astype`` to
    ``bool``, ``vector_norm(ord=0)``, the sparse reductions and conversions): non-zero is True.

    Floating and complex values are tested on their bits, not with ``x != 0``: XLA runs with
    subnormal numbers flushed to zero on CPU and GPU, so ``x != 0`` is False for them, where NumPy
    and Python (``bool(float(x))``) say True. Arithmetic and comparisons still flush them.
    """
    if x.dtype == dt.bool:
        return x
    if x.dtype.kind in "fc":
        return _magnitude_bits(x) != 0
    return x != 0


def _magnitude_bits(x: Any) -> Any:
    """Unsigned integers, zero exactly where the floating or complex ``x`` is zero (of either
    sign): the bits of each value without its sign bit, of both parts OR-ed for complex values."""
    if x.dtype.kind == "c":
        return _magnitude_bits(lax.real(x)) | _magnitude_bits(lax.imag(x))
    bits = lax.bitcast_convert_type(x, _BITS[x.dtype])
    return bits & np.asarray(np.iinfo(bits.dtype).max >> 1, bits.dtype)


_BITS: dict[np.dtype, np.dtype] = {dt.float32: dt.uint32, dt.float64: dt.uint64}


# all and any of floating and complex values reduce the magnitude bits (min and max) and compare
# the reduced integers with 0, not each element: "bits without the sign bit != 0" is a floating
# comparison with 0.0 in disguise, which a compiler may make one (LLVM does), and the CPU then
# reads subnormals as zero (measured: xp.any of a complex64 subnormal was False with XLA's CPU loop
# emitters, --xla_cpu_use_fusion_emitters=false)
@functools.partial(kernel, static_argnames=("axes", "keepdims"))
def _all(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if x.dtype.kind in "fc":
        bits = _magnitude_bits(x)  # (over no elements: the largest integer, so True)
        return (
            jnp.min(bits, axis=axes, keepdims=keepdims, initial=np.asarray(np.iinfo(bits.dtype).max, bits.dtype)) != 0
        )
    return jnp.all(truth(x), axis=axes, keepdims=keepdims)


@functools.partial(kernel, static_argnames=("axes", "keepdims"))
def _any(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if x.dtype.kind in "fc":  # (over no elements: 0, so False)
        return jnp.max(_magnitude_bits(x), axis=axes, keepdims=keepdims, initial=0) != 0
    return jnp.any(truth(x), axis=axes, keepdims=keepdims)


# --- diff -----------------------------------------------------------------------------------


@api
def diff(
    x: ArrayLike, /, *, axis: int = -1, n: int = 1, prepend: ArrayLike | None = None, append: ArrayLike | None = None
) -> Array:
    """The ``n``-th forward difference ``out[i] = x[i+1] - x[i]`` along ``axis``, applied ``n`` times.

    ``prepend`` and ``append`` are joined to ``x`` along ``axis`` first; the result's axis has
    ``M + N1 + N2 - n`` elements (none when that is negative).
    """
    value = boundary.array(x, "x")
    position = boundary.axis(axis, value.ndim)
    count = boundary.non_negative(n, "n")
    before = _edge(prepend, value, "prepend")
    after = _edge(append, value, "append")
    return wrap(_diff(value, before, after, position, count))


def _edge(edge: Any, value: Any, param: str) -> Any:
    """``prepend``/``append`` as a jax array (a Python scalar takes the dtype of ``x``), or None."""
    if edge is None:
        return None
    if type(edge) in boundary.PY_SCALARS:
        dtype = dt.scalar_dtype(value.dtype, type(edge))
        if isinstance(value, Tracer):
            return boundary.scalar_constant(edge, dtype, param)
        return boundary.scalar_array(edge, dtype, param)
    return boundary.array(edge, param)


@functools.partial(kernel, static_argnames=("axis", "n"))
def _diff(x: Any, prepend: Any, append: Any, axis: int, n: int) -> Any:
    if x.dtype not in dt.NUMERIC:
        fail(TypeError, f"x must have a numeric dtype, got {x.dtype}")
    parts = [x]
    dtypes = [x.dtype]
    if prepend is not None:
        parts.insert(0, _edge_shape(prepend, x, axis, "prepend"))
        dtypes.append(prepend.dtype)
    if append is not None:
        parts.append(_edge_shape(append, x, axis, "append"))
        dtypes.append(append.dtype)
    try:
        dtype = dt.promote_all(dtypes)
    except dt.PromotionError as e:
        fail(TypeError, f"x, prepend and append: {e}")
    a = parts[0].astype(dtype) if len(parts) == 1 else lax.concatenate([p.astype(dtype) for p in parts], axis)
    for _ in range(n):
        length = a.shape[axis]
        if length == 0:
            break
        a = lax.slice_in_dim(a, 1, length, axis=axis) - lax.slice_in_dim(a, 0, length - 1, axis=axis)
    return a


def _edge_shape(edge: Any, x: Any, axis: int, param: str) -> Any:
    """``edge`` with the shape of ``x`` except along ``axis`` (a 0-d edge is broadcast to one element)."""
    if edge.ndim == 0:
        return jnp.broadcast_to(edge, tuple(1 if i == axis else s for i, s in enumerate(x.shape)))
    if edge.ndim != x.ndim or builtins.any(
        e != s for i, (e, s) in enumerate(zip(edge.shape, x.shape, strict=True)) if i != axis
    ):
        fail(ValueError, f"{param} must have the shape of x except along axis {axis} (or be a scalar), "
               f"got shape {tuple(edge.shape)} for x of shape {tuple(x.shape)}")  # fmt: skip
    return edge
