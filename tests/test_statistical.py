"""Statistical functions: values against NumPy, the dtype rules, special cases, errors, and
behaviour under jit, vmap and grad. Runs with JAX's 64-bit mode on or off."""

import math
import statistics
import warnings

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
from xp import _statistical

AVAILABLE = dt.available()
INTEGER = [d for d in AVAILABLE if d in dt.INTEGER]
REAL_FLOATING = [d for d in AVAILABLE if d in dt.REAL_FLOATING]
FLOATING = [d for d in AVAILABLE if d in dt.FLOATING]
REAL = [d for d in AVAILABLE if d in dt.REAL_NUMERIC]
NUMERIC = [d for d in AVAILABLE if d in dt.NUMERIC]
X64 = dt.x64_enabled()
FLOAT = dt.default_float()


# --- helpers --------------------------------------------------------------------------------


def elements(dtype, nan=False):
    """Small values, so that sums and products of a few of them neither overflow nor cancel badly."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -3
        return st.integers(low, 3)
    if dtype.kind == "f":
        return st.floats(-8, 8, width=dtype.itemsize * 8, allow_nan=False) | (
            st.just(float("nan")) if nan else st.floats(-8, 8, width=dtype.itemsize * 8)
        )
    part = st.floats(-8, 8, width=dtype.itemsize * 4)
    return st.builds(complex, part, part)


def arrays(dtypes, min_dims=0, max_side=5, nan=False):
    shapes = fixed_shapes.shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=max_side)
    return st.sampled_from(dtypes).flatmap(lambda d: hnp.arrays(d, shapes, elements=elements(d, nan)))


@st.composite
def axes(draw, ndim):
    """An axis argument: None, an int (maybe negative) or a tuple of distinct axes."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
    return draw(st.none() | single | several)


def np_axis(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def tolerance(dtype):
    return 1e-5 if dtype in (dt.float32, dt.complex64) else 1e-12


def count(shape, axis):
    """The number of elements each reduction over ``axis`` combines."""
    if axis is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in ((axis,) if isinstance(axis, int) else axis))


def quiet(function, *args, **kwargs):
    """A NumPy reference value, without its warnings about empty or invalid reductions."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


def check(result, expected, dtype=None, rtol=None, atol=0.0):
    """``result`` is an xp.Array, strongly typed, of ``dtype``, and matches ``expected``."""
    assert isinstance(result, xp.Array)
    value = result.jax
    assert not value.weak_type, "a result must not be weakly typed"
    expected = np.asarray(expected)
    if dtype is not None:
        assert result.dtype == dtype, (result.dtype, dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    actual = np.asarray(result)
    if rtol is None and actual.dtype.kind in "fc":
        rtol = tolerance(actual.dtype)
    if actual.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected.astype(actual.dtype), rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def expected_accumulation(dtype):
    """The standard's accumulation dtype for ``dtype=None``."""
    if dtype.kind == "i":
        return dt.default_int()
    if dtype.kind == "u":
        return dt.uint64 if X64 else dt.uint32
    return dtype


def sum_atol(x, axis, dtype):
    """An absolute tolerance for a sum: a few ulps of the sum of magnitudes."""
    if np.dtype(dtype).kind not in "fc":
        return 0.0
    magnitude = np.sum(np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)), axis=axis)
    return float(np.max(magnitude, initial=0.0)) * np.finfo(dtype).eps * 4


# --- sum and prod ---------------------------------------------------------------------------


@given(x=arrays(NUMERIC), data=st.data())
def test_sum_matches_numpy(x, data):
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    want = expected_accumulation(x.dtype)
    result = xp.sum(xp.asarray(x), axis=axis, keepdims=keepdims)
    expected = np.sum(x.astype(want), axis=np_axis(axis), keepdims=keepdims, dtype=want)
    check(result, expected, want, atol=sum_atol(x, np_axis(axis), want))


