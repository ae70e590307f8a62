"""``xp.sparse.BSR``: a matrix of dense blocks, multiplied block by block.

For matrices whose entries come in dense blocks (block-sparse weights, masks of attention, the
blocks of a discretisation with several unknowns per point). Its products (``A @ x``, ``A @ X``,
``A.T @ x``, ``x @ A``) multiply each stored block by the tile of ``x`` it meets: on a TPU a Pallas
kernel on the matrix unit, elsewhere one batched product in XLA (xp/sparse/_products/tpu_bsr.py,
which also describes the stored layout; docs/sparse.md, "On a TPU").

Made eagerly from a BCOO or BCSR (``BSR.from_sparse(A, block_shape=...)``) or from a dense matrix
(``BSR.fromdense(x, block_shape=...)``): which blocks there are depends on where the entries are.
A matrix whose entries do not fill its blocks is refused (``max_fill``) rather than stored as large
as its dense copy. Blocks of 128 x 128 suit a TPU's matrix unit; the kernel takes sides that are
multiples of 8 (others multiply by XLA's product on every platform).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Self

import jax
import numpy as np

from xp import _boundary as boundary
from xp import _routing as routing
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import kernel
from xp._typing import ArrayLike
from xp.sparse import _layout_matrix as layout
from xp.sparse._products import kernels, tpu_bsr

BLOCK_SHAPE = (128, 128)
"""The default blocks: the tile of a TPU's matrix unit."""


def _block_shape(block_shape: Any) -> tuple[int, int]:
    sides = boundary.shape(block_shape, "block_shape")
    if len(sides) != 2 or min(sides) < 1:
        fail(ValueError, f"block_shape must be 2 positive sizes, got {tuple(sides)}")
    return int(sides[0]), int(sides[1])


@functools.partial(kernel, static_argnums=(2, 3, 4, 5))  # plan, transposed, left, dtype
def _product(leaves: tuple[Any, ...], x: Any, plan: tpu_bsr.Plan, transposed: bool, left: bool, dtype: Any) -> Any:
    data, rows, cols, order = leaves
    data = data.astype(dtype)
    return layout.product(
        left, transposed, x, dtype, lambda x, t: kernels.bsr_matmul(data, rows, cols, order, x, plan, t)
    )


@functools.partial(kernel, static_argnames="plan")
def _todense(data: Any, rows: Any, cols: Any, plan: tpu_bsr.Plan) -> Any:
    (m, n), (bm, bk), (block_rows, block_cols) = plan.shape, plan.block, plan.grid
    grid = jax.numpy.zeros((block_rows, block_cols, bm, bk), data.dtype).at[rows, cols].set(data)
    return grid.transpose(0, 2, 1, 3).reshape(block_rows * bm, block_cols * bk)[:m, :n]


class BSR(layout.LayoutMatrix):
    """A 2-d matrix stored as dense blocks (block sparse rows): build it with :meth:`from_sparse`
    or :meth:`fromdense`.

    ``data`` ``(n_blocks, bm, bk)``: the blocks, sorted by block row, then block column;
    ``block_rows`` and ``block_columns``: where each block is (in blocks). Blocks at the last
    block row or column may reach past the matrix (their values there are zeros). Every block row
    and block column holds at least one block (of zeros where it would be empty: the kernel writes
    each block of the result from the blocks of its row).
    """

    __slots__ = ("_cols", "_data", "_order", "_rows")
    _data: Any
    _rows: Any
    _cols: Any
    _order: Any
    _plan: tpu_bsr.Plan

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("xp.sparse.BSR: build it with BSR.from_sparse(A, block_shape=...) or "
                        "BSR.fromdense(x, block_shape=...)")  # fmt: skip

    @classmethod
    def _make(cls, leaves: tuple[Any, ...], static: Any, transposed: bool) -> Self:
        made = object.__new__(cls)
        made._data, made._rows, made._cols, made._order = leaves
        made._plan, made._transposed = static, transposed
        return made

    @classmethod
    def from_sparse(cls, matrix: Any, /, *, block_shape: Sequence[int] = BLOCK_SHAPE,
                    max_fill: float = layout.MAX_FILL) -> Self:  # fmt: skip
        """The BSR matrix of a 2-d ``xp.sparse.BCOO`` or ``BCSR`` (duplicates summed), eagerly: the
        blocks of ``block_shape`` that hold an entry. ``max_fill``: the most values stored per entry
        (the blocks' zeros count), else a ValueError."""
        try:
            rows, cols, values, shape = layout.host_entries(matrix, "BSR.from_sparse")
            return cls._from_entries(rows, cols, values, shape, _block_shape(block_shape), max_fill, matrix)
        except Exception as error:
            kwargs = {"block_shape": block_shape, "max_fill": max_fill}
            return routing.failed(error, "xp.sparse.BSR.from_sparse", cls.from_sparse, (matrix,), kwargs)

    @classmethod
    def fromdense(cls, x: ArrayLike, /, *, block_shape: Sequence[int] = BLOCK_SHAPE,
                  max_fill: float = layout.MAX_FILL) -> Self:  # fmt: skip
        """The BSR matrix of a 2-d dense array: the blocks that hold a nonzero element (eagerly;
        ``max_fill`` as for :meth:`from_sparse`)."""
        try:
            rows, cols, values, shape = layout.dense_entries(x, "BSR.fromdense")
            return cls._from_entries(rows, cols, values, shape, _block_shape(block_shape), max_fill, x)
        except Exception as error:
            kwargs = {"block_shape": block_shape, "max_fill": max_fill}
            return routing.failed(error, "xp.sparse.BSR.fromdense", cls.fromdense, (x,), kwargs)

    @classmethod
    def _from_entries(cls, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int],
                      block: tuple[int, int], max_fill: Any, source: Any) -> Self:  # fmt: skip
        limit = layout.fill_limit(max_fill)
        plan = tpu_bsr.Plan(shape, block)
        held = len(np.unique((rows // block[0]) * plan.grid[1] + cols // block[1]))  # (the blocks of zeros
        layout.check_fill(held * block[0] * block[1], len(values), limit, f"BSR with blocks of {block}")  # not counted)
        leaves = tpu_bsr.host_layout(rows, cols, values, plan)
        return cls._make(tuple(layout.placed_like(leaf, source) for leaf in leaves), plan, False)

    # --- attributes ------------------------------------------------------------------------------

    @property
    def block_shape(self) -> tuple[int, int]:
        """The shape of the stored blocks (of the transpose: transposed)."""
        bm, bk = self._plan.block
        return (bk, bm) if self._transposed else (bm, bk)

    @property
    def data(self) -> Array:
        """The stored blocks ``(n_blocks, bm, bk)`` in block-row order (of the matrix, not of its
        transpose, whose blocks are these transposed)."""
        return wrap(self._data)

    @property
    def block_rows(self) -> Array:
        """Each stored block's block row (of the matrix, not of its transpose)."""
        return wrap(self._rows)

    @property
    def block_columns(self) -> Array:
        """Each stored block's block column (of the matrix, not of its transpose)."""
        return wrap(self._cols)

    def _describe(self) -> str:
        return f", {int(self._data.shape[0])} blocks of {self._plan.block}"

    # --- the layout matrix's parts ---------------------------------------------------------------

    def _leaves(self) -> tuple[Any, ...]:
        return (self._data, self._rows, self._cols, self._order)

    _kernel = staticmethod(_product)

    def _dense(self) -> Any:
        return _todense(self._data, self._rows, self._cols, self._plan)


layout.register(BSR)
