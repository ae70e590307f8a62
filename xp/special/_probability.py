"""``xp.special``: the incomplete gamma and beta functions, and the distribution functions SciPy
defines from them (the error functions and the normal distribution: ``_error_functions``).

The distribution functions are the identities of their SciPy (Cephes) definitions, e.g.
``chdtr(v, x) = gammainc(v/2, x/2)`` and ``bdtr(k, n, p) = I_{1-p}(n - floor(k), floor(k) + 1)``,
with SciPy's values at the ends of their domains and NaN outside them. Complements are computed
as complements (``incomplete_beta`` below gives both sides), not as ``1 - cdf``, so small tail
probabilities keep their precision.

float32's incomplete gamma function is xp's own, on xp's accurate exponentials and logarithms
(JAX's lowers into XLA's, which XLA:TPU approximates).
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
from jax.custom_derivatives import SymbolicZero

from xp import _double_float as double_float
from xp.special._error_functions import erfc, erfcx, ndtr
from xp.special._gamma import float32_log_gamma_pair, lgamma, log_beta, log_gamma_1_plus, stirling_correction
from xp.special._kernel import Kernel, const, evaluated_once, exp, expm1, log, log1p, polynomial, safe

# --- incomplete gamma and beta --------------------------------------------------------------


# From this a on, P(a, x) and Q(a, x) are Temme's uniform asymptotic expansion: JAX's series and
# continued fraction lose accuracy as a grows (largest relative error against SciPy over x from
# a / 1000 to 10 a: 2e-11 at a = 1e4, 3e-10 at 1e5, 3e-7 at 1e8, 2e-3 at 1e12) and, for x near a,
# run for ever from about a = 1e16 (their loops take of the order of sqrt(a) steps).
_TEMME_FROM = 1e4
# The first two coefficient functions of the expansion, c0(eta) and c1(eta), as power series in
# eta (Temme 1979; DiDonato and Morris 1986), where their closed forms cancel (|x - a| < a / 100).
_C0 = (-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -139 / 777600)
_C1 = (-1 / 540, -1 / 288, 1 / 378)
# mu - log1p(mu) = mu**2 (1/2 - mu/3 + mu**2/4 - ...), for |mu| < 1/100
_MU_MINUS_LOG1P = tuple((-1) ** k / (k + 2) for k in range(8))


_NEAR = 0.01
"""Below this |mu|, mu - log1p(mu) is its series (_MU_MINUS_LOG1P)."""


def _mu_minus_log1p(x: Any, a: Any) -> tuple[Any, Any]:
    """(mu, mu - log1p(mu)) for mu = x / a - 1, which is eta**2 / 2 of Temme's expansion and the
    exponent of the incomplete gamma function's prefactor over -a. mu is (x - a) / a (exact where x
    is near a); log1p(mu) is computed from that mu, whose rounding then cancels in the difference,
    but below x = a / 2 as log(x / a) (1 + mu would lose the digits of a small x / a); near 0 the
    difference is its series."""
    mu = (x - a) / a
    near = jnp.abs(mu) < _NEAR
    far = safe(~near, mu, 0.5)
    below_half = mu < -0.5
    log_ratio = jnp.where(below_half, log(safe(below_half, x / a, 0.25)), log1p(safe(~below_half, far, 0.5)))
    return mu, jnp.where(near, mu * mu * polynomial(_MU_MINUS_LOG1P, mu), far - log_ratio)


def _temme(a: Any, x: Any) -> tuple[Any, Any]:
    """(P(a, x), Q(a, x)) for a >= 1e4 and 0 < x < inf: with lambda = x / a and eta the signed
    root of eta**2 / 2 = lambda - 1 - log(lambda), Q = erfc(eta sqrt(a/2)) / 2 + R and
    P = erfc(-eta sqrt(a/2)) / 2 - R, where R = exp(-a eta**2 / 2) / sqrt(2 pi a) (c0 + c1 / a).
    Against SciPy in float64, the largest relative error over x from a / 1000 to 10 a is 2e-11 at
    a = 1e4 and 4e-13 at 1e5, in the tails where the two terms nearly cancel (2e-10 at 1e6, for a
    result of 1e-23), and below 4e-16 from a = 1e8 on."""
    mu, half_eta2 = _mu_minus_log1p(x, a)  # mu = lambda - 1
    near = jnp.abs(mu) < _NEAR
    far = safe(~near, mu, 0.5)
    eta = jnp.sign(mu) * jnp.sqrt(2 * half_eta2)
    far_eta = safe(~near, eta, 0.5)
    c0 = jnp.where(near, polynomial(_C0, eta), 1 / far - 1 / far_eta)
    c1 = jnp.where(near, polynomial(_C1, eta), 1 / far_eta**3 - 1 / far**3 - 1 / far**2 - 1 / (12 * far))
    r = exp(-a * half_eta2) / jnp.sqrt(2 * np.pi * a) * (c0 + c1 / a)
    root = eta * jnp.sqrt(a / 2)
    return erfc(-root) / 2 - r, erfc(root) / 2 + r


def _large_a(a: Any, x: Any) -> Any:
    """Where Temme's expansion gives P and Q (see _TEMME_FROM)."""
    return (a >= _TEMME_FROM) & (a < np.inf) & (x > 0) & (x < np.inf)


