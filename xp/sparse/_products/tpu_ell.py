"""A matrix of no structure (random entries) as rows padded to one length (ELL), by chunks of its
columns: the layout of ``xp.sparse.ELL`` and its Pallas kernel of ``A @ x`` for the TPU; and the
same entries by the rows' lengths, the layout of XLA's formulation of the products (every other
case, every other platform).

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

**The kernel** (:func:`pallas_product`): a grid over the columns of ``x`` (one for a vector), tiles
of rows, the chunks and their slots; the
tile of ``y`` stays in VMEM across the chunks and slots and takes ``values * x[columns]`` from each
step, whose block of ``x`` is its chunk (fetched when the chunk changes). The gather of a register
of 1024 columns: column ``c`` of the chunk is element ``(c // 128) % 8, c % 128`` of its register
``c // 1024``; for each of the chunk's registers and each of their 8 rows, the row broadcast to a
register is gathered along the lanes (``take_along_axis``, the one gather Mosaic lowers) and kept
where the column lies in it: 8 gathers and selects per register of the chunk per register of
entries. A matrix ``X`` costs the kernel that much for each of its columns, where XLA's gathers of
the row layout bring a row of ``X`` whole for one price: a TPU takes the kernel for ``X`` where its
columns cost it less (:func:`kernel_cost`, :func:`gather_cost`: few columns, or a matrix dense
enough that its slots are few against its entries).

**The row layout** (:func:`host_row_layout`, :func:`xla_product`), for XLA: gathering ``x`` at every
slot of the chunked layout gathers it for every row in each of its ``chunks x slots`` slots (180
for the matrix above, 3.6M rows of ``x`` for 400k entries), a price the kernel's in-register
gathers can pay and XLA's gathers cannot, least of all of a matrix ``X`` (a row of ``X`` each).
With the rows sorted by their numbers of entries, slot ``s`` is held by the first rows only, those
longer than ``s``: each entry's row of ``x`` is gathered once, into a prefix of the result, and no
scatter is needed (the sorted rows are put back in order by one gather of the result's rows).
Slots are grouped into bands of equal rows (those of the band's first slot, padding the shorter
ones): few static shapes, at most twice the entries; on a TPU a band's slots are gathered
together, in one gather where their rows of ``x`` fit in :data:`GATHERED_BYTES`.
"""

from __future__ import annotations

import math
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
    """The static part of an ELL matrix: its ``shape``, the columns of a ``chunk`` and the entries a
    row holds in a chunk, ``slots`` (the chunked layout); and the row layout's ``bands``, each its
    rows and its slots (:func:`host_row_layout`)."""

    shape: tuple[int, int]
    chunk: int
    slots: int
    bands: tuple[tuple[int, int], ...] = ()

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


def host_row_layout(rows: Any, cols: Any, values: Any, shape: tuple[int, int]) -> tuple[Any, Any, Any, Any]:
    """The row layout of the entries ``values`` at ``(rows, cols)`` (NumPy, inside ``shape``;
    duplicates kept as entries): ``bands`` (its plan's), ``values`` and ``columns`` (one dimension,
    band by band) and ``rank`` (``int32``, each row's place in the layout's order of rows).

    The rows sorted by how many entries they hold, the most first (``rank``); slot ``s`` of the
    sorted rows holds each row's ``s``-th entry, so only the first rows, those longer than ``s``,
    have one. Consecutive slots whose rows are more than half those of the band's first slot share
    its rows and form a band, ``(rows, slots)``, stored slot by slot, the band's shorter rows padded
    (a zero value at column -1): at most twice the entries are stored, in at most as many bands as
    the binary digits of the number of rows that hold entries."""
    import numpy as np

    m = shape[0]
    lengths = np.bincount(rows, minlength=m) if m else np.zeros(0, np.int64)
    order = np.argsort(-lengths, kind="stable")
    rank = np.empty(m, np.int32)
    rank[order] = np.arange(m, dtype=np.int32)
    descending = -lengths[order]  # (ascending: searchsorted counts the rows longer than s)

    def longer(slot: int) -> int:
        return int(np.searchsorted(descending, -slot, side="left"))

    bands, slot, longest = [], 0, int(lengths.max(initial=0))
    while slot < longest:
        band_rows, end = longer(slot), slot + 1
        while end < longest and 2 * longer(end) > band_rows:
            end += 1
        bands.append((band_rows, end - slot))
        slot = end
    by_row = np.lexsort((cols, rank[rows]))
    entry_rank, entry_cols, entry_values = rank[rows][by_row], cols[by_row], values[by_row]
    entry_slot = np.arange(len(by_row)) - np.searchsorted(entry_rank, entry_rank)
    total = sum(r * w for r, w in bands)
    stored_values, stored_columns = np.zeros(total, values.dtype), np.full(total, PADDING, np.int32)
    offset, first = 0, 0
    for band_rows, width in bands:
        inside = (entry_slot >= first) & (entry_slot < first + width)
        at = offset + (entry_slot[inside] - first) * band_rows + entry_rank[inside]
        stored_values[at], stored_columns[at] = entry_values[inside], entry_cols[inside]
        offset, first = offset + band_rows * width, first + width
    return tuple(bands), stored_values, stored_columns, rank


