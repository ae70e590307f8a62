"""The exponential, logarithmic and hyperbolic functions of float32 (and of complex64, from its
float32 parts) at float32's accuracy on every backend.

XLA:TPU's default float32 ``exp``, ``expm1``, ``log``, ``log1p`` and ``tanh`` are fast
approximations: relative errors up to 4e-4 for ``log`` (about 12 correct bits), 1e-4 for
``expm1``, 6e-6 for ``exp`` (docs/accelerators.md, "Accuracy"), and jax.numpy's ``log2``,
``log10``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh`` and ``logaddexp`` are built on them
there. JAX's ``accuracy`` argument asks XLA for its most accurate implementation instead (a few
units in the last place), which the CPU gives either way; on a TPU it costs more arithmetic, and no
time where reading and writing the values bounds a call (bench/RESULTS.md, ``precision-tpu``). The
functions here are the real float32 computations of the standard built only from those requests
and from exact or correctly rounded operations, so that float32 means float32 wherever the program
runs; each keeps jax.numpy's special values (NaN, infinities, signed zeros) and its
derivative (the formulas' branches would give wrong derivatives at their edges, so the ones
assembled from branches carry the analytic derivative as a custom JVP, as JAX's own rules do).

XLA's algebraic simplifier rewrites some forms into new operations that do not carry the request
(``exp(a) * exp(b)`` into ``exp(a + b)``, ``x / exp(y)`` into ``x * exp(-y)``, a ``logistic`` into
``1 / (1 + exp(-x))``): the formulas here avoid those forms, and tests/test_float32_accuracy.py checks
the compiled programs, derivatives included, for any operation left at the default accuracy.

complex64's ``exp``, ``expm1``, ``log``, ``log1p``, ``tanh``, ``acos``, ``asinh`` and ``atanh``
near 0 are formed here from those float32 functions of their parts (below); float64 and complex128
keep jax.numpy's functions: the CPU's are accurate, and XLA:TPU has no accurate float64
implementation to ask for.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

HIGHEST = lax.AccuracyMode.HIGHEST
LN2 = math.log(2.0)
LN10 = math.log(10.0)
LARGE = 2.0**12
"""Above this, ``1 + t*t`` is ``t*t`` in float32 (and ``asinh(t)``, ``acosh(t)`` are ``log(2t)``)."""
SATURATED = 20.0
"""Above this, ``exp(-t)`` is below float32's rounding of ``exp(t)``."""
HALF_E = math.e / 2
"""``exp(t) / 2 = exp(t - 1) * e / 2``: ``t - 1`` is exact for ``t`` at least 1, and ``exp(t - 1)``
stays finite where ``sinh(t)`` and ``cosh(t)`` do (``exp(t)`` overflows first)."""
TANH_SATURATED = 9.1
"""Above this, ``tanh(t)`` rounds to 1 in float32 (from 9.0109); XLA:TPU's accurate ``tanh`` gives
the float below 1 even at infinity."""


def exp(x: Any) -> Any:
    return lax.exp(x, accuracy=HIGHEST)


def expm1(x: Any) -> Any:
    return keeping_zeros(x, lax.expm1(x, accuracy=HIGHEST))


def log(x: Any) -> Any:
    return lax.log(x, accuracy=HIGHEST)


def log1p(x: Any) -> Any:
    return keeping_zeros(x, lax.log1p(x, accuracy=HIGHEST))


def log2(x: Any) -> Any:
    return log(x) / LN2


def log10(x: Any) -> Any:
    return log(x) / LN10


def split(x: Any) -> tuple[Any, Any]:
    """float32 ``x`` as ``high + low`` exactly, ``high`` its 12 leading significant bits (the sign
    and exponent kept, the lower mantissa bits cleared): the product of two such highs is exact,
    which double-float products (xp/_float32_pow.py) and exact squares rely on."""
    high = lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint32) & jnp.uint32(0xFFFFF000), jnp.float32)
    return high, x - high


