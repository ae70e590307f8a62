"""Building, checking and converting sparse arrays: dense, BCOO, BCSR, SciPy and pydata sparse.

- User input (``BCOO((data, indices), shape=...)``, ``BCSR(...)``, SciPy and pydata arrays) is
  checked eagerly: shapes, dtypes, and every index against its dimension (an IndexError, never
  clamped). Under a JAX trace only what the shapes and dtypes tell is checked.
- Every conversion is a cached jitted kernel of the raw buffers (``data``, ``indices``,
  ``indptr``) with shapes, layouts and dtypes static: the path under a JAX transformation and
  for arrays on accelerators, where an eager call is one dispatch, plus one small device-to-host
  read where the size of the result depends on the values (the ``nse`` of ``fromdense`` and
  ``sum_duplicates``).
- Eager calls on arrays on one CPU device run the same algorithm in NumPy on the buffers (which
  are host memory there): a kernel compiles once for every new shape and ``nse`` (tens to
  hundreds of milliseconds), which would dominate eager use; NumPy needs no compilation. The
  tests check that both paths build identical buffers.
- An element is *stored* by ``fromdense`` when it is nonzero or a negative zero, so that
  ``fromdense(x).todense()`` gives back ``x`` bit for bit.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _devices
from xp import _dtypes as dt
from xp._errors import DataDependentShapeError, describe, fail
from xp._routing import is_sparse

kernel = functools.partial(jax.jit, inline=True)
Tracer = jax.core.Tracer

FORMATS = ("bcoo", "bcsr")


def is_traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def on_host(value: Any) -> np.ndarray | None:
    """A concrete jax array on one CPU device as a NumPy array (no copy), else None.

    Eager conversions of such arrays run in NumPy: the same result as the jitted kernels, without
    a compilation for every new shape and ``nse`` (which would dominate eager use on CPU).
    """
    if isinstance(value, Tracer) or not isinstance(value, jax.Array):
        return None
    devices = value.devices()
    if len(devices) != 1 or next(iter(devices)).platform != "cpu":
        return None
    return np.asarray(value)


def to_device_of(host: np.ndarray, like: Any) -> Any:
    """A NumPy array put where the jax array ``like`` lives (committed there if ``like`` is)."""
    if not like.committed:
        return jnp.asarray(host)  # (faster than jax.device_put for a small array)
    return jax.device_put(host, next(iter(like.devices())))


def make_bcoo(data: Any, indices: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    """A ``jax.experimental.sparse.BCOO`` from trusted buffers (no validation, no copy)."""
    aux = {"shape": shape, "indices_sorted": sorted_, "unique_indices": unique}
    return jsparse.BCOO.tree_unflatten(aux, (data, indices))


def make_bcsr(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    aux = {"shape": shape, "indices_sorted": sorted_, "unique_indices": unique}
    return jsparse.BCSR.tree_unflatten(aux, (data, indices, indptr))


# --- arguments ------------------------------------------------------------------------------


def dense_argument(x: Any, param: str) -> Any:
    """A dense array argument as a jax array (a sparse one is a TypeError, not a densification)."""
    if is_sparse(x):
        fail(TypeError, f"{param} must be a dense array, got a sparse {type(x).__name__} (it is sparse already)")
    return boundary.array(x, param)


def index_argument(x: Any, param: str) -> Any:
    if is_sparse(x):
        fail(TypeError, f"{param} must be a dense integer array, got a sparse {type(x).__name__}")
    value = boundary.array(x, param)
    if value.dtype not in dt.INTEGER:
        fail(TypeError, f"{param} must have an integer dtype, got {value.dtype}")
    return value


def index_dtype_argument(value: Any, sizes: Sequence[int], param: str = "index_dtype") -> np.dtype:
    """An integer dtype able to hold every index of ``sizes`` and the padding index ``size``."""
    if value is None:
        want: np.dtype = dt.int32
        if sizes and max(sizes) > np.iinfo(np.int32).max:
            want = dt.int64
            if not dt.x64_enabled():
                fail(
                    ValueError, f"a dimension of size {max(sizes)} needs int64 indices: {dt.unavailable_message(want)}"
                )
        return want
    want = boundary.dtype(value, param)
    if want not in dt.INTEGER:
        fail(TypeError, f"{param} must be an integer dtype, got {want}")
    check_index_capacity(want, sizes, param)
    return want


def check_index_capacity(dtype: np.dtype, sizes: Sequence[int], param: str) -> None:
    if sizes and max(sizes) > np.iinfo(dtype).max:
        fail(ValueError, f"{param} {dtype} cannot hold the indices of a dimension of size {max(sizes)}")


def format_argument(value: Any) -> str:
    return boundary.choice(value, FORMATS, "format")  # type: ignore[no-any-return]


def nse_argument(value: Any) -> int | None:
    return None if value is None else boundary.non_negative(value, "nse")


# --- checked construction -------------------------------------------------------------------


def _index_summary(m: Any, indices: Any) -> tuple[Any, Any, Any, Any]:
    """Per sparse dimension the smallest and largest index; whether every batch's indices are
    in lexicographic order, and strictly so (hence unique). ``m``: NumPy or jax.numpy."""
    axes = tuple(range(indices.ndim - 1))
    low, high = m.min(indices, axis=axes), m.max(indices, axis=axes)
    previous, following = indices[..., :-1, :], indices[..., 1:, :]
    differ = previous != following
    first = m.argmax(differ, axis=-1)[..., None]
    greater = m.take_along_axis(following > previous, first, axis=-1)[..., 0]
    any_differ = m.any(differ, axis=-1)
    return low, high, m.all(greater | ~any_differ), m.all(greater & any_differ)


def _all_unique(m: Any, indices: Any) -> Any:
    """Whether no batch holds an index twice (``m``: NumPy or jax.numpy)."""
    nse, n_sparse = indices.shape[-2], indices.shape[-1]
    flat = indices.reshape(math.prod(indices.shape[:-1]), n_sparse)
    batch = m.arange(flat.shape[0]) // max(nse, 1)
    order = m.lexsort((*(flat[:, k] for k in reversed(range(n_sparse))), batch))
    ordered, batch = flat[order], batch[order]
    repeated = m.all(ordered[1:] == ordered[:-1], axis=-1) & (batch[1:] == batch[:-1])
    return ~m.any(repeated)


_index_summary_kernel = kernel(functools.partial(_index_summary, jnp))
_all_unique_kernel = kernel(functools.partial(_all_unique, jnp))


def _check_indices(
    indices: Any, sizes: Sequence[int], claimed_sorted: bool, claimed_unique: bool, param: str
) -> tuple[bool, bool]:
    """Eagerly: every index in ``[0, size)`` of its dimension, and the claimed order true.
    Returns the (sorted, unique) flags to record: the claims, or what was found."""
    if is_traced(indices) or indices.size == 0 or indices.shape[-1] == 0:
        nse = indices.shape[-2] if indices.ndim >= 2 else 0
        trivially = not is_traced(indices) and nse <= 1
        return claimed_sorted or trivially, claimed_unique or trivially
    host = on_host(indices)
    if host is not None:
        low, high, in_order, strictly = _index_summary(np, host)
    else:
        low, high, in_order, strictly = jax.device_get(_index_summary_kernel(indices))
    for axis, size in enumerate(sizes):
        if low[axis] < 0 or high[axis] >= size:
            bad = int(low[axis]) if low[axis] < 0 else int(high[axis])
            fail(IndexError, f"{param} holds {bad}, out of bounds for sparse dimension {axis} of size {size} "
                   f"(indices must lie in [0, size); nothing is clamped)")  # fmt: skip
    if claimed_sorted and not in_order:
        fail(ValueError, f"indices_sorted=True, but the {param} are not in lexicographic order")
    unique = bool(strictly)
    if claimed_unique and not unique:
        unique = bool(_all_unique(np, host) if host is not None else jax.device_get(_all_unique_kernel(indices)))
        if not unique:
            fail(ValueError, "unique_indices=True, but some index appears more than once")
    return bool(in_order), unique


def build_bcoo(args: Any, shape: Any, indices_sorted: Any, unique_indices: Any) -> Any:
    """A checked ``jax.experimental.sparse.BCOO`` from ``BCOO((data, indices), shape=...)``."""
    if not isinstance(args, (tuple, list)) or len(args) != 2:
        fail(TypeError, f"expected a tuple (data, indices), got {describe(args)}")
    data = dense_argument(args[0], "data")
    indices = index_argument(args[1], "indices")
    size = boundary.shape(shape, "shape")
    claimed_sorted = boundary.boolean(indices_sorted, "indices_sorted")
    claimed_unique = boundary.boolean(unique_indices, "unique_indices")
    if indices.ndim < 2:
        fail(ValueError, f"indices must have shape (*batch, nse, n_sparse), got {tuple(indices.shape)}")
    n_batch = indices.ndim - 2
    nse, n_sparse = indices.shape[-2], indices.shape[-1]
    n_dense = len(size) - n_batch - n_sparse
    if n_dense < 0:
        fail(ValueError, f"indices of shape {tuple(indices.shape)} have {n_batch} batch and {n_sparse} sparse "
               f"dimensions, more than shape {size} has")  # fmt: skip
    expected = (*size[:n_batch], nse, *size[n_batch + n_sparse :])
    if tuple(data.shape) != expected:
        fail(ValueError, f"data must have shape {expected} for indices of shape {tuple(indices.shape)} "
               f"and shape {size}, got {tuple(data.shape)}")  # fmt: skip
    if tuple(indices.shape[:n_batch]) != size[:n_batch]:
        fail(ValueError, f"indices must have the batch shape {size[:n_batch]} of shape {size}, "
               f"got indices of shape {tuple(indices.shape)}")  # fmt: skip
    sparse_sizes = size[n_batch : n_batch + n_sparse]
    check_index_capacity(indices.dtype, sparse_sizes, "indices of dtype")
    sorted_, unique = _check_indices(indices, sparse_sizes, claimed_sorted, claimed_unique, "indices")
    return make_bcoo(data, indices, size, sorted_, unique)


@kernel
def _indptr_summary(indptr: Any) -> tuple[Any, Any, Any]:
    steps = jnp.diff(indptr, axis=-1)
    return jnp.all(steps >= 0), jnp.all(indptr[..., 0] == 0), jnp.max(indptr[..., -1])


def _bcsr_coordinates(indices: Any, indptr: Any) -> Any:
    """The (row, column) of each entry as BCOO indices; entries past ``indptr[-1]`` (padding) get
    the row ``n_rows``, out of bounds, as JAX's own padding has."""

    def one(cols: Any, ptr: Any) -> Any:
        position = jnp.arange(cols.shape[0], dtype=ptr.dtype)
        rows = jnp.searchsorted(ptr, position, side="right") - 1
        rows = jnp.where(position < ptr[-1], rows, ptr.shape[0] - 1)
        return jnp.stack([rows.astype(cols.dtype), cols], axis=-1)

    for _ in range(indices.ndim - 1):
        one = jax.vmap(one)
    return one(indices, indptr)


