"""``matmul``, ``tensordot``, ``vecdot`` and ``matrix_transpose`` with sparse arguments.

``xp.matmul(A, x)`` (and ``A @ x``, ``xp.linalg.matmul``, ...) with a sparse argument comes here
through the routing of ``xp._boundary``. The rules are the dense functions': the same checks
and error messages (the dense kernels are traced on the operands' shapes and dtypes), the same
dtype promotion (``bool`` is rejected), the same result shapes. Then:

- sparse with dense, either way round: a dense result (as in SciPy);
- sparse with sparse: a sparse BCOO result (a 0-d result is a dense 0-d array, as for
  reductions over all axes); this uses JAX's ``bcoo_dot_general``, whose cost grows with the
  product of the two numbers of stored entries, so it suits moderate sizes;
- ``matrix_transpose``: a sparse BCOO; of a 2-d array without batch or dense dimensions a
  transposed view (O(1), :mod:`xp.sparse._transposed`), which the products here take as it is:
  ``A.T @ x`` is the base's transposed product, ``x @ A.T`` is ``(A @ x.T).T``. The transpose of
  a BCSR is a BCOO (as SciPy's transpose of a csr array is a csc array): its rows are not
  sorted, and sorting costs far more than the product it would speed up.

A 2-d sparse operand without batch or dense dimensions (the common case) goes to xp's kernels
(:mod:`xp.sparse._products.kernels`, chosen by measurement), whatever the dense operand's number of
dimensions: ``A @ X`` with ``X`` of shape ``(..., n, k)`` is one product with ``X``'s batch
dimensions folded into its columns. Other layouts go through ``jax.experimental.sparse``
(``sparsify`` and ``bcoo_dot_general``), with the operand converted to a BCOO without batch or
dense dimensions where JAX needs it.

Each public function checks and converts its arguments, then calls one jitted kernel: an eager
call is one cached dispatch (the layout, shapes and dtypes are the cache key), and a traced call
inlines. The results are differentiable with respect to ``data`` and the dense operands, and
``jax.vmap`` maps over the batch dimensions of sparse arrays.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _linear_algebra as dense
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import kernel
from xp._routing import dense_result, implements
from xp.sparse import _meshes as meshes
from xp.sparse import _transposed as transposed
from xp.sparse._array import BCOO, BCSR, SparseArray, wrap_sparse
from xp.sparse._products import kernels, sparse_sparse
from xp.sparse._transposed import Transposed

SPARSE_VALUES = (jsparse.BCOO, jsparse.BCSR)


# --- arguments and results ------------------------------------------------------------------


def operand(x: Any, param: str) -> Any:
    """A sparse argument as its ``jax.experimental.sparse`` array, any other as a jax array."""
    if isinstance(x, SparseArray):
        return x._value
    return boundary.array(x, param)


def product_operand(x: Any, param: str) -> Any:
    """:func:`operand`, but a transposed view of a plain matrix as a :class:`Transposed` (which
    ``_matmul`` takes without forming the transpose)."""
    if isinstance(x, SparseArray):
        base = x._plain_view()
        return x._value if base is None else Transposed(base)
    return boundary.array(x, param)


def result(value: Any) -> Any:
    """The xp array around a kernel's result (a 0-d sparse result becomes a dense 0-d array)."""
    if isinstance(value, jsparse.BCOO):
        return wrap(value.todense()) if value.ndim == 0 else BCOO._wrap(value)
    if isinstance(value, jsparse.BCSR):
        return BCSR._wrap(value)
    return wrap(value)


def is_sparse(value: Any) -> bool:
    """A JAX sparse array or a view of one (so that no branch takes a view for a dense operand)."""
    return isinstance(value, (*SPARSE_VALUES, Transposed))


def aval(value: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(value.shape), value.dtype)


def cast(value: Any, dtype: np.dtype) -> Any:
    """``value`` with the dtype ``dtype`` (sparse: its stored values converted)."""
    if value.dtype == dtype:
        return value
    if isinstance(value, Transposed):
        return Transposed(cast(value.base, dtype))
    if is_sparse(value):
        children, aux = value.tree_flatten()
        return type(value).tree_unflatten(aux, (children[0].astype(dtype), *children[1:]))
    return value.astype(dtype)


def plain(value: Any) -> bool:
    """A 2-d sparse array without batch or dense dimensions: xp's kernels take it (not a view)."""
    return transposed.is_plain(value)


def flat_bcoo(value: Any) -> Any:
    """A BCOO without batch or dense dimensions holding the same array (inside a kernel)."""
    value = as_bcoo(value)
    if isinstance(value, jsparse.BCSR):
        value = value.to_bcoo()
    if value.n_batch or value.n_dense:
        value = jsparse.bcoo_update_layout(value, n_batch=0, n_dense=0, on_inefficient=None)
    return value


