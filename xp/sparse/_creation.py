"""Making sparse arrays: ``fromdense``, ``from_scipy``, ``from_pydata``, and the creation
functions of the namespace ``xp.sparse`` (``asarray``, ``zeros``, ``eye``, ``full``, ...).

- The creation functions have the standard's signatures and argument checks (those of xp's
  dense functions, which they reuse) and return BCOO arrays: ``zeros``, ``empty`` and
  ``zeros_like`` store nothing, ``eye`` its diagonal, ``full`` and ``ones`` every element (none
  when the fill value is zero), and the others (``asarray``, ``arange``, ``linspace``, ``tril``,
  ``triu``, ``meshgrid``, ``from_dlpack``) the nonzero elements of the dense result: eagerly
  they count them; under a JAX transformation a dense input's count is unknown, and
  ``fromdense(x, nse=...)`` is the way.
- Given sparse arrays, ``asarray``, the ``*_like`` functions, ``tril``, ``triu`` and
  ``meshgrid`` work on the stored elements without densifying, keeping the format (and for the
  ``*_like`` functions the batch and dense dimensions) of the input. They are also xp's sparse
  implementations of the functions of the same names: ``xp.tril(A)`` is ``xp.sparse.tril(A)``.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _creation as dense
from xp import _devices
from xp import _dtypes as dt
from xp._errors import DataDependentShapeError, fail
from xp._jit import kernel
from xp._routing import api, implements
from xp._typing import ArrayLike, Device, DTypeLike
from xp.sparse import _buffers as buffers
from xp.sparse import _build as build
from xp.sparse import _conversion as conversion
from xp.sparse._array import BCOO, BCSR, SparseArray, wrap_sparse

# --- construction and conversion ------------------------------------------------------------


@api
def fromdense(
    x: ArrayLike,
    /,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: DTypeLike | None = None,
    format: Literal["bcoo", "bcsr"] = "bcoo",
) -> SparseArray:
    """The sparse array of the dense ``x``: its nonzero elements stored (negative zeros too, so
    that ``fromdense(x).todense()`` is ``x`` bit for bit).

    - ``nse``: the number of stored elements per batch. Eagerly it defaults to the number of
      nonzero elements (per batch, the largest); a larger one pads, a smaller one is an error
      (nothing is dropped). Under a JAX transformation it is required.
    - ``n_batch``, ``n_dense``: how many leading dimensions are batch dimensions and how many
      trailing ones are dense (stored as blocks); the others are sparse.
    - ``index_dtype``: an integer dtype for the indices (default int32, or int64 where a
      dimension needs it).
    - ``format``: ``"bcoo"`` or ``"bcsr"`` (which needs exactly two sparse dimensions).
    """
    value = build.dense_argument(x, "x")
    fmt = build.format_argument(format)
    return wrap_sparse(conversion.fromdense_value(value, build.nse_argument(nse), n_batch, n_dense, index_dtype, fmt))


@api
def from_scipy(
    s: Any,
    /,
    *,
    format: Literal["bcoo", "bcsr"] = "bcoo",
    dtype: DTypeLike | None = None,
    index_dtype: DTypeLike | None = None,
) -> SparseArray:
    """A sparse array with the values of ``s``, a ``scipy.sparse`` array or matrix (any format).

    Duplicates are kept (they add up, as in SciPy); the indices are checked. ``dtype`` converts
    the values explicitly (a float64 matrix with JAX's 64-bit mode off needs it).
    """
    return wrap_sparse(conversion.from_scipy_value(s, format, dtype, index_dtype))


@api
def from_pydata(
    s: Any,
    /,
    *,
    format: Literal["bcoo", "bcsr"] = "bcoo",
    dtype: DTypeLike | None = None,
    index_dtype: DTypeLike | None = None,
) -> SparseArray:
    """A sparse array with the values of ``s``, a pydata ``sparse`` array (``COO``, ``GCXS``, ...)
    whose fill value is zero."""
    return wrap_sparse(conversion.from_pydata_value(s, format, dtype, index_dtype))


# --- helpers --------------------------------------------------------------------------------


def _layout_of(x: Any) -> tuple[str, int, int]:
    if isinstance(x, SparseArray):
        return ("bcsr" if isinstance(x, BCSR) else "bcoo"), x.n_batch, x.n_dense
    return "bcoo", 0, 0


def _sparse_of(value: Any, *, every_when_traced: bool, layout: tuple[str, int, int] = ("bcoo", 0, 0)) -> Any:
    """The sparse array of a dense jax array made here: eagerly its nonzero elements stored;
    under a trace every element if ``every_when_traced`` (a result whose zeros depend on the
    values), else an error naming ``fromdense(x, nse=...)``."""
    fmt, n_batch, n_dense = layout
    nse = None
    if buffers.is_traced(value):
        if not every_when_traced:
            fail(DataDependentShapeError, "under a JAX transformation the number of nonzero elements of a "
                   "dense input is not known; use xp.sparse.fromdense(x, nse=...) with an upper bound")  # fmt: skip
        nse = math.prod(value.shape[n_batch : value.ndim - n_dense])
    return wrap_sparse(conversion.fromdense_value(value, nse, n_batch, n_dense, None, fmt))


@functools.partial(kernel, static_argnames=("shape", "dtype", "n_batch", "n_dense", "index_dtype", "fmt"))
def _empty(shape: tuple[int, ...], dtype: np.dtype, n_batch: int, n_dense: int, index_dtype: np.dtype, fmt: str) -> Any:
    n_sparse = len(shape) - n_batch - n_dense
    batch, dense_shape = shape[:n_batch], shape[n_batch + n_sparse :]
    data = jnp.zeros((*batch, 0, *dense_shape), dtype)
    if fmt == "bcsr":
        indices = jnp.zeros((*batch, 0), index_dtype)
        indptr = jnp.zeros((*batch, shape[n_batch] + 1), index_dtype)
        return buffers.make_bcsr(data, indices, indptr, shape, True, True)
    return buffers.make_bcoo(data, jnp.zeros((*batch, 0, n_sparse), index_dtype), shape, True, True)


def _nothing_stored(shape: tuple[int, ...], dtype: np.dtype, layout: tuple[str, int, int], device: Any) -> Any:
    fmt, n_batch, n_dense = layout
    sizes = shape[n_batch : len(shape) - n_dense]
    index_dtype = build.index_dtype_argument(None, sizes)
    if _host_device(device):  # no kernel to compile for each shape: put empty buffers on the device
        n_sparse = len(shape) - n_batch - n_dense
        batch, dense_shape = shape[:n_batch], shape[n_batch + n_sparse :]
        data = jax.device_put(np.zeros((*batch, 0, *dense_shape), dtype), device)
        if fmt == "bcsr":
            indices = jax.device_put(np.zeros((*batch, 0), index_dtype), device)
            indptr = jax.device_put(np.zeros((*batch, shape[n_batch] + 1), index_dtype), device)
            return BCSR._wrap(buffers.make_bcsr(data, indices, indptr, shape, True, True))
        indices = jax.device_put(np.zeros((*batch, 0, n_sparse), index_dtype), device)
        return BCOO._wrap(buffers.make_bcoo(data, indices, shape, True, True))
    value = _empty(shape, dtype, n_batch, n_dense, index_dtype, fmt)
    return wrap_sparse(conversion.place(value, device))


def _host_device(device: Any) -> bool:
    """Whether arrays made for ``device`` (None: the default) live on a CPU, where small buffers
    are built in NumPy rather than by a kernel compiled for each shape."""
    if device is None:
        device = _devices.default_device()
    return isinstance(device, jax.Device) and device.platform == "cpu"


def _default_dtype(dtype: DTypeLike | None) -> np.dtype:
    return dt.default_float() if dtype is None else boundary.dtype(dtype)


# --- asarray and from_dlpack ----------------------------------------------------------------


@api
def asarray(
    obj: Any,
    /,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
    copy: bool | None = None,
) -> SparseArray:
    """A sparse array of ``obj``: a sparse array (cast and moved as asked, else returned as it
    is), a SciPy or pydata sparse array, or anything ``xp.asarray`` takes (its nonzero elements
    stored; a copy always, so ``copy=False`` is an error for it)."""
    want = boundary.optional_dtype(dtype)
    target = boundary.device(device)
    copy = boundary.optional_boolean(copy, "copy")
    if isinstance(obj, SparseArray):
        result = obj
        if want is not None and want != obj._value.dtype:
            if copy is False:
                fail(ValueError, "copy=False, but converting the array needs a copy (a dtype change)")
            result = result._replaced(conversion.astype(result._value, want))
        if not conversion.placed_on(obj._value, target):
            if copy is False:
                fail(ValueError, "copy=False, but converting the array needs a copy (a device transfer)")
            result = result._replaced(conversion.place(result._value, target))
        if copy and result is obj:
            result = type(obj)._wrap(obj._value)  # immutable buffers: a new array object is a copy
        return result
    if _is_scipy(obj):
        return wrap_sparse(conversion.place(conversion.from_scipy_value(obj, "bcoo", want, None), target))
    if type(obj).__module__.split(".")[0] == "sparse" and hasattr(obj, "fill_value"):
        return wrap_sparse(conversion.place(conversion.from_pydata_value(obj, "bcoo", want, None), target))
    if copy is False:
        fail(ValueError, "copy=False, but a sparse array made from dense input is always a copy")
    value = dense.asarray.__wrapped__(obj, dtype=want, device=target)._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=False)


def _is_scipy(obj: Any) -> bool:
    if type(obj).__module__.split(".")[0] != "scipy":
        return False
    import scipy.sparse as sp

    return bool(sp.issparse(obj))


@api
def from_dlpack(x: Any, /, *, device: Device | None = None, copy: bool | None = None) -> SparseArray:
    """The sparse array of a DLPack producer's values (``copy=False`` is an error: a sparse
    array is always a new buffer)."""
    if isinstance(x, SparseArray):  # already one of ours: as asarray takes it
        return asarray(x, device=device, copy=copy)
    if boundary.optional_boolean(copy, "copy") is False:
        fail(ValueError, "copy=False, but a sparse array made from dense input is always a copy")
    value = dense.from_dlpack.__wrapped__(x, device=device, copy=copy)._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=False)


# --- filled arrays --------------------------------------------------------------------------


@api
def zeros(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None, device: Device | None = None) -> BCOO:
    """A sparse array of ``shape`` storing nothing (all its elements are structural zeros)."""
    return _nothing_stored(boundary.shape(shape), _default_dtype(dtype), ("bcoo", 0, 0), boundary.device(device))


@api
def empty(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None, device: Device | None = None) -> BCOO:
    """Like ``zeros``: an empty sparse array stores nothing."""
    return _nothing_stored(boundary.shape(shape), _default_dtype(dtype), ("bcoo", 0, 0), boundary.device(device))


@api
def ones(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None, device: Device | None = None) -> BCOO:
    """A sparse array of ``shape`` storing a one in every element."""
    value = dense.ones.__wrapped__(shape, dtype=dtype, device=device)._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=True)


@api
def full(
    shape: int | tuple[int, ...],
    fill_value: bool | int | float | complex,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> BCOO:
    """A sparse array of ``shape`` storing ``fill_value`` in every element (nothing if it is 0)."""
    value = dense.full.__wrapped__(shape, fill_value, dtype=dtype, device=device)._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=True)


def _like_source(x: Any) -> tuple[tuple[int, ...], np.dtype, Any]:
    """The shape, dtype and device of ``x``, sparse or dense."""
    if isinstance(x, SparseArray):
        return x.shape, x._value.dtype, _devices.device_of(x._value.data)
    source = boundary.array(x, "x")
    return tuple(source.shape), source.dtype, _devices.device_of(source)


def _like_device(source_device: Any, device: Device | None) -> Any:
    target = boundary.device(device)
    if target is None and source_device is not _devices.TRACED:
        return source_device
    return target


@api
def zeros_like(
    x: ArrayLike | SparseArray, /, *, dtype: DTypeLike | None = None, device: Device | None = None
) -> SparseArray:
    """A sparse array storing nothing, with the shape (and by default the dtype and device) of
    ``x``; for a sparse ``x`` also its format and batch and dense dimensions."""
    shape, source_dtype, source_device = _like_source(x)
    want = source_dtype if dtype is None else boundary.dtype(dtype)
    return _nothing_stored(shape, want, _layout_of(x), _like_device(source_device, device))


@api
def empty_like(
    x: ArrayLike | SparseArray, /, *, dtype: DTypeLike | None = None, device: Device | None = None
) -> SparseArray:
    """Like ``zeros_like``."""
    shape, source_dtype, source_device = _like_source(x)
    want = source_dtype if dtype is None else boundary.dtype(dtype)
    return _nothing_stored(shape, want, _layout_of(x), _like_device(source_device, device))


@api
def ones_like(
    x: ArrayLike | SparseArray, /, *, dtype: DTypeLike | None = None, device: Device | None = None
) -> SparseArray:
    """A sparse array storing a one in every element, with the shape (and by default the dtype,
    device, and for a sparse ``x`` the format and layout) of ``x``."""
    shape, source_dtype, source_device = _like_source(x)
    want = source_dtype if dtype is None else boundary.dtype(dtype)
    value = dense.ones.__wrapped__(shape, dtype=want, device=_like_device(source_device, device))._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=True, layout=_layout_of(x))


@api
def full_like(
    x: ArrayLike | SparseArray,
    /,
    fill_value: bool | int | float | complex,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> SparseArray:
    """A sparse array storing ``fill_value`` in every element (nothing if it is 0), with the
    shape (and by default the dtype, device, and for a sparse ``x`` the format and layout) of
    ``x``."""
    return _full_like(x, fill_value, dtype, device)


def _full_like(x: Any, fill_value: Any, dtype: DTypeLike | None, device: Device | None) -> Any:
    shape, source_dtype, source_device = _like_source(x)
    want = source_dtype if dtype is None else boundary.dtype(dtype)
    target = _like_device(source_device, device)
    value = dense.full.__wrapped__(shape, fill_value, dtype=want, device=target)._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=True, layout=_layout_of(x))


# --- ranges, grids and triangles ------------------------------------------------------------


@api
def arange(
    start: int | float,
    /,
    stop: int | float | None = None,
    step: int | float = 1,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> BCOO:
    """The values of ``xp.arange`` as a sparse array (its zero, if any, not stored)."""
    value = dense.arange.__wrapped__(start, stop, step, dtype=dtype, device=device)._value  # type: ignore[attr-defined]
    return _sparse_of(value, every_when_traced=True)


@api
def linspace(
    start: int | float | complex,
    stop: int | float | complex,
    /,
    num: int,
    *,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
    endpoint: bool = True,
) -> BCOO:
    """The values of ``xp.linspace`` as a sparse array (zeros not stored)."""
    value = dense.linspace.__wrapped__(  # type: ignore[attr-defined]
        start, stop, num, dtype=dtype, device=device, endpoint=endpoint
    )._value
    return _sparse_of(value, every_when_traced=True)


@functools.partial(kernel, static_argnames=("n_rows", "n_cols", "k", "dtype", "index_dtype"))
def _eye(n_rows: int, n_cols: int, k: int, dtype: np.dtype, index_dtype: np.dtype) -> Any:
    first = max(0, -k)
    count = max(0, min(n_rows, n_cols - k) - first)
    rows = jnp.arange(first, first + count, dtype=index_dtype)
    indices = jnp.stack([rows, rows + k], axis=-1)
    return buffers.make_bcoo(jnp.ones(count, dtype), indices, (n_rows, n_cols), True, True)


@api
def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: DTypeLike | None = None,
    device: Device | None = None,
) -> BCOO:
    """A sparse 2-d array storing the ones of its ``k``-th diagonal."""
    rows = boundary.non_negative(n_rows, "n_rows")
    cols = rows if n_cols is None else boundary.non_negative(n_cols, "n_cols")
    # a diagonal outside the matrix is empty: clamped, so that it fits the index dtype
    diagonal = max(-rows, min(cols, boundary.integer(k, "k")))
    want = _default_dtype(dtype)
    index_dtype = build.index_dtype_argument(None, (rows, cols))
    target = boundary.device(device)
    first = max(0, -diagonal)
    stored = max(0, min(rows, cols - diagonal) - first)
    boundary.allocation((stored, 2), index_dtype, target, "n_rows" if rows <= cols else "n_cols")
    if _host_device(target):
        position = np.arange(first, first + stored, dtype=index_dtype)
        data = jax.device_put(np.ones(len(position), want), target)
        indices = jax.device_put(np.stack([position, position + diagonal], axis=-1).astype(index_dtype), target)
        return BCOO._wrap(buffers.make_bcoo(data, indices, (rows, cols), True, True))
    value = _eye(rows, cols, diagonal, want, index_dtype)
    return BCOO._wrap(conversion.place(value, target))


def _grid_buffers(array_module: Any, data: Any, indices: Any, shape: tuple[int, ...], axis: int) -> tuple[Any, Any]:
    """Output ``axis`` of a meshgrid from a 1-d BCOO's buffers: every stored element repeated
    over the other axes (entries in row-major order, the stored elements along ``axis``)."""
    nse = data.shape[0]
    counts = tuple(nse if a == axis else n for a, n in enumerate(shape))
    grid = array_module.indices(counts, dtype=indices.dtype).reshape(len(shape), math.prod(counts))
    entry = grid[axis]
    coords = array_module.concatenate([grid[:axis], indices[entry, 0][None], grid[axis + 1 :]])
    return data[entry], coords.T


@functools.partial(kernel, static_argnames=("shape", "axis"))
def _grid_of(data: Any, indices: Any, shape: tuple[int, ...], axis: int) -> Any:
    values, coords = _grid_buffers(jnp, data, indices, shape, axis)
    return buffers.make_bcoo(values, coords, shape, False, False)


@api
def meshgrid(*arrays: ArrayLike | SparseArray, indexing: Literal["xy", "ij"] = "xy") -> tuple[BCOO, ...]:
    """The coordinate arrays of ``xp.meshgrid`` as sparse arrays; a sparse input's stored
    elements are repeated (not densified), a dense input's nonzero elements stored."""
    indexing = boundary.choice(indexing, ("xy", "ij"), "indexing")
    if not any(isinstance(a, SparseArray) for a in arrays):
        grids = dense.meshgrid.__wrapped__(*arrays, indexing=indexing)  # type: ignore[attr-defined]
        return tuple(_sparse_of(g._value, every_when_traced=False) for g in grids)
    shapes, dtypes = [], set()
    for i, a in enumerate(arrays):
        if isinstance(a, SparseArray):
            if a.ndim != 1:
                fail(ValueError, f"arrays[{i}] must be 1-dimensional, got shape {a.shape}")
            shapes.append(a.shape[0])
            dtypes.add(a._value.dtype)
        else:
            value = boundary.array(a, f"arrays[{i}]")
            if value.ndim != 1:
                fail(ValueError, f"arrays[{i}] must be 1-dimensional, got shape {tuple(value.shape)}")
            shapes.append(value.shape[0])
            dtypes.add(value.dtype)
    if len(dtypes) > 1:
        fail(TypeError, f"arrays must all have the same dtype, got {', '.join(sorted(map(str, dtypes)))}")
    xy = indexing == "xy" and len(arrays) >= 2
    order = [1, 0, *range(2, len(arrays))] if xy else list(range(len(arrays)))
    shape = tuple(shapes[i] for i in order)
    out = []
    for i, a in enumerate(arrays):
        axis = order.index(i)
        if isinstance(a, SparseArray):
            v = conversion.to_bcoo(a._value)
            if v.n_batch or v.n_dense:
                v = jsparse.bcoo_update_layout(v, n_batch=0, n_dense=0)
            host = buffers.on_host(v.data), buffers.on_host(v.indices)
            if host[0] is not None and host[1] is not None:
                values, coords = _grid_buffers(np, host[0], host[1], shape, axis)
                value = buffers.make_bcoo(
                    buffers.to_device_of(values, v.data),
                    buffers.to_device_of(np.ascontiguousarray(coords), v.indices),
                    shape,
                    False,
                    False,
                )
            else:
                value = _grid_of(v.data, v.indices, shape=shape, axis=axis)
            out.append(BCOO._wrap(value))
        else:
            value = boundary.array(a, f"arrays[{i}]")
            target = [1] * len(shape)
            target[axis] = shape[axis]
            grid = _broadcast(value, shape=shape, target=tuple(target))
            out.append(_sparse_of(grid, every_when_traced=False))
    return tuple(out)


