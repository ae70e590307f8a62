"""The Fourier transform extension, ``xp.fft`` (the standard's 2025.12 extension, 14 functions).

Each transform is one jitted ``jax.numpy.fft`` computation; lengths, axes and ``norm`` are static.
The transforms are traced at full matmul precision like xp's products (xp/_precision.py), which
changes nothing today: JAX's FFT is one primitive with no precision of its own, and its
precision is the backend's (docs/jax.md).

dtypes (the result's precision is always the input's):

- ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``irfft``, ``irfftn``, ``hfft`` take complex input,
  as the standard specifies; real floating input is taken as complex of its precision;
- ``rfft``, ``rfftn``, ``ihfft`` take real floating input; complex input is a TypeError (its
  imaginary part would be lost);
- integer input is computed in the default floating (or complex) dtype, as xp's element-wise
  functions do; ``bool`` is rejected;
- ``fftshift`` and ``ifftshift`` take any dtype (they only move elements).

Lengths: ``n`` (and each entry of ``s``) must be positive; an entry ``-1`` of ``s`` means the
default length for its axis. ``s`` needs ``axes`` (the standard leaves ``s`` without ``axes``
undefined), and ``axes`` may not repeat an axis. ``axes=()`` makes ``fftn``/``ifftn`` the
identity (with the complex dtype); the real transforms need at least one axis.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Literal, Protocol, cast

import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _devices
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._errors import describe, fail
from xp._jit import kernel
from xp._precision import full_precision_kernel
from xp._routing import api
from xp._typing import ArrayLike, Device, DTypeLike

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]  # fmt: skip


Norm = Literal["backward", "ortho", "forward"]
_NORMS = ("backward", "ortho", "forward")
_REAL_INPUT = frozenset({"rfft", "ihfft", "rfftn"})
_HALF_INPUT = frozenset({"irfft", "hfft", "irfftn"})  # the input is half a Hermitian spectrum


# --- arguments ------------------------------------------------------------------------------


def _norm(norm: Any) -> str:
    if type(norm) is str and norm in _NORMS:
        return norm
    return boundary.choice(norm, _NORMS, "norm")


def _length(n: Any) -> int | None:
    if n is None:
        return None
    length = boundary.integer(n, "n")
    if length < 1:
        fail(ValueError, f"n must be a positive integer, got {length}")
    # one line of the output at least (2**62 would abort the process inside XLA)
    boundary.allocation((length,), np.dtype(np.complex64), None, "n")
    return length


def _int_tuple(value: Any, param: str) -> tuple[int, ...]:
    if type(value) is tuple and all(type(v) is int for v in value):
        return value
    if not isinstance(value, (tuple, list)):
        fail(TypeError, f"{param} must be a sequence of ints, got {describe(value)}")
    return tuple(boundary.integer(v, f"{param}[{i}]") for i, v in enumerate(value))


def _sizes(s: Any) -> tuple[int, ...] | None:
    if s is None:
        return None
    sizes = _int_tuple(s, "s")
    for i, size in enumerate(sizes):
        if size < 1 and size != -1:
            fail(ValueError, f"s[{i}] must be a positive integer or -1 (the default length), got {size}")
    return sizes


# --- trace-time dtype rules -----------------------------------------------------------------


def _input(x: Any, kind: str) -> Any:
    """``x`` in the dtype the transform ``kind`` computes in (see the module)."""
    dtype = x.dtype
    if dtype == dt.bool:
        fail(TypeError, f"x must have a floating-point dtype, got {dtype}")
    if kind in _REAL_INPUT:
        if dtype.kind == "c":
            fail(TypeError, f"x must have a real floating-point dtype, got {dtype} "
                   f"(use {'fftn' if kind == 'rfftn' else 'fft'} for complex input)")  # fmt: skip
        return x.astype(dt.default_float() if dtype.kind in "iu" else dtype)
    if dtype.kind in "iu":
        return x.astype(dt.default_complex())
    return x.astype(cast(np.dtype, dt.COMPLEX_OF[dtype]))


def _check_known_size(x: Any, axis: int) -> None:
    if boundary.symbolic(x.shape[axis]):  # (jax.numpy's FFTs raise a TypeError of their own)
        fail(NotImplementedError, f"x has a size jax.export leaves symbolic ({x.shape[axis]}) along axis {axis}, "
             "which the FFTs need known; export with a concrete size for that axis")  # fmt: skip


# --- one-dimensional transforms -------------------------------------------------------------


@functools.partial(full_precision_kernel, static_argnames=("kind", "n", "axis", "norm"))
def _transform(x: Any, kind: str, n: int | None, axis: int, norm: str) -> Any:
    axis = boundary.axis(axis, x.ndim)
    _check_known_size(x, axis)
    x = _input(x, kind)
    if n is None:
        size = x.shape[axis]
        default = 2 * (size - 1) if kind in _HALF_INPUT else size
        if default < 1:
            fail(ValueError, f"x has size {size} along axis {axis}, which gives the default length n={default}; "
                   f"pass a positive n")  # fmt: skip
        n = default
    return getattr(jnp.fft, kind)(x, n=n, axis=axis, norm=norm)


class OneDimensionalTransform(Protocol):
    """The signature of ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft`` (for type checkers)."""

    def __call__(self, x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array: ...


def _one_dimensional(kind: str, doc: str) -> OneDimensionalTransform:
    def transform(x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
        value = x._value if type(x) is Array else boundary.array(x, "x")
        return wrap(_transform(value, kind, _length(n), boundary.integer(axis, "axis"), _norm(norm)))

    transform.__name__ = transform.__qualname__ = kind
    transform.__doc__ = doc
    transform.__module__ = __name__
    return api(transform)


_N_DOC = """

