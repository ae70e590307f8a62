"""Conjugate gradients end to end: the generic ``cg`` of examples/conjugate_gradient.py on xp.sparse
(jitted whole, the loop a ``lax.while_loop``) against ``scipy.sparse.linalg.cg``, on the same matrix,
right-hand side, start (zero), tolerance and iteration limit.

The matrices (SciPy CSR, indices sorted; xp's BCOO and BCSR made from them by ``from_scipy``):

- **Poisson**: the 5-point Laplacian on a 1000 x 1000 grid (1,000,000 unknowns, 4,996,000 stored,
  banded), ``b`` all ones;
- **random SPD**: the Laplacian of a random graph on 1,000,000 nodes with uniform(0, 1) edge
  weights (about 9 neighbours per node, at random columns: no band, so ``x`` is gathered from
  all over memory) plus 0.1 times the identity; ``b`` standard normal. Symmetric, and positive
  definite because a graph Laplacian is positive semi-definite.

Two measurements, each interleaved over rounds (every implementation once per round), medians:

- **per iteration**: a fixed number of iterations (``rtol = 0``, so neither stops early), the
  time of the whole call divided by the count; the same for ``jax.scipy.sparse.linalg.cg`` on
  JAX's own BCOO (jitted), as the anchor of what JAX offers;
- **to tolerance**: ``rtol = 1e-5``, ``atol = 0``, the default limit (10 n): time, the iteration
  count (SciPy's by a callback, xp's from the loop) and the true residual ``|b - A x| / |b|``
  (in float64 on the host, for every implementation alike).

Float32 to tolerance only on the random SPD matrix: on the 1M Poisson matrix (condition number
about 4e5) float32 CG loses its residual to rounding (measured: SciPy and xp stop at
``|r_updated| / |b| = 1e-5`` after 2168 and 1521 iterations with a true residual of 0.15 and
0.13), so neither the counts nor the times would compare like with like. Its cost per iteration
is measured on both matrices.

Then where an iteration's time goes: the product ``A @ p`` alone and the vector work of one
iteration alone (two ``vecdot``, three ``axpy``), for xp each in a jitted loop (as in the solve),
for SciPy as its cg does it (NumPy), against the whole iteration. SciPy's iteration is also timed
with NumPy's BLAS on one thread (``threadpoolctl``, where installed).

Wall-clock and process CPU time (all threads). Float64 needs JAX's 64-bit mode: if it is off, the
benchmark reruns itself in a subprocess with ``JAX_ENABLE_X64=1``.

    python bench/cg.py              # prints the markdown section (about 10 minutes)
    python bench/cg.py --quick      # a 200 x 200 grid and 40,000 nodes, fewer rounds
    python bench/run.py cg          # writes its section of bench/RESULTS.md
"""

# ruff: noqa: N803, N806  (A and S are matrices)

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _machine import describe
from _x64 import output_with_x64

