"""Double-float arithmetic on float32: a value as a pair ``hi + lo`` of float32 numbers carrying
about 44 significant bits, for the few steps where float32's own rounding, or XLA:TPU's, would
reach a result that must be correct to float32's last bit: ``pow`` on a TPU (xp/_float32_pow.py),
the reciprocals of ``psi`` and ``stdtr``, the quotients of ``logit``, and the prefactors of
``hyp1f1``'s asymptotic expansion and of the incomplete gamma and beta functions (exponentials of
sums of logarithms up to a few hundred, whose float32 rounding the exponential turns into 1e-5 of
the result).

Every operation is an addition, a multiplication, a division whose rounding is corrected, or the
exponential asked for accuracy (xp/_float32_accuracy.py); products are sums of the exact products
of halves (:func:`xp._float32_accuracy.split`), so neither a fused multiply-add nor a correctly
rounded division is assumed (XLA:TPU divides by multiplying with an approximate reciprocal, up to
1.5e-7 off relatively: docs/accelerators.md). Two rewrites of XLA's compilers would undo the
arithmetic and are kept out of its way: a multiplication fused into the subtraction that measures
its rounding (:func:`two_product`), and ``(x + c) - c`` folded into ``x`` (:func:`two_sum`).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _float32_accuracy as float32

_CENTRES = np.arange(-5, 8) / 16 + 1
"""The ``c = 1 + j/16`` nearest each ``m`` in [sqrt(1/2), sqrt(2)): ``j`` from -5 to 7."""


def _pair(values: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """float64 values as float32 pairs ``(hi, lo)`` with ``hi + lo`` within 2**-48 of each."""
    hi = values.astype(np.float32)
    return tuple(hi.tolist()), tuple((values - hi.astype(np.float64)).astype(np.float32).tolist())


_LOG2_CENTRES_HI, _LOG2_CENTRES_LO = _pair(np.log2(_CENTRES))
(LOG2E_HI, LOG2E_LO) = (np.float32(v[0]) for v in _pair(np.array([math.log2(math.e)])))
"""``log2(e)`` as a pair of float32 scalars."""
_LN2 = math.log(2.0)


def two_product(a: Any, b: Any) -> tuple[Any, Any]:
    """``a * b`` as ``p + e``: ``p`` the rounded product, ``e`` its rounding error (to about 2**-48
    of the product), as the sum of the four exact products of the halves of ``a`` and ``b``.
    (Not Dekker's ``(a_hi b_hi - a b) + ...``: XLA's CPU compiler may fuse the multiplication
    ``a b`` into that subtraction, which then takes the unrounded product, and ``e`` came out 0
    beside a rounded ``p``; fused multiply-adds of exact products change nothing.)"""
    a_hi, a_lo = float32.split(a)
    b_hi, b_lo = float32.split(b)
    p, e1 = two_sum(a_hi * b_hi, a_hi * b_lo)
    p, e2 = two_sum(p, a_lo * b_hi)
    p, e3 = two_sum(p, a_lo * b_lo)
    return fast_two_sum(p, (e1 + e2) + e3)


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b`` as ``s + e`` exactly (Knuth's algorithm, for operands of any magnitudes). A constant
    operand goes second: XLA's simplifier folds ``(x + c) - c`` into ``x`` (reassociating
    constants), which would take the error term away."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def fast_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b`` as ``s + e`` exactly, for ``|a| >= |b|`` (or ``a`` zero; ``a`` not a constant, as
    for :func:`two_sum`)."""
    s = a + b
    return s, b - (s - a)


def _lookup(table: tuple[float, ...], index: Any) -> Any:
    """``table[index]`` by selects (a handful of entries: no gather)."""
    value = jnp.zeros(index.shape, jnp.float32)
    for i, entry in enumerate(table):
        value = jnp.where(index == i, jnp.float32(entry), value)
    return value


def _power_of_two(n: Any) -> Any:
    """``2.0**n`` of float32 for integers ``n`` in [-126, 127], from its bits."""
    return lax.bitcast_convert_type((n.astype(jnp.int32) + 127) << 23, jnp.float32)