def _lower(a: Any, x: Any) -> Any:
    """JAX's P(a, x), or for float32 :func:`lower_incomplete_gamma32`."""
    return lower_incomplete_gamma32(a, x) if x.dtype == np.float32 else jss.gammainc(a, x)


def _upper(a: Any, x: Any) -> Any:
    """JAX's Q(a, x), or for float32 :func:`upper_incomplete_gamma32`."""
    return upper_incomplete_gamma32(a, x) if x.dtype == np.float32 else jss.gammaincc(a, x)


_SERIES_TERMS = 2000  # at most, of the series and of the continued fraction (a < 1e4: O(sqrt(a)) needed)


def _log_prefactor_pair(a: Any, x: Any, rest: Any) -> tuple[Any, Any]:
    """``log(x^a e^-x / Gamma(a))`` of positive float32 ``a``, ``x`` as a double-float pair
    (xp/_double_float.py): ``a log x - x - log Gamma(a)``, from ``a = 8`` on as ``a (log x - log a)
    - (x - a) + rest`` (Stirling's, ``rest = log(a / 2 pi) / 2 - delta(a)``, a few units at most).
    The exponent reaches 100 in the tails (results near 1e-30), where its float32 rounding alone
    would be 1e-5 of the result."""
    log_x, log_a = evaluated_once(double_float.log_pair, (x,), (a,))
    a_pair = double_float.as_pair(a)
    small = double_float.subtract(double_float.multiply(a_pair, log_x), double_float.as_pair(x))
    small = double_float.subtract(small, float32_log_gamma_pair(a_pair))
    ratio = double_float.subtract(log_x, log_a)
    large = double_float.add(double_float.multiply(a_pair, ratio), double_float.two_sum(a, -x))
    large = double_float.add(large, double_float.as_pair(rest))
    return jnp.where(a >= 8, large[0], small[0]), jnp.where(a >= 8, large[1], small[1])


