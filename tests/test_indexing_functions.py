"""Indexing functions: take and take_along_axis against NumPy; negative indices, eager bounds
checks, clamping under jit, errors, vmap and grad. Runs with JAX's 64-bit mode on or off."""

import gc

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
from xp import _indexing_advanced, _indexing_functions

AVAILABLE = dt.available()
INDEX_DTYPES = [d for d in AVAILABLE if d in dt.INTEGER]
FLOAT = dt.default_float()


def arrays(min_dims=1, min_side=1):
    shapes = fixed_shapes.shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=5)
    return st.sampled_from(AVAILABLE).flatmap(lambda d: hnp.arrays(d, shapes))


def check(result, expected, dtype):
    assert isinstance(result, xp.Array)
    assert not result.jax.weak_type
    assert result.dtype == dtype, (result.dtype, dtype)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(result), expected)


def index_dtype_for(data, n):
    """An index dtype that can hold every index in ``[-n, n)`` (unsigned ones only ``[0, n)``)."""
    signed = data.draw(st.booleans())
    fits = [d for d in INDEX_DTYPES if (d.kind == "i") == signed and np.iinfo(d).max >= n]
    return data.draw(st.sampled_from(fits))


# --- take -----------------------------------------------------------------------------------


@given(x=arrays(), data=st.data())
def test_take_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1) | (st.none() if x.ndim == 1 else st.nothing()))
    position = 0 if axis is None else axis % x.ndim
    n = x.shape[position]
    dtype = index_dtype_for(data, n)
    low = -n if dtype.kind == "i" else 0
    indices = np.array(data.draw(st.lists(st.integers(low, n - 1), max_size=6)), dtype)
    result = xp.take(xp.asarray(x), xp.asarray(indices), axis=axis)
    check(result, np.take(x, indices.astype(np.int64), axis=position), x.dtype)


def test_take_negative_indices_and_narrow_index_dtypes():
    values = np.arange(300, dtype=np.int32)
    x = xp.asarray(values)
    check(xp.take(x, xp.asarray(np.array([-1, -300, 0, 5], np.int16))), [299, 0, 0, 5], dt.int32)
    # int8 index -1 into an axis of 300: the normalisation must not overflow int8
    check(xp.take(x, xp.asarray(np.array([-1, -128, 127], np.int8))), [299, 172, 127], dt.int32)
    check(xp.take(x, xp.asarray(np.array([255, 0], np.uint8))), [255, 0], dt.int32)
    m = xp.asarray(np.arange(6, dtype=FLOAT).reshape(2, 3))
    check(xp.take(m, xp.asarray([-1, 0, -1]), axis=1), np.array([[2, 0, 2], [5, 3, 5]], FLOAT), FLOAT)
    check(xp.take(m, xp.asarray([-2]), axis=0), np.array([[0, 1, 2]], FLOAT), FLOAT)


def test_take_empty_indices():
    x = xp.asarray(np.arange(6, dtype=FLOAT).reshape(2, 3))
    empty = xp.asarray(np.zeros(0, np.int32))
    check(xp.take(x, empty, axis=1), np.zeros((2, 0), FLOAT), FLOAT)
    check(xp.take(xp.zeros((2, 0)), empty, axis=1), np.zeros((2, 0), FLOAT), FLOAT)


def test_take_out_of_bounds_raises_eagerly():
    x = xp.asarray(np.arange(6, dtype=FLOAT).reshape(2, 3))
    with pytest.raises(
        IndexError, match=r"xp\.take: indices holds 3, which is out of bounds for axis 1 of x with size 3"
    ):
        xp.take(x, xp.asarray([0, 3]), axis=1)
    with pytest.raises(IndexError, match=r"xp\.take: indices holds -4, which is out of bounds for axis 1"):
        xp.take(x, xp.asarray([-4, 0]), axis=-1)
    with pytest.raises(
        IndexError, match=r"xp\.take: indices holds 2, which is out of bounds for axis 0 of x with size 2"
    ):
        xp.take(x, xp.asarray(np.array([2], np.uint8)), axis=0)
    if dt.x64_enabled():
        huge = np.array([2**64 - 1], np.uint64)
        with pytest.raises(IndexError, match=rf"xp\.take: indices holds {2**64 - 1}, which is out of bounds"):
            xp.take(x, xp.asarray(huge), axis=0)
    with pytest.raises(IndexError, match=r"xp\.take: cannot take elements from axis 1 of x, which has size 0"):
        xp.take(xp.zeros((2, 0)), xp.asarray([0]), axis=1)


