"""Statistical functions (the standard's "Statistical Functions" chapter).

Each function checks its arguments at the boundary and runs one jitted kernel whose static
arguments are the normalized axes, the flags and the requested dtype; the dtype rules below
run at trace time, so an eager call is one cached dispatch. The default call of a reduction
(every axis, no ``keepdims``, no ``dtype``, no ``correction``: ``xp.sum(x)``) of an xp array
runs a kernel of the array alone instead, which skips the boundary work and the matching of
static arguments, which were about half of what an eager ``xp.sum`` adds to its bare kernel's
dispatch (bench/RESULTS.md, "Eager calls at small shapes", the ``sum`` row).

Dtype rules (the standard's, plus xp's documented choices):

- ``sum``, ``prod``, ``cumulative_sum``, ``cumulative_prod`` take numeric input. With
  ``dtype=None`` a signed integer input accumulates in the default integer dtype (int64 with
  JAX's 64-bit mode, int32 without), an unsigned one in the unsigned integer dtype of the same
  width (uint64, or uint32 without 64-bit mode), and a floating input keeps its dtype. An
  explicit ``dtype`` is honoured: the input is cast to it before accumulating (a complex input
  with a real ``dtype`` is a TypeError: take ``real`` or ``abs`` first).
- ``max`` and ``min`` take real-valued input. A reduction over zero elements has no value and
  raises ValueError (shapes are static, so this holds under ``jax.jit`` too); when the result
  itself is empty there is nothing to compute and it is returned.
- ``mean`` takes floating-point input (real or complex); ``var`` and ``std`` take real
  floating-point input. Integer input is computed in the default real floating dtype, as xp's
  element-wise functions compute integers for floating-point functions, and the result has that
  dtype (what the standard requires of libraries that accept integers).
- Everything else (``bool`` input to the numeric functions, complex input to ``max``, ``min``,
  ``var``, ``std``) is rejected with a TypeError, like the element-wise functions.

Special cases: ``sum``/``prod`` of zero elements are 0 and 1; ``mean`` of zero elements is NaN
(NaN + NaN j for complex input); ``var``/``std`` are NaN when ``M - correction <= 0``; NaN
propagates through every reduction, and ``mean`` of complex input divides the real and
imaginary sums separately, so a NaN in one component stays in that component. Cumulative sums
and products are XLA prefix reductions: NaN and infinities behave as under successive
``add``/``multiply``, while rounding (and intermediate overflow) may follow a different order.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import kernel
from xp._routing import api
from xp._special_cases import pow as elementwise_pow
from xp._typing import ArrayLike, DTypeLike

# The kernels' static arguments, passed by position: jax.jit's C++ dispatch matches positional
# static arguments faster than keyword ones, by up to a tenth of an eager reduction's time
# (xp/_jit.py).
REDUCTION = (1, 2)  # axes, keepdims

_NO_CORRECTION = 0.0  # var's and std's default (the fast path knows it by identity: one test)


# --- dtype rules (trace time) ---------------------------------------------------------------


def accumulation_dtype(x_dtype: np.dtype, dtype: np.dtype | None) -> np.dtype:
    """The dtype ``sum``, ``prod`` and the cumulative functions accumulate in."""
    if x_dtype not in dt.NUMERIC:
        fail(TypeError, f"x must have a numeric dtype, got {x_dtype} (cast it with astype first)")
    if dtype is None:
        if x_dtype.kind == "i":
            return dt.default_int()
        if x_dtype.kind == "u":
            return dt.default_uint()
        return x_dtype
    if dtype not in dt.NUMERIC:
        fail(TypeError, f"dtype must be a numeric dtype, got {dtype}")
    if x_dtype.kind == "c" and dtype.kind != "c":
        fail(TypeError, f"dtype={dtype} cannot hold the complex values of x (take xp.real or xp.abs first)")
    return dtype


def floating_dtype(x_dtype: np.dtype, accepts: frozenset[np.dtype]) -> np.dtype:
    """The computation dtype of ``mean``/``var``/``std``: integers in the default float."""
    if x_dtype in accepts:
        return x_dtype
    if x_dtype in dt.INTEGER:
        return dt.default_float()
    fail(TypeError, f"x must have {dt.a_category(accepts)} (or integer) dtype, got {x_dtype}")


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[a] for a in axes)


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _divide(total: Any, count: Any) -> Any:
    """``total / count``; a complex total has its two components divided separately."""
    if total.dtype.kind == "c":
        real, imag = lax.real(total), lax.imag(total)
        n = _as_value(count, real.dtype)
        return lax.complex(real / n, imag / n)
    return total / _as_value(count, total.dtype)


def _as_value(count: Any, dtype: np.dtype) -> Any:
    """``count`` as an array of ``dtype``: a constant, or a value for a symbolic (exported) size."""
    return np.asarray(count, dtype) if isinstance(count, int) else jnp.asarray(count, dtype)


# --- boundary helpers -----------------------------------------------------------------------


def _cumulative_axis(value: Any, axis: Any) -> int:
    if value.ndim == 0:
        fail(ValueError, "x must have at least one dimension, got a 0-d array")
    if axis is None:
        if value.ndim > 1:
            fail(ValueError, f"axis is required when x has more than one dimension, got shape {tuple(value.shape)}")
        return 0
    return boundary.axis(axis, value.ndim)


def _correction(value: Any) -> float:
    if type(value) is float:  # the default, 0.0, and most given values
        return value
    c = boundary.real_scalar(value, "correction")
    try:
        return float(c)
    except OverflowError:
        fail(OverflowError, f"correction={c} is too large for a floating-point number")


# --- sum and prod ---------------------------------------------------------------------------


@api
def sum(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    dtype: DTypeLike | None = None,
    keepdims: bool = False,
) -> Array:
    """The sum of the elements of ``x`` over ``axis`` (all axes by default).

    Integer input accumulates in the default integer dtype (unsigned: the unsigned dtype of its
    width) unless ``dtype`` is given; floating input keeps its dtype. The empty sum is 0.
    """
    if type(x) is Array and axis is None and dtype is None and keepdims is False:
        return wrap(_sum_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_sum(value, axes, keep, boundary.optional_dtype(dtype)))


@functools.partial(kernel, static_argnums=(*REDUCTION, 3))  # ..., dtype
def _sum(x: Any, axes: tuple[int, ...], keepdims: bool, dtype: np.dtype | None) -> Any:
    want = accumulation_dtype(x.dtype, dtype)
    return jnp.sum(x.astype(want), axis=axes, keepdims=keepdims, dtype=want)


# The kernels of the default calls (see the module): the general kernel, inlined, over every axis.


@kernel
def _sum_whole(x: Any) -> Any:
    return _sum(x, _every_axis(x), False, None)


@kernel
def _prod_whole(x: Any) -> Any:
    return _prod(x, _every_axis(x), False, None)


@kernel
def _max_whole(x: Any) -> Any:
    return _max(x, _every_axis(x), False)


@kernel
def _min_whole(x: Any) -> Any:
    return _min(x, _every_axis(x), False)


@kernel
def _mean_whole(x: Any) -> Any:
    return _mean(x, _every_axis(x), False)


@kernel
def _var_whole(x: Any) -> Any:
    return _var(x, _every_axis(x), False, 0.0, False)


@kernel
def _std_whole(x: Any) -> Any:
    return _var(x, _every_axis(x), False, 0.0, True)


def _every_axis(x: Any) -> tuple[int, ...]:
    return boundary.axes(None, x.ndim)


# --- sums of powers, rescaled where they overflow or underflow ------------------------------


def real_power(x: Any, exponent: float) -> Any:
    """``x ** exponent`` of a real array by xp's ``pow`` (float32's correctly rounded on a TPU too,
    where XLA's is 5e-6 off: xp/_float32_pow.py)."""
    return elementwise_pow(x, jnp.full((), exponent, x.dtype))


