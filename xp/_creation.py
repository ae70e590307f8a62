"""Creation functions (the standard's "Creation Functions" chapter).

Every function takes ``device=`` (a ``jax.Device`` or a ``jax.sharding.Sharding``), which is
honoured eagerly and under ``jax.jit``. Shapes, dtypes and other static arguments select a
cached jitted kernel; fill values are passed as data, so they never cause a recompilation.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Sequence
from typing import Any, Literal

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Sharding

from xp import _boundary as boundary
from xp import _devices, _narrowing
from xp import _dtypes as dt
from xp import _routing as routing
from xp._array import Array, view, wrap
from xp._errors import describe, fail
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._typing import ArrayLike, Device, DTypeLike
from xp._views import IDENTITY


def _finish(value: Any, device: Any) -> Array:
    return wrap(_devices.place(value, device))


def _from_host(host: np.ndarray, device: Any) -> Array:
    """Host data (already of its xp dtype) as an array on ``device``. Onto a sharding over several
    devices JAX splits it on the host and sends each device its own shard: the array is never
    whole on one device (through the default device, it would be)."""
    if isinstance(device, Sharding) and len(device.device_set) > 1:
        _devices.check_divisible(host.shape, device)
        value = jax.device_put(host, device)
        if not isinstance(value, Tracer):  # (under a trace: placed below, as any traced value)
            return wrap(value)
    return _finish(jnp.asarray(host), device)


# --- asarray and from_dlpack ----------------------------------------------------------------


@api
def asarray(
    obj: Any,
    /,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
    copy: bool | None = None,
) -> Array:
    """Convert ``obj`` to an array: xp, JAX and NumPy arrays, Python scalars, nested sequences
    of them, objects with ``__dlpack__`` and buffer-protocol objects.

    ``copy=None`` copies only when it must (an xp array is returned as is when nothing
    changes); ``copy=True`` always gives an independent array; ``copy=False`` raises
    ValueError when a copy would be needed. A Python scalar or sequence takes the default
    dtype of its kind; 64-bit input with JAX's 64-bit mode off is an error unless ``dtype``
    asks for a 32-bit type explicitly, or narrowing is on (``xp.narrow_64bit()``).
    """
    want = boundary.optional_dtype(dtype)
    target = boundary.device(device)
    copy = boundary.optional_boolean(copy, "copy")
    if isinstance(obj, Array):
        return _from_array(obj, want, target, copy)
    if isinstance(obj, (jax.Array, Tracer)):
        value = boundary.from_jax(obj, "obj")
        return _from_array(wrap(value), want, target, copy)
    if routing.is_sparse(obj):
        raise routing.SparseArgument
    if copy is False:
        fail(ValueError, f"copy=False, but a {type(obj).__name__} cannot be shared without a copy")
    if isinstance(obj, (np.ndarray, np.generic)):
        return _from_host(boundary.host_numpy(obj, want, "obj"), target)
    if type(obj) in boundary.PY_SCALARS:
        return _finish(boundary.scalar_array(obj, want or dt.default_dtype_of_scalar(type(obj)), "obj"), target)
    if isinstance(obj, (list, tuple)):
        return _from_host(_from_sequence(obj, want), target)
    if hasattr(obj, "__dlpack__"):
        if _holds_64_bits(obj):
            return _from_host(_from_64_bit_dlpack(obj, want, "obj", copy), target)
        return _from_array(wrap(_import_dlpack(obj, None, None)), want, target, None)
    if hasattr(obj, "__array__") or isinstance(obj, (bytes, bytearray, memoryview)) or hasattr(obj, "__buffer__"):
        try:
            host = np.asarray(obj) if not isinstance(obj, (bytes, bytearray)) else np.frombuffer(obj, np.uint8)
        except (TypeError, ValueError) as e:
            fail(TypeError, f"obj could not be converted to an array: {e}")
        return _from_host(boundary.host_numpy(host, want, "obj"), target)
    fail(TypeError, f"obj must be an array, a Python scalar or a nested sequence of them, got {describe(obj)}")


def _from_array(x: Array, dtype: np.dtype | None, device: Any, copy: bool | None) -> Array:
    value = x._value
    needs_cast = dtype is not None and dtype != value.dtype
    needs_move = not _devices.same_placement(value, device)
    if copy is False and (needs_cast or needs_move):
        fail(ValueError, "copy=False, but converting the array needs a copy "
               f"({'a dtype change' if needs_cast else 'a device transfer'})")  # fmt: skip
    if needs_cast:
        assert dtype is not None  # needs_cast says so
        if value.dtype.kind == "c" and dtype.kind != "c":
            fail(TypeError, f"cannot convert a complex array to {dtype} (take xp.real or xp.imag first)")
        value = _cast(value, dtype)
    if needs_move:
        value = _devices.place(value, device)
    if needs_cast or needs_move or copy:
        return wrap(value)
    return x


@functools.partial(kernel, static_argnums=1)  # dtype
def _cast(value: Any, dtype: np.dtype) -> Any:
    return value.astype(dtype)


def _from_sequence(obj: Sequence[Any], dtype: np.dtype | None) -> np.ndarray:
    """A nested sequence of Python scalars (or 0-d arrays) as the NumPy data of its array."""
    try:
        host = np.array(obj)
    except (ValueError, OverflowError) as e:
        fail(ValueError if isinstance(e, ValueError) else OverflowError, f"obj is not a regular nested sequence: {e}")
    if host.dtype.kind in "fO" and dtype is not None and dtype.kind in "iu":
        # NumPy turns Python ints beyond int64 into float64 (or objects); read them as integers
        host = _integers(obj, host, dtype)
    if host.dtype == object:
        fail(TypeError, "obj must be a nested sequence of Python scalars with one shape (some element is "
               "not a scalar, or an int does not fit in 64 bits)")  # fmt: skip
    inferred = {"b": dt.bool, "i": dt.default_int(), "u": dt.default_int(), "f": dt.default_float(),
                "c": dt.default_complex()}.get(host.dtype.kind)  # fmt: skip
    if inferred is None:
        fail(TypeError, f"obj holds elements of dtype {host.dtype}, which is not a numeric type")
    if host.dtype.kind in "iu" and dtype is None:
        _check_range(host, inferred)
    target = dtype or inferred
    if host.size and dt._ARRAY_KIND[host.dtype.kind] > dt._ARRAY_KIND[target.kind]:
        fail(TypeError, f"obj holds {(host.dtype.kind == 'c' and 'complex') or (host.dtype.kind == 'f' and 'float') or 'int'} "
               f"values, which {target} cannot hold")  # fmt: skip
    if target.kind in "iu" and host.dtype.kind in "iu":
        _check_range(host, target)
    if target.kind in "fc" and host.dtype.kind in "fc":  # a finite float must not become infinite
        return _narrowing.checked_cast(host, target, "obj", narrowing=False)
    return host.astype(target)


def _integers(obj: Sequence[Any], host: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``obj`` as exact integers of ``dtype`` if it holds only Python ints, else ``host``."""
    exact = np.array(obj, dtype=object)
    if exact.shape != host.shape or not all(type(e) is int or type(e) is builtins.bool for e in exact.flat):
        return host
    low, high = boundary.INTEGER_BOUNDS[dtype]
    if any(e < low or e > high for e in exact.flat):
        fail(OverflowError, f"obj holds integers out of bounds for {dtype}")
    return exact.astype(dtype)


