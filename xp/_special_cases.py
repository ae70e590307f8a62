"""The element-wise computations, with the standard's special cases made exact.

Each function takes and returns jax arrays of the computation dtype (``_elementwise`` has done
the dtype work). Where ``jax.numpy`` meets the standard, the function is jax.numpy's; where it
does not, the fix is written here as code. Most fixes concern complex operands with an infinite,
NaN or signed-zero component, where the standard follows C99's Annex G: the finite values come
from jax.numpy, and the special inputs are overridden case by case (the comments quote the
standard's case, for ``a = real(x)``, ``b = imag(x)``, usually for ``b >= 0``; the functions'
symmetries, such as ``f(conj(x)) == conj(f(x))``, extend each case to the other quadrants).

Functions the standard defines through others for complex input (``sin(x) = -1j * sinh(1j*x)``,
``cos``, ``tan``, ``asin``, ``atan``, ``log2``, ``log10``) are computed that way, so they inherit
the special cases exactly.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
from jax import lax

from xp import _float32_accuracy as float32
from xp import _float32_pow as float32_pow

PI = math.pi
INF = math.inf
NAN = math.nan

multiply = jnp.multiply


def pow(x1: Any, x2: Any) -> Any:
    # float32's is xp's own on a TPU, whose XLA computes exp(x2 * log(x1)) approximately
    # (xp/_float32_pow.py); complex64's and the other dtypes' are XLA's
    return float32_pow.pow(x1, x2) if x1.dtype == jnp.float32 else jnp.power(x1, x2)


# --- helpers --------------------------------------------------------------------------------


def _parts(z: Any) -> tuple[Any, Any]:
    return jnp.real(z), jnp.imag(z)


def _override(re: Any, im: Any, cases: list[tuple[Any, Any, Any]]) -> Any:
    """``re + im*j``, with each case ``(mask, real, imag)`` applied in order (None keeps)."""
    for mask, new_re, new_im in cases:
        if new_re is not None:
            re = jnp.where(mask, new_re, re)
        if new_im is not None:
            im = jnp.where(mask, new_im, im)
    return lax.complex(re, im)


def _times_i(z: Any) -> Any:
    """``1j * z``, exactly: (a + bj) * 1j = -b + aj (no 0 * inf products)."""
    a, b = _parts(z)
    return lax.complex(-b, a)


def _times_minus_i(z: Any) -> Any:
    """``-1j * z``, exactly: (a + bj) * -1j = b - aj."""
    a, b = _parts(z)
    return lax.complex(b, -a)


def _float32_or(accurate: Any, fn: Any) -> Any:
    """``accurate`` (:mod:`xp._float32_accuracy`) for float32 input and complex64 (whose parts are
    float32), the jax.numpy function ``fn`` for the other dtypes."""

    def function(*args: Any) -> Any:
        return accurate(*args) if args[0].dtype in (jnp.float32, jnp.complex64) else fn(*args)

    return function


def _keeping_zeros(fn: Any) -> Any:
    """``fn`` with ``fn(-0.0) = -0.0`` and ``fn(+0.0) = +0.0``, as the standard has it for the odd
    functions that are 0 at 0: XLA:TPU's ``expm1`` and ``sinh`` give ``+0.0`` for ``-0.0``."""

    def keeping_zeros(x: Any) -> Any:
        return float32.keeping_zeros(x, fn(x))

    return keeping_zeros


# the real functions (of real input, and of a complex number's parts), and complex exp, expm1, log
# and tanh: float32's and complex64's from XLA's accurate operations (xp/_float32_accuracy.py)
_real_exp, _real_log = _float32_or(float32.exp, jnp.exp), _float32_or(float32.log, jnp.log)
_real_cosh = _float32_or(float32.cosh, jnp.cosh)
_real_sinh = _float32_or(float32.sinh, _keeping_zeros(jnp.sinh))
_complex_exp, _complex_log = _float32_or(float32.complex_exp, jnp.exp), _float32_or(float32.complex_log, jnp.log)
_complex_expm1 = _float32_or(float32.complex_expm1, jnp.expm1)
_complex_tanh = _float32_or(float32.complex_tanh, jnp.tanh)
logaddexp = _float32_or(float32.logaddexp, jnp.logaddexp)
# float32 (and complex64) division with the divisors XLA:TPU's reciprocal flushes scaled
divide, atan2 = _float32_or(float32.divide, jnp.true_divide), _float32_or(float32.atan2, jnp.arctan2)
hypot = _float32_or(float32.hypot, jnp.hypot)


