"""The products of a matrix stored by diagonals (``xp.sparse.DIA``): its layout, its Pallas kernels
for the TPU and its XLA formulation.

A banded matrix (a stencil's: a 2-D Poisson matrix has the offsets ``-nx, -1, 0, 1, nx``) is its
diagonals: ``y[i] = sum_d data[d, i] * x[i + offsets[d]]``. Each product is then a sum of shifted
contiguous slices, multiplied element by element: no gather, no scatter, which is what a TPU does
at the speed of its memory (its vector unit gathers only within one register, and XLA serializes
scatters there).

**The layout** (:class:`Plan`, computed once per matrix from its shape and offsets): the diagonals
are stored row-aligned (``data[d, i] = A[i, i + offsets[d]]``; zero where ``i + offsets[d]`` is
outside the matrix), as ``(n_diagonals, rows, 128)``: element ``i`` of a diagonal at row
``front + i // 128``, lane ``i % 128``, the TPU's own tiling of a vector (8 x 128 values per
register), so that a kernel reads whole tiles and a diagonal of any length costs no padding of the
tiles but the last. ``front`` rows of zeros before element 0 and enough rows after the last let the
transposed products read the diagonals shifted (``A.T`` stores the same diagonals, each shifted by
its offset) from the same array, so the matrix is stored once for both products.

**The kernels** (:func:`vector_product`, :func:`matrix_product`): a grid over tiles of the result's
rows. Each tile reads, for a group of diagonals whose offsets lie close together, one window of
the dense operand: the tile's rows widened by the group's offsets (a ``pl.Element`` block: a
contiguous slice at an element offset, which Mosaic fetches by DMA and double-buffers like any
block). Inside the window each diagonal's shift is a static slice of aligned rows, a rotation of
the sublanes and, for a shift that is not a multiple of 128, a rotation of the lanes with a select
between a row and the next: static rotations and selects, which the TPU's vector unit has; nothing
is gathered. Far-apart offsets make several groups, so a window never spans much more than a
tile. ``A @ X`` (``X`` of ``k`` columns) keeps ``X``'s rows on sublanes and its columns on lanes;
each stored value multiplies a row of ``X``, so a tile's 8 x 128 values of a diagonal are turned
into a column of 1024 by one 128 x 128 transpose (the XLU's), the cheapest way a TPU moves values
from lanes to sublanes.

**The XLA formulation** (:func:`xla_product`): the same sum of shifted slices in ``jax.numpy``,
which XLA fuses into one loop; it is the reference of the kernels, the product on every other
platform, and may be as fast on a TPU (bench/sparse_tpu.py measures both).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

LANES = 128
SUBLANES = 8
VECTOR_TILE = 512
"""Rows of 128 values per grid step of the vector kernels (64k values: a step costs about 0.35 µs
of its own, so each must move a few hundred kB)."""
CHUNK = 32
"""Rows of 128 values a vector kernel computes at a time within its tile: 4 registers of 8 x 128 per
value, so that a step's values stay in the 64 registers instead of a tile's spilling to VMEM."""
MATRIX_TILE = 1024
"""Rows of ``X`` per grid step of the matrix kernels: 8 x 128 stored values of each diagonal."""
VMEM_BUDGET = 24 * 2**20
"""The bytes of VMEM a kernel's double-buffered blocks may take (v5e has 128 MiB, of which Mosaic
gives a kernel 16 MiB unless asked for more: the kernels ask for what their blocks need)."""
COLUMN_TILES = (512, 256, 128)


class Window(NamedTuple):
    """A window of an operand read by a group of diagonals (``first`` to ``stop``): rows ``start``
    to ``start + rows`` counted from the tile's first row (multiples of 8; ``start`` may be negative)."""

    first: int
    stop: int
    start: int
    rows: int


class Pick(NamedTuple):
    """Where a diagonal's shifted rows lie: in window ``window``, from row ``row``, lane ``lane``
    (the shift's remainder modulo 128: the row and the next one share the tile's rows)."""

    window: int
    row: int
    lane: int


