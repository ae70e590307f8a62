"""matmul, tensordot, vecdot and matrix_transpose with sparse operands, and xp's sparse kernels.

Every product is checked against the same function on the densified operands (NumPy), eagerly
and under jit, for BCOO and BCSR, sparse x dense, dense x sparse and sparse x sparse; dtype
promotion and error messages against the dense functions'; gradients with respect to the stored
values and the dense operand against the dense gradients; vmap over batch dimensions.
"""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from fixed_shapes import sides
from hypothesis import given
from hypothesis import strategies as st
from jax.experimental import sparse as jsparse

import xp
import xp.sparse as xs
from xp.sparse._products import kernels

from .helpers import sparse_of

FORMATS = ["bcoo", "bcsr"]
# the dtypes available in this session (float64 only with JAX's 64-bit mode)
AVAILABLE = set(xp.__array_namespace_info__().dtypes())
DTYPES = [d for d in (np.float32, np.float64, np.int32, np.complex64) if np.dtype(d).name in AVAILABLE]
# the default floating dtypes (float64 and complex128 with JAX's 64-bit mode, else float32 and complex64)
FLOAT = np.float64 if "float64" in AVAILABLE else np.float32
COMPLEX = np.complex128 if "complex128" in AVAILABLE else np.complex64


def random_dense(rng, shape, dtype=np.float64, density=0.4):
    dtype = np.dtype(dtype)
    values = rng.standard_normal(shape) * 3
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    if dtype.kind in "iu":
        values = np.round(values)
    return np.where(rng.random(shape) < density, values, 0).astype(dtype)


def sparse(m, format="bcoo", **kwargs):
    return xs.fromdense(xp.asarray(m), format=format, **kwargs)


def tolerance(dtype):
    return (
        {"rtol": 1e-4, "atol": 1e-4}
        if np.dtype(dtype) in (np.float32, np.complex64)
        else {"rtol": 1e-10, "atol": 1e-10}
    )


def check(out, expected, *, dense=True):
    expected = np.asarray(expected)
    if dense:
        assert isinstance(out, xp.Array), type(out)
        got = np.asarray(out)
    else:
        assert isinstance(out, xs.SparseArray), type(out)
        got = np.asarray(out.todense())
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, **tolerance(expected.dtype))


def both(fn, *args):
    """``fn(*args)`` eagerly and under jax.jit."""
    return fn(*args), jax.jit(fn)(*args)


@st.composite
def operands(draw, max_side=6):
    seed = draw(st.integers(0, 2**32 - 1))
    m, n, k = (draw(sides(0, max_side)) for _ in range(3))
    dtype = draw(st.sampled_from(DTYPES))
    density = draw(st.sampled_from([0.0, 0.3, 0.8]))
    return np.random.default_rng(seed), m, n, k, dtype, density


# --- matmul ---------------------------------------------------------------------------------


@pytest.mark.slow
@given(operands(), st.sampled_from(FORMATS), st.sampled_from(["vector", "matrix", "wide", "stack"]))
def test_matmul_sparse_dense(args, format, kind):
    rng, m, n, k, dtype, density = args
    a = random_dense(rng, (m, n), dtype, density)
    shape = {"vector": (n,), "matrix": (n, k), "wide": (n, 9), "stack": (2, n, k)}[kind]
    x = random_dense(rng, shape, dtype, 1.0)
    A = sparse(a, format)
    for out in both(lambda A, x: A @ x, A, xp.asarray(x)):
        check(out, a @ x)
    for out in both(xp.matmul, A, xp.asarray(x)):
        check(out, a @ x)
    check(xp.linalg.matmul(A, xp.asarray(x)), a @ x)


@given(operands(), st.sampled_from(FORMATS), st.sampled_from(["vector", "matrix", "wide", "stack"]))
def test_matmul_dense_sparse(args, format, kind):
    rng, m, n, k, dtype, density = args
    a = random_dense(rng, (m, n), dtype, density)
    shape = {"vector": (m,), "matrix": (k, m), "wide": (9, m), "stack": (2, k, m)}[kind]
    x = random_dense(rng, shape, dtype, 1.0)
    A = sparse(a, format)
    for out in both(lambda x, A: x @ A, xp.asarray(x), A):
        check(out, x @ a)


