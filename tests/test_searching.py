"""Searching functions: argmax, argmin, count_nonzero, nonzero, searchsorted, where."""

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
from xp._errors import DataDependentShapeError

REAL = [d for d in dt.available() if d in dt.REAL_NUMERIC]
ALL = list(dt.available())
FLOATING = [d for d in dt.available() if np.dtype(d).kind == "f"]
INDEX = dt.default_int()


def array_of(dtype, shape, **kw):
    """hnp.arrays without subnormal floats, which XLA on CPU flushes to zero (NumPy does not)."""
    dtype = np.dtype(dtype)
    if "elements" not in kw and dtype.kind in "fc":
        kw["elements"] = hnp.from_dtype(dtype, allow_subnormal=False)
    return hnp.arrays(dtype, shape, **kw)


def arrays(dtypes, shape=None, min_dims=0, min_side=0, **kw):
    shape = (
        shape
        if shape is not None
        else fixed_shapes.shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=5)
    )
    return st.sampled_from(dtypes).flatmap(lambda d: array_of(d, shape, **kw))


def check(result, expected, dtype=None):
    assert isinstance(result, xp.Array)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == (dtype if dtype is not None else expected.dtype)
    np.testing.assert_array_equal(np.asarray(result), expected)


# --- argmax, argmin -------------------------------------------------------------------------


def check_arg_reduce(name, x, data):
    """``xp.argmax`` / ``argmin`` of ``x`` along a drawn axis (or none), keepdims drawn, as NumPy's."""
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none())
    keepdims = data.draw(st.booleans())
    result = getattr(xp, name)(xp.asarray(x), axis=axis, keepdims=keepdims)
    check(result, getattr(np, name)(x, axis=axis, keepdims=keepdims), INDEX)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(x=arrays(REAL, min_side=1), data=st.data())
def test_arg_reduce_matches_numpy(name, x, data):
    check_arg_reduce(name, x, data)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(x=arrays(FLOATING, min_side=1, elements=st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1.0, -1.0])),
       data=st.data())  # fmt: skip
def test_arg_reduce_first_nan_and_first_tie_like_numpy(name, x, data):
    # several NaNs and ties in each line: the first of them, whatever order XLA reduces in (a TPU's
    # reduction meets them in another order than the CPU's)
    check_arg_reduce(name, x, data)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("size", [1000, 100_003])
