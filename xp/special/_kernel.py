"""How the functions of ``xp.special`` take their arguments and run: one :class:`Kernel` each.

A :class:`Kernel` names a special function, its parameters (SciPy's names), the ``jax``
computation, and whether it takes complex input. :func:`call` converts the arguments with
``xp._boundary`` (so a bad argument is reported as ``xp.special.erf: x must be ...``, and a
sparse one is routed by ``xp._routing.api``) and runs the computation in a jitted kernel whose
trace-time code does the dtype work, as ``xp._elementwise`` does: an eager call costs one
cached dispatch, a traced call inlines.

The dtype rule is SciPy's on the array API dtypes, with xp's promotion:

- the operands promote together (``xp._dtypes.promote``; a Python scalar takes its dtype from
  the array operands by the standard's scalar rule);
- an integer or boolean result is computed in the default real floating dtype (float64 with
  JAX's 64-bit mode on, float32 otherwise), as SciPy computes integers in float64;
- float32 stays float32 and float64 stays float64;
- complex input is accepted only where both SciPy and JAX compute the function on complex
  numbers; elsewhere it is a TypeError that says so (never a silently dropped imaginary part).

The operands are broadcast together (the standard's rules) before the computation, so every
result has the broadcast shape and the computation dtype.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import Tracer, kernel

# The computations' exponentials, logarithms and hyperbolic functions are xp's element-wise ones,
# not jax.numpy's: for float32 (and complex64) they ask XLA for its accurate implementations, which
# XLA:TPU's defaults are not (docs/accelerators.md, "Accuracy").
from xp._special_cases import cosh as cosh
from xp._special_cases import exp as exp
from xp._special_cases import expm1 as expm1
from xp._special_cases import log as log
from xp._special_cases import log1p as log1p
from xp._special_cases import pow as pow
from xp._special_cases import sinh as sinh


@dataclass(frozen=True)
class Kernel:
    """One special function: ``compute`` takes the operands broadcast and cast to the
    computation dtype (then any static arguments) and returns the values."""

    name: str
    params: tuple[str, ...]
    compute: Callable[..., Any]
    complex: bool = False  # SciPy and JAX both compute it on complex input
    real_only_reason: str = "JAX computes it for real arguments only"
    run: Callable[..., Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "run", kernel(functools.partial(_kernel, self), static_argnames="static"))


def call(kernel: Kernel, *args: Any, static: tuple[Any, ...] = ()) -> Array:
    """``kernel`` applied to the public arguments ``args`` (any ArrayLike, in parameter order)."""
    if all(type(a) is Array for a in args):
        return wrap(kernel.run(*(a._value for a in args), static=static))
    return wrap(kernel.run(*operands(args, kernel.params), static=static))


def operands(args: tuple[Any, ...], params: tuple[str, ...]) -> list[Any]:
    """The arguments as jax arrays; a Python scalar takes its dtype from the array operands
    (the standard's scalar rule, as in ``xp._elementwise.operands``), or its own default
    dtype when every argument is a Python scalar."""
    values = [boundary.operand(a, p) for a, p in zip(args, params, strict=True)]
    arrays = [v for v in values if type(v) not in boundary.PY_SCALARS]
    if len(arrays) == len(values):
        return values
    if not arrays:
        return [boundary.array(v, p) for v, p in zip(values, params, strict=True)]
    common = _promote([v.dtype for v in arrays], params)
    traced = any(isinstance(v, Tracer) for v in arrays)
    convert = boundary.scalar_constant if traced else boundary.scalar_array  # a literal in a trace
    result = []
    for v, p in zip(values, params, strict=True):
        if type(v) in boundary.PY_SCALARS:
            v = convert(v, dt.scalar_dtype(common, type(v)), p)
        result.append(v)
    return result


def _promote(dtypes: list[np.dtype], params: tuple[str, ...]) -> np.dtype:
    try:
        return dt.promote_all(dtypes)
    except dt.PromotionError as e:
        fail(TypeError, f"{', '.join(params)}: {e}")


def _kernel(kernel: Kernel, *values: Any, static: tuple[Any, ...]) -> Any:
    # trace time: the dtype checks and promotion cost nothing on later calls
    for value, param in zip(values, kernel.params, strict=True):
        if value.dtype.kind == "c" and not kernel.complex:
            fail(TypeError, f"{param} has dtype {value.dtype}, but xp.special.{kernel.name} takes real input only "
                 f"({kernel.real_only_reason})")  # fmt: skip
    dtype = _promote([v.dtype for v in values], kernel.params)
    if dtype.kind in "biu":
        dtype = dt.default_float()
    try:
        shape = np.broadcast_shapes(*(v.shape for v in values))
    except ValueError:
        shapes = ", ".join(str(v.shape) for v in values)
        fail(ValueError, f"{', '.join(kernel.params)} cannot be broadcast together: shapes {shapes}")
    cast = [jnp.broadcast_to(lax.convert_element_type(v, dtype), shape) for v in values]
    out = kernel.compute(*cast, *static)
    if out.dtype != dtype or getattr(out, "weak_type", False):
        out = lax.convert_element_type(out, dtype)
    return out


# --- helpers for the computations -------------------------------------------------------------


def const(x: Any, value: float) -> Any:
    """``value`` as a strongly typed scalar of ``x``'s dtype."""
    return np.asarray(value, dtype=x.dtype)


def is_nonpositive_integer(x: Any) -> Any:
    """Where ``x`` is 0, -1, -2, ... (the poles of the gamma function; -inf included)."""
    return (x <= 0) & (x == jnp.floor(x))


def polynomial(coefficients: Sequence[float], z: Any) -> Any:
    """The sum of ``coefficients[k] * z**k`` (Horner's scheme), the coefficients as strongly
    typed scalars of ``z``'s dtype."""
    total = jnp.zeros_like(z)
    for c in reversed(coefficients):
        total = total * z + const(z, c)
    return total


def safe(where: Any, x: Any, fill: float) -> Any:
    """``x`` where ``where`` holds, else ``fill``: the input of a branch whose result is
    discarded elsewhere, so that the discarded branch neither overflows, nor loops, nor
    gives NaN gradients through ``jnp.where``."""
    return jnp.where(where, x, const(x, fill))


def evaluated_once(function: Callable[..., Any], *calls: tuple[Any, ...]) -> list[Any]:
    """``function(*call)`` for each of ``calls`` (tuples of arguments, arrays or pairs of arrays),
    traced once: their arguments broadcast together and stacked along a new first axis, and
    ``function`` mapped over it (``lax.map``). For element-wise computations of thousands of
    operations: each copy traced into a program is compiled again, seconds on a CPU and a minute
    on a TPU. A loop rather than one call over the stacked arrays: XLA fuses such a call into
    the consumers of its slices, and each consumer computed much of it again, many times the work
    of separate copies (bench/special.py times the functions that take this)."""
    leaves, structure = jax.tree.flatten(calls)
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *jax.tree.unflatten(structure, jnp.broadcast_arrays(*leaves)))
    out = lax.map(lambda arguments: function(*arguments), stacked)
    return [jax.tree.map(lambda value, i=i: value[i], out) for i in range(len(calls))]
