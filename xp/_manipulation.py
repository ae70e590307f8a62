"""Manipulation functions (the standard's "Manipulation Functions" chapter).

Views, with NumPy's semantics: ``reshape`` (unless ``copy=True``), ``permute_dims``,
``moveaxis``, ``expand_dims``, ``squeeze``, ``flip``, ``unstack`` and the transposes ``x.T`` and
``x.mT`` return arrays linked to their input by a layout (see ``xp._array.view``): writing into
the result writes into the input, and writing into the input refreshes the result. Each layout's
``get`` and ``set`` is one jitted kernel with static shapes and axes, so the link works eagerly
and under ``jax.jit`` and ``jax.vmap`` alike. ``broadcast_to``, ``broadcast_arrays``, ``concat``,
``stack``, ``tile``, ``repeat`` and ``roll`` return new arrays.

Shapes and axes are static arguments of the kernels; the shifts of ``roll`` and the counts of
``repeat`` (as an array) are data, so a loop over shifts compiles once.
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
from xp import _views as views
from xp._array import Array, link, wrap
from xp._errors import ArgumentError, AxisError, DataDependentShapeError, describe, fail
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._typing import ArrayLike

# --- kernels --------------------------------------------------------------------------------


@functools.partial(kernel, static_argnames="axis")
def _unstack(x: Any, axis: int) -> tuple[Any, ...]:
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


@functools.partial(kernel, static_argnames="shape")
def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    return jnp.broadcast_to(x, shape)


@functools.partial(kernel, static_argnames="shape")
def _broadcast_all(values: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(v if v.shape == shape else jnp.broadcast_to(v, shape) for v in values)


def _promoted(values: tuple[Any, ...]) -> np.dtype:
    """The promoted dtype of ``arrays`` (a trace-time check)."""
    try:
        dtype = dt.promote_all(v.dtype for v in values)
    except dt.PromotionError as e:
        fail(TypeError, f"arrays cannot be joined: {e}")
    if not dt.is_available(dtype):
        fail(TypeError, f"arrays promote to {dtype}: {dt.unavailable_message(dtype, narrowable=False)}")
    return dtype


@functools.partial(kernel, static_argnums=1)  # axis
def _concat(values: tuple[Any, ...], axis: int | None) -> Any:
    dtype = _promoted(values)
    if axis is None:
        values = tuple(v.reshape(-1) for v in values)
        axis = 0
    else:
        first = values[0].shape
        for i, v in enumerate(values):
            if v.ndim != len(first):
                fail(ValueError, f"arrays must have the same number of dimensions, got shapes {first} "
                       f"(arrays[0]) and {v.shape} (arrays[{i}])")  # fmt: skip
            if v.shape[:axis] != first[:axis] or v.shape[axis + 1 :] != first[axis + 1 :]:
                fail(ValueError, f"arrays must have the same shape except along axis {axis}, got shapes "
                       f"{first} (arrays[0]) and {v.shape} (arrays[{i}])")  # fmt: skip
    return lax.concatenate([v.astype(dtype) for v in values], axis)


@functools.partial(kernel, static_argnums=1)  # axis
def _stack(values: tuple[Any, ...], axis: int) -> Any:
    dtype = _promoted(values)
    first = values[0].shape
    for i, v in enumerate(values):
        if v.shape != first:
            fail(ValueError, f"arrays must all have the same shape, got shapes {first} (arrays[0]) and "
                   f"{v.shape} (arrays[{i}])")  # fmt: skip
    return lax.concatenate([lax.expand_dims(v.astype(dtype), (axis,)) for v in values], axis)


@functools.partial(kernel, static_argnames="repetitions")
def _tile(x: Any, repetitions: tuple[int, ...]) -> Any:
    return jnp.tile(x, repetitions)


@functools.partial(kernel, static_argnames=("repeats", "axis"))
def _repeat_int(x: Any, repeats: int, axis: int | None) -> Any:
    return jnp.repeat(x, repeats, axis=axis, total_repeat_length=None)


@functools.partial(kernel, static_argnames=("axis", "total"))
def _repeat_counts(x: Any, counts: Any, axis: int | None, total: int) -> Any:
    return jnp.repeat(x, counts, axis=axis, total_repeat_length=total)


@functools.partial(kernel, static_argnames="axes")
def _roll(x: Any, shifts: Any, axes: tuple[int, ...] | None) -> Any:
    """Roll by ``shifts`` (a 1-d integer array, each in ``[0, n)``) along ``axes`` (None: flattened)."""
    value = x.reshape(-1) if axes is None else x
    for i, axis in enumerate((0,) if axes is None else axes):
        n = value.shape[axis]
        doubled = lax.concatenate((value, value), axis)
        value = lax.dynamic_slice_in_dim(doubled, n - shifts[i], n, axis)
    return value.reshape(x.shape)


def _shift_array(shifts: list[int]) -> np.ndarray:
    """Shifts as one host array (one transfer per call; a tuple of ints would be one each)."""
    return np.array(shifts, dtype=np.int32 if max(shifts) < 2**31 else np.int64)


# --- broadcasting ---------------------------------------------------------------------------


def _broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The broadcast shape of ``shapes``, those of ``arrays[0]``, ``arrays[1]``, ..."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    ndim = max(len(s) for s in shapes)
    result = []
    for axis in range(-ndim, 0):
        size = 1
        for s in shapes:
            n = s[axis] if -axis <= len(s) else 1
            if n != 1:
                if size != 1 and n != size:
                    described = ", ".join(f"arrays[{i}] {s}" for i, s in enumerate(shapes))
                    fail(ValueError, f"shapes cannot be broadcast together (axis {axis} has sizes {size} and "
                           f"{n}): {described}")  # fmt: skip
                size = n
        result.append(size)
    return tuple(result)


@api
def broadcast_arrays(*arrays: ArrayLike) -> tuple[Array, ...]:
    """Broadcast one or more arrays against one another; a tuple of new arrays of one shape.

    Each result keeps the dtype of its input.
    """
    values = [boundary.array(a, f"arrays[{i}]") for i, a in enumerate(arrays)]
    if not values:
        return ()
    shape = _broadcast_shape([tuple(v.shape) for v in values])
    if all(v.shape == shape for v in values) and all(isinstance(a, (Array, jax.Array)) for a in arrays):
        return tuple(wrap(v) for v in values)
    # (host data, a Python scalar or a NumPy array, goes through the kernel too: it then comes
    # back where the arrays are, as in the element-wise functions, not on the default device)
    return tuple(wrap(v) for v in _broadcast_all(tuple(values), shape))


@api
def broadcast_shapes(*shapes: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """The shape that ``shapes`` broadcast to (``()`` for no shapes).

    A size of ``None`` (unknown) is propagated: the result has ``None`` where any shape has.
    Incompatible shapes raise ValueError.
    """
    checked = [_shape_with_unknowns(s, f"shapes[{i}]") for i, s in enumerate(shapes)]
    if not checked:
        return ()
    ndim = max(len(s) for s in checked)
    result: list[int | None] = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in checked if -axis <= len(s)}
        unknown = None in sizes
        known = {n for n in sizes if n is not None and n != 1}
        if len(known) > 1:
            described = ", ".join(str(s) for s in checked)
            fail(ValueError, f"shapes cannot be broadcast together (axis {axis} has sizes "
                   f"{', '.join(map(str, sorted(known)))}): {described}")  # fmt: skip
        result.append(None if unknown else known.pop() if known else 1)
    return tuple(result)


def _shape_with_unknowns(value: Any, param: str) -> tuple[int | None, ...]:
    if not isinstance(value, (tuple, list)):
        fail(TypeError, f"{param} must be a tuple of ints (or None for an unknown size), got {describe(value)}")
    return tuple(None if n is None else boundary.non_negative(n, f"{param}[{i}]") for i, n in enumerate(value))


@api
def broadcast_to(x: ArrayLike, /, shape: tuple[int, ...]) -> Array:
    """``x`` broadcast to ``shape``: a new array (not a view) with the dtype of ``x``."""
    value = boundary.array(x, "x")
    target = boundary.shape(shape, "shape")
    source = value.shape
    if len(source) > len(target) or not all(
        s == 1 or s == t for s, t in zip(reversed(source), reversed(target), strict=False)
    ):
        fail(ValueError, f"x of shape {tuple(source)} cannot be broadcast to shape {target} (each axis of x must "
               f"have size 1 or the size of the matching trailing axis of shape)")  # fmt: skip
    if source == target:
        return wrap(value)
    return wrap(_broadcast_to(value, boundary.allocation(target, value.dtype)))


# --- joining and splitting ------------------------------------------------------------------


def _arrays(arrays: Any) -> tuple[Any, ...]:
    if not isinstance(arrays, (tuple, list)):
        fail(TypeError, f"arrays must be a tuple or list of arrays, got {describe(arrays)}")
    if not arrays:
        fail(ValueError, "arrays must hold at least one array, got an empty sequence")
    # (xp arrays read directly: naming each parameter, "arrays[i]", cost more than the rest of the
    # check; 0.65 µs of an eager concat of two arrays)
    return tuple([a._value if type(a) is Array else boundary.array(a, f"arrays[{i}]") for i, a in enumerate(arrays)])


@api
def concat(arrays: tuple[ArrayLike, ...] | list[ArrayLike], /, *, axis: int | None = 0) -> Array:
    """Join arrays along an existing axis (``axis=None``: the flattened arrays).

    The result's dtype is the promoted dtype of the inputs (xp's promotion rules: across kinds,
    the higher kind wins; uint64 with a signed integer is a TypeError).
    """
    values = _arrays(arrays)
    if axis is None:
        return wrap(_concat(values, None))
    ndim = values[0].ndim
    if ndim == 0:
        fail(ValueError, "0-d arrays cannot be joined along an axis (use axis=None, or stack)")
    return wrap(_concat(values, boundary.axis(axis, ndim)))


@api
def stack(arrays: tuple[ArrayLike, ...] | list[ArrayLike], /, *, axis: int = 0) -> Array:
    """Join arrays of one shape along a new axis, at position ``axis`` of the result.

    ``axis`` is in ``[-N-1, N]`` for ``N``-dimensional arrays; the dtype is promoted as in concat.
    """
    values = _arrays(arrays)
    ndim = values[0].ndim + 1
    index = boundary.integer(axis, "axis")
    if not -ndim <= index < ndim:
        fail(AxisError, f"axis={index} is out of bounds for stacking {ndim - 1}-dimensional arrays "
               f"(must be in [{-ndim}, {ndim - 1}])")  # fmt: skip
    return wrap(_stack(values, index % ndim))


@api
def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays; each is a view of ``x`` (writes go through)."""
    value = boundary.array(x, "x")
    if value.ndim == 0:
        fail(ValueError, "x must have at least one dimension, got a 0-d array")
    index = boundary.axis(axis, value.ndim)
    if value.shape[index] == 0:
        return ()
    parts = _unstack(value, index)
    if type(x) is not Array:
        return tuple(wrap(p) for p in parts)
    results = []
    for i, part in enumerate(parts):
        result = wrap(part)
        link(x, result, views.Unstacked(index, i))
        results.append(result)
    return tuple(results)