def _incomplete_gamma32(a: Any, x: Any) -> tuple[Any, Any]:
    """(P(a, x), Q(a, x)) of float32 ``a`` and ``x``, JAX's method and values with xp's logarithms
    and exponentials (JAX's lower into XLA:TPU's approximate ones): P by its series
    ``x^a e^-x / Gamma(a + 1) * sum of x^n / ((a + 1) ... (a + n))`` for ``x < a + 1``, Q by its
    continued fraction (modified Lentz) beyond, the other as the complement. The prefactor
    ``x^a e^-x / Gamma(a)`` is, from ``a = 8`` on, ``sqrt(a / 2 pi) exp(-a (mu - log(x / a)) - delta(a))``
    with ``mu = (x - a) / a`` and Stirling's ``delta``: ``a log x - x - lgamma(a)`` would lose
    ``a log x`` times float32's epsilon."""
    inside = (a > 0) & (x > 0) & (a < np.inf) & (x < np.inf)
    a_, x_ = safe(inside, a, 1.0), safe(inside, x, 1.0)
    eps = const(x, float(np.finfo(np.float32).eps))  # (a factor within an ulp of 1: converged)
    tiny = const(x, float(np.finfo(np.float32).tiny))
    # the prefactor x^a e^-x / Gamma(a)
    large = a_ >= 8
    al = safe(large, a_, 8.0)
    _, half_eta2 = _mu_minus_log1p(x_, al)
    rest = 0.5 * log(al / const(x, 2 * np.pi)) - stirling_correction(al)
    log_front = jnp.where(large, -al * half_eta2 + rest, a_ * log(x_) - x_ - lgamma(a_))
    front = double_float.exp_of_pair(_log_prefactor_pair(a_, x_, rest), exp(log_front))
    series_side = x_ < a_ + 1

    def series_step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        n, term, total, _ = state
        term = term * x_ / (a_ + n)
        total = total + term
        return n + 1, term, total, jnp.any(series_side & (term > eps * total))

    def fraction_step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        # an element that has converged keeps its value: the factors that follow are 1 only to
        # within an epsilon each, and the loop runs until the slowest element converges
        i, b, c, d, h, done = state
        an = -i * (i - a_)
        b = b + 2
        d = an * d + b
        d = 1 / jnp.where(jnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = jnp.where(jnp.abs(c) < tiny, tiny, c)
        delta = c * d
        h = jnp.where(done, h, h * delta)
        return i + 1, b, c, d, h, done | (jnp.abs(delta - 1) <= eps)

    one = jnp.ones_like(x)
    series = lax.while_loop(
        lambda s: (s[0] <= _SERIES_TERMS) & s[3], series_step, (const(x, 1.0), one, one, jnp.asarray(True))
    )[2]
    b0 = jnp.where(series_side, const(x, 2.0), x_ + 1 - a_)  # (a harmless start where the series is used)
    fraction = lax.while_loop(
        lambda s: (s[0] <= _SERIES_TERMS) & ~jnp.all(s[5]),
        fraction_step,
        (const(x, 1.0), b0, one / tiny, 1 / b0, 1 / b0, series_side),
    )[4]
    p = jnp.clip(front / a_ * series, 0, 1)
    q = jnp.clip(front * fraction, 0, 1)
    lower = jnp.where(series_side, p, 1 - q)
    upper = jnp.where(series_side, 1 - p, q)
    # JAX's values elsewhere: P(a, 0) = 0, P(a, inf) = 1, P(0, x) = 1 for a, x > 0; NaN otherwise
    at_zero = (x == 0) & (a > 0)
    at_inf = (x == np.inf) & (a > 0) & (a < np.inf)
    a_zero = (a == 0) & (x > 0)
    lower = jnp.where(at_zero, const(x, 0.0), jnp.where(at_inf | a_zero, const(x, 1.0), lower))
    upper = jnp.where(at_zero, const(x, 1.0), jnp.where(at_inf | a_zero, const(x, 0.0), upper))
    known = inside | at_zero | at_inf | a_zero
    return jnp.where(known, lower, const(x, np.nan)), jnp.where(known, upper, const(x, np.nan))


def _lower_slope(a: Any, x: Any, da: Any, dx: Any) -> Any:
    """The tangent of P(a, x): JAX's derivative in ``a`` (``lax.igamma_grad_a``), the density
    ``x^(a-1) e^-x / Gamma(a)`` in ``x``."""
    slope = jnp.zeros_like(x)
    if type(da) is not SymbolicZero:
        slope = slope + lax.igamma_grad_a(a, x) * da
    if type(dx) is not SymbolicZero:
        positive = x > 0
        xs = safe(positive, x, 1.0)
        density = jnp.where(positive, exp((a - 1) * log(xs) - xs - lgamma(a)), const(x, 0.0))
        slope = slope + density * dx
    return slope


@jax.custom_jvp
def lower_incomplete_gamma32(a: Any, x: Any) -> Any:
    return _incomplete_gamma32(a, x)[0]


@jax.custom_jvp
def upper_incomplete_gamma32(a: Any, x: Any) -> Any:
    return _incomplete_gamma32(a, x)[1]


def _lower_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (a, x), (da, dx) = primals, tangents
    return lower_incomplete_gamma32(a, x), _lower_slope(a, x, da, dx)


def _upper_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (a, x), (da, dx) = primals, tangents
    return upper_incomplete_gamma32(a, x), -_lower_slope(a, x, da, dx)


# (symbolic zeros: no derivative in a is computed where a has no tangent)
lower_incomplete_gamma32.defjvp(_lower_jvp, symbolic_zeros=True)
upper_incomplete_gamma32.defjvp(_upper_jvp, symbolic_zeros=True)


def _probability(value: Any) -> Any:
    """``value`` clipped into [0, 1] (rounding in a series must not leave it), with ``value``'s own
    derivative: the clip corrects rounding, and a clip's derivative is half the slope where the
    value equals a bound (a maximum's at a tie), as float32's tails round to exactly 0 or 1."""
    return value + lax.stop_gradient(jnp.clip(value, 0, 1) - value)


def _gammainc(a: Any, x: Any) -> Any:
    large = _large_a(a, x)
    out = _lower(safe(~large, a, 1.0), safe(~large, x, 1.0))
    out = jnp.where(large, _temme(safe(large, a, _TEMME_FROM), safe(large, x, _TEMME_FROM))[0], out)
    # SciPy's limits where JAX gives NaN: P(0, x) = 1 and P(inf, x) = 0 for 0 < x < inf
    inside = (x > 0) & (x < np.inf)
    out = jnp.where((a == 0) & inside, const(x, 1.0), out)
    out = jnp.where((a == np.inf) & inside, const(x, 0.0), out)
    out = jnp.where((a == np.inf) & (x == np.inf), const(x, np.nan), out)
    return _probability(out)


# Q(a, x) for a below this and 0 < x <= 1 by _small_a_q: JAX takes it as 1 - P(a, x) there,
# which keeps no relative precision as Q(a, x) ~ a E1(x) vanishes with a (gammaincc(1e-8, 0.25)
# is 1.0e-8, JAX's off by 1e-7 relative, by 2e-4 at a = 1e-12; chdtrc(1e-300, 0.5) came out
# 3.5e-14, not 5.2e-301)
_SMALL_A_Q_BELOW = 0.5
_SMALL_A_Q_TERMS = 20  # of the series in x <= 1: 1/20! is 4e-19


def _small_a_q(a: Any, x: Any) -> Any:
    """Q(a, x) = 1 - x^a / Gamma(1 + a) + a x^a S / Gamma(1 + a) for 0 < a <= 1/2 and 0 < x <= 1,
    from gamma(a, x) = x^a sum (-x)^n / (n! (a + n)), with S = sum_{n >= 1} (-1)^(n+1) x^n /
    (n! (n + a)); the first two terms as -expm1(a log x - log Gamma(1 + a)), so both parts are
    computed to their own relative precision and are positive (no cancellation below a = 1/2)."""
    near = a <= 0.2  # (the Taylor series of log Gamma(1 + a), exact for tiny a, holds to 0.2)
    log_gamma = jnp.where(near, log_gamma_1_plus(safe(near, a, 0.0)), lgamma(1 + safe(~near, a, 0.3)))
    exponent = a * log(x)
    series = jnp.zeros_like(x)
    power = jnp.ones_like(x)  # (-1)^(n+1) x^n / n!
    for n in range(1, _SMALL_A_Q_TERMS + 1):
        power = power * (-x) / n
        series = series - power / (n + a)
    return -expm1(exponent - log_gamma) + a * exp(exponent - log_gamma) * series


def _gammaincc(a: Any, x: Any) -> Any:
    large = _large_a(a, x)
    small = (a > 0) & (a < _SMALL_A_Q_BELOW) & (x > 0) & (x <= 1)
    out = _upper(safe(~large & ~small, a, 1.0), safe(~large & ~small, x, 1.0))
    out = jnp.where(large, _temme(safe(large, a, _TEMME_FROM), safe(large, x, _TEMME_FROM))[1], out)
    out = jnp.where(small, _small_a_q(safe(small, a, 0.25), safe(small, x, 0.5)), out)
    inside = (x > 0) & (x < np.inf)
    out = jnp.where((a == np.inf) & inside, const(x, 1.0), out)
    out = jnp.where((a == np.inf) & (x == np.inf), const(x, np.nan), out)
    return _probability(out)


# The incomplete beta function is JAX's method (the continued fraction of DLMF 8.17.22, by the
# modified Lentz algorithm, on the side of the symmetry 8.17.4 where it converges fast) with xp's
# log_beta in its prefactor x^a (1 - x)^b / (a B(a, b)). JAX's prefactor takes log B(a, b) as
# lgamma(a) + lgamma(b) - lgamma(a + b), which cancels once a or b is large: relative error 1e-9
# at b = 1e6, 2e-5 at 1e10, no digit left from about 1e15 (Student's t cdf with 1e6 degrees of
# freedom was off by 7e-10, with 1e15 by a factor of 4).
_LENTZ_TERMS = {np.dtype(np.float32): 200, np.dtype(np.float64): 600}  # (JAX's limits)


def _beta_fraction(a: Any, b: Any, x: Any) -> Any:
    """1 + d1 / (1 + d2 / (1 + ...)) of DLMF 8.17.22, every element until each has converged.
    Near the switch point of the symmetry a large parameter needs of the order of its square root
    in terms (I_y(5e9, 1/2) with 1 - y = 9e-10: 1.6e-7 off, each step below the tolerance, so
    the loop stops); Student's t, the case that meets it, takes a series there instead."""
    eps = const(x, float(np.finfo(x.dtype).eps))  # (a factor within an ulp of 1: converged)
    tiny = const(x, np.finfo(x.dtype).tiny)

    def term(j: Any) -> Any:  # d_j, j >= 1
        m = jnp.floor(j / 2)
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))  # d_{2m+1}
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))  # d_{2m}
        return jnp.where(j % 2 == 1, odd, even)

    def nonzero(v: Any) -> Any:
        return jnp.where(jnp.abs(v) < tiny, tiny, v)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        # an element that has converged keeps its value: the factors that follow are 1 only to
        # within an epsilon each, and the loop runs until the slowest element converges
        j, f, c, d, done = state
        dj = term(j)
        d = 1 / nonzero(1 + dj * d)
        c = nonzero(1 + dj / c)
        delta = c * d
        return j + 1, jnp.where(done, f, f * delta), c, d, done | (jnp.abs(delta - 1) <= eps)

    def more(state: tuple[Any, ...]) -> Any:
        return (state[0] <= _LENTZ_TERMS[x.dtype]) & ~jnp.all(state[4])

    one = jnp.ones_like(x)
    state = (const(x, 1.0), one, one, jnp.zeros_like(x), jnp.zeros(x.shape, bool))
    return lax.while_loop(more, step, state)[1]


