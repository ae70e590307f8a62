"""The sparse array types: attributes, repr, conversions they refuse, T and mT, devices, and
JAX transformations (pytrees: jit, grad with respect to data, vmap over batch dimensions)."""

import contextlib
import copy
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixed_shapes import shapes
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax.experimental import sparse as jsparse

import xp
import xp.sparse as xs
from xp.sparse._coordinates import padded_nse

X = np.asarray([[0.0, 2.0, 0.0, 1.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 5.0, 4.0]], np.float32)


def assert_same(out, expected):
    assert isinstance(out, xp.Array), type(out)
    got, expected = np.asarray(out), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


# --- attributes and repr --------------------------------------------------------------------


def test_attributes():
    A = xs.fromdense(xp.asarray(X))
    assert A.dtype == xp.float32 and A.shape == (3, 4) and A.ndim == 2 and A.size == 12 and len(A) == 3
    assert (A.nse, A.n_batch, A.n_sparse, A.n_dense) == (5, 0, 2, 0)
    assert A.device == xp.asarray(X).device
    assert isinstance(A.data, xp.Array) and A.data.shape == (5,) and A.data.dtype == xp.float32
    assert isinstance(A.indices, xp.Array) and A.indices.shape == (5, 2) and A.indices.dtype == xp.int32
    assert_same(A.data, np.asarray([2.0, 1.0, 3.0, 5.0, 4.0], np.float32))
    assert_same(A.indices, np.asarray([[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]], np.int32))
    B = A.to_bcsr()
    assert_same(B.indptr, np.asarray([0, 2, 3, 5], np.int32))
    assert_same(B.indices, np.asarray([1, 3, 0, 2, 3], np.int32))
    assert A.jax is A._value and isinstance(A.jax, jsparse.BCOO)
    assert A.__array_namespace__() is xp
    assert A.__array_namespace__(api_version="2025.12") is xp


@pytest.mark.x64
def test_repr():
    assert repr(xs.fromdense(xp.asarray(X))) == "BCOO(float32[3, 4], nse=5)"
    assert repr(xs.fromdense(xp.asarray(X), format="bcsr")) == "BCSR(float32[3, 4], nse=5)"
    batched = xs.fromdense(xp.ones((2, 3, 4), dtype=xp.int8), n_batch=1, n_dense=1)
    assert repr(batched) == "BCOO(int8[2, 3, 4], nse=3, n_batch=1, n_dense=1)"
    assert repr(xs.zeros(())) == "BCOO(float64[], nse=0)"
    seen = []
    jax.jit(lambda a: seen.append(repr(a)))(xs.eye(3))
    assert seen == ["BCOO(traced float64[3, 3], nse=3)"]


def test_namespace_errors():
    with pytest.raises(ValueError, match="^xp.sparse.BCOO.__array_namespace__: api_version must be None or one of"):
        xs.eye(2).__array_namespace__(api_version="2020.01")


@pytest.mark.slow
def test_from_jax_and_back_without_a_copy():
    J = jsparse.BCOO.fromdense(jnp.asarray(X))
    A = xs.BCOO.from_jax(J)
    assert A.jax is J
    assert_same(A.todense(), X)
    with pytest.raises(
        TypeError, match="^xp.sparse.BCOO.from_jax: value must be a jax.experimental.sparse.BCOO, got BCSR$"
    ):
        xs.BCOO.from_jax(jsparse.BCSR.fromdense(jnp.asarray(X)))
    with pytest.raises(TypeError, match="which is not an array API dtype"):
        xs.BCOO.from_jax(jsparse.BCOO.fromdense(jnp.asarray(X, dtype=jnp.float16)))


# --- what a sparse array refuses ------------------------------------------------------------


def test_no_implicit_densification():
    A = xs.fromdense(xp.asarray(X))
    with pytest.raises(
        TypeError,
        match=r"^xp.sparse.BCOO: a sparse array does not convert to a NumPy array implicitly; call .todense\(\) first$",
    ):
        np.asarray(A)
    with pytest.raises(BufferError, match=r"^xp.sparse.BCOO: DLPack has no sparse layout; call .todense\(\) first$"):
        A.__dlpack__()
    with pytest.raises(TypeError, match="^xp.sparse.BCOO: sparse arrays are immutable; build a new one"):
        A[0, 0] = 1.0
    with pytest.raises(
        TypeError, match=r"^xp.sparse.BCOO: only arrays of one element convert to a Python scalar, got shape \(3, 4\)$"
    ):
        bool(A)
    with pytest.raises(TypeError, match="^xp.sparse.BCOO: len"):
        len(xs.asarray(1.0))
    with pytest.raises(TypeError, match="unhashable"):
        hash(A)


