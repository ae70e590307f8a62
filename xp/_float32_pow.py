"""float32 ``pow`` at float32's accuracy on a TPU.

XLA:TPU computes float32 ``pow(x, y)`` as ``exp(y * log(x))`` with its approximate exponential
and logarithm: 5e-6 off relatively (docs/accelerators.md). Asking XLA for accuracy cannot cure
it: the rounding of ``log(x)`` alone is multiplied by ``|y log x|``, up to 128 before the result
overflows. So on a TPU xp computes ``t = y * log2(x)`` in double-float arithmetic (a float32
pair whose sum carries about 44 bits) and ``2**t`` from one accurate exponential of ``t``'s
fraction:

- ``x = m 2**k`` with ``m`` in [sqrt(1/2), sqrt(2)); ``c = 1 + j/16`` the nearest to ``m``;
  ``log2 x = k + log2 c + log2(m / c)``, ``log2 c`` from a table of float32 pairs;
- ``ln(m / c) = 2 atanh(s)`` with ``s = (m - c) / (m + c)``, ``|s| < 0.023``, where ``s`` is made
  a pair by one correction of the quotient, so that the rounding of the division, XLA:TPU's
  included, does not reach the result; the series' tail is a few float32 terms;
- ``t = y log2 x`` as a pair; ``2**t = 2**n 2**r``, ``n = round(t)``, ``2**r`` from the
  accurate exponential corrected by one Newton step (the logarithm of the guess as a pair again).

Every step is an addition, a multiplication, a corrected division, or the exponential asked for
accuracy; products are split exactly (Dekker's algorithm on :func:`xp._float32_accuracy.split`),
so no fused multiply-add is assumed.
The result is rounded once from a value within about 2**-40 of the power: correctly rounded but
for the rare values near a tie, and exact where the power is a float32.

Elsewhere the value is XLA's own: its special values (zeros, infinities, NaN, a negative ``x``
with a non-integer ``y``) and results below the normal range; and ``x ** 2`` stays ``x * x`` (the
rewrite XLA makes of a constant exponent 2). The CPU's and GPU's ``pow`` are
within an ulp already and stay as they are (``lax.platform_dependent``).
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
(_LOG2E_HI,), (_LOG2E_LO,) = _pair(np.array([math.log2(math.e)]))
_LN2 = math.log(2.0)

_LARGEST_EXPONENT = 2.0**31
"""``|y|`` beyond which ``|y log2 x|`` exceeds 150 for every float32 ``x != 1`` (``|log2 x|`` is at
least 8.6e-8): the computation takes ``y`` clipped to it (so that ``t`` and its rounding error
stay finite)."""


def _two_product(a: Any, b: Any) -> tuple[Any, Any]:
    """``a * b`` as ``p + e`` exactly: ``p`` the rounded product, ``e`` its rounding error."""
    p = a * b
    a_hi, a_lo = float32.split(a)
    b_hi, b_lo = float32.split(b)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b`` as ``s + e`` exactly (Knuth's algorithm, for operands of any magnitudes)."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _fast_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b`` as ``s + e`` exactly, for ``|a| >= |b|`` (or ``a`` zero)."""
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


def _log2_pair(x: Any) -> tuple[Any, Any]:
    """``log2(x)`` of positive normal float32 ``x`` as a pair ``(hi, lo)``."""
    m, k = jnp.frexp(x)  # m in [1/2, 1)
    low = m < math.sqrt(0.5)
    m = jnp.where(low, m * 2, m)  # in [sqrt(1/2), sqrt(2))
    k = jnp.where(low, k - 1, k).astype(jnp.float32)
    j = jnp.round((m - 1) * 16)  # (m - 1 exact, the product too)
    c = 1 + j / 16  # exact
    difference = m - c  # exact: m is within a factor of 2 of c
    total_hi, total_lo = _two_sum(m, c)
    s = difference / total_hi
    p, e = _two_product(s, total_hi)
    s_lo = (((difference - p) - e) - s * total_lo) / total_hi  # (difference - p exact: p is near it)
    # ln(m / c) = 2 atanh(s + s_lo) = 2 s + 2 s_lo + 2 s**3 / 3 + 2 s**5 / 5 + 2 s**7 / 7 (the next
    # term is below 2**-50 of the first)
    z = s * s
    tail = s * z * (2 / 3 + z * (2 / 5 + z * (2 / 7)))
    ln_hi, ln_lo = 2 * s, 2 * s_lo + tail
    # times log2(e), then plus k and log2(c)
    v_hi, v_err = _two_product(ln_hi, jnp.float32(_LOG2E_HI))
    v_lo = v_err + (ln_hi * _LOG2E_LO + ln_lo * (_LOG2E_HI + _LOG2E_LO))
    index = (j + 5).astype(jnp.int32)
    centre_hi, centre_lo = _lookup(_LOG2_CENTRES_HI, index), _lookup(_LOG2_CENTRES_LO, index)
    a_hi, a_lo = _two_sum(centre_hi, v_hi)
    b_hi, b_lo = _two_sum(k, a_hi)
    return _fast_two_sum(b_hi, b_lo + (a_lo + (centre_lo + v_lo)))