def keeping_zeros(x: Any, result: Any) -> Any:
    """``result`` with ``x``'s zeros kept, sign and all, for the odd functions that are 0 at 0
    (XLA:TPU's ``expm1`` gives ``+0.0`` for ``-0.0``)."""
    return jnp.where(x == 0, x, result)


HUGE_DIVISOR = 2.0**100
"""XLA:TPU divides by multiplying with the divisor's reciprocal, which loses float32's accuracy
for divisors above this (1e-5 relative error from 2**109: the reciprocal nears the bottom of the
normal range) and is flushed to 0 past 2**126 (``1e38 / 2e38`` came out 0, ``arctan2(1e38,
-2e38)`` ``pi``). Operands are scaled by :data:`DIVISOR_SCALE` first where the divisor is that
large: exact, and where the scaled dividend falls below the normal range the quotient is below it
too (on the CPU the results are the same bits)."""

DIVISOR_SCALE = 2.0**-32


def largest_part(x: Any) -> Any:
    """The larger magnitude of a complex number's parts (the magnitude of a real one): what
    decides whether it is near the ends of the float range (no overflow, unlike ``abs``)."""
    if jnp.iscomplexobj(x):
        return jnp.maximum(jnp.abs(jnp.real(x)), jnp.abs(jnp.imag(x)))
    return jnp.abs(x)


def _scaled(huge: Any, *operands: Any) -> tuple[Any, ...]:
    scale = jnp.where(huge, DIVISOR_SCALE, 1.0).astype(jnp.float32)
    return tuple(x * scale for x in operands)


def divide(x1: Any, x2: Any) -> Any:
    """``x1 / x2``, of float32 or complex64, with divisors past :data:`HUGE_DIVISOR` scaled."""
    x1, x2 = _scaled(largest_part(x2) > HUGE_DIVISOR, x1, x2)
    return x1 / x2


def atan2(x1: Any, x2: Any) -> Any:
    """``arctan2(x1, x2)`` (the angle does not change when both are scaled), operands past
    :data:`HUGE_DIVISOR` scaled."""
    x1, x2 = _scaled(jnp.maximum(jnp.abs(x1), jnp.abs(x2)) > HUGE_DIVISOR, x1, x2)
    return jnp.arctan2(x1, x2)


def hypot(x1: Any, x2: Any) -> Any:
    """``sqrt(x1**2 + x2**2)`` as jax.numpy computes it (the larger magnitude times
    ``sqrt(1 + ratio**2)``; infinite where either is, NaN or not), the ratio from :func:`divide`."""
    x1, x2 = jnp.abs(x1), jnp.abs(x2)
    infinite = jnp.isposinf(x1) | jnp.isposinf(x2)
    larger, smaller = jnp.maximum(x1, x2), jnp.minimum(x1, x2)
    ratio = divide(smaller, jnp.where(larger == 0, jnp.ones_like(larger), larger))
    result = jnp.where(larger == 0, larger, larger * jnp.sqrt(1 + ratio * ratio))
    return jnp.where(infinite, jnp.inf, result)


