"""JAX's 64-bit mode off (JAX's default): xp tells the truth and never truncates silently.

The mode is process-wide JAX configuration that xp never changes, so these run in the suite's
64-bit-off invocation, ``JAX_ENABLE_X64=0 python -m pytest`` (where every other module runs too).
"""

import jax
import numpy as np
import pytest

import xp

pytestmark = pytest.mark.x64_off


def test_only_32_bit_dtypes_are_available():
    assert not jax.config.jax_enable_x64
    info = xp.__array_namespace_info__()
    assert set(info.dtypes()) == {
        *("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"),
    }
    assert info.default_dtypes() == {
        "real floating": xp.float32,
        "complex floating": xp.complex64,
        "integral": xp.int32,
        "indexing": xp.int32,
    }


def test_python_scalars_and_sequences_take_the_32_bit_defaults():
    # the standard's rule, no truncation
    assert xp.asarray(1.5).dtype == xp.float32 and xp.asarray([1, 2]).dtype == xp.int32
    assert xp.asarray(1j).dtype == xp.complex64


@pytest.mark.parametrize(
    "request_64_bits",
    [
        lambda: xp.zeros(2, dtype=xp.float64),
        lambda: xp.asarray(np.ones(2)),
        lambda: xp.asarray(np.arange(3)),
        lambda: xp.astype(xp.ones(2), xp.int64),
        lambda: xp.asarray(1, dtype="int64"),
    ],
    ids=["zeros-float64", "asarray-float64-data", "asarray-int64-data", "astype-int64", "asarray-dtype-int64"],
)
def test_64_bit_data_or_requests_are_errors(request_64_bits):
    with pytest.raises(TypeError, match="64-bit mode"):
        request_64_bits()


def test_an_explicit_32_bit_conversion_is_allowed():
    assert xp.asarray(np.ones(2), dtype=xp.float32).dtype == xp.float32
    assert xp.asarray(np.arange(3), dtype=xp.int32).jax.tolist() == [0, 1, 2]


def test_integers_that_do_not_fit_overflow():
    with pytest.raises(OverflowError):
        xp.asarray([2**40])
    with pytest.raises(OverflowError):
        xp.asarray([1], dtype=xp.int32) + 2**40


def test_promotions_whose_result_needs_64_bits_are_errors():
    with pytest.raises(TypeError, match="64-bit mode"):
        xp.asarray([1], dtype=xp.int32) + xp.asarray([1], dtype=xp.uint32)


def test_dtype_queries_still_know_all_13_dtypes():
    assert xp.finfo(xp.float64).bits == 64 and xp.iinfo(xp.int64).bits == 64
    assert xp.can_cast(xp.int32, xp.int64) and xp.isdtype(xp.float64, "real floating")


def test_the_rest_works_as_with_64_bit_mode_on():
    x = xp.asarray([1.0, 2.0])
    assert (jax.jit(lambda v: v * 2 + 1)(x)).jax.tolist() == [3.0, 5.0]
