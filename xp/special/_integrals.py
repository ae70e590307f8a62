"""``xp.special``: exponential integrals, the complete elliptic integral of the first kind,
Spence's dilogarithm, modified Bessel functions and Kummer's confluent hypergeometric function.

JAX's exponential integrals (``exp1``, ``expi``, ``expn``) evaluate both of their iterations
(a power series for x <= 1, a continued fraction for x > 1) on every element of an array; the
continued fraction converges slowly for small x, so an array holding 1e-8 runs for minutes.
Here each element gets only the branch for its own range: the power series below (x <= 1) is
computed in a fixed number of terms, and JAX's function sees only x > 1.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from xp import _double_float as double_float
from xp.special._gamma import digamma, float32_log_gamma_pair, lgamma
from xp.special._kernel import Kernel, const, evaluated_once, exp, is_nonpositive_integer, log, log1p, polynomial, safe

# Terms of the power series for x <= 1: the first left out is below 1/(26 * 26!) ~ 1e-28.
_SERIES_TERMS = 25


def _expn_series(n: Any, x: Any) -> Any:
    """E_n(x) for 0 < x <= 1 and integer n >= 1 (Abramowitz and Stegun 5.1.12):
    (-x)**(n-1) / (n-1)! * (psi(n) - log x) - sum over k != n-1 of (-x)**k / ((k - n + 1) k!)."""
    total = jnp.zeros_like(x)
    power = jnp.ones_like(x)  # (-x)**k / k!
    for k in range(_SERIES_TERMS + 1):
        if k:
            power = power * (-x) / k
        denominator = k - n + 1
        total = total + jnp.where(denominator == 0, const(x, 0.0), power / safe(denominator != 0, denominator, 1.0))
    sign = jnp.where(jnp.mod(n - 1, 2) == 0, const(x, 1.0), const(x, -1.0))
    leading = sign * exp((n - 1) * log(x) - lgamma(n)) * (digamma(n) - log(x))
    return leading - total


# From this order on, E_n(x) is the asymptotic expansion below (as in Cephes, and JAX's expn).
_LARGE_ORDER = 5000


def _expn_large_order(n: Any, x: Any) -> Any:
    """E_n(x) for n >= 5000 and x > 0: exp(-x) / (n + x) * (1 + n / (n + x)**2 + ...), the first
    terms of the expansion in 1 / (n + x) (Abramowitz and Stegun 5.1.52), written in the ratios
    n / (n + x) and x / (n + x), which stay at most 1 where n or x is near the dtype's maximum."""
    u = 1 / (n + x)
    r, q = n * u, x * u
    inner = r * (r - 2 * q) + r * u * (6 * q * q - 8 * r * q + r * r)
    return (1 + u * (r + u * inner)) * exp(-x) * u


_FRACTION_TERMS = 2000  # at most, of the float32 continued fraction (x > 1: tens are needed)


def _expn_fraction32(n: Any, x: Any) -> Any:
    """E_n(x) of float32 for x > 1: exp(-x) times the continued fraction 1 / (x + n / (1 + 1 / (x +
    (n + 1) / (1 + 2 / (x + ...))))), its convergents ``p / q`` by the fundamental recurrences (as
    JAX's, from Cephes; a product of Lentz's factors loses an ulp a step near x = 1), with xp's
    exponential. An element that has converged keeps its value while the others iterate."""
    eps = const(x, float(np.finfo(np.float32).eps))
    big = const(x, 2.0**60)  # (the recurrences are rescaled past this)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        k, p2, q2, p1, q1, value, done = state
        k = k + 1
        odd = k % 2 == 1
        y = jnp.where(odd, const(x, 1.0), x)
        w = jnp.where(odd, n + (k - 1) / 2, k / 2)
        p, q = p1 * y + p2 * w, q1 * y + q2 * w
        nonzero = q != 0
        ratio = jnp.where(nonzero, p / jnp.where(nonzero, q, 1), value)
        converged = nonzero & (jnp.abs(value - ratio) <= eps * jnp.abs(ratio))
        value = jnp.where(done, value, ratio)
        scale = jnp.where(jnp.abs(p) > big, 1 / big, const(x, 1.0))
        return k, p1 * scale, q1 * scale, p * scale, q * scale, value, done | converged

    one = jnp.ones_like(x)
    state = (const(x, 1.0), one, x, one, x + n, 1 / (x + n), jnp.zeros(x.shape, bool))
    value = lax.while_loop(lambda s: (s[0] <= _FRACTION_TERMS) & ~jnp.all(s[6]), step, state)[5]
    return value * exp(-x)