@jax.custom_jvp
def log2_pair(x: Any) -> tuple[Any, Any]:
    """``log2(x)`` of positive normal float32 ``x`` as a pair ``(hi, lo)``."""
    m, k = jnp.frexp(x)  # m in [1/2, 1)
    low = m < math.sqrt(0.5)
    m = jnp.where(low, m * 2, m)  # in [sqrt(1/2), sqrt(2))
    k = jnp.where(low, k - 1, k).astype(jnp.float32)
    j = jnp.round((m - 1) * 16)  # (m - 1 exact, the product too)
    c = 1 + j / 16  # exact
    difference = m - c  # exact: m is within a factor of 2 of c
    total_hi, total_lo = two_sum(m, c)
    s = difference / total_hi
    p, e = two_product(s, total_hi)
    s_lo = (((difference - p) - e) - s * total_lo) / total_hi  # (difference - p exact: p is near it)
    # ln(m / c) = 2 atanh(s + s_lo) = 2 s + 2 s_lo + 2 s**3 / 3 + 2 s**5 / 5 + 2 s**7 / 7 (the next
    # term is below 2**-50 of the first)
    z = s * s
    tail = s * z * (2 / 3 + z * (2 / 5 + z * (2 / 7)))
    ln_hi, ln_lo = 2 * s, 2 * s_lo + tail
    # times log2(e), then plus k and log2(c)
    v_hi, v_err = two_product(ln_hi, LOG2E_HI)
    v_lo = v_err + (ln_hi * LOG2E_LO + ln_lo * (LOG2E_HI + LOG2E_LO))
    index = (j + 5).astype(jnp.int32)
    centre_hi, centre_lo = _lookup(_LOG2_CENTRES_HI, index), _lookup(_LOG2_CENTRES_LO, index)
    a_hi, a_lo = two_sum(centre_hi, v_hi)
    b_hi, b_lo = two_sum(k, a_hi)
    return fast_two_sum(b_hi, b_lo + (a_lo + (centre_lo + v_lo)))


@log2_pair.defjvp
def _log2_pair_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    # d log2(x) = dx / (x ln 2) on the high part (JAX's rule for the frexp inside asks for exp2 at
    # XLA's default accuracy, approximate on a TPU)
    (x,), (dx,) = primals, tangents
    hi, lo = log2_pair(x)
    return (hi, lo), (dx / (x * _LN2), jnp.zeros_like(lo))


def exp2_pair(t_hi: Any, t_lo: Any) -> Any:
    """``2**(t_hi + t_lo)`` for ``t_hi`` in [-125, 128) (beyond float32's largest it is inf),
    rounded once: ``2**r`` (``r = t - n``, ``|r| <= 1/2``) from the accurate exponential's guess
    ``g``, corrected by one Newton step on its logarithm, ``2**r = g 2**(r - log2 g)``, with
    ``log2 g`` as a pair, so that a power that is a float32 (``11.0 ** 3``) comes out as that float."""
    n = jnp.round(t_hi)
    r_hi = t_hi - n  # exact
    guess = float32.exp((r_hi + t_lo) * _LN2)
    log_hi, log_lo = log2_pair(guess)
    correction = (r_hi - log_hi) + (t_lo - log_lo)  # (a few ulps of the guess: its square is below 2**-44)
    e = guess + guess * (correction * _LN2)
    half = jnp.floor(n / 2)
    return e * _power_of_two(half) * _power_of_two(n - half)  # (each factor normal: n in [-125, 128])


_SCALED_FROM = 2.0**64


def reciprocal(x: Any) -> Any:
    """``1 / x`` of float32 ``x``, correctly rounded but within about 2**-46 of a tie, on every
    backend: XLA:TPU's quotient ``r`` corrected by one Newton step ``r + r (1 - x r)``, with
    ``1 - x r`` exact from :func:`two_product` (on the CPU, whose division is IEEE's, the same
    bits). Zeros, infinities, NaN and reciprocals outside the normal range are the division's."""
    r = 1 / x
    return refine_reciprocal(x, r)


