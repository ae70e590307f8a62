"""JAX's sparse structural functions with xp's argument handling: extraction, indexing, shape.

``bcoo_extract``, ``bcsr_extract``, ``bcoo_gather``, ``bcoo_dynamic_slice``, ``bcoo_slice``,
``bcoo_concatenate``, ``bcsr_concatenate``, ``bcoo_broadcast_in_dim``,
``bcsr_broadcast_in_dim``, ``bcoo_reshape``, ``bcoo_transpose``, ``bcoo_squeeze``,
``bcoo_reduce_sum``: the ``jax.experimental.sparse`` functions, with bounds, sizes and
dimensions checked (an out-of-bounds static slice is an IndexError, never clamped); arguments
and results as ``xp.sparse._jax_boundary`` describes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.core
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array
from xp._errors import describe, fail
from xp._jit import Tracer
from xp._routing import api
from xp.sparse import _jax_boundary as jax_boundary
from xp.sparse._array import BCOO, BCSR, SparseArray

# --- extraction and indexing ----------------------------------------------------------------


@api
def bcoo_extract(sparr: Any, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """A BCOO with the pattern of ``sparr`` and the values of the dense ``arr`` there."""
    pattern, value = jax_boundary.sparse_argument(sparr, "sparr", BCOO), jax_boundary.dense_argument(arr, "arr")
    if tuple(value.shape) != tuple(pattern.shape):
        fail(ValueError, f"arr must have sparr's shape {tuple(pattern.shape)}, got {tuple(value.shape)}")
    unique = boundary.optional_boolean(assume_unique, "assume_unique")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_extract, pattern, value, assume_unique=unique))


@api
def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Array:
    """The values of the dense ``mat`` at the entries of a BCSR pattern ``(indices, indptr)``."""
    cols, ptr, value = (
        jax_boundary.index_argument(indices, "indices"),
        jax_boundary.index_argument(indptr, "indptr"),
        jax_boundary.dense_argument(mat, "mat"),
    )
    n_batch = cols.ndim - 1
    if n_batch < 0 or ptr.ndim != cols.ndim or value.ndim < n_batch + 2 or ptr.shape[-1] != value.shape[n_batch] + 1:
        fail(ValueError, f"indices of shape {tuple(cols.shape)} and indptr of shape {tuple(ptr.shape)} do not "
               f"describe a BCSR pattern of mat's shape {tuple(value.shape)}")  # fmt: skip
    width = value.shape[n_batch + 1]
    if cols.size and not jax_boundary.is_traced(cols) and not 0 <= int(cols.min()) <= int(cols.max()) < width:
        fail(IndexError, f"indices holds a column out of range for the {width} columns of mat")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcsr_extract, cols, ptr, value))


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
    mat = jax_boundary.sparse_argument(operand, "operand", BCOO)
    start = jax_boundary.index_argument(start_indices, "start_indices")
    if start.ndim < 1:
        fail(ValueError, "start_indices must have at least 1 dimension (one row of indices per slice), got a 0-d array")
    if not isinstance(dimension_numbers, jax.lax.GatherDimensionNumbers):
        fail(
            TypeError,
            f"dimension_numbers must be a jax.lax.GatherDimensionNumbers, got {describe(dimension_numbers)}",
        )
    sizes = jax_boundary.ints(slice_sizes, "slice_sizes")
    if len(sizes) != mat.ndim:
        fail(ValueError, f"slice_sizes must have one size per dimension of operand ({mat.ndim}), got {sizes}")
    for axis, (size, dim) in enumerate(zip(sizes, mat.shape, strict=True)):
        if not 0 <= size <= dim:
            fail(ValueError, f"slice_sizes[{axis}]={size} must be in [0, {dim}]")
    if fill_value is not None and type(fill_value) not in boundary.PY_SCALARS:  # JAX hashes it (a static argument)
        fail(TypeError, f"fill_value must be None or a Python scalar, got {describe(fill_value)}")
    return jax_boundary.result(
        jax_boundary.call_jax(
            jsparse.bcoo_gather,
            mat,
            start,
            dimension_numbers,
            sizes,
            unique_indices=boundary.boolean(unique_indices, "unique_indices"),
            indices_are_sorted=boundary.boolean(indices_are_sorted, "indices_are_sorted"),
            mode=mode,
            fill_value=fill_value,
        )
    )


@api
def bcoo_dynamic_slice(mat: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> BCOO:
    """``lax.dynamic_slice`` of a BCOO: ``start_indices`` may be traced (they are clamped into
    range, as in ``lax.dynamic_slice``), ``slice_sizes`` are static."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
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
    sizes = jax_boundary.ints(slice_sizes, "slice_sizes")
    if len(starts) != value.ndim or len(sizes) != value.ndim:
        fail(ValueError, f"start_indices and slice_sizes must have one entry per dimension of mat ({value.ndim}), "
               f"got {len(starts)} and {len(sizes)}")  # fmt: skip
    for axis, (size, dim) in enumerate(zip(sizes, value.shape, strict=True)):
        if not 0 <= size <= dim:
            fail(ValueError, f"slice_sizes[{axis}]={size} must be in [0, {dim}]")
        if isinstance(starts[axis], int):
            # clamped here as lax.dynamic_slice clamps: a Python int beyond the index dtype would
            # otherwise be JAX's overflow error on an argument path, not a slice
            starts[axis] = min(max(starts[axis], 0), dim - size)
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_dynamic_slice, value, starts, sizes))


