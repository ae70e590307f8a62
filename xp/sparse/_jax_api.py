"""JAX's sparse API (``jax.experimental.sparse``) with array-API argument handling (being written)."""

from __future__ import annotations

from typing import Any


def _missing(name: str) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"xp.sparse.{name} is not implemented yet")

    function.__name__ = name
    return function


bcoo_fromdense = _missing("bcoo_fromdense")
bcoo_todense = _missing("bcoo_todense")
bcoo_dot_general = _missing("bcoo_dot_general")
bcoo_dot_general_sampled = _missing("bcoo_dot_general_sampled")
bcoo_extract = _missing("bcoo_extract")
bcoo_gather = _missing("bcoo_gather")
bcoo_dynamic_slice = _missing("bcoo_dynamic_slice")
bcoo_concatenate = _missing("bcoo_concatenate")
bcoo_broadcast_in_dim = _missing("bcoo_broadcast_in_dim")
bcoo_reshape = _missing("bcoo_reshape")
bcoo_transpose = _missing("bcoo_transpose")
bcoo_slice = _missing("bcoo_slice")
bcoo_squeeze = _missing("bcoo_squeeze")
bcoo_reduce_sum = _missing("bcoo_reduce_sum")
bcoo_multiply_sparse = _missing("bcoo_multiply_sparse")
bcoo_multiply_dense = _missing("bcoo_multiply_dense")
bcoo_sum_duplicates = _missing("bcoo_sum_duplicates")
bcoo_sort_indices = _missing("bcoo_sort_indices")
bcoo_update_layout = _missing("bcoo_update_layout")
bcoo_eliminate_zeros = _missing("bcoo_eliminate_zeros")
bcsr_fromdense = _missing("bcsr_fromdense")
bcsr_todense = _missing("bcsr_todense")
bcsr_dot_general = _missing("bcsr_dot_general")
bcsr_extract = _missing("bcsr_extract")
bcsr_concatenate = _missing("bcsr_concatenate")
bcsr_broadcast_in_dim = _missing("bcsr_broadcast_in_dim")
bcsr_sum_duplicates = _missing("bcsr_sum_duplicates")
bcsr_eliminate_zeros = _missing("bcsr_eliminate_zeros")
sparsify = _missing("sparsify")
