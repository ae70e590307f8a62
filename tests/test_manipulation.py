"""Manipulation functions: values against NumPy, dtype and shape rules, views, jit and vmap, errors.

NumPy is the oracle for view semantics too: its reshape (of a contiguous array), transpose,
moveaxis, expand_dims, squeeze, flip and unstack return views, so writing through an xp view
and through the NumPy view of the same data must leave both bases (and both views) equal.
"""

import itertools
import math

import fixed_shapes
import jax
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
from xp import _dtypes as dt
from xp import _manipulation

DTYPES = list(dt.available())
NUMERIC = [d for d in DTYPES if d in dt.NUMERIC]


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=4):
    return fixed_shapes.shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def elements(dtype):
    # XLA on CPU flushes subnormals to zero (in arithmetic and dtype conversions); NumPy does not
    return hnp.from_dtype(dtype, allow_subnormal=False) if dtype.kind in "fc" else hnp.from_dtype(dtype)


def arrays(dtypes=DTYPES, shape=None, **kw):
    shape = shapes(**kw) if shape is None else shape
    return st.sampled_from(dtypes).flatmap(lambda d: hnp.arrays(d, shape, elements=elements(d)))


def check(result, expected, dtype=None):
    assert type(result) is xp.Array
    assert result.shape == expected.shape
    assert result.dtype == (expected.dtype if dtype is None else dtype)
    np.testing.assert_array_equal(np.asarray(result), expected)


@st.composite
def reshape_targets(draw, shape):
    """A shape with the same number of elements: dims merged, split off as 1s, shuffled; maybe a -1."""
    dims = list(shape)
    while len(dims) > 1 and draw(st.booleans()):
        i = draw(st.integers(0, len(dims) - 2))
        dims[i : i + 2] = [dims[i] * dims[i + 1]]
    dims += [1] * draw(st.integers(0, 2))
    dims = draw(st.permutations(dims))
    if dims and draw(st.booleans()):
        i = draw(st.integers(0, len(dims) - 1))
        if math.prod(dims[:i] + dims[i + 1 :]) != 0:
            dims[i] = -1
    return tuple(dims)


def element(dtype):
    """A strategy for one value of ``dtype``, as a NumPy scalar of that dtype."""
    return elements(dtype).map(lambda v: np.asarray(v, dtype=dtype)[()])


def any_index(data, shape):
    return tuple(data.draw(st.integers(0, n - 1)) for n in shape)


# --- values against NumPy -------------------------------------------------------------------


@given(x=arrays(), data=st.data())
def test_reshape_matches_numpy(x, data):
    target = data.draw(reshape_targets(x.shape))
    check(xp.reshape(xp.asarray(x), target), np.reshape(x, target))
    check(xp.reshape(xp.asarray(x), list(target), copy=True), np.reshape(x, target))


@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    target=st.lists(st.integers(-1, 6), max_size=4).map(tuple),
    as_list=st.booleans(),
)
def test_reshape_accepts_and_refuses_what_numpy_does(shape, target, as_list):
    # any tuple of ints, as the fast path for plain tuples takes it, or a list, as the general path
    # does: the same result shape as NumPy's, or a ValueError where NumPy raises one
    x = np.zeros(shape, np.float32)
    requested = list(target) if as_list else target
    try:
        expected = np.reshape(x, target).shape
    except ValueError:
        with pytest.raises(ValueError, match=r"shape|size"):
            xp.reshape(xp.asarray(x), requested)
        return
    assert xp.reshape(xp.asarray(x), requested).shape == expected


@pytest.mark.parametrize(
    "shape, target, expected",
    [
        ((2, 3), (-1,), (6,)),
        ((2, 3), (3, -1), (3, 2)),
        ((2, 3), (1, -1, 2), (1, 3, 2)),
        ((0, 3), (3, -1), (3, 0)),
        ((2, 3), (4, -1), None),  # 6 elements are not a multiple of 4
        ((2, 3), (-1, -1), None),
        ((0, 3), (-1, 0), None),  # any size fits: NumPy refuses too
        ((2, 3), (-2, 3), None),  # NumPy takes any negative size as -1; the standard says -1
        ((2, 3), (5,), None),
    ],
)
def test_reshape_infers_one_size(shape, target, expected):
    x = xp.zeros(shape)
    if expected is None:
        with pytest.raises(ValueError, match=r"shape"):
            xp.reshape(x, target)
    else:
        assert xp.reshape(x, target).shape == expected


@pytest.mark.parametrize("target", [(True, -1), (2.0, 3), (np.int64(2), -1)])
def test_reshape_sizes_must_be_integers(target):
    x = xp.zeros((2, 3))
    if isinstance(target[0], np.integer):  # an integer of NumPy's is an integer
        assert xp.reshape(x, target).shape == (2, 3)
    else:
        with pytest.raises(TypeError, match=r"shape\[0\]"):
            xp.reshape(x, target)


