"""The opt-in to narrowing 64-bit requests to 32 bits while JAX's 64-bit mode is off.

``xp.narrow_64bit()`` (a context manager) and ``XP_NARROW_64BIT=1`` (the environment): requested
64-bit dtypes and 64-bit NumPy data become their 32-bit counterparts, each with an
``xp.NarrowingWarning`` naming the function and the parameter; integers that do not fit raise
OverflowError. Most tests need the mode off (``x64_off``: the suite's ``JAX_ENABLE_X64=0``
invocation); one checks that the opt-in changes nothing with the mode on (``x64``).
"""

import asyncio
import json
import subprocess
import threading
import warnings

import jax
import numpy as np
import pytest
from subprocess_env import failure, run_script, subprocess_env

import xp

x64_off = pytest.mark.x64_off
ON = r" \(xp\.narrow_64bit is on\)$"


@pytest.fixture(autouse=True)
def _no_environment_opt_in(monkeypatch):
    # the environment of the test run must not decide: the tests set it where they mean to
    monkeypatch.delenv("XP_NARROW_64BIT", raising=False)


def _set(x, value):
    x[0] = value
    return x


# Every entry point: (call, dtype of the result, the warning's message).
ENTRY_POINTS = {
    "zeros-dtype": (lambda: xp.zeros(2, dtype=xp.float64), xp.float32, r"^xp\.zeros: dtype is float64; narrowed to float32"),
    "full-dtype": (lambda: xp.full(2, 1.5, dtype=xp.float64), xp.float32, r"^xp\.full: dtype is float64; narrowed to float32"),
    "arange-dtype": (lambda: xp.arange(3, dtype=xp.int64), xp.int32, r"^xp\.arange: dtype is int64; narrowed to int32"),
    "linspace-dtype": (lambda: xp.linspace(0, 1, 3, dtype=xp.complex128), xp.complex64, r"^xp\.linspace: dtype is complex128; narrowed to complex64"),
    "asarray-dtype-name": (lambda: xp.asarray(1, dtype="uint64"), xp.uint32, r"^xp\.asarray: dtype is uint64; narrowed to uint32"),
    "asarray-float64": (lambda: xp.asarray(np.linspace(0, 1, 5)), xp.float32, r"^xp\.asarray: obj has dtype float64; narrowed to float32"),
    "asarray-int64": (lambda: xp.asarray(np.arange(3)), xp.int32, r"^xp\.asarray: obj has dtype int64; narrowed to int32"),
    "asarray-uint64": (lambda: xp.asarray(np.arange(3, dtype=np.uint64)), xp.uint32, r"^xp\.asarray: obj has dtype uint64; narrowed to uint32"),
    "asarray-complex128": (lambda: xp.asarray(np.array([1 + 2j])), xp.complex64, r"^xp\.asarray: obj has dtype complex128; narrowed to complex64"),
    "asarray-numpy-scalar": (lambda: xp.asarray(np.float64(0.1)), xp.float32, r"^xp\.asarray: obj has dtype float64; narrowed to float32"),
    "astype": (lambda: xp.astype(xp.ones(2), xp.int64), xp.int32, r"^xp\.astype: dtype is int64; narrowed to int32"),
    "add-numpy-scalar": (lambda: xp.add(xp.ones(2), np.float64(0.5)), xp.float32, r"^xp\.add: x2 has dtype float64; narrowed to float32"),
    "operator-numpy-array": (lambda: xp.ones(2) * np.ones(2), xp.float32, r"^xp\.multiply: x2 has dtype float64; narrowed to float32"),
    "mean-numpy-array": (lambda: xp.mean(np.ones(3)), xp.float32, r"^xp\.mean: x has dtype float64; narrowed to float32"),
    "take-indices": (lambda: xp.take(xp.ones(3), np.arange(2)), xp.float32, r"^xp\.take: indices has dtype int64; narrowed to int32"),
    "setitem-value": (lambda: _set(xp.zeros(2), np.float64(2.5)), xp.float32, r"^xp\.Array\.__setitem__: value has dtype float64; narrowed to float32"),
    "from_dlpack": (lambda: xp.from_dlpack(np.ones(2)), xp.float32, r"^xp\.from_dlpack: x has dtype float64; narrowed to float32"),
}  # fmt: skip


