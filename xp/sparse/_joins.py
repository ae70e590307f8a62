"""Joins: the stored elements of a sparse array at given coordinates along some of its axes
(what ``take``, ``take_along_axis`` and advanced indexing select, ``xp.sparse._indexing``).

- :func:`join_stored` (a kernel, the result's number of stored elements given): the stored
  elements sorted by the joined axes, the queries matched to their runs.
- :func:`_take_rows`: rows of a matrix stored row by row (a BCSR, or a BCOO with sorted indices)
  gathered through row pointers, without sorting.
- :func:`join`: either, with the number of stored elements exact eagerly and bounded under a trace.
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import sparse as jsparse

from xp import _dtypes as dt
from xp._jit import Tracer, kernel, on_constants
from xp.sparse import _buffers as buffers
from xp.sparse import _coordinates as coordinates
from xp.sparse._array import BCOO

# --- joins: the elements at given coordinates -----------------------------------------------


def _sorted_by(c: coordinates.Coo, key_axes: tuple[int, ...]) -> tuple[coordinates.Coo, list[int]]:
    rest = [a for a in range(len(c.shape)) if a not in key_axes]
    order = [*key_axes, *rest]
    moved = coordinates.Coo(c.data, c.idx[:, order], tuple(c.shape[a] for a in order))
    return coordinates.coalesce(moved), rest


def _key_runs(c: coordinates.Coo, k: int) -> tuple[Any, Any, Any]:
    """For rows of ``c`` sorted with ``k`` key columns first: each row's run of one key, the keys
    of the runs, and how many stored elements each run holds."""
    run, run_keys = coordinates.runs(c.idx[:, :k], c.shape[:k])
    count = jax.ops.segment_sum(coordinates.valid(c).astype(dt.int32), run, num_segments=coordinates.rows(c))
    return run, run_keys, count


def _match(c: coordinates.Coo, k: int, queries: Any) -> tuple[Any, Any, Any]:
    """For rows of ``c`` sorted with ``k`` key columns first, and query keys (q, k): each query's
    first matching row, the number of rows matching, and the running total of those numbers."""
    n = coordinates.rows(c)
    q = int(queries.shape[0])
    key_shape = c.shape[:k]
    run, run_keys, count = _key_runs(c, k)
    iota = lax.iota(dt.int32, n)
    start = jax.ops.segment_min(iota, run, num_segments=n)
    owners = jnp.where(coordinates.in_range(run_keys, key_shape) & (count > 0), iota, -1)
    queries = jnp.where(
        coordinates.in_range(queries, key_shape)[:, None], queries, np.asarray(key_shape, queries.dtype)
    )
    seg, _ = coordinates.group(jnp.concatenate([run_keys, queries.astype(run_keys.dtype)]), key_shape)
    owner = jax.ops.segment_max(owners, seg[:n], num_segments=n + q)[seg[n:]]
    found = owner >= 0
    safe = jnp.where(found, owner, 0)
    matches = jnp.where(found, count[safe], 0)
    return start[safe], matches, coordinates.running_sum(matches.astype(dt.default_int()))  # as wide as cumsum's


@functools.partial(kernel, static_argnames=("key_axes",))
def _join_total(value: Any, queries: Any, key_axes: tuple[int, ...]) -> Any:
    c, _ = _sorted_by(coordinates.coo(value), key_axes)
    if coordinates.rows(c) == 0 or queries.shape[0] == 0:
        return jnp.zeros((), dt.int32)
    return _match(c, len(key_axes), queries)[2][-1]


@functools.partial(kernel, static_argnames=("key_axes", "q_shape", "place", "nse"))
def join_stored(
    value: Any, queries: Any, key_axes: tuple[int, ...], q_shape: tuple[int, ...], place: int, nse: int
) -> Any:
    """The rows ``(b, rest)`` for each query ``b`` (of shape ``q_shape``) and each stored element
    whose coordinates along ``key_axes`` are the query's; ``b``'s axes go at ``place`` among the
    other axes."""
    c, _rest = _sorted_by(coordinates.coo(value), key_axes)
    k = len(key_axes)
    rest_shape = c.shape[k:]
    shape = (*rest_shape[:place], *q_shape, *rest_shape[place:])
    itype = coordinates.index_dtype(shape)
    n = coordinates.rows(c)
    q = int(queries.shape[0])
    if n == 0 or q == 0 or nse == 0:
        empty = jnp.zeros(nse, dt.bool)
        return coordinates.to_bcoo(
            coordinates.make(jnp.zeros(nse, c.data.dtype), jnp.zeros((nse, len(shape)), itype), shape, empty, True)
        )
    first, matches, ends = _match(c, k, queries)
    slot = lax.iota(ends.dtype, nse)
    owner = jnp.minimum(coordinates.owners(ends, nse), q - 1)
    row = jnp.clip(first[owner] + slot - (ends[owner] - matches[owner]), 0, n - 1)
    keep = slot < ends[-1]
    b_cols = []
    remaining = owner
    for size in reversed(q_shape):
        b_cols.append(remaining % size)
        remaining = remaining // size
    rest_cols = [c.idx[row, k + j].astype(itype) for j in range(len(rest_shape))]
    cols = [*rest_cols[:place], *(col.astype(itype) for col in reversed(b_cols)), *rest_cols[place:]]
    idx = coordinates.columns(cols, nse, itype)
    return coordinates.to_bcoo(coordinates.make(c.data[row], idx, shape, keep, True))


@functools.partial(kernel, static_argnames=("key_axes",))
def _longest_match(value: Any, key_axes: tuple[int, ...]) -> Any:
    """The most stored elements that share one key (coordinates along ``key_axes``): what one
    query can match at most."""
    c, _ = _sorted_by(coordinates.coo(value), key_axes)
    if coordinates.rows(c) == 0:
        return jnp.zeros((), dt.int32)
    return jnp.max(_key_runs(c, len(key_axes))[2])


# --- rows of a matrix stored row by row: gathered through row pointers, no sort ---------------


def _grouped_by_rows(value: Any) -> bool:
    """Whether ``value``'s stored elements come row by row (axis 0), so that row pointers find
    each row's elements: a BCSR, or a BCOO with sorted indices; no batch or dense dimensions."""
    if isinstance(value, jsparse.BCSR):
        return value.n_batch == 0 and value.n_dense == 0
    return isinstance(value, jsparse.BCOO) and value.n_batch == 0 and value.n_dense == 0 and value.indices_sorted


