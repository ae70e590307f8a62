"""JAX's sparse API (``jax.experimental.sparse``) with array-API argument handling.

Each function is the ``jax.experimental.sparse`` function of the same name, with:

- arguments converted and checked like any xp function's: dense operands are xp arrays (or
  anything ``xp.asarray`` takes without a copy: JAX and NumPy arrays, Python scalars), sparse
  operands are ``xp.sparse.BCOO`` / ``BCSR`` (JAX's own sparse arrays are taken too), shapes,
  axes and dtypes are checked, and a rejected argument raises the usual error naming the
  function and the parameter (``xp.sparse.bcoo_fromdense: n_batch must be ...``);
- results returned as xp types: ``BCOO``/``BCSR`` for sparse results, ``xp.Array`` for dense;
- the products (``bcoo_dot_general``, ``bcsr_dot_general``, ``bcoo_multiply_*``) promoting their
  operands' dtypes as xp's products do (``bool`` is rejected);
- nothing dropped silently: where JAX truncates to a given ``nse`` (``bcoo_sum_duplicates``,
  ``bcoo_eliminate_zeros``, ``bcoo_fromdense``), an eager call checks that ``nse`` is large
  enough; under a trace ``nse`` must be given (the count is data-dependent) and is trusted.

``sparsify(f)`` turns a function written with ``jax.numpy`` into one that takes xp arrays,
sparse ones included, and returns xp arrays.

These functions work under ``jax.jit``, ``jax.grad`` (with respect to ``data`` and dense
operands) and ``jax.vmap`` as JAX's do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse
from jax.experimental.sparse import bcoo as _jbcoo
from jax.experimental.sparse import bcsr as _jbcsr

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._errors import DataDependentShapeError, describe, fail
from xp._routing import api
from xp.sparse._array import BCOO, BCSR, SparseArray

Tracer = jax.core.Tracer
_JAX_ERRORS = (TypeError, ValueError, IndexError, NotImplementedError)


# --- arguments ------------------------------------------------------------------------------


def _sparse(x: Any, param: str, kind: type[SparseArray]) -> Any:
    """A sparse argument of the xp type ``kind`` (or its JAX counterpart) as the JAX array."""
    if isinstance(x, kind):
        return x._value
    if isinstance(x, kind._jax_type):
        return x
    expected = f"{param} must be an xp.sparse.{kind.__name__}"
    if isinstance(x, SparseArray):
        fail(
            TypeError,
            f"{expected}, got an xp.sparse.{type(x).__name__} (convert it with .to_{kind.__name__.lower()}())",
        )
    fail(TypeError, f"{expected}, got {describe(x)}")


def _dense(x: Any, param: str) -> Any:
    """A dense argument as a jax array (a sparse one is a TypeError: nothing densifies silently)."""
    if isinstance(x, (SparseArray, jsparse.JAXSparse)):
        fail(TypeError, f"{param} must be a dense array, got a sparse {type(x).__name__} (call .todense() "
               f"if a dense copy is what you want)")  # fmt: skip
    return boundary.array(x, param)


def _operand(x: Any, param: str, kind: type[SparseArray]) -> Any:
    """A sparse argument of type ``kind`` or a dense one."""
    if isinstance(x, (SparseArray, jsparse.JAXSparse)):
        return _sparse(x, param, kind)
    return boundary.array(x, param)


def _indices(x: Any, param: str) -> Any:
    value = _dense(x, param)
    if value.dtype not in dt.INTEGER:
        fail(TypeError, f"{param} must have an integer dtype, got {value.dtype}")
    return value


def _ints(value: Any, param: str) -> tuple[int, ...]:
    """A sequence of Python ints."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        if hasattr(value, "__index__") and not isinstance(value, bool):
            return (boundary.integer(value, param),)
        fail(TypeError, f"{param} must be a sequence of ints, got {describe(value)}")
    return tuple(boundary.integer(v, f"{param}[{i}]") for i, v in enumerate(value))


