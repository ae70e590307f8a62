"""float32's exponential, logarithmic and hyperbolic functions at float32's accuracy
(xp/_float32_accuracy.py).

XLA:TPU's default float32 ``log`` is off by up to 4e-4 relatively; the CPU's is within an ulp. So
the first test checks what reaches XLA on any backend (every transcendental operation of these
functions asks for XLA's most accurate implementation), and the others check the values and
derivatives against float64 NumPy on the backend the tests run on: on a TPU they fail without the
request.
"""

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import platform_facts
import pytest
from accuracy_requests import float32_ulps, left_at_default_accuracy, with_the_tpu_s_division
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax import lax

import xp

TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic"}
"""The operations whose float32 implementation XLA:TPU approximates unless asked for accuracy."""

SMALLEST_NORMAL = float(np.finfo(np.float32).smallest_normal)
EPS = float(np.finfo(np.float32).eps)
BIG = float(np.finfo(np.float32).max)

# each function's NumPy reference and the float32 inputs it is drawn from (normal numbers, results
# inside float32's range)
UNARY = {
    "exp": (np.exp, -87.0, 88.0),
    "expm1": (np.expm1, -87.0, 88.0),
    "log": (np.log, SMALLEST_NORMAL, BIG),
    "log1p": (np.log1p, -0.999999, BIG),
    "log2": (np.log2, SMALLEST_NORMAL, BIG),
    "log10": (np.log10, SMALLEST_NORMAL, BIG),
    "tanh": (np.tanh, -30.0, 30.0),
    "sinh": (np.sinh, -89.0, 89.0),
    "cosh": (np.cosh, -89.0, 89.0),
    "asinh": (np.arcsinh, -BIG, BIG),
    "acosh": (np.arccosh, 1.0, BIG),
    "atanh": (np.arctanh, -0.9999999, 0.9999999),
}
RTOL = 4 * EPS  # a few units in the last place; XLA:TPU's defaults are off by up to 3000


def _equations(jaxpr):
    """Every equation of ``jaxpr`` and of the jaxprs nested in its equations' parameters."""
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)  # a ClosedJaxpr's Jaxpr
                if isinstance(inner, jax.extend.core.Jaxpr):
                    yield from _equations(inner)


def _accuracies(fn, *args):
    """The ``accuracy`` requested by each transcendental operation ``fn(*args)`` traces to."""
    jaxpr = jax.make_jaxpr(fn)(*args).jaxpr
    return [e.params.get("accuracy") for e in _equations(jaxpr) if e.primitive.name in TRANSCENDENTAL]


def _xp_sum(name):
    return lambda *a: xp.sum(getattr(xp, name)(*(xp.asarray(v) for v in a))).jax


@pytest.mark.parametrize("name", [*UNARY, "logaddexp"])
def test_float32_functions_ask_xla_for_its_most_accurate_implementation(name):
    args = (jnp.full((3,), 0.5, jnp.float32),) * (2 if name == "logaddexp" else 1)
    for fn in (_xp_sum(name), jax.grad(_xp_sum(name))):
        requested = _accuracies(fn, *args)
        assert requested, f"{name}: no transcendental operation traced"
        assert all(a == lax.AccuracyMode.HIGHEST for a in requested), (name, requested)


COMPLEX_FROM_PARTS = ("log", "log1p", "log2", "log10", "exp", "expm1", "sinh", "cosh", "tanh", "sin", "cos", "tan",
                      "asin", "asinh", "acos", "acosh", "atan", "atanh")  # fmt: skip


def _value_and_derivative(name):
    def both(*args):
        f = lambda *a: getattr(xp, name)(*(xp.asarray(v) for v in a)).jax  # noqa: E731
        return jax.jvp(f, args, tuple(jnp.ones_like(a) for a in args))

    return both


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "dtype"),
    [*((n, jnp.float32) for n in [*UNARY, "logaddexp"]), *((n, jnp.complex64) for n in COMPLEX_FROM_PARTS)],
)
def test_compiled_programs_keep_the_accuracy_requests(name, dtype):
    x = jnp.linspace(1.1, 1.9, 4).astype(dtype)  # (inside acosh's domain)
    args = (x,) * (2 if name == "logaddexp" else 1)
    assert left_at_default_accuracy(_value_and_derivative(name), *args) == [], name