def power_norm(
    operand: Any, axes: tuple[int, ...], keepdims: bool, ord: float, elements: Callable[[Any], Any] = lambda x: x
) -> Any:
    """``(sum |e|**ord)**(1/ord)`` over ``axes`` of the elements ``e = elements(operand)``, for
    ``ord > 0``, where the powers themselves overflow or underflow.

    Summed as they are, the powers of large elements overflow (the 2-norm of ``[1e20, 1e20]`` in
    float32 is inf, not 1.4e20) and those of small ones underflow, to zero on CPU, where XLA flushes
    subnormals (``[1e-20, 1e-20]`` gave 0 in float32, ``[1e-160, 1e-160]`` 0 in float64). Where a sum
    comes out infinite or small enough that lost powers may matter, the norm is computed again with
    the elements divided by their largest magnitude (held constant to differentiation: the value
    does not depend on it). ``linalg.vector_norm``, the Frobenius ``linalg.matrix_norm`` and
    ``std`` (``elements`` the deviations from the mean) take their sums of powers here. The
    elements are computed from ``operand`` in each sum, so that they fuse into it and nothing is
    materialized for the second one."""
    values = elements(operand)
    real = dt.REAL_OF[values.dtype]

    def powers_of(magnitude: Any) -> Any:
        return magnitude * magnitude if ord == 2 else real_power(magnitude, ord)

    def root(sums: Any) -> Any:
        return jnp.sqrt(sums) if ord == 2 else real_power(sums, 1 / ord)

    total = jnp.sum(powers_of(jnp.abs(values).astype(real)), axis=axes, keepdims=True)
    info = jnp.finfo(real)
    count = _as_value(math.prod(values.shape[a] for a in axes), real)  # (a symbolic size too)
    # a sum below this may have lost terms to underflow (each lost term is below the smallest
    # normal number); NaN compares False and stays NaN
    redo = jnp.isinf(total) | (total < float(info.tiny) / float(info.eps) * count)

    def rescaled(operand: Any) -> Any:
        magnitude = jnp.abs(elements(operand)).astype(real)
        largest = jnp.max(magnitude, axis=axes, keepdims=True, initial=0)
        scale = scale_of(largest)
        norm = scale * root(jnp.sum(powers_of(magnitude / scale), axis=axes, keepdims=True))
        return jnp.where(jnp.isinf(largest), jnp.inf, norm)  # an infinite element: an infinite norm

    def either(operand: Any, total: Any, redo: Any) -> Any:
        # the root takes a harmless 1 where the rescaled norm is chosen, so that its derivative
        # stays finite there
        return jnp.where(redo, rescaled(operand), root(jnp.where(redo, 1, total)))

    def on_cpu(operand: Any, total: Any, redo: Any) -> Any:
        # a conditional: the common case costs the one fused sum and a comparison, where computing
        # both and selecting would add a second pass over the elements to every call (about a
        # fifth more for a jitted norm of 1000 float32 elements)
        return lax.cond(jnp.any(redo), lambda: either(operand, total, redo), lambda: root(total))

    # (GPU and TPU conditionals read their predicate back to the host: there a second pass over
    # the elements costs less, and both are computed)
    result = lax.platform_dependent(operand, total, redo, cpu=on_cpu, default=either)
    return result if keepdims else jnp.squeeze(result, axis=axes)