@x64_off
@pytest.mark.parametrize("call", [v[0] for v in ENTRY_POINTS.values()], ids=list(ENTRY_POINTS))
def test_by_default_a_64_bit_request_is_an_error_that_names_both_fixes(call):
    with pytest.raises(TypeError, match="64-bit mode") as error:
        call()
    message = str(error.value)
    assert message.startswith("xp.")  # the function, then the parameter
    assert "JAX_ENABLE_X64=1" in message and "jax.config.update('jax_enable_x64', True)" in message
    assert "xp.narrow_64bit()" in message and "XP_NARROW_64BIT=1" in message


@x64_off
@pytest.mark.parametrize(("call", "dtype", "message"), list(ENTRY_POINTS.values()), ids=list(ENTRY_POINTS))
def test_under_narrow_64bit_each_entry_point_narrows_with_a_warning(call, dtype, message):
    with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning, match=message + ON) as record:
        result = call()
    assert len(record) == 1
    assert result.dtype == dtype
    assert record[0].filename == __file__  # attributed to the caller of xp, not to xp itself


@x64_off
def test_narrowed_values_are_numpys_conversion():
    data = np.random.default_rng(0).normal(size=(3, 4)) * 1e3
    with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning):
        floats = xp.asarray(data)
        integers = xp.asarray(np.array([-(2**31), 0, 2**31 - 1]))
        complex_ = xp.asarray(data + 1j * data)
        special = xp.asarray(np.array([np.inf, -np.inf, np.nan, 1e-300]))  # not finite, or underflowing
        added = xp.ones(3) + np.float64(1 / 3)
    np.testing.assert_array_equal(np.asarray(floats), data.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(integers), [-(2**31), 0, 2**31 - 1])
    np.testing.assert_array_equal(np.asarray(complex_), (data + 1j * data).astype(np.complex64))
    np.testing.assert_array_equal(np.asarray(special), [np.inf, -np.inf, np.nan, 0.0])
    np.testing.assert_array_equal(np.asarray(added), np.float32(1) + np.float32(1 / 3))


@x64_off
def test_result_type_narrows_64_bit_dtype_arguments_first():
    assert xp.result_type(xp.float64, xp.float32) == xp.float64  # without the opt-in: the exact answer
    message = r"^xp\.result_type: arrays_and_dtypes\[0\] is int64; narrowed to int32" + ON
    with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning, match=message):
        assert xp.result_type(xp.int64, xp.int16) == xp.int32  # as for the arrays a request gives
    with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning, match=r"arrays_and_dtypes\[1\] has dtype float64"):
        assert xp.result_type(xp.float32, np.ones(2), 1) == xp.float32


@x64_off
def test_dtype_limits_describe_what_a_64_bit_request_gives():
    with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning, match=r"^xp\.finfo: type is float64; narrowed"):
        info = xp.finfo(xp.float64)
    assert info.bits == 32 and info.eps == float(np.finfo(np.float32).eps) and info.dtype == xp.float32
    with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning, match=r"^xp\.iinfo: type is int64; narrowed"):
        assert xp.iinfo(xp.int64).max == 2**31 - 1
    # without the opt-in they describe the 64-bit dtypes, as before
    assert xp.finfo(xp.float64).bits == 64 and xp.iinfo(xp.uint64).max == 2**64 - 1