@given(x=arrays(min_dims=1), data=st.data())
def test_permute_dims_matches_numpy(x, data):
    axes = tuple(data.draw(st.permutations(range(x.ndim))))
    negative = tuple(a - x.ndim if data.draw(st.booleans()) else a for a in axes)
    check(xp.permute_dims(xp.asarray(x), negative), np.transpose(x, axes))


@given(x=arrays(min_dims=1), data=st.data())
def test_moveaxis_matches_numpy(x, data):
    count = data.draw(st.integers(1, x.ndim))
    source = tuple(data.draw(st.permutations(range(-x.ndim, 0))))[:count]
    destination = tuple(data.draw(st.permutations(range(x.ndim))))[:count]
    if count == 1 and data.draw(st.booleans()):
        source, destination = source[0], destination[0]
    check(xp.moveaxis(xp.asarray(x), source, destination), np.moveaxis(x, source, destination))


@given(x=arrays(max_dims=3), data=st.data())
def test_expand_dims_matches_numpy(x, data):
    count = data.draw(st.integers(1, 3))
    ndim = x.ndim + count
    positions = data.draw(st.lists(st.integers(0, ndim - 1), min_size=count, max_size=count, unique=True))
    axis = tuple(p - ndim if data.draw(st.booleans()) else p for p in positions)
    if count == 1 and data.draw(st.booleans()):
        axis = axis[0]
    check(xp.expand_dims(xp.asarray(x), axis), np.expand_dims(x, axis))


@given(x=arrays(shape=shapes(min_side=1).map(lambda s: (*s, 1))), data=st.data())
def test_squeeze_matches_numpy(x, data):
    ones = [i for i, n in enumerate(x.shape) if n == 1]
    axes = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True, min_size=0)))
    axis = axes[0] if len(axes) == 1 and data.draw(st.booleans()) else axes
    check(xp.squeeze(xp.asarray(x), axis), np.squeeze(x, axis))


@given(x=arrays(), data=st.data())
def test_flip_matches_numpy(x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none())
    if x.ndim and data.draw(st.booleans()):
        axis = tuple(data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True)))
    check(xp.flip(xp.asarray(x), axis=axis), np.flip(x, axis))


@given(x=arrays(min_dims=1), data=st.data())
def test_unstack_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    result = xp.unstack(xp.asarray(x), axis=axis)
    expected = np.unstack(x, axis=axis)
    assert type(result) is tuple and len(result) == len(expected)
    for r, e in zip(result, expected, strict=True):
        check(r, e)


@given(x=arrays(max_dims=3), reps=st.lists(st.integers(0, 3), max_size=4).map(tuple))
def test_tile_matches_numpy(x, reps):
    check(xp.tile(xp.asarray(x), reps), np.tile(x, reps))


@given(x=arrays(), data=st.data())
def test_repeat_int_matches_numpy(x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none())
    n = data.draw(st.integers(0, 3))
    check(xp.repeat(xp.asarray(x), n, axis=axis), np.repeat(x, n, axis=axis))


@given(x=arrays(min_dims=1), data=st.data())
def test_repeat_array_matches_numpy(x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    size = x.size if axis is None else x.shape[axis]
    counts_dtype = data.draw(st.sampled_from([d for d in DTYPES if d in dt.INTEGER]))
    length = data.draw(st.sampled_from([1, size]))
    counts = data.draw(hnp.arrays(counts_dtype, (length,), elements=st.integers(0, 3)))
    check(xp.repeat(xp.asarray(x), xp.asarray(counts), axis=axis), np.repeat(x, counts.astype(np.int64), axis=axis))


@given(x=arrays(), data=st.data())
def test_roll_matches_numpy(x, data):
    shifts = st.integers(-20, 20)
    if x.ndim == 0 or data.draw(st.booleans()):
        shift = data.draw(shifts)
        check(xp.roll(xp.asarray(x), shift), np.roll(x, shift))
        return
    # repeated axes add up, as in NumPy
    axes = tuple(data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=4)))
    shift = data.draw(shifts | st.lists(shifts, min_size=len(axes), max_size=len(axes)).map(tuple))
    if len(axes) == 1 and data.draw(st.booleans()):
        axes = axes[0]
        shift = shift if isinstance(shift, int) else shift[0]
    check(xp.roll(xp.asarray(x), shift, axis=axes), np.roll(x, shift, axis=axes))


def test_roll_compiles_once_for_all_shifts():
    x = xp.asarray(np.arange(7, dtype=np.int32))
    xp.roll(x, 1)
    before = _manipulation._roll._cache_size()
    for shift in range(-10, 10):
        np.testing.assert_array_equal(np.asarray(xp.roll(x, shift)), np.roll(np.arange(7, dtype=np.int32), shift))
    assert _manipulation._roll._cache_size() == before


