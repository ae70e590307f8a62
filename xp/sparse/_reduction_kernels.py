"""Reductions of a sparse matrix along one axis without sorting: ``sum``, ``mean``, ``max``, ``min``.

``xp.sparse._reductions`` calls these for a 2-d BCOO or BCSR without batch or dense dimensions
(or a transposed view of one: its base, along the other axis) reduced along one axis, when it
stores more entries than the result has elements (else its general path, which drops the
reduced coordinate without any scatter, is cheaper). The result is a 1-d (``keepdims``: 2-d)
BCOO whose entry ``i`` is line ``i``'s value, stored where it is not ``+0`` (so a line without
stored elements is a structural zero, as the general path makes it): sorted by index except
for padding, unique, with as many entries as the result has elements.

Formulations (all differentiable with respect to ``data``):

- sums (``sum``, ``mean``) where the native CPU kernel takes the dtype and the entries are on one
  device: the product of the matrix and a vector of ones, ``A @ 1`` (rows) or ``A.T @ 1``
  (columns), which skips JAX's padding itself; elsewhere (GPU, entries split over a mesh, XLA's
  fallback) the formulations below, which take two to eight times as long (bench/RESULTS.md,
  "Sparse arrays", the ``sum(A, axis=0)`` row);
- along the rows of a BCSR (``axis=1``, row sums): no row indices (a ``cumsum`` of all entries,
  3-6 ms for 400k in XLA on CPU); each step of a loop adds up to ``ROW_BLOCK`` more entries of
  every row (a dense gather on the row pointers), unless the longest row makes that costly
  (skewed rows): then the row indices and a sorted ``segment_sum``. Its tangent goes through the
  latter (a ``while_loop`` has no transpose);
- along the columns (``axis=0``), and along the rows of a BCOO: a ``segment_sum`` (``max``:
  ``segment_max``) over the kept index, unsorted (columns) or sorted when the array says so;
- ``max``/``min`` take implicit zeros into account by the count of stored entries per line (the
  row pointers' differences, or a ``segment_sum`` of ones), so they need the array to be known
  free of duplicates (``unique_indices``); else the general path sums duplicates first.

Why these formulations (jitted, 20000 x 20000 with 400k stored, float32, against SciPy's
``csr_array.sum`` in the same run): column sums by ``segment_sum`` over the column indices take
about a fifth of SciPy's time, where the general path, which makes row indices by a
``searchsorted`` it does not need, took 16-21 times it; dropping the row coordinate without a
scatter is faster still, but its result stores 400k entries for 20000 elements. Row sums of a
BCSR: the loop with ``ROW_BLOCK`` entries per row and step is the one formulation faster than
SciPy; the row indices and a sorted ``segment_sum``, or a ``cumsum`` difference (also inexact),
take nearly three times SciPy's time, and ``searchsorted`` with ``method="sort"`` over a hundred
times.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp.sparse import _linear_algebra as products
from xp.sparse._products import kernels

ROW_BLOCK = 32
"""Entries per row added at each step of the BCSR row reductions (rows of about 20 here)."""


def applies(value: Any, along: int) -> bool:
    """Whether the kernels here reduce ``value`` (a JAX sparse array) along ``along``: a plain
    2-d array storing more entries than the result has elements, along a non-empty axis."""
    if not (
        isinstance(value, (jsparse.BCOO, jsparse.BCSR))
        and len(value.shape) == 2
        and value.n_batch == 0
        and value.n_dense == 0
    ):
        return False
    n_out = value.shape[1 - along]
    return value.shape[along] > 0 and int(value.nse) > n_out


# --- the stored entries ---------------------------------------------------------------------


def _valid(value: Any) -> Any:
    """Which entries are elements (the others are JAX's padding)."""
    n_rows, n_cols = value.shape
    if isinstance(value, jsparse.BCSR):
        cols = value.indices
        inside = jnp.arange(cols.shape[0], dtype=value.indptr.dtype) < value.indptr[-1]
        return inside & (cols >= 0) & (cols < n_cols)
    rows, cols = value.indices[:, 0], value.indices[:, 1]
    return (rows >= 0) & (rows < n_rows) & (cols >= 0) & (cols < n_cols)


def _line(value: Any, along: int) -> tuple[Any, bool]:
    """The index of each entry's line (its coordinate that is kept) and whether they are sorted."""
    if isinstance(value, jsparse.BCSR):
        if along == 0:
            return value.indices, False
        return kernels.rows_from_indptr(value.indptr, nse=value.indices.shape[0]), True
    if along == 0:
        return value.indices[:, 1], False
    return value.indices[:, 0], bool(value.indices_sorted)


def _segment_sums(data: Any, line: Any, n: int, sorted_: bool) -> Any:
    return jax.ops.segment_sum(data, line, num_segments=n, indices_are_sorted=sorted_)


# --- BCSR rows: a blocked loop on the row pointers ---------------------------------------------


def _row_sums_blocked(data: Any, indptr: Any) -> Any:
    block = ROW_BLOCK
    start = indptr[:-1]
    count = indptr[1:] - start
    steps = (jnp.max(count, initial=0) + block - 1) // block
    offsets = jnp.arange(block, dtype=start.dtype)
    n = data.shape[0]

    def body(state: tuple[Any, Any]) -> tuple[Any, Any]:
        step, total = state
        j = step * block + offsets
        position = jnp.where(j[None, :] < count[:, None], start[:, None] + j[None, :], n)
        values = jnp.take(data, position, mode="fill", fill_value=0)
        return step + 1, total + jnp.sum(values, axis=1, dtype=data.dtype)

    zero = jnp.zeros(start.shape[0], data.dtype)
    return jax.lax.while_loop(lambda s: s[0] < steps, body, (jnp.zeros((), steps.dtype), zero))[1]


def _row_sums_scattered(data: Any, indptr: Any) -> Any:
    rows = kernels.rows_from_indptr(indptr, nse=data.shape[0])
    return _segment_sums(data, rows, indptr.shape[0] - 1, True)


def _row_sums_impl(data: Any, indptr: Any) -> Any:
    """The loop, unless the longest row makes it do more than about 4x the work of a scatter."""
    n_rows, nse = indptr.shape[0] - 1, data.shape[0]
    if n_rows == 0 or nse == 0:
        return jnp.zeros(n_rows, data.dtype)
    count = indptr[1:] - indptr[:-1]
    steps = (jnp.max(count, initial=0) + ROW_BLOCK - 1) // ROW_BLOCK
    cheap = steps * (n_rows * ROW_BLOCK) <= 4 * nse + 4 * ROW_BLOCK * n_rows
    return jax.lax.cond(cheap, _row_sums_blocked, _row_sums_scattered, data, indptr)


@jax.custom_jvp
def _row_sums(data: Any, indptr: Any) -> Any:
    return _row_sums_impl(data, indptr)


@_row_sums.defjvp
def _row_sums_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    data, indptr = primals
    return _row_sums_impl(data, indptr), _row_sums_scattered(tangents[0], indptr)


def _bcsr_row_sums(data: Any, indptr: Any) -> Any:
    """Per-row sums of BCSR entries (padding past ``indptr[-1]`` is outside every row)."""
    if jnp.issubdtype(data.dtype, jnp.inexact):
        return _row_sums(data, indptr)
    return _row_sums_impl(data, indptr)  # (integers have no tangents: no rule needed)


# --- per-line values ---------------------------------------------------------------------------


def line_sums(value: Any, along: int, dtype: Any, custom_kernels: bool = False) -> Any:
    """The sum of each line along ``along``, in ``dtype`` (dense, one per line); ``custom_kernels``: the
    array's entries are on one device, so that the native kernel may compute it (see the module)."""
    if custom_kernels and kernels.native_for(dtype):
        return _native_line_sums(value, along, dtype)
    ok = _valid(value)
    data = jnp.where(ok, value.data.astype(dtype), np.zeros((), dtype))
    n_out = value.shape[1 - along]
    if isinstance(value, jsparse.BCSR) and along == 1:
        return _bcsr_row_sums(data, value.indptr)
    line, sorted_ = _line(value, along)
    return _segment_sums(data, line, n_out, sorted_)


def _native_line_sums(value: Any, along: int, dtype: Any) -> Any:
    """The sums as the product of the matrix and a vector of ones, by the native kernel: ``A @ 1``
    (rows) or ``A.T @ 1`` (columns). It skips padding itself (no mask over the entries) and each
    thread sums its rows in registers or scatters into its own buffer."""
    matrix, ones = products.cast(value, dtype), jnp.ones(value.shape[along], dtype)
    return products.matrix_product(matrix, ones) if along == 1 else products.transposed_product(matrix, ones)


def line_counts(value: Any, along: int) -> Any:
    """The number of stored elements in each line along ``along`` (int32)."""
    if isinstance(value, jsparse.BCSR) and along == 1:  # (not the pointers' differences: they
        return _row_sums_impl(_valid(value).astype(np.int32), value.indptr)  # count padding too)
    line, sorted_ = _line(value, along)
    return _segment_sums(_valid(value).astype(np.int32), line, value.shape[1 - along], sorted_)


def line_extrema(value: Any, along: int, largest: bool, worst: Any) -> Any:
    """The largest (smallest) element of each line along ``along``, implicit zeros included: the
    array must hold no duplicate entries. ``worst``: the identity of the reduction."""
    ok = _valid(value)
    line, sorted_ = _line(value, along)
    reduce = jax.ops.segment_max if largest else jax.ops.segment_min
    n_out = value.shape[1 - along]
    best = reduce(jnp.where(ok, value.data, worst), line, num_segments=n_out, indices_are_sorted=sorted_)
    full = line_counts(value, along) == value.shape[along]
    zero = np.zeros((), value.dtype)
    return jnp.where(full, best, jnp.maximum(best, zero) if largest else jnp.minimum(best, zero))


# --- the result --------------------------------------------------------------------------------


def _stored(x: Any) -> Any:
    """Which values differ from ``+0`` (so that storing only those keeps every value, ``-0.0``
    and NaN included)."""
    if x.dtype.kind == "c":
        return _stored(x.real) | _stored(x.imag)
    if x.dtype.kind == "f":
        return (x != 0) | jnp.signbit(x)
    return x != np.zeros((), x.dtype)


def as_result(values: Any, position: int, keepdims: bool) -> Any:
    """The sparse result of a reduction to ``values`` (one per line): 1-d, or with ``keepdims``
    2-d with the reduced axis (of size 1) at ``position``."""
    n = values.shape[0]
    keep = _stored(values)
    itype = np.dtype(np.int32) if n < np.iinfo(np.int32).max else np.dtype(np.int64)
    index = jnp.where(keep, jnp.arange(n, dtype=itype), np.asarray(n, itype))
    data = jnp.where(keep, values, np.zeros((), values.dtype))
    if not keepdims:
        return jsparse.BCOO((data, index[:, None]), shape=(n,), unique_indices=True)
    other = jnp.where(keep, np.zeros((), itype), np.asarray(1, itype))  # padding: out of range
    columns = [other, index] if position == 0 else [index, other]
    shape = (1, n) if position == 0 else (n, 1)
    return jsparse.BCOO((data, jnp.stack(columns, axis=1)), shape=shape, unique_indices=True)
