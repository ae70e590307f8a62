"""xp.sparse.DIA, xp.sparse.BSR and xp.sparse.ELL: built from dense arrays, BCOO (padding, duplicates) and BCSR;
their products through xp's operators and ``xp.matmul`` against the dense product, with each
kernel (XLA's, what runs off a TPU by default, and the Pallas kernels, forced: interpreted off a
TPU); gradients, vmap and jit through them; generic array-API code; the export for a TPU; and the
errors of what they do not do (nothing is densified).
"""

import contextlib
import math
import warnings

import array_api_compat
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xp
import xp.sparse as xs
from xp.sparse._products import tpu, tpu_bsr, tpu_dia, tpu_ell

from .helpers import sparse_of

X64 = jax.config.jax_enable_x64
KINDS = ["auto", "pallas"]  # the platform's choice (XLA's off a TPU), and the Pallas kernels
TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}


def kind(name):
    """Products traced in this block take the platform's choice ("auto") or the named kernels."""
    return contextlib.nullcontext() if name == "auto" else tpu.forced(name)


def poisson(nx):
    """The 2-D Poisson matrix of an ``nx`` x ``nx`` grid (5 diagonals, zeros where a row of the grid ends)."""
    n = nx * nx
    a = 4 * np.eye(n)
    for i in range(n):
        for j in (i - 1, i + 1, i - nx, i + nx):
            if 0 <= j < n and (abs(i - j) == nx or i // nx == j // nx):
                a[i, j] = -1
    return a.astype(np.float32)


SHAPES = [(1, 1), (5, 9), (37, 29), (130, 300), (1100, 1300)]
OFFSETS = (0, 1, -1, -3, 128, -129, 300, -1000)


@st.composite
def banded(draw):
    """A dense float32 matrix whose entries lie on a few diagonals, some of its rows empty."""
    m, n = draw(st.sampled_from(SHAPES))
    offsets = draw(st.sets(st.sampled_from([o for o in OFFSETS if -m < o < n]), min_size=1, max_size=4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = np.zeros((m, n), np.float32)
    for o in offsets:
        i = np.arange(max(0, -o), min(m, n - o))
        a[i, i + o] = rng.standard_normal(len(i)) * (rng.random(len(i)) < 0.8)
    return a


@st.composite
def blocked(draw):
    """A dense float32 matrix whose entries lie in a few blocks, and the blocks' shape."""
    m, n = draw(st.sampled_from([(8, 8), (37, 50), (64, 64), (100, 90)]))
    block = draw(st.sampled_from([(8, 8), (16, 8), (8, 16)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    held = rng.random((-(-m // block[0]), -(-n // block[1]))) < 0.3
    inside = np.kron(held, np.ones(block, bool))[:m, :n]
    return np.where(inside, rng.standard_normal((m, n)), 0).astype(np.float32), block


@st.composite
def scattered(draw):
    """A dense float32 matrix of entries at random places, a few a row, some rows and columns empty."""
    m, n = draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.0, 2 / n, 0.1]))
    return np.where(rng.random((m, n)) < density, rng.standard_normal((m, n)), 0).astype(np.float32)


def operands(rng, a):
    """The dense operands of the products checked: vectors, matrices and a stack of matrices."""
    m, n = a.shape
    values = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {
        "A @ x": (lambda A, x: A @ x, values(n), lambda x: a @ x),
        "A @ X": (lambda A, x: A @ x, values(n, 3), lambda x: a @ x),
        "A.T @ x": (lambda A, x: A.T @ x, values(m), lambda x: a.T @ x),
        "A.T @ X": (lambda A, x: xp.matmul(A.T, x), values(m, 2), lambda x: a.T @ x),
        "x @ A": (lambda A, x: x @ A, values(m), lambda x: x @ a),
        "X @ A.T": (lambda A, x: x @ A.T, values(2, n), lambda x: x @ a.T),
        "A @ stack": (lambda A, x: A @ x, values(2, n, 3), lambda x: a @ x),
    }


def check_products(A, a, seed):
    rng = np.random.default_rng(seed)
    for name, (product, x, want) in operands(rng, a.astype(np.float64)).items():
        got = product(A, xp.asarray(x))
        assert isinstance(got, xp.Array) and got.dtype == xp.float32, name
        np.testing.assert_allclose(np.asarray(got), want(x.astype(np.float64)), **TOLERANCE, err_msg=name)
    product, x, want = operands(rng, a.astype(np.float64))["A.T @ X"]
    jitted = jax.jit(lambda A, x: product(A, xp.asarray(x)).jax)(A, x)
    np.testing.assert_allclose(np.asarray(jitted), want(x.astype(np.float64)), **TOLERANCE)


# --- building -------------------------------------------------------------------------------------


@pytest.mark.slow
@given(a=banded(), source=st.sampled_from(["dense", "plain", "padded", "duplicates", "bcsr", "diagonals"]))
def test_dia_holds_the_matrix_of_each_source(a, source):
    if source == "dense":
        D = xs.DIA.fromdense(xp.asarray(a))
    elif source == "diagonals":
        found = xs.DIA.fromdense(xp.asarray(a))
        order = list(range(len(found.offsets)))[::-1]  # given in any order
        D = xs.DIA((xp.take(found.data, xp.asarray(order), axis=0), [found.offsets[d] for d in order]), shape=a.shape)
    else:
        D = xs.DIA.from_sparse(sparse_of(a, source))
    rows, cols = np.nonzero(a)
    assert set(D.offsets) >= set((cols - rows).tolist()) and list(D.offsets) == sorted(D.offsets)
    assert D.shape == a.shape and D.dtype == xp.float32 and D.ndim == 2
    np.testing.assert_array_equal(np.asarray(D.todense()), a)
    np.testing.assert_array_equal(np.asarray(D.T.todense()), a.T)
    assert D.T.offsets == tuple(sorted(-o for o in D.offsets)) and D.T.T.shape == a.shape
    np.testing.assert_array_equal(np.asarray(xs.DIA((D.T.data, D.T.offsets), shape=a.T.shape).todense()), a.T)


@pytest.mark.slow
@given(a=banded())
def test_dia_with_given_offsets_keeps_those_diagonals_under_jit(a):
    offsets = [o for o in (0, 1, -3) if -a.shape[0] < o < a.shape[1]]
    D = jax.jit(lambda x: xs.DIA.fromdense(xp.asarray(x), offsets=offsets))(a)
    kept = np.zeros_like(a)
    for o in offsets:
        i = np.arange(max(0, -o), min(a.shape[0], a.shape[1] - o))
        kept[i, i + o] = a[i, i + o]
    np.testing.assert_array_equal(np.asarray(D.todense()), kept)


@pytest.mark.slow
@given(p=blocked(), source=st.sampled_from(["dense", "plain", "duplicates", "bcsr"]))
def test_bsr_holds_the_matrix_of_each_source(p, source):
    a, block = p
    if source == "dense":
        B = xs.BSR.fromdense(xp.asarray(a), block_shape=block)
    else:
        B = xs.BSR.from_sparse(sparse_of(a, source), block_shape=block)
    assert B.shape == a.shape and B.block_shape == block and B.T.block_shape == block[::-1]
    np.testing.assert_array_equal(np.asarray(B.todense()), a)
    np.testing.assert_array_equal(np.asarray(B.T.todense()), a.T)
    assert B.data.shape[1:] == block and B.block_rows.shape == B.block_columns.shape == B.data.shape[:1]


# --- products -----------------------------------------------------------------------------------


@pytest.mark.slow
@given(a=scattered(), source=st.sampled_from(["dense", "plain", "padded", "duplicates", "bcsr"]))
def test_ell_holds_the_matrix_of_each_source(a, source):
    E = xs.ELL.fromdense(xp.asarray(a)) if source == "dense" else xs.ELL.from_sparse(sparse_of(a, source))
    assert E.shape == a.shape and E.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(E.todense()), a)
    np.testing.assert_array_equal(np.asarray(E.T.todense()), a.T)
    chunks = -(-a.shape[1] // E.chunk)
    counts = [np.count_nonzero(a[:, q * E.chunk : (q + 1) * E.chunk], axis=1).max(initial=0) for q in range(chunks)]
    assert E.slots == max(max(counts, default=0), 1)  # the most entries of a row in a chunk
    columns = np.asarray(E.columns)
    assert E.data.shape == columns.shape and np.all(np.asarray(E.data)[columns < 0] == 0)


# Hypothesis draws the matrices for the platform's kernels; the Pallas kernels' own properties are
# drawn in test_tpu_kernels.py, so here they multiply a few fixed matrices (interpreted off a TPU,
# each new layout is a new program to compile).


@pytest.mark.slow
@given(a=banded(), seed=st.integers(0, 2**32 - 1))
def test_dia_products_are_the_dense_products(a, seed):
    check_products(xs.DIA.fromdense(xp.asarray(a)), a, seed)


@pytest.mark.slow
@given(p=blocked(), seed=st.integers(0, 2**32 - 1))
def test_bsr_products_are_the_dense_products(p, seed):
    a, block = p
    check_products(xs.BSR.fromdense(xp.asarray(a), block_shape=block), a, seed)


@pytest.mark.slow
@given(a=scattered(), seed=st.integers(0, 2**32 - 1))
def test_ell_products_are_the_dense_products(a, seed):
    check_products(xs.ELL.fromdense(xp.asarray(a)), a, seed)


def _fixed_matrices():
    a = poisson(6)  # offsets -6, -1, 0, 1, 6: one window
    banded = np.zeros((1100, 300), np.float32)  # several tiles of the matrix kernel, far offsets
    for o in (-1000, -129, 0, 200):
        i = np.arange(max(0, -o), min(1100, 300 - o))
        banded[i, i + o] = np.cos(i)
    blocks = (np.kron(np.eye(3, 4, 1) + np.eye(3, 4), np.ones((8, 16))) * np.arange(64)[None, :]).astype(np.float32)
    rng = np.random.default_rng(0)  # two chunks of columns, rows of several tiles, empty rows
    random = np.where(rng.random((1100, 1300)) < 0.003, rng.standard_normal((1100, 1300)), 0).astype(np.float32)
    return {
        "DIA poisson": (xs.DIA.fromdense(xp.asarray(a)), a),
        "DIA tall": (xs.DIA.fromdense(xp.asarray(banded), max_fill=6), banded),
        "BSR poisson": (xs.BSR.fromdense(xp.asarray(a), block_shape=(8, 8), max_fill=10), a),
        "BSR blocks": (xs.BSR.fromdense(xp.asarray(blocks[:20, :45]), block_shape=(8, 16)), blocks[:20, :45]),
        "ELL random": (xs.ELL.fromdense(xp.asarray(random)), random),
    }


@pytest.mark.slow
@pytest.mark.parametrize("matrix", ["DIA poisson", "DIA tall", "BSR poisson", "BSR blocks", "ELL random"])
def test_products_on_the_pallas_kernels_are_the_dense_products(matrix):
    A, a = _fixed_matrices()[matrix]
    with tpu.forced("pallas"):
        check_products(A, a, 0)


@pytest.mark.slow
def test_the_pallas_kernels_run_where_forced_and_on_a_tpu(monkeypatch):
    calls = []
    kernels = ((tpu_dia, "vector_product"), (tpu_dia, "matrix_product"), (tpu_bsr, "pallas_product"),
               (tpu_ell, "pallas_product"))  # fmt: skip
    for module, name in kernels:
        original = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, original=original, name=name, **k: calls.append(name) or original(*a, **k)
        )
    a = poisson(6)
    D, B = xs.DIA.fromdense(xp.asarray(a)), xs.BSR.fromdense(xp.asarray(a), block_shape=(8, 8), max_fill=10)
    E = xs.ELL.fromdense(xp.asarray(a))
    x, X = xp.ones(36, dtype=xp.float32), xp.ones((36, tpu.BSR_KERNEL_COLUMNS), dtype=xp.float32)
    # B @ x and E @ X: on a TPU by itself XLA's formulation (faster for a vector of a BSR, and for a
    # matrix this small of an ELL: its columns cost the kernel more than XLA's gathers); forced, the kernels
    products = (lambda: D @ x, lambda: D.T @ X, lambda: B @ X, lambda: E.T @ x, lambda: B @ x, lambda: E @ X)
    on_a_tpu = ["vector_product", "matrix_product", "pallas_product", "pallas_product"]
    jax.clear_caches()  # (so that each product is lowered again)
    for product in products:
        product()
    assert calls == (on_a_tpu if jax.default_backend() == "tpu" else [])
    calls.clear()
    with tpu.forced("pallas"):
        for product in products:
            product()
    assert calls == [*on_a_tpu, "pallas_product", "pallas_product"]
    calls.clear()
    with tpu.forced("xla"):
        D @ x, B @ X, E @ x
    assert calls == []


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_dia_and_ell_kernels_take_32_bit_integers_and_wrap_as_matmul(dtype, monkeypatch):
    # the vector unit's integers: the DIA and ELL kernels take them (where forced here, on a TPU
    # by themselves), the BSR kernel (the matrix unit) does not; sums wrap around as xp.matmul's
    calls = []
    for module, name in ((tpu_dia, "vector_product"), (tpu_dia, "matrix_product"), (tpu_bsr, "pallas_product"),
                         (tpu_ell, "pallas_product")):  # fmt: skip
        original = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, original=original, name=name, **k: calls.append(name) or original(*a, **k)
        )
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    a = np.where(poisson(6) != 0, rng.integers(info.min, info.max, (36, 36), dtype=dtype, endpoint=True), 0)
    a = a.astype(dtype)
    x = xp.asarray(rng.integers(info.min, info.max, 36, dtype=dtype, endpoint=True))
    X = xp.asarray(rng.integers(info.min, info.max, (36, 3), dtype=dtype, endpoint=True))
    dense = xp.asarray(a)
    D, E = xs.DIA.fromdense(dense), xs.ELL.fromdense(dense)
    B = xs.BSR.fromdense(dense, block_shape=(8, 8), max_fill=10)
    jax.clear_caches()
    with tpu.forced("pallas"):
        for got, want in ((D @ x, dense @ x), (D.T @ X, dense.T @ X), (E @ x, dense @ x), (E.T @ x, dense.T @ x),
                          (B @ X, dense @ X)):  # fmt: skip
            assert got.dtype == want.dtype == xp.asarray(a).dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert calls == ["vector_product", "matrix_product", "pallas_product", "pallas_product"]  # (not BSR's)
    assert np.abs(a.astype(np.float64) @ np.asarray(x, np.float64)).max() > 2.0**32  # (the sums wrapped)


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", KINDS)
def test_other_dtypes_take_xla_and_promote_as_matmul(name):
    a = poisson(4).astype(np.float64)
    with kind(name):
        D = xs.DIA.fromdense(xp.asarray(a))  # float64: no Pallas kernel, XLA's product on every platform
        x = np.arange(16.0)
        np.testing.assert_allclose(np.asarray(D @ xp.asarray(x)), a @ x, rtol=1e-12)
        D32 = xs.DIA.fromdense(xp.asarray(a, dtype=xp.float32))
        assert (D32 @ xp.asarray(x)).dtype == xp.float64  # float32 with float64: float64, as xp.matmul
        B = xs.BSR.fromdense(xp.asarray(a.astype(np.int32)), block_shape=(8, 8), max_fill=10)
        got = B @ xp.asarray(np.arange(16, dtype=np.int32))
        assert got.dtype == xp.int32
        np.testing.assert_array_equal(np.asarray(got), a.astype(np.int64) @ np.arange(16))
        E = xs.ELL.fromdense(xp.asarray(a))
        np.testing.assert_allclose(np.asarray(E.T @ xp.asarray(x)), a.T @ x, rtol=1e-12)


# --- transformations ------------------------------------------------------------------------------


def _stored(A, dense):
    """The values ``A``'s layout stores of a dense matrix: the row-aligned diagonals of a DIA
    (zeros outside the matrix), the blocks of a BSR."""
    if isinstance(A, xs.DIA):
        m, n = dense.shape
        diagonals = np.zeros((len(A.offsets), m))
        for d, o in enumerate(A.offsets):
            i = np.arange(max(0, -o), min(m, n - o))
            diagonals[d, i] = dense[i, i + o]
        return diagonals
    if isinstance(A, xs.ELL):
        columns = np.asarray(A.columns)
        chunk_start = (np.arange(columns.shape[0]) * A.chunk)[:, None, None]
        rows = np.broadcast_to(np.arange(columns.shape[2]), columns.shape)
        padded = np.zeros((columns.shape[2], columns.shape[0] * A.chunk))
        padded[: dense.shape[0], : dense.shape[1]] = dense
        return np.where(columns < 0, 0, padded[rows, np.maximum(columns, 0) + chunk_start])
    (bm, bk), (m, n) = A.block_shape, dense.shape
    padded = np.zeros((-(-m // bm) * bm, -(-n // bk) * bk))
    padded[:m, :n] = dense
    rows, cols = np.asarray(A.block_rows), np.asarray(A.block_columns)
    return np.stack([padded[r * bm : (r + 1) * bm, c * bk : (c + 1) * bk] for r, c in zip(rows, cols, strict=True)])


def _layouts():
    a = poisson(6)
    return {
        "DIA": (xs.DIA.fromdense(xp.asarray(a)), a),
        "BSR": (xs.BSR.fromdense(xp.asarray(a), block_shape=(8, 8), max_fill=10), a),
        "ELL": (xs.ELL.fromdense(xp.asarray(a)), a),
    }


def _check_gradient_with_respect_to_the_matrix(A, a64, loss, x, y):
    grad_a = jax.grad(loss, allow_int=True)(A, x)  # of the same layout: the stored values' cotangent
    assert type(grad_a) is type(A)
    np.testing.assert_allclose(np.asarray(grad_a.data), _stored(A, np.outer(np.cos(y), x)), **TOLERANCE)
    # a step along it is a step of the matrix, its transpose included
    stepped = jax.tree.map(lambda v, g: v - g if v.dtype == jnp.float32 else v, A, grad_a)
    pattern = np.asarray(jax.tree.map(lambda v: jnp.ones_like(v) if v.dtype == jnp.float32 else v, A).todense())
    want = a64 - pattern * np.outer(np.cos(y), x)
    np.testing.assert_allclose(np.asarray(stepped.todense()), want, **TOLERANCE)
    z = np.linspace(0, 1, a64.shape[0]).astype(np.float32)
    np.testing.assert_allclose(np.asarray(stepped.T @ xp.asarray(z)), want.T @ z, **TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("layout", ["DIA", "BSR", "ELL"])
def test_gradients_jvp_and_second_order_are_the_dense_ones(layout, name):
    A, a = _layouts()[layout]
    a64 = a.astype(np.float64)
    x = np.linspace(-1, 1, a.shape[1]).astype(np.float32)
    loss = lambda A, x: xp.sum(xp.sin(A @ xp.asarray(x))).jax  # noqa: E731
    y = a64 @ x
    with kind(name):
        grad_x = jax.jit(jax.grad(loss, argnums=1))(A, x)
        np.testing.assert_allclose(np.asarray(grad_x), a64.T @ np.cos(y), **TOLERANCE)
        if layout == "ELL":  # (stored twice, as the matrix and its transpose: a step would set them apart)
            with pytest.raises(NotImplementedError, match=r"xp.sparse.ELL: derivatives with respect to the stored"):
                jax.grad(loss, allow_int=True)(A, x)
            ones = jax.tree.map(lambda v: jnp.ones_like(v) if v.dtype == jnp.float32 else v, A)
            tangent = jax.tree.map(
                lambda v: v if v.dtype == jnp.float32 else np.zeros(v.shape, jax.dtypes.float0), ones
            )
            _, forward = jax.jvp(lambda A: (A @ xp.asarray(x)).jax, (A,), (tangent,))  # forward mode: its layout
            pattern = np.asarray(ones.todense())
            np.testing.assert_allclose(np.asarray(forward), pattern @ x, **TOLERANCE)
        else:
            _check_gradient_with_respect_to_the_matrix(A, a64, loss, x, y)
        tangent = np.ones_like(x)
        _, jvp = jax.jvp(lambda x: (A @ xp.asarray(x)).jax, (x,), (tangent,))
        np.testing.assert_allclose(np.asarray(jvp), a64 @ tangent, **TOLERANCE)
        hvp = jax.jvp(lambda x: jax.grad(loss, argnums=1)(A, x), (x,), (tangent,))[1]
        np.testing.assert_allclose(np.asarray(hvp), a64.T @ (-np.sin(y) * (a64 @ tangent)), **TOLERANCE)
        grad_t = jax.grad(lambda x: xp.sum(xp.sin(A.T @ xp.asarray(x))).jax)(x)
        np.testing.assert_allclose(np.asarray(grad_t), a64 @ np.cos(a64.T @ x), **TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("layout", ["DIA", "BSR", "ELL"])
def test_vmap_over_the_dense_operand_and_over_matrices(layout, name):
    A, a = _layouts()[layout]
    xs_ = np.arange(3 * a.shape[1], dtype=np.float32).reshape(3, a.shape[1]) / 10
    with kind(name):
        got = jax.vmap(lambda x: (A @ xp.asarray(x)).jax)(xs_)
        np.testing.assert_allclose(np.asarray(got), xs_ @ a.T.astype(np.float64), **TOLERANCE)
        got = jax.vmap(lambda x: (A.T @ xp.asarray(x)).jax, in_axes=1, out_axes=1)(xs_.T[: a.shape[0]])
        np.testing.assert_allclose(np.asarray(got), a.T.astype(np.float64) @ xs_.T[: a.shape[0]], **TOLERANCE)
        stacked = jax.tree.map(lambda leaf: jnp.stack([leaf, 2 * leaf] if leaf.dtype == jnp.float32 else [leaf] * 2), A)
        got = jax.vmap(lambda A: (A @ xp.asarray(xs_[0])).jax)(stacked)
        want = a.astype(np.float64) @ xs_[0]
        np.testing.assert_allclose(np.asarray(got), np.stack([want, 2 * want]), **TOLERANCE)


# --- generic code, export -------------------------------------------------------------------------


def _conjugate_gradients(A, b, steps):
    """A few steps of CG written against the array API only."""
    space = array_api_compat.array_namespace(A, b)
    x = space.zeros_like(b)
    r = b - A @ x
    p = r
    for _ in range(steps):
        q = A @ p
        alpha = space.vecdot(r, r) / space.vecdot(p, q)
        x, r_new = x + alpha * p, r - alpha * q
        p = r_new + space.vecdot(r_new, r_new) / space.vecdot(r, r) * p
        r = r_new
    return x


@pytest.mark.parametrize("layout", ["DIA", "BSR", "ELL"])
def test_fromdense_stores_negative_zeros_as_entries(layout):
    # docs/sparse.md: every element but +0.0 is stored (todense gives -0.0 back), so a matrix made
    # as values times a mask is stored whole where xp.where(mask, values, 0.0) is not
    rng = np.random.default_rng(0)
    mask = np.kron(np.eye(4, dtype=bool), np.ones((8, 8), bool))
    values = rng.standard_normal((32, 32)).astype(np.float32)
    build = {"DIA": lambda a: xs.DIA.fromdense(a, max_fill=64.0), "BSR": lambda a: xs.BSR.fromdense(
        a, block_shape=(8, 8), max_fill=64.0), "ELL": lambda a: xs.ELL.fromdense(a, max_fill=64.0)}[layout]  # fmt: skip

    def size(A, stored):
        """What the layout keeps of A, and what it keeps of the elements ``stored``."""
        i, j = np.nonzero(stored)
        if layout == "DIA":
            return len(A.offsets), len(np.unique(j - i))
        if layout == "BSR":
            return A.data.shape[0], len(np.unique((i // 8) * 4 + j // 8))
        assert A.chunk >= 32  # one chunk: a slot for each entry of the longest row
        return A.slots, int(stored.sum(axis=1).max())

    where, times = np.where(mask, values, np.float32(0.0)), values * mask
    assert np.signbit(times[~mask]).any() and not np.signbit(where[~mask]).any()
    for dense in (where, times):
        A = build(xp.asarray(dense))
        kept, wanted = size(A, (dense != 0) | np.signbit(dense))
        assert kept == wanted
        np.testing.assert_array_equal(np.signbit(np.asarray(A.todense())), np.signbit(dense))
    assert size(build(xp.asarray(times)), mask)[0] > size(build(xp.asarray(where)), mask)[0]


@pytest.mark.parametrize("layout", ["DIA", "BSR", "ELL"])
def test_generic_array_api_code_takes_them(layout):
    A, a = _layouts()[layout]
    assert array_api_compat.array_namespace(A, xp.ones(3)) is xp and A.__array_namespace__() is xp
    b = xp.asarray(np.linspace(0, 1, a.shape[0]).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing densified on the way
        got = _conjugate_gradients(A, b, 5)
    want = _conjugate_gradients(xp.asarray(a), b, 5)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["DIA", "BSR", "ELL"])
def test_exported_for_a_tpu_they_are_pallas_kernels(layout):
    """For a TPU the products lower through Pallas's TPU lowering (checked here on any machine, up
    to what Mosaic itself compiles on the TPU); for the CPU they are XLA's."""
    A, a = _layouts()[layout]
    x = jnp.ones((a.shape[1], tpu.BSR_KERNEL_COLUMNS), jnp.float32)
    product = jax.jit(lambda A, x: (A @ xp.asarray(x)).jax + (A.T @ xp.asarray(x[: a.shape[0], 0])).jax[:, None])
    assert "tpu_custom_call" in jax.export.export(product, platforms=["tpu"])(A, x).mlir_module()
    assert "tpu_custom_call" not in jax.export.export(product, platforms=["cpu"])(A, x).mlir_module()
    gradient = jax.jit(jax.grad(lambda x: xp.sum(A @ xp.asarray(x)).jax))
    x = x[:, 0] if layout == "ELL" else x  # (this ELL's A @ X of 8 columns: XLA's gathers cost less)
    assert "tpu_custom_call" in jax.export.export(gradient, platforms=["tpu"])(x).mlir_module()


def _calls_a_kernel(product, *args):
    return "tpu_custom_call" in jax.export.export(jax.jit(product), platforms=["tpu"])(*args).mlir_module()


@pytest.mark.slow
def test_for_a_tpu_bsr_products_of_few_columns_or_too_many_blocks_are_xlas():
    # the choice a TPU makes by itself: XLA's formulation for a vector and fewer columns than the
    # kernel needs to be faster, the kernel from there; forced, the kernel for a vector too; and
    # never the kernel for a matrix whose blocks' indices would not fit in SMEM (it would not compile)
    A, a = _layouts()["BSR"]
    product = lambda A, x: (A @ xp.asarray(x)).jax  # noqa: E731
    n, enough = a.shape[1], tpu.BSR_KERNEL_COLUMNS
    assert not _calls_a_kernel(product, A, jnp.ones(n, jnp.float32))
    assert not _calls_a_kernel(product, A, jnp.ones((n, enough - 1), jnp.float32))
    assert _calls_a_kernel(product, A, jnp.ones((n, enough), jnp.float32))
    with tpu.forced("pallas"):
        assert _calls_a_kernel(product, A, jnp.ones(n, jnp.float32))
    side = 8 * (math.isqrt(tpu.PREFETCHED_BYTES // 12) + 1)  # every block stored: a row and a column too many
    big = xs.BSR.fromdense(xp.ones((side, side), dtype=xp.float32), block_shape=(8, 8))
    assert 12 * big.data.shape[0] > tpu.PREFETCHED_BYTES >= 12 * (big.data.shape[0] - 2 * side // 8)
    assert not _calls_a_kernel(product, big, jnp.ones((side, enough), jnp.float32))
    with tpu.forced("pallas"):
        assert not _calls_a_kernel(product, big, jnp.ones((side, enough), jnp.float32))


@pytest.mark.slow
def test_ell_products_of_a_matrix_gather_a_bands_slots_together_on_a_tpu_only():
    # XLA's formulation of an ELL's `A @ X`: on a TPU a band's slots in one gather (no loop), on
    # every other platform a loop of one slot a gather (XLA's CPU is far slower the other way)
    rng = np.random.default_rng(0)
    dense = np.where(rng.random((40, 30)) < 0.3, rng.standard_normal((40, 30)), 0.0).astype(np.float32)
    E = xs.ELL.fromdense(xp.asarray(dense))
    assert max(width for _, width in E._plan[0].bands) >= 2
    product = jax.jit(lambda E, X: (E @ xp.asarray(X)).jax)
    X = jnp.ones((30, 8), jnp.float32)
    modules = {p: jax.export.export(product, platforms=[p])(E, X).mlir_module() for p in ("tpu", "cpu")}
    assert "stablehlo.while" not in modules["tpu"] and "tpu_custom_call" not in modules["tpu"]
    assert "stablehlo.while" in modules["cpu"]


# --- edges and errors ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", KINDS)
def test_empty_matrices_and_operands(name):
    with kind(name):
        D = xs.DIA.fromdense(xp.zeros((4, 6)))  # no diagonal holds an entry
        assert D.offsets == () and (D @ xp.ones(6)).shape == (4,) and not np.any(np.asarray(D @ xp.ones(6)))
        E = xs.DIA((xp.zeros((0, 0)), []), shape=(0, 3))
        assert (E @ xp.ones(3)).shape == (0,) and (E.T @ xp.ones(0)).shape == (3,)
        assert (xs.DIA.fromdense(xp.eye(3)) @ xp.ones((3, 0))).shape == (3, 0)
        B = xs.BSR.fromdense(xp.zeros((20, 12)), block_shape=(8, 8))  # blocks of zeros only
        assert not np.any(np.asarray(B @ xp.ones((12, 2)))) and not np.any(np.asarray(B.T @ xp.ones(20)))
        Z = xs.BSR.fromdense(xp.zeros((5, 0)), block_shape=(8, 8))
        assert Z.data.shape[0] == 0 and not np.any(np.asarray(Z @ xp.ones(0)))
        E = xs.ELL.fromdense(xp.zeros((20, 12)))  # padding only
        assert not np.any(np.asarray(E @ xp.ones(12))) and not np.any(np.asarray(E.T @ xp.ones((20, 2))))
        assert (xs.ELL.fromdense(xp.zeros((5, 0))) @ xp.ones(0)).shape == (5,)
        assert (xs.ELL.fromdense(xp.zeros((0, 5))).T @ xp.ones(0)).shape == (5,)


def test_refusals_name_the_function_and_never_densify():
    a = poisson(4)
    D, B = xs.DIA.fromdense(xp.asarray(a)), xs.BSR.fromdense(xp.asarray(a), block_shape=(8, 8), max_fill=10)
    E = xs.ELL.fromdense(xp.asarray(a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for A, name in ((D, "DIA"), (B, "BSR"), (E, "ELL")):
            with pytest.raises(NotImplementedError, match=rf"xp.sum: not implemented for xp.sparse.{name} "):
                xp.sum(A)
            with pytest.raises(NotImplementedError, match=r"xp.add: not implemented"):
                A + 1
            with pytest.raises(
                NotImplementedError, match=r"xp.matmul: x2: a product of xp.sparse.DIA, BSR or ELL with a BCOO"
            ):
                A @ xs.fromdense(xp.asarray(a))
            with pytest.raises(ValueError, match=r"xp.matmul: "):
                A @ xp.ones(5)
            with pytest.raises(TypeError, match=r"todense"):
                np.asarray(A)
            with pytest.raises(TypeError, match="immutable"):
                A[0, 0] = 1.0


def test_argument_errors():
    rng = np.random.default_rng(0)
    scattered = xs.fromdense(xp.asarray(np.where(rng.random((40, 40)) < 0.05, 1.0, 0.0).astype(np.float32)))
    with pytest.raises(ValueError, match=r"xp.sparse.DIA.from_sparse: DIA would store \d+ values for \d+ entries"):
        xs.DIA.from_sparse(scattered)
    with pytest.raises(ValueError, match=r"xp.sparse.BSR.from_sparse: BSR with blocks of \(8, 8\) would store"):
        xs.BSR.from_sparse(scattered, block_shape=(8, 8))
    assert xs.DIA.from_sparse(scattered, max_fill=float("inf")).shape == (40, 40)
    with pytest.raises(TypeError, match=r"xp.sparse.DIA.from_sparse: max_fill must be a number of at least 1"):
        xs.DIA.from_sparse(scattered, max_fill="many")
    with pytest.raises(TypeError, match=r"xp.sparse.DIA.from_sparse: matrix must be an xp.sparse.BCOO or BCSR"):
        xs.DIA.from_sparse(np.eye(3))
    with pytest.raises(TypeError, match=r"xp.sparse.BSR.from_sparse: matrix is traced: .* eagerly"):
        jax.jit(lambda A: xs.BSR.from_sparse(A))(scattered)
    with pytest.raises(TypeError, match=r"xp.sparse.DIA.fromdense: x is traced"):
        jax.jit(lambda x: xs.DIA.fromdense(xp.asarray(x)))(np.eye(3))
    with pytest.raises(ValueError, match=r"xp.sparse.DIA: offsets must be distinct, got \[0, 0\]"):
        xs.DIA((xp.ones((2, 3)), [0, 0]), shape=(3, 3))
    with pytest.raises(ValueError, match=r"xp.sparse.DIA: offsets must lie in \(-m, n\) = \(-3, 3\).* got \[3\]"):
        xs.DIA((xp.ones((1, 3)), [3]), shape=(3, 3))
    with pytest.raises(ValueError, match=r"xp.sparse.DIA: data must have shape \(len\(offsets\), m\) = \(1, 3\)"):
        xs.DIA((xp.ones((1, 4)), [0]), shape=(3, 3))
    with pytest.raises(TypeError, match=r"xp.sparse.DIA: offsets must be concrete"):
        jax.jit(lambda o: xs.DIA((xp.ones((1, 3)), o), shape=(3, 3)))(jnp.zeros(1, int))
    with pytest.raises(TypeError, match=r"xp.sparse.BSR: build it with BSR.from_sparse"):
        xs.BSR()
    with pytest.raises(ValueError, match=r"xp.sparse.BSR.fromdense: block_shape must be 2 positive sizes"):
        xs.BSR.fromdense(xp.eye(4), block_shape=(0, 8))
    one_long_row = np.zeros((3000, 3000), np.float32)
    one_long_row[7] = 1.0  # pads every row to 1024 slots a chunk
    with pytest.raises(ValueError, match=r"xp.sparse.ELL.fromdense: ELL would store \d+ values for 3000 entries"):
        xs.ELL.fromdense(xp.asarray(one_long_row))
    assert xs.ELL.from_sparse(scattered).shape == (40, 40)  # a few entries a row: a few slots
    with pytest.raises(TypeError, match=r"xp.sparse.ELL: build it with ELL.from_sparse"):
        xs.ELL()


@pytest.mark.slow
@pytest.mark.parametrize("name", KINDS)
def test_ell_padding_reads_nothing_of_x(name):
    # padding is column -1, which no gather finds: an infinite x meets only the entries of its column
    a = np.zeros((20, 1030), np.float32)
    a[0, [0, 5, 1029]] = 1.0  # row 0 pads every other row to 2 slots in chunk 0
    a[3, 7] = 2.0
    x = np.ones(1030, np.float32)
    x[0] = np.inf
    with kind(name):
        E = xs.ELL.fromdense(xp.asarray(a))
        got = np.asarray(E @ xp.asarray(x))
        back = np.asarray(E.T @ xp.asarray(np.where(np.arange(20) == 5, np.inf, 1.0).astype(np.float32)))
    assert got[0] == np.inf and got[3] == 2.0 and np.all(got[np.r_[1:3, 4:20]] == 0)
    np.testing.assert_array_equal(back[[0, 5, 1029, 7]], [1.0, 1.0, 1.0, 2.0])
    assert np.count_nonzero(back) == 4


def test_negative_zeros_are_kept_as_fromdense_keeps_them():
    a = np.array([[0.0, -0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]], np.float32)
    for A in (xs.DIA.fromdense(xp.asarray(a)), xs.BSR.fromdense(xp.asarray(a), block_shape=(8, 8), max_fill=100),
              xs.ELL.fromdense(xp.asarray(a))):  # fmt: skip
        back = np.asarray(A.todense())
        np.testing.assert_array_equal(np.signbit(back), np.signbit(a))
        np.testing.assert_array_equal(back, a)
    assert xs.DIA.fromdense(xp.asarray(a)).offsets == (-1, 1)


def test_repr_and_attributes():
    D = xs.DIA.fromdense(xp.asarray(poisson(3)))
    assert repr(D) == "DIA(float32[9, 9], offsets=[-3, -1, 0, 1, 3])" and repr(D.T).endswith(", transposed)")
    assert D.mT.shape == (9, 9) and D.size == 81 and D.device == xp.ones(1).device
    B = xs.BSR.fromdense(xp.asarray(poisson(3)), block_shape=(8, 8), max_fill=10)
    assert repr(B) == "BSR(float32[9, 9], 4 blocks of (8, 8))"
    assert xp.matrix_transpose(B).shape == (9, 9) and type(xp.matrix_transpose(D)) is xs.DIA
    E = xs.ELL.fromdense(xp.asarray(poisson(3)))
    assert repr(E) == "ELL(float32[9, 9], 5 slots in each of 1 chunks of 1024 columns)" and E.T.shape == (9, 9)
