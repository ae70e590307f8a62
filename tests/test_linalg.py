"""xp.linalg: values against numpy.linalg on generated matrices, the dtype and shape rules,
behaviour under jit, vmap and grad, the host fallback of eig/eigvals, and the error messages.
Runs with JAX's 64-bit mode on or off."""

import contextlib
import math

import fixed_shapes
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
from xp import _dtypes as dt
from xp import linalg as linalg_module

AVAILABLE = dt.available()
FLOATING = [d for d in AVAILABLE if d in dt.FLOATING]
REAL_FLOATING = [d for d in AVAILABLE if d in dt.REAL_FLOATING]
INTEGER = [d for d in AVAILABLE if d in dt.INTEGER]
NUMERIC = [d for d in AVAILABLE if d in dt.NUMERIC]
X64 = dt.x64_enabled()
FLOAT = dt.default_float()


def promoted(d1, d2):
    """The promoted dtype of ``d1`` and ``d2``, or None where there is none available now."""
    try:
        result = dt.promote(np.dtype(d1), np.dtype(d2))
    except dt.PromotionError:
        return None
    return result if result in AVAILABLE else None


# --- helpers --------------------------------------------------------------------------------


def real_of(dtype):
    return np.dtype(dt.REAL_OF[np.dtype(dtype)])


def complex_of(dtype):
    return np.dtype(dt.COMPLEX_OF[np.dtype(dtype)])


def tolerance(dtype):
    return 2e-4 if np.dtype(dtype) in (dt.float32, dt.complex64) else 1e-9


def elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -3, 3)
    width = dtype.itemsize * 8 if dtype.kind == "f" else dtype.itemsize * 4
    part = st.floats(-1, 1, width=width, allow_subnormal=False)  # XLA on CPU flushes subnormals to zero
    if dtype.kind == "f":
        return part
    return st.builds(complex, part, part)


batch_shapes = fixed_shapes.shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)


@st.composite
def matrices(draw, dtypes=FLOATING, square=False, min_side=1, max_side=4):
    dtype = draw(st.sampled_from(dtypes))
    m = draw(fixed_shapes.sides(min_side, max_side))
    n = m if square else draw(fixed_shapes.sides(min_side, max_side))
    shape = (*draw(batch_shapes), m, n)
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype)))


def well_conditioned(a):
    """``a`` plus a dominant diagonal: invertible, with a modest condition number."""
    n = a.shape[-1]
    return (a + (n + 1) * np.eye(n, dtype=a.dtype)).astype(a.dtype)


def hermitian_positive_definite(a):
    """``a @ a^H + n I`` (Hermitian, positive definite, well conditioned)."""
    n = a.shape[-1]
    product = a @ np.conj(np.swapaxes(a, -1, -2))
    return (product + n * np.eye(n, dtype=a.dtype)).astype(a.dtype)


def reference(a):
    """``a`` in double precision, for the NumPy reference computation."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def check(result, expected, dtype, rtol=None, atol=None):
    """``result`` is an xp.Array of ``dtype`` (strongly typed) matching ``expected`` in value and shape."""
    assert isinstance(result, xp.Array)
    assert not result.jax.weak_type
    assert result.dtype == dtype, (result.dtype, dtype)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    rtol = tolerance(dtype) if rtol is None else rtol
    actual = np.asarray(result)
    if actual.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol if atol is None else atol)
    else:
        np.testing.assert_array_equal(actual, expected)


def conj_t(a):
    return np.conj(np.swapaxes(a, -1, -2))


# --- decompositions -------------------------------------------------------------------------


@given(a=matrices(square=True), upper=st.booleans())
def test_cholesky_matches_numpy(a, upper):
    a = hermitian_positive_definite(a)
    result = xp.linalg.cholesky(xp.asarray(a), upper=upper)
    expected = np.linalg.cholesky(reference(a), upper=upper)
    check(result, expected, a.dtype, atol=tolerance(a.dtype) * a.shape[-1])
    values = np.asarray(result)
    assert np.array_equal(values, np.triu(values) if upper else np.tril(values))


@given(a=matrices(square=True))
def test_eigh_reconstructs(a):
    a = hermitian_positive_definite(a)
    w, v = xp.linalg.eigh(xp.asarray(a))
    assert w.dtype == real_of(a.dtype) and v.dtype == a.dtype
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    expected = np.linalg.eigvalsh(reference(a))
    scale = a.shape[-1] * 4
    np.testing.assert_allclose(np.asarray(w), expected, rtol=tolerance(a.dtype), atol=tolerance(a.dtype) * scale)
    values, vectors = reference(np.asarray(w)), reference(np.asarray(v))
    rebuilt = (vectors * values[..., None, :]) @ conj_t(vectors)
    np.testing.assert_allclose(rebuilt, a, atol=tolerance(a.dtype) * scale)
    check(xp.linalg.eigvalsh(xp.asarray(a)), expected, real_of(a.dtype), atol=tolerance(a.dtype) * scale)


def test_eigh_is_a_named_tuple():
    result = xp.linalg.eigh(xp.eye(3))
    assert type(result) is not tuple and isinstance(result, tuple)
    assert result._fields == ("eigenvalues", "eigenvectors")
    assert result[0] is result.eigenvalues


EIG_MODES = ["auto", "always"]  # on CPU: JAX's kernel, and the host fallback


@pytest.fixture(params=EIG_MODES)
def eig_mode(request, monkeypatch):
    """Both ways of computing eig on this platform."""
    monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", request.param)
    return request.param


@contextlib.contextmanager
def eig_fallback(mode):
    """The eig switch set to ``mode`` (for hypothesis tests, which cannot take function-scoped fixtures)."""
    previous = linalg_module.EIG_HOST_FALLBACK
    linalg_module.EIG_HOST_FALLBACK = mode
    try:
        yield
    finally:
        linalg_module.EIG_HOST_FALLBACK = previous


@st.composite
def generic_matrices(draw):
    """Random square matrices (Gaussian entries): distinct, well-conditioned eigenvalues almost
    surely. Hypothesis picks the dtype, the shape and the seed."""
    dtype = draw(st.sampled_from(FLOATING))
    n = draw(fixed_shapes.sides(1, 5))
    shape = (*draw(batch_shapes), n, n)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def assert_same_eigenvalues(actual, expected, atol):
    """Each matrix's eigenvalues match as multisets (greedy nearest matching)."""
    actual = np.asarray(actual).reshape(-1, actual.shape[-1]).astype(np.complex128)
    expected = np.asarray(expected).reshape(-1, expected.shape[-1])
    for got, want in zip(actual, expected, strict=True):
        remaining = list(got)
        for value in want:
            distances = np.abs(np.asarray(remaining) - value)
            best = int(np.argmin(distances))
            assert distances[best] <= atol * (1 + abs(value)), (got, want)
            remaining.pop(best)


