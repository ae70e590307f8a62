"""A matrix of no structure (random entries) by rows padded to one length, ELL: its layout, a Pallas
kernel of ``A @ x`` for the TPU, and its XLA formulation. A prototype: no format takes it yet;
bench/sparse_tpu.py times it on #43's random matrix, and what it measures decides whether a format
(and the transposed and matrix products) follows.

On a TPU a general sparse product is a gather of ``x`` and a scatter-add of the products into
``y``; XLA serializes the scatter, and its gather is slow too (an ELL product in plain JAX, with no
scatter, took 5.5 ms for 400k entries). The vector unit gathers only within one register (8 x 128
values), so the kernel never gathers from memory: ``x`` stays whole in VMEM (a few hundred kB for
up to about 50k columns) and each gather is one of its registers, the rows of the matrix on the
vector lanes so that nothing is scattered.

**The layout** (:func:`host_layout`, once per matrix): each row's entries in ``slots`` slots (the
longest row's length; shorter rows padded with zeros at column 0), stored slot by slot as
``values`` and ``columns`` of shape ``(slots, rows)``, the rows padded to whole registers (1024).

**The kernel** (:func:`pallas_product`): a grid over tiles of rows and the slots; the tile of ``y``
stays in VMEM across the slots and takes ``values[k] * x[columns[k]]`` from each. The gather of a
register of 1024 columns: column ``c`` is element ``(c // 128) % 8, c % 128`` of ``x``'s register
``c // 1024``; for each of ``x``'s registers and each of its 8 rows, the row broadcast to a
register is gathered along the lanes (``take_along_axis``, the one gather Mosaic lowers) and kept
where the column lies in it. That is 8 gathers and selects per register of ``x`` per register of
entries: about 0.4M vector operations for 20000 columns and 400k entries in 40 slots.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

LANES = 128
SUBLANES = 8
REGISTER = LANES * SUBLANES
ROW_TILE = 8 * REGISTER
"""Rows of the result per grid step (where the matrix has as many): 8 registers of 1024."""


class Plan(NamedTuple):
    """The static part of an ELL matrix: its ``shape`` and the entries a row holds, ``slots``."""

    shape: tuple[int, int]
    slots: int

    @property
    def rows(self) -> int:
        """The rows stored: the matrix's, padded to whole row tiles."""
        return -(-self.shape[0] // self.row_tile) * self.row_tile

    @property
    def row_tile(self) -> int:
        return min(ROW_TILE, max(-(-self.shape[0] // REGISTER), 1) * REGISTER)

    @property
    def columns(self) -> int:
        """``x``'s length padded to whole registers of 1024."""
        return max(-(-self.shape[1] // REGISTER), 1) * REGISTER


def host_layout(rows: Any, cols: Any, values: Any, shape: tuple[int, int]) -> tuple[Plan, Any, Any]:
    """The plan and the layout (``values``, ``columns``: NumPy, ``(slots, plan.rows)``) of the
    entries ``values`` at ``(rows, cols)`` (NumPy, inside ``shape``; duplicates kept as entries)."""
    import numpy as np

    order = np.lexsort((cols, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    counts = np.bincount(rows, minlength=shape[0])
    plan = Plan(shape, max(int(counts.max(initial=0)), 1))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(len(rows)) - starts[rows]  # each entry's place in its row
    stored_values = np.zeros((plan.slots, plan.rows), values.dtype)
    stored_columns = np.zeros((plan.slots, plan.rows), np.int32)
    stored_values[slot, rows] = values
    stored_columns[slot, rows] = cols
    return plan, stored_values, stored_columns


def xla_product(values: Any, columns: Any, x: Any, *, plan: Plan) -> Any:
    """``A @ x`` for a vector ``x``: each slot's values times the values of ``x`` they meet, summed."""
    products = values * jnp.take(x, columns, axis=0, mode="clip")
    return jnp.sum(products, axis=0)[: plan.shape[0]]


def _gathered(x: Any, columns: Any) -> Any:
    """``x[columns]`` for one register of ``columns`` (8 x 128), ``x`` a VMEM ref of registers."""
    register = columns >> 10  # (columns are not negative: the arithmetic shift is the logical one)
    sublane = (columns >> 7) & (SUBLANES - 1)
    lane = columns & (LANES - 1)

    def from_register(g: Any, found: Any) -> Any:
        from jax.experimental import pallas as pl

        source = x[pl.ds(pl.multiple_of(g * jnp.int32(SUBLANES), SUBLANES), SUBLANES), :]
        here = register == g
        for s in range(SUBLANES):
            row = jnp.broadcast_to(source[s : s + 1, :], (SUBLANES, LANES))
            found = jnp.where(here & (sublane == s), jnp.take_along_axis(row, lane, axis=1), found)
        return found

    # (int32 bounds and steps: in JAX's 64-bit mode a Python int would be an i64 Mosaic refuses here)
    return lax.fori_loop(
        jnp.int32(0), jnp.int32(x.shape[0] // SUBLANES), from_register, jnp.zeros(columns.shape, x.dtype)
    )


def _kernel(values: Any, columns: Any, x: Any, y: Any) -> None:
    from jax.experimental import pallas as pl

    @pl.when(pl.program_id(1) == 0)
    def _() -> None:
        y[...] = jnp.zeros(y.shape, y.dtype)

    def one_register(r: Any, _: Any) -> None:
        rows = pl.ds(pl.multiple_of(r * jnp.int32(SUBLANES), SUBLANES), SUBLANES)
        y[rows, :] += values[rows, :] * _gathered(x, columns[rows, :])

    lax.fori_loop(jnp.int32(0), jnp.int32(y.shape[0] // SUBLANES), one_register, None)


def pallas_product(values: Any, columns: Any, x: Any, *, plan: Plan, interpret: bool) -> Any:
    """:func:`xla_product` as a Pallas kernel (float32 ``x`` of one dimension)."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    if 0 in plan.shape:  # nothing stored: the kernel would have no block to read
        return jnp.zeros(plan.shape[0], jnp.float32)
    tile = plan.row_tile // LANES  # rows of 128 lanes per step
    stored = (plan.slots, plan.rows // LANES, LANES)
    x_registers = jnp.pad(x, (0, plan.columns - x.shape[0])).reshape(plan.columns // LANES, LANES)
    product = pl.pallas_call(
        _kernel,
        grid=(plan.rows // plan.row_tile, plan.slots),
        in_specs=[
            pl.BlockSpec((None, tile, LANES), lambda i, k: (k, i, 0)),
            pl.BlockSpec((None, tile, LANES), lambda i, k: (k, i, 0)),
            pl.BlockSpec(x_registers.shape, lambda i, k: (0, 0)),
        ],
        out_specs=pl.BlockSpec((tile, LANES), lambda i, k: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((plan.rows // LANES, LANES), jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
        interpret=interpret,
    )(values.reshape(stored), columns.reshape(stored), x_registers)
    return product.reshape(plan.rows)[: plan.shape[0]]
