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
accuracy (xp/_double_float.py: products as sums of the exact products of halves, so no fused
multiply-add is assumed).
The result is rounded once from a value within about 2**-40 of the power: correctly rounded but
for the rare values near a tie, and exact where the power is a float32.

Elsewhere the value is XLA's own: its special values (zeros, infinities, NaN, a negative ``x``
with a non-integer ``y``) and results below the normal range; and ``x ** 2`` stays ``x * x`` (the
rewrite XLA makes of a constant exponent 2). The CPU's and GPU's ``pow`` are
within an ulp already and stay as they are (``lax.platform_dependent``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from xp import _float32_accuracy as float32
from xp._double_float import exp2_pair, fast_two_sum, log2_pair, two_product

_LARGEST_EXPONENT = 2.0**31
"""``|y|`` beyond which ``|y log2 x|`` exceeds 150 for every float32 ``x != 1`` (``|log2 x|`` is at
least 8.6e-8): the computation takes ``y`` clipped to it (so that ``t`` and its rounding error
stay finite)."""


def pow_from_pairs(x: Any, y: Any) -> Any:
    """float32 ``x ** y`` from double-float arithmetic: the TPU's computation, callable anywhere."""
    x, y = jnp.broadcast_arrays(x, y)
    magnitude = jnp.abs(x)
    y_integer = jnp.floor(y) == y
    odd = y_integer & (jnp.abs(y) < 2.0**24) & (jnp.floor(y / 2) * 2 != y)  # (from 2**24 on, even)
    computed = (magnitude > 0) & jnp.isfinite(magnitude) & jnp.isfinite(y) & ((x > 0) | y_integer)
    safe_x = jnp.where(computed, magnitude, jnp.float32(2.0))
    safe_y = jnp.clip(jnp.where(computed, y, jnp.float32(1.0)), -_LARGEST_EXPONENT, _LARGEST_EXPONENT)
    log_hi, log_lo = log2_pair(safe_x)
    t_hi, t_err = two_product(safe_y, log_hi)
    t_hi, t_lo = fast_two_sum(t_hi, t_err + safe_y * log_lo)
    normal = (t_hi >= -125) & (t_hi < 128)
    value = exp2_pair(jnp.where(normal, t_hi, 0), jnp.where(normal, t_lo, 0))
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
