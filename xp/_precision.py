"""``full_precision``: float32 products, linear algebra and FFTs computed at float32's precision.

On some accelerators XLA's default precision for a float32 matrix product is lower than
float32's: on a TPU one bfloat16 pass, about 3 correct digits. Generic array-API code (SciPy,
scikit-learn) assumes IEEE float32, so xp's products (``matmul``, ``vecdot``, ``tensordot``), the
functions of ``xp.linalg`` and the transforms of ``xp.fft`` compute as if
``jax.default_matmul_precision("highest")`` were in force, unless the user has chosen a precision
with JAX's own setting (``jax_default_matmul_precision``: ``jax.config.update``, the environment
variable ``JAX_DEFAULT_MATMUL_PRECISION`` or the context manager ``jax.default_matmul_precision``):
then they follow it unchanged, which is the opt-in to the faster reduced-precision products.

Their kernels are made with ``full_precision_kernel`` in place of ``kernel`` (xp/_jit.py): the
kernel's body is traced inside ``jax.default_matmul_precision("highest")``. JAX reads the
setting when a product is traced (``lax.dot_general`` with ``precision=None`` takes it), and the
setting is part of ``jax.jit``'s cache key: a kernel is traced again, eagerly or inside the
user's ``jax.jit``, when the setting in force at the call differs. Under the user's ``jax.jit``
a kernel (inlined: xp/_jit.py) is traced within the user's function, so the setting that counts is
the one in force when the user's function is traced. Only the trace is affected: the products
carry their precision in the jaxpr, and so through ``vmap``, ``grad`` and compilation. What that
changes in each function (products, decompositions, FFTs): docs/jax.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, overload

import jax

from xp._jit import kernel

F = TypeVar("F", bound=Callable[..., Any])


def full_precision(body: Callable[..., Any]) -> Callable[..., Any]:
    """The kernel body ``body``, traced at the highest matmul precision unless the user set one."""

    @functools.wraps(body)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if jax.config.jax_default_matmul_precision is not None:  # type: ignore[attr-defined]  # the user's choice
            return body(*args, **kwargs)
        with jax.default_matmul_precision("highest"):
            return body(*args, **kwargs)

    return traced


@overload
def full_precision_kernel(fun: F, /, **options: Any) -> F: ...
@overload
def full_precision_kernel(fun: None = None, /, **options: Any) -> Callable[[F], F]: ...
def full_precision_kernel(fun: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``kernel(full_precision(fun), **options)``: used as ``kernel`` is (``@full_precision_kernel``,
    ``@functools.partial(full_precision_kernel, static_argnames=...)``)."""
    if fun is None:
        return functools.partial(full_precision_kernel, **options)
    return kernel(full_precision(fun), **options)