def promotes(*dtypes):
    """Whether ``dtypes`` have a common dtype that is available now."""
    try:
        return dt.is_available(dt.promote_all(dtypes))
    except dt.PromotionError:
        return False


@st.composite
def joinable(draw, min_dims, same_shape):
    """Two or three arrays of promotable dtypes, with shapes equal except along ``axis``."""
    base = list(draw(shapes(min_dims=min_dims, max_dims=3)))
    axis = draw(st.integers(-len(base), len(base) - 1)) if base else None
    count = draw(st.integers(1, 3))
    first = draw(st.sampled_from([*NUMERIC, dt.bool]))
    dtypes = [first]
    for _ in range(2):
        dtypes.append(draw(st.sampled_from([d for d in DTYPES if promotes(*dtypes, d)])))
    arrays_ = []
    for d in dtypes[:count]:
        shape = list(base)
        if axis is not None and not same_shape:
            shape[axis] = draw(st.integers(0, 3))
        arrays_.append(draw(hnp.arrays(d, tuple(shape), elements=elements(d))))
    return arrays_, axis


@given(case=joinable(min_dims=1, same_shape=False))
def test_concat_matches_numpy_with_promotion(case):
    arrays_, axis = case
    dtype = dt.promote_all(a.dtype for a in arrays_)
    expected = np.concatenate([a.astype(dtype) for a in arrays_], axis=axis)
    check(xp.concat([xp.asarray(a) for a in arrays_], axis=axis), expected, dtype)


@given(case=joinable(min_dims=0, same_shape=False))
def test_concat_axis_none_flattens(case):
    arrays_, _ = case
    dtype = dt.promote_all(a.dtype for a in arrays_)
    expected = np.concatenate([a.astype(dtype).reshape(-1) for a in arrays_])
    check(xp.concat(tuple(xp.asarray(a) for a in arrays_), axis=None), expected, dtype)


@given(case=joinable(min_dims=0, same_shape=True), data=st.data())
def test_stack_matches_numpy_with_promotion(case, data):
    arrays_, _ = case
    ndim = arrays_[0].ndim + 1
    axis = data.draw(st.integers(-ndim, ndim - 1))
    dtype = dt.promote_all(a.dtype for a in arrays_)
    check(
        xp.stack([xp.asarray(a) for a in arrays_], axis=axis), np.stack([a.astype(dtype) for a in arrays_], axis), dtype
    )


@pytest.mark.slow
def test_concat_of_one_dtype_keeps_it():
    for d in DTYPES:
        result = xp.concat([xp.zeros(2, dtype=d), xp.ones(3, dtype=d)])
        assert result.dtype == d and result.shape == (5,)


@st.composite
def broadcastable_shapes(draw, count):
    target = draw(shapes(max_dims=4))
    result = []
    for _ in range(count):
        ndim = draw(st.integers(0, len(target)))
        tail = target[len(target) - ndim :]
        result.append(tuple(1 if draw(st.booleans()) else n for n in tail))
    return target, result


@given(case=broadcastable_shapes(1), dtype=st.sampled_from(DTYPES), data=st.data())
def test_broadcast_to_matches_numpy(case, dtype, data):
    target, (shape,) = case
    x = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    check(xp.broadcast_to(xp.asarray(x), target), np.broadcast_to(x, target))


@given(case=broadcastable_shapes(3), data=st.data())
def test_broadcast_arrays_and_shapes_match_numpy(case, data):
    _, shape_list = case
    values = [data.draw(arrays(shape=st.just(s))) for s in shape_list]
    result = xp.broadcast_arrays(*[xp.asarray(v) for v in values])
    assert type(result) is tuple
    for r, e in zip(result, np.broadcast_arrays(*values), strict=True):
        check(r, e)
    assert xp.broadcast_shapes(*shape_list) == np.broadcast_shapes(*shape_list)


def test_broadcast_shapes_edge_cases():
    assert xp.broadcast_shapes() == ()
    assert xp.broadcast_shapes((2, 3)) == (2, 3)
    assert xp.broadcast_shapes((0,), (1,)) == (0,)
    assert xp.broadcast_shapes((5, 1), [1, 3], (3,)) == (5, 3)
    # None (an unknown size) propagates
    assert xp.broadcast_shapes((None, 1), (1, 3)) == (None, 3)
    assert xp.broadcast_shapes((None,), (7,)) == (None,)
    assert xp.broadcast_shapes((2, None), (3,)) == (2, None)
    assert xp.broadcast_arrays() == ()


