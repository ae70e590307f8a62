"""Transposed views: ``A.T``, ``A.mT`` and ``xp.matrix_transpose(A)`` of a sparse matrix in O(1).

A view is an ``xp.sparse.BCOO`` that holds the JAX sparse array it transposes (its *base*, a
BCOO or BCSR, untouched) instead of a value of its own: it stands for the base with its last two
axes swapped. Making one moves no data, eagerly or under ``jax.jit`` (the flag is static pytree
aux data, so a jitted ``A.T`` is the identity on the base's buffers). Views are made of 2-d
arrays without batch or dense dimensions; a view's base gains batch dimensions only through
``jax.vmap`` (the view is then a stack of transposes, as ``mT`` says).

What understands a view without forming the transpose (the rest reads ``_value``, below):

- ``shape``, ``ndim``, ``dtype``, ``device``, ``nse``, ``data``, ``.T``/``.mT``/``matrix_transpose``
  (back to the base, O(1)), ``to_bcoo`` (a view is one), ``to_scipy`` (the host arrays of the
  base with their coordinates swapped: SciPy's csr ``.T`` is a csc the same way), ``copy``;
- products with a dense operand on either side (``_linear_algebra``): ``A.T @ x`` is the base's
  transposed product (``kernels.bcoo_rmatmul``/``bcsr_rmatmul``, which never form the
  transpose) and ``x @ A.T`` is ``(A @ x.T).T`` (``bcoo_matmul``/``bcsr_matmul``); value-level,
  inside the kernels, a view is a :class:`Transposed`;
- reductions along axes (``_reductions``): a reduction of ``A.T`` along axis ``a`` is the base's
  along ``1 - a``, and a two-dimensional result (``keepdims``) is a view again.

Everything else reads the view's ``_value``, the one place the transpose is formed
(:func:`materialize`, called from ``SparseArray.__getattr__`` when the slot is empty): a BCOO
whose data is the base's data (shared) and whose indices are the base's, columns swapped (a BCSR
base needs its row indices from the row pointers). Eagerly it is computed once and cached on the
view; under a transformation it is cached only when it belongs to the base's own trace (a value
of an inner trace kept on an outer object would leak a tracer). So no operation can read
untransposed data: the untransposed base is reachable only as ``_base``. ``A.T.indices`` and
``A.T.jax`` are of the materialized transpose (JAX's sparse API, ``xp.sparse.bcoo_*``, sees it);
``A.T.data`` is the base's data, which is also the materialized one's.

Why views (bench/RESULTS.md, "Sparse arrays", the ``A.T`` row, against SciPy's O(1) csr ``.T``):

- forming the transpose eagerly costs what a view does not (for 400k stored entries about 0.5 ms
  for a BCOO and 4.5 ms for a BCSR, whose row indices come from its pointers); a view costs
  microseconds (``A.T`` less than ``xp.matrix_transpose``: it skips the routing);
- jitted, a top-level ``jax.jit(xp.matrix_transpose)`` costs what JAX returning its arguments
  costs (XLA copies output buffers that are parameters unless donated: ``jax.jit(lambda a: a)``
  costs the same); inside a larger jitted function a view costs nothing;
- products on a view, jitted: ``A.T @ x`` computes what forming the transpose and multiplying did
  (``bcoo_rmatmul``/``bcsr_rmatmul``), in the same time; ``x @ A.T`` is ``A @ x`` (the CSR kernel
  for a BCSR, about 2.5 times faster than the transposed product).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp._jit import Tracer, kernel
from xp.sparse._products import kernels


def is_plain(value: Any) -> bool:
    """A 2-d JAX sparse array without batch or dense dimensions (what a view is made of)."""
    return (
        isinstance(value, (jsparse.BCOO, jsparse.BCSR))
        and len(value.shape) == 2
        and value.n_batch == 0
        and value.n_dense == 0
    )


def view_shape(base: Any) -> tuple[int, ...]:
    """The shape of the transpose of ``base`` (its last two axes swapped)."""
    shape = tuple(base.shape)
    return (*shape[:-2], shape[-1], shape[-2])


@jax.tree_util.register_pytree_node_class
class Transposed:
    """A view inside a kernel: ``base`` (a plain 2-d JAX BCOO or BCSR) transposed.

    Only the products take it (``xp.sparse._linear_algebra``); it has the attributes their
    argument checks read (``shape``, ``dtype``, ``ndim``) and :meth:`materialize` for the rest.
    """

    __slots__ = ("base",)

    def __init__(self, base: Any) -> None:
        self.base = base

    @property
    def shape(self) -> tuple[int, ...]:
        return view_shape(self.base)

    @property
    def dtype(self) -> np.dtype:
        return self.base.dtype

    @property
    def ndim(self) -> int:
        return len(self.base.shape)

    def materialize(self) -> Any:
        return materialize(self.base)

    def tree_flatten(self) -> tuple[tuple[Any], None]:
        return (self.base,), None

    @classmethod
    def tree_unflatten(cls, aux: None, children: Any) -> Transposed:
        return cls(children[0])


# --- forming the transpose (the one place) ----------------------------------------------------


def materialize(base: Any) -> Any:
    """The JAX BCOO array that is ``base`` with its last two axes swapped."""
    if is_plain(base):
        indices = swapped_indices(base)
        shape = view_shape(base)
        aux = {"shape": shape, "indices_sorted": False, "unique_indices": bool(base.unique_indices)}
        return jsparse.BCOO.tree_unflatten(aux, (base.data, indices))
    return _swapped(base)


def cacheable(base: Any, value: Any) -> bool:
    """Whether the transpose ``value`` of ``base`` may be kept on the view: eagerly always; under a
    transformation only when it was traced in the base's own trace."""
    made, held = value.indices, base.data  # (the data is the base's: the indices are made)
    if not isinstance(made, Tracer):
        return True
    return isinstance(held, Tracer) and getattr(made, "_trace", None) is getattr(held, "_trace", False)


@kernel
def swapped_indices(x: Any) -> Any:
    """The (column, row) indices of a plain 2-d BCOO or BCSR."""
    if isinstance(x, jsparse.BCSR):
        itype = x.indices.dtype
        if np.iinfo(itype).max < x.shape[0]:  # the row indices (and the padding index) must fit
            itype = np.dtype(np.int32)
        rows = kernels.rows_from_indptr(x.indptr, nse=x.indices.shape[0]).astype(itype)
        return jnp.stack([x.indices.astype(itype), rows], axis=1)
    return jnp.flip(x.indices, axis=1)


@kernel
def _swapped(x: Any) -> Any:
    return bcoo_swap_last(x.to_bcoo() if isinstance(x, jsparse.BCSR) else x)


def bcoo_swap_last(x: Any) -> Any:
    """A BCOO's last two axes swapped (inside a kernel); the layout changes only where the two axes
    are of different kinds (batch, sparse, dense)."""
    n = x.ndim

    def kind(axis: int) -> int:
        return 0 if axis < x.n_batch else 1 if axis < x.n_batch + x.n_sparse else 2

    if kind(n - 2) != kind(n - 1):
        x = jsparse.bcoo_update_layout(x, n_batch=min(x.n_batch, n - 2), n_dense=0, on_inefficient=None)
    return jsparse.bcoo_transpose(x, permutation=(*range(n - 2), n - 1, n - 2))
