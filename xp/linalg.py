"""The linear algebra extension, ``xp.linalg`` (the standard's 2025.12 extension, 25 functions).

Every function works on stacks of matrices (the last two axes), eagerly and under ``jax.jit``,
``vmap`` and ``grad`` (where JAX differentiates the decomposition). ``matmul``,
``matrix_transpose``, ``tensordot`` and ``vecdot`` are the main namespace's functions.

dtypes:

- functions the standard specifies for floating-point input (``cholesky``, ``det``, ``eig``,
  ``inv``, ``solve``, ``svd``, the norms, ...) compute integer input in the default floating
  dtype, as xp's element-wise functions do (``sqrt``, ``divide``); ``bool`` is rejected;
- ``cross``, ``outer`` and ``trace`` take numeric input and keep integer dtypes (``trace``
  accumulates small integers in the default integer dtype, as ``sum`` does); ``diagonal``
  takes any dtype;
- eigenvalues of ``eigh``, singular values and norms are real, of the input's precision;
  ``eig`` and ``eigvals`` are complex of the input's precision (float32 gives complex64).

Singular or non-positive-definite input is not checked: as in JAX, ``inv``, ``solve`` and
``cholesky`` then give ``inf`` or ``nan`` values rather than raising.

``eig`` and ``eigvals`` use JAX's kernel (LAPACK) on CPU. Where a platform has none (GPU, TPU),
they run NumPy's ``eig`` on the host through ``jax.pure_callback``: the result shapes are known
statically, so this works eagerly, under ``jit`` and under ``vmap`` (batched in one host call);
``eigvals`` stays differentiable (its JVP is computed on the device from the eigenvectors). Where
JAX's default backend is the CPU, the choice is made when the computation is compiled for a
platform; where it is another (a TPU), the host computation is used. :data:`EIG_HOST_FALLBACK`
(or the environment variable ``XP_EIG_HOST_FALLBACK``, read at call time when the attribute is
``None``) selects it: ``"auto"`` (the default, as above), ``"always"`` (the host computation on
every platform) or ``"never"`` (JAX's kernel only; lowering fails where there is none).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _eig as eig_kernels
from xp._array import Array, wrap
from xp._errors import ArgumentError, describe, fail
from xp._float32_accuracy import largest_part
from xp._host import require_cpu_backend
from xp._jit import kernel
from xp._linear_algebra import matmul as matmul
from xp._linear_algebra import matrix_transpose as matrix_transpose
from xp._linear_algebra import numeric_pair, shapes_of, vector_axis
from xp._linear_algebra import tensordot as tensordot
from xp._linear_algebra import vecdot as vecdot
from xp._precision import full_precision_kernel
from xp._routing import api
from xp._statistical import accumulation_dtype, power_norm, real_power
from xp._typing import ArrayLike, DTypeLike
from xp._utility import truth

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
    "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
    "vector_norm",
]  # fmt: skip


EIG_HOST_FALLBACK: str | None = None
"""How ``eig``/``eigvals`` are computed: ``"auto"``, ``"always"``, ``"never"`` (see the module);
``None`` reads the environment variable ``XP_EIG_HOST_FALLBACK`` (default ``"auto"``)."""

_EIG_MODES = ("auto", "always", "never")


# --- results --------------------------------------------------------------------------------


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# --- trace-time checks (they run once per compiled kernel) ----------------------------------


def _floating(x: Any, param: str = "x") -> np.dtype:
    """The dtype ``x`` is computed in: its own if floating, the default floating dtype if integer."""
    dtype = x.dtype
    if dtype in dt.FLOATING:
        return dtype
    if dtype in dt.INTEGER:
        return dt.default_float()
    fail(TypeError, f"{param} must have a floating-point dtype (integer dtypes are computed in the default "
           f"floating dtype), got {dtype}")  # fmt: skip


def _real_of(dtype: np.dtype) -> np.dtype:
    return cast(np.dtype, dt.REAL_OF[dtype])


def _complex_of(dtype: np.dtype) -> np.dtype:
    return cast(np.dtype, dt.COMPLEX_OF[dtype])


def _matrices(x: Any, param: str = "x") -> None:
    if x.ndim < 2:
        fail(ValueError, f"{param} must be a matrix or a stack of matrices (at least 2 dimensions), "
               f"got shape {tuple(x.shape)}")  # fmt: skip


def _square(x: Any, param: str = "x") -> None:
    _matrices(x, param)
    if x.shape[-1] != x.shape[-2]:
        fail(ValueError, f"{param} must be a square matrix or a stack of them (shape (..., M, M)), "
               f"got shape {tuple(x.shape)}")  # fmt: skip


def _floating_matrices(x: Any, square: bool) -> Any:
    """``x`` checked (a stack of matrices, square if asked) and cast to its computation dtype."""
    dtype = _floating(x)
    _square(x) if square else _matrices(x)
    return x.astype(dtype)


# --- decompositions -------------------------------------------------------------------------


@api
def cholesky(x: ArrayLike, /, *, upper: bool = False) -> Array:
    """The lower (``upper=False``) or upper Cholesky factor of each Hermitian positive-definite
    matrix in ``x``. ``x`` is taken as ``(x + x^H) / 2``; a matrix that is not positive definite
    gives ``nan`` values."""
    return wrap(_cholesky(boundary.array(x, "x"), boundary.boolean(upper, "upper")))


@functools.partial(full_precision_kernel, static_argnames="upper")
def _cholesky(x: Any, upper: bool) -> Any:
    return jnp.linalg.cholesky(_floating_matrices(x, square=True), upper=upper)


@api
def eigh(x: ArrayLike, /) -> EighResult:
    """Eigenvalues (real, ascending) and orthonormal eigenvectors (the columns) of each
    Hermitian or real symmetric matrix in ``x`` (taken as ``(x + x^H) / 2``)."""
    w, v = _eigh(boundary.array(x, "x"))
    return EighResult(wrap(w), wrap(v))


@full_precision_kernel
def _eigh(x: Any) -> Any:
    w, v = jnp.linalg.eigh(_floating_matrices(x, square=True))
    return w, v


@api
def eigvalsh(x: ArrayLike, /) -> Array:
    """Eigenvalues (real, ascending) of each Hermitian or real symmetric matrix in ``x``."""
    return wrap(_eigvalsh(boundary.array(x, "x")))


@full_precision_kernel
def _eigvalsh(x: Any) -> Any:
    return jnp.linalg.eigvalsh(_floating_matrices(x, square=True))


@api
def eig(x: ArrayLike, /) -> EigResult:
    """Eigenvalues and eigenvectors (the columns, of unit norm) of each square matrix in ``x``,
    complex of ``x``'s precision. On platforms without JAX's kernel this runs on the host (see
    the module). Eigenvectors are not differentiable; ``eigvals`` is."""
    w, v = _eig(boundary.array(x, "x"), True, _eig_mode())  # vectors=True
    return EigResult(wrap(w), wrap(v))


@api
def eigvals(x: ArrayLike, /) -> Array:
    """Eigenvalues of each square matrix in ``x``, complex of ``x``'s precision (see ``eig``)."""
    (w,) = _eig(boundary.array(x, "x"), False, _eig_mode())  # vectors=False
    return wrap(w)