def test_take_concrete_indices_are_checked_inside_jit():
    """Indices known at trace time (closed over) are still checked."""
    indices = xp.asarray([0, 5])
    with pytest.raises(IndexError, match=r"xp\.take: indices holds 5, which is out of bounds"):
        jax.jit(lambda a: xp.take(a, indices))(xp.zeros(3))
    x = xp.asarray(np.arange(3, dtype=np.int32))
    bad, good = xp.asarray([-4]), xp.asarray([-1])
    with pytest.raises(IndexError, match=r"xp\.take: indices holds -4, which is out of bounds"):
        jax.jit(lambda: xp.take(x, bad))()  # both concrete, inside a trace
    check(jax.jit(lambda: xp.take(x, good))(), [2], dt.int32)
    with pytest.raises(IndexError, match=r"xp\.take_along_axis: indices holds -4, which is out of bounds"):
        jax.jit(lambda a: xp.take_along_axis(a, bad))(x)


def test_take_clamps_under_jit():
    """Traced indices cannot be checked: out-of-bounds ones are clamped (documented)."""
    values = np.arange(5, dtype=np.int32) * 10
    x = xp.asarray(values)
    taken = jax.jit(lambda a, i: xp.take(a, i))(x, xp.asarray([-1, -5, 7, -9]))
    check(taken, [40, 0, 40, 0], dt.int32)
    if dt.x64_enabled():
        huge = xp.asarray(np.array([2**64 - 1, 2**63], np.uint64))
        check(jax.jit(lambda a, i: xp.take(a, i))(x, huge), [40, 40], dt.int32)
    huge32 = xp.asarray(np.array([2**32 - 1, 2**31], np.uint32))
    check(jax.jit(lambda a, i: xp.take(a, i))(x, huge32), [40, 40], dt.int32)
    with pytest.raises(IndexError, match=r"xp\.take: cannot take elements from axis 0 of x, which has size 0"):
        jax.jit(lambda a, i: xp.take(a, i))(xp.zeros(0), xp.asarray([0]))


def test_take_errors():
    x = xp.asarray(np.arange(6, dtype=FLOAT).reshape(2, 3))
    with pytest.raises(
        ValueError, match=r"xp\.take: axis is required when x has more than one dimension, got shape \(2, 3\)"
    ):
        xp.take(x, xp.asarray([0]))
    with pytest.raises(ValueError, match=r"xp\.take: x must have at least one dimension, got a 0-d array"):
        xp.take(xp.asarray(1.0), xp.asarray([0]))
    with pytest.raises(ValueError, match=r"xp\.take: indices must be 1-dimensional, got shape \(1, 1\)"):
        xp.take(x, xp.asarray([[0]]), axis=0)
    with pytest.raises(ValueError, match=r"xp\.take: indices must be 1-dimensional, got shape \(\)"):
        xp.take(x, 0, axis=0)
    with pytest.raises(TypeError, match=r"xp\.take: indices must have an integer dtype, got float"):
        xp.take(x, xp.asarray([0.0]), axis=0)
    with pytest.raises(TypeError, match=r"xp\.take: indices must have an integer dtype, got bool"):
        xp.take(x, xp.asarray([True, False]), axis=0)
    with pytest.raises(TypeError, match=r"xp\.take: indices must be an array, got list"):
        xp.take(x, [0], axis=0)
    with pytest.raises(IndexError, match=r"xp\.take: axis=2 is out of bounds for an array of 2 dimensions"):
        xp.take(x, xp.asarray([0]), axis=2)
    with pytest.raises(TypeError, match=r"xp\.take: axis must be an integer, got float"):
        xp.take(x, xp.asarray([0]), axis=1.0)


def test_take_vmap_and_grad():
    values = np.arange(12, dtype=FLOAT).reshape(3, 4)
    x = xp.asarray(values)
    rows = jax.vmap(lambda row, i: xp.take(row, i))(x, xp.asarray(np.array([[0, 1], [3, 3], [-1, 2]], np.int32)))
    check(rows, np.array([[0, 1], [7, 7], [11, 10]], FLOAT), FLOAT)
    same = jax.vmap(lambda row: xp.take(row, xp.asarray([-1, 0])))(x)
    check(same, values[:, [-1, 0]], FLOAT)
    grad = jax.grad(lambda a: xp.sum(xp.take(a, xp.asarray([0, 2, 2]))).jax)(jnp.asarray(values[0]))
    np.testing.assert_array_equal(grad, [1, 0, 2, 0])