@given(x=arrays(NUMERIC, max_side=4), data=st.data())
def test_prod_matches_numpy(x, data):
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    want = expected_accumulation(x.dtype)
    result = xp.prod(xp.asarray(x), axis=axis, keepdims=keepdims)
    expected = np.prod(x.astype(want), axis=np_axis(axis), keepdims=keepdims, dtype=want)
    check(result, expected, want, rtol=1e-4 if want in (dt.float32, dt.complex64) else 1e-10, atol=1e-30)


@pytest.mark.slow
@pytest.mark.parametrize("function", [xp.sum, xp.prod])
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_accumulation_dtype_default(function, dtype):
    result = function(xp.ones((2, 3), dtype=dtype))
    assert result.dtype == expected_accumulation(dtype)
    assert result.shape == ()
    assert float(xp.real(result) if dtype.kind == "c" else result) == (6.0 if function is xp.sum else 1.0)


@pytest.mark.skipif(not X64, reason="the uint8 -> uint64 case needs 64-bit mode")
def test_small_unsigned_accumulates_in_uint64():
    x = xp.asarray(np.full(300, 255, np.uint8))
    result = xp.sum(x)
    assert result.dtype == xp.uint64
    assert int(result) == 300 * 255  # no wrap-around at 8 bits
    assert xp.sum(xp.asarray(np.array([100, 100], np.int8))).dtype == xp.int64
    assert int(xp.prod(xp.asarray(np.array([100, 100], np.int8)))) == 10_000


def test_accumulation_rule_without_x64(monkeypatch):
    """The rule's logic with 64-bit mode off (default int32): every integer widens to 32 bits."""
    monkeypatch.setattr(dt, "x64_enabled", lambda: False)
    rule = _statistical.accumulation_dtype
    assert rule(dt.int8, None) == dt.int32
    assert rule(dt.int16, None) == dt.int32
    assert rule(dt.int32, None) == dt.int32
    assert rule(dt.uint8, None) == dt.uint32
    assert rule(dt.uint16, None) == dt.uint32
    assert rule(dt.uint32, None) == dt.uint32
    assert rule(dt.float32, None) == dt.float32
    assert rule(dt.complex64, None) == dt.complex64
    assert rule(dt.int8, dt.int16) == dt.int16  # an explicit dtype wins, even a narrower one


def test_accumulation_rule_with_x64(monkeypatch):
    monkeypatch.setattr(dt, "x64_enabled", lambda: True)
    rule = _statistical.accumulation_dtype
    for d in (dt.int8, dt.int16, dt.int32, dt.int64):
        assert rule(d, None) == dt.int64
    for d in (dt.uint8, dt.uint16, dt.uint32, dt.uint64):
        assert rule(d, None) == dt.uint64
    for d in (dt.float32, dt.float64, dt.complex64, dt.complex128):
        assert rule(d, None) == d


@given(x=arrays(NUMERIC, max_side=4), data=st.data())
def test_explicit_dtype_is_honoured(x, data):
    targets = [d for d in NUMERIC if not (x.dtype.kind == "c" and d.kind != "c")]
    want = data.draw(st.sampled_from(targets))
    function, reference = data.draw(st.sampled_from([(xp.sum, np.sum), (xp.prod, np.prod)]))
    if x.dtype.kind == "f" and want.kind in "iu":
        x = np.abs(np.trunc(x))  # casting a float outside the integer range is implementation-defined
    result = function(xp.asarray(x), dtype=want)
    expected = reference(x.astype(want), dtype=want)  # cast first, then accumulate
    check(result, expected, want, rtol=1e-4 if want in (dt.float32, dt.complex64) else 1e-10, atol=1e-6)


def test_explicit_dtype_forms():
    x = xp.asarray([1, 2, 3], dtype=xp.int16)
    assert xp.sum(x, dtype="float32").dtype == xp.float32
    assert xp.sum(x, dtype=np.int32).dtype == xp.int32
    assert xp.prod(x, dtype=xp.uint8).dtype == xp.uint8


