"""Sizes and value ranges at the boundary (issue #10, defects 3 and 8): a size no array can have is
a ValueError, one the device cannot hold a MemoryError, both raised before XLA sees the shape (XLA
aborts the process on sizes beyond int64); a value that does not fit the requested dtype is an
OverflowError, never a wrapped integer, a saturated one or a finite float turned infinite."""

import json
import math
import warnings

import jax
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from subprocess_env import failure, run_script

import xp

# --- sizes ------------------------------------------------------------------------------------

# Each call once aborted the interpreter inside XLA (or failed later with RESOURCE_EXHAUSTED or an
# internal MLIR TypeError). They run in a child process so that a regression is a failed test,
# not a dead test run.
TOO_BIG = {
    "xp.zeros((2**31, 2**31))": ValueError,
    "xp.ones((2**31, 2**31))": ValueError,
    "xp.empty((2**31, 2**31))": ValueError,
    "xp.full((2**31, 2**31), 1.0)": ValueError,
    "xp.zeros((2**62,))": ValueError,
    "xp.zeros(10**20)": ValueError,
    "xp.zeros((0, 10**20))": ValueError,
    "xp.tile(xp.ones(2), (2**31, 2**31))": ValueError,
    "xp.eye(2**40)": ValueError,
    "xp.sparse.full((2**31, 2**31), 1.0)": ValueError,
    "xp.sparse.ones((2**31, 2**31))": ValueError,
    "xp.fft.fftfreq(10**20)": ValueError,
    "jax.jit(lambda: xp.zeros((2**31, 2**31)))()": ValueError,
    "xp.arange(0.0, 1e12)": MemoryError,
    "xp.zeros((2**40,))": MemoryError,
    "xp.empty((2**40,))": MemoryError,
    "xp.full((2**40,), 1.0)": MemoryError,
    "xp.linspace(0, 1, 2**40)": MemoryError,
    "xp.broadcast_to(xp.ones(1), (2**40,))": MemoryError,
    "xp.repeat(xp.ones(2), 2**40)": MemoryError,
    "xp.meshgrid(xp.ones(2**20), xp.ones(2**20))": MemoryError,
    "xp.ones((2**20, 1)) + xp.ones((1, 2**20))": MemoryError,
    "xp.arange(0, float('inf'))": ValueError,
    "xp.arange(float('nan'))": ValueError,
}


@pytest.mark.integration
def test_a_size_no_array_can_have_is_a_value_error_and_one_the_device_cannot_hold_a_memory_error():
    # 4 TiB is more than the memory of any machine this suite runs on
    # (the child's device is the CPU where this process's backend is not: xp raises these errors
    # before XLA sees the shape, from the sizes and the device's memory, on every backend)
    child = run_script("too_big_sizes", json.dumps(list(TOO_BIG)), timeout=300)
    assert child.returncode == 0, failure(child)
    outcomes = json.loads(child.stdout.splitlines()[-1])
    for call, expected in TOO_BIG.items():
        kind, message = outcomes[call]
        assert kind == expected.__name__, (call, kind, message)
        function = call.split("(")[0] if not call.startswith(("jax.", "xp.ones((2**20")) else None
        if function is not None:
            assert message.startswith(function + ": "), (call, message)
    assert outcomes["xp.ones((2**20, 1)) + xp.ones((1, 2**20))"][1].startswith("xp.add: the broadcast shape")
    assert outcomes["jax.jit(lambda: xp.zeros((2**31, 2**31)))()"][1].startswith("xp.zeros:")


def test_the_memory_check_names_the_sizes():
    with pytest.raises(MemoryError, match=r"^xp.zeros: shape asks for an array of shape \(1099511627776,\) and "
                       r"dtype float32: cannot allocate 4.0 TiB, the device has [\d.]+ [GT]iB of memory"):  # fmt: skip
        xp.zeros(2**40, dtype=xp.float32)


def test_sizes_below_the_memory_check_and_symbolic_sizes_pass():
    assert xp.zeros((2**20,)).shape == (2**20,)
    exported = jax.export.export(jax.jit(lambda a: xp.tile(a, (2,))))(
        jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), np.float32)
    )
    assert str(exported.out_avals[0].shape) == "(2*n,)"


