"""The products of sparse matrices: the choice of kernel and the kernels.

- :mod:`.kernels`: the products of xp.sparse's arrays on raw JAX arrays, and the choice among the
  kernels below, per operation and backend (with the measurements behind each choice);
- :mod:`.xla`: the products as XLA computations (gathers, segment sums, JAX's own sparse
  kernels): every backend, and the fallback of the others;
- :mod:`.native`: xp's own compiled CPU kernel (``native_spmm.cc``, ``native_spgemm.cc``), built
  on first use and called by XLA through JAX's FFI, with its JVP, transpose and batching rules;
- :mod:`.sparse_sparse`: the eager product of two sparse matrices on the host;
- :mod:`.tpu`: the products of the layouts ``xp.sparse.DIA`` (:mod:`.tpu_dia`) and
  ``xp.sparse.BSR`` (:mod:`.tpu_bsr`), Pallas kernels on a TPU and XLA's formulations elsewhere;
- :mod:`.rules`: what the product primitives share (their JVP and batching rules).

"Native" means xp's own compiled code, nothing else. Each kernel is a primitive whose lowering
chooses it for its platform (:mod:`.native` on CPU, :mod:`.tpu` on a TPU), chosen by
:mod:`.kernels`.
"""
