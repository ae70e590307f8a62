"""xp.fft: values against numpy.fft on generated arrays, the dtype rules, n/s/axes semantics,
norm, frequencies and shifts, behaviour under jit, vmap and grad, and the error messages.
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

import xp
from xp import _dtypes as dt

AVAILABLE = dt.available()
FLOATING = [d for d in AVAILABLE if d in dt.FLOATING]
REAL_FLOATING = [d for d in AVAILABLE if d in dt.REAL_FLOATING]
COMPLEX = [d for d in AVAILABLE if d in dt.COMPLEX_FLOATING]
INTEGER = [d for d in AVAILABLE if d in dt.INTEGER]
FLOAT, COMPLEX_DEFAULT = dt.default_float(), dt.default_complex()
NORMS = ["backward", "ortho", "forward"]

COMPLEX_INPUT = ["fft", "ifft", "irfft", "hfft"]
REAL_INPUT = ["rfft", "ihfft"]
HALF_INPUT = {"irfft", "hfft"}  # n is the output length; the input holds n // 2 + 1 terms


def real_of(dtype):
    return np.dtype(dt.REAL_OF[np.dtype(dtype)])


def complex_of(dtype):
    return np.dtype(dt.COMPLEX_OF[np.dtype(dtype)])


def result_dtype(name, dtype):
    """The standard's result dtype of transform ``name`` on ``dtype`` input (see xp.fft)."""
    if np.dtype(dtype).kind in "iu":
        dtype = FLOAT
    if name in ("irfft", "hfft", "irfftn"):
        return real_of(dtype)
    return complex_of(dtype)


def elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -4, 4)
    width = dtype.itemsize * 8 if dtype.kind == "f" else dtype.itemsize * 4
    part = st.floats(-1, 1, width=width)
    return part if dtype.kind == "f" else st.builds(complex, part, part)


def arrays(dtypes, min_side=1, max_side=5, max_dims=3):
    shapes = fixed_shapes.shapes(min_dims=1, max_dims=max_dims, min_side=min_side, max_side=max_side)
    return st.sampled_from(dtypes).flatmap(lambda d: hnp.arrays(d, shapes, elements=elements(d)))


def check(result, expected, dtype, size=1):
    """``result`` is an xp.Array of ``dtype`` matching ``expected``; float tolerance grows with
    the transform size (values are at most ``size`` in magnitude)."""
    assert isinstance(result, xp.Array)
    assert not result.jax.weak_type
    assert result.dtype == dtype, (result.dtype, dtype)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    eps = 1e-5 if np.dtype(dtype) in (dt.float32, dt.complex64) else 1e-12
    np.testing.assert_allclose(np.asarray(result), expected, rtol=eps * 10, atol=eps * 10 * max(size, 1))


def reference(x):
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


# --- one-dimensional transforms -------------------------------------------------------------


@given(
    name=st.sampled_from(COMPLEX_INPUT + REAL_INPUT),
    x=arrays(FLOATING + INTEGER[:2]),
    data=st.data(),
)
def test_one_dimensional_matches_numpy(name, x, data):
    if name in REAL_INPUT and x.dtype.kind == "c":
        x = x.real.copy()
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    size = x.shape[axis]
    default = 2 * (size - 1) if name in HALF_INPUT else size
    n = data.draw(st.none() | st.integers(1, 2 * size + 2), label="n") if default >= 1 else data.draw(st.integers(1, 4))
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    kwargs = {"axis": axis, "norm": norm} if n is None else {"n": n, "axis": axis, "norm": norm}
    result = getattr(xp.fft, name)(xp.asarray(x), **kwargs)
    expected = getattr(np.fft, name)(reference(x), **kwargs)
    check(result, expected, result_dtype(name, x.dtype), size=n or size)


@pytest.mark.slow
@pytest.mark.parametrize("name", COMPLEX_INPUT)
@pytest.mark.parametrize("dtype", FLOATING + INTEGER)
def test_complex_input_transforms_dtypes(name, dtype):
    x = xp.asarray(np.arange(6).astype(dtype))
    assert getattr(xp.fft, name)(x).dtype == result_dtype(name, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*REAL_INPUT, "rfftn"])
@pytest.mark.parametrize("dtype", REAL_FLOATING + INTEGER)
def test_real_input_transforms_dtypes(name, dtype):
    x = xp.asarray(np.arange(6).astype(dtype))
    assert getattr(xp.fft, name)(x).dtype == result_dtype(name, dtype)