def test_python_scalars_of_one_element():
    assert float(xs.asarray(2.5)) == 2.5
    assert float(xs.asarray(0.0)) == 0.0
    assert int(xs.asarray(7)) == 7
    assert bool(xs.asarray([[True]])) is True
    assert complex(xs.asarray(1j)) == 1j
    assert [1, 2, 3][xs.asarray(2)] == 3


def test_pickle_and_odd_pytree_leaves():
    A = xs.fromdense(xp.asarray(X), format="bcsr")
    B = pickle.loads(pickle.dumps(A))
    assert isinstance(B, xs.BCSR) and B.nse == A.nse
    assert_same(B.todense(), X)
    assert repr(jax.tree_util.tree_map(lambda leaf: None, xs.eye(2))) == "BCOO(shape=[2, 2], leaves=[None, None])"


def test_copies_share_immutable_buffers():
    A = xs.eye(3)
    for B in (copy.copy(A), copy.deepcopy(A)):
        assert B is not A and isinstance(B, xs.BCOO) and B.jax is A.jax


# --- operators: the xp functions, which route to the sparse implementations ----------------


@pytest.mark.slow
def test_operators_reach_the_sparse_implementations():
    A = xs.fromdense(xp.asarray(X))
    v = xp.ones(4, dtype=xp.float32)
    for out, expected in (
        (A * 2, X * 2), (2 * A, X * 2), (-A, -X), (A + A, X + X), (A - A, X - X), (abs(-A), X), (A / 2, X / 2),
        (A > 1, X > 1),
    ):  # fmt: skip
        assert isinstance(out, xs.BCOO)
        assert_same(out.todense(), expected)
    assert_same(A @ v, X @ np.ones(4, np.float32))
    assert_same(jax.jit(lambda a, w: a @ w)(A, v), X @ np.ones(4, np.float32))
    with pytest.warns(xp.sparse.SparseEfficiencyWarning, match=r"^xp.add: add\(0, 1\) is not 0.*\.todense\(\) first"):
        assert_same(A + 1, X + 1)  # computed densely, and said so
    B = A
    B *= 2  # sparse arrays are immutable: the name is rebound to a new array
    assert B is not A
    assert_same(B.todense(), X * 2)
    assert_same(A.todense(), X)


# --- transposes and devices -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
@given(hnp.arrays(np.float64, shapes(min_dims=2, max_dims=4, max_side=3), elements=st.sampled_from([0.0, 1.0, -2.5])))
def test_transposes_match_dense(x):
    A = xs.fromdense(xp.asarray(x))
    mT = A.mT
    assert isinstance(mT, xs.SparseArray)
    assert_same(mT.todense(), np.swapaxes(x, -1, -2))
    assert_same(jax.jit(lambda a: a.mT.todense())(A), np.swapaxes(x, -1, -2))
    if x.ndim == 2:
        assert_same(A.T.todense(), x.T)
        assert_same(jax.jit(lambda a: a.T.todense())(A), x.T)


def test_transpose_errors():
    with pytest.raises(
        ValueError, match=r"^xp.sparse.BCOO.T: the array must be 2-dimensional, got 3 dimensions \(use .mT\)$"
    ):
        xs.zeros((2, 2, 2)).T
    with pytest.raises(ValueError, match="^xp.sparse.BCOO.mT: the array must have at least 2 dimensions, got 1$"):
        xs.zeros(2).mT