@pytest.mark.slow
@pytest.mark.parametrize("mode", EIG_MODES)
@given(a=generic_matrices())
def test_eig_matches_numpy(mode, a):
    with eig_fallback(mode):
        result = xp.linalg.eig(xp.asarray(a))
        eigenvalues = xp.linalg.eigvals(xp.asarray(a))
    want = complex_of(a.dtype)
    assert result._fields == ("eigenvalues", "eigenvectors")
    w, v = result
    assert w.dtype == want and v.dtype == want and eigenvalues.dtype == want
    assert w.shape == a.shape[:-1] and v.shape == a.shape and eigenvalues.shape == a.shape[:-1]
    expected = np.linalg.eigvals(reference(a))
    tol = 1e-3 if want == dt.complex64 else 1e-9
    assert_same_eigenvalues(w, expected, tol)
    assert_same_eigenvalues(eigenvalues, expected, tol)
    # each pair solves A v = w v, with unit-norm eigenvectors
    vectors = reference(np.asarray(v))
    residual = reference(a) @ vectors - vectors * reference(np.asarray(w))[..., None, :]
    scale = np.linalg.norm(reference(a), axis=(-2, -1), keepdims=True) + 1
    np.testing.assert_allclose(residual / scale, 0, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=-2), 1, atol=tol)


def test_eig_defective_matrix(eig_mode):
    """A Jordan block: one eigenvalue twice, one eigenvector (the computed ones are parallel)."""
    w, v = xp.linalg.eig(xp.asarray(np.array([[2.0, 1.0], [0.0, 2.0]], FLOAT)))
    np.testing.assert_allclose(np.asarray(w), [2, 2], atol=1e-6)
    values = np.asarray(v)
    np.testing.assert_allclose(np.abs(values[0]), [1, 1], atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", FLOATING + INTEGER[:1])
def test_eig_dtypes(dtype, eig_mode):
    a = np.array([[0, -2], [2, 0]], dtype=dtype)  # eigenvalues +-2i: complex even for real input
    want = complex_of(dtype) if np.dtype(dtype).kind in "fc" else dt.default_complex()
    w = xp.linalg.eigvals(xp.asarray(a))
    assert w.dtype == want
    np.testing.assert_allclose(np.sort(np.asarray(w).imag), [-2, 2], atol=1e-5)
    np.testing.assert_allclose(np.asarray(w).real, [0, 0], atol=1e-5)
    assert xp.linalg.eig(xp.asarray(a)).eigenvectors.dtype == want


def test_eig_real_eigenvalues_are_complex(eig_mode):
    """NumPy returns a real array when every eigenvalue is real; xp is always complex."""
    w, v = xp.linalg.eig(xp.asarray(np.diag([3.0, 1.0]).astype(np.float32)))
    assert w.dtype == xp.complex64 and v.dtype == xp.complex64
    np.testing.assert_allclose(np.sort(np.asarray(w).real), [1, 3])


@pytest.mark.parametrize("vectors", [False, True])
def test_eig_under_jit_and_vmap(eig_mode, vectors):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4)).astype(FLOAT)
    function = (lambda m: xp.linalg.eig(m).eigenvalues) if vectors else xp.linalg.eigvals
    eager = np.asarray(function(xp.asarray(a)))
    jitted = np.asarray(jax.jit(function)(xp.asarray(a)))
    mapped = np.asarray(jax.vmap(function)(xp.asarray(a)))
    nested = np.asarray(jax.jit(jax.vmap(function))(xp.asarray(a)))
    expected = np.linalg.eigvals(a)
    for result in (eager, jitted, mapped, nested):
        assert result.shape == (3, 4)
        np.testing.assert_allclose(np.sort_complex(result), np.sort_complex(expected), atol=1e-4)


@pytest.mark.slow
def test_eig_grad_of_eigenvalues(eig_mode):
    """d sum(real(eigvals(a))) / da = I (the trace), on both paths; a nonlinear case too."""
    rng = np.random.default_rng(1)
    a = xp.asarray(rng.standard_normal((4, 4)).astype(FLOAT))
    grad = jax.grad(lambda m: jnp.sum(jnp.real(xp.linalg.eigvals(m).jax)))(a)
    np.testing.assert_allclose(np.asarray(grad), np.eye(4), atol=1e-4)

    def loss(m):
        return jnp.sum(jnp.real(xp.linalg.eigvals(m).jax) ** 2)

    with jax.default_device(jax.devices("cpu")[0]):  # JAX's own eig, the reference, is the CPU's only
        expected = jax.grad(lambda m: jnp.sum(jnp.real(jnp.linalg.eigvals(m)) ** 2))(np.asarray(a))
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(a)), np.asarray(expected), atol=1e-3)


EIG_AUTO_IS_LAPACK = "'auto' lowers to JAX's kernel, LAPACK's geev, on the CPU only; elsewhere to the host callback"


@pytest.mark.cpu_only(reason=EIG_AUTO_IS_LAPACK)
def test_eig_host_fallback_is_used_when_forced(monkeypatch):
    """'always' compiles a host callback even on CPU; 'auto' uses JAX's LAPACK kernel on CPU."""
    a = jnp.asarray(np.eye(3, dtype=FLOAT))
    lowered = {}
    for mode in ("auto", "always", "never"):
        monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", mode)
        lowered[mode] = jax.jit(lambda m: xp.linalg.eigvals(m).jax).lower(a).as_text()
    assert "callback" not in lowered["auto"] and "geev" in lowered["auto"]
    assert "callback" in lowered["always"] and "geev" not in lowered["always"]
    assert "callback" not in lowered["never"]


def test_eig_auto_is_the_host_computation_where_the_default_backend_has_no_kernel(monkeypatch):
    """On a TPU (simulated: the default backend said to have no eig kernel) 'auto' is the host
    callback, eagerly, under jit and with grad; it was JAX's kernel, which does not lower there."""
    monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", "auto")
    monkeypatch.setattr(linalg_module, "_default_backend_has_eig", lambda: False)
    a = jnp.asarray(np.diag([3.0, 1.0, 2.0]).astype(FLOAT))
    for function in (lambda m: xp.linalg.eigvals(m).jax, lambda m: xp.linalg.eig(m).eigenvectors.jax):
        traced = str(jax.make_jaxpr(jax.jit(function))(a))  # a host callback in every platform's lowering
        assert "pure_callback" in traced and " eig[" not in traced
    assert sorted(np.asarray(xp.linalg.eigvals(a)).real.tolist()) == [1.0, 2.0, 3.0]
    grad = jax.grad(lambda m: jnp.sum(jnp.real(xp.linalg.eigvals(m).jax)))(a)
    np.testing.assert_allclose(np.asarray(grad), np.eye(3), atol=1e-5)


