"""Data type functions (the standard's "Data Type Functions" chapter)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import jax
import jax.core
import numpy as np

from xp import _boundary as boundary
from xp import _devices
from xp import _dtypes as dt
from xp import _routing as routing
from xp._array import Array, wrap
from xp._errors import ArgumentError, fail
from xp._routing import api
from xp._typing import ArrayLike, Device, DTypeLike


@api
def astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True, device: Device | None = None) -> Array:
    """``x`` converted to ``dtype``, whatever the promotion rules say.

    A complex array does not convert to a real dtype (take ``real`` or ``imag`` first). With
    ``copy=False`` and nothing to change, ``x`` itself is returned.
    """
    value = boundary.array(x, "x")
    want = boundary.dtype(dtype)
    copy = boundary.boolean(copy, "copy")
    target = boundary.device(device)
    if value.dtype.kind == "c" and want.kind != "c":
        fail(TypeError, f"cannot convert a complex array to {want} (take xp.real or xp.imag first)")
    if want == value.dtype and _devices.same_placement(value, target):
        if not copy and isinstance(x, Array):
            return x
        return wrap(value)
    return wrap(_devices.place(_astype(value, dtype=want), target))


@functools.partial(jax.jit, inline=True, static_argnames="dtype")
def _astype(value: Any, dtype: np.dtype) -> Any:
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
    try:
        return boundary.dtype(value, param)
    except ArgumentError:
        if value in dt.X64_ONLY:  # an xp or NumPy dtype object, or a name
            return dt.BY_NAME[value if isinstance(value, str) else value.name]
        raise


@api
def can_cast(from_: DTypeLike | ArrayLike, to: DTypeLike, /) -> bool:
    """Whether ``from_`` promotes to ``to`` under the standard's promotion rules.

    Only the standard's table counts: casts between kinds (integer to floating, ...) are False.
    """
    source = _dtype_of(from_, "from_")
    target = _any_dtype(to, "to")
    return source == target or ((source, target) in dt.STANDARD_PAIRS and dt.PROMOTION_TABLE[source, target] == target)


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name
    """Machine limits of a floating-point dtype (of its real component, for complex)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dt.DType

    @property
    def tiny(self) -> float:
        return self.smallest_normal


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - the standard's name
    """Machine limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: dt.DType


@api
def finfo(type: DTypeLike | ArrayLike, /) -> finfo_object:
    """Limits of a floating-point dtype, as Python floats."""
    source = _dtype_of(type, "type")
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
    """Limits of an integer dtype, as Python ints."""
    source = _dtype_of(type, "type")
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
    for k in kinds:
        if isinstance(k, str) and k in dt.KINDS:
            if subject in dt.KINDS[k]:
                return True
        elif isinstance(k, str) and k not in dt.BY_NAME:
            fail(ValueError, f"kind must be a dtype or one of {', '.join(map(repr, dt.KINDS))}, got {k!r}")
        elif subject == _any_dtype(k, "kind"):
            return True
    return False


@api
def result_type(*arrays_and_dtypes: ArrayLike | DTypeLike) -> dt.DType:
    """The dtype of an operation on the arguments (arrays, dtypes and Python scalars).

    Python scalars take part by the scalar rules, after arrays and dtypes are promoted; at
    least one argument must be an array or a dtype.
    """
    dtypes: list[np.dtype] = []
    scalars: list[Any] = []
    for i, arg in enumerate(arrays_and_dtypes):
        if type(arg) in boundary.PY_SCALARS:
            scalars.append(arg)
        else:
            dtypes.append(_dtype_of(arg, f"arrays_and_dtypes[{i}]"))
    if not dtypes:
        fail(ValueError, "at least one argument must be an array or a dtype")
    try:
        result = dt.promote_all(dtypes)
    except dt.PromotionError as e:
        fail(TypeError, str(e))
    for scalar in scalars:
        result = dt.promote(result, dt.scalar_dtype(result, type(scalar)))
    return dt.PUBLIC[result]