@api
def bcoo_slice(
    mat: Any, *, start_indices: Sequence[int], limit_indices: Sequence[int], strides: Sequence[int] | None = None
) -> BCOO:
    """``lax.slice`` of a BCOO (static bounds, checked)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    start, limit = jax_boundary.ints(start_indices, "start_indices"), jax_boundary.ints(limit_indices, "limit_indices")
    step = None if strides is None else jax_boundary.ints(strides, "strides")
    for name, part in (("start_indices", start), ("limit_indices", limit), ("strides", step)):
        if part is not None and len(part) != value.ndim:
            fail(ValueError, f"{name} must have one entry per dimension of mat ({value.ndim}), got {len(part)}")
    for axis, (lo, hi, dim) in enumerate(zip(start, limit, value.shape, strict=True)):
        if not 0 <= lo <= hi <= dim:
            fail(IndexError, f"start_indices and limit_indices: the slice [{lo}, {hi}) of dimension {axis} is out "
                   f"of bounds for its size {dim}")  # fmt: skip
    if step is not None and any(s < 1 for s in step):
        fail(ValueError, f"strides must be positive, got {step}")
    if step is not None:
        # a stride at least the slice's length takes its first element only; JAX's slice would
        # overflow on one beyond the index dtype
        step = tuple(min(s, max(hi - lo, 1)) for s, lo, hi in zip(step, start, limit, strict=True))
    return jax_boundary.result(
        jax_boundary.call_jax(jsparse.bcoo_slice, value, start_indices=start, limit_indices=limit, strides=step)
    )


# --- shape ----------------------------------------------------------------------------------


def _concatenate(operands: Any, dimension: Any, kind: type[SparseArray], fn: Callable[..., Any]) -> Any:
    if isinstance(operands, (SparseArray, jsparse.JAXSparse)) or not isinstance(operands, Sequence) or not operands:
        fail(TypeError, f"operands must be a non-empty sequence of xp.sparse.{kind.__name__} arrays, "
               f"got {describe(operands)}")  # fmt: skip
    values = [jax_boundary.sparse_argument(x, f"operands[{i}]", kind) for i, x in enumerate(operands)]
    ndim = values[0].ndim
    axis = boundary.axis(dimension, max(ndim, 1), "dimension")
    for i, v in enumerate(values):
        if v.ndim != ndim or any(v.shape[d] != values[0].shape[d] for d in range(ndim) if d != axis):
            fail(ValueError, f"operands[{i}] of shape {tuple(v.shape)} does not match operands[0] of shape "
                   f"{tuple(values[0].shape)} apart from dimension {axis}")  # fmt: skip
    dtype = dt.promote_all(v.dtype for v in values)
    return jax_boundary.result(
        jax_boundary.call_jax(fn, [jax_boundary.astype(v, dtype) for v in values], dimension=axis)
    )


@api
def bcoo_concatenate(operands: Sequence[Any], *, dimension: int) -> BCOO:
    """BCOO arrays joined along ``dimension`` (dtypes promoted; layouts as JAX requires)."""
    return _concatenate(operands, dimension, BCOO, jsparse.bcoo_concatenate)


@api
def bcsr_concatenate(operands: Sequence[Any], *, dimension: int) -> BCSR:
    """BCSR arrays joined along ``dimension``."""
    return _concatenate(operands, dimension, BCSR, jsparse.bcsr_concatenate)


def _broadcast_arguments(value: Any, shape: Any, broadcast_dimensions: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    target = boundary.shape(shape, "shape")
    dims = jax_boundary.ints(broadcast_dimensions, "broadcast_dimensions")
    if len(dims) != value.ndim:
        fail(ValueError, f"broadcast_dimensions must have one entry per dimension of mat ({value.ndim}), got {dims}")
    jax_boundary.check_dims(dims, len(target), "broadcast_dimensions")
    for axis, d in enumerate(dims):
        if value.shape[axis] not in (1, target[d]):
            fail(ValueError, f"dimension {axis} of mat (size {value.shape[axis]}) cannot broadcast to size "
                   f"{target[d]} (dimension {d} of shape)")  # fmt: skip
    return target, dims


@api
def bcoo_broadcast_in_dim(mat: Any, *, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> BCOO:
    """``lax.broadcast_in_dim`` of a BCOO."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    target, dims = _broadcast_arguments(value, shape, broadcast_dimensions)
    return jax_boundary.result(
        jax_boundary.call_jax(jsparse.bcoo_broadcast_in_dim, value, shape=target, broadcast_dimensions=dims)
    )


