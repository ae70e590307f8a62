"""Building and converting sparse arrays: fromdense, BCOO/BCSR constructors, BCOO <-> BCSR,
sum_duplicates, sort_indices, SciPy and pydata sparse. Every result is checked against the
dense array it stands for, eagerly and under jit; invalid input against the exact message."""

import contextlib
import functools
import itertools
from unittest import mock

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from fixed_shapes import shapes, sides
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from subprocess_env import failure, run_script, subprocess_env

import xp
import xp.sparse as xs
from xp.sparse import _buffers, _build
from xp.sparse import _creation as creation
from xp.sparse._products import xla

DTYPES = [np.float32, np.float64, np.int32, np.int8, np.uint16, np.bool_, np.complex64]


@st.composite
def dense(draw, dtypes=DTYPES, min_dims=0, max_dims=3, max_side=4):
    """A NumPy array of mostly zeros (negative zeros and NaNs included for floats)."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side))
    if dtype.kind == "f":
        elements = st.sampled_from([1.5, -2.0, -0.0, np.nan, np.inf, 3.0])
    elif dtype.kind == "c":
        elements = st.sampled_from([1 + 2j, -0.0 + 0j, 0 - 1j, complex(np.nan, 0)])
    elif dtype.kind == "b":
        elements = st.just(True)
    else:
        elements = st.integers(1, 100)
    return draw(hnp.arrays(dtype, shape, elements=elements, fill=st.just(dtype.type(0))))


def stored_count(x: np.ndarray) -> int:
    """What fromdense stores: nonzero elements and negative zeros."""
    if x.dtype.kind == "f":
        return int(np.sum((x != 0) | np.signbit(x)))
    if x.dtype.kind == "c":
        return int(np.sum((x != 0) | np.signbit(x.real) | np.signbit(x.imag)))
    return int(np.count_nonzero(x))


def assert_same(out, expected):
    """``out`` (an xp array) holds exactly ``expected``: dtype, shape, values, NaNs, signed zeros."""
    assert isinstance(out, xp.Array), type(out)
    got = np.asarray(out)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    if expected.dtype.kind in "fc":
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(expected.real))
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(expected.imag))


def lexicographic(indices: np.ndarray) -> bool:
    rows = [tuple(r) for r in indices.reshape(indices.shape[-2], indices.shape[-1])]
    return rows == sorted(rows)


# --- fromdense ------------------------------------------------------------------------------


@pytest.mark.x64
@given(dense())
def test_fromdense_round_trips_bit_for_bit(x):
    A = xs.fromdense(xp.asarray(x))
    assert isinstance(A, xs.BCOO)
    assert A.shape == x.shape and A.dtype == xp.asarray(x).dtype
    assert A.nse == stored_count(x)
    assert A.indices_sorted and A.unique_indices
    assert A.indices.dtype == xp.int32
    assert A.indices.shape == (A.nse, x.ndim)
    assert lexicographic(np.asarray(A.indices))
    assert_same(A.todense(), x)


@pytest.mark.slow
@pytest.mark.x64
@given(
    st.sampled_from([np.float32, np.float64, np.complex64]).flatmap(
        lambda d: hnp.arrays(
            d,
            shapes(min_dims=2, max_dims=2, max_side=4),
            elements=st.sampled_from(
                [0.0, -0.0, 1.0, float(np.finfo(d).smallest_subnormal), -float(np.finfo(d).smallest_subnormal)]
            ),
        )
    ),
    st.sampled_from(["bcoo", "bcsr"]),
)
def test_fromdense_stores_subnormals(x, fmt):
    """A subnormal is non-zero: stored, kept bit for bit, counted and true (XLA's x != 0 flushes it)."""
    A = xs.fromdense(xp.asarray(x), format=fmt)
    assert A.nse == stored_count(x)
    assert_same(A.todense(), x)
    traced = jax.jit(lambda v: xs.fromdense(v, format=fmt, nse=A.nse))(xp.asarray(x))  # (the kernel, not NumPy)
    assert_same(traced.todense(), x)
    np.testing.assert_array_equal(np.asarray(xp.count_nonzero(A, axis=0).todense()), np.count_nonzero(x, axis=0))
    assert int(xp.count_nonzero(A)) == np.count_nonzero(x)
    assert bool(xp.any(A)) == bool(np.any(x)) and bool(xp.all(A)) == bool(np.all(x))


@pytest.mark.x64
@given(dense(min_dims=1), st.data())
def test_fromdense_layouts(x, data):
    n_batch = data.draw(st.integers(0, x.ndim))
    n_dense = data.draw(st.integers(0, x.ndim - n_batch))
    A = xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense)
    assert (A.n_batch, A.n_dense, A.n_sparse) == (n_batch, n_dense, x.ndim - n_batch - n_dense)
    assert A.data.shape == (*x.shape[:n_batch], A.nse, *x.shape[x.ndim - n_dense :])
    assert A.indices.shape == (*x.shape[:n_batch], A.nse, A.n_sparse)
    assert_same(A.todense(), x)
    assert_same(jax.jit(lambda a: a.todense())(A), x)


@pytest.mark.x64
@given(dense(min_dims=2, max_dims=3), st.data())
def test_fromdense_bcsr(x, data):
    n_batch = x.ndim - 2
    n_dense = 0
    if x.ndim == 3 and data.draw(st.booleans()):
        n_batch, n_dense = 0, 1
    A = xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense, format="bcsr")
    assert isinstance(A, xs.BCSR)
    assert A.indptr.shape == (*x.shape[:n_batch], x.shape[n_batch] + 1)
    assert_same(A.todense(), x)
    if x.ndim == 2:
        per_row = [stored_count(row) for row in x]
        np.testing.assert_array_equal(np.asarray(A.indptr), np.cumsum([0, *per_row]))


