"""``xp.sparse.ELL``: a matrix of no structure as rows padded to one length per chunk of columns.

For matrices whose entries follow no band or block (graphs, random sparsity), on a TPU, where a
BCOO's product is a gather and a scatter-add that XLA serializes. ``A @ x`` of a float32 (int32,
uint32) vector is a Pallas kernel there that gathers only within registers of ``x`` held in the
core's memory and never scatters (xp/sparse/_products/tpu_ell.py, which also describes the stored
layouts; docs/sparse.md, "On a TPU"). The matrix is stored twice, as itself and as its transpose, so that
``A.T @ x`` (``x @ A``) is the same kernel. Every other product (``A @ X`` of a matrix ``X``, other
dtypes, other platforms) is XLA's gather and sum, without a scatter, from a second layout of each
(the rows sorted by their numbers of entries: each entry's row of ``x`` gathered once).

Made eagerly from a BCOO or BCSR (``ELL.from_sparse(A)``) or from a dense matrix
(``ELL.fromdense(x)``): how far the rows are padded depends on where the entries are. A matrix
whose rows are padded past ``max_fill`` values stored per entry (one long row pads every row) is
refused rather than stored as large as its dense copy.
"""

from __future__ import annotations

import functools
from typing import Any, Self

import numpy as np

from xp import _routing as routing
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import kernel
from xp._typing import ArrayLike
from xp.sparse import _conversion as conversion
from xp.sparse import _layout_matrix as layout
from xp.sparse._products import kernels, tpu, tpu_ell

MAX_FILL = 16.0
"""The values an ELL may store by default, its two layouts together, per entry (or per row and
chunk of columns, the least the layout stores, where the matrix has fewer entries). Padding is the
layout's price: 20 entries a row at random over 20000 columns store 18 values per entry, 9 per row
and chunk of 1024 columns (docs/sparse.md, "On a TPU")."""


class Plans(tuple[tpu_ell.Plan, tpu_ell.Plan]):
    """The static part of an ELL matrix: the plans of its layout and of its transpose's."""

    __slots__ = ()

    @property
    def shape(self) -> tuple[int, int]:
        return self[0].shape


@functools.partial(kernel, static_argnums=(2, 3, 4, 5))  # plans, transposed, left, dtype
def _product(leaves: tuple[Any, ...], x: Any, plans: Plans, transposed: bool, left: bool, dtype: Any) -> Any:
    stored = tuple(leaf.astype(dtype) if i in tpu.ELL_VALUES_AT else leaf for i, leaf in enumerate(leaves))
    return layout.product(left, transposed, x, dtype, lambda x, t: kernels.ell_matmul(stored, x, plans[0], plans[1], t))


@functools.partial(kernel, static_argnames="plan")
def _todense(values: Any, columns: Any, plan: tpu_ell.Plan) -> Any:
    return tpu_ell.todense(values, columns, plan=plan)


