"""Sparse products on a TPU: xp.sparse.DIA, BSR and ELL (Pallas kernels and XLA's formulations) against
JAX's BCOO, xp's BCOO and the dense product, and against the time the data takes to stream.

    python bench/run.py sparse_tpu          # writes bench/RESULTS.md (section sparse_tpu-tpu on a TPU)
    python bench/sparse_tpu.py [--quick] [--cases blocks,small]    # prints the section (of those matrices)

The three matrices of issue #43 (float32, jitted products):

- **Poisson**: the 2-D Poisson matrix of a 1000 x 1000 grid (1M rows, 5 diagonals): ``A @ x`` and
  ``A.T @ x`` as a DIA, Pallas and XLA; JAX's BCOO where a trial on a 62,500-row matrix says it
  ends within a few seconds a call (it is a scatter there; the dense matrix would take 4 TB).
- **Blocks**: 8192 x 8192 of 128 x 128 blocks, 10% of them stored (random), ``A @ X`` with ``X`` of
  512 columns: BSR (Pallas, XLA; each of the kernel's walks, the streamed walks with 16 and 32
  blocks a copy and in grid steps of 256 columns) against the dense product at float32's precision, as xp's; and where the
  kernel's time goes: the walk with the result in VMEM with no product (its grid steps and copies
  alone, then with the vector unit's additions), the products with no copies (all in VMEM), and
  the kernel and the dense product timed one call at a time, each waited for.
- **Small**: matrices of the kinds and sizes the tests draw (banded, 8 x 8 blocks, scattered; 64
  and 100 rows) and one of 2048 rows, ``A @ x`` and ``A @ X`` (8 columns) as xp's DIA, BSR and ELL
  against JAX's BCOO of the same entries: the goal "never slower than JAX's BCOO".
- **BSR columns**: the BSR kernel against XLA's formulation and the dense product by block side (8 to
  128), share of blocks stored and columns of ``X`` (a vector, 8, 128): where a TPU takes the kernel;
  for blocks of 32 or less a side, the kernel copying 64 and 256 blocks a DMA.
- **CG**: the examples' generic conjugate gradients on the Poisson matrix as a DIA, jitted whole, to
  SciPy's tolerance, against SciPy's CG on the machine's CPU and the same CG on a BCOO (JAX's
  product: its first iterations), with the time an iteration's product takes at the memory's speed.
- **Random**: 20000 x 20000 with 400k entries at random: ``A @ x`` of xp's BCOO, JAX's BCOO, the
  dense matrix and xp.sparse.ELL (its Pallas kernel and XLA's formulation, ``A.T @ x``), for the
  goal of 0.5 ms; ``A @ X`` and ``A.T @ X`` with 64 columns (ELL's are XLA's gathers of its row
  layout: a band's slots together, as xp takes them, and a loop of one a slot) against xp's and
  JAX's BCOO and dense.

Each product is checked against a reference (largest relative error shown), then all of a matrix's
implementations are timed interleaved: rounds of batches of calls, the median per call; then, for
calls shorter than 10 ms, the same with 16 products chained in one call: a call's dispatch (about
130 µs on a TPU v5e host, more than a fast product) drops out of the difference, which gives a
product's own time. The "memory floor" is the time the bytes a product must read and write take at
the memory's speed, measured once per run as XLA's ``b + 1`` on a buffer of gigabytes (read once,
written once; a call's dispatch taken out): a product near it is at the memory's speed. (Not
``b + 1`` on a buffer of the product's size looped like the products: such a loop ran far faster
than the memory streams, its carry of a few megabytes likely held in the core's VMEM, 128 MiB on a
v5e.) Off a TPU (CI, a laptop) the same code runs on small matrices, the Pallas
kernels in Pallas's interpreter: it checks that the benchmark works, its times say nothing.
"""

# ruff: noqa: N803, N806  (A and X are matrices, named as in the operations)

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

from _machine import describe
from eager import interleaved

SIZES = {  # (Poisson grid side, blocks side and block, random side and entries, X's columns)
    "tpu": (1000, 8192, 128, 20000, 400_000, 512),
    "small": (60, 512, 128, 2000, 4000, 64),
}
CASES = ("poisson", "random", "blocks", "small", "bsr_columns", "cg")
BCOO_TRIAL_SIDE = 250  # the Poisson grid on which JAX's BCOO is tried first
BCOO_LIMIT_S = 5.0  # the time a call may take at full size, extrapolated, for JAX's BCOO to run
BCOO_CG_ITERATIONS = 10  # the iterations of the CG on a BCOO (about 80 ms each on a TPU v5e)
DENSE_LIMIT = 4 * 2**30  # the bytes of a dense matrix that is multiplied too
REPEAT = 16  # products a looped call makes (the matrices' growth over them stays inside float32)
STREAMED_BYTES = 2**32
"""The bytes the memory's speed is measured on, read and written (a few milliseconds on a TPU: a call's
dispatch is a rounding error, and the buffer is far larger than any core's VMEM)."""
LOOP_LIMIT_S = 0.002  # the longest call also timed looped (beyond, a call's dispatch is a few percent of it)
FAST = "default"  # the matmul precision of the opt-in rows (bench/precision.py)
SMALL_SIDES = (64, 100, 2048)  # the small case's matrices: two of the tests' sizes and a larger one
LARGER_COPIES = (64, 256)  # the bsr_columns case's groups of small blocks a DMA (tpu_bsr.BLOCKS_PER_COPY: 8)
LARGER_COPIES_BELOW = 32  # ... for blocks of this side or less
BSR_MATRICES = (  # the bsr_columns case's matrices: (side, block side, share of the blocks stored)
    *((2048, block, density) for block in (8, 16, 32, 64, 128) for density in (0.1, 0.3)),
    *((8192, block, 0.1) for block in (8, 32, 128)),
)


