"""Jitted workloads: the examples' generic code on xp arrays against the same code on jax.numpy
arrays, in the same run.

The generic functions take their namespace from their arguments (``__array_namespace__``), so
the twin of an xp run is the same function called with ``jax.Array`` arguments (whose namespace
is jax.numpy). Under ``jax.jit`` both trace to XLA programs; what this measures is whether xp's
wrapping costs anything once compiled, on whatever device JAX's default backend is:

- **classifier step**: one BFGS iteration of examples/logistic_regression.py (a line search over
  24 step lengths, the gradient, the inverse-Hessian update) on a dense 8192 x 256 design matrix;
- **CG, dense SPD**: examples/conjugate_gradient.py's ``cg`` for a fixed 100 iterations
  (``rtol = 0``) on ``M M^T / n + I``, n = 2048;
- **CG, banded**: the same on the 1-D Poisson matrix (tridiagonal), n = 2048, stored dense.

Each call is timed to its result (``block_until_ready``): wall-clock time, since on an
accelerator the work is the device's. Interleaved rounds (xp, jax.numpy, ... with the order
alternating), medians; the ratio is xp / jax.numpy.

    python bench/workloads.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from eager import block, environment

import xp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import conjugate_gradient
import logistic_regression


def _classifier(n_samples: int, n_features: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    X, y = logistic_regression.make_data(n_samples, n_features, density=1.0)  # noqa: N806
    X, y = X.astype(np.float32), y.astype(np.float32)  # noqa: N806
    step = jax.jit(logistic_regression.step, static_argnames=("l2", "tol"))

    def twin(ns: Any) -> Callable[[], Any]:
        data, labels = ns.asarray(X), ns.asarray(y)
        state = logistic_regression.start(data, labels, 1e-2)
        return lambda: step(state, data, labels, l2=1e-2, tol=1e-6)

    return twin(xp), twin(jnp)


def _cg(matrix: np.ndarray, iterations: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    solve = conjugate_gradient.jitted_cg(maxiter=iterations)
    b = np.random.default_rng(1).standard_normal(matrix.shape[0]).astype(np.float32)

    def twin(ns: Any) -> Callable[[], Any]:
        a, rhs = ns.asarray(matrix.astype(np.float32)), ns.asarray(b)
        return lambda: solve(a, rhs, rtol=0.0)

    return twin(xp), twin(jnp)


def spd(n: int) -> np.ndarray:
    m = np.random.default_rng(0).standard_normal((n, n))
    return m @ m.T / n + np.eye(n)


def poisson_1d(n: int) -> np.ndarray:
    return 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)


def time_pair(ours: Callable[[], Any], theirs: Callable[[], Any], rounds: int, calls: int) -> tuple[float, float]:
    """Median seconds a call, xp and jax.numpy, interleaved (compiled first: the warm-up calls)."""
    for fn in (ours, theirs):
        block(fn())
    times: dict[int, list[float]] = {0: [], 1: []}
    for r in range(rounds):
        for which in (0, 1) if r % 2 == 0 else (1, 0):
            fn = (ours, theirs)[which]
            start = time.perf_counter()
            for _ in range(calls):
                block(fn())
            times[which].append((time.perf_counter() - start) / calls)
    return statistics.median(times[0]), statistics.median(times[1])


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller problems, fewer rounds")
    args = parser.parse_args(argv)
    n_samples, n_features, n = (1024, 64, 256) if args.quick else (8192, 256, 2048)
    rounds, calls = (5, 2) if args.quick else (21, 5)
    cases = {
        f"classifier step ({n_samples} x {n_features})": _classifier(n_samples, n_features),
        f"CG, dense SPD (n = {n}, 100 iterations)": _cg(spd(n), 100),
        f"CG, banded (1-D Poisson, n = {n}, 100 iterations)": _cg(poisson_1d(n), 100),
    }
    lines = [
        "## Jitted workloads: the examples' generic code, xp against jax.numpy",
        "",
        "The same generic function jitted, called with xp arrays and with jax.numpy arrays "
        "(bench/workloads.py); each call timed to its result, wall clock, interleaved rounds, medians. "
        f"{environment()}",
        "",
        "| workload | xp | jax.numpy | xp / jax.numpy |",
        "|---|---:|---:|---:|",
    ]
    for name, (ours, theirs) in cases.items():
        mine, jax_numpy = time_pair(ours, theirs, rounds, calls)
        lines.append(f"| {name} | {mine * 1e3:.3f} ms | {jax_numpy * 1e3:.3f} ms | {mine / jax_numpy:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(main(sys.argv[1:]))