@x64_off
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: xp.asarray(np.array([0, 2**31])), r"^xp\.asarray: obj holds the int64 value 2147483648, out of bounds for int32"),
        (lambda: xp.asarray(np.array([-(2**31) - 1])), r"^xp\.asarray: obj holds the int64 value -2147483649, out of bounds"),
        (lambda: xp.asarray(np.array([2**32], dtype=np.uint64)), r"^xp\.asarray: obj holds the uint64 value 4294967296, out of bounds for uint32"),
        (lambda: xp.asarray(np.array([2**40]), dtype=xp.int64), r"^xp\.asarray: obj holds the int64 value 1099511627776"),
        (lambda: xp.add(xp.ones(1, dtype=xp.int32), np.int64(2**40)), r"^xp\.add: x2 holds the int64 value 1099511627776"),
        (lambda: xp.astype(xp.asarray([2**31], dtype=xp.uint32), xp.int64), r"^xp\.astype: x holds the uint32 value 2147483648, out of bounds for int32"),
        (lambda: xp.asarray(np.array([1.0, 1e300])), r"^xp\.asarray: obj holds the float64 value 1e\+300, beyond the range of float32"),
        (lambda: xp.asarray(np.array([1e39j])), r"^xp\.asarray: obj holds the complex128 value 1e\+39j, beyond the range of complex64"),
    ],
    ids=["int64-high", "int64-low", "uint64", "dtype-int64", "add-scalar", "astype-uint32", "float64", "complex128"],
)  # fmt: skip
def test_values_that_do_not_fit_raise_overflow_error(call, message):
    with xp.narrow_64bit(), warnings.catch_warnings():
        warnings.simplefilter("ignore", xp.NarrowingWarning)
        with pytest.raises(OverflowError, match=message):
            call()


@x64_off
def test_a_traced_uint32_to_narrowed_int64_cannot_be_checked_so_it_is_an_error():
    x = xp.asarray([1, 2], dtype=xp.uint32)
    with xp.narrow_64bit(), warnings.catch_warnings():
        warnings.simplefilter("ignore", xp.NarrowingWarning)
        with pytest.raises(TypeError, match=r"^xp\.astype: dtype is int64, narrowed to int32.*x is traced"):
            jax.jit(lambda v: xp.astype(v, xp.int64))(x)
        # other narrowed requests work under jax.jit (fixed when traced, as any Python state)
        assert jax.jit(lambda v: xp.astype(v, xp.float64))(x).dtype == xp.float32


@x64_off
def test_the_predicates_and_the_info_namespace_stay_exact():
    with xp.narrow_64bit(), warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: nothing is narrowed
        assert not xp.isdtype(xp.float64, xp.float32) and xp.isdtype(xp.int64, "signed integer")
        assert xp.can_cast(xp.int32, xp.int64) and not xp.can_cast(xp.float64, xp.float32)
        info = xp.__array_namespace_info__()
        assert not {"float64", "int64", "uint64", "complex128"} & set(info.dtypes())
        assert info.default_dtypes()["real floating"] == xp.float32
        assert info.default_dtypes()["integral"] == xp.int32


@x64_off
def test_promotions_are_not_narrowed():
    # int32 would not hold every uint32 value: cast one operand
    with xp.narrow_64bit(), pytest.raises(TypeError, match="narrowing does not apply to promotions"):
        xp.asarray([1], dtype=xp.int32) + xp.asarray([1], dtype=xp.uint32)


@x64_off
def test_blocks_nest_and_restore_what_they_found():
    def narrows():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", xp.NarrowingWarning)
                return xp.zeros(1, dtype=xp.float64).dtype == xp.float32
        except TypeError:
            return False

    assert not narrows()
    with xp.narrow_64bit():
        assert narrows()
        with xp.narrow_64bit(False):
            assert not narrows()
            with xp.narrow_64bit():
                assert narrows()
            assert not narrows()
        assert narrows()
    assert not narrows()
    with pytest.raises(RuntimeError), xp.narrow_64bit():
        raise RuntimeError  # an exception leaving the block restores too
    assert not narrows()

    @xp.narrow_64bit()
    def decorated():
        return narrows()

    assert decorated() and not narrows()


@x64_off
def test_the_state_belongs_to_a_thread_or_a_task():
    found = {}

    def in_thread():
        try:
            xp.zeros(1, dtype=xp.float64)
            found["thread"] = "narrowed"
        except TypeError:
            found["thread"] = "error"

    with xp.narrow_64bit():
        thread = threading.Thread(target=in_thread)
        thread.start()
        thread.join()
    assert found["thread"] == "error"  # a thread does not inherit the block of the one that started it

    async def narrowing(started):
        with xp.narrow_64bit(), warnings.catch_warnings():
            warnings.simplefilter("ignore", xp.NarrowingWarning)
            started.set()
            await asyncio.sleep(0.01)  # the other task runs meanwhile
            return xp.zeros(1, dtype=xp.float64).dtype

    async def strict(started):
        await started.wait()
        with pytest.raises(TypeError, match="64-bit mode"):
            xp.zeros(1, dtype=xp.float64)

    async def both():
        started = asyncio.Event()
        return await asyncio.gather(narrowing(started), strict(started))

    assert asyncio.run(both())[0] == xp.float32