@jax.custom_jvp
def _expn(n: Any, x: Any) -> Any:
    # n must be a non-negative integer (SciPy truncates others, with a warning: xp gives NaN)
    valid = (n >= 0) & (n == jnp.floor(n)) & (n < np.inf) & (x >= 0)
    huge = valid & (x > 0) & (n >= _LARGE_ORDER)
    small = valid & (x > 0) & (x <= 1) & (n >= 1) & ~huge
    # JAX's expn sees only orders below 5000: on an array it evaluates every one of its methods on
    # every element, one of them a loop of n steps (an order of 1e9 beside any other element runs
    # for minutes, 3e38 forever)
    large = valid & (x > 1) & ~huge
    ns = safe(valid, n, 1.0)
    series = _expn_series(safe(small, ns, 1.0), safe(small, x, 0.5))
    fraction = (_expn_fraction32 if x.dtype == np.float32 else jss.expn)(safe(large, ns, 1.0), safe(large, x, 2.0))
    asymptotic = _expn_large_order(safe(huge, ns, float(_LARGE_ORDER)), safe(huge, x, 1.0))
    zero = jnp.where(ns >= 2, 1 / safe(ns >= 2, ns - 1, 1.0), const(x, np.inf))  # E_n(0)
    xs = safe(x > 0, x, 1.0)
    order0 = exp(-xs) / xs  # E_0(x) = exp(-x) / x
    value = jnp.where(huge, asymptotic, jnp.where(x <= 1, series, fraction))
    value = jnp.where(x == 0, zero, jnp.where(ns == 0, order0, value))
    value = jnp.where(x == np.inf, const(x, 0.0), value)
    return jnp.where(valid, value, const(x, np.nan))


@_expn.defjvp
def _expn_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    # d/dx E_n(x) = -E_{n-1}(x), and d/dx E_0(x) = d/dx exp(-x)/x = -E_0(x) (x + 1) / x; n is an
    # integer (no derivative). Defined here because JAX's expn takes n as a non-differentiable
    # argument, which cannot be a traced array (grad fails with "No constant handler").
    n, x = primals
    value = _expn(n, x)
    lower = _expn(jnp.maximum(n - 1, 0), x)
    slope = jnp.where(n >= 1, -lower, -value * (x + 1) / safe(x != 0, x, 1.0))
    return value, slope * tangents[1]


def _exp1(x: Any) -> Any:
    return _expn(jnp.ones_like(x), x)


_EI_ASYMPTOTIC_FROM = 16.6
"""-log(float32's epsilon): from here on the asymptotic series of Ei reaches float32's precision
before its terms grow."""
_EI_SERIES_TERMS = 60  # (the first left out is below 1e-9 of the sum at 16.6)
_EI_ASYMPTOTIC_TERMS = 40


_EI_ZERO = 0.37250741078136663
"""The positive zero of Ei."""
_EI_ZERO_32 = float(np.float32(_EI_ZERO))
_EI_ZERO_TERMS = 16


def _ei_taylor_at(point: float, zero: float, terms: int) -> tuple[float, ...]:
    """The Taylor coefficients of Ei at ``point`` (near its ``zero``): Ei(point), then
    Ei^(n)(point) / n! = e**x (-1)**(n - 1) S_(n-1)(x) / (n x**n), with S_m the sum of (-x)**j / j!
    for j <= m (the derivatives of e**x / x; S_m's terms fall, so float64 keeps its digits)."""
    partial, coefficients = 0.0, []
    for n in range(1, terms + 1):
        partial += (-point) ** (n - 1) / math.factorial(n - 1)
        coefficients.append(math.exp(point) * (-1) ** (n - 1) * partial / (n * point**n))
    return ((point - zero) * math.exp(zero) / zero, *coefficients)  # (Ei(point): one step from the zero)