@pytest.mark.x64
def test_float64_keeps_jax_numpy_s_functions():
    x = jnp.full((3,), 0.5, jnp.float64)
    assert _accuracies(_xp_sum("log"), x) == _accuracies(lambda v: jnp.sum(jnp.log(v)), x) == [None]


def _relative_errors(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.abs(got - want) / np.maximum(np.abs(want), SMALLEST_NORMAL)


@pytest.mark.slow
@pytest.mark.parametrize("name", UNARY)
@given(data=st.data())
def test_float32_values_within_a_few_ulps_of_float64(name, data):
    reference, low, high = UNARY[name]
    elements = st.floats(float(np.float32(low)), float(np.float32(high)), width=32, allow_subnormal=False)
    x = data.draw(hnp.arrays(np.float32, st.integers(1, 8), elements=elements), label="x")
    got = np.asarray(getattr(xp, name)(xp.asarray(x)))
    want = reference(x.astype(np.float64))
    inside = np.abs(want) >= SMALLEST_NORMAL  # XLA flushes results below float32's normal range
    assert got.dtype == np.float32
    assert np.all(_relative_errors(got, want)[inside] <= RTOL), (x, got, want)


@pytest.mark.slow
def test_float32_values_on_a_grid_across_each_domain():
    """Where the formulas switch branches and where XLA:TPU's approximations are worst."""
    for name, (reference, low, high) in UNARY.items():
        x = np.linspace(max(low, -50.0), min(high, 50.0), 100_001, dtype=np.float32)
        x = np.concatenate([x, np.float32([0.43, 0.75, 1.0, 4096.0, 4097.0, 20.0, 0.5, -0.5])])
        x = x[(x >= low) & (x <= high)]
        got = np.asarray(getattr(xp, name)(xp.asarray(x)))
        with np.errstate(all="ignore"):
            want = reference(x.astype(np.float64))
        inside = np.isfinite(want) & (np.abs(want) >= SMALLEST_NORMAL)
        errors = _relative_errors(got, want)[inside]
        assert errors.max() <= RTOL, (name, x[inside][np.argmax(errors)], errors.max())


@given(
    hnp.arrays(np.float32, 6, elements=st.floats(-80, 80, width=32, allow_subnormal=False)),
    hnp.arrays(np.float32, 6, elements=st.floats(-80, 80, width=32, allow_subnormal=False)),
)
def test_float32_logaddexp_within_a_fewfloat32_ulps(a, b):
    got = np.asarray(xp.logaddexp(xp.asarray(a), xp.asarray(b)), np.float64)
    want = np.logaddexp(a.astype(np.float64), b.astype(np.float64))
    # the error of max(a, b) + log1p(...) is relative to the larger operand, not to a result near 0
    assert np.all(np.abs(got - want) <= RTOL * np.maximum(np.maximum(np.abs(a), np.abs(b)), 1.0))


@pytest.mark.parametrize("name", UNARY)
def test_float32_special_values_and_zero_signs_as_numpy_s(name):
    specials = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0])
    got = np.asarray(getattr(xp, name)(xp.asarray(specials)))
    with np.errstate(all="ignore"):
        want = UNARY[name][0](specials.astype(np.float64)).astype(np.float32)
    exact = ~np.isfinite(want) | (want == 0)
    assert np.array_equal(got[exact], want[exact], equal_nan=True), (specials[exact], got[exact], want[exact])
    signed = exact & ~np.isnan(want)  # a NaN's sign is not specified
    assert np.array_equal(np.signbit(got[signed]), np.signbit(want[signed])), (specials[signed], got[signed])


