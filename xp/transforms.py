"""JAX's transforms whose user function must return a *leaf*: ``grad``, ``value_and_grad``, ``while_loop``.

An xp array is a JAX pytree with one leaf (see ``xp/_array.py``), so every JAX transform takes
xp arrays as inputs and returns xp arrays where the function returned them: ``jax.jit``,
``vmap``, ``jvp``, ``vjp``, ``linearize``, ``jacfwd``, ``jacrev``, ``hessian``, ``checkpoint``,
``custom_jvp``/``custom_vjp``, ``lax.cond``/``switch``/``fori_loop``/``scan``/``map``.

Three places in JAX insist that what the user's function returns is a JAX array *leaf*, not a
pytree: the output of ``jax.grad`` / ``jax.value_and_grad`` ("Gradient only defined for
scalar-output functions") and the condition of ``lax.while_loop`` ("cond_fun must return a
boolean scalar, but got pytree"). JAX offers no public way for a pytree type to count as a
leaf there (it removed ``__jax_array__`` from abstractification in 0.7), and xp does not patch
JAX. These functions are JAX's, with the same signatures, around a function whose 0-d xp result
is handed to JAX as the array it wraps; gradients of xp inputs come back as xp arrays, and the
value of ``value_and_grad`` is an xp array again. They accept functions that return JAX arrays
too, so code written for them works on both.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax

from xp._array import Array, wrap

__all__ = ["grad", "value_and_grad", "while_loop"]


def _as_leaf(value: Any) -> Any:
    """The jax array an xp array wraps; anything else unchanged (JAX judges it)."""
    return value._value if isinstance(value, Array) else value


def _leaf_output(fun: Callable[..., Any], has_aux: bool, returned_xp: list[bool] | None = None) -> Callable[..., Any]:
    """``fun`` with its (main) output handed to JAX as a leaf; notes in ``returned_xp`` if it was xp's."""

    @functools.wraps(fun)
    def leaf_output(*args: Any, **kwargs: Any) -> Any:
        out = fun(*args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(
                    f"xp.transforms: with has_aux=True, {getattr(fun, '__name__', 'the function')} must return "
                    f"a pair (output, auxiliary data), got {type(out).__name__}"
                )
            out, aux = out
        if returned_xp is not None:
            returned_xp.append(isinstance(out, Array))
        return (_as_leaf(out), aux) if has_aux else _as_leaf(out)

    return leaf_output


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """``jax.grad`` for functions returning a 0-d xp array (or a JAX scalar).

    >>> import jax, xp
    >>> xp.transforms.grad(lambda a: xp.sum(a * a))(xp.asarray([1.0, 2.0]))
    Array([2., 4.], dtype=float32)
    """
    return jax.grad(
        _leaf_output(fun, has_aux), argnums=argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int
    )


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """``jax.value_and_grad`` for functions returning a 0-d xp array; the value is an xp array."""

    @functools.wraps(fun)
    def value_and_grad_of(*args: Any, **kwargs: Any) -> Any:
        returned_xp: list[bool] = []
        transformed = jax.value_and_grad(
            _leaf_output(fun, has_aux, returned_xp),
            argnums=argnums,
            has_aux=has_aux,
            holomorphic=holomorphic,
            allow_int=allow_int,
        )
        value, gradient = transformed(*args, **kwargs)
        rewrap = wrap if returned_xp and returned_xp[-1] else _unchanged
        if has_aux:
            value, aux = value
            return (rewrap(value), aux), gradient
        return rewrap(value), gradient

    return value_and_grad_of


def _unchanged(value: Any) -> Any:
    return value


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``jax.lax.while_loop`` whose ``cond_fun`` may return a 0-d boolean xp array."""
    return jax.lax.while_loop(lambda carry: _as_leaf(cond_fun(carry)), body_fun, init_val)