def test_to_device():
    A = xs.fromdense(xp.asarray(X))
    device = jax.devices()[-1]
    B = A.to_device(device)
    assert B.device == device
    assert_same(B.todense(), X)
    assert A.to_device(A.device) is A
    with pytest.raises(
        ValueError, match=r"^xp.sparse.BCOO.to_device: stream must be None \(JAX orders transfers itself\)$"
    ):
        A.to_device(device, stream=1)
    with pytest.raises(
        TypeError, match="^xp.sparse.BCOO.to_device: device must be a jax.Device or a jax.sharding.Sharding"
    ):
        A.to_device("cpu")
    assert A.block_until_ready() is A


# --- pytrees: jit, grad, vmap ---------------------------------------------------------------


def test_jit_takes_and_returns_sparse_arrays():
    A = xs.fromdense(xp.asarray(X))
    B = jax.jit(lambda a: a)(A)
    assert isinstance(B, xs.BCOO) and B.shape == A.shape and B.nse == A.nse
    assert B.indices_sorted and B.unique_indices
    assert_same(B.todense(), X)
    C = jax.jit(lambda a: a.to_bcsr())(A)
    assert isinstance(C, xs.BCSR)
    assert_same(C.todense(), X)
    leaves = jax.tree_util.tree_leaves(A)
    assert len(leaves) == 2 and leaves[0] is A.jax.data


_QUERIES = np.array([3, 1, 3, 7], np.int32)
_INDEXINGS = {  # indexing by traced queries, NumPy's twin, and the axis the queries index
    "take": (lambda A, i: xp.take(A, i, axis=0), lambda d: d[_QUERIES], 0),
    "take axis=1": (lambda A, i: xp.take(A, i, axis=1), lambda d: d[:, _QUERIES], 1),
    "getitem": (lambda A, i: A[i], lambda d: d[_QUERIES], 0),
}


@pytest.mark.slow
@pytest.mark.parametrize("how", _INDEXINGS)
def test_traced_queries_into_a_constant_array_store_the_longest_match_per_query(how):
    """With the queries traced and the array a constant of the traced function, the result
    stores queries x the most elements one key has (the longest row, taking rows), not queries x
    the length of a row: for 2000 rows of a 20000 x 20000 matrix, 76k stored elements instead of
    40M. Eagerly the count is exact for rows (taken in NumPy on CPU), else rounded up to one of a few
    sizes (so that new queries do not compile for every new count)."""
    ours, numpy_twin, axis = _INDEXINGS[how]
    rng = np.random.default_rng(11)
    dense = np.where(rng.random((30, 40)) < 0.15, rng.standard_normal((30, 40)), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(dense))
    longest = int(np.count_nonzero(dense, axis=1 - axis).max())
    traced = jax.jit(lambda i: ours(A, i))(xp.asarray(_QUERIES))
    assert traced.nse == len(_QUERIES) * longest
    assert_same(traced.todense(), numpy_twin(dense))
    eager = ours(A, xp.asarray(_QUERIES))
    count = int(np.count_nonzero(numpy_twin(dense)))
    assert eager.nse == (count if axis == 0 else padded_nse(count))
    assert_same(eager.todense(), numpy_twin(dense))


def _stored_row_by_row(dense, layout, rng):
    """``dense`` (2-d) as a sparse matrix stored row by row: BCSR, a BCOO with sorted indices,
    sorted with padding inside a row too (a coordinate past the last column, with a value), or
    sorted with duplicates (halves of the values, unique_indices False). Padded after the last
    row to twice the size plus two stored elements, so that examples share their compilations."""
    capacity = 2 * dense.size + 2
    if layout == "bcsr":
        return xs.fromdense(xp.asarray(dense), format="bcsr", nse=capacity)
    rows, cols = np.nonzero(dense)
    values = dense[rows, cols]
    n_rows, n_cols = dense.shape
    if layout == "duplicates":
        rows, cols, values = np.repeat(rows, 2), np.repeat(cols, 2), np.repeat(values / 2, 2)
    if layout == "padded":
        r = int(rng.integers(0, n_rows))
        at = int(np.searchsorted(rows, r, side="right"))
        rows, cols, values = np.insert(rows, at, r), np.insert(cols, at, n_cols), np.insert(values, at, 9.0)
    pad = capacity - len(rows)
    rows, cols = np.append(rows, np.full(pad, n_rows)), np.append(cols, np.full(pad, n_cols))
    values = np.append(values, np.full(pad, 7.0))
    value = jsparse.BCOO(
        (jnp.asarray(values, dense.dtype), jnp.asarray(np.stack([rows, cols], axis=1), jnp.int32)),
        shape=dense.shape,
        indices_sorted=True,
        unique_indices=layout != "duplicates",
    )
    return xs.BCOO.from_jax(value)