def _betainc(a: Any, b: Any, x: Any) -> Any:
    """I_x(a, b), with JAX's values at the ends and NaN outside the domain."""
    return incomplete_beta(a, b, x, 1 - x)[0]


def _logs(x: Any, x1: Any) -> tuple[Any, Any]:
    """log x and log(1 - x), each from whichever of x and x1 = 1 - x is below 1/2 (the other
    may be rounded: b log(1 - x) for b = 1e20 needs 1 - x to full precision)."""
    low = x < 0.5
    return jnp.where(low, log(x), log1p(-x1)), jnp.where(low, log1p(-x), log(x1))


def _log_beta_front_pair(p: Any, q: Any, y: Any, y1: Any) -> tuple[Any, Any]:
    """``log(y^p (1 - y)^q / (p B(p, q)))`` of float32 ``p, q > 0`` and ``y`` in (0, 1) (``y1 = 1 - y``
    as the caller has it) as a double-float pair (xp/_double_float.py): its terms reach a few
    hundred for parameters of tens, and the float32 rounding of each came to 2e-5 of the result.
    ``1 - y`` (or ``1 - y1``) is a pair exactly, and ``log B`` the sum of three log gamma pairs."""
    low = y < 0.5
    one_less_y1, one_less_y = double_float.two_sum(-y1, 1), double_float.two_sum(-y, 1)  # (constants second)
    y_pair = jnp.where(low, y, one_less_y1[0]), jnp.where(low, 0, one_less_y1[1])
    y1_pair = jnp.where(low, one_less_y[0], y1), jnp.where(low, one_less_y[1], 0)
    p_pair, q_pair = double_float.as_pair(p), double_float.as_pair(q)
    log_y, log_y1, log_p = evaluated_once(double_float.log_of_pair, (y_pair,), (y1_pair,), (p_pair,))
    t = double_float.add(double_float.multiply(p_pair, log_y), double_float.multiply(q_pair, log_y1))
    log_gamma_p, log_gamma_q, log_gamma_sum = evaluated_once(
        float32_log_gamma_pair, (p_pair,), (q_pair,), (double_float.two_sum(p, q),)
    )
    log_beta_pair = double_float.subtract(double_float.add(log_gamma_p, log_gamma_q), log_gamma_sum)
    return double_float.subtract(t, double_float.add(log_p, log_beta_pair))


