"""Dense to sparse and back: ``fromdense`` and ``todense`` on raw values.

An element is *stored* by ``fromdense`` when it is nonzero or a negative zero, so that
``fromdense(x).todense()`` gives back ``x`` bit for bit. ``todense`` writes distinct indices
(so that a stored negative zero stays one), adds duplicates and drops padding. Each direction
has a jitted kernel and a NumPy path for eager calls on CPU arrays (``xp.sparse._buffers``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp._errors import DataDependentShapeError, fail
from xp._jit import kernel
from xp._utility import truth
from xp.sparse import _buffers as buffers
from xp.sparse import _build as build
from xp.sparse import _conversion as conversion

# --- dense to sparse ------------------------------------------------------------------------


def _stored(x: Any) -> Any:
    """Where an element is stored: nonzero (a subnormal too), or a negative zero (kept for
    bit-exact round trips)."""
    if x.dtype.kind == "f":
        return truth(x) | jnp.signbit(x)
    if x.dtype.kind == "c":
        return truth(x) | jnp.signbit(x.real) | jnp.signbit(x.imag)
    return truth(x)


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
    return buffers.make_bcoo(data, indices, tuple(x.shape), True, unique)


@functools.partial(kernel, static_argnames=("nse", "n_batch", "n_dense", "index_dtype"))
def _fromdense_bcsr(x: Any, nse: int, n_batch: int, n_dense: int, index_dtype: np.dtype) -> Any:
    coo = _fromdense(x, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)
    return conversion.bcsr_from_bcoo(coo)


def _stored_host(x: np.ndarray, n_dense: int) -> np.ndarray:
    if x.dtype == np.bool_:
        mask = x
    elif x.dtype.kind == "f":
        mask = (x != 0) | np.signbit(x)
    elif x.dtype.kind == "c":
        mask = (x != 0) | np.signbit(np.real(x)) | np.signbit(np.imag(x))
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
    want_index = build.index_dtype_argument(
        index_dtype, (*sparse_sizes, per_batch) if format == "bcsr" else sparse_sizes
    )
    host = buffers.on_host(value)
    if nse is None and buffers.is_traced(value):
        fail(DataDependentShapeError, "nse is required under a JAX transformation (the number of stored "
               "elements depends on the values); pass nse=, an upper bound, e.g. the size of x")  # fmt: skip
    if not buffers.is_traced(value):
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
        convert = _fromdense_bcsr if format == "bcsr" else _fromdense
        return convert(value, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=want_index)
    data, indices = _fromdense_host(host, nse, n_batch, n_dense, want_index)
    shape = tuple(value.shape)
    unique = n_sparse > 0 or nse <= 1
    if format == "bcsr":
        indptr = conversion.bcsr_pointers_host(indices[..., 0], shape[n_batch], want_index)
        placed = [buffers.to_device_of(np.ascontiguousarray(a), value) for a in (data, indices[..., 1], indptr)]
        return buffers.make_bcsr(placed[0], placed[1], placed[2], shape, True, unique)
    return buffers.make_bcoo(
        buffers.to_device_of(data, value), buffers.to_device_of(indices, value), shape, True, unique
    )


# --- sparse to dense ------------------------------------------------------------------------


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
    return _scatter(data, buffers.bcsr_coordinates(indices, indptr), shape, unique)


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
    host = buffers.host_buffers(v)
    if host is not None:
        data, indices = (
            host if isinstance(v, jsparse.BCOO) else (host[0], buffers.bcsr_coordinates_host(host[1], host[2]))
        )
        return buffers.to_device_of(_todense_host(data, indices, tuple(v.shape), bool(v.unique_indices)), v.data)
    if isinstance(v, jsparse.BCOO):
        return _bcoo_todense(v.data, v.indices, shape=tuple(v.shape), unique=v.unique_indices)
    return _bcsr_todense(v.data, v.indices, v.indptr, shape=tuple(v.shape), unique=v.unique_indices)