def test_arg_reduce_first_nan_of_a_long_array(name, size):
    # long enough for XLA to reduce in vectorized chunks rather than in order
    x = np.random.default_rng(size).standard_normal(size).astype(np.float32)
    x[[size // 2, size // 3, size - 1, 7]] = np.nan
    x[[size // 5, size // 4]] = -np.inf if name == "argmin" else np.inf
    assert int(getattr(xp, name)(xp.asarray(x))) == 7
    x[7] = x[size // 3] = x[size // 2] = x[size - 1] = 0.5
    assert int(getattr(xp, name)(xp.asarray(x))) == size // 5


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduce_nan_and_ties(name):
    x = xp.asarray([1.0, 3.0, float("nan"), 3.0, float("nan"), -1.0])
    assert int(getattr(xp, name)(x)) == 2  # the first NaN, as in NumPy
    assert int(xp.argmax(xp.asarray([1, 5, 5, 0]))) == 1
    assert int(xp.argmin(xp.asarray([[4, 0], [0, 4]]))) == 1


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduce_errors(name):
    f = getattr(xp, name)
    with pytest.raises(ValueError, match=rf"xp\.{name}: x is empty"):
        f(xp.zeros((0, 3)))
    with pytest.raises(ValueError, match=rf"xp\.{name}: axis 0 of x has size 0"):
        f(xp.zeros((0, 3)), axis=0)
    assert f(xp.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a real-valued dtype, got complex"):
        f(xp.asarray([1j]))
    with pytest.raises(TypeError, match=r"real-valued dtype, got bool"):
        f(xp.asarray([True]))
    with pytest.raises(IndexError, match=rf"xp\.{name}: axis=2 is out of bounds for an array of 2 dimensions"):
        f(xp.zeros((2, 2)), axis=2)
    with pytest.raises(TypeError, match=rf"xp\.{name}: keepdims must be a bool, got int 1"):
        f(xp.zeros(2), keepdims=1)


def test_arg_reduce_zero_dim_and_transforms():
    check(xp.argmax(xp.asarray(3.0)), np.int64(0), INDEX)
    check(xp.argmax(xp.ones((2, 3)), keepdims=True), np.zeros((1, 1), int), INDEX)
    x = np.array([[1.0, 9.0, 2.0], [7.0, 0.0, 8.0]], np.float32)
    jitted = jax.jit(lambda a: xp.argmax(a, axis=1))(xp.asarray(x))
    check(jitted, [1, 2], INDEX)
    mapped = jax.vmap(lambda a: xp.argmin(a))(xp.asarray(x))
    check(mapped, [0, 1], INDEX)


# --- count_nonzero --------------------------------------------------------------------------


@given(x=arrays(ALL), data=st.data())
def test_count_nonzero_matches_numpy(x, data):
    axis = data.draw(st.none() | st.lists(st.integers(0, x.ndim - 1), unique=True).map(tuple) if x.ndim else st.none())
    if axis is not None and len(axis) == 1 and data.draw(st.booleans()):
        axis = axis[0] - x.ndim  # a single negative axis
    keepdims = data.draw(st.booleans())
    result = xp.count_nonzero(xp.asarray(x), axis=axis, keepdims=keepdims)
    check(result, np.count_nonzero(x, axis=axis, keepdims=keepdims), INDEX)


def test_count_nonzero_complex_bool_and_transforms():
    check(xp.count_nonzero(xp.asarray([0j, 1j, 1 + 0j, 0j])), np.int64(2), INDEX)
    check(xp.count_nonzero(xp.asarray([-0.0, float("nan"), 0.0])), np.int64(1), INDEX)
    check(xp.count_nonzero(xp.asarray([[True, False], [True, True]]), axis=0), [2, 1], INDEX)
    x = xp.asarray([[1, 0, 2], [0, 0, 3]])
    check(jax.jit(lambda a: xp.count_nonzero(a, axis=-1))(x), [2, 1], INDEX)
    check(jax.vmap(xp.count_nonzero)(x), [2, 1], INDEX)
    with pytest.raises(ValueError, match=r"xp\.count_nonzero: axis has repeated axes"):
        xp.count_nonzero(x, axis=(0, -2))


# --- nonzero --------------------------------------------------------------------------------


@given(x=arrays(ALL, min_dims=1))
def test_nonzero_matches_numpy(x):
    result = xp.nonzero(xp.asarray(x))
    expected = np.nonzero(x)
    assert isinstance(result, tuple) and len(result) == x.ndim
    for r, e in zip(result, expected, strict=True):
        check(r, e, INDEX)


def test_nonzero_values():
    x = xp.asarray([[0.0, -0.0, 2.0], [float("nan"), 0.0, 1.0]])
    rows, cols = xp.nonzero(x)
    check(rows, [0, 1, 1], INDEX)
    check(cols, [2, 0, 2], INDEX)
    (only,) = xp.nonzero(xp.asarray([0j, 1j, 0j, 2 + 0j]))
    check(only, [1, 3], INDEX)
    (none,) = xp.nonzero(xp.zeros(4, dtype=xp.int8))
    check(none, np.zeros(0, int), INDEX)
    assert rows.device == x.device


def test_nonzero_errors():
    with pytest.raises(ValueError, match=r"xp\.nonzero: x must have at least one dimension, got a 0-d array"):
        xp.nonzero(xp.asarray(1))
    with pytest.raises(DataDependentShapeError, match=r"xp\.nonzero: .*cannot be known while tracing.*xp\.where"):
        jax.jit(xp.nonzero)(xp.asarray([1, 0]))
    with pytest.raises(TypeError, match=r"cannot be known while tracing"):  # a TypeError, like JAX's
        jax.vmap(xp.nonzero)(xp.asarray([[1, 0]]))


def test_nonzero_does_not_recompile_per_count():
    from xp import _searching

    x = np.zeros(64, np.float32)
    xp.nonzero(xp.asarray(x))
    before = _searching._nonzero_mask._cache_size()
    for k in range(1, 6):
        x[:k] = 1.0
        (indices,) = xp.nonzero(xp.asarray(x))
        assert indices.shape == (k,)
    assert _searching._nonzero_mask._cache_size() == before


# --- searchsorted ---------------------------------------------------------------------------


@given(
    data=st.data(),
    dtype=st.sampled_from(REAL),
    side=st.sampled_from(["left", "right"]),
)
def test_searchsorted_matches_numpy(data, dtype, side):
    x1 = np.sort(data.draw(array_of(dtype, fixed_shapes.sides(0, 8)), label="x1"))
    x2 = data.draw(array_of(dtype, fixed_shapes.shapes(min_dims=0, max_dims=2, max_side=4)), label="x2")
    result = xp.searchsorted(xp.asarray(x1), xp.asarray(x2), side=side)
    check(result, np.searchsorted(x1, x2, side=side), INDEX)


@given(data=st.data(), side=st.sampled_from(["left", "right"]))
def test_searchsorted_with_sorter(data, side):
    x1 = data.draw(
        array_of(np.float32, fixed_shapes.sides(1, 8), elements=st.floats(-5, 5, width=32, allow_subnormal=False)),
        label="x1",
    )
    x2 = data.draw(
        array_of(np.float32, fixed_shapes.sides(0, 5), elements=st.floats(-6, 6, width=32, allow_subnormal=False)),
        label="x2",
    )
    sorter = np.argsort(x1, kind="stable").astype(INDEX)
    result = xp.searchsorted(xp.asarray(x1), xp.asarray(x2), side=side, sorter=xp.asarray(sorter))
    check(result, np.searchsorted(x1, x2, side=side, sorter=sorter), INDEX)


def test_searchsorted_nan_and_signed_zero_agree_with_sort():
    x1 = xp.sort(xp.asarray([float("nan"), 1.0, 0.0, -0.0, -1.0, float("nan")]))
    x2 = xp.asarray([-0.0, 0.0, float("nan"), float("inf")])
    check(xp.searchsorted(x1, x2), [1, 1, 4, 4], INDEX)
    check(xp.searchsorted(x1, x2, side="right"), [3, 3, 6, 4], INDEX)


def test_searchsorted_scalars_and_promotion():
    x1 = xp.asarray([1, 3, 5], dtype=xp.int8)
    check(xp.searchsorted(x1, 3), np.int64(1), INDEX)
    check(xp.searchsorted(x1, 3, side="right"), np.int64(2), INDEX)
    check(xp.searchsorted(x1, 2.5), np.int64(1), INDEX)  # a float scalar: compared as a float
    check(xp.searchsorted(xp.asarray([1.0, 2.0]), 2), np.int64(1), INDEX)
    check(xp.searchsorted(x1, xp.asarray([4], dtype=xp.int16)), [2], INDEX)
    check(xp.searchsorted(xp.asarray([], dtype=xp.float32), xp.asarray([1.0, 2.0])), [0, 0], INDEX)
    with pytest.raises(OverflowError, match=r"xp\.searchsorted: Python int 1000 in x2 is out of bounds for int8"):
        xp.searchsorted(x1, 1000)


def test_searchsorted_errors():
    x1 = xp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"xp\.searchsorted: x1 must be 1-dimensional, got shape \(1, 3\)"):
        xp.searchsorted(xp.asarray([[1.0, 2.0, 3.0]]), 1.0)
    with pytest.raises(ValueError, match=r"xp\.searchsorted: side must be one of 'left', 'right', got 'middle'"):
        xp.searchsorted(x1, 1.0, side="middle")
    with pytest.raises(TypeError, match=r"xp\.searchsorted: x2 must have a real-valued dtype, got complex"):
        xp.searchsorted(x1, xp.asarray([1j]))
    with pytest.raises(TypeError, match=r"xp\.searchsorted: x1 must have a real-valued dtype, got bool"):
        xp.searchsorted(xp.asarray([False, True]), xp.asarray([True]))
    with pytest.raises(TypeError, match=r"xp\.searchsorted: sorter must have an integer dtype, got float"):
        xp.searchsorted(x1, 1.0, sorter=x1)
    with pytest.raises(ValueError, match=r"xp\.searchsorted: sorter must have the shape of x1 \(3,\), got \(2,\)"):
        xp.searchsorted(x1, 1.0, sorter=xp.asarray([0, 1]))
    with pytest.raises(IndexError, match=r"xp\.searchsorted: sorter holds index 3, out of range for x1 of length 3"):
        xp.searchsorted(x1, 1.0, sorter=xp.asarray([0, 1, 3]))
    with pytest.raises(IndexError, match=r"sorter holds index -1"):
        xp.searchsorted(x1, 1.0, sorter=xp.asarray([0, -1, 2]))
    if dt.x64_enabled():
        with pytest.raises(TypeError, match=r"xp\.searchsorted: x1 and x2: uint64 and int64 have no common dtype"):
            xp.searchsorted(xp.asarray([1], dtype=xp.uint64), xp.asarray([1], dtype=xp.int64))


def test_searchsorted_transforms():
    x1 = xp.asarray([0.0, 1.0, 2.0, 3.0])
    x2 = xp.asarray([[0.5, 2.5], [3.5, -1.0]])
    check(jax.jit(lambda a, v: xp.searchsorted(a, v, side="right"))(x1, x2), [[1, 3], [4, 0]], INDEX)
    check(jax.jit(lambda a: xp.searchsorted(a, 1.5))(x1), np.int64(2), INDEX)
    check(jax.vmap(lambda v: xp.searchsorted(x1, v))(x2), [[1, 3], [4, 0]], INDEX)
    sorter = xp.asarray([3, 2, 1, 0])
    reversed_x1 = xp.asarray([3.0, 2.0, 1.0, 0.0])
    check(jax.jit(lambda s: xp.searchsorted(reversed_x1, x2, sorter=s))(sorter), [[1, 3], [4, 0]], INDEX)


# --- where ----------------------------------------------------------------------------------


@given(
    data=st.data(),
    shapes=fixed_shapes.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
    dtypes=st.tuples(st.sampled_from(ALL), st.sampled_from(ALL)).filter(
        lambda p: p in dt.STANDARD_PAIRS and dt.is_available(dt.PROMOTION_TABLE[p])
    ),
)
def test_where_matches_numpy(data, shapes, dtypes):
    cond = data.draw(array_of(np.bool_, shapes.input_shapes[0]), label="condition")
    x1 = data.draw(array_of(dtypes[0], shapes.input_shapes[1]), label="x1")
    x2 = data.draw(array_of(dtypes[1], shapes.input_shapes[2]), label="x2")
    result = xp.where(xp.asarray(cond), xp.asarray(x1), xp.asarray(x2))
    dtype = dt.promote(dtypes[0], dtypes[1])
    check(result, np.where(cond, x1.astype(dtype), x2.astype(dtype)), dtype)


def test_where_scalars():
    cond = xp.asarray([True, False, True])
    f32 = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32)
    i8 = xp.asarray([1, 2, 3], dtype=xp.int8)
    check(xp.where(cond, f32, 0), np.array([1, 0, 3], np.float32))
    check(xp.where(cond, 0.5, f32), np.array([0.5, 2, 0.5], np.float32))
    check(xp.where(cond, i8, -1), np.array([1, -1, 3], np.int8))
    check(xp.where(cond, True, xp.asarray([False, False, False])), np.array([True, False, True]))
    # a scalar of a higher kind takes the default dtype of its kind, then promotes (documented choice)
    check(xp.where(cond, i8, 0.5), np.array([1, 0.5, 3], dt.default_float()))
    check(xp.where(cond, f32, 1j), np.array([1, 1j, 3], np.complex64))
    with pytest.raises(OverflowError, match=r"xp\.where: Python int 300 in x2 is out of bounds for int8"):
        xp.where(cond, i8, 300)
    with pytest.raises(TypeError, match=r"xp\.where: at least one of x1 and x2 must be an array, got int 1 and int 2"):
        xp.where(cond, 1, 2)


def test_where_errors():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match=r"xp\.where: condition must have a boolean dtype, got int"):
        xp.where(xp.asarray([1, 0]), x, x)
    with pytest.raises(ValueError, match=r"xp\.where: condition, x1 and x2 cannot be broadcast together"):
        xp.where(xp.asarray([True, False, True]), x, x)
    with pytest.raises(TypeError, match=r"xp\.where: x1 must be an array or a Python scalar, got list"):
        xp.where(xp.asarray([True, False]), [1, 2], x)
    if dt.x64_enabled():
        with pytest.raises(TypeError, match=r"xp\.where: x1 and x2: uint64 and int64 have no common dtype"):
            xp.where(xp.asarray(True), xp.asarray(1, dtype=xp.uint64), xp.asarray(1, dtype=xp.int64))


def test_where_transforms():
    cond = xp.asarray([[True, False], [False, True]])
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=xp.float32)
    expected = np.array([[1.0, -1.0], [-1.0, 4.0]], np.float32)
    check(jax.jit(lambda c, a: xp.where(c, a, -1))(cond, x), expected)
    check(jax.jit(lambda c, a: xp.where(c, a, -1.0))(cond, x), expected)
    check(jax.vmap(lambda c, a: xp.where(c, a, -1))(cond, x), expected)
    # the same jaxpr as jax.numpy: no weak types leak, the scalar is a literal of x's dtype
    out = jax.jit(lambda c, a: xp.where(c, a, 2).jax)(cond, x)
    assert out.dtype == jnp.float32 and not out.weak_type


@pytest.mark.skipif(dt.x64_enabled(), reason="needs JAX's 64-bit mode off")
def test_promotion_to_an_unavailable_dtype_is_an_error():
    i8, u32 = xp.asarray([1], dtype=xp.int8), xp.asarray([1], dtype=xp.uint32)
    with pytest.raises(TypeError, match=r"xp\.where: x1 and x2: int8 and uint32 promote to int64: int64 needs"):
        xp.where(xp.asarray([True]), i8, u32)
    with pytest.raises(TypeError, match=r"xp\.searchsorted: x1 and x2: int8 and uint32 promote to int64"):
        xp.searchsorted(i8, u32)