DERIVATIVES = {  # float64 NumPy
    "exp": np.exp, "expm1": np.exp, "log": lambda x: 1 / x, "log1p": lambda x: 1 / (1 + x),
    "log2": lambda x: 1 / (x * np.log(2)), "log10": lambda x: 1 / (x * np.log(10)),
    "tanh": lambda x: 1 / np.cosh(x) ** 2, "sinh": np.cosh, "cosh": np.sinh,
    "asinh": lambda x: 1 / np.sqrt(x * x + 1), "acosh": lambda x: 1 / np.sqrt(x * x - 1),
    "atanh": lambda x: 1 / (1 - x * x),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", UNARY)
def test_float32_derivatives_are_the_functions_derivatives(name):
    """The formulas of several branches carry the analytic derivative, at 0 too (a branch on |x|
    would give 0 there); under vmap, and to second order."""
    _, low, high = UNARY[name]
    x = np.float32([v for v in (0.0, 1e-3, 0.3, -0.3, 0.9, 1.5, 3.0, 25.0, -25.0, 5000.0) if low < v < high])
    derivative = jax.grad(lambda v: getattr(xp, name)(xp.asarray(v)).jax)
    got = np.asarray(jax.vmap(derivative)(x), np.float64)
    np.testing.assert_allclose(got, DERIVATIVES[name](x.astype(np.float64)), rtol=2e-6, atol=0)
    step = 1e-3
    by_differences = (float(derivative(x[2] + step)) - float(derivative(x[2] - step))) / (2 * step)
    np.testing.assert_allclose(float(jax.grad(derivative)(x[2])), by_differences, rtol=1e-2)


def test_float32_logaddexp_derivatives_are_the_softmax_weights_and_jax_numpy_s_at_infinities():
    pairs = np.float32([[0.0, 1.0], [-np.inf, 2.0], [3.0, -np.inf], [np.inf, 1.0], [-50.0, 50.0]])
    got = np.asarray(
        jax.vmap(jax.grad(lambda a, b: xp.logaddexp(xp.asarray(a), xp.asarray(b)).jax, argnums=(0, 1)))(
            pairs[:, 0], pairs[:, 1]
        )
    )
    finite = np.isfinite(pairs).all(axis=1)
    a, b = pairs[finite].astype(np.float64).T  # d/da = exp(a) / (exp(a) + exp(b)), from float64
    np.testing.assert_allclose(
        got[:, finite], [1 / (1 + np.exp(b - a)), 1 / (1 + np.exp(a - b))], rtol=RTOL, atol=SMALLEST_NORMAL
    )  # (XLA flushes results below float32's normal range)
    # at the infinities, JAX's rule: the operand that is +infinity gets all of the derivative
    want = np.asarray(jax.vmap(jax.grad(jnp.logaddexp, argnums=(0, 1)))(pairs[:, 0], pairs[:, 1]))
    np.testing.assert_allclose(got[:, ~finite], want[:, ~finite], rtol=1e-5)  # (jax.numpy's exp: XLA:TPU's, 5.5e-6)


# --- complex64: exp and log from float32 parts, and the functions built on them ------------------

COMPLEX = {"log": np.log, "log2": np.log2, "log10": np.log10, "exp": np.exp, "expm1": np.expm1, "sinh": np.sinh,
           "cosh": np.cosh, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
           "asinh": np.arcsinh, "acos": np.arccos, "acosh": np.arccosh, "atan": np.arctan, "atanh": np.arctanh}  # fmt: skip
COMPLEX_RTOL = 8 * EPS  # relative to |result|: a few ulp of each part (jax.numpy's on the CPU: up to 58 for cosh)


@pytest.mark.parametrize("name", COMPLEX)
def test_complex64_functions_ask_xla_for_accurate_float32_parts(name):
    z = jnp.full((3,), 0.5 + 0.25j, jnp.complex64)
    jaxpr = jax.make_jaxpr(lambda v: getattr(xp, name)(xp.asarray(v)).jax)(z).jaxpr
    transcendental = [e for e in _equations(jaxpr) if e.primitive.name in TRANSCENDENTAL]
    assert transcendental, name
    for e in transcendental:  # none of complex64 (XLA's, from the approximations on a TPU)
        assert e.outvars[0].aval.dtype == np.float32 and e.params["accuracy"] == lax.AccuracyMode.HIGHEST, e


COMPLEX_BY_EXPONENTIALS = TRANSCENDENTAL | {"rsqrt", "pow"}
"""The complex operations XLA:TPU compiles into float32 exponentials and logarithms at their default
accuracy (for ``rsqrt``, the derivatives of asinh and acos on the TPU had them)."""


@pytest.mark.parametrize("name", COMPLEX)
def test_complex64_derivatives_take_float32_parts_too(name):
    z = jnp.full((3,), 0.5 + 0.25j, jnp.complex64)
    jaxpr = jax.make_jaxpr(_value_and_derivative(name))(z).jaxpr
    by_exponentials = [e for e in _equations(jaxpr) if e.primitive.name in COMPLEX_BY_EXPONENTIALS]
    assert [e for e in by_exponentials if e.outvars[0].aval.dtype != np.float32] == [], name


@pytest.mark.slow
@pytest.mark.parametrize("name", COMPLEX)
@given(data=st.data())
def test_complex64_values_within_a_few_ulps_of_complex128(name, data):
    part = st.floats(-30, 30, width=32, allow_subnormal=False)
    pairs = data.draw(hnp.arrays(np.float32, (st.integers(1, 6).map(lambda n: (n, 2))), elements=part), label="z")
    # logarithms of any magnitude; near 0, where expm1 and tanh must not cancel
    scales = (
        [1.0, 1e-10, 1e10]
        if name.startswith("log")
        else [1.0, 1e-4]
        if name in ("expm1", "tanh", "tan", "atan", "atanh", "asin", "asinh")
        else [1.0]
    )
    scale = data.draw(st.sampled_from(scales), label="scale")
    z = (pairs[:, 0] + 1j * pairs[:, 1]).astype(np.complex64) * np.complex64(scale)
    got = np.asarray(getattr(xp, name)(xp.asarray(z)), np.complex128)
    with np.errstate(all="ignore"):
        want = COMPLEX[name](z.astype(np.complex128))
    inside = (np.abs(want) > 1e-30) & (np.abs(want.real) < 1e38) & (np.abs(want.imag) < 1e38)
    assert np.all(np.abs(got[inside] - want[inside]) <= COMPLEX_RTOL * np.abs(want[inside])), (z, got, want)


def test_complex64_log_near_the_unit_circle_and_far_from_it():
    # |z|^2 - 1 formed without cancellation near |z| = 1; no overflow or underflow far from it
    angles = np.linspace(-np.pi, np.pi, 2001)
    for modulus in (1.0, 1 + 1e-6, 1 - 1e-6, 0.70710677, 1.4142135, 1e-30, 1e30, 3e38):
        z = (modulus * np.exp(1j * angles)).astype(np.complex64)
        got = np.asarray(xp.log(xp.asarray(z)), np.complex128)
        want = np.log(z.astype(np.complex128))
        assert np.all(np.abs(got - want) <= COMPLEX_RTOL * np.abs(want) + 1e-37), modulus  # log(1) = 0 exactly


def _log1p_reference(z):
    """log1p of complex64 ``z`` in extended precision (NumPy's complex log1p is log(1 + z), whose
    rounding of 1 + z is all of the value for small z): log1p(x(2 + x) + y**2) / 2 and atan2."""
    x, y = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    s = x * (2 + x) + y * y
    real = np.where(np.abs(s) < 1e300, np.log1p(s) / 2, np.log(np.hypot(1 + x, y)))
    return real.astype(np.float64) + 1j * np.arctan2(y, 1 + x).astype(np.float64)


def test_complex64_log1p_asks_for_accurate_float32_parts_and_keeps_their_accuracy():
    # XLA:TPU's complex log1p is built on its approximate float32 log1p: xp forms it from the
    # accurate one, as log1p(x(2 + x) + y**2) / 2 away from -1 (near it, from |1 + z| directly)
    z = jnp.full((3,), 0.5 + 0.25j, jnp.complex64)
    jaxpr = jax.make_jaxpr(lambda v: xp.log1p(xp.asarray(v)).jax)(z).jaxpr
    transcendental = [e for e in _equations(jaxpr) if e.primitive.name in TRANSCENDENTAL]
    assert transcendental and all(e.params["accuracy"] == lax.AccuracyMode.HIGHEST for e in transcendental)
    rng = np.random.default_rng(5)
    magnitude, angle = 10.0 ** rng.uniform(-30, 37, 50_000), rng.uniform(-np.pi, np.pi, 50_000)
    circle = (1 + rng.uniform(-1e-2, 1e-2, 50_000)) * np.exp(1j * rng.uniform(-np.pi, np.pi, 50_000)) - 1
    z = np.concatenate([magnitude * np.exp(1j * angle), circle]).astype(np.complex64)
    got = np.asarray(xp.log1p(xp.asarray(z)), np.complex128)
    want = _log1p_reference(z)
    inside = np.abs(want) > 1e-37
    assert np.all(np.abs(got - want)[inside] <= COMPLEX_RTOL * np.abs(want)[inside])


@pytest.mark.parametrize("name", ["log", "exp"])
def test_complex64_derivatives_are_the_functions_derivatives(name):
    z = jnp.asarray([0.5 + 0.25j, -2.0 + 1.0j, 1.0 + 0.0j, 3.0 - 4.0j], jnp.complex64)
    dz = jnp.asarray([1.0, 1j, 0.5 - 0.5j, 2.0], jnp.complex64)
    _, tangent = jax.jvp(lambda v: getattr(xp, name)(xp.asarray(v)).jax, (z,), (dz,))
    zz, dd = np.asarray(z, np.complex128), np.asarray(dz, np.complex128)
    want = dd / zz if name == "log" else np.exp(zz) * dd
    np.testing.assert_allclose(np.asarray(tangent), want, rtol=1e-6)


@pytest.mark.x64
@pytest.mark.parametrize("name", COMPLEX)
def test_complex64_special_values_and_zero_signs_as_complex128_s(name):
    # the formulas from float32 parts keep the special cases of xp's complex128 functions, which the
    # standard states for an imaginary part of +0 or above (expm1(-0 + 0j) is +0 + 0j: the formula
    # alone gave -0 + 0j; below the real axis it leaves some signs unspecified)
    parts = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]
    values = np.asarray([complex(a, b) for a in parts for b in parts if not np.signbit(b)])
    got = np.asarray(getattr(xp, name)(xp.asarray(values, dtype=xp.complex64)), np.complex128)
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(xp, name)(xp.asarray(values, dtype=xp.complex128)), np.complex128)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        exact = ~np.isfinite(w) | (w == 0)
        assert np.array_equal(g[exact], w[exact], equal_nan=True), (name, values[exact], g[exact])
        signed = exact & ~np.isnan(w)
        assert np.array_equal(np.signbit(g[signed]), np.signbit(w[signed])), (name, values[signed], g[signed])


