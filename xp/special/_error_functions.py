"""``xp.special``: the error functions and the normal and logistic distributions (``erf``,
``erfc``, ``erfcx``, ``erfinv``, ``ndtr``, ``log_ndtr``, ``ndtri``, ``expit``, ``logit``).

float32's ``erfc``, ``erfcx``, ``ndtr``, ``erfinv`` and ``ndtri`` are xp's own, on xp's accurate
exponentials and logarithms (JAX's lower into XLA's, which XLA:TPU approximates): a continued
fraction for ``erfc`` and ``erfcx``, Giles' approximation for the inverses.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from xp import _double_float as double_float
from xp import _float32_accuracy as float32
from xp.special._kernel import Kernel, const, exp, expm1, log, log1p, polynomial, safe

_FRACTION_FROM = 0.5
"""From here on erfc and erfcx of float32 are Laplace's continued fraction; below, 1 - erf."""
_FRACTION_TERMS = 200
"""Of the continued fraction, evaluated from the tail: 8e-9 relative at 0.5, 6e-13 at 0.75."""


def _exp_of_square(x: Any, sign: float) -> Any:
    """exp(sign * x**2) of float32 ``x`` (``sign`` a power of two, its sign), with ``x**2`` exact:
    ``x = high + low`` with ``high`` of 12
    significant bits, so that ``high**2`` is exact (rounding ``x**2`` moves the result by ``2 x**2``
    epsilons: 1e-5 at x = 9), and the rest in a second factor."""
    high, low = float32.split(x)
    # e (1 + expm1(r)), not exp(a) * exp(r): XLA's simplifier would rewrite the product of two
    # exponentials into one exponential of the rounded sum, without the accuracy request
    head = exp(sign * (high * high))
    return head + head * expm1(sign * (low * (2 * high + low)))


def _laplace_fraction(x: Any, terms: int, unroll: bool = False) -> Any:
    """t = x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))) to ``terms`` terms, evaluated from the tail:
    erfcx(x) = 1 / (sqrt(pi) t)."""
    return lax.fori_loop(0, terms, lambda i, t: x + (terms - i) / 2 / t, x, unroll=unroll)


def _erfcx_fraction(x: Any) -> Any:
    """erfcx(x) by the continued fraction, for x >= 1/2."""
    return 1 / (const(x, np.sqrt(np.pi)) * _laplace_fraction(x, _FRACTION_TERMS))


def _erfc32(x: Any) -> Any:
    """erfc(x) of float32 ``x`` from xp's exponentials (XLA's erfc expands into an exponential that
    XLA:TPU approximates): ``1 - erf(x)`` for ``|x| < 1/2``, ``exp(-x**2) erfcx(|x|)`` beyond by
    the continued fraction (``2 -`` that below ``-1/2``)."""
    ax = jnp.abs(x)
    far = ax >= _FRACTION_FROM
    af = safe(far & (ax < np.inf), ax, 1.0)
    tail = _exp_of_square(af, -1.0) * _erfcx_fraction(af)
    tail = jnp.where(ax == np.inf, const(x, 0.0), tail)
    return jnp.where(far, jnp.where(x < 0, 2 - tail, tail), 1 - lax.erf(safe(~far, x, 0.0)))


@jax.custom_jvp
def erfc32(x: Any) -> Any:
    return _erfc32(x)


@erfc32.defjvp
def _erfc32_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    finite = jnp.isfinite(x)
    slope = const(x, -2 / np.sqrt(np.pi)) * _exp_of_square(safe(finite, x, 0.0), -1.0)
    return erfc32(x), jnp.where(finite, slope, const(x, 0.0)) * dx


def _erfcx32_value(x: Any) -> Any:
    """erfcx(x) of float32 ``x``: the continued fraction from 1/2, ``exp(x**2) erfc(x)`` below
    (``2 exp(x**2) - erfcx(-x)`` below -1/2: inf from about -9.4)."""
    far = jnp.abs(x) >= _FRACTION_FROM
    af = safe(far & jnp.isfinite(x), jnp.abs(x), 1.0)
    fraction = _erfcx_fraction(af)
    negative = 2 * _exp_of_square(af, 1.0) - fraction
    xn = safe(~far, x, 0.0)
    near = _exp_of_square(xn, 1.0) * (1 - lax.erf(xn))
    value = jnp.where(far, jnp.where(x < 0, negative, fraction), near)
    return jnp.where(x == np.inf, const(x, 0.0), jnp.where(x == -np.inf, const(x, np.inf), value))


