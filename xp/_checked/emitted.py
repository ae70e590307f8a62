"""The run-time checks of xp's checked mode (``xp.checked``, docs/checked.md), as xp emits them.

Eagerly xp checks indices on their values; under a trace (``jax.jit``, ``vmap``) their values
are unknown, and JAX clamps reads and drops writes. In checked mode xp adds, where it would
have checked eagerly, a ``checkify.debug_check`` that ``xp.checked`` functionalizes with JAX's
``checkify``: the check runs with the computation and ``xp.checked`` raises its error.

Outside checked mode nothing is emitted: a jitted function traces to the jaxpr it always had.
(A ``debug_check`` left in every trace would be dropped at lowering, but its effect would still
cost each call of the jitted function JAX's fast dispatch path: about 55 µs on CPU.) Whether
the mode is on is a JAX *user context* (``jax.make_user_context``), which is part of the key of
every jit cache: a function traced outside checked mode is traced again inside it, so
``xp.checked(jax.jit(f))`` checks even when ``jax.jit(f)`` ran before.

A leaf module: it imports only ``xp._errors``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from xp._errors import CheckedIndexError, CheckedValueError

CATEGORIES = ("index", "nan", "division")

# The categories on (a frozenset of CATEGORIES); empty outside xp.checked.
MODE = jax.make_user_context(frozenset())

# The message format of every check xp emitted, and the exception it becomes (xp.checked
# tells xp's checks from the user's own checkify.check by their format). Formats name a
# function, an axis and a size, so there are few.
KINDS: dict[str, type[Exception]] = {}


def enabled(category: str) -> bool:
    """Whether checked mode is on for ``category`` (at trace time)."""
    return category in MODE.value


def check(ok: Any, kind: type[Exception], message: str, *values: Any) -> None:
    """Raise ``kind(message.format(*values))`` from ``xp.checked`` when ``ok`` (a traced scalar
    bool) is False."""
    from jax.experimental import checkify  # here: checked mode only (import xp stays lighter)

    KINDS[message] = kind
    checkify.debug_check(ok, message, *values)


def index_bounds(index: Any, n: int, message: str) -> None:
    """In checked mode, check that the traced integer ``index`` (any shape) lies in ``[-n, n)``;
    ``message`` has one ``{}`` for the offending index: the smallest if it is below ``-n``, else
    the largest (as the eager checks name it)."""
    if not enabled("index") or index.size == 0:
        return
    # a minimum and a maximum: plain reductions, which XLA fuses into one pass (an argmax of the
    # first offending position costs several times more on CPU)
    low, high = (index, index) if index.ndim == 0 else (jnp.min(index), jnp.max(index))
    if type(n) is not int and jax.export.is_symbolic_dim(n):
        _symbolic_bounds(low, high, n, message)
        return
    info = np.iinfo(index.dtype)
    too_high = high >= np.asarray(n, index.dtype) if n <= info.max else jnp.zeros((), bool)
    if index.dtype.kind == "i" and -n >= info.min:
        too_low = low < np.asarray(-n, index.dtype)
        check(~(too_low | too_high), CheckedIndexError, message, jnp.where(too_low, low, high))
    else:
        check(~too_high, CheckedIndexError, message, high)


def _symbolic_bounds(low: Any, high: Any, n: Any, message: str) -> None:
    """``index_bounds`` along an axis whose size ``n`` ``jax.export`` leaves symbolic: compared in
    the widest integer dtype of the mode (which holds every size), or in the index's own where it
    is an unsigned dtype as wide."""
    dtype = low.dtype
    wide = jax.dtypes.canonicalize_dtype(np.int64)  # int32 with 64-bit mode off
    if dtype.kind == "u" and dtype.itemsize >= wide.itemsize:
        check(high < jnp.asarray(n, dtype), CheckedIndexError, message, high)
        return
    low, high, size = low.astype(wide), high.astype(wide), jnp.asarray(n, wide)
    too_low, too_high = (low < -size) if dtype.kind == "i" else jnp.zeros((), bool), high >= size
    check(~(too_low | too_high), CheckedIndexError, message, jnp.where(too_low, low, high))


def count_matches(count: Any, expected: int, message: str) -> None:
    """Check that the traced ``count`` equals ``expected`` (call in checked mode only: computing
    ``count`` outside it would change the jaxpr); ``message`` has one ``{}`` for the count."""
    check(count == expected, CheckedValueError, message, count)