# --- division by float32's largest numbers ----------------------------------------------------------


def test_division_and_atan2_by_float32_s_largest_numbers():
    # XLA:TPU divides through the divisor's reciprocal, inaccurate past 2**104 (1e-5) and below
    # float32's normal range past 2**126: jax.numpy's 1e38 / 2e38 is 0 there, arctan2(1e38, -2e38)
    # pi, hypot(1e38, 2e38) 2e38, 2**127 // 2**127 0 (xp/_float32_accuracy.py)
    x1 = np.float32([1e38, 3e38, 1e30, 2.0**127, -5.0, 3e32, 2.0**110, 1.0])
    x2 = np.float32([2e38, 3.2e38, 3e38, 2.0**127, np.inf, 2.0**-10, 3.0 * 2.0**108, 2e38])
    wide1, wide2 = x1.astype(np.float64), x2.astype(np.float64)
    normal = slice(0, 7)  # the last quotient lies below the normal range: flushed or not
    rtol = platform_facts.FLOAT32_DIVISION_RTOL
    quotient = np.asarray(xp.divide(xp.asarray(x1), xp.asarray(x2)))
    np.testing.assert_allclose(quotient[normal], (wide1 / wide2)[normal].astype(np.float32), rtol=rtol)
    assert quotient[7] in (0.0, np.float32(5e-39))
    large = np.float32([8e37, 5e37, 3.0 * 2.0**108, -(2.0**120)])  # (reciprocals in the normal range)
    reciprocal = np.asarray(xp.reciprocal(xp.asarray(large)))
    np.testing.assert_allclose(reciprocal, (1 / large.astype(np.float64)).astype(np.float32), rtol=rtol)
    floor_quotient = np.asarray(xp.floor_divide(xp.asarray(x1), xp.asarray(x2)))
    np.testing.assert_array_equal(floor_quotient[normal], np.floor(wide1 / wide2)[normal])
    angle = np.asarray(xp.atan2(xp.asarray(x1), xp.asarray(-x2)))
    np.testing.assert_allclose(angle, np.arctan2(wide1, -wide2), rtol=2 * EPS)
    length = np.asarray(xp.hypot(xp.asarray(x1[:4]), xp.asarray(x2[:4] / 2)))
    want = np.minimum(np.hypot(wide1[:4], wide2[:4] / 2), np.inf)
    np.testing.assert_allclose(length, np.where(want > np.finfo(np.float32).max, np.inf, want), rtol=2 * EPS)
    z = np.complex64([1e38 + 1e38j, 3e38 + 0j, 2.0**110 + 1j])
    w = np.complex64([2e38 - 1e38j, 1e38 + 2e38j, 3.0 * 2.0**108 - 2.0**109 * 1j])
    got = np.asarray(xp.divide(xp.asarray(z), xp.asarray(w)), np.complex128)
    want = z.astype(np.complex128) / w.astype(np.complex128)
    assert np.all(np.abs(got - want) <= 4 * EPS * np.abs(want)), (got, want)


