"""Conversions of raw ``jax.experimental.sparse`` values: to and from dense, between formats and
layouts, to and from SciPy and pydata.

- Dense to sparse and back (:func:`fromdense_value`, :func:`todense`). An element is *stored* by
  ``fromdense`` when it is nonzero or a negative zero, so that ``fromdense(x).todense()`` gives
  back ``x`` bit for bit. ``todense`` writes distinct indices (so that a stored negative zero
  stays one), adds duplicates and drops padding.
- BCOO <-> BCSR, duplicates summed, entries sorted, values cast, buffers placed on a device.

Each of these has a jitted kernel and a NumPy path for eager calls on CPU arrays
(``xp.sparse._buffers``). SciPy and pydata sparse arrays are read on the host and checked there
(dtypes, and every index against its dimension); :func:`to_scipy` reads the buffers back (eager
only). Both libraries are optional: SciPy is imported by the functions that need it, and pydata
arrays are recognised by their module's name.

Functions take and return JAX sparse arrays; ``xp.sparse._array`` wraps them (and names the
errors).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse
from jax.sharding import NamedSharding

from xp import _boundary as boundary
from xp import _devices
from xp import _dtypes as dt
from xp import _narrowing as narrowing
from xp._errors import DataDependentShapeError, describe, fail
from xp._jit import kernel
from xp._utility import truth
from xp.sparse import _buffers as buffers
from xp.sparse import _build as build
from xp.sparse import _coordinates as coordinates
from xp.sparse import _meshes as meshes

# --- BCOO <-> BCSR ----------------------------------------------------------------------------


def bcsr_from_bcoo(coo: Any) -> Any:
    """A BCSR of a BCOO with two sparse dimensions (inside a kernel)."""
    if not coo.indices_sorted:
        coo = coo.sort_indices()
    n_batch = coo.n_batch
    rows = coo.shape[n_batch]
    index_dtype = coo.indices.dtype

    def pointers(row_of: Any) -> Any:
        counts = jnp.zeros(rows + 1, index_dtype).at[row_of + 1].add(1, mode="drop")
        return coordinates.running_sum(counts)

    for _ in range(n_batch):
        pointers = jax.vmap(pointers)
    indptr = pointers(coo.indices[..., 0])
    return buffers.make_bcsr(coo.data, coo.indices[..., 1], indptr, coo.shape, True, coo.unique_indices)


@functools.partial(kernel, static_argnames=("shape", "sorted_", "unique"))
def bcsr_from_bcoo_buffers(data: Any, indices: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    return bcsr_from_bcoo(buffers.make_bcoo(data, indices, shape, sorted_, unique))


def _to_bcoo_value(csr: Any) -> Any:
    indices = buffers.bcsr_coordinates(csr.indices, csr.indptr)
    return buffers.make_bcoo(csr.data, indices, csr.shape, csr.indices_sorted, csr.unique_indices)


@functools.partial(kernel, static_argnames=("shape", "sorted_", "unique"))
def _bcsr_to_bcoo(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    return _to_bcoo_value(buffers.make_bcsr(data, indices, indptr, shape, sorted_, unique))


def _sort_host(data: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each batch's entries in lexicographic order of their indices (batch shapes equal)."""
    nse, n_sparse = indices.shape[-2], indices.shape[-1]
    n_batch = indices.ndim - 2
    flat = indices.reshape(math.prod(indices.shape[:-1]), n_sparse)
    batch = np.arange(flat.shape[0]) // max(nse, 1)
    order = np.lexsort((*(flat[:, k] for k in reversed(range(n_sparse))), batch))
    values = data.reshape(flat.shape[0], *data.shape[n_batch + 1 :])[order].reshape(data.shape)
    return values, flat[order].reshape(indices.shape)


def bcsr_pointers_host(rows: np.ndarray, n_rows: int, index_dtype: np.dtype) -> np.ndarray:
    """BCSR row pointers of sorted BCOO rows (shape (*batch, nse)); padding rows are n_rows."""
    flat = rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1])
    pointers = np.zeros((flat.shape[0], n_rows + 1), index_dtype)
    for i, r in enumerate(flat):
        pointers[i, 1:] = np.cumsum(np.bincount(r[r < n_rows], minlength=n_rows))
    return pointers.reshape(*rows.shape[:-1], n_rows + 1)