_EI_AT_ZERO = _ei_taylor_at(_EI_ZERO_32, _EI_ZERO, _EI_ZERO_TERMS)
"""Ei(x0 + t) at float32's x0 nearest the zero, for |t| < 0.1, where the series below cancels
(gamma + log x against the sum): the terms fall by 3.7 each, the last below 1e-9."""


def _expi32(x: Any) -> Any:
    """Ei(x) of float32 ``x > 0`` with xp's logarithm and exponential (JAX's is a piecewise rational
    function times an exponential at XLA's default accuracy): the series ``euler_gamma + log x +
    sum of x^k / (k k!)`` below 16.6 (terms of one sign), but within 0.1 of the zero 0.3725, where
    it cancels, the Taylor series there; the asymptotic series ``e^x / x * sum of k! / x^k`` beyond,
    summed while its terms fall."""
    small = x < _EI_ASYMPTOTIC_FROM
    xs = safe(small, x, 1.0)
    term, total = jnp.ones_like(x), jnp.zeros_like(x)
    for k in range(1, _EI_SERIES_TERMS + 1):
        term = term * xs / k
        total = total + term / k
    series = const(x, float(np.euler_gamma)) + log(xs) + total
    xl = safe(~small, x, _EI_ASYMPTOTIC_FROM)
    term, total, falling = jnp.ones_like(x), jnp.ones_like(x), jnp.ones(x.shape, bool)
    for k in range(1, _EI_ASYMPTOTIC_TERMS + 1):
        next_term = term * k / xl
        falling = falling & (next_term < term) & (term > const(x, float(np.finfo(np.float32).eps)) * total)
        term = next_term
        total = total + jnp.where(falling, term, const(x, 0.0))
    # e^x / x, through exp(x - log x) where e^x alone would overflow (Ei is finite to about 93)
    front = jnp.where(xl < 88, exp(safe(xl < 88, xl, 1.0)) / xl, exp(xl - log(xl)))
    t = x - const(x, _EI_ZERO_32)  # (exact near it)
    series = jnp.where(jnp.abs(t) < 0.1, polynomial(_EI_AT_ZERO, t), series)
    return jnp.where(small, series, front * total)


def _expi(x: Any) -> Any:
    # Ei(x) = -E1(-x) for x < 0; JAX's expi for x >= 0 is a piecewise rational function
    negative = x < 0
    positive = (_expi32 if x.dtype == np.float32 else jss.expi)(safe(~negative, x, 1.0))
    value = jnp.where(negative, -_exp1(safe(negative, -x, 1.0)), positive)
    # Ei(0) = -inf; Ei(inf) = inf (JAX's rational function gives NaN there)
    return jnp.where(x == 0, const(x, -np.inf), jnp.where(x == np.inf, const(x, np.inf), value))


EXP1 = Kernel("exp1", ("z",), _exp1, real_only_reason="JAX's exponential integrals are real-valued")
EXPI = Kernel("expi", ("x",), _expi, real_only_reason="JAX's exponential integrals are real-valued")
EXPN = Kernel("expn", ("n", "x"), _expn)


# --- the complete elliptic integral of the first kind ------------------------------------------

# The arithmetic-geometric mean converges quadratically once its two terms are close; starting
# from b/a = 1e-154 (the most extreme ratio here) that takes under 15 steps.
_AGM_STEPS = 20


def _agm_reciprocal_k(b: Any) -> Any:
    """pi / (2 AGM(1, b)), which is K(m) for b = sqrt(1 - m)."""

    def step(_: int, ab: tuple[Any, Any]) -> tuple[Any, Any]:
        a, b = ab
        return (a + b) / 2, jnp.sqrt(a * b)

    a, _ = lax.fori_loop(0, _AGM_STEPS, step, (jnp.ones_like(b), b))
    return const(b, np.pi / 2) / a


def _ellipkm1(p: Any) -> Any:
    # K(1 - p) = pi / (2 AGM(1, sqrt(p))): accurate for small p, where K(m) is near its pole
    valid = p >= 0
    value = _agm_reciprocal_k(jnp.sqrt(safe(valid & (p > 0), p, 1.0)))
    value = jnp.where(p == 0, const(p, np.inf), jnp.where(p == np.inf, const(p, 0.0), value))
    return jnp.where(valid, value, const(p, np.nan))