@pytest.mark.parametrize("name", [*REAL_INPUT, "rfftn"])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_input_transforms_reject_complex(name, dtype):
    with pytest.raises(TypeError, match=rf"xp\.fft\.{name}: x must have a real floating-point dtype, got {dtype}"):
        getattr(xp.fft, name)(xp.asarray(np.ones(4, dtype)))


@pytest.mark.parametrize("name", [*COMPLEX_INPUT, *REAL_INPUT, "fftn", "ifftn", "rfftn", "irfftn"])
def test_bool_is_rejected(name):
    with pytest.raises(TypeError, match=rf"xp\.fft\.{name}: x must have a floating-point dtype, got bool"):
        getattr(xp.fft, name)(xp.asarray(np.ones(4, bool)))


@pytest.mark.slow
@given(x=arrays(REAL_FLOATING), data=st.data())
def test_round_trips(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    norm = data.draw(st.sampled_from(NORMS))
    value = xp.asarray(x)
    size = x.shape[axis]
    back = xp.fft.ifft(xp.fft.fft(value, axis=axis, norm=norm), axis=axis, norm=norm)
    check(back, x.astype(complex_of(x.dtype)), complex_of(x.dtype), size)
    real_back = xp.fft.irfft(xp.fft.rfft(value, axis=axis, norm=norm), n=size, axis=axis, norm=norm)
    check(real_back, x, x.dtype, size)
    hermitian_back = xp.fft.hfft(xp.fft.ihfft(value, axis=axis, norm=norm), n=size, axis=axis, norm=norm)
    check(hermitian_back, x, x.dtype, size)


def test_norm_scaling():
    x = xp.asarray(np.ones(4, FLOAT))
    # the zero frequencies are rounding errors of the twiddle factors: exactly 0 on the CPU, a few
    # epsilons on a TPU
    atol = 4 * float(np.finfo(FLOAT).eps)
    np.testing.assert_allclose(np.asarray(xp.fft.fft(x)), [4, 0, 0, 0], atol=4 * atol)
    np.testing.assert_allclose(np.asarray(xp.fft.fft(x, norm="ortho")), [2, 0, 0, 0], atol=2 * atol)
    np.testing.assert_allclose(np.asarray(xp.fft.fft(x, norm="forward")), [1, 0, 0, 0], atol=atol)
    np.testing.assert_allclose(np.asarray(xp.fft.ifft(x, norm="forward")), [4, 0, 0, 0], atol=4 * atol)


def test_n_pads_and_trims():
    x = np.arange(1.0, 5.0).astype(FLOAT)
    check(xp.fft.fft(xp.asarray(x), n=6), np.fft.fft(np.r_[x, 0, 0]), COMPLEX_DEFAULT, 6)
    check(xp.fft.fft(xp.asarray(x), n=2), np.fft.fft(x[:2]), COMPLEX_DEFAULT, 2)
    check(xp.fft.irfft(xp.asarray(x.astype(COMPLEX_DEFAULT)), n=3), np.fft.irfft(x[:2], n=3), FLOAT, 3)
    assert xp.fft.irfft(xp.asarray(x.astype(COMPLEX_DEFAULT))).shape == (6,)
    assert xp.fft.hfft(xp.asarray(x.astype(COMPLEX_DEFAULT)), n=7).shape == (7,)
    assert xp.fft.rfft(xp.asarray(x), n=7).shape == (4,)


# --- n-dimensional transforms ---------------------------------------------------------------


@st.composite
def s_and_axes(draw, x, half=False):
    """``s`` (None, or lengths with -1 for the default) and ``axes`` (None, or distinct axes,
    some negative). For irfftn (``half``), a last axis of size 1 needs an explicit length."""
    axes = draw(st.none() | st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True))
    chosen = list(range(x.ndim)) if axes is None else axes
    needs_s = half and x.shape[chosen[-1]] == 1
    if axes is not None:
        axes = [a - x.ndim if draw(st.booleans()) else a for a in axes]
    if not needs_s and draw(st.booleans()):
        return None, axes
    if axes is None:
        axes = chosen
    s = [draw(st.sampled_from([-1]) | st.integers(1, 2 * x.shape[a] + 2)) for a in chosen]
    if needs_s:
        s[-1] = draw(st.integers(1, 4))
    return tuple(s), axes


