"""Argument checks of sparse implementations through the dense functions.

A sparse implementation checks its arguments as the dense function does, with the dense
function's own code and messages: :func:`abstract` runs the dense function on stand-ins of the
arguments' shapes and dtypes (``jax.eval_shape``, cached by signature), which raises exactly the
dense errors and gives the result's shape and dtype. Every chapter of ``xp.sparse`` uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.core
import numpy as np

from xp._array import Array, wrap
from xp._jit import Tracer
from xp.sparse._array import SparseArray


class _Slot(NamedTuple):
    """An array argument's place in the arguments of :func:`abstract`."""

    position: int


class Concrete(NamedTuple):
    """An argument :func:`abstract` passes to the dense function as it is (an array of counts)."""

    value: Any


_ABSTRACT: dict[Any, Any] = {}
_ABSTRACT_SIZE = 4096


def _aval(x: Any) -> jax.ShapeDtypeStruct:
    # a sparse array's own shape and dtype: a transposed view answers them without its transpose
    value = x._value if isinstance(x, Array) else x
    return jax.ShapeDtypeStruct(tuple(value.shape), np.dtype(value.dtype))


def is_array(x: Any) -> bool:
    return isinstance(x, (SparseArray, Array, jax.Array, Tracer, np.ndarray, np.generic))


def abstract(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What the dense ``fn`` returns for arrays of these shapes and dtypes (``ShapeDtypeStruct``s).

    Array arguments (sparse or dense) are replaced by traced stand-ins, other arguments are
    passed as they are, so ``fn`` checks everything but array values and raises its own errors
    (named ``xp.<fn>: ...``). Results are cached by the arguments' signature.
    """
    avals: list[jax.ShapeDtypeStruct] = []

    def strip(a: Any) -> Any:
        if type(a) is Concrete:
            return a
        if is_array(a):
            avals.append(_aval(a))
            return _Slot(len(avals) - 1)
        if type(a) in (tuple, list):
            return type(a)(strip(item) for item in a)
        return a

    skeleton = strip(args)
    named = {k: strip(v) for k, v in kwargs.items()}
    key: Any = None
    try:
        if any(type(a) is Concrete for a in (*args, *kwargs.values())):
            raise TypeError
        key = (fn, _signature(skeleton), _signature(tuple(sorted(named.items()))), tuple(avals))
        hash(key)
    except TypeError:
        key = None
    if key is not None:
        cached = _ABSTRACT.get(key)
        if cached is not None:
            return cached

    def fill(a: Any, values: tuple[Any, ...]) -> Any:
        if type(a) is Concrete:
            return a.value
        if type(a) is _Slot:
            return wrap(values[a.position])
        if type(a) in (tuple, list):
            return type(a)(fill(item, values) for item in a)
        return a

    def run(*values: Any) -> Any:
        out = fn(*fill(skeleton, values), **{k: fill(v, values) for k, v in named.items()})
        return jax.tree_util.tree_map(
            lambda o: o._value if isinstance(o, Array) else o, out, is_leaf=lambda o: isinstance(o, Array)
        )

    result = jax.eval_shape(run, *avals)
    if key is not None:
        if len(_ABSTRACT) >= _ABSTRACT_SIZE:
            _ABSTRACT.clear()
        _ABSTRACT[key] = result
    return result


def _signature(a: Any) -> Any:
    """A hashable key that tells ``True`` from ``1`` and ``1.0`` (equal, with equal hashes)."""
    if type(a) in (tuple, list):
        return (type(a), tuple(_signature(item) for item in a))
    return (type(a), a)
