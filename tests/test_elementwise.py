"""Element-wise functions: values against NumPy, dtype rules, scalars, errors, transformations."""

import cmath

import fixed_shapes
import jax
import jax.numpy as jnp
import numpy as np
import platform_facts
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax import lax

import xp
from xp import _elementwise

DEFAULT_FLOAT = xp.__array_namespace_info__().default_dtypes()["real floating"]
DEFAULT_COMPLEX = xp.__array_namespace_info__().default_dtypes()["complex floating"]

# NumPy's function for each xp function, where the names differ.
NUMPY = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
    "atanh": np.arctanh, "atan2": np.arctan2, "bitwise_invert": np.invert, "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift, "pow": np.power, "conj": np.conjugate,
    "reciprocal": lambda x: 1 / x,
}  # fmt: skip

# Inputs inside each function's domain (outside it the result is NaN for both, which is fine,
# but in-domain values test more).
DOMAIN = {"acos": (-1, 1), "asin": (-1, 1), "atanh": (-0.75, 0.75), "acosh": (1, 50), "log": (0.125, 50),
          "log2": (0.125, 50), "log10": (0.125, 50), "log1p": (-0.75, 50), "sqrt": (0, 50)}  # fmt: skip


def _reference(name):
    """NumPy's function of that name, quiet where its value is a special one (log(0), 1/0, a
    negative base's fractional power): the test compares those values, not NumPy's warnings."""
    function = NUMPY.get(name) or getattr(np, name)

    def quiet(*args):
        with np.errstate(divide="ignore", invalid="ignore"):
            return function(*args)

    return quiet


def _values(name, dtype):
    low, high = DOMAIN.get(name, (-20, 20))
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(int(low), int(info.min)), min(int(high), int(info.max)))
    return st.floats(low, high, width=32, allow_subnormal=False)


FLOAT_UNARY = [op.name for op in _elementwise.UNARY if op.lift]


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", FLOAT_UNARY)
@given(data=st.data())
def test_floating_unary_functions_match_numpy(name, data):
    a = data.draw(hnp.arrays(np.float64, fixed_shapes.sides(0, 6), elements=_values(name, np.float64)))
    out = getattr(xp, name)(xp.asarray(a))
    assert out.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(out), _reference(name)(a), rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", FLOAT_UNARY)
@given(data=st.data())
def test_floating_unary_functions_on_complex_match_numpy(name, data):
    if name in ("log1p",):  # NumPy's complex log1p loses precision near 0; compare loosely
        rtol = 1e-6
    else:
        rtol = 1e-9
    part = st.floats(-3, 3, allow_subnormal=False)  # XLA flushes subnormals to zero
    a = data.draw(hnp.arrays(np.complex128, fixed_shapes.sides(0, 5), elements=st.builds(complex, part, part)))
    out = getattr(xp, name)(xp.asarray(a))
    assert out.dtype == xp.complex128
    np.testing.assert_allclose(np.asarray(out), _reference(name)(a), rtol=rtol, atol=1e-9)


@pytest.mark.x64
@pytest.mark.parametrize(("dtype", "smallest"), [(np.complex128, -300), (np.complex64, -37)])
@given(data=st.data())
def test_log1p_of_complex_near_minus_one_keeps_the_modulus(dtype, smallest, data):
    # log1p(z) = log|1 + z| + arg(1 + z) j. Near z = -1, XLA squared imag(z), which underflows:
    # log1p(-1 + 1e-200j) was -inf + pi/2 j, not log(1e-200) + pi/2 j. Python's cmath.log of 1 + z
    # (exact in float64 here: real(z) is within a factor of 2 of -1) is the reference.
    exponent = data.draw(st.floats(smallest, np.log10(0.45)), label="log10 |1 + z|")
    angle = data.draw(st.floats(-np.pi, np.pi), label="arg(1 + z)")
    z = np.asarray(-1 + 10**exponent * complex(np.cos(angle), np.sin(angle)), dtype=dtype)
    shifted = complex(float(z.real) + 1, float(z.imag))
    if abs(shifted) < np.finfo(dtype).tiny:  # XLA flushes subnormal inputs to zero
        return
    want = cmath.log(shifted)
    got = complex(np.asarray(xp.log1p(xp.asarray(z))))
    eps = float(np.finfo(dtype).eps)
    assert abs(got.real - want.real) <= 4 * eps * abs(want.real), (z, got, want)
    assert abs(got.imag - want.imag) <= 4 * eps * max(abs(want.imag), 1e-300), (z, got, want)


