"""Sparse arrays for the array API: ``xp.sparse.BCOO`` and ``xp.sparse.BCSR``.

- Sparse arrays report ``xp`` as their namespace, and every xp function accepts them: a sparse
  argument routes the call to a sparse implementation; where the result is dense, the call is
  computed on dense copies with a :class:`SparseEfficiencyWarning`; nothing densifies
  silently. See docs/sparse.md for the policy.
- ``xp.sparse`` is itself a complete array API namespace whose creation functions (``asarray``,
  ``zeros``, ``eye``, ...) make sparse arrays; its other functions, dtypes and constants are
  xp's, and so is its ``fft`` extension (the transform of a sparse array is dense). Its
  ``linalg`` is the standard's extension (xp's functions) plus the sparse solvers.
- ``fromdense``, ``from_scipy``, ``from_pydata`` and the methods ``todense``, ``to_scipy``,
  ``to_bcoo``, ``to_bcsr`` convert.
- JAX's sparse API (``bcoo_fromdense``, ``bcoo_dot_general``, ..., ``sparsify``) is here with
  xp's argument handling.
"""

from __future__ import annotations

# Besides its creation functions (from xp.sparse._creation), the namespace re-exports xp's
# functions (which route sparse arguments), dtypes, constants and inspection, explicitly.
from xp import __array_namespace_info__ as __array_namespace_info__
from xp import _operators as _operators
from xp import abs as abs
from xp import acos as acos
from xp import acosh as acosh
from xp import add as add
from xp import all as all
from xp import any as any
from xp import argmax as argmax
from xp import argmin as argmin
from xp import argsort as argsort
from xp import asin as asin
from xp import asinh as asinh
from xp import astype as astype
from xp import atan as atan
from xp import atan2 as atan2
from xp import atanh as atanh
from xp import bitwise_and as bitwise_and
from xp import bitwise_invert as bitwise_invert
from xp import bitwise_left_shift as bitwise_left_shift
from xp import bitwise_or as bitwise_or
from xp import bitwise_right_shift as bitwise_right_shift
from xp import bitwise_xor as bitwise_xor
from xp import bool as bool
from xp import broadcast_arrays as broadcast_arrays
from xp import broadcast_shapes as broadcast_shapes
from xp import broadcast_to as broadcast_to
from xp import can_cast as can_cast
from xp import ceil as ceil
from xp import clip as clip
from xp import complex64 as complex64
from xp import complex128 as complex128
from xp import concat as concat
from xp import conj as conj
from xp import copysign as copysign
from xp import cos as cos
from xp import cosh as cosh
from xp import count_nonzero as count_nonzero
from xp import cumulative_prod as cumulative_prod
from xp import cumulative_sum as cumulative_sum
from xp import diff as diff
from xp import divide as divide
from xp import e as e
from xp import equal as equal
from xp import exp as exp
from xp import expand_dims as expand_dims
from xp import expm1 as expm1
from xp import fft as fft
from xp import finfo as finfo
from xp import flip as flip
from xp import float32 as float32
from xp import float64 as float64
from xp import floor as floor
from xp import floor_divide as floor_divide
from xp import greater as greater
from xp import greater_equal as greater_equal
from xp import hypot as hypot
from xp import iinfo as iinfo
from xp import imag as imag
from xp import inf as inf
from xp import int8 as int8
from xp import int16 as int16
from xp import int32 as int32
from xp import int64 as int64
from xp import isdtype as isdtype
from xp import isfinite as isfinite
from xp import isin as isin
from xp import isinf as isinf
from xp import isnan as isnan
from xp import less as less
from xp import less_equal as less_equal
from xp import log as log
from xp import log1p as log1p
from xp import log2 as log2
from xp import log10 as log10
from xp import logaddexp as logaddexp
from xp import logical_and as logical_and
from xp import logical_not as logical_not
from xp import logical_or as logical_or
from xp import logical_xor as logical_xor
from xp import matmul as matmul
from xp import matrix_transpose as matrix_transpose
from xp import max as max
from xp import maximum as maximum
from xp import mean as mean
from xp import min as min
from xp import minimum as minimum
from xp import moveaxis as moveaxis
from xp import multiply as multiply
from xp import nan as nan
from xp import negative as negative
from xp import newaxis as newaxis
from xp import nextafter as nextafter
from xp import nonzero as nonzero
from xp import not_equal as not_equal
from xp import permute_dims as permute_dims
from xp import pi as pi
from xp import positive as positive
from xp import pow as pow
from xp import prod as prod
from xp import real as real
from xp import reciprocal as reciprocal
from xp import remainder as remainder
from xp import repeat as repeat
from xp import reshape as reshape
from xp import result_type as result_type
from xp import roll as roll
from xp import round as round
from xp import searchsorted as searchsorted
from xp import sign as sign
from xp import signbit as signbit
from xp import sin as sin
from xp import sinh as sinh
from xp import sort as sort
from xp import sqrt as sqrt
from xp import square as square
from xp import squeeze as squeeze
from xp import stack as stack
from xp import std as std
from xp import subtract as subtract
from xp import sum as sum
from xp import take as take
from xp import take_along_axis as take_along_axis
from xp import tan as tan
from xp import tanh as tanh
from xp import tensordot as tensordot
from xp import tile as tile
from xp import trunc as trunc
from xp import uint8 as uint8
from xp import uint16 as uint16
from xp import uint32 as uint32
from xp import uint64 as uint64
from xp import unique_all as unique_all
from xp import unique_counts as unique_counts
from xp import unique_inverse as unique_inverse
from xp import unique_values as unique_values
from xp import unstack as unstack
from xp import var as var
from xp import vecdot as vecdot
from xp import where as where
from xp._boundary import SparseEfficiencyWarning as SparseEfficiencyWarning
from xp.sparse import _creation as _creation
from xp.sparse import _dispatch as _dispatch  # registers the sparse types with xp's boundary