def scale_of(largest: Any) -> Any:
    """What elements are divided by before their powers are summed (power_norm here, sparse std):
    the largest magnitude where it is finite and not 0, else 1, and at most the reciprocal of the
    smallest normal number (XLA turns a division by a broadcast value into a multiplication by its
    reciprocal, which past that is flushed to 0: the 2-norm of ``[3e38, 1e38]`` in float32 came out
    0); constant to differentiation, as the value of the norm does not depend on it."""
    ceiling = 1 / float(jnp.finfo(largest.dtype).tiny)
    return lax.stop_gradient(jnp.where((largest > 0) & jnp.isfinite(largest), jnp.minimum(largest, ceiling), 1))


@api
def prod(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    dtype: DTypeLike | None = None,
    keepdims: bool = False,
) -> Array:
    """The product of the elements of ``x`` over ``axis`` (all axes by default).

    Dtypes as for :func:`sum`. The empty product is 1.
    """
    if type(x) is Array and axis is None and dtype is None and keepdims is False:
        return wrap(_prod_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_prod(value, axes, keep, boundary.optional_dtype(dtype)))


@functools.partial(kernel, static_argnums=(*REDUCTION, 3))  # ..., dtype
def _prod(x: Any, axes: tuple[int, ...], keepdims: bool, dtype: np.dtype | None) -> Any:
    want = accumulation_dtype(x.dtype, dtype)
    return jnp.prod(x.astype(want), axis=axes, keepdims=keepdims, dtype=want)


