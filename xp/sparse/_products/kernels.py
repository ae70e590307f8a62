"""xp's own kernels for 2-D sparse products, chosen per operation by measurement.

Every kernel is a function of raw JAX arrays (``data``, index arrays, the dense operand): jit-able,
vmap-able and differentiable with respect to ``data`` and the dense operand (forward and reverse
mode). The products of :mod:`xp.sparse._linear_algebra` pick among them.

**On CPU, all four products (BCOO and BCSR, ``A @ x`` and ``A.T @ x``, 1-d or 2-d ``x``) of
float32/64, complex64/128 and int32/64 use xp's native kernel** (:mod:`xp.sparse._products.native`: C++
through JAX's FFI, multithreaded on XLA's pool; BCOO read in place, sorted rows without row
pointers). It is a primitive whose lowering chooses: on other platforms, for ``jax.export``, with
``XP_NATIVE=0`` or where it could not be built, the XLA kernels below (the fallback,
``xla_*_product``) are what runs. ``custom_kernels=False`` (products XLA must partition over a mesh) skips
it and JAX's CSR kernel alike.

**On a TPU, the BCOO and BCSR products are XLA's** (below): a general sparse product is a gather
and a scatter-add there, which XLA serializes. What runs at the TPU's speed are the layouts of
their own, built once per matrix: ``xp.sparse.DIA`` (a banded matrix by its diagonals) and
``xp.sparse.BSR`` (dense blocks) and ``xp.sparse.ELL`` (rows padded per chunk of columns), whose
products (:func:`dia_matmul`, :func:`bsr_matmul`, :func:`ell_matmul`) are
primitives of :mod:`xp.sparse._products.tpu` lowering to Pallas kernels on a TPU and to XLA's
formulations elsewhere (docs/sparse.md, "On a TPU").

The XLA fallback:

============================  ===========================================================================
product                       kernel
============================  ===========================================================================
BCOO ``A @ x``, ``A.T @ x``   :func:`coo_matmul`: gather ``x`` at the column indices, multiply by ``data``,
                              ``segment_sum`` over the row indices (``indices_are_sorted`` when the BCOO
                              says so). ``A.T @ x`` swaps the roles of the two index columns, so the
                              transpose is never materialised.
BCOO ``A @ X``, k columns     when JAX's CSR kernel pays (below): :func:`csr_matmul` on row pointers
                              made from the sorted row indices (:func:`indptr_from_sorted_rows`, about
                              1 ms); a BCOO not marked sorted is checked at run time and falls back to
                              :func:`coo_matmul` if it is not. Otherwise :func:`coo_matmul`.
BCSR ``A @ X``                :func:`csr_matmul` when JAX's CSR kernel pays: ``bcsr_dot_general``,
                              on CPU an Eigen CSR kernel that splits large products into parallel
                              tasks. Otherwise :func:`coo_matmul`.
BCSR ``A @ x``                :func:`csr_matvec`: a row-blocked kernel on the row pointers (no row
                              indices), with a custom JVP through :func:`coo_matmul`.
on a GPU                      the CSR products above and BCSR ``A @ x`` take :func:`csr_matmul` in its
                              branchless form (no conditional: docs/sparse.md, "On a GPU").
``x @ A``, BCSR ``A.T @ x``   :func:`coo_matmul` with the index columns swapped (BCSR: row indices from
                              :func:`rows_from_indptr`).
============================  ===========================================================================

xp's native kernel takes about 0.7 of SciPy ``csr_array``'s time for ``A @ x`` and 0.2 for
``A @ X`` with 64 columns (jitted, 20000 x 20000 at density 1e-3; bench/RESULTS.md, "Sparse
arrays", has every product, the XLA fallback's too; docs/sparse.md, "The native CPU kernel", says
what shaped the kernel).

JAX's CSR kernel "pays" from 8 columns on, or when ``nse * k * itemsize`` exceeds 6.4 MB (the
size from which it runs as parallel tasks; its single-task path is slow for few columns).

Why the fallback is built as it is (CPU, jitted, the same matrix; each alternative with the ratio
to SciPy's time that decided it, in runs on a shared machine where ratios move by about a third):

- ``A @ x``: gather + sorted ``segment_sum`` (about 2x: the gather alone, fused with the product,
  costs about SciPy's whole product, the scatter the rest). Slower: JAX's BCOO ``dot_general``
  (about 3x), an ELL layout (a BCOO with ``n_batch=1``: gather and a dense row sum), a blocked
  segmented scan, a cumulative-sum difference (also inexact), a row-blocked gather on row
  pointers, and JAX's CSR kernel with one column (over 10x: Eigen's single-task path costs
  about 25 ns per stored entry).
- ``A @ X``: JAX's CSR kernel, on the row pointers of a BCSR or those computed from a sorted
  BCOO (below 1x), against about 7x for JAX's BCOO and for gather + ``segment_sum`` (64 gathered
  columns per entry). With few columns gather + ``segment_sum`` wins, unless the product is large
  enough for the native kernel's parallel path: hence ``CSR_MIN_COLUMNS`` and
  ``NATIVE_PARALLEL_BYTES`` (xp/sparse/_products/xla.py).
- BCSR ``A @ x``: the row-blocked kernel (about 2.5x), with ``CSR_VECTOR_BLOCK`` entries per row
  and step (the rows here hold about 20): row indices from the pointers need a ``cumsum`` of every
  entry, which alone costs several times SciPy's product, and JAX's BCSR takes the native kernel's
  one-column path (over 10x). A row far longer than the average makes it fall back to the row
  indices.
- ``A.T @ x``: ``segment_sum`` over the column indices, unsorted (about 1x), against 11x for
  JAX's BCOO transpose + ``dot_general``.
- Sorting 400k entries costs about 300 ms in XLA on CPU, so no kernel sorts; the transpose of a
  BCSR is a BCOO (as SciPy's csr -> csc), not a sorted BCSR.
"""

