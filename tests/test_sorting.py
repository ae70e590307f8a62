"""Sorting functions: sort and argsort (stability, descending order, NaNs, signed zeros)."""

import fixed_shapes
import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
from xp import _dtypes as dt

REAL = [d for d in dt.available() if d in dt.REAL_NUMERIC]
INDEX = dt.default_int()


def array_of(dtype, shape, **kw):
    """hnp.arrays without subnormal floats, which XLA on CPU flushes to zero (NumPy does not)."""
    dtype = np.dtype(dtype)
    if "elements" not in kw and dtype.kind in "fc":
        kw["elements"] = hnp.from_dtype(dtype, allow_subnormal=False)
    return hnp.arrays(dtype, shape, **kw)


def arrays(dtypes, min_dims=1, **kw):
    shape = fixed_shapes.shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=6)
    return st.sampled_from(dtypes).flatmap(lambda d: array_of(d, shape, **kw))


def small_ints(dtype=np.int8):
    # few distinct values, so that ties (and stability) matter
    return array_of(dtype, fixed_shapes.shapes(min_dims=1, max_dims=2, max_side=8), elements=st.integers(0, 3))


def reference_argsort(x, axis, descending):
    """NumPy's stable argsort; descending keeps equal elements in their original order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - flipped, axis)


def check(result, expected, dtype):
    assert isinstance(result, xp.Array)
    assert result.shape == expected.shape
    assert result.dtype == dtype
    np.testing.assert_array_equal(np.asarray(result), expected)


@given(x=arrays(REAL), data=st.data())
def test_sort_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    descending = data.draw(st.booleans())
    result = xp.sort(xp.asarray(x), axis=axis, descending=descending)
    expected = np.sort(x, axis=axis)  # NaNs last
    if descending:
        expected = np.flip(np.sort(np.flip(x, axis), axis=axis), axis)  # NaNs first
    check(result, expected, x.dtype)


@pytest.mark.slow
@given(x=arrays(REAL), data=st.data())
def test_argsort_matches_numpy_stable(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    descending = data.draw(st.booleans())
    result = xp.argsort(xp.asarray(x), axis=axis, descending=descending)
    check(result, reference_argsort(x, axis, descending), INDEX)


@given(x=small_ints(), descending=st.booleans())
def test_argsort_is_stable_with_ties(x, descending):
    result = np.asarray(xp.argsort(xp.asarray(x), descending=descending))
    values = np.take_along_axis(x, result, axis=-1)
    steps = np.diff(values.astype(int), axis=-1)
    assert np.all(steps <= 0 if descending else steps >= 0)
    # among equal values, indices increase: the relative order of x is kept
    ties = steps == 0
    assert np.all(np.diff(result, axis=-1)[ties] > 0)


@given(x=small_ints(), descending=st.booleans())
def test_unstable_sort_still_sorts(x, descending):
    result = np.asarray(xp.argsort(xp.asarray(x), descending=descending, stable=False))
    np.testing.assert_array_equal(np.sort(result, axis=-1), np.broadcast_to(np.arange(x.shape[-1]), x.shape))
    values = np.take_along_axis(x, result, axis=-1)
    expected = np.sort(x, axis=-1)
    np.testing.assert_array_equal(values, np.flip(expected, -1) if descending else expected)
    check(xp.sort(xp.asarray(x), descending=descending, stable=False), values, x.dtype)


def test_nan_and_signed_zero_order():
    nan = float("nan")
    x = xp.asarray([nan, 0.0, -1.0, -0.0, nan, 2.0, float("-inf")])
    ascending = np.asarray(xp.sort(x))
    np.testing.assert_array_equal(ascending, [-np.inf, -1, 0, 0, 2, nan, nan])
    # -0.0 and 0.0 are equal: a stable sort keeps them in their order in x
    assert not np.signbit(ascending[2]) and np.signbit(ascending[3])
    descending = np.asarray(xp.sort(x, descending=True))
    np.testing.assert_array_equal(descending, [nan, nan, 2, 0, 0, -1, -np.inf])
    assert not np.signbit(descending[3]) and np.signbit(descending[4])
    check(xp.argsort(x), np.array([6, 2, 1, 3, 5, 0, 4]), INDEX)
    check(xp.argsort(x, descending=True), np.array([0, 4, 5, 1, 3, 2, 6]), INDEX)


def test_extreme_integers():
    for dtype in REAL:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            x = np.array([info.max, info.min, 0, info.max, info.min], dtype)
            check(xp.sort(xp.asarray(x), descending=True), np.sort(x)[::-1], dtype)
            check(xp.argsort(xp.asarray(x), descending=True), reference_argsort(x, 0, True), INDEX)


def test_transforms():
    x = xp.asarray([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    check(jax.jit(lambda a: xp.sort(a, axis=0, descending=True))(x), np.array([[3.0, 5, 4], [0, 1, 2]]), x.dtype)
    check(jax.jit(xp.argsort)(x), np.array([[1, 2, 0], [0, 2, 1]]), INDEX)
    check(jax.vmap(lambda a: xp.argsort(a, descending=True))(x), np.array([[0, 2, 1], [1, 2, 0]]), INDEX)
    check(jax.vmap(xp.sort, in_axes=1, out_axes=1)(x), np.array([[0.0, 1, 2], [3, 5, 4]]), x.dtype)


@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_errors(name):
    f = getattr(xp, name)
    with pytest.raises(IndexError, match=rf"xp\.{name}: axis=-1 is out of bounds for an array of 0 dimensions"):
        f(xp.asarray(1.0))
    with pytest.raises(ValueError, match=rf"xp\.{name}: axis=2 is out of bounds"):
        f(xp.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match=rf"xp\.{name}: axis must be an integer, got NoneType"):
        f(xp.ones(2), axis=None)
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a real-valued dtype, got complex"):
        f(xp.asarray([1j, 2j]))
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a real-valued dtype, got bool"):
        f(xp.asarray([True, False]))
    with pytest.raises(TypeError, match=rf"xp\.{name}: descending must be a bool, got str 'yes'"):
        f(xp.ones(2), descending="yes")
    with pytest.raises(TypeError, match=rf"xp\.{name}: stable must be a bool, got NoneType"):
        f(xp.ones(2), stable=None)
