"""xp's own kernels for 2-D sparse products, chosen per operation by measurement.

Every kernel is a function of raw JAX arrays (``data``, index arrays, the dense operand): jit-able,
vmap-able and differentiable with respect to ``data`` and the dense operand (forward and reverse
mode). The products of :mod:`xp.sparse._linear_algebra` pick among them.

**On CPU, all four products (BCOO and BCSR, ``A @ x`` and ``A.T @ x``, 1-d or 2-d ``x``) of
float32/64, complex64/128 and int32/64 use xp's native kernel** (:mod:`xp.sparse._native`: C++
through JAX's FFI, multithreaded on XLA's pool; BCOO read in place, sorted rows without row
pointers). It is a primitive whose lowering chooses: on other platforms, for ``jax.export``, with
``XP_NATIVE=0`` or where it could not be built, the XLA kernels below (the fallback,
``xla_*_product``) are what runs. ``native=False`` (products XLA must partition over a mesh) skips
it and JAX's native kernel alike.

The XLA fallback:

============================  ===========================================================================
product                       kernel
============================  ===========================================================================
BCOO ``A @ x``, ``A.T @ x``   :func:`coo_matmul`: gather ``x`` at the column indices, multiply by ``data``,
                              ``segment_sum`` over the row indices (``indices_are_sorted`` when the BCOO
                              says so). ``A.T @ x`` swaps the roles of the two index columns, so the
                              transpose is never materialised.
BCOO ``A @ X``, k columns     when JAX's native kernel pays (below): :func:`csr_matmul` on row pointers
                              made from the sorted row indices (:func:`indptr_from_sorted_rows`, about
                              1 ms); a BCOO not marked sorted is checked at run time and falls back to
                              :func:`coo_matmul` if it is not. Otherwise :func:`coo_matmul`.
BCSR ``A @ X``                :func:`csr_matmul` when JAX's native kernel pays: ``bcsr_dot_general``,
                              on CPU an Eigen CSR kernel that splits large products into parallel
                              tasks (cuSPARSE on GPU). Otherwise :func:`coo_matmul`.
BCSR ``A @ x``                :func:`csr_matvec`: a row-blocked kernel on the row pointers (no row
                              indices), with a custom JVP through :func:`coo_matmul`.
``x @ A``, BCSR ``A.T @ x``   :func:`coo_matmul` with the index columns swapped (BCSR: row indices from
                              :func:`rows_from_indptr`).
============================  ===========================================================================

xp's native kernel against SciPy ``csr_array`` (jitted, 20000 x 20000, density 1e-3, same run;
measured on the 2-core machine at a load average of 9 to 10, where a second thread rarely gets a
core, so these are close to single-threaded figures; bench/RESULTS.md has the full tables):
float32 ``A @ x`` BCSR 1.2-1.6x, BCOO 1.5x; ``A.T @ x`` 1.3x / 1.7x; ``A @ X`` (64 columns)
0.96-1.3x / 1.2-1.5x; float64 ``A @ x`` 1.5x / 2.0x, ``A @ X`` 1.0x / 1.0x. The XLA fallback in
the same conditions: ``A @ x`` 1.8-4x, ``A @ X`` (BCSR, JAX's kernel) about 1x. Before the native
kernel (quieter machine, load 3 to 8):

JAX's native kernel "pays" from 8 columns on, or when ``nse * k * itemsize`` exceeds 6.4 MB (the
size from which it runs as parallel tasks; its single-task path is slow for few columns).

Measurements behind the choices (CPU, jitted, 20000 x 20000 at density 1e-3, 400k stored
entries; ratios of median times to SciPy ``csr_array`` in the same run; the machine is a shared
2-core VM with a load average of 3 to 8 during these runs, so ratios move by +-30 %; the full
tables are in bench/RESULTS.md):

- ``A @ x``: JAX's BCOO ``dot_general`` 2.8-3.9x; gather + sorted ``segment_sum`` 1.3-2.5x (the gather
  alone, fused with the product, costs about 1x SciPy's whole product; the scatter the rest; a
  scatter of 400k entries costs 0.8-1.6 ms in XLA on CPU whatever its mode or index type). An ELL
  layout (a BCOO with ``n_batch=1``: gather and a dense row sum) is no faster (2.1x); neither is a
  blocked segmented scan (3-9x), a cumulative-sum difference (6-9x, and inexact), a row-blocked
  gather on row pointers (2.2-4x) or JAX's native CSR kernel with one column (10-15x: Eigen's
  single-task path costs about 25 ns per stored entry).
- ``A @ X``: JAX's BCOO 6.5-7.8x; gather + ``segment_sum`` 7.5x (64 gathered columns per entry); the
  native kernel on BCSR 0.6-0.75x, on BCOO with computed row pointers 0.65-0.8x. Columns where the
  native kernel wins, per dtype (ms, native / gather + scatter): float32 k=2 11.5 / 2.5, k=4
  11.1 / 4.5, k=8 3.3 / 7.9; float64 k=2 5.1 / 2.6, k=4 2.6 / 6.8, k=8 3.6 / 22.
- BCSR ``A @ x``: JAX's BCSR 13-15x (the native kernel's one-column path); row indices from the
  pointers need a ``cumsum`` of 400k entries, 3-6 ms in XLA on CPU (5.5-8x in all); the row-blocked
  kernel 2.2-3x, with 16 entries per row and step (8: 2.2-3.6x, 32: 1.9-3.9x; the row lengths here
  are about 20). A row far longer than the average makes it fall back to the row indices.
- ``A.T @ x``: JAX's BCOO transpose + ``dot_general`` 11x; ``segment_sum`` over the column indices
  (unsorted) 0.8-1.5x.
- Sorting 400k entries costs about 300 ms in XLA on CPU, so no kernel sorts; the transpose of a
  BCSR is a BCOO (as SciPy's csr -> csc), not a sorted BCSR.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp.sparse import _native

kernel = functools.partial(jax.jit, inline=True)

CSR_MIN_COLUMNS = 8
"""From this many dense columns on, the native CSR kernel beats gather + ``segment_sum``."""

NATIVE_PARALLEL_BYTES = 100_000 * 64
"""Above ``nse * columns * itemsize`` bytes the native CPU kernel splits the product into
parallel tasks (its task size: 100k cycles of 64 bytes); it is much faster on that path than on
its single-task one (float64, 4 columns: 2.6 ms against 11 ms), so fewer columns suffice."""

CSR_VECTOR_BLOCK = 16
"""Entries per row handled at each step of :func:`csr_matvec`."""

_NATIVE_DTYPES = frozenset(np.dtype(d) for d in ("int32", "int64", "float32", "float64", "complex64", "complex128"))
_NATIVE_INDEX_DTYPES = frozenset(np.dtype(d) for d in ("int32", "int64"))

_MATMUL_DN = (((1,), (0,)), ((), ()))


def take(x: Any, index: Any) -> Any:
    """``x[index]`` along the first axis, 0 where ``index`` is out of range (JAX's padding entries).

    A plain gather: no wrap-around of negative indices (an index is never negative here)."""
    numbers = jax.lax.GatherDimensionNumbers(
        offset_dims=tuple(range(index.ndim, index.ndim + x.ndim - 1)), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    return jax.lax.gather(
        x, index[..., None], numbers, (1, *x.shape[1:]), mode=jax.lax.GatherScatterMode.FILL_OR_DROP, fill_value=0
    )


# --- COO: gather and segment_sum -----------------------------------------------------------


@functools.partial(kernel, static_argnames=("n_out", "sorted_out"))
def coo_matmul(data: Any, out_index: Any, in_index: Any, x: Any, *, n_out: int, sorted_out: bool) -> Any:
    """``y[out_index[k]] += data[k] * x[in_index[k]]`` for a 1-d or 2-d ``x``: ``y`` has ``n_out`` rows.

    With ``out_index`` the row indices this is ``A @ x``; with the column indices, ``A.T @ x``.
    Entries whose indices are out of range (JAX's padding) contribute nothing.
    """
    if data.shape[0] == 0 or x.shape[0] == 0:
        return jnp.zeros((n_out, *x.shape[1:]), jnp.result_type(data, x))
    values = take(x, in_index)
    products = data[:, None] * values if x.ndim == 2 else data * values
    return jax.ops.segment_sum(products, out_index, num_segments=n_out, indices_are_sorted=sorted_out)


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
    return jnp.concatenate([jnp.zeros(1, dtype), jnp.cumsum(counts, dtype=dtype)])


@functools.partial(kernel, static_argnames=("nse",))
def rows_from_indptr(indptr: Any, *, nse: int) -> Any:
    """The row index of each of ``nse`` entries (``n_rows`` for entries past ``indptr[-1]``)."""
    dtype = _counting_dtype(max(nse, indptr.shape[0]))
    starts = jnp.zeros(nse, dtype).at[indptr[1:]].add(1, mode="drop")
    return jnp.cumsum(starts, dtype=dtype)


def is_sorted(rows: Any) -> Any:
    return jnp.all(rows[1:] >= rows[:-1]) if rows.shape[0] > 1 else jnp.bool_(True)


# --- CSR: the native kernel ------------------------------------------------------------------


def native_csr_supported(dtype: np.dtype) -> bool:
    return np.dtype(dtype) in _NATIVE_DTYPES


def csr_matmul(data: Any, indices: Any, indptr: Any, x: Any, *, n_cols: int) -> Any:
    """``A @ x`` for a CSR matrix through JAX's ``bcsr_dot_general`` (a native kernel on CPU and GPU).

    Column indices out of range (which the CPU kernel would read out of bounds) are made harmless
    first; index dtypes are unified to int32 or int64 as the kernel requires.
    """
    index_dtype = np.dtype(np.int64) if np.int64 in (indices.dtype, indptr.dtype) else np.dtype(np.int32)
    if index_dtype == np.int64 and not jax.config.read("jax_enable_x64"):
        index_dtype = np.dtype(np.int32)
    valid = (indices >= 0) & (indices < n_cols)
    indices = jnp.where(valid, indices, 0).astype(index_dtype)
    data = jnp.where(valid, data, 0)
    matrix = jsparse.BCSR((data, indices, indptr.astype(index_dtype)), shape=(indptr.shape[0] - 1, n_cols))
    return jsparse.bcsr_dot_general(matrix, x, dimension_numbers=_MATMUL_DN)


# --- CSR: row-blocked matrix-vector product ---------------------------------------------------


def _csr_matvec_blocked(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    """Each step adds up to ``CSR_VECTOR_BLOCK`` more entries of every row (a dense gather and sum)."""
    block = CSR_VECTOR_BLOCK
    if data.shape[0] == 0 or x.shape[0] == 0:
        return jnp.zeros(indptr.shape[0] - 1, jnp.result_type(data, x))
    products = data * take(x, indices)
    start = indptr[:-1]
    count = indptr[1:] - start
    steps = (jnp.max(count, initial=0) + block - 1) // block
    offsets = jnp.arange(block, dtype=start.dtype)

    def body(state: tuple[Any, Any]) -> tuple[Any, Any]:
        step, total = state
        j = step * block + offsets
        inside = j[None, :] < count[:, None]
        position = jnp.where(inside, start[:, None] + j[None, :], products.shape[0])
        return step + 1, total + jnp.sum(take(products, position), axis=1, dtype=products.dtype)

    zero = jnp.zeros(start.shape[0], products.dtype)
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
    and reverse mode both work; the primal keeps the fast kernel."""
    data, indices, indptr, x = primals
    data_dot, _, _, x_dot = tangents
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    n_rows = indptr.shape[0] - 1
    tangent = coo_matmul(data_dot, rows, indices, x, n_out=n_rows, sorted_out=True)
    tangent = tangent + coo_matmul(data, rows, indices, x_dot, n_out=n_rows, sorted_out=True)
    return _csr_matvec_impl(data, indices, indptr, x), tangent


@kernel
def csr_matvec(data: Any, indices: Any, indptr: Any, x: Any) -> Any:
    """``A @ x`` for a CSR matrix and a vector, without row indices (differentiable)."""
    return _csr_matvec(data, indices, indptr, x)


# --- XLA's kernels for each product (the native kernel's fallback: GPU, export, XP_NATIVE=0) ---------


def xla_coo_product(data: Any, out_index: Any, in_index: Any, x: Any, *, n_out: int, sorted_out: bool,
                    native: bool = True) -> Any:  # fmt: skip
    """``y[out_index[k]] += data[k] * x[in_index[k]]`` (``A @ x`` with the row indices first, ``A.T @ x``
    with the column indices first); ``native``: whether JAX's CSR kernel may be chosen."""
    if not (native and _native_pays(data.shape[0], x)):
        return coo_matmul(data, out_index, in_index, x, n_out=n_out, sorted_out=sorted_out)
    n_in = x.shape[0]

    def on_pointers(data: Any, rows: Any, cols: Any, x: Any) -> Any:
        return csr_matmul(data, cols, indptr_from_sorted_rows(rows, n_rows=n_out), x, n_cols=n_in)

    if sorted_out:
        return on_pointers(data, out_index, in_index, x)

    def scatter(data: Any, rows: Any, cols: Any, x: Any) -> Any:
        return coo_matmul(data, rows, cols, x, n_out=n_out, sorted_out=False)

    return jax.lax.cond(is_sorted(out_index), on_pointers, scatter, data, out_index, in_index, x)


def xla_csr_product(data: Any, indices: Any, indptr: Any, x: Any, native: bool = True) -> Any:
    """``A @ x`` for CSR buffers; ``native``: whether JAX's CSR kernel may be chosen."""
    if native and _native_pays(data.shape[0], x):
        return csr_matmul(data, indices, indptr, x, n_cols=x.shape[0])
    if x.ndim == 1:
        return csr_matvec(data, indices, indptr, x)
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    return coo_matmul(data, rows, indices, x, n_out=indptr.shape[0] - 1, sorted_out=True)


def xla_csr_rproduct(data: Any, indices: Any, indptr: Any, x: Any, *, n_cols: int) -> Any:
    """``A.T @ x`` for CSR buffers of a matrix with ``n_cols`` columns."""
    rows = rows_from_indptr(indptr, nse=data.shape[0])
    return coo_matmul(data, indices, rows, x, n_out=n_cols, sorted_out=False)


# --- choosing ---------------------------------------------------------------------------------


def _columns(x: Any) -> int:
    return 1 if x.ndim == 1 else int(x.shape[1])


def _native_pays(nse: int, x: Any) -> bool:
    """Whether JAX's native CSR kernel beats gather + ``segment_sum`` for ``A @ x`` (measured)."""
    if not native_csr_supported(x.dtype) or x.ndim == 1:
        return False
    k = _columns(x)
    return k >= CSR_MIN_COLUMNS or nse * k * np.dtype(x.dtype).itemsize > NATIVE_PARALLEL_BYTES


def _own_native(x: Any, native: bool) -> bool:
    """Whether xp's native kernel (:mod:`xp.sparse._native`) computes the product: on CPU, decided
    when XLA lowers it (elsewhere the primitive lowers to the XLA fallback)."""
    return native and _native.supported(x.dtype) and _native.available()


def bcoo_matmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A @ x`` for a 2-d BCOO ``A`` without batch or dense dimensions and a 1-d or 2-d ``x``
    of the same dtype (traced inside the callers' kernels); ``native``: whether native kernels
    (xp's, JAX's CSR kernel) may be chosen (not where XLA must partition the product)."""
    n_rows = matrix.shape[0]
    rows, cols = matrix.indices[:, 0], matrix.indices[:, 1]
    sorted_out = bool(matrix.indices_sorted)
    if _own_native(x, native):
        spec = _native.Spec("coo", n_rows, sorted_out, column=0)
        return _native.product(matrix.data, matrix.indices, matrix.indices, x, spec)
    return xla_coo_product(matrix.data, rows, cols, x, n_out=n_rows, sorted_out=sorted_out, native=native)


def bcoo_rmatmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A.T @ x`` for a 2-d BCOO ``A`` (no batch or dense dimensions), without forming ``A.T``."""
    rows, cols = matrix.indices[:, 0], matrix.indices[:, 1]
    if _own_native(x, native):
        spec = _native.Spec("coo", matrix.shape[1], column=1)
        return _native.product(matrix.data, matrix.indices, matrix.indices, x, spec)
    return coo_matmul(matrix.data, cols, rows, x, n_out=matrix.shape[1], sorted_out=False)


def bcsr_matmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A @ x`` for a 2-d BCSR ``A`` (no batch or dense dimensions) and a 1-d or 2-d ``x``."""
    if _own_native(x, native):
        indices, indptr = _native.common_index(matrix.indices, matrix.indptr)
        return _native.product(matrix.data, indices, indptr, x, _native.Spec("csr", matrix.shape[0]))
    return xla_csr_product(matrix.data, matrix.indices, matrix.indptr, x, native=native)


def bcsr_rmatmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A.T @ x`` for a 2-d BCSR ``A`` (no batch or dense dimensions)."""
    if _own_native(x, native):
        indices, indptr = _native.common_index(matrix.indices, matrix.indptr)
        return _native.product(matrix.data, indices, indptr, x, _native.Spec("csr_t", matrix.shape[1]))
    return xla_csr_rproduct(matrix.data, matrix.indices, matrix.indptr, x, n_cols=matrix.shape[1])