@api
def bcsr_broadcast_in_dim(mat: Any, *, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> BCSR:
    """``lax.broadcast_in_dim`` of a BCSR."""
    value = jax_boundary.sparse_argument(mat, "mat", BCSR)
    target, dims = _broadcast_arguments(value, shape, broadcast_dimensions)
    return jax_boundary.result(
        jax_boundary.call_jax(jsparse.bcsr_broadcast_in_dim, value, shape=target, broadcast_dimensions=dims)
    )


@api
def bcoo_reshape(mat: Any, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> BCOO:
    """``lax.reshape`` of a BCOO (the number of elements must not change)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    sizes = boundary.shape(tuple(jax_boundary.ints(new_sizes, "new_sizes")), "new_sizes")
    if int(np.prod(sizes)) != int(np.prod(value.shape)):
        fail(ValueError, f"cannot reshape mat of shape {tuple(value.shape)} to {sizes}")
    dims = None if dimensions is None else jax_boundary.ints(dimensions, "dimensions")
    if dims is not None and sorted(dims) != list(range(value.ndim)):
        fail(ValueError, f"dimensions must be a permutation of the {value.ndim} dimensions of mat, got {dims}")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_reshape, value, new_sizes=sizes, dimensions=dims))


@api
def bcoo_transpose(mat: Any, *, permutation: Sequence[int]) -> BCOO:
    """``lax.transpose`` of a BCOO (batch, sparse and dense dimensions each stay among their kind)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    perm = jax_boundary.ints(permutation, "permutation")
    if sorted(perm) != list(range(value.ndim)):
        fail(ValueError, f"permutation must be a permutation of the {value.ndim} dimensions of mat, got {perm}")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_transpose, value, permutation=perm))


@api
def bcoo_squeeze(arr: Any, *, dimensions: Sequence[int]) -> BCOO:
    """The BCOO without the given dimensions, which must have size 1."""
    value = jax_boundary.sparse_argument(arr, "arr", BCOO)
    dims = jax_boundary.axes(dimensions, value.ndim, "dimensions")
    for d in dims:
        if value.shape[d] != 1:
            fail(ValueError, f"dimension {d} has size {value.shape[d]}; only dimensions of size 1 can be squeezed")
    return jax_boundary.result(jax_boundary.call_jax(jsparse.bcoo_squeeze, value, dimensions=dims))


@api
def bcoo_reduce_sum(mat: Any, *, axes: Sequence[int]) -> BCOO:
    """The sum over ``axes`` of a BCOO (a BCOO, possibly with duplicate entries)."""
    value = jax_boundary.sparse_argument(mat, "mat", BCOO)
    return jax_boundary.result(
        jax_boundary.call_jax(jsparse.bcoo_reduce_sum, value, axes=jax_boundary.axes(axes, value.ndim, "axes"))
    )
