"""Sparse arrays for the array API: ``xp.sparse.BCOO`` and ``xp.sparse.BCSR``.

- Sparse arrays report ``xp`` as their namespace, and every xp function accepts them: a sparse
  argument routes the call to a sparse implementation (or to NotImplementedError naming
  ``.todense()``); nothing densifies silently. See docs/sparse.md for the policy.
- ``xp.sparse`` is itself a complete array API namespace whose creation functions (``asarray``,
  ``zeros``, ``eye``, ...) make sparse arrays; its other functions are xp's.
- JAX's sparse API (``bcoo_fromdense``, ``bcoo_dot_general``, ..., ``sparsify``) is here with
  xp's argument handling, and ``xp.sparse.linalg`` holds the sparse solvers.
"""

from __future__ import annotations

from xp import _operators as _operators
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

_operators.install(SparseArray, in_place=False)
