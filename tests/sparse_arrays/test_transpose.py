"""Transposed views (``A.T``, ``A.mT``, ``xp.matrix_transpose``, ``permute_dims(A, (1, 0))`` of a
2-d BCOO or BCSR in O(1)) and the reductions of matrices along one axis
(``xp.sparse._reduction_kernels``).

Every result on a view is checked against NumPy on the dense transpose: products on both sides,
reductions along both axes, conversions, indexing, element-wise operations, ``.T.T``, under jit,
vmap and grad (with respect to the stored values); and that a view moves no data.
"""

import pickle
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from fixed_shapes import sides
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
import xp.sparse as xs

from .helpers import dense_product, elements, sparse_of, to_numpy

AVAILABLE = set(xp.__array_namespace_info__().dtypes())
DTYPES = [np.dtype(d) for d in ("float32", "float64", "int32", "complex64") if d in AVAILABLE]
FLOATS = [d for d in DTYPES if d.kind == "f"]
LAYOUTS = ["plain", "padded", "duplicates", "bcsr"]


@st.composite
def matrices(draw, dtypes=DTYPES, min_side=0):
    """A dense NumPy matrix and the layout of its sparse copy."""
    dtype = draw(st.sampled_from(dtypes))
    shape = (draw(sides(min_side=min_side, max_side=5)), draw(sides(min_side=min_side, max_side=5)))
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype))), draw(st.sampled_from(LAYOUTS))


def tolerance(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if np.dtype(dtype).itemsize <= 8 else {"rtol": 1e-12, "atol": 1e-12}


def check(got, want, **tol):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    g = to_numpy(got)
    if tol:
        np.testing.assert_allclose(g, want, equal_nan=True, **tol)
    elif want.dtype.kind in "fc":
        # exact, but XLA on CPU flushes subnormal results to zero (NumPy does not)
        np.testing.assert_allclose(g, want, rtol=0, atol=np.finfo(want.dtype).smallest_normal, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def is_view(x):
    return isinstance(x, xs.BCOO) and x._base is not None


# --- views: what they are --------------------------------------------------------------------


@given(matrices())
def test_every_transpose_is_a_view_and_twice_is_the_original(args):
    a, layout = args
    A = sparse_of(a, layout)
    for T in (A.T, A.mT, xp.matrix_transpose(A), xp.permute_dims(A, (1, 0)), xp.linalg.matrix_transpose(A)):
        assert is_view(T) and T._base is A.jax  # no data moved
        assert T.shape == a.T.shape and T.ndim == 2 and T.dtype == a.dtype and T.nse == A.nse
        assert T.n_batch == 0 and T.n_sparse == 2 and T.n_dense == 0 and T.size == a.size
        check(T.todense(), a.T)
        for back in (T.T, T.mT, xp.matrix_transpose(T), xp.permute_dims(T, (1, 0))):
            assert type(back) is type(A) and back.jax is A.jax
        assert xp.permute_dims(T, (0, 1)) is T


def test_a_view_copies_nothing_eagerly_or_under_jit():
    A = xs.from_scipy(
        sp.random_array((30, 20), density=0.2, format="csr", dtype=np.float32, rng=np.random.default_rng(0))
    )
    for M in (A, A.to_bcsr()):
        T = M.T
        assert T._base is M.jax
        assert T.data.jax is M.jax.data  # the stored values are the base's buffer
        assert T.shape == (20, 30) and T.device == M.device and T.unique_indices == M.unique_indices
        T.block_until_ready()
        repr(T)
        assert T.indices_sorted is False
        moved = T.to_device(jax.devices()[0])
        assert is_view(moved)
        assert not _formed(T)  # none of these form the transpose
        jaxpr = jax.make_jaxpr(lambda m: m.T)(M)
        assert not jaxpr.eqns  # the identity: no gather, scatter or sort
        out = jax.jit(lambda m: m.T)(M)
        assert is_view(out) and out.shape == (20, 30)
        # the products on a view trace no transpose either: no sort, and no more scatters than
        # the base's transposed product
        x = jnp.ones(30, M.dtype)
        assert not re.search(r"\bsort\[", str(jax.make_jaxpr(lambda m, x=x: (m.T @ x).jax)(M)))


def _formed(view):
    """Whether the view's transpose has been formed (and kept)."""
    try:
        object.__getattribute__(view, "_value")
    except AttributeError:
        return False
    return True


def test_the_transpose_is_formed_once_and_never_leaks_a_tracer():
    a = np.asarray([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]], np.float32)
    for M in (xs.fromdense(xp.asarray(a)), xs.fromdense(xp.asarray(a), format="bcsr")):
        T = M.T
        # formed inside a trace: not kept (it would be a tracer of that trace)
        check(jax.jit(lambda T=T: (T * 2).todense())(), a.T * 2)
        assert not _formed(T)
        check(T.todense(), a.T)
        assert _formed(T) and T.jax is T.jax  # formed once, kept
        assert isinstance(T.jax, jax.experimental.sparse.BCOO)
        # a view made under jit keeps its transpose within that trace only
        check(jax.jit(lambda m: (m.T + m.T).todense())(M), 2 * a.T)


def test_pytree_pickle_copy_and_repr_of_a_view():
    a = np.asarray([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]], np.float32)
    A = xs.fromdense(xp.asarray(a))
    T = A.T
    assert jax.tree.structure(T) != jax.tree.structure(A)
    assert jax.tree.leaves(T) == jax.tree.leaves(A)  # the same buffers
    for C in (pickle.loads(pickle.dumps(T)), jax.tree.map(lambda x: x, T), __import__("copy").deepcopy(T)):
        assert is_view(C)
        check(C.todense(), a.T)
    assert repr(T) == "BCOO(float32[3, 2], nse=3)"
    assert repr(jax.tree.map(lambda leaf: None, T)) == "BCOO(shape=[3, 2], transposed, leaves=[None, None])"
    # JAX's sparse API sees the transpose itself
    check(xs.bcoo_todense(T), a.T)
    # jax.export carries the flag
    exported = jax.export.export(jax.jit(lambda m: m.T))(A)
    out = jax.export.deserialize(exported.serialize()).call(A)
    assert is_view(out)
    check(out.todense(), a.T)