@jax.custom_jvp
def incomplete_beta(a: Any, b: Any, x: Any, x1: Any) -> tuple[Any, Any]:
    """I_x(a, b) and its complement 1 - I_x(a, b) = I_{1-x}(b, a), given x and ``x1 = 1 - x``, each
    to the precision the caller has it: the one below 1/2 is used where its precision matters
    (Student's t passes 1 - x where x rounds to 1).

    The continued fraction is evaluated once, on the side where it converges fast: there it gives
    the smaller of the two to its full relative precision, and the other is 1 minus it. So a
    complement costs nothing more, and is never 1 minus a number near 1."""
    # the side where the fraction converges fast (x < (a + 1) / (a + b + 2)), decided on the exact one
    flip = jnp.where(x < 0.5, x >= (a + 1) / (a + b + 2), x1 <= (b + 1) / (a + b + 2))
    inside = (a > 0) & (b > 0) & (a < np.inf) & (b < np.inf) & (x > 0) & (x1 > 0)
    p = safe(inside, jnp.where(flip, b, a), 1.0)
    q = safe(inside, jnp.where(flip, a, b), 1.0)
    y = safe(inside, jnp.where(flip, x1, x), 0.5)
    y1 = safe(inside, jnp.where(flip, x, x1), 0.5)
    log_y, log_y1 = _logs(y, y1)
    front = exp(p * log_y + q * log_y1 - log_beta(p, q) - log(p))
    if x.dtype == np.float32:
        front = double_float.exp_of_pair(_log_beta_front_pair(p, q, y, y1), front)
    value = front / _beta_fraction(p, q, y)
    # the limits: I_x(0, b) = I_x(a, inf) = 1 and I_x(a, 0) = I_x(inf, b) = 0 inside (0, 1); the
    # ends, x = 1 where x1 = 0 (x may round to 1 where x1 is not 0: F's cdf with a tiny dfd)
    a_zero, b_zero = (a == 0) | (b == np.inf), (b == 0) | (a == np.inf)
    at_zero = (x == 0) | (b_zero & (x1 != 0))
    at_one = (x1 == 0) | (a_zero & (x != 0))
    undefined = (a < 0) | (b < 0) | (x < 0) | (x1 < 0) | (a_zero & b_zero) | jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x)

    def finished(side: Any, zero: float, one: float) -> Any:
        side = jnp.where(at_zero, const(x, zero), jnp.clip(side, 0, 1))
        return jnp.where(undefined, const(x, np.nan), jnp.where(at_one, const(x, one), side))

    return finished(jnp.where(flip, 1 - value, value), 0.0, 1.0), finished(jnp.where(flip, value, 1 - value), 1.0, 0.0)


def _incomplete_beta_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    # d/dx I_x(a, b) = x^(a-1) (1 - x)^(b-1) / B(a, b), and the complement's its negative; x1 = 1 - x
    # moves with x. The slope is the tangent of the side below 1/2: a side near 1 is a quotient
    # p / (p + q) whose tangent p'/(p + q) - p (p + q)'/(p + q)**2 cancels (fdtr's w = dfn x /
    # (dfd + dfn x) for large dfn x lost float32's digits). The shape parameters are not
    # differentiated, as in JAX.
    a, b, x, x1 = primals
    da, db, dx, dx1 = tangents
    if not (isinstance(da, SymbolicZero) and isinstance(db, SymbolicZero)):
        raise ValueError("Betainc gradient with respect to a and b not supported.")  # (JAX's words)
    values = incomplete_beta(a, b, x, x1)
    if isinstance(dx, SymbolicZero) and isinstance(dx1, SymbolicZero):
        zero = jnp.zeros_like(values[0])
        return values, (zero, zero)
    log_x, log_x1 = _logs(x, x1)
    density = exp((a - 1) * log_x + (b - 1) * log_x1 - log_beta(a, b))
    if isinstance(dx, SymbolicZero):
        slope = -dx1
    elif isinstance(dx1, SymbolicZero):
        slope = dx
    else:
        slope = jnp.where(x <= x1, dx, -dx1)
    return values, (density * slope, -density * slope)


