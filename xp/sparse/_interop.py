"""SciPy and pydata sparse arrays to and from raw ``jax.experimental.sparse`` values.

Foreign arrays are read on the host and checked there (dtypes, and every index against its
dimension); ``to_scipy`` reads the buffers back (eager only). Separate from the other
conversions because it is the one place that knows the foreign libraries (both optional).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _narrowing as narrowing
from xp._errors import describe, fail
from xp.sparse import _buffers as buffers
from xp.sparse import _build as build
from xp.sparse import _conversion as conversion


def _host_dtype(source: np.dtype, dtype: Any, what: str) -> np.dtype:
    want = boundary.optional_dtype(dtype)
    if want is None:
        if source not in dt.ANY:
            fail(TypeError, f"{what} has dtype {source}, which is not an array API dtype; pass dtype= to convert it")
        if not dt.is_available(source):
            narrow = narrowing.narrowed(source, f"{what} has dtype {source}")  # xp.narrow_64bit
            if narrow is None:
                fail(TypeError, f"{what} has dtype {source}: {dt.unavailable_message(source)}, or pass dtype= "
                       f"to convert explicitly")  # fmt: skip
            return narrow
        return source
    if source.kind == "c" and want.kind != "c":
        fail(TypeError, f"cannot convert complex {what} to {want} (take the real or imaginary part first)")
    return want


def _from_host_coo(
    data: np.ndarray, coords: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, index_dtype: Any,
    sorted_: bool, unique: bool, format: str, what: str,
) -> Any:  # fmt: skip
    """A BCOO or BCSR from host COO buffers (``coords`` of shape (nse, ndim)), checked on the host."""
    n_sparse = len(shape)
    want_index = build.index_dtype_argument(index_dtype, (*shape, coords.shape[0]) if format == "bcsr" else shape)
    if coords.size:
        low, high = coords.min(axis=0), coords.max(axis=0)
        for axis, size in enumerate(shape):
            if low[axis] < 0 or high[axis] >= size:
                fail(IndexError, f"{what} holds index {int(high[axis]) if high[axis] >= size else int(low[axis])}, "
                       f"out of bounds for dimension {axis} of size {size}")  # fmt: skip
    values = boundary.from_numpy(np.asarray(data), dtype, what)  # 64-bit data narrowed with checks
    indices = jnp.asarray(np.asarray(coords, dtype=want_index).reshape(len(data), n_sparse))
    value = buffers.make_bcoo(values, indices, shape, sorted_ or len(data) <= 1, unique or len(data) <= 1)
    if format == "bcsr":
        if n_sparse != 2:
            fail(ValueError, f"format='bcsr' needs a 2-dimensional array, got {n_sparse} dimensions")
        return conversion.bcsr_from_bcoo_buffers(
            values, indices, shape=shape, sorted_=value.indices_sorted, unique=value.unique_indices
        )
    return value


def from_scipy_value(s: Any, format: Any, dtype: Any, index_dtype: Any) -> Any:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is optional
        sp = None
    if sp is None or not sp.issparse(s):
        fail(TypeError, f"s must be a scipy.sparse array or matrix, got {describe(s)}")
    fmt = build.format_argument(format)
    shape = tuple(int(n) for n in s.shape)
    want = _host_dtype(np.dtype(s.dtype), dtype, "s")
    coo = s.tocoo()
    coords = np.stack([np.asarray(c) for c in coo.coords], axis=-1) if coo.coords else np.zeros((coo.nnz, 0))
    canonical = bool(getattr(coo, "has_canonical_format", False))
    return _from_host_coo(np.asarray(coo.data), coords, shape, want, index_dtype, canonical, canonical, fmt, "s")


def from_pydata_value(s: Any, format: Any, dtype: Any, index_dtype: Any) -> Any:
    module = type(s).__module__.split(".")[0]
    if module != "sparse" or not hasattr(s, "fill_value"):
        fail(TypeError, f"s must be a pydata sparse array (sparse.COO, sparse.GCXS, ...), got {describe(s)}")
    fmt = build.format_argument(format)
    fill = np.asarray(s.fill_value)
    if fill.item() != 0 or (fill.dtype.kind in "fc" and np.any(np.signbit(np.real(fill)))):
        fail(ValueError, f"s has fill_value {fill.item()!r}; only arrays whose unstored elements are zero "
               f"convert (xp's unstored elements are structural zeros)")  # fmt: skip
    coo = s if type(s).__name__ == "COO" else s.asformat("coo")
    shape = tuple(int(n) for n in coo.shape)
    want = _host_dtype(np.dtype(coo.dtype), dtype, "s")
    coords = np.asarray(coo.coords).T
    sorted_ = bool(getattr(coo, "sorted", False))
    unique = sorted_ and not bool(getattr(coo, "has_duplicates", True))
    return _from_host_coo(np.asarray(coo.data), coords, shape, want, index_dtype, sorted_, unique, fmt, "s")


def _host_coordinates(
    data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], n_batch: int
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The stored values of host BCOO buffers and their full coordinates (batch, sparse and dense
    dimensions), entries with an out-of-bounds index (JAX's padding) left out."""
    nse, n_sparse = indices.shape[-2], indices.shape[-1]
    batch, dense = shape[:n_batch], shape[n_batch + n_sparse :]
    grid = (*batch, nse, *dense)  # the shape of data: one coordinate tuple per stored value

    def along(axis: int, size: int) -> np.ndarray:
        return np.broadcast_to(np.arange(size).reshape([-1 if i == axis else 1 for i in range(len(grid))]), grid)

    coords = [along(axis, batch[axis]) for axis in range(n_batch)]
    for k in range(n_sparse):
        column = np.broadcast_to(indices[..., k], (*batch, nse)).reshape((*batch, nse) + (1,) * len(dense))
        coords.append(np.broadcast_to(column, grid))
    coords += [along(n_batch + 1 + axis, size) for axis, size in enumerate(dense)]
    flat = [c.reshape(-1) for c in coords]
    keep = np.ones(math.prod(grid), bool)
    for axis, c in enumerate(flat):
        keep &= (c >= 0) & (c < shape[axis])
    values = np.broadcast_to(data, grid).reshape(-1)[keep]
    return values, tuple(c[keep] for c in flat)