@pytest.mark.cpu_only(reason=EIG_AUTO_IS_LAPACK)
def test_eig_switch_from_the_environment(monkeypatch):
    monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", None)
    a = jnp.asarray(np.eye(2, dtype=FLOAT))
    monkeypatch.setenv("XP_EIG_HOST_FALLBACK", "always")  # read at call time
    assert "callback" in jax.jit(lambda m: xp.linalg.eigvals(m).jax).lower(a).as_text()
    monkeypatch.delenv("XP_EIG_HOST_FALLBACK")
    assert "callback" not in jax.jit(lambda m: xp.linalg.eigvals(m).jax).lower(a).as_text()
    monkeypatch.setenv("XP_EIG_HOST_FALLBACK", "sometimes")
    with pytest.raises(ValueError, match=r"xp\.linalg\.eigvals: .*XP_EIG_HOST_FALLBACK.*'sometimes'"):
        xp.linalg.eigvals(a)


def test_eig_host_fallback_non_finite_gives_nan(monkeypatch):
    monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", "always")
    a = np.stack([np.eye(2), np.full((2, 2), np.nan)]).astype(FLOAT)
    w, v = xp.linalg.eig(xp.asarray(a))
    assert np.all(np.isnan(np.asarray(w)[1])) and np.all(np.isnan(np.asarray(v)[1]))
    np.testing.assert_allclose(np.asarray(w)[0], [1, 1])


def test_eig_host_fallback_eigenvectors_not_differentiable(monkeypatch):
    monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", "always")
    with pytest.raises(NotImplementedError, match="eigvals"):
        jax.grad(lambda m: jnp.sum(jnp.abs(xp.linalg.eig(m).eigenvectors.jax)))(xp.eye(3))


def test_eig_on_the_host_without_a_cpu_backend_is_a_clear_error(monkeypatch, without_cpu_backend):
    # JAX_PLATFORMS=tpu leaves the CPU out, and jax.pure_callback needs a CPU device: the error was
    # JAX's, from inside the compiled program
    monkeypatch.setattr(linalg_module, "EIG_HOST_FALLBACK", "always")
    a = xp.asarray(np.eye(2, dtype=FLOAT))
    for function in (xp.linalg.eig, xp.linalg.eigvals):
        with pytest.raises(
            NotImplementedError, match=rf"^xp\.linalg\.{function.__name__}: .*needs JAX's CPU backend.*JAX_PLATFORMS="
        ):
            function(a)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_eig_empty(shape, eig_mode):
    w, v = xp.linalg.eig(xp.zeros(shape))
    assert w.shape == shape[:-1] and v.shape == shape and w.dtype == dt.default_complex()


@given(a=matrices(), mode=st.sampled_from(["reduced", "complete"]))
def test_qr(a, mode):
    q, r = xp.linalg.qr(xp.asarray(a), mode=mode)
    m, n = a.shape[-2:]
    k = min(m, n) if mode == "reduced" else m
    assert q.shape == (*a.shape[:-2], m, k) and r.shape == (*a.shape[:-2], k, n)
    assert q.dtype == a.dtype and r.dtype == a.dtype
    qv, rv = reference(np.asarray(q)), np.asarray(r)
    np.testing.assert_array_equal(rv, np.triu(rv))
    tol = tolerance(a.dtype) * 10
    np.testing.assert_allclose(qv @ reference(rv), a, atol=tol)
    np.testing.assert_allclose(conj_t(qv) @ qv, np.broadcast_to(np.eye(k), (*qv.shape[:-2], k, k)), atol=tol)


