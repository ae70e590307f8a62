"""``kernel``: xp's jitted kernels, each created on its first call.

xp defines about 230 kernels (``jax.jit(f, inline=True)``: one cached XLA computation per
signature, inlined when called under an enclosing trace). Creating a ``jax.jit`` object costs
40-60 µs (it inspects the function's signature), about 10 ms in all at import (bench/RESULTS.md,
"Import time"); most programs
call a few dozen of them. So a kernel is created when first called, and then takes the place of
its stub in the module that defined it: later calls through the module's global name go
straight to the jitted function, without the stub's extra Python frame (which the hottest eager
paths would feel: the dispatch floor is a few µs).

Every kernel keeps the arguments its result does not depend on (``keep_unused``): jax.jit would
drop them, and with them their placement, so that ``imag`` of a real array, ``isinf`` of an integer
one or ``linalg.matrix_power(x, 0)`` would come back on the default device instead of ``x``'s.

Every kernel is called with its static arguments positionally: jax.jit's C++ dispatch costs
more per call when they come as keywords (up to 0.2 µs of an eager call of 4-5 µs, more with
more static arguments).
A kernel may declare them by name (``static_argnames``; jax.jit finds their positions in the
signature) or by position (``static_argnums``, with a comment naming them); its callers pass
them positionally either way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, overload

import jax
import jax.core

F = TypeVar("F", bound=Callable[..., Any])


@overload
def kernel(fun: F, /, **options: Any) -> F: ...
@overload
def kernel(fun: None = None, /, **options: Any) -> Callable[[F], F]: ...
def kernel(fun: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``jax.jit(fun, inline=True, keep_unused=True, **options)``, created on the first call.

    Used as a decorator (``@kernel``, ``@kernel(static_argnames=...)``) on module-level
    functions: the first call rebinds the module's name to the jitted function.
    """
    if fun is None:
        return functools.partial(kernel, **options)
    jitted: Any = None

    @functools.wraps(fun)
    def first_call(*args: Any, **kwargs: Any) -> Any:
        nonlocal jitted
        if jitted is None:
            jitted = jax.jit(fun, inline=True, keep_unused=True, **options)
            namespace = getattr(fun, "__globals__", {})
            if namespace.get(getattr(fun, "__name__", None)) is first_call:
                namespace[fun.__name__] = jitted
        return jitted(*args, **kwargs)

    return first_call


# ``with on_constants(): ...`` computes now, on concrete values, whatever JAX is tracing, so the
# result is a concrete array: a constant of the trace, one that may be cached or read on the host.
# ``jax.ensure_compile_time_eval`` does that under jax.jit only; an eager ``jax.shard_map`` traces
# its body, and a constant made there was one of its tracers (cached, it broke the next call; read
# on the host, it raised). Only for computations whose inputs are all concrete.
on_constants = jax.core.eval_context