class ELL(layout.LayoutMatrix):
    """A 2-d matrix stored as rows padded per chunk of columns (ELLPACK), with its transpose: build
    it with :meth:`from_sparse` or :meth:`fromdense`.

    ``values`` and ``columns`` ``(chunks, slots, rows)``: chunk by chunk of 1024 columns, each row's
    entries in that chunk in its ``slots`` slots (the most any row has in any chunk), with their
    columns within the chunk (-1 at padding, whose values are 0); the rows padded to whole tiles:
    the layout of the TPU's kernel of ``A @ x``. Beside it the row layout, whose rows are sorted by
    their numbers of entries, for every other product (``tpu_ell.host_row_layout``: at most twice
    the entries). The transpose is stored both ways too. (So derivatives with respect to the stored
    values are forward-mode only: a gradient step on the layouts would set them apart.)
    """

    __slots__ = ("_stored",)
    _stored: tuple[Any, ...]
    _plan: Plans

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("xp.sparse.ELL: build it with ELL.from_sparse(A) or ELL.fromdense(x)")

    @classmethod
    def _make(cls, leaves: tuple[Any, ...], static: Any, transposed: bool) -> Self:
        made = object.__new__(cls)
        made._stored = tuple(leaves)
        made._plan, made._transposed = static, transposed
        return made

    @classmethod
    def from_sparse(cls, matrix: Any, /, *, max_fill: float = MAX_FILL) -> Self:
        """The ELL matrix of a 2-d ``xp.sparse.BCOO`` or ``BCSR`` (duplicates summed), eagerly.
        ``max_fill``: the most values stored per entry (both layouts' padding counts), else a
        ValueError."""
        try:
            rows, cols, values, shape = layout.host_entries(matrix, "ELL.from_sparse")
            return cls._from_entries(rows, cols, values, shape, max_fill, matrix)
        except Exception as error:
            return routing.failed(error, "xp.sparse.ELL.from_sparse", cls.from_sparse, (matrix,),
                                  {"max_fill": max_fill})  # fmt: skip

    @classmethod
    def fromdense(cls, x: ArrayLike, /, *, max_fill: float = MAX_FILL) -> Self:
        """The ELL matrix of a 2-d dense array's nonzero elements (eagerly; ``max_fill`` as for
        :meth:`from_sparse`)."""
        try:
            rows, cols, values, shape = layout.dense_entries(x, "ELL.fromdense")
            return cls._from_entries(rows, cols, values, shape, max_fill, x)
        except Exception as error:
            return routing.failed(error, "xp.sparse.ELL.fromdense", cls.fromdense, (x,), {"max_fill": max_fill})

    @classmethod
    def _from_entries(cls, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int],
                      max_fill: Any, source: Any) -> Self:  # fmt: skip
        limit = layout.fill_limit(max_fill)
        # duplicates summed (one slot each: a row's padding is its most entries), as a BCOO's are
        values, indices = conversion._sum_duplicates_host(values, np.stack([rows, cols], axis=1), shape, None)
        rows, cols = indices[:, 0], indices[:, 1]
        plans, leaves = [], []
        for r, c, s in ((rows, cols, shape), (cols, rows, (shape[1], shape[0]))):  # the matrix, its transpose
            plan, chunked_values, chunked_columns = tpu_ell.host_layout(r, c, values, s)
            bands, row_values, row_columns, rank = tpu_ell.host_row_layout(r, c, values, s)
            plans.append(plan._replace(bands=bands))
            leaves += [chunked_values, chunked_columns, row_values, row_columns, rank]
        _check_padding(plans[0], plans[1], len(values), limit)
        return cls._make(tuple(layout.placed_like(leaf, source) for leaf in leaves), Plans(plans), False)

    # --- attributes ------------------------------------------------------------------------------

    @property
    def data(self) -> Array:
        """The stored values ``(chunks, slots, rows)`` of the matrix (not of its transpose), 0 at
        the padding."""
        return wrap(self._stored[0])

    @property
    def columns(self) -> Array:
        """Each stored value's column within its chunk (-1 at the padding)."""
        return wrap(self._stored[1])

    @property
    def chunk(self) -> int:
        """The columns of a chunk: one register of ``x`` on a TPU's vector unit."""
        return self._plan[0].chunk

    @property
    def slots(self) -> int:
        """The slots of each row in each chunk of columns (of the matrix, not of its transpose)."""
        return self._plan[0].slots

    def _describe(self) -> str:
        plan = self._plan[0]
        return f", {plan.slots} slots in each of {plan.chunks} chunks of {plan.chunk} columns"

    # --- the layout matrix's parts ---------------------------------------------------------------

    def _leaves(self) -> tuple[Any, ...]:
        return self._stored

    _kernel = staticmethod(_product)

    def _dense(self) -> Any:
        return _todense(self._stored[0], self._stored[1], self._plan[0])


def _check_padding(plan: tpu_ell.Plan, t_plan: tpu_ell.Plan, entries: int, max_fill: float) -> None:
    """Refuse layouts that would store more than ``max_fill`` values per entry, or per row and
    chunk where there are fewer entries than those (a slot a row in each chunk is the least the
    layout stores). The rows padded to whole tiles are not counted (a tile's at most)."""
    padded = plan.chunks * plan.slots * plan.shape[0] + t_plan.chunks * t_plan.slots * t_plan.shape[0]
    least = plan.chunks * plan.shape[0] + t_plan.chunks * t_plan.shape[0]
    ratio = padded / max(entries, least, 1)
    if ratio > max_fill:
        fail(ValueError, f"ELL would store {padded} values for {entries} entries ({ratio:.1f} per entry, or per row "
             f"and chunk of columns, above max_fill={max_fill}): the rows with the most entries pad every row, so "
             "this layout does not suit this matrix (pass a larger max_fill to build it anyway)")  # fmt: skip


layout.register(ELL)
