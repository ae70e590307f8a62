"""float64 where the default backend only emulates it (a TPU), simulated on the CPU.

XLA:TPU computes float64 with float32's exponent range (1e300 becomes inf) and, in its
transcendental functions, float32's accuracy; xp does not offer float64 and complex128 there, even
with JAX's 64-bit mode on (docs/accelerators.md). ``xp._dtypes.float64_emulated`` is what decides;
these tests make it say True and check that every part of xp follows.
"""

import jax
import numpy as np
import pytest

import xp
from xp import _dtypes as dt

pytestmark = pytest.mark.x64  # the policy only differs from the CPU's with the 64-bit mode on


BACKEND = jax.default_backend().upper()


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setattr(dt, "float64_emulated", lambda: True)


def test_the_inspection_api_reports_no_float64(emulated):
    info = xp.__array_namespace_info__()
    names = set(info.dtypes())
    assert {"float64", "complex128"}.isdisjoint(names)
    assert {"int64", "uint64", "float32", "complex64"} <= names  # exact there
    assert info.default_dtypes() == {
        "real floating": xp.float32,
        "complex floating": xp.complex64,
        "integral": xp.int64,
        "indexing": xp.int64,
    }
    assert set(info.dtypes(kind="real floating")) == {"float32"}


def test_defaults_and_promotions_stay_float32(emulated):
    assert xp.asarray(1.0).dtype == xp.float32
    assert xp.ones(2).dtype == xp.float32
    assert xp.asarray(1j).dtype == xp.complex64
    assert xp.asarray(1).dtype == xp.int64
    assert (xp.asarray([1, 2]) + xp.asarray([0.5, 1.5])).dtype == xp.float32
    assert xp.mean(xp.asarray([1.0, 2.0])).dtype == xp.float32


@pytest.mark.parametrize(
    ("call", "function"),
    [
        (lambda: xp.asarray(1.0, dtype=xp.float64), "xp.asarray"),
        (lambda: xp.ones(2, dtype=xp.complex128), "xp.ones"),
        (lambda: xp.astype(xp.ones(2), xp.float64), "xp.astype"),
        (lambda: xp.asarray(np.ones(2)), "xp.asarray"),
    ],
)
def test_asking_for_float64_is_a_clear_error_naming_function_dtype_and_device(emulated, call, function):
    with pytest.raises(TypeError) as info:
        call()
    message = str(info.value)
    assert message.startswith(function)
    assert f"not available on {BACKEND}" in message  # (the simulated backend's name here: "CPU")
    assert "float32 with" not in message and ("float64" in message or "complex128" in message)
    assert "xp.narrow_64bit" in message


def test_narrowing_opt_in_gives_float32(emulated):
    with pytest.warns(xp.NarrowingWarning), xp.narrow_64bit():
        x = xp.asarray(np.array([0.5, 1e30]))
        y = xp.ones(2, dtype=xp.float64)
    assert x.dtype == xp.float32 and y.dtype == xp.float32
    assert np.asarray(x).tolist() == [0.5, np.float32(1e30)]


def test_a_finite_float64_value_float32_cannot_hold_is_an_error_not_infinity(emulated):
    with pytest.raises(OverflowError, match="out of range for float32"):
        xp.asarray(1e300)


def test_integers_keep_64_bits(emulated):
    big = 2**62 + 1
    x = xp.asarray([big]) * 1
    assert x.dtype == xp.int64 and int(x[0]) == big


@pytest.mark.cpu_only(reason="the control: the CPU computes IEEE float64, which a TPU only emulates")
def test_without_emulation_float64_is_there():
    assert not dt.float64_emulated()  # the CPU computes IEEE float64
    assert xp.asarray(1.0).dtype == xp.float64
    assert "float64" in xp.__array_namespace_info__().dtypes()


@pytest.mark.parametrize(
    ("call", "function"),
    [
        (lambda x: xp.linalg.svd(x), "xp.linalg.svd"),
        (lambda x: xp.linalg.svd(x, full_matrices=False), "xp.linalg.svd"),
        (lambda x: xp.linalg.pinv(x), "xp.linalg.pinv"),
    ],
)
def test_singular_vectors_are_a_clear_error_where_xla_aborts_compiling_them(emulated, call, function):
    # with the 64-bit mode on, XLA:TPU aborted the process compiling JAX's SVD with singular
    # vectors (float32 3 x 3, a 2 x 3 x 2 stack, jnp.linalg.pinv and lstsq alike); xp refuses
    # first, under jit too, and the singular values alone still compute
    x = xp.asarray(np.float32([[2.0, 1.0], [1.0, 3.0], [0.0, 1.0]]))
    for attempt in (lambda: call(x), lambda: jax.jit(lambda v: call(xp.asarray(v)))(x._value)):
        with pytest.raises(NotImplementedError) as info:
            attempt()
        message = str(info.value)
        assert message.startswith(function) and "float32" in message and f"on {BACKEND}" in message
        assert "JAX_ENABLE_X64=0" in message
    want = np.linalg.svd(np.float64([[2, 1], [1, 3], [0, 1]]), compute_uv=False)
    np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(x)), want, rtol=1e-6)
    assert int(xp.linalg.matrix_rank(x)) == 2


@pytest.mark.cpu_only(reason="the control: a backend that computes float64 (a TPU refuses, as the test above checks)")
def test_singular_vectors_compute_where_the_backend_computes_float64():
    x = xp.asarray(np.float32([[2.0, 1.0], [1.0, 3.0], [0.0, 1.0]]))
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u * s[None, :] @ vh), np.asarray(x), atol=1e-6)