from __future__ import annotations

from typing import Any

import jax

from xp.sparse._products import native, tpu
from xp.sparse._products.xla import (
    coo_matmul,
    csr_matmul,
    rows_from_indptr,
    take,
    xla_coo_product,
    xla_csr_product,
    xla_csr_rproduct,
)

__all__ = ["bcoo_matmul", "bcoo_rmatmul", "bcsr_matmul", "bcsr_rmatmul", "bsr_matmul", "coo_matmul", "csr_matmul", "dia_matmul",
           "ell_matmul",
           "native_for", "rows_from_indptr", "take"]  # fmt: skip

# --- choosing ---------------------------------------------------------------------------------


def native_for(dtype: Any) -> bool:
    """Whether products of ``dtype`` may run on xp's native kernel (:mod:`xp.sparse._products.native`): its
    dtypes, loaded (on CPU); decided again when XLA lowers a product (elsewhere the primitive
    lowers to the XLA fallback)."""
    return native.supported(dtype) and native.available()


def _own_native(x: Any, custom_kernels: bool) -> bool:
    """Whether xp's native kernel computes the product of ``x`` (see :func:`native_for`)."""
    return custom_kernels and native_for(x.dtype)


def _gpu() -> bool:
    """Whether products lower for a GPU (JAX's default backend: where xp's kernels run unless the
    arrays are placed elsewhere); XLA's kernels then take their GPU forms."""
    return jax.default_backend() in ("gpu", "cuda", "rocm")