@pytest.mark.x64
@given(dense(), st.integers(0, 3))
def test_fromdense_with_a_larger_nse_pads_and_works_under_jit(x, extra):
    count = stored_count(x)
    nse = count + extra if x.size else 0
    A = xs.fromdense(xp.asarray(x), nse=nse)
    assert A.nse == nse
    assert_same(A.todense(), x)
    traced = jax.jit(lambda v: xs.fromdense(v, nse=nse).todense())(xp.asarray(x))
    assert_same(traced, x)
    if x.size:
        assert A.sum_duplicates().nse == (min(nse, 1) if x.ndim == 0 else count)


@pytest.mark.x64
def test_fromdense_index_dtype_and_int64_dimensions():
    x = xp.asarray([[0, 1], [2, 0]])
    assert xs.fromdense(x, index_dtype=xp.int8).indices.dtype == xp.int8
    assert xs.fromdense(x, index_dtype="uint16").indices.dtype == xp.uint16
    assert_same(xs.fromdense(x, index_dtype=xp.int8).todense(), [[0, 1], [2, 0]])


def test_fromdense_errors():
    x = xp.asarray([[0.0, 1.0], [2.0, 3.0]])
    with pytest.raises(
        ValueError,
        match=r"^xp.sparse.fromdense: nse=2 is smaller than the 3 nonzero elements of x \(per batch\); entries would be dropped$",
    ):
        xs.fromdense(x, nse=2)
    with pytest.raises(ValueError, match="^xp.sparse.fromdense: nse must be non-negative, got -1$"):
        xs.fromdense(x, nse=-1)
    with pytest.raises(TypeError, match="^xp.sparse.fromdense: nse must be an integer, got float 2.0$"):
        xs.fromdense(x, nse=2.0)
    with pytest.raises(
        ValueError, match="^xp.sparse.fromdense: n_batch=2 and n_dense=1 add up to more than the 2 dimensions of x$"
    ):
        xs.fromdense(x, n_batch=2, n_dense=1)
    with pytest.raises(ValueError, match="^xp.sparse.fromdense: n_batch must be non-negative, got -1$"):
        xs.fromdense(x, n_batch=-1)
    with pytest.raises(ValueError, match="^xp.sparse.fromdense: format must be one of 'bcoo', 'bcsr', got 'csr'$"):
        xs.fromdense(x, format="csr")
    with pytest.raises(
        ValueError, match=r"^xp.sparse.fromdense: format='bcsr' needs exactly 2 sparse dimensions, got 1"
    ):
        xs.fromdense(x, n_batch=1, format="bcsr")
    with pytest.raises(TypeError, match="^xp.sparse.fromdense: index_dtype must be an integer dtype, got float32$"):
        xs.fromdense(x, index_dtype=xp.float32)
    with pytest.raises(
        ValueError, match="^xp.sparse.fromdense: index_dtype int8 cannot hold the indices of a dimension of size 200$"
    ):
        xs.fromdense(xp.zeros((200,)), index_dtype=xp.int8)
    A = xs.fromdense(x)
    with pytest.raises(
        TypeError, match=r"^xp.sparse.fromdense: x must be a dense array, got a sparse BCOO \(it is sparse already\)$"
    ):
        xs.fromdense(A)
    with pytest.raises(TypeError, match="^xp.sparse.fromdense: x must be an array, got str 'a'$"):
        xs.fromdense("a")


def test_fromdense_under_a_trace_needs_nse():
    message = (
        r"^xp.sparse.fromdense: nse is required under a JAX transformation \(the number of stored elements "
        r"depends on the values\); pass nse=, an upper bound, e.g. the size of x"
    )
    with pytest.raises(TypeError, match=message) as info:
        jax.jit(lambda v: xs.fromdense(v))(xp.ones(3))
    assert isinstance(info.value, xp._errors.DataDependentShapeError)


@pytest.mark.x64
def test_fromdense_gradient_and_vmap():
    x = xp.asarray([[0.0, 2.0], [3.0, 0.0]])
    grad = jax.grad(lambda v: xp.sum(xs.fromdense(v, nse=2).todense() ** 3).jax)(x)
    assert_same(grad, [[0.0, 12.0], [27.0, 0.0]])
    batched = jax.vmap(lambda v: xs.fromdense(v, nse=1).todense())(x)
    assert_same(batched, np.asarray(x))


# --- BCOO and BCSR constructors -------------------------------------------------------------


@pytest.mark.x64
@given(st.data())
def test_bcoo_constructor_matches_a_dense_scatter(data):
    shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    nse = data.draw(sides(0, 8))
    indices = np.asarray(
        [[data.draw(st.integers(0, n - 1)) for n in shape] for _ in range(nse)], dtype=np.int32
    ).reshape(nse, len(shape))
    values = data.draw(hnp.arrays(np.float64, nse, elements=st.integers(-5, 5).map(float)))
    A = xs.BCOO((xp.asarray(values), xp.asarray(indices)), shape=shape)
    expected = np.zeros(shape)
    np.add.at(expected, tuple(indices.T), values)
    assert_same(A.todense(), expected)
    assert A.indices_sorted == lexicographic(indices)
    assert A.nse == nse
    traced = jax.jit(lambda d, i: xs.BCOO((d, i), shape=shape).todense())(xp.asarray(values), xp.asarray(indices))
    assert_same(traced, expected)