@pytest.mark.parametrize("magnitude", [1e-30, 1e30])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("shape", [(2, 2), (3, 2), (2, 3), (2, 3, 2)])
def test_qr_of_large_and_small_entries(shape, dtype, magnitude):
    """Entries whose squares leave float32's range: LAPACK scales its norms, and xp scales the
    columns where XLA's QR does not (a TPU: NaN for 1e30, R = 0 for 1e-30 before)."""
    rng = np.random.default_rng(0)
    a = (rng.uniform(1, 2, shape) * magnitude).astype(dtype)
    q, r = xp.linalg.qr(xp.asarray(a))
    rebuilt = np.asarray(q).astype(np.complex128) @ np.asarray(r).astype(np.complex128)
    np.testing.assert_allclose(rebuilt, a, rtol=1e-5, atol=0)
    assert not np.isnan(np.asarray(q)).any()


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_column_scaling_matches_the_plain_decomposition(mode):
    """The accelerators' path (columns scaled by powers of two) checked where it is not the
    default: the same Q, and R up to rounding, as the decomposition of the matrix as it is."""
    a = jnp.asarray(np.random.default_rng(1).standard_normal((3, 4, 3)).astype(np.float32) * [1e-3, 1.0, 1e3])
    q, r = linalg_module._qr_column_scaled(a, mode)
    q0, r0 = jnp.linalg.qr(a, mode=mode)
    np.testing.assert_allclose(np.asarray(q), np.asarray(q0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(r), np.asarray(r0), rtol=1e-5, atol=1e-6 * 1e3)


def test_qr_is_a_named_tuple():
    result = xp.linalg.qr(xp.eye(2))
    assert result._fields == ("Q", "R") and result.Q is result[0]


@pytest.mark.slow
@given(a=matrices(), full=st.booleans())
def test_svd(a, full):
    u, s, vh = xp.linalg.svd(xp.asarray(a), full_matrices=full)
    m, n = a.shape[-2:]
    k = min(m, n)
    assert u.shape == a.shape[:-2] + ((m, m) if full else (m, k))
    assert vh.shape == a.shape[:-2] + ((n, n) if full else (k, n))
    assert s.shape == (*a.shape[:-2], k)
    assert u.dtype == a.dtype and vh.dtype == a.dtype and s.dtype == real_of(a.dtype)
    expected = np.linalg.svd(reference(a), compute_uv=False)
    tol = tolerance(a.dtype) * 10
    np.testing.assert_allclose(np.asarray(s), expected, atol=tol)
    assert np.all(np.diff(np.asarray(s), axis=-1) <= 0)
    uv, vhv = reference(np.asarray(u))[..., :k], reference(np.asarray(vh))[..., :k, :]
    np.testing.assert_allclose((uv * np.asarray(s)[..., None, :]) @ vhv, a, atol=tol)
    check(xp.linalg.svdvals(xp.asarray(a)), expected, real_of(a.dtype), atol=tol)


def test_svd_is_a_named_tuple():
    result = xp.linalg.svd(xp.eye(2))
    assert result._fields == ("U", "S", "Vh") and result.Vh is result[2]


@pytest.mark.slow
@pytest.mark.parametrize("magnitude", [1e-30, 1e19, 1e30])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("shape", [(2, 5), (3, 3), (2, 4, 2)])
def test_singular_values_of_large_and_small_entries(shape, dtype, magnitude):
    """Entries whose squares leave float32's range: LAPACK scales the matrix, and xp scales it
    where XLA's SVD does not (on a TPU, upstream test_svd drew a 2 x 5 complex64 matrix of
    entries near 1e19 whose singular values came out of order). svd, svdvals, matrix_rank,
    pinv and the spectral norms all take the singular values this way."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, shape) * magnitude
    if dtype == "complex64":
        a = a + 1j * rng.uniform(-2, 2, shape) * magnitude
    a = a.astype(dtype)
    exact = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    u, s, vh = xp.linalg.svd(xp.asarray(a), full_matrices=False)
    np.testing.assert_allclose(np.asarray(s), exact, rtol=1e-5, atol=0)
    rebuilt = (np.asarray(u).astype(np.complex128) * np.asarray(s)[..., None, :]) @ np.asarray(vh)
    largest = exact[..., 0]  # errors relative to the matrix's norm
    assert (np.abs(rebuilt - a).max(axis=(-2, -1)) <= 1e-5 * largest).all()
    np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(xp.asarray(a))), exact, rtol=1e-5, atol=0)
    np.testing.assert_allclose(np.asarray(xp.linalg.matrix_norm(xp.asarray(a), ord=2)), exact[..., 0], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(xp.linalg.matrix_norm(xp.asarray(a), ord=-2)), exact[..., -1], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(xp.linalg.matrix_norm(xp.asarray(a), ord="nuc")), exact.sum(-1), rtol=1e-5)
    assert (np.asarray(xp.linalg.matrix_rank(xp.asarray(a))) == min(shape[-2:])).all()
    pinv = np.asarray(xp.linalg.pinv(xp.asarray(a))).astype(np.complex128)
    assert (np.abs(a @ pinv @ a - a).max(axis=(-2, -1)) <= 1e-4 * largest).all()


@pytest.mark.parametrize("compute_uv", [True, False])
def test_svd_scaling_matches_the_plain_decomposition(compute_uv):
    """The accelerators' path (each matrix divided by a power of two) checked where it is not
    the default: the singular values, and U and Vh, as the plain decomposition's up to rounding."""
    a = jnp.asarray(
        np.random.default_rng(2).standard_normal((3, 4, 3)).astype(np.float32) * [[[1e-3]], [[1.0]], [[1e3]]]
    )
    scaled = linalg_module._svd_scaled(a, full_matrices=False, compute_uv=compute_uv)
    plain = jnp.linalg.svd(a, full_matrices=False, compute_uv=compute_uv)
    for got, want in zip(scaled, plain, strict=True) if compute_uv else [(scaled, plain)]:
        np.testing.assert_allclose(np.abs(np.asarray(got)), np.abs(np.asarray(want)), rtol=1e-4, atol=1e-5 * 1e3)
    pinv = linalg_module._pinv_scaled(a, rtol=jnp.full((3,), 1e-6, jnp.float32))
    np.testing.assert_allclose(np.asarray(pinv), np.asarray(jnp.linalg.pinv(a, rtol=1e-6)), rtol=1e-4, atol=1e-5)


# --- determinants, inverses, solutions ------------------------------------------------------


@given(a=matrices(square=True))
def test_det_and_slogdet(a):
    det = xp.linalg.det(xp.asarray(a))
    expected = np.linalg.det(reference(a))
    check(det, expected, a.dtype, atol=tolerance(a.dtype) * 10)
    sign, logabsdet = xp.linalg.slogdet(xp.asarray(a))
    assert sign.dtype == a.dtype and logabsdet.dtype == real_of(a.dtype)
    assert sign.shape == a.shape[:-2] and logabsdet.shape == a.shape[:-2]
    rebuilt = reference(np.asarray(sign)) * np.exp(reference(np.asarray(logabsdet)))
    np.testing.assert_allclose(rebuilt, expected, atol=tolerance(a.dtype) * 10, rtol=tolerance(a.dtype) * 10)


def test_slogdet_singular():
    for dtype in FLOATING:
        sign, logabsdet = xp.linalg.slogdet(xp.zeros((2, 2), dtype=dtype))
        assert complex(sign) == 0 and float(logabsdet) == -math.inf
    assert xp.linalg.slogdet(xp.eye(2))._fields == ("sign", "logabsdet")


@pytest.mark.slow
@given(a=matrices(square=True))
def test_inv(a):
    a = well_conditioned(a)
    check(xp.linalg.inv(xp.asarray(a)), np.linalg.inv(reference(a)), a.dtype)


@pytest.mark.slow
@given(a=matrices(square=True), data=st.data())
def test_solve_matrix_right_hand_side(a, data):
    a = well_conditioned(a)
    m = a.shape[-1]
    batch = data.draw(fixed_shapes.broadcastable_with(a.shape[:-2]), label="x2 batch")
    k = data.draw(st.integers(1, 3), label="k")
    dtype = data.draw(st.sampled_from(FLOATING), label="x2 dtype")
    rhs = data.draw(hnp.arrays(dtype, (*batch, m, k), elements=elements(dtype)), label="x2")
    want = promoted(a.dtype, rhs.dtype)
    if want is None:
        return
    result = xp.linalg.solve(xp.asarray(a), xp.asarray(rhs))
    shape = (*np.broadcast_shapes(a.shape[:-2], batch), m, k)
    expected = np.linalg.solve(np.broadcast_to(reference(a), (*shape[:-2], m, m)), reference(rhs))
    check(result, np.broadcast_to(expected, shape), want)


@pytest.mark.slow
@given(a=matrices(square=True), data=st.data())
def test_solve_vector_right_hand_side(a, data):
    """A 1-d x2 is one vector for every matrix of the stack (the 2024.12 rule)."""
    a = well_conditioned(a)
    m = a.shape[-1]
    rhs = data.draw(hnp.arrays(a.dtype, (m,), elements=elements(a.dtype)))
    result = xp.linalg.solve(xp.asarray(a), xp.asarray(rhs))
    expected = np.linalg.solve(reference(a), np.broadcast_to(reference(rhs)[:, None], (*a.shape[:-1], 1)))[..., 0]
    check(result, expected, a.dtype)


def test_solve_vector_is_not_a_batch_of_vectors():
    """x2 of shape (3, 3) with x1 (3, 3, 3) is one (3, 3) matrix, not three vectors."""
    a = np.stack([well_conditioned(np.eye(3) * i) for i in range(1, 4)]).astype(FLOAT)
    rhs = np.arange(9.0).reshape(3, 3).astype(FLOAT)
    result = xp.linalg.solve(xp.asarray(a), xp.asarray(rhs))
    np.testing.assert_allclose(np.asarray(result), np.linalg.solve(a, np.broadcast_to(rhs, (3, 3, 3))), rtol=1e-5)


@pytest.mark.slow
def test_solve_with_rows_near_the_ends_of_float32_s_range():
    # LU takes its pivots' reciprocals, flushed to 0 past 2**126: x was 0 (jax.numpy's too); such
    # rows are equilibrated by powers of two, the others left alone
    a = np.float32([[3e38, 1e38], [1e38, 2e38]])
    got = np.asarray(xp.linalg.solve(xp.asarray(a), xp.asarray(np.float32([1e38, 1e38]))))
    np.testing.assert_allclose(got, [0.2, 0.4], rtol=1e-6)
    mixed = np.float32([[3e38, 0.0, 0.0], [0.0, 1.0, 2.0], [0.0, 1e-36, 3e-36]])  # one row of each kind
    got = np.asarray(
        xp.linalg.solve(xp.asarray(mixed), xp.asarray(np.float32([[3e38, 1.5e38], [3.0, 1.0], [4e-36, 0.0]])))
    )
    np.testing.assert_allclose(got, np.linalg.solve(mixed.astype(np.float64), [[3e38, 1.5e38], [3.0, 1.0], [4e-36, 0.0]]),
                               rtol=1e-5)  # fmt: skip
    rng = np.random.default_rng(0)  # no such row: jax.numpy's solution, bit for bit
    m, v, many = (rng.standard_normal(shape).astype(np.float32) for shape in ((3, 5, 5), (5,), (3, 5, 2)))
    for rhs, want in ((v, jnp.linalg.solve(m, v)), (many, jnp.linalg.solve(m, many))):
        np.testing.assert_array_equal(np.asarray(xp.linalg.solve(xp.asarray(m), xp.asarray(rhs))), np.asarray(want))


@given(a=matrices(square=True), n=st.integers(-4, 6))
def test_matrix_power(a, n):
    a = well_conditioned(a) / (a.shape[-1] + 1)
    a = a.astype(a.dtype)
    expected = np.linalg.matrix_power(reference(a), n)
    check(xp.linalg.matrix_power(xp.asarray(a), n), expected, a.dtype, rtol=tolerance(a.dtype) * 10)


@given(a=matrices(max_side=5), data=st.data())
def test_pinv(a, data):
    use = data.draw(st.sampled_from(["default", "float", "array"]))
    real = real_of(a.dtype)
    m, n = a.shape[-2:]
    if use == "default":
        rtol, np_rtol = None, max(m, n) * np.finfo(real).eps
    elif use == "float":
        rtol = np_rtol = data.draw(st.floats(0.01, 0.5))
    else:
        np_rtol = data.draw(hnp.arrays(np.float64, a.shape[:-2], elements=st.floats(0.01, 0.5))).astype(real)
        rtol = xp.asarray(np_rtol)
    result = xp.linalg.pinv(xp.asarray(a), rtol=rtol)
    expected = np.linalg.pinv(reference(a), rtol=np.asarray(np_rtol, np.float64))
    assert result.shape == (*a.shape[:-2], n, m)
    # skip inputs the comparison cannot judge: a singular value near the cutoff (where the
    # pseudo-inverse jumps), or kept singular values so small that the inverse is ill conditioned
    s = np.linalg.svd(reference(a), compute_uv=False)
    largest = s[..., :1]
    cutoff = np.asarray(np_rtol)[..., None] * largest
    kept = s[s > cutoff]
    if np.any(np.abs(s - cutoff) < 1e-3 * np.maximum(largest, 1e-30)) or np.any(
        kept < (1e-2 if real == dt.float32 else 1e-6) * np.broadcast_to(largest, s.shape)[s > cutoff]
    ):
        return
    check(
        result,
        expected,
        a.dtype,
        rtol=tolerance(a.dtype) * 100,
        atol=tolerance(a.dtype) * 100 * (1 + np.abs(expected).max(initial=0)),
    )


@pytest.mark.slow
@given(a=matrices(max_side=5), data=st.data())
def test_matrix_rank(a, data):
    # build known ranks: the product of (m, r) and (r, n) factors has rank r (almost surely)
    m, n = a.shape[-2:]
    r = data.draw(st.integers(0, min(m, n)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    left = rng.standard_normal((*a.shape[:-2], m, r))
    right = rng.standard_normal((*a.shape[:-2], r, n))
    x = (left @ right).astype(a.dtype)
    result = xp.linalg.matrix_rank(xp.asarray(x))
    check(result, np.full(a.shape[:-2], r), dt.default_int())
    check(xp.linalg.matrix_rank(xp.asarray(x), rtol=2.0), np.zeros(a.shape[:-2]), dt.default_int())


@pytest.mark.slow
def test_matrix_rank_rtol_array_broadcasts():
    a = np.stack([np.diag([1.0, 0.1, 0.01]), np.diag([1.0, 0.5, 0.2])]).astype(FLOAT)
    rtol = xp.asarray(np.array([0.05, 0.3], FLOAT))
    check(xp.linalg.matrix_rank(xp.asarray(a), rtol=rtol), [2, 2], dt.default_int())
    check(xp.linalg.matrix_rank(xp.asarray(a), rtol=0.15), [1, 3], dt.default_int())
    with pytest.raises(ValueError, match=r"xp\.linalg\.matrix_rank: rtol of shape \(3,\) cannot be broadcast"):
        xp.linalg.matrix_rank(xp.asarray(a), rtol=xp.ones(3))
    with pytest.raises(TypeError, match=r"xp\.linalg\.matrix_rank: rtol must be .*real floating.*int"):
        xp.linalg.matrix_rank(xp.asarray(a), rtol=xp.asarray(np.array([1, 2], np.int32)))


# --- norms ----------------------------------------------------------------------------------

MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@given(a=matrices(), ord=st.sampled_from(MATRIX_ORDS), keepdims=st.booleans())
def test_matrix_norm(a, ord, keepdims):
    result = xp.linalg.matrix_norm(xp.asarray(a), ord=ord, keepdims=keepdims)
    expected = np.linalg.matrix_norm(reference(a), ord=ord, keepdims=keepdims)
    check(result, expected, real_of(a.dtype), atol=tolerance(a.dtype) * 10)


def test_matrix_norm_of_empty_matrices_is_zero():
    for ord in MATRIX_ORDS:
        result = xp.linalg.matrix_norm(xp.zeros((2, 0, 3)), ord=ord, keepdims=True)
        check(result, np.zeros((2, 1, 1)), FLOAT)


@st.composite
def vector_norm_arguments(draw):
    dtype = draw(st.sampled_from(FLOATING))
    x = draw(
        hnp.arrays(dtype, fixed_shapes.shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), elements=elements(dtype))
    )
    if x.ndim == 0:
        axis = None
    else:
        axis = draw(
            st.none()
            | st.integers(-x.ndim, x.ndim - 1)
            | st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True).map(tuple)
        )
    ord = draw(st.sampled_from([2, 1, 0, -1, -2, math.inf, -math.inf, 3, 0.5, -3.5, 2.5]))
    return x, axis, ord, draw(st.booleans())


@given(args=vector_norm_arguments())
def test_vector_norm(args):
    x, axis, ord, keepdims = args
    result = xp.linalg.vector_norm(xp.asarray(x), axis=axis, keepdims=keepdims, ord=ord)
    with np.errstate(divide="ignore", over="ignore"):
        expected = np.linalg.vector_norm(reference(x), axis=axis, keepdims=keepdims, ord=ord)
    check(result, expected, real_of(x.dtype), rtol=tolerance(x.dtype) * 10)


@given(data=st.data())
def test_norms_of_elements_whose_powers_overflow_or_underflow(data):
    # float32 magnitudes from 1e-30 to 1e30: their squares leave float32's range (the 2-norm of
    # [1e20, 1e20] was inf, of [1e-20, 1e-20] 0, as XLA flushes subnormals); float64 holds them
    exponents = data.draw(hnp.arrays(np.float64, (3, 4), elements=st.floats(-30, 30)), label="log10 |x|")
    signs = data.draw(hnp.arrays(np.int8, (3, 4), elements=st.sampled_from([-1, 1])), label="signs")
    x = (signs * 10.0**exponents).astype(np.float32)
    ord = data.draw(st.sampled_from([2, 3, 0.5, 2.5]), label="ord")
    axis = data.draw(st.sampled_from([None, 0, 1, (0, 1)]), label="axis")
    want = np.linalg.vector_norm(x.astype(np.float64), axis=axis, ord=ord)
    got = np.asarray(xp.linalg.vector_norm(xp.asarray(x), axis=axis, ord=ord))
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-5)
    fro = np.asarray(xp.linalg.matrix_norm(xp.asarray(x)))
    np.testing.assert_allclose(fro, np.linalg.matrix_norm(x.astype(np.float64)).astype(np.float32), rtol=1e-5)