def _with_derivative(derivative: Any) -> Any:
    """Decorator: the complex computation whose derivative is ``derivative(z)``, a function of this
    module. The special cases fix values with ``where``s, whose derivatives are those of the values
    put in (a constant's 0, or a part of the input's): at points where the function is analytic
    that is wrong (``exp(0.5 + 0j)``'s derivative along the imaginary axis came out ``1j``, not
    ``1.65j``). jax.numpy's derivatives are no substitute: they come from XLA's complex formulas
    (``rsqrt``, ``log``), which XLA:TPU builds on its approximate float32 exponentials. The
    derivative is computed only when one is asked for."""
    return float32.with_tangent(lambda z, dz: derivative(z) * dz)


# The derivatives of exp, expm1, sinh, cosh, tanh and sqrt are the module's own functions, called
# through these (named, typed) so that each decorator can refer to a function defined below it.


def _exp_of(z: Any) -> Any:
    return exp(z)


def _sinh_of(z: Any) -> Any:
    return sinh(z)


def _cosh_of(z: Any) -> Any:
    return cosh(z)


def _tanh_of(z: Any) -> Any:
    return tanh(z)


def _sqrt_of(z: Any) -> Any:
    return sqrt(z)


def _sech_squared(t: Any) -> Any:
    """``1 - t^2`` as ``(1 + t)(1 - t)``: tanh's derivative from its value, as JAX's rule has it."""
    return (1 + t) * (1 - t)


def _real_or(fn: Any) -> Any:
    """Decorator: the jax.numpy function ``fn`` for real input, the decorated one for complex."""

    def decorate(complex_fn: Any) -> Any:
        def function(x: Any) -> Any:
            return complex_fn(x) if x.dtype.kind == "c" else fn(x)

        function.__name__ = complex_fn.__name__
        function.__doc__ = complex_fn.__doc__
        return function

    return decorate


def _signed_like(value: Any, sign: Any) -> Any:
    """``|value|`` with the sign of ``sign``: on a branch cut, the sign of a zero component
    picks the side (C99), which jax.numpy ignores; NaN ``sign`` leaves ``value`` as is."""
    return jnp.where(jnp.isnan(sign), value, jnp.copysign(jnp.abs(value), sign))


def _isinf(v: Any) -> Any:
    return jnp.isinf(v)


def _isnan(v: Any) -> Any:
    return jnp.isnan(v)


def _finite(v: Any) -> Any:
    return jnp.isfinite(v)


def _copysign(magnitude: Any, sign: Any) -> Any:
    return jnp.copysign(jnp.asarray(magnitude, sign.dtype), sign)


@_real_or(jnp.abs)
def abs(z: Any) -> Any:
    a, b = _parts(z)
    # "a (or b) is +/-infinity and the other any value (including NaN) -> +infinity"
    return jnp.where(_isinf(a) | _isinf(b), INF, jnp.abs(z))


# --- exponentials and logarithms ------------------------------------------------------------


@_real_or(_real_exp)
@_with_derivative(_exp_of)
def exp(z: Any) -> Any:
    a, b = _parts(z)
    r = _complex_exp(z)
    nonfinite_b = ~_finite(b)
    return _override(
        r.real,
        r.imag,
        [
            (b == 0, jnp.where(_isnan(a), NAN, _real_exp(a)), b),  # "+infinity and +0 -> infinity + 0j"; NaN + 0j
            ((a == -INF) & _finite(b), _copysign(0.0, jnp.cos(b)), _copysign(0.0, jnp.sin(b))),  # +0 * cis(b)
            ((a == -INF) & nonfinite_b, 0.0, 0.0),  # "-infinity and +infinity (or NaN) -> 0 + 0j"
            ((a == INF) & nonfinite_b, INF, NAN),  # "+infinity and +infinity (or NaN) -> infinity + NaN j"
        ],
    )