``n`` is the length of the transform along ``axis``: the input is zero-padded or trimmed to it
(default: the input's size). ``norm`` scales the forward transform by 1 (``"backward"``),
``1/sqrt(n)`` (``"ortho"``) or ``1/n`` (``"forward"``), and the inverse one the other way."""

_HALF_DOC = """

``n`` is the length of the real output along ``axis`` (default ``2 * (m - 1)`` for an input of
size ``m``): the input is zero-padded or trimmed to ``n // 2 + 1``. ``norm`` as in ``fft``."""

fft = _one_dimensional("fft", "The one-dimensional discrete Fourier transform of complex ``x``." + _N_DOC)
ifft = _one_dimensional("ifft", "The one-dimensional inverse discrete Fourier transform of complex ``x``." + _N_DOC)
rfft = _one_dimensional(
    "rfft", "The one-dimensional discrete Fourier transform of real ``x``: the ``n // 2 + 1`` "
    "non-negative frequency terms, complex of ``x``'s precision." + _N_DOC
)  # fmt: skip
irfft = _one_dimensional(
    "irfft", "The inverse of ``rfft``: real ``x``-precision output of length ``n`` from the "
    "non-negative frequency terms ``x``." + _HALF_DOC
)  # fmt: skip
hfft = _one_dimensional(
    "hfft", "The discrete Fourier transform of a signal with Hermitian symmetry, given by its "
    "first half ``x``; the output is real." + _HALF_DOC
)  # fmt: skip
ihfft = _one_dimensional(
    "ihfft", "The inverse of ``hfft``: the first ``n // 2 + 1`` terms of the inverse transform "
    "of real ``x``, complex of its precision." + _N_DOC
)  # fmt: skip


# --- n-dimensional transforms ---------------------------------------------------------------


@functools.partial(full_precision_kernel, static_argnames=("kind", "s", "axes", "norm"))
def _transform_n(x: Any, kind: str, s: tuple[int, ...] | None, axes: tuple[int, ...] | None, norm: str) -> Any:
    if s is not None and axes is None:
        fail(ValueError, "s needs axes: pass the axes that s gives the lengths of")
    normalized = boundary.axes(axes, x.ndim, "axes")
    if s is not None and len(s) != len(normalized):
        fail(ValueError, f"s and axes must have the same length, got {len(s)} and {len(normalized)}")
    x = _input(x, kind)
    if not normalized:
        if kind != "rfftn" and kind != "irfftn":
            return x
        fail(ValueError, "axes must name at least one axis")
    sizes = []
    for i, axis in enumerate(normalized):
        _check_known_size(x, axis)
        size = s[i] if s is not None else -1
        if size == -1:
            size = x.shape[axis]
            if kind == "irfftn" and i == len(normalized) - 1:
                size = 2 * (size - 1)
            if size < 1:
                fail(ValueError, f"x has size {x.shape[axis]} along axis {axis}, which gives the default "
                       f"length {size}; pass a positive length in s")  # fmt: skip
        sizes.append(size)
    return getattr(jnp.fft, kind)(x, s=tuple(sizes), axes=normalized, norm=norm)


class NDimensionalTransform(Protocol):
    """The signature of ``fftn``, ``ifftn``, ``rfftn``, ``irfftn`` (for type checkers)."""

    def __call__(
        self,
        x: ArrayLike,
        /,
        *,
        s: Sequence[int] | None = None,
        axes: Sequence[int] | None = None,
        norm: Norm = "backward",
    ) -> Array: ...


def _n_dimensional(kind: str, doc: str) -> NDimensionalTransform:
    def transform(
        x: ArrayLike,
        /,
        *,
        s: Sequence[int] | None = None,
        axes: Sequence[int] | None = None,
        norm: Norm = "backward",
    ) -> Array:
        value = x._value if type(x) is Array else boundary.array(x, "x")
        shape_axes = None if axes is None else _int_tuple(axes, "axes")
        return wrap(_transform_n(value, kind, _sizes(s), shape_axes, _norm(norm)))

    transform.__name__ = transform.__qualname__ = kind
    transform.__doc__ = doc
    transform.__module__ = __name__
    return api(transform)


_S_DOC = """

``axes`` (default: all) are transformed; ``s[i]`` is the length along ``axes[i]`` (the input is
zero-padded or trimmed to it; ``-1`` or ``s=None``: the input's size). ``norm`` as in ``fft``,
with ``n = prod(s)``."""

fftn = _n_dimensional("fftn", "The n-dimensional discrete Fourier transform of complex ``x``." + _S_DOC)
ifftn = _n_dimensional("ifftn", "The n-dimensional inverse discrete Fourier transform of complex ``x``." + _S_DOC)
rfftn = _n_dimensional(
    "rfftn", "The n-dimensional discrete Fourier transform of real ``x``; the last transformed axis "
    "keeps its ``s[-1] // 2 + 1`` non-negative frequency terms." + _S_DOC
)  # fmt: skip
irfftn = _n_dimensional(
    "irfftn", "The inverse of ``rfftn``: real output with lengths ``s`` (default: the input's sizes, "
    "except ``2 * (m - 1)`` along the last axis); the input's last transformed axis is padded or "
    "trimmed to ``s[-1] // 2 + 1``." + _S_DOC
)  # fmt: skip


# --- frequencies and shifts -----------------------------------------------------------------


def _frequencies(n: Any, d: Any, dtype: Any, device: Any, real: bool) -> Array:
    length = boundary.integer(n, "n")
    if length < 1:
        fail(ValueError, f"n must be a positive integer, got {length}")
    spacing = float(boundary.real_scalar(d, "d"))
    if spacing == 0 or spacing != spacing:
        fail(ValueError, f"d must be a non-zero number, got {spacing}")
    want = dt.default_float() if dtype is None else boundary.dtype(dtype)
    if want not in dt.REAL_FLOATING:
        fail(TypeError, f"dtype must be a real floating-point dtype, got {want}")
    target = boundary.device(device)
    boundary.allocation((length // 2 + 1 if real else length,), want, target, "n")
    value = _frequency_kernel(boundary.scalar_array(spacing, want, "d"), length, real)
    return wrap(_devices.place(value, target))


@functools.partial(kernel, static_argnames=("n", "real"))
def _frequency_kernel(d: Any, n: int, real: bool) -> Any:
    k = lax.iota(np.int32 if n < 2**31 else np.int64, n // 2 + 1 if real else n)
    if not real:
        k = jnp.where(k < (n + 1) // 2, k, k - n)
    return k.astype(d.dtype) / (n * d)


@api
def fftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """The sample frequencies of a length-``n`` transform with sample spacing ``d``:
    ``[0, 1, ..., -2, -1] / (d * n)`` (non-negative ones first), of ``dtype`` (a real floating
    dtype; default: the default floating dtype) on ``device``."""
    return _frequencies(n, d, dtype, device, real=False)


@api
def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """The ``n // 2 + 1`` non-negative sample frequencies of ``rfft`` of length ``n``:
    ``[0, 1, ..., n // 2] / (d * n)`` (see ``fftfreq``)."""
    return _frequencies(n, d, dtype, device, real=True)


def _shift_axes(axes: Any) -> int | tuple[int, ...] | None:
    if axes is None or type(axes) is int:
        return axes
    if isinstance(axes, (tuple, list)):
        return _int_tuple(axes, "axes")
    return boundary.integer(axes, "axes")


@functools.partial(kernel, static_argnames=("axes", "inverse"))
def _shift(x: Any, axes: int | tuple[int, ...] | None, inverse: bool) -> Any:
    normalized = boundary.axes(axes, x.ndim, "axes")
    shifts = tuple((-(x.shape[a] // 2) if inverse else x.shape[a] // 2) for a in normalized)
    return jnp.roll(x, shifts, normalized) if normalized else x


@api
def fftshift(x: ArrayLike, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """``x`` with the zero-frequency term moved to the centre of ``axes`` (default: all): each
    axis of size ``m`` rolled by ``m // 2``. Any dtype."""
    return wrap(_shift(boundary.array(x, "x"), _shift_axes(axes), False))  # inverse=False


@api
def ifftshift(x: ArrayLike, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of ``fftshift`` (they differ for odd sizes): each axis rolled by ``-(m // 2)``."""
    return wrap(_shift(boundary.array(x, "x"), _shift_axes(axes), True))  # inverse=True


def __dir__() -> list[str]:
    # the namespace is the module's functions (``__all__``), not the names its code imports
    return sorted(__all__)
