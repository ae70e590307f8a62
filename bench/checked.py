"""The cost of checked mode (``xp.checked``, docs/checked.md) on an indexing-heavy jitted function.

One function, a loop (unrolled by the trace) of reads ``x[i]`` with traced integers, ``take``,
``take_along_axis`` and scattered writes ``x[idx] = v``, written with jax.numpy and with xp, and
timed four ways in the same run, interleaved in rounds (process CPU time per call, medians):

- ``jax.numpy, jitted``: the reference;
- ``xp, jitted``: the same function with xp (outside checked mode: no check is emitted);
- ``jax.jit(xp.checked(f))``: checked and compiled once;
- ``xp.checked(jax.jit(f))``: checkify runs (traces and rewrites the jaxpr) on every call.

    python bench/checked.py            # prints the section of bench/RESULTS.md
    python bench/checked.py --quick    # fewer rounds
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from _machine import describe
from eager import block

import xp

SIZE, INDICES, STEPS = 100_000, 1_000, 8


def jnp_function(x: jax.Array, idx: jax.Array, picks: jax.Array) -> jax.Array:
    acc = jnp.zeros_like(x)
    for k in range(STEPS):
        scale = x[picks[k]]  # a read at a traced index
        taken = jnp.take(x, idx, mode="clip")
        along = jnp.take_along_axis(x, jnp.flip(idx), axis=0, mode="clip")
        acc = acc.at[idx].set(taken * scale + along)  # a scattered write
        x = x.at[picks[k]].set(scale + 1)
    return acc


def xp_function(x: xp.Array, idx: xp.Array, picks: xp.Array) -> xp.Array:
    acc = xp.zeros_like(x)
    for k in range(STEPS):
        scale = x[picks[k]]
        taken = xp.take(x, idx)
        along = xp.take_along_axis(x, xp.flip(idx), axis=0)
        acc[idx] = taken * scale + along
        x[picks[k]] = scale + 1
    return acc


def measure(cases: dict[str, Callable[[], object]], rounds: int, calls: int) -> dict[str, float]:
    """Median seconds per call of each case, the cases interleaved within every round."""
    for fn in cases.values():  # compile and warm up
        for _ in range(3):
            block(fn())
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            start = time.process_time()
            for _ in range(calls):
                result = fn()
            block(result)
            times[name].append((time.process_time() - start) / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    args = parser.parse_args(argv)
    rounds, calls = (3, 5) if args.quick else (9, 20)
    rng = np.random.default_rng(0)
    values = rng.standard_normal(SIZE).astype(np.float32)
    idx = rng.integers(0, SIZE, INDICES).astype(np.int32)
    picks = rng.integers(-SIZE, SIZE, STEPS).astype(np.int32)
    jx, jidx, jpicks = jnp.asarray(values), jnp.asarray(idx), jnp.asarray(picks)
    x, xidx, xpicks = xp.asarray(values), xp.asarray(idx), xp.asarray(picks)
    reference, plain = jax.jit(jnp_function), jax.jit(xp_function)
    checked_outside, checked_inside = jax.jit(xp.checked(xp_function)), xp.checked(jax.jit(xp_function))
    cases: dict[str, Callable[[], object]] = {
        "jax.numpy, jitted": lambda: reference(jx, jidx, jpicks),
        "xp, jitted": lambda: plain(x, xidx, xpicks),
        "jax.jit(xp.checked(f))": lambda: checked_outside(x, xidx, xpicks),
        "xp.checked(jax.jit(f))": lambda: checked_inside(x, xidx, xpicks),
    }
    expected = np.asarray(cases["jax.numpy, jitted"]())
    for name, fn in cases.items():  # the same results, all four ways
        np.testing.assert_allclose(np.asarray(fn()), expected, rtol=1e-6, err_msg=name)
    medians = measure(cases, rounds, calls)
    base = medians["jax.numpy, jitted"]
    for name, t in medians.items():
        print(f"{name:26} {t * 1e6:10.1f} us   ratio {t / base:6.2f}", file=sys.stderr)
    rows = "\n".join(f"| {name} | {t * 1e6:.1f} µs | {t / base:.2f} |" for name, t in medians.items())
    return (
        "## Checked mode: an indexing-heavy jitted function\n\n"
        f"`python bench/checked.py`: {STEPS} steps, each a read `x[i]` at a traced index, `take` and "
        f"`take_along_axis` of {INDICES} indices from {SIZE} float32 elements, a scattered write of "
        f"{INDICES} elements and a write `x[i] = v` (bench/checked.py). Median process CPU time per "
        f"call over {rounds} interleaved rounds of {calls} calls; the ratio is to jax.numpy. Measured "
        f"with jax {jax.__version__}, Python {platform.python_version()}, on {jax.devices()[0].platform} "
        f"({describe()}), JAX_ENABLE_X64={os.environ.get('JAX_ENABLE_X64', '0')}.\n\n"
        "| way | time per call | ratio |\n|---|---:|---:|\n" + rows + "\n"
    )


if __name__ == "__main__":
    print(main())