@_real_or(_float32_or(float32.expm1, _keeping_zeros(jnp.expm1)))
@_with_derivative(_exp_of)
def expm1(z: Any) -> Any:
    a, b = _parts(z)
    special = ~_finite(a) | ~_finite(b)
    via_exp = exp(z)  # the special cases are exp's, minus 1 on the real part
    r = _complex_expm1(z)
    return lax.complex(jnp.where(special, via_exp.real - 1, r.real), jnp.where(special, via_exp.imag, r.imag))


@_real_or(_real_log)
@_with_derivative(lambda z: 1 / z)
def log(z: Any) -> Any:
    a, b = _parts(z)
    r = _complex_log(z)
    infinite = _isinf(a) | _isinf(b)
    # "a is +/-infinity (or b is +infinity) -> +infinity + ... j": |z| is infinite even with a NaN
    return _override(r.real, r.imag, [(infinite, INF, jnp.arctan2(b, a))])


@_real_or(_float32_or(float32.log1p, jnp.log1p))
@_with_derivative(lambda z: 1 / (1 + z))
def log1p(z: Any) -> Any:
    a, b = _parts(z)
    if z.dtype == jnp.complex64:  # (XLA:TPU's complex log1p is built on its approximate log1p)
        r = float32.complex_log1p(z)
    else:
        r = jnp.log1p(z)
    # Near z = -1, XLA's real part squares b, which underflows: log1p(-1 + 1e-200j) came out
    # -inf + pi/2 j, not log(1e-200) + pi/2 j (-460.5). Where |1 + z| < 1/2, log|1 + z| is taken
    # from u = 1 + a (exact there: a is within a factor of 2 of -1) and v = b, scaled by the larger
    # s: log s + log((u/s)**2 + (v/s)**2) / 2 squares nothing below 1. The value does not depend
    # on s, so s is a constant to differentiation, which keeps the derivative finite wherever the
    # function's is (through hypot, or with s differentiated, 1/s**2 overflows: NaN at u = 0).
    u, v = a + 1, b
    larger = jnp.maximum(jnp.abs(u), jnp.abs(v))
    scale = lax.stop_gradient(jnp.where(larger == 0, 1, larger))  # (z = -1: -inf all the same)
    near = _real_log(scale) + 0.5 * _real_log(jnp.square(u / scale) + jnp.square(v / scale))
    real = jnp.where(larger < 0.35, near, r.real)  # |1 + z| < 1/2 where the larger part is below 0.35
    infinite = _isinf(a) | _isinf(b)
    return _override(
        real,
        r.imag,
        [
            ((a == -1) & (b == 0), -INF, b),  # "-1 and +0 -> -infinity + 0j"
            (infinite, INF, jnp.arctan2(b, a + 1)),
        ],
    )


@_real_or(_float32_or(float32.log2, jnp.log2))
def log2(z: Any) -> Any:
    return _change_of_base(z, math.log(2.0))


@_real_or(_float32_or(float32.log10, jnp.log10))
def log10(z: Any) -> Any:
    return _change_of_base(z, math.log(10.0))


def _change_of_base(z: Any, log_base: float) -> Any:
    natural = log(z)
    return lax.complex(natural.real / log_base, natural.imag / log_base)