@given(operands(), st.sampled_from(FORMATS), st.sampled_from(FORMATS))
def test_matmul_sparse_sparse_is_sparse(args, f1, f2):
    rng, m, n, k, dtype, density = args
    a, c = random_dense(rng, (m, n), dtype, density), random_dense(rng, (n, k), dtype, density)
    for out in both(xp.matmul, sparse(a, f1), sparse(c, f2)):
        check(out, a @ c, dense=False)
        assert isinstance(out, xs.BCOO)


def _stored(m, layout):
    """``m`` (2-d NumPy) as a sparse operand: a layout of tests/sparse_arrays/helpers.py, or the
    transposed view of ``m.T`` stored plainly."""
    if layout == "view":
        return sparse_of(np.ascontiguousarray(m.T)).T
    return sparse_of(m, layout)


@pytest.mark.slow
@pytest.mark.cpu_only(
    reason="the eager product of two sparse matrices is NumPy's for arrays in CPU memory "
    "(xp.sparse._products.sparse_sparse); arrays on an accelerator keep JAX's rule, which stores more"
)
@given(
    operands(),
    st.sampled_from(["plain", "padded", "duplicates", "bcsr", "view"]),
    st.sampled_from(["plain", "bcsr", "view", "duplicates"]),
)
def test_a_product_of_two_sparse_matrices_stores_each_coordinate_it_reaches_once(args, layout1, layout2):
    """Eagerly on CPU, ``A @ B`` of two sparse matrices is computed row by row of ``A`` in NumPy
    (xp.sparse._products.sparse_sparse): one stored element for each coordinate that a pair of stored
    elements reaches, in row-major order, whatever the operands' layouts (padding, duplicates,
    BCSR, transposed views). JAX's rule, which the kernels (accelerators) and traced calls keep,
    stores the size of the dense result or a pair of elements each, whichever is fewer (two
    2000 x 2000 matrices of 4000 entries: 4M stored elements, 6 s a call, for 8000 products)."""
    from unittest import mock

    from xp.sparse import _buffers

    rng, m, n, k, dtype, density = args
    a, c = random_dense(rng, (m, n), dtype, density), random_dense(rng, (n, k), dtype, density)
    A, C = _stored(a, layout1), _stored(c, layout2)
    out = A @ C
    assert isinstance(out, xs.BCOO) and out.dtype == (a @ c).dtype
    check(out, a @ c, dense=False)
    reached = ((a != 0).astype(np.int64) @ (c != 0).astype(np.int64)) != 0
    assert out.nse == np.count_nonzero(reached)
    assert out.indices_sorted and out.unique_indices
    indices = np.asarray(out.indices)
    np.testing.assert_array_equal(indices, np.argwhere(reached))
    same = xp.tensordot(A, C, axes=1)  # (the same product)
    assert same.nse == out.nse
    check(same, a @ c, dense=False)
    with mock.patch.object(_buffers, "on_host", lambda value: None):  # JAX's rule, as on an accelerator
        check(A @ C, a @ c, dense=False)


