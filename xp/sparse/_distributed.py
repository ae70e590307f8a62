"""A sparse matrix whose rows are partitioned over the devices of a mesh axis: ``xp.sparse.RowPartitioned``.

What a user with a matrix larger than one device needs (issue #11): each device along the mesh
axis holds one block of consecutive rows as its own CSR matrix, and the products, sums and
element-wise functions run where the blocks are, with the collectives they need:

- ``A @ x``, ``A @ X``: ``x`` is gathered onto every device (an all-gather when it is sharded),
  each device multiplies its block, and the result is sharded by rows like ``A``;
- ``A.T @ y`` (and ``y @ A``): each device multiplies the transpose of its block by its rows of
  ``y``; the partial results are summed over the axis by a reduce-scatter (the result sharded
  like ``A``'s rows when the axis divides the columns) or an all-reduce (replicated);
- sums: over the columns (row sums) on each device; over the rows and over all elements, a
  reduce-scatter or all-reduce as above;
- element-wise functions that map 0 to 0 (``A * 2``, ``-A``, ``xp.abs(A)``, ``xp.sqrt(A)``, ...)
  act on the stored values where they are.

The layout is one idiomatic JAX design: a batched CSR whose leading (block) axis is sharded over
the mesh axis: ``data`` and ``indices`` of shape ``(p, nse)`` (``nse``: the largest number of
entries of a block; shorter blocks are padded past their last row pointer, where no kernel reads),
``indptr`` of shape ``(p, rows / p + 1)``. Blocks have equal row counts, so the mesh axis must
divide the number of rows (JAX does not pad a placement). The products use ``jax.shard_map`` over
the mesh, so they work eagerly and under ``jax.jit``, on Auto and Explicit mesh axes, and the
array is a JAX pytree.

The array's namespace is ``xp``: xp's functions route it here (``xp._routing.register_own_route``).
A function without an implementation here raises NotImplementedError rather than densifying: such
a matrix is meant to be larger than a dense copy could be (``todense()`` is the explicit way).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Self

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from xp import _boundary as boundary
from xp import _linear_algebra as dense
from xp import _operators
from xp import _routing as routing
from xp._array import Array, namespace, wrap
from xp._errors import fail
from xp._statistical import accumulation_dtype
from xp.sparse import _conversion as conversion
from xp.sparse import _meshes as meshes
from xp.sparse._products import kernels

P = PartitionSpec


class RowPartitioned:
    """A 2-d sparse matrix whose rows are partitioned over the devices of one mesh axis.

    Build it with :meth:`from_scipy` (a whole SciPy matrix, split here) or :meth:`from_blocks`
    (each process's own blocks). ``A @ x``, ``A.T @ y``, ``x @ A``, ``xp.sum``, ``xp.matmul``,
    ``xp.astype`` and the element-wise functions that keep zeros zero take it; ``todense()`` gives
    the dense matrix, sharded by rows.
    """

    __slots__ = ("__weakref__", "_axis", "_data", "_indices", "_indptr", "_mesh", "_rows_shape", "_transposed")
    __array_priority__ = 300  # above xp's arrays, dense and sparse: mixed operators come here
    __hash__ = None  # type: ignore[assignment]

    _data: Any
    _indices: Any
    _indptr: Any
    _rows_shape: tuple[int, int]
    _mesh: Mesh
    _axis: str
    _transposed: bool

    @classmethod
    def _make(cls, buffers: tuple[Any, Any, Any], rows_shape: tuple[int, int], mesh: Mesh, axis: str,
              transposed: bool) -> Self:  # fmt: skip
        result = object.__new__(cls)
        result._data, result._indices, result._indptr = buffers
        result._rows_shape, result._mesh, result._axis, result._transposed = rows_shape, mesh, axis, transposed
        return result

    def _with_data(self, data: Any) -> Self:
        return type(self)._make((data, self._indices, self._indptr), self._rows_shape, self._mesh, self._axis,
                                self._transposed)  # fmt: skip

    # --- construction ---------------------------------------------------------------------------

    @classmethod
    def from_scipy(cls, matrix: Any, mesh: Mesh, axis_name: str, *, dtype: Any = None, index_dtype: Any = None) -> Self:
        """The matrix of a SciPy sparse array or matrix (any format, 2-d), its rows split into
        equal blocks over ``mesh``'s axis ``axis_name`` (which must divide the number of rows);
        duplicates are summed. In a multi-process run every process passes the same matrix and
        places only its own blocks."""
        where = "xp.sparse.RowPartitioned.from_scipy"
        try:
            import scipy.sparse as sp

            if not sp.issparse(matrix) or len(matrix.shape) != 2:
                fail(TypeError, f"matrix must be a 2-d scipy.sparse array or matrix, got {type(matrix).__name__}")
            parts = _parts(mesh, axis_name)
            rows = int(matrix.shape[0])
            if rows % parts:
                fail(ValueError, f"the {rows} rows of the matrix do not divide into {parts} equal blocks over the "
                       f"mesh axis {axis_name!r} (pad the matrix with empty rows)")  # fmt: skip
            csr = sp.csr_array(matrix)
            step = rows // parts
            blocks = _LazyBlocks(csr, step)
            return cls._from_blocks(blocks, mesh, axis_name, dtype, index_dtype, int(matrix.shape[1]))
        except Exception as error:
            kwargs = {"dtype": dtype, "index_dtype": index_dtype}
            return routing.failed(error, where, cls.from_scipy, (matrix, mesh, axis_name), kwargs)

    @classmethod
    def from_blocks(
        cls,
        blocks: Mapping[int, Any] | Sequence[Any],
        mesh: Mesh,
        axis_name: str,
        *,
        dtype: Any = None,
        index_dtype: Any = None,
    ) -> Self:
        """The matrix whose block ``i`` (rows ``i * r`` to ``(i + 1) * r``) is ``blocks[i]``, a SciPy
        sparse matrix of ``r`` rows, for the positions ``i`` along ``axis_name`` of this process's
        devices (in a single-process run: all of them, a sequence or a mapping). Every block has the
        same shape; no process ever holds the whole matrix."""
        where = "xp.sparse.RowPartitioned.from_blocks"
        try:
            mapping = blocks if isinstance(blocks, Mapping) else dict(enumerate(blocks))
            if not mapping:
                fail(ValueError, "blocks must hold at least this process's blocks, got none")
            return cls._from_blocks(mapping, mesh, axis_name, dtype, index_dtype, None)
        except Exception as error:
            kwargs = {"dtype": dtype, "index_dtype": index_dtype}
            return routing.failed(error, where, cls.from_blocks, (blocks, mesh, axis_name), kwargs)

    @classmethod
    def _from_blocks(cls, blocks: Mapping[int, Any], mesh: Mesh, axis: str, dtype: Any, index_dtype: Any,
                     columns: int | None) -> Self:  # fmt: skip
        import scipy.sparse as sp

        parts = _parts(mesh, axis)
        mine = _own_positions(mesh, axis)
        host: dict[int, Any] = {}
        for i in mine:
            if i not in blocks:
                fail(ValueError, f"blocks has no block {i}, which a device of this process holds (positions {mine})")
            block = blocks[i]
            if not sp.issparse(block) or len(block.shape) != 2:
                fail(TypeError, f"blocks[{i}] must be a 2-d scipy.sparse array or matrix, got {type(block).__name__}")
            csr = sp.csr_array(block)
            if not csr.has_canonical_format:  # summed on a copy: the caller's matrix is left as it is
                csr = csr.copy()
                csr.sum_duplicates()
            host[i] = csr
        shapes = {tuple(int(n) for n in b.shape) for b in host.values()}
        if len(shapes) != 1 or (columns is not None and next(iter(shapes))[1] != columns):
            fail(ValueError, f"the blocks must all have one shape, got {sorted(shapes)}")
        block_rows, n = next(iter(shapes))
        want = conversion._host_dtype(np.dtype(next(iter(host.values())).dtype), dtype, "the blocks")
        itype = boundary.optional_dtype(index_dtype) or np.dtype(np.int32)
        if itype.kind not in "iu" or np.iinfo(itype).max < max(n, block_rows):
            fail(ValueError, f"index_dtype {itype} cannot hold the indices of a block of shape {(block_rows, n)}")
        nse = _global_max(max(b.nnz for b in host.values()))
        if np.iinfo(itype).max < nse:  # the row pointers count up to nse
            fail(ValueError, f"index_dtype {itype} cannot count the {nse} entries of a block")
        buffers: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for i, csr in host.items():
            data = np.zeros(nse, want)
            indices = np.full(nse, n, itype)  # padding: out of range (JAX's convention), past indptr[-1]
            data[: csr.nnz] = csr.data.astype(want)
            indices[: csr.nnz] = csr.indices
            buffers[i] = (data, indices, csr.indptr.astype(itype))
        sharding = NamedSharding(mesh, P(axis))

        def placed(k: int, shape: tuple[int, int]) -> Any:
            return jax.make_array_from_callback(shape, sharding, lambda index: buffers[_block_of(index)][k][None])

        made = (placed(0, (parts, nse)), placed(1, (parts, nse)), placed(2, (parts, block_rows + 1)))
        return cls._make(made, (parts * block_rows, n), mesh, axis, False)

    # --- attributes -----------------------------------------------------------------------------

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        return namespace(api_version, "xp.sparse.RowPartitioned.__array_namespace__")

    @property
    def shape(self) -> tuple[int, int]:
        m, n = self._rows_shape
        return (n, m) if self._transposed else (m, n)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return 2

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def mesh(self) -> Mesh:
        return self._mesh

    @property
    def axis_name(self) -> str:
        return self._axis

    @property
    def nse(self) -> int:
        """The stored entries of each block (padding included)."""
        return int(self._data.shape[1])

    @property
    def device(self) -> NamedSharding:
        """How the matrix is split: by rows over the axis (by columns for a transpose)."""
        return NamedSharding(self._mesh, P(None, self._axis) if self._transposed else P(self._axis))

    @property
    def T(self) -> Self:
        """The transpose, without moving anything (its products are the transposed products)."""
        return type(self)._make((self._data, self._indices, self._indptr), self._rows_shape, self._mesh,
                                self._axis, not self._transposed)  # fmt: skip

    @property
    def mT(self) -> Self:
        return self.T

    def __repr__(self) -> str:
        traced = "traced " if isinstance(self._data, jax.core.Tracer) else ""
        parts = _parts(self._mesh, self._axis)
        return (f"RowPartitioned({traced}{self.dtype}{list(self.shape)}, {parts} blocks over {self._axis!r}, "
                f"nse={self.nse}{', transposed' if self._transposed else ''})")  # fmt: skip

    # --- conversions ----------------------------------------------------------------------------

    def todense(self) -> Array:
        """The dense matrix, sharded by rows over the axis (by columns for a transpose)."""
        m, n = self._rows_shape
        rows = m // _parts(self._mesh, self._axis)

        def local(data: Any, indices: Any, indptr: Any) -> Any:
            return conversion.todense(_block(data, indices, indptr, (rows, n)))

        out = self._mapped(local, (), (), P(self._axis, None))
        return wrap(out.T if self._transposed else out)

    def block_until_ready(self) -> Self:
        jax.block_until_ready((self._data, self._indices, self._indptr))
        return self

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        raise TypeError("xp.sparse.RowPartitioned: a sparse matrix does not convert to a NumPy array implicitly; "
                        "call .todense() first")  # fmt: skip

    def __setitem__(self, key: Any, value: Any, /) -> None:
        raise TypeError("xp.sparse.RowPartitioned: sparse arrays are immutable")

    # --- operators: installed from xp._operators' table below (each the routed xp function) ---

    if TYPE_CHECKING:  # what type checkers see of the installed operators used with this type

        def __matmul__(self, other: Any, /) -> Array: ...
        def __rmatmul__(self, other: Any, /) -> Array: ...
        def __mul__(self, other: Any, /) -> Self: ...
        def __rmul__(self, other: Any, /) -> Self: ...
        def __truediv__(self, other: Any, /) -> Self: ...
        def __neg__(self, /) -> Self: ...
        def __pos__(self, /) -> Self: ...
        def __abs__(self, /) -> Self: ...

    # --- running on the blocks ------------------------------------------------------------------

    def _mapped(self, local: Callable[..., Any], operands: tuple[Any, ...], specs: tuple[Any, ...], out: Any) -> Any:
        """``local(data, indices, indptr, *operands)`` on each device's block (``jax.shard_map``),
        the operands first placed as ``specs`` say over the matrix's mesh."""
        placed = tuple(meshes.placed(x, self._mesh, spec) for x, spec in zip(operands, specs, strict=True))
        blocks = P(self._axis)
        mapped = jax.shard_map(local, mesh=self._mesh, in_specs=(blocks, blocks, blocks, *specs), out_specs=out,
                               check_vma=False)  # fmt: skip
        return mapped(self._data, self._indices, self._indptr, *placed)

    def _product(self, x: Any) -> Any:
        """``self @ x`` for a dense jax array ``x`` of 1 or 2 dimensions."""
        spec = jax.eval_shape(dense._matmul, jax.ShapeDtypeStruct(self.shape, self.dtype), _aval(x))
        if x.ndim > 2:
            fail(NotImplementedError, "a product of xp.sparse.RowPartitioned with an array of more than 2 "
                 f"dimensions (got shape {tuple(x.shape)}) is not implemented")  # fmt: skip
        m, n = self._rows_shape
        parts = _parts(self._mesh, self._axis)
        rows = m // parts
        dtype = spec.dtype
        tail = (None,) * (x.ndim - 1)
        if not self._transposed:  # all-gather x; each block's rows of the product

            def local(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
                block = _block(data.astype(dtype), indices, indptr, (rows, n))
                return kernels.bcsr_matmul(block, x.astype(dtype))

            return self._mapped(local, (x,), (P(),), P(self._axis, *tail))
        scatter = n % parts == 0  # the transposed product: partial sums over the blocks, then added

        def local_t(data: Any, indices: Any, indptr: Any, y: Any) -> Any:
            block = _block(data.astype(dtype), indices, indptr, (rows, n))
            partial = kernels.bcsr_rmatmul(block, y.astype(dtype))
            if scatter:
                return jax.lax.psum_scatter(partial, self._axis, scatter_dimension=0, tiled=True)
            return jax.lax.psum(partial, self._axis)

        return self._mapped(local_t, (x,), (P(self._axis, *tail),), P(self._axis if scatter else None, *tail))

    def _sum(self, axis: Any, dtype: Any, keepdims: Any) -> Any:
        axes = boundary.axes(axis, 2)
        keep = boundary.boolean(keepdims, "keepdims")
        want = accumulation_dtype(self.dtype, boundary.optional_dtype(dtype))
        stored = tuple(sorted((1 - a) if self._transposed else a for a in axes))
        m, n = self._rows_shape
        parts = _parts(self._mesh, self._axis)
        rows = m // parts
        scatter = n % parts == 0

        def local(data: Any, indices: Any, indptr: Any) -> Any:
            values = data[0].astype(want)
            if stored == (0, 1):
                return jax.lax.psum(jnp.sum(values, dtype=want), self._axis)
            if stored == (1,):  # row sums: each device its own rows
                row_of = kernels.rows_from_indptr(indptr[0], nse=values.shape[0])
                return jax.ops.segment_sum(values, row_of, num_segments=rows, indices_are_sorted=True)
            column = jax.ops.segment_sum(values, indices[0], num_segments=n)
            if scatter:
                return jax.lax.psum_scatter(column, self._axis, scatter_dimension=0, tiled=True)
            return jax.lax.psum(column, self._axis)

        if not stored:  # the identity of every element: the result would be dense
            fail(NotImplementedError, "axis=(): a sum over no axis is the dense matrix (call .todense() first)")
        out_spec = P() if stored == (0, 1) else P(self._axis) if stored == (1,) or scatter else P()
        out = self._mapped(local, (), (), out_spec)
        if keep:
            for a in axes:
                out = jnp.expand_dims(out, a)
        return wrap(out)


class _LazyBlocks(Mapping[int, Any]):
    """The row blocks of a CSR matrix, sliced when asked for (each process slices only its own)."""

    def __init__(self, csr: Any, step: int) -> None:
        self._csr, self._step = csr, step

    def __getitem__(self, i: int) -> Any:
        if not 0 <= i < self._csr.shape[0] // self._step:
            raise KeyError(i)
        return self._csr[i * self._step : (i + 1) * self._step]

    def __iter__(self) -> Any:
        return iter(range(self._csr.shape[0] // self._step))

    def __len__(self) -> int:
        return self._csr.shape[0] // self._step


# --- helpers --------------------------------------------------------------------------------


def _parts(mesh: Any, axis: str) -> int:
    if not isinstance(mesh, Mesh):
        fail(TypeError, f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
    if axis not in mesh.axis_names:
        fail(ValueError, f"axis_name {axis!r} is not an axis of the mesh {dict(mesh.shape)}")
    return int(mesh.shape[axis])


def _own_positions(mesh: Mesh, axis: str) -> list[int]:
    """The positions along ``axis`` of this process's devices."""
    where = mesh.axis_names.index(axis)
    process = jax.process_index()
    positions = {index[where] for index, d in np.ndenumerate(mesh.devices) if d.process_index == process}
    return sorted(int(i) for i in positions)


def _global_max(value: int) -> int:
    """The largest of every process's ``value`` (each process knows only its own blocks)."""
    if jax.process_count() == 1:
        return max(value, 1)
    from jax.experimental import multihost_utils

    return max(int(np.max(multihost_utils.process_allgather(np.asarray(value, np.int64)))), 1)


def _block_of(index: Any) -> int:
    start = index[0].start
    return 0 if start is None else int(start)


def _block(data: Any, indices: Any, indptr: Any, shape: tuple[int, int]) -> Any:
    """A device's block (the leading axis of length 1 dropped) as a JAX BCSR."""
    return jsparse.BCSR((data[0], indices[0], indptr[0]), shape=shape)


def _aval(x: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype)


# --- the routed functions -------------------------------------------------------------------


def _matmul(x1: Any, x2: Any, /) -> Array:
    if isinstance(x1, RowPartitioned) and isinstance(x2, RowPartitioned):
        fail(NotImplementedError, "the product of two xp.sparse.RowPartitioned matrices is not implemented")
    if isinstance(x1, RowPartitioned):
        return wrap(x1._product(_dense(x2, "x2")))
    assert isinstance(x2, RowPartitioned)
    x = _dense(x1, "x1")  # x @ A = (A.T @ x.T).T
    if x.ndim == 1:
        return wrap(x2.T._product(x))
    return wrap(x2.T._product(x.T).T)


def _dense(x: Any, param: str) -> Any:
    try:
        return boundary.array(x, param)
    except routing.SparseArgument:
        fail(NotImplementedError, f"{param}: a product of xp.sparse.RowPartitioned with a "
             f"{type(x).__name__} is not implemented (convert one of them)")  # fmt: skip


def _sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    return x._sum(axis, dtype, keepdims)


def _transpose(x: Any, /) -> RowPartitioned:
    return x.T


def _astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> RowPartitioned:
    if device is not None:
        fail(NotImplementedError, "device=: an xp.sparse.RowPartitioned matrix stays on its mesh")
    want = boundary.any_dtype(dtype)
    if x.dtype.kind == "c" and want.kind != "c":
        fail(TypeError, f"cannot convert a complex array to {want} (take xp.real or xp.imag first)")
    return x._with_data(x._data.astype(want)) if want != x.dtype or copy else x


# Element-wise functions that map 0 to 0 for every dtype: applied to the stored values (and to the
# padding, which stays 0).
ZERO_PRESERVING = (
    *("abs", "negative", "positive", "square", "sqrt", "sin", "tan", "sinh", "tanh", "asin", "asinh"),
    *("atan", "atanh", "expm1", "log1p", "sign", "round", "floor", "ceil", "trunc", "conj", "real", "imag"),
)


def _unary(name: str) -> Callable[..., RowPartitioned]:
    def unary(x: Any, /) -> RowPartitioned:
        return x._with_data(routing.PUBLIC_FUNCTIONS[name](wrap(x._data))._value)

    return unary


def _scaled(name: str) -> Callable[..., RowPartitioned]:
    """``A * s``, ``s * A``, ``A / s`` for a scalar ``s`` (a Python scalar or a 0-d array): the
    stored values scaled. ``A / s`` needs a Python ``s`` that is neither 0 nor NaN (0 / s is 0)."""

    def scaled(x1: Any, x2: Any, /) -> RowPartitioned:
        matrix, scalar = (x1, x2) if isinstance(x1, RowPartitioned) else (x2, x1)
        if isinstance(scalar, RowPartitioned) or getattr(scalar, "ndim", 0) != 0:
            fail(
                NotImplementedError, f"{name} of xp.sparse.RowPartitioned with anything but a scalar is not implemented"
            )
        if name == "divide" and (
            matrix is x2 or not isinstance(scalar, (int, float)) or scalar == 0 or scalar != scalar
        ):
            fail(NotImplementedError, "divide: only a matrix divided by a nonzero Python scalar keeps its zeros "
                 "(the result would be dense)")  # fmt: skip
        data = wrap(matrix._data)
        args = (data, scalar) if matrix is x1 else (scalar, data)
        return matrix._with_data(routing.PUBLIC_FUNCTIONS[name](*args)._value)

    return scaled


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "matmul": _matmul,
    "linalg.matmul": _matmul,
    "sum": _sum,
    "matrix_transpose": _transpose,
    "linalg.matrix_transpose": _transpose,
    "astype": _astype,
    "multiply": _scaled("multiply"),
    "divide": _scaled("divide"),
    **{name: _unary(name) for name in ZERO_PRESERVING},
}


def _route(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    function = FUNCTIONS.get(name)
    if function is None:
        raise NotImplementedError(
            f"xp.{name}: not implemented for xp.sparse.RowPartitioned (which has matmul, sum, astype, "
            f"matrix_transpose, multiply and divide by a scalar, and the element-wise functions that keep zeros "
            f"zero); call .todense() first for a dense copy sharded by rows"
        )
    return function(*args, **kwargs)


def _flatten(x: RowPartitioned) -> tuple[tuple[Any, Any, Any], tuple[Any, ...]]:
    return (x._data, x._indices, x._indptr), (x._rows_shape, x._mesh, x._axis, x._transposed)


def _unflatten(aux: tuple[Any, ...], children: Any) -> RowPartitioned:
    return RowPartitioned._make(tuple(children), *aux)


jax.tree_util.register_pytree_node(RowPartitioned, _flatten, _unflatten)
routing.register_own_route(RowPartitioned, _route)
# The operators call the public functions, which route here (immutable: no in-place operators,
# ``A *= 2`` rebinds the name); those without an implementation raise NotImplementedError.
_operators.install(RowPartitioned, in_place=False)