FLOAT32_NORMAL = st.floats(width=32, allow_subnormal=False)  # (XLA reads subnormal operands as zeros)


@given(hnp.arrays(np.float32, 64, elements=FLOAT32_NORMAL), hnp.arrays(np.float32, 64, elements=FLOAT32_NORMAL))
def test_float32_division_is_ieee_division_elsewhere(x1, x2):
    # the scaling is exact: where the backend divides correctly (the CPU), the same bits as NumPy's
    with np.errstate(all="ignore"):
        want = x1 / x2
    got = np.asarray(xp.divide(xp.asarray(x1), xp.asarray(x2)))
    normal = ~(np.abs(want) < SMALLEST_NORMAL) | (want == 0)  # (XLA may flush results below the normal range)
    np.testing.assert_allclose(got[normal], want[normal], rtol=platform_facts.FLOAT32_DIVISION_RTOL)


# --- double-float arithmetic (xp/_double_float.py) ------------------------------------------------


@given(
    x=hnp.arrays(np.float32, 16, elements=st.floats(2.0**-125, 2.0**125, width=32)),
    ulps=hnp.arrays(np.int32, 16, elements=st.integers(-3, 3)),
    negative=hnp.arrays(np.bool_, 16),
)
# the reciprocal of the float above 2**102 rounds to 2 ulps below 2**-102, and its correction from
# 1 ulp off, 2**-126 less 1.5 ulps of it, falls below float32's normal range: flushed to zero on a
# TPU (no fused multiply-add there) unless computed scaled (found there)
@example(
    x=np.full(16, np.nextafter(np.float32(2.0**102), np.float32(np.inf))),
    ulps=np.full(16, 1, np.int32),
    negative=np.zeros(16, np.bool_),
)
def test_the_reciprocal_is_corrected_to_the_rounded_one(x, ulps, negative):
    # refine_reciprocal turns a reciprocal a few ulps off (XLA:TPU's is up to 1.5e-7, 2.5 ulps) into
    # the correctly rounded one, here IEEE division's (the ties it may miss are within 2**-46)
    from xp._double_float import refine_reciprocal

    x = np.where(negative, -x, x)
    want = (1 / x.astype(np.float64)).astype(np.float32)
    guess = want
    for _ in range(3):
        guess = np.where(ulps > 0, np.nextafter(guess, np.float32(np.inf)), guess)
        guess = np.where(ulps < 0, np.nextafter(guess, np.float32(-np.inf)), guess)
        ulps = ulps - np.sign(ulps)
    assert np.array_equal(np.asarray(jax.jit(refine_reciprocal)(x, guess)), want)