def test_empty_sum_and_prod():
    empty = xp.zeros((0, 3))
    check(xp.sum(empty), 0.0, dt.default_float())
    check(xp.prod(empty), 1.0, dt.default_float())
    check(xp.sum(empty, axis=0), np.zeros(3))
    check(xp.prod(empty, axis=0), np.ones(3))
    check(xp.sum(xp.zeros((3, 0)), axis=1), np.zeros(3))
    check(xp.prod(xp.zeros((0,), dtype=xp.int8)), 1, dt.default_int())


def test_sum_special_cases_follow_add():
    inf, nan = math.inf, math.nan
    check(xp.sum(xp.asarray([inf, -inf])), nan)
    check(xp.sum(xp.asarray([inf, 1.0])), inf)
    check(xp.sum(xp.asarray([1.0, nan, 2.0])), nan)
    check(xp.prod(xp.asarray([inf, 0.0])), nan)
    check(xp.prod(xp.asarray([-inf, 2.0])), -inf)
    check(xp.prod(xp.asarray([2.0, nan])), nan)
    z = xp.sum(xp.asarray([complex(nan, 1), complex(1, 2)]))
    assert math.isnan(complex(z).real) and complex(z).imag == 3.0  # components stay independent


def test_axis_forms():
    base = np.arange(24.0, dtype=FLOAT).reshape(2, 3, 4)
    x = xp.asarray(base)
    check(xp.sum(x, axis=-1), base.sum(-1))
    check(xp.sum(x, axis=(2, 0)), base.sum((0, 2)))
    check(xp.sum(x, axis=[0, 1]), base.sum((0, 1)))
    check(xp.sum(x, axis=()), base)
    check(xp.sum(x, axis=(0, -1), keepdims=True), base.sum((0, 2), keepdims=True))
    check(xp.sum(x, axis=np.int64(1)), base.sum(1))


def test_scalar_and_foreign_inputs():
    check(xp.sum(3), 3, dt.default_int())
    check(xp.sum(2.5), 2.5, dt.default_float())
    check(xp.sum(np.arange(4, dtype=np.int16)), 6, dt.default_int())
    check(xp.sum(jnp.arange(4.0, dtype=jnp.float32)), 6.0, dt.float32)
    check(xp.sum(jnp.float32(2) * 2), 4.0, dt.float32)  # a weakly typed jax input


# --- cumulative_sum and cumulative_prod -----------------------------------------------------


@given(x=arrays(NUMERIC, min_dims=1, max_side=4), data=st.data())
def test_cumulative_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1) | (st.none() if x.ndim == 1 else st.nothing()))
    include_initial = data.draw(st.booleans())
    product = data.draw(st.booleans())
    want = expected_accumulation(x.dtype)
    function, reference = (xp.cumulative_prod, np.cumprod) if product else (xp.cumulative_sum, np.cumsum)
    result = function(xp.asarray(x), axis=axis, include_initial=include_initial)
    position = 0 if axis is None else axis % x.ndim
    expected = reference(x.astype(want), axis=position, dtype=want)
    if include_initial:
        shape = list(x.shape)
        shape[position] = 1
        expected = np.concatenate([np.full(shape, 1 if product else 0, want), expected], axis=position)
    check(result, expected, want, rtol=1e-4 if want in (dt.float32, dt.complex64) else 1e-10, atol=1e-5)


@pytest.mark.parametrize("function", [xp.cumulative_sum, xp.cumulative_prod])
def test_cumulative_dtype(function):
    x = xp.asarray([1, 2, 3], dtype=xp.int8)
    assert function(x).dtype == dt.default_int()
    assert function(xp.asarray([1, 2], dtype=xp.uint16)).dtype == (xp.uint64 if X64 else xp.uint32)
    assert function(x, dtype=xp.float32).dtype == xp.float32
    assert function(xp.asarray([1.0, 2.0], dtype=xp.float32)).dtype == xp.float32


