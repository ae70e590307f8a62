"""Utility functions: all, any and diff, against NumPy; dtype rules, errors, jit, vmap, grad.
Runs with JAX's 64-bit mode on or off."""

import math

import fixed_shapes
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from subprocess_env import failure, run_script, subprocess_env

import xp
from xp import _dtypes as dt

AVAILABLE = dt.available()
NUMERIC = [d for d in AVAILABLE if d in dt.NUMERIC]
FLOAT = dt.default_float()


def elements(dtype):
    """Values with many zeros (so that truth values vary), NaNs and infinities for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.sampled_from([0, 0, 1, int(info.max), int(info.min)]) | st.integers(int(info.min), int(info.max))
    width = dtype.itemsize * 8 if dtype.kind == "f" else dtype.itemsize * 4
    real = st.sampled_from([0.0, -0.0, math.nan, math.inf]) | st.floats(width=width)
    if dtype.kind == "f":
        return real
    return st.builds(complex, real, real)


def arrays(dtypes, min_dims=0, min_side=0):
    shapes = fixed_shapes.shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=5)
    return st.sampled_from(dtypes).flatmap(lambda d: hnp.arrays(d, shapes, elements=elements(d)))


@st.composite
def axes(draw, ndim):
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
    return draw(st.none() | single | several)


def check(result, expected, dtype):
    assert isinstance(result, xp.Array)
    assert not result.jax.weak_type
    assert result.dtype == dtype, (result.dtype, dtype)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(result), expected)


# --- all and any ----------------------------------------------------------------------------


@given(x=arrays(AVAILABLE), data=st.data())
def test_all_any_match_numpy(x, data):
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    ax = axis if axis is None or isinstance(axis, int) else tuple(axis)
    check(xp.all(xp.asarray(x), axis=axis, keepdims=keepdims), np.all(x, axis=ax, keepdims=keepdims), dt.bool)
    check(xp.any(xp.asarray(x), axis=axis, keepdims=keepdims), np.any(x, axis=ax, keepdims=keepdims), dt.bool)


def test_truth_values():
    nan, inf = math.nan, math.inf
    for values in (
        [nan],
        [inf],
        [-inf],
        [-0.5],
        [complex(0, 1)],
        [complex(nan, 0)],
        [complex(-0.0, 1e-30)],
        [1e-40],
        [-1e-40],
    ):
        assert bool(xp.all(xp.asarray(values))) is True
        assert bool(xp.any(xp.asarray(values))) is True
    for values in ([0.0], [-0.0], [0j], [complex(-0.0, -0.0)]):
        assert bool(xp.all(xp.asarray(values))) is False
        assert bool(xp.any(xp.asarray(values))) is False


@pytest.mark.parametrize("dtype", [d for d in AVAILABLE if d.kind in "fc"], ids=str)
def test_subnormals_are_true(dtype):
    """XLA flushes subnormals to zero in comparisons; all/any must still see them as non-zero."""
    tiny = np.finfo(dtype).smallest_subnormal
    for value in (tiny, -tiny, complex(0, tiny), complex(-tiny, -0.0)):
        if dtype.kind == "f" and isinstance(value, complex):
            continue
        x = xp.asarray(np.array([value], dtype))
        assert bool(xp.any(x)) is True, value
        assert bool(xp.all(x)) is True, value


def with_subnormals(dtype):
    """Elements of ``dtype`` with subnormal numbers as likely as zeros."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        return elements(dtype)
    tiny = float(np.finfo(dtype).smallest_subnormal)
    real = st.sampled_from([tiny, -tiny, 0.0, -0.0, 3 * tiny]) | st.floats(width=np.finfo(dtype).bits)
    return real if dtype.kind == "f" else st.builds(complex, real, real)


FLOATING = [d for d in AVAILABLE if d.kind in "fc"]