@_real_or(jnp.sqrt)
@_with_derivative(lambda z: 0.5 / _sqrt_of(z))
def sqrt(z: Any) -> Any:
    a, b = _parts(z)
    r = jnp.sqrt(z)
    return _override(
        r.real,
        _signed_like(r.imag, b),
        [
            ((a == 0) & (b == 0), 0.0, b),  # "+/-0 and +0 -> +0 + 0j"
            ((a == -INF) & _finite(b), 0.0, _copysign(INF, b)),  # "-infinity and finite b > 0 -> +0 + infinity j"
            ((a == INF) & _finite(b), INF, _copysign(0.0, b)),  # "+infinity and finite b > 0 -> +infinity + 0j"
            ((a == -INF) & _isnan(b), NAN, INF),  # "-infinity and NaN -> NaN +/- infinity j"
            ((a == INF) & _isnan(b), INF, NAN),  # "+infinity and NaN -> +infinity + NaN j"
            (_isinf(b), INF, b),  # "any a (NaN too) and +infinity -> +infinity + infinity j"
            # "NaN and any value -> NaN + NaN j", read literally: only b = +infinity is excepted
            (_isnan(a) & (b == -INF), NAN, NAN),
        ],
    )


# --- hyperbolic functions -------------------------------------------------------------------


@_real_or(_real_cosh)
@_with_derivative(_sinh_of)
def cosh(z: Any) -> Any:
    a, b = _parts(z)
    re = _real_cosh(a) * jnp.cos(b)
    im = _real_sinh(a) * jnp.sin(b)
    nonfinite_b = ~_finite(b)
    return _override(
        re,
        im,
        [
            (b == 0, None, jnp.where(jnp.signbit(a), -b, b)),  # "+infinity (or NaN) and +0 -> ... + 0j"
            ((a == 0) & nonfinite_b, NAN, 0.0),  # "+0 and +infinity (or NaN) -> NaN + 0j"
            (_isinf(a) & nonfinite_b, INF, NAN),  # "+infinity and +infinity (or NaN) -> +infinity + NaN j"
        ],
    )


@_real_or(_real_sinh)
@_with_derivative(_cosh_of)
def sinh(z: Any) -> Any:
    a, b = _parts(z)
    re = _real_sinh(a) * jnp.cos(b)
    im = _real_cosh(a) * jnp.sin(b)
    nonfinite_b = ~_finite(b)
    return _override(
        re,
        im,
        [
            (b == 0, None, b),  # "+infinity (or NaN) and +0 -> ... + 0j"
            ((a == 0) & nonfinite_b, a, NAN),  # "+0 and +infinity (or NaN) -> 0 + NaN j"
            (_isinf(a) & nonfinite_b, a, NAN),  # "+infinity and +infinity (or NaN) -> infinity + NaN j"
        ],
    )


@_real_or(_float32_or(float32.tanh, jnp.tanh))
@_with_derivative(lambda z: _sech_squared(_tanh_of(z)))
def tanh(z: Any) -> Any:
    a, b = _parts(z)
    r = _complex_tanh(z)
    # For |a| large, tanh(z) is 1 to working precision; the formulas overflow to NaN there.
    saturated = jnp.abs(a) > (20.0 if a.dtype.itemsize == 4 else 40.0)
    nonfinite_b = ~_finite(b)
    return _override(
        r.real,
        r.imag,
        [
            (saturated & _finite(b), _copysign(1.0, a), _copysign(0.0, jnp.sin(2 * b))),
            (b == 0, None, b),  # "NaN and +0 -> NaN + 0j"; real a: tanh(a) + 0j
            ((a == 0) & nonfinite_b, a, NAN),  # "+0 and +infinity (or NaN) -> +0 + NaN j"
            (_isinf(a), _copysign(1.0, a), _copysign(0.0, b)),  # "+infinity and any b -> 1 + 0j"
        ],
    )