def _check_range(host: np.ndarray, dtype: np.dtype) -> None:
    if host.size:
        low, high = boundary.INTEGER_BOUNDS[dtype]
        if host.min() < low or host.max() > high:
            fail(OverflowError, f"obj holds integers out of bounds for {dtype}")


def _holds_64_bits(x: Any) -> bool:
    """Whether ``x`` (with ``__dlpack__``) says it holds a 64-bit dtype that xp does not offer now
    (JAX's 64-bit mode off, or float64 on a TPU): JAX would import it truncated or emulated."""
    source = getattr(x, "dtype", None)
    return isinstance(source, np.dtype) and source in dt.unavailable()


def _from_64_bit_dlpack(x: Any, dtype: np.dtype | None, param: str, copy: bool | None) -> np.ndarray:
    """64-bit DLPack data with JAX's 64-bit mode off, read on the host and converted as NumPy data
    is: to ``dtype`` if given (checked), narrowed under ``xp.narrow_64bit()``, else an error."""
    source = x.dtype
    if dtype is None and _narrowing.source() is None:
        fail(TypeError, f"{param} has dtype {source}: {dt.unavailable_message(source)}")
    if copy is False:
        fail(ValueError, f"copy=False, but {param} has dtype {source}, which must be converted (a copy) "
               f"because {source} is not available here")  # fmt: skip
    try:
        host = np.from_dlpack(x)
    except (TypeError, BufferError, RuntimeError, ValueError) as e:
        fail(TypeError, f"{param} has dtype {source}, which is not available here, and NumPy "
               f"could not read it to convert it: {e}")  # fmt: skip
    return boundary.host_numpy(host, dtype, param)