@pytest.mark.slow
@given(
    x=st.sampled_from(FLOATING).flatmap(
        lambda d: hnp.arrays(d, fixed_shapes.shapes(min_dims=1, max_dims=2, max_side=4), elements=with_subnormals(d))
    ),
    data=st.data(),
)
def test_one_truth_value_for_every_function(x, data):
    """Every function that reads values as booleans agrees with NumPy, which reads subnormals as
    non-zero (XLA's x != 0 does not: it flushes them)."""
    a, truth = xp.asarray(x), x.astype(bool) if x.dtype.kind == "f" else (x != 0)
    axis = data.draw(axes(x.ndim))
    ax = axis if axis is None or isinstance(axis, int) else tuple(axis)
    check(xp.count_nonzero(a, axis=axis), np.count_nonzero(x, axis=ax), dt.default_int())
    check(xp.any(a, axis=axis), np.any(x, axis=ax), dt.bool)
    check(xp.all(a, axis=axis), np.all(x, axis=ax), dt.bool)
    for got, expected in zip(xp.nonzero(a), np.nonzero(x), strict=True):
        check(got, expected, dt.default_int())
    check(xp.logical_not(a), np.logical_not(x), dt.bool)
    other = np.flip(x, axis=-1)
    for name in ("logical_and", "logical_or", "logical_xor"):
        check(getattr(xp, name)(a, xp.asarray(other)), getattr(np, name)(x, other), dt.bool)
    if x.dtype.kind == "f":  # (astype rejects complex to bool)
        check(xp.astype(a, xp.bool), truth, dt.bool)
    norm = xp.linalg.vector_norm(a, ord=0, axis=-1)
    np.testing.assert_array_equal(np.asarray(norm), np.sum(truth, axis=-1))


@pytest.mark.cpu_only(reason="the README's example is XLA's CPU arithmetic")
def test_the_readmes_subnormal_example():
    x = xp.asarray(np.float32(1e-45))
    assert float(x) == float(np.float32(1e-45)) != 0.0  # stored as it is
    assert not bool(x != 0) and float(x * 1) == 0.0  # XLA's arithmetic flushes it
    assert bool(xp.any(x)) and int(xp.count_nonzero(x)) == 1 and bool(xp.astype(x, xp.bool))