@_real_or(_float32_or(float32.acosh, jnp.arccosh))
# 1 / (sqrt(z - 1) sqrt(z + 1)), not jax.numpy's derivative, which has the opposite sign where
# Re z < 0 (it flips the sign of its value there and of the derivative with it: -0.516 - 0.168j
# at -2 + 0.5j, by finite differences and NumPy, came out 0.516 + 0.168j)
@_with_derivative(lambda z: 1 / (sqrt(z - 1) * sqrt(z + 1)))  # (xp's sqrt: the side of a signed zero)
def acosh(z: Any) -> Any:
    a, b = _parts(z)
    if z.dtype == jnp.complex64:  # acosh z = |Im acos z| + i sign(b) Re acos z
        acos_z = float32.complex_acos(z)
        r = lax.complex(jnp.abs(jnp.imag(acos_z)), jnp.copysign(jnp.real(acos_z), b))
    else:
        r = jnp.arccosh(z)
    angle = jnp.where(a < 0, 3 * PI / 4, PI / 4)
    return _override(
        jnp.abs(r.real),
        _signed_like(r.imag, b),
        [
            (_isnan(a) | _isnan(b), NAN, NAN),  # the large-|z| formula would give a finite part
            ((a == 0) & (b == 0), 0.0, _copysign(PI / 2, b)),  # "+/-0 and +0 -> +0 + pi j/2"
            ((a == 0) & _isnan(b), NAN, PI / 2),  # "+0 and NaN -> NaN +/- pi j/2"
            (_isinf(a) & _finite(b), INF, _copysign(jnp.where(a < 0, PI, 0.0), b)),
            (_isinf(a) & _isnan(b), INF, NAN),  # "+/-infinity and NaN -> +infinity + NaN j"
            (_isnan(a) & _isinf(b), INF, NAN),  # "NaN and +infinity -> +infinity + NaN j"
            (_finite(a) & _isinf(b), INF, _copysign(PI / 2, b)),  # "finite and +infinity -> +infinity + pi j/2"
            (_isinf(a) & _isinf(b), INF, _copysign(angle, b)),  # "-/+infinity and +infinity -> 3pi/4, pi/4"
        ],
    )


@_real_or(_float32_or(float32.asinh, jnp.arcsinh))
@_with_derivative(lambda z: 1 / sqrt(1 + z * z))  # (jax.numpy's takes XLA's complex rsqrt)
def asinh(z: Any) -> Any:
    a, b = _parts(z)
    r = float32.complex_asinh(z) if z.dtype == jnp.complex64 else jnp.arcsinh(z)
    return _override(
        _signed_like(r.real, a),
        r.imag,
        [
            (_isnan(a) | _isnan(b), NAN, NAN),  # the large-|z| formula would give a finite part
            ((a == 0) & (b == 0), a, b),  # "+0 and +0 -> +0 + 0j"
            (_finite(a) & _isinf(b), _copysign(INF, a), _copysign(PI / 2, b)),  # "-> +infinity + pi j/2"
            (_isinf(a) & _finite(b), a, _copysign(0.0, b)),  # "+infinity and finite b -> +infinity + 0j"
            (_isinf(a) & _isinf(b), a, _copysign(PI / 4, b)),  # "-> +infinity + pi j/4"
            (_isinf(a) & _isnan(b), a, NAN),
            (_isnan(a) & (b == 0), NAN, b),  # "NaN and +0 -> NaN + 0j"
            (_isnan(a) & _isinf(b), INF, NAN),  # "NaN and +infinity -> +/-infinity + NaN j"
        ],
    )


@_real_or(_float32_or(float32.atanh, jnp.arctanh))
@_with_derivative(lambda z: 1 / ((1 + z) * (1 - z)))  # (as JAX's rule: accurate near +/-1)
def atanh(z: Any) -> Any:
    a, b = _parts(z)
    # jax's formula overflows near the branch points +/-1 (atanh(1 + 1e-178j) is finite);
    # away from 0, 0.5 * (log(1 + z) - log(1 - z)) is accurate, with 1 +/- z formed by parts so
    # that the sign of a zero imaginary part survives.
    by_logs = 0.5 * (_complex_log(lax.complex(1 + a, b)) - _complex_log(lax.complex(1 - a, -b)))
    near_zero = float32.complex_atanh_near_zero(a, b) if z.dtype == jnp.complex64 else jnp.arctanh(z)
    r = jnp.where(jnp.abs(z) < 0.5, near_zero, by_logs)
    either_nan = _isnan(a) | _isnan(b)
    return _override(
        _signed_like(r.real, a),
        _signed_like(r.imag, b),
        [
            (either_nan, NAN, NAN),  # "NaN in a or b -> NaN + NaN j" unless a case below says otherwise
            ((a == 0) & (b == 0), a, b),  # "+0 and +0 -> +0 + 0j"
            ((a == 0) & _isnan(b), a, NAN),  # "+0 and NaN -> +0 + NaN j"
            ((jnp.abs(a) == 1) & (b == 0), _copysign(INF, a), b),  # "1 and +0 -> +infinity + 0j"
            (~_isnan(a) & _isinf(b), _copysign(0.0, a), _copysign(PI / 2, b)),  # "-> +0 + pi j/2"
            (_isinf(a) & _finite(b), _copysign(0.0, a), _copysign(PI / 2, b)),  # "+infinity, finite -> +0 + pi j/2"
            (_isinf(a) & _isnan(b), _copysign(0.0, a), NAN),  # "+infinity and NaN -> +0 + NaN j"
            (_isnan(a) & _isinf(b), 0.0, _copysign(PI / 2, b)),  # "NaN and +infinity -> +/-0 + pi j/2"
        ],
    )


