"""Products of two sparse matrices, ``A @ B``, eagerly on CPU.

JAX's rule for two sparse operands (``bcoo_dot_general``) sizes its result before it sees their
coordinates: a stored element for each pair of stored elements, at most the size of the dense
result. Two 2000 x 2000 matrices of 4000 entries each made a "sparse" result of 4M stored elements
(the dense size) in about 6 s a call, for some 8000 products; a 20000 x 20000 pair would not fit
in memory. Eagerly, with both operands on one CPU device (the policy of ``xp.sparse._buffers``),
:func:`host_product` computes the product as SciPy does, row by row of ``A`` (Gustavson's
algorithm): each stored ``A[i, p]`` meets the stored elements of row ``p`` of ``B``, and the
products of each pair that meets are summed by their coordinates, in the native library for
float32 and float64 (``native_spgemm.cc``, through ctypes), else in NumPy. The result stores
each coordinate that some pair reaches once (a product that cancels to zero stays stored: the
pattern is structural), in row-major order. Elsewhere (under a JAX transformation, on an
accelerator, operands with batch or dense dimensions) JAX's rule computes it.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from jax.experimental import sparse as jsparse

from xp.sparse import _buffers as buffers
from xp.sparse import _coordinates as coordinates
from xp.sparse import _transposed as transposed
from xp.sparse._products import native


def host_product(x1: Any, x2: Any, dtype: np.dtype) -> Any:
    """``x1 @ x2`` of two 2-d sparse operands (JAX sparse arrays or transposed views of them)
    whose buffers are concrete and on one CPU device, as a JAX BCOO of ``dtype`` (the promoted
    dtype of the product, which the caller checked) with sorted, unique indices; else None."""
    a = _entries(x1)
    b = None if a is None else _entries(x2)
    like = None if b is None else buffers.placement(_data_of(x1), _data_of(x2))
    if a is None or b is None or like is None:
        return None
    (a_rows, a_cols, a_data, (m, _)), (b_rows, b_cols, b_data, (k, n)) = a, b
    a_rows, a_cols, a_data = _by_rows(a_rows, a_cols, a_data.astype(dtype, copy=False))
    b_rows, b_cols, b_data = _by_rows(b_rows, b_cols, b_data.astype(dtype, copy=False))
    library = native.host_functions() if dtype in _NATIVE_SPGEMM_DTYPES else None
    if library is not None:
        sums, rows, cols = _native_product(library, m, n, k, a_rows, a_cols, a_data, b_rows, b_cols, b_data)
    else:
        sums, rows, cols = _numpy_product(m, n, k, a_rows, a_cols, a_data, b_rows, b_cols, b_data)
    idx = np.empty((sums.size, 2), coordinates.index_dtype((m, n)))
    idx[:, 0], idx[:, 1] = rows, cols
    return buffers.make_bcoo(buffers.to_device_of(sums, like), buffers.to_device_of(idx, like), (m, n), True, True)


# The dtypes of the native product of two sparse matrices (native_spgemm.cc): the real floating
# ones (xp.sparse._products.native.DTYPES are those of its products of a sparse and a dense matrix).
_NATIVE_SPGEMM_DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64"))


def _pointers(rows: np.ndarray, n_rows: int) -> np.ndarray:
    """The row pointers of elements in order of their rows."""
    return np.searchsorted(rows, np.arange(n_rows + 1)).astype(np.int64)


def _native_product(
    library: Any, m: int, n: int, k: int, *operands: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The product in the native library: SciPy's algorithm, one pass to count each row's
    columns and one to sum and write them, in a little over half NumPy's time (8M products of a
    20000 x 20000 matrix with 400k entries by its transpose; bench/RESULTS.md, "Sparse arrays",
    the ``A @ A.T`` row, compares the whole call with SciPy's and pydata sparse's)."""
    a_rows, a_cols, a_data, b_rows, b_cols, b_data = operands
    a_ptr, b_ptr = _pointers(a_rows, m), _pointers(b_rows, k)
    a_cols, b_cols = (np.ascontiguousarray(c, dtype=np.int64) for c in (a_cols, b_cols))
    a_data, b_data = np.ascontiguousarray(a_data), np.ascontiguousarray(b_data)
    row_counts = np.empty(m + 1, np.int64)
    total = library.xp_spgemm_count(*_ints(m, n), *_pointers_of(a_ptr, a_cols, b_ptr, b_cols, row_counts))
    cols = np.empty(total, np.int64)
    sums = np.empty(total, a_data.dtype)
    fill = getattr(library, f"xp_spgemm_fill_{a_data.dtype.name}")
    fill(*_ints(m, n), *_pointers_of(a_ptr, a_cols, a_data, b_ptr, b_cols, b_data, row_counts, cols, sums))
    rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(row_counts))
    return sums, rows, cols