def _row_bounds(value: Any, rows: Any, pointers: Any = None) -> tuple[Any, Any]:
    """For :func:`_grouped_by_rows` arrays and rows in range: where each row's stored elements
    start and end. A BCSR reads its row pointers, a sorted BCOO those :func:`_row_pointers`
    keeps for it (``pointers``), or else searches its first coordinates for the rows asked about
    only (padding and out-of-range rows sort before row 0 or after the last: outside every row)."""
    if isinstance(value, jsparse.BCSR):
        return value.indptr[rows], value.indptr[rows + 1]
    if pointers is not None:
        return pointers[rows], pointers[rows + 1]
    first = value.indices[:, 0]
    rows = rows.astype(first.dtype)
    return jnp.searchsorted(first, rows, side="left"), jnp.searchsorted(first, rows + 1, side="left")


def _stored(value: Any) -> tuple[Any, Any]:
    """A :func:`_grouped_by_rows` array's stored values and their coordinates after the row."""
    return value.data, value.indices[:, None] if isinstance(value, jsparse.BCSR) else value.indices[:, 1:]


def _row_counts(value: Any, queries: Any, pointers: Any) -> tuple[Any, Any]:
    """Each query row's first stored position and its number of stored elements (0 out of range)."""
    row = queries[:, 0]
    inside = (row >= 0) & (row < value.shape[0])
    start, end = _row_bounds(value, jnp.where(inside, row, 0), pointers)
    return start, jnp.where(inside, end - start, 0)


@kernel
def _rows_plan(value: Any, queries: Any, pointers: Any) -> tuple[Any, Any, Any]:
    """:func:`_row_counts` and their total: computed once eagerly, the total read to size the
    result and the rest handed to :func:`_take_rows` (a sorted BCOO finds its rows by binary
    searches over all its stored elements: 0.3 ms for 2000 rows of 400k)."""
    start, count = _row_counts(value, queries, pointers)
    return start, count, jnp.sum(count.astype(dt.default_int()))