# --- cumulative sums and products -----------------------------------------------------------


@api
def cumulative_sum(
    x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None, include_initial: bool = False
) -> Array:
    """Cumulative sums of ``x`` along ``axis`` (optional only for 1-d ``x``; 0-d ``x`` is an error).

    Dtypes as for :func:`sum`. With ``include_initial`` the result starts with a 0 along
    ``axis``, which is then one longer.
    """
    value = boundary.array(x, "x")
    position = _cumulative_axis(value, axis)
    initial = boundary.boolean(include_initial, "include_initial")
    return wrap(_cumulative(value, position, boundary.optional_dtype(dtype), initial, False))  # product=False


@api
def cumulative_prod(
    x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None, include_initial: bool = False
) -> Array:
    """Cumulative products of ``x`` along ``axis`` (optional only for 1-d ``x``; 0-d ``x`` is an error).

    Dtypes as for :func:`sum`. With ``include_initial`` the result starts with a 1 along
    ``axis``, which is then one longer.
    """
    value = boundary.array(x, "x")
    position = _cumulative_axis(value, axis)
    initial = boundary.boolean(include_initial, "include_initial")
    return wrap(_cumulative(value, position, boundary.optional_dtype(dtype), initial, True))  # product=True


@functools.partial(kernel, static_argnames=("axis", "dtype", "initial", "product"))
def _cumulative(x: Any, axis: int, dtype: np.dtype | None, initial: bool, product: bool) -> Any:
    want = accumulation_dtype(x.dtype, dtype)
    x = x.astype(want)
    out = lax.cumprod(x, axis) if product else lax.cumsum(x, axis)
    if initial:
        shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
        out = lax.concatenate([jnp.full(shape, 1 if product else 0, want), out], axis)
    return out


# --- max and min ----------------------------------------------------------------------------


