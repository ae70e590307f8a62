"""float32 products, linear algebra and FFTs: xp's default (full float32 precision) against the
fast path JAX's own setting opts into (``jax.default_matmul_precision("default")``: on a TPU one
bfloat16 pass per product), in time and in error against float64 NumPy.

On a CPU both are the same computation; the section this writes is meant for accelerators, and
names the device it ran on. Timing: jitted calls, wall-clock with a wait for the result, medians
of interleaved rounds (the device's time is what differs between the two).

    python bench/precision.py [--quick]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from eager import environment

import xp

FAST = "default"  # the value of jax.default_matmul_precision that opts into XLA's fastest products


def _cases(n: int) -> list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...], np.ndarray]]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    spd = a @ a.T / n + np.eye(n)
    v = rng.standard_normal(n)
    signal = rng.standard_normal(n * n)
    image = rng.standard_normal((n, n))
    return [
        (f"matmul ({n}, {n}) @ ({n}, {n})", xp.matmul, (a, b), a @ b),
        (f"matmul ({n}, {n}) @ ({n},)", xp.matmul, (a, v), a @ v),
        (f"tensordot ({n}, {n}), axes=1", lambda x, y: xp.tensordot(x, y, axes=1), (a, b), a @ b),
        (f"vecdot ({n}, {n})", xp.vecdot, (a, b), np.sum(a * b, axis=-1)),
        (f"linalg.matrix_power ({n}, {n}), 3", lambda x: xp.linalg.matrix_power(x, 3), (spd,),
         np.linalg.matrix_power(spd, 3)),
        (f"linalg.solve ({n}, {n})", xp.linalg.solve, (spd, v[:, None]), np.linalg.solve(spd, v[:, None])),
        (f"linalg.inv ({n}, {n})", xp.linalg.inv, (spd,), np.linalg.inv(spd)),
        (f"linalg.cholesky ({n}, {n})", xp.linalg.cholesky, (spd,), np.linalg.cholesky(spd)),
        (f"linalg.qr ({n}, {n}), Q @ R", lambda x: xp.matmul(*xp.linalg.qr(x)), (a,), a),
        (f"linalg.eigvalsh ({n}, {n})", xp.linalg.eigvalsh, (spd,), np.linalg.eigvalsh(spd)),
        (f"linalg.svdvals ({n}, {n})", xp.linalg.svdvals, (a,), np.linalg.svd(a, compute_uv=False)),
        (f"linalg.pinv ({n}, {n})", xp.linalg.pinv, (spd,), np.linalg.pinv(spd)),
        (f"fft.fft ({n * n},)", xp.fft.fft, (signal,), np.fft.fft(signal)),
        (f"fft.rfftn ({n}, {n})", xp.fft.rfftn, (image,), np.fft.rfftn(image)),
    ]  # fmt: skip


def _relative_error(got: Any, want: np.ndarray) -> float:
    got = np.asarray(got).astype(want.dtype)
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def _median_ms(call: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        jax.block_until_ready(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(n: int, rounds: int) -> list[tuple[str, float, float, float, float]]:
    rows = []
    for name, function, inputs, want in _cases(n):
        args = [xp.asarray(x.astype(np.float32)) for x in inputs]
        full = jax.jit(lambda *a, f=function: f(*a))
        with jax.default_matmul_precision(FAST):
            fast = jax.jit(lambda *a, f=function: f(*a))
            fast_result = fast(*args)  # traced and compiled under the setting
        full_result = full(*args)
        full_times, fast_times = [], []
        for _ in range(rounds):  # interleaved
            full_times.append(_median_ms(functools.partial(full, *args), 3))
            with jax.default_matmul_precision(FAST):
                fast_times.append(_median_ms(functools.partial(fast, *args), 3))
        rows.append((
            name,
            statistics.median(full_times), _relative_error(full_result, want),
            statistics.median(fast_times), _relative_error(fast_result, want),
        ))  # fmt: skip
        print(f"{name:40} default {rows[-1][1]:9.3f} ms  {rows[-1][2]:.1e}   opt-in {rows[-1][3]:9.3f} ms"
              f"  {rows[-1][4]:.1e}", file=sys.stderr)  # fmt: skip
    return rows


def markdown(rows: list[tuple[str, float, float, float, float]]) -> str:
    """The section of measured ``rows``."""
    lines = [
        "## float32 precision: xp's default against the opt-in fast path",
        "",
        "xp computes float32 products, linear algebra and FFTs at full float32 precision unless JAX's "
        f'own setting is given (here `jax.default_matmul_precision("{FAST}")`, XLA\'s fastest). Jitted calls, '
        "median wall-clock ms per call (with a wait for the result) of interleaved rounds; error: "
        "relative Frobenius-norm error against NumPy's float64 result from the same float32 inputs. " + environment(),
        "",
        "| computation | default ms | default error | opt-in ms | opt-in error | time default / opt-in |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, full_ms, full_err, fast_ms, fast_err in rows:
        lines.append(
            f"| {name} | {full_ms:.3f} | {full_err:.1e} | {fast_ms:.3f} | {fast_err:.1e} | {full_ms / fast_ms:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small matrices, few rounds (a smoke test)")
    args = parser.parse_args(argv)
    n, rounds = (64, 2) if args.quick else (1024, 5)
    return markdown(measure(n, rounds))


if __name__ == "__main__":
    print(main())