def poisson_diagonals(nx: int) -> tuple[Any, tuple[int, ...]]:
    """The row-aligned diagonals of the 2-D Poisson matrix of an ``nx`` x ``nx`` grid (NumPy)."""
    import numpy as np

    n = nx * nx
    i = np.arange(n)
    same_row_left, same_row_right = i % nx != 0, i % nx != nx - 1
    diagonals = np.stack([
        np.where(i >= nx, -1.0, 0.0), np.where(same_row_left, -1.0, 0.0), np.full(n, 4.0),
        np.where(same_row_right, -1.0, 0.0), np.where(i < n - nx, -1.0, 0.0),
    ]).astype(np.float32)  # fmt: skip
    return diagonals, (-nx, -1, 0, 1, nx)


def bcoo_of(diagonals: Any, offsets: tuple[int, ...], n: int) -> Any:
    """JAX's BCOO of a square matrix's row-aligned diagonals (NumPy): their stored entries, in row
    order."""
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import sparse as jsparse

    rows = np.repeat(np.arange(n)[:, None], len(offsets), axis=1)
    cols = rows + np.asarray(offsets)[None, :]
    values = diagonals.T
    keep = (cols >= 0) & (cols < n) & (values != 0)
    indices = np.stack([rows[keep], cols[keep]], axis=1).astype(np.int32)
    return jsparse.BCOO((jnp.asarray(values[keep]), jnp.asarray(indices)), shape=(n, n), indices_sorted=True,
                        unique_indices=True)  # fmt: skip


