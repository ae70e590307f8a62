"""JAX's sparse conversions with xp's argument handling: dense <-> sparse, duplicates, order, layout.

``bcoo_fromdense``, ``bcsr_fromdense``, ``bcoo_todense``, ``bcsr_todense``,
``bcoo_sum_duplicates``, ``bcsr_sum_duplicates``, ``bcoo_eliminate_zeros``,
``bcsr_eliminate_zeros``, ``bcoo_sort_indices``, ``bcoo_update_layout``: the
``jax.experimental.sparse`` functions, arguments and results as ``xp.sparse._jax_boundary``
describes. Where JAX truncates to a given ``nse``, an eager call checks that nothing is dropped.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
from jax.experimental import sparse as jsparse
from jax.experimental.sparse import bcoo as _jbcoo
from jax.experimental.sparse import bcsr as _jbcsr

from xp import _boundary as boundary
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import Tracer
from xp._routing import api
from xp.sparse import _conversion as conversion
from xp.sparse import _jax_boundary as jax_boundary
from xp.sparse._array import BCOO, BCSR

# --- dense <-> sparse -----------------------------------------------------------------------


@api
def bcoo_fromdense(
    mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0, index_dtype: Any = jnp.int32
) -> BCOO:
    """A BCOO of a dense array (``nse`` must be given under a trace; eagerly it is checked)."""
    value = jax_boundary.dense_argument(mat, "mat")
    n_batch, n_dense = jax_boundary.layout(n_batch, n_dense, value.ndim)
    count = jax_boundary.nse(nse, jax_boundary.is_traced(value), "the number of nonzero elements")
    if count is not None:
        jax_boundary.check_nse(_nonzero_count(value, n_batch, n_dense), count, "nonzero elements of mat")
    return jax_boundary.result(
        jax_boundary.call_jax(
            jsparse.bcoo_fromdense,
            value,
            nse=count,
            n_batch=n_batch,
            n_dense=n_dense,
            index_dtype=jax_boundary.index_dtype(index_dtype),
        )
    )


@api
def bcsr_fromdense(
    mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0, index_dtype: Any = jnp.int32
) -> BCSR:
    """A BCSR of a dense array (two sparse dimensions after ``n_batch`` batch dimensions)."""
    value = jax_boundary.dense_argument(mat, "mat")
    n_batch, n_dense = jax_boundary.layout(n_batch, n_dense, value.ndim)
    if value.ndim - n_batch - n_dense != 2:
        fail(ValueError, f"a BCSR array has 2 sparse dimensions; mat of shape {tuple(value.shape)} with "
               f"n_batch={n_batch} and n_dense={n_dense} has {value.ndim - n_batch - n_dense}")  # fmt: skip
    count = jax_boundary.nse(nse, jax_boundary.is_traced(value), "the number of nonzero elements")
    if count is not None:
        jax_boundary.check_nse(_nonzero_count(value, n_batch, n_dense), count, "nonzero elements of mat")
    return jax_boundary.result(
        jax_boundary.call_jax(
            jsparse.bcsr_fromdense,
            value,
            nse=count,
            n_batch=n_batch,
            n_dense=n_dense,
            index_dtype=jax_boundary.index_dtype(index_dtype),
        )
    )


def _nonzero_count(value: Any, n_batch: int, n_dense: int) -> Any:
    """The number of nonzero elements per batch (a tracer under a trace, then unchecked)."""
    if isinstance(value, Tracer):
        return value
    return _count(value, n_batch=n_batch, n_dense=n_dense) if value.size else 0


@functools.partial(jax.jit, static_argnames=("n_batch", "n_dense"))
def _count(value: Any, n_batch: int, n_dense: int) -> Any:
    mask = value != 0
    if n_dense:
        mask = jnp.any(mask, axis=tuple(range(value.ndim - n_dense, value.ndim)))
    return jnp.sum(mask, axis=tuple(range(n_batch, mask.ndim)))


@api
def bcoo_todense(mat: Any) -> Array:
    """The dense array of a BCOO (the explicit densification)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    if value.dtype == bool:  # JAX's sums duplicates with add, which has no bool: xp's combines them with "or"
        return wrap(conversion.todense(value))
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_todense, value))


