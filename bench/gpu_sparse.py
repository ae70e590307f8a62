"""xp.sparse products on a GPU: values against SciPy, the custom calls in the lowered text, and
jitted wall-clock times against JAX's own BCOO/BCSR on the same matrix.

    python bench/gpu_sparse.py      # on a machine whose JAX default backend is a GPU

Not part of ``bench/run.py`` (CI and the development machines have no GPU); its figures of
2026-12-04 (an H200) are in docs/sparse.md, "On a GPU". 20000 x 20000 with 400k float32 entries,
``x`` a vector, ``X`` (``w`` here) 64 columns; medians of 15 interleaved rounds of 20 calls each.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sps
from jax.experimental import sparse as jsp

import xp

N, NSE, COLUMNS, ROUNDS, BATCH = 20000, 400_000, 64, 15, 20
PRODUCTS = {
    "A @ x": lambda a, v, w: a @ v,
    "A.T @ x": lambda a, v, w: a.T @ v,
    "A @ X": lambda a, v, w: a @ w,
}


def custom_calls(text: str) -> list[str]:
    return sorted(
        set(re.findall(r"custom_call @([\w.]+)", text)) | set(re.findall(r'custom_call_target = "([\w.]+)"', text))
    )


def jax_product(fmt: str, name: str) -> Any:
    if fmt == "bcsr" and name == "A.T @ x":  # JAX's BCSR has no transpose
        return lambda a, v, w: jsp.bcsr_dot_general(a, v, dimension_numbers=(((0,), (0,)), ((), ())))
    return PRODUCTS[name]


def median_call_us(calls: list[tuple[Any, tuple[Any, ...]]]) -> list[float]:
    times: list[list[float]] = [[] for _ in calls]
    for fn, args in calls:
        jax.block_until_ready(fn(*args))
    for _ in range(ROUNDS):
        for (fn, args), acc in zip(calls, times, strict=True):
            start = time.perf_counter()
            for _ in range(BATCH):
                out = fn(*args)
            jax.block_until_ready(out)
            acc.append((time.perf_counter() - start) / BATCH * 1e6)
    return [statistics.median(t) for t in times]


def main() -> int:
    print("jax", jax.__version__, "devices", jax.devices())
    rng = np.random.default_rng(0)
    m = sps.random(N, N, density=NSE / N / N, format="csr", random_state=1, dtype=np.float32)
    m.sum_duplicates()
    m.sort_indices()
    x = rng.standard_normal(N).astype(np.float32)
    w = rng.standard_normal((N, COLUMNS)).astype(np.float32)
    xj, wj = jnp.asarray(x), jnp.asarray(w)
    xa, wa = xp.asarray(xj), xp.asarray(wj)
    ours = {"bcoo": xp.sparse.from_scipy(m.tocoo(), format="bcoo"), "bcsr": xp.sparse.from_scipy(m, format="bcsr")}
    theirs = {"bcoo": jsp.BCOO.from_scipy_sparse(m.tocoo()), "bcsr": jsp.BCSR.from_scipy_sparse(m)}
    want = {"A @ x": m @ x, "A.T @ x": m.T @ x, "A @ X": m @ w}
    wrong = 0
    for fmt in ("bcoo", "bcsr"):
        for name, product in PRODUCTS.items():
            ours_fn, theirs_fn = jax.jit(product), jax.jit(jax_product(fmt, name))
            got = np.asarray(ours_fn(ours[fmt], xa, wa))
            error = np.max(np.abs(got - want[name])) / np.max(np.abs(want[name]))
            wrong += error >= 1e-4
            calls = custom_calls(ours_fn.lower(ours[fmt], xa, wa).as_text())
            their_calls = custom_calls(theirs_fn.lower(theirs[fmt], xj, wj).as_text())
            mine, jaxs = median_call_us([(ours_fn, (ours[fmt], xa, wa)), (theirs_fn, (theirs[fmt], xj, wj))])
            print(f"{fmt} {name}: relative error {error:.1e}; custom calls xp {calls}, JAX {their_calls}; "
                  f"xp {mine:.1f} us, JAX {jaxs:.1f} us, ratio {mine / jaxs:.2f}")  # fmt: skip
        gradient = jax.jit(jax.grad(lambda v, a=ours[fmt]: xp.sum(a @ v).jax))(xa)
        expected = m.T @ np.ones(N, np.float32)
        error = np.max(np.abs(np.asarray(gradient) - expected)) / np.max(np.abs(expected))
        wrong += error >= 1e-4
        print(f"{fmt} gradient of sum(A @ x) with respect to x: relative error {error:.1e}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
