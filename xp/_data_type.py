"""Data type functions (the standard's "Data Type Functions" chapter)."""

from __future__ import annotations

from typing import Any

import jax
import jax.core
import numpy as np

from xp import _boundary as boundary
from xp import _devices, _narrowing
from xp import _dtypes as dt
from xp import _routing as routing
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import kernel
from xp._routing import api
from xp._typing import ArrayLike, Device, DTypeLike
from xp._utility import truth


@api
def astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True, device: Device | None = None) -> Array:
    """``x`` converted to ``dtype``, whatever the promotion rules say.

    A complex array does not convert to a real dtype (take ``real`` or ``imag`` first). Where
    the standard leaves a conversion unspecified, xp's are JAX's, the same on every platform (NumPy's
    depend on it): floats to an integer dtype are truncated toward zero, values beyond the dtype's
    range give its bound and NaN gives 0 (``astype([300.0, inf, nan], int8)`` is
    ``[127, 127, 0]``); integers to a narrower integer dtype wrap around (``astype(300, int8)`` is
    44). With ``copy=False`` and nothing to change, ``x`` itself is returned. Under ``xp.narrow_64bit()``
    with JAX's 64-bit mode off, a 64-bit ``dtype`` is narrowed to 32 bits (uint32 values that
    int32 cannot hold then raise OverflowError, where int64 would have held them).
    """
    value = boundary.array(x, "x")
    want = boundary.dtype(dtype)
    have = value.aval.dtype  # (read once, from the abstract value: see xp.Array.dtype)
    if want is dt.int32 and have == dt.uint32 and boundary.any_dtype(dtype) is dt.int64:
        _check_fits_int32(value)
    copy = boundary.boolean(copy, "copy")
    target = boundary.device(device)
    if have.kind == "c" and want.kind != "c":
        fail(TypeError, f"cannot convert complex x to {want} (take xp.real or xp.imag first)")
    if want == have and _devices.same_placement(value, target):
        if not copy and isinstance(x, Array):
            return x
        return wrap(value)
    converted = _astype(value, want)
    return wrap(converted if target is None else _devices.place(converted, target))


def _check_fits_int32(value: Any) -> None:
    """uint32 to int64 narrowed to int32: every value must fit (int64 would have held them all)."""
    if isinstance(value, jax.core.Tracer):
        fail(TypeError, "dtype is int64, narrowed to int32, which does not hold every uint32 value of x, and x "
               "is traced, so its values cannot be checked; cast to int32 explicitly (values above 2**31-1 "
               "wrap), or enable JAX's 64-bit mode")  # fmt: skip
    if value.size and int(jax.numpy.max(value)) > np.iinfo(np.int32).max:
        fail(OverflowError, f"x holds the uint32 value {int(jax.numpy.max(value))}, out of bounds for int32, "
               f"what dtype=int64 is narrowed to (enable JAX's 64-bit mode to keep it)")  # fmt: skip


@kernel(static_argnames="dtype")
def _astype(value: Any, dtype: np.dtype) -> Any:
    if dtype == dt.bool:  # (XLA's conversion is x != 0, False for subnormals)
        return truth(value)
    return jax.lax.convert_element_type(value, dtype)


def _dtype_of(value: Any, param: str) -> np.dtype:
    """A dtype, or the dtype of an array (for functions taking either)."""
    if routing.is_sparse(value):
        raise routing.SparseArgument
    if isinstance(value, (Array, jax.Array, jax.core.Tracer, np.ndarray)):
        return boundary.array(value, param).dtype
    return _any_dtype(value, param)


def _any_dtype(value: Any, param: str) -> np.dtype:
    """A dtype argument of a query function: any of the 13, whatever JAX's 64-bit mode."""
    return boundary.any_dtype(value, param)


def _narrowed(dtype: np.dtype, param: str) -> np.dtype:
    """A dtype argument of ``result_type``, ``finfo`` or ``iinfo``: a 64-bit one with JAX's 64-bit
    mode off is its 32-bit counterpart under ``xp.narrow_64bit()`` (with a warning), so that the
    answer describes the arrays a request for it gives; else itself."""
    if dtype in dt.unavailable():
        narrow = _narrowing.narrowed(dtype, f"{param} is {dtype}")
        if narrow is not None:
            return narrow
    return dtype


@api
def can_cast(from_: DTypeLike | ArrayLike, to: DTypeLike, /) -> bool:
    """Whether ``from_`` promotes to ``to`` under the standard's promotion rules.

    Only the standard's table counts: casts between kinds (integer to floating, ...) are False.
    """
    source = _dtype_of(from_, "from_")
    target = _any_dtype(to, "to")
    return source == target or ((source, target) in dt.STANDARD_PAIRS and dt.PROMOTION_TABLE[source, target] == target)


