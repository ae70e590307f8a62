"""xp.special in float32, jitted, against jax.scipy.special and SciPy, in the same run.

xp.special computes float32 to float32's accuracy on every backend (docs/accelerators.md,
"xp.special on a TPU"): its incomplete gamma and beta functions and ``hyp1f1`` take their
prefactors in double-float arithmetic, each double-float logarithm and log gamma pair evaluated
once over stacked arguments, and ``betaincc`` and ``stdtr`` take their complements from the
incomplete beta function's one evaluation. This benchmark is what guards the cost of that: each function on 100,000 float32 values inside its domain, jitted and
timed to its result, against ``jax.scipy.special``'s function of the same name where JAX has one
(at JAX's own float32 accuracy) and SciPy's (float64 inside, on the CPU). Interleaved rounds,
medians, wall-clock time.

    python bench/special.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
import scipy.special
from eager import environment, interleaved

import xp


def _arguments(count: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    values = {
        "a": rng.uniform(0.5, 20.0, count).astype(np.float32),
        "b": rng.uniform(0.5, 20.0, count).astype(np.float32),
        "x": rng.uniform(0.01, 0.99, count).astype(np.float32),
        "t": rng.uniform(-6.0, 6.0, count).astype(np.float32),
        "positive": rng.uniform(0.1, 30.0, count).astype(np.float32),
        "n": rng.integers(1, 50, count).astype(np.float32),
    }
    values["k"] = np.floor(values["x"] * values["n"])  # (bdtr's successes: at most its trials)
    return values


FUNCTIONS: dict[str, tuple[str, ...]] = {
    "gammaln": ("positive",),
    "digamma": ("positive",),
    "erf": ("t",),
    "ndtri": ("x",),
    "gammainc": ("a", "positive"),
    "gammaincc": ("a", "positive"),
    "betainc": ("a", "b", "x"),
    "betaincc": ("a", "b", "x"),
    "stdtr": ("a", "t"),
    "bdtr": ("k", "n", "x"),
    "hyp1f1": ("a", "b", "positive"),  # (xp's and JAX's domain: x >= 0, or b >= a)
}
"""The functions measured, each with the names of its arguments in :func:`_arguments`:
elementary ones, then the prefactor families (the incomplete gamma and beta functions, Student's
t, the binomial distribution, Kummer's function)."""


COUNTS = frozenset({"n"})
"""The arguments SciPy takes as integers (a float one is deprecated there: ``bdtr``'s trials)."""


def _scipy_arguments(name: str, values: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [values[a].astype(np.int64) if a in COUNTS else values[a] for a in FUNCTIONS[name]]


def _cases(name: str, values: dict[str, np.ndarray]) -> dict[str, Callable[[], Any]]:
    args = [values[a] for a in FUNCTIONS[name]]
    ours = jax.jit(lambda *a: getattr(xp.special, name)(*(xp.asarray(v) for v in a)))
    device_args = [jnp.asarray(a) for a in args]
    cases = {"xp": lambda: ours(*device_args)}
    if hasattr(jss, name):
        theirs = jax.jit(getattr(jss, name))
        cases["jax.scipy"] = lambda: theirs(*device_args)
    if jax.default_backend() == "cpu":
        reference, reference_args = getattr(scipy.special, name), _scipy_arguments(name, values)
        cases["scipy"] = lambda: reference(*reference_args)
    return cases


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer values and rounds")
    options = parser.parse_args(argv)
    count, rounds, budget = (10_000, 3, 0.02) if options.quick else (100_000, 9, 0.2)
    values = _arguments(count)
    lines = [
        "## xp.special in float32: jitted, against jax.scipy.special and SciPy",
        "",
        f"Each function on {count:,} float32 values inside its domain, jitted, timed to its result "
        "(bench/special.py); wall clock, interleaved rounds, medians. jax.scipy.special's float32 is "
        "JAX's own accuracy (on a TPU its exponentials and logarithms are approximate: "
        "docs/accelerators.md); SciPy's computes in float64 on the CPU. "
        f"{environment()}",
        "",
        "| function | xp | jax.scipy | SciPy | xp / jax.scipy | xp / SciPy |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for name in FUNCTIONS:
        times = interleaved(_cases(name, values), rounds, budget, most=50)
        ours = times["xp"]
        cells = [f"{times[k] * 1e3:.3f} ms" if k in times else "" for k in ("xp", "jax.scipy", "scipy")]
        by_jax = f"{ours / times['jax.scipy']:.2f}" if "jax.scipy" in times else ""
        by_scipy = f"{ours / times['scipy']:.2f}" if "scipy" in times else ""
        if "jax.scipy" in times:
            ratios.append(ours / times["jax.scipy"])
        lines.append(f"| `{name}` | {' | '.join(cells)} | {by_jax} | {by_scipy} |")
    geometric = math.exp(sum(map(math.log, ratios)) / len(ratios))
    lines.append(f"| geometric mean (functions JAX has) | | | | {geometric:.2f} | |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(main(sys.argv[1:]))
