"""A matrix of no structure (random entries) as rows padded to one length (ELL), by chunks of its
columns: the layout of ``xp.sparse.ELL``, a Pallas kernel of ``A @ x`` for the TPU, and XLA's
formulation of the products (every other case, every other platform).

On a TPU a general sparse product is a gather of ``x`` and a scatter-add of the products into
``y``; XLA serializes the scatter, and its gather is slow too (an ELL product in plain JAX, with no
scatter, took 5.5 ms for 400k entries). The vector unit gathers only within one register (8 x 128
values), so the kernel never gathers from memory, and it never scatters: the rows of the matrix
are on the vector lanes, and each of its gathers reads one register of ``x`` in VMEM.

**The layout** (:func:`host_layout`, once per matrix): the columns in chunks of ``chunk`` (a
multiple of 1024: whole registers of ``x``); within a chunk, each row's entries in ``slots`` slots
(the most any row has in any chunk; fewer padded with a zero value at column -1, which no gather
finds, so that an infinite or NaN ``x`` meets no padding), stored chunk by chunk and slot by slot as
``values`` and ``columns`` (the column within the chunk) of shape ``(chunks, slots, rows)``, the rows
padded to whole row tiles. One chunk of all the columns
is plain ELL (``slots`` the longest row); chunks of one register make each gather read one
register, at the price of more padding: for 20 entries a row at random over 20000 columns, about
1 entry a row falls in each chunk of 1024, at most about 7, so 20 chunks of 7 slots store 7 times
the entries (22 MB, 27 µs of memory at the v5e's speed) but gather 20 times less.

**The kernel** (:func:`pallas_product`): a grid over tiles of rows, the chunks and their slots; the
tile of ``y`` stays in VMEM across the chunks and slots and takes ``values * x[columns]`` from each
step, whose block of ``x`` is its chunk (fetched when the chunk changes). The gather of a register
of 1024 columns: column ``c`` of the chunk is element ``(c // 128) % 8, c % 128`` of its register
``c // 1024``; for each of the chunk's registers and each of their 8 rows, the row broadcast to a
register is gathered along the lanes (``take_along_axis``, the one gather Mosaic lowers) and kept
where the column lies in it: 8 gathers and selects per register of the chunk per register of
entries.
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


def _whole(count: int, unit: int) -> int:
    """``count`` rounded up to a multiple of ``unit`` (at least one)."""
    return max(-(-count // unit), 1) * unit


class Plan(NamedTuple):
    """The static part of a chunked ELL matrix: its ``shape``, the columns of a ``chunk`` and the
    entries a row holds in a chunk, ``slots``."""

    shape: tuple[int, int]
    chunk: int
    slots: int

    @property
    def row_tile(self) -> int:
        return min(ROW_TILE, _whole(self.shape[0], REGISTER))

    @property
    def rows(self) -> int:
        """The rows stored: the matrix's, padded to whole row tiles."""
        return _whole(self.shape[0], self.row_tile)

    @property
    def chunks(self) -> int:
        return _whole(self.shape[1], self.chunk) // self.chunk


PADDING = -1
"""The column of a padded slot: in no register of ``x`` (the kernel's gather leaves 0 there)."""