def test_transposes_of_other_layouts_are_not_views():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 3
    A = xs.fromdense(xp.asarray(x), n_batch=1)
    assert not is_view(A.mT)
    check(A.mT.todense(), np.swapaxes(x, -1, -2))
    B = xs.fromdense(xp.asarray(x[0]), n_dense=1)
    assert not is_view(B.T)
    check(B.T.todense(), x[0].T)


# --- products ----------------------------------------------------------------------------------


@pytest.mark.slow
@given(matrices(min_side=1), st.integers(0, 3))
def test_products_on_a_view_match_dense(args, k):
    a, layout = args
    A = sparse_of(a, layout)
    rng = np.random.default_rng(k)
    m, n = a.shape
    tol = tolerance(a.dtype)

    def dense(*shape):
        return (rng.integers(-3, 4, shape)).astype(a.dtype)

    x, y, X, Y, Z = dense(m), dense(n), dense(m, 3), dense(2, n), dense(2, m, 3)
    cases = [
        (lambda t, v: t @ v, x, a.T @ x),
        (lambda t, v: t @ v, X, a.T @ X),
        (lambda t, v: t @ v, Z, a.T @ Z),
        (lambda t, v: v @ t, y, y @ a.T),
        (lambda t, v: v @ t, Y, Y @ a.T),
        (lambda t, v: xp.tensordot(t, v, axes=1), X, a.T @ X),
        (lambda t, v: xp.tensordot(v, t, axes=1), Y, Y @ a.T),
    ]
    for fn, v, want in cases:
        for f in (fn, jax.jit(fn)):
            check(f(A.T, xp.asarray(v)), want, **tol)
    w = dense(n, m)
    check(xp.vecdot(A.T, xp.asarray(w), axis=0), np.sum(np.conj(a.T) * w, axis=0, dtype=a.dtype), **tol)
    # sparse with sparse: the view's transpose is formed
    check(A.T @ A, a.T @ a, **tol)
    check(jax.jit(lambda p, q: p @ q.T)(A, A), a @ a.T, **tol)


