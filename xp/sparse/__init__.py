"""Sparse arrays for the array API: ``xp.sparse.BCOO`` and ``xp.sparse.BCSR``.

- Sparse arrays report ``xp`` as their namespace, and every xp function accepts them: a sparse
  argument routes the call to a sparse implementation; where the result is dense, the call is
  computed on dense copies with a :class:`SparseEfficiencyWarning`; nothing densifies
  silently. See docs/sparse.md for the policy.
- ``xp.sparse`` is itself a complete array API namespace whose creation functions (``asarray``,
  ``zeros``, ``eye``, ...) make sparse arrays; its other functions, dtypes and constants are
  xp's, and so are its ``fft`` extension (the transform of a sparse array is dense) and
  ``special`` (SciPy's special functions, computed on dense copies). Its
  ``linalg`` is the standard's extension (xp's functions) plus the sparse solvers.
- ``fromdense``, ``from_scipy``, ``from_pydata`` and the methods ``todense``, ``to_scipy``,
  ``to_bcoo``, ``to_bcsr`` convert.
- ``RowPartitioned``: a sparse matrix whose rows are partitioned over the devices of a mesh axis
  (docs/sharding.md, "Sparse arrays on meshes").
- ``DIA`` (a banded matrix by its diagonals), ``BSR`` (dense blocks) and ``ELL`` (rows padded per
  chunk of columns, for no structure): matrices kept in the layout of their products, Pallas kernels
  on a TPU (docs/sparse.md, "On a TPU").
- JAX's sparse API (``bcoo_fromdense``, ``bcoo_dot_general``, ..., ``sparsify``) is here with
  xp's argument handling.
"""

from __future__ import annotations

from xp import fft as fft
from xp import special as special
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
from xp._data_type import astype as astype
from xp._data_type import can_cast as can_cast
from xp._data_type import finfo as finfo
from xp._data_type import iinfo as iinfo
from xp._data_type import isdtype as isdtype
from xp._data_type import result_type as result_type
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
from xp._errors import SparseEfficiencyWarning as SparseEfficiencyWarning
from xp._indexing_functions import take as take
from xp._indexing_functions import take_along_axis as take_along_axis

# Besides its creation functions (from xp.sparse._creation), the namespace re-exports xp's
# functions (which route sparse arguments), dtypes, constants and inspection, explicitly.
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
from xp._utility import all as all
from xp._utility import any as any
from xp._utility import diff as diff
from xp.sparse import _array_methods as _array_methods
from xp.sparse import _creation as _creation
from xp.sparse import _distributed as _distributed

# The implementations register themselves with xp._routing on import.
from xp.sparse import _elementwise as _elementwise
from xp.sparse import _indexing as _indexing
from xp.sparse import _linear_algebra as _linear_algebra
from xp.sparse import _manipulation as _manipulation
from xp.sparse import _reductions as _reductions
from xp.sparse import linalg as linalg
from xp.sparse._array import BCOO as BCOO
from xp.sparse._array import BCSR as BCSR
from xp.sparse._array import SparseArray as SparseArray
from xp.sparse._bsr import BSR as BSR
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
from xp.sparse._dia import DIA as DIA
from xp.sparse._distributed import RowPartitioned as RowPartitioned
from xp.sparse._ell import ELL as ELL
from xp.sparse._jax_conversion import bcoo_eliminate_zeros as bcoo_eliminate_zeros
from xp.sparse._jax_conversion import bcoo_fromdense as bcoo_fromdense
from xp.sparse._jax_conversion import bcoo_sort_indices as bcoo_sort_indices
from xp.sparse._jax_conversion import bcoo_sum_duplicates as bcoo_sum_duplicates
from xp.sparse._jax_conversion import bcoo_todense as bcoo_todense
from xp.sparse._jax_conversion import bcoo_update_layout as bcoo_update_layout
from xp.sparse._jax_conversion import bcsr_eliminate_zeros as bcsr_eliminate_zeros
from xp.sparse._jax_conversion import bcsr_fromdense as bcsr_fromdense
from xp.sparse._jax_conversion import bcsr_sum_duplicates as bcsr_sum_duplicates
from xp.sparse._jax_conversion import bcsr_todense as bcsr_todense
from xp.sparse._jax_products import bcoo_dot_general as bcoo_dot_general
from xp.sparse._jax_products import bcoo_dot_general_sampled as bcoo_dot_general_sampled
from xp.sparse._jax_products import bcoo_multiply_dense as bcoo_multiply_dense
from xp.sparse._jax_products import bcoo_multiply_sparse as bcoo_multiply_sparse
from xp.sparse._jax_products import bcsr_dot_general as bcsr_dot_general
from xp.sparse._jax_structure import bcoo_broadcast_in_dim as bcoo_broadcast_in_dim
from xp.sparse._jax_structure import bcoo_concatenate as bcoo_concatenate
from xp.sparse._jax_structure import bcoo_dynamic_slice as bcoo_dynamic_slice
from xp.sparse._jax_structure import bcoo_extract as bcoo_extract
from xp.sparse._jax_structure import bcoo_gather as bcoo_gather
from xp.sparse._jax_structure import bcoo_reduce_sum as bcoo_reduce_sum
from xp.sparse._jax_structure import bcoo_reshape as bcoo_reshape
from xp.sparse._jax_structure import bcoo_slice as bcoo_slice
from xp.sparse._jax_structure import bcoo_squeeze as bcoo_squeeze
from xp.sparse._jax_structure import bcoo_transpose as bcoo_transpose
from xp.sparse._jax_structure import bcsr_broadcast_in_dim as bcsr_broadcast_in_dim
from xp.sparse._jax_structure import bcsr_concatenate as bcsr_concatenate
from xp.sparse._jax_structure import bcsr_extract as bcsr_extract
from xp.sparse._sparsify import sparsify as sparsify

__array_api_version__: str = "2025.12"

_array_methods.install()
