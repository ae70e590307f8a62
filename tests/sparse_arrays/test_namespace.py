"""The namespace ``xp.sparse``: complete (every name of the standard), its creation functions
make sparse arrays equal to xp's dense results, eagerly and under jit, with the nse chosen as
documented; xp's functions of the same names route sparse arguments here."""

import math
from unittest import mock

import jax
import numpy as np
import pytest
from fixed_shapes import shapes
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
import xp.sparse as xs
from xp.sparse import _buffers
from xp.sparse import _creation as creation

CREATION = [
    *("arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace"),
    *("meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"),
]
# The 2025.12 namespace: what xp exports other than its own extras.
XP_EXTRAS = {
    "Array",
    "ArrayLike",
    "Device",
    "DTypeLike",
    "DType",
    "fft",
    "linalg",
    "sparse",
    "special",
    "transforms",
    "__version__",
}
XP_EXTRAS |= {"narrow_64bit", "NarrowingWarning"}  # the opt-in to narrowing 64-bit requests (docs/arrays.md)
XP_EXTRAS |= {"checked", "CheckError"}  # checked mode (docs/checked.md)
STANDARD = [
    *sorted(n for n in vars(xp) if not n.startswith("_") and n not in XP_EXTRAS),
    "__array_api_version__",
    "__array_namespace_info__",
]
SHAPES = shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


def dense_of(A):
    assert isinstance(A, xs.SparseArray), type(A)
    return np.asarray(A.todense())


def assert_matches(A, expected):
    """``A`` is sparse, stores exactly the nonzero elements of the dense ``expected`` (xp array)."""
    expected = np.asarray(expected)
    out = dense_of(A)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


# --- the namespace --------------------------------------------------------------------------


def test_every_standard_name_is_there():
    assert "abs" in STANDARD and "e" in STANDARD and "uint64" in STANDARD and "newaxis" in STANDARD
    for name in STANDARD:
        assert hasattr(xs, name), name
    for name in STANDARD:
        if name in CREATION:
            assert getattr(xs, name) is not getattr(xp, name), name
            assert getattr(xs, name).__module__ == "xp.sparse", name
        elif name != "__array_api_version__":
            assert getattr(xs, name) is getattr(xp, name), name
    assert xs.__array_api_version__ == "2025.12"
    assert xs.__array_namespace_info__().default_dtypes() == xp.__array_namespace_info__().default_dtypes()


@pytest.mark.x64
def test_extensions():
    import xp.sparse.linalg

    assert xs.linalg is xp.sparse.linalg and xs.linalg is not xp.linalg
    assert xs.fft is xp.fft  # its functions route sparse arguments (the transform is dense)
    assert xs.special is xp.special  # likewise (SciPy looks up special functions in a namespace)
    with pytest.warns(xp.sparse.SparseEfficiencyWarning, match=r"^xp.fft.fft has no sparse implementation: computed"):
        out = xs.fft.fft(xs.asarray([1.0, 0.0]))
    assert isinstance(out, xp.Array)
    np.testing.assert_array_equal(np.asarray(out), [1.0 + 0j, 1.0 + 0j])
    for name in xp.linalg.__all__:  # the standard's extension, and the solvers
        assert getattr(xs.linalg, name) is getattr(xp.linalg, name)
    assert callable(xs.linalg.spsolve) and callable(xs.linalg.lobpcg_standard)
    assert_matches(xs.asarray(np.asarray(xs.fft.fft(xp.asarray([1.0, 0.0])))), np.asarray([1.0 + 0j, 1.0 + 0j]))


def test_sparse_arrays_report_xp():
    A = xs.zeros((2, 2))
    assert A.__array_namespace__() is xp


# --- creation functions against xp's dense ones ---------------------------------------------