@x64_off
def test_a_warning_is_shown_once_per_calling_line():
    with xp.narrow_64bit(), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")  # Python's default: once per location and message
        for _ in range(3):
            xp.asarray(np.ones(2))
    assert len(record) == 1 and record[0].category is xp.NarrowingWarning


def test_enabled_must_be_a_bool():
    with pytest.raises(TypeError, match=r"^xp\.narrow_64bit: enabled must be a bool, got int 1$"), xp.narrow_64bit(1):
        pass


@x64_off
def test_the_environment_variable_turns_it_on_at_call_time(monkeypatch):
    monkeypatch.setenv("XP_NARROW_64BIT", "1")
    with pytest.warns(
        xp.NarrowingWarning, match=r"^xp\.asarray: obj has dtype float64; narrowed to float32 \(XP_NARROW_64BIT=1\)$"
    ):
        assert xp.asarray(np.ones(2)).dtype == xp.float32
    with xp.narrow_64bit(False), pytest.raises(TypeError, match="64-bit mode"):
        xp.asarray(np.ones(2))  # a block decides over the environment
    monkeypatch.setenv("XP_NARROW_64BIT", "0")
    with pytest.raises(TypeError, match="64-bit mode"):
        xp.asarray(np.ones(2))
    monkeypatch.setenv("XP_NARROW_64BIT", "maybe")
    with pytest.raises(
        ValueError, match=r"^xp\.asarray: the environment variable XP_NARROW_64BIT must be 1 or 0.*'maybe'"
    ):
        xp.asarray(np.ones(2))


def _run(script: str, **environment: str) -> subprocess.CompletedProcess[str]:
    # (the fixture removed XP_NARROW_64BIT; the child is on the CPU where this process's backend is
    # not: narrowing is the same on every backend)
    return run_script(script, env=dict(subprocess_env(), JAX_ENABLE_X64="0", **environment))


@pytest.mark.integration
@x64_off
def test_the_environment_variable_in_a_fresh_process():
    out = _run("narrowing_environment_variable", XP_NARROW_64BIT="1")
    assert out.returncode == 0, failure(out)
    lines = out.stdout.splitlines()
    assert lines[0] == "int32 float32"
    assert lines[1:] == [
        "xp.asarray: obj has dtype int64; narrowed to int32 (XP_NARROW_64BIT=1)",
        "xp.zeros: dtype is float64; narrowed to float32 (XP_NARROW_64BIT=1)",
    ]


@pytest.mark.integration
@x64_off
def test_a_client_that_hard_codes_64_bit_dtypes_runs_under_the_opt_in():
    # SciPy's describe asks for dtype=xp.int64 (its count of observations); SCIPY_ARRAY_API must be
    # set before SciPy is imported, hence a fresh process
    pytest.importorskip("scipy")
    out = _run("narrowing_scipy_client", SCIPY_ARRAY_API="1")
    assert out.returncode == 0, failure(out)
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["default"].startswith("xp.asarray: dtype=int64: int64 needs JAX's 64-bit mode")
    assert "xp.narrow_64bit()" in result["default"] and "JAX_ENABLE_X64=1" in result["default"]
    assert result["warnings"] == ["xp.asarray: dtype is int64; narrowed to int32 (xp.narrow_64bit is on)"]
    assert result["nobs"] == [50, 50] and result["dtypes"] == ["float32"]
    for got, expected in zip(result["got"], result["expected"], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.x64
def test_with_64_bit_mode_on_the_opt_in_changes_nothing():
    with xp.narrow_64bit(), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert xp.zeros(2, dtype=xp.float64).dtype == xp.float64
        assert xp.asarray(np.arange(3)).dtype == xp.int64
        assert xp.asarray(np.array([2**40])).jax.tolist() == [2**40]
        assert xp.astype(xp.ones(2), xp.complex128).dtype == xp.complex128
        assert xp.result_type(xp.float64, xp.float32) == xp.float64
        assert xp.finfo(xp.float64).bits == 64
