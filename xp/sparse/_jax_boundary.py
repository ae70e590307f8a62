"""How xp's wrappers of JAX's sparse API (``jax.experimental.sparse``) take arguments and give results.

Each function of ``xp.sparse``'s JAX API (``_jax_conversion``, ``_jax_products``,
``_jax_structure``; ``sparsify`` in ``_sparsify``) is the ``jax.experimental.sparse`` function of
the same name, with:

- arguments converted and checked like any xp function's: dense operands are xp arrays (or
  anything ``xp.asarray`` takes without a copy: JAX and NumPy arrays, Python scalars), sparse
  operands are ``xp.sparse.BCOO`` / ``BCSR`` (JAX's own sparse arrays are taken too), shapes,
  axes and dtypes are checked, and a rejected argument raises the usual error naming the
  function and the parameter (``xp.sparse.bcoo_fromdense: n_batch must be ...``);
- results returned as xp types: ``BCOO``/``BCSR`` for sparse results, ``xp.Array`` for dense;
- the products (``bcoo_dot_general``, ``bcsr_dot_general``, ``bcoo_multiply_*``) promoting their
  operands' dtypes as xp's products do (``bool`` is rejected);
- nothing dropped silently: where JAX truncates to a given ``nse`` (``bcoo_sum_duplicates``,
  ``bcoo_eliminate_zeros``, ``bcoo_fromdense``), an eager call checks that ``nse`` is large
  enough; under a trace ``nse`` must be given (the count is data-dependent) and is trusted.

These functions work under ``jax.jit``, ``jax.grad`` (with respect to ``data`` and dense
operands) and ``jax.vmap`` as JAX's do. This module holds what they share: the argument
converters, the call into JAX (whose argument errors become xp's) and the wrapping of results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.core
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import wrap
from xp._errors import DataDependentShapeError, describe, fail
from xp._jit import Tracer
from xp.sparse._array import BCOO, BCSR, SparseArray

_JAX_ERRORS = (TypeError, ValueError, IndexError, NotImplementedError)


# --- arguments ------------------------------------------------------------------------------


def sparse_argument(x: Any, param: str, kind: type[SparseArray]) -> Any:
    """A sparse argument of the xp type ``kind`` (or its JAX counterpart) as the JAX array."""
    if isinstance(x, kind):
        return x._value
    if isinstance(x, kind._jax_type):
        return x
    expected = f"{param} must be an xp.sparse.{kind.__name__}"
    if isinstance(x, SparseArray):
        fail(
            TypeError,
            f"{expected}, got an xp.sparse.{type(x).__name__} (convert it with .to_{kind.__name__.lower()}())",
        )
    fail(TypeError, f"{expected}, got {describe(x)}")


def dense_argument(x: Any, param: str) -> Any:
    """A dense argument as a jax array (a sparse one is a TypeError: nothing densifies silently)."""
    if isinstance(x, (SparseArray, jsparse.JAXSparse)):
        fail(TypeError, f"{param} must be a dense array, got a sparse {type(x).__name__} (call .todense() "
               f"if a dense copy is what you want)")  # fmt: skip
    return boundary.array(x, param)


def operand(x: Any, param: str, kind: type[SparseArray]) -> Any:
    """A sparse argument of type ``kind`` or a dense one."""
    if isinstance(x, (SparseArray, jsparse.JAXSparse)):
        return sparse_argument(x, param, kind)
    return boundary.array(x, param)


def index_argument(x: Any, param: str) -> Any:
    value = dense_argument(x, param)
    if value.dtype not in dt.INTEGER:
        fail(TypeError, f"{param} must have an integer dtype, got {value.dtype}")
    return value


def ints(value: Any, param: str) -> tuple[int, ...]:
    """A sequence of Python ints."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        if hasattr(value, "__index__") and not isinstance(value, bool):
            return (boundary.integer(value, param),)
        fail(TypeError, f"{param} must be a sequence of ints, got {describe(value)}")
    return tuple(boundary.integer(v, f"{param}[{i}]") for i, v in enumerate(value))


def axes(value: Any, ndim: int, param: str) -> tuple[int, ...]:
    """Distinct axes in ``[-ndim, ndim)``, normalized."""
    axes = tuple(boundary.axis(a, ndim, param) for a in ints(value, param))
    if len(set(axes)) != len(axes):
        fail(ValueError, f"{param} has repeated axes: {axes}")
    return axes