@pytest.mark.slow
@given(k=st.integers(-(10**20), 10**20) | st.integers(-5, 5), rows=st.integers(0, 4), cols=st.integers(0, 4))
@example(k=10**20, rows=2, cols=3)
@example(k=-(10**20), rows=3, cols=2)
def test_a_diagonal_offset_beyond_the_matrix_is_a_result_not_an_overflow(k, rows, cols):
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) + 1
    x = xp.asarray(a)
    np.testing.assert_array_equal(np.asarray(xp.tril(x, k=k)), np.tril(a, k=max(min(k, 2**31 - 1), -(2**31))))
    np.testing.assert_array_equal(np.asarray(xp.triu(x, k=k)), np.triu(a, k=max(min(k, 2**31 - 1), -(2**31))))
    np.testing.assert_array_equal(
        np.asarray(xp.eye(rows, cols, k=k, dtype=xp.float32)), np.eye(rows, cols, k=max(min(k, 2**31), -(2**31)))
    )
    clamped = max(min(k, cols), -rows)  # NumPy's diagonal takes int64 offsets only
    np.testing.assert_array_equal(np.asarray(xp.linalg.diagonal(x, offset=k)), np.diagonal(a, clamped))
    assert float(xp.linalg.trace(x, offset=k)) == np.trace(a, clamped)


# --- values -----------------------------------------------------------------------------------


@given(value=st.floats(allow_nan=False) | st.floats(min_value=3.4e38, max_value=3.5e38))
def test_a_python_float_that_float32_cannot_hold_is_an_overflow_error(value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.float32(value)
    becomes_infinite = math.isfinite(value) and math.isinf(expected)
    calls = [
        lambda: xp.asarray(value, dtype=xp.float32),
        lambda: xp.ones(2, dtype=xp.float32) + value,
        lambda: xp.ones(2, dtype=xp.float32) < value,
        lambda: xp.full(2, value, dtype=xp.float32),
        lambda: xp.asarray([0.0, value], dtype=xp.float32),
        lambda: xp.asarray(np.array([0.0, value]), dtype=xp.float32),
        lambda: xp.asarray(complex(0.0, value), dtype=xp.complex64),
    ]
    for call in calls:
        if becomes_infinite:
            with pytest.raises(
                OverflowError, match=r"^xp\.\w+: .*(out of range for|beyond the range of) (float|complex)"
            ):
                call()
        else:
            call()
    if not becomes_infinite:
        assert float(xp.asarray(value, dtype=xp.float32)) == float(expected)


def test_the_default_floating_dtype_takes_any_python_float_only_with_64_bits():
    if jax.config.jax_enable_x64:
        assert float(xp.asarray(1e300)) == 1e300
        np.testing.assert_array_equal(np.asarray(xp.ones(2) + 1e300), [1e300, 1e300])
    else:
        with pytest.raises(OverflowError, match="^xp.asarray: Python float 1e.300 in obj is out of range for float32"):
            xp.asarray(1e300)
        with pytest.raises(OverflowError, match="^xp.add: Python float 1e.300 in x2 is out of range for float32"):
            xp.ones(2) + 1e300
    assert math.isinf(float(xp.asarray(math.inf, dtype=xp.float32)))  # infinity itself stays what it is


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16"])
def test_linspace_with_an_integer_dtype_does_not_saturate(dtype):
    high = int(np.iinfo(dtype).max)
    with pytest.raises(OverflowError, match=f"^xp.linspace: stop={high + 1} is out of bounds for {dtype}"):
        xp.linspace(0, high + 1, 3, dtype=getattr(xp, dtype))
    with pytest.raises(ValueError, match=f"^xp.linspace: stop=inf is not finite, but dtype is {dtype}"):
        xp.linspace(0, math.inf, 3, dtype=getattr(xp, dtype))
    np.testing.assert_array_equal(
        np.asarray(xp.linspace(0, high, 3, dtype=getattr(xp, dtype))), np.linspace(0, high, 3).astype(dtype)
    )


@pytest.mark.x64
def test_asarray_with_a_narrower_integer_dtype_does_not_wrap_numpy_data():
    with pytest.raises(OverflowError, match=r"^xp.asarray: obj holds the int64 value 1099511627783, out of bounds "
                       r"for int32 \[-2147483648, 2147483647\]$"):  # fmt: skip
        xp.asarray(np.array([2**40 + 7]), dtype=xp.int32)
    with pytest.raises(OverflowError, match="^xp.asarray: obj holds the int64 value -1, out of bounds for uint8"):
        xp.asarray(np.array([-1]), dtype=xp.uint8)
    np.testing.assert_array_equal(np.asarray(xp.asarray(np.array([2**31 - 1]), dtype=xp.int32)), [2**31 - 1])
