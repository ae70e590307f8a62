"""Creation functions."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xp

info = xp.__array_namespace_info__()
DEFAULT_FLOAT = info.default_dtypes()["real floating"]
DEFAULT_INT = info.default_dtypes()["integral"]


# --- asarray --------------------------------------------------------------------------------


def test_asarray_infers_the_default_dtypes():
    assert xp.asarray(True).dtype == xp.bool
    assert xp.asarray(1).dtype == DEFAULT_INT
    assert xp.asarray(1.5).dtype == DEFAULT_FLOAT
    assert xp.asarray(1j).dtype == info.default_dtypes()["complex floating"]
    assert xp.asarray([[1, 2], [3, 4]]).dtype == DEFAULT_INT
    assert xp.asarray([1, 2.5]).dtype == DEFAULT_FLOAT
    assert xp.asarray([]).shape == (0,)


@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=8))
def test_asarray_nested_sequences_match_numpy(values):
    out = xp.asarray([values, values])
    assert np.array_equal(np.asarray(out), np.array([values, values]))


def test_asarray_preserves_signed_zeros_and_nan_signs():
    out = np.asarray(xp.asarray([-0.0, 0.0]))
    assert list(np.signbit(out)) == [True, False]
    assert np.signbit(np.asarray(xp.asarray(-math.nan)))


@pytest.mark.x64
def test_asarray_copy_semantics():
    x = xp.asarray([1.0, 2.0])
    assert xp.asarray(x) is x
    assert xp.asarray(x, copy=False) is x
    y = xp.asarray(x, copy=True)
    assert y is not x
    y[0] = 7.0
    assert float(x[0]) == 1.0
    with pytest.raises(ValueError, match="copy=False, but converting the array needs a copy"):
        xp.asarray(x, dtype=xp.float32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([1, 2], copy=False)


def test_asarray_dtype_conversions():
    assert xp.asarray(xp.asarray([1, 2]), dtype=xp.float32).dtype == xp.float32
    assert xp.asarray(np.arange(3, dtype=np.int16)).dtype == xp.int16
    assert xp.asarray(np.float32(2.0)).dtype == xp.float32  # NumPy scalars keep their dtype
    assert xp.asarray(jnp.arange(3, dtype=jnp.uint8)).dtype == xp.uint8


def test_asarray_rejects_what_would_truncate():
    with pytest.raises(TypeError, match="xp.asarray: obj is a Python float, which int32 cannot hold"):
        xp.asarray(1.5, dtype=xp.int32)
    with pytest.raises(TypeError, match="obj holds float values, which int16 cannot hold"):
        xp.asarray([1.5, 2.0], dtype=xp.int16)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        xp.asarray(300, dtype=xp.int8)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        xp.asarray([1, -1], dtype=xp.uint8)
    with pytest.raises(TypeError, match="cannot convert a complex array to float32"):
        xp.asarray(xp.asarray([1j]), dtype=xp.float32)


def test_asarray_rejects_non_array_api_dtypes():
    with pytest.raises(TypeError, match="obj has dtype float16, which is not an array API dtype"):
        xp.asarray(np.ones(2, dtype=np.float16))
    with pytest.raises(TypeError, match="has dtype bfloat16, which is not an array API dtype"):
        xp.asarray(jnp.ones(2, dtype=jnp.bfloat16))
    with pytest.raises(ValueError, match="regular nested sequence"):
        xp.asarray([[1, 2], [3]])
    with pytest.raises(TypeError, match="must be an array"):
        xp.asarray("abc")


def test_asarray_dtype_like_forms():
    for spelling in (xp.float32, np.float32, jnp.float32, "float32", np.dtype("float32")):
        assert xp.asarray(1, dtype=spelling).dtype == xp.float32
    assert xp.asarray(1, dtype=float).dtype == DEFAULT_FLOAT
    with pytest.raises(TypeError, match="dtype must be one of the array API dtypes"):
        xp.asarray(1, dtype="float16")


def test_python_scalars_converted_under_jit_do_not_leak_into_eager_calls():
    # scalars no other test converts, so the first conversion is the one under jit
    value = 1234.5678
    traced = jax.jit(lambda v: xp.asarray(value, dtype=xp.float32).jax + v)(np.float32(1.0))
    assert float(traced) == float(np.float32(value) + np.float32(1.0))
    assert float(xp.asarray(value, dtype=xp.float32)) == float(np.float32(value))  # eager: a concrete array
    # a scalar operand of an eager array closed over inside a trace (the element-wise scalar cache)
    closed_over = xp.asarray([1.0, 2.0], dtype=xp.float32)
    doubled = jax.jit(lambda v: (closed_over + 4321.125) * v)(xp.asarray(2.0, dtype=xp.float32))
    np.testing.assert_array_equal(np.asarray(doubled), [8644.25, 8646.25])
    np.testing.assert_array_equal(np.asarray(closed_over + 4321.125), [4322.125, 4323.125])


def test_asarray_device():
    device = jax.devices()[0]
    assert xp.asarray([1.0], device=device).device == device
    with pytest.raises(TypeError, match="xp.asarray: device must be a jax.Device or a jax.sharding.Sharding"):
        xp.asarray([1.0], device="gpu")


# --- filled arrays --------------------------------------------------------------------------


@pytest.mark.parametrize("fn, value", [(xp.zeros, 0), (xp.ones, 1), (xp.empty, None)])
def test_zeros_ones_empty(fn, value):
    out = fn((2, 3))
    assert out.shape == (2, 3) and out.dtype == DEFAULT_FLOAT
    if value is not None:
        assert np.all(np.asarray(out) == value)
    assert fn(4, dtype=xp.int8).dtype == xp.int8


@pytest.mark.parametrize("fn", [xp.zeros_like, xp.ones_like, xp.empty_like])
def test_like_functions_take_shape_dtype_and_device_from_x(fn):
    x = xp.asarray([[1, 2]], dtype=xp.uint16)
    out = fn(x)
    assert out.shape == (1, 2) and out.dtype == xp.uint16 and out.device == x.device
    assert fn(x, dtype=xp.float32).dtype == xp.float32


def test_full():
    assert xp.full((2,), 3).dtype == DEFAULT_INT
    assert xp.full((2,), 3.5).jax.tolist() == [3.5, 3.5]
    assert xp.full((2,), True).dtype == xp.bool
    assert xp.full((), 1 + 2j).dtype == info.default_dtypes()["complex floating"]
    assert xp.full_like(xp.asarray([1, 2], dtype=xp.int8), 5).jax.tolist() == [5, 5]
    with pytest.raises(TypeError, match="xp.full_like: fill_value is a Python float, which int8 cannot hold"):
        xp.full_like(xp.asarray([1], dtype=xp.int8), 1.5)
    with pytest.raises(ValueError, match="xp.full: shape\\[0\\] must be non-negative"):
        xp.full((-1,), 0)


def test_fill_values_are_data_not_static():
    from xp import _creation

    xp.full((3,), -1.0)  # (the first call makes the kernel: read its cache from here)
    before = _creation._filled._cache_size()
    for v in range(20):
        xp.full((3,), float(v))
    assert _creation._filled._cache_size() - before <= 1


# --- ranges ---------------------------------------------------------------------------------


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-7, 7).filter(bool))
def test_arange_integers_match_numpy(start, stop, step):
    out = xp.arange(start, stop, step)
    assert out.dtype == DEFAULT_INT
    assert np.array_equal(np.asarray(out), np.arange(start, stop, step))


@pytest.mark.x64
@given(st.floats(-10, 10), st.floats(-10, 10), st.floats(0.1, 3))
def test_arange_floats_have_the_right_length(start, stop, step):
    out = xp.arange(start, stop, step)
    assert out.shape == (max(0, math.ceil((stop - start) / step)),)
    np.testing.assert_allclose(np.asarray(out), start + step * np.arange(out.shape[0]), atol=1e-9)


def test_arange_errors():
    with pytest.raises(ValueError, match="xp.arange: step must not be zero"):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="start must be a real Python scalar"):
        xp.arange("1")
    with pytest.raises(TypeError, match="stop=2.5 is not an integer, but dtype is int32"):
        xp.arange(0, 2.5, dtype=xp.int32)


@pytest.mark.x64
@given(st.floats(-100, 100), st.floats(-100, 100), st.integers(0, 20), st.booleans())
def test_linspace_matches_numpy(start, stop, num, endpoint):
    out = xp.linspace(start, stop, num, endpoint=endpoint)
    np.testing.assert_allclose(np.asarray(out), np.linspace(start, stop, num, endpoint=endpoint), atol=1e-9)


def test_linspace_complex():
    out = xp.linspace(0, 1 + 1j, 3)
    assert out.dtype == info.default_dtypes()["complex floating"]
    np.testing.assert_allclose(np.asarray(out), np.linspace(0, 1 + 1j, 3))


@given(st.integers(0, 6), st.integers(0, 6), st.integers(-7, 7))
def test_eye_matches_numpy(rows, cols, k):
    assert np.array_equal(np.asarray(xp.eye(rows, cols, k=k)), np.eye(rows, cols, k))


def test_meshgrid_returns_a_tuple():
    a, b = xp.asarray([1, 2, 3]), xp.asarray([4, 5])
    out = xp.meshgrid(a, b)
    assert isinstance(out, tuple) and len(out) == 2
    for got, want in zip(out, np.meshgrid([1, 2, 3], [4, 5]), strict=True):
        assert np.array_equal(np.asarray(got), want)
    ij = xp.meshgrid(a, b, indexing="ij")
    assert ij[0].shape == (3, 2)
    with pytest.raises(ValueError, match="indexing must be one of 'xy', 'ij'"):
        xp.meshgrid(a, indexing="yx")


@pytest.mark.x64
@given(st.integers(-4, 4))
def test_tril_triu(k):
    a = np.arange(24).reshape(2, 3, 4)
    assert np.array_equal(np.asarray(xp.tril(xp.asarray(a), k=k)), np.tril(a, k))
    assert np.array_equal(np.asarray(xp.triu(xp.asarray(a), k=k)), np.triu(a, k))


def test_creation_under_jit_honours_device():
    device = jax.devices()[0]

    @jax.jit
    def f(v):
        return xp.zeros(3, device=device) + xp.ones_like(v) + xp.arange(3)

    assert f(xp.asarray([1.0, 2.0, 3.0])).jax.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.x64
def test_asarray_reads_python_ints_beyond_int64_exactly():
    """NumPy turns ``[0, 2**63]`` into float64; xp reads the ints for an integer dtype."""
    for values in ([0, 2**63], [0, 2**64 - 1], [[1], [2**63 + 1]], [True, 2**63]):
        out = xp.asarray(values, dtype=xp.uint64)
        assert out.dtype == xp.uint64
        np.testing.assert_array_equal(np.asarray(out), np.array(values, dtype=np.uint64))
    for values in ([0, 2**64], [-1, 2**63]):
        with pytest.raises(OverflowError, match="xp.asarray: obj holds integers out of bounds for uint64"):
            xp.asarray(values, dtype=xp.uint64)
    with pytest.raises(TypeError, match="float values"):
        xp.asarray([1.5, 2**63], dtype=xp.uint64)  # a float is not an int, whatever NumPy made of it