@kernel
def _longest_row(value: Any, pointers: Any) -> Any:
    start, end = _row_bounds(value, lax.iota(value.indices.dtype, int(value.shape[0])), pointers)
    return jnp.max(end - start, initial=0)


# A sorted BCOO's row pointers (a BCSR's indptr), kept while the array lives, by its identity (JAX's
# sparse arrays are immutable, and unhashable): taking rows then reads two pointers a row, as from
# a BCSR, where it would search all the stored first coordinates twice a row (2000 rows of a 20000
# x 20000 matrix with 400k entries: 0.6 ms of the call's 1.4). Computing them searches for every
# row, so eagerly an array gets them the second time rows are taken from it (taking a few rows
# once from a matrix of a million rows stays a few searches); a traced function with the array a
# constant gets them at once (it bounds the result by the longest row, a search for every row
# anyway). Arrays with more rows than twice their stored elements keep none (the pointers would
# outweigh the coordinates).
_ROW_POINTERS: dict[int, tuple[Any, Any]] = {}  # id: (a weak reference to the array, its pointers or None)


def _row_pointers(value: Any, *, at_once: bool) -> Any:
    """The row pointers of a concrete :func:`_grouped_by_rows` BCOO (see above): kept ones, else
    computed if ``at_once`` or on the array's second use; None for a BCSR (it has its own), a
    traced array, one with more rows than twice its entries, or a first use."""
    if not isinstance(value, jsparse.BCOO) or isinstance(value.indices, Tracer):
        return None
    if int(value.shape[0]) + 1 > 2 * int(value.indices.shape[0]):
        return None
    key = id(value)
    ref, kept = _ROW_POINTERS.get(key, (_nothing, None))
    seen = ref() is value
    if seen and kept is not None:
        return kept
    pointers = _sorted_row_pointers(value) if seen or at_once else None
    _ROW_POINTERS[key] = (weakref.ref(value, functools.partial(_forget_row_pointers, key)), pointers)
    return pointers


def _nothing() -> None:
    return None


def _forget_row_pointers(key: int, _: Any) -> None:
    _ROW_POINTERS.pop(key, None)


@kernel
def _sorted_row_pointers(value: Any) -> Any:
    first = value.indices[:, 0]
    return jnp.searchsorted(first, lax.iota(first.dtype, int(value.shape[0]) + 1), side="left")


@functools.partial(kernel, static_argnames=("q_shape", "nse", "skip_padding"))
def _take_rows(
    value: Any,
    queries: Any,
    plan: tuple[Any, Any] | None,
    pointers: Any,
    q_shape: tuple[int, ...],
    nse: int,
    skip_padding: bool,
) -> Any:
    """:func:`join_stored` along axis 0 of a :func:`_grouped_by_rows` array: each query row's elements
    gathered through the row pointers, in their stored order (no sort: 2000 rows of a 20000 x
    20000 matrix with 400k entries in 0.4-1.6 ms, not the general join's 0.26-0.28 s). Duplicates
    stay duplicates; an element with coordinates out of range inside a row is padding.

    ``plan``: the query rows' :func:`_row_counts` where already computed (eagerly), else None
    (under a trace, where ``nse`` is the number of queries times a bound on a row's length);
    ``pointers``: a sorted BCOO's :func:`_row_pointers`, or None.
    ``skip_padding``: count only the elements in range, the j-th of a row found by a search over
    their running count. Where ``nse`` is capped at the rows' length (each row's elements unique,
    the matrix traced), padding inside a row must not take a place of the row's share.
    """
    data, rest_idx = _stored(value)
    rest_shape = tuple(value.shape[1:])
    shape = (*q_shape, *rest_shape)
    itype = coordinates.index_dtype(shape)
    q, n = int(queries.shape[0]), int(data.shape[0])
    if n == 0 or q == 0 or nse == 0:
        empty = jnp.zeros(nse, dt.bool)
        return coordinates.to_bcoo(
            coordinates.make(jnp.zeros(nse, data.dtype), jnp.zeros((nse, len(shape)), itype), shape, empty, True)
        )
    count_type = dt.default_int()
    start, count = _row_counts(value, queries, pointers) if plan is None else plan
    unique = bool(value.unique_indices)
    if plan is None and not skip_padding:
        # Under a trace (no plan), nse is the number of queries times a bound on a row's length
        # (see join): slot j of query i is its row's j-th element, or padding past the row's end.
        # No running sum finds each slot's query, as below: that took about twice as long
        # (bench/RESULTS.md, "Sparse arrays", the jitted ``A[rows]`` row).
        per, extra = divmod(nse, q)
        assert not extra, (nse, q)
        j = lax.broadcasted_iota(count_type, (q, per), 1)
        position = jnp.clip(start[:, None].astype(count_type) + j, 0, n - 1).reshape(nse)
        owner = lax.broadcasted_iota(count_type, (q, per), 0).reshape(nse)
        filled = (j < count[:, None]).reshape(nse)
        return _gathered(data, rest_idx, position, owner, filled, q_shape, rest_shape, itype, unique)
    ranks = None
    if skip_padding:  # positions as numbers of in-range elements before them
        ranks = coordinates.running_sum(coordinates.in_range(rest_idx, rest_shape).astype(count_type))
        before = jnp.concatenate([jnp.zeros(1, count_type), ranks])
        start, count = before[start], before[start + count] - before[start]
    ends = coordinates.running_sum(count.astype(count_type))
    slot = lax.iota(count_type, nse)
    owner = jnp.minimum(coordinates.owners(ends, nse), q - 1)
    rank = start[owner].astype(count_type) + slot - (ends[owner] - count[owner])
    if ranks is not None:
        rank = jnp.searchsorted(ranks, rank + 1, side="left")  # the (rank + 1)-th in-range element
    position = jnp.clip(rank, 0, n - 1)
    return _gathered(data, rest_idx, position, owner, slot < ends[-1], q_shape, rest_shape, itype, unique)