@pytest.mark.slow
@pytest.mark.parametrize("format", ["bcoo", "bcsr"])
def test_grad_and_vmap_through_products_on_a_view(format):
    rng = np.random.default_rng(1)
    a = np.where(rng.random((4, 3)) < 0.5, rng.standard_normal((4, 3)), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(a), format=format)
    x = rng.standard_normal(4).astype(np.float32)
    y = rng.standard_normal(3).astype(np.float32)
    dense = xs.fromdense(xp.asarray(a)).jax  # its indices locate the data's gradient densely
    rows, cols = np.asarray(dense.indices).T

    def with_data(d):  # A with stored values d (the layout kept)
        return jax.tree.unflatten(jax.tree.structure(A), [d, *jax.tree.leaves(A)[1:]])

    def dense_of(d):
        return jnp.zeros(a.shape, d.dtype).at[rows, cols].add(d)

    data = A.jax.data
    for loss, dense_loss in [
        (lambda d: jnp.sum((with_data(d).T @ xp.asarray(x)).jax ** 2), lambda e: jnp.sum(dense_product(e.T, x) ** 2)),
        (lambda d: jnp.sum((xp.asarray(y) @ with_data(d).T).jax ** 2), lambda e: jnp.sum(dense_product(y, e.T) ** 2)),
        (lambda d: jnp.sum(xp.sum(with_data(d).T, axis=0).todense().jax ** 2), lambda e: jnp.sum(e.sum(1) ** 2)),
        (lambda d: jnp.sum(xp.sum(with_data(d).T, axis=1).todense().jax ** 2), lambda e: jnp.sum(e.sum(0) ** 2)),
    ]:
        got = jax.grad(loss)(data)
        # the dense gradient at the stored positions (in the order of A's data)
        stored = jax.grad(lambda d, f=dense_loss: f(dense_of(d)))(dense.data)
        lookup = {(int(r), int(c)): g for r, c, g in zip(rows, cols, np.asarray(stored), strict=True)}
        mine = xs.BCOO.from_jax(A.jax.to_bcoo() if format == "bcsr" else A.jax).indices
        want = [lookup[int(r), int(c)] for r, c in np.asarray(mine)]
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        jvp = jax.jvp(loss, (data,), (jnp.ones_like(data),))[1]
        np.testing.assert_allclose(float(jvp), float(np.sum(want)), rtol=1e-4, atol=1e-4)
    # vmap over the dense operand, and over a stack whose matrices are transposed in the function
    xs_ = rng.standard_normal((5, 4)).astype(np.float32)
    out = jax.vmap(lambda v: (A.T @ xp.asarray(v)).jax)(xs_)
    np.testing.assert_allclose(np.asarray(out), xs_ @ a, rtol=1e-5, atol=1e-5)
    stack = np.stack([a, 2 * a])
    B = xs.fromdense(xp.asarray(stack), n_batch=1, format=format)
    T = jax.vmap(lambda m: m.T)(B)  # a view whose base gained a batch dimension: a stack of transposes
    assert T.shape == (2, 3, 4)
    check(T.todense(), np.swapaxes(stack, -1, -2))
    out = jax.vmap(lambda m: (m.T @ xp.asarray(x)).jax)(B)
    np.testing.assert_allclose(np.asarray(out), np.swapaxes(stack, -1, -2) @ x, rtol=1e-5, atol=1e-5)


# --- everything else on a view ---------------------------------------------------------------


@pytest.mark.slow
@given(matrices())
def test_operations_on_a_view_match_dense(args):
    a, layout = args
    A = sparse_of(a, layout)
    T = A.T
    t = a.T
    check(xp.multiply(T, 2), t * 2)
    check(-T, -t)
    check(T * xp.asarray(t), t * t)
    check(T + T, t + t)
    if t.shape[0]:
        check(T[0], t[0])
        check(T[:, -1:], t[:, -1:])
    check(T[::-1], t[::-1])
    check(xp.reshape(T, (-1,)), t.reshape(-1))
    check(xp.concat([T, T]), np.concatenate([t, t]))
    assert isinstance(T.to_bcsr(), xs.BCSR)
    check(T.to_bcsr().todense(), t)
    assert T.to_bcoo() is T
    check(T.sum_duplicates().todense(), t)
    check(T.sort_indices().todense(), t)
    check(xs.asarray(T).todense(), t)
    for fmt in (None, "coo", "csr", "csc"):
        s = T.to_scipy(format=fmt)
        assert s.format == (fmt or "coo") and s.shape == t.shape
        np.testing.assert_array_equal(s.toarray(), t)
    jitted = jax.jit(lambda m: (m.T * 3, m.T[::-1], xp.sum(m.T, axis=None)))(A)
    check(jitted[0], t * 3)
    check(jitted[1], t[::-1])
    if a.dtype.kind != "c":
        # (the empty sum of signed integers is in the default integer dtype: int32 with 64-bit mode off)
        empty_sum = np.sum(t, dtype=xp.asarray(0).dtype if t.dtype.kind == "i" else t.dtype)
        check(xp.max(T, axis=None) if t.size else xp.sum(T), np.max(t) if t.size else empty_sum)


# --- reductions along one axis -----------------------------------------------------------------


REDUCE = {
    "sum": lambda a, axis, keepdims: np.sum(a, axis=axis, keepdims=keepdims),
    "mean": lambda a, axis, keepdims: np.mean(a, axis=axis, keepdims=keepdims),
    "max": lambda a, axis, keepdims: np.max(a, axis=axis, keepdims=keepdims),
    "min": lambda a, axis, keepdims: np.min(a, axis=axis, keepdims=keepdims),
    "prod": lambda a, axis, keepdims: np.prod(a, axis=axis, keepdims=keepdims),
    "count_nonzero": lambda a, axis, keepdims: np.count_nonzero(a, axis=axis, keepdims=keepdims),
}