def test_cumulative_special_cases():
    inf, nan = math.inf, math.nan
    check(xp.cumulative_sum(xp.asarray([1.0, inf, -inf, 2.0])), [1.0, inf, nan, nan])
    check(xp.cumulative_prod(xp.asarray([2.0, inf, 0.0, 1.0])), [2.0, inf, nan, nan])
    check(xp.cumulative_sum(xp.asarray([nan, 1.0])), [nan, nan])


def test_cumulative_empty_axis():
    check(xp.cumulative_sum(xp.zeros((2, 0)), axis=1), np.zeros((2, 0)))
    check(xp.cumulative_sum(xp.zeros((2, 0)), axis=1, include_initial=True), np.zeros((2, 1)))
    check(xp.cumulative_prod(xp.zeros((0,)), include_initial=True), np.ones(1))


@pytest.mark.parametrize("function", [xp.cumulative_sum, xp.cumulative_prod])
def test_cumulative_errors(function):
    name = function.__name__
    with pytest.raises(ValueError, match=rf"xp\.{name}: axis is required when x has more than one dimension"):
        function(xp.ones((2, 3)))
    with pytest.raises(ValueError, match=rf"xp\.{name}: x must have at least one dimension"):
        function(xp.asarray(1.0))
    with pytest.raises(IndexError, match=r"axis=2 is out of bounds"):
        function(xp.ones((2, 3)), axis=2)
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a numeric dtype, got bool"):
        function(xp.asarray([True, False]))
    with pytest.raises(TypeError, match=rf"xp\.{name}: include_initial must be a bool, got int 1"):
        function(xp.ones(3), include_initial=1)
    with pytest.raises(TypeError, match=rf"xp\.{name}: dtype=float32 cannot hold the complex values of x"):
        function(xp.asarray([1j]), dtype=xp.float32)


# --- max and min ----------------------------------------------------------------------------


@given(x=arrays(REAL, nan=True), data=st.data())
def test_max_min_match_numpy(x, data):
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    out_shape = np.sum(x, axis=np_axis(axis), keepdims=keepdims).shape
    for function, reference in ((xp.max, np.max), (xp.min, np.min)):
        if count(x.shape, axis) == 0 and math.prod(out_shape):
            with pytest.raises(ValueError, match=rf"xp\.{function.__name__}: the m\w+ of zero elements is undefined"):
                function(xp.asarray(x), axis=axis, keepdims=keepdims)
            continue
        expected = reference(x, axis=np_axis(axis), keepdims=keepdims) if x.size else np.zeros(out_shape, x.dtype)
        check(function(xp.asarray(x), axis=axis, keepdims=keepdims), expected, x.dtype, rtol=0)


def test_max_min_nan_propagation():
    nan = math.nan
    for values in ([nan, 1.0, 2.0], [1.0, nan, 2.0], [1.0, 2.0, nan]):
        assert math.isnan(float(xp.max(xp.asarray(values))))
        assert math.isnan(float(xp.min(xp.asarray(values))))
    x = xp.asarray([[1.0, nan], [3.0, 4.0]])
    check(xp.max(x, axis=1), [nan, 4.0])
    check(xp.min(x, axis=0), [1.0, nan])


def test_max_min_zero_size():
    with pytest.raises(ValueError, match=r"xp\.max: the maximum of zero elements is undefined \(x has shape \(0,\)"):
        xp.max(xp.zeros(0))
    with pytest.raises(ValueError, match=r"xp\.min: the minimum of zero elements is undefined"):
        xp.min(xp.zeros((3, 0)), axis=1)
    with pytest.raises(ValueError, match=r"xp\.min: the minimum of zero elements"):
        jax.jit(lambda a: xp.min(a).jax)(jnp.zeros((2, 0)))  # shapes are static: also under jit
    # no reduction is over zero elements: an empty result, no error
    check(xp.max(xp.zeros((0, 3)), axis=1), np.zeros(0))
    check(xp.min(xp.zeros((0, 0)), axis=1), np.zeros(0))


