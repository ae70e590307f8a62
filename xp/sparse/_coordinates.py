"""The coordinate form that the sparse kernels share, and its toolkit.

Every structural kernel (elementwise operations on two operands, reductions, reshapes, slices,
...) works on one form, :class:`Coo`: ``data`` of shape ``(n,)`` and ``idx`` of shape
``(n, ndim)``, one row per stored element, with every dimension a sparse one. :func:`coo` makes
it from any BCOO (batch and dense dimensions become coordinate columns) or BCSR array, inside
the kernel. Rows that store nothing (JAX's padding) are *canonical*: their coordinates are the
dimension sizes (out of range, so they sort last) and their data is 0. Entries with equal
coordinates add up (JAX's convention; for ``bool`` data they are OR-ed). :func:`group` sorts
rows by their coordinates (a multi-key ``lax.sort``: no linearised index, so no overflow) and
numbers the distinct ones, which gives sums of duplicates, unions and intersections of
patterns, and per-line reductions as segment operations. Numbers of stored elements are static
(upper bounds, padded): every kernel runs under ``jax.jit`` and is differentiable with respect to
the stored values.

Results of structural operations are BCOO arrays in the plain layout (no batch or dense
dimensions); operations on the stored values alone (``negative(A)``, ``A * 2``, ``astype``)
keep the format and layout of their input (:func:`same_format`).

The functions here take and return JAX values (traced inside the kernels of the chapters that
use them: ``_elementwise``, ``_indexing``, ``_manipulation``, ``_reductions``), never xp's array
types.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import sparse as jsparse

from xp import _dtypes as dt
from xp._errors import fail
from xp._jit import kernel

# --- the coordinate form --------------------------------------------------------------------


class Coo(NamedTuple):
    """Stored elements as rows: ``data`` (n,), ``idx`` (n, ndim); padding rows canonical.

    ``unique`` (static): no two valid rows have the same coordinates.
    """

    data: Any
    idx: Any
    shape: tuple[int, ...]
    unique: bool = False


_INT32_MAX = int(np.iinfo(np.int32).max)


def index_dtype(shape: tuple[int, ...]) -> np.dtype:
    """int32, unless a size (which padding rows hold) does not fit in it."""
    if not shape or max(shape) < _INT32_MAX:
        return dt.int32
    if not dt.x64_enabled():
        fail(
            ValueError,
            f"a sparse array of shape {shape} needs 64-bit indices: {dt.unavailable_message(dt.int64, narrowable=False)}",
        )
    return dt.int64


def _sizes(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return np.asarray(shape, dtype=dtype).reshape(1, len(shape))


def padded_nse(n: int) -> int:
    """A number of stored elements for a result whose exact count ``n`` is known only when the
    call runs (rows taken eagerly, on an accelerator): ``n`` rounded up to one of eight sizes per
    power of two (``n`` itself up to 16), the rest padding. A kernel compiles once for each number
    of stored elements it makes; a loop over minibatches of rows has a new count every time (taking
    2000 rows of a 20000 x 20000 matrix with 400k entries compiled for 0.6-2.4 s on each new
    batch), while their padded counts are a few (less than an eighth of them padding)."""
    if n <= 16:
        return n
    shift = n.bit_length() - 4  # (n >> shift: 8 to 15, the 3 bits after the leading one kept)
    return -(-n >> shift) << shift


def in_range(idx: Any, shape: tuple[int, ...]) -> Any:
    """Which rows of ``idx`` are elements of an array of ``shape`` (the others are padding)."""
    if idx.shape[1] == 0:
        return jnp.ones(idx.shape[0], dt.bool)
    return jnp.all((idx >= 0) & (idx < _sizes(shape, idx.dtype)), axis=1)


def make(data: Any, idx: Any, shape: tuple[int, ...], keep: Any = None, unique: bool = False) -> Coo:
    """The canonical form: rows not in ``keep`` (default: those out of range) become padding."""
    if keep is None:
        keep = in_range(idx, shape)
    data = jnp.where(keep, data, jnp.zeros((), data.dtype))
    if not shape:  # one element: one row (padding cannot be told from it by coordinates)
        if unique and data.shape[0]:
            # at most one row is kept: select it (XLA's CPU reductions flush subnormals to zero)
            total = jnp.where(jnp.any(keep), data[jnp.argmax(keep)], jnp.zeros((), data.dtype))
        else:
            total = _total(data)
        return Coo(total.reshape(1), jnp.zeros((1, 0), idx.dtype), shape, True)
    idx = jnp.where(keep[:, None], idx, _sizes(shape, idx.dtype))
    return Coo(data, idx, shape, unique)


def valid(c: Coo) -> Any:
    return in_range(c.idx, c.shape)


def rows(c: Coo) -> int:
    return int(c.idx.shape[0])


def columns(cols: list[Any], n: int, dtype: Any) -> Any:
    """Coordinate columns (each (n,)) as an (n, len(cols)) array."""
    return jnp.stack(cols, axis=1) if cols else jnp.zeros((n, 0), dtype)


def with_column(idx: Any, j: int, col: Any) -> Any:
    """``idx`` with column ``j`` replaced (no scatter: quick to compile)."""
    return jnp.concatenate([idx[:, :j], col.astype(idx.dtype)[:, None], idx[:, j + 1 :]], axis=1)


def coo(value: Any) -> Coo:
    """The coordinate form of a ``jax.experimental.sparse`` BCOO or BCSR array (traced code)."""
    shape = tuple(value.shape)
    itype = index_dtype(shape)
    if isinstance(value, jsparse.BCSR):
        data, indices = _bcsr_arrays(value, itype)
    else:
        data, indices = value.data, value.indices.astype(itype)
    n_batch = indices.ndim - 2
    nse, n_sparse = int(indices.shape[-2]), int(indices.shape[-1])
    batch, dense_shape = shape[:n_batch], shape[n_batch + n_sparse :]
    full = (*batch, nse, *dense_shape)
    data = jnp.broadcast_to(data, full)
    indices = jnp.broadcast_to(indices, (*batch, nse, n_sparse))
    count = math.prod(batch) * nse
    keep = in_range(indices.reshape(count, n_sparse), shape[n_batch : n_batch + n_sparse]).reshape(*batch, nse)
    leading = tuple(range(n_batch + 1))
    cols = [lax.broadcasted_iota(itype, full, i) for i in range(n_batch)]
    cols += [lax.broadcast_in_dim(indices[..., j], full, leading) for j in range(n_sparse)]
    cols += [lax.broadcasted_iota(itype, full, n_batch + 1 + k) for k in range(len(dense_shape))]
    n = math.prod(full)
    idx = columns([c.reshape(n) for c in cols], n, itype)
    keep = lax.broadcast_in_dim(keep, full, leading).reshape(n)
    unique = bool(value.unique_indices) and (n_sparse > 0 or nse <= 1)  # else a batch holds several rows
    return make(data.reshape(n), idx, shape, keep, unique)


def _bcsr_arrays(value: Any, itype: Any) -> tuple[Any, Any]:
    """BCSR ``(data, indices, indptr)`` as BCOO ``(data, indices)`` with (row, column) pairs."""
    cols = value.indices.astype(itype)
    indptr = value.indptr.astype(itype)
    n_batch = cols.ndim - 1
    nse = int(cols.shape[-1])
    cols = jnp.broadcast_to(cols, (*value.shape[:n_batch], nse))
    indptr = jnp.broadcast_to(indptr, (*value.shape[:n_batch], indptr.shape[-1]))

    def rows_of(pointers: Any) -> Any:
        positions = jnp.arange(nse, dtype=itype)
        return (jnp.searchsorted(pointers, positions, side="right") - 1).astype(itype)

    for _ in range(n_batch):
        rows_of = jax.vmap(rows_of)
    return value.data, jnp.stack([rows_of(indptr), cols], axis=-1)


def stored_rows(value: Any) -> int:
    """The number of rows of ``coo(value)`` (stored elements of every batch, dense blocks expanded)."""
    n_batch = value.indices.ndim - (1 if isinstance(value, jsparse.BCSR) else 2)
    n_sparse = 2 if isinstance(value, jsparse.BCSR) else int(value.indices.shape[-1])
    shape = tuple(value.shape)
    return math.prod(shape[:n_batch]) * int(value.nse) * math.prod(shape[n_batch + n_sparse :])


def is_flat(value: Any) -> bool:
    """Whether ``value`` is a BCOO array in the plain layout (rows keep their order in :func:`coo`)."""
    return isinstance(value, jsparse.BCOO) and value.n_batch == 0 and value.n_dense == 0


def to_bcoo(c: Coo, *, sorted: bool = False) -> Any:
    return jsparse.BCOO((c.data, c.idx), shape=c.shape, indices_sorted=sorted, unique_indices=c.unique)


# --- sorting and runs of equal coordinates --------------------------------------------------


def sort_rows(idx: Any, *payloads: Any, tie: Any = None) -> tuple[Any, tuple[Any, ...]]:
    """Rows in lexicographic order of their coordinates (then of ``tie``), ``payloads`` moved
    along. A multi-key ``lax.sort``: no linearised index, so no overflow. Padding rows (whose
    coordinates are the sizes) come last."""
    n, k = int(idx.shape[0]), int(idx.shape[1])
    keys = [idx[:, j] for j in range(k)] + ([] if tie is None else [tie])
    if not keys or n <= 1:
        return idx, payloads
    out = lax.sort((*keys, *payloads), num_keys=len(keys), is_stable=True)
    return columns(list(out[:k]), n, idx.dtype), tuple(out[len(keys) :])


def same_as_next(idx: Any, offset: int = 1) -> Any:
    """Whether row ``i + offset`` has row ``i``'s coordinates (False past the end)."""
    n = int(idx.shape[0])
    if offset >= n:
        return jnp.zeros(n, dt.bool)
    equal = jnp.all(idx[offset:] == idx[:-offset], axis=1)
    return jnp.concatenate([equal, jnp.zeros(offset, dt.bool)])


