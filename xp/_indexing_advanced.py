"""Advanced indexing: ``x[key]`` and ``x[key] = value`` with integer and boolean index arrays.

``xp._indexing`` parses a key; one with an array becomes an :class:`AdvancedIndex`, gathered and
scattered with ``jax.numpy`` indexing inside a jitted kernel. Eagerly, integer indices are
bounds-checked (:func:`index_range`, also the check of ``take``, ``take_along_axis`` and
``searchsorted``'s ``sorter``, dense and sparse) and boolean masks are turned into integer
indices; under a trace a boolean mask can only be written through (``x[mask] = v`` is
``where(mask, v, x)``), since reading it has a data-dependent shape. Constant (NumPy) index
arrays are checked on their own values before they become JAX arrays, under a trace too; traced
indices are checked in checked mode only (``xp.checked``, ``xp._checked.emitted``; docs/checked.md),
elsewhere JAX clamps reads and drops writes.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from xp import _dtypes as dt
from xp._array import Array, JaxArrayImpl
from xp._checked import emitted as checks
from xp._errors import ArgumentError, DataDependentShapeError, fail
from xp._jit import Tracer, kernel, on_constants

ARRAY_INDEX_TYPES = (Array, jax.Array, Tracer, np.ndarray)


def index_error(message: str) -> ArgumentError:
    return ArgumentError(IndexError, message)


# --- advanced indexing ----------------------------------------------------------------------


class AdvancedIndex:
    """A key with integer or boolean arrays.

    ``structure`` is the key with each array replaced by its position in ``arrays`` (static);
    ``arrays`` are jax integer arrays. ``mask`` is set when the key is a sole boolean array,
    which can be written through under a trace.
    """

    __slots__ = ("arrays", "key", "mask", "shape", "structure", "where")

    def __init__(self, key: tuple[Any, ...], shape: tuple[int, ...], where: str = "xp.Array.__getitem__") -> None:
        if len(key) > 1 and _dtype_of(key[0]) == dt.bool and all(_whole(k) for k in key[1:]):
            # x[mask, ...] and x[mask, :] are x[mask]: the sole-mask form is the one a traced mask
            # can be written through (parse has checked the key's length already)
            key = key[:1]
        self.shape = shape
        self.key = key
        self.where = where
        self.mask: Any = None
        if len(key) == 1 and _dtype_of(key[0]) == dt.bool and isinstance(key[0], ARRAY_INDEX_TYPES):
            self.mask = _as_jax_index(key[0])
            mask_shape = tuple(self.mask.shape)
            if len(mask_shape) > len(shape) or any(m != n and m != 0 for m, n in zip(mask_shape, shape, strict=False)):
                raise index_error(
                    f"boolean index of shape {mask_shape} does not match the indexed array of shape {shape}"
                )
        self.structure: tuple[Any, ...] | None = None
        self.arrays: tuple[Any, ...] = ()

    def _resolve(self, allow_traced_mask: bool = False) -> None:
        """Turn boolean masks into integer indices (eagerly) and bounds-check integer arrays."""
        if self.structure is not None:
            return
        if len(self.key) == 1 and self.mask is None:  # a sole integer array, the usual x[i]
            self.arrays = (self._integer_index(self.key[0], 0),)
            self.structure = _SOLE_ARRAY
            return
        structure: list[Any] = []
        arrays: list[Any] = []
        axis = 0
        for k in self.key:
            if k is Ellipsis:
                structure.append(Ellipsis)
                consumed = sum(
                    (_ndim_of(e) if _dtype_of(e) == dt.bool else 1)
                    for e in self.key
                    if e is not None and e is not Ellipsis
                )
                axis += len(self.shape) - consumed
            elif k is None:
                structure.append(None)
            elif type(k) is int:
                structure.append(k)
                axis += 1
            elif type(k) is slice:
                structure.append(("slice", k.start, k.stop, k.step))
                axis += 1
            elif _dtype_of(k) == dt.bool:
                mask = _as_jax_index(k)
                if isinstance(mask, Tracer):
                    raise ArgumentError(
                        DataDependentShapeError,
                        "reading through a boolean mask has a data-dependent shape, which cannot "
                        "be traced by jax.jit; use xp.where(mask, x, fill) instead, or index eagerly",
                    )
                host = np.asarray(mask)
                if host.ndim == 0:
                    # "a zero-dimensional boolean index adds a dimension of length 1 (True) or 0 (False)"
                    if len(self.key) != 1:
                        raise index_error("a 0-d boolean index must be the only index")
                    structure.append(("select", bool(host)))
                    continue
                for i, n in enumerate(host.shape):
                    if n != self.shape[axis + i] and n != 0:
                        raise index_error(
                            f"boolean index of shape {host.shape} does not match axis "
                            f"{axis + i} of the indexed array of shape {self.shape}"
                        )
                for indices in np.nonzero(host):
                    structure.append(("array", len(arrays)))
                    arrays.append(jnp.asarray(indices.astype(np.int32)))
                axis += host.ndim
            else:
                structure.append(("array", len(arrays)))
                arrays.append(self._integer_index(k, axis))
                axis += 1
        self.structure = tuple(structure)
        self.arrays = tuple(arrays)

    def _integer_index(self, k: Any, axis: int) -> Any:
        """The integer index array ``k`` into ``axis`` as a jax array, bounds-checked (see the module)."""
        dtype = k.dtype
        if dtype.kind not in "iu":
            raise index_error(f"index arrays must have an integer or boolean dtype, got {dtype}")
        n = self.shape[axis]
        if isinstance(k, np.ndarray) and k.size:
            # a constant: checked on its own values, before a conversion to JAX (which,
            # with 64-bit mode off, would wrap 2**32 + 1 to 1), under a trace too
            _check_bounds(int(k.min()), int(k.max()), n, axis)
        index = _as_jax_index(k)
        if isinstance(index, Tracer):
            checks.index_bounds(index, n, f"{self.where}: index {{}} is out of bounds for axis {axis} with size {n}")
        elif index.size:
            _check_bounds(*index_range(index), n, axis)
        return index

    def get(self, value: Any) -> Any:
        self._resolve()
        assert self.structure is not None  # _resolve sets it
        return _advanced_get(value, self.arrays, self.structure)

    def _write_nothing(self, value: Any) -> Any:
        """``x[mask] = v`` with a ``v`` of no elements: right only if the mask selects nothing."""
        # A value that does not fit the selection is a ValueError, as for basic indices (and NumPy)
        if isinstance(self.mask, Tracer):
            raise ArgumentError(
                ValueError,
                "cannot write a value of no elements through a traced boolean mask (it fits only if the "
                "mask selects nothing, which a trace cannot check); use xp.where(mask, v, x) instead",
            )
        if np.any(np.asarray(self.mask)):
            raise ArgumentError(
                ValueError, "cannot write a value of no elements through a boolean mask that selects elements"
            )
        return value

    def set(self, value: Any, update: Any) -> Any:
        if self.mask is not None and self.mask.ndim == 0 and update.ndim == value.ndim + 1:
            # x[True] selects a leading axis of length 1, x[False] one of length 0
            if update.shape[0] == 0:
                return self._write_nothing(value)
            update = update.reshape(update.shape[1:])
        if self.mask is not None and (isinstance(self.mask, Tracer) or update.ndim == 0 or self.mask.ndim == 0):
            mask = self.mask
            if mask.ndim and 0 in mask.shape:
                return value
            values = mask.ndim and update.ndim > value.ndim - mask.ndim  # one value per selected element
            if values and update.shape[0] == 0:
                return self._write_nothing(value)
            if values and update.shape[0] != 1 and isinstance(mask, Tracer) and checks.enabled("index"):
                count = update.shape[0]  # how many the mask selects is known when it runs
                checks.count_matches(
                    _selected(mask),
                    count,
                    f"{self.where}: {count} values cannot be written to the {{}} elements the boolean mask selects",
                )
            return _mask_set(value, mask, update)
        self._resolve()
        try:
            assert self.structure is not None  # _resolve sets it
            return _advanced_set(value, self.arrays, update, self.structure)
        except (ValueError, TypeError) as e:  # the value does not broadcast: ValueError, as for basic indices
            raise ArgumentError(
                ValueError, f"cannot write a value of shape {update.shape} through this index: {e}"
            ) from None


_SOLE_ARRAY = (("array", 0),)  # the structure of a key that is one integer array


def _whole(k: Any) -> bool:
    """``...`` or ``:``, an entry that takes a whole axis (or all the remaining ones)."""
    return k is Ellipsis or (type(k) is slice and k == slice(None))


def _check_bounds(low: int, high: int, n: int, axis: int) -> None:
    check_decided(low, high, n, axis)
    if low < -n or high >= n:
        bad = low if low < -n else high
        raise index_error(f"index {bad} is out of bounds for axis {axis} with size {n}")


def check_decided(low: int, high: int, n: Any, axis: int) -> None:
    """For an axis whose size ``n`` ``jax.export`` leaves symbolic: that indices from ``low`` to
    ``high`` are in bounds, or out of bounds, for every size the export allows. An index that
    could be either (``5`` along a size ``b >= 1``) is a NotImplementedError naming the remedy:
    a constant index is checked when traced, and this one cannot be."""
    if type(n) is int:
        return
    for k in (low, high):
        try:
            bool(-n <= k)
            bool(k < n)
        except jax.errors.InconclusiveDimensionOperation:
            raise ArgumentError(
                NotImplementedError,
                f"index {k} may be out of bounds for axis {axis}, whose size {n} is symbolic (jax.export shape "
                "polymorphism): export with a constraint that decides it (jax.export.symbolic_shape(..., "
                "constraints=...))",
            ) from None


@kernel
def _selected(mask: Any) -> Any:
    return jnp.sum(mask, dtype=dt.int32 if mask.size < 2**31 else dt.int64)


def _dtype_of(k: Any) -> Any:
    return getattr(k, "dtype", None)


def _ndim_of(k: Any) -> int:
    return int(k.ndim)


def _as_jax_index(k: Any) -> Any:
    if isinstance(k, Array):
        return k._value
    if isinstance(k, np.ndarray):
        # NumPy data is known when jax.jit traces: kept concrete there (jnp.asarray would stage it
        # as a traced value), so a NumPy mask can be read through and a NumPy index is bounds-checked
        # under jit as eagerly (issue #10, found by tests/test_view_write_programs.py)
        with on_constants():
            return jnp.asarray(k)
    return k


def index_range(index: Any) -> tuple[int, int]:
    """The smallest and largest element of a concrete, non-empty integer jax array, as Python
    ints: the eager bounds check of every index array (``x[i]``, ``take``, ``take_along_axis``,
    ``searchsorted``'s ``sorter``, dense and sparse), also for a concrete array closed over by a
    traced function.

    Where the array lives in this process's CPU memory, NumPy reads it in place (zero-copy): no
    kernel and no transfer, and the indexing kernel that follows stays asynchronous. Elsewhere (a
    GPU) one kernel computes both and two numbers come back.

    The last array read is remembered (weakly; jax arrays are immutable): the same indices used
    again (a permutation applied to many arrays) are not read again. Reading them would also wait
    for the kernels still using them, the previous call's among them: about a third of an eager
    ``take`` of 4 elements (bench/RESULTS.md, "Eager calls at small shapes", the ``take`` row)."""
    last = _last_range
    if last[0]() is index:
        return last[1], last[2]
    if _in_host_memory(index.sharding):
        host = np.asarray(index)
        if host.size <= 32:  # Python's min and max of a short list: 0.4 µs, NumPy's two reductions 2
            values = host.ravel().tolist()
            low, high = min(values), max(values)
        else:
            low, high = int(host.min()), int(host.max())  # in the index dtype: uint64 stays exact
    else:
        with on_constants():
            low, high = (int(v) for v in np.asarray(_min_max(index)).tolist())
    _remember_range(index, low, high)
    return low, high


def in_bounds(index: Any, n: Any, ndim: int | None = None) -> bool:
    """Whether ``index`` is a concrete integer jax array (of ``ndim`` dimensions, where given)
    whose every element is in bounds of an axis of size ``n``: the checks of the usual eager
    ``x[i]``, ``take`` and ``take_along_axis`` in one function, ahead of their general paths, which
    report every error.

    Why one function: between two calls of the kernel each Python call costs several times what it
    costs timed alone, so the general path's checks (2 µs alone) cost 6-10 µs there; this one
    brings an eager ``take`` of 4 elements to about 1 µs over its kernel's dispatch
    (bench/RESULTS.md, "Eager calls at small shapes", the ``take`` row)."""
    last = _last_range
    if last[0]() is index and type(n) is int:
        # the indices of the last call again (a permutation applied to many arrays, a benchmark's
        # loop): every array remembered is a concrete, non-empty integer array, so its range is
        # all there is to check, and skipping the reads below halves this function's cost beside
        # a take kernel
        return (ndim is None or last[3] == ndim) and -n <= last[1] and last[2] < n
    if type(index) is not JaxArrayImpl or type(n) is not int:
        return False
    aval = index.aval  # (its dtype and shape: see Array.shape)
    if aval.dtype not in dt.INTEGER or 0 in aval.shape or (ndim is not None and len(aval.shape) != ndim):
        return False
    low, high = index_range(index)
    return -n <= low and high < n


def get_by_array(value: Any, index: Any) -> Any:
    """``value[index]`` for an integer index array ``in_bounds`` of the first axis (the caller
    checks), by the kernel of the general path."""
    return _advanced_get(value, (index,), _SOLE_ARRAY)


def _nothing() -> None:
    return None


# (a weak reference to the last index array index_range read, its smallest and largest element,
# its number of dimensions)
_last_range: tuple[Any, int, int, int] = (_nothing, 0, 0, 0)


def _remember_range(index: Any, low: int, high: int) -> None:
    global _last_range
    _last_range = (weakref.ref(index), low, high, len(index.aval.shape))  # (one assignment: a reader sees old or new)


@functools.lru_cache(maxsize=256)
def _in_host_memory(sharding: Any) -> bool:
    """Whether every shard of an array placed by ``sharding`` is in this process's CPU memory
    (cached: a sharding's devices are fixed, and reading them costs 1 µs a call)."""
    return sharding.is_fully_addressable and all(d.platform == "cpu" for d in sharding.device_set)


@kernel
def _min_max(index: Any) -> Any:
    return jnp.stack([jnp.min(index), jnp.max(index)])  # in the index dtype: uint64 stays exact


@functools.partial(kernel, static_argnames="structure")
def _advanced_get(value: Any, arrays: tuple[Any, ...], structure: tuple[Any, ...]) -> Any:
    if structure and type(structure[0]) is tuple and structure[0][0] == "select":
        return _select_all(value, structure[0][1])
    return value[_key(structure, arrays)]


@functools.partial(kernel, static_argnames="structure")
def _advanced_set(value: Any, arrays: tuple[Any, ...], update: Any, structure: tuple[Any, ...]) -> Any:
    return value.at[_key(structure, arrays)].set(update.astype(value.dtype))


@kernel
def _mask_set(value: Any, mask: Any, update: Any) -> Any:
    """``value`` with ``update`` written where ``mask`` (over its leading axes) is True.

    ``update`` is either broadcast to every selected element, or (a leading axis of length
    other than 1, NumPy's ``x[mask] = values``) holds one entry per True element in row-major
    order: entry ``k`` goes to the ``k``-th True element, found by a running count of the mask,
    so the shapes stay static under a trace.
    """
    tail = value.shape[mask.ndim :]
    update = update.astype(value.dtype)
    if update.ndim > len(tail):
        if update.shape[0] == 1:
            update = update[0]
        else:
            if update.shape[0] > mask.size:
                fail(ValueError, f"{update.shape[0]} values cannot go to the at most {mask.size} elements a "
                     f"boolean mask of shape {tuple(mask.shape)} selects")  # fmt: skip
            flat = mask.reshape(-1)
            rank = jnp.clip(jnp.cumsum(flat) - 1, 0, update.shape[0] - 1)  # k for the k-th True element
            rows = jnp.broadcast_to(jnp.take(update, rank, axis=0), (flat.shape[0], *tail))
            update = rows.reshape(*mask.shape, *tail)
    mask = mask.reshape(mask.shape + (1,) * len(tail))
    return jnp.where(mask, update, value)


def _select_all(value: Any, keep: bool) -> Any:
    return value[None] if keep else jnp.zeros((0, *value.shape), value.dtype)


def _key(structure: tuple[Any, ...], arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    """The jax.numpy key of a static structure: ``("array", i)`` is ``arrays[i]``,
    ``("slice", start, stop, step)`` a slice (slices are not hashable before Python 3.12)."""
    return tuple((arrays[k[1]] if k[0] == "array" else slice(*k[1:])) if type(k) is tuple else k for k in structure)