def _axes(value: Any, ndim: int, param: str) -> tuple[int, ...]:
    """Distinct axes in ``[-ndim, ndim)``, normalized."""
    axes = tuple(boundary.axis(a, ndim, param) for a in _ints(value, param))
    if len(set(axes)) != len(axes):
        fail(ValueError, f"{param} has repeated axes: {axes}")
    return axes


def _layout(n_batch: Any, n_dense: Any, ndim: int) -> tuple[int, int]:
    n_batch, n_dense = boundary.non_negative(n_batch, "n_batch"), boundary.non_negative(n_dense, "n_dense")
    if n_batch + n_dense > ndim:
        fail(ValueError, f"n_batch={n_batch} and n_dense={n_dense} exceed the {ndim} dimensions of the array")
    return n_batch, n_dense


def _index_dtype(value: Any) -> np.dtype:
    dtype = boundary.dtype(value, "index_dtype")
    if dtype not in dt.INTEGER:
        fail(TypeError, f"index_dtype must be an integer dtype, got {dtype}")
    return dtype


def _nse(value: Any, traced: bool, what: str) -> int | None:
    if value is None:
        if traced:
            fail(DataDependentShapeError, f"nse must be given under a JAX trace: {what} is data-dependent")
        return None
    return boundary.non_negative(value, "nse")


def _is_traced(*values: Any) -> bool:
    return any(isinstance(leaf, Tracer) for leaf in jax.tree.leaves(values))


def _dimension_numbers(
    value: Any,
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]:
    """``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` as tuples of ints."""
    expected = "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))"
    try:
        (lc, rc), (lb, rb) = value
    except (TypeError, ValueError):
        fail(TypeError, f"dimension_numbers must be {expected}, got {value!r}")
    names = ("lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch")
    parts = [_ints(v, f"dimension_numbers ({n})") for v, n in zip((lc, rc, lb, rb), names, strict=True)]
    if len(parts[0]) != len(parts[1]) or len(parts[2]) != len(parts[3]):
        fail(ValueError, f"dimension_numbers must pair as many lhs as rhs dimensions, got {value!r}")
    return (parts[0], parts[1]), (parts[2], parts[3])


def _check_dims(dims: Sequence[int], ndim: int, param: str) -> None:
    for d in dims:
        if not 0 <= d < ndim:
            fail(ValueError, f"{param} holds dimension {d}, out of range for an operand of {ndim} dimensions")
    if len(set(dims)) != len(dims):
        fail(ValueError, f"{param} has repeated dimensions: {tuple(dims)}")


def _promoted(lhs: Any, rhs: Any) -> tuple[Any, Any]:
    """Both operands in their promoted numeric dtype (as xp's products)."""
    for value, name in ((lhs, "lhs"), (rhs, "rhs")):
        if value.dtype not in dt.NUMERIC:
            fail(TypeError, f"{name} must have a numeric dtype, got {value.dtype}")
    try:
        dtype = dt.promote(lhs.dtype, rhs.dtype)
    except dt.PromotionError as e:
        fail(TypeError, f"lhs and rhs: {e}")
    return _astype(lhs, dtype), _astype(rhs, dtype)


def _astype(value: Any, dtype: np.dtype) -> Any:
    if value.dtype == dtype:
        return value
    if isinstance(value, jsparse.JAXSparse):
        children, aux = value.tree_flatten()
        return type(value).tree_unflatten(aux, (children[0].astype(dtype), *children[1:]))
    return value.astype(dtype)