@pytest.mark.x64
def test_log1p_of_complex_near_minus_one_examples():
    z = xp.asarray(np.array([-1 + 1e-200j, -1 - 1e-300j, -1 + 1e-10j], dtype=np.complex128))
    want = [cmath.log(1e-200j), cmath.log(-1e-300j), cmath.log(1e-10j)]
    np.testing.assert_allclose(np.asarray(xp.log1p(z)), want, rtol=1e-15)
    # the standard's special case is kept: -1 + 0j gives -infinity + 0j
    assert complex(np.asarray(xp.log1p(xp.asarray(np.complex128(-1 + 0j))))) == complex(-np.inf, 0)
    # and the derivative is 1 / (1 + z) there, in both directions (not NaN from the rescaling)
    for point in (-1 + 1e-200j, -0.8 - 0.2j):
        for direction in (1, 1j):
            args = (xp.asarray(np.complex128(point)),), (xp.asarray(np.complex128(direction)),)
            _, tangent = jax.jvp(xp.log1p, *args)
            np.testing.assert_allclose(complex(np.asarray(tangent)), direction / (1 + point), rtol=1e-15)


@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_floating_functions_compute_integers_in_the_default_float(name):
    out = getattr(xp, name)(xp.asarray([1, 2], dtype=xp.int16))
    assert out.dtype == DEFAULT_FLOAT


@pytest.mark.slow
@pytest.mark.parametrize("name", ["abs", "negative", "positive", "square", "sign", "ceil", "floor", "trunc", "round"])
@pytest.mark.parametrize(
    "dtype", ["int8", "int32", "uint16", "float32", pytest.param("float64", marks=pytest.mark.x64)]
)
@given(data=st.data())
def test_numeric_unary_functions_keep_dtype(name, dtype, data):
    a = data.draw(hnp.arrays(dtype, fixed_shapes.sides(0, 6), elements=_values(name, dtype)))
    if name in ("negative", "abs") and dtype.startswith("u"):
        a = a // 2
    out = getattr(xp, name)(xp.asarray(a))
    assert out.dtype == getattr(xp, dtype)
    expected = _reference(name)(a)
    np.testing.assert_allclose(np.asarray(out), expected.astype(dtype), rtol=1e-6)


def test_abs_of_complex_is_real():
    out = xp.abs(xp.asarray([3 + 4j], dtype=xp.complex64))
    assert out.dtype == xp.float32 and out.jax.tolist() == [5.0]
    assert xp.real(xp.asarray([1 + 2j])).jax.tolist() == [1.0]
    assert xp.imag(xp.asarray([1 + 2j])).jax.tolist() == [2.0]
    assert xp.imag(xp.asarray([1.0])).jax.tolist() == [0.0]


BINARY_REAL = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "atan2", "copysign", "hypot",
               "logaddexp", "nextafter", "pow", "floor_divide", "remainder"]  # fmt: skip


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", BINARY_REAL)
@given(data=st.data())
def test_binary_functions_match_numpy(name, data):
    shape = data.draw(st.sampled_from([(), (3,), (2, 3)]))
    # XLA on CPU flushes subnormal inputs of some operations to zero (floor(-5e-324) is -0.0)
    a = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-10, 10, allow_subnormal=False)))
    b = data.draw(hnp.arrays(np.float64, (3,) if shape else (), elements=st.floats(0.5, 4)))
    out = getattr(xp, name)(xp.asarray(a), xp.asarray(b))
    expected = _reference(name)(a, b)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
@given(a=hnp.arrays(np.int16, 5, elements=st.integers(-3, 3)), b=hnp.arrays(np.int16, 5, elements=st.integers(-3, 3)))
def test_comparisons(name, a, b):
    out = getattr(xp, name)(xp.asarray(a), xp.asarray(b))
    assert out.dtype == xp.bool
    assert np.array_equal(np.asarray(out), getattr(np, name)(a, b))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_functions(name):
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert np.array_equal(np.asarray(getattr(xp, name)(xp.asarray(a), xp.asarray(b))), getattr(np, name)(a, b))
    assert xp.logical_not(xp.asarray([True, False])).jax.tolist() == [False, True]