def as_bcoo(value: Any) -> Any:
    """A BCOO holding the same array (a view's transpose formed: the products' fallback)."""
    if isinstance(value, Transposed):
        return value.materialize()
    return value.to_bcoo() if isinstance(value, jsparse.BCSR) else value


def matrix_product(matrix: Any, x: Any, custom_kernels: bool = True) -> Any:
    """``A @ x`` for a plain 2-d sparse ``A`` and a 1-d or 2-d dense ``x`` (``custom_kernels``: whether
    xp's native kernel or JAX's CSR kernel may be chosen; not where XLA must partition the product, see _meshes)."""
    if isinstance(matrix, jsparse.BCSR):
        return kernels.bcsr_matmul(matrix, x, custom_kernels=custom_kernels)
    return kernels.bcoo_matmul(matrix, x, custom_kernels=custom_kernels)


def transposed_product(matrix: Any, x: Any, custom_kernels: bool = True) -> Any:
    """``A.T @ x`` for a plain 2-d sparse ``A`` and a 1-d or 2-d dense ``x`` (``custom_kernels`` as for
    :func:`matrix_product`)."""
    if isinstance(matrix, jsparse.BCSR):
        return kernels.bcsr_rmatmul(matrix, x, custom_kernels=custom_kernels)
    return kernels.bcoo_rmatmul(matrix, x, custom_kernels=custom_kernels)


def _columns(x: Any) -> Any:
    """``x`` of shape ``(..., n, k)`` as ``(n, prod(...) * k)``, and how to undo it for ``(..., m, k)``."""
    batch, k = x.shape[:-2], x.shape[-1]
    folded = jnp.moveaxis(x, -2, 0).reshape(x.shape[-2], math.prod(batch) * k)

    def unfold(y: Any) -> Any:
        return jnp.moveaxis(y.reshape(y.shape[0], *batch, k), 0, -2)

    return folded, unfold


# --- matmul ---------------------------------------------------------------------------------


@implements("matmul")
def matmul(x1: Any, x2: Any, /) -> Array | SparseArray:
    """``x1 @ x2`` with a sparse operand: dense for sparse with dense, sparse for two sparse ones
    (eagerly on CPU computed row by row, :mod:`xp.sparse._products.sparse_sparse`)."""
    a, b = product_operand(x1, "x1"), product_operand(x2, "x2")
    if is_sparse(a) and is_sparse(b) and a.ndim == 2 and b.ndim == 2:
        product = _on_host(a, b, dense._matmul)
        if product is not None:
            return product
    return result(meshes.product(_matmul, a, b))


def _on_host(a: Any, b: Any, dense_product: Any) -> BCOO | None:
    """The product of two 2-d sparse operands computed eagerly on CPU, row by row
    (:mod:`xp.sparse._products.sparse_sparse`), in the dtype ``dense_product`` gives (with its checks and
    messages); None where it is not (JAX's rule, in the kernel, computes it then)."""
    dtype = jax.eval_shape(dense_product, aval(a), aval(b)).dtype
    product = sparse_sparse.host_product(a, b, dtype)
    return None if product is None else BCOO._wrap(product)


@functools.partial(kernel, static_argnames="partitionable")
def _matmul(x1: Any, x2: Any, partitionable: bool = False) -> Any:
    spec = jax.eval_shape(dense._matmul, aval(x1), aval(x2))  # the dense checks and messages
    dtype = spec.dtype
    if math.prod(spec.shape) == 0:  # nothing to compute (and JAX's batching rules fail on it)
        empty = jnp.zeros(spec.shape, dtype)
        return jsparse.BCOO.fromdense(empty, nse=0) if is_sparse(x1) and is_sparse(x2) else empty
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    if plain(x1) and not is_sparse(x2):
        if x2.ndim <= 2:
            return matrix_product(x1, x2, not partitionable)
        folded, unfold = _columns(x2)
        return unfold(matrix_product(x1, folded, not partitionable))
    if plain(x2) and not is_sparse(x1):  # x1 @ A = (A.T @ x1.T).T
        if x1.ndim == 1:
            return transposed_product(x2, x1, not partitionable)
        folded, unfold = _columns(jnp.swapaxes(x1, -1, -2))
        return jnp.swapaxes(unfold(transposed_product(x2, folded, not partitionable)), -1, -2)
    if isinstance(x1, Transposed) and not is_sparse(x2):  # A.T @ x: the transpose never formed
        if x2.ndim <= 2:
            return transposed_product(x1.base, x2, not partitionable)
        folded, unfold = _columns(x2)
        return unfold(transposed_product(x1.base, folded, not partitionable))
    if isinstance(x2, Transposed) and not is_sparse(x1):  # x @ A.T = (A @ x.T).T
        x: Any = x1  # (a dense array here)
        if x.ndim == 1:
            return matrix_product(x2.base, x, not partitionable)
        folded, unfold = _columns(jnp.swapaxes(x, -1, -2))
        return jnp.swapaxes(unfold(matrix_product(x2.base, folded, not partitionable)), -1, -2)
    operands = [stacked_bcoo(x) if is_sparse(x) else x for x in (x1, x2)]
    return _jax_call("matmul", jsparse.sparsify(jnp.matmul), *operands)