@given(
    x=hnp.arrays(np.float32, 16, elements=st.floats(2.0**-30, 2.0**30, width=32)),
    y=hnp.arrays(np.float32, 16, elements=st.floats(2.0**-30, 2.0**30, width=32)),
    negative=hnp.arrays(np.bool_, 16),
)
def test_the_quotient_is_the_rounded_one_with_either_division(x, y, negative):
    # quotient corrects x times the reciprocal to the correctly rounded x / y, IEEE division's
    # (the ties it may miss are within 2**-44), with the TPU's division too (1.5e-7 off: 2.5 ulps);
    # quotients inside its domain, 2**-62 to 2**64
    from xp._double_float import quotient

    x = np.where(negative, -x, x)
    want = (x.astype(np.float64) / y.astype(np.float64)).astype(np.float32)
    for divide in (jax.jit(quotient), with_the_tpu_s_division(quotient)):
        assert np.array_equal(np.asarray(divide(x, y)), want)


@given(x=hnp.arrays(np.float32, 32, elements=st.floats(2.0**-125, 2.0**125, width=32)))
def test_pairs_carry_their_low_parts_through_compiled_programs(x):
    # double-float products and logarithms, compiled: XLA's CPU compiler fused Dekker's product
    # into its error term, which then took the unrounded product (log_pair was 2.4e-7 off, half
    # an ulp of its high part: the low part lost)
    from xp import _double_float as double_float

    hi, lo = jax.jit(double_float.log_pair)(x)
    want = np.log(x.astype(np.float64))
    got = np.asarray(hi, np.float64) + np.asarray(lo, np.float64)
    assert np.all(np.abs(got - want) <= 2.0**-40 * np.maximum(np.abs(want), 1)), (x, got - want)
    x = np.clip(x, np.float32(2.0**-40), np.float32(2.0**40))  # (products and their error terms normal)
    y = x[::-1]
    hi, lo = jax.jit(double_float.two_product)(x, y)
    exact = x.astype(np.float64) * y.astype(np.float64)  # (exact: 48 bits)
    assert np.array_equal(np.asarray(hi, np.float64) + np.asarray(lo, np.float64), exact)