@functools.partial(kernel, static_argnames=("shape", "target"))
def _broadcast(value: Any, shape: tuple[int, ...], target: tuple[int, ...]) -> Any:
    return jnp.broadcast_to(value.reshape(target), shape)


def _positions(array_module: Any, data: Any, indices: Any, axis: int) -> Any:
    """For each stored value of BCOO buffers (data of shape ``(*batch, nse, *dense)``), its
    index along ``axis`` of the array, broadcastable to the data (``array_module``: NumPy or jax.numpy)."""
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    if n_batch <= axis < n_batch + n_sparse:
        index = indices[..., axis - n_batch].astype(np.int64)
        return index.reshape(index.shape + (1,) * (data.ndim - n_batch - 1))
    along = axis if axis < n_batch else axis - n_sparse + 1  # dense dimensions come after nse
    return array_module.arange(data.shape[along]).reshape([-1 if i == along else 1 for i in range(data.ndim)])


def _triangle_values(array_module: Any, data: Any, indices: Any, ndim: int, k: int, lower: bool) -> Any:
    rows = _positions(array_module, data, indices, ndim - 2)
    cols = _positions(array_module, data, indices, ndim - 1)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return array_module.where(keep, data, array_module.zeros((), data.dtype))


@functools.partial(kernel, static_argnames=("k", "lower"))
def _triangle(coo: Any, k: int, lower: bool) -> Any:
    data = _triangle_values(jnp, coo.data, coo.indices, len(coo.shape), k, lower)
    return buffers.make_bcoo(data, coo.indices, coo.shape, coo.indices_sorted, coo.unique_indices)