def firsts(idx: Any) -> Any:
    """Of rows sorted by coordinates: whether each is the first of its run of equal ones."""
    n = int(idx.shape[0])
    if n == 0:
        return jnp.zeros(0, dt.bool)
    return jnp.concatenate([jnp.ones(1, dt.bool), ~same_as_next(idx)[:-1]])


def _shifted(x: Any, offset: int) -> Any:
    """Row ``i`` gets row ``i + offset`` (zeros past the end)."""
    n = int(x.shape[0])
    if offset >= n:
        return jnp.zeros_like(x)
    return jnp.concatenate([x[offset:], jnp.zeros(offset, x.dtype)])


def add(x: Any, y: Any) -> Any:
    """Sum, or OR for booleans (how duplicate entries combine)."""
    return x | y if x.dtype == dt.bool else x + y


def seg_sum(x: Any, seg: Any, n: int, sorted: bool = False) -> Any:
    """Sums of ``x`` by segment (OR for booleans)."""
    if x.dtype == dt.bool:
        return jax.ops.segment_max(x, seg, num_segments=n, indices_are_sorted=sorted)
    return jax.ops.segment_sum(x, seg, num_segments=n, indices_are_sorted=sorted)


def running_sum(x: Any) -> Any:
    """The inclusive running sum of a 1-d integer array, in its dtype: ``cumsum``, but on CPU a
    parallel prefix sum (``associative_scan``). XLA runs ``cumsum`` as a reduce-window that it
    rewrites into blocks: on CPU nearly three times the scan's time for 400k entries, and where the
    input is a constant of a jitted function (a sparse array closed over) XLA folds it at compile
    time for seconds, twenty times the scan's folding. Other platforms keep ``cumsum`` (one fused kernel on a GPU,
    where the scan's 19 levels would be as many launches)."""
    if x.shape[0] == 0:
        return x
    return jax.lax.platform_dependent(
        x, cpu=lambda v: jax.lax.associative_scan(jnp.add, v), default=lambda v: jnp.cumsum(v, dtype=v.dtype)
    )


