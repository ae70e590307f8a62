"""Set functions: isin and the unique_* family (NaNs distinct, signed zeros one value)."""

import fixed_shapes
import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
from xp import _dtypes as dt
from xp import _set
from xp._errors import DataDependentShapeError

ALL = list(dt.available())
INDEX = dt.default_int()


def array_of(dtype, shape, **kw):
    """hnp.arrays without subnormal floats, which XLA on CPU flushes to zero (NumPy does not)."""
    dtype = np.dtype(dtype)
    if "elements" not in kw and dtype.kind in "fc":
        kw["elements"] = hnp.from_dtype(dtype, allow_subnormal=False)
    return hnp.arrays(dtype, shape, **kw)


def arrays(dtypes, max_side=6, **kw):
    shape = fixed_shapes.shapes(min_dims=0, max_dims=3, min_side=0, max_side=max_side)
    return st.sampled_from(dtypes).flatmap(lambda d: array_of(d, shape, **kw))


def repeats(dtypes):
    """Arrays with many repeated values (drawn from a small pool, NaNs and signed zeros included)."""

    def build(dtype):
        pool = array_of(dtype, fixed_shapes.sides(1, 4))
        return pool.flatmap(lambda p: array_of(dtype, fixed_shapes.shapes(min_dims=0, max_dims=3, max_side=6),
                                                 elements=st.sampled_from(list(p))))  # fmt: skip

    return st.sampled_from(dtypes).flatmap(build)


def is_nan(a):
    return np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)


def check_dtype(result, dtype, shape=None):
    assert isinstance(result, xp.Array)
    assert result.dtype == dtype
    if shape is not None:
        assert result.shape == shape


def check_unique(x):
    """Every unique_* function on x, against NumPy and the standard's properties."""
    flat = x.reshape(-1)
    nan = is_nan(flat)
    result = xp.unique_all(xp.asarray(x))
    assert type(result).__name__ == "UniqueAllResult"
    assert result._fields == ("values", "indices", "inverse_indices", "counts")
    values, indices, inverse, counts = (np.asarray(r) for r in result)
    n = values.shape[0]
    check_dtype(result.values, x.dtype, (n,))
    check_dtype(result.indices, INDEX, (n,))
    check_dtype(result.inverse_indices, INDEX, x.shape)
    check_dtype(result.counts, INDEX, (n,))
    # the non-NaN values are NumPy's, in ascending order; each NaN is its own value, last
    expected = np.unique(flat[~nan])
    n_nan = int(nan.sum())
    assert n == len(expected) + n_nan
    np.testing.assert_array_equal(values[: len(expected)], expected)
    assert is_nan(values[len(expected) :]).all()
    # indices are first occurrences; counts add up; the inverse rebuilds x (NaNs as NaNs)
    np.testing.assert_array_equal(flat[indices], values)
    for k, v in enumerate(values[: len(expected)]):
        assert indices[k] == np.flatnonzero(flat == v)[0]
        assert counts[k] == np.count_nonzero(flat == v)
    assert (counts[len(expected) :] == 1).all()
    assert sorted(indices[len(expected) :].tolist()) == np.flatnonzero(nan).tolist()
    assert counts.sum() == flat.size
    np.testing.assert_array_equal(values[inverse], x)
    if n_nan:
        assert len(set(inverse.reshape(-1)[nan].tolist())) == n_nan  # each NaN maps to its own value
    # the other three agree with unique_all
    np.testing.assert_array_equal(np.asarray(xp.unique_values(xp.asarray(x))), values)
    check_dtype(xp.unique_values(xp.asarray(x)), x.dtype, (n,))
    uc = xp.unique_counts(xp.asarray(x))
    assert uc._fields == ("values", "counts")
    np.testing.assert_array_equal(np.asarray(uc.values), values)
    np.testing.assert_array_equal(np.asarray(uc.counts), counts)
    check_dtype(uc.counts, INDEX)
    ui = xp.unique_inverse(xp.asarray(x))
    assert ui._fields == ("values", "inverse_indices")
    np.testing.assert_array_equal(np.asarray(ui.values), values)
    np.testing.assert_array_equal(np.asarray(ui.inverse_indices), inverse)
    check_dtype(ui.inverse_indices, INDEX, x.shape)