def stacked_bcoo(value: Any) -> Any:
    """A BCOO whose dimensions before the last two are batch dimensions and that has no dense
    dimensions: the layout JAX's batched ``dot_general`` needs (inside a kernel)."""
    value = as_bcoo(value)
    n_batch = max(value.ndim - 2, 0)
    if value.n_batch != n_batch or value.n_dense:
        value = jsparse.bcoo_update_layout(value, n_batch=n_batch, n_dense=0, on_inefficient=None)
    return value


def _jax_call(name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A call into ``jax.experimental.sparse``, after xp checked the arguments: a case it does not
    implement (it raises, e.g. for batched sparse x sparse products or empty batch dimensions) is
    computed densely by the routing, which says so."""
    try:
        return fn(*args, **kwargs)
    except (NotImplementedError, ValueError, TypeError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        dense_result(f"jax.experimental.sparse has no sparse rule for this case ({reason})")


# --- matrix_transpose -----------------------------------------------------------------------


@implements("matrix_transpose")
def matrix_transpose(x: Any, /) -> SparseArray:
    """``x`` with its last two axes swapped: a BCOO; O(1) for a 2-d array without batch or dense
    dimensions (a transposed view, :mod:`xp.sparse._transposed`) and for a view (its base)."""
    if isinstance(x, SparseArray) and x._base is not None:
        return wrap_sparse(x._base)
    value = operand(x, "x")
    if value.ndim < 2:
        fail(ValueError, f"x must have at least 2 dimensions, got shape {tuple(value.shape)}")
    if plain(value):
        return BCOO._view(value)
    return BCOO._wrap(_matrix_transpose(value))


@kernel
def _matrix_transpose(x: Any) -> Any:
    return transposed.bcoo_swap_last(as_bcoo(x))


# --- tensordot ------------------------------------------------------------------------------


@implements("tensordot")
def tensordot(x1: Any, x2: Any, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array | SparseArray:
    """Sum of products over ``axes`` (as ``xp.tensordot``) with a sparse operand."""
    pair = dense._axes_argument(axes)
    a, b = product_operand(x1, "x1"), product_operand(x2, "x2")
    if _is_matrix_product(a, b, pair):
        if is_sparse(a) and is_sparse(b):  # eagerly on CPU row by row, as matmul's
            product = _on_host(a, b, functools.partial(dense._tensordot, axes=pair))
            if product is not None:
                return product
        else:  # the same product as matmul's, so placed as matmul's is
            return result(meshes.product(_matmul, a, b))
    return result(_tensordot(operand(x1, "x1"), operand(x2, "x2"), axes=pair))


def _is_matrix_product(a: Any, b: Any, pair: Any) -> bool:
    """Whether ``tensordot(a, b, axes=pair)`` is the matrix product of two 2-d arrays, one of them
    sparse or both (bool, which matmul rejects, excepted)."""
    if a.ndim != 2 or b.ndim != 2 or np.bool_ in (a.dtype, b.dtype):
        return False
    if a.shape[1] != b.shape[0]:
        return False  # tensordot's own check names the axes
    return pair == 1 or pair in (((1,), (0,)), ((-1,), (0,)), ((1,), (-2,)), ((-1,), (-2,)))


def contracted(axes: Any, ndim1: int, ndim2: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The normalized contracted axes of tensordot (after the dense checks passed)."""
    if isinstance(axes, int):
        return tuple(range(ndim1 - axes, ndim1)), tuple(range(axes))
    return tuple(a % ndim1 for a in axes[0]), tuple(a % ndim2 for a in axes[1])


@functools.partial(kernel, static_argnames="axes")
def _tensordot(x1: Any, x2: Any, axes: Any) -> Any:
    dtype = jax.eval_shape(functools.partial(dense._tensordot, axes=axes), aval(x1), aval(x2)).dtype
    first, second = contracted(axes, x1.ndim, x2.ndim)
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    if plain(x1) and not is_sparse(x2) and len(first) == 1 and second == (0,):
        rest = x2.shape[1:]
        folded = x2.reshape(x2.shape[0], math.prod(rest))
        product = matrix_product if first == (1,) else transposed_product
        y = product(x1, folded)
        return y.reshape(y.shape[0], *rest)
    if plain(x2) and not is_sparse(x1) and len(second) == 1 and first == (x1.ndim - 1,):
        rest = x1.shape[:-1]
        folded = x1.reshape(math.prod(rest), x1.shape[-1]).T
        product = transposed_product if second == (0,) else matrix_product
        y = product(x2, folded)
        return y.T.reshape(*rest, y.shape[0])
    operands = [flat_bcoo(x) if is_sparse(x) else x for x in (x1, x2)]
    return _jax_call("tensordot", jsparse.bcoo_dot_general, *operands, dimension_numbers=((first, second), ((), ())))


# --- vecdot ---------------------------------------------------------------------------------


@implements("vecdot")
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Array | SparseArray:
    """``sum(conj(x1) * x2, axis=axis)`` with a sparse operand (broadcasting the other axes)."""
    return result(_vecdot(operand(x1, "x1"), operand(x2, "x2"), axis=boundary.integer(axis, "axis")))


def _entries(x: Any, shape: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """The stored values of a sparse ``x``, their indices in ``shape`` (which ``x.shape`` broadcasts
    to; an entry is repeated along the axes it broadcasts over) and whether each is in range."""
    x = flat_bcoo(x)
    ndim = len(shape)
    lead = ndim - x.ndim
    own = (1,) * lead + tuple(x.shape)
    data = x.data
    indices = x.indices.astype(np.int64 if x.indices.dtype == np.int64 else np.int32)  # room for any index
    valid = jnp.all((indices >= 0) & (indices < jnp.asarray(x.shape, indices.dtype)), axis=-1)
    columns = [jnp.zeros_like(indices[:, 0])] * lead + [indices[:, k] for k in range(x.ndim)]
    spread = [axis for axis in range(ndim) if own[axis] == 1 and shape[axis] > 1]
    if spread:
        grid = jnp.meshgrid(*(jnp.arange(shape[a], dtype=indices.dtype) for a in spread), indexing="ij")
        repeat = math.prod(shape[a] for a in spread)
        columns = [jnp.repeat(c, repeat) for c in columns]
        for a, g in zip(spread, grid, strict=True):
            columns[a] = jnp.tile(g.reshape(-1), data.shape[0])
        data, valid = jnp.repeat(data, repeat), jnp.repeat(valid, repeat)
    return data, jnp.stack(columns, axis=-1) if columns else indices, valid


@functools.partial(kernel, static_argnames="axis")
def _vecdot(x1: Any, x2: Any, axis: int) -> Any:
    dtype = jax.eval_shape(functools.partial(dense._vecdot, axis=axis), aval(x1), aval(x2)).dtype
    axis = dense.vector_axis(axis, x1, x2)
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    ndim = len(shape)
    axis += ndim
    complex_ = dtype.kind == "c"
    if is_sparse(x1) and is_sparse(x2):
        left, right = (_broadcast_bcoo(x, shape) for x in (x1, x2))
        if complex_:
            left = _conj(left)
        product = jsparse.bcoo_multiply_sparse(left, right)
        return cast(jsparse.bcoo_reduce_sum(product, axes=(axis,)), dtype)
    sparse_first = is_sparse(x1)
    matrix, other = (x1, x2) if sparse_first else (x2, x1)
    data, indices, valid = _entries(matrix, shape)
    other = other.reshape((1,) * (ndim - other.ndim) + tuple(other.shape))
    at = tuple(indices[:, a] if other.shape[a] > 1 else 0 for a in range(ndim))
    values = other.at[at].get(mode="fill", fill_value=0)
    if complex_:
        data, values = (jnp.conj(data), values) if sparse_first else (data, jnp.conj(values))
    out_shape = shape[:axis] + shape[axis + 1 :]
    size = math.prod(out_shape)
    kept = [indices[:, a] for a in range(ndim) if a != axis]
    position = jnp.ravel_multi_index(tuple(kept), out_shape, mode="clip") if kept else jnp.zeros_like(valid, jnp.int32)
    position = jnp.where(valid, position, size)
    total = jax.ops.segment_sum(data * values, position, num_segments=size)
    return total.reshape(out_shape).astype(dtype)


def _conj(x: Any) -> Any:
    children, aux = x.tree_flatten()
    return type(x).tree_unflatten(aux, (jnp.conj(children[0]), *children[1:]))


def _broadcast_bcoo(x: Any, shape: tuple[int, ...]) -> Any:
    """A sparse ``x`` broadcast to ``shape`` as a BCOO without batch or dense dimensions."""
    if tuple(x.shape) == shape:
        return flat_bcoo(x)
    data, indices, valid = _entries(x, shape)
    indices = jnp.where(valid[:, None], indices, jnp.asarray(shape, indices.dtype))
    return jsparse.BCOO((data, indices), shape=shape)