def owners(ends: Any, n: int, dtype: Any = None) -> Any:
    """Of ``n`` slots laid out in runs that end at ``ends`` (running totals, nondecreasing): each
    slot's run, ``searchsorted(ends, slots, side="right")`` (``len(ends)`` past the last), in
    ``dtype`` (default: ``ends``'s). Counted as a running sum of the ends' marks, not searched per
    slot, which took about twice as long (taking 2000 rows, 82k slots, of a 20000 x 20000 matrix).
    The rows of a CSR's entries are the owners of its ``indptr[1:]``."""
    dtype = ends.dtype if dtype is None else dtype
    marks = jnp.zeros(n, dtype).at[ends].add(jnp.ones((), dtype), mode="drop")
    return running_sum(marks)


def run_numbers(first: Any) -> Any:
    """For rows sorted in runs (``first`` marks the first row of each): each row's run number."""
    return running_sum(first.astype(dt.int32)) - 1


def run_totals(x: Any, first: Any) -> Any:
    """For rows sorted in runs: each row's run total of ``x`` (a segment sum, then a gather)."""
    n = int(x.shape[0])
    if n == 0:
        return x
    number = run_numbers(first)
    return seg_sum(x, number, n, sorted=True)[number]


def coalesce(c: Coo) -> Coo:
    """Duplicates summed; rows sorted by coordinates, padding last; as many rows; unique."""
    if c.unique or not c.shape:
        idx, (data,) = sort_rows(c.idx, c.data)
        return Coo(data, idx, c.shape, True)
    idx, (data, ok) = sort_rows(c.idx, c.data, valid(c))
    first = firsts(idx)
    merged = make(run_totals(data, first), idx, c.shape, first & ok)
    idx, (data,) = sort_rows(merged.idx, merged.data)
    return Coo(data, idx, c.shape, True)