def _gathered(
    data: Any,
    rest_idx: Any,
    position: Any,
    owner: Any,
    filled: Any,
    q_shape: tuple[int, ...],
    rest_shape: tuple[int, ...],
    itype: Any,
    unique: bool,
) -> Any:
    """The BCOO of the stored elements at ``position`` (each slot's), under their queries
    (``owner``, a flat index into ``q_shape``); slots not ``filled``, and elements out of range
    inside a row, are padding."""
    nse = int(position.shape[0])
    rest = rest_idx[position].astype(itype)
    keep = filled & coordinates.in_range(rest, rest_shape)
    b_cols = []
    remaining = owner
    for size in reversed(q_shape):
        b_cols.append((remaining % size).astype(itype))
        remaining = remaining // size
    idx = coordinates.columns([*reversed(b_cols), *(rest[:, j] for j in range(len(rest_shape)))], nse, itype)
    shape = (*q_shape, *rest_shape)
    return coordinates.to_bcoo(coordinates.make(data[position], idx, shape, keep, unique))


def _take_rows_host(value: Any, queries: Any, q_shape: tuple[int, ...]) -> Any:
    """:func:`_take_rows` in NumPy, for a concrete array and queries on one CPU device (the policy
    of ``xp.sparse._buffers``): the same buffers, with exactly the selected elements stored, and no
    kernel to compile for each new number of them (the kernel path compiles for every minibatch of
    rows, 0.6-2.4 s for 2000 rows of a 20000 x 20000 matrix with 400k entries). None elsewhere."""
    asked = buffers.on_host(queries)
    if asked is None:
        return None
    host = buffers.host_buffers(value)
    like = None if host is None else buffers.placement(value.data, queries)
    if host is None or like is None:
        return None
    rows = asked[:, 0]
    n_rows, rest_shape = int(value.shape[0]), tuple(value.shape[1:])
    shape = (*q_shape, *rest_shape)
    itype = coordinates.index_dtype(shape)
    inside = (rows >= 0) & (rows < n_rows)
    if not inside.all():  # (eager indices are checked before: as in the kernels, such rows select nothing)
        rows = np.where(inside, rows, 0)
    if isinstance(value, jsparse.BCSR):
        data, cols, indptr = host
        rest = [cols]
        start = indptr[rows].astype(np.int64)
        count = indptr[rows + 1] - start
    else:  # a BCOO with sorted indices: its padding sorts after the last row
        data, indices = host
        rest = [indices[:, j] for j in range(1, indices.shape[1])]
        pointers = _row_pointers(value, at_once=False)  # (kept from the second use on, as for the kernels)
        if pointers is not None:
            pointers = np.asarray(pointers)
            start = pointers[rows].astype(np.int64)
            count = pointers[rows + 1] - start
        else:  # (searched in a contiguous copy of the rows, in their dtype: NumPy would copy it to theirs)
            first = np.ascontiguousarray(indices[:, 0])
            keys = rows.astype(first.dtype)
            start = np.searchsorted(first, keys, side="left")
            count = np.searchsorted(first, keys + 1, side="left") - start
    count = np.where(inside, count, 0)
    total = int(count.sum())
    position = buffers.runs_host(start, count)  # each row's run, in order
    idx = np.empty((total, len(shape)), itype)
    remaining = np.repeat(np.arange(len(rows), dtype=itype), count)  # each element's query, in q_shape
    for axis in range(len(q_shape) - 1, 0, -1):
        idx[:, axis] = remaining % q_shape[axis]
        remaining = remaining // q_shape[axis]
    if q_shape:
        idx[:, 0] = remaining
    padding = None
    for j, (column, size) in enumerate(zip(rest, rest_shape, strict=True)):
        taken_column = np.take(column, position)
        idx[:, len(q_shape) + j] = taken_column
        outside = taken_column.view(np.dtype(f"u{taken_column.itemsize}")) >= size  # (negative ones too)
        padding = outside if padding is None else padding | outside
    taken = np.take(data, position)
    if padding is not None and padding.any():  # an element inside a row but out of range: padding
        taken[padding] = 0
        idx[padding] = shape
    unique = bool(value.unique_indices) or total == 0 or data.shape[0] == 0
    return buffers.make_bcoo(buffers.to_device_of(taken, like), buffers.to_device_of(idx, like), shape, False, unique)