def with_tangent(tangent: Callable[[Any, Any], Any]) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Decorator: the unary formula as a custom JVP whose tangent at ``x`` along ``dx`` is
    ``tangent(x, dx)`` (also how xp/_special_cases.py gives its complex computations jax.numpy's
    derivatives)."""

    def decorate(formula: Callable[[Any], Any]) -> Callable[[Any], Any]:
        function = jax.custom_jvp(formula)

        def jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
            (x,), (dx,) = primals, tangents
            return function(x), tangent(x, dx)

        function.defjvp(jvp)
        return function

    return decorate


def _exp_halved(t: Any) -> Any:
    """``exp(t) / 2`` for ``t`` at least 0, finite up to ``sinh``'s and ``cosh``'s range, in one
    exponential: ``exp(t) * 0.5`` (exact) below :data:`SATURATED`, ``exp(t - 1) * e / 2`` above."""
    above = t >= SATURATED
    return exp(jnp.where(above, t - 1, t)) * jnp.where(above, HALF_E, 0.5)


def _sinh_tangent(x: Any, dx: Any) -> Any:  # (named: sinh and cosh refer to each other)
    return cosh(x) * dx


def _cosh_tangent(x: Any, dx: Any) -> Any:
    return sinh(x) * dx


@with_tangent(_sinh_tangent)
def sinh(x: Any) -> Any:
    t = jnp.abs(x)
    e = expm1(jnp.minimum(t, 1.0))  # below 1, (e + e / (e + 1)) / 2 with e = expm1(t): no cancellation
    below_one = 0.5 * (e + e / (e + 1))
    # from 1, two exponentials rather than a reciprocal of one, which XLA would rewrite (the module's
    # docstring); from SATURATED on exp(-t) / 2 is below half an ulp of the first, left out (a fused
    # multiply-add of the two would round the product differently)
    halved = _exp_halved(t)
    magnitude = jnp.where(t < 1, below_one, jnp.where(t < SATURATED, halved - 0.5 * exp(-t), halved))
    return jnp.copysign(magnitude, x)


@with_tangent(_cosh_tangent)
def cosh(x: Any) -> Any:
    t = jnp.abs(x)
    halved = _exp_halved(t)
    return jnp.where(t < SATURATED, halved + 0.5 * exp(-t), halved)


def _tanh_tangent(x: Any, dx: Any) -> Any:
    # 1 / cosh(x)^2 = 4e / (1 + e)^2 with e = exp(-2|x|): no cancellation, unlike 1 - tanh(x)^2 in
    # the tails; JAX's own rule goes through `logistic`, which XLA expands at the default accuracy
    e = exp(-2 * jnp.abs(x))
    return 4 * e / ((1 + e) * (1 + e)) * dx


@with_tangent(_tanh_tangent)
def tanh(x: Any) -> Any:
    saturated = jnp.abs(x) > TANH_SATURATED
    return jnp.where(saturated, jnp.copysign(1.0, x), keeping_zeros(x, lax.tanh(x, accuracy=HIGHEST)))


@with_tangent(lambda x, dx: lax.rsqrt(x * x + 1) * dx)
def asinh(x: Any) -> Any:
    t = jnp.abs(x)
    large = t > LARGE
    s = jnp.where(large, 0.0, t)
    # asinh(t) = log1p(t + sqrt(1 + t*t) - 1), written without the cancellation
    moderate = log1p(s + s * s / (1 + jnp.sqrt(1 + s * s)))
    return jnp.copysign(jnp.where(large, log(t) + LN2, moderate), x)


@with_tangent(lambda x, dx: lax.rsqrt((x - 1) * (x + 1)) * dx)
def acosh(x: Any) -> Any:
    large = x > LARGE
    y = jnp.where(large, 0.0, x - 1)  # exact near 1, where the cancellation would be
    moderate = log1p(y + jnp.sqrt(y * (y + 2)))
    return jnp.where(x < 1, math.nan, jnp.where(large, log(x) + LN2, moderate))


@with_tangent(lambda x, dx: dx / ((1 - x) * (1 + x)))
def atanh(x: Any) -> Any:
    t = jnp.abs(x)
    # fdlibm's split: 2t / (1 - t) = 2t + 2t*t / (1 - t), the second form the more accurate below 1/2
    ratio = jnp.where(t < 0.5, 2 * t + 2 * t * t / (1 - t), 2 * t / (1 - t))
    return jnp.copysign(0.5 * log1p(ratio), x)


@jax.custom_jvp
def logaddexp(x1: Any, x2: Any) -> Any:
    delta = x1 - x2
    # NaN delta: a NaN operand, or infinities of one sign, whose sum is the result
    return jnp.where(jnp.isnan(delta), x1 + x2, jnp.maximum(x1, x2) + log1p(exp(-jnp.abs(delta))))


def _zero_for_infinity(v: Any) -> Any:
    return jnp.where(v == math.inf, 0.0, v)


@logaddexp.defjvp
def _logaddexp_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    # d/dx1 = exp(x1 - out), d/dx2 = exp(x2 - out), with +infinity as 0 (inf - inf would be NaN:
    # the operand that is +infinity gets all of the derivative), as JAX's rule has it
    (x1, x2), (dx1, dx2) = primals, tangents
    out = logaddexp(x1, x2)
    weight1 = exp(_zero_for_infinity(x1) - _zero_for_infinity(out))
    weight2 = exp(_zero_for_infinity(x2) - _zero_for_infinity(out))
    return out, dx1 * weight1 + dx2 * weight2


# --- complex64, from float32 parts ----------------------------------------------------------------
#
# XLA computes complex64 ``exp`` and ``log`` from the float32 ones of their parts, the approximate
# ones on a TPU. Asking for accuracy on the complex operation is no cure (on the CPU it makes
# complex64 ``log`` less accurate: docs/accelerators.md), so these are formed from the parts here.


def complex_exp(z: Any) -> Any:
    """``exp(a) * (cos(b) + i sin(b))``; above ``a = 88`` as ``exp(a/2) * cis(b) * exp(a/2)``, finite
    wherever the result is (``exp(a)`` alone would overflow first)."""
    a, b = jnp.real(z), jnp.imag(z)
    whole, half = exp(jnp.minimum(a, 88.0)), exp(0.5 * a)
    cosine, sine = jnp.cos(b), jnp.sin(b)
    below = a <= 88.0
    return lax.complex(
        jnp.where(below, whole * cosine, half * cosine * half), jnp.where(below, whole * sine, half * sine * half)
    )


HUGE = 2.0**64
"""complex64 ``log`` scales parts above this by ``1 / HUGE`` (exactly): see :data:`HUGE_DIVISOR`."""


@with_tangent(lambda z, dz: dz / z)
def complex_log(z: Any) -> Any:
    """``log|z| + i arg(z)``, ``log|z|`` without overflow and, near ``|z| = 1``, without cancellation:
    ``log1p(|z|^2 - 1) / 2`` with ``|z|^2 - 1 = (m - 1)(m + 1) + n^2`` (``m`` the larger part's
    magnitude, exact where it matters)."""
    huge = largest_part(z) > HUGE
    a, b = (jnp.where(huge, part / HUGE, part) for part in (jnp.real(z), jnp.imag(z)))
    larger, smaller = jnp.maximum(jnp.abs(a), jnp.abs(b)), jnp.minimum(jnp.abs(a), jnp.abs(b))
    ratio = smaller / jnp.where(larger == 0, 1.0, larger)
    far = log(larger) + 0.5 * log1p(ratio * ratio) + jnp.where(huge, math.log(HUGE), 0.0)
    near = 0.5 * log1p((larger - 1) * (larger + 1) + smaller * smaller)
    squared = larger * larger + smaller * smaller
    return lax.complex(jnp.where(~huge & (squared > 0.5) & (squared < 2.0), near, far), jnp.arctan2(b, a))


def complex_expm1(z: Any) -> Any:
    """``exp(z) - 1`` without cancellation near 0: ``expm1(a) cos(b) - 2 sin(b/2)^2 + i exp(a) sin(b)``
    (beyond ``a = 88``, where 1 is below the rounding, :func:`complex_exp`'s minus 1)."""
    a, b = jnp.real(z), jnp.imag(z)
    whole = complex_exp(z)
    half_sine = jnp.sin(0.5 * b)
    near = expm1(jnp.minimum(a, 88.0)) * jnp.cos(b) - 2 * half_sine * half_sine
    near = jnp.where((a == 0) & (b == 0), 0.0, near)  # +0 at -0 + 0j too, as the standard has it
    return lax.complex(jnp.where(a <= 88.0, near, jnp.real(whole) - 1), jnp.imag(whole))


def complex_tanh(z: Any) -> Any:
    """Kahan's formula, from ``t = tan(b)``, ``s = sinh(a)``: ``(s sqrt(1 + s^2) (1 + t^2) + i t) /
    (1 + s^2 (1 + t^2))`` (the caller sets the result where ``|a|`` saturates it, as ``s^2``
    overflows there)."""
    a, b = jnp.real(z), jnp.imag(z)
    t, s = jnp.tan(b), sinh(a)
    beta = 1 + t * t
    rho = jnp.sqrt(1 + s * s)
    denominator = 1 + beta * s * s
    return lax.complex(beta * rho * s / denominator, t / denominator)


ASIN_A_CROSSOVER = 1.5
ASIN_B_CROSSOVER = 0.6417
"""Hull, Fairgrieve and Tang's crossovers ("Implementing the complex arcsine and arccosine functions
using exception handling", ACM TOMS 23, 1997): where ``A`` (half the sum of the distances to +-1)
and ``B = x / A`` switch between the direct formulas and the ones that avoid their cancellation."""
ASIN_LARGE = 2.0**60
"""Above this part, ``A`` is ``|z|`` and ``(A - 1)(A + 1)`` would overflow: ``asin z`` is
``atan2(x, y) + i log(2|z|)``."""
ASIN_SMALL = 2.0**-30
"""Below this part, ``asin z`` is ``z`` (the next term, ``z**3 / 6``, is below 2**-60 of it)."""


def _ratio(numerator: Any, denominator: Any) -> Any:
    """``numerator / denominator``, 0 where both are 0 (the formulas' limits there)."""
    return jnp.where(denominator == 0, 0.0, numerator / jnp.where(denominator == 0, 1.0, denominator))


def asin_parts(x: Any, y: Any) -> tuple[Any, Any, Any]:
    """For float32 ``x, y >= 0``: the real parts of ``asin(x + iy)`` and ``acos(x + iy)`` and
    the magnitude of their imaginary part (``asin``'s is ``+``, ``acos``'s ``-``), by Hull,
    Fairgrieve and Tang's algorithm from the accurate ``log`` and ``log1p`` (XLA's complex
    ``asin`` is the same algorithm on the operations XLA:TPU approximates)."""
    large = jnp.maximum(x, y) > ASIN_LARGE
    small = jnp.maximum(x, y) < ASIN_SMALL
    xs, ys = (jnp.where(large | small, 0.5, part) for part in (x, y))
    r, s = hypot(xs + 1, ys), hypot(xs - 1, ys)
    a = 0.5 * (r + s)
    b = xs / a
    y2, apx, left = ys * ys, a + xs, xs <= 1
    # the real parts: asin(B), acos(B) where B is small, else the arctangents of their ratios
    # with the cancelling differences (A - x, ...) written as sums
    opposite = jnp.where(
        left,
        jnp.sqrt(0.5 * apx * (_ratio(y2, r + xs + 1) + (s + (1 - xs)))),
        ys * jnp.sqrt(0.5 * (apx / (r + xs + 1) + apx / (s + (xs - 1)))),
    )
    direct = b <= ASIN_B_CROSSOVER
    asin_real = jnp.where(direct, jnp.arcsin(jnp.minimum(b, 1.0)), atan2(xs, opposite))
    acos_real = jnp.where(direct, jnp.arccos(jnp.minimum(b, 1.0)), atan2(opposite, xs))
    # the imaginary part, log(A + sqrt(A**2 - 1)), near A = 1 as log1p of A - 1 written as a sum
    a_minus_1 = 0.5 * jnp.where(
        left, _ratio(y2, r + xs + 1) + _ratio(y2, s + (1 - xs)), _ratio(y2, r + xs + 1) + (s + (xs - 1))
    )
    imag = jnp.where(
        a <= ASIN_A_CROSSOVER,
        log1p(a_minus_1 + jnp.sqrt(a_minus_1 * (a + 1))),
        log(a + jnp.sqrt((a - 1) * (a + 1))),
    )
    # |z| beyond ASIN_LARGE: A is |z|; below ASIN_SMALL: asin z = z
    modulus_log = jnp.real(complex_log(lax.complex(x, y)))
    asin_real = jnp.where(large, atan2(x, y), jnp.where(small, x, asin_real))
    acos_real = jnp.where(large, atan2(y, x), jnp.where(small, jnp.float32(math.pi / 2) - x, acos_real))
    imag = jnp.where(large, modulus_log + jnp.float32(LN2), jnp.where(small, y, imag))
    return asin_real, acos_real, imag


def complex_log1p(z: Any) -> Any:
    """log1p of complex64 ``z = a + bj`` away from -1, ``log|1 + z| + i atan2(b, 1 + a)``, with
    ``log|1 + z|`` as ``log1p(a (2 + a) + b**2) / 2`` from XLA's accurate float32 ``log1p`` (XLA:TPU's
    complex ``log1p`` is built on its approximate one), or for large parts, where the square
    overflows, as ``log`` of ``hypot(1 + a, b)``. (xp/_special_cases.py's ``log1p`` takes ``log|1 + z|``
    from ``|1 + z|`` itself near -1.)"""
    a, b = jnp.real(z), jnp.imag(z)
    large = jnp.maximum(jnp.abs(a), jnp.abs(b)) > 2.0**60
    small_a, small_b = jnp.where(large, 0.0, a), jnp.where(large, 0.0, b)
    moderate = 0.5 * log1p(small_a * (2 + small_a) + small_b * small_b)
    return lax.complex(jnp.where(large, log(hypot(a + 1, b)), moderate), jnp.arctan2(b, a + 1))


def complex_acos(z: Any) -> Any:
    """acos of complex64 ``z`` from :func:`asin_parts` (XLA's formulas are built on the float32
    logarithms XLA:TPU approximates): ``acos(-z) = pi - acos(z)`` and ``acos(conj z) = conj(acos z)``
    carry the first quadrant's to the others. The special values are xp/_special_cases.py's."""
    a, b = jnp.real(z), jnp.imag(z)
    _, real, imag = asin_parts(jnp.abs(a), jnp.abs(b))
    return lax.complex(jnp.where(jnp.signbit(a), math.pi - real, real), -jnp.copysign(imag, b))


def complex_asinh(z: Any) -> Any:
    """asinh of complex64 ``z`` as ``-1j * asin(1j * z)``, from :func:`asin_parts`."""
    a, b = jnp.real(z), jnp.imag(z)
    real, _, imag = asin_parts(jnp.abs(b), jnp.abs(a))
    return lax.complex(jnp.copysign(imag, a), jnp.copysign(real, b))


def complex_atanh_near_zero(a: Any, b: Any) -> Any:
    """atanh(a + bj) of complex64 for ``|z| < 1/2``: ``log1p(4a / ((1 - a)**2 + b**2)) / 4 +
    atan2(2b, (1 - a)(1 + a) - b**2) j / 2`` (Kahan's), from XLA's accurate float32 ``log1p``
    (XLA:TPU's complex ``atanh`` is built on its approximate one); no term cancels there. For
    ``a < 0``, the odd symmetry (``log1p`` of ``4|a| / ...`` is well conditioned, of ``-4|a| / ...``
    not: 10 ulps at ``-0.49``)."""
    m = jnp.abs(a)
    real = 0.25 * log1p(4 * m / ((1 - m) * (1 - m) + b * b))
    return lax.complex(jnp.copysign(real, a), 0.5 * jnp.arctan2(2 * b, (1 - m) * (1 + m) - b * b))