@pytest.mark.parametrize("ord", [2, 3])
def test_norms_of_float32_s_largest_numbers(ord):
    # rescaled by the largest magnitude, whose reciprocal XLA multiplies by: past 2**126 it was
    # flushed to 0, and so was the norm ([3e38, 1e38] gave 0)
    x = np.float32([[3e38, 1e38], [2.0**127, -(2.0**126)], [-3.4e38, 0.0]])
    want = np.linalg.vector_norm(x.astype(np.float64), axis=1, ord=ord)
    np.testing.assert_allclose(np.asarray(xp.linalg.vector_norm(xp.asarray(x), axis=1, ord=ord)), want, rtol=1e-6)
    column = np.float32([[3e38], [1e38]])
    fro = np.asarray(xp.linalg.matrix_norm(xp.asarray(column)))
    np.testing.assert_allclose(fro, np.linalg.matrix_norm(column.astype(np.float64)), rtol=1e-6)


@pytest.mark.x64
@pytest.mark.parametrize("magnitude", [1e-300, 1e-200, 1e-160, 1e160, 1e200, 1e300])
def test_2_norm_in_float64_across_the_range(magnitude):
    values = [magnitude, 2.5 * magnitude, -0.5 * magnitude]
    norm = xp.linalg.vector_norm(xp.asarray(np.array(values)))
    assert float(norm) == pytest.approx(math.hypot(*values), rel=1e-15, abs=0)