@pytest.mark.parametrize("function", [xp.max, xp.min])
def test_max_min_dtype_errors(function):
    name = function.__name__
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a real-valued dtype, got complex"):
        function(xp.asarray([1j]))
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a real-valued dtype, got bool"):
        function(xp.asarray([True]))


@pytest.mark.parametrize("dtype", INTEGER, ids=str)
def test_max_min_integer_extremes(dtype):
    info = np.iinfo(dtype)
    x = xp.asarray(np.array([info.min, 0, info.max], dtype))
    check(xp.max(x), info.max, dtype)
    check(xp.min(x), info.min, dtype)


# --- mean, var, std -------------------------------------------------------------------------


@given(x=arrays(FLOATING, min_dims=1), data=st.data())
def test_mean_matches_numpy(x, data):
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    expected = quiet(np.mean, x, axis=np_axis(axis), keepdims=keepdims)
    check(xp.mean(xp.asarray(x), axis=axis, keepdims=keepdims), expected, x.dtype, atol=1e-5)


@given(x=arrays(REAL_FLOATING, min_dims=1), data=st.data())
def test_var_std_match_numpy(x, data):
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    correction = data.draw(st.integers(0, 3) | st.floats(0, 3))
    expected_var = quiet(np.var, x, axis=np_axis(axis), keepdims=keepdims, ddof=correction)
    expected_std = quiet(np.std, x, axis=np_axis(axis), keepdims=keepdims, ddof=correction)
    if count(x.shape, axis) - correction <= 0:
        expected_var = np.full_like(expected_var, np.nan)
        expected_std = np.full_like(expected_std, np.nan)
    atol = 1e-4 if x.dtype == dt.float32 else 1e-10
    check(xp.var(xp.asarray(x), axis=axis, keepdims=keepdims, correction=correction), expected_var, x.dtype, atol=atol)
    check(xp.std(xp.asarray(x), axis=axis, keepdims=keepdims, correction=correction), expected_std, x.dtype, atol=atol)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", INTEGER, ids=str)
def test_integer_input_is_computed_in_default_float(dtype):
    values = np.array([1, 2, 4], dtype)
    x = xp.asarray(values)
    default = dt.default_float()
    check(xp.mean(x), 7 / 3, default)
    check(xp.var(x), np.var(values.astype(default)), default)
    check(xp.std(x, correction=1), np.std(values.astype(default), ddof=1), default)


def test_mean_special_cases():
    nan, inf = math.nan, math.inf
    check(xp.mean(xp.zeros(0)), nan, dt.default_float())
    check(xp.mean(xp.zeros((2, 0)), axis=1), [nan, nan])
    check(xp.mean(xp.asarray([1.0, nan])), nan)
    check(xp.mean(xp.asarray([inf, 1.0])), inf)
    empty = complex(xp.mean(xp.zeros(0, dtype=xp.complex64)))
    assert math.isnan(empty.real) and math.isnan(empty.imag)
    # real and imaginary parts are averaged independently: a NaN stays in its component
    z = complex(xp.mean(xp.asarray([complex(nan, 2.0), complex(1.0, 4.0)])))
    assert math.isnan(z.real) and z.imag == 3.0
    z = complex(xp.mean(xp.asarray([complex(2.0, nan), complex(4.0, 1.0)])))
    assert z.real == 3.0 and math.isnan(z.imag)


@pytest.mark.parametrize("function", [xp.var, xp.std])
def test_var_std_special_cases(function):
    nan = math.nan
    x = xp.asarray([[1.0, 2.0, 4.0], [0.0, nan, 1.0]])
    result = np.asarray(function(x, axis=1))
    assert not math.isnan(result[0]) and math.isnan(result[1])  # NaN propagates, row by row
    check(function(x, axis=1, correction=3), [nan, nan])  # M - correction == 0
    check(function(x, axis=1, correction=3.5), [nan, nan])  # M - correction < 0
    check(function(xp.zeros(0)), nan)
    check(function(xp.asarray([5.0]), correction=1), nan)
    check(function(xp.asarray([5.0])), 0.0)
    check(function(xp.asarray([1.0, 3.0]), correction=-2), np.sqrt(0.5) if function is xp.std else 0.5)