def _aligned_end(row: int, tile: int) -> int:
    """The end of the aligned slice that rows ``row`` to ``row + tile`` are rotated out of."""
    return row + tile if row % SUBLANES == 0 else row - row % SUBLANES + tile + SUBLANES


def windows(shifts: tuple[int, ...], tile: int, lanes: int) -> tuple[tuple[Window, ...], tuple[Pick, ...]]:
    """The windows of an operand whose diagonal ``d`` is read shifted by ``shifts[d]`` elements
    (monotonic in ``d``), for tiles of ``tile`` rows of ``lanes`` elements: consecutive diagonals
    share a window while their shifts span at most a tile."""
    groups: list[list[int]] = []
    for d, shift in enumerate(shifts):
        if groups and abs(shift // lanes - shifts[groups[-1][0]] // lanes) <= tile:
            groups[-1].append(d)
        else:
            groups.append([d])
    found: list[Window] = []
    picks: list[Pick] = []
    for group in groups:
        rows = [shifts[d] // lanes for d in group]
        start = min(rows) - min(rows) % SUBLANES
        end = 0
        for d, row in zip(group, rows, strict=True):
            lane = shifts[d] % lanes
            picks.append(Pick(len(found), row - start, lane))
            end = max(end, _aligned_end(row - start, tile), _aligned_end(row - start + 1, tile) if lane else 0)
        found.append(Window(group[0], group[-1] + 1, start, end - end % -SUBLANES))
    return tuple(found), tuple(picks)


def extent(found: tuple[Window, ...], tile: int, tiles: int) -> tuple[int, int]:
    """``(front, rows)`` of an operand its windows read over ``tiles`` tiles: the rows before its
    element 0 and the rows in all (multiples of 8)."""
    front = max(0, *(-w.start for w in found))
    return front, front + (tiles - 1) * tile + max(w.start + w.rows for w in found)


class Plan(NamedTuple):
    """The layout of a DIA matrix (static: part of the matrix's pytree structure): its ``shape``,
    ``offsets`` (sorted, distinct), the rows per step ``tile`` of its vector kernels, and its
    stored diagonals' ``front`` rows (before element 0) and ``rows`` in all."""

    shape: tuple[int, int]
    offsets: tuple[int, ...]
    tile: int
    front: int
    rows: int


def _tiles(length: int, tile: int, lanes: int) -> int:
    return max(1, -(-length // (tile * lanes)))


def _vector_reads(offsets: tuple[int, ...], shape: tuple[int, int], tile: int, transposed: bool) -> tuple[Any, ...]:
    """The windows of the stored diagonals and of the dense operand in a vector product, and the
    number of tiles: ``A @ x`` reads diagonal ``d`` at element ``i`` and ``x`` at ``i + offsets[d]``;
    ``A.T @ y`` reads both at ``j - offsets[d]``."""
    m, n = shape
    if transposed:
        shifts = tuple(-o for o in offsets)
        return windows(shifts, tile, LANES), windows(shifts, tile, LANES), _tiles(n, tile, LANES)
    return windows((0,) * len(offsets), tile, LANES), windows(offsets, tile, LANES), _tiles(m, tile, LANES)


def _matrix_reads(offsets: tuple[int, ...], shape: tuple[int, int], transposed: bool) -> tuple[Any, ...]:
    """As :func:`_vector_reads` for ``A @ X``: the stored values in slabs of 8 rows of 128, ``X``'s
    rows directly."""
    m, n = shape
    slab = MATRIX_TILE // LANES
    shifts = tuple(-o for o in offsets) if transposed else offsets
    stored = windows(shifts if transposed else (0,) * len(offsets), slab, LANES)
    return stored, windows(shifts, MATRIX_TILE, 1), _tiles(n if transposed else m, MATRIX_TILE, 1)


def _vector_vmem(offsets: tuple[int, ...], shape: tuple[int, int], tile: int) -> int:
    """The largest VMEM the vector kernels' blocks take, double-buffered."""
    most = 0
    for transposed in (False, True):
        (stored, _), (dense, _), _ = _vector_reads(offsets, shape, tile, transposed)
        values = sum((w.stop - w.first) * w.rows for w in stored) + sum(w.rows for w in dense) + tile
        most = max(most, 2 * values * LANES * 4)
    return most


def _steps(rows: int) -> int:
    """``rows`` rounded up to a whole number of the vector kernels' steps: of :data:`CHUNK` rows
    where more, else of 8."""
    return rows - rows % -CHUNK if rows > CHUNK else max(SUBLANES, rows - rows % -SUBLANES)


def plan(shape: tuple[int, int], offsets: tuple[int, ...], most: int | None = None) -> Plan:
    """The layout of a matrix of ``shape`` with diagonals at ``offsets`` (sorted, distinct), with at
    most ``most`` rows per step of its vector kernels (:data:`VECTOR_TILE`; tests take fewer, to
    have several tiles in small matrices; a multiple of :data:`CHUNK` where larger)."""
    m, n = shape
    if not offsets:
        return Plan(shape, offsets, SUBLANES, 0, SUBLANES)
    tile = _steps(min(VECTOR_TILE if most is None else most, -(-max(m, n, 1) // LANES)))
    while tile > SUBLANES and _vector_vmem(offsets, shape, tile) > VMEM_BUDGET:
        tile = _steps(tile // 2)
    fronts, ends = [], []
    for transposed in (False, True):
        (stored, _), _, tiles = _vector_reads(offsets, shape, tile, transposed)
        (slabs, _), _, matrix_tiles = _matrix_reads(offsets, shape, transposed)
        for found, tile_rows, count in ((stored, tile, tiles), (slabs, MATRIX_TILE // LANES, matrix_tiles)):
            front, rows = extent(found, tile_rows, count)
            fronts.append(front)
            ends.append(rows - front)
    front = max(fronts)
    return Plan(shape, offsets, tile, front, front + max(ends))


# --- the stored diagonals ---------------------------------------------------------------------


def valid(plan: Plan) -> Any:
    """Where the row-aligned diagonals ``(n_diagonals, m)`` hold elements of the matrix."""
    m, n = plan.shape
    i = jnp.arange(m)
    return jnp.stack([(i + o >= 0) & (i + o < n) for o in plan.offsets])


def stored(plan: Plan, diagonals: Any) -> Any:
    """The stored layout ``(n_diagonals, rows, 128)`` of row-aligned ``diagonals`` ``(n, m)``, with
    zeros outside the matrix (a kernel reads them, multiplied by the zeros padding ``x``)."""
    m = plan.shape[0]
    count = len(plan.offsets)
    if count:
        diagonals = jnp.where(valid(plan), diagonals, jnp.zeros((), diagonals.dtype))
    start = plan.front * LANES
    flat = jnp.pad(diagonals, ((0, 0), (start, plan.rows * LANES - start - m)))
    return flat.reshape(count, plan.rows, LANES)


def flat(data: Any) -> Any:
    """The stored diagonals ``(n_diagonals, rows * 128)``."""
    return data.reshape(data.shape[0], data.shape[1] * LANES)


def diagonals(plan: Plan, data: Any) -> Any:
    """The row-aligned diagonals ``(n_diagonals, m)`` of the stored layout."""
    start = plan.front * LANES
    return flat(data)[:, start : start + plan.shape[0]]


# --- the XLA formulation ----------------------------------------------------------------------


def _rows(x: Any, front: int, length: int) -> Any:
    """``x`` (rows first) with ``front`` rows of zeros before it, cut or padded to ``length`` rows."""
    kept = x[: max(0, length - front)]
    return jnp.pad(kept, ((front, length - front - kept.shape[0]),) + ((0, 0),) * (x.ndim - 1))


def xla_product(data: Any, x: Any, *, plan: Plan, transposed: bool) -> Any:
    """``A @ x`` (``A.T @ x`` where ``transposed``) for the stored diagonals ``data`` and ``x`` of one
    or two dimensions: the sum over diagonals of a stored diagonal times a shifted slice of ``x``."""
    m, n = plan.shape
    out = n if transposed else m
    values = flat(data)
    base = plan.front * LANES
    total = jnp.zeros((out, *x.shape[1:]), x.dtype)
    if not plan.offsets:
        return total
    if transposed:  # z[j] = sum_d data[d, j - o] * y[j - o]
        front = max(0, *plan.offsets)
        padded = _rows(x, front, front + out - min(0, *plan.offsets))
        for d, o in enumerate(plan.offsets):
            total = total + _column(values[d, base - o : base - o + out], x.ndim) * padded[front - o : front - o + out]
        return total
    front = max(0, *(-o for o in plan.offsets))
    padded = _rows(x, front, front + out + max(0, *plan.offsets))
    for d, o in enumerate(plan.offsets):
        total = total + _column(values[d, base : base + out], x.ndim) * padded[front + o : front + o + out]
    return total


def _column(values: Any, ndim: int) -> Any:
    return values if ndim == 1 else values[:, None]


def sampled(ct: Any, x: Any, *, plan: Plan, transposed: bool) -> Any:
    """The cotangent of the stored diagonals of ``A @ x`` (``A.T @ x``) for the result's cotangent
    ``ct``, in the stored layout: ``ct[i] . x[i + o]`` (``x[i] . ct[i + o]``) over the columns,
    zero outside the matrix."""
    m = plan.shape[0]
    row, col = (x, ct) if transposed else (ct, x)  # of lengths m and n
    if not plan.offsets:
        return jnp.zeros((0, plan.rows, LANES), ct.dtype)
    front = max(0, *(-o for o in plan.offsets))
    padded = _rows(col, front, front + m + max(0, *plan.offsets))
    terms = [row * padded[front + o : front + o + m] for o in plan.offsets]
    products = jnp.stack([t if t.ndim == 1 else jnp.sum(t, axis=1) for t in terms])
    return stored(plan, products)


# --- the Pallas kernels -----------------------------------------------------------------------


def _rotated(x: Any, shift: int, axis: int) -> Any:
    """``jnp.roll(x, shift, axis)`` by the TPU's rotation (its shift an int32, as Mosaic wants it
    also where JAX's 64-bit mode would make a Python integer an int64)."""
    from jax.experimental.pallas import tpu as pltpu

    return pltpu.roll(x, jnp.int32(shift), axis)


def _aligned_rows(ref: Any, row: int, size: int, start: Any = 0, lanes: Any = None) -> Any:
    """Rows ``start + row`` to ``start + row + size`` of a window (``start`` a multiple of 8, traced
    or not; ``lanes`` its columns, all by default): an aligned slice, rotated over the sublanes."""
    from jax.experimental import pallas as pl

    skew = row % SUBLANES
    first = start + row - skew
    if not isinstance(first, int):
        first = pl.multiple_of(first, SUBLANES)
    columns = slice(None) if lanes is None else lanes
    if skew == 0:
        return ref[pl.ds(first, size), columns]
    return _rotated(ref[pl.ds(first, size + SUBLANES), columns], size + SUBLANES - skew, 0)[:size]


def _shifted(ref: Any, pick: Pick, size: int, start: Any = 0) -> Any:
    """Rows ``start`` to ``start + size`` of an operand shifted by ``pick``: element ``e`` of the
    result is element ``e + 128 * row + lane`` of the window, in rows of 128."""
    low = _aligned_rows(ref, pick.row, size, start)
    if pick.lane == 0:
        return low
    high = _aligned_rows(ref, pick.row + 1, size, start)
    turn = LANES - pick.lane
    lane = lax.broadcasted_iota(jnp.int32, low.shape, 1)
    return jnp.where(lane < turn, _rotated(low, turn, 1), _rotated(high, turn, 1))


def _stored_ref(refs: Any, found: tuple[Window, ...], picks: tuple[Pick, ...], d: int) -> Any:
    pick = picks[d]
    return refs[pick.window].at[d - found[pick.window].first]


def _vector_kernel(*refs: Any, reads: Any, tile: int) -> None:
    from jax.experimental import pallas as pl

    (stored, stored_picks), (_, dense_picks) = reads
    stored_refs, dense_refs, out = refs[: len(stored)], refs[len(stored) : -1], refs[-1]
    chunk = min(CHUNK, tile)
    assert tile % chunk == 0, (tile, chunk)  # (plan's tiles are whole numbers of steps)

    def rows(step: Any, carry: Any) -> Any:
        start = pl.multiple_of(step * chunk, chunk)
        total = jnp.zeros((chunk, LANES), out.dtype)
        for d, pick in enumerate(dense_picks):
            values = _shifted(_stored_ref(stored_refs, stored, stored_picks, d), stored_picks[d], chunk, start)
            total = total + values * _shifted(dense_refs[pick.window], pick, chunk, start)
        out[pl.ds(start, chunk), :] = total
        return carry

    lax.fori_loop(jnp.int32(0), jnp.int32(tile // chunk), rows, 0)  # (int32 indices also in 64-bit mode)


def _on_tiles(row: Any) -> Any:
    """A window's first row, which the kernels keep a multiple of 8, marked so: Mosaic must prove
    that an element window starts on the tiling, and its proof sees through products and constants
    but not sums."""
    from jax.experimental import pallas as pl

    return pl.multiple_of(row, SUBLANES)


def _compiler_params(vmem: int, dims: int) -> Any:
    from jax.experimental.pallas import tpu as pltpu

    semantics: Any = ("parallel",) * dims
    return pltpu.CompilerParams(dimension_semantics=semantics, vmem_limit_bytes=vmem + vmem // 2 + 2**22)


def vector_product(data: Any, x: Any, *, plan: Plan, transposed: bool, interpret: bool) -> Any:
    """:func:`xla_product` of a vector ``x`` (of a dtype of :data:`.tpu.VECTOR_UNIT_DTYPES`) as a
    Pallas kernel (``interpret``: in Pallas's interpreter, on any platform)."""
    from jax.experimental import pallas as pl

    m, n = plan.shape
    out = n if transposed else m
    tile = plan.tile
    reads = _vector_reads(plan.offsets, plan.shape, tile, transposed)
    (stored, _), (dense, _), tiles = reads
    front, rows = extent(dense, tile, tiles)
    padded = _rows(x, front * LANES, rows * LANES).reshape(rows, LANES)

    def stored_spec(w: Window) -> Any:
        block = (pl.Element(w.stop - w.first), pl.Element(w.rows), pl.Element(LANES))
        return pl.BlockSpec(block, lambda t: (w.first, _on_tiles(plan.front + t * tile + w.start), 0))

    def dense_spec(w: Window) -> Any:
        return pl.BlockSpec(
            (pl.Element(w.rows), pl.Element(LANES)), lambda t: (_on_tiles(front + t * tile + w.start), 0)
        )

    vmem = 2 * LANES * 4 * (sum((w.stop - w.first) * w.rows for w in stored) + sum(w.rows for w in dense) + tile)
    result = pl.pallas_call(
        functools.partial(_vector_kernel, reads=reads[:2], tile=tile),
        grid=(tiles,),
        in_specs=[*map(stored_spec, stored), *map(dense_spec, dense)],
        out_specs=pl.BlockSpec((tile, LANES), lambda t: (t, 0)),
        out_shape=jax.ShapeDtypeStruct((tiles * tile, LANES), x.dtype),
        compiler_params=_compiler_params(vmem, 1),
        interpret=interpret,
    )(*(data,) * len(stored), *(padded,) * len(dense))
    return result.reshape(-1)[:out]


def _turned(slab: Any) -> Any:
    """A slab of 8 x 128 stored values (value ``128 * r + c`` at row ``r``, lane ``c``) turned so that
    column ``r`` holds its row ``r``: one 128 x 128 transpose of the slab padded with zero rows."""
    return jnp.concatenate([slab, jnp.zeros((LANES - SUBLANES, LANES), slab.dtype)], axis=0).T


def _matrix_kernel(*refs: Any, reads: Any) -> None:
    from jax.experimental import pallas as pl

    (stored, stored_picks), (_, dense_picks) = reads
    stored_refs, dense_refs, out = refs[: len(stored)], refs[len(stored) : -1], refs[-1]
    slab = MATRIX_TILE // LANES
    turned = [_turned(_shifted(_stored_ref(stored_refs, stored, stored_picks, d), stored_picks[d], slab))
              for d in range(len(stored_picks))]  # fmt: skip
    width = out.shape[1]
    for r in range(slab):  # the tile's rows 128 r to 128 (r + 1), 128 columns at a time
        for j in range(0, width, LANES):
            size = min(LANES, width - j)
            lanes = pl.ds(j, size)
            total = jnp.zeros((LANES, size), out.dtype)
            for d, pick in enumerate(dense_picks):
                rows = _aligned_rows(dense_refs[pick.window], pick.row + LANES * r, LANES, lanes=lanes)
                total = total + turned[d][:, r : r + 1] * rows
            out[pl.ds(LANES * r, LANES), lanes] = total


def _matrix_vmem(reads: Any, columns: int) -> int:
    (stored, _), (dense, _), _ = reads
    values = (
        sum((w.stop - w.first) * w.rows for w in stored) * LANES + (sum(w.rows for w in dense) + MATRIX_TILE) * columns
    )
    return 2 * 4 * values


def column_tile(plan: Plan, columns: int, transposed: bool) -> int | None:
    """The columns of ``X`` per grid step of :func:`matrix_product` (all of them up to 512, else a
    divisor of their number), or None where no tile fits the VMEM budget (XLA's product then)."""
    reads = _matrix_reads(plan.offsets, plan.shape, transposed)
    candidates = ((columns,) if columns <= COLUMN_TILES[0] else ()) + tuple(c for c in COLUMN_TILES if columns % c == 0)
    return next((c for c in candidates if _matrix_vmem(reads, c) <= VMEM_BUDGET), None)


def matrix_product(data: Any, x: Any, *, plan: Plan, transposed: bool, interpret: bool) -> Any:
    """:func:`xla_product` of a matrix ``x`` (of a dtype of :data:`.tpu.VECTOR_UNIT_DTYPES`;
    ``column_tile`` not None) as a Pallas kernel."""
    from jax.experimental import pallas as pl

    m, n = plan.shape
    out = n if transposed else m
    columns = x.shape[1]
    width = column_tile(plan, columns, transposed)
    assert width is not None
    reads = _matrix_reads(plan.offsets, plan.shape, transposed)
    (stored, _), (dense, _), tiles = reads
    front, rows = extent(dense, MATRIX_TILE, tiles)
    padded = _rows(x, front, rows)
    slab = MATRIX_TILE // LANES

    def stored_spec(w: Window) -> Any:
        block = (pl.Element(w.stop - w.first), pl.Element(w.rows), pl.Element(LANES))
        return pl.BlockSpec(block, lambda t, j: (w.first, _on_tiles(plan.front + t * slab + w.start), 0))

    def dense_spec(w: Window) -> Any:
        # (one step over the columns where they are not a multiple of the tile: the index then 0)
        index = lambda t, j: (_on_tiles(front + t * MATRIX_TILE + w.start), j * width if width < columns else 0)  # noqa: E731
        return pl.BlockSpec((pl.Element(w.rows), pl.Element(width)), index)

    result = pl.pallas_call(
        functools.partial(_matrix_kernel, reads=reads[:2]),
        grid=(tiles, math.ceil(columns / width)),
        in_specs=[*map(stored_spec, stored), *map(dense_spec, dense)],
        out_specs=pl.BlockSpec((MATRIX_TILE, width), lambda t, j: (t, j)),
        out_shape=jax.ShapeDtypeStruct((tiles * MATRIX_TILE, columns), x.dtype),
        compiler_params=_compiler_params(_matrix_vmem(reads, width), 2),
        interpret=interpret,
    )(*(data,) * len(stored), *(padded,) * len(dense))
    return result[:out]
