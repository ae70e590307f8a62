"""The products of a block-sparse matrix (``xp.sparse.BSR``): its layout, its Pallas kernels for
the TPU and its XLA formulation.

A matrix whose entries come in dense blocks (of 128 x 128 on a TPU: the MXU's tile) is multiplied
block by block on the matrix unit: ``Y[block row r] += block @ X[block column c]`` for each stored
block. What is irregular is only which blocks there are, a few thousand integers, not which
entries.

**The layout** (built once per matrix by ``xp.sparse.BSR``): ``data`` ``(n_blocks, bm, bk)``, the
blocks sorted by block row then block column; their block rows and block columns (``int32``);
and ``order``, the blocks sorted by block column then block row (the transposed product's order).
Every block row and every block column holds at least one block (blocks of zeros are added where
one would be empty), so that every block of the result is written by some step of the kernel.

**The kernel** (:func:`pallas_product`, the layout of the Pallas TPU guide's block-sparse product
and of megablox's grouped matmul): a grid ``(column tiles of X, stored blocks)`` whose second axis
walks the blocks in order; the blocks' rows, columns and order are scalar-prefetched into SMEM
(``PrefetchScalarGridSpec``), where the index maps read them, so each step's block and tile of
``X`` are fetched by DMA ahead of it and the output block changes only when the block row does:
the steps of one block row accumulate in the output block in VMEM, which is written back once.
``A.T @ X`` walks the blocks in ``order`` and multiplies each transposed. The kernel's other
walks (:data:`WALK`): by ``X``'s tiles, with the whole result (its tile of columns) in VMEM, each
step fetching only its block and adding its product to the rows of its block; or with both
``X``'s tile and the result's in VMEM, one grid step per tile of columns whose loop streams the
blocks through a ring of VMEM buffers by DMAs of its own, several in flight, each of a group of
consecutive blocks (neither a grid step nor a DMA per block: a grid step with its DMAs costs about
twice a 128 x 128 block's product in one bfloat16 pass, bench/RESULTS.md). The products take the
matmul precision of JAX's setting where they are traced (:mod:`.tpu` gives float32's unless the
user set one, as xp's dense products: xp/_precision.py);
Mosaic multiplies at two, one bfloat16 pass or float32's, so the kernel takes the first for the
settings of JAX's DEFAULT precision and the second for every other (:func:`mosaic_precision`:
never less precise than asked).

**The XLA formulation** (:func:`xla_product`): the blocks times the gathered tiles of ``X``
(one batched product) summed by block row (``segment_sum``): every other platform, and the
reference of the kernel.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from xp.sparse import _buffers as buffers

COLUMN_TILES = (512, 256, 128)
"""Columns of ``X`` per grid step where ``X`` has more than the first (else all of them)."""


class Plan(NamedTuple):
    """The static part of a BSR matrix: its ``shape`` and the shape of its blocks ``block``."""

    shape: tuple[int, int]
    block: tuple[int, int]

    @property
    def grid(self) -> tuple[int, int]:
        """Block rows and block columns (the last of each may reach past the matrix)."""
        (m, n), (bm, bk) = self.shape, self.block
        return -(-m // bm), -(-n // bk)


def _padded_rows(x: Any, rows: int) -> Any:
    return x if x.shape[0] == rows else jnp.pad(x, ((0, rows - x.shape[0]),) + ((0, 0),) * (x.ndim - 1))


def _tiles(x: Any, count: int, side: int) -> Any:
    """``x`` (1-d or 2-d) as ``count`` tiles of ``side`` rows (zeros past its end) by its columns."""
    columns = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    return _padded_rows(columns, count * side).reshape(count, side, columns.shape[1])


def _roles(plan: Plan, rows: Any, cols: Any, order: Any, transposed: bool, walk: str = "by_result") -> tuple[Any, ...]:
    """Per step of the kernel's walk: the stored block, the block of the result and the block of
    ``x`` (and the sizes of the result's and ``x``'s blocks, and their numbers). The walk goes by
    the result's blocks (block rows for ``A @ x``, block columns for ``A.T @ x``), or where the
    result stays in VMEM whole (``"resident"``) by ``x``'s, whose tile is then fetched once, or
    where both stay in VMEM (``"streamed"``, ``"block_weights"``) in the order the blocks are stored."""
    (bm, bk), (block_rows, block_cols) = plan.block, plan.grid
    by_columns = transposed != (walk == "resident") if walk not in STREAMED_WALKS else False
    blocks = order if by_columns else jnp.arange(rows.shape[0], dtype=rows.dtype)
    block_row, block_col = (jnp.take(rows, order), jnp.take(cols, order)) if by_columns else (rows, cols)
    if transposed:
        return blocks, block_col, block_row, (bk, bm), (block_cols, block_rows)
    return blocks, block_row, block_col, (bm, bk), (block_rows, block_cols)


def xla_product(data: Any, rows: Any, cols: Any, order: Any, x: Any, *, plan: Plan, transposed: bool) -> Any:
    """``A @ x`` (``A.T @ x`` where ``transposed``) for ``x`` of one or two dimensions: the blocks
    times the tiles of ``x`` they meet, summed by block row (by block column)."""
    (m, n), (bm, bk), (block_rows, block_cols) = plan.shape, plan.block, plan.grid
    if transposed:
        terms = jnp.einsum("bij,bik->bjk", data, jnp.take(_tiles(x, block_rows, bm), rows, axis=0))
        out = jax.ops.segment_sum(terms, cols, num_segments=block_cols)
    else:
        terms = jnp.einsum("bij,bjk->bik", data, jnp.take(_tiles(x, block_cols, bk), cols, axis=0))
        out = jax.ops.segment_sum(terms, rows, num_segments=block_rows, indices_are_sorted=True)
    size = n if transposed else m
    return out.reshape(out.shape[0] * out.shape[1], out.shape[2])[:size].reshape(size, *x.shape[1:])


def sampled(ct: Any, x: Any, rows: Any, cols: Any, *, plan: Plan, transposed: bool) -> Any:
    """The cotangent of the blocks of ``A @ x`` (``A.T @ x``) for the result's cotangent ``ct``:
    block ``b`` gets ``ct[its rows] @ x[its columns].T`` (``x[its rows] @ ct[its columns].T``)."""
    (bm, bk), (block_rows, block_cols) = plan.block, plan.grid
    left, right = (x, ct) if transposed else (ct, x)  # the row side (m rows) and the column side (n)
    left, right = _tiles(left, block_rows, bm), _tiles(right, block_cols, bk)
    return jnp.einsum("bik,bjk->bij", jnp.take(left, rows, axis=0), jnp.take(right, cols, axis=0))


def column_tile(columns: int) -> int | None:
    """The columns of ``X`` per grid step (all of them up to 512, else a divisor of their number),
    or None where none fits (XLA's product then)."""
    if columns <= COLUMN_TILES[0]:
        return columns
    return next((c for c in COLUMN_TILES if columns % c == 0), None)


def fits(plan: Plan) -> bool:
    """Whether the kernel takes blocks of this shape: both sides multiples of 8 (a block's rows
    and columns are each the sublanes of some tile: of the result, of ``X``)."""
    return all(side % 8 == 0 for side in plan.block)


FAST_PRECISIONS = frozenset({"default", "bfloat16"})
"""The settings of ``jax.default_matmul_precision`` that mean JAX's DEFAULT precision: one bfloat16
pass on a TPU."""


def mosaic_precision(setting: str) -> Any:
    """The precision the kernel multiplies at for JAX's matmul precision ``setting``: DEFAULT for a
    setting that means it, else HIGHEST (Mosaic has no other: HIGH, ``"tensorfloat32"`` or a
    ``lax.DotAlgorithmPreset`` would not lower, so they get float32's, at least what they ask)."""
    return lax.Precision.DEFAULT if setting in FAST_PRECISIONS else lax.Precision.HIGHEST


WALKS = ("by_result", "resident", "streamed", "block_weights")
"""The kernel's walks: by the result's blocks (each step fetches its block and its tile of ``X``,
and a block row of the result is written once), by ``X``'s tiles with the whole result in VMEM
(each step fetches only its block, each tile of ``X`` is fetched once, the result is written at
the end), or with ``X``'s tile and the result's both in VMEM and the blocks streamed by the
kernel's own DMAs within one grid step per tile of columns (:func:`_streamed_kernel`); or as the
last with both tiles held transposed (``block_weights``), each block's product ``Y[r].T +=
X[c].T @ block.T``, the block on the side the MXU holds as its weights and ``X``'s columns
streamed past it, where ``block @ X[c]`` holds a tile of ``X`` for each 128 of its columns (the
transposes of ``X`` and of the result are XLA's, outside the kernel). That orientation measured no
faster on a v5e (bench/RESULTS.md, "Sparse products on a TPU"); the walk stays an option."""

WALK = "streamed"
"""The walk the kernel takes where its buffers fit (:func:`chosen_walk`); bench/sparse_tpu.py times
each, and the fastest is the default (bench/RESULTS.md, "Sparse products on a TPU": the blocks
streamed, in groups, against the result in VMEM, by the result's blocks and the blocks as the MXU's
weights). Where the tiles do not both fit, the result in VMEM, then the walk by its blocks."""

STREAMED_WALKS = ("streamed", "block_weights")
"""The walks with both tiles in VMEM and the blocks copied by the kernel's own DMAs, in the order
they are stored (:func:`_streamed_kernel`)."""

STREAM_DEPTH = 4
"""The streamed walk's ring of VMEM buffers: the group of blocks being multiplied and the DMAs of
the next three in flight."""

BLOCKS_PER_COPY = 8
"""Consecutive stored blocks each of the streamed walks' DMAs copies (:func:`blocks_per_copy`),
multiplied one after another in one turn of the kernel's loop: each DMA and each turn of the loop
costs time of its own beside the products, which a group shares, and the products of one turn
overlap, where one a turn serializes them (bench/RESULTS.md, "Sparse products on a TPU": the walk
with one block a copy and with groups)."""

COPY_BYTES = 2**19
"""The most a group of blocks takes (eight of 128 x 128 float32): the ring of buffers then takes at
most 2 MiB of VMEM beside the tiles, or :data:`STREAM_DEPTH` blocks where one is larger (a margin
:func:`chosen_walk`'s quarter of the VMEM for the tiles leaves)."""

VMEM_BYTES = 16 * 2**20
"""The VMEM of a TPU core where the machine cannot say (lowering for a TPU elsewhere): the
smallest of the generations'."""


def _result_bytes(plan: Plan, transposed: bool, width: int, walk: str = "resident") -> int:
    """The VMEM a tile of ``width`` columns of the whole result takes (float32, on the (8, 128)
    tiling: fewer columns than a vector register's 128 lanes take all of them; held transposed,
    by the ``block_weights`` walk, a block's side takes them)."""
    (bm, bk), (block_rows, block_cols) = plan.block, plan.grid
    count, side = (block_cols, bk) if transposed else (block_rows, bm)
    if walk == "block_weights":
        return count * -(-width // 8) * 8 * -(-side // 128) * 128 * 4
    return count * side * max(width, 128) * 4


def _operand_bytes(plan: Plan, transposed: bool, width: int, walk: str = "resident") -> int:
    """The VMEM a tile of ``width`` columns of the whole ``X`` takes (as :func:`_result_bytes`)."""
    return _result_bytes(plan, not transposed, width, walk)


def chosen_walk(plan: Plan, transposed: bool, columns: int, walk: str | None = None, width: int | None = None) -> str:
    """The walk of the kernel of a product with ``columns`` columns, ``width`` a grid step
    (:func:`column_tile`'s unless given): :data:`WALK` (or ``walk``)
    where its buffers fit (the result's tile in a quarter of the core's VMEM; streamed or as the
    blocks' weights, the tiles of the result and of ``X`` together in a quarter), else the result
    in VMEM where that fits, else the walk by the result's blocks (which holds a block of each)."""
    width = column_tile(max(columns, 1)) if width is None else width
    wanted = WALK if walk is None else walk
    if wanted not in WALKS:
        raise ValueError(f"walk must be one of {WALKS}, got {wanted!r}")
    if width is None:
        return "by_result"
    candidates = () if wanted == "by_result" else dict.fromkeys((wanted, "resident"))
    for candidate in candidates:
        held = _result_bytes(plan, transposed, width, candidate)
        if candidate in STREAMED_WALKS:
            held += _operand_bytes(plan, transposed, width, candidate)
        if 4 * held <= _vmem_bytes():
            return candidate
    return "by_result"


def blocks_per_copy(plan: Plan, count: int, wanted: int | None = None) -> int:
    """The blocks in each of the streamed walks' DMAs, of ``count`` stored: ``wanted``, else
    :data:`BLOCKS_PER_COPY` or fewer where a group would take more than :data:`COPY_BYTES`; never
    more than are stored, and at least one."""
    if wanted is None:
        wanted = min(BLOCKS_PER_COPY, COPY_BYTES // (4 * math.prod(plan.block)))
    return max(min(wanted, count), 1)


def _vmem_bytes() -> int:
    from jax.experimental.pallas import tpu as pltpu

    try:
        return int(pltpu.get_tpu_info().vmem_capacity_bytes)
    except Exception:  # not on a TPU: lowered for one (jax.export), the smallest VMEM
        return VMEM_BYTES


SPLIT_FLOAT32 = False
"""How the kernel multiplies at float32's precision: Mosaic's own float32 contraction (False), or
float32 split into three bfloat16 parts and six one-pass products (:func:`_split_product`, as
XLA's HIGHEST on a TPU). bench/sparse_tpu.py times both; the faster is the default."""


def _parts(value: Any, count: int) -> list[Any]:
    """``count`` bfloat16 values whose float32 sum is ``value`` to 8 x ``count`` bits (3: float32's 24)."""
    parts, rest = [], value
    for _ in range(count - 1):
        high = rest.astype(jnp.bfloat16)
        parts.append(high)
        rest = rest - high.astype(jnp.float32)
    return [*parts, rest.astype(jnp.bfloat16)]


def _split_product(a: Any, x: Any, numbers: Any) -> Any:
    """``a`` times ``x`` (float32) at float32's precision from one-pass bfloat16 products: with
    ``a = a0 + a1 + a2`` and ``x = x0 + x1 + x2``, the six terms ``ai xj`` with ``i + j <= 2`` (the
    others fall below float32's rounding), the smallest added first."""
    a_parts, x_parts = _parts(a, 3), _parts(x, 3)
    total = None
    for order in (2, 1, 0):
        for i in range(order + 1):
            term = lax.dot_general(a_parts[i], x_parts[order - i], numbers, precision=lax.Precision.DEFAULT,
                                   preferred_element_type=jnp.float32)  # fmt: skip
            total = term if total is None else total + term
    return total


def _block_product(a: Any, x: Any, *, transposed: bool, precision: Any, split: bool, weights: bool = False) -> Any:
    """A stored block (transposed) times its tile of ``x``, in float32; with ``weights``, ``x`` is
    the tile held transposed and the product is too: ``x @ a.T`` (``x @ a``), the block on the
    MXU's weights side."""
    if weights:
        left, right, numbers = x, a, (((1,), (0 if transposed else 1,)), ((), ()))
    else:
        left, right, numbers = a, x, (((0 if transposed else 1,), (0,)), ((), ()))
    if split and precision == lax.Precision.HIGHEST:
        return _split_product(left, right, numbers)
    return lax.dot_general(left, right, numbers, precision=precision, preferred_element_type=jnp.float32)


def _kernel(blocks: Any, outs: Any, ins: Any, a: Any, x: Any, out: Any, *, transposed: bool, precision: Any,
            split: bool) -> None:  # fmt: skip
    """One step of the walk by the result's blocks: ``out`` is the result's block of this step."""
    from jax.experimental import pallas as pl

    step = pl.program_id(1)
    first = (step == 0) | (outs[step] != outs[jnp.maximum(step - 1, 0)])

    @pl.when(first)
    def _() -> None:
        out[...] = jnp.zeros(out.shape, out.dtype)

    out[...] += _block_product(a[...], x[...], transposed=transposed, precision=precision, split=split)


def _resident_kernel(blocks: Any, outs: Any, ins: Any, a: Any, x: Any, out: Any, *, transposed: bool,
                     precision: Any, split: bool) -> None:  # fmt: skip
    """One step of the walk by ``x``'s tiles: ``out`` is the whole result (its tile of columns),
    and the step adds to the rows of its block."""
    from jax.experimental import pallas as pl

    @pl.when(pl.program_id(1) == 0)
    def _() -> None:
        out[...] = jnp.zeros(out.shape, out.dtype)

    side = a.shape[1] if transposed else a.shape[0]
    start = pl.multiple_of(outs[pl.program_id(1)] * side, 8)  # a multiple of 8: on the (8, 128) tiling
    rows = pl.ds(start, side)
    out[rows, :] += _block_product(a[...], x[...], transposed=transposed, precision=precision, split=split)


def _streamed_kernel(blocks: Any, outs: Any, ins: Any, data: Any, x: Any, out: Any, ring: Any, copies: Any, *,
                     transposed: bool, precision: Any, split: bool, weights: bool = False) -> None:  # fmt: skip
    """The one grid step of a tile of columns in the streamed walk: ``x`` and ``out`` are the whole
    tiles in VMEM, ``data`` the blocks in HBM, copied by this step in groups of consecutive blocks
    (as many as the ring's second axis holds) into the ring of buffers ``ring`` (:data:`STREAM_DEPTH`
    deep, one DMA semaphore each in ``copies``), the next groups in flight while one is multiplied.
    The last group ends at the last block (it starts earlier where the blocks are not a whole number
    of groups) and multiplies only the blocks the others did not. With ``weights`` (the
    ``block_weights`` walk) ``x`` and ``out`` are held transposed, block by block along their first
    axis: ``(blocks, columns, block side)``. (``blocks`` is not read: these walks take the blocks in
    the order they are stored, so that a group is one DMA.)"""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    count, (depth, per_copy, bm, bk) = data.shape[0], ring.shape
    in_side, out_side = (bm, bk) if transposed else (bk, bm)
    whole, rest = divmod(count, per_copy)
    groups = whole + (rest > 0)

    def first(g: Any) -> Any:
        """Group ``g``'s first block (the last group's ends at the last block)."""
        return jnp.minimum(g * per_copy, count - per_copy)

    def copy(g: Any) -> Any:
        slot = g % depth
        return pltpu.make_async_copy(data.at[pl.ds(first(g), per_copy)], ring.at[slot], copies.at[slot])

    def multiply(g: Any, kept: range) -> None:
        """The products of group ``g``'s blocks ``kept`` (of ``range(per_copy)``)."""
        for j in kept:
            block, b = ring[g % depth, j], first(g) + j
            if weights:  # (the tiles indexed along their first axis: no offset within the tiling)
                out[outs[b]] += _block_product(block, x[ins[b]], transposed=transposed, precision=precision,
                                               split=split, weights=True)  # fmt: skip
                continue
            tile = x[pl.ds(pl.multiple_of(ins[b] * in_side, 8), in_side), :]  # (multiples of 8: the tiling's rows)
            rows = pl.ds(pl.multiple_of(outs[b] * out_side, 8), out_side)
            out[rows, :] += _block_product(block, tile, transposed=transposed, precision=precision, split=split)

    for g in range(min(depth - 1, groups)):
        copy(jnp.int32(g)).start()  # (int32 indices, which Mosaic's slices take, in 64-bit mode too)
    out[...] = jnp.zeros(out.shape, out.dtype)

    def step(g: Any, carry: Any) -> Any:
        @pl.when(g + depth - 1 < groups)
        def _() -> None:
            copy(g + depth - 1).start()

        copy(g).wait()
        multiply(g, range(per_copy))
        return carry

    lax.fori_loop(jnp.int32(0), jnp.int32(whole), step, 0)
    if rest:  # the last group: its copy was started by the loop (or before it); its first blocks are done
        last = jnp.int32(whole)
        copy(last).wait()
        multiply(last, range(per_copy - rest, per_copy))


def pallas_product(data: Any, rows: Any, cols: Any, order: Any, x: Any, *, plan: Plan, transposed: bool,
                   interpret: bool, precision: str = "highest", split: bool | None = None,
                   walk: str | None = None, per_copy: int | None = None, width: int | None = None) -> Any:  # fmt: skip
    """:func:`xla_product` as a Pallas kernel (float32, ``fits(plan)``, ``column_tile`` not None), at
    JAX's matmul precision ``precision`` (:func:`mosaic_precision`; float32's by
    :data:`SPLIT_FLOAT32` unless ``split`` says), walking as :data:`WALK` says unless ``walk`` does,
    where its buffers fit (:func:`chosen_walk`); a streamed walk copies ``per_copy`` blocks a DMA
    (:func:`blocks_per_copy`); each grid step takes ``width`` of ``x``'s columns (``column_tile``'s
    unless given: a multiple of 128 that divides their number)."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    (bm, bk) = plan.block
    columns = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    k = columns.shape[1]
    if width is None:
        width = column_tile(k)
    elif width % 128 or k % width:
        raise ValueError(f"width must be a multiple of 128 that divides x's {k} columns, got {width}")
    assert width is not None
    walk = chosen_walk(plan, transposed, k, walk, width)
    blocks, outs, ins, (out_side, in_side), (out_count, in_count) = _roles(plan, rows, cols, order, transposed,
                                                                           walk)  # fmt: skip
    columns = _padded_rows(columns, in_count * in_side)
    whole_out = pl.BlockSpec((out_count * out_side, width), lambda j, *prefetched: (0, j))
    out_shape: tuple[int, ...] = (out_count * out_side, k)
    scratch: list[Any] = []
    kernel: Callable[..., None]
    semantics: tuple[Literal["parallel", "arbitrary"], ...]
    weights = walk == "block_weights"
    if walk in STREAMED_WALKS:
        grid: tuple[int, ...] = (k // width,)
        if weights:  # X's tiles and the result's held transposed: (blocks, columns, block side)
            columns = columns.reshape(in_count, in_side, k).transpose(0, 2, 1)
            in_spec = pl.BlockSpec((in_count, width, in_side), lambda j, *_: (0, j, 0))
            out_spec = pl.BlockSpec((out_count, width, out_side), lambda j, *_: (0, j, 0))
            out_shape = (out_count, k, out_side)
        else:
            in_spec, out_spec = pl.BlockSpec((in_count * in_side, width), lambda j, *_: (0, j)), whole_out
        in_specs = [pl.BlockSpec(memory_space=pl.ANY), in_spec]
        kernel = functools.partial(_streamed_kernel, weights=weights)
        per_copy = blocks_per_copy(plan, data.shape[0], per_copy)
        ring = pltpu.VMEM((STREAM_DEPTH, per_copy, bm, bk), jnp.float32)
        scratch = [ring, pltpu.SemaphoreType.DMA((STREAM_DEPTH,))]
        vmem = 2 * (_result_bytes(plan, transposed, width, walk) + _operand_bytes(plan, transposed, width, walk))
        vmem += 4 * STREAM_DEPTH * per_copy * bm * bk
        semantics = ("parallel",)
    else:
        grid = (k // width, data.shape[0])
        in_specs = [
            pl.BlockSpec((None, bm, bk), lambda j, b, blocks, outs, ins: (blocks[b], 0, 0)),
            pl.BlockSpec((in_side, width), lambda j, b, blocks, outs, ins: (ins[b], j)),
        ]
        semantics = ("parallel", "arbitrary")
        if walk == "resident":
            out_spec, kernel = whole_out, _resident_kernel
            vmem = 2 * 4 * (bm * bk + in_side * width) + 2 * _result_bytes(plan, transposed, width)
        else:
            out_spec = pl.BlockSpec((out_side, width), lambda j, b, blocks, outs, ins: (outs[b], j))
            kernel, vmem = _kernel, 2 * 4 * (bm * bk + (in_side + out_side) * width)
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=3, grid=grid, in_specs=in_specs, out_specs=out_spec, scratch_shapes=scratch
    )
    product = pl.pallas_call(
        functools.partial(
            kernel,
            transposed=transposed,
            precision=mosaic_precision(precision),
            split=SPLIT_FLOAT32 if split is None else split,
        ),
        grid_spec=spec,
        out_shape=jax.ShapeDtypeStruct(out_shape, jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=semantics, vmem_limit_bytes=vmem + vmem // 2 + 2**22),
        interpret=interpret,
    )(blocks, outs, ins, data, columns)
    if weights:
        product = product.transpose(0, 2, 1).reshape(out_count * out_side, k)
    size = plan.shape[1] if transposed else plan.shape[0]
    return product[:size].reshape(size, *x.shape[1:])


def host_layout(rows: Any, cols: Any, values: Any, plan: Plan) -> tuple[Any, Any, Any, Any]:
    """The layout (``data``, block rows, block columns, ``order``; NumPy) of the entries ``values``
    at ``(rows, cols)`` (NumPy, inside the shape; duplicates summed): the blocks that hold an entry,
    sorted, and a block of zeros in each block row and block column that would be empty."""
    import numpy as np

    (bm, bk), (block_rows, block_cols) = plan.block, plan.grid
    if not block_rows or not block_cols:  # an empty matrix: no blocks (no product has a block to write)
        empty = np.zeros(0, np.int32)
        return np.zeros((0, bm, bk), values.dtype), empty, empty, empty
    keys = (rows // bm).astype(np.int64) * block_cols + cols // bk
    held = set(np.unique(keys).tolist())
    empty_rows = sorted(set(range(block_rows)) - {key // block_cols for key in held})
    held.update(r * block_cols for r in empty_rows)  # column 0 of an empty block row
    empty_cols = sorted(set(range(block_cols)) - {key % block_cols for key in held})
    held.update(empty_cols)  # row 0 of an empty block column
    ordered = np.array(sorted(held), np.int64)
    data = np.zeros((len(ordered), bm, bk), values.dtype)
    buffers.added_host(data, (np.searchsorted(ordered, keys), rows % bm, cols % bk), values)
    block_row, block_col = (ordered // block_cols).astype(np.int32), (ordered % block_cols).astype(np.int32)
    order = np.lexsort((block_row, block_col)).astype(np.int32)
    return data, block_row, block_col, order
