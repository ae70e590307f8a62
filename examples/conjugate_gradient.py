"""Conjugate gradients written once against the array API, solved on xp sparse matrices under jit.

``cg(A, b)`` solves ``A x = b`` for a symmetric positive-definite ``A`` with the array API's
``@``, ``vecdot`` and ``sqrt`` only, in the namespace of its arguments. The loop is a
``while_loop(cond, body, state)`` function passed in, so the same code runs:

- on xp arrays, sparse (``BCOO``, ``BCSR``) or dense, with the whole solve under ``jax.jit`` and
  the loop a ``lax.while_loop`` (``xp.transforms.while_loop``: JAX's ``lax.while_loop`` refuses a
  condition that returns a 0-d xp array, a pytree, rather than a JAX array);
- on NumPy or array-api-strict arrays (or xp arrays eagerly), with a Python loop.

The iteration is SciPy's ``scipy.sparse.linalg.cg`` without a preconditioner, with the same
stopping rule (stop before an iteration when ``|r| < max(atol, rtol * |b|)``, ``r`` the updated
residual), so both take the same number of iterations (one product ``A @ p`` each) on the same
problem, up to rounding. One difference: SciPy computes ``|r|`` and ``r . r`` separately; here
``|r|`` is the square root of ``r . r``, which the next iteration needs anyway (one reduction
fewer per iteration).

    JAX_ENABLE_X64=1 python examples/conjugate_gradient.py     # float64, a 1000 x 1000 Poisson grid
    python examples/conjugate_gradient.py --grid 100           # float32

In float32 the 1000 x 1000 problem (condition number about 4e5) is beyond CG: the updated residual
reaches the tolerance while the true one ``|b - A x| / |b|`` stays near 0.1, in SciPy as here, and
the iteration counts part (measured: 2168 in SciPy, 1521 here); the script prints both residuals.
bench/cg.py times this solve against SciPy's.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, NamedTuple


class State(NamedTuple):
    """The CG iterate: the solution, the residual ``b - A x``, the search direction, ``r . r``
    and the number of iterations done."""

    x: Any
    r: Any
    p: Any
    rho: Any
    iterations: Any


class Result(NamedTuple):
    x: Any
    iterations: Any  # 0-d integer array: the number of products A @ p
    residual_norm: Any  # |r| of the updated residual, as SciPy's stopping rule sees it


def python_while_loop(cond: Callable[[Any], Any], body: Callable[[Any], Any], state: Any) -> Any:
    """``lax.while_loop``'s contract as a Python loop: for any namespace, eagerly."""
    while bool(cond(state)):
        state = body(state)
    return state


def namespace(*arrays: Any) -> Any:
    """The namespace of the arguments: through array-api-compat where it is installed (it also
    knows NumPy 1.x, PyTorch, ...), else the arrays' own ``__array_namespace__``."""
    try:
        from array_api_compat import array_namespace
    except ImportError:
        return arrays[-1].__array_namespace__()
    return array_namespace(*arrays)


def cg(
    A: Any,  # noqa: N803
    b: Any,
    *,
    x0: Any = None,
    rtol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    while_loop: Callable[[Callable[[Any], Any], Callable[[Any], Any], Any], Any] = python_while_loop,
) -> Result:
    """Solve ``A x = b`` (``A`` symmetric positive definite, dense or sparse) by conjugate gradients.

    Stops when ``|r| < max(atol, rtol * |b|)`` or after ``maxiter`` iterations (default
    ``10 * n``, SciPy's). ``rtol`` and ``atol`` may be Python floats or 0-d arrays (so that they
    can be traced); ``maxiter`` is a Python int. ``while_loop`` runs the loop: the default is a
    Python loop; under ``jax.jit`` pass ``xp.transforms.while_loop`` (or ``jax.lax.while_loop`` for
    jax.numpy arrays).
    """
    ns = namespace(A, b)
    if maxiter is None:
        maxiter = 10 * b.shape[0]
    # r = b for the zero start, without a product (as SciPy does: its count is of A @ p only)
    x = ns.zeros_like(b) if x0 is None else x0
    r = b if x0 is None else b - A @ x0
    # asarray: under jax.jit, rtol and atol arrive as JAX arrays, which must not meet xp arrays
    # in an operator (JAX's operator would answer, with a jax.Array)
    rtol, atol = ns.asarray(rtol, dtype=b.dtype), ns.asarray(atol, dtype=b.dtype)
    threshold = ns.maximum(atol, rtol * ns.sqrt(ns.vecdot(b, b)))
    rho = ns.vecdot(r, r)
    start = State(x, r, r, rho, ns.asarray(0, dtype=ns.int32))

    def cond(state: State) -> Any:
        # rho > 0: a residual that is exactly 0 is solved (SciPy returns at once for b = 0;
        # here without Python control flow, so that the condition traces)
        not_converged = (ns.sqrt(state.rho) >= threshold) & (state.rho > 0)
        return not_converged & (state.iterations < maxiter)

    def body(state: State) -> State:
        x, r, p, rho, k = state
        q = A @ p
        alpha = rho / ns.vecdot(p, q)
        x = x + alpha * p
        r = r - alpha * q
        rho_next = ns.vecdot(r, r)
        p = r + (rho_next / rho) * p
        return State(x, r, p, rho_next, k + 1)

    end = while_loop(cond, body, start)
    return Result(end.x, end.iterations, ns.sqrt(end.rho))