@pytest.mark.slow
@given(x=arrays(ALL))
def test_unique_any_arrays(x):
    check_unique(x)


# slow: test_unique_any_arrays and the examples below run the same checks in the dev loop
@pytest.mark.slow
@given(x=repeats(ALL))
def test_unique_with_repeats(x):
    check_unique(x)


def test_unique_nan_and_signed_zero():
    nan = float("nan")
    x = xp.asarray([[nan, 0.0, -0.0], [1.0, nan, 0.0]])
    values, indices, inverse, counts = xp.unique_all(x)
    np.testing.assert_array_equal(np.asarray(values), [0.0, 1.0, nan, nan])
    assert not np.signbit(np.asarray(values)[0])  # the first of the signed zeros in x
    np.testing.assert_array_equal(np.asarray(indices), [1, 3, 0, 4])
    np.testing.assert_array_equal(np.asarray(counts), [3, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(inverse), [[2, 0, 0], [1, 3, 0]])
    assert np.signbit(np.asarray(xp.unique_values(xp.asarray([-0.0, 0.0])))).tolist() == [True]
    c = xp.unique_counts(xp.asarray([complex(nan, 0), 1j, complex(0, nan), 1j]))
    assert c.values.shape == (3,) and np.asarray(c.counts).tolist() == [2, 1, 1]


def test_unique_empty_and_zero_dim():
    empty = xp.unique_all(xp.zeros((0, 3), dtype=xp.int16))
    check_dtype(empty.values, dt.int16, (0,))
    check_dtype(empty.indices, INDEX, (0,))
    check_dtype(empty.inverse_indices, INDEX, (0, 3))
    check_dtype(empty.counts, INDEX, (0,))
    scalar = xp.unique_inverse(xp.asarray(7))
    assert np.asarray(scalar.values).tolist() == [7]
    check_dtype(scalar.inverse_indices, INDEX, ())


def test_unique_under_a_trace_raises():
    for name in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
        with pytest.raises(DataDependentShapeError, match=rf"xp\.{name}: .*cannot be known while tracing"):
            jax.jit(getattr(xp, name))(xp.asarray([1, 2, 2]))
        with pytest.raises(TypeError, match=r"cannot be known while tracing"):
            jax.vmap(getattr(xp, name))(xp.asarray([[1, 2, 2]]))


def test_unique_compiles_once_per_shape():
    xp.unique_all(xp.asarray(np.zeros(32, np.int32)))
    before = _set._unique_kernel._cache_size()
    for k in range(1, 8):
        result = xp.unique_all(xp.asarray(np.arange(32, dtype=np.int32) % k))
        assert result.values.shape == (k,)
    assert _set._unique_kernel._cache_size() == before


def test_unique_keeps_the_device():
    x = xp.asarray([3, 1, 3])
    result = xp.unique_all(x)
    assert all(r.device == x.device for r in result)


# --- isin -----------------------------------------------------------------------------------


@given(
    dtypes=st.tuples(st.sampled_from(ALL), st.sampled_from(ALL)).filter(
        lambda p: p in dt.STANDARD_PAIRS and dt.is_available(dt.PROMOTION_TABLE[p])
    ),
    data=st.data(),
    invert=st.booleans(),
)
def test_isin_matches_numpy(dtypes, data, invert):
    # values from a small pool, so that matches are common; the pool holds NaN and -0.0 for floats
    pool = data.draw(array_of(dtypes[0], fixed_shapes.sides(1, 4)), label="pool")
    x1 = data.draw(array_of(dtypes[0], fixed_shapes.shapes(min_dims=0, max_dims=2, max_side=5),
                              elements=st.sampled_from(list(pool))), label="x1")  # fmt: skip
    x2 = data.draw(array_of(dtypes[1], fixed_shapes.shapes(min_dims=0, max_dims=2, max_side=5)), label="x2")
    if np.can_cast(dtypes[0], dtypes[1]):
        x2 = np.concatenate([x2.reshape(-1), pool.astype(dtypes[1])[:1]])  # one certain match
    result = xp.isin(xp.asarray(x1), xp.asarray(x2), invert=invert)
    dtype = dt.promote(dtypes[0], dtypes[1])
    expected = np.isin(x1.astype(dtype), x2.astype(dtype), invert=invert)
    check_dtype(result, dt.bool, x1.shape)
    np.testing.assert_array_equal(np.asarray(result), expected)


@pytest.mark.slow
@pytest.mark.parametrize("sizes", [(5, 3), (50, 40), (3000, 100)])  # compare-all and binary-search paths
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.complex64, np.bool_])
def test_isin_both_methods(sizes, dtype):
    rng = np.random.default_rng(0)
    x1 = rng.integers(0, 6, sizes[0]).astype(dtype)
    x2 = rng.integers(2, 8, sizes[1]).astype(dtype)
    if dtype in (np.float32, np.complex64):
        x1[:3] = [np.nan, -0.0, 0.0]
        x2[:2] = [np.nan, 0.0]
    for invert in (False, True):
        result = xp.isin(xp.asarray(x1), xp.asarray(x2), invert=invert)
        np.testing.assert_array_equal(np.asarray(result), np.isin(x1, x2, invert=invert))
    if dtype == np.float32:
        assert not bool(xp.isin(xp.asarray(x1), xp.asarray(x2))[0])  # NaN is in nothing
        assert bool(xp.isin(xp.asarray(x1), xp.asarray(x2))[1])  # -0.0 == 0.0


