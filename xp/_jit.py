"""``kernel``: the one way xp makes its jitted kernels, dense and sparse; and ``Tracer``.

A kernel is ``jax.jit(f, inline=True, keep_unused=True)``, made where it is defined, as jax.numpy
makes its functions: one cached XLA computation per signature, inlined when called under an
enclosing trace, and no Python between the caller and jax.jit's C++ dispatch. (Creating the
``jax.jit`` objects at import costs ``import xp`` a few milliseconds, bench/RESULTS.md "Import
time"; creating each on its first call instead cost every call of every kernel a Python frame.)

Every kernel keeps the arguments its result does not depend on (``keep_unused``): jax.jit would
drop them, and with them their placement, so that ``imag`` of a real array, ``isinf`` of an integer
one or ``linalg.matrix_power(x, 0)`` would come back on the default device instead of ``x``'s.

The dense namespace calls its kernels with their static arguments positionally: jax.jit's C++
dispatch costs more per call when they come as keywords. A kernel may declare them by name
(``static_argnames``; jax.jit finds their positions in the signature) or by position
(``static_argnums``, with a comment naming them); its callers pass them positionally either way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, overload

import jax
import jax.core

F = TypeVar("F", bound=Callable[..., Any])

Tracer = jax.core.Tracer
"""JAX's tracers: what a function traced by ``jax.jit``, ``grad`` or ``vmap`` sees for an array."""


def jit(fun: Callable[..., Any], options: dict[str, Any]) -> Any:
    """The ``jax.jit`` of a kernel: inlined, keeping its unused arguments."""
    return jax.jit(fun, inline=True, keep_unused=True, **options)


@overload
def kernel(fun: F, /, **options: Any) -> F: ...
@overload
def kernel(fun: None = None, /, **options: Any) -> Callable[[F], F]: ...
def kernel(fun: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """The kernel of ``fun``: :func:`jit` of it. A decorator as ``@kernel``,
    ``@kernel(static_argnames=...)`` or ``@functools.partial(kernel, static_argnames=...)``."""
    if fun is None:
        return functools.partial(kernel, **options)
    return jit(fun, options)


# ``with on_constants(): ...`` computes now, on concrete values, whatever JAX is tracing, so the
# result is a concrete array: a constant of the trace, one that may be cached or read on the host.
# ``jax.ensure_compile_time_eval`` does that under jax.jit only; an eager ``jax.shard_map`` traces
# its body, and a constant made there was one of its tracers (cached, it broke the next call; read
# on the host, it raised). Only for computations whose inputs are all concrete.
on_constants = jax.core.eval_context