_ROW_TAKES = {  # taking rows by integer arrays, and NumPy's twin
    "take": (lambda A, i: xp.take(A, i, axis=0), lambda d, i: d[i]),
    "getitem": (lambda A, i: A[i], lambda d, i: d[i]),
    "getitem 2-d": (lambda A, i: A[xp.reshape(i, (2, -1))], lambda d, i: d[i.reshape(2, -1)]),
    "getitem with an ellipsis": (lambda A, i: A[i, ...], lambda d, i: d[i, ...]),
}


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["bcsr", "sorted", "padded", "duplicates"])
@given(data=st.data())
def test_rows_of_a_matrix_stored_row_by_row_are_gathered_without_sorting(layout, data):
    """Taking rows of a BCSR, or of a BCOO with sorted indices, gathers each row's elements
    through row pointers: the jitted program sorts nothing (the general join sorts the matrix,
    about a hundred times the work for 2000 rows of 20000 x 20000 with 400k entries). Eagerly,
    jitted with the matrix an argument, and with the matrix a constant and the queries traced,
    the result is the dense one; traced queries out of range select nothing."""
    how = data.draw(st.sampled_from(sorted(_ROW_TAKES)))
    ours, numpy_twin = _ROW_TAKES[how]
    dense = data.draw(hnp.arrays(np.float32, (5, 4), elements=st.sampled_from([0.0, 0.0, 1.0, -2.5, 3.0])))
    A = _stored_row_by_row(dense, layout, np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))))
    queries = np.asarray(data.draw(st.lists(st.integers(-5, 4), min_size=6, max_size=6)), np.int32)
    i = xp.asarray(queries)
    expected = numpy_twin(dense, queries)
    for got in (ours(A, i), jax.jit(ours)(A, i), jax.jit(lambda i: ours(A, i))(i)):
        assert_same(got.todense(), expected)
    assert "sort[" not in str(jax.make_jaxpr(lambda i: ours(A, i))(i))
    if layout != "duplicates":  # (with the matrix traced, a bound on duplicates' rows needs them summed)
        assert "sort[" not in str(jax.make_jaxpr(ours)(A, i))
    beyond = xp.asarray(np.array([5, -6, 0, 5, 0, -6], np.int32))  # unchecked under jit
    expected = numpy_twin(np.concatenate([dense, np.zeros((1, 4), np.float32)]), np.array([5, 5, 0, 5, 0, 5]))
    assert_same(jax.jit(lambda i: ours(A, i))(beyond).todense(), expected)


def test_the_usual_constructors_store_rows_that_are_taken_without_sorting():
    """``fromdense`` and ``from_scipy`` (BCOO and BCSR) make matrices whose rows are gathered
    through row pointers (docs/sparse.md): no sort in the jitted program."""
    import scipy.sparse

    dense = np.where(np.arange(35).reshape(7, 5) % 3 == 0, np.arange(35.0).reshape(7, 5), 0).astype(np.float32)
    queries = np.array([6, 0, 6, -2], np.int32)
    made = [xs.fromdense(xp.asarray(dense)), xs.fromdense(xp.asarray(dense), format="bcsr")]
    made += [xs.from_scipy(scipy.sparse.csr_array(dense), format=f) for f in ("bcoo", "bcsr")]
    for A in made:
        taken = jax.jit(lambda i, A=A: A[i])
        assert "sort[" not in str(jax.make_jaxpr(lambda i, A=A: A[i])(xp.asarray(queries)))
        assert_same(taken(xp.asarray(queries)).todense(), dense[queries])