def test_broadcast_shapes_propagates_unknown_sizes():
    assert xp.broadcast_shapes((5, 1), (None, 3)) == (None, 3)
    assert xp.broadcast_shapes((1, None), (4, 1)) == (4, None)
    assert xp.broadcast_shapes((3,), (None, 1, 3)) == (None, 1, 3)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_function_keeps_the_dtype(dtype):
    x = xp.zeros((2, 1, 3), dtype=dtype)
    results = [
        xp.reshape(x, (3, 2)),
        xp.permute_dims(x, (2, 0, 1)),
        xp.moveaxis(x, 0, -1),
        xp.expand_dims(x, (0, 4)),
        xp.squeeze(x, 1),
        xp.flip(x),
        xp.roll(x, 1),
        xp.tile(x, (2,)),
        xp.repeat(x, 2, axis=2),
        xp.broadcast_to(x, (4, 2, 1, 3)),
        *xp.broadcast_arrays(x, xp.zeros((5, 1, 1, 1), dtype=dtype)),
        *xp.unstack(x, axis=-1),
        xp.concat([x, x]),
        xp.stack([x, x]),
        x.mT,
        xp.reshape(x, (2, 3)).T,
    ]
    for r in results:
        assert r.dtype == dtype
        assert not r.jax.weak_type


def test_accepts_numpy_and_jax_arrays_and_scalars():
    check(xp.reshape(np.arange(6, dtype=np.int32), (2, 3)), np.arange(6, dtype=np.int32).reshape(2, 3))
    check(xp.flip(jax.numpy.arange(3, dtype=np.int32)), np.array([2, 1, 0], np.int32))
    assert not xp.reshape(5, (1, 1)).jax.weak_type
    check(xp.concat([np.ones(2, np.float32), xp.zeros(1, dtype=xp.float32)]), np.array([1, 1, 0], np.float32))


# --- views ----------------------------------------------------------------------------------

VIEW_FUNCTIONS = ["reshape", "permute_dims", "moveaxis", "expand_dims", "squeeze", "flip", "unstack", "T", "mT"]


@st.composite
def view_cases(draw, name):
    """An array and a pair of functions (xp, NumPy) that take a view of it."""
    # NumPy's flip of a 0-d array and unstack of a 1-d array give scalars, not views
    min_dims = {"T": 2, "mT": 2, "unstack": 2, "flip": 1}.get(name, 0)
    x = draw(arrays(min_dims=min_dims, max_dims=2 if name == "T" else 3, min_side=1, max_side=3))
    nd = x.ndim
    if name == "reshape":
        target = draw(reshape_targets(x.shape))
        return x, lambda a: xp.reshape(a, target), lambda a: np.reshape(a, target)
    if name == "permute_dims":
        axes = tuple(draw(st.permutations(range(nd))))
        return x, lambda a: xp.permute_dims(a, axes), lambda a: np.transpose(a, axes)
    if name == "moveaxis":
        assume(nd > 0)
        s, d = draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1))
        return x, lambda a: xp.moveaxis(a, s, d), lambda a: np.moveaxis(a, s, d)
    if name == "expand_dims":
        axis = draw(st.integers(-nd - 1, nd))
        return x, lambda a: xp.expand_dims(a, axis), lambda a: np.expand_dims(a, axis)
    if name == "squeeze":
        x = x.reshape((*x.shape, 1))
        return x, lambda a: xp.squeeze(a, -1), lambda a: np.squeeze(a, -1)
    if name == "flip":
        axis = draw(st.none() | st.integers(-nd, nd - 1)) if nd else None
        return x, lambda a: xp.flip(a, axis=axis), lambda a: np.flip(a, axis)
    if name == "unstack":
        assume(nd > 0)
        axis, k = draw(st.integers(0, nd - 1)), draw(st.integers(0, 100))
        return (
            x,
            lambda a: xp.unstack(a, axis=axis)[k % a.shape[axis]],
            lambda a: np.unstack(a, axis=axis)[k % a.shape[axis]],
        )
    if name == "T":
        return x, lambda a: a.T, lambda a: a.T
    return x, lambda a: a.mT, lambda a: a.mT


@pytest.mark.slow
@pytest.mark.parametrize("name", VIEW_FUNCTIONS)
@given(data=st.data())
def test_views_write_through_like_numpy(name, data):
    base, view_xp, view_np = data.draw(view_cases(name))
    x, nx = xp.asarray(base), base.copy()
    y, ny = view_xp(x), view_np(nx)
    assert np.shares_memory(ny, nx)  # the oracle is a NumPy view
    # a write into the view reaches the base
    index, value = any_index(data, ny.shape), data.draw(element(base.dtype))
    y[index] = value
    ny[index] = value
    check(x, nx)
    check(y, ny)
    # a write into the base refreshes the view
    index, value = any_index(data, nx.shape), data.draw(element(base.dtype))
    x[index] = value
    nx[index] = value
    check(y, ny)
    # an in-place operator on the view writes through as well
    if base.dtype in dt.NUMERIC:
        y += y
        with np.errstate(over="ignore", invalid="ignore"):
            ny += ny
        check(x, nx)