@pytest.mark.slow
@given(SHAPES, st.sampled_from([None, xp.float32, xp.int16, xp.bool, xp.complex64]))
def test_zeros_empty_ones(shape, dtype):
    for name, nse in (("zeros", 0), ("empty", 0), ("ones", math.prod(shape))):
        A = getattr(xs, name)(shape, dtype=dtype)
        assert isinstance(A, xs.BCOO) and A.nse == nse, name
        assert_matches(A, getattr(xp, "zeros" if name == "empty" else name)(shape, dtype=dtype))
        traced = jax.jit(lambda name=name: getattr(xs, name)(shape, dtype=dtype))()
        assert traced.nse == nse
        assert_matches(traced, getattr(xp, "zeros" if name == "empty" else name)(shape, dtype=dtype))


def test_huge_empty_arrays_allocate_nothing():
    A = xs.zeros((10**6, 10**6))
    assert A.nse == 0 and A.data.shape == (0,) and A.indices.shape == (0, 2)
    identity = xs.eye(10**6)
    assert identity.nse == 10**6 and identity.indices_sorted and identity.unique_indices


@given(SHAPES, st.sampled_from([0, 0.0, -0.0, 2.5, 3, True, False, 1j, float("nan")]))
def test_full(shape, fill):
    A = xs.full(shape, fill)
    expected = xp.full(shape, fill)
    stored = fill != 0 or fill != fill or math.copysign(1.0, fill.real if isinstance(fill, complex) else fill) < 0
    assert A.nse == (math.prod(shape) if stored else 0)
    assert_matches(A, expected)
    traced = jax.jit(lambda: xs.full(shape, fill))()
    assert_matches(traced, expected)
    if fill == fill and fill == 0:
        assert list(np.signbit(dense_of(A).real).ravel()) == list(np.signbit(np.asarray(expected).real).ravel())


@given(
    st.integers(0, 5), st.none() | st.integers(0, 5), st.integers(-6, 6), st.sampled_from([None, xp.int8, xp.float32])
)
def test_eye(n_rows, n_cols, k, dtype):
    A = xs.eye(n_rows, n_cols, k=k, dtype=dtype)
    expected = xp.eye(n_rows, n_cols, k=k, dtype=dtype)
    assert A.nse == int(np.count_nonzero(np.asarray(expected)))
    assert_matches(A, expected)
    assert_matches(jax.jit(lambda: xs.eye(n_rows, n_cols, k=k, dtype=dtype))(), expected)


@given(st.integers(-5, 5), st.integers(-5, 5), st.sampled_from([1, 2, -1, 0.5, -1.5]))
def test_arange(start, stop, step):
    expected = xp.arange(start, stop, step)
    A = xs.arange(start, stop, step)
    assert A.nse == int(np.count_nonzero(np.asarray(expected)))
    assert_matches(A, expected)
    traced = jax.jit(lambda: xs.arange(start, stop, step))()
    assert traced.nse == expected.shape[0]  # under a trace every element is stored
    assert_matches(traced, expected)


@pytest.mark.slow
@given(st.integers(-3, 3), st.integers(-3, 3), st.integers(0, 6), st.booleans())
def test_linspace(start, stop, num, endpoint):
    expected = xp.linspace(start, stop, num, endpoint=endpoint)
    assert_matches(xs.linspace(start, stop, num, endpoint=endpoint), expected)
    traced_expected = jax.jit(lambda: xp.linspace(start, stop, num, endpoint=endpoint))()
    assert_matches(jax.jit(lambda: xs.linspace(start, stop, num, endpoint=endpoint))(), traced_expected)


@st.composite
def mostly_zero(draw, min_dims=0, max_dims=3, dtypes=(np.float64, np.int32, np.bool_)):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=3))
    elements = st.just(True) if dtype.kind == "b" else st.sampled_from([1, -2, 5]).map(dtype.type)
    return draw(hnp.arrays(dtype, shape, elements=elements, fill=st.just(dtype.type(0))))


@pytest.mark.x64
@given(mostly_zero())
def test_asarray(x):
    A = xs.asarray(x)
    assert isinstance(A, xs.BCOO) and A.nse == int(np.count_nonzero(x))
    assert_matches(A, x)
    assert_matches(xs.asarray(x.tolist()), xp.asarray(x.tolist()))
    assert xs.asarray(A) is A and xs.asarray(A, copy=False) is A and xp.asarray(A) is A
    B = xs.asarray(A, copy=True)
    assert B is not A and B.jax is A.jax
    C = xs.asarray(A, dtype=xp.complex128)
    assert C.dtype == xp.complex128 and C.nse == A.nse
    assert_matches(C, x.astype(np.complex128))
    assert_matches(xp.asarray(A, dtype=xp.complex128), x.astype(np.complex128))
    assert_matches(xs.from_dlpack(x), x)