def test_a_sorted_bcoo_keeps_its_row_pointers_while_it_lives():
    """Taking rows of a sorted BCOO a second time computes its row pointers (a BCSR's indptr)
    and keeps them as long as the array lives (a traced function with the array a constant, at
    once): not for arrays with more rows than twice their entries."""
    import gc

    import scipy.sparse

    from xp.sparse import _joins

    dense = np.where(np.arange(35).reshape(7, 5) % 3 == 0, np.arange(35.0).reshape(7, 5), 0).astype(np.float32)
    A = xs.from_scipy(scipy.sparse.csr_array(dense))
    rows = xp.asarray(np.array([6, 0, 6, 3], np.int32))
    indptr = scipy.sparse.csr_array(dense).indptr
    assert_same(A[rows].todense(), dense[np.asarray(rows)])
    key = id(A._value)
    assert _joins._ROW_POINTERS[key][1] is None  # (used once: searched, not computed)
    assert_same(A[rows].todense(), dense[np.asarray(rows)])
    np.testing.assert_array_equal(np.asarray(_joins._ROW_POINTERS[key][1]), indptr)
    assert_same(A[rows].todense(), dense[np.asarray(rows)])  # (from the kept pointers)
    del A
    gc.collect()
    assert key not in _joins._ROW_POINTERS
    B = xs.from_scipy(scipy.sparse.csr_array(dense))
    assert_same(jax.jit(lambda i: B[i])(rows).todense(), dense[np.asarray(rows)])
    np.testing.assert_array_equal(np.asarray(_joins._ROW_POINTERS[id(B._value)][1]), indptr)
    tall = xs.fromdense(xp.asarray(np.eye(9, 2, dtype=np.float32)))  # 9 rows, 2 entries
    assert_same(tall[rows].todense(), np.eye(9, 2, dtype=np.float32)[np.asarray(rows)])
    assert id(tall._value) not in _joins._ROW_POINTERS


@contextlib.contextmanager
def compilations():
    """The XLA compilations made inside the block (a list that fills as they happen)."""
    made: list[str] = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            made.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield made
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def _row_batches(rng, n_rows, count):
    return [rng.integers(-n_rows, n_rows, size=8).astype(np.int32) for _ in range(count)]


@pytest.mark.cpu_only(
    reason="rows of arrays in CPU memory are gathered eagerly in NumPy (xp.sparse._buffers.on_host); "
    "on an accelerator a kernel gathers them, compiled for each padded count"
)
@pytest.mark.parametrize("format", ["bcoo", "bcsr"])
def test_taking_new_rows_eagerly_stores_them_exactly_and_compiles_nothing(format):
    """Eagerly on CPU, rows of a matrix stored row by row are gathered in NumPy (the policy of
    xp.sparse._buffers): each new set of rows, a minibatch, stores exactly its elements and compiles
    nothing, where a kernel compiles for every new number of stored elements, about a second a
    batch of 2000 rows of a 20000 x 20000 matrix with 400k entries (jnp.asarray of the results
    would compile too, for every new shape: xp.sparse._buffers.to_device_of)."""
    rng = np.random.default_rng(5)
    dense = np.where(rng.random((60, 50)) < 0.2, rng.standard_normal((60, 50)), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(dense), format=format)
    warm = xp.asarray(_row_batches(rng, 60, 1)[0])
    A[warm], A[warm]  # (the index checks compile once; a sorted BCOO's row pointers, on its second use)
    batches = [xp.asarray(b) for b in _row_batches(rng, 60, 5)]
    with compilations() as made:
        taken = [A[b] for b in batches]
    assert made == []
    for b, got in zip(batches, taken, strict=True):
        expected = dense[np.asarray(b)]
        assert got.nse == np.count_nonzero(expected)
        assert_same(got.todense(), expected)


def test_padded_counts_are_eight_sizes_per_power_of_two_with_less_than_an_eighth_padding():
    sizes = [padded_nse(n) for n in range(5000)]
    assert sizes[:17] == list(range(17)) and sizes == sorted(sizes)
    assert all(n < size + 1 and size - n < n / 8 for n, size in enumerate(sizes) if n > 16)
    assert all(len({size for size in sizes if 2**k <= size < 2 ** (k + 1)}) == 8 for k in range(5, 12))