def _ints(*values: int) -> list[Any]:
    return [ctypes.c_int64(v) for v in values]


def _pointers_of(*arrays: np.ndarray) -> list[Any]:
    return [ctypes.c_void_p(a.ctypes.data) for a in arrays]


def _numpy_product(m: int, n: int, k: int, *operands: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The product in NumPy: every product formed, then summed by coordinates (a sort). The
    operands' elements are row by row (each row's order kept), so the products come row by row of
    the result, in runs sorted by column, which a stable sort merges (8M products of a 20000 x
    20000 matrix by its transpose: 0.2 s, against 0.55 s for an unstable one)."""
    a_rows, a_cols, a_data, b_rows, b_cols, b_data = operands
    pointers = _pointers(b_rows, k)  # B's row pointers
    start = pointers[a_cols]
    count = pointers[a_cols + 1] - start
    total = int(count.sum())
    if total == 0:
        return np.zeros(0, a_data.dtype), np.zeros(0, np.int64), np.zeros(0, np.int64)
    position = buffers.runs_host(start, count)  # the products: A's element e with each of B's row a_cols[e]
    products = np.repeat(a_data, count)
    products *= np.take(b_data, position)
    cols = np.take(b_cols, position)
    if m * n < 2**62:  # one key a coordinate, sorted; else sorted by row, then column
        keys = np.repeat(a_rows * n, count)
        keys += cols
        order = np.argsort(keys, kind="stable")
        keys = np.take(keys, order)
        first = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        distinct = np.take(keys, first)
        out_rows, out_cols = distinct // n, distinct % n
    else:
        rows = np.repeat(a_rows, count)
        order = np.lexsort((cols, rows))
        rows, cols = np.take(rows, order), np.take(cols, order)
        first = np.flatnonzero(np.concatenate([[True], (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])]))
        out_rows, out_cols = np.take(rows, first), np.take(cols, first)
    sums = np.add.reduceat(np.take(products, order), first, dtype=products.dtype)
    return sums, out_rows, out_cols


def _by_rows(rows: np.ndarray, cols: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elements in order of their rows (a stable sort: each row's order kept), if not already."""
    if rows.size and np.any(rows[1:] < rows[:-1]):
        order = np.argsort(rows, kind="stable")
        return np.take(rows, order), np.take(cols, order), np.take(data, order)
    return rows, cols, data


def _entries(value: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]] | None:
    """The rows, columns (int64) and values of the stored elements of a plain 2-d sparse
    operand on one CPU device, padding left out, and its shape; None for any other."""
    if isinstance(value, transposed.Transposed):
        base = _entries(value.base)
        if base is None:
            return None
        rows, cols, data, (m, n) = base
        return cols, rows, data, (n, m)
    if not transposed.is_plain(value):
        return None
    host = buffers.host_buffers(value)
    if host is None:
        return None
    if isinstance(value, jsparse.BCSR):
        data, indices, indptr = host
        coordinates_ = buffers.bcsr_coordinates_host(indices, indptr)
        rows, cols = coordinates_[:, 0], coordinates_[:, 1]
    else:
        data, indices = host
        rows, cols = indices[:, 0], indices[:, 1]
    m, n = (int(s) for s in value.shape)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    stored = (rows >= 0) & (rows < m) & (cols >= 0) & (cols < n)
    if not stored.all():
        rows, cols, data = rows[stored], cols[stored], data[stored]
    return rows, cols, data, (m, n)


def _data_of(value: Any) -> Any:
    """The jax array of stored values of an operand (of a view: of its base), for placement."""
    return value.base.data if isinstance(value, transposed.Transposed) else value.data