@pytest.mark.x64
def test_asarray_errors():
    A = xs.asarray([1.0, 0.0])
    with pytest.raises(
        ValueError, match="^xp.sparse.asarray: copy=False, but a sparse array made from dense input is always a copy$"
    ):
        xs.asarray([1.0], copy=False)
    with pytest.raises(
        ValueError, match=r"^xp.sparse.asarray: copy=False, but converting the array needs a copy \(a dtype change\)$"
    ):
        xs.asarray(A, dtype=xp.float32, copy=False)
    with pytest.raises(
        TypeError,
        match=r"^xp.sparse.asarray: cannot convert a complex array to float64 \(take xp.real or xp.imag first\)$",
    ):
        xs.asarray(xs.asarray([1j]), dtype=xp.float64)
    with pytest.raises(TypeError, match="^xp.sparse.asarray: obj is a Python float, which int32 cannot hold$"):
        xs.asarray(1.5, dtype=xp.int32)
    with pytest.raises(TypeError, match=r"^xp.asarray: cannot convert a complex array to float64"):
        xp.asarray(xs.asarray([1j]), dtype=xp.float64)  # routed: xp's name in the message
    message = (
        r"^xp.sparse.asarray: under a JAX transformation the number of nonzero elements of a dense input is not "
        r"known; use xp.sparse.fromdense\(x, nse=...\) with an upper bound"
    )
    with pytest.raises(TypeError, match=message):
        jax.jit(lambda v: xs.asarray(v))(xp.ones(2))
    with pytest.raises(
        ValueError,
        match="^xp.sparse.from_dlpack: copy=False, but a sparse array made from dense input is always a copy$",
    ):
        xs.from_dlpack(np.ones(2), copy=False)


def test_asarray_under_jit_takes_sparse_arrays():
    A = xs.asarray([0.0, 3.0])
    out = jax.jit(lambda a: xs.asarray(a, dtype=xp.float32))(A)
    assert isinstance(out, xs.BCOO) and out.dtype == xp.float32
    assert_matches(out, np.asarray([0.0, 3.0], np.float32))


@pytest.mark.slow
@pytest.mark.x64
@given(mostly_zero(), st.sampled_from([None, xp.float32, xp.int8]), st.booleans())
def test_like_functions(x, dtype, sparse_input):
    source = xs.asarray(x) if sparse_input else xp.asarray(x)
    fill = True if (dtype is None and x.dtype == np.bool_) else 3
    for name, args in (("zeros_like", ()), ("empty_like", ()), ("ones_like", ()), ("full_like", (fill,))):
        A = getattr(xs, name)(source, *args, dtype=dtype)
        expected = getattr(xp, "zeros_like" if name == "empty_like" else name)(xp.asarray(x), *args, dtype=dtype)
        assert_matches(A, expected)
        assert A.nse == (0 if "zeros" in name or "empty" in name else x.size)
        if sparse_input:  # xp's function of the same name comes here for a sparse argument
            assert_matches(getattr(xp, name)(source, *args, dtype=dtype), expected)
            traced = jax.jit(lambda s, name=name, args=args: getattr(xs, name)(s, *args, dtype=dtype))(source)
            assert_matches(traced, expected)


@pytest.mark.x64
def test_like_functions_keep_format_and_layout():
    B = xs.fromdense(xp.ones((2, 3, 4)), n_batch=1, format="bcsr")
    Z = xs.zeros_like(B)
    assert isinstance(Z, xs.BCSR) and Z.n_batch == 1 and Z.nse == 0
    ones = xs.ones_like(B, dtype=xp.int8)
    assert isinstance(ones, xs.BCSR) and ones.n_batch == 1 and ones.nse == 12
    assert_matches(ones, np.ones((2, 3, 4), np.int8))
    C = xs.fromdense(xp.ones((2, 3)), n_dense=1)
    F = xs.full_like(C, 0.5)
    assert isinstance(F, xs.BCOO) and F.n_dense == 1 and F.nse == 2
    assert_matches(F, np.full((2, 3), 0.5))