@pytest.mark.cpu_only(
    reason="compares the NumPy path of arrays in CPU memory (exact counts) with the kernels; on an "
    "accelerator both calls take the kernels"
)
def test_rows_taken_eagerly_on_an_accelerator_store_a_padded_count():
    """On an accelerator (the kernels, run here on CPU with the NumPy path switched off), the number
    of elements rows store is read back, then rounded up to one of eight sizes per power of two: the
    elements of the NumPy path, then canonical padding; batches whose counts round alike share one
    compilation, where each new count compiled before."""
    from unittest import mock

    from xp.sparse import _buffers, _coordinates, _joins

    rng = np.random.default_rng(8)
    dense = np.where(rng.random((60, 50)) < 0.2, rng.standard_normal((60, 50)), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(dense), format="bcsr")
    by_size: dict[int, dict[int, np.ndarray]] = {}  # padded count: exact count: batch
    for b in _row_batches(rng, 60, 200):
        exact = int(np.count_nonzero(dense[b]))
        by_size.setdefault(_coordinates.padded_nse(exact), {})[exact] = b
    alike = next(list(counts.values())[:2] for counts in by_size.values() if len(counts) >= 2)
    host = [A[xp.asarray(b)] for b in alike]
    with mock.patch.object(_buffers, "on_host", lambda value: None):
        before = _joins._take_rows._cache_size()
        kernel = [A[xp.asarray(b)] for b in alike]
        assert _joins._take_rows._cache_size() - before <= 1
    for h, k, b in zip(host, kernel, alike, strict=True):
        assert k.nse == _coordinates.padded_nse(h.nse) > h.nse
        data, indices = np.asarray(k.data), np.asarray(k.indices)
        np.testing.assert_array_equal(data[: h.nse], np.asarray(h.data))
        np.testing.assert_array_equal(indices[: h.nse], np.asarray(h.indices))
        assert (data[h.nse :] == 0).all() and (indices[h.nse :] == np.asarray(k.shape)).all()
        assert_same(k.todense(), dense[b])


def test_grad_with_respect_to_data():
    A = xs.fromdense(xp.asarray(X))
    indices = A.indices

    def loss(data):
        return xp.sum(xs.BCOO((data, indices), shape=A.shape).todense() ** 2).jax

    grad = jax.grad(loss)(A.data)
    assert_same(grad, 2 * np.asarray(A.data))
    # and with respect to the data of a sparse array passed whole (gradient of a pytree)
    grad_tree = jax.grad(lambda d, i: jnp.sum(xs.BCOO((d, i), shape=A.shape).todense().jax * jnp.asarray(X)))(
        A.data.jax, indices.jax
    )
    np.testing.assert_array_equal(np.asarray(grad_tree), np.asarray(A.data))


def test_grad_with_respect_to_data_through_a_sparse_reduction():
    A = xs.fromdense(xp.asarray(X))
    indices = A.indices
    grad = jax.grad(lambda d: xp.sum(xs.BCOO((d, indices), shape=A.shape) * 3.0).jax)(A.data)
    assert_same(grad, np.full(A.nse, 3.0, np.float32))


def test_grad_through_fromdense_reaches_the_stored_elements_only():
    # Unstored elements are structural zeros: fromdense does not depend on them (as JAX's).
    x = xp.asarray(X)
    grad = jax.grad(lambda v: xp.sum(xs.fromdense(v, nse=5).todense() * 3.0).jax)(x)
    assert_same(grad, np.where(X != 0, 3.0, 0.0).astype(np.float32))


@given(hnp.arrays(np.float32, shapes(min_dims=2, max_dims=3, max_side=3), elements=st.sampled_from([0.0, 1.5, -1.0])))
def test_vmap_over_a_batch_dimension(x):
    A = xs.fromdense(xp.asarray(x), n_batch=1)
    assert_same(jax.vmap(lambda a: a.todense())(A), x)
    out = jax.vmap(lambda a: a)(A)
    assert isinstance(out, xs.BCOO) and out.n_batch == 1
    assert_same(out.todense(), x)
    inner = []
    jax.vmap(lambda a: inner.append((a.shape, a.n_batch)))(A)
    assert inner == [(x.shape[1:], 0)]
    doubled = jax.vmap(lambda a: a.todense() * 2)(A)
    assert_same(doubled, x * 2)


def test_vmap_needs_a_batch_dimension():
    with pytest.raises(ValueError, match="in_axes for batched BCOO operations must correspond to a batch dimension"):
        jax.vmap(lambda a: a.todense())(xs.eye(2))