@kernel
def _bcsr_summary(indices: Any, indptr: Any) -> tuple[Any, Any, Any, Any]:
    """Over the stored entries: the smallest and largest column, whether the columns increase
    within each row, and strictly so."""
    nse = indices.shape[-1]
    stored = jnp.arange(nse) < indptr[..., -1:]
    info = jnp.iinfo(indices.dtype)
    low = jnp.min(jnp.where(stored, indices, info.max), initial=info.max)
    high = jnp.max(jnp.where(stored, indices, info.min), initial=info.min)
    rows = _bcsr_coordinates(indices, indptr)[..., 0]
    same_row = (rows[..., 1:] == rows[..., :-1]) & stored[..., 1:]
    in_order = jnp.all(~same_row | (indices[..., 1:] >= indices[..., :-1]))
    strictly = jnp.all(~same_row | (indices[..., 1:] > indices[..., :-1]))
    return low, high, in_order, strictly


@kernel
def _bcsr_all_unique(indices: Any, indptr: Any) -> Any:
    coo = _bcsr_coordinates(indices, indptr)
    padding = coo[..., 0] == indptr.shape[-1] - 1
    distinct = jnp.where(padding, -1 - jnp.arange(indices.shape[-1], dtype=indices.dtype), coo[..., 1])
    return _all_unique(jnp, jnp.stack([coo[..., 0], distinct], axis=-1))