@api
def bcsr_todense(mat: Any) -> Array:
    """The dense array of a BCSR (the explicit densification)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCSR)
    if value.dtype == bool:  # as in bcoo_todense
        return wrap(conversion.todense(value))
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcsr_todense, value))


# --- duplicates, order, layout --------------------------------------------------------------


def _summable(value: Any, name: str) -> None:
    if value.dtype == bool:  # JAX sums duplicate entries with add, which has no bool
        fail(TypeError, f"mat has dtype bool, which jax.experimental.sparse.{name} cannot sum (cast it with "
               f"xp.astype, or keep to xp's functions, which combine boolean duplicates with 'or')")  # fmt: skip


@api
def bcoo_sum_duplicates(mat: Any, nse: int | None = None) -> BCOO:
    """Duplicate entries added together, indices sorted; with ``nse``, padded to that many entries
    (an eager call checks that ``nse`` keeps every distinct entry)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    _summable(value, "bcoo_sum_duplicates")
    count = None if nse is None else boundary.stored_count(nse)
    if count is not None and not jax_boundary.is_traced(value):
        jax_boundary.check_nse(_distinct(value), count, "distinct entries of mat")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_sum_duplicates, value, nse=count))


@api
def bcsr_sum_duplicates(mat: Any, nse: int | None = None) -> BCSR:
    """Duplicate entries added together, indices sorted (``nse`` as in ``bcoo_sum_duplicates``)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCSR)
    _summable(value, "bcsr_sum_duplicates")
    count = None if nse is None else boundary.stored_count(nse)
    if count is not None and not jax_boundary.is_traced(value):
        jax_boundary.check_nse(_distinct(value.to_bcoo()), count, "distinct entries of mat")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcsr_sum_duplicates, value, nse=count))


def _distinct(value: Any) -> Any:
    """The number of distinct in-range entries per batch (eager)."""
    return jsparse.bcoo_sum_duplicates(value).nse if value.nse else 0


@api
def bcoo_eliminate_zeros(mat: Any, nse: int | None = None) -> BCOO:
    """The BCOO without its explicitly stored zeros (duplicates summed; ``nse`` as in
    ``bcoo_sum_duplicates``)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    _summable(value, "bcoo_eliminate_zeros")
    count = None if nse is None else boundary.stored_count(nse)
    if count is not None and not jax_boundary.is_traced(value):
        jax_boundary.check_nse(
            _jbcoo.bcoo_eliminate_zeros(value).nse if value.nse else 0, count, "nonzero entries of mat"
        )
    return jax_boundary.result(jax_boundary.call_jax(_jbcoo.bcoo_eliminate_zeros, value, nse=count))


@api
def bcsr_eliminate_zeros(mat: Any, nse: int | None = None) -> BCSR:
    """The BCSR without its explicitly stored zeros."""
    value = jax_boundary.sparse_argument(mat, "mat", BCSR)
    _summable(value, "bcsr_eliminate_zeros")
    count = None if nse is None else boundary.stored_count(nse)
    if count is not None and not jax_boundary.is_traced(value):
        jax_boundary.check_nse(
            _jbcoo.bcoo_eliminate_zeros(value.to_bcoo()).nse if value.nse else 0, count, "nonzero entries of mat"
        )
    return jax_boundary.result(jax_boundary.call_jax(_jbcsr.bcsr_eliminate_zeros, value, nse=count))


@api
def bcoo_sort_indices(mat: Any) -> BCOO:
    """The same BCOO with its entries in lexicographic order of their indices."""
    return jax_boundary.result(
        jax_boundary.call_jax(jsparse.bcoo_sort_indices, jax_boundary.sparse_argument(mat, "mat", BCOO))
    )


@api
def bcoo_update_layout(
    mat: Any, *, n_batch: int | None = None, n_dense: int | None = None, on_inefficient: str | None = "error"
) -> BCOO:
    """The same array with ``n_batch`` batch and ``n_dense`` dense dimensions."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    nb = value.n_batch if n_batch is None else boundary.non_negative(n_batch, "n_batch")
    nd = value.n_dense if n_dense is None else boundary.non_negative(n_dense, "n_dense")
    jax_boundary.layout(nb, nd, value.ndim)
    if on_inefficient is not None:
        boundary.choice(on_inefficient, ("error", "warn"), "on_inefficient")
    try:
        updated = jsparse.bcoo_update_layout(value, n_batch=nb, n_dense=nd, on_inefficient=on_inefficient)
    except jsparse.SparseEfficiencyError as e:  # a ValueError of JAX's own type, with JAX's message
        fail(ValueError, f"{e} (from jax.experimental.sparse.bcoo_update_layout)")
    return jax_boundary.result(updated)