def _total(data: Any) -> Any:
    return jnp.any(data) if data.dtype == dt.bool else jnp.sum(data, dtype=data.dtype)


def merge(parts: list[Coo]) -> tuple[Any, list[Any], list[Any], Any]:
    """The union of the patterns of ``parts`` (of one shape, each with unique rows).

    Returns rows sorted by coordinates, each part's value and presence at each row (meaningful
    at the first row of each run), and which rows are firsts. One sort; each run has at most one
    row per part (they come in the order of ``parts``), so run totals are shifts, not scatters.
    """
    shape = parts[0].shape
    sizes = [rows(p) for p in parts]
    total = sum(sizes)
    idx = jnp.concatenate([p.idx for p in parts])
    values, presences = [], []
    if not shape:  # one element: every row is in the first run (no coordinates to sort)
        for p in parts:  # one row each (unique): take it, no sum (XLA's CPU sums flush subnormals)
            one = rows(p) == 1
            value = p.data[0] if one else _total(p.data) if rows(p) else jnp.zeros((), p.data.dtype)
            # the compiler must not see an empty part's zero as a constant: it would fold
            # -0.0 + 0.0 into -0.0
            values.append(jnp.broadcast_to(lax.optimization_barrier(value), (total,)))
            presences.append(jnp.broadcast_to(valid(p)[0] if one else jnp.any(valid(p)), (total,)))
        return idx, values, presences, jnp.arange(total) == 0
    tag = jnp.concatenate([jnp.full(s, i, dt.int8) for i, s in enumerate(sizes)])
    payloads = []
    for i, p in enumerate(parts):
        before, after = sum(sizes[:i]), sum(sizes[i + 1 :])
        # each row's mark: 0 absent, 1 present, 2 present and a NaN whose sign bit is set (XLA:TPU's
        # concatenation of floating arrays clears that bit, which copysign reads; an integer's it keeps)
        mark = valid(p).astype(dt.int8) * (1 + _negative_nan(p.data).astype(dt.int8))
        for column in (p.data, mark):
            payloads.append(jnp.concatenate([jnp.zeros(before, column.dtype), column, jnp.zeros(after, column.dtype)]))
    idx, moved = sort_rows(idx, *payloads, tie=tag)
    first = firsts(idx)
    nexts = [same_as_next(idx, o) for o in range(1, len(parts))]
    for x, mark in zip(moved[0::2], moved[1::2], strict=True):
        # a part's row in the run, moved to its first row: a select, not a sum with the other
        # parts' zero payloads (which would turn -0.0 into +0.0)
        value, marked = x, mark
        for o, same in enumerate(nexts, start=1):
            there = same & (_shifted(mark, o) > 0)
            value = jnp.where(there, _shifted(x, o), value)
            marked = jnp.where(there, _shifted(mark, o), marked)
        values.append(_with_nan_signs(value, marked == 2))
        presences.append(marked > 0)
    return idx, values, presences, first