def refine_reciprocal(x: Any, r: Any) -> Any:
    """``r``, an approximation of ``1 / x`` within a few ulps, corrected to the rounded reciprocal
    (:func:`reciprocal`, whose approximation is the division's)."""
    # (x and r scaled toward 1 by powers of two where x is large or small: the low half of one, or
    # the correction of a reciprocal near float32's smallest normal numbers, would fall below the
    # normal range, which XLA flushes to zero, CPU included (where a fused multiply-add hides the
    # correction's flush, XLA:TPU has none). Both factors are chosen constants, not a division.)
    big, small = jnp.abs(x) > _SCALED_FROM, jnp.abs(x) < 1 / _SCALED_FROM
    scale = jnp.where(big, 1 / _SCALED_FROM, jnp.where(small, _SCALED_FROM, 1)).astype(x.dtype)
    unscale = jnp.where(big, _SCALED_FROM, jnp.where(small, 1 / _SCALED_FROM, 1)).astype(x.dtype)
    r_scaled = r * unscale
    p, e = two_product(x * scale, r_scaled)
    residual = (1 - p) - e  # (1 - p exact: p is within a few ulps of 1)
    corrected = (r_scaled + r_scaled * residual) * scale  # (rounded once: the scaling is exact)
    return jnp.where(jnp.isfinite(corrected) & (jnp.abs(r) >= np.finfo(np.float32).tiny), corrected, r)


def quotient(x: Any, y: Any) -> Any:
    """``x / y`` of float32, correctly rounded but within about 2**-44 of a tie, on every backend:
    ``x`` times the :func:`reciprocal` of ``y``, corrected by one step ``q + (x - q y) / y`` with
    ``x - q y`` exact (:func:`two_product`; ``q y`` is within an ulp of ``x``). For operands and
    quotients inside the normal range, not within 2**-64 of its ends (the halves' products must be
    normal); elsewhere, and at zeros, infinities and NaN, ``x`` times the reciprocal."""
    r = reciprocal(y)
    q = x * r
    p, e = two_product(q, y)
    corrected = q + ((x - p) - e) * r
    return jnp.where(jnp.isfinite(corrected), corrected, q)


# --- pairs: sums, products, the natural logarithm and exponential ---------------------------------

(LN2_HI,), (LN2_LO,) = _pair(np.array([math.log(2.0)]))
LN2_PAIR = (np.float32(LN2_HI), np.float32(LN2_LO))
"""``log(2)`` as a pair of float32 scalars."""
LOG2E_PAIR = (LOG2E_HI, LOG2E_LO)


def as_pair(x: Any) -> tuple[Any, Any]:
    """A float32 value as a pair (its low part 0)."""
    return x, jnp.zeros_like(x)


def add(p: tuple[Any, Any], q: tuple[Any, Any]) -> tuple[Any, Any]:
    """``p + q`` of pairs (either may be ``(value, 0)``), to about 2**-44 of the larger."""
    hi, lo = two_sum(p[0], q[0])
    return fast_two_sum(hi, lo + (p[1] + q[1]))


def multiply(p: tuple[Any, Any], q: tuple[Any, Any]) -> tuple[Any, Any]:
    """``p * q`` of pairs, to about 2**-44 relatively."""
    hi, lo = two_product(p[0], q[0])
    return fast_two_sum(hi, lo + (p[0] * q[1] + p[1] * q[0]))


def negative(p: tuple[Any, Any]) -> tuple[Any, Any]:
    return -p[0], -p[1]


def subtract(p: tuple[Any, Any], q: tuple[Any, Any]) -> tuple[Any, Any]:
    """``p - q`` of pairs (as :func:`add`)."""
    return add(p, negative(q))


def log_pair(x: Any) -> tuple[Any, Any]:
    """``log(x)`` of positive normal float32 ``x`` as a pair."""
    return multiply(log2_pair(x), LN2_PAIR)


def log_of_pair(z: tuple[Any, Any]) -> tuple[Any, Any]:
    """``log(hi + lo)`` of a positive pair: ``log(hi) + lo / hi`` (``lo`` is below an ulp of ``hi``)."""
    return add(log_pair(z[0]), as_pair(z[1] / z[0]))


def exp_of_pair(t: tuple[Any, Any], approximation: Any) -> Any:
    """``exp(t)`` of a pair, rounded once (:func:`exp2_pair`), where the result is a normal float32
    (below, or past float32's largest, ``approximation``: the float32 computation of the same
    value, whose rounding there no longer counts). For exponents of a few hundred formed from
    terms that each carry float32's rounding, ``exp`` of their float32 sum is that rounding times
    the exponent off (1e-5 for an exponent of 100); formed as a pair, the result is not."""
    t_hi, t_lo = multiply(t, LOG2E_PAIR)
    normal = (t_hi >= -125) & (t_hi < 128)
    value = exp2_pair(jnp.where(normal, t_hi, 0), jnp.where(normal, t_lo, 0))
    return jnp.where(normal, value, approximation)