@pytest.mark.slow
def test_norms_keep_infinities_nans_and_zeros():
    x = xp.asarray(np.array([[np.inf, 1.0], [np.nan, 1.0], [np.inf, np.nan], [0.0, 0.0], [1e-30, 1e-30]], np.float32))
    got = np.asarray(xp.linalg.vector_norm(x, axis=1))
    np.testing.assert_allclose(got, [np.inf, np.nan, np.nan, 0.0, 1.4142135e-30], rtol=1e-6)
    assert xp.linalg.vector_norm(x, axis=1, keepdims=True).shape == (5, 1)
    # the derivative of the rescaled norm is x / |x|
    tiny = xp.asarray(np.array([1e-30, 2e-30], np.float32))
    gradient = xp.transforms.grad(lambda v: xp.linalg.vector_norm(v))(tiny)
    np.testing.assert_allclose(np.asarray(gradient), np.array([1, 2]) / np.sqrt(5), rtol=1e-6)
    rows = jax.vmap(lambda r: xp.linalg.vector_norm(r))(x)  # (the rescaling decided per row)
    np.testing.assert_allclose(np.asarray(rows), got, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", INTEGER)
def test_norms_compute_integers_in_the_default_float(dtype):
    x = xp.asarray(np.array([[3, 4], [0, 0]], dtype=dtype))
    check(xp.linalg.vector_norm(x), 5.0, FLOAT)
    check(xp.linalg.matrix_norm(x), 5.0, FLOAT)
    check(xp.linalg.det(x), 0.0, FLOAT)


def test_vector_norm_empty():
    check(xp.linalg.vector_norm(xp.zeros((0,))), 0.0, FLOAT)
    check(xp.linalg.vector_norm(xp.zeros((0,)), ord=math.inf), 0.0, FLOAT)
    check(xp.linalg.vector_norm(xp.zeros((0,)), ord=-math.inf), math.inf, FLOAT)


# --- products and diagonals -----------------------------------------------------------------


@st.composite
def cross_arguments(draw):
    d1, d2 = draw(st.sampled_from(NUMERIC)), draw(st.sampled_from(NUMERIC))
    if promoted(d1, d2) is None:
        d1 = d2
    shape1, shape2 = draw(
        fixed_shapes.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3)
    ).input_shapes
    low = min(len(shape1), len(shape2))
    axis = draw(st.integers(-low, -1))
    shape1, shape2 = list(shape1), list(shape2)
    shape1[axis] = shape2[axis] = 3
    x1 = draw(hnp.arrays(d1, tuple(shape1), elements=elements(d1)))
    x2 = draw(hnp.arrays(d2, tuple(shape2), elements=elements(d2)))
    return x1, x2, axis


@given(args=cross_arguments())
def test_cross(args):
    x1, x2, axis = args
    want = dt.promote(x1.dtype, x2.dtype)
    result = xp.linalg.cross(xp.asarray(x1), xp.asarray(x2), axis=axis)
    expected = np.cross(x1.astype(want), x2.astype(want), axis=axis)
    check(result, expected, want)


def test_cross_errors():
    with pytest.raises(ValueError, match=r"xp\.linalg\.cross: x1 and x2 must have size 3 along axis -1"):
        xp.linalg.cross(xp.ones((2, 3)), xp.ones((2, 2)))
    with pytest.raises(IndexError, match=r"xp\.linalg\.cross: axis=-3 is out of bounds"):
        xp.linalg.cross(xp.ones((3, 3, 3)), xp.ones((3, 3)), axis=-3)
    with pytest.raises(ValueError, match=r"xp\.linalg\.cross: axis=0 must be negative"):
        xp.linalg.cross(xp.ones((3, 3, 3)), xp.ones((3, 3)), axis=0)
    with pytest.raises(TypeError, match=r"xp\.linalg\.cross: x1 must have a numeric dtype, got bool"):
        xp.linalg.cross(xp.ones(3, dtype=xp.bool), xp.ones(3))
    # a non-negative axis is taken when the ranks agree
    check(xp.linalg.cross(xp.asarray([[1.0], [0.0], [0.0]]), xp.asarray([[0.0], [1.0], [0.0]]), axis=0),
          [[0.0], [0.0], [1.0]], FLOAT)  # fmt: skip