def test_var_is_accurate_for_offset_data():
    """Two passes: a large common offset does not destroy the variance."""
    values = 1e4 + np.array([1.0, 2.0, 3.0, 4.0], FLOAT)
    check(xp.var(xp.asarray(values.astype(dt.default_float()))), np.var(values.astype(dt.default_float())), rtol=1e-6)


@given(data=st.data())
def test_std_where_the_squared_deviations_overflow_or_underflow(data):
    # float32 deviations from 1e-30 to 1e30 (their squares leave float32's range: std([1e20,
    # -1e20]) was inf, std([1e-20, -1e-20]) 0, as XLA flushes subnormals); float64 holds them
    exponents = data.draw(hnp.arrays(np.float64, (3, 5), elements=st.floats(-30, 30)), label="log10 |x|")
    signs = data.draw(hnp.arrays(np.int8, (3, 5), elements=st.sampled_from([-1, 1])), label="signs")
    x = (signs * 10.0**exponents).astype(np.float32)
    axis = data.draw(st.sampled_from([None, 0, 1]), label="axis")
    correction = data.draw(st.sampled_from([0, 1]), label="correction")
    want = np.std(x.astype(np.float64), axis=axis, ddof=correction).astype(np.float32)
    got = np.asarray(xp.std(xp.asarray(x), axis=axis, correction=correction))
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.x64
@pytest.mark.parametrize("magnitude", [1e-300, 1e-160, 1e160, 1e300])
def test_std_in_float64_across_the_range(magnitude):
    values = [magnitude, -magnitude, 0.5 * magnitude, 0.25 * magnitude]
    got = float(xp.std(xp.asarray(np.array(values)), correction=1))
    assert got == pytest.approx(statistics.stdev(values), rel=1e-14, abs=0)


@pytest.mark.slow
def test_std_rescaled_keeps_its_derivative_and_special_values():
    tiny = xp.asarray(np.array([1e-30, 2e-30, 4e-30], np.float32))
    gradient = xp.transforms.grad(lambda v: xp.std(v))(tiny)
    ordinary = xp.transforms.grad(lambda v: xp.std(v))(xp.asarray(np.array([1.0, 2.0, 4.0], np.float32)))
    np.testing.assert_allclose(np.asarray(gradient), np.asarray(ordinary), rtol=1e-5)  # scale-invariant
    rows = xp.asarray(np.array([[1.0, np.inf], [np.nan, 1.0], [3.0, 3.0], [1e-30, -1e-30]], np.float32))
    np.testing.assert_allclose(np.asarray(xp.std(rows, axis=1)), [np.nan, np.nan, 0.0, 1e-30], rtol=1e-6)


def test_floating_function_errors():
    with pytest.raises(
        TypeError, match=r"xp\.var: x must have a real-valued floating-point \(or integer\) dtype, got complex"
    ):
        xp.var(xp.asarray([1j]))
    with pytest.raises(
        TypeError, match=r"xp\.std: x must have a real-valued floating-point \(or integer\) dtype, got bool"
    ):
        xp.std(xp.asarray([True]))
    with pytest.raises(TypeError, match=r"xp\.mean: x must have a floating-point \(or integer\) dtype, got bool"):
        xp.mean(xp.asarray([True]))
    with pytest.raises(TypeError, match=r"xp\.var: correction must be a real Python scalar, got str"):
        xp.var(xp.ones(3), correction="1")
    with pytest.raises(TypeError, match=r"xp\.std: correction must be a real Python scalar, got bool"):
        xp.std(xp.ones(3), correction=True)