def test_the_reciprocal_keeps_the_division_s_special_values():
    from xp._double_float import reciprocal

    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-45, 2.0**-126])
    got, want = np.asarray(jax.jit(reciprocal)(x)), np.asarray(jax.jit(lambda v: 1 / v)(x))
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


# --- pow: float32's from double-float arithmetic on a TPU (xp/_float32_pow.py) -------------------


def _floats32(low, high):
    return st.floats(float(np.float32(low)), float(np.float32(high)), width=32)


POWERS = {  # (x, y) drawn from (the tests keep the results that are normal float32 numbers)
    "x in (0, 10), |y| < 30": (_floats32(1e-3, 10), _floats32(-30, 30)),
    "x near 1, |y| large": (_floats32(0.999, 1.001), _floats32(-8e4, 8e4)),
    "any normal x, |y| < 1": (_floats32(SMALLEST_NORMAL, BIG), _floats32(-1, 1)),
    "x < 0, integer y": (_floats32(-10, -0.1), st.integers(-30, 30).map(float)),
}


@pytest.mark.parametrize("kind", POWERS)
@given(data=st.data())
def test_the_tpu_s_float32_pow_is_correctly_rounded(kind, data):
    # the TPU's computation, run here: correctly rounded but within 2**-40 of a tie (XLA:TPU's pow
    # is 5e-6 off, 40 ulps; the CPU's 0.55)
    from xp._float32_pow import pow_from_pairs

    xs, ys = POWERS[kind]
    x = data.draw(hnp.arrays(np.float32, 8, elements=xs), label="x")
    y = data.draw(hnp.arrays(np.float32, 8, elements=ys), label="y")
    got = np.asarray(jax.jit(pow_from_pairs)(x, y))
    want = np.power(x.astype(np.float64), y.astype(np.float64))
    inside = (np.abs(want) >= 2.0**-125) & (np.abs(want) <= BIG)
    assert np.all(float32_ulps(got[inside], want[inside]) <= 0.5 + 2.0**-16), (x, y, got, want)