@pytest.mark.cpu_only(
    reason="the native product of two sparse matrices is a host function of xp.sparse's native CPU "
    "library (xp/sparse/_products/native.py), used for arrays in CPU memory"
)
@given(
    operands(max_side=12),
    st.sampled_from(["plain", "padded", "duplicates", "bcsr", "view"]),
    st.sampled_from(["plain", "bcsr", "view", "duplicates"]),
)
def test_the_native_product_of_two_sparse_matrices_is_numpys(args, layout1, layout2):
    """The native product of two sparse matrices (real floating dtypes, native_spgemm.cc) stores
    the coordinates NumPy's product stores, and their sums within rounding (NumPy adds a
    coordinate's products pairwise, the native product in order); a coordinate that one product
    reaches has that product, bit for bit (a -0.0 stays -0.0)."""
    from unittest import mock

    from xp.sparse._products import native

    if native.host_functions() is None:
        pytest.skip("the native library is not loaded here (XP_NATIVE=0, or no compiler)")
    rng, m, n, k, dtype, density = args
    if np.dtype(dtype).kind != "f":
        dtype = FLOAT
    a, c = random_dense(rng, (m, n), dtype, density), random_dense(rng, (n, k), dtype, density)
    tiny = np.asarray(1e-30 if np.dtype(dtype) == np.float32 else 1e-200, dtype)  # (their products: -0.0, +0.0)
    a, c = np.where(a > 2.5, -tiny, a), np.where(c > 2.5, tiny, c)
    A, C = _stored(a, layout1), _stored(c, layout2)
    by_native = A @ C
    with mock.patch.object(native, "host_functions", lambda: None):
        numpy = A @ C
    assert by_native.nse == numpy.nse and by_native.dtype == numpy.dtype
    indices = np.asarray(by_native.indices)
    np.testing.assert_array_equal(indices, np.asarray(numpy.indices))
    got, want = np.asarray(by_native.data), np.asarray(numpy.data)
    np.testing.assert_allclose(got, want, **tolerance(dtype))
    reached = (a != 0).astype(np.int64) @ (c != 0).astype(np.int64)
    single = reached[indices[:, 0], indices[:, 1]] == 1
    np.testing.assert_array_equal(np.signbit(got[single]), np.signbit(want[single]))
    np.testing.assert_array_equal(got[single], want[single])


@pytest.mark.x64
def test_matmul_of_two_sparse_vectors_is_a_dense_scalar():
    v = np.array([0.0, 2.0, 0.0, 3.0])
    out = xs.fromdense(xp.asarray(v)) @ xs.fromdense(xp.asarray(v))
    check(out, np.asarray(13.0))


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("format", FORMATS)
def test_matmul_promotes_dtypes_like_dense(format):
    rng = np.random.default_rng(0)
    a = random_dense(rng, (5, 4), np.float32)
    A = sparse(a, format)
    for x in (np.ones(4, np.float64), np.ones((4, 9), np.int16), np.ones(4, np.complex64)):
        expected = xp.matmul(xp.asarray(a), xp.asarray(x))
        for out in both(xp.matmul, A, xp.asarray(x)):
            assert out.dtype == expected.dtype
            check(out, np.asarray(expected))
    ints = sparse(np.array([[0, 2], [3, 0]], np.int8), format)
    for out in both(xp.matmul, ints, xp.asarray(np.array([1, 1], np.uint8))):
        assert out.dtype == xp.int16
        check(out, np.array([2, 3], np.int16))


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize(
    ("layout", "x_shape"),
    [({"n_batch": 1}, (3,)), ({"n_batch": 1}, (2, 3, 4)), ({"n_dense": 1}, (3, 2)), ({}, (2, 3, 4))],
)
def test_matmul_batched_and_dense_layouts(layout, x_shape):
    rng = np.random.default_rng(1)
    a = random_dense(rng, (2, 5, 3))
    x = random_dense(rng, x_shape, density=1.0)
    A = sparse(a, **layout)
    for out in both(xp.matmul, A, xp.asarray(x)):
        check(out, a @ x)


@pytest.mark.slow
@pytest.mark.x64
def test_matmul_unsorted_duplicated_and_padded_bcoo():
    rng = np.random.default_rng(2)
    a = random_dense(rng, (30, 20))
    x, X = rng.standard_normal(20), rng.standard_normal((20, 10))
    A = sparse(a)
    perm = rng.permutation(A.nse)
    data, indices = np.asarray(A.data), np.asarray(A.indices)
    unsorted = xs.BCOO((data[perm], indices[perm]), shape=a.shape)
    assert not unsorted.indices_sorted
    halves = xs.BCOO((np.concatenate([data / 2, data / 2]), np.concatenate([indices, indices])), shape=a.shape)
    padded = xs.BCOO.from_jax(jsparse.BCOO.fromdense(jnp.asarray(a), nse=A.nse + 7))
    unflagged = xs.BCOO((data, indices), shape=a.shape)  # sorted, but not marked as such
    for B in (unsorted, halves, padded, unflagged):
        for vector in (x, X):
            for out in both(xp.matmul, B, xp.asarray(vector)):
                check(out, a @ vector)
        check(xp.asarray(X.T) @ xp.matrix_transpose(B), X.T @ a.T)