@given(
    x1=st.sampled_from(NUMERIC).flatmap(lambda d: hnp.arrays(d, fixed_shapes.sides(0, 4), elements=elements(d))),
    x2=st.sampled_from(NUMERIC).flatmap(lambda d: hnp.arrays(d, fixed_shapes.sides(0, 4), elements=elements(d))),
)
def test_outer(x1, x2):
    if promoted(x1.dtype, x2.dtype) is None:
        return
    want = dt.promote(x1.dtype, x2.dtype)
    expected = np.outer(x1.astype(want), x2.astype(want))
    check(xp.linalg.outer(xp.asarray(x1), xp.asarray(x2)), expected, want, rtol=0 if want.kind == "f" else None)


def test_outer_needs_vectors():
    with pytest.raises(ValueError, match=r"xp\.linalg\.outer: x1 and x2 must be 1-dimensional, got shapes \(2, 2\)"):
        xp.linalg.outer(xp.ones((2, 2)), xp.ones(2))


@given(a=matrices(dtypes=AVAILABLE, min_side=0), offset=st.integers(-6, 6))
def test_diagonal(a, offset):
    check(xp.linalg.diagonal(xp.asarray(a), offset=offset), np.diagonal(a, offset, -2, -1), a.dtype, rtol=0)


@given(a=matrices(dtypes=NUMERIC, min_side=0), offset=st.integers(-6, 6))
def test_trace(a, offset):
    default = dt.default_int()
    if a.dtype.kind == "i":
        want = default
    elif a.dtype.kind == "u":
        want = np.dtype(f"uint{default.itemsize * 8}")
    else:
        want = a.dtype
    result = xp.linalg.trace(xp.asarray(a), offset=offset)
    check(result, np.trace(a.astype(want), offset, -2, -1, dtype=want), want)


def test_trace_explicit_dtype():
    a = xp.asarray(np.full((3, 3), 100, np.int8))
    check(xp.linalg.trace(a, dtype=xp.int8), np.int8(44), dt.int8)  # cast first: 300 wraps in int8
    check(xp.linalg.trace(a, dtype=xp.float32), 300.0, dt.float32)
    with pytest.raises(TypeError, match=r"xp\.linalg\.trace: dtype=float32 cannot hold the complex values"):
        xp.linalg.trace(xp.asarray(np.eye(2, dtype=np.complex64)), dtype=xp.float32)


# --- dtype rules ----------------------------------------------------------------------------

FLOATING_ONLY = {
    "cholesky": lambda x: xp.linalg.cholesky(x),
    "det": lambda x: xp.linalg.det(x),
    "eigh": lambda x: xp.linalg.eigh(x).eigenvectors,
    "eigvalsh": lambda x: xp.linalg.eigvalsh(x),
    "eig": lambda x: xp.linalg.eig(x).eigenvectors,
    "eigvals": lambda x: xp.linalg.eigvals(x),
    "inv": lambda x: xp.linalg.inv(x),
    "matrix_norm": lambda x: xp.linalg.matrix_norm(x),
    "matrix_power": lambda x: xp.linalg.matrix_power(x, 2),
    "matrix_rank": lambda x: xp.linalg.matrix_rank(x),
    "pinv": lambda x: xp.linalg.pinv(x),
    "qr": lambda x: xp.linalg.qr(x).R,
    "slogdet": lambda x: xp.linalg.slogdet(x).logabsdet,
    "solve": lambda x: xp.linalg.solve(x, x),
    "svd": lambda x: xp.linalg.svd(x).S,
    "svdvals": lambda x: xp.linalg.svdvals(x),
    "vector_norm": lambda x: xp.linalg.vector_norm(x),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FLOATING_ONLY))
def test_integer_input_is_computed_in_the_default_float(name):
    ints = xp.asarray(np.array([[2, 1], [1, 2]], dtype=np.int32))
    floats = xp.asarray(np.array([[2, 1], [1, 2]], dtype=FLOAT))
    result, expected = FLOATING_ONLY[name](ints), FLOATING_ONLY[name](floats)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(result), np.asarray(expected))


@pytest.mark.parametrize("name", sorted(FLOATING_ONLY))
def test_bool_input_is_rejected(name):
    with pytest.raises(TypeError, match=rf"xp\.linalg\.{name}: x1? must have a floating-point dtype .*got bool"):
        FLOATING_ONLY[name](xp.asarray(np.eye(2, dtype=bool)))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", FLOATING)
def test_precision_follows_the_input(dtype):
    a = xp.asarray(np.array([[2, 1], [1, 3]], dtype=dtype))
    real = real_of(dtype)
    assert xp.linalg.det(a).dtype == dtype
    assert xp.linalg.inv(a).dtype == dtype
    assert xp.linalg.svdvals(a).dtype == real
    assert xp.linalg.eigvalsh(a).dtype == real
    assert xp.linalg.vector_norm(a).dtype == real
    assert xp.linalg.matrix_norm(a, ord=2).dtype == real
    assert xp.linalg.slogdet(a).logabsdet.dtype == real
    assert xp.linalg.eigvals(a).dtype == complex_of(dtype)
    assert xp.linalg.matrix_rank(a).dtype == dt.default_int()


# --- jit, vmap, grad ------------------------------------------------------------------------


@pytest.mark.slow
def test_jit_matches_eager():
    rng = np.random.default_rng(2)
    a = xp.asarray(well_conditioned(rng.standard_normal((2, 3, 3))).astype(FLOAT))
    v = xp.asarray(rng.standard_normal(3).astype(FLOAT))
    functions = [
        lambda a, v: xp.linalg.solve(a, v),
        lambda a, v: xp.linalg.det(a),
        lambda a, v: xp.linalg.inv(a),
        lambda a, v: xp.linalg.pinv(a, rtol=0.01),
        lambda a, v: xp.linalg.matrix_rank(a),
        lambda a, v: xp.linalg.vector_norm(v, ord=3),
        lambda a, v: xp.linalg.matrix_norm(a, ord="nuc"),
        lambda a, v: xp.linalg.cross(a, v),
        lambda a, v: xp.linalg.trace(a, offset=1),
        lambda a, v: xp.linalg.svd(a).S,
        lambda a, v: xp.linalg.qr(a).Q,
        lambda a, v: xp.linalg.eigh(a).eigenvalues,
    ]
    for function in functions:
        np.testing.assert_allclose(np.asarray(jax.jit(function)(a, v)), np.asarray(function(a, v)), rtol=1e-5)


def test_vmap():
    rng = np.random.default_rng(3)
    a = well_conditioned(rng.standard_normal((4, 3, 3))).astype(FLOAT)
    b = rng.standard_normal((4, 3)).astype(FLOAT)
    result = jax.vmap(xp.linalg.solve)(xp.asarray(a), xp.asarray(b))
    np.testing.assert_allclose(np.asarray(result), np.linalg.solve(a, b[..., None])[..., 0], rtol=1e-4)
    dets = jax.vmap(xp.linalg.det)(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(dets), np.linalg.det(a), rtol=1e-4)
    norms = jax.vmap(lambda row: xp.linalg.vector_norm(row, ord=1))(xp.asarray(b))
    np.testing.assert_allclose(np.asarray(norms), np.abs(b).sum(1), rtol=1e-5)