def _bcsr_coordinates_host(indices: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """``_bcsr_coordinates`` in NumPy."""
    nse, n_rows = indices.shape[-1], indptr.shape[-1] - 1
    count = math.prod(indices.shape[:-1])
    flat_indices, flat_indptr = indices.reshape(count, nse), indptr.reshape(count, n_rows + 1)
    rows = np.empty(flat_indices.shape, indices.dtype)
    position = np.arange(nse)
    for i, ptr in enumerate(flat_indptr):
        rows[i] = np.where(position < ptr[-1], np.searchsorted(ptr, position, side="right") - 1, n_rows)
    return np.stack([rows.reshape(indices.shape), indices], axis=-1)


def _bcsr_summary_host(indices: np.ndarray, indptr: np.ndarray) -> tuple[Any, Any, Any, Any]:
    stored = np.arange(indices.shape[-1]) < indptr[..., -1:]
    columns = indices[stored]
    low, high = (columns.min(), columns.max()) if columns.size else (0, 0)
    rows = _bcsr_coordinates_host(indices, indptr)[..., 0]
    same_row = (rows[..., 1:] == rows[..., :-1]) & stored[..., 1:]
    in_order = np.all(~same_row | (indices[..., 1:] >= indices[..., :-1]))
    strictly = np.all(~same_row | (indices[..., 1:] > indices[..., :-1]))
    return low, high, in_order, strictly


def build_bcsr(args: Any, shape: Any, indices_sorted: Any, unique_indices: Any) -> Any:
    """A checked ``jax.experimental.sparse.BCSR`` from ``BCSR((data, indices, indptr), shape=...)``."""
    if not isinstance(args, (tuple, list)) or len(args) != 3:
        fail(TypeError, f"expected a tuple (data, indices, indptr), got {describe(args)}")
    data = dense_argument(args[0], "data")
    indices = index_argument(args[1], "indices")
    indptr = index_argument(args[2], "indptr")
    size = boundary.shape(shape, "shape")
    claimed_sorted = boundary.boolean(indices_sorted, "indices_sorted")
    claimed_unique = boundary.boolean(unique_indices, "unique_indices")
    if indices.dtype != indptr.dtype:
        fail(TypeError, f"indices and indptr must have the same dtype, got {indices.dtype} and {indptr.dtype}")
    n_batch = indices.ndim - 1
    if n_batch < 0 or len(size) < n_batch + 2:
        fail(ValueError, f"indices of shape {tuple(indices.shape)} (shape (*batch, nse)) do not fit shape {size}: "
               f"BCSR needs two sparse dimensions after the batch ones")  # fmt: skip
    rows, cols = size[n_batch], size[n_batch + 1]
    nse = indices.shape[-1]
    if tuple(indices.shape[:n_batch]) != size[:n_batch]:
        fail(ValueError, f"indices must have the batch shape {size[:n_batch]}, got shape {tuple(indices.shape)}")
    if tuple(indptr.shape) != (*size[:n_batch], rows + 1):
        fail(ValueError, f"indptr must have shape {(*size[:n_batch], rows + 1)}, got {tuple(indptr.shape)}")
    expected = (*size[:n_batch], nse, *size[n_batch + 2 :])
    if tuple(data.shape) != expected:
        fail(ValueError, f"data must have shape {expected} for indices of shape {tuple(indices.shape)} "
               f"and shape {size}, got {tuple(data.shape)}")  # fmt: skip
    check_index_capacity(indices.dtype, (rows, cols, nse), "indices of dtype")
    sorted_, unique = claimed_sorted, claimed_unique
    if not is_traced(indices, indptr) and indptr.size:
        host_indices, host_indptr = on_host(indices), on_host(indptr)
        if host_indices is not None and host_indptr is not None:
            ordered, starts_at_zero = np.all(np.diff(host_indptr, axis=-1) >= 0), np.all(host_indptr[..., 0] == 0)
            last = host_indptr[..., -1].max()
        else:
            ordered, starts_at_zero, last = jax.device_get(_indptr_summary(indptr))
        if not (ordered and starts_at_zero) or last > nse:
            fail(ValueError, f"indptr must be non-decreasing from 0 to at most nse={nse} in each batch")
        if indices.size:
            if host_indices is not None and host_indptr is not None:
                low, high, in_order, strictly = _bcsr_summary_host(host_indices, host_indptr)
            else:
                low, high, in_order, strictly = jax.device_get(_bcsr_summary(indices, indptr))
            if low < 0 or (high >= cols and last > 0):
                bad = int(low) if low < 0 else int(high)
                fail(IndexError, f"indices holds {bad}, out of bounds for the {cols} columns "
                       f"(indices must lie in [0, size); nothing is clamped)")  # fmt: skip
            if claimed_sorted and not in_order:
                fail(ValueError, "indices_sorted=True, but the column indices do not increase within each row")
            sorted_, unique = bool(in_order), bool(strictly)
            if claimed_unique and not unique:
                if not bool(jax.device_get(_bcsr_all_unique(indices, indptr))):
                    fail(ValueError, "unique_indices=True, but some index appears more than once")
                unique = True
    return make_bcsr(data, indices, indptr, size, sorted_, unique)


# --- dense <-> sparse -----------------------------------------------------------------------


def _stored(x: Any) -> Any:
    """Where an element is stored: nonzero, or a negative zero (kept for bit-exact round trips)."""
    if x.dtype == np.bool_:
        return x
    if x.dtype.kind == "f":
        return (x != 0) | jnp.signbit(x)
    if x.dtype.kind == "c":
        return (x != 0) | jnp.signbit(x.real) | jnp.signbit(x.imag)
    return x != 0


def _stored_mask(x: Any, n_batch: int, n_dense: int) -> Any:
    mask = _stored(x)
    if n_dense:
        mask = jnp.any(mask, axis=tuple(range(x.ndim - n_dense, x.ndim)))
    return mask


@functools.partial(kernel, static_argnames=("n_batch", "n_dense"))
def _count_stored(x: Any, n_batch: int, n_dense: int) -> Any:
    """The largest number of stored elements in one batch."""
    mask = _stored_mask(x, n_batch, n_dense)
    counts = jnp.sum(mask, axis=tuple(range(n_batch, mask.ndim)))
    return jnp.max(counts, initial=0)


@functools.partial(kernel, static_argnames=("nse", "n_batch", "n_dense", "index_dtype"))
def _fromdense(x: Any, nse: int, n_batch: int, n_dense: int, index_dtype: np.dtype) -> Any:
    n_sparse = x.ndim - n_batch - n_dense
    mask = _stored_mask(x, n_batch, n_dense)
    sparse_shape = x.shape[n_batch : n_batch + n_sparse]

    def one(m: Any, block: Any) -> tuple[Any, Any]:
        if n_sparse == 0:
            idx = jnp.zeros((nse, 0), index_dtype)
            values = jnp.broadcast_to(block, (nse, *block.shape))
            keep = jnp.arange(nse) < m.astype(jnp.int32)
        else:
            found = jnp.nonzero(m, size=nse, fill_value=sparse_shape)
            idx = jnp.stack(found, axis=-1).astype(index_dtype)
            if m.size == 0:  # nothing to gather from: all padding (jnp.nonzero ignores fill_value here)
                idx = jnp.broadcast_to(jnp.asarray(sparse_shape, index_dtype), (nse, n_sparse))
                return jnp.zeros((nse, *block.shape[n_sparse:]), block.dtype), idx
            return block.at[found].get(mode="fill", fill_value=0), idx  # padding: out of bounds, 0
        keep = keep.reshape(keep.shape + (1,) * n_dense)
        return jnp.where(keep, values, jnp.zeros((), block.dtype)), idx

    for _ in range(n_batch):
        one = jax.vmap(one)
    data, indices = one(mask, x)
    unique = n_sparse > 0 or nse <= 1  # without sparse dimensions, padding repeats the one index
    return make_bcoo(data, indices, tuple(x.shape), True, unique)


@functools.partial(kernel, static_argnames=("nse", "n_batch", "n_dense", "index_dtype"))
def _fromdense_bcsr(x: Any, nse: int, n_batch: int, n_dense: int, index_dtype: np.dtype) -> Any:
    coo = _fromdense(x, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)
    return _to_bcsr_value(coo)


def _stored_host(x: np.ndarray, n_dense: int) -> np.ndarray:
    if x.dtype == np.bool_:
        mask = x
    elif x.dtype.kind == "f":
        mask = (x != 0) | np.signbit(x)
    elif x.dtype.kind == "c":
        mask = (x != 0) | np.signbit(x.real) | np.signbit(x.imag)
    else:
        mask = x != 0
    return np.asarray(mask.any(axis=tuple(range(x.ndim - n_dense, x.ndim))) if n_dense else mask)


def _count_stored_host(x: np.ndarray, n_batch: int, n_dense: int) -> int:
    mask = _stored_host(x, n_dense)
    if mask.size == 0:
        return 0
    counts = mask.reshape(math.prod(mask.shape[:n_batch]), math.prod(mask.shape[n_batch:])).sum(axis=1)
    return int(counts.max(initial=0))


def _fromdense_host(
    x: np.ndarray, nse: int, n_batch: int, n_dense: int, index_dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """``_fromdense`` in NumPy: the data and indices buffers, padded as JAX pads."""
    shape = x.shape
    n_sparse = x.ndim - n_batch - n_dense
    batch, sparse_shape, dense_shape = shape[:n_batch], shape[n_batch : n_batch + n_sparse], shape[x.ndim - n_dense :]
    count = math.prod(batch)
    mask = _stored_host(x, n_dense).reshape(count, *sparse_shape)
    values = x.reshape(count, *sparse_shape, *dense_shape)
    found = np.nonzero(mask)  # (batch, *sparse) positions, in lexicographic order
    per_batch = np.bincount(found[0], minlength=count)
    position = np.arange(len(found[0])) - (np.cumsum(per_batch) - per_batch)[found[0]]
    data = np.zeros((count, nse, *dense_shape), x.dtype)
    indices = np.empty((count, nse, n_sparse), index_dtype)
    indices[...] = np.asarray(sparse_shape, index_dtype)  # padding: out of bounds
    data[found[0], position] = values[found]
    indices[found[0], position] = np.stack(found[1:], axis=-1) if n_sparse else np.zeros((len(found[0]), 0))
    return data.reshape(*batch, nse, *dense_shape), indices.reshape(*batch, nse, n_sparse)


def _bcsr_pointers_host(rows: np.ndarray, n_rows: int, index_dtype: np.dtype) -> np.ndarray:
    """BCSR row pointers of sorted BCOO rows (shape (*batch, nse)); padding rows are n_rows."""
    flat = rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1])
    pointers = np.zeros((flat.shape[0], n_rows + 1), index_dtype)
    for i, r in enumerate(flat):
        pointers[i, 1:] = np.cumsum(np.bincount(r[r < n_rows], minlength=n_rows))
    return pointers.reshape(*rows.shape[:-1], n_rows + 1)


