"""The types of xp's public signatures, defined once (the counterparts of ``jax.typing``).

- ``ArrayLike``: what converts to an array without ambiguity: xp arrays, JAX arrays and
  tracers, NumPy arrays and scalars, and Python ``bool``, ``int``, ``float``, ``complex``.
  Lists and tuples are not arrays; only ``xp.asarray`` takes nested sequences. Sparse arrays
  are not ``ArrayLike`` (they never convert implicitly); the element-wise functions and the
  operators declare them separately, with their results.
- ``DTypeLike``: one of the 13 dtype objects (``xp.float32``, or ``x.dtype``: the NumPy dtype
  it stands for), or what names one unambiguously:
  its name (``"float32"``, a ``DTypeName``: a misspelt name is a type error), a NumPy scalar
  type (``numpy.float32``), a JAX one (``jax.numpy.float32``, typed ``Any`` by JAX), or a Python
  type (``float`` is the default floating dtype).
- ``Device``: a ``jax.Device`` or a ``jax.sharding.Sharding``.

Each is checked at runtime by ``xp._boundary``, at the cost of a type check. Where the two
differ: a type checker cannot tell the 13 NumPy dtypes from the others
(``numpy.dtype("float16")`` is rejected at runtime only), nor ``numpy.float16``
from ``numpy.float32`` (NumPy's stubs make narrower scalar types subtypes of wider ones). An array
is not a ``DTypeLike`` (pass its ``.dtype``): at runtime it is a TypeError naming the parameter.
Note that ``isinstance(tracer, jax.typing.ArrayLike)`` is False: the runtime checks test the
union's members, tracers included, instead of the union.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import jax
import numpy as np

from xp._array import Array
from xp._devices import JaxDevice, TracedDevice
from xp._dtypes import DType

ArrayLike: TypeAlias = Array | jax.Array | np.ndarray | np.bool_ | np.number | bool | int | float | complex
# The names of the 13 dtypes, in the order of ``xp._dtypes.ALL`` (tests/test_typing.py checks it).
DTypeName: TypeAlias = Literal[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
ScalarType: TypeAlias = (
    type[bool]
    | type[int]
    | type[float]
    | type[complex]
    | type[np.bool_]
    | type[np.int8]
    | type[np.int16]
    | type[np.int32]
    | type[np.int64]
    | type[np.uint8]
    | type[np.uint16]
    | type[np.uint32]
    | type[np.uint64]
    | type[np.float32]
    | type[np.float64]
    | type[np.complex64]
    | type[np.complex128]
)
# ``np.dtype``: an array's ``x.dtype`` is the NumPy dtype the ``DType`` stands for (xp/_dtypes.py)
DTypeLike: TypeAlias = DType | np.dtype | ScalarType | DTypeName
Device: TypeAlias = JaxDevice | jax.sharding.Sharding | TracedDevice
Scalar: TypeAlias = bool | int | float | complex

__all__ = ["Array", "ArrayLike", "DTypeLike", "DTypeName", "Device", "Scalar", "ScalarType"]