def test_grad_of_det():
    rng = np.random.default_rng(4)
    a = well_conditioned(rng.standard_normal((3, 3))).astype(FLOAT)
    grad = jax.grad(lambda m: xp.linalg.det(m).jax)(xp.asarray(a))
    # d det(A) / dA = det(A) A^-T
    np.testing.assert_allclose(np.asarray(grad), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-4)


def test_grad_of_solve():
    rng = np.random.default_rng(5)
    a = well_conditioned(rng.standard_normal((3, 3))).astype(FLOAT)
    b = rng.standard_normal(3).astype(FLOAT)
    # d sum(A^-1 b) / db = A^-T 1
    grad_b = jax.grad(lambda v: jnp.sum(xp.linalg.solve(xp.asarray(a), v).jax))(xp.asarray(b))
    np.testing.assert_allclose(np.asarray(grad_b), np.linalg.solve(a.T, np.ones(3)), rtol=1e-4)
    # d sum(A^-1 b) / dA = -A^-T 1 x^T with x = A^-1 b
    grad_a = jax.grad(lambda m: jnp.sum(xp.linalg.solve(m, xp.asarray(b)).jax))(xp.asarray(a))
    x = np.linalg.solve(a, b)
    np.testing.assert_allclose(np.asarray(grad_a), -np.outer(np.linalg.solve(a.T, np.ones(3)), x), rtol=1e-4)


@pytest.mark.slow
def test_grad_of_norms():
    rng = np.random.default_rng(6)
    v = rng.standard_normal(5).astype(FLOAT)
    grad = jax.grad(lambda x: xp.linalg.vector_norm(x).jax)(xp.asarray(v))
    np.testing.assert_allclose(np.asarray(grad), v / np.linalg.norm(v), rtol=1e-5)
    grad3 = jax.grad(lambda x: xp.linalg.vector_norm(x, ord=3).jax)(xp.asarray(v))
    norm3 = np.sum(np.abs(v) ** 3) ** (1 / 3)
    np.testing.assert_allclose(np.asarray(grad3), np.sign(v) * np.abs(v) ** 2 / norm3**2, rtol=1e-4)
    a = rng.standard_normal((3, 4)).astype(FLOAT)
    grad_fro = jax.grad(lambda m: xp.linalg.matrix_norm(m).jax)(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(grad_fro), a / np.linalg.norm(a), rtol=1e-5)


# --- aliases, names, errors -----------------------------------------------------------------


def test_main_namespace_functions_are_shared():
    assert xp.linalg.matmul is xp.matmul
    assert xp.linalg.tensordot is xp.tensordot
    assert xp.linalg.vecdot is xp.vecdot
    assert xp.linalg.matrix_transpose is xp.matrix_transpose


def test_all_25_functions():
    names = {
        "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
        "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
        "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
    }  # fmt: skip
    assert set(xp.linalg.__all__) == names
    for name in names:
        assert callable(getattr(xp.linalg, name))


@pytest.mark.parametrize(
    ("call", "kind", "pattern"),
    [
        (lambda: xp.linalg.det(xp.ones((2, 3))), ValueError, r"xp\.linalg\.det: x must be a square matrix .*\(2, 3\)"),
        (lambda: xp.linalg.inv(xp.ones(3)), ValueError, r"xp\.linalg\.inv: x must be a matrix .*shape \(3,\)"),
        (
            lambda: xp.linalg.qr(xp.eye(2), mode="full"),
            ValueError,
            r"xp\.linalg\.qr: mode must be one of 'reduced', 'complete', got 'full'",
        ),
        (
            lambda: xp.linalg.svd(xp.eye(2), full_matrices=1),
            TypeError,
            r"xp\.linalg\.svd: full_matrices must be a bool, got int",
        ),
        (lambda: xp.linalg.cholesky(xp.eye(2), upper="yes"), TypeError, r"xp\.linalg\.cholesky: upper must be a bool"),
        (
            lambda: xp.linalg.matrix_norm(xp.eye(2), ord=3),
            ValueError,
            r"xp\.linalg\.matrix_norm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.*got 3",
        ),
        (
            lambda: xp.linalg.matrix_norm(xp.eye(2), ord=True),
            ValueError,
            r"xp\.linalg\.matrix_norm: ord must be one of",
        ),
        (
            lambda: xp.linalg.vector_norm(xp.eye(2), ord="fro"),
            TypeError,
            r"xp\.linalg\.vector_norm: ord must be a real number .*got str",
        ),
        (
            lambda: xp.linalg.vector_norm(xp.eye(2), ord=math.nan),
            ValueError,
            r"xp\.linalg\.vector_norm: ord must not be nan",
        ),
        (
            lambda: xp.linalg.vector_norm(xp.eye(2), axis=2),
            IndexError,
            r"xp\.linalg\.vector_norm: axis=2 is out of bounds",
        ),
        (
            lambda: xp.linalg.vector_norm(xp.eye(2), axis=(0, 0)),
            ValueError,
            r"xp\.linalg\.vector_norm: axis has repeated axes",
        ),
        (
            lambda: xp.linalg.matrix_power(xp.eye(2), 1.5),
            TypeError,
            r"xp\.linalg\.matrix_power: n must be an integer, got float",
        ),
        (
            lambda: xp.linalg.solve(xp.eye(3), xp.ones(2)),
            ValueError,
            r"xp\.linalg\.solve: x2 must have size 3 .*along its only axis",
        ),
        (
            lambda: xp.linalg.solve(xp.eye(3), xp.ones((2, 3))),
            ValueError,
            r"xp\.linalg\.solve: x2 must have size 3 .*second-to-last axis",
        ),
        (
            lambda: xp.linalg.solve(xp.ones((2, 3, 3)), xp.ones((4, 3, 1))),
            ValueError,
            r"xp\.linalg\.solve: the batch axes of x1 and x2 cannot be broadcast",
        ),
        (
            lambda: xp.linalg.solve(xp.ones((2, 3)), xp.ones(3)),
            ValueError,
            r"xp\.linalg\.solve: x1 must be a square matrix",
        ),
        (
            lambda: xp.linalg.pinv(xp.eye(2), rtol="big"),
            TypeError,
            r"xp\.linalg\.pinv: rtol must be None, a float or an array of a real floating-point dtype, got str",
        ),
        (lambda: xp.linalg.diagonal(xp.ones(3)), ValueError, r"xp\.linalg\.diagonal: x must be a matrix"),
        (lambda: xp.linalg.trace(xp.eye(2), offset=0.5), TypeError, r"xp\.linalg\.trace: offset must be an integer"),
        (lambda: xp.linalg.det([[1.0]]), TypeError, r"xp\.linalg\.det: x must be an array, got list"),
    ],
)
def test_errors(call, kind, pattern):
    with pytest.raises(kind, match=pattern):
        call()
