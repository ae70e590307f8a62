"""Conversions between sparse formats and layouts of raw ``jax.experimental.sparse`` values.

BCOO <-> BCSR, duplicates summed, entries sorted, values cast, buffers placed on a device. Each
conversion has a jitted kernel and a NumPy path for eager calls on CPU arrays
(``xp.sparse._buffers``). Functions take and return JAX sparse arrays; ``xp.sparse._array``
wraps them (and names the errors).
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

from xp import _devices
from xp._errors import fail
from xp._jit import kernel
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
