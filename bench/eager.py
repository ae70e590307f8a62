"""Eager dispatch cost: xp against jax.numpy, op by op, in the same run.

Each case is a pair of zero-argument callables (xp, jax.numpy) on inputs of one shape. The two
are timed interleaved (xp, jnp, xp, jnp, ...) in rounds, each round timing a batch of calls with
process CPU time and wall-clock time, the order rotating from round to round; a pass over all the cases takes the
median over its rounds, and the whole pass is repeated: the reported time is the median over
passes, with the ratio xp / jax.numpy. A ratio below 1 means xp is faster. Results are written to
bench/RESULTS.md.

    python bench/eager.py            # all cases
    python bench/eager.py --quick    # fewer rounds
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from _machine import describe

import xp

SHAPES: list[tuple[int, ...]] = [(), (8,), (1000,), (1000, 1000)]


@dataclass
class Case:
    name: str
    shape: tuple[int, ...]
    ours: Callable[[], object]
    theirs: Callable[[], object]
    # The dispatch floor: the kernels the call needs, each a bare ``jax.jit`` of the jax.numpy
    # computation called with the jax arrays positionally (no Python around it); None where
    # xp's call dispatches no kernel (a conversion, a view).
    floor: Callable[[], object] | None = None


def bare(fn: Callable[..., object], *args: object) -> Callable[[], object]:
    """A zero-argument call of ``jax.jit(fn)`` on ``args``: one cached kernel, nothing else."""
    kernel = jax.jit(fn)
    return lambda: kernel(*args)


def _arrays(shape: tuple[int, ...]) -> tuple[xp.Array, jax.Array, xp.Array, jax.Array]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32) + 2.0
    b = rng.standard_normal(shape).astype(np.float32) + 2.0
    return xp.asarray(a), jnp.asarray(a), xp.asarray(b), jnp.asarray(b)


def _slice(ndim: int) -> tuple[slice, ...]:
    return (slice(1, 5),) * min(ndim, 1)


def elementwise_cases(shape: tuple[int, ...]) -> list[Case]:
    x, jx, y, jy = _arrays(shape)
    raw = jx
    index = (0,) * len(shape)
    less, select = jax.jit(jnp.less), jax.jit(jnp.where)
    # a Python scalar is data to the floor's kernel, as to xp's (a kernel per value would compile per value)
    scalar, one = jnp.float32(2.5), jnp.float32(1.0)
    cases = [
        Case("add", shape, lambda: x + y, lambda: jx + jy, bare(jnp.add, jx, jy)),
        Case("multiply by a Python scalar", shape, lambda: x * 2.5, lambda: jx * 2.5, bare(jnp.multiply, jx, scalar)),
        Case("less (comparison)", shape, lambda: x < y, lambda: jx < jy, bare(jnp.less, jx, jy)),
        Case(
            "where",
            shape,
            lambda: xp.where(x < y, x, y),
            lambda: jnp.where(jx < jy, jx, jy),
            lambda: select(less(jx, jy), jx, jy),
        ),
        Case(
            "astype",
            shape,
            lambda: xp.astype(x, xp.int32),
            lambda: jx.astype(jnp.int32),
            bare(lambda a: a.astype(jnp.int32), jx),
        ),
        Case("asarray of a jax array", shape, lambda: xp.asarray(raw), lambda: jnp.asarray(raw)),
    ]
    if shape:
        key = _slice(len(shape))
        cases.append(Case("slice x[1:5]", shape, lambda: x[key], lambda: jx[key], bare(lambda a: a[key], jx)))

        def ours_set() -> object:
            x[index] = 1.0
            return x

        def theirs_set() -> object:
            return jx.at[index].set(1.0)

        cases.append(
            Case("setitem x[0] = 1.0", shape, ours_set, theirs_set, bare(lambda a, v: a.at[index].set(v), jx, one))
        )
        # integer-array indices: xp checks them eagerly (IndexError), jax.numpy clamps or fills
        picks = np.array([3, 0, 2, 1], np.int32) % shape[0]
        xi, ji = xp.asarray(picks), jnp.asarray(picks)
        cases.append(Case("take (4 indices)", shape, lambda: xp.take(x, xi, axis=0), lambda: jnp.take(jx, ji, axis=0),
                          bare(lambda a, i: jnp.take(a, i, axis=0), jx, ji)))  # fmt: skip
        cases.append(
            Case("x[index array] (4 indices)", shape, lambda: x[xi], lambda: jx[ji], bare(lambda a, i: a[i], jx, ji))
        )
    else:
        cases.append(Case("slice x[...]", shape, lambda: x[...], lambda: jx[...]))

        def ours_set0() -> object:
            x[...] = 1.0
            return x

        cases.append(Case("setitem x[...] = 1.0", shape, ours_set0, lambda: jx.at[...].set(1.0),
                          bare(lambda a, v: a.at[...].set(v), jx, one)))  # fmt: skip
    return cases


def function_cases(shape: tuple[int, ...]) -> list[Case]:
    """The chapters of the second issue: reductions, sorting, searching, manipulation, linalg, fft."""
    x, jx, y, jy = _arrays(shape)
    cases = [
        Case("sum", shape, lambda: xp.sum(x), lambda: jnp.sum(jx), bare(jnp.sum, jx)),
        Case("mean", shape, lambda: xp.mean(x), lambda: jnp.mean(jx), bare(jnp.mean, jx)),
        Case("max", shape, lambda: xp.max(x), lambda: jnp.max(jx), bare(jnp.max, jx)),
        Case("std", shape, lambda: xp.std(x), lambda: jnp.std(jx), bare(jnp.std, jx)),
    ]
    if shape:
        flat = (-1,)
        cases += [
            Case(
                "sort",
                shape,
                lambda: xp.sort(x, axis=-1),
                lambda: jnp.sort(jx, axis=-1, stable=True),
                bare(lambda a: jnp.sort(a, axis=-1, stable=True), jx),
            ),
            Case("argmax", shape, lambda: xp.argmax(x), lambda: jnp.argmax(jx), bare(jnp.argmax, jx)),
            Case(
                "concat",
                shape,
                lambda: xp.concat([x, y]),
                lambda: jnp.concatenate([jx, jy]),
                bare(lambda a, b: jnp.concatenate([a, b]), jx, jy),
            ),
            Case(
                "reshape",
                shape,
                lambda: xp.reshape(x, flat),
                lambda: jnp.reshape(jx, flat),
                bare(lambda a: jnp.reshape(a, flat), jx),
            ),
        ]
    if len(shape) == 2:
        n = shape[0]
        vector = xp.ones(n, dtype=xp.float32)
        jvector = jnp.ones(n, dtype=jnp.float32)
        cases += [
            Case("matmul", shape, lambda: x @ y, lambda: jx @ jy, bare(jnp.matmul, jx, jy)),
            Case(
                "linalg.solve",
                shape,
                lambda: xp.linalg.solve(x, vector),
                lambda: jnp.linalg.solve(jx, jvector),
                bare(jnp.linalg.solve, jx, jvector),
            ),
            Case("fft.fft", shape, lambda: xp.fft.fft(x), lambda: jnp.fft.fft(jx), bare(jnp.fft.fft, jx)),
        ]
    elif len(shape) == 1:
        cases.append(Case("fft.fft", shape, lambda: xp.fft.fft(x), lambda: jnp.fft.fft(jx), bare(jnp.fft.fft, jx)))
    return cases


FUNCTION_SHAPES: list[tuple[int, ...]] = [(), (8,), (8, 8), (1000,), (200, 200)]


def block(result: object) -> None:
    for leaf in jax.tree.leaves(result):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def interleaved(cases: dict[str, Callable[[], object]], rounds: int, budget: float,
                most: int | None = None) -> dict[str, float]:  # fmt: skip
    """Median wall-clock seconds per call of each case, the cases interleaved within every round;
    each case gets a batch of calls lasting about ``budget`` seconds per round (at most ``most``)."""
    batches = {}
    for name, fn in cases.items():  # compile, warm up, size the batch
        block(fn())
        start = time.perf_counter()
        block(fn())
        size = max(1, int(budget / max(time.perf_counter() - start, 1e-6)))
        batches[name] = size if most is None else min(most, size)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(batches[name]):
                result = fn()
            block(result)
            times[name].append((time.perf_counter() - start) / batches[name])
    return {name: statistics.median(t) for name, t in times.items()}


BY_WALL_CLOCK = jax.default_backend() != "cpu"
"""What a case is measured by: process CPU time on a CPU (steadier than wall-clock time on a shared
machine), wall-clock time on an accelerator (there a call's cost is the host's wait for the device,
which CPU time leaves out, and the host's CPU clock may advance in steps of 10 ms)."""
CLOCK = "wall-clock time" if BY_WALL_CLOCK else "CPU time"


def schedule(quick: bool, rounds: int, budget: float) -> tuple[int, float, int]:
    """``(rounds, seconds per case, passes)`` of a run: few for ``quick``; on an accelerator, whose
    host is not shared, one pass of fewer rounds (its device time is rationed)."""
    if quick:
        return 3, 0.05, 1
    return (rounds, budget / 2.5, 1) if BY_WALL_CLOCK else (rounds, budget, 3)


@dataclass
class Timed:
    """Median seconds per call of one case by :data:`CLOCK`: xp, jax.numpy and (where the case has
    one) the floor; and the wall-clock medians of xp and jax.numpy from the same batches."""

    case: Case
    ours: float
    theirs: float
    floor: float | None = None
    ours_wall: float = float("nan")
    theirs_wall: float = float("nan")


def time_case(case: Case, rounds: int, budget: float) -> Timed:
    """Time the case's callables interleaved (xp, jax.numpy, floor, xp, ...), medians of rounds."""
    fns = [case.ours, case.theirs] + ([case.floor] if case.floor is not None else [])
    for fn in fns:  # compile and warm up
        for _ in range(3):
            block(fn())
    # batches sized by wall-clock time: on an accelerator a call waits for the device at little CPU
    # time, and batches sized by CPU time would take minutes
    start = time.perf_counter()
    block(case.theirs())
    single = max(time.perf_counter() - start, 1e-7)
    calls = max(1, min(2000, int(budget / single / rounds / len(fns))))
    samples: list[list[float]] = [[] for _ in fns]
    walls: list[list[float]] = [[] for _ in fns]
    timed = list(zip(fns, samples, walls, strict=True))
    for i in range(rounds):
        # the order rotates (xp first, then jax.numpy first, ...): whatever the previous batch leaves
        # behind (its results to free, a cold cache) falls on each in turn
        for fn, sink, wall_sink in timed[i % len(timed) :] + timed[: i % len(timed)]:
            start, wall_start = time.process_time(), time.perf_counter()
            for _ in range(calls):
                result = fn()
            block(result)
            wall = (time.perf_counter() - wall_start) / calls
            sink.append(wall if BY_WALL_CLOCK else (time.process_time() - start) / calls)
            wall_sink.append(wall)
    medians = [statistics.median(s) for s in samples]
    return Timed(case, *medians, ours_wall=statistics.median(walls[0]), theirs_wall=statistics.median(walls[1]))


def run(cases: list[Case], rounds: int, budget: float, passes: int) -> list[Timed]:
    """Time every case, ``passes`` times over: the medians over the passes (a burst of load on the
    shared machine spoils a case in one pass, not in all of them)."""
    timings: list[list[Timed]] = [[] for _ in cases]
    for _ in range(passes):
        for case, sink in zip(cases, timings, strict=True):
            sink.append(time_case(case, rounds, budget))
    rows = []
    for case, timed in zip(cases, timings, strict=True):
        floors = [t.floor for t in timed if t.floor is not None]
        row = Timed(
            case,
            statistics.median(t.ours for t in timed),
            statistics.median(t.theirs for t in timed),
            statistics.median(floors) if floors else None,
            statistics.median(t.ours_wall for t in timed),
            statistics.median(t.theirs_wall for t in timed),
        )
        rows.append(row)
        floor = "" if row.floor is None else f"   floor {row.floor * 1e6:10.2f} us"
        print(f"{case.name:34} {case.shape!s:14} xp {row.ours * 1e6:10.2f} us   jnp {row.theirs * 1e6:10.2f} us"
              f"{floor}   ratio {row.ours / row.theirs:5.2f}", file=sys.stderr)  # fmt: skip
    return rows


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _grid(rows: list[Timed], cell: Callable[[Timed], str | None]) -> tuple[list[tuple[int, ...]], list[str]]:
    """Table rows (operation by shape) of ``cell`` for each timing; the shapes in order."""
    shapes = sorted({r.case.shape for r in rows}, key=lambda s: (len(s), s))
    names = list(dict.fromkeys(r.case.name for r in rows))
    by = {(r.case.name, r.case.shape): r for r in rows}
    lines = []
    for name in names:
        cells = [cell(by[name, shape]) if (name, shape) in by else None for shape in shapes]
        if any(c is not None for c in cells):
            lines.append(f"| {name} | " + " | ".join(c or "" for c in cells) + " |")
    return shapes, lines


def _header(title: str, note: str, shapes: list[tuple[int, ...]]) -> list[str]:
    return [f"## {title}", "", note, "", "| operation | " + " | ".join(str(s) for s in shapes) + " |",
            "|---|" + "---:|" * len(shapes)]  # fmt: skip


def markdown(title: str, rows: list[Timed], note: str) -> str:
    shapes, lines = _grid(rows, lambda r: f"{r.ours / r.theirs:.2f} ({r.ours * 1e6:.1f} / {r.theirs * 1e6:.1f} µs)")
    means = []
    for shape in shapes:
        ratios = [r.ours / r.theirs for r in rows if r.case.shape == shape]
        means.append(f"**{geometric_mean(ratios):.2f}**")
    lines.append("| geometric mean of the ratios | " + " | ".join(means) + " |")
    walls = [geometric_mean([r.ours_wall / r.theirs_wall for r in rows if r.case.shape == s]) for s in shapes]
    lines.append("| the same, wall-clock times | " + " | ".join(f"{w:.2f}" for w in walls) + " |")
    return "\n".join(_header(title, note, shapes) + lines) + "\n"


def floor_markdown(title: str, rows: list[Timed], note: str) -> str:
    """What xp and jax.numpy add to the dispatch floor, and the lowest ratio the floor allows."""

    def cell(r: Timed) -> str | None:
        if r.floor is None:
            return None
        return f"{(r.ours - r.floor) * 1e6:+.1f} / {(r.theirs - r.floor) * 1e6:+.1f} µs ({r.floor / r.theirs:.2f})"

    shapes, lines = _grid([r for r in rows if r.case.shape in SMALL_SHAPES], cell)
    return "\n".join(_header(title, note, shapes) + lines) + "\n"


SMALL_SHAPES = {(), (8,), (8, 8)}
"""Where the call, not the computation, is the time: the shapes of the dispatch-floor tables."""


def environment() -> str:
    return (
        f"Measured with jax {jax.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
        f"on {jax.devices()[0].platform} {jax.devices()[0].device_kind} ({describe()}), "
        f"JAX_ENABLE_X64={os.environ.get('JAX_ENABLE_X64', '0')}."
    )


NOTE = (
    f"Each cell: the ratio of median {CLOCK}s per call (xp / jax.numpy; below 1 is faster), then both times;"
    " the last row, the geometric mean of the ratios of median wall-clock times of the same batches. "
)


FLOOR_NOTE = (
    "The floor of a call is the kernels it needs, each a bare `jax.jit` of the jax.numpy computation called"
    " with jax arrays positionally: one cached kernel's dispatch and run, with no Python around it (timed"
    f" in the same rounds as xp and jax.numpy). Each cell: µs of {CLOCK} per call that xp adds to the floor"
    " / that jax.numpy adds, then (in parentheses) floor / jax.numpy, the lowest ratio to jax.numpy that"
    " any namespace dispatching these kernels through jax.jit could reach. Rows without a floor dispatch no"
    " kernel in xp (a conversion, a view). "
)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    args = parser.parse_args(argv)
    # (a call is a few µs; its CPU time varies from batch to batch on a shared machine: 15 rounds,
    # 1.5 s in all per case, interleaved; and from minute to minute: three passes, a median)
    rounds, budget, passes = schedule(args.quick, 15, 1.5)
    elementwise = run([c for shape in SHAPES for c in elementwise_cases(shape)], rounds, budget, passes)
    functions = run([c for shape in FUNCTION_SHAPES for c in function_cases(shape)], rounds, budget, passes)
    return (
        markdown("Eager calls: element-wise, conversion and indexing", elementwise, NOTE + environment())
        + "\n"
        + markdown("Eager calls: reductions, sorting, manipulation, linalg, fft", functions, NOTE + environment())
        + "\n"
        + floor_markdown(
            "Eager calls at small shapes: what each adds to the dispatch floor",
            elementwise + functions,
            FLOOR_NOTE + environment(),
        )
    )


if __name__ == "__main__":
    print(main())