@api
def tile(x: ArrayLike, repetitions: tuple[int, ...], /) -> Array:
    """``x`` repeated ``repetitions[i]`` times along each axis ``i``.

    The shorter of ``x.shape`` and ``repetitions`` is padded with leading ones.
    """
    value = boundary.array(x, "x")
    reps = boundary.shape(repetitions, "repetitions")
    ndim = max(len(reps), value.ndim)
    sizes = (1,) * (ndim - value.ndim) + tuple(value.shape)
    factors = (1,) * (ndim - len(reps)) + reps
    boundary.allocation(tuple(n * r for n, r in zip(sizes, factors, strict=True)), value.dtype, None, "repetitions")
    return wrap(_tile(value, reps))


@api
def repeat(x: ArrayLike, repeats: int | ArrayLike, /, *, axis: int | None = None) -> Array:
    """Repeat each element of ``x`` (flattened when ``axis`` is None) ``repeats`` times.

    ``repeats`` is a non-negative int or an integer array of shape ``(1,)`` or ``(n,)`` (``n``
    elements along ``axis``). With an array of counts, the result's length depends on their
    values: they are read to the host (a device synchronisation), and under ``jax.jit`` a traced
    ``repeats`` array is an error (a DataDependentShapeError); pass a Python int where possible.
    """
    value = boundary.array(x, "x")
    if axis is None:
        index = None
        size = math.prod(value.shape)
    else:
        index = boundary.axis(axis, value.ndim)
        size = value.shape[index]
    if type(repeats) is int or isinstance(repeats, np.integer):
        count = boundary.non_negative(repeats, "repeats")
        boundary.allocation(_repeated(value.shape, index, size * count), value.dtype, None, "repeats")
        return wrap(_repeat_int(value, count, index))
    if isinstance(repeats, (bool, np.bool_)) or type(repeats) in boundary.PY_SCALARS:
        fail(TypeError, f"repeats must be an int or an integer array, got {describe(repeats)}")
    counts = boundary.array(repeats, "repeats")
    if counts.dtype not in dt.INTEGER:
        fail(TypeError, f"repeats must have an integer dtype, got {counts.dtype}")
    if counts.ndim > 1 or (counts.ndim == 1 and counts.shape[0] not in (1, size)):
        fail(ValueError, f"repeats must have shape (1,) or ({size},) (the number of elements "
               f"{'of x' if axis is None else 'along axis'}), got {tuple(counts.shape)}")  # fmt: skip
    if isinstance(repeats, (np.ndarray, np.generic)):
        host = np.asarray(repeats)  # known on the host, even under a trace
    elif isinstance(counts, Tracer):
        fail(DataDependentShapeError, "repeats is a traced array, so the length of the result depends on "
               "its values, which jax.jit cannot trace; pass repeats as a Python int or a NumPy array, or "
               "call repeat eagerly")  # fmt: skip
    else:
        host = np.asarray(counts)
    if host.size and host.min() < 0:
        fail(ValueError, f"repeats must be non-negative, got {int(host.min())}")
    total = size * int(host.reshape(())) if host.size == 1 else int(host.sum(dtype=np.uint64))
    boundary.allocation(_repeated(value.shape, index, total), value.dtype, None, "repeats")
    if host.size == 1:
        return wrap(_repeat_int(value, int(host.reshape(())), index))
    return wrap(_repeat_counts(value, counts, index, total))