def test_the_tpu_s_float32_pow_is_exact_where_the_power_is_a_float32():
    from xp._float32_pow import pow_from_pairs

    x = np.arange(1, 40, dtype=np.float32)
    for y in (0.5, 2.0, 3.0, 4.0, -1.0, -2.0, 7.0):
        want = np.power(x.astype(np.float64), y)
        exact = want.astype(np.float32).astype(np.float64) == want
        got = np.asarray(pow_from_pairs(x, np.full_like(x, y)), np.float64)
        assert np.array_equal(got[exact], want[exact]), y  # 11 ** 3 is 1331, 25 ** 0.5 is 5


def test_the_tpu_s_float32_pow_keeps_xla_s_special_values():
    from xp._float32_pow import pow_from_pairs

    specials = np.float32([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1e-30, 1e30])
    x, y = (v.ravel() for v in np.meshgrid(specials, specials))
    got, want = np.asarray(pow_from_pairs(x, y)), np.asarray(jnp.power(x, y))
    special = ~np.isfinite(want) | (want == 0) | (want == 1)
    assert np.array_equal(got[special], want[special], equal_nan=True)
    assert np.array_equal(np.signbit(got[special & ~np.isnan(want)]), np.signbit(want[special & ~np.isnan(want)]))
    # results beyond float32's range: infinite with the sign of an odd power, as XLA's
    big = np.float32([10.0, -10.0, 1e-10, -1e-10])
    got = np.asarray(pow_from_pairs(big, np.float32([50.0, 51.0, -5.0, -5.0])))
    assert np.array_equal(got, np.float32([np.inf, -np.inf, np.inf, -np.inf]))


def test_float32_pow_is_the_pairs_computation_where_it_is_lowered_for_a_tpu():
    # which pow a program gets is decided where it is lowered (lax.platform_dependent): lowered here
    # for a TPU, the program holds the accurate exponential of the TPU's computation
    x = jnp.linspace(0.5, 2.0, 4, dtype=jnp.float32)
    f = jax.jit(lambda a, b: xp.pow(xp.asarray(a), xp.asarray(b)).jax)
    for platform, pairs in (("tpu", True), ("cpu", False)):
        text = f.trace(x, x).lower(lowering_platforms=(platform,)).as_text()
        accurate = [line for line in text.splitlines() if "stablehlo.exponential" in line and "HIGHEST" in line]
        assert bool(accurate) == pairs, platform


@pytest.mark.slow
def test_float32_pow_within_half_an_ulp_and_its_derivatives():
    # on this backend: XLA's pow on the CPU, the pairs on a TPU (where XLA's is 40 ulps off)
    rng = np.random.default_rng(7)
    x = rng.uniform(1e-3, 10, 20_000).astype(np.float32)
    y = rng.uniform(-30, 30, 20_000).astype(np.float32)
    got = np.asarray(xp.pow(xp.asarray(x), xp.asarray(y)))
    want = np.power(x.astype(np.float64), y.astype(np.float64))
    inside = (want >= 2.0**-125) & (want <= BIG)
    assert float32_ulps(got[inside], want[inside]).max() <= 0.6
    assert float(xp.asarray(11.0, dtype=xp.float32) ** 3.0) == 1331.0
    # JAX's rule, from xp's pow and logarithm: y x**(y - 1), and log(x) x**y
    xs, ys = np.float32([0.5, 2.0, 3.0, 0.0]), np.float32([3.0, -1.5, 0.5, 2.0])
    dx, dy = jax.vmap(jax.grad(lambda a, b: xp.pow(xp.asarray(a), xp.asarray(b)).jax, argnums=(0, 1)))(xs, ys)
    x64, y64 = xs.astype(np.float64), ys.astype(np.float64)
    np.testing.assert_allclose(np.asarray(dx), y64 * x64 ** (y64 - 1), rtol=4 * EPS)
    np.testing.assert_allclose(np.asarray(dy)[:3], np.log(x64[:3]) * x64[:3] ** y64[:3], rtol=4 * EPS)
    assert float(dy[3]) == 0.0  # log(1) at x = 0, as JAX has it