@pytest.mark.cpu_only(
    reason="NumPy reads indices in CPU memory in place (xp._indexing_advanced._in_host_memory); indices on "
    "an accelerator take a kernel"
)
def test_eager_bounds_checks_on_cpu_read_the_indices_in_place(monkeypatch):
    """On CPU the eager bounds check runs no kernel (NumPy reads the indices where they are), so
    the gather after it is dispatched asynchronously; a repeated call traces nothing new."""

    def no_kernel(index):
        raise AssertionError("a kernel computed the bounds of indices in CPU memory")

    monkeypatch.setattr(_indexing_advanced, "_min_max", no_kernel)
    x = xp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    i = xp.asarray([2, -1])
    check(xp.take(x, i, axis=1), np.arange(12, dtype=np.int32).reshape(3, 4)[:, [2, -1]], np.int32)
    size = _indexing_functions._take._cache_size()
    xp.take(x, i, axis=1)
    assert _indexing_functions._take._cache_size() == size
    check(xp.take_along_axis(x, xp.asarray([[0], [3], [1]]), axis=1), np.array([[0], [7], [9]], np.int32), np.int32)
    check(x[i], np.arange(12, dtype=np.int32).reshape(3, 4)[[2, -1]], np.int32)
    with pytest.raises(IndexError, match=r"xp\.take: indices holds 4, which is out of bounds for axis 1"):
        xp.take(x, xp.asarray([4]), axis=1)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        x[xp.asarray([-4])]
    sorted_ = xp.asarray([3.0, 1.0, 2.0])
    check(
        xp.searchsorted(sorted_, 2.5, sorter=xp.asarray([1, 2, 0])), np.asarray(2, dt.default_int()), dt.default_int()
    )


@pytest.mark.slow
def test_the_last_indices_checked_are_not_read_again(monkeypatch):
    """index_range remembers the last index array it read (weakly): the same array again is not
    read; another array, or a new one after the remembered one is gone, is."""
    reads = []
    remember = _indexing_advanced._remember_range

    def counting(index, low, high):
        reads.append((low, high))
        remember(index, low, high)

    x = xp.asarray(np.arange(6, dtype=FLOAT))
    good, bad = xp.asarray([1, 5]), xp.asarray([0, 6])
    monkeypatch.setattr(_indexing_advanced, "_remember_range", counting)
    for _ in range(3):
        check(xp.take(x, good), np.array([1.0, 5.0], FLOAT), FLOAT)
    assert reads == [(1, 5)]
    with pytest.raises(IndexError, match=r"indices holds 6, which is out of bounds"):
        xp.take(x, bad)
    with pytest.raises(IndexError, match=r"indices holds 6, which is out of bounds"):
        xp.take(x, bad)  # (remembered: out of bounds still)
    check(xp.take(x, good), np.array([1.0, 5.0], FLOAT), FLOAT)
    del good, bad
    gc.collect()
    for values in ([0, 6], [7], [2]):  # new arrays, whatever ids they get
        index = xp.asarray(values)
        if max(values) < 6:
            check(xp.take(x, index), np.arange(6, dtype=FLOAT)[values], FLOAT)
        else:
            with pytest.raises(IndexError, match=rf"indices holds {max(values)}, which is out of bounds"):
                xp.take(x, index)
        del index
        gc.collect()


def test_the_last_indices_checked_are_checked_again_for_each_use():
    """in_bounds answers from the remembered range of the last index array (no dtype or shape
    reads): the same array against a shorter axis, or where a 1-d index is required, is still
    refused."""
    index, matrix_index = xp.asarray([0, 5]), xp.asarray([[0, 1], [2, 3]])
    long, short = xp.asarray(np.arange(6, dtype=FLOAT)), xp.asarray(np.arange(4, dtype=FLOAT))
    for _ in range(2):
        check(xp.take(long, index), np.array([0.0, 5.0], FLOAT), FLOAT)
        with pytest.raises(IndexError, match=r"indices holds 5, which is out of bounds"):
            xp.take(short, index)
        check(long[matrix_index], np.arange(6, dtype=FLOAT)[[[0, 1], [2, 3]]], FLOAT)  # remembered, 2-d
        with pytest.raises(ValueError, match=r"indices must be 1-dimensional"):
            xp.take(long, matrix_index)


INTEGER_DTYPES = [np.dtype(d) for d in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)] + (
    [np.dtype(np.int64), np.dtype(np.uint64)] if dt.x64_enabled() else []
)