@jax.custom_jvp
def _erfcx32(x: Any) -> Any:
    return _erfcx32_value(x)


_ERFCX32_SLOPE_ASYMPTOTIC_FROM = 5.0
"""From here on float32 erfcx's derivative is its asymptotic series (12 terms: within 1e-7 of it)."""


@_erfcx32.defjvp
def _erfcx32_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi), whose terms cancel as x grows (float32's
    # rounding times 2 x**2: 2e-3 off at x = 100); from 5 on the series of the same,
    # 2 / sqrt(pi) * sum over n >= 1 of (-1)**n (2n - 1)!! / (2 x**2)**n, a term of each sign
    (x,), (dx,) = primals, tangents
    value = _erfcx32(x)
    large = x >= _ERFCX32_SLOPE_ASYMPTOTIC_FROM
    xl = safe(large & (x < np.inf), x, _ERFCX32_SLOPE_ASYMPTOTIC_FROM)
    w = (0.5 / xl) / xl
    asymptotic = const(x, 2 / np.sqrt(np.pi)) * w * polynomial(_ERFCX_TERMS[1:13], w)
    slope = jnp.where(large, asymptotic, 2 * x * value - const(x, 2 / np.sqrt(np.pi)))
    return value, jnp.where(x == np.inf, const(x, 0.0), slope) * dx


def erfc(x: Any) -> Any:
    """JAX's erfc, or xp's for float32 (:func:`erfc32`)."""
    return erfc32(x) if x.dtype == np.float32 else jss.erfc(x)


def ndtr(x: Any) -> Any:
    """The standard normal distribution function: JAX's, or for float32 JAX's formula
    (``(1 + erf(x / sqrt 2)) / 2`` near 0, ``erfc(-x / sqrt 2) / 2`` beyond) with xp's erfc."""
    return _ndtr32(x) if x.dtype == np.float32 else jss.ndtr(x)


@jax.custom_jvp
def _ndtr32(x: Any) -> Any:
    z = x * const(x, np.sqrt(0.5))
    near = jnp.abs(z) < np.sqrt(0.5)
    return jnp.where(near, (1 + lax.erf(z)) / 2, erfc32(-z) / 2)


@_ndtr32.defjvp
def _ndtr32_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # the normal density exp(-x**2 / 2) / sqrt(2 pi)
    (x,), (dx,) = primals, tangents
    finite = jnp.isfinite(x)
    density = _exp_of_square(safe(finite, x, 0.0), -0.5) * const(x, 1 / np.sqrt(2 * np.pi))
    return _ndtr32(x), jnp.where(finite, density, const(x, 0.0)) * dx


ERF = Kernel("erf", ("z",), jss.erf)
ERFC = Kernel("erfc", ("x",), erfc)
# erfcx(x) ~ 1 / (x sqrt(pi)) * sum((-1)**k (2k - 1)!! / (2 x**2)**k): from x = 8 on, 16 terms
# reach 4e-17 (relative)
_ERFCX_ASYMPTOTIC_FROM = 8.0
_ERFCX_TERMS = tuple(float((-1) ** k * np.prod(np.arange(1, 2 * k, 2))) for k in range(17))


def erfcx(x: Any) -> Any:
    """exp(x**2) erfc(x). JAX's real erfcx is 0 in a band below its switch to an asymptotic
    form (26.54 <= x <= 26.64 in float64, 9.19 <= x <= 9.42 in float32): from x = 8 on the
    asymptotic series is used here."""
    if x.dtype.kind == "c":
        return jss.erfcx(x)
    if x.dtype == np.float32:
        return _erfcx32(x)
    large = x >= _ERFCX_ASYMPTOTIC_FROM
    xl = safe(large, x, _ERFCX_ASYMPTOTIC_FROM)
    asymptotic = polynomial(_ERFCX_TERMS, (0.5 / xl) / xl) / (xl * const(x, np.sqrt(np.pi)))
    return jnp.where(large, asymptotic, jss.erfcx(safe(~large, x, 0.0)))


ERFCX = Kernel("erfcx", ("x",), erfcx, complex=True)
# Giles' single-precision approximation of erfinv ("Approximating the erfinv function", GPU
# Computing Gems, 2011), in powers of w - 2.5 for w = -log((1 - y)(1 + y)) < 5 and of sqrt(w) - 3
# beyond
_ERFINV_CENTRAL = (
    1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
    -3.5233877e-06, 3.43273939e-07, 2.81022636e-08,
)  # fmt: skip
_ERFINV_TAIL = (
    2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844,
    0.00134934322, 0.000100950558, -0.000200214257,
)  # fmt: skip


@jax.custom_jvp
def _float32_erfinv(y: Any) -> Any:
    """erfinv of float32 ``y`` by Giles' approximation, from xp's logarithm and with
    ``(1 - y)(1 + y)`` (exact but for two roundings) for XLA's ``1 - y*y``, which near 1 loses
    the digits of the small difference (JAX's float32 erfinv is 6e-6 off at 0.99983)."""
    inside = jnp.abs(y) < 1
    value = _giles(-log(safe(inside, (1 - y) * (1 + y), 0.5)), y)
    edge = jnp.where(jnp.abs(y) == 1, jnp.copysign(const(y, np.inf), y), const(y, np.nan))
    return jnp.where(inside, value, edge)


def _giles(w: Any, y: Any) -> Any:
    """erfinv(y) from ``w = -log((1 - y)(1 + y))``, for float32 ``|y| < 1`` (``w`` below 16)."""
    central = polynomial(_ERFINV_CENTRAL, w - 2.5)
    tail = polynomial(_ERFINV_TAIL, jnp.sqrt(jnp.maximum(w, 5.0)) - 3)
    return jnp.where(w < 5, central, tail) * y


@_float32_erfinv.defjvp
def _float32_erfinv_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # d/dy erfinv(y) = sqrt(pi) / 2 exp(erfinv(y)**2)
    (y,), (dy,) = primals, tangents
    value = _float32_erfinv(y)
    return value, dy * const(y, math.sqrt(math.pi) / 2) * exp(value * value)


def _erfinv(y: Any) -> Any:
    return _float32_erfinv(y) if y.dtype == np.float32 else jss.erfinv(y)


ERFINV = Kernel("erfinv", ("y",), _erfinv)
NDTR = Kernel("ndtr", ("x",), ndtr)


def _log_ndtr(x: Any) -> Any:
    """log(ndtr(x)), in three ranges (JAX's log_ndtr is off by 3e-5 in float32 at x = 3.5 and
    by 2e-11 in float64 at x = -20):

    - x > 0: log1p(-ndtr(-x)), which keeps the precision of the small ndtr(-x);
    - -1 <= x <= 0: log(ndtr(x)), ndtr(x) being moderate;
    - x < -1: log(erfcx(-x / sqrt 2) / 2) - x**2 / 2, from ndtr(x) = erfc(-x / sqrt 2) / 2 and
      erfc(z) = erfcx(z) exp(-z**2), with no underflow for large -x.
    """
    positive, tail = x > 0, x < -1
    right = log1p(-ndtr(-safe(positive, x, 1.0)))
    centre = log(ndtr(safe(~positive & ~tail, x, 0.0)))
    left = _log_ndtr_left(safe(tail, x, -2.0))
    return jnp.where(positive, right, jnp.where(tail, left, centre))


def _log_ndtr_left(x: Any) -> Any:
    """log(ndtr(x)) for ``x < -1``."""
    return log(erfcx(-x * const(x, np.sqrt(0.5))) / 2) - x * x / 2


_NDTRI_FAR_TAIL = 2.0**-25
"""Below this ``p`` (and above ``1 - p``: float32 has no such ``p`` below 1), Giles' ``w`` passes
16, the end of his approximation: there ``ndtri`` is found by Newton's method on ``log ndtr``."""

_NDTRI_NEWTON_STEPS = 3
"""From the asymptotic start (2e-3 relatively off at p = 2**-25, less further out) Newton's
method doubles the correct digits each step."""

_NDTRI_FRACTION_TERMS = 12
"""Of the continued fraction in the Newton steps, whose argument ``-x / sqrt 2`` is above 3.5 there:
the fraction converges the faster the larger its argument (3e-11 relatively off at 3.5; the 200
terms of :data:`_FRACTION_TERMS` are for 1/2)."""


@jax.custom_jvp
def _float32_ndtri(p: Any) -> Any:
    """ndtri of float32 ``p`` from xp's logarithm: ``sqrt(2) erfinv(2p - 1)`` by Giles'
    approximation, with its ``w = -log(4 p (1 - p))`` formed from ``p`` (``2p - 1`` rounds to -1
    long before ``p`` reaches 0); below :data:`_NDTRI_FAR_TAIL`, Newton's method on ``log ndtr``
    from the asymptotic ``x**2 = L - log L - log(2 pi)``, ``L = -2 log p``."""
    inside = (p > 0) & (p < 1)
    q = safe(inside, p, 0.5)
    value = const(p, np.sqrt(2.0)) * _giles(-log(4 * q * (1 - q)), 2 * q - 1)
    far = q < _NDTRI_FAR_TAIL

    def with_far_tail(value: Any) -> Any:
        return jnp.where(far, _ndtri_far_tail(safe(far, q, 1e-30)), value)

    def on_cpu(value: Any) -> Any:
        # a conditional: most arrays have no element that far out, and Newton's steps cost more
        # than the rest of ndtri together
        return lax.cond(jnp.any(far), with_far_tail, lambda v: v, value)

    # (GPU and TPU conditionals read their predicate back to the host, as power_norm's in
    # xp/_statistical.py: there both are computed)
    value = lax.platform_dependent(value, cpu=on_cpu, default=with_far_tail)
    edge = jnp.where(p == 0, const(p, -np.inf), jnp.where(p == 1, const(p, np.inf), const(p, np.nan)))
    return jnp.where(inside, value, edge)


def _ndtri_far_tail(p: Any) -> Any:
    """ndtri of float32 ``p`` below :data:`_NDTRI_FAR_TAIL`: Newton's method on ``log ndtr``.

    With ``z = -x / sqrt 2``, ``ndtr(x) = erfcx(z) exp(-z**2) / 2`` and ``erfcx(z) = 1 / (sqrt(pi) t)``
    (:func:`_laplace_fraction`), so ``log ndtr(x) = -log(2 sqrt(pi) t) - x**2 / 2`` and its
    derivative, the density over ``ndtr(x)``, is ``sqrt(2) t``: each step takes the fraction alone,
    to few terms this far out, and no exponential (erfcx itself is evaluated through all its branches
    for every element, and to 200 terms: many times the rest of ndtri)."""
    log_p = log(p)
    big = -2 * log_p
    x = -jnp.sqrt(big - log(big) - const(p, np.log(2 * np.pi)))
    for _ in range(_NDTRI_NEWTON_STEPS):
        t = _laplace_fraction(-x * const(x, np.sqrt(0.5)), _NDTRI_FRACTION_TERMS, unroll=True)
        log_cdf = -log(const(x, 2 * np.sqrt(np.pi)) * t) - x * x / 2
        x = x - (log_cdf - log_p) / (const(x, np.sqrt(2.0)) * t)
    return x


@_float32_ndtri.defjvp
def _float32_ndtri_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # d/dp ndtri(p) = 1 / pdf(ndtri(p)) = sqrt(2 pi) exp(x**2 / 2)
    (p,), (dp,) = primals, tangents
    x = _float32_ndtri(p)
    return x, dp * const(p, np.sqrt(2 * np.pi)) * exp(x * x / 2)


def _ndtri(p: Any) -> Any:
    return _float32_ndtri(p) if p.dtype == np.float32 else jss.ndtri(p)


NDTRI = Kernel("ndtri", ("y",), _ndtri)


def _expit(x: Any) -> Any:
    # 1 / (1 + exp(-x)), and exp(x) / (1 + exp(x)) below 0 (no overflow), with xp's exponential
    # (JAX's expit is XLA's logistic, whose expansion on a TPU approximates the exponential)
    e = exp(jnp.where(x >= 0, -x, x))
    return jnp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _logit(p: Any) -> Any:
    # log(p / (1 - p)), as JAX's, with xp's logarithm: -inf at 0, inf at 1, NaN outside [0, 1];
    # within 1/4 of 1/2 as log1p((2p - 1) / (1 - p)), whose 2p - 1 and 1 - p are exact there
    # (the logarithm of a ratio near 1 loses the relative precision of its small result: 3e-3
    # off near 1/2)
    # (float32's quotients correctly rounded: XLA:TPU's division is up to 1.5e-7 off, which log1p
    # doubles near p = 0.27, where the quotient is -0.63: several ulps of the result)
    divide = double_float.quotient if p.dtype == np.float32 else jnp.divide
    near_half = jnp.abs(p - 0.5) < 0.25
    q = safe(near_half, p, 0.5)
    return jnp.where(near_half, log1p(divide(2 * q - 1, 1 - q)), log(divide(p, 1 - p)))


LOG_NDTR = Kernel("log_ndtr", ("x",), _log_ndtr)
EXPIT = Kernel("expit", ("x",), _expit)
LOGIT = Kernel("logit", ("x",), _logit)