@pytest.mark.x64
def test_bcoo_constructor_batched_and_dense_dimensions():
    data = xp.asarray([[[1.0, 2.0]], [[3.0, 4.0]]])  # batch 2, nse 1, dense 2
    indices = xp.asarray([[[1]], [[0]]])  # batch 2, nse 1, n_sparse 1
    A = xs.BCOO((data, indices), shape=(2, 3, 2))
    assert (A.n_batch, A.n_sparse, A.n_dense) == (1, 1, 1)
    assert_same(A.todense(), np.asarray([[[0, 0], [1, 2], [0, 0]], [[3, 4], [0, 0], [0, 0]]], float))


def test_bcoo_constructor_keeps_negative_zeros():
    A = xs.BCOO((xp.asarray([-0.0, 1.0]), xp.asarray([[0], [2]])), shape=(3,), unique_indices=True)
    assert list(np.signbit(np.asarray(A.todense()))) == [True, False, False]


BCOO_ERRORS = [
    (([1.0], [[0, 3]]), (2, 3), {}, IndexError,
     r"xp.sparse.BCOO: indices holds 3, out of bounds for sparse dimension 1 of size 3 \(indices must lie in \[0, size\); nothing is clamped\)"),
    (([1.0], [[-1, 0]]), (2, 3), {}, IndexError, r"xp.sparse.BCOO: indices holds -1, out of bounds for sparse dimension 0 of size 2 \(indices must lie in \[0, size\); nothing is clamped\)"),
    pytest.param(([1.0], [[0.0, 1.0]]), (2, 3), {}, TypeError, "xp.sparse.BCOO: indices must have an integer dtype, got float64",
                 marks=pytest.mark.x64),
    (([1.0], [[True, False]]), (2, 3), {}, TypeError, "xp.sparse.BCOO: indices must have an integer dtype, got bool"),
    (([1.0, 2.0], [[0, 1]]), (2, 3), {}, ValueError,
     r"xp.sparse.BCOO: data must have shape \(1,\) for indices of shape \(1, 2\) and shape \(2, 3\), got \(2,\)"),
    (([1.0], [0]), (2, 3), {}, ValueError, r"xp.sparse.BCOO: indices must have shape \(\*batch, nse, n_sparse\), got \(1,\)"),
    (([1.0], [[0, 1, 1]]), (2, 3), {}, ValueError,
     r"xp.sparse.BCOO: indices of shape \(1, 3\) have 0 batch and 3 sparse dimensions, more than shape \(2, 3\) has"),
    (([[1.0], [2.0]], [[[0]]]), (2, 3), {}, ValueError,
     r"xp.sparse.BCOO: indices must have the batch shape \(2,\) of shape \(2, 3\), got indices of shape \(1, 1, 1\)"),
    (([1.0], [[0, 1]]), (2, -3), {}, ValueError, r"xp.sparse.BCOO: shape\[1\] must be non-negative, got -3"),
    (([1.0, 2.0], [[1, 0], [0, 0]]), (2, 3), {"indices_sorted": True}, ValueError,
     "xp.sparse.BCOO: indices_sorted=True, but the indices are not in lexicographic order"),
    (([1.0, 2.0], [[1, 0], [1, 0]]), (2, 3), {"unique_indices": True}, ValueError,
     "xp.sparse.BCOO: unique_indices=True, but some index appears more than once"),
    (([1.0], [[0, 1]]), (2, 3), {"indices_sorted": 1}, TypeError, "xp.sparse.BCOO: indices_sorted must be a bool, got int 1"),
    (([1.0], np.asarray([[0, 1]], np.int8)), (2, 300), {}, ValueError,
     "xp.sparse.BCOO: indices of dtype int8 cannot hold the indices of a dimension of size 300"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "shape", "kwargs", "kind", "message"), BCOO_ERRORS)
def test_bcoo_constructor_errors(args, shape, kwargs, kind, message):
    data, indices = (xp.asarray(a) for a in args)
    with pytest.raises(kind, match=f"^{message}$"):
        xs.BCOO((data, indices), shape=shape, **kwargs)


@pytest.mark.x64
def test_bcoo_constructor_argument_errors():
    with pytest.raises(
        TypeError,
        match=r"^xp.sparse.BCOO: expected a tuple \(data, indices\), got Array of dtype float64 and shape \(1,\)$",
    ):
        xs.BCOO(xp.asarray([1.0]), shape=(2,))
    A = xs.eye(2)
    with pytest.raises(TypeError, match="^xp.sparse.BCOO: data must be a dense array, got a sparse BCOO"):
        xs.BCOO((A, xp.asarray([[0, 0]])), shape=(2, 2))
    with pytest.raises(TypeError, match="^xp.sparse.BCOO: indices must be a dense integer array, got a sparse BCOO$"):
        xs.BCOO((xp.asarray([1.0]), A), shape=(2, 2))
    with pytest.raises(TypeError, match=r"^xp.sparse.BCOO: data must be an array, got list"):
        xs.BCOO(([1.0], xp.asarray([[0, 0]])), shape=(2, 2))


def test_bcoo_constructor_detects_order_and_uniqueness():
    sorted_unique = xs.BCOO((xp.asarray([1.0, 2.0]), xp.asarray([[0, 1], [1, 0]])), shape=(2, 2))
    assert sorted_unique.indices_sorted and sorted_unique.unique_indices
    duplicated = xs.BCOO((xp.asarray([1.0, 2.0]), xp.asarray([[0, 1], [0, 1]])), shape=(2, 2))
    assert duplicated.indices_sorted and not duplicated.unique_indices
    unsorted = xs.BCOO((xp.asarray([1.0, 2.0]), xp.asarray([[1, 0], [0, 1]])), shape=(2, 2), unique_indices=True)
    assert not unsorted.indices_sorted and unsorted.unique_indices


