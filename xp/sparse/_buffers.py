"""The raw buffers of ``jax.experimental.sparse`` arrays, which every conversion works on.

Building, checking and converting sparse arrays (``xp.sparse._build``,
``xp.sparse._conversion``) works on the JAX sparse arrays and their buffers (``data``,
``indices``, ``indptr``), never on xp's array types, which wrap the results
(``xp.sparse._array``). What those modules share is here:

- JAX sparse arrays from trusted buffers (:func:`make_bcoo`, :func:`make_bcsr`), and the
  (row, column) coordinates of BCSR entries, in a kernel and in NumPy;
- where the buffers are. Every conversion is a cached jitted kernel of the raw buffers with
  shapes, layouts and dtypes static: the path under a JAX transformation and for arrays on
  accelerators, where an eager call is one dispatch, plus one small device-to-host read where
  the size of the result depends on the values (the ``nse`` of ``fromdense`` and
  ``sum_duplicates``). Eager calls on arrays on one CPU device (:func:`on_host`) run the same
  algorithm in NumPy on the buffers (which are host memory there): a kernel compiles once for
  every new shape and ``nse`` (tens to hundreds of milliseconds), which would dominate eager
  use; NumPy needs no compilation. The tests check that both paths build identical buffers
  (replacing :func:`on_host` here sends every conversion to the kernels).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp._jit import Tracer


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
    """A NumPy array put where the jax array ``like`` lives (committed there if ``like`` is).

    ``jax.device_put``, not ``jnp.asarray``: the sizes of these arrays depend on the values, and
    ``jnp.asarray`` compiles a kernel for every new shape (milliseconds, for a transfer of
    microseconds); for a small array of a shape seen before it is faster too."""
    if not like.committed:
        return jax.device_put(host)
    return jax.device_put(host, next(iter(like.devices())))


def placement(*arrays: Any) -> Any:
    """Of jax arrays on CPU that one result is made of on the host: the one whose placement the
    result takes, as JAX places a computation (a committed array's device, else the default),
    or None where two are committed to different devices (JAX's error then: the caller leaves
    the computation to the kernels, which raise it)."""
    committed = [a for a in arrays if a.committed]
    if any(a.devices() != committed[0].devices() for a in committed[1:]):
        return None
    return committed[0] if committed else arrays[0]


def make_bcoo(data: Any, indices: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    """A ``jax.experimental.sparse.BCOO`` from trusted buffers (no validation, no copy)."""
    aux = {"shape": shape, "indices_sorted": sorted_, "unique_indices": unique}
    return jsparse.BCOO.tree_unflatten(aux, (data, indices))


def make_bcsr(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...], sorted_: bool, unique: bool) -> Any:
    aux = {"shape": shape, "indices_sorted": sorted_, "unique_indices": unique}
    return jsparse.BCSR.tree_unflatten(aux, (data, indices, indptr))


# --- BCSR coordinates -----------------------------------------------------------------------


def bcsr_coordinates(indices: Any, indptr: Any) -> Any:
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


def bcsr_coordinates_host(indices: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """:func:`bcsr_coordinates` in NumPy."""
    nse, n_rows = indices.shape[-1], indptr.shape[-1] - 1
    count = math.prod(indices.shape[:-1])
    flat_indices, flat_indptr = indices.reshape(count, nse), indptr.reshape(count, n_rows + 1)
    rows = np.empty(flat_indices.shape, indices.dtype)
    position = np.arange(nse)
    for i, ptr in enumerate(flat_indptr):
        steps = np.diff(ptr)
        if ptr[0] == 0 and ptr[-1] <= nse and np.all(steps >= 0):  # a valid indptr: each row's run
            rows[i, : ptr[-1]] = np.repeat(np.arange(n_rows, dtype=indices.dtype), steps)
            rows[i, ptr[-1] :] = n_rows  # (a tenth of the search's time for 400k entries)
        else:
            rows[i] = np.where(position < ptr[-1], np.searchsorted(ptr, position, side="right") - 1, n_rows)
    return np.stack([rows.reshape(indices.shape), indices], axis=-1)


# --- buffers on the host --------------------------------------------------------------------


def runs_host(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The positions ``start[i], ..., start[i] + count[i] - 1`` of each run ``i``, one run after
    the other (``count`` non-negative): the stored elements of the rows that ``A[rows]`` takes, or
    of the rows of ``B`` that a product of two sparse matrices meets."""
    ends = np.cumsum(count)
    position = np.repeat(start - (ends - count), count)
    position += np.arange(position.size, dtype=position.dtype)
    return position


def host_buffers(v: Any) -> tuple[np.ndarray, ...] | None:
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


def added_host(target: np.ndarray, index: tuple[np.ndarray, ...], values: np.ndarray) -> None:
    """``target[index] += values`` in NumPy, the values of a position given several times summed;
    where each position is given once, the values are written as they are (so that a stored
    negative zero stays one: ``0.0 + -0.0`` is ``0.0``)."""
    flat = np.ravel_multi_index(index, target.shape) if values.size else np.zeros(0, np.int64)
    if len(np.unique(flat)) == len(flat):
        target[index] = values
    else:
        np.add.at(target, index, values)
