"""The standard's dtype objects and constants (the "Data Types" and "Constants" chapters),
defined once, here, for ``xp`` and ``xp.sparse`` to export."""

from __future__ import annotations

import math

from xp import _dtypes
from xp._dtypes import PUBLIC, DType

bool: DType = PUBLIC[_dtypes.bool]
int8: DType = PUBLIC[_dtypes.int8]
int16: DType = PUBLIC[_dtypes.int16]
int32: DType = PUBLIC[_dtypes.int32]
int64: DType = PUBLIC[_dtypes.int64]
uint8: DType = PUBLIC[_dtypes.uint8]
uint16: DType = PUBLIC[_dtypes.uint16]
uint32: DType = PUBLIC[_dtypes.uint32]
uint64: DType = PUBLIC[_dtypes.uint64]
float32: DType = PUBLIC[_dtypes.float32]
float64: DType = PUBLIC[_dtypes.float64]
complex64: DType = PUBLIC[_dtypes.complex64]
complex128: DType = PUBLIC[_dtypes.complex128]

e: float = math.e
inf: float = math.inf
nan: float = math.nan
pi: float = math.pi
newaxis: None = None