@pytest.mark.slow
@given(x=arrays(min_dims=2, max_dims=3, min_side=1, max_side=3), data=st.data())
def test_chained_views_write_through(x, data):
    a, na = xp.asarray(x), x.copy()
    v = xp.flip(xp.permute_dims(a, tuple(range(x.ndim))[::-1]), axis=0)
    nv = np.flip(np.transpose(na), 0)
    w = xp.expand_dims(v, 0)
    nw = np.expand_dims(nv, 0)
    index, value = any_index(data, nw.shape), data.draw(element(x.dtype))
    w[index] = value
    nw[index] = value
    check(a, na)
    check(v, nv)
    index, value = any_index(data, na.shape), data.draw(element(x.dtype))
    a[index] = value
    na[index] = value
    check(w, nw)
    check(v, nv)


@pytest.mark.slow
def test_view_examples():
    x = xp.asarray(np.arange(6, dtype=np.float32))
    y = xp.reshape(x, (2, 3))
    y[0, 1] = 50.0
    assert float(x[1]) == 50.0
    x[5] = -1.0
    assert float(y[1, 2]) == -1.0
    t = y.T
    t[2, 0] = 7.0
    assert float(x[2]) == 7.0
    rows = xp.unstack(y)
    rows[1][0] = 9.0
    assert float(x[3]) == 9.0 and float(y[1, 0]) == 9.0
    x[4] = 4.5
    assert float(rows[1][1]) == 4.5 and float(t[1, 1]) == 4.5
    items = xp.unstack(x)  # 0-d views
    items[2][()] = 1.25
    assert float(x[2]) == 1.25 and float(y[0, 2]) == 1.25


def test_edge_cases():
    x = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    empty = xp.expand_dims(x, ())
    empty[0, 0] = 9
    assert empty.shape == (2, 3) and int(x[0, 0]) == 9
    check(xp.squeeze(x, ()), np.asarray(x))
    scalar = xp.asarray(np.float32(2.5))
    check(xp.flip(scalar), np.float32(2.5) * np.ones((), np.float32))
    check(xp.permute_dims(scalar, ()), np.asarray(scalar))
    check(xp.reshape(xp.reshape(scalar, (1, 1)), ()), np.asarray(scalar))
    check(xp.reshape(xp.zeros((0, 3)), (3, -1, 2)), np.zeros((3, 0, 2), dt.default_float()))
    assert xp.unstack(xp.zeros((2, 0)), axis=1) == ()
    check(xp.repeat(scalar, 3), np.full(3, 2.5, np.float32))
    check(xp.tile(scalar, ()), np.asarray(scalar))
    check(xp.concat([scalar, scalar], axis=None), np.full(2, 2.5, np.float32))
    check(xp.stack([scalar, scalar]), np.full(2, 2.5, np.float32))
    check(xp.roll(xp.zeros((0, 3)), 5, axis=0), np.zeros((0, 3), dt.default_float()))
    check(xp.roll(x, -7), np.roll(np.asarray(x), -7))


def test_reshape_copy_is_independent():
    x = xp.asarray(np.arange(6, dtype=np.int32))
    copied = xp.reshape(x, (2, 3), copy=True)
    viewed = xp.reshape(x, (2, 3), copy=False)
    same = xp.reshape(x, (6,))
    copied[0, 0] = 100
    assert int(x[0]) == 0 and int(viewed[0, 0]) == 0
    viewed[0, 0] = 7
    assert int(x[0]) == 7 and int(same[0]) == 7 and int(copied[0, 0]) == 100
    x[1] = 8
    assert int(viewed[0, 1]) == 8 and int(copied[0, 1]) == 1


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: xp.broadcast_to(x, (2, 3)),
        lambda x: xp.broadcast_arrays(x, xp.zeros((2, 1), dtype=x.dtype))[0],
        lambda x: xp.concat([x]),
        lambda x: xp.stack([x])[0],
        lambda x: xp.tile(x, (1,)),
        lambda x: xp.repeat(x, 1),
        lambda x: xp.roll(x, 0),
        lambda x: xp.roll(x, 1),
    ],
)
def test_new_arrays_are_not_views(fn):
    x = xp.asarray(np.arange(3, dtype=np.int32))
    y = fn(x)
    y[...] = 5
    np.testing.assert_array_equal(np.asarray(x), np.arange(3, dtype=np.int32))
    x[0] = -1
    assert int(np.asarray(y).min()) == 5