# (symbolic zeros: the tangents of the shape parameters must be absent)
incomplete_beta.defjvp(_incomplete_beta_jvp, symbolic_zeros=True)


def _betaincc(a: Any, b: Any, x: Any) -> Any:
    """1 - I_x(a, b), from the same continued fraction as I_x(a, b) (:func:`incomplete_beta`)."""
    return incomplete_beta(a, b, x, 1 - x)[1]


GAMMAINC = Kernel("gammainc", ("a", "x"), _gammainc)
GAMMAINCC = Kernel("gammaincc", ("a", "x"), _gammaincc)
BETAINC = Kernel("betainc", ("a", "b", "x"), _betainc)
BETAINCC = Kernel("betaincc", ("a", "b", "x"), _betaincc)


# --- distribution functions -------------------------------------------------------------------


def _nan_unless(valid: Any, value: Any) -> Any:
    return jnp.where(valid, value, const(value, np.nan))


def _chdtr(v: Any, x: Any) -> Any:
    # chi-square cdf: P(v/2, x/2); undefined for v < 0, x < 0 and at v = x = 0
    valid = (v >= 0) & (x >= 0) & ~((v == 0) & (x == 0))
    return _nan_unless(valid, _gammainc(v / 2, x / 2))


def _chdtrc(v: Any, x: Any) -> Any:
    valid = (v >= 0) & (x >= 0) & ~((v == 0) & (x == 0))
    return _nan_unless(valid, _gammaincc(v / 2, x / 2))


def _gdtr(a: Any, b: Any, x: Any) -> Any:
    # gamma cdf with rate a and shape b: P(b, a x)
    valid = (a >= 0) & (b >= 0) & (x >= 0)
    return _nan_unless(valid, _gammainc(b, a * x))


def _gdtrc(a: Any, b: Any, x: Any) -> Any:
    valid = (a >= 0) & (b >= 0) & (x >= 0)
    return _nan_unless(valid, _gammaincc(b, a * x))


def _pdtr(k: Any, m: Any) -> Any:
    # Poisson cdf: sum of the terms 0..floor(k) = Q(floor(k) + 1, m)
    valid = (k >= 0) & (m >= 0)
    out = _gammaincc(jnp.floor(k) + 1, m)
    out = jnp.where(m == 0, const(m, 1.0), out)
    return _nan_unless(valid, jnp.where((k == np.inf) & (m < np.inf), const(m, 1.0), out))


def _pdtrc(k: Any, m: Any) -> Any:
    valid = (k >= 0) & (m >= 0)
    out = _gammainc(jnp.floor(k) + 1, m)
    out = jnp.where(m == 0, const(m, 0.0), out)
    return _nan_unless(valid, jnp.where((k == np.inf) & (m < np.inf), const(m, 0.0), out))


def _is_count(n: Any) -> Any:
    """A finite non-negative integer value (SciPy truncates other ``n`` to an integer; xp
    gives NaN rather than a result for another argument)."""
    return (n >= 0) & (n == jnp.floor(n)) & (n < np.inf)


def _bdtr(k: Any, n: Any, p: Any) -> Any:
    # binomial cdf: sum of the terms 0..floor(k) = I_{1-p}(n - fk, fk + 1); 1 at fk = n
    fk = jnp.floor(k)
    valid = _is_count(n) & (fk >= 0) & (fk <= n) & (p >= 0) & (p <= 1)
    tail = (fk < n) & valid
    value = _betaincc(safe(tail, fk + 1, 1.0), safe(tail, n - fk, 1.0), p)
    return _nan_unless(valid, jnp.where(fk == n, const(p, 1.0), value))


def _bdtrc(k: Any, n: Any, p: Any) -> Any:
    fk = jnp.floor(k)
    valid = _is_count(n) & (fk <= n) & (p >= 0) & (p <= 1) & ~jnp.isnan(k)
    tail = (fk >= 0) & (fk < n) & valid
    value = _betainc(safe(tail, fk + 1, 1.0), safe(tail, n - fk, 1.0), p)
    value = jnp.where(fk < 0, const(p, 1.0), jnp.where(fk == n, const(p, 0.0), value))
    return _nan_unless(valid, value)


