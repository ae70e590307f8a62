"""Indexing: ``x[key]`` and ``x[key] = value``.

A key is parsed once, in Python (:func:`parse`), into one of three forms:

- :class:`BasicIndex` (integers, slices, ``...``, ``None``): a static plan (window sizes,
  strides, reversed axes, result shape) and dynamic start offsets. Starts are passed to the
  jitted kernel as data, so ``x[i]`` in a loop compiles once, not once per ``i``. Its result
  is a *view*: writing into it writes into the indexed array (see ``Array._assign``).
- :class:`SymbolicBasicIndex`: the same keys along an axis whose size ``jax.export`` leaves
  symbolic, where the starts are not numbers yet.
- ``AdvancedIndex`` (integer and boolean arrays): ``xp._indexing_advanced``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _dtypes as dt
from xp._array import Array, JaxArrayImpl
from xp._errors import describe
from xp._indexing_advanced import ARRAY_INDEX_TYPES, AdvancedIndex, check_decided, index_error
from xp._jit import Tracer, kernel
from xp._resharding import explicit_sharding

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
                raise index_error(f"slice bounds must be integers or None, got {k!r}") from None
            except ValueError as e:
                raise index_error(f"{e} (in {k!r})") from None
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
                raise index_error(f"index {k} is out of bounds for axis {axis} with size {n}")
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
                        raise index_error(f"slice bounds must be integers or None, got {k!r}")
                if k.step == 0:
                    raise index_error(f"slice step cannot be zero (in {k!r})")
                axis += 1
            elif type(k) is int:
                n = shape[axis]
                check_decided(k, k, n, axis)
                if not (-n <= k < n):
                    raise index_error(f"index {k} is out of bounds for axis {axis} with size {n}")
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
        elif isinstance(k, ARRAY_INDEX_TYPES):
            advanced = True
            consumed += k.ndim if k.dtype == dt.bool else 1
        elif isinstance(k, (list, tuple)):
            raise index_error(
                f"{type(k).__name__}s are not valid indices (convert to an integer array with xp.asarray)"
            )
        else:
            raise index_error(
                f"only integers, slices, ..., None and integer or boolean arrays are valid indices, got {describe(k)}"
            )
        normalized.append(k)
    if ellipses > 1:
        raise index_error("an index can only have a single ellipsis (...)")
    if consumed > ndim:
        raise index_error(f"too many indices for an array of {ndim} dimensions: {consumed} were given")
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
# written in a function are parsed once (parsing was a fifth of an eager x[1:5]). Only the first
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
