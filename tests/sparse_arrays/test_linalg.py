"""xp.sparse.linalg: spsolve and lobpcg_standard against their dense counterparts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xp
import xp.sparse as xs
from xp.sparse import linalg as sparse_linalg


def system(n=40, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((n, n)) < 0.1, rng.standard_normal((n, n)), 0.0) + 4 * np.eye(n)
    return a.astype(dtype), rng.standard_normal(n).astype(dtype)


@pytest.fixture(params=["default", "host"])
def solver(request, monkeypatch):
    """spsolve's two routes: JAX's kernel where the default backend has one (the CPU, CUDA), and
    SciPy on the host through xp's callback (where it has none: a TPU), here on every backend."""
    if request.param == "host":
        monkeypatch.setattr(sparse_linalg, "_jax_has_spsolve", lambda: False)
    return request.param


@pytest.mark.slow
@pytest.mark.parametrize("format", ["bcsr", "bcoo"])
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.x64)])
def test_spsolve_matches_dense_solve(format, dtype, solver):
    a, rhs = system(dtype=dtype)
    A = xs.fromdense(xp.asarray(a), format=format)
    expected = np.linalg.solve(a.astype(np.float64), rhs.astype(np.float64))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for out in (xs.linalg.spsolve(A, xp.asarray(rhs)), jax.jit(xs.linalg.spsolve)(A, xp.asarray(rhs))):
        assert isinstance(out, xp.Array) and out.dtype == xp.asarray(rhs).dtype
        np.testing.assert_allclose(np.asarray(out), expected, rtol=tol, atol=tol)


@pytest.mark.slow
@pytest.mark.x64
def test_spsolve_promotes_and_differentiates(solver):
    a, rhs = system()
    A = xs.fromdense(xp.asarray(a.astype(np.float32)), format="bcsr")
    out = xs.linalg.spsolve(A, xp.asarray(rhs))  # float32 with float64: float64
    assert out.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(out), np.linalg.solve(a, rhs), rtol=1e-5)
    A64 = xs.fromdense(xp.asarray(a), format="bcsr")
    grad_b = jax.grad(lambda b: xp.sum(xs.linalg.spsolve(A64, b)).jax)(jnp.asarray(rhs))
    np.testing.assert_allclose(np.asarray(grad_b), np.linalg.solve(a.T, np.ones(len(rhs))), rtol=1e-8)
    grad_A = jax.grad(lambda A: xp.sum(xs.linalg.spsolve(A, xp.asarray(rhs))).jax, allow_int=True)(A64)
    x = np.linalg.solve(a, rhs)
    dense = -np.outer(np.linalg.solve(a.T, np.ones(len(rhs))), x)
    rows, cols = np.nonzero(a)
    np.testing.assert_allclose(np.asarray(grad_A.data), dense[rows, cols], rtol=1e-7, atol=1e-12)


@pytest.mark.slow
def test_spsolve_on_the_host_batches_and_differentiates_in_float32(monkeypatch):
    # the route of a TPU (JAX's spsolve has no kernel there: "MLIR translation rule for primitive
    # 'spsolve' not found for platform tpu"), with lax.custom_linear_solve's rules
    monkeypatch.setattr(sparse_linalg, "_jax_has_spsolve", lambda: False)
    a, rhs = system(dtype=np.float32)
    A = xs.fromdense(xp.asarray(a), format="bcoo")
    rhs2 = np.stack([rhs, 1 - 2 * rhs])
    out = jax.jit(jax.vmap(lambda b: xs.linalg.spsolve(A, b).jax))(jnp.asarray(rhs2))
    np.testing.assert_allclose(np.asarray(out), np.linalg.solve(a, rhs2.T).T, rtol=1e-4, atol=1e-5)
    grad_b = jax.jit(jax.grad(lambda b: xp.sum(xp.sin(xs.linalg.spsolve(A, b))).jax))(jnp.asarray(rhs))
    x = np.linalg.solve(a.astype(np.float64), rhs)
    np.testing.assert_allclose(np.asarray(grad_b), np.linalg.solve(a.T.astype(np.float64), np.cos(x)), rtol=1e-4)