@given(name=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]), x=arrays(FLOATING, max_side=4), data=st.data())
def test_n_dimensional_matches_numpy(name, x, data):
    if name == "rfftn" and x.dtype.kind == "c":
        x = x.real.copy()
    s, axes = data.draw(s_and_axes(x, half=name == "irfftn"), label="s, axes")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    kwargs = {"s": s, "axes": axes, "norm": norm}
    result = getattr(xp.fft, name)(xp.asarray(x), **kwargs)
    np_axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    np_s = None
    if s is not None:
        np_s = list(s)
        for i, a in enumerate(np_axes):
            if np_s[i] == -1:
                last = name == "irfftn" and i == len(np_axes) - 1
                np_s[i] = 2 * (x.shape[a] - 1) if last else x.shape[a]
    expected = getattr(np.fft, name)(reference(x), s=np_s, axes=np_axes, norm=norm)
    check(result, expected, result_dtype(name, x.dtype), size=math.prod(expected.shape))


def test_n_dimensional_axes_may_be_negative_lists_or_tuples():
    x = np.arange(24.0).reshape(2, 3, 4).astype(FLOAT)
    expected = np.fft.fftn(x, axes=(2, 0))
    for axes in ([-1, 0], (2, -3), [2, 0]):
        check(xp.fft.fftn(xp.asarray(x), axes=axes), expected, COMPLEX_DEFAULT, 24)


def test_empty_axes():
    x = xp.asarray(np.arange(6.0).reshape(2, 3).astype(FLOAT))
    check(xp.fft.fftn(x, axes=()), np.arange(6.0).reshape(2, 3), COMPLEX_DEFAULT)
    with pytest.raises(ValueError, match=r"xp\.fft\.rfftn: axes must name at least one axis"):
        xp.fft.rfftn(x, axes=())


def test_more_than_three_axes():
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 3, 2)).astype(FLOAT)
    check(xp.fft.fftn(xp.asarray(x)), np.fft.fftn(x), COMPLEX_DEFAULT, x.size)
    check(xp.fft.irfftn(xp.asarray(x.astype(COMPLEX_DEFAULT))), np.fft.irfftn(x), FLOAT, x.size)


# --- frequencies and shifts -----------------------------------------------------------------


@given(n=st.integers(1, 40), d=st.floats(0.01, 10), dtype=st.sampled_from([None, *REAL_FLOATING]))
def test_frequencies(n, d, dtype):
    want = FLOAT if dtype is None else dtype
    check(xp.fft.fftfreq(n, d=d, dtype=dtype), np.fft.fftfreq(n, d), want, 1)
    check(xp.fft.rfftfreq(n, d=d, dtype=dtype), np.fft.rfftfreq(n, d), want, 1)


def test_frequencies_defaults_and_device():
    check(xp.fft.fftfreq(4), [0, 0.25, -0.5, -0.25], FLOAT)
    check(xp.fft.rfftfreq(5), [0, 0.2, 0.4], FLOAT)
    device = jax.devices()[0]
    assert xp.fft.fftfreq(4, device=device).device == device
    assert xp.fft.rfftfreq(4, device=device).device == device


def test_frequencies_under_jit():
    result = jax.jit(lambda: xp.fft.fftfreq(5, d=0.5))()
    check(result, np.fft.fftfreq(5, 0.5), FLOAT)


@given(x=arrays(AVAILABLE, min_side=1), data=st.data())
def test_shifts(x, data):
    axes = data.draw(
        st.none() | st.integers(-x.ndim, x.ndim - 1) | st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True)
    )
    shifted = xp.fft.fftshift(xp.asarray(x), axes=axes)
    assert shifted.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(shifted), np.fft.fftshift(x, axes=axes))
    back = xp.fft.ifftshift(shifted, axes=axes)
    np.testing.assert_array_equal(np.asarray(back), x)
    np.testing.assert_array_equal(
        np.asarray(xp.fft.ifftshift(xp.asarray(x), axes=axes)), np.fft.ifftshift(x, axes=axes)
    )


# --- jit, vmap, grad ------------------------------------------------------------------------


def test_jit_and_vmap():
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(FLOAT)
    value = xp.asarray(x)
    for name in ("fft", "rfft", "ihfft"):
        function = getattr(xp.fft, name)
        expected = getattr(np.fft, name)(x, n=6)
        check(jax.jit(lambda v, f=function: f(v, n=6))(value), expected, complex_of(FLOAT), 8)
        check(jax.vmap(lambda v, f=function: f(v, n=6))(value), expected, complex_of(FLOAT), 8)
    check(
        jax.jit(lambda v: xp.fft.rfftn(v, s=(3, 4), axes=(0, 1)))(value),
        np.fft.rfftn(x, s=(3, 4), axes=(0, 1)),
        complex_of(FLOAT),
        24,
    )
    check(jax.vmap(xp.fft.fftshift)(value), np.fft.fftshift(x, axes=1), FLOAT)