def _ellipk(m: Any) -> Any:
    return _ellipkm1(1 - m)


ELLIPK = Kernel("ellipk", ("m",), _ellipk)
ELLIPKM1 = Kernel("ellipkm1", ("p",), _ellipkm1)


# --- Spence, Bessel, Kummer -------------------------------------------------------------------


# JAX's own cap on the terms of its series: enough for x < 100 where a is not much larger than
# b (the 250th term is then below 1e-30 of the largest); elsewhere NaN (see _hyp1f1_series)
_HYP1F1_TERMS = 250


def _hyp1f1_series(a: Any, b: Any, x: Any) -> Any:
    """The Taylor series of 1F1(a; b; x) for 0 <= x < 100, summed over a fixed number of terms.

    JAX's series stops at the first term below eps relative to the sum, which for small a comes
    before the terms grow: JAX gives 1.0 for 1F1(3e-10; 0.125; 11) = 1.00011 in float32."""

    def add_term(k: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        total, term = state
        term = term * (a + k) / (b + k) * x / (k + 1)
        return total + term, term

    ones = jnp.ones_like(x)
    total, term = lax.fori_loop(0, _HYP1F1_TERMS, add_term, (ones, ones))
    # NaN where the terms have not died out: for a much larger than b the series grows until about
    # k = sqrt(a x) (1F1(800; 0.09; 70) = 2.1e223 came out 5.3e221 from 250 terms)
    k = const(x, float(_HYP1F1_TERMS))
    shrinking = (a + k) * x < (b + k) * (k + 1)
    done = shrinking & (jnp.abs(term) <= const(x, np.finfo(x.dtype).eps) * jnp.abs(total))
    return jnp.where(done, total, const(x, np.nan))


_HYP1F1_ASYMPTOTIC_TERMS = 60
"""At most this many terms of each asymptotic series (from x = 100 on, with a and b below a few
tens, their terms fall below float64's epsilon well before)."""


def _asymptotic_sum(p: Any, q: Any, x: Any) -> tuple[Any, Any]:
    """The sum of (p)_k (q)_k / (k! x**k) over the terms while they shrink (an asymptotic series:
    where they grow again it diverges), and whether its last term was below epsilon of it."""

    def add_term(k: Any, state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        total, term, shrinking = state
        following = term * (p + k) * (q + k) / ((k + 1) * x)
        shrinking = shrinking & (jnp.abs(following) < jnp.abs(term))
        return total + jnp.where(shrinking, following, 0), jnp.where(shrinking, following, term), shrinking

    ones = jnp.ones_like(x)
    total, last, _ = lax.fori_loop(0, _HYP1F1_ASYMPTOTIC_TERMS, add_term, (ones, ones, jnp.ones_like(x, bool)))
    return total, jnp.abs(last) <= const(x, np.finfo(x.dtype).eps) * jnp.abs(total)


def _hyp1f1_asymptotic(a: Any, b: Any, x: Any, shift: Any) -> tuple[Any, Any]:
    """1F1(a; b; x) for x >= 100, a >= 0, b > 0, and whether its series reached the dtype's
    precision (Pearson, Olver and Porter 2014, (3.8); DLMF 13.7.2, the real part on the real axis):

        Gamma(b) / Gamma(a) e**x x**(a - b) S(b - a, 1 - a, x)
        + Gamma(b) / Gamma(b - a) cos(pi a) x**-a S(a, a - b + 1, -x)

    with the prefactors from logarithms (e**x is inf in float32 from x = 89 where the value need
    not be; JAX's expansion multiplies it out, and has only the first term, which is 0 for a = 0
    and wrong by about 1 for tiny a). ``shift`` is added to both logarithms: ``-x`` multiplies by
    ``e**-x`` exactly (Kummer's transformation)."""
    first_sum, first_done = _asymptotic_sum(b - a, 1 - a, x)
    second_sum, second_done = _asymptotic_sum(a, a - b + 1, -x)
    log_x, log_gamma_b, log_gamma_a = log(x), lgamma(b), lgamma(safe(a > 0, a, 1.0))
    first = exp(log_gamma_b - log_gamma_a + (x + shift) + (a - b) * log_x)
    if x.dtype == np.float32:
        first = _float32_prefactor(first, (b, safe(a > 0, a, 1.0)), x + shift, double_float.two_sum(a, -b), x)
    first = jnp.where(a == 0, 0, first * first_sum)  # (1 / Gamma(0))
    sign = jss.gammasgn(b - a) * jnp.cos(const(x, np.pi) * a)
    second = sign * exp(log_gamma_b - lgamma(b - a) + shift - a * log_x) * second_sum
    second = jnp.where(is_nonpositive_integer(b - a), 0, second)  # (1 / Gamma(b - a))
    value = first + second
    negligible = jnp.abs(second) <= const(x, np.finfo(x.dtype).eps) * jnp.abs(first)
    return value, first_done & (second_done | negligible)


def _float32_prefactor(approximation: Any, gammas: tuple[Any, Any], linear: Any, power: tuple[Any, Any], x: Any) -> Any:
    """``gamma(g1) / gamma(g2) exp(linear) x**power`` of float32 (positive ``g1``, ``g2``; ``power`` a
    pair) from the sum of its logarithms in double-float arithmetic (:func:`xp._double_float.exp_of_pair`):
    its terms are up to a few hundred where the result is a float32. ``approximation``: the
    float32 computation, taken where the result is not a normal float32."""
    g1, g2 = evaluated_once(float32_log_gamma_pair, *((double_float.as_pair(g),) for g in gammas))
    t = double_float.add(double_float.multiply(power, double_float.log_pair(x)), double_float.as_pair(linear))
    t = double_float.add(t, double_float.subtract(g1, g2))
    return double_float.exp_of_pair(t, approximation)


def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """1F1(a; b; x) for finite a >= 0, b > 0, x >= 0 (where SciPy tests JAX's): the series for
    x < 100, the asymptotic expansion beyond where it converges (else the series, or NaN). Negative x goes through Kummer's transformation
    1F1(a; b; x) = exp(x) 1F1(b - a; b; -x), where b - a >= 0. NaN elsewhere."""
    finite = jnp.isfinite(a) & jnp.isfinite(b) & jnp.isfinite(x) & (b > 0)
    direct = finite & (a >= 0) & (x >= 0)
    kummer = finite & (b - a >= 0) & (x < 0)
    valid = direct | kummer
    upper = safe(valid, jnp.where(kummer, b - a, a), 1.0)
    lower = safe(valid, b, 1.0)
    z = jnp.abs(x)
    near = z < 100
    # from 100 on the asymptotic expansion where it reaches the dtype's precision, else the series
    # (NaN where its terms have not died out). Each gets harmless inputs where the other is taken
    # (1F1(1; 12; 100) is finite in float32): an infinite value there, and its NaN derivative times
    # the zero cotangent, made the derivative NaN (float32's in a and b, 1F1(0.125; 2.09; 5.1))
    far_side = valid & ~near
    far = safe(far_side, z, 100.0)
    asymptotic, converged = _hyp1f1_asymptotic(
        safe(far_side, upper, 1.0), safe(far_side, lower, 12.0), far, jnp.where(kummer, -far, 0)
    )
    series_side = near | ~converged
    series = _hyp1f1_series(upper, lower, safe(valid & series_side, z, 0.0))
    # (where e**x is below float32's normal range, from its logarithm: 1F1(20; 30; -100) = 3.6e-16)
    # (1F1 of a negative x is at most 1 there: an infinite series overflowed, NaN)
    scaled = jnp.where(x < -80, exp(x + log(jnp.maximum(series, 0))), exp(x) * series)
    series = jnp.where(kummer, jnp.where(jnp.isinf(series), const(x, np.nan), scaled), series)
    value = jnp.where(series_side, series, asymptotic)
    return jnp.where(valid, value, const(x, np.nan))


# B_0, B_1, ..., B_12 (Bernoulli's numbers, B_1 = -1/2)
_BERNOULLI: tuple[Fraction | int, ...] = (
    1, Fraction(-1, 2), Fraction(1, 6), 0, Fraction(-1, 30), 0, Fraction(1, 42), 0, Fraction(-1, 30), 0,
    Fraction(5, 66), 0, Fraction(-691, 2730),
)  # fmt: skip
_DILOGARITHM_SERIES = tuple(float(b / math.factorial(n + 1)) for n, b in enumerate(_BERNOULLI))
"""Li2(z) = sum of B_n u**(n + 1) / (n + 1)! over n, with u = -log(1 - z): for |u| <= log 2, where
it is used, the first term left out is below 1e-14."""


def _dilogarithm_by_u(u: Any) -> Any:
    """Li2(z) from ``u = -log(1 - z)``, ``|u| <= log 2``."""
    return u * polynomial(_DILOGARITHM_SERIES, u)


@jax.custom_jvp
def _float32_spence(x: Any) -> Any:
    """spence(x) = Li2(1 - x) of float32 ``x >= 0`` (SciPy's), from xp's logarithms and the
    series in ``u`` (JAX's float32 spence is 14 ulps off, and on a TPU built on the approximate
    logarithm). Each range keeps ``|u| <= log 2``:

    - ``x <= 1/2``: ``pi**2/6 - log(x) log(1 - x) - Li2(x)`` (Euler's reflection), ``u = -log1p(-x)``;
    - ``1/2 < x <= 2``: ``Li2(1 - x)`` itself (``1 - x`` exact), ``u = -log(x)``;
    - ``x > 2``: ``-pi**2/6 - log(x - 1)**2 / 2 - Li2(1 / (1 - x))``, ``u = log1p(-1/x)``.
    """
    defined = jnp.isfinite(x) & (x >= 0)
    low, high = x <= 0.5, x > 2
    xl = safe(defined & low & (x > 0), x, 0.25)
    xm = safe(~low & ~high, x, 1.0)
    xh = safe(defined & high, x, 4.0)
    zeta_2 = const(x, math.pi**2 / 6)
    below = zeta_2 - log(xl) * log1p(-xl) - _dilogarithm_by_u(-log1p(-xl))
    between = _dilogarithm_by_u(-log(xm))
    log_h = log(xh - 1)
    above = -zeta_2 - log_h * log_h / 2 - _dilogarithm_by_u(log1p(-1 / xh))
    between = jnp.where(x == 1, const(x, 0.0), between)  # (+0, as SciPy's: -log(1) is -0)
    value = jnp.where(low, jnp.where(x == 0, zeta_2, below), jnp.where(high, above, between))
    return jnp.where(defined, value, const(x, np.nan))


@jax.custom_jvp
def _float64_spence(x: Any) -> Any:
    """JAX's spence, with :func:`_spence_slope` as its derivative (JAX's own is NaN on (1, 2] and
    0 at 1)."""
    return jss.spence(x)


def _spence_slope(x: Any) -> Any:
    # d/dx Li2(1 - x) = log(x) / (1 - x), -1 at x = 1
    return jnp.where(x == 1, const(x, -1.0), log(x) / (1 - safe(x != 1, x, 0.0)))


@_float32_spence.defjvp
def _float32_spence_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    return _float32_spence(x), dx * _spence_slope(x)


@_float64_spence.defjvp
def _float64_spence_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    return _float64_spence(x), dx * _spence_slope(x)


def _spence(x: Any) -> Any:
    return _float32_spence(x) if x.dtype == np.float32 else _float64_spence(x)


SPENCE = Kernel("spence", ("z",), _spence, real_only_reason="JAX's spence is real-valued")


@jax.custom_jvp
def _i0(x: Any) -> Any:
    # exp(|x|) i0e(x), as JAX's, with xp's exponential (XLA's i0e asks for no exponential)
    return exp(jnp.abs(x)) * jss.i0e(x)


def _i1(x: Any) -> Any:
    return exp(jnp.abs(x)) * jss.i1e(x)


@_i0.defjvp
def _i0_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # i0' = i1 (the product rule through |x| gave 1 at 0, where i0 has its minimum)
    (x,), (dx,) = primals, tangents
    return _i0(x), _i1(x) * dx


I0 = Kernel("i0", ("x",), _i0)
I0E = Kernel("i0e", ("x",), jss.i0e)
I1 = Kernel("i1", ("x",), _i1)
I1E = Kernel("i1e", ("x",), jss.i1e)
HYP1F1 = Kernel("hyp1f1", ("a", "b", "x"), _hyp1f1, real_only_reason="JAX's hyp1f1 is real-valued")