@pytest.mark.x64
def test_bcoo_constructor_under_a_trace_checks_shapes_only():
    indices = xp.asarray([[0, 1]])

    @jax.jit
    def build(d, i):
        return xs.BCOO((d, i), shape=(2, 2))

    out = build(xp.asarray([5.0]), indices)
    assert isinstance(out, xs.BCOO)
    assert_same(out.todense(), [[0.0, 5.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"data must have shape \(1,\)"):
        build(xp.asarray([5.0, 6.0]), indices)


def bcsr(data, indices, indptr, shape, **kwargs):
    return xs.BCSR((xp.asarray(data), xp.asarray(indices), xp.asarray(indptr)), shape=shape, **kwargs)


@pytest.mark.x64
def test_bcsr_constructor_matches_scipy():
    S = sp.csr_array(np.asarray([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [3.0, 0.0, 4.0]]))
    A = bcsr(S.data, S.indices.astype(np.int32), S.indptr.astype(np.int32), S.shape)
    assert_same(A.todense(), S.toarray())
    assert A.indices_sorted and A.unique_indices
    assert_same(jax.jit(lambda a: a.todense())(A), S.toarray())
    duplicates = bcsr([1.0, 2.0], [1, 1], [0, 2, 2], (2, 2))
    assert_same(duplicates.todense(), [[0.0, 3.0], [0.0, 0.0]])
    assert not duplicates.unique_indices


BCSR_ERRORS = [
    (([1.0], [3], [0, 1, 1]), (2, 3), {}, IndexError,
     r"xp.sparse.BCSR: indices holds 3, out of bounds for the 3 columns \(indices must lie in \[0, size\); nothing is clamped\)"),
    (([1.0], [-1], [0, 1, 1]), (2, 3), {}, IndexError, "xp.sparse.BCSR: indices holds -1, out of bounds for the 3 columns"),
    (([1.0], [0], [0, 1]), (2, 3), {}, ValueError, r"xp.sparse.BCSR: indptr must have shape \(3,\), got \(2,\)"),
    (([1.0, 2.0], [0, 1], [0, 2, 1]), (2, 3), {}, ValueError,
     "xp.sparse.BCSR: indptr must be non-decreasing from 0 to at most nse=2 in each batch"),
    (([1.0], [0], [1, 1, 1]), (2, 3), {}, ValueError, "xp.sparse.BCSR: indptr must be non-decreasing from 0 to at most nse=1"),
    (([1.0], [0], [0, 1, 2]), (2, 3), {}, ValueError, "xp.sparse.BCSR: indptr must be non-decreasing from 0 to at most nse=1"),
    pytest.param(([1.0], [0.0], [0, 1, 1]), (2, 3), {}, TypeError, "xp.sparse.BCSR: indices must have an integer dtype, got float64",
                 marks=pytest.mark.x64),
    (([1.0, 2.0], [0], [0, 1, 1]), (2, 3), {}, ValueError,
     r"xp.sparse.BCSR: data must have shape \(1,\) for indices of shape \(1,\) and shape \(2, 3\), got \(2,\)"),
    (([1.0], [0], [0, 1, 1]), (3,), {}, ValueError, r"xp.sparse.BCSR: indices of shape \(1,\) \(shape \(\*batch, nse\)\) do not fit shape \(3,\)"),
    (([1.0, 2.0], [2, 0], [0, 2, 2]), (2, 3), {"indices_sorted": True}, ValueError,
     "xp.sparse.BCSR: indices_sorted=True, but the column indices do not increase within each row"),
    (([1.0, 2.0], [2, 2], [0, 2, 2]), (2, 3), {"unique_indices": True}, ValueError,
     "xp.sparse.BCSR: unique_indices=True, but some index appears more than once"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "shape", "kwargs", "kind", "message"), BCSR_ERRORS)
def test_bcsr_constructor_errors(args, shape, kwargs, kind, message):
    with pytest.raises(kind, match=f"^{message}"):
        bcsr(*args, shape, **kwargs)


@pytest.mark.x64
def test_bcsr_constructor_index_dtypes_must_agree():
    with pytest.raises(
        TypeError, match="^xp.sparse.BCSR: indices and indptr must have the same dtype, got int32 and int64$"
    ):
        xs.BCSR((xp.asarray([1.0]), xp.asarray([0], dtype=xp.int32), xp.asarray([0, 1])), shape=(1, 2))


@pytest.mark.x64
def test_bcsr_entries_past_indptr_are_padding():
    A = bcsr([1.0, 9.0], [0, 7], [0, 1, 1], (2, 2))  # the second entry is padding: not checked, not read
    assert_same(A.todense(), [[1.0, 0.0], [0.0, 0.0]])


# --- BCOO <-> BCSR, sum_duplicates, sort_indices --------------------------------------------


@st.composite
def coo_with_duplicates(draw, max_batch=2):
    """A BCOO with unsorted, repeated indices (and the dense array it stands for)."""
    n_batch = draw(st.integers(0, 1))
    batch = tuple(draw(st.integers(1, max_batch)) for _ in range(n_batch))
    sparse_shape = draw(shapes(min_dims=2, max_dims=2, min_side=1, max_side=4))
    nse = draw(sides(0, 7))
    count = int(np.prod(batch, dtype=int)) * nse
    coords = np.asarray(
        [[draw(st.integers(0, n - 1)) for n in sparse_shape] for _ in range(count)], dtype=np.int32
    ).reshape(*batch, nse, 2)
    values = np.asarray(draw(st.lists(st.integers(-3, 3), min_size=count, max_size=count)), np.float64)
    values = values.reshape(*batch, nse)
    expected = np.zeros((*batch, *sparse_shape))
    for position in np.ndindex(*batch):
        np.add.at(expected[position], tuple(coords[position].T), values[position])
    return xs.BCOO((xp.asarray(values), xp.asarray(coords)), shape=(*batch, *sparse_shape)), expected


@pytest.mark.slow
@pytest.mark.x64
@given(coo_with_duplicates())
def test_bcoo_to_bcsr_and_back(case):
    A, expected = case
    B = A.to_bcsr()
    assert isinstance(B, xs.BCSR) and B.nse == A.nse and B.n_batch == A.n_batch
    assert_same(B.todense(), expected)
    C = B.to_bcoo()
    assert isinstance(C, xs.BCOO)
    assert_same(C.todense(), expected)
    assert B.to_bcsr() is B and A.to_bcoo() is A
    assert_same(jax.jit(lambda a: a.to_bcsr().todense())(A), expected)
    assert_same(jax.jit(lambda a: a.to_bcoo().todense())(B), expected)


def test_to_bcsr_needs_two_sparse_dimensions():
    A = xs.fromdense(xp.ones((2, 2, 2)))
    message = (
        r"^xp.sparse.BCOO.to_bcsr: BCSR needs exactly 2 sparse dimensions, this array has 3 \(n_batch=0, "
        r"n_dense=0\); rebuild it with xp.sparse.fromdense\(..., n_batch=..., format='bcsr'\)$"
    )
    with pytest.raises(ValueError, match=message):
        A.to_bcsr()


@pytest.mark.slow
@pytest.mark.x64
@given(coo_with_duplicates())
def test_sum_duplicates(case):
    A, expected = case
    out = A.sum_duplicates()
    batches = np.asarray(A.indices).reshape(-1, A.nse, 2) if A.nse else np.zeros((1, 0, 2))
    assert out.nse == max(len({tuple(r) for r in batch}) for batch in batches)
    assert out.indices_sorted and out.unique_indices
    assert lexicographic(np.asarray(out.indices)[(0,) * A.n_batch])
    assert_same(out.todense(), expected)
    traced = jax.jit(lambda a: a.sum_duplicates())(A)
    assert traced.nse == A.nse  # under a trace nse is kept; the rest is padding
    assert_same(traced.todense(), expected)
    assert_same(A.sum_duplicates(nse=A.nse + 2).todense(), expected)
    csr = A.to_bcsr().sum_duplicates()
    assert isinstance(csr, xs.BCSR) and csr.nse == out.nse
    assert_same(csr.todense(), expected)


@pytest.mark.x64
@given(coo_with_duplicates())
def test_sort_indices(case):
    A, expected = case
    out = A.sort_indices()
    assert out.indices_sorted and out.nse == A.nse
    for batch in np.asarray(out.indices).reshape(-1, A.nse, 2) if A.nse else []:
        assert lexicographic(batch)
    assert_same(out.todense(), expected)
    assert_same(jax.jit(lambda a: a.sort_indices().todense())(A), expected)
    assert out.sort_indices() is out
    assert_same(A.to_bcsr().sort_indices().todense(), expected)


def test_sum_duplicates_errors():
    A = xs.eye(2)
    with pytest.raises(ValueError, match="^xp.sparse.BCOO.sum_duplicates: nse must be non-negative, got -1$"):
        A.sum_duplicates(nse=-1)


# --- SciPy ----------------------------------------------------------------------------------


@pytest.mark.x64
@given(
    dense(dtypes=[np.float64, np.float32, np.int32, np.complex128], min_dims=2, max_dims=2),
    st.sampled_from(["coo", "csr", "csc"]),
)
def test_from_scipy(x, scipy_format):
    x = np.where(np.isnan(x) | np.isinf(x), 7, x).astype(x.dtype)
    S = sp.coo_array(x).asformat(scipy_format)
    A = xs.from_scipy(S)
    assert isinstance(A, xs.BCOO) and A.nse == S.nnz
    assert_same(A.todense(), S.toarray())
    B = xs.from_scipy(S, format="bcsr")
    assert isinstance(B, xs.BCSR)
    assert_same(B.todense(), S.toarray())
    assert_same(xs.asarray(S).todense(), S.toarray())


@pytest.mark.x64
@given(coo_with_duplicates(), st.sampled_from([None, "coo", "csr", "csc"]))
def test_to_scipy(case, scipy_format):
    A, expected = case
    if A.ndim != 2:
        scipy_format = None if scipy_format in ("csr", "csc") else scipy_format
    S = A.to_scipy() if scipy_format is None else A.to_scipy(format=scipy_format)
    assert S.shape == A.shape
    assert S.format == (scipy_format or "coo")
    if S.format == "coo":
        assert S.has_canonical_format
    else:
        assert S.has_sorted_indices
    assert S.nnz == len({tuple(r) for r in _coordinates(A)})
    np.testing.assert_array_equal(S.toarray(), expected)
    if A.ndim == 2:
        assert A.to_bcsr().to_scipy().format == "csr"


def _coordinates(A):
    indices = np.asarray(A.indices)
    if A.n_batch == 0:
        return indices
    return [(b, *r) for b in range(A.shape[0]) for r in indices[b]]


@pytest.mark.x64
def test_to_scipy_with_dense_dimensions_and_padding():
    x = np.asarray([[[0.0, 1.0], [0.0, 0.0]], [[2.0, 0.0], [3.0, 4.0]]])
    A = xs.fromdense(xp.asarray(x), n_batch=1, n_dense=1, nse=3)  # padded: JAX's out-of-bounds convention
    S = A.to_scipy()
    np.testing.assert_array_equal(S.toarray(), x)
    assert S.nnz == 6  # the stored blocks, zeros within them included


@pytest.mark.x64
def test_scipy_errors():
    wide = sp.coo_array((np.ones(2, np.longdouble), ([0, 1], [0, 1])), shape=(2, 2))
    with pytest.raises(TypeError, match="^xp.sparse.from_scipy: s must be a scipy.sparse array or matrix, got ndarray"):
        xs.from_scipy(np.eye(2))
    with pytest.raises(
        TypeError,
        match=f"^xp.sparse.from_scipy: s has dtype {np.dtype(np.longdouble)}, which is not an array API dtype; pass dtype= to convert it$",
    ):
        xs.from_scipy(wide)
    assert_same(xs.from_scipy(wide, dtype=xp.float32).todense(), np.eye(2, dtype=np.float32))
    with pytest.raises(TypeError, match="^xp.sparse.from_scipy: cannot convert complex s to float64"):
        xs.from_scipy(sp.eye_array(2, dtype=np.complex128), dtype=xp.float64)
    with pytest.raises(ValueError, match="^xp.sparse.from_scipy: format must be one of 'bcoo', 'bcsr', got 'coo'$"):
        xs.from_scipy(sp.eye_array(2), format="coo")
    with pytest.raises(ValueError, match="^xp.sparse.BCOO.to_scipy: SciPy has no 0-dimensional sparse arrays$"):
        xs.asarray(1.0).to_scipy()
    with pytest.raises(
        ValueError, match="^xp.sparse.BCOO.to_scipy: format='csr' needs a 2-dimensional array, got 3 dimensions$"
    ):
        xs.zeros((2, 2, 2)).to_scipy(format="csr")
    with pytest.raises(TypeError, match=r"^xp.sparse.BCOO.to_scipy: a traced array cannot convert to SciPy"):
        jax.jit(lambda a: a.to_scipy())(xs.eye(2))


# --- pydata sparse --------------------------------------------------------------------------
# pydata sparse is imported in a fresh interpreter, so that this session's modules do not depend
# on whether it is installed first.


@pytest.mark.integration
def test_from_pydata(tmp_path):
    pytest.importorskip("numba")  # pydata sparse's backend
    env = {**subprocess_env(), "JAX_ENABLE_X64": "1"}  # (on the CPU, whatever this process's backend)
    result = run_script("pydata_sparse_conversion", env=env, cwd=tmp_path)
    assert result.returncode == 0, failure(result)
    assert result.stdout.strip() == "ok"


# --- the jitted kernels (GPU and TPU arrays) against the NumPy paths (CPU arrays) ----------


@contextlib.contextmanager
def kernels_only():
    """Run the jitted kernels, the path of arrays on an accelerator, instead of the NumPy path
    that eager calls on CPU arrays take."""
    with (
        mock.patch.object(_buffers, "on_host", lambda value: None),
        mock.patch.object(creation, "_host_device", lambda device: False),
    ):
        yield


def buffers(A):
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(A)]


def assert_same_buffers(A, B):
    assert type(A) is type(B) and A.shape == B.shape and A.nse == B.nse
    assert (A.indices_sorted, A.unique_indices) == (B.indices_sorted, B.unique_indices)
    for a, b in zip(buffers(A), buffers(B), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


# slow: the jitted tests of fromdense run the same kernels in the dev loop
@pytest.mark.slow
@pytest.mark.x64
@given(dense(min_dims=1, max_dims=3, max_side=3), st.data())
def test_kernels_match_numpy_fromdense(x, data):
    n_batch = data.draw(st.integers(0, x.ndim))
    n_dense = data.draw(st.integers(0, x.ndim - n_batch))
    formats = ["bcoo", "bcsr"] if x.ndim - n_batch - n_dense == 2 else ["bcoo"]
    for fmt in formats:
        host = xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense, format=fmt)
        padded = xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense, format=fmt, nse=host.nse + 1)
        with kernels_only():
            kernel = xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense, format=fmt)
            assert_same_buffers(kernel, host)
            assert_same_buffers(
                xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense, format=fmt, nse=host.nse + 1), padded
            )
            assert_same(kernel.todense(), x)
            if x.ndim - n_batch - n_dense:
                assert_same(padded.todense(), x)
            else:  # no sparse dimensions: the padding (0.0) repeats the one index, and -0.0 + 0.0 is 0.0
                np.testing.assert_array_equal(np.asarray(padded.todense()), x)
            with pytest.raises(ValueError, match="is smaller than the"):
                if host.nse:
                    xs.fromdense(xp.asarray(x), n_batch=n_batch, n_dense=n_dense, format=fmt, nse=host.nse - 1)
                else:
                    raise ValueError("is smaller than the")


