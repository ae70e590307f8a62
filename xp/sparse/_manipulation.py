"""The manipulation functions of sparse arrays.

``reshape``, ``permute_dims``, ``moveaxis``, ``expand_dims``, ``squeeze``, ``flip``, ``roll``,
``broadcast_to``, ``broadcast_arrays``, ``concat``, ``stack``, ``unstack``, ``tile`` and
``repeat`` move stored elements to their new coordinates (the coordinate form of
``xp.sparse._coordinates``); nothing is densified. Sparse arrays are immutable, so
``reshape(..., copy=False)`` is always possible. ``concat`` and ``stack`` take dense operands
too: their elements are stored explicitly (all of them) in the sparse result.
``broadcast_arrays`` leaves dense operands dense. Results are BCOO arrays in the plain layout;
argument checks are the dense functions' (``xp.sparse._dense_checks``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from xp import _boundary as boundary
from xp import _creation as creation
from xp import _manipulation as dense
from xp._array import Array
from xp._jit import Tracer, kernel
from xp._routing import implements
from xp.sparse import _coordinates as coordinates
from xp.sparse._array import BCOO, SparseArray, wrap_sparse
from xp.sparse._dense_checks import Concrete, abstract, is_array
from xp.sparse._transposed import is_plain

# --- reshaping and permuting ----------------------------------------------------------------


@functools.partial(kernel, static_argnames="shape")
def _reshape(value: Any, shape: tuple[int, ...]) -> Any:
    return coordinates.to_bcoo(
        coordinates.general_reshape(coordinates.coo(value), shape),
        sorted=coordinates.is_flat(value) and value.indices_sorted,
    )


def _sparse(x: Any) -> Any:
    return x._value


@implements("reshape")
def reshape(x: Any, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Any:
    spec = abstract(dense.reshape, x, shape, copy=copy)
    target = tuple(spec.shape)
    if target == x.shape:
        return x
    return BCOO._wrap(_reshape(_sparse(x), shape=target))


@functools.partial(kernel, static_argnames="axes")
def _permute(value: Any, axes: tuple[int, ...]) -> Any:
    c = coordinates.coo(value)
    idx = c.idx[:, list(axes)] if axes else c.idx
    return coordinates.to_bcoo(coordinates.Coo(c.data, idx, tuple(c.shape[a] for a in axes), c.unique))


def permuted(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` (xp sparse) with its axes in the order ``axes`` (normalized); no checks. The transpose
    of a matrix is O(1): a view, or a view's base (``xp.sparse._transposed``)."""
    if axes == tuple(range(len(axes))):
        return x
    if axes == (1, 0):
        if x._base is not None:
            return wrap_sparse(x._base)
        if is_plain(x._value):
            return BCOO._view(x._value)
    return BCOO._wrap(_permute(_sparse(x), axes=axes))


@implements("permute_dims")
def permute_dims(x: Any, /, axes: tuple[int, ...]) -> Any:
    abstract(dense.permute_dims, x, axes)
    return permuted(x, boundary.axes(axes, x.ndim, "axes"))


