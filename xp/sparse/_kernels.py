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
                              tasks. Otherwise :func:`coo_matmul`.
BCSR ``A @ x``                :func:`csr_matvec`: a row-blocked kernel on the row pointers (no row
                              indices), with a custom JVP through :func:`coo_matmul`.
on a GPU                      the CSR products above and BCSR ``A @ x`` take :func:`csr_matmul` in its
                              branchless form (no conditional: docs/sparse.md, "On a GPU").
``x @ A``, BCSR ``A.T @ x``   :func:`coo_matmul` with the index columns swapped (BCSR: row indices from
                              :func:`rows_from_indptr`).
============================  ===========================================================================

xp's native kernel against SciPy ``csr_array`` (jitted, 20000 x 20000, density 1e-3, same run;
on the quiet 2-core machine, load average 1-2, two threads; bench/RESULTS.md has the full tables):
``A @ x`` BCSR 0.65-0.88x, BCOO 0.66-0.93x (with AVX-512 gathers, on the Xeon of 2026-12-04: BCSR
0.78-0.84x, BCOO 0.98-1.05x, where the scalar loops had given 1.01-1.04x and 1.23-1.24x that day); ``A.T @ x`` 0.77-0.98x / 0.85-1.01x; ``A @ X`` (64
columns) 0.26-0.57x / 0.31-0.57x (float32 and float64, the runs of three days; the float64 ``A @ X``
spread is mostly the operating system's: docs/sparse.md, "The native CPU kernel"). On the loaded machine of earlier
measurements (load 9 to 10, a second thread rarely getting a core, before the kernel was built for
the host CPU) it was 1.2-2.0x for ``A @ x``, and the XLA fallback 1.8-4x. Before the native
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

from typing import Any

import jax

from xp.sparse import _native
from xp.sparse._xla_kernels import (
    coo_matmul,
    csr_matmul,
    rows_from_indptr,
    take,
    xla_coo_product,
    xla_csr_product,
    xla_csr_rproduct,
)

__all__ = ["bcoo_matmul", "bcoo_rmatmul", "bcsr_matmul", "bcsr_rmatmul", "coo_matmul", "csr_matmul",
           "native_for", "rows_from_indptr", "take"]  # fmt: skip

# --- choosing ---------------------------------------------------------------------------------


def native_for(dtype: Any) -> bool:
    """Whether products of ``dtype`` may run on xp's native kernel (:mod:`xp.sparse._native`): its
    dtypes, loaded (on CPU); decided again when XLA lowers a product (elsewhere the primitive
    lowers to the XLA fallback)."""
    return _native.supported(dtype) and _native.available()


def _own_native(x: Any, native: bool) -> bool:
    """Whether xp's native kernel computes the product of ``x`` (see :func:`native_for`)."""
    return native and native_for(x.dtype)


def _gpu() -> bool:
    """Whether products lower for a GPU (JAX's default backend: where xp's kernels run unless the
    arrays are placed elsewhere); XLA's kernels then take their GPU forms."""
    return jax.default_backend() in ("gpu", "cuda", "rocm")


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
    return xla_coo_product(matrix.data, rows, cols, x, n_out=n_rows, sorted_out=sorted_out, native=native, gpu=_gpu())


def bcoo_rmatmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A.T @ x`` for a 2-d BCOO ``A`` (no batch or dense dimensions), without forming ``A.T``."""
    rows, cols = matrix.indices[:, 0], matrix.indices[:, 1]
    if _own_native(x, native):
        spec = _native.Spec("coo", matrix.shape[1], bool(matrix.indices_sorted), column=1)
        return _native.product(matrix.data, matrix.indices, matrix.indices, x, spec)
    return coo_matmul(matrix.data, cols, rows, x, n_out=matrix.shape[1], sorted_out=False)


def bcsr_matmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A @ x`` for a 2-d BCSR ``A`` (no batch or dense dimensions) and a 1-d or 2-d ``x``."""
    if _own_native(x, native):
        indices, indptr = _native.common_index(matrix.indices, matrix.indptr)
        return _native.product(matrix.data, indices, indptr, x, _native.Spec("csr", matrix.shape[0]))
    return xla_csr_product(matrix.data, matrix.indices, matrix.indptr, x, native=native, gpu=_gpu())


def bcsr_rmatmul(matrix: Any, x: Any, native: bool = True) -> Any:
    """``A.T @ x`` for a 2-d BCSR ``A`` (no batch or dense dimensions)."""
    if _own_native(x, native):
        indices, indptr = _native.common_index(matrix.indices, matrix.indptr)
        return _native.product(matrix.data, indices, indptr, x, _native.Spec("csr_t", matrix.shape[1]))
    return xla_csr_rproduct(matrix.data, matrix.indices, matrix.indptr, x, n_cols=matrix.shape[1])