@pytest.mark.slow
@pytest.mark.x64
@given(mostly_zero(min_dims=2, max_dims=4), st.integers(-3, 3), st.data())
def test_tril_triu(x, k, data):
    n_batch = data.draw(st.integers(0, x.ndim - 1))
    A = xs.fromdense(xp.asarray(x), n_batch=n_batch)
    for name in ("tril", "triu"):
        expected = getattr(xp, name)(xp.asarray(x), k=k)
        out = getattr(xs, name)(A, k=k)
        assert isinstance(out, xs.BCOO) and out.nse == A.nse and out.n_batch == n_batch  # the pattern is kept
        assert_matches(out, expected)
        assert_matches(getattr(xp, name)(A, k=k), expected)
        assert_matches(jax.jit(lambda a, name=name: getattr(xs, name)(a, k=k))(A), expected)
        dense_input = getattr(xs, name)(xp.asarray(x), k=k)
        assert dense_input.nse == int(np.count_nonzero(np.asarray(expected)))
        assert_matches(dense_input, expected)
    if x.ndim == 2 and n_batch == 0:
        B = A.to_bcsr()
        assert isinstance(xs.tril(B, k=k), xs.BCSR)
        assert_matches(xs.tril(B, k=k), xp.tril(xp.asarray(x), k=k))


@pytest.mark.x64
def test_tril_with_dense_dimensions():
    x = np.arange(1.0, 13.0).reshape(3, 4)
    A = xs.fromdense(xp.asarray(x), n_dense=1)
    assert_matches(xs.tril(A, k=1), np.tril(x, 1))
    assert_matches(xs.triu(A, k=-1), np.triu(x, -1))


def test_tril_errors():
    with pytest.raises(ValueError, match=r"^xp.sparse.tril: x must have at least 2 dimensions, got shape \(3,\)$"):
        xs.tril(xs.zeros(3))
    with pytest.raises(TypeError, match="^xp.tril: k must be an integer, got float 1.5$"):
        xp.tril(xs.eye(3), k=1.5)
    with pytest.raises(TypeError, match="^xp.sparse.triu: x must be an array"):
        xs.triu([[1, 2], [3, 4]])


@pytest.mark.x64
@given(
    st.lists(mostly_zero(min_dims=1, max_dims=1, dtypes=(np.float64,)), min_size=0, max_size=3),
    st.sampled_from(["xy", "ij"]),
    st.data(),
)
def test_meshgrid(vectors, indexing, data):
    sparse_inputs = [data.draw(st.booleans()) for _ in vectors]
    arrays = [xs.asarray(v) if s else xp.asarray(v) for v, s in zip(vectors, sparse_inputs, strict=True)]
    out = xs.meshgrid(*arrays, indexing=indexing)
    expected = xp.meshgrid(*(xp.asarray(v) for v in vectors), indexing=indexing)
    assert len(out) == len(expected)
    for A, e in zip(out, expected, strict=True):
        assert_matches(A, e)
    if any(sparse_inputs):
        for A, e in zip(xp.meshgrid(*arrays, indexing=indexing), expected, strict=True):
            assert_matches(A, e)
        sparse_only = [a for a, s in zip(arrays, sparse_inputs, strict=True) if s]
        traced = jax.jit(lambda *a: xs.meshgrid(*a, indexing=indexing))(*sparse_only)
        for A, e in zip(traced, xp.meshgrid(*(a.todense() for a in sparse_only), indexing=indexing), strict=True):
            assert_matches(A, e)