def fromdense_value(value: Any, nse: int | None, n_batch: int, n_dense: int, index_dtype: Any, format: str) -> Any:
    """The ``jax.experimental.sparse`` array of a dense jax array (arguments checked here)."""
    n_batch = boundary.non_negative(n_batch, "n_batch")
    n_dense = boundary.non_negative(n_dense, "n_dense")
    n_sparse = value.ndim - n_batch - n_dense
    if n_sparse < 0:
        fail(ValueError, f"n_batch={n_batch} and n_dense={n_dense} add up to more than the {value.ndim} "
               f"dimensions of x")  # fmt: skip
    if format == "bcsr" and n_sparse != 2:
        fail(ValueError, f"format='bcsr' needs exactly 2 sparse dimensions, got {n_sparse} (x has {value.ndim} "
               f"dimensions, n_batch={n_batch}, n_dense={n_dense})")  # fmt: skip
    sparse_sizes = tuple(value.shape[n_batch : n_batch + n_sparse])
    per_batch = math.prod(sparse_sizes)
    want_index = index_dtype_argument(index_dtype, (*sparse_sizes, per_batch) if format == "bcsr" else sparse_sizes)
    host = on_host(value)
    if nse is None and is_traced(value):
        fail(DataDependentShapeError, "nse is required under a JAX transformation (the number of stored "
               "elements depends on the values); pass nse=, an upper bound, e.g. the size of x")  # fmt: skip
    if not is_traced(value):
        if host is not None:
            count = _count_stored_host(host, n_batch, n_dense)
        else:
            count = int(_count_stored(value, n_batch=n_batch, n_dense=n_dense)) if value.size else 0
        if nse is None:
            nse = count
        elif count > nse:
            fail(ValueError, f"nse={nse} is smaller than the {count} nonzero elements of x "
                   f"(per batch); entries would be dropped")  # fmt: skip
    assert nse is not None
    if host is None:
        build = _fromdense_bcsr if format == "bcsr" else _fromdense
        return build(value, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=want_index)
    data, indices = _fromdense_host(host, nse, n_batch, n_dense, want_index)
    shape = tuple(value.shape)
    unique = n_sparse > 0 or nse <= 1
    if format == "bcsr":
        indptr = _bcsr_pointers_host(indices[..., 0], shape[n_batch], want_index)
        placed = [to_device_of(np.ascontiguousarray(a), value) for a in (data, indices[..., 1], indptr)]
        return make_bcsr(placed[0], placed[1], placed[2], shape, True, unique)
    return make_bcoo(to_device_of(data, value), to_device_of(indices, value), shape, True, unique)


