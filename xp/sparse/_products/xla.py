"""XLA's formulations of the 2-D sparse products: the fallback of xp's native kernel.

Functions of raw JAX arrays (``data``, index arrays, the dense operand): jit-able, vmap-able and
differentiable with respect to ``data`` and the dense operand. :mod:`xp.sparse._products.kernels` chooses
between them and the native kernel (and records the measurements behind each choice);
:mod:`xp.sparse._products.native` lowers to them wherever the native kernel does not run (other
platforms, ``jax.export``, ``XP_NATIVE=0``), and differentiates through them.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp._jit import kernel
from xp.sparse._coordinates import owners, running_sum

CSR_MIN_COLUMNS = 8
"""From this many dense columns on, JAX's CSR kernel beats gather + ``segment_sum``."""

NATIVE_PARALLEL_BYTES = 100_000 * 64
"""Above ``nse * columns * itemsize`` bytes the native CPU kernel splits the product into
parallel tasks (its task size: 100k cycles of 64 bytes); it is much faster on that path than on
its single-task one (float64, 4 columns: 2.6 ms against 11 ms), so fewer columns suffice."""

CSR_VECTOR_BLOCK = 16
"""Entries per row handled at each step of :func:`csr_matvec`."""

# The dtypes of JAX's own CSR product (the kernel behind jsparse.bcsr_dot_general), which are not
# those of xp's native kernel (xp.sparse._products.native.DTYPES) by definition, though they are the same now.
_JAX_CSR_DTYPES = frozenset(np.dtype(d) for d in ("int32", "int64", "float32", "float64", "complex64", "complex128"))

_MATMUL_DN = (((1,), (0,)), ((), ()))


