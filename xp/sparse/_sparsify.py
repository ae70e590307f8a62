"""``xp.sparse.sparsify``: a function written with ``jax.numpy``, made to take and return xp arrays.

A wrapper of ``jax.experimental.sparse.sparsify``: xp arrays (sparse ones included) go in as
JAX arrays and JAX sparse arrays, and the results come back as xp types
(``xp.sparse._jax_boundary.result``). What JAX cannot do sparsely raises JAX's
NotImplementedError: nothing is densified.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.core
from jax.experimental import sparse as jsparse

from xp._array import Array
from xp._errors import describe
from xp._jit import Tracer
from xp.sparse import _jax_boundary as jax_boundary
from xp.sparse._array import SparseArray


def _is_xp_leaf(x: Any) -> bool:
    return isinstance(x, (SparseArray, Array))


def _to_jax(x: Any) -> Any:
    if isinstance(x, SparseArray):
        return x._value
    if isinstance(x, Array):
        return x._value
    return x


def _from_jax(x: Any) -> Any:
    if isinstance(x, (jsparse.BCOO, jsparse.BCSR, jax.Array, Tracer)):
        return jax_boundary.result(x)
    return x


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """``f``, written with ``jax.numpy`` and ``jax.lax``, made to take xp arrays, sparse ones included.

    The xp arguments (anywhere in pytrees) are passed to ``jax.experimental.sparse.sparsify(f)``
    as JAX arrays and JAX sparse arrays; the JAX arrays and sparse arrays in the result come back
    as xp arrays and xp sparse arrays. What JAX cannot do sparsely raises JAX's
    NotImplementedError (nothing is densified).
    """
    if not callable(f):
        raise TypeError(f"xp.sparse.sparsify: f must be callable, got {describe(f)}")
    if use_tracer is not True and use_tracer is not False:  # JAX would take any truthy object
        raise TypeError(f"xp.sparse.sparsify: use_tracer must be a bool, got {describe(use_tracer)}")
    inner = jsparse.sparsify(f, use_tracer=use_tracer)

    @functools.wraps(f)
    def sparsified(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = jax.tree.map(_to_jax, (args, kwargs), is_leaf=_is_xp_leaf)
        out = inner(*args, **kwargs)
        return jax.tree.map(_from_jax, out, is_leaf=lambda x: isinstance(x, jsparse.JAXSparse))

    return sparsified