@implements("moveaxis")
def moveaxis(x: Any, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Any:
    abstract(dense.moveaxis, x, source, destination)
    moved = boundary.axes(source, x.ndim, "source")
    places = boundary.axes(destination, x.ndim, "destination")
    order = [n for n in range(x.ndim) if n not in moved]
    for place, axis in sorted(zip(places, moved, strict=True)):
        order.insert(place, axis)
    return permuted(x, tuple(order))


@functools.partial(kernel, static_argnames="shape")
def ones_reshaped(value: Any, shape: tuple[int, ...]) -> Any:
    out = coordinates.ones_reshape(coordinates.coo(value), shape)
    assert out is not None
    return coordinates.to_bcoo(out, sorted=coordinates.is_flat(value) and value.indices_sorted)


@implements("expand_dims")
def expand_dims(x: Any, /, axis: int | tuple[int, ...]) -> Any:
    spec = abstract(dense.expand_dims, x, axis)
    return BCOO._wrap(ones_reshaped(_sparse(x), shape=tuple(spec.shape)))


@implements("squeeze")
def squeeze(x: Any, /, axis: int | tuple[int, ...]) -> Any:
    spec = abstract(dense.squeeze, x, axis)
    if tuple(spec.shape) == x.shape:
        return x
    return BCOO._wrap(ones_reshaped(_sparse(x), shape=tuple(spec.shape)))


# --- flip and roll --------------------------------------------------------------------------


@functools.partial(kernel, static_argnames="axes")
def _flip(value: Any, axes: tuple[int, ...]) -> Any:
    c = coordinates.coo(value)
    idx = c.idx
    for a in axes:
        idx = coordinates.with_column(idx, a, np.asarray(c.shape[a] - 1, idx.dtype) - idx[:, a])
    return coordinates.to_bcoo(coordinates.make(c.data, idx, c.shape, coordinates.valid(c), c.unique))


@implements("flip")
def flip(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    abstract(dense.flip, x, axis=axis)
    axes = tuple(sorted(a for a in boundary.axes(axis, x.ndim) if x.shape[a] > 1))
    if not axes:
        return x
    return BCOO._wrap(_flip(_sparse(x), axes=axes))


@functools.partial(kernel, static_argnames="shifts")
def _roll(value: Any, shifts: tuple[tuple[int, int], ...]) -> Any:
    c = coordinates.coo(value)
    if shifts and shifts[0][0] == -1:  # the flattened array
        size = math.prod(c.shape)
        flat = coordinates.general_reshape(c, (size,))
        moved = (flat.idx + np.asarray(shifts[0][1], flat.idx.dtype)) % np.asarray(size, flat.idx.dtype)
        return coordinates.to_bcoo(
            coordinates.general_reshape(
                coordinates.make(flat.data, moved, flat.shape, coordinates.valid(flat), c.unique), c.shape
            )
        )
    idx = c.idx
    for a, s in shifts:
        n = np.asarray(c.shape[a], idx.dtype)
        idx = coordinates.with_column(idx, a, (idx[:, a] + np.asarray(s, idx.dtype)) % n)
    return coordinates.to_bcoo(coordinates.make(c.data, idx, c.shape, coordinates.valid(c), c.unique))


@implements("roll")
def roll(x: Any, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Any:
    abstract(dense.roll, x, shift, axis=axis)
    shape = x.shape
    if axis is None:
        size = math.prod(shape)
        amount = boundary.integer(shift, "shift") % size if size else 0
        return BCOO._wrap(_roll(_sparse(x), shifts=((-1, amount),))) if amount else x
    axes = (
        boundary.axes(axis, x.ndim)
        if not isinstance(axis, (tuple, list))
        else tuple(boundary.axis(a, x.ndim) for a in axis)
    )
    if isinstance(shift, (tuple, list)):
        amounts = tuple(boundary.integer(s, "shift") for s in shift)
    else:
        amounts = (boundary.integer(shift, "shift"),) * len(axes)
    total: dict[int, int] = {}
    for a, s in zip(axes, amounts, strict=True):
        total[a] = total.get(a, 0) + s
    moved = tuple((a, s % shape[a]) for a, s in sorted(total.items()) if shape[a] and s % shape[a])
    if not moved:
        return x
    return BCOO._wrap(_roll(_sparse(x), shifts=moved))


# --- broadcasting ---------------------------------------------------------------------------


@functools.partial(kernel, static_argnames="shape")
def _broadcast_to(value: Any, shape: tuple[int, ...]) -> Any:
    return coordinates.to_bcoo(coordinates.broadcast(coordinates.coo(value), shape))


def broadcasted(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` (xp sparse) broadcast to ``shape`` (checked); BCOO."""
    if x.shape == shape:
        return x
    return BCOO._wrap(_broadcast_to(_sparse(x), shape=shape))


@implements("broadcast_to")
def broadcast_to(x: Any, /, shape: tuple[int, ...]) -> Any:
    spec = abstract(dense.broadcast_to, x, shape)
    return broadcasted(x, tuple(spec.shape))


@implements("broadcast_arrays")
def broadcast_arrays(*arrays: Any) -> tuple[Any, ...]:
    specs = abstract(dense.broadcast_arrays, *arrays)
    shape = tuple(specs[0].shape) if specs else ()
    # host data (a Python scalar, a NumPy array) goes where the sparse arrays are, as it does in
    # the element-wise functions, rather than to the default device
    where = next(a.device for a in arrays if isinstance(a, SparseArray))
    on_device = where if isinstance(where, jax.Device) else None
    return tuple(
        broadcasted(a, shape)
        if isinstance(a, SparseArray)
        else dense.broadcast_to(
            a if isinstance(a, (Array, jax.Array)) else creation.asarray(a, device=on_device), shape
        )
        for a in arrays
    )


# --- joining and splitting ------------------------------------------------------------------


@functools.partial(kernel, static_argnames=("axis", "dtype", "shape", "kinds"))
def _concat(values: tuple[Any, ...], axis: int, dtype: Any, shape: tuple[int, ...], kinds: tuple[bool, ...]) -> Any:
    parts = []
    offset = 0
    itype = coordinates.index_dtype(shape)
    for value, is_sparse in zip(values, kinds, strict=True):
        c = coordinates.coo(value) if is_sparse else coordinates.from_dense(value)
        keep = coordinates.valid(c)
        idx = c.idx.astype(itype)
        if offset:
            idx = coordinates.with_column(idx, axis, idx[:, axis] + np.asarray(offset, itype))
        parts.append(coordinates.make(c.data.astype(dtype), idx, shape, keep, c.unique))
        offset += c.shape[axis]
    data = jnp.concatenate([p.data for p in parts])
    idx = jnp.concatenate([p.idx for p in parts])
    return coordinates.to_bcoo(coordinates.Coo(data, idx, shape, all(p.unique for p in parts)))


def _operands(arrays: Any) -> tuple[tuple[Any, ...], tuple[bool, ...]]:
    values = []
    kinds = []
    for i, a in enumerate(arrays):
        if isinstance(a, SparseArray):
            values.append(a._value)
            kinds.append(True)
        else:
            values.append(boundary.array(a, f"arrays[{i}]"))
            kinds.append(False)
    return tuple(values), tuple(kinds)


@implements("concat")
def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    spec = abstract(dense.concat, arrays, axis=axis)
    values, kinds = _operands(arrays)
    if axis is None:
        flat = []
        for v, k in zip(values, kinds, strict=True):
            size = math.prod(v.shape)
            flat.append(_reshape(v, shape=(size,)) if k else v.reshape(size))
        return BCOO._wrap(_concat(tuple(flat), axis=0, dtype=spec.dtype, shape=tuple(spec.shape), kinds=kinds))
    position = boundary.axis(axis, len(spec.shape))
    return BCOO._wrap(_concat(values, axis=position, dtype=spec.dtype, shape=tuple(spec.shape), kinds=kinds))


@implements("stack")
def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    spec = abstract(dense.stack, arrays, axis=axis)
    values, kinds = _operands(arrays)
    ndim = len(spec.shape)
    position = boundary.integer(axis, "axis") % ndim
    expanded = []
    for v, k in zip(values, kinds, strict=True):
        shape = (*v.shape[:position], 1, *v.shape[position:])
        expanded.append(ones_reshaped(v, shape=shape) if k else v.reshape(shape))
    return BCOO._wrap(_concat(tuple(expanded), axis=position, dtype=spec.dtype, shape=tuple(spec.shape), kinds=kinds))


@functools.partial(kernel, static_argnames="axis")
def _unstack(value: Any, axis: int) -> tuple[Any, ...]:
    c = coordinates.coo(value)
    keep = coordinates.valid(c)
    n = c.shape[axis]
    kept = [i for i in range(len(c.shape)) if i != axis]
    shape = tuple(c.shape[i] for i in kept)
    idx = c.idx[:, kept] if kept else jnp.zeros((coordinates.rows(c), 0), c.idx.dtype)
    return tuple(
        coordinates.to_bcoo(coordinates.make(c.data, idx, shape, keep & (c.idx[:, axis] == i), c.unique))
        for i in range(n)
    )


@implements("unstack")
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    abstract(dense.unstack, x, axis=axis)
    position = boundary.axis(axis, x.ndim)
    if x.shape[position] == 0:
        return ()
    return tuple(BCOO._wrap(v) for v in _unstack(_sparse(x), axis=position))


# --- tile and repeat ------------------------------------------------------------------------


@functools.partial(kernel, static_argnames=("shape", "repetitions"))
def _tile(value: Any, shape: tuple[int, ...], repetitions: tuple[int, ...]) -> Any:
    c = coordinates.coo(value)
    source = (1,) * (len(shape) - len(c.shape)) + c.shape
    reshaped = coordinates.ones_reshape(c, source)
    assert reshaped is not None
    c = reshaped
    keep = coordinates.valid(c)
    data, idx = c.data, c.idx.astype(coordinates.index_dtype(shape))
    for axis, r in enumerate(repetitions):
        if r == 1:
            continue
        n = int(idx.shape[0])
        copies = coordinates.repeat_rows(jnp.arange(r, dtype=idx.dtype), n)
        idx = jnp.tile(idx, (r, 1))
        idx = coordinates.with_column(idx, axis, idx[:, axis] + copies * np.asarray(source[axis], idx.dtype))
        data = jnp.tile(data, r)
        keep = jnp.tile(keep, r)
    return coordinates.to_bcoo(coordinates.make(data, idx, shape, keep, c.unique))


@implements("tile")
def tile(x: Any, repetitions: tuple[int, ...], /) -> Any:
    spec = abstract(dense.tile, x, repetitions)
    reps = boundary.shape(repetitions, "repetitions")
    ndim = len(spec.shape)
    reps = (1,) * (ndim - len(reps)) + reps
    return BCOO._wrap(_tile(_sparse(x), shape=tuple(spec.shape), repetitions=reps))


@functools.partial(kernel, static_argnames=("shape", "axis", "repeats"))
def _repeat(value: Any, shape: tuple[int, ...], axis: int | None, repeats: int) -> Any:
    c = coordinates.coo(value)
    if axis is None:
        c = coordinates.general_reshape(c, (math.prod(c.shape),))
        axis = 0
    keep = coordinates.valid(c)
    n = coordinates.rows(c)
    itype = coordinates.index_dtype(shape)
    idx = coordinates.repeat_rows(c.idx.astype(itype), repeats)
    offsets = jnp.tile(jnp.arange(repeats, dtype=itype), n)
    idx = coordinates.with_column(idx, axis, idx[:, axis] * np.asarray(repeats, itype) + offsets)
    data, keep = coordinates.repeat_rows(c.data, repeats), coordinates.repeat_rows(keep, repeats)
    return coordinates.to_bcoo(coordinates.make(data, idx, shape, keep, c.unique))


@functools.partial(kernel, static_argnames=("shape", "axis", "most"))
def _repeat_counts(value: Any, counts: Any, shape: tuple[int, ...], axis: int | None, most: int) -> Any:
    c = coordinates.coo(value)
    if axis is None:
        c = coordinates.general_reshape(c, (math.prod(c.shape),))
        axis = 0
    keep = coordinates.valid(c)
    n = coordinates.rows(c)
    itype = coordinates.index_dtype(shape)
    counts = jnp.broadcast_to(counts.astype(itype), (c.shape[axis],))
    starts = coordinates.running_sum(counts) - counts
    position = jnp.clip(c.idx[:, axis], 0, max(c.shape[axis] - 1, 0))
    mine = counts[position] if c.shape[axis] else jnp.zeros(n, itype)
    first = starts[position] if c.shape[axis] else jnp.zeros(n, itype)
    offsets = jnp.tile(jnp.arange(most, dtype=itype), n)
    repeated = functools.partial(coordinates.repeat_rows, times=most)
    idx = coordinates.with_column(repeated(c.idx.astype(itype)), axis, repeated(first) + offsets)
    keep = repeated(keep) & (offsets < repeated(mine))
    data = repeated(c.data)
    return coordinates.to_bcoo(coordinates.make(data, idx, shape, keep, c.unique))


@implements("repeat")
def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    if type(repeats) is int or isinstance(repeats, np.integer) or not is_array(repeats):
        spec = abstract(dense.repeat, x, repeats, axis=axis)
        position = None if axis is None else boundary.axis(axis, x.ndim)
        return BCOO._wrap(_repeat(_sparse(x), shape=tuple(spec.shape), axis=position, repeats=int(repeats)))
    if isinstance(repeats, SparseArray):  # counts are an argument, not a result: read their values
        repeats = repeats.todense()
    counts = repeats._value if isinstance(repeats, Array) else repeats
    if isinstance(counts, Tracer):
        abstract(dense.repeat, x, repeats, axis=axis)  # raises the dense error
    host = np.asarray(counts)
    spec = abstract(dense.repeat, x, Concrete(host), axis=axis)
    shape = tuple(spec.shape)
    position = None if axis is None else boundary.axis(axis, x.ndim)
    if host.size == 1:
        return BCOO._wrap(_repeat(_sparse(x), shape=shape, axis=position, repeats=int(host.reshape(()))))
    most = int(host.max()) if host.size else 0
    return BCOO._wrap(_repeat_counts(_sparse(x), jnp.asarray(host), shape=shape, axis=position, most=most))