def host_layout(rows: Any, cols: Any, values: Any, shape: tuple[int, int],
                chunk: int | None = REGISTER) -> tuple[Plan, Any, Any]:  # fmt: skip
    """The plan and the layout (``values``, ``columns``: NumPy, ``(chunks, slots, plan.rows)``) of
    the entries ``values`` at ``(rows, cols)`` (NumPy, inside ``shape``; duplicates kept as entries)
    in chunks of ``chunk`` columns (a multiple of 1024, one register of ``x``; None: one chunk of
    all the columns)."""
    import numpy as np

    chunk = _whole(shape[1], REGISTER) if chunk is None else chunk
    if chunk % REGISTER:
        raise ValueError(f"chunk must be a multiple of {REGISTER}, got {chunk}")
    chunk_of = cols // chunk
    order = np.lexsort((cols, chunk_of, rows))  # by row, then chunk
    rows, cols, values, chunk_of = rows[order], cols[order], values[order], chunk_of[order]
    key = rows.astype(np.int64) * (_whole(shape[1], chunk) // chunk) + chunk_of
    first = np.searchsorted(key, key)  # each (row, chunk) group's first entry
    slot = np.arange(len(key)) - first
    plan = Plan(shape, chunk, int(slot.max(initial=0)) + 1)
    stored_values = np.zeros((plan.chunks, plan.slots, plan.rows), values.dtype)
    stored_columns = np.full((plan.chunks, plan.slots, plan.rows), PADDING, np.int32)
    stored_values[chunk_of, slot, rows] = values
    stored_columns[chunk_of, slot, rows] = cols - chunk_of * chunk
    return plan, stored_values, stored_columns


def _global_columns(columns: Any, plan: Plan) -> Any:
    """Each slot's column in the matrix (0 for padding, whose value is 0), and where it is padding."""
    start = (jnp.arange(plan.chunks, dtype=columns.dtype) * plan.chunk)[:, None, None]
    padding = columns < 0
    return jnp.where(padding, 0, columns + start), padding


def xla_product(values: Any, columns: Any, x: Any, *, plan: Plan) -> Any:
    """``A @ x`` for ``x`` of one or two dimensions: each slot's values times the elements (rows)
    of ``x`` they meet, summed over the slots one slot at a time (a gather and a sum: no scatter,
    and no array of all the products, which for a matrix ``x`` would be ``slots`` times ``A @ x``)."""
    m = plan.shape[0]
    if plan.shape[1] == 0:  # no columns: nothing stored but padding, nothing to gather
        return jnp.zeros((m, *x.shape[1:]), x.dtype)
    cols, padding = _global_columns(columns[..., :m], plan)
    flat = plan.chunks * plan.slots
    cols, padding = cols.reshape(flat, m), padding.reshape(flat, m)
    weights = values[..., :m].reshape(flat, m).astype(x.dtype)
    if x.ndim == 2:
        weights, padding = weights[..., None], padding[..., None]

    def add_slot(i: Any, y: Any) -> Any:
        # padding meets x[0]: the `where`, not its value 0, keeps an infinite x[0] out
        return y + jnp.where(padding[i], 0, weights[i] * jnp.take(x, cols[i], axis=0))

    return jax.lax.fori_loop(0, flat, add_slot, jnp.zeros((m, *x.shape[1:]), x.dtype))


def todense(values: Any, columns: Any, *, plan: Plan) -> Any:
    """The dense matrix of a layout (whose entries are at distinct positions: set, so that a
    negative zero stays one)."""
    cols, padding = _global_columns(columns, plan)
    cols = jnp.where(padding, plan.chunks * plan.chunk, cols)  # (padding: outside, dropped)
    rows = jnp.broadcast_to(jnp.arange(plan.rows)[None, None, :], cols.shape)
    dense = jnp.zeros((plan.rows, plan.chunks * plan.chunk), values.dtype)
    dense = dense.at[rows, cols].set(values, mode="drop")
    return dense[: plan.shape[0], : plan.shape[1]]


def _gathered(x: Any, columns: Any) -> Any:
    """``x[columns]`` for one register of ``columns`` (8 x 128), ``x`` a VMEM ref of registers."""
    from jax.experimental import pallas as pl

    register = columns >> 10  # (padding, -1, is in register -1: never found)
    sublane = (columns >> 7) & (SUBLANES - 1)
    lane = columns & (LANES - 1)

    def from_register(g: Any, found: Any) -> Any:
        source = x[pl.ds(pl.multiple_of(g * jnp.int32(SUBLANES), SUBLANES), SUBLANES), :]
        here = register == g
        for s in range(SUBLANES):
            row = jnp.broadcast_to(source[s : s + 1, :], (SUBLANES, LANES))
            found = jnp.where(here & (sublane == s), jnp.take_along_axis(row, lane, axis=1), found)
        return found

    # (int32 bounds and steps: in JAX's 64-bit mode a Python int would be an i64 Mosaic refuses here)
    registers = jnp.int32(x.shape[0] // SUBLANES)
    return lax.fori_loop(jnp.int32(0), registers, from_register, jnp.zeros(columns.shape, x.dtype))


def _kernel(values: Any, columns: Any, x: Any, y: Any) -> None:
    from jax.experimental import pallas as pl

    @pl.when((pl.program_id(1) == 0) & (pl.program_id(2) == 0))
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
    tile, chunk = plan.row_tile // LANES, plan.chunk // LANES  # rows of 128 lanes
    stored = (plan.chunks, plan.slots, plan.rows // LANES, LANES)
    x_rows = jnp.pad(x, (0, plan.chunks * plan.chunk - x.shape[0])).reshape(-1, LANES)
    product = pl.pallas_call(
        _kernel,
        grid=(plan.rows // plan.row_tile, plan.chunks, plan.slots),
        in_specs=[
            pl.BlockSpec((None, None, tile, LANES), lambda i, q, k: (q, k, i, 0)),
            pl.BlockSpec((None, None, tile, LANES), lambda i, q, k: (q, k, i, 0)),
            pl.BlockSpec((chunk, LANES), lambda i, q, k: (q, 0)),
        ],
        out_specs=pl.BlockSpec((tile, LANES), lambda i, q, k: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((plan.rows // LANES, LANES), jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary", "arbitrary")),
        interpret=interpret,
    )(values.reshape(stored), columns.reshape(stored), x_rows)
    return product.reshape(plan.rows)[: plan.shape[0]]