def _scatter(data: Any, indices: Any, shape: tuple[int, ...], unique: bool) -> Any:
    """The dense array of BCOO buffers (inside a kernel). Distinct indices are written, so that a
    stored negative zero stays one; duplicates are added; out-of-bounds ones (padding) dropped."""
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    batch = shape[:n_batch]
    data = jnp.broadcast_to(data, (*batch, *data.shape[n_batch:]))
    indices = jnp.broadcast_to(indices, (*batch, *indices.shape[n_batch:]))
    block = shape[n_batch:]

    logical = data.dtype == np.bool_  # duplicates of a boolean array combine with "or"

    def one(values: Any, idx: Any) -> Any:
        if n_sparse == 0:
            if unique and values.shape[0] == 1:
                return values[0]
            return jnp.any(values, axis=0) if logical else jnp.sum(values, axis=0, dtype=values.dtype)
        out = jnp.zeros(block, values.dtype)
        where = out.at[tuple(idx[:, k] for k in range(n_sparse))]
        if unique:
            return where.set(values, mode="drop")
        return where.max(values, mode="drop") if logical else where.add(values, mode="drop")

    for _ in range(n_batch):
        one = jax.vmap(one)
    return one(data, indices)


@functools.partial(kernel, static_argnames=("shape", "unique"))
def _bcoo_todense(data: Any, indices: Any, shape: tuple[int, ...], unique: bool) -> Any:
    return _scatter(data, indices, shape, unique)


@functools.partial(kernel, static_argnames=("shape", "unique"))
def _bcsr_todense(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...], unique: bool) -> Any:
    return _scatter(data, _bcsr_coordinates(indices, indptr), shape, unique)


def _todense_host(data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], unique: bool) -> np.ndarray:
    """``_scatter`` in NumPy."""
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    batch, block = shape[:n_batch], shape[n_batch:]
    count, nse = math.prod(batch), indices.shape[-2]
    data = np.broadcast_to(data, (*batch, *data.shape[n_batch:])).reshape(count * nse, *data.shape[n_batch + 1 :])
    indices = np.broadcast_to(indices, (*batch, *indices.shape[n_batch:])).reshape(count * nse, n_sparse)
    which = np.repeat(np.arange(count), nse)
    keep = np.all((indices >= 0) & (indices < np.asarray(block[:n_sparse], np.int64)), axis=-1)
    where = (which[keep], *(indices[keep, k] for k in range(n_sparse)))
    out = np.zeros((count, *block), data.dtype)
    if unique and n_sparse:
        out[where] = data[keep]
    elif unique and nse == 1:
        out[:] = data.reshape(out.shape)
    elif data.dtype == np.bool_:
        np.logical_or.at(out, where, data[keep])
    else:
        np.add.at(out, where, data[keep])
    return out.reshape(shape)