@pytest.mark.x64
def test_matmul_errors_are_the_dense_ones():
    a = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]])
    A = sparse(a)
    cases = [
        (A, xp.ones(3)),
        (A, xp.ones((2, 2), dtype=xp.bool)),
        (xp.ones((4, 4)), A),
        (A, xp.asarray(2.0)),
        (A, A),
    ]
    for x1, x2 in cases:
        d1 = x1.todense() if isinstance(x1, xs.SparseArray) else x1
        d2 = x2.todense() if isinstance(x2, xs.SparseArray) else x2
        try:
            xp.matmul(d1, d2)
        except (TypeError, ValueError) as e:
            expected = e
        else:
            continue  # valid for dense: nothing to compare
        with pytest.raises(type(expected)) as info:
            xp.matmul(x1, x2)
        assert str(info.value) == str(expected)
    with pytest.raises(
        TypeError, match="^xp.matmul: x2 must be an array or a Python scalar|^xp.matmul: x2 must be an array"
    ):
        xp.matmul(A, "nope")
    bools = xs.fromdense(xp.asarray([[True, False]]))
    with pytest.raises(TypeError, match="^xp.matmul: x1 must have a numeric dtype, got bool$"):
        xp.matmul(bools, xp.ones(2))


# --- matrix_transpose -----------------------------------------------------------------------


@pytest.mark.x64
@given(operands(), st.sampled_from(FORMATS))
def test_matrix_transpose(args, format):
    rng, m, n, _, dtype, density = args
    a = random_dense(rng, (m, n), dtype, density)
    for out in both(xp.matrix_transpose, sparse(a, format)):
        assert isinstance(out, xs.BCOO)
        check(out, a.T, dense=False)
    check(xp.linalg.matrix_transpose(sparse(a, format)), a.T, dense=False)


@pytest.mark.x64
@pytest.mark.parametrize(
    ("shape", "layout"),
    [((2, 3, 4), {"n_batch": 1}), ((2, 3, 4), {"n_batch": 2}), ((3, 4, 2), {"n_dense": 1}), ((2, 3, 4), {})],
)
def test_matrix_transpose_layouts(shape, layout):
    a = random_dense(np.random.default_rng(3), shape)
    for out in both(xp.matrix_transpose, sparse(a, **layout)):
        check(out, np.swapaxes(a, -1, -2), dense=False)


def test_matrix_transpose_errors():
    with pytest.raises(ValueError, match=r"^xp.matrix_transpose: x must have at least 2 dimensions, got shape \(3,\)$"):
        xp.matrix_transpose(xs.fromdense(xp.asarray([1.0, 0.0, 2.0])))


# --- tensordot ------------------------------------------------------------------------------

# axes, and the shape of the dense operand for A of shape (m, n) first ("sd") or second ("ds")
TENSORDOT_CASES = [
    (0, lambda m, n, k: (k,), lambda m, n, k: (k,)),
    (1, lambda m, n, k: (n, k), lambda m, n, k: (k, m)),
    (2, lambda m, n, k: (m, n), lambda m, n, k: (m, n)),
    (([0], [0]), lambda m, n, k: (m, k), lambda m, n, k: (m, k)),
    (([1], [1]), lambda m, n, k: (k, n), lambda m, n, k: (k, n)),
    (([0, 1], [1, 0]), lambda m, n, k: (n, m), lambda m, n, k: (n, m)),
    (([-1], [0]), lambda m, n, k: (n, k), lambda m, n, k: (k, m)),
    (([1], [0]), lambda m, n, k: (n, 2, k), lambda m, n, k: (2, k, m)),
]


@pytest.mark.x64
@given(
    operands(max_side=4),
    st.sampled_from(FORMATS),
    st.sampled_from(TENSORDOT_CASES),
    st.sampled_from(["sd", "ds", "ss"]),
)
def test_tensordot(args, format, case, kinds):
    rng, m, n, k, dtype, density = args
    axes, first_shape, second_shape = case
    a = random_dense(rng, (m, n), dtype, density)
    if kinds == "ds":
        if isinstance(axes, tuple) and axes[0] == [1] and axes[1] == [0]:
            axes = ([2], [0])
        other = random_dense(rng, second_shape(m, n, k), dtype, 1.0)
        x1, x2 = other, a
        s1, s2 = xp.asarray(other), sparse(a, format)
    else:
        other = random_dense(rng, first_shape(m, n, k), dtype, 1.0 if kinds == "sd" else density)
        x1, x2 = a, other
        s1 = sparse(a, format)
        s2 = xp.asarray(other) if kinds == "sd" else sparse(other, format if other.ndim == 2 else "bcoo")
    expected = np.tensordot(x1, x2, axes=axes)
    for out in both(lambda p, q: xp.tensordot(p, q, axes=axes), s1, s2):
        check(out, expected, dense=kinds != "ss" or expected.ndim == 0)


