"""Eager dispatch cost: xp against jax.numpy, op by op, in the same run.

Each case is a pair of zero-argument callables (xp, jax.numpy) on inputs of one shape. The two
are timed interleaved (xp, jnp, xp, jnp, ...) in rounds, each round timing a batch of calls with
process CPU time; the median over rounds is reported, with the ratio xp / jax.numpy. A ratio
below 1 means xp is faster. Results are written to bench/RESULTS.md.

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

import xp

SHAPES: list[tuple[int, ...]] = [(), (8,), (1000,), (1000, 1000)]


@dataclass
class Case:
    name: str
    shape: tuple[int, ...]
    ours: Callable[[], object]
    theirs: Callable[[], object]


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
    cases = [
        Case("add", shape, lambda: x + y, lambda: jx + jy),
        Case("multiply by a Python scalar", shape, lambda: x * 2.5, lambda: jx * 2.5),
        Case("less (comparison)", shape, lambda: x < y, lambda: jx < jy),
        Case("where", shape, lambda: xp.where(x < y, x, y), lambda: jnp.where(jx < jy, jx, jy)),
        Case("astype", shape, lambda: xp.astype(x, xp.int32), lambda: jx.astype(jnp.int32)),
        Case("asarray of a jax array", shape, lambda: xp.asarray(raw), lambda: jnp.asarray(raw)),
    ]
    if shape:
        key = _slice(len(shape))
        cases.append(Case("slice x[1:5]", shape, lambda: x[key], lambda: jx[key]))

        def ours_set() -> object:
            x[index] = 1.0
            return x

        def theirs_set() -> object:
            return jx.at[index].set(1.0)

        cases.append(Case("setitem x[0] = 1.0", shape, ours_set, theirs_set))
        # integer-array indices: xp checks them eagerly (IndexError), jax.numpy clamps or fills
        picks = np.array([3, 0, 2, 1], np.int32) % shape[0]
        xi, ji = xp.asarray(picks), jnp.asarray(picks)
        cases.append(Case("take (4 indices)", shape, lambda: xp.take(x, xi, axis=0), lambda: jnp.take(jx, ji, axis=0)))
        cases.append(Case("x[index array] (4 indices)", shape, lambda: x[xi], lambda: jx[ji]))
    else:
        cases.append(Case("slice x[...]", shape, lambda: x[...], lambda: jx[...]))

        def ours_set0() -> object:
            x[...] = 1.0
            return x

        cases.append(Case("setitem x[...] = 1.0", shape, ours_set0, lambda: jx.at[...].set(1.0)))
    return cases


def function_cases(shape: tuple[int, ...]) -> list[Case]:
    """The chapters of the second issue: reductions, sorting, searching, manipulation, linalg, fft."""
    x, jx, y, jy = _arrays(shape)
    cases = [
        Case("sum", shape, lambda: xp.sum(x), lambda: jnp.sum(jx)),
        Case("mean", shape, lambda: xp.mean(x), lambda: jnp.mean(jx)),
        Case("max", shape, lambda: xp.max(x), lambda: jnp.max(jx)),
        Case("std", shape, lambda: xp.std(x), lambda: jnp.std(jx)),
    ]
    if shape:
        flat = (-1,)
        cases += [
            Case("sort", shape, lambda: xp.sort(x, axis=-1), lambda: jnp.sort(jx, axis=-1, stable=True)),
            Case("argmax", shape, lambda: xp.argmax(x), lambda: jnp.argmax(jx)),
            Case("concat", shape, lambda: xp.concat([x, y]), lambda: jnp.concatenate([jx, jy])),
            Case("reshape", shape, lambda: xp.reshape(x, flat), lambda: jnp.reshape(jx, flat)),
        ]
    if len(shape) == 2:
        n = shape[0]
        vector = xp.ones(n, dtype=xp.float32)
        jvector = jnp.ones(n, dtype=jnp.float32)
        cases += [
            Case("matmul", shape, lambda: x @ y, lambda: jx @ jy),
            Case("linalg.solve", shape, lambda: xp.linalg.solve(x, vector), lambda: jnp.linalg.solve(jx, jvector)),
            Case("fft.fft", shape, lambda: xp.fft.fft(x), lambda: jnp.fft.fft(jx)),
        ]
    elif len(shape) == 1:
        cases.append(Case("fft.fft", shape, lambda: xp.fft.fft(x), lambda: jnp.fft.fft(jx)))
    return cases


FUNCTION_SHAPES: list[tuple[int, ...]] = [(), (8,), (8, 8), (1000,), (200, 200)]


def _block(result: object) -> None:
    for leaf in jax.tree.leaves(result):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def time_pair(case: Case, rounds: int, budget: float) -> tuple[float, float]:
    """Median seconds per call of (xp, jax.numpy), interleaved."""
    for fn in (case.ours, case.theirs):  # compile and warm up
        for _ in range(3):
            _block(fn())
    start = time.process_time()
    _block(case.theirs())
    single = max(time.process_time() - start, 1e-7)
    calls = max(1, min(2000, int(budget / single / rounds / 2)))
    ours, theirs = [], []
    for _ in range(rounds):
        for fn, sink in ((case.ours, ours), (case.theirs, theirs)):
            start = time.process_time()
            for _ in range(calls):
                result = fn()
            _block(result)
            sink.append((time.process_time() - start) / calls)
    return statistics.median(ours), statistics.median(theirs)


def run(cases: list[Case], rounds: int, budget: float) -> list[tuple[Case, float, float]]:
    rows = []
    for case in cases:
        ours, theirs = time_pair(case, rounds, budget)
        rows.append((case, ours, theirs))
        print(f"{case.name:34} {case.shape!s:14} xp {ours * 1e6:10.2f} us   jnp {theirs * 1e6:10.2f} us   "
              f"ratio {ours / theirs:5.2f}", file=sys.stderr)  # fmt: skip
    return rows


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def markdown(title: str, rows: list[tuple[Case, float, float]], note: str) -> str:
    shapes = sorted({c.shape for c, _, _ in rows}, key=lambda s: (len(s), s))
    names = list(dict.fromkeys(c.name for c, _, _ in rows))
    by = {(c.name, c.shape): (o, t) for c, o, t in rows}
    lines = [f"## {title}", "", note, "", "| operation | " + " | ".join(str(s) for s in shapes) + " |",
             "|---|" + "---:|" * len(shapes)]  # fmt: skip
    for name in names:
        cells = []
        for shape in shapes:
            if (name, shape) in by:
                o, t = by[name, shape]
                cells.append(f"{o / t:.2f} ({o * 1e6:.1f} / {t * 1e6:.1f} µs)")
            else:
                cells.append("")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    means = []
    for shape in shapes:
        ratios = [by[n, shape][0] / by[n, shape][1] for n in names if (n, shape) in by]
        means.append(f"**{geometric_mean(ratios):.2f}**")
    lines.append("| geometric mean of the ratios | " + " | ".join(means) + " |")
    return "\n".join(lines) + "\n"


def environment() -> str:
    return (
        f"Measured with jax {jax.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
        f"on {jax.devices()[0].platform} ({platform.machine()}, {os.cpu_count()} CPUs), "
        f"JAX_ENABLE_X64={os.environ.get('JAX_ENABLE_X64', '0')}."
    )


NOTE = "Each cell: the ratio of median CPU times per call (xp / jax.numpy; below 1 is faster), then both times. "


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    args = parser.parse_args(argv)
    rounds, budget = (3, 0.05) if args.quick else (9, 0.6)
    elementwise = run([c for shape in SHAPES for c in elementwise_cases(shape)], rounds, budget)
    functions = run([c for shape in FUNCTION_SHAPES for c in function_cases(shape)], rounds, budget)
    return (
        markdown("Eager calls: element-wise, conversion and indexing", elementwise, NOTE + environment())
        + "\n"
        + markdown("Eager calls: reductions, sorting, manipulation, linalg, fft", functions, NOTE + environment())
    )


if __name__ == "__main__":
    print(main())