def to_bcsr(v: Any) -> Any:
    """The ``jax.experimental.sparse`` BCSR of a BCOO or BCSR (itself if it is one); a BCOO must
    have two sparse dimensions."""
    if isinstance(v, jsparse.BCSR):
        return v
    if v.n_sparse != 2:
        fail(ValueError, f"BCSR needs exactly 2 sparse dimensions, this array has {v.n_sparse} "
               f"(n_batch={v.n_batch}, n_dense={v.n_dense}); rebuild it with xp.sparse.fromdense(..., n_batch=..., "
               f"format='bcsr')")  # fmt: skip
    build.check_index_capacity(v.indices.dtype, (v.nse,), "the index dtype")
    host = buffers.host_buffers(v)
    if host is not None:
        data, indices = host
        if not v.indices_sorted:
            data, indices = _sort_host(data, indices)
        indptr = bcsr_pointers_host(indices[..., 0], v.shape[v.n_batch], indices.dtype)
        placed = [buffers.to_device_of(np.ascontiguousarray(a), v.data) for a in (data, indices[..., 1], indptr)]
        return buffers.make_bcsr(placed[0], placed[1], placed[2], tuple(v.shape), True, v.unique_indices)
    return bcsr_from_bcoo_buffers(
        v.data, v.indices, shape=tuple(v.shape), sorted_=v.indices_sorted, unique=v.unique_indices
    )


def to_bcoo(v: Any) -> Any:
    """The ``jax.experimental.sparse`` BCOO of a BCOO or BCSR (itself if it is one)."""
    if isinstance(v, jsparse.BCOO):
        return v
    host = buffers.host_buffers(v)
    if host is not None:
        _, indices, indptr = host
        coordinates = buffers.to_device_of(buffers.bcsr_coordinates_host(indices, indptr), v.indices)
        return buffers.make_bcoo(v.data, coordinates, tuple(v.shape), v.indices_sorted, v.unique_indices)
    return _bcsr_to_bcoo(v.data, v.indices, v.indptr, shape=tuple(v.shape), sorted_=v.indices_sorted,
                         unique=v.unique_indices)  # fmt: skip


# --- duplicates and order -------------------------------------------------------------------


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
    group = jnp.where(in_bounds, coordinates.run_numbers(starts), nse)
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
    return buffers.make_bcoo(out_data, out_indices, shape, True, True)


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
    host = buffers.host_buffers(v)
    if host is not None:
        data, indices = _sum_duplicates_host(host[0], host[1], shape, nse)
        return buffers.make_bcoo(
            buffers.to_device_of(data, v.data), buffers.to_device_of(indices, v.indices), shape, True, True
        )
    if nse is None:
        if buffers.is_traced(v.data, v.indices):
            nse = int(v.nse)  # under a trace: nse kept, the rest padding
        else:
            entries = v.nse * math.prod(shape[: v.n_batch])
            nse = int(_count_distinct(v.indices, shape=shape)) if entries else 0
    return _bcoo_sum_duplicates(v.data, v.indices, shape=shape, nse=nse)


@functools.partial(kernel, static_argnames=("shape", "unique"))
def _bcoo_sort_indices(data: Any, indices: Any, shape: tuple[int, ...], unique: bool) -> Any:
    return jsparse.bcoo_sort_indices(buffers.make_bcoo(data, indices, shape, False, unique))


def sort_indices(v: Any) -> Any:
    """A ``jax.experimental.sparse`` BCOO with its entries in lexicographic order of their indices
    (itself when they are already)."""
    if v.indices_sorted:
        return v
    host = buffers.host_buffers(v)
    if host is not None:
        data, indices = _sort_host(*host)
        return buffers.make_bcoo(
            buffers.to_device_of(data, v.data),
            buffers.to_device_of(indices, v.indices),
            tuple(v.shape),
            True,
            v.unique_indices,
        )
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
    leaves[0] = _cast(leaves[0], dtype)
    return jax.tree_util.tree_unflatten(tree, leaves)


def place(v: Any, device: Any) -> Any:
    """A JAX sparse array with its buffers on ``device`` (itself if they are there; ``None`` and a
    traced device leave it where it is). On a mesh, the buffers are split by the rule of
    ``xp.sparse._meshes`` (the index arrays are not shaped like the array)."""
    if device is None or device is _devices.TRACED:
        return v
    if isinstance(device, NamedSharding) and len(device.device_set) > 1:
        return meshes.place(v, device)
    if _devices.same_placement(v.data, device):
        return v
    return jax.device_put(v, device)


def placed_on(v: Any, device: Any) -> bool:
    """Whether placing ``v`` on ``device`` would leave it as it is (eagerly)."""
    if device is None or device is _devices.TRACED:
        return True
    if isinstance(device, NamedSharding) and len(device.device_set) > 1:
        return meshes.is_placed(v, device)
    return _devices.same_placement(v.data, device)


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
    return bcsr_from_bcoo(coo)


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
        indptr = bcsr_pointers_host(indices[..., 0], shape[n_batch], want_index)
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


# --- SciPy and pydata -----------------------------------------------------------------------


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
        return bcsr_from_bcoo_buffers(
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
    coo = to_bcoo(v)
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