def _sparse_triangle(x: SparseArray, k: Any, lower: bool) -> Any:
    if x.ndim < 2:
        fail(ValueError, f"x must have at least 2 dimensions, got shape {x.shape}")
    diagonal = boundary.integer(k, "k")
    coo = conversion.to_bcoo(x._value)
    host = buffers.on_host(coo.data), buffers.on_host(coo.indices)
    if host[0] is not None and host[1] is not None:
        data = _triangle_values(np, host[0], host[1], len(coo.shape), diagonal, lower)
        value = buffers.make_bcoo(
            buffers.to_device_of(data, coo.data), coo.indices, coo.shape, coo.indices_sorted, coo.unique_indices
        )
    else:
        value = _triangle(coo, k=diagonal, lower=lower)
    return BCOO._wrap(value).to_bcsr() if isinstance(x, BCSR) else BCOO._wrap(value)


@api
def tril(x: ArrayLike | SparseArray, /, *, k: int = 0) -> SparseArray:
    """``x`` without its elements above the ``k``-th diagonal (of the last two axes). For a
    sparse ``x`` the pattern is kept, the values outside the triangle set to zero."""
    if isinstance(x, SparseArray):
        return _sparse_triangle(x, k, lower=True)
    return _sparse_of(dense.tril.__wrapped__(x, k=k)._value, every_when_traced=False)  # type: ignore[attr-defined]


@api
def triu(x: ArrayLike | SparseArray, /, *, k: int = 0) -> SparseArray:
    """``x`` without its elements below the ``k``-th diagonal (of the last two axes). For a
    sparse ``x`` the pattern is kept, the values outside the triangle set to zero."""
    if isinstance(x, SparseArray):
        return _sparse_triangle(x, k, lower=False)
    return _sparse_of(dense.triu.__wrapped__(x, k=k)._value, every_when_traced=False)  # type: ignore[attr-defined]


# xp's functions of the same names, given a sparse argument, come here (their errors then read
# ``xp.tril: ...``, as for a dense argument).
for _name, _fn in {
    "asarray": asarray,
    "zeros_like": zeros_like,
    "ones_like": ones_like,
    "empty_like": empty_like,
    "full_like": full_like,
    "tril": tril,
    "triu": triu,
    "meshgrid": meshgrid,
}.items():
    implements(_name)(_fn.__wrapped__)  # type: ignore[attr-defined]