def _jax(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call JAX; its argument errors are reported as the xp function's."""
    try:
        return fn(*args, **kwargs)
    except _JAX_ERRORS as e:
        if type(e) in _JAX_ERRORS:
            fail(type(e), f"{e} (from jax.experimental.sparse.{getattr(fn, '__name__', 'function')})")
        raise


def _out(value: Any) -> Any:
    """The xp type of a JAX result."""
    if isinstance(value, jsparse.BCOO):
        return BCOO._wrap(value)
    if isinstance(value, jsparse.BCSR):
        return BCSR._wrap(value)
    if isinstance(value, (jax.Array, Tracer)):
        return wrap(boundary.from_jax(value, "result") if value.dtype in dt.ANY else value)
    return value


def _check_nse(needed: Any, nse: int | None, what: str) -> None:
    if nse is not None and not isinstance(needed, Tracer):
        count = int(np.max(np.asarray(needed))) if np.size(needed) else 0
        if count > nse:
            fail(ValueError, f"nse={nse} is smaller than the {count} {what} (per batch); entries would be dropped")


# --- conversion -----------------------------------------------------------------------------


@api
def bcoo_fromdense(
    mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0, index_dtype: Any = jnp.int32
) -> BCOO:
    """A BCOO of a dense array (``nse`` must be given under a trace; eagerly it is checked)."""
    value = _dense(mat, "mat")
    n_batch, n_dense = _layout(n_batch, n_dense, value.ndim)
    count = _nse(nse, _is_traced(value), "the number of nonzero elements")
    if count is not None:
        _check_nse(_nonzero_count(value, n_batch, n_dense), count, "nonzero elements of mat")
    return _out(_jax(jsparse.bcoo_fromdense, value, nse=count, n_batch=n_batch, n_dense=n_dense,
                     index_dtype=_index_dtype(index_dtype)))  # type: ignore[no-any-return]  # fmt: skip


@api
def bcsr_fromdense(
    mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0, index_dtype: Any = jnp.int32
) -> BCSR:
    """A BCSR of a dense array (two sparse dimensions after ``n_batch`` batch dimensions)."""
    value = _dense(mat, "mat")
    n_batch, n_dense = _layout(n_batch, n_dense, value.ndim)
    if value.ndim - n_batch - n_dense != 2:
        fail(ValueError, f"a BCSR array has 2 sparse dimensions; mat of shape {tuple(value.shape)} with "
               f"n_batch={n_batch} and n_dense={n_dense} has {value.ndim - n_batch - n_dense}")  # fmt: skip
    count = _nse(nse, _is_traced(value), "the number of nonzero elements")
    if count is not None:
        _check_nse(_nonzero_count(value, n_batch, n_dense), count, "nonzero elements of mat")
    return _out(_jax(jsparse.bcsr_fromdense, value, nse=count, n_batch=n_batch, n_dense=n_dense,
                     index_dtype=_index_dtype(index_dtype)))  # type: ignore[no-any-return]  # fmt: skip


def _nonzero_count(value: Any, n_batch: int, n_dense: int) -> Any:
    """The number of nonzero elements per batch (a tracer under a trace, then unchecked)."""
    if isinstance(value, Tracer):
        return value
    return _count(value, n_batch=n_batch, n_dense=n_dense) if value.size else 0


@functools.partial(jax.jit, static_argnames=("n_batch", "n_dense"))
def _count(value: Any, n_batch: int, n_dense: int) -> Any:
    mask = value != 0
    if n_dense:
        mask = jnp.any(mask, axis=tuple(range(value.ndim - n_dense, value.ndim)))
    return jnp.sum(mask, axis=tuple(range(n_batch, mask.ndim)))


@api
def bcoo_todense(mat: Any) -> Array:
    """The dense array of a BCOO (the explicit densification)."""
    return _out(_jax(jsparse.bcoo_todense, _sparse(mat, "mat", BCOO)))  # type: ignore[no-any-return]


@api
def bcsr_todense(mat: Any) -> Array:
    """The dense array of a BCSR (the explicit densification)."""
    return _out(_jax(jsparse.bcsr_todense, _sparse(mat, "mat", BCSR)))  # type: ignore[no-any-return]


# --- products -------------------------------------------------------------------------------


def _dot_arguments(lhs: Any, rhs: Any, dimension_numbers: Any, kind: type[SparseArray]) -> tuple[Any, Any, Any]:
    lhs, rhs = _operand(lhs, "lhs", kind), _operand(rhs, "rhs", kind)
    numbers = _dimension_numbers(dimension_numbers)
    (lc, rc), (lb, rb) = numbers
    _check_dims((*lc, *lb), lhs.ndim, "dimension_numbers (lhs)")
    _check_dims((*rc, *rb), rhs.ndim, "dimension_numbers (rhs)")
    for d1, d2 in (*zip(lc, rc, strict=True), *zip(lb, rb, strict=True)):
        if lhs.shape[d1] != rhs.shape[d2]:
            fail(ValueError, f"dimension {d1} of lhs (size {lhs.shape[d1]}) and dimension {d2} of rhs "
                   f"(size {rhs.shape[d2]}) are paired but differ in size")  # fmt: skip
    lhs, rhs = _promoted(lhs, rhs)
    return lhs, rhs, numbers


def _preferred(value: Any) -> np.dtype | None:
    return boundary.optional_dtype(value, "preferred_element_type")


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
    return _out(_jax(jsparse.bcoo_dot_general, lhs, rhs, dimension_numbers=numbers, precision=precision,
                     preferred_element_type=_preferred(preferred_element_type)))  # type: ignore[no-any-return]  # fmt: skip


@api
def bcsr_dot_general(
    lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: None = None, preferred_element_type: Any = None
) -> Array:
    """``lax.dot_general`` of a BCSR ``lhs`` and a dense ``rhs`` (a dense result)."""
    if not isinstance(lhs, (BCSR, jsparse.BCSR)):
        _sparse(lhs, "lhs", BCSR)
    if isinstance(rhs, (SparseArray, jsparse.JAXSparse)):
        fail(TypeError, f"rhs must be a dense array, got a sparse {type(rhs).__name__} (JAX's bcsr_dot_general "
               f"takes a dense rhs; use xp.matmul or bcoo_dot_general for two sparse operands)")  # fmt: skip
    lhs, rhs, numbers = _dot_arguments(lhs, rhs, dimension_numbers, BCSR)
    return _out(_jax(jsparse.bcsr_dot_general, lhs, rhs, dimension_numbers=numbers, precision=precision,
                     preferred_element_type=_preferred(preferred_element_type)))  # type: ignore[no-any-return]  # fmt: skip


@api
def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *, dimension_numbers: Any) -> Array:  # noqa: N803
    """The values of ``lax.dot_general(A, B)`` at ``indices`` only (the data of a BCOO with them)."""
    a, b_, numbers = _dot_arguments(_dense(A, "A"), _dense(B, "B"), dimension_numbers, BCOO)
    index = _indices(indices, "indices")
    if index.ndim < 2:
        fail(ValueError, f"indices must have shape (*batch, nse, n_sparse), got {tuple(index.shape)}")
    return _out(_jax(jsparse.bcoo_dot_general_sampled, a, b_, index, dimension_numbers=numbers))  # type: ignore[no-any-return]