class _Limits:
    """A read-only record of a dtype's limits, equal to another of the same values.

    Written out rather than as a frozen dataclass: creating the two classes at import took 3 ms
    (bench/RESULTS.md, "Import time")."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, **fields: Any) -> None:
        for name in self.__slots__:
            object.__setattr__(self, name, fields.pop(name))
        assert not fields, fields

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        # (pickle and copy: object's __getstate__ gives the slots' values as (None, {name: value}))
        for name, value in state[1].items():
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._values(), strict=True))
        return f"{type(self).__name__}({fields})"


class finfo_object(_Limits):  # noqa: N801 - the standard's name
    """Machine limits of a floating-point dtype (of its real component, for complex)."""

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")  # noqa: RUF023 - repr's order
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dt.DType

    @property
    def tiny(self) -> float:
        return self.smallest_normal


class iinfo_object(_Limits):  # noqa: N801 - the standard's name
    """Machine limits of an integer dtype."""

    __slots__ = ("bits", "max", "min", "dtype")  # noqa: RUF023 - repr's order
    bits: int
    max: int
    min: int
    dtype: dt.DType


@api
def finfo(type: DTypeLike | ArrayLike, /) -> finfo_object:
    """Limits of a floating-point dtype, as Python floats (of float32 for float64 under
    ``xp.narrow_64bit()`` with JAX's 64-bit mode off: what ``dtype=xp.float64`` then gives)."""
    source = _narrowed(_dtype_of(type, "type"), "type")
    if source not in dt.FLOATING:
        fail(TypeError, f"type must be a floating-point dtype, got {source}")
    real = dt.REAL_OF[source]
    info = np.finfo(real)
    return finfo_object(
        bits=int(info.bits),
        eps=float(info.eps),
        max=float(info.max),
        min=float(info.min),
        smallest_normal=float(info.smallest_normal),
        dtype=dt.PUBLIC[real],
    )


@api
def iinfo(type: DTypeLike | ArrayLike, /) -> iinfo_object:
    """Limits of an integer dtype, as Python ints (of int32 for int64 under ``xp.narrow_64bit()``
    with JAX's 64-bit mode off, and so on)."""
    source = _narrowed(_dtype_of(type, "type"), "type")
    if source not in dt.INTEGER:
        fail(TypeError, f"type must be an integer dtype, got {source}")
    info = np.iinfo(source)
    return iinfo_object(bits=int(info.bits), max=int(info.max), min=int(info.min), dtype=dt.PUBLIC[source])


@api
def isdtype(dtype: DTypeLike, kind: DTypeLike | str | tuple[DTypeLike | str, ...]) -> bool:
    """Whether ``dtype`` is ``kind``: a dtype, a kind name ('integral', 'real floating', ...),
    or a tuple of them."""
    subject = _any_dtype(dtype, "dtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    members: set[np.dtype] = set()  # every kind is checked, also after a match
    for k in kinds:
        if isinstance(k, str) and k in dt.KINDS:
            members |= dt.KINDS[k]
        elif isinstance(k, str) and k not in dt.BY_NAME:
            fail(ValueError, f"kind must be a dtype or one of {', '.join(map(repr, dt.KINDS))}, got {k!r}")
        else:
            members.add(_any_dtype(k, "kind"))
    return subject in members


@api
def result_type(*arrays_and_dtypes: ArrayLike | DTypeLike) -> dt.DType:
    """The dtype of an operation on the arguments (arrays, dtypes and Python scalars).

    Python scalars take part by the scalar rules, after arrays and dtypes are promoted; at
    least one argument must be an array or a dtype. Under ``xp.narrow_64bit()`` with JAX's 64-bit
    mode off, 64-bit dtype arguments are narrowed first, as the arrays they describe would be.
    """
    dtypes: list[np.dtype] = []
    scalars: list[Any] = []
    for i, arg in enumerate(arrays_and_dtypes):
        if type(arg) in boundary.PY_SCALARS:
            scalars.append(arg)
        else:
            param = f"arrays_and_dtypes[{i}]"
            dtypes.append(_narrowed(_dtype_of(arg, param), param))
    if not dtypes:
        fail(ValueError, "at least one argument must be an array or a dtype")
    try:
        result = dt.promote_all(dtypes)
    except dt.PromotionError as e:
        fail(TypeError, str(e))
    for scalar in scalars:
        result = dt.promote(result, dt.scalar_dtype(result, type(scalar)))
    return dt.PUBLIC[result]
