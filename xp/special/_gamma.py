"""``xp.special``: the gamma function and its relatives (beta, digamma, zeta, binomials).

Computed with ``jax.scipy.special`` where it agrees with SciPy; the rest, and the values JAX
gets wrong, are computed from the identities named in each function. Outside the domain in
which a function is computed (docs/special.md), the result is SciPy's limit where that is
cheap to state (``psi(0) = -inf``) and NaN otherwise, never another number.

float32's log gamma, psi and polygamma are xp's own (:func:`lgamma`, :func:`digamma`): JAX's
lower into logarithms and exponentials at XLA's default accuracy, which XLA:TPU approximates.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from xp import _double_float as double_float
from xp._double_float import reciprocal
from xp.special._elementary import sin_degrees
from xp.special._kernel import (
    Kernel,
    const,
    cosh,
    evaluated_once,
    exp,
    expm1,
    is_nonpositive_integer,
    log,
    log1p,
    polynomial,
    pow,
    safe,
    sinh,
)

# --- gamma ----------------------------------------------------------------------------------


def lgamma(x: Any) -> Any:
    """log|gamma(x)| of real ``x``: JAX's for float64; for float32 :func:`_float32_lgamma`, whose
    logarithms are xp's (XLA's lgamma expands into logarithms that XLA:TPU approximates)."""
    return _float32_lgamma(x) if x.dtype == np.float32 else jss.gammaln(x)


def digamma(x: Any) -> Any:
    """psi(x) of real ``x``: JAX's for float64, :func:`_float32_digamma` for float32 (as
    :func:`lgamma`)."""
    return _float32_digamma(x) if x.dtype == np.float32 else jss.digamma(x)


_FLOAT32_STIRLING_FROM = 8.0
"""From here on, Stirling's series of log gamma (and the asymptotic one of psi), below it the
recurrences to [1.5, 2.5)."""


def _float32_lgamma(x: Any) -> Any:
    """log|gamma(x)| of float32 ``x``, from xp's logarithms:

    - ``x >= 8``: Stirling's series;
    - ``1.5 <= x < 2.5``: the Taylor series at 2, ``u * P(u)`` with ``u = x - 2`` (exact), which keeps
      the relative precision at the zero 2 (and, with the step up, at 1);
    - ``2.5 <= x < 8``: ``log gamma(x - k) + log((x - 1) ... (x - k))`` down into [1.5, 2.5) (terms of
      one sign but for the small first one);
    - ``0 < x < 1.5``: ``log gamma(x + k) - log(x ... (x + k - 1))`` up into [1.5, 2.5), ``k`` 1 or 2
      (the logarithm of ``x`` near the zero 1 is correctly rounded, as is the series);
    - ``1.25 <= x < 1.75`` instead: the Taylor series at the minimum 1.4616 (the two above cancel
      there, the value being a third of either part, and were 6 ulps off);
    - ``x < 0``: the reflection ``log(pi / |sin(pi x)|) - log gamma(1 - x)``, inf at the poles.
    """
    finite = jnp.isfinite(x)
    positive = safe(finite & (x > 0), x, 2.0)
    reflected = safe(finite & (x <= 0), 1 - x, 2.0)  # (>= 1: the same computation for both)
    y = jnp.where(x > 0, positive, reflected)
    stirling = y >= _FLOAT32_STIRLING_FROM
    # (each branch gets harmless inputs where another is taken: the series overflow far from their
    # centres, and inf times the zero cotangent of a discarded branch made the gradient NaN)
    near_two, product_down, product_up = _toward_two(safe(~stirling, y, 2.0))
    small = near_two + log(product_down) - log(product_up)
    around_minimum = (y >= 1.125) & (y < 1.75)
    at_minimum = polynomial(
        _LOGGAMMA_MINIMUM_TAYLOR, safe(around_minimum, y, _LOGGAMMA_MINIMUM) - const(x, _LOGGAMMA_MINIMUM)
    )  # (y - x0 exact)
    small = jnp.where(around_minimum, at_minimum, small)
    ys = safe(stirling, y, _FLOAT32_STIRLING_FROM)
    large = (ys - 0.5) * log(ys) - ys + const(x, 0.5 * np.log(2 * np.pi)) + stirling_correction(ys)
    value = jnp.where(stirling, large, small)
    # x <= 0: log(pi / |sin(pi x)|) - log gamma(1 - x); the poles 0, -1, -2, ... (sin(pi x) = 0) are inf
    sine = jnp.abs(_real_sin_pi(safe(finite & (x <= 0), x, -0.5)))
    reflection = jnp.where(sine == 0, const(x, np.inf), log(const(x, np.pi) / sine) - value)
    value = jnp.where(x > 0, value, reflection)
    return jnp.where(finite, value, jnp.where(jnp.isnan(x), x, const(x, np.inf)))


def _toward_two(y: Any) -> tuple[Any, Any, Any]:
    """For positive float32 ``y`` below :data:`_FLOAT32_STIRLING_FROM`: ``log gamma(y')`` by the
    Taylor series at 2 for the ``y'`` in [1.5, 2.5) that at most 6 steps down or 2 up reach, and
    the products of the steps, ``(y - 1) ... (y - k)`` down and ``y (y + 1)`` up (1 where none):
    ``gamma(y) = gamma(y') * down / up``."""
    down = jnp.maximum(jnp.floor(jnp.minimum(y, _FLOAT32_STIRLING_FROM) - 1.5), 0)
    up = jnp.where(y < 1.5, jnp.where(y < 0.5, const(y, 2.0), const(y, 1.0)), const(y, 0.0))
    # u = y' - 2, exactly: y - down (at most 6 below y < 8) and y - 1 (y in [0.5, 1.5)) are exact,
    # y + 1 is not
    u = jnp.where(up > 0, y + (up - 2), (y - down) - 2)
    product_down, product_up = jnp.ones_like(y), jnp.ones_like(y)
    for k in range(1, 7):
        product_down = product_down * jnp.where(k <= down, y - k, const(y, 1.0))
    for k in range(2):
        product_up = product_up * jnp.where(k < up, y + k, const(y, 1.0))
    return u * polynomial(_LOGGAMMA_2_TAYLOR, u), product_down, product_up


_FLOAT32_GAMMA_OVERFLOW = 35.5
"""gamma is float32's largest number at 35.04; from here on the value is inf (the products below
would give NaN as e**-x vanishes)."""


def _float32_gamma_below_stirling(y: Any) -> Any:
    """gamma of positive float32 ``y`` below :data:`_FLOAT32_STIRLING_FROM` from products of exact
    factors, ``gamma(y') down / up`` (:func:`_toward_two`, one exponential of at most 0.28)."""
    near_two, product_down, product_up = _toward_two(y)
    return exp(near_two) * product_down / product_up


@jax.custom_jvp
def _float32_gamma(x: Any) -> Any:
    """gamma of float32 ``x``: for ``x > 0`` below 8 :func:`_float32_gamma_below_stirling`, and from
    8 on Stirling's ``sqrt(2 pi) p (p e**-x) e**S(x)`` with ``p = x**(x/2 - 1/4)`` (xp's ``pow``,
    correctly rounded: the exponent is exact) and ``S`` the series of :func:`stirling_correction`:
    a few ulps, where ``exp(lgamma(x))`` turns lgamma's rounding into 1e-5 near 30. ``x <= 0``:
    ``sign * exp(lgamma(x))``, as JAX's."""
    finite_positive = jnp.isfinite(x) & (x > 0)
    y = safe(finite_positive, x, 2.0)
    small = _float32_gamma_below_stirling(y)
    ys = safe(finite_positive & (y >= _FLOAT32_STIRLING_FROM) & (y < _FLOAT32_GAMMA_OVERFLOW), y, 8.0)
    power = pow(ys, ys / 2 - 0.25)  # (ys / 2 - 1/4 exact for ys >= 1)
    large = power * (power * exp(-ys)) * (const(x, np.sqrt(2 * np.pi)) * exp(stirling_correction(ys)))
    value = jnp.where(y >= _FLOAT32_STIRLING_FROM, large, small)
    value = jnp.where(y >= _FLOAT32_GAMMA_OVERFLOW, const(x, np.inf), value)
    return jnp.where(
        finite_positive | (x == np.inf), jnp.where(x == np.inf, x, value), jss.gammasgn(x) * exp(lgamma(x))
    )


@_float32_gamma.defjvp
def _float32_gamma_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # gamma' = gamma psi (JAX's rule), from the value: the product rule through Stirling's p (p e**-x)
    # overflows to inf - inf (NaN) near float32's largest gamma, and inf past it; and no branch of
    # the value is differentiated, so none needs harmless inputs
    (x,), (dx,) = primals, tangents
    value = _float32_gamma(x)
    return value, value * digamma(x) * dx


def float32_log_gamma_pair(z: tuple[Any, Any]) -> tuple[Any, Any]:
    """``log gamma(z)`` of a positive double-float pair ``z = (hi, lo)`` (xp/_double_float.py) as a
    pair: below 8 from gamma itself (a few ulps: as many of 2**-24 in the logarithm, where lgamma's
    rounding is an ulp of its value) and ``psi(hi) lo``; from 8 on Stirling's ``(z - 1/2) log z - z
    + log(2 pi) / 2 + delta(z)`` with its large terms as pairs."""
    hi, lo = z
    small = hi < _FLOAT32_STIRLING_FROM
    zs = safe(small & (hi > 0), hi, 2.0)
    large = (safe(~small, hi, _FLOAT32_STIRLING_FROM), jnp.where(small, 0, lo))
    # the two logarithms (of gamma below 8, of z from 8 on) in one, a few hundred operations each
    log_gamma, log_large = evaluated_once(
        double_float.log_of_pair, (double_float.as_pair(_float32_gamma_below_stirling(zs)),), (large,)
    )
    by_gamma = double_float.add(log_gamma, double_float.as_pair(_float32_digamma(zs) * lo))
    half = double_float.as_pair(jnp.full_like(hi, 0.5))
    by_stirling = double_float.multiply(double_float.subtract(large, half), log_large)
    rest = const(hi, 0.5 * np.log(2 * np.pi)) + stirling_correction(large[0])
    by_stirling = double_float.add(double_float.subtract(by_stirling, large), double_float.as_pair(rest))
    return jnp.where(small, by_gamma[0], by_stirling[0]), jnp.where(small, by_gamma[1], by_stirling[1])


_LOGGAMMA_MINIMUM = 1.4616321325302124
"""The float32 nearest the minimum of gamma on the positive axis (1.46163214496836...)."""
_LOGGAMMA_MINIMUM_TAYLOR = (
    -0.12148629053584942, -1.2036052549106669e-08, 0.48383612823096545, -0.14758772620978952,
    0.06462494227805675, -0.03278854242961306, 0.017970676013239387, -0.010314223643671466,
    0.0061005364329809655, -0.003684569889389323, 0.002259765015077371, -0.0014022515769875278,
    0.0008782327243287649,
)  # fmt: skip
"""log gamma(x0 + t) at x0 = :data:`_LOGGAMMA_MINIMUM`: log gamma(x0), psi(x0) (not quite 0: x0 is
float32's), then (-1)**k zeta(k, x0) / k for k = 2, ..., 12 (Hurwitz's zeta); for -0.22 < t < 0.29
the terms fall by 5 each, the last below 3e-10."""

_DIGAMMA_AT_MINIMUM = tuple(k * c for k, c in enumerate(_LOGGAMMA_MINIMUM_TAYLOR))[1:]
"""psi(x0 + t), the derivative of :data:`_LOGGAMMA_MINIMUM_TAYLOR`: psi(x0) (-1.2e-8: x0 is
float32's), then (-1)**(k + 1) zeta(k + 1, x0) t**k; for |t| < 0.3 the last term is below 2e-8."""

_DIGAMMA_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132)
"""psi(x) = log x - 1/(2x) - sum of these over x**(2k), k = 1, 2, ...: for x >= 8 the next term is
below 1e-12."""


def _float32_digamma(x: Any) -> Any:
    """psi(x) of float32 ``x``, from xp's logarithm: the asymptotic series from 8 on; below, Taylor
    series at 1, at the positive zero 1.4616 and at 2 (the derivatives of log gamma's) of ``w`` in
    [0.8, 2.5) with the recurrences ``psi(y) = psi(y - 1) + 1 / (y - 1)`` down into it (terms of
    one sign: the recurrence upwards from 8 cancelled, 9 ulps near 2.7) and ``psi(y) = psi(y + 1) -
    1/y`` up from below 0.8 (its cancellation would lose the relative precision near the zero
    1.4616); the reflection ``psi(1 - x) - pi / tan(pi x)`` for ``x <= 0`` (NaN at the poles 0, -1,
    ...; the caller gives psi(+-0) its limits). The reciprocals are correctly rounded
    (:func:`xp._double_float.reciprocal`): XLA:TPU's division, 1.5e-7 off, would pass its error on
    where ``1/y`` is most of the value."""
    finite = jnp.isfinite(x)
    y = jnp.where(x > 0, safe(finite & (x > 0), x, 8.0), safe(finite & (x <= 0), 1 - x, 8.0))
    # (each branch on harmless inputs where the other is taken, as in _float32_lgamma; a maximum
    # would halve the derivative at y = 8, where its two operands tie)
    asymptotic_side = y >= _FLOAT32_STIRLING_FROM
    large = safe(asymptotic_side, y, _FLOAT32_STIRLING_FROM)
    inverse = reciprocal(large)
    asymptotic = log(large) - 0.5 * inverse - inverse * inverse * polynomial(_DIGAMMA_ASYMPTOTIC, inverse * inverse)
    # z = y where the series is taken: w = z - steps in [1.5, 2.5) from 2.5 (z - k exact), w = z
    # from 0.8, w = z + 1 below 0.8; the series' arguments w - 1, w - x0, w - 2 formed from z
    # exactly (but for t below 0.23, where its rounding no longer counts)
    z = safe(~asymptotic_side, y, 2.0)
    below = z < 0.8
    steps = jnp.clip(jnp.floor(z - 1.5), 0, _FLOAT32_STIRLING_FROM - 2)  # (0 to 6)
    w = z - steps
    u = jnp.where(below, z, w - 1)
    t = jnp.where(below, z - const(x, _LOGGAMMA_MINIMUM - 1), w - const(x, _LOGGAMMA_MINIMUM))
    v = jnp.where(below, z - 1, w - 2)
    series = jnp.where(
        t < -0.3,
        polynomial(_DIGAMMA_AT_1, u),
        jnp.where(t < 0.3, polynomial(_DIGAMMA_AT_MINIMUM, t), polynomial(_DIGAMMA_AT_2, v)),
    )
    series = jnp.where(below, series - reciprocal(z), series)
    for k in range(1, int(_FLOAT32_STIRLING_FROM) - 1):
        series = series + jnp.where(k <= steps, reciprocal(safe(k <= steps, z - k, 1.0)), const(x, 0.0))
    value = jnp.where(asymptotic_side, asymptotic, series)
    xr = safe(finite & (x <= 0), x, -0.5)
    sine, cosine = _real_sin_pi(xr), _real_sin_pi(xr + 0.5)  # (cos(pi x) = sin(pi (x + 1/2)), exact shift)
    reflection = jnp.where(sine == 0, const(x, np.nan), value - const(x, np.pi) * cosine / sine)
    value = jnp.where(x > 0, value, reflection)
    # psi(inf) = inf, psi(-inf) NaN (as SciPy)
    return jnp.where(finite, value, jnp.where(x == np.inf, x, const(x, np.nan)))


def _real_sin_pi(x: Any) -> Any:
    """sin(pi x) of real ``x``, exact in the reduction to [-1/2, 1/2] (exactly 0 at the integers)."""
    sign, r = _reduced_pi_multiple(x)
    return sign * jnp.sin(r)


def _gammaln(x: Any) -> Any:
    # SciPy's value at -inf is -inf (JAX: +inf)
    return jnp.where(x == -np.inf, const(x, -np.inf), _near_one_and_two(x, lgamma(x)))


def _loggamma(x: Any) -> Any:
    if x.dtype.kind == "c":
        return _complex_loggamma(x)
    # JAX gives NaN at 0; SciPy gives the limit +inf (the real loggamma is NaN for x < 0)
    real = jss.loggamma(x) if x.dtype != np.float32 else jnp.where(x < 0, const(x, np.nan), lgamma(x))
    return jnp.where(x == 0, const(x, np.inf), _near_one_and_two(x, real))


def _near_one_and_two(x: Any, value: Any) -> Any:
    """``value`` (log gamma of real ``x``) with the Taylor series within 0.2 of 1 and 2, where
    JAX's lgamma keeps its absolute error (1.5e-15 at 1 + 4e-6: 7e-10 of the value) but not its
    relative one near the zeros; the series keeps both, as SciPy's does. float32's own lgamma
    keeps it at 2 itself, better: its series at 2 is ``u * P(u)``, where this one adds ``log1p(u)``
    to ``log gamma(1 + u)``, two terms that cancel to ``0.42 u`` (4 ulps off, not 1.5)."""
    near_two = (jnp.abs(x - 2) <= 0.2) & (x.dtype != np.float32)
    near = (jnp.abs(x - 1) <= 0.2) | near_two
    u = safe(near, jnp.where(near_two, x - 2, x - 1), 0.0)
    return jnp.where(near, log_gamma_1_plus(u) + jnp.where(near_two, log1p(u), 0), value)


def log_gamma_1_plus(u: Any) -> Any:
    """log gamma(1 + u) for ``|u| <= 0.2``, real or complex, by its Taylor series."""
    return u * polynomial(_LOGGAMMA_1_TAYLOR, u)


def _complex_loggamma(z: Any) -> Any:
    """The principal branch of log gamma(z), cut along the negative real axis, as SciPy computes
    it (Hare, "Computing the principal branch of log-Gamma", J. Algorithms 25, 1997).

    Not JAX's: it steps a real part below 1/2 up by one per loop iteration, for every element as
    long as one needs it (an array holding -1e30 or -inf never returns), and its loop has no
    reverse-mode derivative. Here, with ``x = Re z`` and ``y = Im z``:

    - ``x < 0.1`` and ``|y| <= 7``: the reflection formula ``log pi - log sin(pi z) -
      log gamma(1 - z)`` plus ``2 pi i sign(y) floor(x / 2 + 1/4)``, the multiple of ``2 pi i``
      that puts the sum on the principal branch;
    - elsewhere: ``_loggamma_right``.

    NaN at the poles (0, -1, -2, ... on the real axis), at NaN and where the real part is -inf.
    """
    x, y = jnp.real(z), jnp.imag(z)
    reflect = (x < 0.1) & (jnp.abs(y) <= 7)
    right = _loggamma_right(jnp.where(reflect, 1 - z, z))
    turns = jnp.copysign(const(x, 2 * np.pi), y) * jnp.floor(0.5 * x + 0.25)
    sine = _sin_pi(safe(reflect, z, 0.5))
    reflected = lax.complex(const(x, np.log(np.pi)), turns) - log(sine) - right
    value = jnp.where(reflect, reflected, right)
    undefined = ((y == 0) & is_nonpositive_integer(x)) | jnp.isnan(z) | (x == -np.inf)
    return jnp.where(undefined, np.asarray(complex(np.nan, np.nan), z.dtype), value)


def _loggamma_right(w: Any) -> Any:
    """log gamma(w) for ``Re w >= 0.1`` or ``|Im w| > 7`` (Hare's scheme, SciPy's regions):

    - ``Re w > 7`` or ``|Im w| > 7``: Stirling's series, whose neglected part is about
      ``exp(-2 pi |Im w|)`` near the negative real axis (1e-19: the poles are 7 away);
    - within 0.2 of 1 or 2: the Taylor series of log gamma(1 + u) (``log(1 + u)`` added at 2),
      which keeps the relative precision near the zeros at 1 and 2;
    - otherwise the recurrence ``log gamma(w) = log gamma(w + m) - sum of log(w + k), k < m``,
      with ``m <= 7`` steps to a real part above 7 (each logarithm principal: the principal
      branch satisfies ``log gamma(w + 1) = log gamma(w) + log w`` off the cut).
    """
    lower = jnp.signbit(jnp.imag(w))  # computed in the upper half-plane, conjugated back: the
    w = jnp.where(lower, jnp.conj(w), w)  # principal branch is symmetric, signed zeros included
    x, y = jnp.real(w), jnp.imag(w)
    far = (x > 7) | (y > 7)
    near_two = jnp.abs(w - 2) <= 0.2
    near = (jnp.abs(w - 1) <= 0.2) | near_two
    steps = jnp.where(far | near, const(x, 0.0), jnp.floor(7 - x) + 1)  # (0 to 7)
    shifted = safe(~near, w + steps, 8.0)
    value = (shifted - 0.5) * log(shifted) - shifted + const(x, 0.5 * np.log(2 * np.pi))
    value = value + stirling_correction(shifted, _STIRLING_LONG)
    # the product of the w + k and one logarithm (fewer roundings than a sum of logarithms): each
    # crossing of the negative real axis by the running product is one more 2 pi i in the sum of
    # the logarithms
    product = jnp.ones_like(w)
    crossings = jnp.zeros_like(x)
    for k in range(7):
        before = jnp.signbit(jnp.imag(product))
        product = product * safe(k < steps, w + k, 1.0)
        crossings = crossings + (jnp.signbit(jnp.imag(product)) & ~before)
    value = value - (log(product) + lax.complex(jnp.zeros_like(x), 2 * np.pi * crossings))
    u = safe(near, jnp.where(near_two, w - 2, w - 1), 0.0)
    value = jnp.where(near, log_gamma_1_plus(u) + jnp.where(near_two, log1p(u), 0), value)
    return jnp.where(lower, jnp.conj(value), value)


# zeta(2), zeta(3), ... zeta(23): log gamma(1 + u) = -euler_gamma u + sum of (-1)**k zeta(k) u**k / k,
# 23 terms for |u| <= 0.2 (0.2**23 / 23 is 4e-18)
_ZETA_FROM_2 = (
    1.6449340668482264, 1.2020569031595942, 1.0823232337111381, 1.03692775514337, 1.0173430619844492,
    1.008349277381923, 1.0040773561979444, 1.0020083928260821, 1.000994575127818, 1.0004941886041194,
    1.000246086553308, 1.0001227133475785, 1.0000612481350588, 1.000030588236307, 1.0000152822594086,
    1.0000076371976379, 1.000003817293265, 1.0000019082127165, 1.0000009539620338, 1.0000004769329869,
    1.0000002384505027, 1.000000119219926,
)  # fmt: skip
_LOGGAMMA_1_TAYLOR = (-float(np.euler_gamma), *((-1) ** k * zeta / k for k, zeta in enumerate(_ZETA_FROM_2, start=2)))
_LOGGAMMA_2_TAYLOR = (
    1 - float(np.euler_gamma),
    *((-1) ** k * (zeta - 1) / k for k, zeta in enumerate(_ZETA_FROM_2, start=2)),
)
"""log gamma(2 + u) = u * sum of these times u**k: (1 - euler_gamma) u + sum of (-1)**k (zeta(k) - 1)
u**k / k, converging for |u| < 2; for |u| <= 1/2 the terms fall by 4 each."""
_DIGAMMA_AT_1 = tuple((k + 1) * c for k, c in enumerate(_LOGGAMMA_1_TAYLOR))
_DIGAMMA_AT_2 = tuple((k + 1) * c for k, c in enumerate(_LOGGAMMA_2_TAYLOR))
"""psi(1 + u) and psi(2 + u), the derivatives of the two series above: for u from -0.2 to 0.16 and
from -0.24 to 0.5, where they are used, the terms left out are below 1e-12."""


def _sin_pi(z: Any) -> Any:
    """sin(pi z) of complex ``z`` with ``|Im z| <= 7``, exact in the reduction of the real part
    to [-1/2, 1/2] (``jnp.sin(pi * z)`` loses every digit once ``Re z`` is large)."""
    x, y = jnp.real(z), jnp.imag(z)
    sign, r = _reduced_pi_multiple(x)
    return lax.complex(sign * jnp.sin(r) * cosh(np.pi * y), sign * jnp.cos(r) * sinh(np.pi * y))


def _reduced_pi_multiple(x: Any) -> tuple[Any, Any]:
    """(sign, r) with ``pi x = pi n + r``, ``n`` the nearest integer and ``sign = (-1)**n``, so that
    sin(pi x) = sign sin(r) and cos(pi x) = sign cos(r); ``x - n`` is exact."""
    n = jnp.round(x)
    sign = 1 - 2 * (n - 2 * jnp.floor(n / 2))  # (-1)**n, with n exact in floating point
    return sign, (x - n) * const(x, np.pi)


@jax.custom_jvp
def _rgamma(x: Any) -> Any:
    # 1/gamma(x), which is 0 at the poles of gamma (where JAX's gamma is NaN)
    pole = is_nonpositive_integer(x)
    return jnp.where(pole, const(x, 0.0), 1 / _gamma(safe(~pole, x, 0.5)))


@_rgamma.defjvp
def _rgamma_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # (1/gamma)' = -psi / gamma, and (-1)**n n! at the pole -n: the quotient rule's -gamma' / gamma**2
    # is inf / inf (NaN) where gamma overflows, and a pole's 0 would have slope 0
    (x,), (dx,) = primals, tangents
    value = _rgamma(x)
    pole = is_nonpositive_integer(x)
    at_pole = jnp.where(jnp.mod(x, 2) == 0, const(x, 1.0), const(x, -1.0)) * _gamma(1 - safe(pole, x, 0.0))
    return value, jnp.where(pole, at_pole, -digamma(safe(~pole, x, 0.5)) * value) * dx


def _psi(x: Any) -> Any:
    # JAX gives NaN at +-0; SciPy gives the one-sided limits: psi(+0) = -inf, psi(-0) = +inf
    return jnp.where(x == 0, jnp.copysign(const(x, np.inf), -x), digamma(x))


def _polygamma(n: Any, x: Any) -> Any:
    # SciPy takes an integer-valued n of any dtype (NaN for others); JAX needs an integer dtype.
    # for n >= 1 JAX's values at x <= 0 (from its Hurwitz zeta) are inaccurate: NaN there
    valid = (n >= 0) & (n == jnp.floor(n)) & (n < 2**30) & ((n == 0) | (x > 0))
    if x.dtype == np.float32:
        return jnp.where(valid, _float32_polygamma(safe(valid, n, 0.0), x), const(x, np.nan))
    order = safe(valid, n, 0.0).astype(np.int32)
    return jnp.where(valid, jss.polygamma(order, x), const(x, np.nan))


_FLOAT32_FACTORIALS = 34
"""34! is float32's largest factorial (3e38); above, n! zeta(n + 1, x) is inf here, as JAX's."""


def _float32_polygamma(n: Any, x: Any) -> Any:
    """psi^(n)(x) of float32 for integer-valued ``n >= 0``: xp's psi at 0, JAX's formula
    ``(-1)^(n+1) n! zeta(n + 1, x)`` beyond with ``n!`` a product (JAX's is ``exp(lgamma(n + 1))``,
    an exponential XLA:TPU approximates, and 74 ulp off at 30! in float32 even where it is not)."""
    factorial = jnp.ones_like(x)
    for k in range(2, _FLOAT32_FACTORIALS + 1):
        factorial = factorial * jnp.where(k <= n, const(x, float(k)), const(x, 1.0))
    factorial = jnp.where(n > _FLOAT32_FACTORIALS, const(x, np.inf), factorial)
    sign = jnp.where(jnp.mod(n, 2) == 0, const(x, -1.0), const(x, 1.0))
    positive = n >= 1
    higher = sign * factorial * jss.zeta(safe(positive, n, 1.0) + 1, x)
    return jnp.where(positive, higher, digamma(x))


def _multigammaln(a: Any, d: int) -> Any:
    # SciPy raises for a <= (d - 1) / 2, where the function is undefined; JAX gives inf. xp
    # cannot raise on values under jax.jit, so it gives NaN there.
    valid = a > (d - 1) / 2
    return jnp.where(valid, _log_multigamma(safe(valid, a, float(d)), d), const(a, np.nan))


def _log_multigamma(a: Any, d: int) -> Any:
    if a.dtype != np.float32:
        return jss.multigammaln(a, d)
    # JAX's formula, with xp's float32 lgamma: d (d - 1) / 4 log(pi) + sum of lgamma(a - j / 2), j < d
    halves = jnp.arange(d, dtype=a.dtype) / 2
    return const(a, d * (d - 1) / 4 * np.log(np.pi)) + jnp.sum(lgamma(a[..., None] - halves), axis=-1)


def _gamma(x: Any) -> Any:
    return _float32_gamma(x) if x.dtype == np.float32 else jss.gamma(x)


GAMMA = Kernel("gamma", ("z",), _gamma, complex=True)
GAMMALN = Kernel("gammaln", ("x",), _gammaln, real_only_reason="SciPy's gammaln is real-valued; use loggamma")
LOGGAMMA = Kernel("loggamma", ("z",), _loggamma, complex=True)
GAMMASGN = Kernel("gammasgn", ("x",), jss.gammasgn)
RGAMMA = Kernel("rgamma", ("z",), _rgamma, real_only_reason="JAX has no complex reciprocal gamma with its poles")
PSI = Kernel("psi", ("z",), _psi, real_only_reason="JAX's digamma is real-valued")
DIGAMMA = Kernel("digamma", ("z",), _psi, real_only_reason="JAX's digamma is real-valued")
POLYGAMMA = Kernel("polygamma", ("n", "x"), _polygamma)
MULTIGAMMALN = Kernel("multigammaln", ("a",), _multigammaln)


# --- beta -----------------------------------------------------------------------------------

# B(2k) / (2k (2k - 1)), k = 1, 2, ...: the coefficients of Stirling's series
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_STIRLING_LONG = (*_STIRLING, -3617 / 122400)


def stirling_correction(x: Any, coefficients: tuple[float, ...] = _STIRLING) -> Any:
    """delta(x) = lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), by its asymptotic series
    (the terms in 1/x, 1/x**3, ... 1/x**13): within 1e-15 of it for x >= 8 (one term more,
    ``_STIRLING_LONG``: 1e-16 for complex ``|x| > 7``)."""
    return polynomial(coefficients, 1 / (x * x)) / x


def log_beta(a: Any, b: Any) -> Any:
    """log|B(a, b)|. JAX's betaln is wrong by about 1e-7 (relative) once max(a, b) >= 8 (its
    series uses the wrong ratio), so it is computed here: for positive arguments with
    ``small = min(a, b)`` and ``big = max(a, b)``,

    - big < 8: gammaln(a) + gammaln(b) - gammaln(a + b) (no large terms cancel);
    - small < 8 <= big: gammaln(small) + [gammaln(big) - gammaln(small + big)], the bracket
      by Stirling's series: -(small + big - 1/2) log1p(small/big) + small (1 - log big)
      + delta(big) - delta(small + big), which keeps its precision where the two gammaln
      values are huge and nearly equal;
    - small >= 8: Stirling's series for all three, in the form
      log(2 pi)/2 - log(a + b)/2 + (a - 1/2) log(a/(a+b)) + (b - 1/2) log(b/(a+b)) + deltas,
      whose terms have one sign.

    A negative ``small`` (log|B|, as SciPy) takes the second form too where ``small + big >= 8``
    (the gammaln sum cancelled to 0 for B(-0.5, 1e300), whose log is 346.65); other zero or
    negative arguments take the plain gammaln sum; a pole of gamma in a or b gives inf, as in
    SciPy.
    """
    small, big = jnp.minimum(a, b), jnp.maximum(a, b)
    total = small + big
    plain = lgamma(a) + lgamma(b) - lgamma(total)
    mixed_form = (big >= 8) & ((small > 0) | ((total >= 8) & (small > -np.inf)))
    s1 = safe(mixed_form, small, 1.0)
    b1 = safe(mixed_form, big, 8.0)
    bracket = (
        -(s1 + b1 - 0.5) * log1p(s1 / b1) + s1 * (1 - log(b1)) + stirling_correction(b1) - stirling_correction(s1 + b1)
    )
    mixed = lgamma(s1) + bracket
    s8 = safe(small >= 8, small, 8.0)
    b8 = safe(small >= 8, big, 8.0)
    t8 = s8 + b8
    both = (
        const(a, 0.5 * np.log(2 * np.pi))
        - 0.5 * log(t8)
        + (s8 - 0.5) * log(s8 / t8)
        + (b8 - 0.5) * -log1p(s8 / b8)
        + stirling_correction(s8)
        + stirling_correction(b8)
        - stirling_correction(t8)
    )
    out = jnp.where(small >= 8, both, jnp.where(mixed_form, mixed, plain))
    # a pole of gamma in a or b over a finite gamma(a + b) is a pole of B; where a + b is a pole
    # too the plain sum is NaN (inf - inf), and SciPy's finite ratio is not computed
    pole = (is_nonpositive_integer(a) | is_nonpositive_integer(b)) & ~is_nonpositive_integer(total)
    out = jnp.where(pole, const(a, np.inf), out)
    # log B(a, inf) = -inf for a > 0; the gamma sum gives NaN (inf - inf)
    return jnp.where((big == np.inf) & (small > 0) & (small < np.inf), const(a, -np.inf), out)


def _binom(n: Any, k: Any) -> Any:
    """n choose k = 1 / ((n + 1) B(n - k + 1, k + 1)), for 0 <= k <= n, and 0 for integers
    k > n >= 0; NaN elsewhere (SciPy continues it to other arguments, with signs)."""
    integers = (k == jnp.floor(k)) & (n == jnp.floor(n)) & jnp.isfinite(k)
    zero = integers & (k > n)
    valid = (n >= 0) & (k >= 0) & ((k <= n) | zero) & jnp.isfinite(n)
    n1 = safe(valid & ~zero, n, 1.0)
    k1 = safe(valid & ~zero, k, 1.0)
    value = exp(-log1p(n1) - log_beta(n1 - k1 + 1, k1 + 1))
    # integer arguments give integers: round off the last bits where the result is exact
    value = jnp.where(integers & (value < 2 ** (np.finfo(n.dtype).nmant)), jnp.round(value), value)
    return jnp.where(valid, jnp.where(zero, const(n, 0.0), value), const(n, np.nan))


def _poch(z: Any, m: Any) -> Any:
    # gamma(z + m) / gamma(z), computed by JAX for z > 0 and z + m > 0; NaN elsewhere (JAX is
    # NaN for z < 0 and inaccurate near the poles of gamma(z + m), which SciPy avoids with
    # reflection formulas)
    valid = (z > 0) & (z + m > 0) & jnp.isfinite(z) & jnp.isfinite(m)
    zs, ms = safe(valid, z, 1.0), safe(valid, m, 0.0)
    # JAX's gamma(z + m) / gamma(z), with xp's float32 gamma
    value = (
        jss.poch(zs, ms) if z.dtype != np.float32 else jnp.where(ms == 0, const(z, 1.0), _gamma(zs + ms) / _gamma(zs))
    )
    # where JAX's ratio of gamma values overflows or underflows (poch(100, 100) = 4.2e216 came
    # out inf), the exponential of its logarithm, gammaln(m) - betaln(z, m) for m > 0 and
    # betaln(z + m, -m) - gammaln(-m) for m < 0: betaln keeps the difference of two large
    # gammaln values exact
    beyond = valid & ((value == 0) | ~jnp.isfinite(value)) & (ms != 0)
    up = ms > 0
    mu = safe(beyond, jnp.abs(ms), 1.0)
    log_ratio = lgamma(mu) - log_beta(safe(beyond, jnp.where(up, zs, zs + ms), 1.0), mu)
    value = jnp.where(beyond, exp(jnp.where(up, log_ratio, -log_ratio)), value)
    return jnp.where(valid, value, const(z, np.nan))


BETALN = Kernel("betaln", ("a", "b"), log_beta)
BINOM = Kernel("binom", ("x", "y"), _binom)
POCH = Kernel("poch", ("z", "m"), _poch)


# --- zeta -----------------------------------------------------------------------------------


def _hurwitz(x: Any, q: Any) -> Any:
    # JAX computes Hurwitz's zeta for x > 1 (x = 1 is the pole: inf); for x < 1 it gives inf
    # or values of no continuation, so those are NaN here (SciPy continues Riemann's zeta)
    valid = x >= 1
    value = jss.zeta(safe(valid, x, 2.0), q)
    # where JAX's sum underflows on the way and its result does not (zeta(2, 1e200) came out 0,
    # not 1e-200), for q far beyond x: Euler-Maclaurin's q^(1-x) (1/(x-1) + 1/(2q) + x/(12 q^2))
    # (the next term is below (x/q)^4 / 720)
    far = valid & (x > 1) & (q > 1e8) & (q > 1e4 * x) & (q < np.inf) & ((value == 0) | ~jnp.isfinite(value))
    xf, qf = safe(far, x, 2.0), safe(far, q, 1e9)
    tail = exp((1 - xf) * log(qf)) * (1 / (xf - 1) + 0.5 / qf + xf / (12 * qf * qf))
    value = jnp.where(far, tail, value)
    value = jnp.where(x == 1, const(x, np.inf), value)
    # zeta(x, inf) = 0 for x > 1 (each term vanishes); JAX gives NaN
    value = jnp.where((x > 1) & (q == np.inf), const(x, 0.0), value)
    return jnp.where(valid, value, const(x, np.nan))


# Riemann's zeta below 1, where JAX has none (SciPy continues it): on [-1/4, 1) from Dirichlet's
# eta by Borwein's algorithm, zeta(x) = eta(x) / (1 - 2^(1-x)); below by the functional
# equation zeta(x) = 2^x pi^(x-1) sin(pi x / 2) Gamma(1 - x) zeta(1 - x), with 1 - x > 5/4 for
# JAX's zeta (near 0 the equation needs zeta(1 + d), which JAX gives only to 1e-7 at d = 1e-10).
_BORWEIN_TERMS = 26  # error below 3 / (3 + sqrt(8))^26 = 3e-20 of eta on [0, 1)
_BORWEIN_FROM = -0.25


@functools.cache
def _borwein_weights(n: int) -> tuple[float, ...]:
    """w_k with eta(x) = sum_{k < n} w_k / (k + 1)^x (P. Borwein, "An efficient algorithm for the
    Riemann zeta function", 2000): w_k = (-1)^k (d_n - d_k) / d_n, computed exactly."""
    d, total = [], Fraction(0)
    for i in range(n + 1):
        total += Fraction(math.factorial(n + i - 1) * 4**i, math.factorial(n - i) * math.factorial(2 * i))
        d.append(n * total)
    return tuple(float((-1) ** k * (d[n] - d[k]) / d[n]) for k in range(n))


def _zeta_below_one(x: Any) -> Any:
    """Riemann's zeta(x) for x < 1 (NaN elsewhere is not needed: the caller selects)."""
    borwein = x >= _BORWEIN_FROM
    xb = safe(borwein, x, 0.5)
    eta = jnp.zeros_like(x)
    for k, w in enumerate(_borwein_weights(_BORWEIN_TERMS)):
        eta = eta + w * exp(-xb * const(x, np.log(k + 1.0)))
    near = eta / -expm1((1 - xb) * const(x, np.log(2.0)))
    # the functional equation, in logarithms (Gamma(1 - x) overflows from x = -170, where the
    # product is still finite), its sign from sin(pi x / 2), exactly 0 at the even negatives
    xf = safe(~borwein, x, -2.5)
    sine = sin_degrees(90 * xf)
    log_size = (
        xf * const(x, np.log(2.0))
        + (xf - 1) * const(x, np.log(np.pi))
        + lgamma(1 - xf)
        + log(_hurwitz(1 - xf, jnp.ones_like(x)))
        + log(jnp.abs(sine))
    )
    far = jnp.where(sine == 0, const(x, 0.0), jnp.sign(sine) * exp(log_size))
    return jnp.where(borwein, near, far)


def _riemann(x: Any) -> Any:
    # zeta(x) = zeta(x, 1) from 1 on; zeta(inf) = 1; below 1, SciPy's continuation
    value = jnp.where(x == np.inf, const(x, 1.0), _hurwitz(x, jnp.ones_like(x)))
    below = x < 1
    return jnp.where(below, _zeta_below_one(safe(below, x, 0.5)), value)


def _zetac(x: Any) -> Any:
    # zeta(x) - 1 = zeta(x, 2), without the cancellation of subtracting 1 (zetac(50) ~ 1e-15);
    # below 1, zeta(x) - 1 (zeta is below 0 there: nothing cancels)
    value = jnp.where(x == np.inf, const(x, 0.0), _hurwitz(x, jnp.full_like(x, 2.0)))
    below = x < 1
    return jnp.where(below, _zeta_below_one(safe(below, x, 0.5)) - 1, value)


ZETA = Kernel("zeta", ("x", "q"), _hurwitz)
RIEMANN_ZETA = Kernel("zeta", ("x",), _riemann)
ZETAC = Kernel("zetac", ("x",), _zetac)