def test_isin_scalars():
    x = xp.asarray([1, 2, 3], dtype=xp.int8)
    check_dtype(xp.isin(2, x), dt.bool, ())
    assert bool(xp.isin(2, x)) and not bool(xp.isin(5, x))
    assert bool(xp.isin(5, x, invert=True))
    np.testing.assert_array_equal(np.asarray(xp.isin(x, 3)), [False, False, True])
    np.testing.assert_array_equal(np.asarray(xp.isin(xp.asarray([1.5, 2.0]), 2)), [False, True])
    assert not bool(xp.isin(2, xp.asarray([], dtype=xp.int32)))
    with pytest.raises(TypeError, match=r"xp\.isin: at least one of x1 and x2 must be an array, got int 1 and int 2"):
        xp.isin(1, 2)
    with pytest.raises(OverflowError, match=r"xp\.isin: Python int 1000 in x1 is out of bounds for int8"):
        xp.isin(1000, x)
    with pytest.raises(TypeError, match=r"xp\.isin: invert must be a bool, got int 1"):
        xp.isin(x, x, invert=1)
    if dt.x64_enabled():
        with pytest.raises(TypeError, match=r"xp\.isin: x1 and x2: uint64 and int64 have no common dtype"):
            xp.isin(xp.asarray([1], dtype=xp.uint64), xp.asarray([1], dtype=xp.int64))


def test_isin_transforms():
    x1 = xp.asarray([[1, 2], [3, 4]])
    x2 = xp.asarray([2, 3, 9])
    expected = np.array([[False, True], [True, False]])
    np.testing.assert_array_equal(np.asarray(jax.jit(xp.isin)(x1, x2)), expected)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: xp.isin(a, 4, invert=True))(x1)), [[1, 1], [1, 0]])
    np.testing.assert_array_equal(np.asarray(jax.vmap(xp.isin, in_axes=(0, None))(x1, x2)), expected)
    rows = np.arange(600, dtype=np.int32).reshape(3, 200) * 3
    big = np.arange(0, 800, 2, dtype=np.int32)  # 200 x 400 pairs per row: the binary-search path, under vmap
    mapped = jax.vmap(lambda a: xp.isin(a, xp.asarray(big)))(xp.asarray(rows))
    np.testing.assert_array_equal(np.asarray(mapped), np.isin(rows, big))


@pytest.mark.skipif(dt.x64_enabled(), reason="needs JAX's 64-bit mode off")
def test_isin_promotion_to_an_unavailable_dtype_is_an_error():
    with pytest.raises(TypeError, match=r"xp\.isin: x1 and x2: uint32 and int16 promote to int64: int64 needs"):
        xp.isin(xp.asarray([1], dtype=xp.uint32), xp.asarray([1], dtype=xp.int16))