# --- argument errors common to the reductions -----------------------------------------------


@pytest.mark.parametrize("function", [xp.sum, xp.prod, xp.max, xp.min, xp.mean, xp.var, xp.std])
def test_reduction_argument_errors(function):
    name = function.__name__
    x = xp.ones((2, 3))
    with pytest.raises(IndexError, match=rf"xp\.{name}: axis=2 is out of bounds for an array of 2 dimensions"):
        function(x, axis=2)
    with pytest.raises(ValueError, match=rf"xp\.{name}: axis=-3 is out of bounds"):
        function(x, axis=-3)
    with pytest.raises(ValueError, match=rf"xp\.{name}: axis has repeated axes: \(0, -2\)"):
        function(x, axis=(0, -2))
    with pytest.raises(TypeError, match=rf"xp\.{name}: axis must be an integer, got float"):
        function(x, axis=1.0)
    with pytest.raises(TypeError, match=rf"xp\.{name}: keepdims must be a bool, got str"):
        function(x, keepdims="yes")
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must be an array, got list"):
        function([1.0, 2.0])


@pytest.mark.parametrize("function", [xp.sum, xp.prod])
def test_sum_prod_dtype_errors(function):
    name = function.__name__
    with pytest.raises(TypeError, match=rf"xp\.{name}: x must have a numeric dtype, got bool"):
        function(xp.asarray([True, False]))
    with pytest.raises(TypeError, match=rf"xp\.{name}: dtype must be a numeric dtype, got bool"):
        function(xp.ones(2), dtype=xp.bool)
    with pytest.raises(TypeError, match=rf"xp\.{name}: dtype=float32 cannot hold the complex values of x"):
        function(xp.asarray([1j]), dtype=xp.float32)
    with pytest.raises(TypeError, match=rf"xp\.{name}: dtype must be one of the array API dtypes"):
        function(xp.ones(2), dtype="float16")


@pytest.mark.skipif(X64, reason="64-bit dtypes are available")
def test_64_bit_dtype_unavailable_without_x64():
    with pytest.raises(TypeError, match=r"xp\.sum: dtype=int64: int64 needs JAX's 64-bit mode"):
        xp.sum(xp.ones(2), dtype="int64")


# --- transformations ------------------------------------------------------------------------


@pytest.mark.slow
def test_jit_matches_eager():
    x = xp.asarray(np.arange(12.0, dtype=FLOAT).reshape(3, 4))
    for function, kwargs in [
        (xp.sum, {"axis": 1}),
        (xp.prod, {"axis": 0, "keepdims": True}),
        (xp.max, {}),
        (xp.min, {"axis": -1}),
        (xp.mean, {"axis": (0, 1)}),
        (xp.var, {"correction": 1}),
        (xp.std, {"axis": 0}),
        (xp.cumulative_sum, {"axis": 1, "include_initial": True}),
        (xp.cumulative_prod, {"axis": 0}),
    ]:
        eager = function(x, **kwargs)
        traced = jax.jit(lambda a, f=function, kw=kwargs: f(a, **kw))(x)
        assert isinstance(traced, xp.Array)
        check(traced, np.asarray(eager), eager.dtype)


def test_vmap():
    values = np.arange(24.0, dtype=FLOAT).reshape(4, 6)
    x = xp.asarray(values)
    check(jax.vmap(lambda row: xp.sum(row))(x), values.sum(1))
    check(jax.vmap(lambda row: xp.mean(row, keepdims=True))(x), values.mean(1, keepdims=True))
    check(jax.vmap(lambda row: xp.var(row, correction=1))(x), values.var(1, ddof=1))
    check(jax.vmap(lambda row: xp.max(row))(x), values.max(1))
    check(jax.vmap(lambda row: xp.cumulative_sum(row), in_axes=1, out_axes=1)(x), np.cumsum(values, 0))