@given(data=st.data(), in_host_memory=st.booleans())
def test_index_range_is_the_smallest_and_largest_index(data, in_host_memory):
    # both ways of reading them: NumPy in place (CPU), and the min/max kernel (other devices)
    dtype = data.draw(st.sampled_from(INTEGER_DTYPES))
    values = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=10)))
    index = xp.asarray(values).jax
    original = _indexing_advanced._in_host_memory
    _indexing_advanced._in_host_memory = lambda sharding: in_host_memory  # type: ignore[assignment]
    try:
        low, high = _indexing_advanced.index_range(index)
    finally:
        _indexing_advanced._in_host_memory = original
    assert (low, high) == (int(values.min()), int(values.max()))
    assert type(low) is int and type(high) is int


def _outcome(call):
    """What a call gives: its result (values, dtype, shape) or its error."""
    try:
        result = call()
    except (IndexError, ValueError) as e:
        return (type(e).__name__, str(e))
    return ("result", np.asarray(result).tobytes(), result.dtype, result.shape)  # (bytes: NaN equals NaN)


@given(x=arrays(), data=st.data())
def test_the_usual_eager_take_and_index_agree_with_the_general_path(x, data):
    """take(x, i), take_along_axis(x, i) and x[i] of xp arrays check concrete indices in one
    function (in_bounds) ahead of the general path: both paths give the same result, and indices
    out of bounds the same error (from the general path, which the check leaves them to)."""
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1) | (st.none() if x.ndim == 1 else st.nothing()))
    position = 0 if axis is None else axis % x.ndim
    n = x.shape[position]
    dtype = data.draw(st.sampled_from([d for d in INDEX_DTYPES if np.iinfo(d).max >= 2 * n + 1]))
    low = -2 * n - 1 if dtype.kind == "i" else 0
    indices = np.array(data.draw(st.lists(st.integers(low, 2 * n + 1), max_size=6)), dtype)
    X, index = xp.asarray(x), xp.asarray(indices)
    along = xp.asarray(np.expand_dims(indices, [a for a in range(x.ndim) if a != position]))  # the others broadcast
    calls = (
        lambda: xp.take(X, index, axis=axis),
        lambda: xp.take_along_axis(X, along, axis=position),
        lambda: X[index],
    )
    usual = [_outcome(call) for call in calls]
    general = _indexing_functions.in_bounds, _indexing_advanced.in_bounds
    _indexing_functions.in_bounds = _indexing_advanced.in_bounds = lambda index, n, ndim=None: False
    try:
        assert usual == [_outcome(call) for call in calls]
    finally:
        _indexing_functions.in_bounds, _indexing_advanced.in_bounds = general


def test_the_usual_eager_take_and_index_skip_the_general_checks(monkeypatch):
    """The usual eager calls (xp arrays, concrete indices in bounds) check in one function and
    dispatch one kernel: neither the key's parser nor take's general checks run."""

    def general(*args, **kwargs):
        raise AssertionError("the general path ran")

    x = xp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    i, row = xp.asarray([2, -1]), x[0]
    monkeypatch.setattr(_indexing_functions, "check_indices", general)
    monkeypatch.setattr(_indexing_functions.boundary, "array", general)
    monkeypatch.setattr(xp._indexing, "parse", general)
    check(xp.take(x, i, axis=1), np.arange(12, dtype=np.int32).reshape(3, 4)[:, [2, -1]], np.int32)
    check(xp.take(row, i), np.array([2, 3], np.int32), np.int32)
    check(x[i], np.arange(12, dtype=np.int32).reshape(3, 4)[[2, -1]], np.int32)
    check(xp.take_along_axis(x, xp.asarray([[0], [3], [-1]]), axis=1), np.array([[0], [7], [11]], np.int32), np.int32)
    with pytest.raises(AssertionError, match="the general path ran"):  # out of bounds: the general path reports it
        xp.take(x, xp.asarray([4]), axis=1)


# --- take_along_axis ------------------------------------------------------------------------