def take(x: Any, index: Any) -> Any:
    """``x[index]`` along the first axis, 0 where ``index`` is out of range (JAX's padding entries).

    A plain gather: no wrap-around of negative indices (an index is never negative here)."""
    if x.shape[0] == 0:  # every index is out of range (and XLA cannot gather from nothing)
        return jnp.zeros((*index.shape, *x.shape[1:]), x.dtype)
    numbers = jax.lax.GatherDimensionNumbers(
        offset_dims=tuple(range(index.ndim, index.ndim + x.ndim - 1)), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    return jax.lax.gather(
        x, index[..., None], numbers, (1, *x.shape[1:]), mode=jax.lax.GatherScatterMode.FILL_OR_DROP, fill_value=0
    )


def in_range(index: Any, n: int) -> Any:
    """Where an index into an axis of ``n`` is inside it (JAX's padding is not: index ``n``)."""
    return (index >= 0) & (index < n)


def products(data: Any, index: Any, x: Any) -> Any:
    """``data[k] * x[index[k]]`` (``x`` 1-d or 2-d), 0 where ``index[k]`` is out of range: whatever
    such an entry stores (JAX's padding; a non-finite value would make ``value * 0`` NaN) adds
    nothing, as in the native kernel and in ``todense``."""
    stored = jnp.where(in_range(index, x.shape[0]), data, jnp.zeros((), data.dtype))
    values = take(x, index)
    return stored[:, None] * values if x.ndim == 2 else stored * values


# --- COO: gather and segment_sum -----------------------------------------------------------


@functools.partial(kernel, static_argnames=("n_out", "sorted_out"))
def coo_matmul(data: Any, out_index: Any, in_index: Any, x: Any, *, n_out: int, sorted_out: bool) -> Any:
    """``y[out_index[k]] += data[k] * x[in_index[k]]`` for a 1-d or 2-d ``x``: ``y`` has ``n_out`` rows.

    With ``out_index`` the row indices this is ``A @ x``; with the column indices, ``A.T @ x``.
    Entries whose indices are out of range (JAX's padding) contribute nothing.
    """
    if data.shape[0] == 0 or x.shape[0] == 0 or n_out == 0:  # (XLA cannot gather from nothing: grad)
        return jnp.zeros((n_out, *x.shape[1:]), jnp.result_type(data, x))
    return jax.ops.segment_sum(
        products(data, in_index, x), out_index, num_segments=n_out, indices_are_sorted=sorted_out
    )


# --- CSR: row pointers ---------------------------------------------------------------------


def _counting_dtype(count: int) -> np.dtype:
    """int32, or int64 for more than 2**31 - 1 entries (with JAX's 64-bit mode on)."""
    return (
        np.dtype(np.int64)
        if count > np.iinfo(np.int32).max and jax.config.read("jax_enable_x64")
        else np.dtype(np.int32)
    )


@functools.partial(kernel, static_argnames=("n_rows",))
def indptr_from_sorted_rows(rows: Any, *, n_rows: int) -> Any:
    """Row pointers (``n_rows + 1``) of sorted row indices; out-of-range rows (padding) are left out."""
    dtype = _counting_dtype(rows.shape[0])
    counts = jax.ops.segment_sum(jnp.ones(rows.shape, dtype), rows, num_segments=n_rows, indices_are_sorted=True)
    return jnp.concatenate([jnp.zeros(1, dtype), running_sum(counts)])


@functools.partial(kernel, static_argnames=("nse",))
def rows_from_indptr(indptr: Any, *, nse: int) -> Any:
    """The row index of each of ``nse`` entries (``n_rows`` for entries past ``indptr[-1]``)."""
    return owners(indptr[1:], nse, _counting_dtype(max(nse, indptr.shape[0])))


def is_sorted(rows: Any) -> Any:
    return jnp.all(rows[1:] >= rows[:-1]) if rows.shape[0] > 1 else jnp.bool_(True)


# --- CSR: the native kernel ------------------------------------------------------------------


def native_csr_supported(dtype: np.dtype) -> bool:
    return np.dtype(dtype) in _JAX_CSR_DTYPES


def csr_matmul(data: Any, indices: Any, indptr: Any, x: Any, *, n_cols: int, branchless: bool = False) -> Any:
    """``A @ x`` for a CSR matrix through JAX's ``bcsr_dot_general`` (a native kernel on CPU and GPU).

    Index dtypes are unified to int32 or int64 as the kernel requires. An entry inside a row whose
    column is out of range (JAX's padding) must add nothing, but the kernel would read some row of
    ``x`` for it, and 0 times an infinite or NaN element there is NaN: where a row holds such an
    entry (decided when the computation runs), the product is ``coo_matmul``'s gather and
    ``segment_sum`` instead, which leave it out. Entries outside every row are never read.

    ``branchless``: instead, such entries read a row of zeros appended to ``x`` (a copy of ``x``;
    no conditional, which on a GPU waits for its predicate on the host: with it, a jitted BCSR
    ``A @ x`` took over twice JAX's own unguarded product; docs/sparse.md, "On a GPU").
    """
    index_dtype = np.dtype(np.int64) if np.int64 in (indices.dtype, indptr.dtype) else np.dtype(np.int32)
    if index_dtype == np.int64 and not jax.config.read("jax_enable_x64"):
        index_dtype = np.dtype(np.int32)
    n_rows = indptr.shape[0] - 1

    def jax_kernel(data: Any, indices: Any, indptr: Any, x: Any, *, padding_column: int) -> Any:
        # entries of an out-of-range column: value 0, read from padding_column of x
        valid = in_range(indices, n_cols)
        cols = jnp.where(valid, indices, padding_column).astype(index_dtype)
        matrix = jsparse.BCSR((jnp.where(valid, data, 0), cols, indptr.astype(index_dtype)), shape=(n_rows, x.shape[0]))
        return jsparse.bcsr_dot_general(matrix, x, dimension_numbers=_MATMUL_DN)

    if branchless:  # (padding entries read the appended zeros)
        extended = jnp.concatenate([x, jnp.zeros((1, *x.shape[1:]), x.dtype)])
        return jax_kernel(data, indices, indptr, extended, padding_column=n_cols)
    # (padding outside the rows is never read; inside them, the gather takes over)
    by_jax_kernel = functools.partial(jax_kernel, padding_column=0)

    def by_gather(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
        return csr_gathered(data, indices, indptr, x).astype(jnp.result_type(data, x))

    position = jnp.arange(data.shape[0], dtype=index_dtype)
    inside = (position >= indptr[0]) & (position < indptr[-1])
    padded = jnp.any(inside & ~in_range(indices, n_cols))
    return jax.lax.cond(padded, by_gather, by_jax_kernel, data, indices, indptr, x)


def csr_gathered(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    """``A @ x`` for CSR buffers by a gather and a sorted ``segment_sum`` over the rows."""
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    return coo_matmul(data, rows, indices, x, n_out=indptr.shape[0] - 1, sorted_out=True)


# --- CSR: row-blocked matrix-vector product ---------------------------------------------------


def _csr_matvec_blocked(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    """Each step adds up to ``CSR_VECTOR_BLOCK`` more entries of every row (a dense gather and sum)."""
    block = CSR_VECTOR_BLOCK
    if data.shape[0] == 0 or x.shape[0] == 0:
        return jnp.zeros(indptr.shape[0] - 1, jnp.result_type(data, x))
    entries = products(data, indices, x)
    start = indptr[:-1]
    count = indptr[1:] - start
    steps = (jnp.max(count, initial=0) + block - 1) // block
    offsets = jnp.arange(block, dtype=start.dtype)

    def body(state: tuple[Any, Any]) -> tuple[Any, Any]:
        step, total = state
        j = step * block + offsets
        inside = j[None, :] < count[:, None]
        position = jnp.where(inside, start[:, None] + j[None, :], entries.shape[0])
        return step + 1, total + jnp.sum(take(entries, position), axis=1, dtype=entries.dtype)

    zero = jnp.zeros(start.shape[0], entries.dtype)
    return jax.lax.while_loop(lambda s: s[0] < steps, body, (jnp.zeros((), steps.dtype), zero))[1]


def _csr_matvec_rows(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    return coo_matmul(data, rows, indices, x, n_out=indptr.shape[0] - 1, sorted_out=True)


def _csr_matvec_impl(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    """The blocked kernel, unless the longest row makes it do more than about 4x the work of a
    ``segment_sum`` (skewed rows): then the row indices are computed and scattered."""
    n_rows, nse = indptr.shape[0] - 1, data.shape[0]
    count = indptr[1:] - indptr[:-1]
    steps = (jnp.max(count, initial=0) + CSR_VECTOR_BLOCK - 1) // CSR_VECTOR_BLOCK
    cheap = steps * (n_rows * CSR_VECTOR_BLOCK) <= 4 * nse + 4 * CSR_VECTOR_BLOCK * n_rows
    return jax.lax.cond(cheap, _csr_matvec_blocked, _csr_matvec_rows, data, indices, indptr, x)


@jax.custom_jvp
def _csr_matvec(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    return _csr_matvec_impl(data, indices, indptr, x)


@_csr_matvec.defjvp
def _csr_matvec_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    """The tangent goes through gather + ``segment_sum`` (linear and transposable), so forward
    and reverse mode both work; the primal keeps the fast kernel, called through this rule's own
    function so that differentiating the rule (second-order gradients) meets this rule again, not
    the kernel's ``while_loop``, which reverse mode cannot differentiate."""
    data, indices, indptr, x = primals
    data_dot, _, _, x_dot = tangents
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    n_rows = indptr.shape[0] - 1
    tangent = coo_matmul(data_dot, rows, indices, x, n_out=n_rows, sorted_out=True)
    tangent = tangent + coo_matmul(data, rows, indices, x_dot, n_out=n_rows, sorted_out=True)
    return _csr_matvec(data, indices, indptr, x), tangent


@kernel
def csr_matvec(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    """``A @ x`` for a CSR matrix and a vector, without row indices (differentiable)."""
    return _csr_matvec(data, indices, indptr, x)


# --- XLA's kernels for each product (the native kernel's fallback: GPU, export, XP_NATIVE=0) ---------


def xla_coo_product(data: Any, out_index: Any, in_index: Any, x: Any, *, n_out: int, sorted_out: bool,
                    custom_kernels: bool = True, gpu: bool = False) -> Any:  # fmt: skip
    """``y[out_index[k]] += data[k] * x[in_index[k]]`` (``A @ x`` with the row indices first, ``A.T @ x``
    with the column indices first); ``custom_kernels``: whether JAX's CSR kernel may be chosen; ``gpu``: the
    computation is lowered for a GPU (:func:`csr_matmul`'s branchless form)."""
    # (the choice is the CPU's on a GPU too: a BCOO's vector products were measured there on coo_matmul)
    if not (custom_kernels and _jax_kernel_pays(data.shape[0], n_out, x, gpu=False)):
        return coo_matmul(data, out_index, in_index, x, n_out=n_out, sorted_out=sorted_out)
    n_in = x.shape[0]

    def on_pointers(data: Any, rows: Any, cols: Any, x: Any) -> Any:
        return csr_matmul(data, cols, indptr_from_sorted_rows(rows, n_rows=n_out), x, n_cols=n_in, branchless=gpu)

    if sorted_out:
        return on_pointers(data, out_index, in_index, x)

    def scatter(data: Any, rows: Any, cols: Any, x: Any) -> Any:
        return coo_matmul(data, rows, cols, x, n_out=n_out, sorted_out=False)

    return jax.lax.cond(is_sorted(out_index), on_pointers, scatter, data, out_index, in_index, x)


def xla_csr_product(
    data: Any, indices: Any, indptr: Any, x: Any, custom_kernels: bool = True, gpu: bool = False
) -> Any:
    """``A @ x`` for CSR buffers; ``custom_kernels``: whether JAX's CSR kernel may be chosen; ``gpu``: the
    computation is lowered for a GPU, where JAX's CSR kernel pays for vectors too (a third of
    ``csr_matvec``'s time for a jitted ``A @ x``; docs/sparse.md, "On a GPU")."""
    if custom_kernels and _jax_kernel_pays(data.shape[0], indptr.shape[0] - 1, x, gpu):
        return csr_matmul(data, indices, indptr, x, n_cols=x.shape[0], branchless=gpu)
    if x.ndim == 1:
        return csr_matvec(data, indices, indptr, x)
    return csr_gathered(data, indices, indptr, x)


def xla_csr_rproduct(data: Any, indices: Any, indptr: Any, x: Any, *, n_cols: int) -> Any:
    """``A.T @ x`` for CSR buffers of a matrix with ``n_cols`` columns."""
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    return coo_matmul(data, indices, rows, x, n_out=n_cols, sorted_out=False)


# --- when JAX's CSR kernel pays ---------------------------------------------------------


def _columns(x: Any) -> int:
    return 1 if x.ndim == 1 else int(x.shape[1])


def _jax_kernel_pays(nse: int, n_rows: int, x: Any, gpu: bool) -> bool:
    """Whether ``A @ x`` (``n_rows`` rows, ``nse`` entries) goes to JAX's CSR kernel: on a GPU for
    every supported dtype, on CPU where it beats gather + ``segment_sum``. A matrix without rows
    or columns takes the other path (its product is zeros there too): JAX's kernel computes it,
    but its data cotangent (bcoo_dot_general_sampled) fails to trace a gather from the empty x or
    cotangent ("Slice size ... out of range", jax 0.10.2)."""
    if n_rows == 0 or x.shape[0] == 0:
        return False
    return native_csr_supported(x.dtype) if gpu else _native_pays(nse, x)


def _native_pays(nse: int, x: Any) -> bool:
    """Whether JAX's CSR kernel beats gather + ``segment_sum`` for ``A @ x`` (measured)."""
    if not native_csr_supported(x.dtype) or x.ndim == 1:
        return False
    k = _columns(x)
    return k >= CSR_MIN_COLUMNS or nse * k * np.dtype(x.dtype).itemsize > NATIVE_PARALLEL_BYTES