def test_views_work_under_jit():
    def f(a):
        y = xp.reshape(a, (-1,))
        y[0] = 42.0
        t = a.mT
        t[1, 0] = -7.0
        f_ = xp.flip(xp.expand_dims(a, 0), axis=2)
        f_[0, 0, 0] = 3.0
        rows = xp.unstack(a, axis=1)
        rows[2][1] = 11.0
        return a, y

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    eager_a, eager_y = f(xp.asarray(x))
    jit_a, jit_y = jax.jit(f)(xp.asarray(x))
    expected = x.copy()
    expected[0, 0] = 42.0
    expected[0, 1] = -7.0
    expected[0, 3] = 3.0
    expected[1, 2] = 11.0
    check(eager_a, expected)
    check(jit_a, expected)
    check(eager_y, expected.reshape(-1))
    check(jit_y, expected.reshape(-1))


def test_views_work_under_vmap():
    def f(a):
        y = xp.permute_dims(a, (1, 0))
        y[0] = 0.0
        return a, xp.squeeze(xp.expand_dims(a, 0), 0)

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a, s = jax.vmap(f)(xp.asarray(x))
    expected = x.copy()
    expected[:, :, 0] = 0.0
    check(a, expected)
    check(s, expected)


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (lambda a: xp.reshape(a, (4, 3)), lambda a: a.reshape(a.shape[0], 4, 3)),
        (lambda a: xp.moveaxis(a, 0, 1), lambda a: np.moveaxis(a, 1, 2)),
        (lambda a: xp.flip(a, axis=1), lambda a: np.flip(a, 2)),
        (lambda a: xp.roll(a, 2), lambda a: np.roll(a.reshape(a.shape[0], -1), 2, axis=1).reshape(a.shape)),
        (lambda a: xp.roll(a, (1, -1), axis=(0, 1)), lambda a: np.roll(a, (1, -1), axis=(1, 2))),
        (lambda a: xp.concat([a, a], axis=None), lambda a: np.concatenate([a.reshape(len(a), -1)] * 2, axis=1)),
        (lambda a: xp.stack([a, a], axis=-1), lambda a: np.stack([a, a], -1)),
        (lambda a: xp.tile(a, (2, 1)), lambda a: np.tile(a, (1, 2, 1))),
        (lambda a: xp.repeat(a, 2, axis=1), lambda a: np.repeat(a, 2, axis=2)),
        (lambda a: xp.broadcast_to(a, (2, 3, 4)), lambda a: np.broadcast_to(a[:, None], (2, 2, 3, 4))),
    ],
)
def test_under_jit_and_vmap(fn, expected):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(jax.vmap(fn)(xp.asarray(x)), expected(x))
    check(jax.jit(fn)(xp.asarray(x[0])), expected(x[None, 0])[0])