@api
def bcoo_multiply_sparse(lhs: Any, rhs: Any) -> BCOO:
    """The element-wise product of two BCOO arrays of the same shape (the intersection of their patterns)."""
    left, right = _sparse(lhs, "lhs", BCOO), _sparse(rhs, "rhs", BCOO)
    if tuple(left.shape) != tuple(right.shape):
        fail(ValueError, f"lhs and rhs must have the same shape, got {tuple(left.shape)} and {tuple(right.shape)}")
    left, right = _promoted(left, right)
    return _out(_jax(jsparse.bcoo_multiply_sparse, left, right))  # type: ignore[no-any-return]


@api
def bcoo_multiply_dense(sp_mat: Any, v: Any) -> Array:
    """The element-wise product of a BCOO and a dense array broadcast to its shape: the values at
    the stored entries (JAX returns them as a dense array of the BCOO's data shape)."""
    mat, value = _sparse(sp_mat, "sp_mat", BCOO), _dense(v, "v")
    try:
        np.broadcast_shapes(tuple(value.shape), tuple(mat.shape))
    except ValueError:
        fail(ValueError, f"v of shape {tuple(value.shape)} does not broadcast to sp_mat's shape {tuple(mat.shape)}")
    mat, value = _promoted(mat, value)
    return _out(_jax(jsparse.bcoo_multiply_dense, mat, value))  # type: ignore[no-any-return]


# --- extraction and indexing ----------------------------------------------------------------