@_real_or(jnp.arccos)
@_with_derivative(lambda z: -1 / sqrt(1 - z * z))  # (as asinh's)
def acos(z: Any) -> Any:
    a, b = _parts(z)
    r = float32.complex_acos(z) if z.dtype == jnp.complex64 else jnp.arccos(z)
    angle = jnp.where(a < 0, 3 * PI / 4, PI / 4)
    minus_inf_j = -_copysign(INF, b)  # the imaginary part is -infinity for b >= 0
    return _override(
        r.real,
        -_signed_like(r.imag, b),
        [
            (_isnan(a) | _isnan(b), NAN, NAN),  # the large-|z| formula would give a finite part
            ((a == 0) & (b == 0), PI / 2, -b),  # "+/-0 and +0 -> pi/2 - 0j"
            ((a == 0) & _isnan(b), PI / 2, NAN),  # "+/-0 and NaN -> pi/2 + NaN j"
            (_finite(a) & _isinf(b), PI / 2, minus_inf_j),  # "finite and +infinity -> pi/2 - infinity j"
            (_isinf(a) & _finite(b), jnp.where(a < 0, PI, 0.0), minus_inf_j),  # "-> pi (or +0) - infinity j"
            (_isinf(a) & _isinf(b), angle, minus_inf_j),  # "-> 3pi/4 (or pi/4) - infinity j"
            (_isinf(a) & _isnan(b), NAN, INF),  # "+/-infinity and NaN -> NaN +/- infinity j"
            (_isnan(a) & _isinf(b), NAN, minus_inf_j),  # "NaN and +infinity -> NaN - infinity j"
        ],
    )


# --- functions the standard defines through the ones above, for complex input --------------


@_real_or(jnp.arcsin)
def asin(z: Any) -> Any:
    return _times_minus_i(asinh(_times_i(z)))  # -1j * asinh(x*1j)


@_real_or(jnp.arctan)
def atan(z: Any) -> Any:
    return _times_minus_i(atanh(_times_i(z)))  # -1j * atanh(x*1j)


@_real_or(jnp.sin)
def sin(z: Any) -> Any:
    return _times_minus_i(sinh(_times_i(z)))  # -1j * sinh(x*1j)


@_real_or(jnp.cos)
def cos(z: Any) -> Any:
    return cosh(_times_i(z))  # cosh(x*1j)


@_real_or(jnp.tan)
def tan(z: Any) -> Any:
    return _times_minus_i(tanh(_times_i(z)))  # -1j * tanh(x*1j)


# --- other functions ------------------------------------------------------------------------


def real(x: Any) -> Any:
    return jnp.real(x) if x.dtype.kind == "c" else x


def imag(x: Any) -> Any:
    return jnp.imag(x) if x.dtype.kind == "c" else jnp.zeros_like(x)


def reciprocal(x: Any) -> Any:
    """``1.0 / x``, whose special cases are division's."""
    return divide(jnp.ones((), x.dtype), x)


