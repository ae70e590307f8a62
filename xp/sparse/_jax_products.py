"""JAX's sparse products with xp's argument handling.

``bcoo_dot_general``, ``bcsr_dot_general``, ``bcoo_dot_general_sampled``,
``bcoo_multiply_sparse``, ``bcoo_multiply_dense``: the ``jax.experimental.sparse`` functions,
with ``dimension_numbers`` checked against the operands and the operands' dtypes promoted as
xp's products promote them (``bool`` is rejected); arguments and results as
``xp.sparse._jax_boundary`` describes.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax import lax
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array
from xp._errors import fail
from xp._routing import api
from xp.sparse import _jax_boundary as jax_boundary
from xp.sparse._array import BCOO, BCSR, SparseArray


def _dot_arguments(
    lhs: Any, rhs: Any, dimension_numbers: Any, kind: type[SparseArray], names: tuple[str, str] = ("lhs", "rhs")
) -> tuple[Any, Any, Any]:
    lhs, rhs = jax_boundary.operand(lhs, names[0], kind), jax_boundary.operand(rhs, names[1], kind)
    numbers = jax_boundary.dimension_numbers(dimension_numbers)
    (lc, rc), (lb, rb) = numbers
    jax_boundary.check_dims((*lc, *lb), lhs.ndim, "dimension_numbers (lhs)")
    jax_boundary.check_dims((*rc, *rb), rhs.ndim, "dimension_numbers (rhs)")
    for d1, d2 in (*zip(lc, rc, strict=True), *zip(lb, rb, strict=True)):
        if lhs.shape[d1] != rhs.shape[d2]:
            fail(ValueError, f"dimension {d1} of {names[0]} (size {lhs.shape[d1]}) and dimension {d2} of {names[1]} "
                   f"(size {rhs.shape[d2]}) are paired but differ in size")  # fmt: skip
    lhs, rhs = jax_boundary.promoted(lhs, rhs, names)
    return lhs, rhs, numbers


def _preferred(value: Any) -> np.dtype | None:
    dtype = boundary.optional_dtype(value, "preferred_element_type")
    if dtype is not None and dtype not in dt.NUMERIC:  # JAX's products have no bool accumulation
        fail(TypeError, f"preferred_element_type must be a numeric dtype, got {dtype}")
    return dtype


@api
def bcoo_dot_general(
    lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: None = None, preferred_element_type: Any = None
) -> Array | BCOO:
    """``lax.dot_general`` with a BCOO operand (or two): dense result for sparse with dense,
    BCOO for two BCOO operands."""
    lhs, rhs, numbers = _dot_arguments(lhs, rhs, dimension_numbers, BCOO)
    if not (isinstance(lhs, jsparse.BCOO) or isinstance(rhs, jsparse.BCOO)):
        fail(TypeError, "lhs or rhs must be an xp.sparse.BCOO (for two dense arrays use xp.tensordot or "
               "jax.lax.dot_general)")  # fmt: skip
    return jax_boundary.result(
        jax_boundary.call_jax(
            jsparse.bcoo_dot_general,
            lhs,
            rhs,
            dimension_numbers=numbers,
            precision=precision,
            preferred_element_type=_preferred(preferred_element_type),
        )
    )


@api
def bcsr_dot_general(
    lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: None = None, preferred_element_type: Any = None
) -> Array:
    """``lax.dot_general`` of a BCSR ``lhs`` and a dense ``rhs`` (a dense result)."""
    if not isinstance(lhs, (BCSR, jsparse.BCSR)):
        jax_boundary.sparse_argument(lhs, "lhs", BCSR)
    if isinstance(rhs, (SparseArray, jsparse.JAXSparse)):
        fail(TypeError, f"rhs must be a dense array, got a sparse {type(rhs).__name__} (JAX's bcsr_dot_general "
               f"takes a dense rhs; use xp.matmul or bcoo_dot_general for two sparse operands)")  # fmt: skip
    lhs, rhs, numbers = _dot_arguments(lhs, rhs, dimension_numbers, BCSR)
    return jax_boundary.result(
        jax_boundary.call_jax(
            jsparse.bcsr_dot_general,
            lhs,
            rhs,
            dimension_numbers=numbers,
            precision=precision,
            preferred_element_type=_preferred(preferred_element_type),
        )
    )


@api
def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *, dimension_numbers: Any) -> Array:  # noqa: N803
    """The values of ``lax.dot_general(A, B)`` at ``indices`` only (the data of a BCOO with them)."""
    a, b_, numbers = _dot_arguments(
        jax_boundary.dense_argument(A, "A"), jax_boundary.dense_argument(B, "B"), dimension_numbers, BCOO, ("A", "B")
    )
    index = jax_boundary.index_argument(indices, "indices")
    if index.ndim < 2:
        fail(ValueError, f"indices must have shape (*batch, nse, n_sparse), got {tuple(index.shape)}")
    (contract_a, contract_b), (_, batch_b) = numbers
    product_ndim = a.ndim + b_.ndim - len(contract_a) - len(contract_b) - len(batch_b)
    if index.ndim - 2 + index.shape[-1] > product_ndim:  # JAX asserts this without a message
        fail(ValueError, f"indices of shape {tuple(index.shape)} address {index.ndim - 2} batch and "
               f"{index.shape[-1]} sparse dimensions, more than the {product_ndim} of the product of A and B")  # fmt: skip
    product = jax.eval_shape(lambda p, q: lax.dot_general(p, q, numbers), a, b_).shape
    addressed = product[: index.ndim - 2 + index.shape[-1]]
    if index.shape[-2] and 0 in addressed:  # JAX fails in a gather naming no parameter
        fail(ValueError, f"indices of shape {tuple(index.shape)} address entries of a product of A and B "
               f"of shape {product}, which has none")  # fmt: skip
    return jax_boundary.result(
        jax_boundary.call_jax(jsparse.bcoo_dot_general_sampled, a, b_, index, dimension_numbers=numbers)
    )


@api
def bcoo_multiply_sparse(lhs: Any, rhs: Any) -> BCOO:
    """The element-wise product of two BCOO arrays of the same shape (the intersection of their patterns)."""
    left, right = jax_boundary.sparse_argument(lhs, "lhs", BCOO), jax_boundary.sparse_argument(rhs, "rhs", BCOO)
    if tuple(left.shape) != tuple(right.shape):
        fail(ValueError, f"lhs and rhs must have the same shape, got {tuple(left.shape)} and {tuple(right.shape)}")
    left, right = jax_boundary.promoted(left, right)
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_multiply_sparse, left, right))


@api
def bcoo_multiply_dense(sp_mat: Any, v: Any) -> Array:
    """The element-wise product of a BCOO and a dense array broadcast to its shape: the values at
    the stored entries (JAX returns them as a dense array of the BCOO's data shape)."""
    mat, value = jax_boundary.sparse_argument(sp_mat, "sp_mat", BCOO), jax_boundary.dense_argument(v, "v")
    try:
        np.broadcast_shapes(tuple(value.shape), tuple(mat.shape))
    except ValueError:
        fail(ValueError, f"v of shape {tuple(value.shape)} does not broadcast to sp_mat's shape {tuple(mat.shape)}")
    mat, value = jax_boundary.promoted(mat, value, ("sp_mat", "v"))
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_multiply_dense, mat, value))
