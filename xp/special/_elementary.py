"""``xp.special``: elementary functions SciPy lists among its special functions (powers, trig
in degrees, ``exprel``, ``sinc``, Box-Cox, Huber losses) and the entropy family.

Each is a short ``jax.numpy`` computation of its definition, arranged so that no precision is
lost where the naive formula would lose it (said at each function).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from xp.special._kernel import Kernel, const, exp, expm1, log, log1p, polynomial, pow, safe

# --- powers, exponentials, trigonometry -----------------------------------------------------


def _exp2(x: Any) -> Any:
    # xp's pow: within 1 ulp of SciPy (float32's correctly rounded on a TPU too); jnp.exp2
    # (exp(x log 2)) is off by up to 8e-14 at |x| ~ 1000
    return pow(const(x, 2.0), x)


def _exp10(x: Any) -> Any:
    return pow(const(x, 10.0), x)


@jax.custom_jvp
def _exprel(x: Any) -> Any:
    # (exp(x) - 1) / x, with the limits 1 at 0 and inf at inf
    value = expm1(x) / safe(x != 0, x, 1.0)
    value = jnp.where(x == 0, const(x, 1.0), value)
    return jnp.where(x == np.inf, const(x, np.inf), value)


_EXPREL_SLOPE_SERIES = tuple((k + 1) / math.factorial(k + 2) for k in range(16))
"""exprel'(x) = sum of (k + 1) x**k / (k + 2)! over k: for |x| < 1/2, where it is used, the terms
left out are below 1e-17 of it."""


@_exprel.defjvp
def _exprel_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # exprel'(x) = (expm1(x) (x - 1) + x) / x**2, whose terms cancel near 0 (and which the limit
    # at 0 would make 0): its series there; 0 at -inf, inf at inf
    (x,), (dx,) = primals, tangents
    small = jnp.abs(x) < 0.5
    xs, xl = safe(small, x, 0.0), safe(~small & jnp.isfinite(x), x, 1.0)
    slope = jnp.where(small, polynomial(_EXPREL_SLOPE_SERIES, xs), (expm1(xl) * (xl - 1) + xl) / (xl * xl))
    slope = jnp.where(x == -np.inf, const(x, 0.0), jnp.where(x == np.inf, x, slope))
    return _exprel(x), slope * dx


def _cosm1(x: Any) -> Any:
    # cos(x) - 1 = -2 sin(x/2)**2, without the cancellation near 0
    s = jnp.sin(x / 2)
    return -2 * s * s


@jax.custom_jvp
def _sinc(x: Any) -> Any:
    return jnp.sinc(x)


_SINC_SLOPE_SERIES = tuple(
    float((-1) ** (j + 1) * 2 * (j + 1) * np.pi ** (2 * j + 2) / math.factorial(2 * j + 3)) for j in range(10)
)
"""sinc'(x) = x times the sum of these times x**(2j): for |x| < 1/4, where it is used, the terms
left out are below 1e-20 of it."""


@_sinc.defjvp
def _sinc_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # sinc'(x) = (cos(pi x) - sinc(x)) / x, whose terms cancel near 0 (jax.numpy's rule: float32's
    # 3 times too large at 1e-4): its series there
    (x,), (dx,) = primals, tangents
    value = _sinc(x)
    small = jnp.abs(x) < 0.25
    xs, xl = safe(small, x, 0.0), safe(~small, x, 1.0)
    slope = jnp.where(small, xs * polynomial(_SINC_SLOPE_SERIES, xs * xs), (jnp.cos(np.pi * xl) - _sinc(xl)) / xl)
    return value, slope * dx


def _reduce_degrees(x: Any) -> tuple[Any, Any]:
    """(d, q) with x = d + 90 q (mod 360), |d| <= 45 and q in 0..3. The reduction is exact:
    fmod(x, 360) is exact in floating point, and so is subtracting the nearest multiple of 90;
    so multiples of 90 give exact zeros and ones."""
    r = jnp.fmod(x, const(x, 360.0))
    quadrant = jnp.round(r / 90)
    return r - 90 * quadrant, jnp.mod(quadrant, 4)


def _sin_cos_degrees(d: Any) -> tuple[Any, Any]:
    # sin 30 = 1/2 exactly (as in SciPy); pi/6 rounded would give 0.49999999999999994
    radians = d * const(d, np.pi / 180)
    s = jnp.where(jnp.abs(d) == 30, jnp.copysign(const(d, 0.5), d), jnp.sin(radians))
    return s, jnp.cos(radians)


# The functions of degrees have their derivatives as rules (sin' = pi/180 cos, ...): the exact
# values at 30 and 45 degrees are constants, whose derivative would be 0 there.


@jax.custom_jvp
def sin_degrees(x: Any) -> Any:
    d, q = _reduce_degrees(x)
    s, c = _sin_cos_degrees(d)
    return jnp.select([q == 0, q == 1, q == 2], [s, c, -s], -c)


@jax.custom_jvp
def _cosdg(x: Any) -> Any:
    d, q = _reduce_degrees(x)
    s, c = _sin_cos_degrees(d)
    return jnp.select([q == 0, q == 1, q == 2], [c, -s, -c], s)


@sin_degrees.defjvp
def _sin_degrees_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    return sin_degrees(x), const(x, np.pi / 180) * _cosdg(x) * dx


@_cosdg.defjvp
def _cosdg_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    return _cosdg(x), -const(x, np.pi / 180) * sin_degrees(x) * dx


def _tan_degrees(x: Any) -> tuple[Any, Any]:
    # (tan d, whether tan x = -1 / tan d); tan 45 = 1 exactly (as in SciPy)
    d, q = _reduce_degrees(x)
    t = jnp.where(jnp.abs(d) == 45, jnp.copysign(const(x, 1.0), d), jnp.tan(d * const(x, np.pi / 180)))
    return t, (q == 1) | (q == 3)


@jax.custom_jvp
def _tandg(x: Any) -> Any:
    # SciPy's value at the poles (odd multiples of 90) is +inf, whichever side
    t, odd = _tan_degrees(x)
    return jnp.where(odd, jnp.where(t == 0, const(x, np.inf), -1 / t), t)


@jax.custom_jvp
def _cotdg(x: Any) -> Any:
    t, odd = _tan_degrees(x)
    return jnp.where(odd, -t, jnp.where(t == 0, const(x, np.inf), 1 / t))


@_tandg.defjvp
def _tandg_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    value = _tandg(x)
    return value, const(x, np.pi / 180) * (1 + value * value) * dx


@_cotdg.defjvp
def _cotdg_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    value = _cotdg(x)
    return value, -const(x, np.pi / 180) * (1 + value * value) * dx


def _radian(d: Any, m: Any, s: Any) -> Any:
    # degrees, arc minutes and arc seconds to radians, summed smallest first as SciPy does
    return ((s / 60 + m) / 60 + d) * const(d, np.pi / 180)


CBRT = Kernel("cbrt", ("x",), jnp.cbrt)
EXP2 = Kernel("exp2", ("x",), _exp2)
EXP10 = Kernel("exp10", ("x",), _exp10)
EXPREL = Kernel("exprel", ("x",), _exprel)
COSM1 = Kernel("cosm1", ("x",), _cosm1)
SINDG = Kernel("sindg", ("x",), sin_degrees)
COSDG = Kernel("cosdg", ("x",), _cosdg)
TANDG = Kernel("tandg", ("x",), _tandg)
COTDG = Kernel("cotdg", ("x",), _cotdg)
RADIAN = Kernel("radian", ("d", "m", "s"), _radian)
SINC = Kernel("sinc", ("x",), _sinc, complex=True)


# --- Box-Cox and Huber ----------------------------------------------------------------------


def _boxcox_of_log(log_x: Any, lmbda: Any) -> Any:
    """(x**lmbda - 1) / lmbda = expm1(lmbda log x) / lmbda, which tends to log x as lmbda -> 0:
    below sqrt(eps) the series log x (1 + lmbda log x / 2) is used, exact to rounding there
    (JAX's boxcox1p gives 0 where lmbda log1p(x) underflows: 0 at x = 1e-138, lmbda = 1e-256)."""
    t = lmbda * log_x
    small = jnp.abs(t) < np.sqrt(np.finfo(log_x.dtype).eps)
    value = jnp.where(small, log_x * (1 + t / 2), expm1(t) / safe(~small, lmbda, 1.0))
    # (the series is log x at lmbda = 0, with its derivative log(x)**2 / 2 there; an infinite
    # log x makes t NaN)
    return jnp.where((lmbda == 0) & ~jnp.isfinite(log_x), log_x, value)


def _boxcox(x: Any, lmbda: Any) -> Any:
    return _boxcox_of_log(log(x), lmbda)


def _boxcox1p(x: Any, lmbda: Any) -> Any:
    return _boxcox_of_log(log1p(x), lmbda)


def _inverse_boxcox_exponent(y: Any, lmbda: Any) -> Any:
    """log1p(lmbda y) / lmbda, which tends to y as lmbda -> 0: below sqrt(eps) the series
    y (1 - lmbda y / 2) is used, exact to rounding there (also where lmbda y underflows)."""
    lx = lmbda * y
    small = jnp.abs(lx) < np.sqrt(np.finfo(y.dtype).eps)
    series = y * (1 - lx / 2)
    # where lmbda y overflows to +inf, log1p(lmbda y) is log lmbda + log y (inv_boxcox(1e300,
    # 1e300) is 1.0, not inf)
    overflow = (lx == np.inf) & jnp.isfinite(lmbda) & jnp.isfinite(y)
    lxs = safe(~overflow, lx, 0.0)
    logged = jnp.where(
        overflow, log(jnp.abs(safe(overflow, lmbda, 1.0))) + log(jnp.abs(safe(overflow, y, 1.0))), log1p(lxs)
    )
    return jnp.where(small, series, logged / safe(~small, lmbda, 1.0))


def _inv_boxcox(y: Any, lmbda: Any) -> Any:
    return exp(_inverse_boxcox_exponent(y, lmbda))


def _inv_boxcox1p(y: Any, lmbda: Any) -> Any:
    return expm1(_inverse_boxcox_exponent(y, lmbda))


def _huber(delta: Any, r: Any) -> Any:
    quadratic = jnp.abs(r) <= delta
    value = jnp.where(quadratic, r * r / 2, delta * (jnp.abs(r) - delta / 2))
    return jnp.where(delta < 0, const(r, np.inf), value)


def _pseudo_huber(delta: Any, r: Any) -> Any:
    # delta**2 (sqrt(1 + (r/delta)**2) - 1) = r**2 / (sqrt(1 + (r/delta)**2) + 1): no
    # cancellation for small r/delta; hypot keeps (r/delta)**2 from overflowing
    nonzero = (delta != 0) & (r != 0)
    d = safe(nonzero, delta, 1.0)
    ar = jnp.abs(r)
    value = ar * (ar / (jnp.hypot(const(r, 1.0), r / d) + 1))
    value = jnp.where(nonzero, value, const(r, 0.0))
    value = jnp.where(delta == np.inf, const(r, np.nan), value)  # SciPy: inf * 0
    return jnp.where(delta < 0, const(r, np.inf), value)


BOXCOX = Kernel("boxcox", ("x", "lmbda"), _boxcox)
BOXCOX1P = Kernel("boxcox1p", ("x", "lmbda"), _boxcox1p)
INV_BOXCOX = Kernel("inv_boxcox", ("y", "lmbda"), _inv_boxcox)
INV_BOXCOX1P = Kernel("inv_boxcox1p", ("y", "lmbda"), _inv_boxcox1p)
HUBER = Kernel("huber", ("delta", "r"), _huber)
PSEUDO_HUBER = Kernel("pseudo_huber", ("delta", "r"), _pseudo_huber)


# --- entropy ----------------------------------------------------------------------------------


def _relative_entropy(x: Any, y: Any, at_zero: Any) -> Any:
    """x log(x / y) for x, y > 0; ``at_zero`` for x = 0 <= y; inf elsewhere; NaN for NaN.
    (JAX gives inf for a NaN y, and NaN for x = inf.)"""
    positive = (x > 0) & (y > 0)
    xs, ys = safe(positive, x, 1.0), safe(positive, y, 1.0)
    ratio = xs / ys
    # near x = y, log1p of the exact difference (x - y is exact there) keeps the small log's
    # precision; where x / y overflows, or is subnormal (XLA flushes it to 0): log x - log y
    near = jnp.abs(xs - ys) <= ys / 2
    normal = (ratio >= np.finfo(x.dtype).tiny) & (ratio < np.inf)
    log_ratio = jnp.where(normal, log(ratio), log(xs) - log(ys))
    log_ratio = jnp.where(near, log1p((xs - ys) / ys), log_ratio)
    value = jnp.where(positive, xs * log_ratio, const(x, np.inf))
    value = jnp.where((x == 0) & (y >= 0), at_zero, value)
    return jnp.where(jnp.isnan(x) | jnp.isnan(y), const(x, np.nan), value)


def _rel_entr(x: Any, y: Any) -> Any:
    return _relative_entropy(x, y, jnp.zeros_like(x))


def _kl_div(x: Any, y: Any) -> Any:
    # x log(x/y) - x + y
    value = _relative_entropy(x, y, y)
    positive = (x > 0) & (y > 0)
    return jnp.where(positive, value - x + y, value)


def _entr(x: Any) -> Any:
    # -x log x, 0 at 0 and -inf below (as JAX's, with xp's logarithm)
    positive = x > 0
    value = jnp.where(positive, -x * log(safe(positive, x, 1.0)), const(x, 0.0))
    return jnp.where(x < 0, const(x, -np.inf), jnp.where(jnp.isnan(x), x, value))


def _times_log(log_of: Any) -> Any:
    """``x * log_of(y)``, 0 where ``x`` is 0 unless ``y`` is NaN (SciPy's ``xlogy``, ``xlog1py``), with
    JAX's derivative ``log_of(y) dx + x log_of'(y) dy``, defined at ``x = 0`` too."""

    @jax.custom_jvp
    def times_log(x: Any, y: Any) -> Any:
        return jnp.where((x != 0) | jnp.isnan(y), x * log_of(y), jnp.zeros_like(x))

    @times_log.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (dx, dy) = primals, tangents
        slope = jax.jvp(log_of, (y,), (jnp.ones_like(y),))[1]
        return times_log(x, y), dx * log_of(y) + x * slope * dy

    return times_log


ENTR = Kernel("entr", ("x",), _entr)
REL_ENTR = Kernel("rel_entr", ("x", "y"), _rel_entr)
KL_DIV = Kernel("kl_div", ("x", "y"), _kl_div)
XLOGY = Kernel("xlogy", ("x", "y"), _times_log(log), complex=True)
XLOG1PY = Kernel("xlog1py", ("x", "y"), _times_log(log1p), complex=True)
