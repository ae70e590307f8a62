"""xp: the Python array API standard (2025.12) on JAX, with sparse arrays.

``import xp`` gives a namespace conforming to the standard whose arrays (``xp.Array``) wrap
JAX arrays: they run on CPU, GPU and TPU, under ``jax.jit``, ``grad`` and ``vmap``, and
sharded across devices. Importing xp changes no JAX configuration.
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
from typing import TYPE_CHECKING

from xp import _array_methods as _array_methods
from xp import _dtypes as _dtypes
from xp._array import Array as Array
from xp._constants import bool as bool
from xp._constants import complex64 as complex64
from xp._constants import complex128 as complex128
from xp._constants import e as e
from xp._constants import float32 as float32
from xp._constants import float64 as float64
from xp._constants import inf as inf
from xp._constants import int8 as int8
from xp._constants import int16 as int16
from xp._constants import int32 as int32
from xp._constants import int64 as int64
from xp._constants import nan as nan
from xp._constants import newaxis as newaxis
from xp._constants import pi as pi
from xp._constants import uint8 as uint8
from xp._constants import uint16 as uint16
from xp._constants import uint32 as uint32
from xp._constants import uint64 as uint64
from xp._creation import arange as arange
from xp._creation import asarray as asarray
from xp._creation import empty as empty
from xp._creation import empty_like as empty_like
from xp._creation import eye as eye
from xp._creation import from_dlpack as from_dlpack
from xp._creation import full as full
from xp._creation import full_like as full_like
from xp._creation import linspace as linspace
from xp._creation import meshgrid as meshgrid
from xp._creation import ones as ones
from xp._creation import ones_like as ones_like
from xp._creation import tril as tril
from xp._creation import triu as triu
from xp._creation import zeros as zeros
from xp._creation import zeros_like as zeros_like
from xp._data_type import astype as astype
from xp._data_type import can_cast as can_cast
from xp._data_type import finfo as finfo
from xp._data_type import iinfo as iinfo
from xp._data_type import isdtype as isdtype
from xp._data_type import result_type as result_type
from xp._dtypes import DType as DType
from xp._elementwise import abs as abs
from xp._elementwise import acos as acos
from xp._elementwise import acosh as acosh
from xp._elementwise import add as add
from xp._elementwise import asin as asin
from xp._elementwise import asinh as asinh
from xp._elementwise import atan as atan
from xp._elementwise import atan2 as atan2
from xp._elementwise import atanh as atanh
from xp._elementwise import bitwise_and as bitwise_and
from xp._elementwise import bitwise_invert as bitwise_invert
from xp._elementwise import bitwise_left_shift as bitwise_left_shift
from xp._elementwise import bitwise_or as bitwise_or
from xp._elementwise import bitwise_right_shift as bitwise_right_shift
from xp._elementwise import bitwise_xor as bitwise_xor
from xp._elementwise import ceil as ceil
from xp._elementwise import clip as clip
from xp._elementwise import conj as conj
from xp._elementwise import copysign as copysign
from xp._elementwise import cos as cos
from xp._elementwise import cosh as cosh
from xp._elementwise import divide as divide
from xp._elementwise import equal as equal
from xp._elementwise import exp as exp
from xp._elementwise import expm1 as expm1
from xp._elementwise import floor as floor
from xp._elementwise import floor_divide as floor_divide
from xp._elementwise import greater as greater
from xp._elementwise import greater_equal as greater_equal
from xp._elementwise import hypot as hypot
from xp._elementwise import imag as imag
from xp._elementwise import isfinite as isfinite
from xp._elementwise import isinf as isinf
from xp._elementwise import isnan as isnan
from xp._elementwise import less as less
from xp._elementwise import less_equal as less_equal
from xp._elementwise import log as log
from xp._elementwise import log1p as log1p
from xp._elementwise import log2 as log2
from xp._elementwise import log10 as log10
from xp._elementwise import logaddexp as logaddexp
from xp._elementwise import logical_and as logical_and
from xp._elementwise import logical_not as logical_not
from xp._elementwise import logical_or as logical_or
from xp._elementwise import logical_xor as logical_xor
from xp._elementwise import maximum as maximum
from xp._elementwise import minimum as minimum
from xp._elementwise import multiply as multiply
from xp._elementwise import negative as negative
from xp._elementwise import nextafter as nextafter
from xp._elementwise import not_equal as not_equal
from xp._elementwise import positive as positive
from xp._elementwise import pow as pow
from xp._elementwise import real as real
from xp._elementwise import reciprocal as reciprocal
from xp._elementwise import remainder as remainder
from xp._elementwise import round as round
from xp._elementwise import sign as sign
from xp._elementwise import signbit as signbit
from xp._elementwise import sin as sin
from xp._elementwise import sinh as sinh
from xp._elementwise import sqrt as sqrt
from xp._elementwise import square as square
from xp._elementwise import subtract as subtract
from xp._elementwise import tan as tan
from xp._elementwise import tanh as tanh
from xp._elementwise import trunc as trunc
from xp._errors import CheckError as CheckError
from xp._errors import NarrowingWarning as NarrowingWarning
from xp._indexing_functions import take as take
from xp._indexing_functions import take_along_axis as take_along_axis
from xp._info import __array_namespace_info__ as __array_namespace_info__
from xp._linear_algebra import matmul as matmul
from xp._linear_algebra import matrix_transpose as matrix_transpose
from xp._linear_algebra import tensordot as tensordot
from xp._linear_algebra import vecdot as vecdot
from xp._manipulation import broadcast_arrays as broadcast_arrays
from xp._manipulation import broadcast_shapes as broadcast_shapes
from xp._manipulation import broadcast_to as broadcast_to
from xp._manipulation import concat as concat
from xp._manipulation import expand_dims as expand_dims
from xp._manipulation import flip as flip
from xp._manipulation import moveaxis as moveaxis
from xp._manipulation import permute_dims as permute_dims
from xp._manipulation import repeat as repeat
from xp._manipulation import reshape as reshape
from xp._manipulation import roll as roll
from xp._manipulation import squeeze as squeeze
from xp._manipulation import stack as stack
from xp._manipulation import tile as tile
from xp._manipulation import unstack as unstack
from xp._narrowing import narrow_64bit as narrow_64bit
from xp._searching import argmax as argmax
from xp._searching import argmin as argmin
from xp._searching import count_nonzero as count_nonzero
from xp._searching import nonzero as nonzero
from xp._searching import searchsorted as searchsorted
from xp._searching import where as where
from xp._set import isin as isin
from xp._set import unique_all as unique_all
from xp._set import unique_counts as unique_counts
from xp._set import unique_inverse as unique_inverse
from xp._set import unique_values as unique_values
from xp._sorting import argsort as argsort
from xp._sorting import sort as sort
from xp._statistical import cumulative_prod as cumulative_prod
from xp._statistical import cumulative_sum as cumulative_sum
from xp._statistical import max as max
from xp._statistical import mean as mean
from xp._statistical import min as min
from xp._statistical import prod as prod
from xp._statistical import std as std
from xp._statistical import sum as sum
from xp._statistical import var as var
from xp._typing import ArrayLike as ArrayLike
from xp._typing import Device as Device
from xp._typing import DTypeLike as DTypeLike
from xp._utility import all as all
from xp._utility import any as any
from xp._utility import diff as diff

__array_api_version__: str = "2025.12"
__version__ = "0.1.0"  # the package version: pyproject.toml reads it from here

# xp.Array's methods that need the whole namespace are installed now that it is complete.
_array_methods.install(_sys.modules[__name__])


if TYPE_CHECKING:
    # Type checkers see the submodules as the modules they are, and no module ``__getattr__``
    # (which would make a misspelt ``xp.name`` an ``object`` instead of an error).
    from xp import fft as fft
    from xp import linalg as linalg
    from xp import sparse as sparse
    from xp import special as special
    from xp import transforms as transforms
    from xp._checked.running import checked as checked
else:
    # Imported on first use: code that does not use them does not pay for them at import
    # (bench/RESULTS.md, "Import time"); ``xp.checked`` imports JAX's checkify.
    _ON_FIRST_USE = {
        "fft": lambda: _importlib.import_module("xp.fft"),
        "linalg": lambda: _importlib.import_module("xp.linalg"),
        "sparse": lambda: _importlib.import_module("xp.sparse"),
        "special": lambda: _importlib.import_module("xp.special"),
        "transforms": lambda: _importlib.import_module("xp.transforms"),
        "checked": lambda: _importlib.import_module("xp._checked.running").checked,
    }

    def __getattr__(name: str) -> object:
        load = _ON_FIRST_USE.get(name)
        if load is None:
            raise AttributeError(f"module 'xp' has no attribute {name!r}")
        return load()

    def __dir__() -> list[str]:
        return sorted({*(n for n in globals() if n != "_ON_FIRST_USE"), *_ON_FIRST_USE})


del TYPE_CHECKING, annotations  # not xp's names (the second is ``from __future__``'s)