def _nbdtr(k: Any, n: Any, p: Any) -> Any:
    # negative binomial cdf: I_p(n, floor(k) + 1)
    fk = jnp.floor(k)
    valid = _is_count(n) & (n > 0) & (fk >= 0) & (fk < np.inf) & (p >= 0) & (p <= 1)
    return _nan_unless(valid, _betainc(safe(valid, n, 1.0), safe(valid, fk + 1, 1.0), p))


def _nbdtrc(k: Any, n: Any, p: Any) -> Any:
    fk = jnp.floor(k)
    valid = _is_count(n) & (n > 0) & (fk >= 0) & (fk < np.inf) & (p >= 0) & (p <= 1)
    return _nan_unless(valid, _betaincc(safe(valid, n, 1.0), safe(valid, fk + 1, 1.0), p))


def _fdtr(dfn: Any, dfd: Any, x: Any) -> Any:
    # F cdf: I_w(dfn/2, dfd/2) with w = dfn x / (dfd + dfn x)
    valid = (dfn > 0) & (dfd > 0) & (x >= 0) & (dfn < np.inf) & (dfd < np.inf)
    w, w1 = _f_argument(dfn, dfd, x)
    return _nan_unless(valid, incomplete_beta(dfn / 2, dfd / 2, w, w1)[0])


def _f_argument(dfn: Any, dfd: Any, x: Any) -> tuple[Any, Any]:
    """w = dfn x / (dfd + dfn x) and 1 - w = dfd / (dfd + dfn x), each computed (1 - w from a
    rounded w lost the small dfd's precision: fdtr(539, 0.0011, 500) was 2e-9 off)."""
    w = jnp.where(x == np.inf, const(x, 1.0), dfn * x / (dfd + dfn * x))
    return w, dfd / (dfd + dfn * x)


def _fdtrc(dfn: Any, dfd: Any, x: Any) -> Any:
    # the complement 1 - I_w(dfn/2, dfd/2) = I_{1-w}(dfd/2, dfn/2), with both w and 1 - w exact
    valid = (dfn > 0) & (dfd > 0) & (x >= 0) & (dfn < np.inf) & (dfd < np.inf)
    w, w1 = _f_argument(dfn, dfd, x)
    return _nan_unless(valid, incomplete_beta(dfd / 2, dfn / 2, w1, w)[0])


# From this many degrees of freedom on, Student's t cdf is the series of _t_tail_many_df: the
# continued fraction for I_y(a, 1/2) with y near 1 needs of the order of sqrt(a) terms (relative
# error against mpmath at t = -3: 1.8e-11 at df = 1e6, 4e-8 at 1e10, 3e-3 at 1e15, no digit
# left at 1e20; in float32 3e-5 at 1e4). The series measured within 1e-13 of mpmath, as SciPy,
# from df = 1000 to 1e20 (below 1000 the fraction is as accurate).
_T_SERIES_FROM = 1e3
_T_SERIES_TERMS = 20


@functools.cache
def _root_coefficients(n: int) -> tuple[float, ...]:
    """The first ``n`` Taylor coefficients of sqrt(s / (1 - exp(-s))), exactly (then rounded)."""
    # s / (1 - e^-s) = 1 / (1 - s/2 + s^2/6 - ...): the reciprocal, then the square root, of power series
    e = [Fraction((-1) ** k, math.factorial(k + 1)) for k in range(n)]
    f = [Fraction(1)]
    for k in range(1, n):
        f.append(-sum((e[i] * f[k - i] for i in range(1, k + 1)), Fraction(0)))
    c = [Fraction(1)]
    for k in range(1, n):
        c.append((f[k] - sum((c[i] * c[k - i] for i in range(1, k)), Fraction(0))) / 2)
    return tuple(float(v) for v in c)


def _t_tail_many_df(df: Any, t: Any, u: Any) -> Any:
    """P(T < -|t|) = I_y(a, 1/2) / 2 with a = df/2 and y = df / (df + t**2) = e^-s0, for
    df >= _T_SERIES_FROM and u = t / sqrt(df) in (-1, 1), by the expansion in incomplete gamma
    functions (Didonato and Morris's BGRAT, for b = 1/2): with sqrt(s / (1 - e^-s)) = sum c_k s^k,
    I_y(a, 1/2) = sum c_k Gamma(k + 1/2, a s0) / a^(k + 1/2) / B(a, 1/2). Its terms fall as
    s0^k (s0 = log(1 + u**2) < log 2) and k!/a^k: 20 terms leave under 1e-17."""
    a = df / 2
    # s0 = log1p(u**2) = u**2 g, lam = a s0 = t**2 g / 2, power = sqrt(s0) = |u| sqrt(g): u**2
    # underflows for df = 1e300 (and t**2 / df's derivative overflows); g does neither
    v = u * u
    g = jnp.where(v > 1e-30, log1p(v) / safe(v > 1e-30, v, 1.0), 1 - v / 2)
    s0 = v * g
    lam = t * t * g / 2
    # U_k = e^lam Gamma(k + 1/2, lam) / a^(k + 1/2), up from e^lam Gamma(1/2, lam) = sqrt(pi)
    # erfcx(sqrt(lam)): scaled by e^lam, no term underflows where the tail is near 1e-300 (the
    # unscaled terms after the first were flushed to zero there, 3e-8 of the value)
    term = const(df, np.sqrt(np.pi)) * erfcx(jnp.sqrt(lam)) / jnp.sqrt(a)
    power = jnp.abs(u) * jnp.sqrt(g)  # s0^(k + 1/2)
    total = jnp.zeros_like(df)
    for k, c in enumerate(_root_coefficients(_T_SERIES_TERMS)):
        total = total + c * term
        term = ((k + 0.5) * term + power) / a
        power = power * s0
    return total * exp(-lam - log_beta(a, const(df, 0.5))) / 2