@pytest.mark.x64
def test_tensordot_errors_are_the_dense_ones():
    A = sparse(np.eye(3))
    with pytest.raises(ValueError, match=r"^xp.tensordot: axes=3 exceeds the dimensions of x1 \(2\) or x2 \(2\)$"):
        xp.tensordot(A, xp.ones((3, 3)), axes=3)
    with pytest.raises(ValueError, match="^xp.tensordot: axis 1 of x1"):
        xp.tensordot(A, xp.ones((2, 3)), axes=1)
    with pytest.raises(TypeError, match="^xp.tensordot: axes must be"):
        xp.tensordot(A, xp.ones((3, 3)), axes="x")


# --- vecdot ---------------------------------------------------------------------------------

VECDOT_CASES = [
    ((4, 3), (4, 3), -1),
    ((4, 3), (3,), -1),
    ((3,), (4, 3), -1),
    ((4, 3), (1, 3), -1),
    ((1, 3), (4, 3), -1),
    ((2, 4, 3), (4, 3), -2),
    ((4, 3), (4, 1), -2),
    ((4, 3), (4, 3), 0),
]


@pytest.mark.slow
@pytest.mark.parametrize(("s1", "s2", "axis"), VECDOT_CASES)
@pytest.mark.parametrize("kinds", ["sd", "ds", "ss"])
def test_vecdot(s1, s2, axis, kinds):
    dtype = [FLOAT, COMPLEX, np.int32][(len(s1) + len(s2) + axis) % 3]
    if axis == -2 and 1 in (s1[-2] if len(s1) > 1 else 0, s2[-2] if len(s2) > 1 else 0):
        pytest.skip("the vector axis is not broadcast")
    rng = np.random.default_rng(4)
    a, c = random_dense(rng, s1, dtype), random_dense(rng, s2, dtype)
    expected = np.asarray(xp.vecdot(xp.asarray(a), xp.asarray(c), axis=axis))
    x1 = sparse(a, "bcoo") if kinds in ("sd", "ss") else xp.asarray(a)
    x2 = sparse(c, "bcsr" if c.ndim == 2 else "bcoo") if kinds in ("ds", "ss") else xp.asarray(c)
    for out in both(lambda p, q: xp.vecdot(p, q, axis=axis), x1, x2):
        check(out, expected, dense=kinds != "ss" or expected.ndim == 0)
    check(xp.linalg.vecdot(x1, x2, axis=axis), expected, dense=kinds != "ss" or expected.ndim == 0)


@pytest.mark.x64
def test_vecdot_errors_are_the_dense_ones():
    A = sparse(np.eye(3))
    with pytest.raises(ValueError, match=r"^xp.vecdot: x1 and x2 must have the same size along axis -1"):
        xp.vecdot(A, xp.ones(4))
    with pytest.raises(xp._errors.AxisError, match="^xp.vecdot: axis=-3"):
        xp.vecdot(A, xp.ones(3), axis=-3)


# --- transformations ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("columns", [None, 2, 9])
def test_grad_with_respect_to_data_and_dense_operand(format, columns):
    rng = np.random.default_rng(5)
    a = random_dense(rng, (7, 6))
    x = rng.standard_normal(6 if columns is None else (6, columns))
    A = sparse(a, format)

    def loss(A, x):
        return xp.sum((A @ x) ** 2).jax

    grad_A, grad_x = jax.grad(loss, argnums=(0, 1), allow_int=True)(A, xp.asarray(x))
    dense_grad = jax.grad(lambda m, x: jnp.sum((m @ x) ** 2), argnums=(0, 1))(jnp.asarray(a), jnp.asarray(x))
    rows, cols = np.nonzero(a)
    np.testing.assert_allclose(np.asarray(grad_A.data), np.asarray(dense_grad[0])[rows, cols], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(grad_x), np.asarray(dense_grad[1]), rtol=1e-10)
    # and through x @ A, A.T
    grad_rev = jax.grad(lambda A: xp.sum((xp.asarray(x.T) @ xp.matrix_transpose(A)) ** 2).jax, allow_int=True)(A)
    np.testing.assert_allclose(np.asarray(grad_rev.data), np.asarray(dense_grad[0])[rows, cols], rtol=1e-10)