# slow: the jitted tests of to_bcsr, sum_duplicates and sort_indices run the same kernels in the dev loop
@pytest.mark.slow
@pytest.mark.x64
@given(coo_with_duplicates())
def test_kernels_match_numpy_conversions(case):
    A, expected = case
    host = A.to_bcsr(), A.sum_duplicates(), A.sort_indices()
    with kernels_only():
        B = xs.BCOO((A.data, A.indices), shape=A.shape)
        assert (B.indices_sorted, B.unique_indices) == (A.indices_sorted, A.unique_indices)
        csr = B.to_bcsr()
        assert_same_buffers(csr, host[0])
        assert_same_buffers(csr.to_bcoo(), host[0].to_bcoo())
        assert_same(csr.todense(), expected)
        assert_same_buffers(B.sum_duplicates(), host[1])
        assert_same_buffers(csr.sum_duplicates(), host[1].to_bcsr())
        ordered = B.sort_indices()
        assert (
            ordered.indices_sorted and lexicographic(np.asarray(ordered.indices).reshape(-1, A.nse, 2)[0])
            if A.nse and not A.n_batch
            else True
        )
        assert_same(ordered.todense(), expected)
        assert_same(B.todense(), expected)


@pytest.mark.x64
def test_kernels_check_construction():
    with kernels_only():
        for case in BCOO_ERRORS:
            args, shape, kwargs, kind, message = getattr(case, "values", case)  # a pytest.param or a tuple
            if kind is TypeError:
                continue
            with pytest.raises(kind, match=f"^{message}$"):
                xs.BCOO(tuple(xp.asarray(a) for a in args), shape=shape, **kwargs)
        for case in BCSR_ERRORS:
            args, shape, kwargs, kind, message = getattr(case, "values", case)  # a pytest.param or a tuple
            with pytest.raises(kind, match=f"^{message}"):
                bcsr(*args, shape, **kwargs)
        A = bcsr([1.0, 9.0, 2.0], [1, 7, 0], [0, 1, 1], (2, 2))
        assert A.indices_sorted and A.unique_indices
        assert_same(A.todense(), [[0.0, 1.0], [0.0, 0.0]])