@pytest.mark.slow
@given(matrices(min_side=1), st.sampled_from(sorted(REDUCE)), st.sampled_from([0, 1, -1, None, (0, 1)]), st.booleans(),
       st.booleans(), st.booleans())  # fmt: skip
def test_reductions_of_matrices_and_views_match_dense(args, name, axis, keepdims, view, jit):
    a, layout = args
    if name in ("max", "min") and a.dtype.kind == "c":
        return
    A = sparse_of(a, layout)
    M, m = (A.T, a.T) if view else (A, a)
    want = REDUCE[name](m, axis, keepdims)
    if name == "mean" and a.dtype.kind in "iu":
        return  # (the standard's mean takes floating arrays)
    fn = getattr(xp, name)

    def f(x):
        return fn(x, axis=axis, keepdims=keepdims)

    got = (jax.jit(f) if jit else f)(M)
    want = np.asarray(want).astype(got.dtype) if name in ("count_nonzero",) else np.asarray(want, dtype=got.dtype)
    check(got, want, **tolerance(a.dtype))


@pytest.mark.slow
@pytest.mark.parametrize("format", ["bcoo", "bcsr"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_line_reductions_of_a_larger_matrix(format, dtype):
    """The kernels of ``_reduction_kernels`` (more stored entries than lines), BCSR rows with a
    long one (the loop's fallback) and padding, and implicit zeros in max and min."""
    rng = np.random.default_rng(2)
    a = np.where(rng.random((40, 30)) < 0.3, rng.standard_normal((40, 30)), 0).astype(dtype)
    a[7] = rng.standard_normal(30)  # a full row (no implicit zero in its max)
    a[:, 3] = -np.abs(rng.standard_normal(40)) - 0.5  # a full column, all negative
    a[11] = 0  # an empty row
    A = xs.fromdense(xp.asarray(a), format=format, nse=int(np.count_nonzero(a)) + 5)
    tol = tolerance(dtype)
    for name in ("sum", "mean", "max", "min"):
        for axis in (0, 1):
            for keepdims in (False, True):
                want = REDUCE[name](a, axis, keepdims)
                for M, w in ((A, want), (A.T, REDUCE[name](a.T, 1 - axis, keepdims))):
                    got = getattr(xp, name)(M, axis=axis if M is A else 1 - axis, keepdims=keepdims)
                    assert isinstance(got, xs.BCOO)
                    check(got, w, **tol)
    # a line without stored elements is a structural zero of the result
    rows = xp.sum(A, axis=1)
    stored = np.asarray(rows.indices)[:, 0]
    assert 11 not in stored[stored < 40]
    # skewed rows: one row much longer than the others (the scatter branch)
    b = np.zeros((200, 300), dtype)
    b[5] = 1.0
    b[np.arange(200), np.arange(200)] += 2.0
    B = xs.fromdense(xp.asarray(b), format=format)
    check(xp.sum(B, axis=1), b.sum(1), **tol)
    check(xp.sum(B, axis=0), b.sum(0), **tol)


@pytest.mark.slow
@pytest.mark.parametrize("format", ["bcoo", "bcsr"])
def test_line_reductions_differentiate_with_respect_to_data(format):
    rng = np.random.default_rng(3)
    a = np.where(rng.random((12, 9)) < 0.6, rng.standard_normal((12, 9)), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(a), format=format)
    w0, w1 = rng.standard_normal(9).astype(np.float32), rng.standard_normal(12).astype(np.float32)

    def with_data(d):
        return jax.tree.unflatten(jax.tree.structure(A), [d, *jax.tree.leaves(A)[1:]])

    def loss(d):
        out0 = xp.sum(with_data(d), axis=0).todense().jax
        out1 = xp.mean(with_data(d), axis=1).todense().jax
        return jnp.sum(out0 * w0) + jnp.sum(out1 * w1)

    coo = A.to_bcoo()
    rows, cols = np.asarray(coo.indices).T
    want = w0[cols] + w1[rows] / a.shape[1]
    data = A.jax.data
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(data)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(jax.jvp(loss, (data,), (jnp.ones_like(data),))[1]), float(np.sum(want)), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(data)), want, rtol=1e-5, atol=1e-6)


def test_line_reductions_vmap_over_a_batch_dimension():
    rng = np.random.default_rng(4)
    a = np.where(rng.random((3, 6, 5)) < 0.7, rng.standard_normal((3, 6, 5)), 0).astype(np.float32)
    for format in ("bcoo", "bcsr"):
        A = xs.fromdense(xp.asarray(a), n_batch=1, format=format)
        for axis in (0, 1):
            out = jax.vmap(lambda m, axis=axis: xp.sum(m, axis=axis).todense().jax)(A)
            np.testing.assert_allclose(np.asarray(out), a.sum(axis + 1), rtol=1e-5, atol=1e-6)