def jitted_cg(maxiter: int | None = None) -> Callable[..., Result]:
    """``cg`` compiled whole with ``jax.jit`` for xp (and jax.numpy) arrays: the loop is a
    ``lax.while_loop``, and ``rtol``/``atol`` are traced (no recompilation when they change)."""
    import functools

    import jax

    import xp

    def run(A: Any, b: Any, x0: Any = None, rtol: Any = 1e-5, atol: Any = 0.0) -> Result:  # noqa: N803
        return cg(A, b, x0=x0, rtol=rtol, atol=atol, maxiter=maxiter, while_loop=xp.transforms.while_loop)

    return functools.wraps(cg)(jax.jit(run))


def poisson_2d(n: int, dtype: Any = "float64") -> Any:
    """The 5-point Laplacian on an ``n x n`` grid with zero Dirichlet boundaries, as a SciPy CSR
    array of size ``n**2`` (4 on the diagonal, -1 for each neighbour; symmetric positive
    definite)."""
    import numpy as np
    import scipy.sparse

    one_d = scipy.sparse.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = scipy.sparse.eye_array(n)
    A = scipy.sparse.kron(one_d, eye) + scipy.sparse.kron(eye, one_d)  # noqa: N806
    A = A.astype(dtype).tocsr()  # noqa: N806
    A.sort_indices()
    return A


def main() -> None:
    import numpy as np
    import scipy.sparse.linalg

    import xp
    import xp.sparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", type=int, default=1000, help="grid side: n**2 unknowns (default 1000)")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()

    dtype = "float64" if xp.__array_namespace_info__().default_dtypes()["real floating"] == xp.float64 else "float32"
    S = poisson_2d(args.grid, dtype)  # noqa: N806
    b_np = np.ones(S.shape[0], dtype=dtype)
    print(f"2-D Poisson matrix, {args.grid} x {args.grid} grid: {S.shape[0]:,} unknowns, {S.nnz:,} stored, {dtype}")
    b = xp.asarray(b_np)
    solve = jitted_cg()
    for format in ("bcoo", "bcsr"):
        A = xp.sparse.from_scipy(S, format=format)  # noqa: N806
        solve(A, b, rtol=args.rtol).x.block_until_ready()  # compile
        begin = time.perf_counter()
        x, iterations, residual = solve(A, b, rtol=args.rtol)
        x.block_until_ready()
        seconds = time.perf_counter() - begin
        true_residual = float(xp.linalg.vector_norm(b - A @ x) / xp.linalg.vector_norm(b))
        print(
            f"xp {format.upper()}, jitted: {int(iterations)} iterations in {seconds:.2f} s; "
            f"|r|/|b| = {float(residual) / float(np.linalg.norm(b_np)):.2e} (updated), {true_residual:.2e} (b - A x)"
        )
    count = 0

    def callback(_: Any) -> None:
        nonlocal count
        count += 1

    begin = time.perf_counter()
    x_scipy, _ = scipy.sparse.linalg.cg(S, b_np, rtol=args.rtol, atol=0.0, callback=callback)
    seconds = time.perf_counter() - begin
    true_residual = np.linalg.norm(b_np - S @ x_scipy) / np.linalg.norm(b_np)
    print(f"scipy.sparse.linalg.cg: {count} iterations in {seconds:.2f} s; |r|/|b| = {true_residual:.2e} (b - A x)")
    # the same generic function on NumPy arrays (dense: a small grid)
    small = poisson_2d(10, dtype).toarray()
    x_np, iterations_np, _ = cg(small, np.ones(100, dtype=dtype), rtol=args.rtol)
    error = np.max(np.abs(x_np - np.linalg.solve(small, np.ones(100, dtype=dtype))))
    print(f"numpy, 10 x 10 grid, dense: {int(iterations_np)} iterations, largest error {error:.1e}")


if __name__ == "__main__":
    main()