def memory_speed(nbytes: int, rounds: int, budget: float) -> float:
    """Bytes a second XLA streams between the device's memory and its cores: a jitted ``b + 1`` that
    reads and writes ``nbytes`` in all, less the time of the same call on one element (the call's
    dispatch)."""
    import jax
    import jax.numpy as jnp

    add = jax.jit(lambda b: b + 1)
    buffer, element = jnp.zeros(nbytes // 8, jnp.float32), jnp.zeros(1, jnp.float32)
    times = interleaved({"stream": lambda: add(buffer), "dispatch": lambda: add(element)}, rounds, budget)
    return nbytes / max(times["stream"] - times["dispatch"], 1e-9)


def error(got: Any, want: Any) -> float:
    import numpy as np

    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def on_tpu() -> bool:
    import jax

    return jax.devices()[0].platform == "tpu"


def kernel(kind: str) -> Any:
    """Products traced inside take the Pallas kernels or XLA's formulation (xp/sparse/_products/tpu.py)."""
    from xp.sparse._products import tpu

    return tpu.forced(kind)


def jitted(kind: str | None, product: Callable[..., Any], *args: Any) -> Call:
    """``product(*args)`` jitted and compiled now, under :func:`kernel` ``kind`` (None: as chosen): one
    product a call, and :data:`REPEAT` products a call (:func:`repeated`)."""
    import jax

    try:
        with kernel(kind) if kind else contextlib.nullcontext():
            once = jax.jit(product).lower(*args).compile()
            # traced now, under ``kind``; compiled where it is timed (not for a call too long to loop)
            looped = functools.cache(jax.jit(repeated(product, REPEAT)).lower(*args).compile)
    except Exception as failure:  # (a kernel that does not compile there: its row says so, the others run)
        return Call(functools.partial(_raise, failure), functools.partial(_raise, failure))
    return Call(lambda: once(*args), lambda: looped()(*args))


def _raise(failure: Exception) -> Any:
    raise failure


def first_line(failure: Exception) -> str:
    """The exception's type and the first line of its message (a table's cell)."""
    return f"{type(failure).__name__}: {(str(failure).splitlines() or [''])[0]}"


def repeated(product: Callable[..., Any], repeat: int) -> Callable[..., Any]:
    """``product(A, x)`` applied ``repeat`` times in one program, each to the last result (the
    matrices are square): a product's own time, without the call's dispatch, is the difference
    between this and one product a call, over ``repeat - 1``."""
    from jax import lax

    import xp

    def run(A: Any, x: Any) -> Any:
        like = xp.asarray if isinstance(x, xp.Array) else (lambda v: v)
        return lax.fori_loop(0, repeat, lambda _, v: like(product(A, v)), x)

    return run


class Call(NamedTuple):
    """One implementation's jitted calls: one product, and :data:`REPEAT` products."""

    once: Callable[[], Any]
    looped: Callable[[], Any]


class Timed(NamedTuple):
    """A matrix's implementations measured: each one's relative error against the result it must give
    (NaN where none), the median time of a call and of a product (seconds), and the ones that failed
    (to compile or to run there), with why."""

    errors: dict[str, float]
    once: dict[str, float]
    each: dict[str, float]
    failures: dict[str, str]


def timed_calls(calls: dict[str, tuple[Call, Any]], rounds: int, budget: float) -> Timed:
    """Each implementation checked, then all that work timed interleaved (:class:`Timed`)."""
    errors, failures = {}, {}
    for name, (call, want) in calls.items():
        try:
            errors[name] = error(call.once(), want) if want is not None else math.nan
        except Exception as failure:
            failures[name] = first_line(failure)
    timed = {name: call for name, (call, _) in calls.items() if name not in failures}
    once = interleaved({name: call.once for name, call in timed.items()}, rounds, budget, most=200)
    # a product's own time where a call is short enough to loop (else the dispatch is a rounding error)
    short = {}
    for name, call in timed.items():
        if once[name] < LOOP_LIMIT_S:
            with contextlib.suppress(Exception):  # (a loop that fails leaves the product's time the call's)
                call.looped()
                short[name] = call.looped
    looped = interleaved(short, rounds, budget, most=200)
    each = {name: (looped[name] - once[name]) / (REPEAT - 1) if name in looped else once[name] for name in once}
    return Timed(errors, once, each, failures)


def run_case(title: str, calls: dict[str, tuple[Call, Any]], nbytes: int, rounds: int, budget: float, speed: float,
             notes: dict[str, str]) -> list[str]:  # fmt: skip
    """One matrix's table: for each implementation (its calls and the result a product must give),
    the median time of a call and of a product, the product's ratio to the memory floor (``nbytes``
    at the memory's ``speed``, bytes a second), its error."""
    errors, once, each, failures = timed_calls(calls, rounds, budget)
    floor = nbytes / speed
    lines = [f"### {title}", "",
             f"Memory floor: {nbytes / 1e6:.1f} MB streamed, {floor * 1e6:.1f} µs at the memory's speed.", "",
             "| implementation | µs a call | µs a product | product / floor | relative error |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for name, seconds in each.items():
        err = "n/a (no product)" if math.isnan(errors[name]) else f"{errors[name]:.1e}"
        lines.append(f"| {name} | {once[name] * 1e6:.1f} | {seconds * 1e6:.1f} | {seconds / floor:.2f} | {err} |")
    for name, note in {**notes, **{name: f"failed: {why}" for name, why in failures.items()}}.items():
        lines.append(f"| {name} | {note} | | | |")
    print("\n".join(lines), file=sys.stderr)  # as it goes: a run stopped later keeps this table
    return [*lines, ""]


def poisson_case(nx: int, rounds: int, budget: float, speed: float) -> list[str]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import xp
    import xp.sparse as xs

    diagonals, offsets = poisson_diagonals(nx)
    n = nx * nx
    A = xs.DIA((xp.asarray(diagonals), offsets), shape=(n, n))
    x = xp.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    want = np.asarray(jitted("xla", lambda A, x: (A @ x).jax, A, x).once())  # (A is symmetric: A.T @ x too)
    calls = {f"DIA {kind} A @ x": (jitted(kind, lambda A, x: (A @ x).jax, A, x), want) for kind in ("pallas", "xla")}
    for kind in ("pallas", "xla"):
        calls[f"DIA {kind} A.T @ x"] = (jitted(kind, lambda A, x: (A.T @ x).jax, A, x), want)
    # the vector unit's integers (the stencil's values are): the same kernel of int32
    A_int = xs.DIA((xp.asarray(diagonals.astype(np.int32)), offsets), shape=(n, n))
    x_int = xp.asarray(np.random.default_rng(0).integers(-1000, 1000, n, dtype=np.int32))
    want_int = np.asarray(jitted("xla", lambda A, x: (A @ x).jax, A_int, x_int).once())
    for kind in ("pallas", "xla"):
        calls[f"DIA {kind} A @ x (int32)"] = (jitted(kind, lambda A, x: (A @ x).jax, A_int, x_int), want_int)
    notes = {}
    if n * n * 4 <= DENSE_LIMIT:
        calls["dense A @ x"] = (jitted(None, lambda a, x: (a @ x).jax, A.todense(), x), want)
    else:
        notes["dense A @ x"] = f"n/a: the dense matrix would take {n * n * 4 / 1e12:.0f} TB"
    # JAX's BCOO: tried on a smaller grid first, run at full size only if it would end in time
    trial_diagonals, _ = poisson_diagonals(BCOO_TRIAL_SIDE)
    trial = bcoo_of(trial_diagonals, (-BCOO_TRIAL_SIDE, -1, 0, 1, BCOO_TRIAL_SIDE), BCOO_TRIAL_SIDE**2)
    trial_x = jnp.ones(BCOO_TRIAL_SIDE**2, jnp.float32)
    trial_call = jitted(None, lambda A, x: A @ x, trial, trial_x)
    jax.block_until_ready(trial_call.once())
    start = time.perf_counter()
    jax.block_until_ready(trial_call.once())
    estimate = (time.perf_counter() - start) * n / BCOO_TRIAL_SIDE**2
    if estimate <= BCOO_LIMIT_S or n <= BCOO_TRIAL_SIDE**2:
        bcoo = bcoo_of(diagonals, offsets, n)
        calls["JAX BCOO A @ x"] = (jitted(None, lambda A, x: A @ x, bcoo, x.jax), want)
        calls["xp BCOO A @ x"] = (jitted(None, lambda A, x: (A @ x).jax, xs.BCOO.from_jax(bcoo), x), want)
    else:
        notes["JAX BCOO A @ x"] = f"not run: about {estimate:.0f} s a call (from the {BCOO_TRIAL_SIDE**2:,}-row matrix)"
    nbytes = (len(offsets) * n + 2 * n) * 4
    title = f"2-D Poisson, {n:,} rows, 5 diagonals: `A @ x` (goal: at most 100 µs)"
    return run_case(title, calls, nbytes, rounds, budget, speed, notes)


def block_sparse(side: int, block: int, rng: Any, density: float = 0.1) -> Any:
    """The blocks case's dense matrix (NumPy, float32): ``side`` x ``side`` of ``block`` x ``block``
    blocks, a ``density`` of them (at random) of normal values, the others +0.0. (Not the values times
    a mask of the blocks: that gives -0.0 where a value is negative, which ``BSR.fromdense`` stores as
    the entry it is, so every block would be stored.)"""
    import numpy as np

    count = side // block
    inside = np.kron(rng.random((count, count)) < density, np.ones((block, block), bool))
    return np.where(inside, rng.standard_normal((side, side)), 0.0).astype(np.float32)


def blocks_case(side: int, block: int, columns: int, rounds: int, budget: float, speed: float) -> list[str]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import xp
    import xp.sparse as xs
    from xp.sparse._products import tpu_bsr

    dense = block_sparse(side, block, np.random.default_rng(1))
    A = xs.BSR.fromdense(xp.asarray(dense), block_shape=(block, block))
    layout = (A._data, A._rows, A._cols, A._order)
    rng = np.random.default_rng(2)
    X = xp.asarray(rng.standard_normal((side, columns)).astype(np.float32))
    with jax.default_matmul_precision("highest"):
        want, want_t = np.asarray(jnp.dot(jnp.asarray(dense), X.jax)), np.asarray(jnp.dot(jnp.asarray(dense).T, X.jax))
    calls = {f"BSR {kind} A @ X": (jitted(kind, lambda A, X: (A @ X).jax, A, X), want) for kind in ("pallas", "xla")}
    calls["BSR pallas A.T @ X"] = (jitted("pallas", lambda A, X: (A.T @ X).jax, A, X), want_t)
    # the kernel's other way to float32's precision (tpu_bsr.SPLIT_FLOAT32): whichever is faster is the default
    split = not tpu_bsr.SPLIT_FLOAT32
    calls[f"BSR pallas A @ X ({'bfloat16 parts' if split else 'Mosaic float32'})"] = (jitted(
        "pallas", lambda layout, X: tpu_bsr.pallas_product(*layout, X.jax, plan=A._plan, transposed=False,
                                                           interpret=not on_tpu(), split=split),
        layout, X), want)  # fmt: skip
    # the kernel's other walks (tpu_bsr.WALKS; the default, tpu_bsr.WALK, is the rows above): the fastest is the default
    names = {"by_result": "by the result's blocks", "resident": "the result in VMEM", "streamed": "blocks streamed",
             "block_weights": "the blocks as the MXU's weights"}  # fmt: skip
    for walk in (w for w in tpu_bsr.WALKS if w != tpu_bsr.WALK):
        for transposed, reference in ((False, want), (True, want_t)):
            calls[f"BSR pallas {'A.T' if transposed else 'A'} @ X ({names[walk]})"] = (jitted(
                "pallas", lambda layout, X, t=transposed, w=walk: tpu_bsr.pallas_product(
                    *layout, X.jax, plan=A._plan, transposed=t, interpret=not on_tpu(), walk=w),
                layout, X), reference)  # fmt: skip
    matrix = xp.asarray(dense)
    calls["dense A @ X (xp.matmul, float32's precision)"] = (jitted(None, lambda a, X: (a @ X).jax, matrix, X), want)
    with jax.default_matmul_precision(FAST):  # the opt-in: what the products cost in one bfloat16 pass
        calls[f"BSR pallas A @ X ({FAST} precision)"] = (jitted("pallas", lambda A, X: (A @ X).jax, A, X), want)
        calls[f"dense A @ X ({FAST} precision)"] = (jitted(None, lambda a, X: (a @ X).jax, matrix, X), want)
        for walk in (w for w in tpu_bsr.WALKS if w != tpu_bsr.WALK):
            calls[f"BSR pallas A @ X ({names[walk]}, {FAST} precision)"] = (jitted(
                "pallas", lambda layout, X, w=walk: tpu_bsr.pallas_product(
                    *layout, X.jax, plan=A._plan, transposed=False, interpret=not on_tpu(), precision=FAST, walk=w),
                layout, X), want)  # fmt: skip
    # the streamed walks' groups: more blocks a DMA and a turn of the loop (tpu_bsr.BLOCKS_PER_COPY is the default)
    for walk, per_copy in (("streamed", 16), ("streamed", 32), ("block_weights", 32)):
        for precision in ("highest", FAST):
            calls[f"BSR pallas A @ X ({names[walk]}, {per_copy} a copy, {precision} precision)"] = (jitted(
                "pallas", lambda layout, X, w=walk, n=per_copy, p=precision: tpu_bsr.pallas_product(
                    *layout, X.jax, plan=A._plan, transposed=False, interpret=not on_tpu(), precision=p,
                    walk=w, per_copy=n), layout, X), want)  # fmt: skip
    # the streamed walk in grid steps of 256 columns (where X has more, in 256s): each step streams
    # every block again, and the next step's tile of X is fetched (the last one's result written)
    # while a step multiplies
    for precision in ("highest", FAST) if columns > 256 and columns % 256 == 0 else ():
        calls[f"BSR pallas A @ X (blocks streamed, 256 columns a step, {precision} precision)"] = (jitted(
            "pallas", lambda layout, X, p=precision: tpu_bsr.pallas_product(
                *layout, X.jax, plan=A._plan, transposed=False, interpret=not on_tpu(), precision=p,
                walk="streamed", width=256), layout, X), want)  # fmt: skip
    # where a step's time goes: the same walk's grid and copies with no product, then with the tile
    # of X added to the result's rows in place of the product (the vector unit's share)
    for body, name in ((None, "its steps and copies alone"), ("add", "steps, copies and the result's rows")):
        calls[f"BSR pallas A @ X: {name}"] = (jitted(None, lambda layout, X, b=body: block_steps(
            *layout, X.jax, plan=A._plan, body=b), layout, X), None)  # fmt: skip
    # the products alone: the streamed walk's loop with no copies (eight blocks in VMEM, reused)
    for precision in ("highest", FAST):
        calls[f"BSR pallas A @ X: its products alone, in VMEM ({precision} precision)"] = (jitted(
            None, lambda layout, X, p=precision: block_products(*layout, X.jax, plan=A._plan, precision=p),
            layout, X), None)  # fmt: skip
    count, stored = side // block, A.data.shape[0]  # (the matrix's own count: what the kernel multiplies)
    nbytes = (stored * block * block + 2 * side * columns) * 4
    title = (f"Blocks: {side} x {side}, {stored} of {count * count} blocks of {block} x {block} stored, "
             f"`A @ X` with {columns} columns (goal: 5 times faster than dense)")  # fmt: skip
    lines = run_case(title, calls, nbytes, rounds, budget, speed, {})
    # the same calls timed one at a time, each waited for (a batch of calls queues them on the device)
    waited = {
        name: calls[name][0].once for name in ("BSR pallas A @ X", "dense A @ X (xp.matmul, float32's precision)")
    }
    each = {name: statistics.median(_waited(call) for _ in range(rounds)) for name, call in waited.items()}
    timings = ", ".join(f"{name} {t * 1e6:.1f} µs" for name, t in each.items())
    return [*lines, f"Each call waited for before the next (not queued): {timings}.", ""]


def _waited(call: Callable[[], Any]) -> float:
    import jax

    start = time.perf_counter()
    jax.block_until_ready(call())
    return time.perf_counter() - start


def block_steps(data: Any, rows: Any, cols: Any, order: Any, x: Any, *, plan: Any, body: str | None) -> Any:
    """The grid, scalar prefetch and copies of the BSR kernel's walk with the result in VMEM
    (xp/sparse/_products/tpu_bsr.py, ``"resident"``), each step doing nothing but the first's zeroing
    of the result (``body`` None), or adding its tile of ``x`` to the result's rows of its block
    (``"add"``, square blocks): what a step costs without its product."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    from xp.sparse._products import tpu_bsr

    blocks, outs, ins, (out_side, in_side), (out_count, in_count) = tpu_bsr._roles(plan, rows, cols, order, False,
                                                                                   "resident")  # fmt: skip
    k = x.shape[1]
    width = tpu_bsr.column_tile(k)
    bm, bk = plan.block

    def kernel(blocks: Any, outs: Any, ins: Any, a: Any, tile: Any, out: Any) -> None:
        @pl.when(pl.program_id(1) == 0)
        def _() -> None:
            out[...] = jnp.zeros(out.shape, out.dtype)

        if body == "add":
            out[pl.ds(pl.multiple_of(outs[pl.program_id(1)] * out_side, 8), out_side), :] += tile[...]

    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=3,
        grid=(k // width, data.shape[0]),
        in_specs=[pl.BlockSpec((None, bm, bk), lambda j, b, blocks, outs, ins: (blocks[b], 0, 0)),
                  pl.BlockSpec((in_side, width), lambda j, b, blocks, outs, ins: (ins[b], j))],
        out_specs=pl.BlockSpec((out_count * out_side, width), lambda j, *_: (0, j)),
    )  # fmt: skip
    vmem = 2 * 4 * (bm * bk + in_side * width) + 2 * tpu_bsr._result_bytes(plan, False, width)
    return pl.pallas_call(
        kernel,
        grid_spec=spec,
        out_shape=jax.ShapeDtypeStruct((out_count * out_side, k), jnp.float32),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary"), vmem_limit_bytes=vmem + vmem // 2 + 2**22
        ),
        interpret=not on_tpu(),
    )(blocks, outs, ins, data, tpu_bsr._padded_rows(x, in_count * in_side))


def block_products(data: Any, rows: Any, cols: Any, order: Any, x: Any, *, plan: Any, precision: str) -> Any:
    """The products of the streamed walk (xp/sparse/_products/tpu_bsr.py) with no copies: ``x``'s
    tile and the result whole in VMEM, each block's product added to its rows in one loop, a group
    of ``tpu_bsr.BLOCKS_PER_COPY`` a turn as the kernel's, the blocks' rows and columns those of the
    matrix but their values eight blocks held in VMEM (so no DMA of a block): what the products cost
    the kernel."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    from xp.sparse._products import tpu_bsr

    (bm, bk), (block_rows, block_cols) = plan.block, plan.grid
    held, count = data[:8], rows.shape[0]
    per_copy = tpu_bsr.blocks_per_copy(plan, count)

    def kernel(rows: Any, cols: Any, blocks: Any, tile: Any, out: Any) -> None:
        out[...] = jnp.zeros(out.shape, out.dtype)

        def multiply(i: Any) -> None:
            part = tile[pl.ds(pl.multiple_of(cols[i] * bk, 8), bk), :]
            out[pl.ds(pl.multiple_of(rows[i] * bm, 8), bm), :] += tpu_bsr._block_product(
                blocks[i % held.shape[0]], part, transposed=False, precision=tpu_bsr.mosaic_precision(precision),
                split=False)  # fmt: skip

        def group(g: Any, carry: Any) -> Any:
            for j in range(per_copy):
                multiply(g * per_copy + j)
            return carry

        def single(i: Any, carry: Any) -> Any:
            multiply(i)
            return carry

        lax.fori_loop(jnp.int32(0), jnp.int32(count // per_copy), group, 0)
        lax.fori_loop(jnp.int32(count - count % per_copy), jnp.int32(count), single, 0)

    smem, vmem = pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.VMEM)
    need = 4 * (held.size + 2 * (block_rows * bm + block_cols * bk) * max(x.shape[1], 128))
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((block_rows * bm, x.shape[1]), jnp.float32),
        in_specs=[smem, smem, vmem, vmem],
        out_specs=vmem,
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=need + 2**22),
        interpret=not on_tpu(),
    )(rows, cols, held, tpu_bsr._padded_rows(x, block_cols * bk))


def random_case(side: int, entries: int, rounds: int, budget: float, speed: float) -> list[str]:
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import sparse as jsparse

    import xp
    import xp.sparse as xs
    from xp.sparse._products import tpu_ell

    rng = np.random.default_rng(2)
    flat = np.unique(rng.integers(0, side * side, entries))
    indices = np.stack([flat // side, flat % side], axis=1).astype(np.int32)
    values = rng.standard_normal(len(flat)).astype(np.float32)
    bcoo = jsparse.BCOO((jnp.asarray(values), jnp.asarray(indices)), shape=(side, side), indices_sorted=True,
                        unique_indices=True)  # fmt: skip
    A = xs.BCOO.from_jax(bcoo)
    E = xs.ELL.from_sparse(A)
    x = xp.asarray(rng.standard_normal(side).astype(np.float32))
    X = xp.asarray(rng.standard_normal((side, 64)).astype(np.float32))
    dense = bcoo.todense()
    exact = np.asarray(dense, np.float64)
    want, want_t, want_X = exact @ np.asarray(x, np.float64), exact.T @ np.asarray(x, np.float64), exact @ np.asarray(X)
    ell = f"{E.slots} slots in each of {-(-side // E.chunk)} chunks"
    calls = {
        "xp BCOO A @ x": (jitted(None, lambda A, x: (A @ x).jax, A, x), want),
        "JAX BCOO A @ x": (jitted(None, lambda A, x: A @ x, bcoo, x.jax), want),
        f"xp ELL pallas A @ x ({ell})": (jitted("pallas", lambda A, x: (A @ x).jax, E, x), want),
        "xp ELL xla A @ x": (jitted("xla", lambda A, x: (A @ x).jax, E, x), want),
        "xp ELL pallas A.T @ x": (jitted("pallas", lambda A, x: (A.T @ x).jax, E, x), want_t),
        "dense A @ x": (jitted(None, lambda a, x: (a @ x).jax, xp.asarray(dense), x), want),
        "xp ELL A @ X, 64 columns (XLA's gathers by the rows' lengths, a band's slots together)": (
            jitted(None, lambda A, X: (A @ X).jax, E, X),
            want_X,
        ),
        "xp ELL A @ X, 64 columns (one gather a slot)": (
            jitted(None, lambda E, X: tpu_ell.xla_product(*E._stored[2:5], X.jax, plan=E._plan[0], limit=0), E, X),
            want_X,
        ),
        "xp ELL A.T @ X, 64 columns": (jitted(None, lambda A, X: (A.T @ X).jax, E, X), exact.T @ np.asarray(X)),
        "xp ELL A @ X, 2 columns (the kernel, column by column, as xp takes it)": (
            jitted(None, lambda A, X: (A @ X).jax, E, X[:, :2]),
            want_X[:, :2],
        ),
        "xp ELL A @ X, 2 columns (XLA's gathers)": (
            jitted("xla", lambda A, X: (A @ X).jax, E, X[:, :2]),
            want_X[:, :2],
        ),
        "xp BCOO A @ X, 64 columns": (jitted(None, lambda A, X: (A @ X).jax, A, X), want_X),
        "JAX BCOO A @ X, 64 columns": (jitted(None, lambda A, X: A @ X, bcoo, X.jax), want_X),
        "dense A @ X, 64 columns": (jitted(None, lambda a, X: (a @ X).jax, xp.asarray(dense), X), want_X),
    }
    nbytes = len(flat) * 12 + 2 * side * 4
    title = f"Random: {side} x {side}, {len(flat):,} entries: `A @ x` (goal: at most 500 µs), `A @ X`"
    return run_case(title, calls, nbytes, rounds, budget, speed, {})


def small_matrices(side: int, rng: Any) -> dict[str, Any]:
    """Dense float32 matrices (NumPy) of the kinds the tests draw (tests/sparse_arrays/
    test_layout_formats.py), ``side`` x ``side``: banded (three diagonals), blocks of 8 x 8 (30 % of
    them), scattered (10 % of the entries); +0.0 where nothing is stored."""
    import numpy as np

    values = rng.standard_normal((side, side))
    i, j = np.indices((side, side))
    count = -(-side // 8)
    blocks = np.kron(rng.random((count, count)) < 0.3, np.ones((8, 8), bool))[:side, :side]
    kinds = {"banded": np.isin(j - i, (-2, 0, 3)), "blocks": blocks, "scattered": rng.random((side, side)) < 0.1}
    return {kind: np.where(mask, values, 0.0).astype(np.float32) for kind, mask in kinds.items()}


def small_case(sides: tuple[int, ...], rounds: int, budget: float) -> list[str]:
    """The goal "never slower than JAX's BCOO for any matrix the tests draw": each layout's ``A @ x``
    and ``A @ X`` (8 columns) as xp takes it and as XLA's formulation (the lowering a TPU does not
    take for these layouts), against JAX's BCOO of the same entries, at the tests' sizes and one
    larger: a product's own time (a call's dispatch left out) and xp's less JAX's. A product of the
    smallest matrices takes less time than this resolves (about a microsecond either way)."""
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import sparse as jsparse

    import xp
    import xp.sparse as xs

    layouts = {"banded": lambda a: xs.DIA.fromdense(a), "blocks": lambda a: xs.BSR.fromdense(a, block_shape=(8, 8)),
               "scattered": lambda a: xs.ELL.fromdense(a)}  # fmt: skip
    names = {"banded": "DIA", "blocks": "BSR", "scattered": "ELL"}
    rng = np.random.default_rng(3)
    calls: dict[str, tuple[Call, Any]] = {}
    rows = []
    for side in sides:
        for kind, dense in small_matrices(side, rng).items():
            A = layouts[kind](xp.asarray(dense))
            bcoo = jsparse.BCOO.fromdense(jnp.asarray(dense))
            for operand in (rng.standard_normal(side), rng.standard_normal((side, 8))):
                x = xp.asarray(operand.astype(np.float32))
                want = dense.astype(np.float64) @ np.asarray(x, np.float64)
                what = f"{side} x {side}, {kind}: `A @ {'x' if x.ndim == 1 else 'X'}`"
                names_of = (f"{what}, xp {names[kind]}", f"{what}, xp {names[kind]} xla", f"{what}, JAX BCOO")
                calls[names_of[0]] = (jitted(None, lambda A, x: (A @ x).jax, A, x), want)
                calls[names_of[1]] = (jitted("xla", lambda A, x: (A @ x).jax, A, x), want)
                calls[names_of[2]] = (jitted(None, lambda A, x: A @ x, bcoo, x.jax), want)
                rows.append((f"{what} (xp {names[kind]})", names_of))
    errors, once, each, failures = timed_calls(calls, rounds, budget)
    lines = ["### Small matrices: each layout against JAX's BCOO of the same entries (goal: never slower)", "",
             "| matrix, product | xp: µs a product | its XLA formulation | JAX BCOO | xp less JAX BCOO "
             "| xp: µs a call | relative error (xp) |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for what, (ours, xla, theirs) in rows:
        failed = [failures[name] for name in (ours, xla, theirs) if name in failures]
        if failed:
            lines.append(f"| {what} | failed: {failed[0]} | | | | | |")
            continue
        lines.append(f"| {what} | {each[ours] * 1e6:.1f} | {each[xla] * 1e6:.1f} | {each[theirs] * 1e6:.1f} "
                     f"| {(each[ours] - each[theirs]) * 1e6:+.1f} | {once[ours] * 1e6:.1f} | {errors[ours]:.1e} |")  # fmt: skip
    print("\n".join(lines), file=sys.stderr)
    return [*lines, ""]


def bsr_columns_case(matrices: tuple[tuple[int, int, float], ...], rounds: int, budget: float) -> list[str]:
    """Where a TPU takes the BSR kernel by itself (``BSR_KERNEL_COLUMNS`` and ``PREFETCHED_BYTES`` in
    xp/sparse/_products/tpu.py): the kernel against XLA's formulation (both forced) and the dense
    product, for ``x`` a vector and ``X`` of 8 and 128 columns, by block side and share of blocks;
    and for blocks of at most :data:`LARGER_COPIES_BELOW` a side the kernel's streamed walk copying
    more blocks a DMA than ``BLOCKS_PER_COPY`` (:data:`LARGER_COPIES`: a group of 8 such blocks is a
    copy of a few kilobytes)."""
    import numpy as np

    import xp
    import xp.sparse as xs
    from xp.sparse._products import tpu, tpu_bsr

    rng = np.random.default_rng(5)
    calls: dict[str, tuple[Call, Any]] = {}
    rows, too_many = [], set()
    for side, block, density in matrices:
        dense = block_sparse(side, block, rng, density)
        A = xs.BSR.fromdense(xp.asarray(dense), block_shape=(block, block))
        for columns in (None, 8, 128):
            x = xp.asarray(rng.standard_normal(side if columns is None else (side, columns)).astype(np.float32))
            want = dense.astype(np.float64) @ np.asarray(x, np.float64)
            what = f"{side} | {block} | {density:.0%} | {A.data.shape[0]} | {'vector' if columns is None else columns}"
            for kind in ("pallas", "xla"):
                calls[f"{what} {kind}"] = (jitted(kind, lambda A, x: (A @ x).jax, A, x), want)
            calls[f"{what} dense"] = (jitted(None, lambda a, x: (a @ x).jax, xp.asarray(dense), x), want)
            rows.append(what)
            if not tpu.bsr_indices_fit(A.data.shape[0]):  # (forced or not, XLA's formulation takes it)
                too_many.add(what)
                continue
            for per_copy in LARGER_COPIES if block <= LARGER_COPIES_BELOW else ():
                calls[f"{what} {per_copy} a copy"] = (jitted(
                    "pallas", lambda layout, x, A=A, n=per_copy: tpu_bsr.pallas_product(
                        *layout, x.jax, plan=A._plan, transposed=False, interpret=not on_tpu(), walk="streamed",
                        per_copy=n), (A._data, A._rows, A._cols, A._order), x), want)  # fmt: skip
    _, _, each, failures = timed_calls(calls, rounds, budget)

    def cell(name: str) -> str:
        return f"failed: {failures[name]}" if name in failures else f"{each[name] * 1e6:.1f}"

    lines = ["### BSR products: the kernel against XLA's formulation, by block and columns", "",
             "| side | block side | share of the blocks | blocks stored | columns | kernel: µs a product | XLA's formulation "
             "| kernel / XLA's | dense | "
             + " | ".join(f"kernel, {n} blocks a copy" for n in LARGER_COPIES) + " |",
             "|---:|---:|---:|---:|---|---:|---:|---:|---:|" + "---:|" * len(LARGER_COPIES)]  # fmt: skip
    for what in rows:
        kernel, xla = f"{what} pallas", f"{what} xla"
        if what in too_many:
            ours, ratio = "n/a: its blocks' indices exceed SMEM (PREFETCHED_BYTES)", ""
        else:
            ours = cell(kernel)
            ratio = "" if {kernel, xla} & set(failures) else f"{each[kernel] / each[xla]:.2f}"
        copies = " | ".join(cell(f"{what} {n} a copy") if f"{what} {n} a copy" in calls else "" for n in LARGER_COPIES)
        lines.append(f"| {what} | {ours} | {cell(xla)} | {ratio} | {cell(f'{what} dense')} | {copies} |")
    print("\n".join(lines), file=sys.stderr)
    return [*lines, ""]


def cg_case(nx: int, speed: float) -> list[str]:
    """The examples' generic CG (examples/conjugate_gradient.py, jitted whole) on the 2-D Poisson
    matrix as a DIA (its products on the TPU's kernels) to SciPy's default tolerance, against
    SciPy's CG on this machine's CPU: one solve each after a warm-up, iterations and time; and the
    same generic CG on the matrix as a BCOO (JAX's product), its first :data:`BCOO_CG_ITERATIONS`
    iterations (a full solve would take minutes), and the time an iteration's product takes to
    stream its data at the memory's ``speed`` (the dense matrix would take terabytes)."""
    import numpy as np
    import scipy.sparse.linalg
    from cg import _example

    import xp
    import xp.sparse as xs

    example = _example()
    diagonals, offsets = poisson_diagonals(nx)
    n = nx * nx
    A = xs.DIA((xp.asarray(diagonals), offsets), shape=(n, n))
    b_np = np.ones(n, np.float32)
    b = xp.asarray(b_np)

    def timed_solve(solve: Callable[..., Any], matrix: Any) -> tuple[Any, int, float]:
        solve(matrix, b).x.block_until_ready()  # compiled
        start = time.perf_counter()
        x, iterations, _ = solve(matrix, b)
        x.block_until_ready()
        return x, int(iterations), time.perf_counter() - start

    x, iterations, ours = timed_solve(example.jitted_cg(), A)
    bcoo = xs.BCOO.from_jax(bcoo_of(diagonals, offsets, n))
    x_bcoo, bcoo_iterations, bcoo_time = timed_solve(example.jitted_cg(maxiter=BCOO_CG_ITERATIONS), bcoo)
    S = example.poisson_2d(nx, "float32")
    exact = S.astype(np.float64)  # the residuals in float64: in float32, b - A @ x is mostly rounding

    def true_residual(solution: Any) -> float:
        return float(np.linalg.norm(b_np - exact @ np.asarray(solution, np.float64)) / np.linalg.norm(b_np))

    relative = true_residual(x)
    counted = []
    start = time.perf_counter()
    solution, info = scipy.sparse.linalg.cg(S, b_np, rtol=1e-5, callback=lambda _: counted.append(1))
    theirs = time.perf_counter() - start
    scipy_relative = true_residual(solution) if info == 0 else float("nan")
    product_bytes = (len(offsets) * n + 2 * n) * 4

    def row(name: str, count: int, seconds: float, residual: float) -> str:
        return f"| {name} | {count} | {seconds:.3f} | {seconds / max(count, 1) * 1e3:.3f} | {residual:.1e} |"

    lines = [f"### CG: the 2-D Poisson matrix, {n:,} rows, to SciPy's tolerance (rtol 1e-5), float32", "",
             "| implementation | iterations | s a solve | ms an iteration | true relative residual (float64) |",
             "|---|---:|---:|---:|---:|",
             row("xp DIA, the examples' jitted `cg`", iterations, ours, relative),
             row(f"xp BCOO (JAX's product), the same `cg`, its first {BCOO_CG_ITERATIONS} iterations", bcoo_iterations,
                 bcoo_time, true_residual(x_bcoo)),
             row("SciPy `cg` (CPU, CSR)", len(counted), theirs, scipy_relative), "",
             f"SciPy / xp: {theirs / ours:.1f} (goal on a TPU: at least 10, an iteration at most 0.3 ms). An "
             f"iteration's product streams {product_bytes / 1e6:.1f} MB: {product_bytes / speed * 1e3:.3f} ms at the "
             f"memory's speed; the dense matrix would take {n * n * 4 / 1e9:,.1f} GB."]  # fmt: skip
    print("\n".join(lines), file=sys.stderr)
    return [*lines, ""]


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    parser.add_argument("--cases", default=",".join(CASES), help=f"the matrices to run (of {', '.join(CASES)})")
    args = parser.parse_args(argv)
    import jax

    load_start = os.getloadavg()[0]
    device = jax.devices()[0]
    on_tpu = device.platform == "tpu"
    nx, side, block, random_side, entries, columns = SIZES["tpu" if on_tpu else "small"]
    rounds, budget = (3, 0.02) if args.quick else (15, 0.1)
    streamed = STREAMED_BYTES if on_tpu else STREAMED_BYTES // 32
    speed = memory_speed(streamed, rounds, budget)
    cases = {
        "poisson": lambda: poisson_case(nx, rounds, budget, speed),
        "random": lambda: random_case(random_side, entries, rounds, budget, speed),
        "blocks": lambda: blocks_case(side, block, columns, rounds, budget, speed),
        "small": lambda: small_case(SMALL_SIDES if on_tpu else SMALL_SIDES[:1], rounds, budget),
        "bsr_columns": lambda: bsr_columns_case(BSR_MATRICES if on_tpu else ((64, 8, 0.3),), rounds, budget),
        "cg": lambda: cg_case(nx, speed),
    }
    chosen = args.cases.split(",")
    if unknown := set(chosen) - set(CASES):
        parser.error(f"--cases: unknown {sorted(unknown)} (of {', '.join(CASES)})")
    lines = []
    for name in (name for name in CASES if name in chosen):
        try:
            lines += cases[name]()
        except Exception as error:  # one case's failure (a kernel that does not compile) is its row, not the run's end
            traceback.print_exc()
            failed = [f"### The {name} case failed", "", f"`{first_line(error)}`"]
            print("\n".join(failed), file=sys.stderr)
            lines += [*failed, ""]
    where = (f"{device.device_kind}" if on_tpu else f"{device.platform} ({describe()}): small matrices, the Pallas "
             "kernels interpreted; these times say nothing about a TPU")  # fmt: skip
    head = [
        "## Sparse products on a TPU: xp.sparse.DIA, BSR and ELL",
        "",
        f"Measured with jax {jax.__version__}, Python {platform.python_version()}, on {where}; load average "
        f"{load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. Medians of {rounds} interleaved rounds. "
        f"The memory's speed: {speed / 1e9:.0f} GB/s (XLA's `b + 1` streaming {streamed / 1e9:.1f} GB). "
        '"pallas" and "xla": the two lowerings of a DIA, BSR or ELL product (xp/sparse/_products/tpu.py; `ON_TPU` '
        "there says which a TPU takes). bench/sparse_tpu.py describes the matrices.",
        "",
    ]
    return "\n".join(head + lines)


if __name__ == "__main__":
    print(main(sys.argv[1:]))