@st.composite
def coo_indices(draw):
    """BCOO indices (*batch, nse, n_sparse) with repeats, in order or not, some out of range."""
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    nse, n_sparse = draw(st.integers(1, 7)), draw(st.integers(1, 3))
    indices = draw(hnp.arrays(np.int32, (*batch, nse, n_sparse), elements=st.integers(-1, 3)))
    if draw(st.booleans()):  # every batch in lexicographic order
        flat = indices.reshape(-1, nse, n_sparse)
        for b in flat:
            b[...] = b[np.lexsort(b.T[::-1])]
        indices = flat.reshape(indices.shape)
    return indices


def reference_summary(indices):
    """Per sparse dimension the smallest and largest index; every batch's entries in order, and
    strictly so: as tuples compared in Python."""
    n_sparse = indices.shape[-1]
    batches = [[tuple(e) for e in b] for b in indices.reshape(-1, indices.shape[-2], n_sparse)]
    pairs = [(a, b) for entries in batches for a, b in itertools.pairwise(entries)]
    low, high = indices.reshape(-1, n_sparse).min(axis=0), indices.reshape(-1, n_sparse).max(axis=0)
    return [list(low), list(high), all(a <= b for a, b in pairs), all(a < b for a, b in pairs)]


@given(coo_indices())
def test_index_checks_match_a_reference_on_the_host_and_in_the_kernel(indices):
    """The NumPy check (CPU arrays, column by column) and the jitted one (accelerators) that
    the BCOO constructor runs on its indices, against tuples compared in Python."""
    expected = reference_summary(indices)
    for low, high, in_order, strictly in (
        _build._index_summary_host(indices),
        jax.device_get(_build._index_summary_kernel(jax.numpy.asarray(indices))),
    ):
        assert [list(low), list(high), bool(in_order), bool(strictly)] == expected