def _eig_mode() -> str:
    mode = EIG_HOST_FALLBACK
    if mode is None:
        mode = os.environ.get("XP_EIG_HOST_FALLBACK", "auto")
    if mode not in _EIG_MODES:
        fail(ValueError, f"xp.linalg.EIG_HOST_FALLBACK (or XP_EIG_HOST_FALLBACK) must be one of "
               f"'auto', 'always', 'never', got {mode!r}")  # fmt: skip
    if mode == "auto" and not _default_backend_has_eig():
        # JAX's kernel exists for the CPU only: elsewhere the choice is not left to the lowering
        # (lax.platform_dependent), which failed on a TPU
        mode = "always"
    if mode == "always":
        require_cpu_backend("the eigenvalues of non-symmetric matrices are")
    return mode


def _default_backend_has_eig() -> bool:
    return jax.default_backend() == "cpu"


@functools.partial(full_precision_kernel, static_argnames=("vectors", "mode"))
def _eig(x: Any, vectors: bool, mode: str) -> tuple[Any, ...]:
    x = _floating_matrices(x, square=True)
    if x.size == 0:
        complex_dtype = _complex_of(x.dtype)
        empty = (jnp.zeros(x.shape[:-1], complex_dtype), jnp.zeros(x.shape, complex_dtype))
        return empty if vectors else empty[:1]
    native = functools.partial(eig_kernels.native, vectors=vectors)
    host = eig_kernels.host_with_vectors if vectors else eig_kernels.host_values
    if mode == "never":
        return native(x)
    if mode == "always":
        return host(x)
    return lax.platform_dependent(x, cpu=native, default=host)


