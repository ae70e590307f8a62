"""The native sparse kernel's thread synchronization against the simplest correct one.

A parallel product of xp/sparse/_native_spmm.cc runs its chunks on the calling thread and on
helpers from XLA's thread pool. As built, the caller spins for a moment before it blocks on the
loop's condition variable, and a helper whose chunks are done lingers, polling a mailbox where the
next parallel loop is posted (``Mailbox``). The simplest correct alternative is what remains with
both turned off (``XP_NATIVE_SPIN_US=0``, ``XP_NATIVE_LINGER_US=0``): every helper a pool task
scheduled by the call, the caller waiting on a mutex and condition variable.

Both are timed on bench/sparse.py's products (a 20000 x 20000 float32 matrix of density 1e-3,
xp's BCSR and BCOO, jitted: ``A @ x``, ``A @ X`` with 64 columns, ``A.T @ x`` and the gradient
with respect to the stored values), each call of a case right after the one before, as in an
iterative solver's loop. The settings are read once per process, so each configuration runs in
processes of its own, in alternation (a round: one process of each, the order flipped every
round); a process times batches of calls of each case and reports the median per call; the table
gives the median over rounds and the ratio.

    python bench/native_threads.py            # prints the markdown section
    python bench/native_threads.py --quick    # one round, short batches (a smoke test)
    python bench/run.py native_threads        # writes bench/RESULTS.md
"""

# ruff: noqa: N803, N806  (A and X are matrices, named as in the operations)

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _machine import describe
from sparse import COLUMNS, DENSITY, SIZE, with_data

CONFIGURATIONS = {
    "spin and mailbox": {},
    "condition variable": {"XP_NATIVE_SPIN_US": "0", "XP_NATIVE_LINGER_US": "0"},
}
OPERATIONS = ["A @ x", "A @ X", "A.T @ x", "grad by A's data"]
FORMATS = ["BCSR", "BCOO"]


def cases() -> dict[str, Callable[[], object]]:
    """The timed calls, by name (``"BCSR A @ x"``), on one matrix."""
    import jax
    import numpy as np
    import scipy.sparse

    import xp
    import xp.sparse as xs

    rng = np.random.default_rng(0)
    S = scipy.sparse.random_array((SIZE, SIZE), density=DENSITY, format="csr", dtype=np.float32, rng=rng)
    S.sort_indices()
    x = xp.asarray(rng.standard_normal(SIZE).astype(np.float32))
    X = xp.asarray(rng.standard_normal((SIZE, COLUMNS)).astype(np.float32))
    w = jax.numpy.asarray(rng.standard_normal(SIZE).astype(np.float32))
    matvec = jax.jit(lambda A, v: A @ v)
    rmatvec = jax.jit(lambda A, v: xp.matrix_transpose(A) @ v)
    grad = jax.jit(jax.grad(lambda d, raw, v: jax.numpy.vdot(w, (with_data(xs, raw, d) @ v).jax)))  # type: ignore[attr-defined]
    out: dict[str, Callable[[], object]] = {}
    for fmt in FORMATS:
        A = xs.from_scipy(S, format=fmt.lower())
        raw = A.jax  # type: ignore[attr-defined]
        out[f"{fmt} A @ x"] = functools.partial(matvec, A, x)
        out[f"{fmt} A @ X"] = functools.partial(matvec, A, X)
        out[f"{fmt} A.T @ x"] = functools.partial(rmatvec, A, x)
        out[f"{fmt} grad by A's data"] = functools.partial(grad, raw.data, raw, x)
    return out


def child(batch_seconds: float, batches: int) -> dict[str, float]:
    """This process's median time per call of each case (its settings from the environment)."""
    import jax

    from xp.sparse import _native

    if not _native.available():
        raise SystemExit("the native kernel is not available here")
    medians = {}
    for name, call in cases().items():
        jax.block_until_ready(call())  # compiled, and the library loaded
        start, calls = time.perf_counter(), 0
        while time.perf_counter() - start < batch_seconds / 4:  # the calls a batch of about batch_seconds makes
            jax.block_until_ready(call())
            calls += 1
        per_batch = max(4, 4 * calls)
        times = []
        for _ in range(batches):
            start = time.perf_counter()
            results = [call() for _ in range(per_batch)]
            jax.block_until_ready(results)
            times.append((time.perf_counter() - start) / per_batch)
        medians[name] = statistics.median(times)
    return medians


def run(rounds: int, batch_seconds: float, batches: int) -> dict[str, dict[str, list[float]]]:
    """Per configuration and case, each round's median (the configurations in alternating order)."""
    times: dict[str, dict[str, list[float]]] = {name: {} for name in CONFIGURATIONS}
    names = list(CONFIGURATIONS)
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            environment = {**os.environ, **CONFIGURATIONS[name]}
            command = [sys.executable, str(Path(__file__)), "--child", str(batch_seconds), str(batches)]
            done = subprocess.run(command, capture_output=True, text=True, env=environment, check=True)
            for case, seconds in json.loads(done.stdout.splitlines()[-1]).items():
                times[name].setdefault(case, []).append(seconds)
    return times


def markdown(times: dict[str, dict[str, list[float]]], rounds: int) -> str:
    import jax

    baseline, simplest = CONFIGURATIONS
    lines = [
        "### The native kernel's spin and lingering helpers against a condition variable alone",
        "",
        __doc__.split("\n\n")[1].replace("\n", " ").strip(),
        "",
        f"Medians over {rounds} rounds; ratio: {simplest} / {baseline} (above 1: the spin and the "
        f"mailbox save time). Measured with jax {jax.__version__} on {describe()}, XLA's CPU thread pool.",
        "",
        f"| case | {baseline} | {simplest} | ratio |",
        "|---|---:|---:|---:|",
    ]
    for fmt in FORMATS:
        for operation in OPERATIONS:
            case = f"{fmt} {operation}"
            mine, plain = (statistics.median(times[c][case]) for c in CONFIGURATIONS)
            lines.append(f"| `{case}` | {mine * 1e3:.3g} ms | {plain * 1e3:.3g} ms | {plain / mine:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    rounds, batch_seconds, batches = (1, 0.05, 3) if args.quick else (args.rounds, 0.2, 7)
    return markdown(run(rounds, batch_seconds, batches), rounds)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(float(sys.argv[2]), int(sys.argv[3]))))
    else:
        print(main())
