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

Sparse arguments are differentiated with respect to their stored values, as
``jax.experimental.sparse.grad`` does: the gradient of a sparse array is a sparse array of the
same format and indices whose stored values are the partial derivatives (the unstored elements
are structural zeros, not variables).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax

from xp import _routing as routing
from xp._array import Array, wrap

__all__ = ["grad", "value_and_grad", "while_loop"]


def _as_leaf(value: Any) -> Any:
    """The jax array an xp array wraps; anything else unchanged (JAX judges it)."""
    return value._value if isinstance(value, Array) else value


class _StoredValues:
    """A sparse argument while it is differentiated: its stored values are the variables."""

    def __init__(self, sparse: Any) -> None:
        children, self.info = sparse._value.tree_flatten()
        self.data, self.rest = children[0], tuple(children[1:])
        self.sparse_type, self.jax_type = type(sparse), type(sparse._value)

    def rebuild(self, data: Any) -> Any:
        return self.sparse_type._wrap(self.jax_type.tree_unflatten(self.info, (data, *self.rest)))


def _split(arg: Any) -> tuple[Any, Any]:
    """``arg`` with each sparse array replaced by its stored values, and what rebuilds them."""
    leaves, tree = jax.tree.flatten(arg, is_leaf=routing.is_sparse)
    stored = [_StoredValues(leaf) if routing.is_sparse(leaf) else None for leaf in leaves]
    variables = [s.data if s is not None else leaf for leaf, s in zip(leaves, stored, strict=True)]
    return jax.tree.unflatten(tree, variables), (tree, stored)


def _join(variables: Any, how: Any) -> Any:
    tree, stored = how
    leaves = tree.flatten_up_to(variables)
    return jax.tree.unflatten(tree, [s.rebuild(v) if s is not None else v for v, s in zip(leaves, stored, strict=True)])


def _check_output(out: Any, has_aux: bool, fun: Callable[..., Any]) -> tuple[Any, Any]:
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(
                f"xp.transforms: with has_aux=True, {getattr(fun, '__name__', 'the function')} must return "
                f"a pair (output, auxiliary data), got {type(out).__name__}"
            )
        return out[0], out[1]
    return out, None


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """``jax.value_and_grad`` for functions returning a 0-d xp array; the value is an xp array.

    >>> import xp
    >>> value, gradient = xp.transforms.value_and_grad(lambda a: xp.sum(a * a))(xp.asarray([1.0, 2.0]))
    >>> gradient
    Array([2., 4.], dtype=float32)
    """
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    @functools.wraps(fun)
    def value_and_grad_of(*args: Any, **kwargs: Any) -> Any:
        arguments = list(args)
        rebuilders = {}
        for i in positions:
            if not -len(arguments) <= i < len(arguments):
                raise ValueError(
                    f"xp.transforms: argnums {i} is out of range for a call with {len(arguments)} positional arguments"
                )
            arguments[i], rebuilders[i] = _split(arguments[i])
        returned_xp: list[bool] = []

        def with_leaf_output(*variables: Any) -> Any:
            call = list(arguments)
            for i, v in zip(positions, variables, strict=True):
                call[i] = _join(v, rebuilders[i])
            out, aux = _check_output(fun(*call, **kwargs), has_aux, fun)
            returned_xp.append(isinstance(out, Array))
            return (_as_leaf(out), aux) if has_aux else _as_leaf(out)

        transformed = jax.value_and_grad(
            with_leaf_output,
            argnums=tuple(range(len(positions))),
            has_aux=has_aux,
            holomorphic=holomorphic,
            allow_int=allow_int,
        )
        value, gradients = transformed(*(arguments[i] for i in positions))
        gradients = tuple(_join(g, rebuilders[i]) for i, g in zip(positions, gradients, strict=True))
        gradient = gradients[0] if isinstance(argnums, int) else gradients
        value, aux = value if has_aux else (value, None)
        if returned_xp and returned_xp[-1]:  # the function returned an xp array: so does this
            value = wrap(value)
        return ((value, aux) if has_aux else value), gradient

    return value_and_grad_of


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """``jax.grad`` for functions returning a 0-d xp array (or a JAX scalar).

    >>> import xp
    >>> xp.transforms.grad(lambda a: xp.sum(a * a))(xp.asarray([1.0, 2.0]))
    Array([2., 4.], dtype=float32)
    """
    transformed = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_of(*args: Any, **kwargs: Any) -> Any:
        value, gradient = transformed(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return grad_of


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``jax.lax.while_loop`` whose ``cond_fun`` may return a 0-d boolean xp array."""
    return jax.lax.while_loop(lambda carry: _as_leaf(cond_fun(carry)), body_fun, init_val)


def __dir__() -> list[str]:
    # the namespace is the module's functions (``__all__``), not the names its code imports
    return sorted(__all__)