def test_spsolve_without_a_cpu_backend_off_the_cpu_is_a_clear_error(monkeypatch, without_cpu_backend):
    # the host route's callback needs one of JAX's CPU devices (JAX_PLATFORMS=tpu leaves them out)
    monkeypatch.setattr(sparse_linalg, "_jax_has_spsolve", lambda: False)
    a, rhs = system(6, dtype=np.float32)
    with pytest.raises(
        NotImplementedError, match=r"^xp\.sparse\.linalg\.spsolve: sparse direct solves are computed on the host.*"
        r"needs JAX's CPU backend"
    ):  # fmt: skip
        xs.linalg.spsolve(xs.fromdense(xp.asarray(a)), xp.asarray(rhs))


@pytest.mark.x64
def test_spsolve_errors():
    a, rhs = system(6)
    A = xs.fromdense(xp.asarray(a))
    with pytest.raises(TypeError, match="^xp.sparse.linalg.spsolve: A must be a sparse array .* use xp.linalg.solve$"):
        xs.linalg.spsolve(xp.asarray(a), xp.asarray(rhs))
    with pytest.raises(ValueError, match=r"^xp.sparse.linalg.spsolve: b_ must be 1-d of size 6"):
        xs.linalg.spsolve(A, xp.ones(5))
    with pytest.raises(ValueError, match="^xp.sparse.linalg.spsolve: A must be a square 2-d sparse matrix"):
        xs.linalg.spsolve(xs.fromdense(xp.asarray(a[:4])), xp.ones(4))
    with pytest.raises(ValueError, match="^xp.sparse.linalg.spsolve: reorder must be one of 0, 1, 2, 3, got 7$"):
        xs.linalg.spsolve(A, xp.asarray(rhs), reorder=7)
    with pytest.raises(TypeError, match="^xp.sparse.linalg.spsolve: b_ must be a dense array"):
        xs.linalg.spsolve(A, A)


def symmetric(n=60, seed=1):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((n, n)) < 0.1, rng.standard_normal((n, n)), 0.0)
    return a + a.T + np.diag(np.arange(n, dtype=np.float64) / 4)


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("kind", ["bcoo", "bcsr", "dense", "callable"])
def test_lobpcg_standard_finds_the_largest_eigenpairs(kind):
    a = symmetric()
    matrix = xs.fromdense(xp.asarray(a))
    A = {
        "bcoo": matrix,
        "bcsr": xs.fromdense(xp.asarray(a), format="bcsr"),
        "dense": xp.asarray(a),
        "callable": lambda v: matrix @ v,
    }[kind]
    start = xp.asarray(np.random.default_rng(2).standard_normal((60, 3)))
    theta, vectors, iterations = xs.linalg.lobpcg_standard(A, start, m=200)
    expected = np.sort(np.linalg.eigvalsh(a))[::-1][:3]
    assert isinstance(theta, xp.Array) and isinstance(vectors, xp.Array) and isinstance(iterations, xp.Array)
    np.testing.assert_allclose(np.asarray(theta), expected, rtol=1e-6)
    residual = a @ np.asarray(vectors) - np.asarray(vectors) * np.asarray(theta)
    assert np.max(np.abs(residual)) < 1e-4


@pytest.mark.x64
def test_lobpcg_standard_errors():
    A = xs.fromdense(xp.asarray(symmetric()))
    with pytest.raises(
        ValueError, match=r"^xp.sparse.linalg.lobpcg_standard: X of shape \(60, 20\): LOBPCG needs 0 < 5 \* k < n$"
    ):
        xs.linalg.lobpcg_standard(A, xp.ones((60, 20)))
    with pytest.raises(
        TypeError, match=r"^xp.sparse.linalg.lobpcg_standard: A \(float64\) and X \(float32\) must have the same dtype$"
    ):
        xs.linalg.lobpcg_standard(A, xp.ones((60, 2), dtype=xp.float32))
    with pytest.raises(
        TypeError, match="^xp.sparse.linalg.lobpcg_standard: A must be a sparse array, a dense array or a function"
    ):
        xs.linalg.lobpcg_standard("A", xp.ones((60, 2)))
    with pytest.raises(
        ValueError, match=r"^xp.sparse.linalg.lobpcg_standard: A must be a 2-d sparse matrix of shape \(60, 60\)"
    ):
        xs.linalg.lobpcg_standard(xs.fromdense(xp.ones((3, 60, 60))), xp.ones((60, 2)))