GRID, QUICK_GRID = 1000, 200
NEIGHBOURS = 9  # average off-diagonal entries per row of the random SPD matrix
SHIFT = 0.1
RTOL = 1e-5
FIXED = 20  # iterations in a per-iteration measurement
ANCHOR = "jax.scipy cg, JAX BCOO jit"
# NumPy's dot products run on OpenBLAS's threads; on a loaded machine waking them costs more than
# the work (measured: 67 ms against 24 ms per iteration, 1M Poisson, load average 9 on 2 CPUs)
ONE_THREAD = "scipy cg, 1 BLAS thread"
IMPLEMENTATIONS = ["scipy cg", "xp BCOO jit", "xp BCSR jit"]
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "conjugate_gradient.py"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("conjugate_gradient", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_spd(n: int, dtype: str, seed: int = 0) -> Any:
    """The Laplacian of a random weighted graph on ``n`` nodes plus ``SHIFT * I`` (CSR, sorted)."""
    import numpy as np
    import scipy.sparse

    rng = np.random.default_rng(seed)
    half = scipy.sparse.random_array((n, n), density=NEIGHBOURS / 2 / n, format="coo", rng=rng)
    W = (half + half.T).tocsr()
    W.setdiag(0)  # no self loops (a diagonal entry of the random draw)
    W.eliminate_zeros()
    degree = np.asarray(W.sum(axis=1)).ravel()
    A = (scipy.sparse.diags_array(degree + SHIFT) - W).astype(dtype).tocsr()
    A.sort_indices()
    return A


def problems(grid: int, dtype: str) -> dict[str, tuple[Any, Any]]:
    import numpy as np

    n = grid * grid
    rng = np.random.default_rng(1)
    return {
        "Poisson": (_example().poisson_2d(grid, dtype), np.ones(n, dtype=dtype)),
        "random SPD": (random_spd(n, dtype), rng.standard_normal(n).astype(dtype)),
    }


class Solvers:
    """Every implementation's solve of one problem, as ``solve(rtol, maxiter) -> (x, iterations)``
    with ``x`` a NumPy array (the result waited for)."""

    def __init__(self, S: Any, b: Any) -> None:
        import jax
        import jax.experimental.sparse as jsparse
        import scipy.sparse.linalg

        import xp
        import xp.sparse

        example = _example()
        self.S, self.b = S, b
        xb = xp.asarray(b)
        matrices = {
            "xp BCOO jit": xp.sparse.from_scipy(S, format="bcoo"),
            "xp BCSR jit": xp.sparse.from_scipy(S, format="bcsr"),
        }
        jitted: dict[int | None, Callable[..., Any]] = {}

        def xp_solver(A: Any) -> Callable[[float, int | None], tuple[Any, int]]:
            def solve(rtol: float, maxiter: int | None) -> tuple[Any, int]:
                if maxiter not in jitted:
                    jitted[maxiter] = example.jitted_cg(maxiter)
                x, iterations, _ = jitted[maxiter](A, xb, rtol=rtol)
                x.block_until_ready()
                return x, int(iterations)

            return solve

        def scipy_solve(rtol: float, maxiter: int | None) -> tuple[Any, int]:
            count = 0

            def callback(_: Any) -> None:
                nonlocal count
                count += 1

            x, _ = scipy.sparse.linalg.cg(S, b, rtol=rtol, atol=0.0, maxiter=maxiter, callback=callback)
            return x, count

        jax_A, jax_b = jsparse.BCOO.from_scipy_sparse(S), jax.numpy.asarray(b)
        anchors: dict[int | None, Callable[..., Any]] = {}

        def anchor_solve(rtol: float, maxiter: int | None) -> tuple[Any, int]:
            # JAX's cg returns no iteration count: only run for a fixed count (rtol = 0)
            assert rtol == 0 and maxiter is not None
            if maxiter not in anchors:
                anchors[maxiter] = jax.jit(
                    lambda A, b: jax.scipy.sparse.linalg.cg(lambda v: A @ v, b, tol=0.0, atol=0.0, maxiter=maxiter)[0]
                )
            x = anchors[maxiter](jax_A, jax_b)
            x.block_until_ready()
            return x, maxiter

        def scipy_one_thread(rtol: float, maxiter: int | None) -> tuple[Any, int]:
            import threadpoolctl

            with threadpoolctl.threadpool_limits(1):
                return scipy_solve(rtol, maxiter)

        self.solve: dict[str, Callable[[float, int | None], tuple[Any, int]]] = {
            "scipy cg": scipy_solve,
            ONE_THREAD: scipy_one_thread,
            **{name: xp_solver(A) for name, A in matrices.items()},
            ANCHOR: anchor_solve,
        }
        self.matrices = matrices
        self.xb = xb

    def residual(self, x: Any) -> float:
        """``|b - A x| / |b|`` in float64 on the host, whatever computed ``x``."""
        import numpy as np

        S64, b64, x64 = self.S.astype(np.float64), self.b.astype(np.float64), np.asarray(x, dtype=np.float64)
        return float(np.linalg.norm(b64 - S64 @ x64) / np.linalg.norm(b64))


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    start, start_cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - start, time.process_time() - start_cpu, out


Row = dict[str, Any]


def per_iteration(solvers: Solvers, names: list[str], rounds: int, fixed: int) -> dict[str, Row]:
    for name in names:
        solvers.solve[name](0.0, fixed)  # compile
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(rounds):
        for name in names:
            w, c, (_, iterations) = _timed(lambda name=name: solvers.solve[name](0.0, fixed))
            assert iterations == fixed, (name, iterations)
            wall[name].append(w / fixed)
            cpu[name].append(c / fixed)
    return {n: {"wall": statistics.median(wall[n]), "cpu": statistics.median(cpu[n])} for n in names}


def to_tolerance(solvers: Solvers, names: list[str], rounds: int) -> dict[str, Row]:
    for name in names:
        # compile: rtol is traced and the limit the same, so rtol = 1 (no iteration) compiles the solve
        solvers.solve[name](1.0, None)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    out: dict[str, Row] = {}
    for _ in range(rounds):
        for name in names:
            w, c, (x, iterations) = _timed(lambda name=name: solvers.solve[name](RTOL, None))
            wall[name].append(w)
            cpu[name].append(c)
            out[name] = {"iterations": iterations, "residual": solvers.residual(x)}
    for name in names:
        out[name].update(wall=statistics.median(wall[name]), cpu=statistics.median(cpu[name]))
    return out


def breakdown(solvers: Solvers, rounds: int, fixed: int) -> dict[str, dict[str, Row]]:
    """Median wall and CPU time of a whole iteration (of ``fixed``), of ``A @ p`` alone and of one
    iteration's vector work alone, all interleaved in the same rounds."""
    import jax
    import numpy as np

    import xp

    rng = np.random.default_rng(2)
    n, dtype = solvers.b.shape[0], solvers.b.dtype
    x_np, r_np, p_np, q_np = (rng.standard_normal(n).astype(dtype) for _ in range(4))
    x_xp, r_xp, p_xp, q_xp = (xp.asarray(v) for v in (x_np, r_np, p_np, q_np))

    def numpy_vectors() -> Any:
        # what scipy.sparse.linalg.cg does besides the product (its psolve is the identity's copy)
        x, r, p = x_np.copy(), r_np.copy(), p_np.copy()
        rho = np.dot(r, r)
        alpha = rho / np.dot(p, q_np)
        x += alpha * p
        r -= alpha * q_np
        np.linalg.norm(r)
        rho_next = np.dot(r, r)
        p *= rho_next / rho
        p += r
        return x

    def xp_vectors(x: Any, r: Any, p: Any, q: Any) -> Any:
        # the body of examples/conjugate_gradient.py's loop without the product
        rho = xp.vecdot(r, r)
        alpha = rho / xp.vecdot(p, q)
        x = x + alpha * p
        r = r - alpha * q
        return x, r, r + (xp.vecdot(r, r) / rho) * p, q

    # xp's parts run in a fori_loop of `fixed` steps, as in the solve: called alone, a product
    # allocates its intermediates (the gathered products, nse long) afresh on every call, which costs
    # 3-4x the product inside a loop (measured: BCOO 156 ms alone, 45 ms in a loop)
    matvecs = jax.jit(lambda A, v: jax.lax.fori_loop(0, fixed, lambda i, v: (A @ v) * 0.125, v))

    @jax.jit
    def vector_steps(x: Any, r: Any, p: Any, q: Any) -> Any:
        return jax.lax.fori_loop(0, fixed, lambda i, c: xp_vectors(*c, q)[:3], (x, r, p))

    cases: dict[str, dict[str, tuple[int, Callable[[], Any]]]] = {
        "scipy cg": {"A @ p": (1, lambda: solvers.S @ p_np), "vectors": (1, numpy_vectors)},
    }
    for name, A in solvers.matrices.items():
        cases[name] = {
            "A @ p": (fixed, lambda A=A: matvecs(A, p_xp).block_until_ready()),
            "vectors": (fixed, lambda: jax.block_until_ready(vector_steps(x_xp, r_xp, p_xp, q_xp))),
        }
    for name, parts in cases.items():
        parts["iteration"] = (fixed, lambda name=name: solvers.solve[name](0.0, fixed))
        for _, fn in parts.values():
            fn()  # compile
    limits: Callable[[], Any] = contextlib.nullcontext
    if importlib.util.find_spec("threadpoolctl"):
        # SciPy's parts with one BLAS thread too (see ONE_THREAD), the limit set once per batch
        import threadpoolctl

        cases[ONE_THREAD] = cases["scipy cg"]
        limits = functools.partial(threadpoolctl.threadpool_limits, 1)
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for name, parts in cases.items():
            for part, (count, fn) in parts.items():
                calls = 1 if count > 1 else 5  # a part alone: 5 calls, about one solve's duration
                with limits() if name == ONE_THREAD else contextlib.nullcontext():
                    w, c, _ = _timed(lambda fn=fn, calls=calls: [fn() for _ in range(calls)])
                samples.setdefault((name, part), []).append((w / calls / count, c / calls / count))
    out: dict[str, dict[str, Row]] = {}
    for (name, part), values in samples.items():
        out.setdefault(name, {})[part] = {
            "wall": statistics.median(v[0] for v in values),
            "cpu": statistics.median(v[1] for v in values),
        }
    return out


def best_scipy(rows: dict[str, Row]) -> Row:
    """The reference: the faster SciPy run (default BLAS threads or one), wall and CPU apart."""
    scipy_rows = [rows[n] for n in ("scipy cg", ONE_THREAD) if n in rows]
    return {"wall": min(r["wall"] for r in scipy_rows), "cpu": min(r["cpu"] for r in scipy_rows)}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _s(seconds: float) -> str:
    return f"{seconds:.3g} s"


def run(grid: int, dtype: str, quick: bool) -> list[str]:
    """The markdown tables for one dtype: both matrices."""
    rounds, tolerance_rounds, fixed = (2, 1, 10) if quick else (5, 2, FIXED)
    lines: list[str] = []
    for matrix, (S, b) in problems(grid, dtype).items():
        print(f"cg benchmark, {matrix}, {dtype}: {S.shape[0]:,} unknowns, {S.nnz:,} stored", file=sys.stderr)
        solvers = Solvers(S, b)
        title = f"### {matrix}, {dtype}: {S.shape[0]:,} unknowns, {S.nnz:,} stored ({S.nnz / S.shape[0]:.1f} a row)"
        lines += [title, ""]
        extra = [ONE_THREAD] if importlib.util.find_spec("threadpoolctl") else []
        per = per_iteration(solvers, [*IMPLEMENTATIONS, *extra, ANCHOR], rounds, fixed)
        base = best_scipy(per)
        lines += [
            f"Per iteration ({fixed} iterations, median of {rounds} rounds):",
            "",
            "| implementation | wall / SciPy | wall | CPU / SciPy | CPU |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, row in per.items():
            lines.append(
                f"| {name} | {row['wall'] / base['wall']:.2f} | {_ms(row['wall'])} | "
                f"{row['cpu'] / base['cpu']:.2f} | {_ms(row['cpu'])} |"
            )
        print("  per iteration: " + "  ".join(f"{n} {_ms(r['wall'])}" for n, r in per.items()), file=sys.stderr)
        lines.append("")
        if not (matrix == "Poisson" and dtype == "float32"):
            tol = to_tolerance(solvers, [*IMPLEMENTATIONS, *extra], tolerance_rounds)
            base = best_scipy(tol)
            lines += [
                f"To tolerance (`rtol = {RTOL:g}`, `atol = 0`, x0 = 0; median of {tolerance_rounds} rounds):",
                "",
                "| implementation | iterations | true residual | wall / SciPy | wall | CPU / SciPy | CPU | wall per iteration |",
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for name, row in tol.items():
                lines.append(
                    f"| {name} | {row['iterations']} | {row['residual']:.2e} | {row['wall'] / base['wall']:.2f} | "
                    f"{_s(row['wall'])} | {row['cpu'] / base['cpu']:.2f} | {_s(row['cpu'])} | "
                    f"{_ms(row['wall'] / max(row['iterations'], 1))} |"
                )
            print(
                "  to tolerance: " + "  ".join(f"{n} {r['iterations']} it {_s(r['wall'])}" for n, r in tol.items()),
                file=sys.stderr,
            )
            lines.append("")
        parts = breakdown(solvers, rounds, fixed)
        lines += [
            "Where an iteration's time goes (wall, medians of the same rounds: a whole iteration as above, then each "
            "part alone, for xp in a jitted loop of as many steps; the rest is what the loop adds, or saves by fusing):",
            "",
            "| implementation | iteration | `A @ p` | vector work | rest |",
            "|---|---:|---:|---:|---:|",
        ]
        for name in [*IMPLEMENTATIONS[:1], *(n for n in parts if n == ONE_THREAD), *IMPLEMENTATIONS[1:]]:
            whole, spmv, vectors = (parts[name][part]["wall"] for part in ("iteration", "A @ p", "vectors"))
            lines.append(
                f"| {name} | {_ms(whole)} | {_ms(spmv)} ({spmv / whole:.0%}) | {_ms(vectors)} ({vectors / whole:.0%}) | "
                f"{_ms(whole - spmv - vectors)} |"
            )
        lines.append("")
    return lines


def environment(load_start: float) -> str:
    import jax
    import numpy as np
    import scipy

    load = os.getloadavg()[0]
    return (
        f"Measured with jax {jax.__version__}, scipy {scipy.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}, on {jax.devices()[0].platform} ({describe()}; "
        f"load average {load_start:.1f} at the start, {load:.1f} at the end)."
    )


NOTE = """\
`cg` of examples/conjugate_gradient.py (array API functions only; the whole solve under `jax.jit`,
the loop `xp.transforms.while_loop`) on xp's BCOO and BCSR, against `scipy.sparse.linalg.cg` on
the SciPy CSR array they were made from; same `b`, x0 = 0, tolerance and limit. The anchor runs
`jax.scipy.sparse.linalg.cg` on JAX's own BCOO (its product is JAX's `bcoo_dot_general`). Ratios
are to the faster of SciPy's two runs, with NumPy's BLAS on its default threads and on one
(`threadpoolctl`): on a loaded machine waking OpenBLAS's threads for every dot product costs
more than the products themselves. Below 1: faster than SciPy. bench/cg.py describes the matrices; a shared machine moves absolute
times, the ratios within one run are what to read."""


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a 200 x 200 grid, fewer rounds (a smoke test)")
    parser.add_argument("--dtypes", default="float64,float32")
    args = parser.parse_args(argv)
    if "float64" in args.dtypes and (rerun := output_with_x64(__file__, argv)) is not None:
        return rerun
    load_start = os.getloadavg()[0]
    grid = QUICK_GRID if args.quick else GRID
    lines = []
    for dtype in args.dtypes.split(","):
        lines += run(grid, dtype, args.quick)
    head = ["## Conjugate gradients: a generic solve on xp.sparse vs scipy.sparse.linalg.cg", "", NOTE, ""]
    if args.quick:
        head += [f"`--quick`: a {grid} x {grid} grid and {grid * grid:,} nodes, fewer rounds (a smoke test).", ""]
    return "\n".join([*head, environment(load_start), "", *lines])


if __name__ == "__main__":
    print(main(sys.argv[1:]))