@api
def bcoo_extract(sparr: Any, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """A BCOO with the pattern of ``sparr`` and the values of the dense ``arr`` there."""
    pattern, value = _sparse(sparr, "sparr", BCOO), _dense(arr, "arr")
    if tuple(value.shape) != tuple(pattern.shape):
        fail(ValueError, f"arr must have sparr's shape {tuple(pattern.shape)}, got {tuple(value.shape)}")
    unique = boundary.optional_boolean(assume_unique, "assume_unique")
    return _out(_jax(jsparse.bcoo_extract, pattern, value, assume_unique=unique))  # type: ignore[no-any-return]


@api
def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Array:
    """The values of the dense ``mat`` at the entries of a BCSR pattern ``(indices, indptr)``."""
    cols, ptr, value = _indices(indices, "indices"), _indices(indptr, "indptr"), _dense(mat, "mat")
    n_batch = cols.ndim - 1
    if n_batch < 0 or value.ndim < n_batch + 2 or ptr.shape[-1] != value.shape[n_batch] + 1:
        fail(ValueError, f"indices of shape {tuple(cols.shape)} and indptr of shape {tuple(ptr.shape)} do not "
               f"describe a BCSR pattern of mat's shape {tuple(value.shape)}")  # fmt: skip
    return _out(_jax(jsparse.bcsr_extract, cols, ptr, value))  # type: ignore[no-any-return]


@api
def bcoo_gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: Any,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
) -> BCOO:
    """``lax.gather`` of a BCOO (a BCOO result)."""
    mat = _sparse(operand, "operand", BCOO)
    start = _indices(start_indices, "start_indices")
    if not isinstance(dimension_numbers, jax.lax.GatherDimensionNumbers):
        fail(
            TypeError,
            f"dimension_numbers must be a jax.lax.GatherDimensionNumbers, got {describe(dimension_numbers)}",
        )
    sizes = _ints(slice_sizes, "slice_sizes")
    if len(sizes) != mat.ndim:
        fail(ValueError, f"slice_sizes must have one size per dimension of operand ({mat.ndim}), got {sizes}")
    return _out(_jax(jsparse.bcoo_gather, mat, start, dimension_numbers, sizes,
                     unique_indices=boundary.boolean(unique_indices, "unique_indices"),
                     indices_are_sorted=boundary.boolean(indices_are_sorted, "indices_are_sorted"),
                     mode=mode, fill_value=fill_value))  # type: ignore[no-any-return]  # fmt: skip