@api
def qr(x: ArrayLike, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """The QR decomposition of each matrix in ``x``: ``Q`` with orthonormal columns and
    upper-triangular ``R`` (``mode="reduced"``: shapes (..., M, K) and (..., K, N) with
    K = min(M, N); ``"complete"``: (..., M, M) and (..., M, N))."""
    q, r = _qr(boundary.array(x, "x"), boundary.choice(mode, ("reduced", "complete"), "mode"))
    return QRResult(wrap(q), wrap(r))


@functools.partial(full_precision_kernel, static_argnames="mode")
def _qr(x: Any, mode: str) -> Any:
    x = _floating_matrices(x, square=False)
    # LAPACK (the CPU) scales its column norms; XLA's QR elsewhere squares the entries as they are,
    # so a matrix of large entries (|x| above about 2**64 in float32) gives NaN and one of small entries (1e-30)
    # gives R = 0. Scaling each column by a power of two first is exact and leaves Q as it is:
    # A = B D with D diagonal gives A = Q (R_B D), still upper triangular.
    return _scaled_off_the_cpu(
        x, functools.partial(_qr_as_computed, mode=mode), functools.partial(_qr_column_scaled, mode=mode)
    )


def _scaled_off_the_cpu(x: Any, plain: Callable[[Any], Any], scaled: Callable[[Any], Any]) -> Any:
    """``plain(x)`` where XLA runs on the CPU (LAPACK, which scales for itself) and ``scaled(x)``,
    the same decomposition of ``x`` scaled by powers of two, elsewhere: chosen when the program is
    lowered (``lax.platform_dependent``), so one jitted or exported program serves every platform.
    An empty ``x`` has nothing to scale."""
    if x.size == 0:
        return plain(x)
    return lax.platform_dependent(x, cpu=plain, default=scaled)


def _qr_as_computed(x: Any, mode: str) -> tuple[Any, Any]:
    q, r = jnp.linalg.qr(x, mode=mode)
    return q, r


def _qr_column_scaled(x: Any, mode: str) -> tuple[Any, Any]:
    scale = _power_of_two_scale(x, axis=-2)
    q, r = _qr_as_computed(x / scale, mode)
    return q, r * scale


def _power_of_two_scale(x: Any, axis: int | tuple[int, int]) -> Any:
    """The power of two nearest above the largest magnitude of ``x`` along ``axis`` (kept), so
    that ``x / scale`` has entries of magnitude below 1 and squares them within float range:
    dividing by it is exact. A zero, infinite or NaN slice gets 1."""
    magnitude = largest_part(x)
    _, exponent = jnp.frexp(jnp.max(magnitude, axis=axis, keepdims=True))
    # within the normal range both ways
    return jnp.ldexp(jnp.ones((), magnitude.dtype), jnp.clip(exponent, -120, 120))


@api
def svd(x: ArrayLike, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition ``x = U @ diag(S) @ Vh`` of each matrix in ``x``, with
    the singular values ``S`` (real) in descending order."""
    value = boundary.array(x, "x")
    _refuse_singular_vectors_xla_aborts_on(value)
    u, s, vh = _svd(value, boundary.boolean(full_matrices, "full_matrices"))
    return SVDResult(wrap(u), wrap(s), wrap(vh))


def _refuse_singular_vectors_xla_aborts_on(x: Any) -> None:
    """Refuse singular vectors where XLA cannot compile them: with JAX's 64-bit mode on, on a TPU
    (the default backend, as for the dtype policy: xp/_dtypes.py), XLA:TPU aborts the process
    compiling JAX's SVD with singular vectors ("Check failed: buffer != nullptr"; its iterations
    carry a float64 tolerance). The singular values alone compile there."""
    if dt.x64_enabled() and dt.float64_emulated():
        fail(NotImplementedError, f"the singular vectors of {x.dtype} matrices cannot be computed on "
             f"{jax.default_backend().upper()} with JAX's 64-bit mode on: XLA aborts the process compiling them "
             "there; turn the mode off (JAX_ENABLE_X64=0) or compute on the CPU (svdvals, matrix_rank and the "
             "matrix norms, which need no vectors, work)")  # fmt: skip


@functools.partial(full_precision_kernel, static_argnames="full_matrices")
def _svd(x: Any, full_matrices: bool) -> Any:
    return _decomposition(_floating_matrices(x, square=False), full_matrices, compute_uv=True)


def _decomposition(x: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """``jnp.linalg.svd``, each matrix scaled by a power of two first where XLA computes it.

    LAPACK (the CPU) scales a matrix whose entries square out of range; XLA's SVD elsewhere
    (a TPU's) does not, so entries above about 2**64 in float32 give singular values that are
    NaN or out of order, and entries near 1e-30 lose their digits. Dividing each matrix by a power
    of two is exact: ``U`` and ``Vh`` are those of the scaled matrix, ``S`` scales back."""
    options = {"full_matrices": full_matrices, "compute_uv": compute_uv}
    return _scaled_off_the_cpu(x, functools.partial(_svd_as_computed, **options),
                               functools.partial(_svd_scaled, **options))  # fmt: skip


def _svd_as_computed(x: Any, full_matrices: bool, compute_uv: bool) -> Any:
    result = jnp.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(result) if compute_uv else result


def _svd_scaled(x: Any, full_matrices: bool, compute_uv: bool) -> Any:
    scale = _power_of_two_scale(x, axis=(-2, -1))
    result = _svd_as_computed(x / scale, full_matrices, compute_uv)
    if not compute_uv:
        return result * scale[..., 0]
    u, s, vh = result
    return u, s * scale[..., 0], vh


@api
def svdvals(x: ArrayLike, /) -> Array:
    """The singular values (real, descending) of each matrix in ``x``."""
    return wrap(_svdvals(boundary.array(x, "x")))


@full_precision_kernel
def _svdvals(x: Any) -> Any:
    return _decomposition(_floating_matrices(x, square=False), full_matrices=False, compute_uv=False)


# --- determinants, inverses, solutions ------------------------------------------------------


@api
def det(x: ArrayLike, /) -> Array:
    """The determinant of each square matrix in ``x``."""
    return wrap(_det(boundary.array(x, "x")))


@full_precision_kernel
def _det(x: Any) -> Any:
    return jnp.linalg.det(_floating_matrices(x, square=True))


@api
def slogdet(x: ArrayLike, /) -> SlogdetResult:
    """The sign (of ``x``'s dtype; 0 for a singular matrix) and the natural logarithm of the
    absolute value (real; ``-inf`` for a singular matrix) of each determinant."""
    sign, logabsdet = _slogdet(boundary.array(x, "x"))
    return SlogdetResult(wrap(sign), wrap(logabsdet))


@full_precision_kernel
def _slogdet(x: Any) -> Any:
    sign, logabsdet = jnp.linalg.slogdet(_floating_matrices(x, square=True))
    return sign, logabsdet


@api
def inv(x: ArrayLike, /) -> Array:
    """The inverse of each square matrix in ``x`` (``inf``/``nan`` values where singular)."""
    return wrap(_inv(boundary.array(x, "x")))


@full_precision_kernel
def _inv(x: Any) -> Any:
    return jnp.linalg.inv(_floating_matrices(x, square=True))


@api
def solve(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The solution ``X`` of ``x1 @ X = x2`` for each square matrix in ``x1``.

    A 1-d ``x2`` of shape (M,) is one right-hand side for every matrix (the result has shape
    ``x1.shape[:-2] + (M,)``); otherwise ``x2`` is a stack of (M, K) matrices whose batch axes
    broadcast with those of ``x1``.
    """
    return wrap(_solve(boundary.array(x1, "x1"), boundary.array(x2, "x2")))


@full_precision_kernel
def _solve(x1: Any, x2: Any) -> Any:
    dtype = _floating_dtype_pair(x1, x2)
    _square(x1, "x1")
    m = x1.shape[-1]
    if x2.ndim == 0:
        fail(ValueError, "x2 must have shape (M,) or (..., M, K), got a 0-dimensional array")
    rows = x2.shape[0] if x2.ndim == 1 else x2.shape[-2]
    if rows != m:
        axis = "its only axis" if x2.ndim == 1 else "its second-to-last axis"
        fail(ValueError, f"x2 must have size {m} (the size of the matrices of x1) along {axis}: {shapes_of(x1, x2)}")
    if x2.ndim > 1:
        try:
            jnp.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
        except ValueError:
            fail(ValueError, f"the batch axes of x1 and x2 cannot be broadcast together: {shapes_of(x1, x2)}")
    a, b = x1.astype(dtype), x2.astype(dtype)
    # rows of entries near the ends of the float range, equilibrated by powers of two (exact): LU
    # takes the reciprocals of its pivots, which past 2**126 in float32 are flushed to 0 (solving
    # [[3e38, 1e38], [1e38, 2e38]] x = [1e38, 1e38] gave x = 0 on every backend); other rows are
    # left as they are, so that their solutions are jax.numpy's, bit for bit
    rows = _extreme_row_scales(a)
    if b.ndim == 1:  # one right-hand side for every matrix: a column of each
        return jnp.linalg.solve(a * rows, b[:, None] * rows)[..., 0]
    return jnp.linalg.solve(a * rows, b * rows)


def _extreme_row_scales(a: Any) -> Any:
    """Per row of each matrix (kept as ``(..., M, 1)``), the power of two that brings its largest
    magnitude into [1/2, 1) where that magnitude is within 2**24 of either end of the normal range
    (at most 2**±(maxexp - 8)), else 1 (an empty, zero, subnormal, infinite or NaN row too); constant to
    differentiation. Read from the bits of the magnitudes (non-negative floats order as their bits
    do, NaN above infinity): in XLA's CPU programs ``frexp``, ``ldexp`` and a floating row maximum
    cost more than a small matrix's solve itself (bench/RESULTS.md, eager ``linalg.solve``)."""
    magnitude = largest_part(a)
    info = jnp.finfo(magnitude.dtype)
    bits = jnp.int32 if magnitude.dtype.itemsize == 4 else jnp.int64
    top = jnp.max(lax.bitcast_convert_type(magnitude, bits), axis=-1, keepdims=True, initial=0)
    mantissa_bits = jnp.asarray(info.nmant, bits)
    exponent = lax.shift_right_logical(top, mantissa_bits)  # biased
    bias, limit = info.maxexp - 1, info.maxexp - 8
    # normal: not 0 (zeros, and subnormals, which XLA reads as zeros), not 2 * bias + 1 (inf, NaN)
    normal = (exponent >= 1) & (exponent <= 2 * bias)
    extreme = normal & ((exponent > 2 * bias - 24) | (exponent < 1 + 24))
    # 2**-e for largest = f * 2**e, f in [1/2, 1): a biased exponent of 2 * bias - 1 - exponent
    power = jnp.clip(2 * bias - 1 - exponent, bias - limit, bias + limit)
    scale = lax.bitcast_convert_type(lax.shift_left(power.astype(bits), mantissa_bits), magnitude.dtype)
    return lax.stop_gradient(jnp.where(extreme, scale, jnp.ones((), magnitude.dtype)))


def _floating_dtype_pair(x1: Any, x2: Any) -> np.dtype:
    for value, name in ((x1, "x1"), (x2, "x2")):
        _floating(value, name)
    dtype = numeric_pair(x1, x2)
    return dt.default_float() if dtype in dt.INTEGER else dtype


@api
def matrix_power(x: ArrayLike, n: int, /) -> Array:
    """Each square matrix in ``x`` raised to the integer power ``n`` (by repeated squaring;
    ``n = 0`` gives identity matrices, ``n < 0`` powers of the inverse). ``n`` is static: each
    distinct value compiles its own kernel."""
    return wrap(_matrix_power(boundary.array(x, "x"), boundary.integer(n, "n")))


@functools.partial(full_precision_kernel, static_argnames="n")
def _matrix_power(x: Any, n: int) -> Any:
    return jnp.linalg.matrix_power(_floating_matrices(x, square=True), n)


@api
def pinv(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Array:
    """The Moore-Penrose pseudo-inverse of each matrix in ``x`` (shape (..., N, M)).

    Singular values at most ``rtol`` times the largest are treated as zero; ``rtol`` is a
    float or a real floating array broadcasting with ``x.shape[:-2]``; by default
    ``max(M, N) * eps`` of ``x``'s precision.
    """
    value = boundary.array(x, "x")
    _refuse_singular_vectors_xla_aborts_on(value)  # (the pseudo-inverse is built from them)
    return wrap(_pinv(value, _rtol(rtol)))


@full_precision_kernel
def _pinv(x: Any, rtol: Any) -> Any:
    x = _floating_matrices(x, square=False)
    tolerance = _tolerance(x, rtol)
    # off the CPU, of the matrices scaled as the SVD's are (``_decomposition``): pinv(x / c) / c
    return _scaled_off_the_cpu(x, functools.partial(_pinv_as_computed, rtol=tolerance),
                               functools.partial(_pinv_scaled, rtol=tolerance))  # fmt: skip


def _pinv_as_computed(x: Any, rtol: Any) -> Any:
    return jnp.linalg.pinv(x, rtol=rtol)


def _pinv_scaled(x: Any, rtol: Any) -> Any:
    scale = _power_of_two_scale(x, axis=(-2, -1))
    return _pinv_as_computed(x / scale, rtol) / scale


@api
def matrix_rank(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Array:
    """The number of singular values of each matrix in ``x`` greater than ``rtol`` times the
    largest (``rtol`` as in ``pinv``), in the default integer dtype."""
    return wrap(_matrix_rank(boundary.array(x, "x"), _rtol(rtol)))


@full_precision_kernel
def _matrix_rank(x: Any, rtol: Any) -> Any:
    x = _floating_matrices(x, square=False)
    s = _decomposition(x, full_matrices=False, compute_uv=False)
    largest = jnp.max(s, axis=-1, keepdims=True, initial=0)
    cutoff = _tolerance(x, rtol)[..., None] * largest
    return jnp.sum(s > cutoff, axis=-1, dtype=dt.default_int())


def _rtol(rtol: Any) -> Any:
    """``rtol`` of pinv and matrix_rank: None, or an array (a Python scalar becomes one)."""
    if rtol is None:
        return None
    if type(rtol) in (int, float) or isinstance(rtol, (np.integer, np.floating)):
        return boundary.scalar_array(float(rtol), dt.default_float(), "rtol")
    try:
        return boundary.array(rtol, "rtol")
    except ArgumentError:
        fail(TypeError, f"rtol must be None, a float or an array of a real floating-point dtype, "
               f"got {describe(rtol)}")  # fmt: skip


def _tolerance(x: Any, rtol: Any) -> Any:
    """The relative tolerance as an array of ``x``'s real dtype (a trace-time check of ``rtol``)."""
    real = _real_of(x.dtype)
    if rtol is None:
        return jnp.asarray(max(x.shape[-2:]) * np.finfo(real).eps, real)
    if rtol.dtype not in dt.REAL_FLOATING:
        fail(TypeError, f"rtol must be a float or an array of a real floating-point dtype, got dtype {rtol.dtype}")
    try:
        jnp.broadcast_shapes(rtol.shape, x.shape[:-2])
    except ValueError:
        fail(ValueError, f"rtol of shape {tuple(rtol.shape)} cannot be broadcast with the batch shape "
               f"{tuple(x.shape[:-2])} of x")  # fmt: skip
    return rtol.astype(real)


# --- norms ----------------------------------------------------------------------------------

_MATRIX_ORDS: dict[Any, Any] = {"fro": "fro", "nuc": "nuc", None: "fro", 1: 1, -1: -1, 2: 2, -2: -2,
                                math.inf: math.inf, -math.inf: -math.inf}  # fmt: skip


@api
def matrix_norm(
    x: ArrayLike,
    /,
    *,
    keepdims: bool = False,
    ord: int | float | Literal["fro", "nuc"] | None = "fro",
) -> Array:
    """The matrix norm of each matrix in ``x`` (real, of ``x``'s precision): ``"fro"``
    (Frobenius), ``"nuc"`` (sum of singular values), 1 / -1 (largest / smallest column sum of
    absolute values), ``inf`` / ``-inf`` (row sums), 2 / -2 (largest / smallest singular
    value). ``keepdims=True`` keeps the last two axes with size 1. Norms of an empty matrix
    are 0."""
    try:
        key = None if type(ord) is bool else _MATRIX_ORDS.get(ord)
    except TypeError:  # unhashable
        key = None
    if key is None:
        fail(ValueError, f"ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf (or None: 'fro'), got {ord!r}")
    return wrap(_matrix_norm(boundary.array(x, "x"), key, boundary.boolean(keepdims, "keepdims")))


@functools.partial(full_precision_kernel, static_argnames=("ord", "keepdims"))
def _matrix_norm(x: Any, ord: Any, keepdims: bool) -> Any:
    x = _floating_matrices(x, square=False)
    real = _real_of(x.dtype)
    if 0 in x.shape[-2:]:
        shape = x.shape[:-2] + ((1, 1) if keepdims else ())
        return jnp.zeros(shape, real)
    if ord == "fro":
        return power_norm(x, (x.ndim - 2, x.ndim - 1), keepdims, 2.0)
    if ord in (2, -2, "nuc"):
        # the singular values, as svdvals computes them (scaled off the CPU)
        s = _decomposition(x, full_matrices=False, compute_uv=False)
        norm = jnp.sum(s, axis=-1) if ord == "nuc" else s[..., 0] if ord == 2 else s[..., -1]
        return norm[..., None, None] if keepdims else norm
    return jnp.linalg.matrix_norm(x, ord=ord, keepdims=keepdims).astype(real)


@api
def vector_norm(
    x: ArrayLike,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
    ord: int | float = 2,
) -> Array:
    """The vector ``ord``-norm of ``x`` over ``axis`` (None: all axes, as one vector), real of
    ``x``'s precision: ``(sum |x|**ord)**(1/ord)`` for any real ``ord``, with ``inf`` / ``-inf``
    the largest / smallest absolute value and ``0`` the number of non-zero elements. The
    norm of an empty vector is 0 (``-inf``: ``inf``)."""
    value = boundary.array(x, "x")
    if (type(ord) not in (int, float) and not isinstance(ord, (np.integer, np.floating))) or isinstance(ord, bool):
        fail(TypeError, f"ord must be a real number (an int, a float, inf or -inf), got {describe(ord)}")
    order = float(ord)
    if math.isnan(order):
        fail(ValueError, "ord must not be nan")
    axes = boundary.axes(axis, value.ndim)
    return wrap(_vector_norm(value, axes, boundary.boolean(keepdims, "keepdims"), order))


@functools.partial(full_precision_kernel, static_argnames=("axes", "keepdims", "ord"))
def _vector_norm(x: Any, axes: tuple[int, ...], keepdims: bool, ord: float) -> Any:
    dtype = _floating(x)
    x = x.astype(dtype)
    real = _real_of(dtype)
    reduce: dict[str, Any] = {"axis": axes, "keepdims": keepdims}
    if ord > 0 and ord not in (1, math.inf):
        return power_norm(x, axes, keepdims, ord)
    magnitude = jnp.abs(x).astype(real)
    if ord == 1:
        result = jnp.sum(magnitude, **reduce)
    elif ord == math.inf:
        result = jnp.max(magnitude, initial=0, **reduce)
    elif ord == -math.inf:
        result = jnp.min(magnitude, initial=math.inf, **reduce)
    elif ord == 0:
        result = jnp.sum(truth(x), dtype=real, **reduce)
    else:
        result = real_power(jnp.sum(real_power(magnitude, ord), **reduce), 1 / ord)
    return result.astype(real)


# --- matrix and vector products, diagonals --------------------------------------------------


@api
def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The cross product of the 3-element vectors along ``axis`` (counted from the end, not
    broadcast); the other axes broadcast."""
    return wrap(_cross(boundary.array(x1, "x1"), boundary.array(x2, "x2"), boundary.integer(axis, "axis")))


@functools.partial(full_precision_kernel, static_argnames="axis")
def _cross(x1: Any, x2: Any, axis: int) -> Any:
    dtype = numeric_pair(x1, x2)
    axis = vector_axis(axis, x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        fail(ValueError, f"x1 and x2 must have size 3 along axis {axis}, got {shapes_of(x1, x2)}")
    a = jnp.moveaxis(x1.astype(dtype), axis, -1)
    c = jnp.moveaxis(x2.astype(dtype), axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    c0, c1, c2 = c[..., 0], c[..., 1], c[..., 2]
    result = jnp.stack([a1 * c2 - a2 * c1, a2 * c0 - a0 * c2, a0 * c1 - a1 * c0], axis=-1)
    return jnp.moveaxis(result, -1, axis)


@api
def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two 1-d arrays: ``result[i, j] = x1[i] * x2[j]``."""
    return wrap(_outer(boundary.array(x1, "x1"), boundary.array(x2, "x2")))


@full_precision_kernel
def _outer(x1: Any, x2: Any) -> Any:
    dtype = numeric_pair(x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        fail(ValueError, f"x1 and x2 must be 1-dimensional, got {shapes_of(x1, x2)}")
    return x1.astype(dtype)[:, None] * x2.astype(dtype)[None, :]


@api
def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The diagonal ``offset`` (> 0: above the main one, < 0: below) of each matrix in ``x``,
    along a new last axis (of size 0 when ``offset`` is beyond the matrix)."""
    value = boundary.array(x, "x")
    return wrap(_diagonal(value, _offset(offset, value)))


def _offset(offset: Any, x: Any) -> int:
    """``offset`` as an int; one beyond the matrix (whose diagonal is empty) as the first such one,
    so that 10**20 gives the same empty diagonal instead of overflowing in XLA's int64."""
    n = boundary.integer(offset, "offset")
    if x.ndim < 2:
        return n  # (the kernel reports the shape)
    rows, cols = x.shape[-2], x.shape[-1]
    return max(-rows, min(cols, n))


@functools.partial(kernel, static_argnames="offset")
def _diagonal(x: Any, offset: int) -> Any:
    _matrices(x)
    return jnp.diagonal(x, offset, -2, -1)


@api
def trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike | None = None) -> Array:
    """The sum of the diagonal ``offset`` of each matrix in ``x``.

    The result has ``dtype`` (``x`` is cast to it first); by default ``x``'s dtype, except that
    integers narrower than the default integer dtype accumulate in it (unsigned ones in the
    unsigned integer dtype of its width), as ``sum`` does.
    """
    value = boundary.array(x, "x")
    return wrap(_trace(value, _offset(offset, value), boundary.optional_dtype(dtype)))


@functools.partial(full_precision_kernel, static_argnames=("offset", "dtype"))
def _trace(x: Any, offset: int, dtype: np.dtype | None) -> Any:
    _matrices(x)
    dtype = accumulation_dtype(x.dtype, dtype)  # sum's rule, which checks the dtypes
    return jnp.sum(jnp.diagonal(x.astype(dtype), offset, -2, -1), axis=-1, dtype=dtype)


def __dir__() -> list[str]:
    # the namespace is the module's functions (``__all__``), not the names its code imports
    return sorted(__all__)