@pytest.mark.x64
def test_meshgrid_errors():
    with pytest.raises(
        TypeError, match="^xp.sparse.meshgrid: arrays must all have the same dtype, got float64, int64$"
    ):
        xs.meshgrid(xs.asarray([1.0]), xs.asarray([1]))
    with pytest.raises(
        ValueError, match=r"^xp.sparse.meshgrid: arrays\[0\] must be 1-dimensional, got shape \(1, 1\)$"
    ):
        xs.meshgrid(xs.asarray([[1.0]]))


def test_device_arguments():
    device = jax.devices()[-1]
    for A in (xs.zeros(2, device=device), xs.eye(2, device=device), xs.ones(2, device=device),
              xs.asarray([1.0, 0.0], device=device), xs.zeros_like(xs.eye(2), device=device)):  # fmt: skip
        assert A.device == device
    assert xs.ones_like(xs.eye(2).to_device(device)).device == device


def test_creation_errors_name_the_sparse_function():
    with pytest.raises(ValueError, match=r"^xp.sparse.zeros: shape\[1\] must be non-negative, got -1$"):
        xs.zeros((2, -1))
    with pytest.raises(TypeError, match="^xp.sparse.full: fill_value is a Python float, which int8 cannot hold$"):
        xs.full(2, 1.5, dtype=xp.int8)
    with pytest.raises(ValueError, match="^xp.sparse.eye: n_rows must be non-negative, got -2$"):
        xs.eye(-2)
    with pytest.raises(ValueError, match="^xp.sparse.arange: step must not be zero$"):
        xs.arange(0, 2, 0)


@pytest.mark.slow
@pytest.mark.x64
def test_kernels_match_numpy_creation():
    """The jitted kernels (arrays on an accelerator) build what the NumPy paths (CPU) build."""

    def made():
        A = xs.fromdense(xp.asarray(np.arange(24.0).reshape(2, 3, 4) % 5), n_batch=1)
        return [
            xs.zeros((2, 3)), xs.zeros_like(A), xs.empty_like(A.to_bcsr()), xs.eye(4, 3, k=-1), xs.eye(0),
            xs.tril(A, k=1), xs.triu(A.to_bcsr(), k=-1), xs.tril(xs.fromdense(xp.ones((3, 3)), n_dense=1)),
            *xs.meshgrid(xs.asarray([0.0, 2.0, 3.0]), xs.asarray([1.0, 0.0]), xp.asarray([5.0, 0.0])),
        ]  # fmt: skip

    host = made()
    with (
        mock.patch.object(_buffers, "on_host", lambda value: None),
        mock.patch.object(creation, "_host_device", lambda device: False),
    ):
        kernel = made()
    for a, b in zip(host, kernel, strict=True):
        assert type(a) is type(b) and a.shape == b.shape and a.nse == b.nse and a.dtype == b.dtype
        for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
            assert u.dtype == v.dtype
            np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


def test_eye_with_a_diagonal_outside_the_matrix():
    for k in (2**31, -(2**40), 4, -3):
        A = xs.eye(3, 4, k=k)
        assert A.nse == 0
        assert_matches(A, xp.eye(3, 4, k=k))


def test_dense_arguments_that_arrive_sparse():
    """Arguments that are not results (repeat counts, index arrays) are read as their values,
    and from_dlpack takes a sparse array as asarray does."""
    A = xs.asarray([1.0, 0.0, 2.0])
    assert_matches(xp.repeat(A, xs.asarray([2, 0, 1])), xp.repeat(A.todense(), xp.asarray([2, 0, 1])))
    assert_matches(A[xs.asarray([2, 0])], xp.asarray([2.0, 1.0]))
    assert_matches(xs.from_dlpack(A), A.todense())


@pytest.mark.x64
@pytest.mark.parametrize("shapes", [((), (), (0,)), ((0,), (1,), ()), ((), (3,), (0, 3)), ((0,), (0,), (0,))])
def test_where_with_empty_operands(shapes):
    """Three sparse operands, some empty: the shapes broadcast as densely."""
    c, a, d = (np.ones(s) for s in shapes)
    out = xp.where(xs.asarray(c) != 0, xs.asarray(a * 2), xs.asarray(d))
    np.testing.assert_array_equal(np.asarray(out.todense()), np.where(c != 0, a * 2, d))