@api
def bcoo_dynamic_slice(mat: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> BCOO:
    """``lax.dynamic_slice`` of a BCOO: ``start_indices`` may be traced (they are clamped into
    range, as in ``lax.dynamic_slice``), ``slice_sizes`` are static."""
    value = _sparse(mat, "mat", BCOO)
    if isinstance(start_indices, (str, bytes)) or not isinstance(start_indices, Sequence):
        fail(TypeError, f"start_indices must be a sequence of integers, got {describe(start_indices)}")
    starts = []
    for i, s in enumerate(start_indices):
        if isinstance(s, (Array, jax.Array, Tracer, np.ndarray, np.generic)):
            scalar = boundary.array(s, f"start_indices[{i}]")
            if scalar.ndim != 0 or scalar.dtype not in dt.INTEGER:
                fail(TypeError, f"start_indices[{i}] must be an integer scalar, got {describe(scalar)}")
            starts.append(scalar)
        else:
            starts.append(boundary.integer(s, f"start_indices[{i}]"))
    sizes = _ints(slice_sizes, "slice_sizes")
    if len(starts) != value.ndim or len(sizes) != value.ndim:
        fail(ValueError, f"start_indices and slice_sizes must have one entry per dimension of mat ({value.ndim}), "
               f"got {len(starts)} and {len(sizes)}")  # fmt: skip
    for axis, (size, dim) in enumerate(zip(sizes, value.shape, strict=True)):
        if not 0 <= size <= dim:
            fail(ValueError, f"slice_sizes[{axis}]={size} must be in [0, {dim}]")
    return _out(_jax(jsparse.bcoo_dynamic_slice, value, starts, sizes))  # type: ignore[no-any-return]


@api
def bcoo_slice(
    mat: Any, *, start_indices: Sequence[int], limit_indices: Sequence[int], strides: Sequence[int] | None = None
) -> BCOO:
    """``lax.slice`` of a BCOO (static bounds, checked)."""
    value = _sparse(mat, "mat", BCOO)
    start, limit = _ints(start_indices, "start_indices"), _ints(limit_indices, "limit_indices")
    step = None if strides is None else _ints(strides, "strides")
    for name, part in (("start_indices", start), ("limit_indices", limit), ("strides", step)):
        if part is not None and len(part) != value.ndim:
            fail(ValueError, f"{name} must have one entry per dimension of mat ({value.ndim}), got {len(part)}")
    for axis, (lo, hi, dim) in enumerate(zip(start, limit, value.shape, strict=True)):
        if not 0 <= lo <= hi <= dim:
            fail(IndexError, f"the slice [{lo}, {hi}) of dimension {axis} is out of bounds for its size {dim}")
    if step is not None and any(s < 1 for s in step):
        fail(ValueError, f"strides must be positive, got {step}")
    return _out(_jax(jsparse.bcoo_slice, value, start_indices=start, limit_indices=limit, strides=step))  # type: ignore[no-any-return]


# --- shape ----------------------------------------------------------------------------------


def _concatenate(operands: Any, dimension: Any, kind: type[SparseArray], fn: Callable[..., Any]) -> Any:
    if isinstance(operands, (SparseArray, jsparse.JAXSparse)) or not isinstance(operands, Sequence) or not operands:
        fail(TypeError, f"operands must be a non-empty sequence of xp.sparse.{kind.__name__} arrays, "
               f"got {describe(operands)}")  # fmt: skip
    values = [_sparse(x, f"operands[{i}]", kind) for i, x in enumerate(operands)]
    ndim = values[0].ndim
    axis = boundary.axis(dimension, max(ndim, 1), "dimension")
    for i, v in enumerate(values):
        if v.ndim != ndim or any(v.shape[d] != values[0].shape[d] for d in range(ndim) if d != axis):
            fail(ValueError, f"operands[{i}] of shape {tuple(v.shape)} does not match operands[0] of shape "
                   f"{tuple(values[0].shape)} apart from dimension {axis}")  # fmt: skip
    dtype = dt.promote_all(v.dtype for v in values)
    return _out(_jax(fn, [_astype(v, dtype) for v in values], dimension=axis))


@api
def bcoo_concatenate(operands: Sequence[Any], *, dimension: int) -> BCOO:
    """BCOO arrays joined along ``dimension`` (dtypes promoted; layouts as JAX requires)."""
    return _concatenate(operands, dimension, BCOO, jsparse.bcoo_concatenate)  # type: ignore[no-any-return]


@api
def bcsr_concatenate(operands: Sequence[Any], *, dimension: int) -> BCSR:
    """BCSR arrays joined along ``dimension``."""
    return _concatenate(operands, dimension, BCSR, jsparse.bcsr_concatenate)  # type: ignore[no-any-return]


def _broadcast_arguments(value: Any, shape: Any, broadcast_dimensions: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    target = boundary.shape(shape, "shape")
    dims = _ints(broadcast_dimensions, "broadcast_dimensions")
    if len(dims) != value.ndim:
        fail(ValueError, f"broadcast_dimensions must have one entry per dimension of mat ({value.ndim}), got {dims}")
    _check_dims(dims, len(target), "broadcast_dimensions")
    for axis, d in enumerate(dims):
        if value.shape[axis] not in (1, target[d]):
            fail(ValueError, f"dimension {axis} of mat (size {value.shape[axis]}) cannot broadcast to size "
                   f"{target[d]} (dimension {d} of shape)")  # fmt: skip
    return target, dims


@api
def bcoo_broadcast_in_dim(mat: Any, *, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> BCOO:
    """``lax.broadcast_in_dim`` of a BCOO."""
    value = _sparse(mat, "mat", BCOO)
    target, dims = _broadcast_arguments(value, shape, broadcast_dimensions)
    return _out(_jax(jsparse.bcoo_broadcast_in_dim, value, shape=target, broadcast_dimensions=dims))  # type: ignore[no-any-return]


@api
def bcsr_broadcast_in_dim(mat: Any, *, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> BCSR:
    """``lax.broadcast_in_dim`` of a BCSR."""
    value = _sparse(mat, "mat", BCSR)
    target, dims = _broadcast_arguments(value, shape, broadcast_dimensions)
    return _out(_jax(jsparse.bcsr_broadcast_in_dim, value, shape=target, broadcast_dimensions=dims))  # type: ignore[no-any-return]


@api
def bcoo_reshape(mat: Any, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> BCOO:
    """``lax.reshape`` of a BCOO (the number of elements must not change)."""
    value = _sparse(mat, "mat", BCOO)
    sizes = boundary.shape(tuple(_ints(new_sizes, "new_sizes")), "new_sizes")
    if int(np.prod(sizes)) != int(np.prod(value.shape)):
        fail(ValueError, f"cannot reshape mat of shape {tuple(value.shape)} to {sizes}")
    dims = None if dimensions is None else _ints(dimensions, "dimensions")
    if dims is not None and sorted(dims) != list(range(value.ndim)):
        fail(ValueError, f"dimensions must be a permutation of the {value.ndim} dimensions of mat, got {dims}")
    return _out(_jax(jsparse.bcoo_reshape, value, new_sizes=sizes, dimensions=dims))  # type: ignore[no-any-return]


@api
def bcoo_transpose(mat: Any, *, permutation: Sequence[int]) -> BCOO:
    """``lax.transpose`` of a BCOO (batch, sparse and dense dimensions each stay among their kind)."""
    value = _sparse(mat, "mat", BCOO)
    perm = _ints(permutation, "permutation")
    if sorted(perm) != list(range(value.ndim)):
        fail(ValueError, f"permutation must be a permutation of the {value.ndim} dimensions of mat, got {perm}")
    return _out(_jax(jsparse.bcoo_transpose, value, permutation=perm))  # type: ignore[no-any-return]


@api
def bcoo_squeeze(arr: Any, *, dimensions: Sequence[int]) -> BCOO:
    """The BCOO without the given dimensions, which must have size 1."""
    value = _sparse(arr, "arr", BCOO)
    dims = _axes(dimensions, value.ndim, "dimensions")
    for d in dims:
        if value.shape[d] != 1:
            fail(ValueError, f"dimension {d} has size {value.shape[d]}; only dimensions of size 1 can be squeezed")
    return _out(_jax(jsparse.bcoo_squeeze, value, dimensions=dims))  # type: ignore[no-any-return]


@api
def bcoo_reduce_sum(mat: Any, *, axes: Sequence[int]) -> BCOO:
    """The sum over ``axes`` of a BCOO (a BCOO, possibly with duplicate entries)."""
    value = _sparse(mat, "mat", BCOO)
    return _out(_jax(jsparse.bcoo_reduce_sum, value, axes=_axes(axes, value.ndim, "axes")))  # type: ignore[no-any-return]


# --- duplicates, order, layout --------------------------------------------------------------


@api
def bcoo_sum_duplicates(mat: Any, nse: int | None = None) -> BCOO:
    """Duplicate entries added together, indices sorted; with ``nse``, padded to that many entries
    (an eager call checks that ``nse`` keeps every distinct entry)."""
    value = _sparse(mat, "mat", BCOO)
    count = None if nse is None else boundary.non_negative(nse, "nse")
    if count is not None and not _is_traced(value):
        _check_nse(_distinct(value), count, "distinct entries of mat")
    return _out(_jax(jsparse.bcoo_sum_duplicates, value, nse=count))  # type: ignore[no-any-return]


@api
def bcsr_sum_duplicates(mat: Any, nse: int | None = None) -> BCSR:
    """Duplicate entries added together, indices sorted (``nse`` as in ``bcoo_sum_duplicates``)."""
    value = _sparse(mat, "mat", BCSR)
    count = None if nse is None else boundary.non_negative(nse, "nse")
    if count is not None and not _is_traced(value):
        _check_nse(_distinct(value.to_bcoo()), count, "distinct entries of mat")
    return _out(_jax(jsparse.bcsr_sum_duplicates, value, nse=count))  # type: ignore[no-any-return]


def _distinct(value: Any) -> Any:
    """The number of distinct in-range entries per batch (eager)."""
    return jsparse.bcoo_sum_duplicates(value).nse if value.nse else 0


@api
def bcoo_eliminate_zeros(mat: Any, nse: int | None = None) -> BCOO:
    """The BCOO without its explicitly stored zeros (duplicates summed; ``nse`` as in
    ``bcoo_sum_duplicates``)."""
    value = _sparse(mat, "mat", BCOO)
    count = None if nse is None else boundary.non_negative(nse, "nse")
    if count is not None and not _is_traced(value):
        _check_nse(_jbcoo.bcoo_eliminate_zeros(value).nse if value.nse else 0, count, "nonzero entries of mat")
    return _out(_jax(_jbcoo.bcoo_eliminate_zeros, value, nse=count))  # type: ignore[no-any-return]


@api
def bcsr_eliminate_zeros(mat: Any, nse: int | None = None) -> BCSR:
    """The BCSR without its explicitly stored zeros."""
    value = _sparse(mat, "mat", BCSR)
    count = None if nse is None else boundary.non_negative(nse, "nse")
    if count is not None and not _is_traced(value):
        _check_nse(
            _jbcoo.bcoo_eliminate_zeros(value.to_bcoo()).nse if value.nse else 0, count, "nonzero entries of mat"
        )
    return _out(_jax(_jbcsr.bcsr_eliminate_zeros, value, nse=count))  # type: ignore[no-any-return]


@api
def bcoo_sort_indices(mat: Any) -> BCOO:
    """The same BCOO with its entries in lexicographic order of their indices."""
    return _out(_jax(jsparse.bcoo_sort_indices, _sparse(mat, "mat", BCOO)))  # type: ignore[no-any-return]


@api
def bcoo_update_layout(
    mat: Any, *, n_batch: int | None = None, n_dense: int | None = None, on_inefficient: str | None = "error"
) -> BCOO:
    """The same array with ``n_batch`` batch and ``n_dense`` dense dimensions."""
    value = _sparse(mat, "mat", BCOO)
    nb = value.n_batch if n_batch is None else boundary.non_negative(n_batch, "n_batch")
    nd = value.n_dense if n_dense is None else boundary.non_negative(n_dense, "n_dense")
    _layout(nb, nd, value.ndim)
    if on_inefficient is not None:
        boundary.choice(on_inefficient, ("error", "warn"), "on_inefficient")
    return _out(_jax(jsparse.bcoo_update_layout, value, n_batch=nb, n_dense=nd, on_inefficient=on_inefficient))  # type: ignore[no-any-return]


# --- sparsify -------------------------------------------------------------------------------


def _is_xp_leaf(x: Any) -> bool:
    return isinstance(x, (SparseArray, Array))


def _to_jax(x: Any) -> Any:
    if isinstance(x, SparseArray):
        return x._value
    if isinstance(x, Array):
        return x._value
    return x


def _from_jax(x: Any) -> Any:
    if isinstance(x, (jsparse.BCOO, jsparse.BCSR, jax.Array, Tracer)):
        return _out(x)
    return x


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """``f``, written with ``jax.numpy`` and ``jax.lax``, made to take xp arrays, sparse ones included.

    The xp arguments (anywhere in pytrees) are passed to ``jax.experimental.sparse.sparsify(f)``
    as JAX arrays and JAX sparse arrays; the JAX arrays and sparse arrays in the result come back
    as xp arrays and xp sparse arrays. What JAX cannot do sparsely raises JAX's
    NotImplementedError (nothing is densified).
    """
    if not callable(f):
        raise TypeError(f"xp.sparse.sparsify: f must be callable, got {describe(f)}")
    inner = jsparse.sparsify(f, use_tracer=bool(use_tracer))

    @functools.wraps(f)
    def sparsified(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = jax.tree.map(_to_jax, (args, kwargs), is_leaf=_is_xp_leaf)
        out = inner(*args, **kwargs)
        return jax.tree.map(_from_jax, out, is_leaf=lambda x: isinstance(x, jsparse.JAXSparse))

    return sparsified