def todense(v: Any) -> Any:
    """The dense jax array of a ``jax.experimental.sparse`` BCOO or BCSR."""
    host = _host_buffers(v)
    if host is not None:
        data, indices = host if isinstance(v, jsparse.BCOO) else (host[0], _bcsr_coordinates_host(host[1], host[2]))
        return to_device_of(_todense_host(data, indices, tuple(v.shape), bool(v.unique_indices)), v.data)
    if isinstance(v, jsparse.BCOO):
        return _bcoo_todense(v.data, v.indices, shape=tuple(v.shape), unique=v.unique_indices)
    return _bcsr_todense(v.data, v.indices, v.indptr, shape=tuple(v.shape), unique=v.unique_indices)


# --- BCOO <-> BCSR, duplicates and order ----------------------------------------------------


def _to_bcsr_value(coo: Any) -> Any:
    """A BCSR of a BCOO with two sparse dimensions (inside a kernel)."""
    if not coo.indices_sorted:
        coo = coo.sort_indices()
    n_batch = coo.n_batch
    rows = coo.shape[n_batch]
    index_dtype = coo.indices.dtype

    def pointers(row_of: Any) -> Any:
        counts = jnp.zeros(rows + 1, index_dtype).at[row_of + 1].add(1, mode="drop")
        return jnp.cumsum(counts, dtype=index_dtype)

    for _ in range(n_batch):
        pointers = jax.vmap(pointers)
    indptr = pointers(coo.indices[..., 0])
    return make_bcsr(coo.data, coo.indices[..., 1], indptr, coo.shape, True, coo.unique_indices)