# The implementations register themselves with the dispatch on import.
from xp.sparse import _elementwise as _elementwise
from xp.sparse import _indexing as _indexing
from xp.sparse import _linear_algebra as _linear_algebra
from xp.sparse import _manipulation as _manipulation
from xp.sparse import _reductions as _reductions
from xp.sparse import linalg as linalg
from xp.sparse._array import BCOO as BCOO
from xp.sparse._array import BCSR as BCSR
from xp.sparse._array import SparseArray as SparseArray
from xp.sparse._creation import arange as arange
from xp.sparse._creation import asarray as asarray
from xp.sparse._creation import empty as empty
from xp.sparse._creation import empty_like as empty_like
from xp.sparse._creation import eye as eye
from xp.sparse._creation import from_dlpack as from_dlpack
from xp.sparse._creation import from_pydata as from_pydata
from xp.sparse._creation import from_scipy as from_scipy
from xp.sparse._creation import fromdense as fromdense
from xp.sparse._creation import full as full
from xp.sparse._creation import full_like as full_like
from xp.sparse._creation import linspace as linspace
from xp.sparse._creation import meshgrid as meshgrid
from xp.sparse._creation import ones as ones
from xp.sparse._creation import ones_like as ones_like
from xp.sparse._creation import tril as tril
from xp.sparse._creation import triu as triu
from xp.sparse._creation import zeros as zeros
from xp.sparse._creation import zeros_like as zeros_like
from xp.sparse._jax_api import bcoo_broadcast_in_dim as bcoo_broadcast_in_dim
from xp.sparse._jax_api import bcoo_concatenate as bcoo_concatenate
from xp.sparse._jax_api import bcoo_dot_general as bcoo_dot_general
from xp.sparse._jax_api import bcoo_dot_general_sampled as bcoo_dot_general_sampled
from xp.sparse._jax_api import bcoo_dynamic_slice as bcoo_dynamic_slice
from xp.sparse._jax_api import bcoo_eliminate_zeros as bcoo_eliminate_zeros
from xp.sparse._jax_api import bcoo_extract as bcoo_extract
from xp.sparse._jax_api import bcoo_fromdense as bcoo_fromdense
from xp.sparse._jax_api import bcoo_gather as bcoo_gather
from xp.sparse._jax_api import bcoo_multiply_dense as bcoo_multiply_dense
from xp.sparse._jax_api import bcoo_multiply_sparse as bcoo_multiply_sparse
from xp.sparse._jax_api import bcoo_reduce_sum as bcoo_reduce_sum
from xp.sparse._jax_api import bcoo_reshape as bcoo_reshape
from xp.sparse._jax_api import bcoo_slice as bcoo_slice
from xp.sparse._jax_api import bcoo_sort_indices as bcoo_sort_indices
from xp.sparse._jax_api import bcoo_squeeze as bcoo_squeeze
from xp.sparse._jax_api import bcoo_sum_duplicates as bcoo_sum_duplicates
from xp.sparse._jax_api import bcoo_todense as bcoo_todense
from xp.sparse._jax_api import bcoo_transpose as bcoo_transpose
from xp.sparse._jax_api import bcoo_update_layout as bcoo_update_layout
from xp.sparse._jax_api import bcsr_broadcast_in_dim as bcsr_broadcast_in_dim
from xp.sparse._jax_api import bcsr_concatenate as bcsr_concatenate
from xp.sparse._jax_api import bcsr_dot_general as bcsr_dot_general
from xp.sparse._jax_api import bcsr_eliminate_zeros as bcsr_eliminate_zeros
from xp.sparse._jax_api import bcsr_extract as bcsr_extract
from xp.sparse._jax_api import bcsr_fromdense as bcsr_fromdense
from xp.sparse._jax_api import bcsr_sum_duplicates as bcsr_sum_duplicates
from xp.sparse._jax_api import bcsr_todense as bcsr_todense
from xp.sparse._jax_api import sparsify as sparsify

__array_api_version__: str = "2025.12"

_operators.install(SparseArray, in_place=False)