@given(
    a=hnp.arrays(np.int32, 6, elements=st.integers(-100, 100)), b=hnp.arrays(np.int32, 6, elements=st.integers(1, 9))
)
def test_integer_division_and_remainder_match_python(a, b):
    assert np.array_equal(np.asarray(xp.floor_divide(xp.asarray(a), xp.asarray(b))), a // b)
    assert np.array_equal(np.asarray(xp.remainder(xp.asarray(a), xp.asarray(b))), a % b)


@pytest.mark.x64
@pytest.mark.parametrize(("dtype", "digits"), [(np.float64, 53), (np.float32, 24)])
@given(data=st.data())
def test_floor_division_of_floats_matches_python(dtype, digits, data):
    # NumPy's float floor division is CPython's (the remainder-based quotient). Quotients up to
    # past 2**digits, where the remainder-based quotient rounds to odd multiples of 1/2 (between
    # 2**(digits - 2) and 2**(digits - 1)) and jax.numpy's half-away rounding gave one too many.
    b = data.draw(hnp.arrays(dtype, 32, elements=st.floats(0.5, 4, width=np.finfo(dtype).bits)), label="b")
    band = st.floats(digits - 2, digits - 1)  # (where the rounded quotients are multiples of 1/2)
    scale = data.draw(hnp.arrays(np.float64, 32, elements=st.floats(-3, digits + 3) | band), label="log2 |a / b|")
    signs = data.draw(hnp.arrays(np.int8, (2, 32), elements=st.sampled_from([-1, 1])), label="signs")
    a = (signs[0] * 2.0**scale * b).astype(dtype)
    b = (signs[1] * b).astype(dtype)
    got = np.asarray(xp.floor_divide(xp.asarray(a), xp.asarray(b)))
    assert np.array_equal(got, np.floor_divide(a, b)), (a, b, got)


@pytest.mark.x64
def test_floor_division_is_never_above_the_quotient():
    # jax.numpy: 3333333333333334.0 and 8137140.0, both above the quotient
    a = np.array([-1e16, 5.75e16]), np.array([2.03116e07], np.float32)
    b = np.array([-3.0, -3.0]), np.array([2.4961598], np.float32)
    for x1, x2 in zip(a, b, strict=True):
        got = np.asarray(xp.floor_divide(xp.asarray(x1), xp.asarray(x2)))
        assert np.array_equal(got, [float(p) // float(q) for p, q in zip(x1, x2, strict=True)]), got
        assert all(g <= float(p) / float(q) for g, p, q in zip(got, x1, x2, strict=True))
    # operands of different shapes broadcast
    got = xp.floor_divide(xp.asarray(np.array([[-1e16], [7.0]])), xp.asarray(np.array([-3.0, 2.0])))
    assert np.array_equal(np.asarray(got), [[3333333333333333.0, -5e15], [-3.0, 3.0]])


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "uint32"])
def test_integer_division_by_zero_is_zero_as_in_numpy(dtype):
    # the standard leaves it to the library; jax.numpy gave -2 (-1 for 0 // 0), or the largest
    # unsigned value
    values = [7, 0, -7] if dtype.startswith("int") else [7, 0, 200]
    x1 = xp.asarray(values, dtype=getattr(xp, dtype))
    x2 = xp.asarray([0, 0, 0], dtype=getattr(xp, dtype))
    with np.errstate(divide="ignore"):
        want_quotient = np.floor_divide(np.asarray(values, dtype), np.zeros(3, dtype))
        want_remainder = np.remainder(np.asarray(values, dtype), np.zeros(3, dtype))
    assert want_quotient.tolist() == want_remainder.tolist() == [0, 0, 0]
    for quotient, remainder in [(xp.floor_divide(x1, x2), xp.remainder(x1, x2)), (x1 // x2, x1 % x2),
                                jax.jit(lambda a, b: (a // b, a % b))(x1, x2)]:  # fmt: skip
        assert quotient.jax.tolist() == [0, 0, 0] and remainder.jax.tolist() == [0, 0, 0]
    # a zero divisor among others leaves the other quotients as they were
    mixed = xp.floor_divide(x1, xp.asarray([2, 0, 3], dtype=getattr(xp, dtype)))
    assert mixed.jax.tolist() == (np.asarray(values, dtype) // np.asarray([2, 1, 3], dtype) * [1, 0, 1]).tolist()


@pytest.mark.x64
def test_category_errors_name_function_parameter_and_dtype():
    i = xp.asarray([1, 2])
    f = xp.asarray([1.0])
    with pytest.raises(TypeError, match="xp.bitwise_and: x1 must have an integer or boolean dtype, got float64"):
        xp.bitwise_and(f, i)
    with pytest.raises(TypeError, match="xp.atan2: x2 must have a real-valued floating-point dtype, got complex128"):
        xp.atan2(f, xp.asarray([1j]))
    with pytest.raises(TypeError, match="xp.add: x1 must have a numeric dtype, got bool"):
        xp.add(xp.asarray([True]), i)
    with pytest.raises(TypeError, match="xp.bitwise_and: x2 is a Python float"):
        xp.bitwise_and(i, 1.5)
    with pytest.raises(ValueError, match=r"xp.add: x1 and x2 cannot be broadcast together: shapes \(2,\) and \(3,\)"):
        xp.add(i, xp.asarray([1, 2, 3]))
    with pytest.raises(TypeError, match="xp.sin: x must be an array, got str"):
        xp.sin("1")
    with pytest.raises(TypeError, match="lists and tuples are not arrays"):
        xp.sin([1.0])


def test_python_scalars_on_either_side():
    x = xp.asarray([1.0, 2.0], dtype=xp.float32)
    assert xp.subtract(10, x).jax.tolist() == [9.0, 8.0]
    assert xp.subtract(x, 10).dtype == xp.float32
    assert xp.pow(2, xp.asarray([3], dtype=xp.int8)).dtype == xp.int8
    assert xp.add(1, 2).dtype == xp.__array_namespace_info__().default_dtypes()["integral"]


@pytest.mark.x64
@given(
    hnp.arrays(np.float64, 4, elements=st.floats(-5, 5, allow_subnormal=False)),
    st.floats(-2, 0, allow_subnormal=False),
    st.floats(0, 2, allow_subnormal=False),
)
def test_clip(a, low, high):
    out = xp.clip(xp.asarray(a), low, high)
    assert np.array_equal(np.asarray(out), np.clip(a, low, high))
    assert xp.clip(xp.asarray(a), max=high).dtype == xp.float64
    assert xp.clip(xp.asarray(a)).jax.tolist() == list(a)


@pytest.mark.x64
def test_clip_rules():
    x = xp.asarray([1, 5, 9], dtype=xp.int8)
    assert xp.clip(x, 2, 6).jax.tolist() == [2, 5, 6]
    assert xp.clip(x, xp.asarray([0, 6, 0], dtype=xp.int8)).jax.tolist() == [1, 6, 9]
    nan = float("nan")
    assert np.isnan(np.asarray(xp.clip(xp.asarray([1.0]), nan, 2.0))).all()
    with pytest.raises(TypeError, match="xp.clip: x must have a real-valued dtype, got complex128"):
        xp.clip(xp.asarray([1j]), 0, 1)


def test_same_jaxpr_as_jax_numpy():
    """A jitted xp function traces to the jaxpr of its jax.numpy twin (explicit dtypes), whose
    float32 ``exp`` asks for XLA's most accurate implementation (xp/_float32_accuracy.py)."""

    def with_xp(x, y):
        return xp.sum(xp.exp(x) * y + 1.0, axis=0) if hasattr(xp, "sum") else xp.exp(x) * y + 1.0

    def with_jnp(x, y):
        accurate_exp = lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST)
        return jnp.sum(accurate_exp * y + jnp.float32(1.0), axis=0, dtype=jnp.float32)

    x = jnp.ones((3, 4), jnp.float32)
    y = jnp.ones((4,), jnp.float32)
    ours = jax.make_jaxpr(lambda a, b: with_xp(xp.asarray(a), xp.asarray(b)).jax)(x, y)
    theirs = jax.make_jaxpr(with_jnp)(x, y)
    assert str(ours) == str(theirs)


@pytest.mark.x64
def test_vmap_and_grad_through_elementwise():
    x = xp.asarray(np.linspace(0.1, 1.0, 6).reshape(2, 3))
    out = jax.vmap(lambda row: xp.log(row) + xp.sqrt(row))(x)
    np.testing.assert_allclose(np.asarray(out), np.log(np.asarray(x)) + np.sqrt(np.asarray(x)))
    g = jax.grad(lambda v: xp.tanh(v).jax)(xp.asarray(0.5))
    np.testing.assert_allclose(float(g), 1 - np.tanh(0.5) ** 2)


COMPLEX_TWINS = {
    "exp": jnp.exp, "expm1": jnp.expm1, "log": jnp.log, "log1p": jnp.log1p, "log2": jnp.log2, "log10": jnp.log10,
    "sinh": jnp.sinh, "cosh": jnp.cosh, "tanh": jnp.tanh, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan,
    "asinh": jnp.arcsinh, "acosh": jnp.arccosh, "atanh": jnp.arctanh, "asin": jnp.arcsin, "acos": jnp.arccos,
    "atan": jnp.arctan,
}  # fmt: skip


def _on_real_axis_beyond_one(p):
    return p.imag == 0 and abs(p.real) > 1


BRANCH_CUTS = {
    "log": lambda p: p.imag == 0 and p.real < 0, "log2": lambda p: p.imag == 0 and p.real < 0,
    "log10": lambda p: p.imag == 0 and p.real < 0, "log1p": lambda p: p.imag == 0 and p.real < -1,
    "acosh": lambda p: p.imag == 0 and p.real < 1, "asin": _on_real_axis_beyond_one,
    "acos": _on_real_axis_beyond_one, "atanh": _on_real_axis_beyond_one,
    "asinh": lambda p: p.real == 0 and abs(p.imag) > 1, "atan": lambda p: p.real == 0 and abs(p.imag) > 1,
}  # fmt: skip
"""Where each function of COMPLEX_TWINS has its branch cuts (the standard's)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", COMPLEX_TWINS)
def test_complex_derivatives_at_points_the_special_cases_touch(name):
    # the special cases fix values on the axes and at 0 with `where`s, whose own derivatives were
    # the derivatives there (exp(0.5 + 0j) along the imaginary axis gave 1j, not 1.65j): xp's are
    # jax.numpy's, on both sides of a signed zero
    points = [0.5 + 0j, complex(0.5, -0.0), -1.5 + 0j, 2.0 + 0j, 0.5j, complex(-0.0, 0.7), 0.3 + 0.2j]
    if not platform_facts.DERIVATIVE_SIDE_ON_BRANCH_CUTS:
        points = [p for p in points if not BRANCH_CUTS.get(name, lambda p: False)(p)]
    for dtype in (xp.complex64, DEFAULT_COMPLEX):
        z = jnp.asarray(points, dtype)
        for direction in (1.0, 1j):
            dz = jnp.full(z.shape, direction, dtype)
            _, ours = jax.jvp(lambda v: getattr(xp, name)(xp.asarray(v)).jax, (z,), (dz,))
            if name == "acosh":  # (jax.numpy's has the wrong sign where Re z < 0: the next test)
                zz = np.asarray(z, np.complex128)
                theirs = np.asarray(dz) / (np.sqrt(zz - 1) * np.sqrt(zz + 1))
            else:
                _, theirs = jax.jvp(COMPLEX_TWINS[name], (z,), (dz,))
            finite = np.isfinite(np.asarray(theirs))
            np.testing.assert_allclose(np.asarray(ours)[finite], np.asarray(theirs)[finite],
                                       rtol=platform_facts.COMPLEX_TRANSCENDENTAL_RTOL, atol=1e-6)  # fmt: skip


def test_complex_acosh_derivative_is_the_functions_where_the_real_part_is_negative():
    # jax.numpy's derivative of acosh flips its sign with the value's where Re z < 0 (0.516 + 0.168j
    # at -2 + 0.5j); xp's is 1 / (sqrt(z - 1) sqrt(z + 1)), which finite differences agree with
    z = np.array([-2 + 0.5j, -2 - 0.5j, -0.4 + 0.01j, 0.5 + 0.3j, -3 - 4j], np.complex64)
    _, derivative = jax.jvp(lambda v: xp.acosh(xp.asarray(v)).jax, (jnp.asarray(z),), (jnp.ones(5, jnp.complex64),))
    zz = z.astype(np.complex128)
    by_differences = (np.arccosh(zz + 1e-6) - np.arccosh(zz - 1e-6)) / 2e-6
    np.testing.assert_allclose(np.asarray(derivative), by_differences, rtol=1e-5)