@st.composite
def bcsr_buffers(draw):
    """Valid BCSR (indices, indptr) with batches, empty rows, padding past indptr[-1], and
    columns in order within rows or not, repeated or not."""
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    n_rows, nse = draw(st.integers(0, 5)), draw(st.integers(1, 9))
    count = int(np.prod(batch, dtype=int))
    indptr = np.zeros((count, n_rows + 1), np.int32)
    for ptr in indptr:
        ptr[1:] = np.sort(draw(st.lists(st.integers(0, nse), min_size=n_rows, max_size=n_rows)))
    indices = draw(hnp.arrays(np.int32, (count, nse), elements=st.integers(0, 3)))
    if draw(st.booleans()):  # columns in order within each row
        for cols, ptr in zip(indices, indptr, strict=True):
            for start, end in itertools.pairwise(ptr):
                cols[start:end] = np.sort(cols[start:end])
    return indices.reshape(*batch, nse), indptr.reshape(*batch, n_rows + 1)


@pytest.mark.slow
@given(bcsr_buffers())
def test_bcsr_checks_match_a_reference_on_the_host_and_in_the_kernel(buffers_):
    indices, indptr = buffers_
    nse, n_rows = indices.shape[-1], indptr.shape[-1] - 1
    rows, stored, columns = [], [], []
    for cols, ptr in zip(indices.reshape(-1, nse), indptr.reshape(-1, n_rows + 1), strict=True):
        rows.append([next((r for r in range(n_rows) if ptr[r] <= j < ptr[r + 1]), n_rows) for j in range(nse)])
        stored += list(cols[: ptr[-1]])
        columns.append([(r, c) for r, c in zip(rows[-1], cols, strict=True) if r < n_rows])
    pairs = [(a, b) for entries in columns for a, b in itertools.pairwise(entries) if a[0] == b[0]]
    expected = [
        min(stored, default=0),
        max(stored, default=0),
        all(a <= b for a, b in pairs),
        all(a < b for a, b in pairs),
    ]
    got = _build._bcsr_summary_host(indices, indptr)
    assert [int(got[0]), int(got[1]), bool(got[2]), bool(got[3])] == expected
    if stored:  # (the kernel reports the dtype's extremes where nothing is stored)
        kernel = jax.device_get(_build._bcsr_summary(jax.numpy.asarray(indices), jax.numpy.asarray(indptr)))
        assert [int(kernel[0]), int(kernel[1]), bool(kernel[2]), bool(kernel[3])] == expected
    for ptr, expected_rows in zip(indptr.reshape(-1, n_rows + 1), rows, strict=True):  # XLA's kernels' rows
        np.testing.assert_array_equal(xla.rows_from_indptr(jax.numpy.asarray(ptr), nse=nse), expected_rows)
    coordinates = _buffers.bcsr_coordinates_host(indices, indptr)
    np.testing.assert_array_equal(coordinates[..., 0], np.reshape(rows, indices.shape))
    np.testing.assert_array_equal(
        coordinates, jax.device_get(_buffers.bcsr_coordinates(jax.numpy.asarray(indices), jax.numpy.asarray(indptr)))
    )