@pytest.mark.slow
def test_grad():
    values = np.array([1.0, 2.0, 4.0, 7.0], FLOAT)
    x = jnp.asarray(values)
    n = len(values)
    np.testing.assert_allclose(jax.grad(lambda a: xp.sum(a).jax)(x), np.ones(n))
    np.testing.assert_allclose(jax.grad(lambda a: xp.mean(a).jax)(x), np.full(n, 1 / n))
    np.testing.assert_allclose(
        jax.grad(lambda a: xp.var(a, correction=1).jax)(x), 2 * (values - values.mean()) / (n - 1), rtol=1e-6
    )
    np.testing.assert_allclose(
        jax.grad(lambda a: xp.std(a).jax)(x), (values - values.mean()) / (n * values.std()), rtol=1e-6
    )
    np.testing.assert_allclose(jax.grad(lambda a: xp.prod(a).jax)(x), values.prod() / values, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda a: xp.max(a).jax)(x), [0, 0, 0, 1])
    np.testing.assert_allclose(jax.grad(lambda a: xp.sum(xp.cumulative_sum(a)).jax)(x), [4, 3, 2, 1])
    grads = jax.grad(lambda a: xp.sum(a).jax)(xp.asarray(values))  # xp arrays in, xp arrays out
    assert isinstance(grads, xp.Array)


def test_eager_call_is_one_cached_dispatch():
    """A second eager call with the same static arguments traces nothing."""
    x = xp.asarray(np.ones((3, 5), np.float32))
    for function, name in ((xp.sum, "_sum"), (xp.mean, "_mean"), (xp.var, "_var"), (xp.max, "_max")):
        function(x, axis=1)  # (the first call makes the kernel: read its cache from here)
        before = getattr(_statistical, name)._cache_size()
        function(x, axis=1)
        assert getattr(_statistical, name)._cache_size() == before


# --- the default calls ----------------------------------------------------------------------
# xp.sum(x) and the other default calls on an xp array run a kernel of their own (the array
# alone: xp/_statistical.py); they must be the general call with the defaults spelled out,
# values, dtypes and errors alike (a bool or complex x, an empty one, a 0-d one for sort). A
# NumPy bool for a flag takes the general path.
DEFAULT_CALLS = {
    "sum": lambda x: {"axis": tuple(range(x.ndim)), "dtype": None, "keepdims": np.False_},
    "prod": lambda x: {"axis": tuple(range(x.ndim)), "dtype": None, "keepdims": np.False_},
    "max": lambda x: {"axis": tuple(range(x.ndim)), "keepdims": np.False_},
    "min": lambda x: {"axis": tuple(range(x.ndim)), "keepdims": np.False_},
    "mean": lambda x: {"axis": tuple(range(x.ndim)), "keepdims": np.False_},
    "var": lambda x: {"axis": tuple(range(x.ndim)), "correction": 0, "keepdims": np.False_},
    "std": lambda x: {"axis": tuple(range(x.ndim)), "correction": 0, "keepdims": np.False_},
    "argmax": lambda x: {"axis": None, "keepdims": np.False_},
    "argmin": lambda x: {"axis": None, "keepdims": np.False_},
    "sort": lambda x: {"axis": -1, "descending": np.False_, "stable": True},
    "argsort": lambda x: {"axis": -1, "descending": np.False_, "stable": True},
}


def _outcome(call):
    try:
        result = call()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    return result.dtype, np.asarray(result)


@pytest.mark.slow
@pytest.mark.parametrize("name", DEFAULT_CALLS)
@given(a=arrays(AVAILABLE, nan=True))
def test_the_default_call_is_the_general_call_with_the_defaults(name, a):
    fn, x = getattr(xp, name), xp.asarray(a)
    default, general = _outcome(lambda: fn(x)), _outcome(lambda: fn(x, **DEFAULT_CALLS[name](x)))
    assert default[0] == general[0]
    if isinstance(default[1], str):
        assert default[1] == general[1]
    else:
        np.testing.assert_array_equal(default[1], general[1])