def test_repeat_with_traced_counts_is_a_clear_error():
    x = xp.asarray([1, 2, 3])
    with pytest.raises(TypeError, match=r"xp\.repeat: repeats is a traced array"):
        jax.jit(lambda c: xp.repeat(x, c))(xp.asarray([1, 2, 3]))
    # a concrete array of counts inside jit is fine
    check(jax.jit(lambda a: xp.repeat(a, np.array([1, 0, 2], np.int32)))(x), np.array([1, 3, 3]), x.dtype)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (lambda x: xp.reshape(x, (5, -1)), ValueError, r"xp\.reshape: cannot reshape an array of shape \(2, 3\)"),
        (lambda x: xp.reshape(x, (-1, -1)), ValueError, r"xp\.reshape: shape .* more than one -1"),
        (lambda x: xp.reshape(x, (-2, -3)), ValueError, r"xp\.reshape: shape\[0\]=-2"),
        (lambda x: xp.reshape(x, (7,)), ValueError, r"xp\.reshape: .*\(size 6\) to shape \(7,\) \(size 7\)"),
        (lambda x: xp.reshape(x, "6"), TypeError, r"xp\.reshape: shape must be a tuple of ints, got str"),
        (lambda x: xp.reshape(x, (6,), copy=1), TypeError, r"xp\.reshape: copy must be a bool"),
        (lambda x: xp.reshape([1, 2], (2,)), TypeError, r"xp\.reshape: x must be an array"),
        (lambda x: xp.permute_dims(x, (0,)), ValueError, r"xp\.permute_dims: axes must list each of the 2 axes"),
        (lambda x: xp.permute_dims(x, (0, 0)), ValueError, r"xp\.permute_dims: axes has repeated axes"),
        (lambda x: xp.permute_dims(x, (0, 2)), IndexError, r"xp\.permute_dims: axes=2 is out of bounds"),
        (lambda x: xp.permute_dims(x, 1), TypeError, r"xp\.permute_dims: axes must be a tuple"),
        (lambda x: xp.moveaxis(x, (0, 1), 0), ValueError, r"xp\.moveaxis: source and destination must name"),
        (lambda x: xp.moveaxis(x, 0, 2), IndexError, r"xp\.moveaxis: destination=2 is out of bounds"),
        (lambda x: xp.expand_dims(x, 3), IndexError, r"xp\.expand_dims: axis=3 is out of bounds .* \[-3, 2\]"),
        (lambda x: xp.expand_dims(x, (0, 4)), IndexError, r"xp\.expand_dims: axis\[1\]=4 is out of bounds"),
        (lambda x: xp.expand_dims(x, (0, -4)), ValueError, r"xp\.expand_dims: axis has repeated positions"),
        (lambda x: xp.squeeze(x, 0), ValueError, r"xp\.squeeze: cannot remove axis 0 of size 2"),
        (lambda x: xp.squeeze(x, None), TypeError, r"xp\.squeeze: axis must be an int or a tuple"),
        (lambda x: xp.squeeze(x, 5), IndexError, r"xp\.squeeze: axis=5 is out of bounds"),
        (lambda x: xp.flip(x, axis=(0, -2)), ValueError, r"xp\.flip: axis has repeated axes"),
        (lambda x: xp.flip(x, axis=1.0), TypeError, r"xp\.flip: axis must be an integer, got float"),
        (lambda x: xp.unstack(x[0, 0]), ValueError, r"xp\.unstack: x must have at least one dimension"),
        (lambda x: xp.unstack(x, axis=2), IndexError, r"xp\.unstack: axis=2 is out of bounds"),
        (
            lambda x: xp.broadcast_to(x, (3, 3)),
            ValueError,
            r"xp\.broadcast_to: x of shape \(2, 3\) cannot be broadcast to shape \(3, 3\)",
        ),
        (lambda x: xp.broadcast_to(x, (3,)), ValueError, r"xp\.broadcast_to: x of shape \(2, 3\) cannot"),
        (lambda x: xp.broadcast_to(x, (-1, 3)), ValueError, r"xp\.broadcast_to: shape\[0\] must be non-negative"),
        (
            lambda x: xp.broadcast_arrays(x, xp.zeros(2)),
            ValueError,
            r"xp\.broadcast_arrays: shapes cannot be broadcast together \(axis -1 has sizes 3 and 2\): arrays\[0\] \(2, 3\), arrays\[1\] \(2,\)",
        ),
        (
            lambda x: xp.broadcast_shapes((2, 3), (4,)),
            ValueError,
            r"xp\.broadcast_shapes: shapes cannot be broadcast together \(axis -1 has sizes 3, 4\)",
        ),
        (lambda x: xp.broadcast_shapes(3), TypeError, r"xp\.broadcast_shapes: shapes\[0\] must be a tuple of ints"),
        (
            lambda x: xp.broadcast_shapes((2, -1)),
            ValueError,
            r"xp\.broadcast_shapes: shapes\[0\]\[1\] must be non-negative",
        ),
        (lambda x: xp.concat([]), ValueError, r"xp\.concat: arrays must hold at least one array"),
        (lambda x: xp.concat(x), TypeError, r"xp\.concat: arrays must be a tuple or list of arrays, got Array"),
        (
            lambda x: xp.concat([x, xp.zeros(3)]),
            ValueError,
            r"xp\.concat: arrays must have the same number of dimensions",
        ),
        (
            lambda x: xp.concat([x, xp.zeros((2, 2))], axis=0),
            ValueError,
            r"xp\.concat: arrays must have the same shape except along axis 0",
        ),
        (lambda x: xp.concat([x[0, 0], x[0, 0]]), ValueError, r"xp\.concat: 0-d arrays cannot be joined along an axis"),
        (lambda x: xp.concat([x, x], axis=2), IndexError, r"xp\.concat: axis=2 is out of bounds"),
        (lambda x: xp.concat([x, [1, 2]]), TypeError, r"xp\.concat: arrays\[1\] must be an array"),
        (lambda x: xp.stack([x, xp.zeros((3, 2))]), ValueError, r"xp\.stack: arrays must all have the same shape"),
        (
            lambda x: xp.stack([x], axis=3),
            IndexError,
            r"xp\.stack: axis=3 is out of bounds for stacking 2-dimensional arrays \(must be in \[-3, 2\]\)",
        ),
        (lambda x: xp.tile(x, (-1,)), ValueError, r"xp\.tile: repetitions\[0\] must be non-negative"),
        (lambda x: xp.tile(x, 2.0), TypeError, r"xp\.tile: repetitions must be an int or a tuple of ints"),
        (lambda x: xp.repeat(x, -1), ValueError, r"xp\.repeat: repeats must be non-negative, got -1"),
        (lambda x: xp.repeat(x, 1.5), TypeError, r"xp\.repeat: repeats must be an int or an integer array, got float"),
        (lambda x: xp.repeat(x, True), TypeError, r"xp\.repeat: repeats must be an int or an integer array, got bool"),
        (lambda x: xp.repeat(x, xp.asarray([1.0, 2.0])), TypeError, r"xp\.repeat: repeats must have an integer dtype"),
        (
            lambda x: xp.repeat(x, xp.asarray([1, 2]), axis=1),
            ValueError,
            r"xp\.repeat: repeats must have shape \(1,\) or \(3,\)",
        ),
        (
            lambda x: xp.repeat(x, xp.asarray([1, -2, 0]), axis=1),
            ValueError,
            r"xp\.repeat: repeats must be non-negative, got -2",
        ),
        (lambda x: xp.repeat(x, 2, axis=2), IndexError, r"xp\.repeat: axis=2 is out of bounds"),
        (lambda x: xp.roll(x, (1, 2)), TypeError, r"xp\.roll: shift must be an int when axis is None"),
        (lambda x: xp.roll(x, (1, 2), axis=0), ValueError, r"xp\.roll: shift and axis must have the same length"),
        (lambda x: xp.roll(x, 1, axis=(0, 2)), IndexError, r"xp\.roll: axis\[1\]=2 is out of bounds"),
        (lambda x: xp.roll(x, 1.5), TypeError, r"xp\.roll: shift must be an integer, got float"),
    ],
)
def test_errors_name_the_function_and_parameter(call, kind, message):
    x = xp.zeros((2, 3))
    with pytest.raises(kind, match=message):
        call(x)