def sign(x: Any) -> Any:
    """-1, 0 or +1 (0 is +0, NaN stays NaN); ``x / |x|`` for complex, 0 at 0 and NaN with a NaN."""
    if x.dtype.kind == "c":
        a, b = _parts(x)
        r = jnp.sign(x)
        return _override(r.real, r.imag, [((a == 0) & (b == 0), 0.0, 0.0), (_isnan(a) | _isnan(b), NAN, NAN)])
    if x.dtype.kind == "f":
        return jnp.where(x == 0, jnp.zeros((), x.dtype), jnp.sign(x))
    return jnp.sign(x)


def signbit(x: Any) -> Any:
    """Whether the sign bit is set, read from the bits (so -NaN and -0 count)."""
    if x.dtype.kind == "f":
        bits = lax.bitcast_convert_type(x, jnp.int32 if x.dtype.itemsize == 4 else jnp.int64)
        return bits < 0
    return x < 0


def floor_divide(x1: Any, x2: Any) -> Any:
    """``floor(x1 / x2)``; for finite, non-zero floating operands the remainder-based quotient
    of Python's ``//`` (so that ``x1 == x2 * (x1 // x2) + x1 % x2`` as nearly as rounding allows)."""
    if x1.dtype.kind != "f":
        # integer division by zero, which the standard leaves to the library: 0, as NumPy gives
        # (XLA's quotient is -1, or the largest unsigned value, and jax.numpy's floor fix-up
        # turns -1 into -2 where x1 is not 0); x1 % 0 is 0 already
        return jnp.where(x2 == 0, jnp.zeros((), x1.dtype), jnp.floor_divide(x1, x2))
    result = _quotient(x1, x2)
    # also where the quotient rounds to zero: its sign must be the operands' sign product
    special = ~_finite(x1) | ~_finite(x2) | (x1 == 0) | (x2 == 0) | (result == 0)
    return jnp.where(special, jnp.floor(divide(x1, x2)), result)


def _quotient(x1: Any, x2: Any) -> Any:
    """CPython's float floor division: (x1 - fmod(x1, x2)) / x2 is an integer but for rounding,
    one less where the remainder's sign is not x2's. It is brought to the integer by flooring, and
    one is added back only above a half. (jax.numpy rounds it half away from zero instead, which
    is one too many where the rounded quotient is an odd multiple of 1/2, as it is for quotients
    between 2**51 and 2**52: -1e16 // -3.0 gave 3333333333333334.0, above -1e16 / -3.0.)"""
    mod = jnp.fmod(x1, x2)  # (exact)
    quotient = divide(x1 - mod, x2)
    quotient = jnp.where((mod != 0) & ((x2 < 0) != (mod < 0)), quotient - 1, quotient)
    floor = jnp.floor(quotient)
    return jnp.where(quotient - floor > 0.5, floor + 1, floor)


def remainder(x1: Any, x2: Any) -> Any:
    """``x1 - floor_divide(x1, x2) * x2`` with the sign of ``x2``; a zero result takes x2's sign."""
    result = jnp.remainder(x1, x2)
    if x1.dtype.kind != "f":
        return result
    return remainder_by_infinity_and_zero(x1, x2, result)


def remainder_by_infinity_and_zero(x1: Any, x2: Any, result: Any) -> Any:
    """``result``, XLA's floating remainder, with the standard's cases for an infinite ``x2`` and
    for a zero result made exact."""
    # "x1_i is a positive finite number and x2_i is +infinity: x1_i; ... negative ... : x2_i" and
    # the mirror cases for -infinity: x1 where the signs agree, else x2; a zero x1 stays zero
    # (its sign is x2's, below). XLA:TPU gives NaN for all of these.
    finite_by_infinite = _finite(x1) & _isinf(x2)
    kept = (x1 == 0) | ((x1 > 0) == (x2 > 0))
    result = jnp.where(finite_by_infinite, jnp.where(kept, x1, x2), result)
    return jnp.where(result == 0, jnp.copysign(jnp.zeros((), x1.dtype), x2), result)


def left_shift(x1: Any, x2: Any) -> Any:
    return jnp.left_shift(x1, x2)


def right_shift(x1: Any, x2: Any) -> Any:
    return jnp.right_shift(x1, x2)