@pytest.mark.x64
def test_forward_mode_through_the_bcsr_vector_kernel():
    rng = np.random.default_rng(6)
    a = random_dense(rng, (7, 6))
    A = sparse(a, "bcsr")
    x, t = rng.standard_normal(6), rng.standard_normal(6)
    primal, tangent = jax.jvp(lambda x: (A @ xp.asarray(x)).jax, (jnp.asarray(x),), (jnp.asarray(t),))
    np.testing.assert_allclose(primal, a @ x)
    np.testing.assert_allclose(tangent, a @ t)


@pytest.mark.x64
@pytest.mark.parametrize("format", FORMATS)
def test_vmap_over_batch_dimensions(format):
    rng = np.random.default_rng(7)
    a = random_dense(rng, (3, 5, 4))
    x = rng.standard_normal((3, 4))
    A = sparse(a, format, n_batch=1)
    out = jax.vmap(lambda A, x: A @ x)(A, xp.asarray(x))
    check(out, np.einsum("bij,bj->bi", a, x))
    out = jax.jit(jax.vmap(lambda A, x: xp.vecdot(A, x)))(A, xp.asarray(x))
    check(out, np.einsum("bij,bj->bi", a, x))
    out = jax.vmap(xp.matrix_transpose)(A)
    check(out, np.swapaxes(a, -1, -2), dense=False)


# --- the kernels ----------------------------------------------------------------------------