@pytest.mark.skipif(not dt.x64_enabled(), reason="uint64 needs JAX's 64-bit mode")
def test_concat_without_common_dtype_is_a_type_error():
    with pytest.raises(TypeError, match=r"xp\.concat: arrays cannot be joined: uint64 and int8 have no common dtype"):
        xp.concat([xp.zeros(1, dtype=xp.uint64), xp.zeros(1, dtype=xp.int8)])
    with pytest.raises(TypeError, match=r"xp\.stack: arrays cannot be joined"):
        xp.stack([xp.zeros(1, dtype=xp.int64), xp.zeros(1, dtype=xp.uint64)])


@pytest.mark.skipif(dt.x64_enabled(), reason="int64 is available in JAX's 64-bit mode")
def test_concat_never_truncates_an_unavailable_promoted_dtype():
    with pytest.raises(TypeError, match=r"xp\.concat: .*promote to int64: int64 needs JAX's 64-bit mode"):
        xp.concat([xp.zeros(1, dtype=xp.uint32), xp.zeros(1, dtype=xp.int8)])


def test_transpose_properties_check_dimensions():
    with pytest.raises(ValueError, match=r"xp\.Array\.T: the array must be 2-dimensional"):
        _ = xp.zeros((2, 3, 4)).T
    with pytest.raises(ValueError, match=r"xp\.Array\.mT: the array must have at least 2 dimensions"):
        _ = xp.zeros(3).mT
    check(
        xp.asarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)).mT, np.arange(24, dtype=np.int32).reshape(2, 3, 4).mT
    )


def test_signatures_are_the_standards():
    import inspect

    expected = {
        "broadcast_arrays": "(*arrays)",
        "broadcast_shapes": "(*shapes)",
        "broadcast_to": "(x, /, shape)",
        "concat": "(arrays, /, *, axis=0)",
        "expand_dims": "(x, /, axis)",
        "flip": "(x, /, *, axis=None)",
        "moveaxis": "(x, source, destination, /)",
        "permute_dims": "(x, /, axes)",
        "repeat": "(x, repeats, /, *, axis=None)",
        "reshape": "(x, /, shape, *, copy=None)",
        "roll": "(x, /, shift, *, axis=None)",
        "squeeze": "(x, /, axis)",
        "stack": "(arrays, /, *, axis=0)",
        "tile": "(x, repetitions, /)",
        "unstack": "(x, /, *, axis=0)",
    }
    for name, signature in expected.items():
        fn = getattr(xp, name)
        parameters = inspect.signature(fn).parameters.values()
        assert str(inspect.Signature([p.replace(annotation=inspect.Parameter.empty) for p in parameters])) == signature
        assert fn.__module__ == "xp"


def test_all_shapes_of_a_small_array_reshape_like_numpy():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    for dims in itertools.product([1, 2, 3, 4, 6, 12, -1], repeat=2):
        if dims.count(-1) < 2 and (math.prod(dims) == 12 or (-1 in dims and 12 % -math.prod(dims) == 0)):
            check(xp.reshape(xp.asarray(x), dims), x.reshape(dims))