def _divided_by(x: Any, y: Any) -> Any:
    """``x / y`` of float32 from :func:`xp._double_float.reciprocal` (two roundings on every backend)."""
    return x * double_float.reciprocal(y)


def _stdtr(df: Any, t: Any) -> Any:
    """Student's t cdf. With r = df / t**2, z = 1 / (1 + r) = t**2 / (t**2 + df) and
    y = r / (1 + r) = 1 - z (each without cancellation, and without t**2 overflowing), the
    lower tail cdf(-|t|) is 1/2 - I_z(1/2, df/2) / 2 while that is above 1/4, and the tail
    I_y(df/2, 1/2) / 2 below: neither subtracts nearly equal numbers (near t = 0 the first keeps
    the slope that y, rounded to 1, would lose; far out the second keeps the tail's precision).
    From _T_SERIES_FROM degrees of freedom on (with t**2 < df), the series of _t_tail_many_df."""
    valid = (df > 0) & ~jnp.isnan(t)
    nonzero = t != 0
    tn = safe(nonzero, t, 1.0)
    # many degrees of freedom (and t**2 < df): the series of _t_tail_many_df, near t = 0 as in
    # the tail (the fraction needs more terms than it has, for the centre as for the tail). Each
    # branch gets harmless inputs where the other is taken: an infinite partial derivative in the
    # discarded one made the gradient NaN (df = 1e300, t = 1e-8: r = inf)
    series = (df >= _T_SERIES_FROM) & (jnp.abs(tn) < jnp.sqrt(df))
    dff, tf = safe(~series, df, 1.0), safe(~series, tn, 1.0)
    # (the quotients from correctly rounded reciprocals: y**(df/2) multiplies y's rounding by
    # df/2, and XLA:TPU's division is 1.5e-7 off; float64 keeps IEEE division)
    divide = _divided_by if t.dtype == np.float32 else jnp.divide
    r = divide(divide(dff, tf), tf)
    z = divide(jnp.ones_like(r), 1 + r)
    # I_z(1/2, df/2) and its complement I_y(df/2, 1/2), given y = 1 - z as computed: 1 - z rounds
    # to 1 for df >> t**2
    centre, tail = incomplete_beta(const(t, 0.5), dff / 2, z, divide(r, 1 + r))
    tail = tail / 2
    lower = jnp.where(centre < 0.5, 0.5 - centre / 2, tail)
    dfs, ts = safe(series, df, _T_SERIES_FROM), safe(series, tn, 1.0)
    lower = jnp.where(series, _t_tail_many_df(dfs, ts, ts / jnp.sqrt(dfs)), lower)
    out = jnp.where(t < 0, lower, 1 - lower)
    # 1/2 at t = 0, written 1/2 + t * density(0) so that its derivative there is the density
    # (a constant branch has none: the gradient at 0 was 0)
    at_zero = 0.5 + t * exp(-0.5 * log(df) - log_beta(df / 2, const(t, 0.5)))
    out = jnp.where(nonzero, out, at_zero)
    # the normal cdf in the limit df = inf (the beta forms are NaN there)
    out = jnp.where(df == np.inf, ndtr(t), out)
    return _nan_unless(valid, out)


CHDTR = Kernel("chdtr", ("v", "x"), _chdtr)
CHDTRC = Kernel("chdtrc", ("v", "x"), _chdtrc)
GDTR = Kernel("gdtr", ("a", "b", "x"), _gdtr)
GDTRC = Kernel("gdtrc", ("a", "b", "x"), _gdtrc)
PDTR = Kernel("pdtr", ("k", "m"), _pdtr)
PDTRC = Kernel("pdtrc", ("k", "m"), _pdtrc)
BDTR = Kernel("bdtr", ("k", "n", "p"), _bdtr)
BDTRC = Kernel("bdtrc", ("k", "n", "p"), _bdtrc)
NBDTR = Kernel("nbdtr", ("k", "n", "p"), _nbdtr)
NBDTRC = Kernel("nbdtrc", ("k", "n", "p"), _nbdtrc)
FDTR = Kernel("fdtr", ("dfn", "dfd", "x"), _fdtr)
FDTRC = Kernel("fdtrc", ("dfn", "dfd", "x"), _fdtrc)
STDTR = Kernel("stdtr", ("df", "t"), _stdtr)