def _negative_nan(x: Any) -> Any:
    """Where ``x`` (real floating) is a NaN whose sign bit is set (False for other dtypes)."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.zeros(x.shape, dt.bool)
    return jnp.isnan(x) & jnp.signbit(x)


def _with_nan_signs(x: Any, negative_nan: Any) -> Any:
    """``x`` with the sign bit set where ``negative_nan`` (a NaN there: the select leaves the
    derivative elsewhere as it is)."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    bits = lax.bitcast_convert_type(x, np.dtype(f"uint{8 * x.dtype.itemsize}"))
    sign = np.array(1 << (8 * x.dtype.itemsize - 1), bits.dtype)
    return jnp.where(negative_nan, lax.bitcast_convert_type(bits | sign, x.dtype), x)


def compacted(c: Coo, n: int | None = None) -> Coo:
    """Valid rows first, in coordinate order (padding last), cut or padded to ``n`` rows."""
    if not c.shape:
        return c
    idx, (data,) = sort_rows(c.idx, c.data)
    m = rows(c)
    if n is not None and n < m:
        idx, data = idx[:n], data[:n]
    elif n is not None and n > m:
        idx = jnp.concatenate([idx, jnp.broadcast_to(_sizes(c.shape, idx.dtype), (n - m, len(c.shape)))])
        data = jnp.concatenate([data, jnp.zeros(n - m, data.dtype)])
    return Coo(data, idx, c.shape, c.unique)