def _exp2_pair(t_hi: Any, t_lo: Any) -> Any:
    """``2**(t_hi + t_lo)`` for ``t_hi`` in [-125, 128) (beyond float32's largest it is inf),
    rounded once: ``2**r`` (``r = t - n``, ``|r| <= 1/2``) from the accurate exponential's guess
    ``g``, corrected by one Newton step on its logarithm, ``2**r = g 2**(r - log2 g)``, with
    ``log2 g`` as a pair, so that a power that is a float32 (``11.0 ** 3``) comes out as that float."""
    n = jnp.round(t_hi)
    r_hi = t_hi - n  # exact
    guess = float32.exp((r_hi + t_lo) * _LN2)
    log_hi, log_lo = _log2_pair(guess)
    correction = (r_hi - log_hi) + (t_lo - log_lo)  # (a few ulps of the guess: its square is below 2**-44)
    e = guess + guess * (correction * _LN2)
    half = jnp.floor(n / 2)
    return e * _power_of_two(half) * _power_of_two(n - half)  # (each factor normal: n in [-125, 128])


def pow_from_pairs(x: Any, y: Any) -> Any:
    """float32 ``x ** y`` from double-float arithmetic: the TPU's computation, callable anywhere."""
    x, y = jnp.broadcast_arrays(x, y)
    magnitude = jnp.abs(x)
    y_integer = jnp.floor(y) == y
    odd = y_integer & (jnp.abs(y) < 2.0**24) & (jnp.floor(y / 2) * 2 != y)  # (from 2**24 on, even)
    computed = (magnitude > 0) & jnp.isfinite(magnitude) & jnp.isfinite(y) & ((x > 0) | y_integer)
    safe_x = jnp.where(computed, magnitude, jnp.float32(2.0))
    safe_y = jnp.clip(jnp.where(computed, y, jnp.float32(1.0)), -_LARGEST_EXPONENT, _LARGEST_EXPONENT)
    log_hi, log_lo = _log2_pair(safe_x)
    t_hi, t_err = _two_product(safe_y, log_hi)
    t_hi, t_lo = _fast_two_sum(t_hi, t_err + safe_y * log_lo)
    normal = (t_hi >= -125) & (t_hi < 128)
    value = _exp2_pair(jnp.where(normal, t_hi, 0), jnp.where(normal, t_lo, 0))
    value = jnp.where(t_hi >= 128, jnp.float32(jnp.inf), value)
    value = jnp.where(odd & (x < 0), -value, value)
    xla = jnp.power(x, y)
    value = jnp.where(computed & (t_hi >= -125), value, xla)
    return jnp.where(y == 2, x * x, value)


@jax.custom_jvp
def pow(x: Any, y: Any) -> Any:
    """float32 ``x ** y``: :func:`pow_from_pairs` on a TPU, XLA's ``pow`` elsewhere."""
    return lax.platform_dependent(x, y, tpu=pow_from_pairs, default=jnp.power)


@pow.defjvp
def _pow_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    # JAX's rule, with this pow and xp's logarithm: d/dx = y x**(y - 1) (0 where y is 0),
    # d/dy = log(x) x**y (log 1 where x is 0, as JAX has it)
    (x, y), (dx, dy) = primals, tangents
    out = pow(x, y)
    d_x = jnp.where(y == 0, jnp.zeros_like(y), y * pow(x, y - 1))
    d_y = float32.log(jnp.where(x == 0, jnp.ones_like(x), x)) * out
    return out, dx * d_x + dy * d_y
