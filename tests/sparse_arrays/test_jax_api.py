"""xp.sparse's wrappers of jax.experimental.sparse and sparsify.

Each function is checked against its dense counterpart (jax.lax / jax.numpy on the densified
operands), eagerly and under jit, for its result types (xp arrays, xp sparse arrays), and for
the argument errors xp adds.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import sparse as jsparse

import xp
import xp.sparse as xs


def random_dense(rng, shape, density=0.4, dtype=np.float64):
    values = np.round(rng.standard_normal(shape) * 4)
    return np.where(rng.random(shape) < density, values, 0).astype(dtype)


def dense_of(x):
    return np.asarray(x.todense()) if isinstance(x, xs.SparseArray) else np.asarray(x)


def check(out, expected, kind=xp.Array):
    assert isinstance(out, kind), type(out)
    expected = np.asarray(expected)
    got = dense_of(out)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def both(fn, *args):
    return fn(*args), jax.jit(fn)(*args)


RNG = np.random.default_rng(0)
M = random_dense(RNG, (4, 5))
M3 = random_dense(RNG, (2, 4, 5))


# --- conversion -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize(("fromdense", "todense", "kind"), [
    (xs.bcoo_fromdense, xs.bcoo_todense, xs.BCOO), (xs.bcsr_fromdense, xs.bcsr_todense, xs.BCSR)])  # fmt: skip
def test_fromdense_todense(fromdense, todense, kind):
    A = fromdense(xp.asarray(M))
    assert isinstance(A, kind) and A.nse == np.count_nonzero(M)
    check(todense(A), M)
    check(A, M, kind)
    for out in both(lambda x: todense(fromdense(x, nse=20)), xp.asarray(M)):
        check(out, M)
    B = fromdense(xp.asarray(M3), n_batch=1, index_dtype=xp.int16)
    assert B.n_batch == 1 and B.indices.dtype == xp.int16
    check(todense(B), M3)
    assert fromdense(M).nse == A.nse  # NumPy input


@pytest.mark.slow
@pytest.mark.cpu_only(reason="XLA's flushing of subnormals, as on CPU")
def test_jax_fromdense_stores_what_jax_stores_and_xp_fromdense_every_bit():
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    x = xp.asarray(np.array([[tiny, 0.0], [-0.0, 1.0]], np.float32))
    for fromdense in (xs.bcoo_fromdense, xs.bcsr_fromdense):
        assert fromdense(x).nse == 1  # JAX's mat != 0
    for fmt in ("bcoo", "bcsr"):
        kept = xs.fromdense(x, format=fmt)
        assert kept.nse == 3
        np.testing.assert_array_equal(np.asarray(kept.todense()).view(np.uint32), np.asarray(x).view(np.uint32))


@pytest.mark.x64
def test_fromdense_errors():
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_fromdense: nse=2 is smaller than the \d+ nonzero elements"):
        xs.bcoo_fromdense(xp.asarray(M), nse=2)
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_fromdense: nse must be given under a JAX trace"):
        jax.jit(lambda x: xs.bcoo_fromdense(x))(xp.asarray(M))
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_fromdense: n_batch=2 and n_dense=1 exceed"):
        xs.bcoo_fromdense(xp.asarray(M), n_batch=2, n_dense=1)
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_fromdense: mat must be a dense array, got a sparse BCOO"):
        xs.bcoo_fromdense(xs.bcoo_fromdense(xp.asarray(M)))
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_fromdense: index_dtype must be an integer dtype"):
        xs.bcoo_fromdense(xp.asarray(M), index_dtype=xp.float32)
    with pytest.raises(ValueError, match="^xp.sparse.bcsr_fromdense: a BCSR array has 2 sparse dimensions"):
        xs.bcsr_fromdense(xp.asarray(M3))
    with pytest.raises(
        TypeError,
        match=r"^xp.sparse.bcoo_todense: mat must be an xp.sparse.BCOO, got an xp.sparse.BCSR \(convert it with .to_bcoo\(\)\)$",
    ):
        xs.bcoo_todense(xs.bcsr_fromdense(xp.asarray(M)))
    with pytest.raises(TypeError, match="^xp.sparse.bcsr_todense: mat must be an xp.sparse.BCSR, got Array"):
        xs.bcsr_todense(xp.asarray(M))


@pytest.mark.x64
def test_jax_sparse_arrays_are_accepted():
    A = jsparse.BCOO.fromdense(jnp.asarray(M))
    check(xs.bcoo_todense(A), M)
    assert isinstance(xs.bcoo_sort_indices(A), xs.BCOO)


# --- products -------------------------------------------------------------------------------

DOT_CASES = [
    ((4, 5), (5, 3), ((1,), (0,)), ((), ())),
    ((4, 5), (4,), ((0,), (0,)), ((), ())),
    ((2, 4, 5), (2, 5, 3), ((2,), (1,)), ((0,), (0,))),
    ((4, 5), (3, 5), ((1,), (1,)), ((), ())),
]


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize(("s1", "s2", "contract", "batch"), DOT_CASES)
@pytest.mark.parametrize("kinds", ["sd", "ds", "ss"])
def test_bcoo_dot_general(s1, s2, contract, batch, kinds):
    rng = np.random.default_rng(1)
    a, c = random_dense(rng, s1), random_dense(rng, s2)
    numbers = (contract, batch)
    expected = lax.dot_general(jnp.asarray(a), jnp.asarray(c), numbers)
    n_batch = len(batch[0])
    x1 = xs.bcoo_fromdense(xp.asarray(a), n_batch=n_batch) if kinds in ("sd", "ss") else xp.asarray(a)
    x2 = xs.bcoo_fromdense(xp.asarray(c), n_batch=n_batch) if kinds in ("ds", "ss") else xp.asarray(c)
    for out in both(lambda p, q: xs.bcoo_dot_general(p, q, dimension_numbers=numbers), x1, x2):
        check(out, expected, xs.BCOO if kinds == "ss" else xp.Array)


@pytest.mark.x64
def test_bcoo_dot_general_promotes_and_checks():
    A = xs.bcoo_fromdense(xp.asarray(M.astype(np.float32)))
    out = xs.bcoo_dot_general(A, xp.ones(5, dtype=xp.int16), dimension_numbers=(([1], [0]), ([], [])))
    check(out, M.astype(np.float32) @ np.ones(5, np.float32))
    numbers = (([1], [0]), ([], []))
    with pytest.raises(
        ValueError,
        match=r"^xp.sparse.bcoo_dot_general: dimension 1 of lhs \(size 5\) and dimension 0 of rhs \(size 4\)",
    ):
        xs.bcoo_dot_general(A, xp.ones(4), dimension_numbers=numbers)
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_dot_general: lhs or rhs must be an xp.sparse.BCOO"):
        xs.bcoo_dot_general(xp.ones((2, 5)), xp.ones(5), dimension_numbers=numbers)
    with pytest.raises(
        TypeError, match="^xp.sparse.bcoo_dot_general: lhs must be an xp.sparse.BCOO, got an xp.sparse.BCSR"
    ):
        xs.bcoo_dot_general(xs.bcsr_fromdense(xp.asarray(M)), xp.ones(5), dimension_numbers=numbers)
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_dot_general: dimension_numbers must be"):
        xs.bcoo_dot_general(A, xp.ones(5), dimension_numbers=(1, 0))
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_dot_general: dimension_numbers .lhs. holds dimension 7"):
        xs.bcoo_dot_general(A, xp.ones(5), dimension_numbers=(([7], [0]), ([], [])))
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_dot_general: rhs must have a numeric dtype, got bool"):
        xs.bcoo_dot_general(A, xp.ones(5, dtype=xp.bool), dimension_numbers=numbers)


@pytest.mark.x64
@pytest.mark.parametrize("columns", [None, 3, 9])
def test_bcsr_dot_general(columns):
    x = np.ones(5) if columns is None else np.arange(5.0 * columns).reshape(5, columns)
    A = xs.bcsr_fromdense(xp.asarray(M))
    numbers = (([1], [0]), ([], []))
    for out in both(lambda A, x: xs.bcsr_dot_general(A, x, dimension_numbers=numbers), A, xp.asarray(x)):
        check(out, M @ x)
    with pytest.raises(TypeError, match="^xp.sparse.bcsr_dot_general: rhs must be a dense array"):
        xs.bcsr_dot_general(A, A, dimension_numbers=numbers)


@pytest.mark.x64
def test_bcoo_dot_general_sampled():
    rng = np.random.default_rng(2)
    a, c = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    pattern = xs.bcoo_fromdense(xp.asarray(M))
    numbers = (([1], [0]), ([], []))
    full = a @ c
    rows, cols = np.asarray(pattern.indices).T
    for out in both(lambda p, q, i: xs.bcoo_dot_general_sampled(p, q, i, dimension_numbers=numbers),
                    xp.asarray(a), xp.asarray(c), pattern.indices):  # fmt: skip
        check(out, full[rows, cols])


@pytest.mark.parametrize(
    ("shapes", "numbers", "indices_shape"),
    [
        (((3,), (3,)), (([0], [0]), ([], [])), (1, 1)),  # a 0-d product: no sparse dimension to address
        (((3,), (3, 4)), (([0], [0]), ([], [])), (1, 2)),
        (((2, 3), (3,)), (([1], [0]), ([], [])), (2, 1, 1)),
    ],
)
def test_bcoo_dot_general_sampled_with_indices_for_more_dimensions_than_the_product_is_a_value_error(
    shapes, numbers, indices_shape
):
    a, b = (xp.ones(shape, dtype=xp.float32) for shape in shapes)
    indices = xp.zeros(indices_shape, dtype=xp.int32)
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_dot_general_sampled: indices of shape .* address \d+ "
                       r"batch and \d+ sparse dimensions, more than the \d of the product of A and B$"):  # fmt: skip
        xs.bcoo_dot_general_sampled(a, b, indices, dimension_numbers=numbers)
    # one sparse dimension fewer is a product JAX computes: 1-d operands with an outer product
    out = xs.bcoo_dot_general_sampled(xp.ones(3), xp.ones(4), xp.asarray([[0, 1], [2, 3]], dtype=xp.int32),
                                      dimension_numbers=(([], []), ([], [])))  # fmt: skip
    check(out, np.ones(2, dtype=xp.__array_namespace_info__().default_dtypes()["real floating"]))  # x64 on or off


@pytest.mark.slow
@pytest.mark.x64
def test_bcoo_multiply():
    A, B = xs.bcoo_fromdense(xp.asarray(M)), xs.bcoo_fromdense(xp.asarray(M * 2 + np.eye(4, 5)))
    for out in both(xs.bcoo_multiply_sparse, A, B):
        check(out, M * (M * 2 + np.eye(4, 5)), xs.BCOO)
    v = np.arange(5.0)
    data = xs.bcoo_multiply_dense(A, xp.asarray(v))
    expected = np.asarray(jsparse.bcoo_multiply_dense(A.jax, jnp.asarray(v)))
    check(data, expected)
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_multiply_sparse: lhs and rhs must have the same shape"):
        xs.bcoo_multiply_sparse(A, xs.bcoo_fromdense(xp.asarray(M3)))


# --- extraction, indexing, shape ------------------------------------------------------------


@pytest.mark.x64
def test_extract():
    pattern = xs.bcoo_fromdense(xp.asarray(M))
    values = np.arange(20.0).reshape(4, 5)
    for out in both(xs.bcoo_extract, pattern, xp.asarray(values)):
        check(out, np.where(M != 0, values, 0), xs.BCOO)
    csr = xs.bcsr_fromdense(xp.asarray(M))
    out = xs.bcsr_extract(csr.indices, csr.indptr, xp.asarray(values))
    check(out, values[M != 0])
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_extract: arr must have sparr's shape"):
        xs.bcoo_extract(pattern, xp.ones(3))


@pytest.mark.slow
@pytest.mark.x64
def test_gather_and_slices():
    A = xs.bcoo_fromdense(xp.asarray(M))
    numbers = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    starts = xp.asarray([[2], [0]])
    for out in both(lambda A, s: xs.bcoo_gather(A, s, numbers, (1, 5)), A, starts):
        check(out, M[[2, 0]], xs.BCOO)
    for out in both(lambda A, i: xs.bcoo_dynamic_slice(A, [i, 1], [2, 3]), A, xp.asarray(1)):
        check(out, M[1:3, 1:4], xs.BCOO)
    check(xs.bcoo_slice(A, start_indices=(1, 0), limit_indices=(4, 5), strides=(2, 2)), M[1:4:2, 0:5:2], xs.BCOO)
    with pytest.raises(
        IndexError, match=r"^xp.sparse.bcoo_slice: start_indices and limit_indices: the slice \[0, 9\) of dimension 1"
    ):
        xs.bcoo_slice(A, start_indices=(0, 0), limit_indices=(4, 9))
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_dynamic_slice: slice_sizes\[0\]=5 must be in \[0, 4\]"):
        xs.bcoo_dynamic_slice(A, [0, 0], [5, 1])


@pytest.mark.slow
@pytest.mark.x64
def test_concatenate():
    A, B = xs.bcoo_fromdense(xp.asarray(M)), xs.bcoo_fromdense(xp.asarray(M[:2]))
    for out in both(lambda a, b: xs.bcoo_concatenate([a, b], dimension=0), A, B):
        check(out, np.concatenate([M, M[:2]]), xs.BCOO)
    C, D = xs.bcsr_fromdense(xp.asarray(M3), n_batch=1), xs.bcsr_fromdense(xp.asarray(M3[:1]), n_batch=1)
    check(xs.bcsr_concatenate([C, D], dimension=0), np.concatenate([M3, M3[:1]]), xs.BCSR)
    with pytest.raises(
        ValueError, match=r"^xp.sparse.bcoo_concatenate: operands\[1\] of shape \(2, 5\) does not match"
    ):
        xs.bcoo_concatenate([A, B], dimension=1)
    with pytest.raises(TypeError, match="^xp.sparse.bcoo_concatenate: operands must be a non-empty sequence"):
        xs.bcoo_concatenate(A, dimension=0)


@pytest.mark.slow
@pytest.mark.x64
def test_broadcast_reshape_transpose_squeeze_reduce():
    A = xs.bcoo_fromdense(xp.asarray(M))
    check(
        xs.bcoo_broadcast_in_dim(A, shape=(3, 4, 5), broadcast_dimensions=(1, 2)),
        np.broadcast_to(M, (3, 4, 5)),
        xs.BCOO,
    )
    C = xs.bcsr_fromdense(xp.asarray(M))
    check(
        xs.bcsr_broadcast_in_dim(C, shape=(3, 4, 5), broadcast_dimensions=(1, 2)),
        np.broadcast_to(M, (3, 4, 5)),
        xs.BCSR,
    )
    check(xs.bcoo_reshape(A, new_sizes=(5, 4)), M.reshape(5, 4), xs.BCOO)
    check(xs.bcoo_transpose(A, permutation=(1, 0)), M.T, xs.BCOO)
    check(xs.bcoo_squeeze(xs.bcoo_fromdense(xp.asarray(M[None])), dimensions=(0,)), M, xs.BCOO)
    for out in both(lambda A: xs.bcoo_reduce_sum(A, axes=(1,)), A):
        check(out, M.sum(1), xs.BCOO)
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_reshape: cannot reshape mat of shape"):
        xs.bcoo_reshape(A, new_sizes=(3, 3))
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_squeeze: dimension 0 has size 4"):
        xs.bcoo_squeeze(A, dimensions=(0,))
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_broadcast_in_dim: dimension 0 of mat"):
        xs.bcoo_broadcast_in_dim(A, shape=(3, 5), broadcast_dimensions=(0, 1))
    with pytest.raises(xp._errors.AxisError, match="^xp.sparse.bcoo_reduce_sum: axes=2 is out of bounds"):
        xs.bcoo_reduce_sum(A, axes=(2,))


# --- duplicates, order, layout --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
def test_duplicates_zeros_order_layout():
    data = np.array([1.0, 2.0, 0.0, 3.0])
    indices = np.array([[1, 1], [0, 2], [3, 3], [1, 1]])
    A = xs.BCOO((data, indices), shape=(4, 5))
    expected = np.zeros((4, 5))
    expected[1, 1], expected[0, 2] = 4.0, 2.0
    summed = xs.bcoo_sum_duplicates(A)
    assert summed.nse == 3
    check(summed, expected, xs.BCOO)
    for out in both(lambda A: xs.bcoo_sum_duplicates(A, nse=4), A):
        check(out, expected, xs.BCOO)
    with pytest.raises(
        ValueError, match="^xp.sparse.bcoo_sum_duplicates: nse=2 is smaller than the 3 distinct entries"
    ):
        xs.bcoo_sum_duplicates(A, nse=2)
    cleaned = xs.bcoo_eliminate_zeros(A)
    assert cleaned.nse == 2
    check(cleaned, expected, xs.BCOO)
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_eliminate_zeros: nse=1 is smaller than the 2 nonzero"):
        xs.bcoo_eliminate_zeros(A, nse=1)
    ordered = xs.bcoo_sort_indices(A)
    assert ordered.indices_sorted
    check(ordered, expected, xs.BCOO)
    C = xs.bcsr_fromdense(xp.asarray(expected))
    check(xs.bcsr_sum_duplicates(C), expected, xs.BCSR)
    check(xs.bcsr_eliminate_zeros(C), expected, xs.BCSR)
    B = xs.bcoo_update_layout(xs.bcoo_fromdense(xp.asarray(M3)), n_batch=1, on_inefficient=None)
    assert B.n_batch == 1
    check(B, M3, xs.BCOO)
    with pytest.raises(ValueError, match="^xp.sparse.bcoo_update_layout: on_inefficient must be one of"):
        xs.bcoo_update_layout(B, n_batch=0, on_inefficient="ignore")


# --- sparsify -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
def test_sparsify_takes_and_returns_xp_arrays():
    def f(m, v):
        return {"product": m @ v, "scaled": 2 * m, "total": jnp.sum(m)}

    g = xs.sparsify(f)
    A = xs.fromdense(xp.asarray(M))
    v = xp.asarray(np.arange(5.0))
    for out in (g(A, v), jax.jit(g)(A, v)):
        check(out["product"], M @ np.arange(5.0))
        check(out["scaled"], 2 * M, xs.BCOO)
        check(out["total"], np.asarray(M.sum()))
    grad = jax.grad(lambda data: xs.sparsify(lambda m: jnp.sum(m @ jnp.ones(5)))(
        xs.BCOO((data, A.indices), shape=A.shape)).jax)(A.data.jax)  # fmt: skip
    np.testing.assert_allclose(grad, np.ones(A.nse))
    dense_only = xs.sparsify(lambda x: jnp.sin(x))(xp.asarray(M))
    check(dense_only, np.sin(M))
    with pytest.raises(TypeError, match="^xp.sparse.sparsify: f must be callable"):
        xs.sparsify(3)
    for bad in ("yes", 1, None):  # JAX takes any truthy object as True
        with pytest.raises(TypeError, match="^xp.sparse.sparsify: use_tracer must be a bool, got"):
            xs.sparsify(f, use_tracer=bad)
    with pytest.raises(NotImplementedError):
        xs.sparsify(jnp.exp)(A)  # exp(0) != 0: JAX has no sparse rule for it