@functools.partial(kernel, static_argnames=("shape", "sorted_", "unique"))
def _bcoo_to_bcsr(data: Any, indices: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    return _to_bcsr_value(make_bcoo(data, indices, shape, sorted_, unique))


def _to_bcoo_value(csr: Any) -> Any:
    indices = _bcsr_coordinates(csr.indices, csr.indptr)
    return make_bcoo(csr.data, indices, csr.shape, csr.indices_sorted, csr.unique_indices)


@functools.partial(kernel, static_argnames=("shape", "sorted_", "unique"))
def _bcsr_to_bcoo(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    return _to_bcoo_value(make_bcsr(data, indices, indptr, shape, sorted_, unique))


def _sort_host(data: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each batch's entries in lexicographic order of their indices (batch shapes equal)."""
    nse, n_sparse = indices.shape[-2], indices.shape[-1]
    n_batch = indices.ndim - 2
    flat = indices.reshape(math.prod(indices.shape[:-1]), n_sparse)
    batch = np.arange(flat.shape[0]) // max(nse, 1)
    order = np.lexsort((*(flat[:, k] for k in reversed(range(n_sparse))), batch))
    values = data.reshape(flat.shape[0], *data.shape[n_batch + 1 :])[order].reshape(data.shape)
    return values, flat[order].reshape(indices.shape)


def _host_buffers(v: Any) -> tuple[np.ndarray, ...] | None:
    """The buffers of a JAX sparse array as NumPy arrays, if they all live on one CPU device
    (batch dimensions broadcast to the array's)."""
    leaves = jax.tree_util.tree_leaves(v)
    hosts = [on_host(leaf) for leaf in leaves]
    if any(h is None for h in hosts):
        return None
    if isinstance(v, jsparse.BCOO):
        data, indices = _full_batch_host(hosts[0], hosts[1], tuple(v.shape), v.n_batch)  # type: ignore[arg-type]
        return data, indices
    return tuple(hosts)  # type: ignore[arg-type]


def _full_batch_host(
    data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], n_batch: int
) -> tuple[np.ndarray, np.ndarray]:
    batch = shape[:n_batch]
    return (np.broadcast_to(data, (*batch, *data.shape[n_batch:])),
            np.broadcast_to(indices, (*batch, *indices.shape[n_batch:])))  # fmt: skip


def to_bcsr(v: Any) -> Any:
    """The ``jax.experimental.sparse`` BCSR of a BCOO or BCSR (itself if it is one); a BCOO must
    have two sparse dimensions."""
    if isinstance(v, jsparse.BCSR):
        return v
    if v.n_sparse != 2:
        fail(ValueError, f"BCSR needs exactly 2 sparse dimensions, this array has {v.n_sparse} "
               f"(n_batch={v.n_batch}, n_dense={v.n_dense}); rebuild it with xp.sparse.fromdense(..., n_batch=..., "
               f"format='bcsr')")  # fmt: skip
    check_index_capacity(v.indices.dtype, (v.nse,), "the index dtype")
    host = _host_buffers(v)
    if host is not None:
        data, indices = host
        if not v.indices_sorted:
            data, indices = _sort_host(data, indices)
        indptr = _bcsr_pointers_host(indices[..., 0], v.shape[v.n_batch], indices.dtype)
        placed = [to_device_of(np.ascontiguousarray(a), v.data) for a in (data, indices[..., 1], indptr)]
        return make_bcsr(placed[0], placed[1], placed[2], tuple(v.shape), True, v.unique_indices)
    return _bcoo_to_bcsr(v.data, v.indices, shape=tuple(v.shape), sorted_=v.indices_sorted, unique=v.unique_indices)


def to_bcoo(v: Any) -> Any:
    """The ``jax.experimental.sparse`` BCOO of a BCOO or BCSR (itself if it is one)."""
    if isinstance(v, jsparse.BCOO):
        return v
    host = _host_buffers(v)
    if host is not None:
        _, indices, indptr = host
        coordinates = to_device_of(_bcsr_coordinates_host(indices, indptr), v.indices)
        return make_bcoo(v.data, coordinates, tuple(v.shape), v.indices_sorted, v.unique_indices)
    return _bcsr_to_bcoo(v.data, v.indices, v.indptr, shape=tuple(v.shape), sorted_=v.indices_sorted,
                         unique=v.unique_indices)  # fmt: skip


def _groups(indices: Any, sizes: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """For one batch's indices (shape (nse, n_sparse)): the order that sorts them (in-bounds ones
    first, lexicographically), and for each sorted entry its group of equal indices (``nse`` for
    an out-of-bounds entry, JAX's padding) and whether it is in bounds; inside a kernel."""
    nse, n_sparse = indices.shape
    bounds = jnp.asarray(sizes, indices.dtype)
    valid = jnp.all((indices >= 0) & (indices < bounds), axis=-1)
    order = jnp.lexsort((*(indices[:, k] for k in reversed(range(n_sparse))), ~valid))
    ordered = indices[order]
    starts = jnp.concatenate([jnp.ones((min(nse, 1),), bool), jnp.any(ordered[1:] != ordered[:-1], axis=-1)])
    in_bounds = valid[order]
    group = jnp.where(in_bounds, jnp.cumsum(starts) - 1, nse)
    return order, group, jnp.sum(starts & in_bounds)


def _batched(fn: Callable[..., Any], n_batch: int) -> Callable[..., Any]:
    for _ in range(n_batch):
        fn = jax.vmap(fn)
    return fn


def _full_batch(data: Any, indices: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """Data and indices with their batch dimensions broadcast to the array's (JAX allows 1s)."""
    n_batch = indices.ndim - 2
    batch = shape[:n_batch]
    data = jnp.broadcast_to(data, (*batch, *data.shape[n_batch:]))
    return data, jnp.broadcast_to(indices, (*batch, *indices.shape[n_batch:]))


@functools.partial(kernel, static_argnames="shape")
def _count_distinct(indices: Any, shape: tuple[int, ...]) -> Any:
    """The largest number of distinct in-bounds indices in one batch."""
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    indices = jnp.broadcast_to(indices, (*shape[:n_batch], *indices.shape[n_batch:]))
    sizes = shape[n_batch : n_batch + n_sparse]
    counts = _batched(lambda idx: _groups(idx, sizes)[2], n_batch)(indices)
    return jnp.max(counts, initial=0)


@functools.partial(kernel, static_argnames=("shape", "nse"))
def _bcoo_sum_duplicates(data: Any, indices: Any, shape: tuple[int, ...], nse: int) -> Any:
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    data, indices = _full_batch(data, indices, shape)
    sizes = shape[n_batch : n_batch + n_sparse]
    logical = data.dtype == np.bool_

    def one(values: Any, idx: Any) -> tuple[Any, Any]:
        order, group, count = _groups(idx, sizes)
        out_indices = jnp.broadcast_to(jnp.asarray(sizes, idx.dtype), (nse, n_sparse))
        out_indices = out_indices.at[group].set(idx[order], mode="drop")
        # Sums start from -0.0 so that a lone negative zero stays one (-0.0 + x is x).
        start = jnp.zeros((), values.dtype) if values.dtype.kind in "biu" else jnp.asarray(-0.0, values.dtype)
        target = jnp.full((nse, *values.shape[1:]), start).at[group]
        out = target.max(values[order], mode="drop") if logical else target.add(values[order], mode="drop")
        used = (jnp.arange(nse) < count).reshape((nse,) + (1,) * (values.ndim - 1))
        return jnp.where(used, out, jnp.zeros((), values.dtype)), out_indices

    out_data, out_indices = _batched(one, n_batch)(data, indices)
    return make_bcoo(out_data, out_indices, shape, True, True)


def _sum_duplicates_host(
    data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], nse: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """``_bcoo_sum_duplicates`` in NumPy (``nse`` None: the number of distinct indices)."""
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    batch, sizes = shape[:n_batch], np.asarray(shape[n_batch : n_batch + n_sparse], np.int64)
    old_nse = indices.shape[-2]
    count = math.prod(batch)
    flat_data = data.reshape(count, old_nse, *data.shape[n_batch + 1 :])
    flat_indices = indices.reshape(count, old_nse, n_sparse)
    groups = []
    for values, idx in zip(flat_data, flat_indices, strict=True):
        valid = np.all((idx >= 0) & (idx < sizes), axis=-1)
        values, idx = values[valid], idx[valid]
        if n_sparse:
            order = np.lexsort(tuple(idx[:, k] for k in reversed(range(n_sparse))))
            values, idx = values[order], idx[order]
        starts = np.ones(len(idx), bool)
        starts[1:] = np.any(idx[1:] != idx[:-1], axis=-1)
        groups.append((values, idx, np.cumsum(starts) - 1, int(starts.sum())))
    if nse is None:
        nse = max((g[3] for g in groups), default=0)
    out_data = np.zeros((len(groups), nse, *data.shape[n_batch + 1 :]), data.dtype)
    out_indices = np.empty((len(groups), nse, n_sparse), indices.dtype)
    out_indices[...] = sizes.astype(indices.dtype)
    for i, (values, idx, group, _) in enumerate(groups):
        keep = group < nse
        target = np.full((nse, *values.shape[1:]), 0 if data.dtype.kind in "biu" else -0.0, data.dtype)
        (np.logical_or if data.dtype == np.bool_ else np.add).at(target, group[keep], values[keep])
        used = min(nse, int(group[-1]) + 1 if len(group) else 0)
        out_data[i, :used] = target[:used]
        out_indices[i, group[keep]] = idx[keep]
    return out_data.reshape(*batch, nse, *data.shape[n_batch + 1 :]), out_indices.reshape(*batch, nse, n_sparse)


def sum_duplicates(v: Any, nse: int | None) -> Any:
    """A ``jax.experimental.sparse`` BCOO with duplicates summed, indices sorted; ``nse``: the
    number of entries kept (by default, eagerly, the number of distinct indices; under a trace,
    the current ``nse``)."""
    shape = tuple(v.shape)
    host = _host_buffers(v)
    if host is not None:
        data, indices = _sum_duplicates_host(host[0], host[1], shape, nse)
        return make_bcoo(to_device_of(data, v.data), to_device_of(indices, v.indices), shape, True, True)
    if nse is None:
        if is_traced(v.data, v.indices):
            nse = v.nse  # under a trace: nse kept, the rest padding
        else:
            entries = v.nse * math.prod(shape[: v.n_batch])
            nse = int(_count_distinct(v.indices, shape=shape)) if entries else 0
    return _bcoo_sum_duplicates(v.data, v.indices, shape=shape, nse=nse)


@functools.partial(kernel, static_argnames=("shape", "unique"))
def _bcoo_sort_indices(data: Any, indices: Any, shape: tuple[int, ...], unique: bool) -> Any:
    return jsparse.bcoo_sort_indices(make_bcoo(data, indices, shape, False, unique))


def sort_indices(v: Any) -> Any:
    """A ``jax.experimental.sparse`` BCOO with its entries in lexicographic order of their indices
    (itself when they are already)."""
    if v.indices_sorted:
        return v
    host = _host_buffers(v)
    if host is not None:
        data, indices = _sort_host(*host)
        return make_bcoo(to_device_of(data, v.data), to_device_of(indices, v.indices), tuple(v.shape), True,
                         v.unique_indices)  # fmt: skip
    return _bcoo_sort_indices(v.data, v.indices, shape=tuple(v.shape), unique=v.unique_indices)


# --- casts and placement --------------------------------------------------------------------


@functools.partial(kernel, static_argnames="dtype")
def _cast(data: Any, dtype: np.dtype) -> Any:
    return data.astype(dtype)


def astype(v: Any, dtype: np.dtype) -> Any:
    """A JAX sparse array with its stored values cast to ``dtype`` (the same pattern: a cast keeps
    zeros zero; itself if it has that dtype)."""
    if v.data.dtype == dtype:
        return v
    if v.data.dtype.kind == "c" and dtype.kind != "c":
        fail(TypeError, f"cannot convert a complex array to {dtype} (take xp.real or xp.imag first)")
    leaves, tree = jax.tree_util.tree_flatten(v)
    leaves[0] = _cast(leaves[0], dtype=dtype)
    return jax.tree_util.tree_unflatten(tree, leaves)


def place(v: Any, device: Any) -> Any:
    """A JAX sparse array with its buffers on ``device`` (itself if they are there; ``None`` and a
    traced device leave it where it is)."""
    if device is None or device is _devices.TRACED or _devices.same_placement(v.data, device):
        return v
    return jax.device_put(v, device)


# --- SciPy and pydata sparse ----------------------------------------------------------------


def _host_dtype(source: np.dtype, dtype: Any, what: str) -> np.dtype:
    want = boundary.optional_dtype(dtype)
    if want is None:
        if source not in dt.ANY:
            fail(TypeError, f"{what} has dtype {source}, which is not an array API dtype; pass dtype= to convert it")
        if not dt.is_available(source):
            fail(TypeError, f"{what} has dtype {source}: {dt.unavailable_message(source)}, or pass dtype= "
                   f"to convert explicitly")  # fmt: skip
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
    want_index = index_dtype_argument(index_dtype, (*shape, coords.shape[0]) if format == "bcsr" else shape)
    if coords.size:
        low, high = coords.min(axis=0), coords.max(axis=0)
        for axis, size in enumerate(shape):
            if low[axis] < 0 or high[axis] >= size:
                fail(IndexError, f"{what} holds index {int(high[axis]) if high[axis] >= size else int(low[axis])}, "
                       f"out of bounds for dimension {axis} of size {size}")  # fmt: skip
    values = jnp.asarray(np.asarray(data, dtype=dtype))
    indices = jnp.asarray(np.asarray(coords, dtype=want_index).reshape(len(data), n_sparse))
    value = make_bcoo(values, indices, shape, sorted_ or len(data) <= 1, unique or len(data) <= 1)
    if format == "bcsr":
        if n_sparse != 2:
            fail(ValueError, f"format='bcsr' needs a 2-dimensional array, got {n_sparse} dimensions")
        return _bcoo_to_bcsr(values, indices, shape=shape, sorted_=value.indices_sorted, unique=value.unique_indices)
    return value


def from_scipy_value(s: Any, format: Any, dtype: Any, index_dtype: Any) -> Any:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is optional
        sp = None
    if sp is None or not sp.issparse(s):
        fail(TypeError, f"s must be a scipy.sparse array or matrix, got {describe(s)}")
    fmt = format_argument(format)
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
    fmt = format_argument(format)
    fill = np.asarray(s.fill_value)
    if fill.item() != 0 or (fill.dtype.kind in "fc" and np.any(np.signbit(fill.real))):
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


def to_scipy(v: Any, format: Any) -> Any:
    """A SciPy sparse array with the values of the JAX sparse array ``v``: duplicates summed,
    indices sorted."""
    import scipy.sparse as sp

    if is_traced(*jax.tree_util.tree_leaves(v)):
        fail(TypeError, "a traced array cannot convert to SciPy (convert outside the JAX transformation)")
    wanted = boundary.choice(format, (None, "coo", "csr", "csc", "bsr", "lil", "dok", "dia"), "format")
    wanted = wanted or ("csr" if isinstance(v, jsparse.BCSR) else "coo")
    ndim = len(v.shape)
    if ndim == 0:
        fail(ValueError, "SciPy has no 0-dimensional sparse arrays")
    if wanted != "coo" and ndim != 2:
        fail(ValueError, f"format={wanted!r} needs a 2-dimensional array, got {ndim} dimensions")
    coo = to_bcoo(v)
    data, indices = (np.asarray(a) for a in jax.device_get((coo.data, coo.indices)))
    values, coords = _host_coordinates(data, indices, tuple(coo.shape), coo.n_batch)
    shape = tuple(coo.shape)
    result = sp.coo_array((values, coords), shape=shape)
    result.sum_duplicates()
    if wanted != "coo":
        result = result.asformat(wanted)
        if hasattr(result, "sort_indices"):
            result.sort_indices()
    return result