def _import_dlpack(obj: Any, device: Any, copy: bool | None) -> Any:
    try:
        value = jax.dlpack.from_dlpack(obj, device=device, copy=copy)
    except (TypeError, BufferError, RuntimeError, ValueError) as e:
        fail(BufferError if isinstance(e, BufferError) else ValueError, f"x could not be imported with DLPack: {e}")
    return boundary.from_jax(value, "x")


@api
def from_dlpack(x: Any, /, *, device: Device | None = None, copy: bool | None = None) -> Array:
    """An array sharing memory with ``x`` (any object with ``__dlpack__``) where possible.

    For an xp array on the same device, sharing memory means what it means for a NumPy array
    (whose ``from_dlpack`` is a view): unless ``copy=True``, the result is a view of ``x``, so
    writes into either reach the other, eagerly and under ``jax.jit``; with ``copy=True`` it is
    independent. (JAX's own import would give an unlinked wrapper, and fails on a traced value.)
    From any other producer, ``copy=False`` shares its buffer for reading, but a write into the
    result does not reach the producer: JAX buffers are immutable, so xp writes into a new buffer.
    """
    target = boundary.device(device)
    copy = boundary.optional_boolean(copy, "copy")
    if isinstance(x, Array):
        if target is None or target == x.device:
            return wrap(x._value) if copy else view(x, IDENTITY)
        x = x._value
    if not hasattr(x, "__dlpack__"):
        fail(TypeError, f"x must support the DLPack protocol (__dlpack__), got {describe(x)}")
    if _holds_64_bits(x):  # an error, or narrowed under xp.narrow_64bit()
        return _from_host(_from_64_bit_dlpack(x, None, "x", copy), target)
    if isinstance(target, _devices.TracedDevice):
        target = None
    if isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer):
        # JAX's own arrays need no capsule, which DLPack cannot make for TPU memory
        return _from_array(wrap(boundary.from_jax(x, "x")), None, target, copy)
    return wrap(_import_dlpack(x, target, copy))


# --- filled arrays --------------------------------------------------------------------------