def scipy_random(rng, m, n, density, dtype=np.float64):
    s = sp.random_array((m, n), density=density, format="csr", dtype=dtype, rng=rng)
    s.sort_indices()
    return s


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("columns", [None, 3, 8, 20])
def test_kernels_against_scipy(columns):
    rng = np.random.default_rng(8)
    s = scipy_random(rng, 300, 200, 0.05)
    coo = jsparse.BCOO.from_scipy_sparse(s)
    csr = jsparse.BCSR.from_scipy_sparse(s)
    x = rng.standard_normal(200 if columns is None else (200, columns))
    t = rng.standard_normal(300 if columns is None else (300, columns))
    for fn, matrix, vector, expected in [
        (kernels.bcoo_matmul, coo, x, s @ x),
        (kernels.bcsr_matmul, csr, x, s @ x),
        (kernels.bcoo_rmatmul, coo, t, s.T @ t),
        (kernels.bcsr_rmatmul, csr, t, s.T @ t),
    ]:
        np.testing.assert_allclose(jax.jit(fn)(matrix, jnp.asarray(vector)), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.x64
def test_bcsr_vector_kernel_with_skewed_and_empty_rows():
    rng = np.random.default_rng(9)
    dense = np.zeros((50, 500))
    dense[3] = rng.standard_normal(500)  # one full row: the kernel switches to row indices
    dense[40, 7] = 2.0
    x = rng.standard_normal(500)
    A = sparse(dense, "bcsr")
    for out in both(xp.matmul, A, xp.asarray(x)):
        check(out, dense @ x)
    empty = sparse(np.zeros((4, 3)), "bcsr")
    for out in both(xp.matmul, empty, xp.ones(3)):
        check(out, np.zeros(4))


@pytest.mark.slow
def test_native_kernel_ignores_out_of_range_padding():
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    padded = jsparse.BCSR.fromdense(jnp.asarray(a), nse=6)
    X = jnp.full((3, 9), jnp.inf).at[:, :].set(1.0)
    out = kernels.csr_matmul(padded.data, padded.indices, padded.indptr, X, n_cols=3)
    np.testing.assert_allclose(out, a @ np.ones((3, 9)))


@pytest.mark.slow
@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize("nse", [3, 6])
def test_csr_vector_products_on_both_routes_ignore_padding(gpu, nse):
    """``gpu=True`` is the route of a GPU (JAX's CSR kernel for vectors too, no conditional); it
    runs on CPU as well, so both are checked here: padding entries (column out of range, data 0)
    add nothing even where the element of ``x`` they would read is infinite."""
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], np.float32)
    m = jsparse.BCSR.fromdense(jnp.asarray(a), nse=nse)
    product = jax.jit(functools.partial(kernels.xla_csr_product, gpu=gpu))
    wide = np.arange(27, dtype=np.float32).reshape(3, 9)
    wide[0, :4] = np.inf
    # a padding entry inside row 0 too (column 3 of 3, value 5), before entries outside every row
    inside = (np.array([1.0, 5.0, 2.0, 3.0, 0.0], np.float32), np.array([1, 3, 0, 2, 3]), np.array([0, 2, 4]))
    for x in (np.array([1.0, 2.0, 3.0], np.float32), np.array([np.inf, 1.0, 1.0], np.float32), wide):
        for data, indices, indptr in ((m.data, m.indices, m.indptr), inside):
            out = product(data, indices, indptr, x)
            np.testing.assert_array_equal(np.asarray(out), sp.csr_array(a) @ x)  # (stored entries only: [1, inf])
    # a sorted COO's A @ X takes the same kernel through row pointers (X of 8 or more columns)
    coo = functools.partial(kernels.xla_coo_product, n_out=2, sorted_out=True, gpu=gpu)
    rows, cols = jnp.asarray([0, 0, 1, 1]), jnp.asarray([1, 3, 0, 2])  # (column 3 of 3: padding)
    got = jax.jit(coo)(jnp.asarray(inside[0][:4]), rows, cols, wide)
    np.testing.assert_array_equal(np.asarray(got), sp.csr_array(a) @ wide)
    # the gradients with respect to the stored values and to x: the dense ones at the stored entries
    x = np.array([1.0, 2.0, 3.0], np.float32)
    weights = np.array([1.0, -2.0], np.float32)
    d_data, d_x = jax.grad(lambda d, v: weights @ product(d, m.indices, m.indptr, v), argnums=(0, 1))(m.data, x)
    np.testing.assert_allclose(np.asarray(d_x), weights @ a)
    stored = np.asarray(m.indices) < 3
    rows = np.repeat(np.arange(2), np.diff(np.asarray(m.indptr)))
    want = np.zeros(nse, np.float32)
    want[: len(rows)] = weights[rows] * x[np.minimum(np.asarray(m.indices)[: len(rows)], 2)]
    np.testing.assert_allclose(np.asarray(d_data)[stored], want[stored])


@pytest.mark.slow
@pytest.mark.x64
def test_coo_kernel_drops_padding_even_next_to_infinities():
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    padded = xs.BCOO.from_jax(jsparse.BCOO.fromdense(jnp.asarray(a), nse=5))
    x = xp.asarray([1.0, 1.0, np.inf])
    check(padded @ x, np.array([1.0, np.inf]))


@pytest.mark.slow
@pytest.mark.parametrize(
    "s1, s2",
    [
        ((2,), (0, 2, 3)),
        ((0, 2, 3), (3,)),
        ((0, 2, 3), (3, 2)),
        ((2, 0, 3), (3, 0)),
        ((2, 3), (2, 3, 2)),
        ((1, 2, 3), (2, 3, 2)),
    ],
)
def test_matmul_empty_and_batched_sparse_operands(s1, s2):
    """Products JAX's sparse rules do not cover (empty batches, batched sparse x sparse) give the
    dense values: an empty result directly, the others computed densely with a warning."""
    rng = np.random.default_rng(0)
    a, c = random_dense(rng, s1, np.float32), random_dense(rng, s2, np.float32)
    want = np.matmul(a, c)
    for x1, x2 in ((sparse(a), xp.asarray(c)), (sparse(a), sparse(c))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", xp.sparse.SparseEfficiencyWarning)
            out = xp.matmul(x1, x2)
        got = np.asarray(out.todense() if isinstance(out, xp.sparse.SparseArray) else out)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