def group(idx: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """Number the distinct rows of ``idx``: ``(seg, seg_idx)``.

    ``seg[i]`` is the number of row ``i``'s coordinates in lexicographic order; ``seg_idx[s]``
    holds the coordinates of number ``s`` (sorted; padding past the last number used). Sorts
    only (no scatter).
    """
    n, k = int(idx.shape[0]), int(idx.shape[1])
    if k == 0 or n == 0:
        return jnp.zeros(n, dt.int32), idx
    positions = lax.iota(dt.int32, n)
    ordered, (perm,) = sort_rows(idx, positions)
    first = firsts(ordered)
    numbers = run_numbers(first)
    _, seg = lax.sort((perm, numbers), num_keys=1)
    distinct = jnp.where(first[:, None], ordered, _sizes(shape, idx.dtype))
    seg_idx, _ = sort_rows(distinct)
    return seg, seg_idx


def runs(idx: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """:func:`group` for rows already sorted by their coordinates (no sort)."""
    n, k = int(idx.shape[0]), int(idx.shape[1])
    if k == 0 or n == 0:
        return jnp.zeros(n, dt.int32), idx
    first = firsts(idx)
    seg = run_numbers(first)
    distinct = jnp.where(first[:, None], idx, _sizes(shape, idx.dtype))
    seg_idx, _ = sort_rows(distinct)
    return seg, seg_idx


def repeat_rows(a: Any, times: int) -> Any:
    """Each row (element, for a 1-d ``a``) of ``a`` ``times`` times in a row, ``times`` static: a
    broadcast and a reshape. (``jnp.repeat`` given ``total_repeat_length`` scatters and takes two
    cumsums instead, as it would for repeats that differ.)"""
    return jnp.repeat(a, times, axis=0)


def broadcast(c: Coo, shape: tuple[int, ...]) -> Coo:
    """``c`` broadcast to ``shape`` (which it broadcasts to): each row repeated along new axes."""
    if c.shape == shape:
        return c
    lead = len(shape) - len(c.shape)
    source = (1,) * lead + c.shape
    keep = valid(c)
    data = c.data
    idx = jnp.concatenate([jnp.zeros((rows(c), lead), c.idx.dtype), c.idx], axis=1).astype(index_dtype(shape))
    for axis, (s, t) in enumerate(zip(source, shape, strict=True)):
        if s == t:
            continue
        n = int(idx.shape[0])
        idx = with_column(repeat_rows(idx, t), axis, jnp.tile(jnp.arange(t, dtype=idx.dtype), n))
        data, keep = repeat_rows(data, t), repeat_rows(keep, t)
    return make(data, idx, shape, keep, c.unique)


def drop_axes(c: Coo, axes: tuple[int, ...], keepdims: bool) -> Coo:
    """The rows with the coordinates of ``axes`` removed (or set to 0, with ``keepdims``)."""
    keep = valid(c)
    n = rows(c)
    if keepdims:
        shape = tuple(1 if i in axes else s for i, s in enumerate(c.shape))
        cols = [jnp.zeros(n, c.idx.dtype) if i in axes else c.idx[:, i] for i in range(len(c.shape))]
    else:
        shape = tuple(s for i, s in enumerate(c.shape) if i not in axes)
        cols = [c.idx[:, i] for i in range(len(c.shape)) if i not in axes]
    idx = columns(cols, n, c.idx.dtype).astype(index_dtype(shape))
    return make(c.data, idx, shape, keep, c.unique and not axes)


def ones_reshape(c: Coo, shape: tuple[int, ...]) -> Coo | None:
    """A reshape that only inserts or removes axes of size 1 (None if it is not one)."""
    old = [i for i, n in enumerate(c.shape) if n != 1]
    new = [j for j, n in enumerate(shape) if n != 1]
    if [c.shape[i] for i in old] != [shape[j] for j in new]:
        return None
    source = dict(zip(new, old, strict=True))
    n = rows(c)
    cols = [c.idx[:, source[j]] if j in source else jnp.zeros(n, c.idx.dtype) for j in range(len(shape))]
    idx = columns(cols, n, c.idx.dtype).astype(index_dtype(shape))
    return make(c.data, idx, shape, valid(c), c.unique)


def _linear_dtype(size: int) -> np.dtype:
    if size <= _INT32_MAX:
        return dt.int32
    if not dt.x64_enabled():
        fail(ValueError, f"reshaping a sparse array of {size} elements needs 64-bit indices: "
               f"{dt.unavailable_message(dt.int64, narrowable=False)}")  # fmt: skip
    return dt.int64


def general_reshape(c: Coo, shape: tuple[int, ...]) -> Coo:
    """Row-major reshape through linear positions."""
    simple = ones_reshape(c, shape)
    if simple is not None:
        return simple
    ltype = _linear_dtype(math.prod(c.shape))
    linear = jnp.zeros(rows(c), ltype)
    for j, n in enumerate(c.shape):
        linear = linear * np.asarray(n, ltype) + c.idx[:, j].astype(ltype)
    itype = index_dtype(shape)
    cols = []
    for n in reversed(shape):
        cols.append((linear % np.asarray(n, ltype)).astype(itype))
        linear = linear // np.asarray(n, ltype)
    return make(c.data, columns(cols[::-1], rows(c), itype), shape, valid(c), c.unique)


def from_dense(x: Any) -> Coo:
    """A dense array with every element stored (for joining dense and sparse operands)."""
    shape = tuple(x.shape)
    itype = index_dtype(shape)
    n = math.prod(shape)
    cols = [lax.broadcasted_iota(itype, shape, i).reshape(n) for i in range(len(shape))]
    return Coo(x.reshape(n), columns(cols, n, itype), shape, True)


def same_format(value: Any, data: Any) -> Any:
    """``value`` (a jax sparse array) with new stored values ``data`` (same layout and pattern)."""
    if isinstance(value, jsparse.BCSR):
        return jsparse.BCSR(
            (data, value.indices, value.indptr),
            shape=value.shape,
            indices_sorted=value.indices_sorted,
            unique_indices=value.unique_indices,
        )
    return jsparse.BCOO(
        (data, value.indices),
        shape=value.shape,
        indices_sorted=value.indices_sorted,
        unique_indices=value.unique_indices,
    )


# --- duplicates, in the input's layout ------------------------------------------------------


@kernel
def _coalesced(value: Any) -> Any:
    """``value`` with duplicates summed, sorted, in its own format and layout (same nse)."""
    shape = tuple(value.shape)
    itype = index_dtype(shape)
    if isinstance(value, jsparse.BCSR):
        return _coalesced_bcsr(value, itype)
    indices = value.indices.astype(itype)
    n_batch = indices.ndim - 2
    nse, n_sparse = int(indices.shape[-2]), int(indices.shape[-1])
    batch = shape[:n_batch]
    sparse_shape = shape[n_batch : n_batch + n_sparse]
    data = jnp.broadcast_to(value.data, (*batch, *value.data.shape[n_batch:]))
    indices = jnp.broadcast_to(indices, (*batch, nse, n_sparse))

    def one(d: Any, i: Any) -> tuple[Any, Any]:
        keep = in_range(i, sparse_shape)
        i = jnp.where(keep[:, None], i, _sizes(sparse_shape, itype))
        d = jnp.where(keep.reshape(-1, *(1,) * (d.ndim - 1)), d, jnp.zeros((), d.dtype))
        seg, seg_idx = group(i, sparse_shape)
        return seg_sum(d, seg, nse), seg_idx

    for _ in range(n_batch):
        one = jax.vmap(one)
    data, indices = one(data, indices)
    return jsparse.BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def _coalesced_bcsr(value: Any, itype: Any) -> Any:
    shape = tuple(value.shape)
    n_batch = value.indices.ndim - 1
    n_rows, n_cols = shape[n_batch], shape[n_batch + 1]
    nse = int(value.indices.shape[-1])
    data, indices = _bcsr_arrays(value, itype)
    data = jnp.broadcast_to(data, (*shape[:n_batch], *data.shape[n_batch:]))

    def one(d: Any, i: Any) -> tuple[Any, Any, Any]:
        keep = in_range(i, (n_rows, n_cols))
        i = jnp.where(keep[:, None], i, _sizes((n_rows, n_cols), itype))
        d = jnp.where(keep.reshape(-1, *(1,) * (d.ndim - 1)), d, jnp.zeros((), d.dtype))
        seg, seg_idx = group(i, (n_rows, n_cols))
        pointers = jnp.searchsorted(seg_idx[:, 0], jnp.arange(n_rows + 1, dtype=itype), side="left")
        return seg_sum(d, seg, nse), seg_idx[:, 1], pointers.astype(itype)

    for _ in range(n_batch):
        one = jax.vmap(one)
    data, cols, indptr = one(data, indices)
    return jsparse.BCSR((data, cols, indptr), shape=shape, indices_sorted=True, unique_indices=True)


def unique_value(value: Any) -> Any:
    """``value`` with no duplicate entries (itself when it says so)."""
    if value.unique_indices:
        return value
    return _coalesced(value)
