"""Indexing, selecting, searching and sorting sparse arrays.

- ``A[key]`` (:func:`getitem`, which ``SparseArray.__getitem__`` calls): keys are parsed and
  checked by the dense indexing (``xp._indexing.parse``), so the same keys are valid and the same
  errors come. Basic keys (integers, slices, ``...``, ``None``) select stored elements with
  static plans and dynamic starts (``A[i]`` in a loop compiles once). Integer arrays (and boolean
  masks, eagerly turned into integer arrays) follow NumPy's advanced indexing. A key that selects
  a single element gives a 0-d *dense* array (as a reduction over every axis does); every other
  result is a sparse BCOO array.
- ``take``, ``take_along_axis``: sparse results. An index that repeats picks its elements again.
  Eagerly, indices are bounds-checked (IndexError, as dense) and the result stores exactly what
  it selects; under a trace, out-of-range indices select nothing (in checked mode, ``xp.checked``,
  they raise the eager IndexError), and ``take`` (and advanced indexing) reserve ``len(indices)``
  times the longest match where the array is a constant, else times the stored elements (capped
  at the result's size). Rows of a BCSR, or of a BCOO with sorted indices, are gathered through
  row pointers; other selections sort the stored elements by the indexed axes and join the
  queries to them (``xp.sparse._joins``).
- ``where(condition, x1, x2)``: sparse where the result is zero wherever no sparse operand stores
  anything: ``x2`` sparse or a Python 0, and ``x1`` sparse, a Python 0, or (with a sparse
  ``condition``) anything (``where(C, x, 0)`` selects ``x`` on the pattern of ``C``). Other
  combinations would give dense results and raise.
- ``nonzero``: the indices of the stored non-zero elements (dense index arrays); eager only.
- ``sort``: sparse (each line keeps its stored elements: the negative ones first, the zeros, then
  the positive ones and NaNs). ``argsort`` raises: sorting indices are a dense permutation.
- ``unique_values``, ``unique_counts``: dense (the distinct values, with 0 if some element is
  implicit); eager only. ``unique_inverse`` and ``unique_all`` raise (the inverse indices have
  the shape of ``x`` and are dense).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _indexing as dense_indexing
from xp import _indexing_functions as dense_take
from xp import _searching as dense_searching
from xp import _set as dense_set
from xp import _sorting as dense_sorting
from xp import _utility as utility
from xp._array import Array, wrap
from xp._data_type import astype
from xp._elementwise import subtract
from xp._errors import DataDependentShapeError, fail
from xp._jit import Tracer, kernel
from xp._manipulation import concat
from xp._routing import dense_result, implements
from xp.sparse import _coordinates as coordinates
from xp.sparse import _joins as joins
from xp.sparse._array import BCOO, SparseArray
from xp.sparse._dense_checks import abstract
from xp.sparse._manipulation import ones_reshaped

# --- basic indexing -------------------------------------------------------------------------


@functools.partial(kernel, static_argnames="plan")
def _basic(value: Any, starts: Any, plan: tuple[Any, ...]) -> Any:
    spans, steps, reversed_axes, out_shape = plan
    c = coordinates.coo(value)
    keep = coordinates.valid(c)
    counts = tuple(-(-span // step) for span, step in zip(spans, steps, strict=True))
    cols = []
    for a in range(len(c.shape)):
        rel = c.idx[:, a] if starts is None else c.idx[:, a] - starts[a].astype(c.idx.dtype)
        step = np.asarray(steps[a], c.idx.dtype)
        keep &= (rel >= 0) & (rel < spans[a]) & (rel % step == 0)
        j = rel // step
        cols.append(np.asarray(counts[a] - 1, c.idx.dtype) - j if a in reversed_axes else j)
    idx = jnp.stack(cols, axis=1) if cols else c.idx
    window = coordinates.make(c.data, idx, counts, keep)
    if not out_shape:
        return coordinates.seg_sum(window.data, jnp.zeros(coordinates.rows(window), dt.int32), 1).reshape(())
    out = coordinates.ones_reshape(coordinates.Coo(window.data, window.idx, counts, c.unique), out_shape)
    assert out is not None
    return coordinates.to_bcoo(out, sorted=coordinates.is_flat(value) and value.indices_sorted and not reversed_axes)


@kernel
def _element(value: Any, point: Any) -> Any:
    """The element at ``point`` (all coordinates given): a small kernel, quick to compile."""
    if coordinates.is_flat(value):
        match = jnp.all(value.indices == point.astype(value.indices.dtype), axis=1)
        data = value.data
    else:
        c = coordinates.coo(value)
        match = jnp.all(c.idx == point.astype(c.idx.dtype), axis=1)
        data = c.data
    if data.dtype == dt.bool:
        return jnp.any(match & data)
    return jnp.sum(jnp.where(match, data, jnp.zeros((), data.dtype)), dtype=data.dtype)


def _basic_get(x: Any, index: dense_indexing.BasicIndex) -> Any:
    if not index.shape and x.ndim and index.plan is not None and not any(index.plan[1][a] != 1 for a in range(x.ndim)):
        point = np.zeros(x.ndim, np.int32) if index.starts is None else index.starts
        return wrap(_element(x._value, point))
    if index.plan is None:
        return wrap(_basic(x._value, None, plan=((), (), (), ()))) if not index.shape else x
    out = _basic(x._value, index.starts, plan=index.plan)
    return wrap(out) if not index.shape else BCOO._wrap(out)


def getitem(x: Any, key: Any) -> Any:
    """``x[key]`` for a sparse array ``x`` (see the module); ``SparseArray.__getitem__`` names
    the errors."""
    # a sparse index array (what xp.sparse.asarray makes) is read as its values: an index is
    # not a result, so this densifies nothing the caller gets back
    if isinstance(key, SparseArray):
        key = key.todense()
    elif isinstance(key, tuple) and any(isinstance(k, SparseArray) for k in key):
        key = tuple(k.todense() if isinstance(k, SparseArray) else k for k in key)
    index = dense_indexing.parse(key, tuple(x.shape), f"xp.sparse.{type(x).__name__}.__getitem__")
    if isinstance(index, dense_indexing.BasicIndex):
        if index.plan is None and index.shape:
            return x
        return _basic_get(x, index)
    # (a sparse array's shape is static pytree data, never symbolic: no SymbolicBasicIndex here)
    assert isinstance(index, dense_indexing.AdvancedIndex)
    return _advanced(x, index)


def _normalized(index: Any, n: int) -> Any:
    """Indices with negative ones counted from the end (signed, wide enough)."""
    wide = dt.int64 if index.dtype.itemsize == 8 and dt.x64_enabled() else dt.int32
    if index.dtype.kind == "u":
        limit = np.asarray(min(n, np.iinfo(wide).max), index.dtype)
        return jnp.minimum(index, limit).astype(wide)
    index = index.astype(wide)
    return jnp.where(index < 0, index + np.asarray(n, wide), index)


_normalize = jax.jit(_normalized, static_argnums=1)


# --- advanced indexing ----------------------------------------------------------------------


def _advanced(x: Any, index: dense_indexing.AdvancedIndex) -> Any:
    index._resolve()
    structure, arrays = index.structure, index.arrays
    assert structure is not None
    if structure and type(structure[0]) is tuple and structure[0][0] == "select":
        if structure[0][1]:
            return BCOO._wrap(ones_reshaped(x._value, shape=(1, *x.shape)))
        return BCOO._wrap(_empty(x._value, shape=(0, *x.shape)))
    ndim = x.ndim
    consumed = sum(1 for k in structure if k is not None and k is not Ellipsis)
    basic: list[Any] = []
    advanced_axes: list[int] = []  # axes of the basic result that the advanced indices index
    advanced_keys: list[Any] = []
    entries: list[int] = []  # positions in the key of the advanced indices
    axis = 0  # axis of x
    out_axis = 0  # axis of the basic result
    for position, k in enumerate(structure):
        if k is Ellipsis:
            basic.append(Ellipsis)
            span = ndim - consumed
            axis += span
            out_axis += span
        elif k is None:
            basic.append(None)
            out_axis += 1
        elif type(k) is tuple and k[0] == "slice":
            basic.append(slice(*k[1:]))
            axis += 1
            out_axis += 1
        else:  # an int or an integer array: advanced
            basic.append(slice(None))
            n = x.shape[axis]
            key = jnp.asarray(k, dt.int32) if type(k) is int else arrays[k[1]]
            advanced_keys.append(_normalize(key, n))
            advanced_axes.append(out_axis)
            entries.append(position)
            axis += 1
            out_axis += 1
    y = getitem(x, tuple(basic))
    broadcast = jnp.broadcast_arrays(*advanced_keys)
    q_shape = tuple(broadcast[0].shape)
    queries = jnp.stack([k.reshape(-1) for k in broadcast], axis=1)
    adjacent = entries == list(range(entries[0], entries[0] + len(entries)))
    place = advanced_axes[0] if adjacent else 0
    return joins.join(y, queries, tuple(advanced_axes), q_shape, place)


@functools.partial(kernel, static_argnames="shape")
def _empty(value: Any, shape: tuple[int, ...]) -> Any:
    c = coordinates.Coo(
        jnp.zeros(0, value.dtype), jnp.zeros((0, len(shape)), coordinates.index_dtype(shape)), shape, True
    )
    return coordinates.to_bcoo(c, sorted=True)


# --- take, take_along_axis ------------------------------------------------------------------


@implements("take")
def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    if isinstance(indices, SparseArray):
        dense_result("the indices are a sparse array")
    abstract(dense_take.take, x, indices, axis=axis)
    position = 0 if axis is None else boundary.axis(axis, x.ndim)
    n = x.shape[position]
    dense_take.check_constant(indices, n, position)
    index = boundary.array(indices, "indices")
    dense_take.check_indices(index, n, position, "xp.take")
    queries = _normalize(index, n).reshape(-1, 1)
    return joins.join(x, queries, (position,), (int(index.shape[0]),), position)


@functools.partial(kernel, static_argnames=("axis", "shape", "x_shape"))
def _along_queries(index: Any, axis: int, shape: tuple[int, ...], x_shape: tuple[int, ...]) -> Any:
    n = x_shape[axis]
    index = jnp.broadcast_to(_normalized(index, n), shape)
    cols = []
    for a, size in enumerate(x_shape):
        if a == axis:
            cols.append(index.reshape(-1))
        elif size == 1:
            cols.append(jnp.zeros(math.prod(shape), index.dtype))
        else:
            cols.append(lax.broadcasted_iota(index.dtype, shape, a).reshape(-1))
    return jnp.stack(cols, axis=1)


@implements("take_along_axis")
def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    if isinstance(indices, SparseArray):
        dense_result("the indices are a sparse array")
    spec = abstract(dense_take.take_along_axis, x, indices, axis=axis)
    position = boundary.axis(axis, x.ndim)
    dense_take.check_constant(indices, x.shape[position], position)
    index = boundary.array(indices, "indices")
    dense_take.check_indices(index, x.shape[position], position, "xp.take_along_axis")
    shape = tuple(spec.shape)
    queries = _along_queries(index, axis=position, shape=shape, x_shape=tuple(x.shape))
    value = x._value
    nse = math.prod(shape)
    out = joins.join_stored(value, queries, key_axes=tuple(range(x.ndim)), q_shape=shape, place=0, nse=nse)
    return BCOO._wrap(out)


# --- where ----------------------------------------------------------------------------------


def _is_zero_scalar(v: Any) -> bool:
    return type(v) in boundary.PY_SCALARS and v == 0


@functools.partial(kernel, static_argnames=("kinds", "contributes", "shape", "dtype"))
def _where(operands: tuple[Any, ...], kinds: tuple[str, ...], contributes: tuple[bool, ...],
           shape: tuple[int, ...], dtype: Any) -> Any:  # fmt: skip
    sparse = [i for i, k in enumerate(kinds) if k == "s"]
    parts = [coordinates.broadcast(coordinates.coo(operands[i]), shape) for i in sparse]
    parts = [p if p.unique else coordinates.coalesce(p) for p in parts]
    idx, values, present, first = coordinates.merge(parts)
    total = int(idx.shape[0])
    keep = jnp.zeros(total, dt.bool)
    for i, p in zip(sparse, present, strict=True):
        if contributes[i]:
            keep = keep | p
    point = tuple(jnp.clip(idx[:, j], 0, max(n - 1, 0)) for j, n in enumerate(shape))
    args = []
    for i, (v, k) in enumerate(zip(operands, kinds, strict=True)):
        if k == "s":
            args.append(values[sparse.index(i)])
        elif v.ndim == 0:
            args.append(jnp.broadcast_to(v, (total,)))
        elif math.prod(shape) == 0:  # nothing stored, nothing to gather
            args.append(jnp.zeros((total,), v.dtype))
        else:
            args.append(jnp.broadcast_to(v, shape)[point])
    out = dense_searching._where(*args).astype(dtype)
    return coordinates.to_bcoo(
        coordinates.compacted(coordinates.make(out, idx, shape, first & keep, True)), sorted=True
    )


@implements("where")
def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    spec = abstract(dense_searching.where, condition, x1, x2)
    sparse = [isinstance(a, SparseArray) for a in (condition, x1, x2)]
    if sparse[1]:
        first = True
    elif _is_zero_scalar(x1):
        first = False
    elif sparse[0]:
        first = False  # the condition's pattern bounds x1's part
    else:
        dense_result("where a dense condition is True the result is x1, which is not sparse, so the "
               "result is dense")  # fmt: skip
    if not (sparse[2] or _is_zero_scalar(x2)):
        dense_result("where condition is False (which it is at its structural zeros) the result is "
               "x2, which is neither sparse nor 0, so the result is dense")  # fmt: skip
    contributes = (sparse[0] and not sparse[1] and not _is_zero_scalar(x1), first, sparse[2])
    dtype = spec.dtype
    operands = []
    kinds = []
    for a, name, is_sparse in zip((condition, x1, x2), ("condition", "x1", "x2"), sparse, strict=True):
        if is_sparse:
            operands.append(a._value)
            kinds.append("s")
        elif type(a) in boundary.PY_SCALARS:
            operands.append(jnp.asarray(a, dtype))
            kinds.append("d")
        else:
            operands.append(boundary.array(a, name))
            kinds.append("d")
    out = _where(tuple(operands), kinds=tuple(kinds), contributes=contributes, shape=tuple(spec.shape), dtype=dtype)
    return BCOO._wrap(out)


# --- nonzero --------------------------------------------------------------------------------


@kernel
def _stored_nonzero(value: Any) -> tuple[Any, Any]:
    c = coordinates.coalesce(coordinates.coo(value))
    return c.idx, utility.truth(c.data) & coordinates.valid(c)


@implements("nonzero")
def nonzero(x: Any, /) -> tuple[Array, ...]:
    if x.ndim == 0:
        fail(ValueError, "x must have at least one dimension, got a 0-d array "
               "(reshape it to (1,) first, or test the scalar with bool(x))")  # fmt: skip
    if isinstance(x._value.data, Tracer):
        fail(DataDependentShapeError, "the number of non-zero elements depends on the values of x, so the "
               "result's shape cannot be known while tracing (jax.jit, jax.vmap); call xp.nonzero outside the "
               "transformation, or keep the shape static with a mask: xp.where(x != 0, x, fill)")  # fmt: skip
    idx, keep = _stored_nonzero(x._value)
    host = np.asarray(idx)[np.asarray(keep)].astype(dt.default_int(), copy=False)
    return tuple(wrap(v) for v in dense_searching.put_like([host[:, j] for j in range(x.ndim)], x._value.data))


# --- sort -----------------------------------------------------------------------------------


@functools.partial(kernel, static_argnames=("axis", "descending"))
def _sort(value: Any, axis: int, descending: bool) -> Any:
    c = coordinates.coalesce(coordinates.coo(value))
    shape = c.shape
    n = coordinates.rows(c)
    ok = coordinates.valid(c)
    length = np.asarray(shape[axis], c.idx.dtype)
    others = [a for a in range(len(shape)) if a != axis]
    # stored elements by line, then by value (padding rows, whose coordinates are the sizes, last)
    keys = [c.idx[:, a] for a in others]
    iota = lax.iota(dt.int32, n)
    *_, x, pad, perm = lax.sort((*keys, jnp.where(ok, c.data, 0), ~ok, iota), num_keys=len(keys) + 2, is_stable=True)
    del pad
    line_idx = c.idx[perm][:, others] if others else jnp.zeros((n, 0), c.idx.dtype)
    ok = ok[perm]
    seg, _ = coordinates.runs(line_idx, tuple(shape[a] for a in others))
    first = jax.ops.segment_min(iota, seg, num_segments=n)
    rank = (iota - first[seg]).astype(c.idx.dtype)
    count = jax.ops.segment_sum(ok.astype(c.idx.dtype), seg, num_segments=n)[seg]
    negative = jax.ops.segment_sum((ok & (x < 0)).astype(c.idx.dtype), seg, num_segments=n)[seg]
    position: Any = jnp.where(rank < negative, rank, length - (count - rank))
    if descending:
        position = length - 1 - position
    cols = [position if a == axis else line_idx[:, others.index(a)] for a in range(len(shape))]
    return coordinates.to_bcoo(coordinates.make(x, coordinates.columns(cols, n, c.idx.dtype), shape, ok, True))


@implements("sort")
def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    abstract(dense_sorting.sort, x, axis=axis, descending=descending, stable=stable)
    position = boundary.axis(axis, x.ndim)
    return BCOO._wrap(_sort(x._value, axis=position, descending=boundary.boolean(descending, "descending")))


@implements("argsort")
def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    abstract(dense_sorting.argsort, x, axis=axis, descending=descending, stable=stable)
    dense_result("the indices that sort an array are a permutation, which is dense")


# --- unique values --------------------------------------------------------------------------


@kernel
def _stored_values(value: Any) -> tuple[Any, Any]:
    c = coordinates.coalesce(coordinates.coo(value))
    return c.data, coordinates.valid(c)


def _values_and_zeros(x: Any, name: str) -> tuple[Array, int]:
    """The stored values (summed), plus one 0 if some element is implicit, and how many are."""
    if isinstance(x._value.data, Tracer):
        getattr(dense_set, name)(wrap(x._value.data))  # raises the dense DataDependentShapeError
    data, keep = _stored_values(x._value)
    host = np.asarray(data)[np.asarray(keep)]
    implicit = math.prod(x.shape) - host.size
    if implicit:
        host = np.concatenate([host, np.zeros(1, host.dtype)])
    return wrap(dense_searching.put_like([host], x._value.data)[0]), implicit


@implements("unique_values")
def unique_values(x: Any, /) -> Any:
    values, _ = _values_and_zeros(x, "unique_values")
    return dense_set.unique_values(values)


@implements("unique_counts")
def unique_counts(x: Any, /) -> Any:
    values, implicit = _values_and_zeros(x, "unique_counts")
    out = dense_set.unique_counts(values)
    if implicit > 1:
        counts = np.asarray(out.counts._value).copy()
        counts[np.asarray(out.values._value) == 0] += implicit - 1
        out = dense_set.UniqueCountsResult(out.values, wrap(dense_searching.put_like([counts], x._value.data)[0]))
    return out


def _inverse(name: str) -> Any:
    def refuse(x: Any, /) -> Any:
        dense_result("the inverse indices have the shape of x and are dense")

    refuse.__name__ = name
    return implements(name)(refuse)


unique_inverse = _inverse("unique_inverse")
unique_all = _inverse("unique_all")


# --- diff -----------------------------------------------------------------------------------


def _edge(edge: Any, x: Any, axis: int, dtype: Any) -> Any:
    """``prepend``/``append``: a sparse array stays sparse; a dense one or a scalar is broadcast
    to one element along ``axis`` where it is 0-d, as densely (its elements are then stored)."""
    if isinstance(edge, SparseArray):
        return edge
    shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
    if type(edge) in boundary.PY_SCALARS:
        return wrap(jnp.full(shape, edge, dt.scalar_dtype(np.dtype(x._value.dtype), type(edge))))
    value = boundary.array(edge, "edge")
    return wrap(jnp.broadcast_to(value, shape)) if value.ndim == 0 else wrap(value)


@implements("diff")
def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    """Forward differences along ``axis``: sparse (a difference is 0 where both elements are).

    Dense ``prepend``/``append`` are joined on with their elements stored. Built from xp's public
    functions (``concat``, ``astype``, ``subtract``), which route the sparse operands."""
    spec = abstract(utility.diff, x, axis=axis, n=n, prepend=prepend, append=append)
    position = boundary.axis(axis, x.ndim)
    parts = [x]
    if prepend is not None:
        parts.insert(0, _edge(prepend, x, position, spec.dtype))
    if append is not None:
        parts.append(_edge(append, x, position, spec.dtype))
    y = concat(parts, axis=position) if len(parts) > 1 else x
    y = astype(y, dt.PUBLIC[np.dtype(spec.dtype)], copy=False)
    before = (slice(None),) * position
    for _ in range(boundary.non_negative(n, "n")):
        if y.shape[position] == 0:
            break
        y = subtract(y[(*before, slice(1, None))], y[(*before, slice(None, -1))])
    return y