RUNNING_SUM_IS_CPUS = (
    "the parallel prefix sum is the CPU's form of xp.sparse._coordinates.running_sum "
    "(lax.platform_dependent); other backends keep cumsum, a reduce-window"
)


@pytest.mark.cpu_only(reason=RUNNING_SUM_IS_CPUS)
def test_row_indices_from_row_pointers_compile_without_a_reduce_window_on_cpu():
    """XLA's kernels find each entry's row with a running sum: on CPU a parallel prefix sum, not
    ``cumsum``'s reduce-window, which takes longer and, with the row pointers a constant of the
    jitted function, seconds of constant folding at compile time."""
    indptr = jax.numpy.arange(0, 400_001, 20, dtype=np.int32)
    compiled = jax.jit(functools.partial(xla.rows_from_indptr, nse=400_000)).lower(indptr).compile()
    assert "reduce-window" not in compiled.as_text()
    np.testing.assert_array_equal(compiled(indptr), np.repeat(np.arange(20_000, dtype=np.int32), 20))


_RUNNING_SUMS = {  # operations that number runs of entries or count along an axis, and NumPy's twin
    "sum_duplicates": (lambda A: A.sum_duplicates(nse=A.nse), lambda d: d),
    "to_bcsr": (lambda A: A.to_bcsr(), lambda d: d),
    "prod(axis=1)": (lambda A: xp.prod(A, axis=1), lambda d: np.prod(d, axis=1)),
    "take": (lambda A: xp.take(A, xp.asarray([3, 1, 3, 7]), axis=0), lambda d: d[[3, 1, 3, 7]]),
    "repeat": (lambda A: xp.repeat(A, 3, axis=0), lambda d: np.repeat(d, 3, axis=0)),
    "repeat(counts)": (
        lambda A: xp.repeat(A, np.arange(12, dtype=np.int32) % 3, axis=0),
        lambda d: np.repeat(d, np.arange(12) % 3, axis=0),
    ),
    "tile": (lambda A: xp.tile(A, (2, 3)), lambda d: np.tile(d, (2, 3))),
    "broadcast_to": (lambda A: xp.broadcast_to(A, (2, 12, 9)), lambda d: np.broadcast_to(d, (2, 12, 9))),
}


@pytest.mark.slow
@pytest.mark.cpu_only(reason=RUNNING_SUM_IS_CPUS)
@pytest.mark.parametrize("operation", _RUNNING_SUMS)
def test_running_sums_over_entries_are_parallel_prefix_sums_on_cpu(operation):
    """Every running sum over entries in xp.sparse's XLA kernels is the parallel prefix sum on CPU
    (``_coordinates.running_sum`` says why), and
    repeats by a static count are a broadcast (``jnp.repeat`` with ``total_repeat_length`` takes
    two cumsums): the lowered computation has no reduce-window at all."""
    ours, numpy_twin = _RUNNING_SUMS[operation]
    rng = np.random.default_rng(4)
    dense = np.where(rng.random((12, 9)) < 0.4, rng.integers(1, 4, (12, 9)), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(dense))
    lowered = jax.jit(ours).lower(A).as_text()
    assert "reduce_window" not in lowered
    np.testing.assert_array_equal(np.asarray(xp.asarray(ours(A).todense())), numpy_twin(dense))
    np.testing.assert_array_equal(np.asarray(xp.asarray(jax.jit(ours)(A).todense())), numpy_twin(dense))


@pytest.mark.x64_off
def test_with_64_bit_mode_off():
    """32-bit values and indices; 64-bit data, dtypes and index dtypes are errors, not silent
    truncations."""
    A = xs.asarray([[0.0, 1.5], [2.0, 0.0]])
    assert A.dtype == xp.float32 and A.indices.dtype == xp.int32 and A.nse == 2
    np.testing.assert_array_equal(np.asarray(A.todense()), [[0, 1.5], [2, 0]])
    with pytest.raises(TypeError, match="^xp.sparse.from_scipy: s has dtype float64: .*64-bit mode"):
        xs.from_scipy(sp.eye_array(2))
    assert xs.from_scipy(sp.eye_array(2), dtype=xp.float32).dtype == xp.float32
    with pytest.raises(TypeError, match="^xp.sparse.fromdense: index_dtype=int64: .*64-bit mode"):
        xs.fromdense(xp.ones(2), index_dtype=xp.int64)
    with pytest.raises(ValueError, match="^xp.sparse.zeros: a dimension of size 4294967296 needs int64 indices"):
        xs.zeros((2**32,))
    with pytest.raises(TypeError, match="^xp.sparse.eye: dtype=float64: .*64-bit mode"):
        xs.eye(2, dtype=xp.float64)