def layout(n_batch: Any, n_dense: Any, ndim: int) -> tuple[int, int]:
    n_batch, n_dense = boundary.non_negative(n_batch, "n_batch"), boundary.non_negative(n_dense, "n_dense")
    if n_batch + n_dense > ndim:
        fail(ValueError, f"n_batch={n_batch} and n_dense={n_dense} exceed the {ndim} dimensions of the array")
    return n_batch, n_dense


def index_dtype(value: Any) -> np.dtype:
    dtype = boundary.dtype(value, "index_dtype")
    if dtype not in dt.INTEGER:
        fail(TypeError, f"index_dtype must be an integer dtype, got {dtype}")
    return dtype


def nse(value: Any, traced: bool, what: str) -> int | None:
    if value is None:
        if traced:
            fail(DataDependentShapeError, f"nse must be given under a JAX trace: {what} is data-dependent")
        return None
    return boundary.stored_count(value)


def is_traced(*values: Any) -> bool:
    return any(isinstance(leaf, Tracer) for leaf in jax.tree.leaves(values))


def dimension_numbers(
    value: Any,
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]:
    """``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` as tuples of ints."""
    expected = "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))"
    try:
        (lc, rc), (lb, rb) = value
    except (TypeError, ValueError):
        fail(TypeError, f"dimension_numbers must be {expected}, got {value!r}")
    names = ("lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch")
    parts = [ints(v, f"dimension_numbers ({n})") for v, n in zip((lc, rc, lb, rb), names, strict=True)]
    if len(parts[0]) != len(parts[1]) or len(parts[2]) != len(parts[3]):
        fail(ValueError, f"dimension_numbers must pair as many lhs as rhs dimensions, got {value!r}")
    return (parts[0], parts[1]), (parts[2], parts[3])


def check_dims(dims: Sequence[int], ndim: int, param: str) -> None:
    for d in dims:
        if not 0 <= d < ndim:
            fail(ValueError, f"{param} holds dimension {d}, out of range for an operand of {ndim} dimensions")
    if len(set(dims)) != len(dims):
        fail(ValueError, f"{param} has repeated dimensions: {tuple(dims)}")


def promoted(lhs: Any, rhs: Any, names: tuple[str, str] = ("lhs", "rhs")) -> tuple[Any, Any]:
    """Both operands in their promoted numeric dtype (as xp's products); ``names`` are the
    function's parameters for them."""
    for value, name in zip((lhs, rhs), names, strict=True):
        if value.dtype not in dt.NUMERIC:
            fail(TypeError, f"{name} must have a numeric dtype, got {value.dtype}")
    try:
        dtype = dt.promote(lhs.dtype, rhs.dtype)
    except dt.PromotionError as e:
        fail(TypeError, f"{names[0]} and {names[1]}: {e}")
    return astype(lhs, dtype), astype(rhs, dtype)


def astype(value: Any, dtype: np.dtype) -> Any:
    if value.dtype == dtype:
        return value
    if isinstance(value, jsparse.JAXSparse):
        flat: Any = value.tree_flatten()  # (JAX declares no result for it)
        children, aux = flat
        return type(value).tree_unflatten(aux, (children[0].astype(dtype), *children[1:]))
    return value.astype(dtype)


# --- calling JAX and its results ------------------------------------------------------------


def call_jax(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call JAX; its argument errors are reported as the xp function's."""
    try:
        return fn(*args, **kwargs)
    except _JAX_ERRORS as e:
        if type(e) in _JAX_ERRORS:
            fail(type(e), f"{e} (from jax.experimental.sparse.{getattr(fn, '__name__', 'function')})")
        raise


def result(value: Any) -> Any:
    """The xp type of a JAX result."""
    if isinstance(value, jsparse.BCOO):
        return BCOO._wrap(value)
    if isinstance(value, jsparse.BCSR):
        return BCSR._wrap(value)
    if isinstance(value, (jax.Array, Tracer)):
        return wrap(boundary.from_jax(value, "result") if value.dtype in dt.ANY else value)
    return value


def check_nse(needed: Any, nse: int | None, what: str) -> None:
    if nse is not None and not isinstance(needed, Tracer):
        count = int(np.max(np.asarray(needed))) if np.size(needed) else 0
        if count > nse:
            fail(ValueError, f"nse={nse} is smaller than the {count} {what} (per batch); entries would be dropped")