@pytest.mark.slow
def test_grad_parseval():
    """sum |fft(x)|^2 = n sum |x|^2, so its gradient is 2 n x."""
    x = np.random.default_rng(2).standard_normal(8).astype(FLOAT)
    grad = jax.grad(lambda v: jnp.sum(jnp.abs(xp.fft.fft(v).jax) ** 2))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(grad), 16 * x, rtol=1e-4)
    # rfft (half the spectrum, ortho): the same gradient as jax.numpy's
    grad = jax.grad(lambda v: jnp.sum(jnp.abs(xp.fft.rfft(v, norm="ortho").jax) ** 3))(xp.asarray(x))
    expected = jax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.rfft(v, norm="ortho")) ** 3))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(grad), np.asarray(expected), rtol=1e-5)


# --- names and errors -----------------------------------------------------------------------


def test_all_14_functions():
    names = {
        "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
        "fftfreq", "rfftfreq", "fftshift", "ifftshift",
    }  # fmt: skip
    assert set(xp.fft.__all__) == names
    for name in names:
        function = getattr(xp.fft, name)
        assert function.__name__ == name and function.__doc__


@pytest.mark.parametrize(
    ("call", "kind", "pattern"),
    [
        (lambda x: xp.fft.fft(x, n=0), ValueError, r"xp\.fft\.fft: n must be a positive integer, got 0"),
        (lambda x: xp.fft.fft(x, n=2.0), TypeError, r"xp\.fft\.fft: n must be an integer, got float"),
        (
            lambda x: xp.fft.fft(x, norm="none"),
            ValueError,
            r"xp\.fft\.fft: norm must be one of 'backward', 'ortho', 'forward', got 'none'",
        ),
        (lambda x: xp.fft.fft(x, norm=None), ValueError, r"xp\.fft\.fft: norm must be one of .*got None"),
        (
            lambda x: xp.fft.ifft(x, axis=2),
            IndexError,
            r"xp\.fft\.ifft: axis=2 is out of bounds for an array of 2 dimensions",
        ),
        (
            lambda x: xp.fft.irfft(x[:, :1]),
            ValueError,
            r"xp\.fft\.irfft: x has size 1 along axis 1, which gives the default length n=0",
        ),
        (lambda x: xp.fft.fftn(x, s=(2, 2)), ValueError, r"xp\.fft\.fftn: s needs axes"),
        (
            lambda x: xp.fft.fftn(x, s=(2,), axes=(0, 1)),
            ValueError,
            r"xp\.fft\.fftn: s and axes must have the same length, got 1 and 2",
        ),
        (
            lambda x: xp.fft.fftn(x, s=(0, 2), axes=(0, 1)),
            ValueError,
            r"xp\.fft\.fftn: s\[0\] must be a positive integer or -1",
        ),
        (lambda x: xp.fft.ifftn(x, axes=(1, -1)), ValueError, r"xp\.fft\.ifftn: axes has repeated axes"),
        (lambda x: xp.fft.rfftn(x, axes=3), TypeError, r"xp\.fft\.rfftn: axes must be a sequence of ints, got int"),
        (lambda x: xp.fft.fftshift(x, axes=(0, 5)), IndexError, r"xp\.fft\.fftshift: axes=5 is out of bounds"),
        (lambda x: xp.fft.fft([1.0, 2.0]), TypeError, r"xp\.fft\.fft: x must be an array, got list"),
    ],
)
def test_errors(call, kind, pattern):
    with pytest.raises(kind, match=pattern):
        call(xp.asarray(np.ones((3, 4), FLOAT)))


@pytest.mark.parametrize(
    ("call", "kind", "pattern"),
    [
        (lambda: xp.fft.fftfreq(0), ValueError, r"xp\.fft\.fftfreq: n must be a positive integer, got 0"),
        (lambda: xp.fft.rfftfreq(4, d=0), ValueError, r"xp\.fft\.rfftfreq: d must be a non-zero number, got 0"),
        (lambda: xp.fft.fftfreq(4, d="1"), TypeError, r"xp\.fft\.fftfreq: d must be a real Python scalar, got str"),
        (
            lambda: xp.fft.fftfreq(4, dtype=xp.complex64),
            TypeError,
            r"xp\.fft\.fftfreq: dtype must be a real floating-point dtype, got complex64",
        ),
        (
            lambda: xp.fft.rfftfreq(4, dtype=xp.int32),
            TypeError,
            r"xp\.fft\.rfftfreq: dtype must be a real floating-point dtype, got int32",
        ),
        (lambda: xp.fft.fftfreq(4, device="cpu"), TypeError, r"xp\.fft\.fftfreq: device must be a jax\.Device"),
    ],
)
def test_frequency_errors(call, kind, pattern):
    with pytest.raises(kind, match=pattern):
        call()