def bcoo_matmul(matrix: Any, x: Any, custom_kernels: bool = True) -> Any:
    """``A @ x`` for a 2-d BCOO ``A`` without batch or dense dimensions and a 1-d or 2-d ``x``
    of the same dtype (traced inside the callers' kernels); ``native``: whether native kernels
    (xp's, JAX's CSR kernel) may be chosen (not where XLA must partition the product)."""
    n_rows = matrix.shape[0]
    rows, cols = matrix.indices[:, 0], matrix.indices[:, 1]
    sorted_out = bool(matrix.indices_sorted)
    if _own_native(x, custom_kernels):
        spec = native.Spec("coo", n_rows, sorted_out, column=0)
        return native.product(matrix.data, matrix.indices, matrix.indices, x, spec)
    return xla_coo_product(
        matrix.data, rows, cols, x, n_out=n_rows, sorted_out=sorted_out, custom_kernels=custom_kernels, gpu=_gpu()
    )


def bcoo_rmatmul(matrix: Any, x: Any, custom_kernels: bool = True) -> Any:
    """``A.T @ x`` for a 2-d BCOO ``A`` (no batch or dense dimensions), without forming ``A.T``."""
    rows, cols = matrix.indices[:, 0], matrix.indices[:, 1]
    if _own_native(x, custom_kernels):
        spec = native.Spec("coo", matrix.shape[1], bool(matrix.indices_sorted), column=1)
        return native.product(matrix.data, matrix.indices, matrix.indices, x, spec)
    return coo_matmul(matrix.data, cols, rows, x, n_out=matrix.shape[1], sorted_out=False)


def bcsr_matmul(matrix: Any, x: Any, custom_kernels: bool = True) -> Any:
    """``A @ x`` for a 2-d BCSR ``A`` (no batch or dense dimensions) and a 1-d or 2-d ``x``."""
    if _own_native(x, custom_kernels):
        indices, indptr = native.common_index(matrix.indices, matrix.indptr)
        return native.product(matrix.data, indices, indptr, x, native.Spec("csr", matrix.shape[0]))
    return xla_csr_product(matrix.data, matrix.indices, matrix.indptr, x, custom_kernels=custom_kernels, gpu=_gpu())


def bcsr_rmatmul(matrix: Any, x: Any, custom_kernels: bool = True) -> Any:
    """``A.T @ x`` for a 2-d BCSR ``A`` (no batch or dense dimensions)."""
    if _own_native(x, custom_kernels):
        indices, indptr = native.common_index(matrix.indices, matrix.indptr)
        return native.product(matrix.data, indices, indptr, x, native.Spec("csr_t", matrix.shape[1]))
    return xla_csr_rproduct(matrix.data, matrix.indices, matrix.indptr, x, n_cols=matrix.shape[1])


# --- the layouts of their own: DIA, BSR and ELL (xp/sparse/_products/tpu.py) -----------------------


def dia_matmul(data: Any, x: Any, plan: Any, transposed: bool = False) -> Any:
    """``A @ x`` (``A.T @ x`` where ``transposed``) of an ``xp.sparse.DIA`` matrix's stored
    diagonals: the Pallas kernel on a TPU, XLA's shifted slices elsewhere (:mod:`.tpu`)."""
    return tpu.dia_product(data, x, plan, transposed)


def bsr_matmul(data: Any, rows: Any, cols: Any, order: Any, x: Any, plan: Any, transposed: bool = False) -> Any:
    """``A @ x`` (``A.T @ x``) of an ``xp.sparse.BSR`` matrix's blocks: the Pallas kernel on a TPU,
    XLA's batched block products elsewhere (:mod:`.tpu`)."""
    return tpu.bsr_product(data, rows, cols, order, x, plan, transposed)


def ell_matmul(layouts: tuple[Any, ...], x: Any, plan: Any, t_plan: Any, transposed: bool = False) -> Any:
    """``A @ x`` (``A.T @ x``) of an ``xp.sparse.ELL`` matrix's layouts (of the matrix and of its
    transpose): the Pallas kernel of a float32 vector on a TPU, XLA's gathers by the rows' lengths
    elsewhere (:mod:`.tpu`)."""
    return tpu.ell_product(layouts, x, plan, t_plan, transposed)