@api
def max(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The largest element of ``x`` over ``axis``; NaN propagates.

    ``x`` must be real-valued; a reduction over zero elements is a ValueError.
    """
    if type(x) is Array and axis is None and keepdims is False:
        return wrap(_max_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_max(value, axes, keep))


@api
def min(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The smallest element of ``x`` over ``axis``; NaN propagates.

    ``x`` must be real-valued; a reduction over zero elements is a ValueError.
    """
    if type(x) is Array and axis is None and keepdims is False:
        return wrap(_min_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_min(value, axes, keep))


def _check_extremum(x: Any, axes: tuple[int, ...], keepdims: bool, name: str) -> None:
    if x.dtype not in dt.REAL_NUMERIC:
        fail(TypeError, f"x must have a real-valued dtype, got {x.dtype}")
    if _count(x.shape, axes) == 0 and math.prod(_reduced_shape(x.shape, axes, keepdims)) != 0:
        fail(ValueError, f"the {name} of zero elements is undefined (x has shape {tuple(x.shape)}, "
               f"reduced over axes {axes})")  # fmt: skip


@functools.partial(kernel, static_argnums=REDUCTION)
def _max(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    _check_extremum(x, axes, keepdims, "maximum")
    if _count(x.shape, axes) == 0:
        return jnp.zeros(_reduced_shape(x.shape, axes, keepdims), x.dtype)
    return jnp.max(x, axis=axes, keepdims=keepdims)


@functools.partial(kernel, static_argnums=REDUCTION)
def _min(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    _check_extremum(x, axes, keepdims, "minimum")
    if _count(x.shape, axes) == 0:
        return jnp.zeros(_reduced_shape(x.shape, axes, keepdims), x.dtype)
    return jnp.min(x, axis=axes, keepdims=keepdims)


# --- mean, var, std -------------------------------------------------------------------------


@api
def mean(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The arithmetic mean of ``x`` over ``axis``; NaN for zero elements.

    Floating input (real or complex) keeps its dtype; integer input is computed in, and
    returns, the default real floating dtype.
    """
    if type(x) is Array and axis is None and keepdims is False:
        return wrap(_mean_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_mean(value, axes, keep))


@functools.partial(kernel, static_argnums=REDUCTION)
def _mean(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    x = x.astype(floating_dtype(x.dtype, dt.FLOATING))
    return _divide(jnp.sum(x, axis=axes, keepdims=keepdims), _count(x.shape, axes))


@api
def var(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    correction: int | float = _NO_CORRECTION,
    keepdims: bool = False,
) -> Array:
    """The variance of ``x`` over ``axis``: ``sum((x - mean(x))**2) / (M - correction)``.

    NaN when ``M - correction <= 0``. Real floating input keeps its dtype; integer input is
    computed in, and returns, the default real floating dtype; complex input is a TypeError.
    """
    if type(x) is Array and axis is None and keepdims is False and correction is _NO_CORRECTION:
        return wrap(_var_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_var(value, axes, keep, _correction(correction), False))


@api
def std(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    correction: int | float = _NO_CORRECTION,
    keepdims: bool = False,
) -> Array:
    """The standard deviation of ``x`` over ``axis``: the square root of :func:`var`."""
    if type(x) is Array and axis is None and keepdims is False and correction is _NO_CORRECTION:
        return wrap(_std_whole(x._value))
    value, axes, keep = boundary.reduction(x, axis, keepdims)
    return wrap(_var(value, axes, keep, _correction(correction), True))


@functools.partial(kernel, static_argnums=(*REDUCTION, 3, 4))  # ..., correction, root
def _var(x: Any, axes: tuple[int, ...], keepdims: bool, correction: float, root: bool) -> Any:
    dtype = floating_dtype(x.dtype, dt.REAL_FLOATING)
    x = x.astype(dtype)
    count = _count(x.shape, axes)
    if isinstance(count, int):
        divisor: Any = count - correction
        if not divisor > 0:  # also NaN for a NaN correction
            return jnp.full(_reduced_shape(x.shape, axes, keepdims), np.nan, dtype)
    else:  # a symbolic size (jax.export): the same rule, decided at run time
        divisor = _as_value(count, dtype) - correction
        divisor = jnp.where(divisor > 0, divisor, np.nan)
    mean = _divide(jnp.sum(x, axis=axes, keepdims=True), count)
    if root and not (isinstance(count, int) and count <= 1):  # (one element: its deviation is 0)
        # the square root of the variance where the squares of the deviations would overflow or
        # underflow: std([1e20, -1e20]) in float32 is 1e20, not inf, std([1e-20, -1e-20]) not 0
        deviations = power_norm((x, mean), axes, keepdims, 2.0, lambda pair: pair[0] - pair[1])
        return deviations / jnp.sqrt(jnp.asarray(divisor, dtype))
    centered = x - mean
    out = _divide(jnp.sum(centered * centered, axis=axes, keepdims=keepdims), divisor)
    return jnp.sqrt(out) if root else out
