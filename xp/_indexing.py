"""Indexing: ``x[key]`` and ``x[key] = value``.

A key is parsed once, in Python, into one of two forms:

- :class:`BasicIndex` (integers, slices, ``...``, ``None``): a static plan (window sizes,
  strides, reversed axes, result shape) and dynamic start offsets. Starts are passed to the
  jitted kernel as data, so ``x[i]`` in a loop compiles once, not once per ``i``. Its result
  is a *view*: writing into it writes into the indexed array (see ``Array._assign``).
- :class:`AdvancedIndex` (integer and boolean arrays): gathered and scattered with
  ``jax.numpy`` indexing inside a jitted kernel. Eagerly, integer indices are bounds-checked
  and boolean masks are turned into integer indices; under a trace a boolean mask can only be
  written through (``x[mask] = v`` is ``where(mask, v, x)``), since reading it has a
  data-dependent shape. Constant (NumPy) index arrays are checked on their own values before
  they become JAX arrays, under a trace too; traced indices are checked in checked mode only
  (``xp.checked``, ``xp._checks``; docs/checked.md), elsewhere JAX clamps reads and drops writes.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _checks as checks
from xp import _dtypes as dt
from xp._array import Array, JaxArrayImpl
from xp._errors import ArgumentError, DataDependentShapeError, describe, fail
from xp._jit import kernel, on_constants
from xp._resharding import explicit_sharding

Tracer = jax.core.Tracer
_ARRAY_INDEX_TYPES = (Array, jax.Array, Tracer, np.ndarray)


def _index_error(message: str) -> ArgumentError:
    return ArgumentError(IndexError, message)


# --- basic indexing -------------------------------------------------------------------------


class BasicIndex:
    """A parsed basic index. ``plan`` is static (hashable), ``starts`` dynamic (or None: zeros).

    A parsed index is shared: ``parse`` keeps those of plain keys (see ``_PARSED``), and views
    keep theirs as their layout; nothing changes one after it is made but ``device_starts``.
    """

    __slots__ = ("device_starts", "plan", "reused", "shape", "starts")

    def __init__(self, plan: tuple[Any, ...] | None, starts: np.ndarray | None, shape: tuple[int, ...]):
        self.plan = plan  # None: the identity (x[...], x[:])
        self.starts = starts
        self.shape = shape  # the shape of x[key]
        self.reused = False  # whether parse has returned it a second time
        self.device_starts: Any = None  # ``starts`` as a jax array, once reused (see _starts_for)

    def get(self, value: Any) -> Any:
        if self.plan is None:
            return value
        return _basic_get(value, self._starts_for(value), self.plan)

    def set(self, value: Any, update: Any) -> Any:
        """``value`` with ``update`` (of value's dtype, broadcastable to ``self.shape``) written in."""
        if self.plan is None:
            return _fill(value, update)
        return _basic_set(value, self._starts_for(value), update, self.plan)

    def _starts_for(self, value: Any) -> Any:
        """The starts to pass with a concrete ``value``: for an index used again, a jax array made
        once, so that the kernel's call does not copy NumPy's starts to the device each time (1.7
        µs of a 5 µs eager ``x[1:5]`` on CPU). A traced ``value`` gets the NumPy starts, which
        its trace keeps as a constant."""
        starts = self.starts
        if starts is None or type(value) is not JaxArrayImpl:
            return starts
        device_starts = self.device_starts
        if device_starts is None:
            if not self.reused:  # (an index used once, as in a loop over positions, is not worth it)
                return starts
            device_starts = jnp.asarray(starts)
            if isinstance(device_starts, Tracer):  # (within a trace; a tracer must not outlive it)
                return starts
            self.device_starts = device_starts
        return device_starts


@functools.partial(kernel, static_argnums=2)  # plan
def _basic_get(value: Any, starts: Any, plan: tuple[Any, ...]) -> Any:
    spans, steps, reversed_axes, out_shape = plan
    if starts is None:
        window = lax.slice(value, (0,) * value.ndim, spans, steps)
    else:
        window = lax.dynamic_slice(value, tuple(starts[i] for i in range(value.ndim)), spans)
        if any(s != 1 for s in steps):
            window = lax.slice(window, (0,) * value.ndim, spans, steps)
    if reversed_axes:
        window = lax.rev(window, reversed_axes)
    return window.reshape(out_shape)


@functools.partial(kernel, static_argnums=3)  # plan
def _basic_set(value: Any, starts: Any, update: Any, plan: tuple[Any, ...]) -> Any:
    spans, steps, reversed_axes, out_shape = plan
    counts = tuple(-(-span // step) for span, step in zip(spans, steps, strict=True))
    update = jnp.broadcast_to(update.astype(value.dtype), out_shape).reshape(counts)
    if reversed_axes:
        update = lax.rev(update, reversed_axes)
    start_indices = (0,) * value.ndim if starts is None else tuple(starts[i] for i in range(value.ndim))
    if all(s == 1 for s in steps):
        return lax.dynamic_update_slice(value, update, start_indices)
    window = lax.dynamic_slice(value, start_indices, spans)
    window = window.at[tuple(slice(None, None, s) for s in steps)].set(update)
    return lax.dynamic_update_slice(value, window, start_indices)


def _fill(value: Any, update: Any) -> Any:
    """``value`` with every element replaced by ``update`` (cast, broadcast), placed as ``value``
    is: not made from ``update`` alone, which may be a cached scalar on the default device."""
    sharding = None
    if type(value) is JaxArrayImpl and len(value.sharding.device_set) > 1 and explicit_sharding(value) is None:
        # over Auto axes the compiler would make the result of a replicated update replicated:
        # kept as value's (over Explicit axes the result's type has value's sharding)
        sharding = value.sharding
    return _fill_kernel(value, update, sharding)


@functools.partial(kernel, static_argnums=2)  # sharding
def _fill_kernel(value: Any, update: Any, sharding: Any) -> Any:
    # (a kernel of value runs where value is; over several devices, the constraint keeps its sharding)
    whole = jnp.broadcast_to(update.astype(value.dtype), value.shape)
    result = lax.dynamic_update_slice(value, whole, (0,) * value.ndim)
    return result if sharding is None else lax.with_sharding_constraint(result, sharding)


def _parse_basic(key: tuple[Any, ...], shape: tuple[int, ...]) -> BasicIndex:
    """A key of ints, slices, one ``...`` and ``None`` (already checked for that)."""
    ndim = len(shape)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    spans: list[int] = []
    steps: list[int] = []
    starts: list[int] = []
    reversed_axes: list[int] = []
    out_shape: list[int] = []
    identity = True
    axis = 0
    for k in key:
        if k is Ellipsis:
            for _ in range(ndim - consumed):
                n = shape[axis]
                spans.append(n)
                steps.append(1)
                starts.append(0)
                out_shape.append(n)
                axis += 1
            consumed = ndim  # the ellipsis is expanded once
        elif k is None:
            out_shape.append(1)
            identity = False
        elif type(k) is slice:
            n = shape[axis]
            if k.start is None and k.stop is None and (k.step is None or (type(k.step) is int and k.step == 1)):
                # ":", the whole axis, also of a size jax.export leaves symbolic
                spans.append(n)
                steps.append(1)
                starts.append(0)
                out_shape.append(n)
                axis += 1
                continue
            if type(n) is not int:  # a size jax.export leaves symbolic: SymbolicBasicIndex
                raise _SymbolicAxis
            try:
                start, stop, step = k.indices(n)
            except TypeError:
                raise _index_error(f"slice bounds must be integers or None, got {k!r}") from None
            except ValueError as e:
                raise _index_error(f"{e} (in {k!r})") from None
            count = len(range(start, stop, step))
            if step > 0:
                low = start if count else 0
            else:
                low = start + (count - 1) * step if count else 0
                if count > 1:
                    reversed_axes.append(axis)
            spans.append((count - 1) * abs(step) + 1 if count else 0)
            steps.append(abs(step) if count > 1 else 1)
            starts.append(low)
            out_shape.append(count)
            if count != n or (step < 0 and count > 1):
                identity = False
            axis += 1
        else:  # an int
            n = shape[axis]
            if type(n) is not int and k != 0:  # (0 is in every axis jax.export allows, and starts there)
                raise _SymbolicAxis
            if not -n <= k < n:
                raise _index_error(f"index {k} is out of bounds for axis {axis} with size {n}")
            spans.append(1)
            steps.append(1)
            starts.append(k % n if k < 0 else k)
            identity = False
            axis += 1
    for n in shape[axis:]:  # a missing ellipsis is implied at the end
        spans.append(n)
        steps.append(1)
        starts.append(0)
        out_shape.append(n)
    result_shape = tuple(out_shape)
    if identity:
        return BasicIndex(None, None, result_shape)
    plan = (tuple(spans), tuple(steps), tuple(reversed_axes), result_shape)
    if not any(starts):
        return BasicIndex(plan, None, result_shape)
    index_dtype = np.int32 if max(starts) < 2**31 else np.int64
    return BasicIndex(plan, np.array(starts, dtype=index_dtype), result_shape)


class _SymbolicAxis(Exception):
    """Raised by ``_parse_basic`` for a key that slices, or picks an element of, an axis whose
    size is symbolic: its starts cannot be NumPy integers."""


class SymbolicBasicIndex:
    """A basic index into an array that has an axis of symbolic size (jax.export's shape
    polymorphism), other than ``:`` or ``0`` along that axis (which ``BasicIndex`` takes).

    Such sizes exist only while a function is traced for export, so there is no kernel to
    cache: ``get`` and ``set`` are ``jax.numpy``'s indexing, which works out the symbolic bounds
    of slices as Python's slices clamp. An integer index along a symbolic axis must be decidably
    in bounds for every size the export allows (``-1``, and ``k < m`` for a size constrained to
    at least ``m``); any other is an error here, where ``jax.numpy`` would clamp it at run time.
    Like ``BasicIndex``, the result is a view.
    """

    __slots__ = ("key", "shape")

    def __init__(self, key: tuple[Any, ...], shape: tuple[Any, ...]):
        consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
        axis = 0
        for k in key:
            if k is Ellipsis:
                axis += len(shape) - consumed
            elif type(k) is slice:
                for part in (k.start, k.stop, k.step):
                    if part is not None and type(part) is not int:
                        raise _index_error(f"slice bounds must be integers or None, got {k!r}")
                if k.step == 0:
                    raise _index_error(f"slice step cannot be zero (in {k!r})")
                axis += 1
            elif type(k) is int:
                n = shape[axis]
                try:
                    inside = bool(-n <= k) and bool(k < n)
                except jax.errors.InconclusiveDimensionOperation:
                    raise ArgumentError(
                        NotImplementedError,
                        f"index {k} may be out of bounds for axis {axis}, whose size {n} is symbolic "
                        "(jax.export shape polymorphism): export with a constraint that decides it "
                        f"(jax.export.symbolic_shape(..., constraints=...)), or index with an integer array (xp.take)",
                    ) from None
                if not inside:
                    raise _index_error(f"index {k} is out of bounds for axis {axis} with size {n}")
                axis += 1
        self.key = key
        self.shape = tuple(jax.eval_shape(lambda v: v[key], jax.ShapeDtypeStruct(shape, np.float32)).shape)

    def get(self, value: Any) -> Any:
        return value[self.key]

    def set(self, value: Any, update: Any) -> Any:
        return value.at[self.key].set(jnp.broadcast_to(update.astype(value.dtype), self.shape))


# --- parsing --------------------------------------------------------------------------------


def parse(
    key: Any, shape: tuple[int, ...], where: str = "xp.Array.__getitem__"
) -> BasicIndex | SymbolicBasicIndex | AdvancedIndex:
    """Parse ``key`` for an array of ``shape``: validate it and pick basic or advanced indexing.
    ``where`` (the public name of the caller) names the checks of checked mode."""
    if type(key) is not tuple:
        key = (key,)
    signature = _plain_signature(key)
    if signature is not None:
        parsed = _PARSED.get((signature, shape))
        if parsed is not None:
            parsed.reused = True
            return parsed
    elif len(key) == 1 and type(key[0]) is Array and shape and key[0]._value.dtype != dt.bool:
        return AdvancedIndex(key, shape, where)  # a sole integer array, the usual x[i]: as below
    ndim = len(shape)
    consumed = 0
    ellipses = 0
    advanced = False
    normalized: list[Any] = []
    for k in key:
        kind = type(k)
        if kind is int or kind is slice:
            consumed += 1
        elif k is None:
            pass
        elif k is Ellipsis:
            ellipses += 1
        elif kind is bool or isinstance(k, np.bool_):
            advanced = True
            k = np.asarray(k)
        elif isinstance(k, np.integer):
            k = int(k)
            consumed += 1
        elif isinstance(k, _ARRAY_INDEX_TYPES):
            advanced = True
            consumed += k.ndim if k.dtype == dt.bool else 1
        elif isinstance(k, (list, tuple)):
            raise _index_error(
                f"{type(k).__name__}s are not valid indices (convert to an integer array with xp.asarray)"
            )
        else:
            raise _index_error(
                f"only integers, slices, ..., None and integer or boolean arrays are valid indices, got {describe(k)}"
            )
        normalized.append(k)
    if ellipses > 1:
        raise _index_error("an index can only have a single ellipsis (...)")
    if consumed > ndim:
        raise _index_error(f"too many indices for an array of {ndim} dimensions: {consumed} were given")
    if not advanced:
        try:
            basic = _parse_basic(tuple(normalized), shape)
        except _SymbolicAxis:
            return SymbolicBasicIndex(tuple(normalized), shape)
        if signature is not None and len(_PARSED) < 4096 and all(type(n) is int for n in shape):
            if basic.starts is not None:
                basic.starts.flags.writeable = False
            _PARSED[signature, shape] = basic
        return basic
    return AdvancedIndex(tuple(normalized), shape, where)


# Parsed plain keys, by (signature, shape of the indexed array): x[1:5], x[:, 0], x[..., -1]
# written in a function are parsed once (2.4 µs of a 11 µs eager x[1:5] before). Only the first
# 4096 kept, as the element-wise functions' converted scalars; symbolic shapes (jax.export) never.
_PARSED: dict[tuple[Any, ...], BasicIndex] = {}


def _plain_signature(key: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """A hashable form of a key of Python ints, ``None``, ``...`` and slices of Python ints and
    None, equal for keys that parse alike; None for any other key (arrays, NumPy integers,
    bools, floats: checked and converted by ``parse`` each time)."""
    parts: list[Any] = []
    for k in key:
        kind = type(k)
        if kind is int or k is None or k is Ellipsis:
            parts.append(k)
        elif kind is slice:
            start, stop, step = k.start, k.stop, k.step
            if not (
                (start is None or type(start) is int)
                and (stop is None or type(stop) is int)
                and (step is None or type(step) is int)
            ):
                return None
            parts.append((start, stop, step))
        else:
            return None
    return tuple(parts)


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
        if len(key) == 1 and _dtype_of(key[0]) == dt.bool and isinstance(key[0], _ARRAY_INDEX_TYPES):
            self.mask = _as_jax_index(key[0])
            mask_shape = tuple(self.mask.shape)
            if len(mask_shape) > len(shape) or any(m != n and m != 0 for m, n in zip(mask_shape, shape, strict=False)):
                raise _index_error(
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
                        raise _index_error("a 0-d boolean index must be the only index")
                    structure.append(("select", bool(host)))
                    continue
                for i, n in enumerate(host.shape):
                    if n != self.shape[axis + i] and n != 0:
                        raise _index_error(
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
            raise _index_error(f"index arrays must have an integer or boolean dtype, got {dtype}")
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
    if low < -n or high >= n:
        bad = low if low < -n else high
        raise _index_error(f"index {bad} is out of bounds for axis {axis} with size {n}")


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
    GPU) one kernel computes both and two numbers come back."""
    if _in_host_memory(index.sharding):
        host = np.asarray(index)
        if host.size <= 32:  # Python's min and max of a short list: 0.4 µs, NumPy's two reductions 2
            values = host.ravel().tolist()
            return min(values), max(values)
        return int(host.min()), int(host.max())  # in the index dtype: uint64 stays exact
    with on_constants():
        low, high = np.asarray(_min_max(index)).tolist()
    return int(low), int(high)


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
