"""The types of xp's public signatures, defined once (the counterparts of ``jax.typing``).

- ``ArrayLike``: what converts to an array without ambiguity: xp arrays, JAX arrays and
  tracers, NumPy arrays and scalars, and Python ``bool``, ``int``, ``float``, ``complex``.
  Lists and tuples are not arrays; only ``xp.asarray`` takes nested sequences.
- ``DTypeLike``: one of the 13 dtype objects (``xp.float32``), or what names one unambiguously:
  a NumPy or JAX scalar type (``numpy.float32``, ``jax.numpy.float32``), its name
  (``"float32"``), or a Python type (``float`` is the default floating dtype).
- ``Device``: a ``jax.Device`` or a ``jax.sharding.Sharding``.

Each is checked at runtime by ``xp._boundary``, at the cost of a type check.
Note that ``isinstance(tracer, jax.typing.ArrayLike)`` is False: the runtime checks test the
union's members, tracers included, instead of the union.
"""

from __future__ import annotations

from typing import TypeAlias

import jax
import numpy as np

from xp._array import Array
from xp._devices import TracedDevice
from xp._dtypes import DType

ArrayLike: TypeAlias = Array | jax.Array | np.ndarray | np.bool_ | np.number | bool | int | float | complex
DTypeLike: TypeAlias = DType | np.dtype | type | str
Device: TypeAlias = jax.Device | jax.sharding.Sharding | TracedDevice
Scalar: TypeAlias = bool | int | float | complex

__all__ = ["Array", "ArrayLike", "DTypeLike", "Device", "Scalar"]