def to_scipy(v: Any, format: Any, transposed: bool = False) -> Any:
    """A SciPy sparse array with the values of the JAX sparse array ``v`` (``transposed``: of its
    transpose, a 2-d ``v``'s coordinates swapped on the host): duplicates summed, indices sorted."""
    import scipy.sparse as sp

    if buffers.is_traced(*jax.tree_util.tree_leaves(v)):
        fail(TypeError, "a traced array cannot convert to SciPy (convert outside the JAX transformation)")
    wanted = boundary.choice(format, (None, "coo", "csr", "csc", "bsr", "lil", "dok", "dia"), "format")
    wanted = wanted or ("csr" if isinstance(v, jsparse.BCSR) else "coo")
    ndim = len(v.shape)
    if ndim == 0:
        fail(ValueError, "SciPy has no 0-dimensional sparse arrays")
    if wanted != "coo" and ndim != 2:
        fail(ValueError, f"format={wanted!r} needs a 2-dimensional array, got {ndim} dimensions")
    coo = conversion.to_bcoo(v)
    data, indices = (np.asarray(a) for a in jax.device_get((coo.data, coo.indices)))
    values, coords = _host_coordinates(data, indices, tuple(coo.shape), coo.n_batch)
    shape = tuple(coo.shape)
    if transposed:
        coords, shape = coords[::-1], shape[::-1]
    result = sp.coo_array((values, coords), shape=shape)
    result.sum_duplicates()
    if wanted != "coo":
        result = result.asformat(wanted)
        sort_indices = getattr(result, "sort_indices", None)  # the compressed formats have it
        if sort_indices is not None:
            sort_indices()
    return result