@pytest.mark.integration
@pytest.mark.cpu_only(reason="XLA's CPU loop emitters (--xla_cpu_use_fusion_emitters=false) are the CPU's")
def test_subnormals_are_true_whatever_xlas_code_generation():
    # all/any compare reduced integers with 0, not each element's bits: a compiler may turn the
    # per-element test into a floating comparison, which reads subnormals as 0; XLA's CPU loop
    # emitters did (xp.any of a complex64 subnormal was False), its default emitters do not
    env = subprocess_env()
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} --xla_cpu_use_fusion_emitters=false".strip()
    done = run_script("subnormals_any_all", env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", failure(done)


def test_empty():
    check(xp.all(xp.zeros(0)), True, dt.bool)
    check(xp.any(xp.zeros(0)), False, dt.bool)
    check(xp.all(xp.zeros((2, 0)), axis=1), [True, True], dt.bool)
    check(xp.any(xp.zeros((2, 0)), axis=1, keepdims=True), [[False], [False]], dt.bool)
    check(xp.any(xp.zeros((0, 2)), axis=1), np.zeros(0, bool), dt.bool)


@pytest.mark.parametrize("function", [xp.all, xp.any])
def test_all_any_errors(function):
    name = function.__name__
    x = xp.ones((2, 3))
    with pytest.raises(IndexError, match=rf"xp\.{name}: axis=2 is out of bounds for an array of 2 dimensions"):
        function(x, axis=2)
    with pytest.raises(ValueError, match=rf"xp\.{name}: axis has repeated axes"):
        function(x, axis=(1, -1))
    with pytest.raises(TypeError, match=rf"xp\.{name}: keepdims must be a bool, got int 1"):
        function(x, keepdims=1)
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must be an array, got list"):
        function([True])


def test_all_any_scalars_and_transformations():
    check(xp.all(True), True, dt.bool)
    check(xp.any(0), False, dt.bool)
    x = xp.asarray(np.array([[0, 1, 2], [3, 4, 5]], np.int32))
    check(jax.jit(lambda a: xp.all(a, axis=1))(x), [False, True], dt.bool)
    check(jax.vmap(lambda row: xp.any(row))(x), [True, True], dt.bool)
    check(jax.vmap(lambda row: xp.all(row), in_axes=1)(x), [False, True, True], dt.bool)


# --- diff -----------------------------------------------------------------------------------


def small(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -50, 50)
    if dtype.kind == "f":
        return st.floats(-1e3, 1e3, width=dtype.itemsize * 8)
    part = st.floats(-1e3, 1e3, width=dtype.itemsize * 4)
    return st.builds(complex, part, part)


@st.composite
def diff_case(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    shape = draw(fixed_shapes.shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    x = draw(hnp.arrays(dtype, shape, elements=small(dtype)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    edges = []
    for _ in range(2):
        if draw(st.booleans()):
            edges.append(None)
            continue
        edge_shape = list(shape)
        edge_shape[axis] = draw(st.integers(0, 3))
        edges.append(draw(hnp.arrays(dtype, tuple(edge_shape), elements=small(dtype))))
    return x, axis, draw(st.integers(0, 4)), edges[0], edges[1]


@given(case=diff_case())
def test_diff_matches_numpy(case):
    x, axis, n, prepend, append = case
    kwargs = {}
    if prepend is not None:
        kwargs["prepend"] = xp.asarray(prepend)
    if append is not None:
        kwargs["append"] = xp.asarray(append)
    result = xp.diff(xp.asarray(x), axis=axis, n=n, **kwargs)
    joined = np.concatenate([a for a in (prepend, x, append) if a is not None], axis=axis)
    expected = np.diff(joined, n=n, axis=axis)  # NumPy returns its input unchanged for n=0: joined
    assert result.shape[axis % x.ndim] == max(0, joined.shape[axis] - n)
    if x.dtype.kind in "fc":
        assert result.dtype == x.dtype and result.shape == expected.shape
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-3)
    else:
        check(result, expected, x.dtype)


def test_diff_values():
    x = xp.asarray(np.array([1, 4, 9, 16], np.int32))
    check(xp.diff(x), [3, 5, 7], dt.int32)
    check(xp.diff(x, n=2), [2, 2], dt.int32)
    check(xp.diff(x, n=3), [0], dt.int32)
    check(xp.diff(x, n=4), np.zeros(0, np.int32), dt.int32)
    check(xp.diff(x, n=9), np.zeros(0, np.int32), dt.int32)
    check(xp.diff(x, n=0), [1, 4, 9, 16], dt.int32)
    check(xp.diff(x, n=0, prepend=0), [0, 1, 4, 9, 16], dt.int32)  # the standard's M + N1 + N2 - n
    m = xp.asarray(np.array([[1, 2, 4], [8, 16, 32]], np.int16))
    check(xp.diff(m, axis=0), [[7, 14, 28]], dt.int16)
    check(xp.diff(m, axis=-2), [[7, 14, 28]], dt.int16)
    check(xp.diff(xp.asarray(np.array([0, 255], np.uint8))), [255], dt.uint8)
    check(xp.diff(xp.asarray(np.array([255, 0], np.uint8))), [1], dt.uint8)  # wraps, as subtract does


def test_diff_prepend_append_scalars_broadcast():
    x = xp.asarray(np.array([[1, 2], [3, 5]], np.int8))
    check(xp.diff(x, axis=1, prepend=0), [[1, 1], [3, 2]], dt.int8)  # a Python int takes x's dtype
    check(xp.diff(x, axis=0, append=10), [[2, 3], [7, 5]], dt.int8)
    zero_d = xp.asarray(np.array(1, np.int8))
    check(xp.diff(x, axis=1, prepend=zero_d, append=zero_d), [[0, 1, -1], [2, 2, -4]], dt.int8)
    f = xp.asarray(np.array([1.0, 2.0], FLOAT))
    check(xp.diff(f, prepend=0.5), np.array([0.5, 1.0], FLOAT), FLOAT)
    # a Python float with an integer x takes the default float dtype, as in x + 0.5
    check(xp.diff(x, axis=1, prepend=0.5), np.array([[0.5, 1.0], [2.5, 2.0]], FLOAT), FLOAT)


def test_diff_promotes_prepend_and_append():
    x = xp.asarray(np.array([1, 2], np.int8))
    wide = xp.asarray(np.array([100], np.int16))
    check(xp.diff(x, prepend=wide), [-99, 1], dt.int16)
    check(xp.diff(x, append=xp.asarray(np.array([0.5], np.float32))), np.array([1.0, -1.5], np.float32), dt.float32)


def test_diff_errors():
    x = xp.asarray(np.array([[1, 2, 3], [4, 5, 6]], np.int32))
    with pytest.raises(TypeError, match=r"xp\.diff: x must have a numeric dtype, got bool"):
        xp.diff(xp.asarray([True, False]))
    with pytest.raises(ValueError, match=r"xp\.diff: n must be non-negative, got -1"):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError, match=r"xp\.diff: n must be an integer, got float"):
        xp.diff(x, n=1.0)
    with pytest.raises(IndexError, match=r"xp\.diff: axis=2 is out of bounds for an array of 2 dimensions"):
        xp.diff(x, axis=2)
    with pytest.raises(IndexError, match=r"xp\.diff: axis=-1 is out of bounds for an array of 0 dimensions"):
        xp.diff(xp.asarray(1))
    with pytest.raises(
        ValueError, match=r"xp\.diff: prepend must have the shape of x except along axis 1 .*got shape \(3, 1\)"
    ):
        xp.diff(x, prepend=xp.zeros((3, 1), dtype=xp.int32))
    with pytest.raises(ValueError, match=r"xp\.diff: append must have the shape of x except along axis 0"):
        xp.diff(x, axis=0, append=xp.zeros((3,), dtype=xp.int32))
    with pytest.raises(OverflowError, match=r"xp\.diff: Python int 300 in prepend is out of bounds for int8"):
        xp.diff(xp.asarray(np.array([1], np.int8)), prepend=300)
    with pytest.raises(TypeError, match=r"xp\.diff: prepend must be an array, got list"):
        xp.diff(x, prepend=[1, 2])
    if dt.x64_enabled():
        with pytest.raises(TypeError, match=r"xp\.diff: x, prepend and append: uint64 and int8 have no common dtype"):
            xp.diff(xp.asarray(np.array([1], np.uint64)), prepend=xp.asarray(np.array([1], np.int8)))


def test_diff_transformations():
    values = np.array([[1.0, 3.0, 6.0], [0.0, 1.0, 1.0]], FLOAT)
    x = xp.asarray(values)
    check(jax.jit(lambda a: xp.diff(a, n=2, prepend=0.0))(x), np.diff(values, n=2, prepend=0.0), FLOAT)
    check(jax.vmap(lambda row: xp.diff(row))(x), np.diff(values), FLOAT)
    check(jax.vmap(lambda col: xp.diff(col, append=col[:1]), in_axes=1, out_axes=1)(x),
          np.diff(values, axis=0, append=values[:1]), FLOAT)  # fmt: skip
    grad = jax.grad(lambda a: xp.sum(xp.diff(a) ** 2).jax)(jnp.asarray(values[0]))
    d = np.diff(values[0])
    np.testing.assert_allclose(grad, [-2 * d[0], 2 * d[0] - 2 * d[1], 2 * d[1]])