@functools.partial(kernel, static_argnums=(1, 2))  # shape, dtype
def _filled(fill: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return jnp.broadcast_to(fill.astype(dtype), shape)


@functools.partial(kernel, static_argnums=(0, 1, 2))
def _constant(shape: tuple[int, ...], dtype: np.dtype, value: int) -> Any:
    return jnp.full(shape, value, dtype)


@functools.partial(kernel, static_argnums=(1, 2))  # dtype, value
def _constant_like(x: Any, dtype: np.dtype, value: int) -> Any:
    return jnp.full(x.shape, value, dtype)


def _sized(shape: Any, dtype: np.dtype, device: Any) -> tuple[int, ...]:
    """The ``shape`` argument, checked, for an array of ``dtype`` on ``device`` (see boundary.allocation)."""
    return boundary.allocation(boundary.shape(shape), dtype, device)


def _dtype_or_default(dtype: DTypeLike | None) -> np.dtype:
    return dt.default_float() if dtype is None else boundary.dtype(dtype)


@api
def zeros(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """An array of ``shape`` filled with zeros (default dtype: the default floating dtype)."""
    want, place = _dtype_or_default(dtype), boundary.device(device)
    return wrap(_devices.build(_constant, place, (), (_sized(shape, want, place), want, 0)))


@api
def ones(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """An array of ``shape`` filled with ones (default dtype: the default floating dtype)."""
    want, place = _dtype_or_default(dtype), boundary.device(device)
    return wrap(_devices.build(_constant, place, (), (_sized(shape, want, place), want, 1)))


@api
def empty(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """An uninitialized array of ``shape``. JAX has no uninitialized memory: it holds zeros."""
    want, place = _dtype_or_default(dtype), boundary.device(device)
    return wrap(_devices.build(_constant, place, (), (_sized(shape, want, place), want, 0)))


def _like(x: ArrayLike, dtype: DTypeLike | None, device: Device | None, value: int) -> Array:
    source = boundary.array(x, "x")
    want = source.dtype if dtype is None else boundary.dtype(dtype)
    return _placed_like(_constant_like(source, want, value), source, boundary.device(device))


def _placed_like(value: Any, source: Any, device: Any) -> Array:
    """The result of a ``*_like`` function: on ``device``, else where ``source`` is. (It does not
    depend on the data of ``source``, so JAX alone would put it on the default device.)"""
    if device is not None:
        return _finish(value, device)
    if isinstance(source, Tracer):
        return wrap(_traced_like(value, source))
    return _finish(value, _devices.device_of(source))


@kernel
def _traced_like(value: Any, source: Any) -> Any:
    """``value`` (of ``source``'s shape) placed, in a traced function, as ``source`` is, as far as
    the trace knows: over Explicit mesh axes the sharding is part of ``source``'s type, and the
    select gives it to the result; and reading ``source`` keeps it an input of the function (jit
    drops the inputs it does not read, so a function returning only ``zeros_like(x)`` would run on
    one device, not on ``x``'s mesh). The predicate is constant False: XLA folds the select away.
    Over Auto axes the compiler places the result (replicated over the mesh, unless its uses say
    otherwise): the trace does not know ``source``'s sharding."""
    never = (source != source) & False
    return lax.select(never, lax.full_like(source, 0, value.dtype), value)


@api
def zeros_like(x: ArrayLike, /, *, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """Zeros with the shape (and by default the dtype and device) of ``x``."""
    return _like(x, dtype, device, 0)


@api
def ones_like(x: ArrayLike, /, *, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """Ones with the shape (and by default the dtype and device) of ``x``."""
    return _like(x, dtype, device, 1)


@api
def empty_like(x: ArrayLike, /, *, dtype: DTypeLike | None = None, device: Device | None = None) -> Array:
    """An array with the shape (and by default the dtype and device) of ``x``, holding zeros."""
    return _like(x, dtype, device, 0)


def _fill_value(fill_value: Any, dtype: np.dtype | None) -> tuple[Any, np.dtype]:
    """A fill value as a 0-d jax array, and the dtype of the result."""
    if type(fill_value) in boundary.PY_SCALARS:
        want = dtype or dt.default_dtype_of_scalar(type(fill_value))
        if isinstance(fill_value, complex) or want.kind == "c":
            return boundary.scalar_constant(fill_value, want, "fill_value"), want
        return boundary.scalar_array(fill_value, want, "fill_value"), want
    value = boundary.array(fill_value, "fill_value")
    if value.ndim != 0:
        fail(ValueError, f"fill_value must be a scalar or a 0-d array, got shape {tuple(value.shape)}")
    want = dtype or value.dtype
    if dt._ARRAY_KIND[value.dtype.kind] > dt._ARRAY_KIND[want.kind]:
        fail(TypeError, f"fill_value has dtype {value.dtype}, which {want} cannot hold")
    return value, want


@api
def full(
    shape: int | tuple[int, ...],
    fill_value: bool | int | float | complex,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> Array:
    """An array of ``shape`` filled with ``fill_value`` (default dtype: that of its kind)."""
    size = boundary.shape(shape)
    fill, want = _fill_value(fill_value, boundary.optional_dtype(dtype))
    place = boundary.device(device)
    return wrap(_devices.build(_filled, place, (fill,), (boundary.allocation(size, want, place), want)))


@api
def full_like(
    x: ArrayLike,
    /,
    fill_value: bool | int | float | complex,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> Array:
    """``fill_value`` in the shape (and by default the dtype and device) of ``x``."""
    source = boundary.array(x, "x")
    want = source.dtype if dtype is None else boundary.dtype(dtype)
    fill, want = _fill_value(fill_value, want)
    return _placed_like(_filled(fill, tuple(source.shape), want), source, boundary.device(device))


# --- ranges and grids -----------------------------------------------------------------------


@api
def arange(
    start: int | float,
    /,
    stop: int | float | None = None,
    step: int | float = 1,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` when ``stop`` is None)."""
    if boundary.symbolic(start) or boundary.symbolic(stop):
        return _symbolic_arange(start, stop, step, dtype, device)
    start = boundary.real_scalar(start, "start")
    if stop is None:
        start, stop = 0, start
    else:
        stop = boundary.real_scalar(stop, "stop")
    step = boundary.real_scalar(step, "step")
    if step == 0:
        fail(ValueError, "step must not be zero")
    scalars = (start, stop, step)
    if dtype is None:
        want = dt.default_int() if all(isinstance(v, (int, np.integer)) for v in scalars) else dt.default_float()
    else:
        want = boundary.dtype(dtype)
        if want.kind == "b" or want.kind == "c":
            fail(TypeError, f"dtype must be a real numeric dtype, got {want}")
    for v, name in zip(scalars, ("start", "stop", "step"), strict=True):
        if not math.isfinite(v):
            fail(ValueError, f"{name}={v} is not finite: the range from start={start} to stop={stop} by "
                   f"step={step} has no finite length")  # fmt: skip
    length = max(0, math.ceil((stop - start) / step))
    place = boundary.device(device)
    boundary.allocation((length,), want, place, "stop")
    if length <= 1:
        step = 1  # a range of one value does not use its step, which may be beyond every dtype
    if want.kind in "iu":
        for v, name in zip(scalars, ("start", "stop", "step"), strict=True):
            if not float(v).is_integer():
                fail(TypeError, f"{name}={v} is not an integer, but dtype is {want}")
        if length:
            boundary.check_int_range(int(start), want, "start")
            boundary.check_int_range(int(start + (length - 1) * step), want, "stop")
        compute = np.dtype(np.int64 if want.itemsize == 8 else np.int32)
        # (an empty range uses neither start nor step, which may be beyond every dtype)
        first, stride = (np.asarray(v).astype(compute) for v in (int(start) if length else 0, int(step)))
        return wrap(_devices.build(_int_range, place, (first, stride), (length, want)))
    if length:  # a finite bound must not become infinite in a narrower floating dtype
        boundary.check_scalar_fits(float(start), want, "start")
        boundary.check_scalar_fits(float(start + (length - 1) * step), want, "stop")
    return wrap(_devices.build(_float_range, place, (float(start), float(step)), (length, want)))


def _symbolic_arange(start: Any, stop: Any, step: Any, dtype: Any, device: Any) -> Array:
    """``arange`` with a bound ``jax.export`` leaves symbolic (``xp.arange(x.shape[0])`` while a
    function is traced for export): integer bounds and step, and a length that is an expression
    in the symbolic sizes (JAX checks that it is not negative when the export is called)."""
    if stop is None:
        start, stop = 0, start
    for value, name in ((start, "start"), (stop, "stop")):
        if not boundary.symbolic(value):
            boundary.integer(value, name)
    step = boundary.integer(step, "step")
    if step == 0:
        fail(ValueError, "step must not be zero")
    want = dt.default_int() if dtype is None else boundary.dtype(dtype)
    if want.kind not in "iuf":
        fail(TypeError, f"dtype must be a real numeric dtype, got {want}")
    span = stop - start if step > 0 else start - stop
    length = (span + abs(step) - 1) // abs(step)
    place = boundary.device(device)
    compute = np.dtype(np.int64 if want.itemsize == 8 and dt.x64_enabled() else np.int32)
    if want.kind == "f":
        return wrap(_devices.build(_float_range, place, (start, step), (length, want)))
    return wrap(
        _devices.build(_int_range, place, (jnp.asarray(start, compute), np.asarray(step, compute)), (length, want))
    )


@functools.partial(kernel, static_argnums=(2, 3))  # length, dtype
def _int_range(start: Any, step: Any, length: int, dtype: np.dtype) -> Any:
    return (start + step * jax.lax.iota(start.dtype, length)).astype(dtype)


@functools.partial(kernel, static_argnums=(2, 3))  # length, dtype
def _float_range(start: float, step: float, length: int, dtype: np.dtype) -> Any:
    return (start + step * jax.lax.iota(dtype, length)).astype(dtype)


@api
def linspace(
    start: int | float | complex,
    stop: int | float | complex,
    /,
    num: int,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
    endpoint: bool = True,
) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included if ``endpoint``)."""
    for v, name in ((start, "start"), (stop, "stop")):
        if type(v) not in (int, float, complex) and not isinstance(v, (np.integer, np.floating, np.complexfloating)):
            fail(TypeError, f"{name} must be a Python int, float or complex, got {describe(v)}")
    if boundary.symbolic(num):  # (jax.numpy's linspace cannot either: the spacing divides by num)
        fail(NotImplementedError, f"num is a size jax.export leaves symbolic ({num}); linspace needs it known: "
             "export with a concrete size for that axis")  # fmt: skip
    count = boundary.non_negative(num, "num")
    endpoint = boundary.boolean(endpoint, "endpoint")
    is_complex = isinstance(start, (complex, np.complexfloating)) or isinstance(stop, (complex, np.complexfloating))
    if dtype is None:
        want = dt.default_complex() if is_complex else dt.default_float()
    else:
        want = boundary.dtype(dtype)
        if is_complex and want.kind != "c":
            fail(TypeError, f"start or stop is complex, but dtype is {want}")
    if want.kind in "iu":  # every value lies between the two: they must fit, or the cast saturates
        for v, name in ((start, "start"), (stop, "stop")):
            if not math.isfinite(v):  # type: ignore[arg-type]
                fail(ValueError, f"{name}={v} is not finite, but dtype is {want}")
            low, high = boundary.INTEGER_BOUNDS[want]
            if not low <= v <= high:  # type: ignore[operator]
                fail(OverflowError, f"{name}={v} is out of bounds for {want} [{low}, {high}]")
    place = boundary.device(device)
    boundary.allocation((count,), want, place, "num")
    if want.kind in "iub":
        # float64 on the host, truncated as NumPy does: float32 (the default floating dtype with
        # 64-bit mode off) cannot hold every int32, so a device computation would be off by one
        integers = np.linspace(start, stop, count, endpoint=endpoint).astype(want)
        return _finish(jnp.asarray(integers), place)
    ends = np.asarray(start, want), np.asarray(stop, want)
    return wrap(_devices.build(_linspace, place, ends, (count, endpoint)))


@functools.partial(kernel, static_argnums=(2, 3))  # num, endpoint
def _linspace(start: Any, stop: Any, num: int, endpoint: bool) -> Any:
    return jnp.linspace(start, stop, num, endpoint=endpoint, dtype=start.dtype)


@api
def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> Array:
    """A 2-d array with ones on the ``k``-th diagonal and zeros elsewhere."""
    rows = boundary.size(n_rows, "n_rows")  # (symbolic under jax.export: xp.eye(x.shape[0]))
    cols = rows if n_cols is None else boundary.size(n_cols, "n_cols")
    want, place = _dtype_or_default(dtype), boundary.device(device)
    boundary.allocation((rows, cols), want, place, "(n_rows, n_cols)")
    # k beyond the array selects no diagonal; clamped, it stays a small static argument
    offset = min(max(boundary.integer(k, "k"), -rows), cols)
    return wrap(_devices.build(_eye, place, (), (rows, cols, offset, want)))


@functools.partial(kernel, static_argnums=(0, 1, 2, 3))
def _eye(rows: int, cols: int, k: int, dtype: np.dtype) -> Any:
    return jnp.eye(rows, cols, k, dtype=dtype)


@api
def meshgrid(*arrays: ArrayLike, indexing: Literal["xy", "ij"] = "xy") -> tuple[Array, ...]:
    """Coordinate arrays from 1-d coordinate vectors (a tuple; ``indexing`` 'xy' or 'ij')."""
    indexing = boundary.choice(indexing, ("xy", "ij"), "indexing")
    values = [boundary.array(a, f"arrays[{i}]") for i, a in enumerate(arrays)]
    for i, v in enumerate(values):
        if v.ndim != 1:
            fail(ValueError, f"arrays[{i}] must be 1-dimensional, got shape {tuple(v.shape)}")
    if values:
        dtypes = {v.dtype for v in values}
        if len(dtypes) > 1:
            fail(TypeError, f"arrays must all have the same dtype, got {', '.join(sorted(map(str, dtypes)))}")
        grid = tuple(v.shape[0] for v in values)
        boundary.allocation(grid, values[0].dtype, None, "the grid of the arrays' lengths")
    return tuple(wrap(v) for v in _meshgrid(tuple(values), indexing))


@functools.partial(kernel, static_argnums=1)  # indexing
def _meshgrid(values: tuple[Any, ...], indexing: str) -> Any:
    return jnp.meshgrid(*values, indexing=indexing)


@api
def tril(x: ArrayLike, /, *, k: int = 0) -> Array:
    """``x`` with the elements above the ``k``-th diagonal of its last two axes set to zero."""
    value = boundary.array(x, "x")
    if value.ndim < 2:
        fail(ValueError, f"x must have at least 2 dimensions, got shape {tuple(value.shape)}")
    return wrap(_tril(value, _diagonal_offset(boundary.integer(k, "k"), value.shape)))


@api
def triu(x: ArrayLike, /, *, k: int = 0) -> Array:
    """``x`` with the elements below the ``k``-th diagonal of its last two axes set to zero."""
    value = boundary.array(x, "x")
    if value.ndim < 2:
        fail(ValueError, f"x must have at least 2 dimensions, got shape {tuple(value.shape)}")
    return wrap(_triu(value, _diagonal_offset(boundary.integer(k, "k"), value.shape)))


def _diagonal_offset(k: int, shape: tuple[int, ...]) -> int:
    """``k`` clamped to ``[-rows, cols]``: a diagonal beyond the matrix selects the same elements as
    the first one past its edge, and a clamped ``k`` fits the int32 arithmetic of the kernel."""
    return min(max(k, -shape[-2]), shape[-1])


@functools.partial(kernel, static_argnums=1)  # k
def _tril(x: Any, k: int) -> Any:
    return jnp.tril(x, k)


@functools.partial(kernel, static_argnums=1)  # k
def _triu(x: Any, k: int) -> Any:
    return jnp.triu(x, k)