@given(x=arrays(), data=st.data())
def test_take_along_axis_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    position = axis % x.ndim
    n = x.shape[position]
    dtype = index_dtype_for(data, n)
    low = -n if dtype.kind == "i" else 0
    shape = list(x.shape)
    shape[position] = data.draw(st.integers(0, 2 * n))
    for i in range(x.ndim):  # other axes may be 1 and broadcast
        if i != position and data.draw(st.booleans()):
            shape[i] = 1
    indices = data.draw(hnp.arrays(dtype, tuple(shape), elements=st.integers(low, n - 1)))
    if data.draw(st.booleans()):
        x = x[tuple(slice(0, 1) if i != position else slice(None) for i in range(x.ndim))]  # x broadcasts instead
    result = xp.take_along_axis(xp.asarray(x), xp.asarray(indices), axis=axis)
    expected = np.take_along_axis(x, indices.astype(np.int64) % n, axis=position)
    check(result, expected, x.dtype)


def test_take_along_axis_values():
    values = np.array([[10, 30, 20], [60, 40, 50]], np.int32)
    x = xp.asarray(values)
    order = xp.asarray(np.argsort(values, axis=1).astype(np.int32))
    check(xp.take_along_axis(x, order, axis=1), np.sort(values, axis=1), dt.int32)
    check(xp.take_along_axis(x, xp.asarray([[-1], [0]])), [[20], [60]], dt.int32)  # axis=-1 by default
    check(xp.take_along_axis(x, xp.asarray([[1, 0, 1]]), axis=0), [[60, 30, 50]], dt.int32)
    check(xp.take_along_axis(x, xp.asarray([[0], [2]]), axis=1), [[10], [50]], dt.int32)
    check(xp.take_along_axis(x, xp.asarray(np.zeros((2, 0), np.int32)), axis=1), np.zeros((2, 0), np.int32), dt.int32)


def test_take_along_axis_errors():
    x = xp.asarray(np.arange(6, dtype=FLOAT).reshape(2, 3))
    with pytest.raises(
        IndexError, match=r"xp\.take_along_axis: indices holds 3, which is out of bounds for axis 1 of x with size 3"
    ):
        xp.take_along_axis(x, xp.asarray([[0], [3]]), axis=1)
    with pytest.raises(IndexError, match=r"xp\.take_along_axis: indices holds -3, which is out of bounds for axis 0"):
        xp.take_along_axis(x, xp.asarray([[-3, 0, 0]]), axis=0)
    with pytest.raises(
        ValueError, match=r"xp\.take_along_axis: indices must have as many dimensions as x \(2\), got shape \(3,\)"
    ):
        xp.take_along_axis(x, xp.asarray([0, 1, 2]), axis=1)
    with pytest.raises(
        ValueError, match=r"xp\.take_along_axis: indices of shape \(3, 1\) cannot be broadcast with x of shape \(2, 3\)"
    ):
        xp.take_along_axis(x, xp.asarray([[0], [1], [2]]), axis=1)
    with pytest.raises(TypeError, match=r"xp\.take_along_axis: indices must have an integer dtype, got float"):
        xp.take_along_axis(x, xp.asarray([[0.0]]), axis=1)
    with pytest.raises(IndexError, match=r"xp\.take_along_axis: axis=-1 is out of bounds for an array of 0 dimensions"):
        xp.take_along_axis(xp.asarray(1.0), xp.asarray(0))
    with pytest.raises(
        IndexError, match=r"xp\.take_along_axis: cannot take elements from axis 1 of x, which has size 0"
    ):
        xp.take_along_axis(xp.zeros((2, 0)), xp.asarray([[0], [0]]), axis=1)
    with pytest.raises(TypeError, match=r"take_along_axis\(\) takes 2 positional arguments but 3 were given"):
        xp.take_along_axis(x, xp.asarray([[0]]), 1)  # axis is keyword-only


def test_take_along_axis_under_transformations():
    values = np.array([[10, 30, 20], [60, 40, 50]], np.int32)
    x = xp.asarray(values)
    idx = xp.asarray(np.array([[2, -1], [9, -7]], np.int32))
    check(jax.jit(lambda a, i: xp.take_along_axis(a, i, axis=1))(x, idx), [[20, 20], [50, 60]], dt.int32)  # clamped
    with pytest.raises(IndexError, match=r"xp\.take_along_axis: indices holds -7, which is out of bounds"):
        xp.take_along_axis(x, idx, axis=1)
    rows = jax.vmap(lambda row, i: xp.take_along_axis(row, i, axis=0))(x, xp.asarray([[1], [0]]))
    check(rows, [[30], [60]], dt.int32)
    f = jnp.asarray(values.astype(FLOAT))
    grad = jax.grad(lambda a: xp.sum(xp.take_along_axis(a, xp.asarray([[0, 0], [2, 1]]), axis=1)).jax)(f)
    np.testing.assert_array_equal(grad, [[2, 0, 0], [0, 1, 1]])