GATHERED_BYTES = 2**27
"""On a TPU, the most a gather of :func:`xla_product` brings together (its gathered rows of ``x``
times the values): a band's slots are gathered in as few gathers as stay within it. There fewer,
larger gathers are faster (a loop's step costs microseconds), and an intermediate of every gathered
row is affordable up to this size (bench/RESULTS.md, ``sparse_tpu-tpu``). XLA's CPU computes such a
gather summed over its slots far slower than a loop of one slot a gather (ten times and more for a
matrix ``X``), so every other platform gathers one slot at a time."""


def slots_per_gather(band_rows: int, width: int, trailing: tuple[int, ...], itemsize: int, limit: int) -> int:
    """How many of a band's ``width`` slots (of ``band_rows`` rows) one gather of :func:`xla_product`
    takes: all of them where their rows of ``x`` (``trailing``, ``itemsize``) fit in ``limit``
    bytes, else as many as fit, at least one (``limit`` 0: one)."""
    row_bytes = band_rows * math.prod(trailing) * itemsize
    return min(width, max(1, limit // max(row_bytes, 1)))


def xla_product(values: Any, columns: Any, rank: Any, x: Any, *, plan: Plan, limit: int = 0) -> Any:
    """``A @ x`` for ``x`` of one or two dimensions from the row layout (:func:`host_row_layout`):
    band by band, its slots' values times the rows of ``x`` they meet (a gather of one row of ``x``
    per stored value), summed into the band's rows; then the rows back in the matrix's order (a
    gather of the result's rows). No scatter, and each entry's row of ``x`` gathered once (and the
    padding's, at most as many). A band's slots are gathered in groups of :func:`slots_per_gather`
    (``limit``: the bytes a gather may bring together, :data:`GATHERED_BYTES` on a TPU; 0, one
    slot a gather), in a loop over the groups where a band needs more than one."""
    m = plan.shape[0]
    trailing = x.shape[1:]

    def terms(weights: Any, cols: Any) -> Any:
        """The products of slots' values (``weights``) and the rows of ``x`` at ``cols``, summed
        over the slots (the leading axis)."""
        padding = (cols < 0).reshape(*cols.shape, *(1,) * len(trailing))
        gathered = jnp.take(x, jnp.maximum(cols, 0), axis=0)
        # padding meets x[0]: the `where`, not its value 0, keeps an infinite x[0] out
        return jnp.sum(jnp.where(padding, 0, weights.reshape(padding.shape) * gathered), axis=0)

    y = jnp.zeros((m, *trailing), x.dtype)
    offset = 0
    for band_rows, width in plan.bands:
        size = band_rows * width
        group = slots_per_gather(band_rows, width, trailing, x.dtype.itemsize, limit)
        steps = -(-width // group)
        extra = steps * group - width  # padding slots: value 0 at column PADDING
        band_values = jnp.pad(values[offset : offset + size].astype(x.dtype), (0, extra * band_rows))
        band_columns = jnp.pad(columns[offset : offset + size], (0, extra * band_rows), constant_values=PADDING)
        band_values = band_values.reshape(steps, group, band_rows)
        band_columns = band_columns.reshape(steps, group, band_rows)
        if steps == 1:
            part = terms(band_values[0], band_columns[0])
        else:
            part = lax.fori_loop(0, steps, lambda s, part, w=band_values, c=band_columns: part + terms(w[s], c[s]),
                                 jnp.zeros((band_rows, *trailing), x.dtype))  # fmt: skip
        y = y.at[:band_rows].add(part)
        offset += size
    return jnp.take(y, rank, axis=0)


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

    @pl.when((pl.program_id(2) == 0) & (pl.program_id(3) == 0))  # (the first chunk's first slot)
    def _() -> None:
        y[...] = jnp.zeros(y.shape, y.dtype)

    def one_register(r: Any, _: Any) -> None:
        rows = pl.ds(pl.multiple_of(r * jnp.int32(SUBLANES), SUBLANES), SUBLANES)
        y[rows, :] += values[rows, :] * _gathered(x, columns[rows, :])

    lax.fori_loop(jnp.int32(0), jnp.int32(y.shape[0] // SUBLANES), one_register, None)


def pallas_product(values: Any, columns: Any, x: Any, *, plan: Plan, interpret: bool) -> Any:
    """``A @ x`` from the chunked layout (:func:`host_layout`) as a Pallas kernel (``x`` of a dtype
    of :data:`.tpu.VECTOR_UNIT_DTYPES`): :func:`xla_product`'s product. ``x`` of one dimension, or
    of two, whose columns are each the product of a vector (the grid's first axis): the kernel's
    work is the same for each column, so its time grows with their number (:func:`kernel_cost`)."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    k = x.shape[1] if x.ndim == 2 else 1
    if 0 in plan.shape or k == 0:  # nothing stored: the kernel would have no block to read
        return jnp.zeros((plan.shape[0], *x.shape[1:]), x.dtype)
    tile, chunk = plan.row_tile // LANES, plan.chunk // LANES  # rows of 128 lanes
    stored = (plan.chunks, plan.slots, plan.rows // LANES, LANES)
    # each column of x as rows of 128 lanes, padded to whole chunks
    x_rows = jnp.pad(x.reshape(x.shape[0], k), ((0, plan.chunks * plan.chunk - x.shape[0]), (0, 0)))
    x_rows = x_rows.T.reshape(k, -1, LANES)
    product = pl.pallas_call(
        _kernel,
        grid=(k, plan.rows // plan.row_tile, plan.chunks, plan.slots),
        in_specs=[
            pl.BlockSpec((None, None, tile, LANES), lambda j, i, q, s: (q, s, i, 0)),
            pl.BlockSpec((None, None, tile, LANES), lambda j, i, q, s: (q, s, i, 0)),
            pl.BlockSpec((None, chunk, LANES), lambda j, i, q, s: (j, q, 0)),
        ],
        out_specs=pl.BlockSpec((None, tile, LANES), lambda j, i, q, s: (j, i, 0)),
        out_shape=jax.ShapeDtypeStruct((k, plan.rows // LANES, LANES), x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary", "arbitrary")),
        interpret=interpret,
    )(values.reshape(stored), columns.reshape(stored), x_rows)
    y = product.reshape(k, plan.rows)[:, : plan.shape[0]]
    return y[0] if x.ndim == 1 else y.T


KERNEL_NS_PER_SLOT = 0.1
"""The kernel's time per slot of the chunked layout and column of ``x``, in ns, on a TPU v5e (a
register of 1024 slots: 8 gathers and selects, about 100 ns); with :data:`GATHER_NS_PER_ROW`, what
:func:`kernel_cost` and :func:`gather_cost` weigh to choose between them (bench/RESULTS.md,
``sparse_tpu-tpu``: the random and small cases' ``A @ x`` and ``A @ X``)."""

GATHER_NS_PER_ROW = 2.6
"""XLA's time per row of ``x`` it gathers from the row layout (a band's slots together), in ns, on
a TPU v5e, whatever the row's width up to 64 values at least (the same for 8 and 64 columns)."""


def kernel_cost(plan: Plan, columns: int) -> float:
    """The kernel's time for ``x`` of ``columns`` columns, in ns: its slots, once per column."""
    return KERNEL_NS_PER_SLOT * plan.chunks * plan.slots * plan.rows * columns


def gather_cost(plan: Plan) -> float:
    """XLA's formulation's time, in ns: the rows of ``x`` it gathers from the row layout (the same
    for any number of columns)."""
    return GATHER_NS_PER_ROW * sum(rows * width for rows, width in plan.bands)