def join(x: Any, queries: Any, key_axes: tuple[int, ...], q_shape: tuple[int, ...], place: int) -> Any:
    """:func:`join_stored` with its number of stored elements: exact eagerly (rows taken on CPU),
    or rounded up to a few sizes (:func:`coordinates.padded_nse`); traced, an upper bound,
    from the longest match where the array is concrete (a constant of the traced function, the
    queries traced: 2000 rows taken from 20000 x 20000 with 400k entries bound by 2000 x the
    longest row, not 2000 x 20000 columns, 1.5 s of work otherwise), else from its size. Rows of
    an array stored row by row (:func:`_grouped_by_rows`) are gathered by :func:`_take_rows`."""
    value = x._value
    q = int(queries.shape[0])
    rest_size = math.prod(n for a, n in enumerate(x.shape) if a not in key_axes)
    by_rows = key_axes == (0,) and place == 0 and _grouped_by_rows(value)
    capped = False
    plan = pointers = None
    if isinstance(value.data, Tracer) or isinstance(value.indices, Tracer):
        nse = min(q * coordinates.stored_rows(value), q * rest_size)
        capped = nse < q * coordinates.stored_rows(value)
        # a row holds at most rest_size elements only without duplicates (the join sums them)
        by_rows = by_rows and (bool(value.unique_indices) or not capped)
    elif isinstance(queries, Tracer):
        with on_constants():
            pointers = _row_pointers(value, at_once=True) if by_rows else None
            longest = _longest_row(value, pointers) if by_rows else _longest_match(value, key_axes=key_axes)
            nse = q * int(longest)
        # a barrier, or XLA folds the constant array's sorting into the program at compile time
        value = lax.optimization_barrier(value)
    elif by_rows:
        taken = _take_rows_host(value, queries, q_shape)
        if taken is not None:
            return BCOO._wrap(taken)
        pointers = _row_pointers(value, at_once=False)
        *plan, total = _rows_plan(value, queries, pointers)
        nse = coordinates.padded_nse(int(total))
    else:
        nse = coordinates.padded_nse(int(_join_total(value, queries, key_axes=key_axes)))
    if by_rows:
        return BCOO._wrap(
            _take_rows(
                value,
                queries,
                None if plan is None else tuple(plan),
                pointers if plan is None else None,
                q_shape=q_shape,
                nse=nse,
                skip_padding=capped,
            )
        )
    return BCOO._wrap(join_stored(value, queries, key_axes=key_axes, q_shape=q_shape, place=place, nse=nse))
