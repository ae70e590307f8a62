"""examples/conjugate_gradient.py: the generic CG solves a small Poisson problem on xp sparse (BCOO,
BCSR) and dense arrays, eagerly and jitted, and on NumPy, array-api-strict and jax.numpy arrays,
in the iterations SciPy's ``cg`` takes, to NumPy's solution.

The dtype is the default floating dtype: float64 with JAX's 64-bit mode on, float32 with it off
(the NumPy and SciPy references then run in float32 too, so the iteration counts compare)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import array_api_strict
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse.linalg
from subprocess_env import subprocess_env

import xp
import xp.sparse

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
spec = importlib.util.spec_from_file_location("conjugate_gradient", EXAMPLES / "conjugate_gradient.py")
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

GRID = 20  # 400 unknowns, condition number about 180
X64 = jax.config.read("jax_enable_x64")
DTYPE = "float64" if X64 else "float32"
# float32: CG's updated residual drifts from the true one near 1e-6, so ask for less
RTOL = 1e-10 if X64 else 1e-5
SOLUTION_TOL = 1e-8 if X64 else 2e-3  # relative error against numpy.linalg.solve: about cond * rtol


@pytest.fixture(scope="module")
def problem():
    S = example.poisson_2d(GRID, DTYPE)
    b = np.random.default_rng(0).standard_normal(GRID * GRID).astype(DTYPE)
    exact = np.linalg.solve(S.toarray().astype(np.float64), b.astype(np.float64))
    return S, b, exact


def scipy_cg(S, b, **kwargs):
    count = 0

    def callback(_):
        nonlocal count
        count += 1

    x, _ = scipy.sparse.linalg.cg(S, b, atol=0.0, callback=callback, **kwargs)
    return x, count


def check(result, problem, rtol=RTOL):
    S, b, exact = problem
    x = np.asarray(result.x)
    assert x.dtype == np.dtype(DTYPE)
    _, expected_iterations = scipy_cg(S, b, rtol=rtol)
    assert abs(int(result.iterations) - expected_iterations) <= 2, (int(result.iterations), expected_iterations)
    assert np.linalg.norm(x - exact) <= SOLUTION_TOL * np.linalg.norm(exact)
    # the loop's residual is the updated one SciPy's stopping rule reads: below the threshold
    assert float(result.residual_norm) < rtol * np.linalg.norm(b)


def as_xp(S, b, format):
    A = xp.asarray(S.toarray()) if format == "dense" else xp.sparse.from_scipy(S, format=format)
    return A, xp.asarray(b)


@pytest.mark.slow
@pytest.mark.parametrize("format", ["bcoo", "bcsr", "dense"])
def test_xp_jitted(problem, format):
    A, b = as_xp(*problem[:2], format)
    result = example.jitted_cg()(A, b, rtol=RTOL)
    assert isinstance(result.x, xp.Array)
    check(result, problem)


@pytest.mark.parametrize("format", ["bcoo", "bcsr", "dense"])
def test_xp_eager(problem, format):
    A, b = as_xp(*problem[:2], format)
    result = example.cg(A, b, rtol=RTOL)  # a Python loop over eager xp calls
    assert isinstance(result.x, xp.Array)
    check(result, problem)


def test_xp_eager_with_a_while_loop(problem):
    # xp.transforms.while_loop outside jax.jit: JAX compiles the loop on its own
    A, b = as_xp(*problem[:2], "bcsr")
    check(example.cg(A, b, rtol=RTOL, while_loop=xp.transforms.while_loop), problem)


def test_numpy(problem):
    S, b, _ = problem
    result = example.cg(S.toarray(), b, rtol=RTOL)
    assert isinstance(result.x, np.ndarray)
    check(result, problem)
    x_scipy, _ = scipy_cg(S, b, rtol=RTOL)
    np.testing.assert_allclose(result.x, x_scipy, rtol=0, atol=1e-12 if X64 else 1e-4)


def test_array_api_strict(problem):
    S, b, _ = problem
    A = array_api_strict.asarray(S.toarray())
    result = example.cg(A, array_api_strict.asarray(b), rtol=RTOL)
    assert isinstance(result.x, type(A))
    check(result, problem)


def test_jax_numpy_under_jit(problem):
    S, b, _ = problem
    solve = jax.jit(lambda A, b: example.cg(A, b, rtol=RTOL, while_loop=jax.lax.while_loop))
    result = solve(jnp.asarray(S.toarray()), jnp.asarray(b))
    assert isinstance(result.x, jax.Array)
    check(result, problem)


def test_a_start_and_a_limit_as_scipy_takes_them(problem):
    S, b, _ = problem
    x0 = np.linspace(-1, 1, b.shape[0], dtype=DTYPE)
    A, xb = as_xp(S, b, "bcsr")
    result = example.jitted_cg(maxiter=7)(A, xb, x0=xp.asarray(x0), rtol=RTOL)
    assert int(result.iterations) == 7
    expected, count = scipy_cg(S, b, x0=x0, rtol=RTOL, maxiter=7)
    assert count == 7
    np.testing.assert_allclose(np.asarray(result.x), expected, rtol=1e-10 if X64 else 1e-4, atol=1e-10 if X64 else 1e-4)


def test_a_traced_tolerance_changes_without_recompiling(problem):
    A, b = as_xp(*problem[:2], "bcoo")
    solve = example.jitted_cg()
    loose, tight = solve(A, b, rtol=1e-2), solve(A, b, rtol=1e-4)
    assert int(loose.iterations) < int(tight.iterations)
    assert solve._cache_size() == 1


def test_a_zero_right_hand_side_is_solved_at_once(problem):
    A, b = as_xp(*problem[:2], "bcsr")
    result = example.jitted_cg()(A, xp.zeros_like(b))
    assert int(result.iterations) == 0
    assert not np.any(np.asarray(result.x))


@pytest.mark.integration
def test_script_runs():
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "conjugate_gradient.py"), "--grid", "30"],
        capture_output=True, text=True, timeout=600, env=subprocess_env(),  # (on the CPU, whatever this backend)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    counts = [int(n) for n in re.findall(r"(\d+) iterations in", done.stdout)]
    assert len(counts) == 3, done.stdout  # xp BCOO, xp BCSR, SciPy
    assert max(counts) - min(counts) <= 2, done.stdout