def _repeated(shape: tuple[int, ...], axis: int | None, length: int) -> tuple[int, ...]:
    """The shape of ``repeat``'s result: ``length`` elements along ``axis`` (None: flattened)."""
    return (length,) if axis is None else (*shape[:axis], length, *shape[axis + 1 :])


@api
def roll(x: ArrayLike, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x`` with its elements shifted by ``shift`` along ``axis``, wrapping around.

    ``axis=None`` rolls the flattened array (``shift`` must then be an int). An int ``shift``
    with a tuple ``axis`` shifts every axis by it; a tuple ``shift`` needs a tuple ``axis`` of
    its length. A repeated axis is shifted by the sum of its shifts, as in NumPy. The result is
    a new array.
    """
    value = boundary.array(x, "x")
    shape = value.shape
    if axis is None:
        if isinstance(shift, (tuple, list)):
            fail(TypeError, f"shift must be an int when axis is None, got {describe(shift)} (pass axis as a tuple)")
        if any(boundary.symbolic(n) for n in shape):
            return wrap(jnp.roll(value, boundary.integer(shift, "shift")))  # (see below)
        size = math.prod(shape)
        amount = boundary.integer(shift, "shift") % size if size else 0
        if amount == 0:
            return wrap(value)
        return wrap(_roll(value, _shift_array([amount]), None))  # axes=None: the flattened array
    if isinstance(axis, (tuple, list)):
        axes = tuple(boundary.axis(a, value.ndim, f"axis[{i}]") for i, a in enumerate(axis))
    else:
        axes = (boundary.axis(axis, value.ndim),)
    if isinstance(shift, (tuple, list)):
        shifts = tuple(boundary.integer(s, f"shift[{i}]") for i, s in enumerate(shift))
        if len(shifts) != len(axes):
            fail(ValueError, f"shift and axis must have the same length, got shift={tuple(shift)} and "
                   f"axis={axis if isinstance(axis, int) else tuple(axis)}")  # fmt: skip
    else:
        shifts = (boundary.integer(shift, "shift"),) * len(axes)
    total: dict[int, int] = {}
    for a, s in zip(axes, shifts, strict=True):
        total[a] = total.get(a, 0) + s
    if any(boundary.symbolic(shape[a]) for a in total):
        # a size jax.export leaves symbolic (x is traced): jax.numpy's roll reduces the shifts
        # modulo the sizes in the computation
        return wrap(jnp.roll(value, tuple(total.values()), tuple(total)))
    moved = {a: s % shape[a] for a, s in total.items() if shape[a] and s % shape[a]}
    if not moved:
        return wrap(value)
    return wrap(_roll(value, _shift_array(list(moved.values())), tuple(moved)))


# --- views ----------------------------------------------------------------------------------


def _target_shape(shape: Any, source: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` for an array of shape ``source``: ints, at most one -1 (inferred)."""
    if type(shape) is tuple and _plain_ints(shape):
        # the common case, a tuple of Python ints, taken without the per-size conversions below
        # (they were 1.4 µs of an eager reshape's 7.5)
        dims = shape
        lowest = min(dims) if dims else 0
        if lowest >= 0:
            return _same_size(dims, source)
        if lowest == -1 and dims.count(-1) == 1:
            size, known = math.prod(source), -math.prod(dims)
            if known and not size % known:
                if len(dims) == 1:
                    return (size // known,)
                i = dims.index(-1)
                return (*dims[:i], size // known, *dims[i + 1 :])
    elif isinstance(shape, (tuple, list)):
        # (a size jax.export leaves symbolic is one: see boundary.size)
        dims = tuple(n if boundary.symbolic(n) else boundary.integer(n, f"shape[{i}]") for i, n in enumerate(shape))
    else:
        try:
            dims = (boundary.integer(shape, "shape"),)
        except ArgumentError:
            fail(TypeError, f"shape must be a tuple of ints, got {describe(shape)}")
    negative = [i for i, n in enumerate(dims) if n < 0]
    for i in negative:
        if dims[i] != -1:
            fail(ValueError, f"shape[{i}]={dims[i]}: sizes must be non-negative, or -1 for one inferred size")
    if len(negative) > 1:
        fail(ValueError, f"shape {dims} has more than one -1 (only one size can be inferred)")
    if negative:
        size = math.prod(source)
        known = -math.prod(dims)
        if known == 0 or size % known:
            fail(ValueError, f"cannot reshape an array of shape {tuple(source)} (size {size}) to shape {dims}")
        i = negative[0]
        return (*dims[:i], size // known, *dims[i + 1 :])
    return _same_size(dims, source)


def _plain_ints(shape: tuple[Any, ...]) -> bool:
    for n in shape:  # noqa: SIM110 (a loop: a third of the time of all() over a generator, for a few sizes)
        if type(n) is not int:
            return False
    return True


def _same_size(dims: tuple[int, ...], source: tuple[int, ...]) -> tuple[int, ...]:
    if math.prod(dims) != math.prod(source):
        fail(ValueError, f"cannot reshape an array of shape {tuple(source)} (size {math.prod(source)}) to "
               f"shape {dims} (size {math.prod(dims)})")  # fmt: skip
    return dims


@api
def reshape(x: ArrayLike, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """``x`` with a new shape and the same elements in row-major order (one size may be -1).

    With ``copy=None`` or ``copy=False`` the result is a view of ``x`` that never copies
    (writes into it write into ``x``, as with NumPy's reshape views); every reshape can be a
    view here, so ``copy=False`` never raises. ``copy=True`` returns an independent array.
    """
    value = boundary.array(x, "x")
    copy = boundary.optional_boolean(copy, "copy")
    source = tuple(value.shape)
    target = _target_shape(shape, source)
    if copy:
        return wrap(views.Reshaped(target).get(value))
    return views.view_or_copy(x, value, views.IDENTITY if target == source else views.Reshaped(target))


@api
def expand_dims(x: ArrayLike, /, axis: int | tuple[int, ...]) -> Array:
    """``x`` with a new axis of size 1 at each position in ``axis`` (positions in the result).

    ``axis`` entries are in ``[-M, M)`` with ``M = x.ndim + len(axis)``; out-of-range entries
    raise IndexError (xp's AxisError, also a ValueError), repeated positions ValueError. The
    result is a view of ``x``.
    """
    value = boundary.array(x, "x")
    source = tuple(value.shape)
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    ndim = len(source) + len(items)
    positions = []
    for i, a in enumerate(items):
        name = f"axis[{i}]" if isinstance(axis, (tuple, list)) else "axis"
        n = boundary.integer(a, name)
        if not -ndim <= n < ndim:
            fail(AxisError, f"{name}={n} is out of bounds for inserting {len(items)} axes into a "
                   f"{len(source)}-dimensional array (must be in [{-ndim}, {ndim - 1}])")  # fmt: skip
        positions.append(n % ndim)
    if len(set(positions)) != len(positions):
        fail(ValueError, f"axis has repeated positions (after normalizing): {tuple(items)}")
    dims = iter(source)
    target = tuple(1 if i in positions else next(dims) for i in range(ndim))
    return views.view_or_copy(x, value, views.Reshaped(target) if positions else views.IDENTITY)


@api
def squeeze(x: ArrayLike, /, axis: int | tuple[int, ...]) -> Array:
    """``x`` without the axes ``axis``, which must have size 1 (else ValueError); a view of ``x``."""
    value = boundary.array(x, "x")
    if axis is None:
        fail(TypeError, "axis must be an int or a tuple of ints, got None (name the axes to remove)")
    source = tuple(value.shape)
    axes = boundary.axes(axis, len(source))
    for a in axes:
        if source[a] != 1:
            fail(ValueError, f"cannot remove axis {a} of size {source[a]} (only axes of size 1 can be "
                   f"squeezed); x has shape {source}")  # fmt: skip
    if not axes:
        return views.view_or_copy(x, value, views.IDENTITY)
    return views.view_or_copy(x, value, views.Reshaped(tuple(n for i, n in enumerate(source) if i not in axes)))


@api
def permute_dims(x: ArrayLike, /, axes: tuple[int, ...]) -> Array:
    """``x`` with its axes in the order ``axes`` (a permutation; negative axes count from the end).

    The result is a view of ``x``.
    """
    value = boundary.array(x, "x")
    ndim = value.ndim
    if not isinstance(axes, (tuple, list)):
        fail(TypeError, f"axes must be a tuple of ints, got {describe(axes)}")
    if len(axes) != ndim:
        fail(ValueError, f"axes must list each of the {ndim} axes of x once, got {tuple(axes)}")
    order = boundary.axes(axes, ndim, "axes")
    return views.view_or_copy(x, value, views.permutation(order))


@api
def moveaxis(x: ArrayLike, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """``x`` with the axes ``source`` moved to the positions ``destination``, the others in order.

    The result is a view of ``x``.
    """
    value = boundary.array(x, "x")
    ndim = value.ndim
    moved = _distinct_axes(source, ndim, "source")
    places = _distinct_axes(destination, ndim, "destination")
    if len(moved) != len(places):
        fail(ValueError, f"source and destination must name as many axes, got {len(moved)} and {len(places)}")
    order = [n for n in range(ndim) if n not in moved]
    for place, axis in sorted(zip(places, moved, strict=True)):
        order.insert(place, axis)
    return views.view_or_copy(x, value, views.permutation(tuple(order)))


def _distinct_axes(value: Any, ndim: int, param: str) -> tuple[int, ...]:
    if value is None:
        fail(TypeError, f"{param} must be an int or a tuple of ints, got None")
    return boundary.axes(value, ndim, param)


@api
def flip(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x`` with the order of its elements reversed along ``axis`` (None: every axis).

    The result is a view of ``x``.
    """
    value = boundary.array(x, "x")
    shape = value.shape
    # (an axis of one element reverses to itself; one of a symbolic size (jax.export) is reversed)
    axes = tuple(sorted(a for a in boundary.axes(axis, value.ndim) if boundary.symbolic(shape[a]) or shape[a] > 1))
    return views.view_or_copy(x, value, views.Flipped(axes) if axes else views.IDENTITY)
