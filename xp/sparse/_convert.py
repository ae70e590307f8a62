"""Building, checking and converting sparse arrays (dense, BCOO, BCSR)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as b
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp.sparse._array import BCOO, SparseArray

kernel = functools.partial(jax.jit, inline=True)
Tracer = jax.core.Tracer


def _fail(cls: str, kind: type[Exception], message: str) -> Any:
    raise kind(f"xp.sparse.{cls}: {message}")


def _index_array(value: Any, cls: str, name: str) -> Any:
    try:
        array = b.array(value, name)
    except b.ArgumentError as e:
        _fail(cls, e.kind, e.message)
    if array.dtype not in dt.INTEGER:
        _fail(cls, TypeError, f"{name} must have an integer dtype, got {array.dtype}")
    return array


def _data_array(value: Any, cls: str) -> Any:
    try:
        return b.array(value, "data")
    except b.ArgumentError as e:
        _fail(cls, e.kind, e.message)


def _shape(shape: Sequence[int], cls: str) -> tuple[int, ...]:
    try:
        return b.shape(tuple(shape) if isinstance(shape, list) else shape)
    except b.ArgumentError as e:
        _fail(cls, e.kind, e.message)
    raise AssertionError  # unreachable


def _check_bounds(indices: Any, sizes: Sequence[int], cls: str, name: str) -> None:
    """Eagerly, every index must lie in ``[0, size)`` of its dimension (never clamped)."""
    if isinstance(indices, Tracer) or indices.size == 0:
        return
    host = np.asarray(indices)
    low, high = host.min(axis=tuple(range(host.ndim - 1))), host.max(axis=tuple(range(host.ndim - 1)))
    for axis, size in enumerate(sizes):
        if low[axis] < 0 or high[axis] >= size:
            bad = int(low[axis]) if low[axis] < 0 else int(high[axis])
            _fail(cls, IndexError, f"{name} holds {bad}, out of bounds for sparse dimension {axis} of size {size}")


def build_bcoo(args: Any, shape: Sequence[int], indices_sorted: bool, unique_indices: bool) -> Any:
    """A checked ``jax.experimental.sparse.BCOO`` from user input."""
    if not isinstance(args, (tuple, list)) or len(args) != 2:
        _fail("BCOO", TypeError, "expected (data, indices)")
    data = _data_array(args[0], "BCOO")
    indices = _index_array(args[1], "BCOO", "indices")
    size = _shape(shape, "BCOO")
    if indices.ndim < 2:
        _fail("BCOO", ValueError, f"indices must have shape (*batch, nse, n_sparse), got {tuple(indices.shape)}")
    n_batch = indices.ndim - 2
    nse, n_sparse = indices.shape[-2], indices.shape[-1]
    n_dense = data.ndim - 1 - n_batch
    if n_dense < 0 or n_batch + n_sparse + n_dense != len(size):
        _fail("BCOO", ValueError, f"data of shape {tuple(data.shape)} and indices of shape {tuple(indices.shape)} "
              f"do not describe an array of shape {size}")  # fmt: skip
    expected = (*size[:n_batch], nse, *size[n_batch + n_sparse :])
    if tuple(data.shape) != expected or tuple(indices.shape[:n_batch]) != size[:n_batch]:
        _fail("BCOO", ValueError, f"data must have shape {expected} for indices of shape "
              f"{tuple(indices.shape)} and shape {size}, got {tuple(data.shape)}")  # fmt: skip
    _check_bounds(indices, size[n_batch : n_batch + n_sparse], "BCOO", "indices")
    return jsparse.BCOO((data, indices), shape=size, indices_sorted=indices_sorted, unique_indices=unique_indices)


def build_bcsr(args: Any, shape: Sequence[int]) -> Any:
    """A checked ``jax.experimental.sparse.BCSR`` from user input."""
    if not isinstance(args, (tuple, list)) or len(args) != 3:
        _fail("BCSR", TypeError, "expected (data, indices, indptr)")
    data = _data_array(args[0], "BCSR")
    indices = _index_array(args[1], "BCSR", "indices")
    indptr = _index_array(args[2], "BCSR", "indptr")
    size = _shape(shape, "BCSR")
    n_batch = indices.ndim - 1
    if n_batch < 0 or len(size) < n_batch + 2:
        _fail("BCSR", ValueError, f"indices of shape {tuple(indices.shape)} do not fit shape {size}")
    rows, cols = size[n_batch], size[n_batch + 1]
    nse = indices.shape[-1]
    if tuple(indptr.shape) != (*size[:n_batch], rows + 1):
        _fail("BCSR", ValueError, f"indptr must have shape {(*size[:n_batch], rows + 1)}, got {tuple(indptr.shape)}")
    if tuple(data.shape[: n_batch + 1]) != (*size[:n_batch], nse):
        _fail(
            "BCSR",
            ValueError,
            f"data of shape {tuple(data.shape)} does not match indices of shape {tuple(indices.shape)}",
        )
    _check_bounds(indices[..., None], (cols,), "BCSR", "indices")
    if not isinstance(indptr, Tracer):
        host = np.asarray(indptr)
        if host.size and (
            np.any(np.diff(host, axis=-1) < 0) or np.any(host[..., 0] != 0) or np.any(host[..., -1] > nse)
        ):
            _fail("BCSR", ValueError, f"indptr must be non-decreasing from 0 to at most nse={nse}")
    return jsparse.BCSR((data, indices, indptr), shape=size)


# --- conversions ----------------------------------------------------------------------------


@kernel
def _bcoo_todense(value: Any) -> Any:
    return value.todense()


@kernel
def _bcsr_todense(value: Any) -> Any:
    return value.todense()


def todense(x: SparseArray) -> Array:
    return wrap(_bcoo_todense(x._value) if isinstance(x, BCOO) else _bcsr_todense(x._value))


@functools.partial(kernel, static_argnames=("nse",))
def _sum_duplicates(value: Any, nse: int | None) -> Any:
    return value.sum_duplicates(nse=nse)


def sum_duplicates(x: Any, nse: int | None) -> Any:
    if nse is None and not isinstance(x._value.data, Tracer):
        return type(x)._wrap(x._value.sum_duplicates())  # eager: JAX counts the unique entries
    return type(x)._wrap(_sum_duplicates(x._value, nse=nse))


@kernel
def _sort_indices(value: Any) -> Any:
    return value.sort_indices()


def sort_indices(x: Any) -> Any:
    return type(x)._wrap(_sort_indices(x._value))
