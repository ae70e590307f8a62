"""xp.special: values against scipy.special on NumPy, dtype rules, errors, jit, vmap and grad.

SciPy's own functions running on xp arrays (SCIPY_ARRAY_API=1) are checked in
tests/test_special_functions_scipy.py.
"""

import inspect
import itertools
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp
from accuracy_requests import float32_ulps, left_at_default_accuracy, with_the_tpu_s_division
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from subprocess_env import failure, run_script

import xp

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FLOAT = xp.__array_namespace_info__().default_dtypes()["real floating"]
LENGTH = 8  # one array shape: each kernel compiles once per dtype


@dataclass(frozen=True)
class Case:
    """A function's domain for the value tests: per parameter a float range (low, high) or an
    integer range ("int", low, high); ``prepare`` maps the drawn arrays into the domain where
    parameters depend on each other; tolerances per dtype (float32 values are compared with
    SciPy's, which computes float32 in double precision and rounds)."""

    params: tuple[Any, ...]
    rtol64: float = 1e-12
    rtol32: float = 2e-5
    atol64: float = 0.0
    atol32: float = 0.0
    prepare: Any = None


def _at_most(index_small, index_big):
    """Make parameter ``index_small`` (drawn in [0, 1]) a fraction of parameter ``index_big``."""

    def prepare(args):
        args = list(args)
        args[index_small] = (args[index_small] * args[index_big]).astype(args[index_small].dtype)
        return args

    return prepare


def _lambda_not_tiny(args):
    # SciPy's inv_boxcox1p(y, lmbda) returns y (not expm1(y)) for 0 < |lmbda| < 1e-154
    y, lmbda = args
    return [y, np.where(np.abs(lmbda) < 1e-100, 0, lmbda).astype(lmbda.dtype)]


def _delta_not_tiny(args):
    # SciPy's pseudo_huber is NaN where (r / delta)**2 overflows; xp's is delta |r| there
    delta, r = args
    return [np.where(delta < 1e-3, 0, delta).astype(delta.dtype), r]


def _kummer(args):
    a, b, x = args
    # SciPy's hyp1f1 is inaccurate for tiny negative x (inf at -1e-300, 1 - 7e-15 at -1e-150)
    x = np.where(np.abs(x) < 1e-10, 0, x).astype(x.dtype)
    return [np.where(x < 0, np.minimum(a, b), a).astype(a.dtype), b, x]


P = (0.0, 1.0)  # probabilities
# JAX's float32 incomplete beta is good to about 1e-4 absolutely, not relatively in the tails
BETA = dict(rtol64=1e-10, rtol32=2e-4, atol32=1e-4)

CASES = {
    "bdtr": Case((P, ("int", 1, 50), P), prepare=_at_most(0, 1), **BETA),
    "bdtrc": Case((P, ("int", 1, 50), P), prepare=_at_most(0, 1), **BETA),
    "betainc": Case(((0.05, 50), (0.05, 50), P), **BETA),
    "betaincc": Case(((0.05, 50), (0.05, 50), P), **BETA),
    # SciPy's betaln is off by 5e-12 at (0.25, 215); xp by 7e-11 at (1, 0.99999) (absolutely 1e-15)
    "betaln": Case(((0.05, 500), (0.05, 500)), rtol64=1e-11, rtol32=1e-4, atol64=1e-15, atol32=3e-6),
    "binom": Case(((0.0, 60.0), P), prepare=_at_most(1, 0), rtol64=1e-11, rtol32=2e-4),
    "boxcox": Case(((0.01, 100), (-3, 3)), rtol32=1e-4),
    "boxcox1p": Case(((-0.99, 100), (-3, 3)), rtol32=1e-4),
    "cbrt": Case(((-1e3, 1e3),)),
    "chdtr": Case(((0.1, 100), (0, 200)), **BETA),
    "chdtrc": Case(((0.1, 100), (0, 200)), **BETA),
    "cosdg": Case(((-1e4, 1e4),), atol64=1e-15, atol32=1e-6),
    "cosm1": Case(((-10, 10),), atol64=2e-16, atol32=1e-7),  # SciPy: cos(x) - 1 for |x| > pi/4
    "cotdg": Case(((1, 89),)),
    "digamma": Case(((0.05, 100),), atol64=1e-14, atol32=1e-6),
    "ellipk": Case(((-100, 0.999),)),
    "ellipkm1": Case(((1e-10, 100),)),
    "entr": Case(((0, 100),), atol32=1e-6),
    "erf": Case(((-5, 5),)),
    "erfc": Case(((-5, 9),)),
    "erfcx": Case(((-5, 50),)),
    "erfinv": Case(((-0.999, 0.999),)),
    "exp1": Case(((0, 50),)),
    "exp2": Case(((-100, 100),)),
    "exp10": Case(((-30, 30),)),
    "expi": Case(((-50, 50),)),
    "expit": Case(((-40, 40),)),
    "expn": Case((("int", 0, 20), (0, 50))),
    "exprel": Case(((-50, 50),)),
    "fdtr": Case(((0.1, 100), (0.1, 100), (0, 50)), **BETA),
    "fdtrc": Case(((0.1, 100), (0.1, 100), (0, 50)), **BETA),
    "gamma": Case(((0.05, 30),), rtol32=1e-4),
    "gammainc": Case(((0.05, 50), (0, 100)), rtol64=1e-11, rtol32=1e-4),
    "gammaincc": Case(((0.05, 50), (0, 100)), rtol64=1e-11, rtol32=1e-4),
    "gammaln": Case(((0.05, 100),), atol64=1e-15, atol32=2e-6),  # absolute near its zeros 1 and 2
    "gammasgn": Case(((-5.5, 5.5),)),
    "gdtr": Case(((0.1, 10), (0.1, 20), (0, 50)), rtol64=1e-11, rtol32=1e-4),
    "gdtrc": Case(((0.1, 10), (0.1, 20), (0, 50)), rtol64=1e-11, rtol32=1e-4),
    "huber": Case(((0, 10), (-20, 20))),
    "hyp1f1": Case(((0, 5), (0.1, 5), (-10, 20)), prepare=_kummer, rtol64=1e-10, rtol32=1e-4),
    "i0": Case(((-50, 50),)),
    "i0e": Case(((-100, 100),)),
    "i1": Case(((-50, 50),)),
    "i1e": Case(((-100, 100),)),
    "inv_boxcox": Case(((-2, 2), (-0.45, 0.45))),
    "inv_boxcox1p": Case(((-2, 2), (-0.45, 0.45)), prepare=_lambda_not_tiny),
    # x log(x/y) - x + y cancels near x = y: SciPy's absolute error is about x eps there (6e-10
    # relative at (41.5, 41.46875), xp's 1e-11)
    "kl_div": Case(((0, 100), (0, 100)), rtol64=1e-10, atol64=1e-12, atol32=1e-5),
    "log_ndtr": Case(((-30, 8),)),
    "loggamma": Case(((0.05, 100),), atol64=1e-15, atol32=2e-6),
    "logit": Case(((0.001, 0.999),), atol32=1e-7),
    "multigammaln": Case(((2.5, 40),), atol32=2e-5),
    "nbdtr": Case((P, ("int", 1, 50), P), prepare=lambda a: [a[0] * 50, *a[1:]], **BETA),
    "nbdtrc": Case((P, ("int", 1, 50), P), prepare=lambda a: [a[0] * 50, *a[1:]], **BETA),
    "ndtr": Case(((-20, 8),)),
    "ndtri": Case(((0.001, 0.999),), atol32=1e-7),
    "pdtr": Case(((0, 50), (0, 50)), rtol64=1e-11, rtol32=1e-4),
    "pdtrc": Case(((0, 50), (0, 50)), rtol64=1e-11, rtol32=1e-4),
    "poch": Case(((0.1, 10), (0, 5)), rtol32=1e-4),
    "polygamma": Case((("int", 0, 4), (0.1, 30)), rtol64=1e-11, rtol32=1e-4, atol32=1e-6),
    "pseudo_huber": Case(((0, 10), (-20, 20)), prepare=_delta_not_tiny),
    "psi": Case(((0.05, 100),), atol64=1e-14, atol32=1e-6),
    "radian": Case(((-360, 360), (-60, 60), (-60, 60)), atol64=1e-15, atol32=1e-6),
    "rel_entr": Case(((0, 100), (0, 100)), atol32=1e-5),
    "rgamma": Case(((0.05, 30),), rtol32=1e-4),
    "sinc": Case(((-10, 10),), atol64=1e-15, atol32=1e-6),
    "sindg": Case(((-1e4, 1e4),), atol64=1e-15, atol32=1e-6),
    "spence": Case(((0, 100),), atol32=1e-6),
    "stdtr": Case(((0.1, 100), (-50, 50)), **BETA),
    "tandg": Case(((1, 89),)),
    "xlog1py": Case(((-10, 10), (-0.99, 100)), atol32=1e-6),
    "xlogy": Case(((-10, 10), (0, 100)), atol32=1e-6),
    "zeta": Case(((1.1, 30), (0.1, 10)), rtol32=1e-4),
    "zetac": Case(((1.1, 60),), rtol32=1e-4),
}

# What SciPy's table of dispatched functions lists that xp.special does not provide, and why.
MISSING = {
    **dict.fromkeys(("bdtri", "betaincinv", "chdtri", "fdtri", "gammainccinv", "gammaincinv", "nbdtri", "pdtri",
                     "stdtrit"), "inverse of an incomplete beta or gamma function: JAX has none"),
    **dict.fromkeys(("j0", "j1", "y0", "y1", "yn"), "Bessel function J or Y: JAX has none accurate"),
    **dict.fromkeys(("k0", "k0e", "k1", "k1e"), "modified Bessel function K: JAX has none"),
    "lpmv": "associated Legendre function of real degree: JAX has none",
}  # fmt: skip


def _call(name, args, **kwargs):
    if name == "multigammaln":
        return xp.special.multigammaln(*args, 3, **kwargs)
    return getattr(xp.special, name)(*args, **kwargs)


def _reference(name, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "multigammaln":
            return sp.multigammaln(args[0], 3)
        return getattr(sp, name)(*args)


def _inside(low, high, dtype):
    """The bounds rounded into [low, high] in ``dtype`` (hypothesis needs them representable)."""
    low_d, high_d = dtype(low), dtype(high)
    if low_d < low:
        low_d = np.nextafter(low_d, dtype(np.inf))
    if high_d > high:
        high_d = np.nextafter(high_d, dtype(-np.inf))
    return float(low_d), float(high_d)


def _draw(data, case, dtype):
    width = 32 if dtype == np.float32 else 64
    args = []
    for spec in case.params:
        if spec[0] == "int":
            elements = st.integers(spec[1], spec[2]).map(float)
        else:
            low, high = _inside(spec[0], spec[1], dtype)
            elements = st.floats(low, high, width=width, allow_subnormal=False)
        values = data.draw(hnp.arrays(dtype, LENGTH, elements=elements))
        # XLA flushes subnormal results to 0: values near the smallest normal number (whose
        # halves and products are subnormal) are left to the special-value tests
        values[np.abs(values) < np.finfo(dtype).tiny * 2**20] = 0
        args.append(values)
    return case.prepare(args) if case.prepare else args


def _check_values(name, data, dtype):
    case = CASES[name]
    args = _draw(data, case, dtype)
    out = _call(name, [xp.asarray(a) for a in args])
    assert isinstance(out, xp.Array) and out.dtype == xp.asarray(args[0]).dtype and out.shape == (LENGTH,)
    expected = np.asarray(_reference(name, args)).astype(dtype)
    tiny = float(np.finfo(dtype).tiny)  # XLA flushes subnormal results to zero
    if dtype == np.float64:
        np.testing.assert_allclose(
            np.asarray(out), expected, rtol=case.rtol64, atol=max(case.atol64, tiny), err_msg=str(args)
        )
    else:
        np.testing.assert_allclose(
            np.asarray(out), expected, rtol=case.rtol32, atol=max(case.atol32, tiny), err_msg=str(args)
        )


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_float64_values_match_scipy(name, data):
    _check_values(name, data, np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_float32_values_match_scipy(name, data):
    _check_values(name, data, np.float32)


def _inside_each_domain(case):
    """float32 arguments inside ``case``'s domain (4 of each)."""
    values = [spec[1] + 1 if spec[0] == "int" else spec[0] + 0.3 * (spec[1] - spec[0]) for spec in case.params]
    return [jnp.full((4,), v, jnp.float32) for v in values]


JAX_DERIVATIVES = {
    "erf": "JAX's rule for erf",
    "zeta": "JAX's rule for the derivative with respect to q",
    "polygamma": "JAX's rule for zeta's derivative with respect to q",
}
"""Accurate functions whose derivative is JAX's rule, with an exponential at the default accuracy."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_computations_ask_xla_for_accuracy(name):
    # XLA:TPU approximates float32 exponentials and logarithms unless asked (docs/accelerators.md):
    # read from the compiled programs, value and derivative with respect to the last argument
    args = _inside_each_domain(CASES[name])

    def value(*a):
        return _call(name, [xp.asarray(v) for v in a]).jax

    def derivative(*a):
        return jax.jvp(lambda last: value(*a[:-1], last), (a[-1],), (jnp.ones_like(a[-1]),))[1]

    left = left_at_default_accuracy(value, *args)
    assert left == [], f"xp.special.{name}: {left} at XLA's default accuracy"
    if name not in JAX_DERIVATIVES:
        assert left_at_default_accuracy(derivative, *args) == [], f"the derivative of xp.special.{name}"


@pytest.mark.slow
def test_float32_gammaln_and_gamma_within_a_few_ulps():
    # xp's own float32 gammaln (JAX's is 7e-6 off away from its zeros and as large as the value
    # near them, on every backend; and on a TPU built on the approximate logarithm)
    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.uniform(lo, hi, 4000) for lo, hi in ((1e-6, 0.05), (0.05, 0.8), (0.8, 1.2), (1.2, 2.5), (2.5, 8), (8, 1e3))
    ]).astype(np.float32)  # fmt: skip
    x = np.concatenate(
        [x, np.float32(1) + np.float32(2) ** -np.arange(2.0, 23.0, dtype=np.float32), np.float32([1e30])]
    )
    got = np.asarray(xp.special.gammaln(xp.asarray(x)), np.float64)
    want = sp.gammaln(x.astype(np.float64))
    assert np.max(np.abs(got - want) / np.abs(want)) < 5e-7
    assert float(xp.special.gamma(xp.asarray(5.0, dtype=xp.float32))) == 24.0
    # gamma from products of exact factors and, from 8 on, Stirling's with x**(x/2 - 1/4) from xp's
    # pow (exp(lgamma(x)) is 1e-5 off near 30, JAX's gamma 358 ulps)
    x = np.linspace(1e-6, 35, 100_001, dtype=np.float32)
    got, want = np.asarray(xp.special.gamma(xp.asarray(x)), np.float64), sp.gamma(x.astype(np.float64))
    assert np.max(float32_ulps(got, want)) < 6
    # between the zeros 1 and 2 and just beyond, float32 arithmetic alone (no logarithm): the series
    # at the minimum 1.4616 and at 2 (lgamma(x + 1) - log(x) and log gamma(1 + u) + log1p(u) cancel
    # there, and were 8 and 4 ulps off)
    x = np.linspace(1.125, 2.5, 20001, dtype=np.float32)
    got = np.asarray(xp.special.gammaln(xp.asarray(x)), np.float64)
    want = sp.gammaln(x.astype(np.float64))
    assert np.max(float32_ulps(got, want)) < 2.5
    assert float(xp.special.gammaln(xp.asarray(2.0, dtype=xp.float32))) == 0.0


@pytest.mark.slow
def test_float32_psi_logit_and_expi_keep_their_relative_precision_near_their_zeros():
    # psi: Taylor series at 1, at its zero 1.4616 and at 2, and psi(x + 1) - 1/x below 0.8 (the
    # recurrence cancelled: 24 ulps at 1.1, 13 at 0.5, 3e-6 relatively near the zero); logit: log1p((2p - 1) / (1 - p)) near 1/2 (the logarithm
    # of a ratio near 1: 3e-3 relatively)
    x = np.concatenate([np.logspace(-30, -3, 1000), np.linspace(1e-3, 20, 100_001)]).astype(np.float32)
    want = sp.psi(x.astype(np.float64))
    assert np.max(float32_ulps(xp.special.psi(xp.asarray(x)), want)) < 2.5
    # and with XLA:TPU's division (a reciprocal 1.5e-7 off): psi's reciprocals are corrected
    # (4.8 ulps near 0.8 without), and the steps from [1.5, 2.5) up to 8 add terms of one sign
    # (the recurrence down from 8 cancelled: 9 ulps near 2.7)
    assert np.max(float32_ulps(with_the_tpu_s_division(xp.special.psi)(xp.asarray(x)), want)) < 2.5
    # logit, with both divisions too: its quotients are correctly rounded (with XLA:TPU's, 8 ulps
    # near p = 0.27, where log1p doubles the quotient's relative error)
    p = np.linspace(0.001, 0.999, 100_001, dtype=np.float32)
    want = sp.logit(p.astype(np.float64))
    nonzero = want != 0
    for logit in (xp.special.logit, with_the_tpu_s_division(xp.special.logit)):
        got = np.asarray(logit(xp.asarray(p)), np.float64)
        assert np.max(float32_ulps(got[nonzero], want[nonzero])) < 4
    assert float(xp.special.logit(xp.asarray(0.5, dtype=xp.float32))) == 0.0
    # expi near its zero 0.3725: the Taylor series there (gamma + log x against the sum: 1e-3 off)
    x = np.linspace(0.273, 0.472, 100_001, dtype=np.float32)
    want = sp.expi(x.astype(np.float64))
    for expi in (xp.special.expi, with_the_tpu_s_division(xp.special.expi)):
        assert np.max(float32_ulps(np.asarray(expi(xp.asarray(x)), np.float64), want)) < 4.5


@pytest.mark.parametrize("division", ["backend's", "TPU's"])
def test_float32_incomplete_gamma_keeps_its_precision_in_the_tails(division):
    # the prefactor x^a e^-x / Gamma(a) from its logarithm in double-float arithmetic: the exponent
    # reaches 70 in the tails, whose float32 rounding was 1.6e-5 of results near 1e-30
    a, x = (v.ravel().astype(np.float32) for v in np.meshgrid(np.linspace(0.5, 50, 100), np.linspace(0.05, 100, 400)))
    for name in ("gammainc", "gammaincc"):
        function = getattr(xp.special, name)
        function = function if division == "backend's" else with_the_tpu_s_division(function)
        got = np.asarray(function(xp.asarray(a), xp.asarray(x)), np.float64)
        want = getattr(sp, name)(a.astype(np.float64), x.astype(np.float64))
        normal = want > 1e-37
        assert np.max(np.abs(got - want)[normal] / want[normal]) < 4e-6, name


@pytest.mark.parametrize("division", ["backend's", "TPU's"])
def test_float32_incomplete_beta_keeps_its_precision_for_large_parameters(division):
    # the prefactor y^a (1 - y)^b / (a B(a, b)) from its logarithm in double-float arithmetic: its
    # terms reach hundreds for parameters of tens (2.3e-5 off; 2.2e-5 on a TPU)
    rng = np.random.default_rng(5)
    a, b = rng.uniform(0.5, 50, (2, 20000)).astype(np.float32)
    x = rng.uniform(0, 1, 20000).astype(np.float32)
    function = xp.special.betainc if division == "backend's" else with_the_tpu_s_division(xp.special.betainc)
    got = np.asarray(function(xp.asarray(a), xp.asarray(b), xp.asarray(x)), np.float64)
    want = sp.betainc(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    normal = want > 1e-37
    assert np.max(np.abs(got - want)[normal] / want[normal]) < 6e-6


@pytest.mark.parametrize("name", ["betainc", "betaincc", "bdtr", "bdtrc", "nbdtr", "nbdtrc", "fdtr", "stdtr"])
def test_the_incomplete_beta_family_computes_its_fraction_once(name, monkeypatch):
    # a complement (betaincc, the distributions on it, Student's t's tail beside its centre) comes
    # from the one continued fraction that gives I_x(a, b): not a second evaluation, nor the same
    # one over stacked copies of its arguments (twice the run time); the float32 prefactor's three
    # log gamma pairs are one evaluation over stacked copies (three copies compiled for seconds
    # longer on a CPU, a minute longer on a TPU). Counted as traced into the kernel's jaxpr.
    from xp.special import _gamma, _kernel, _probability

    traced = {"incomplete_beta": 0, "float32_log_gamma_pair": 0}
    stacked = []

    def stacking(function, *calls):
        stacked.append(function)
        return _kernel.evaluated_once(function, *calls)

    monkeypatch.setattr(_probability, "evaluated_once", stacking)

    def counting(module, function_name):
        original = getattr(module, function_name)

        def wrapper(*args, **kwargs):
            traced[function_name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, function_name, wrapper)

    counting(_probability, "incomplete_beta")
    counting(_gamma, "float32_log_gamma_pair")
    counting(_probability, "float32_log_gamma_pair")
    kernel = getattr(_probability, f"_{name}")
    args = [jnp.full((3,), v, jnp.float32) for v in (2.0, 5.0, 0.25)[-len(inspect.signature(kernel).parameters) :]]
    jax.clear_caches()  # (a loop's body traced by an earlier test would not be traced again)
    jax.make_jaxpr(kernel)(*args)
    assert traced == {"incomplete_beta": 1, "float32_log_gamma_pair": 1}, f"xp.special.{name}: {traced}"
    assert _probability.incomplete_beta not in stacked, f"xp.special.{name}: I_x(a, b) over stacked copies"


@pytest.mark.parametrize(
    "name", ["betainc", "betaincc", "bdtr", "fdtr", "stdtr", "gammainc", "gammaincc", "chdtr", "pdtr", "gdtr", "hyp1f1"]
)
def test_the_float32_prefactors_take_each_logarithm_pair_in_one_evaluation(name, monkeypatch):
    # a double-float logarithm (xp._double_float.log2_pair) is hundreds of operations: the float32
    # prefactors take theirs over stacked arguments, one for the powers' bases, one inside the log
    # gamma pairs (whose gamma below 8 has no use for Stirling's pow or lgamma), one in the
    # exponential's correction. Counted as traced into the kernel's jaxpr, every platform's branch
    # included (the TPU's pow is built on the same logarithm).
    from xp import _double_float, _float32_pow
    from xp.special import _integrals, _probability

    traced = []
    original = _double_float.log2_pair

    def counting(x):
        traced.append(x.shape)
        return original(x)

    monkeypatch.setattr(_double_float, "log2_pair", counting)
    monkeypatch.setattr(_float32_pow, "log2_pair", counting)
    kernel = getattr(_probability, f"_{name}", None) or getattr(_integrals, f"_{name}")
    args = [jnp.full((3,), v, jnp.float32) for v in (2.0, 5.0, 0.25)[-len(inspect.signature(kernel).parameters) :]]
    jax.clear_caches()  # (as above)
    jax.make_jaxpr(kernel)(*args)
    assert len(traced) == 3, f"xp.special.{name}: log2_pair traced for shapes {traced}"


@pytest.mark.slow
@pytest.mark.parametrize("division", ["backend's", "TPU's"])
def test_float32_stdtr_takes_its_quotients_correctly_rounded(division):
    # the tail I_y(df/2, 1/2) multiplies the rounding of y = df / (df + t**2) by df/2: y from
    # correctly rounded reciprocals on every backend (with XLA:TPU's division 6.2e-5 off)
    df, t = (v.ravel().astype(np.float32) for v in np.meshgrid(np.linspace(10, 300, 60), np.linspace(-12, 12, 200)))
    function = xp.special.stdtr if division == "backend's" else with_the_tpu_s_division(xp.special.stdtr)
    got = np.asarray(function(xp.asarray(df), xp.asarray(t)), np.float64)
    want = sp.stdtr(df.astype(np.float64), t.astype(np.float64))
    normal = want > 1e-37
    assert np.max(np.abs(got - want)[normal] / want[normal]) < 2e-5


@pytest.mark.parametrize(("name", "sign"), [("fdtr", 1), ("fdtrc", -1)])
def test_float32_f_distribution_derivatives_are_its_density(name, sign):
    # the derivative takes the tangent of whichever of w = dfn x / (dfd + dfn x) and 1 - w is below
    # 1/2: w's near 1 cancels (fdtr's derivative in x was 40 % off where dfn x >> dfd)
    import scipy.stats

    rng = np.random.default_rng(3)
    dfn, dfd = np.exp(rng.uniform(np.log(0.5), np.log(500), (2, 4000))).astype(np.float32)
    x = np.exp(rng.uniform(np.log(1e-4), np.log(1e4), 4000)).astype(np.float32)
    function = getattr(xp.special, name)
    derivative = jax.vmap(jax.grad(lambda a, b, v: function(xp.asarray(a), xp.asarray(b), xp.asarray(v)).jax, 2))
    got = np.asarray(jax.jit(derivative)(dfn, dfd, x), np.float64)
    density = scipy.stats.f.pdf(*(v.astype(np.float64) for v in (x, dfn, dfd)))
    normal = density > 1e-30
    assert np.max(np.abs(got - sign * density)[normal] / density[normal]) < 1e-4


def test_float32_incomplete_beta_prefactor_keeps_its_low_part_compiled():
    # log(y^p (1 - y)^q / (p B(p, q))) as a double-float pair, compiled: within the few ulps of
    # gamma below 8 (as many of 2**-24 absolutely). XLA's simplifier folds (c + x) - c into x, which
    # took the low part of 1 - y away where 1 came first (3.7e-6 off)
    from xp.special import _probability

    rng = np.random.default_rng(0)
    p, q = rng.uniform(0.5, 60, (2, 5000)).astype(np.float32)
    y = rng.uniform(0.001, 0.999, 5000).astype(np.float32)
    y1 = (1 - y.astype(np.float64)).astype(np.float32)
    hi, lo = jax.jit(_probability._log_beta_front_pair)(p, q, y, y1)
    got = np.asarray(hi, np.float64) + np.asarray(lo, np.float64)
    p64, q64 = p.astype(np.float64), q.astype(np.float64)
    low = y < 0.5
    log_y = np.log(np.where(low, y, 1 - y1.astype(np.float64)))
    log_y1 = np.log(np.where(low, 1 - y.astype(np.float64), y1))
    want = p64 * log_y + q64 * log_y1 - np.log(p64) - sp.betaln(p64, q64)
    assert np.max(np.abs(got - want)) < 5e-7


def test_float32_erfinv_within_a_few_ulps_up_to_one():
    # xp's float32 erfinv forms (1 - y)(1 + y), not 1 - y*y: JAX's is 64 ulps off near 0.9998
    y = np.concatenate([np.linspace(-0.9999999, 0.9999999, 200_001), 1 - np.logspace(-7.2, -1, 2000)]).astype(
        np.float32
    )
    got = np.asarray(xp.special.erfinv(xp.asarray(y)), np.float64)
    want = sp.erfinv(y.astype(np.float64))
    nonzero = want != 0
    assert np.max(float32_ulps(got[nonzero], want[nonzero])) < 4
    edges = np.asarray(xp.special.erfinv(xp.asarray(np.float32([1.0, -1.0, 1.5, -0.0, np.nan]))))
    assert np.array_equal(edges, np.float32([np.inf, -np.inf, np.nan, -0.0, np.nan]), equal_nan=True)
    assert np.signbit(edges[3])
    derivative = jax.grad(lambda v: xp.special.erfinv(v).jax)(xp.asarray(0.5, dtype=xp.float32))
    np.testing.assert_allclose(float(derivative), np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(0.5) ** 2), rtol=4e-7)


def test_float32_ndtri_within_a_few_ulps_into_the_far_tail():
    # Giles' erfinv with its w formed from p, and below p = 2**-25 Newton's method on log ndtr
    p = np.concatenate(
        [np.linspace(1e-6, 1 - 1e-6, 100_001), np.logspace(-37.9, -1, 4000), 1 - np.logspace(-7, -1, 500)]
    )
    p = np.concatenate([p.astype(np.float32), np.float32(2**-25) * np.float32([0.9999999, 1, 1.0000001])])
    got = np.asarray(xp.special.ndtri(xp.asarray(p)), np.float64)
    want = sp.ndtri(p.astype(np.float64))
    nonzero = want != 0
    assert np.max(float32_ulps(got[nonzero], want[nonzero])) < 5
    edges = np.asarray(xp.special.ndtri(xp.asarray(np.float32([0.0, 1.0, -0.5, 1.5, np.nan]))))
    assert np.array_equal(edges, np.float32([-np.inf, np.inf, np.nan, np.nan, np.nan]), equal_nan=True)
    # the derivative, 1 / pdf(ndtri(p)), in the centre and in the far tail
    points = np.float32([0.3, 1e-20])
    derivative = jax.vmap(jax.grad(lambda v: xp.special.ndtri(v).jax))(xp.asarray(points))
    x = sp.ndtri(points.astype(np.float64))
    want = np.sqrt(2 * np.pi) * np.exp(x * x / 2)
    np.testing.assert_allclose(float(derivative[0]), want[0], rtol=2e-6)
    # (exp(x**2 / 2) turns the rounding of x into x**2 of it: 86 float32 epsilons at x = -9.3)
    np.testing.assert_allclose(float(derivative[1]), want[1], rtol=1e-5)


@pytest.mark.parametrize("platform", ["cpu", "tpu"])
def test_float32_ndtri_s_newton_steps_take_the_continued_fraction_alone(platform):
    # the far tail's Newton steps need log ndtr and its slope, both from Laplace's continued fraction
    # to a few unrolled terms: not erfcx through all its branches (its erf and exponentials, and its
    # fraction to 200 terms in a loop), which every element computes wherever the steps are taken
    x = jnp.linspace(0.01, 0.99, 8, dtype=jnp.float32)
    program = jax.jit(lambda p: xp.special.ndtri(p).jax).trace(xp.asarray(x)).lower(lowering_platforms=(platform,))
    text = program.as_text()
    assert not any(op in text for op in ("stablehlo.while", "stablehlo.exponential", "chlo.erf")), platform


def test_float32_spence_within_a_few_ulps():
    # xp's float32 dilogarithm, a Bernoulli series in u = -log(1 - z) with |u| <= log 2 in each
    # range: JAX's is 14 ulps off, and NaN past 1e37
    x = np.concatenate([np.linspace(0, 10, 200_001), np.logspace(-30, 38, 4000)]).astype(np.float32)
    got = np.asarray(xp.special.spence(xp.asarray(x)), np.float64)
    want = sp.spence(x.astype(np.float64))
    nonzero = want != 0
    assert np.max(float32_ulps(got[nonzero], want[nonzero])) < 5
    edges = np.asarray(xp.special.spence(xp.asarray(np.float32([1.0, -1.0, np.inf, np.nan]))))
    assert np.array_equal(edges, np.float32([0.0, np.nan, np.nan, np.nan]), equal_nan=True)
    assert not np.signbit(edges[0])
    points = np.float32([0.3, 1.0, 1.5, 5.0])  # d/dx = log(x) / (1 - x), -1 at 1
    derivative = jax.vmap(jax.grad(lambda v: xp.special.spence(v).jax))(xp.asarray(points))
    want = [np.log(v) / (1 - v) if v != 1 else -1.0 for v in points.astype(np.float64)]
    np.testing.assert_allclose(np.asarray(derivative), want, rtol=4e-7)


@pytest.mark.slow
def test_float32_incomplete_gamma_functions_keep_float32_s_accuracy():
    # xp's float32 series and continued fraction (JAX's are 1.5e-2 off for a near 1e4, from the
    # rounding of a log x - x - lgamma(a); and on a TPU built on the approximate logarithm)
    rng = np.random.default_rng(4)
    a = np.concatenate([rng.uniform(lo, hi, 3000) for lo, hi in ((0.05, 1), (1, 8), (8, 50), (50, 1e3), (1e3, 9e3))])
    x = a * rng.uniform(0.01, 3, a.size)
    a, x = a.astype(np.float32), x.astype(np.float32)
    for name in ("gammainc", "gammaincc"):
        got = np.asarray(getattr(xp.special, name)(xp.asarray(a), xp.asarray(x)), np.float64)
        want = getattr(sp, name)(a.astype(np.float64), x.astype(np.float64))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=3e-6, err_msg=name)
    # far below the mean (x < a / 50) the prefactor takes log(x / a), not log1p(x / a - 1), whose
    # 1 + mu loses the digits of the small ratio (5.4e-4 off)
    a = rng.uniform(8, 50, 20000).astype(np.float32)
    x = (a * rng.uniform(0.0005, 0.02, a.size)).astype(np.float32)
    want = sp.gammainc(a.astype(np.float64), x.astype(np.float64))
    got = np.asarray(xp.special.gammainc(xp.asarray(a), xp.asarray(x)), np.float64)
    normal = want > 1e-30
    np.testing.assert_allclose(got[normal], want[normal], rtol=3e-5)
    # the continued fraction's converged elements keep their value while others still iterate
    a = xp.asarray(np.float32([5.991125, 1.4920329, 5000.0]))  # (the last takes hundreds of steps)
    got = np.asarray(xp.special.gammaincc(a, xp.asarray(np.float32([7.102993, 2.6227744, 5001.5]))), np.float64)
    np.testing.assert_allclose(got[:2], sp.gammaincc([5.991125, 1.4920329], [7.102993, 2.6227744]), rtol=2e-6)


@pytest.mark.slow
def test_incomplete_beta_of_an_element_does_not_depend_on_the_others():
    # the continued fraction runs until its slowest element converges; the others keep the value
    # they converged to (they drifted by an epsilon a step: 2.4e-6 for I_0.4(2.5, 3.5) beside a
    # parameter of 4000, 4.9e-7 alone)
    a, b = np.float32([2.5, 3.0, 4000.0]), np.float32([3.5, 2.0, 4000.0])
    x = np.float32([0.4, 0.55, 0.4999])
    together = np.asarray(xp.special.betainc(xp.asarray(a), xp.asarray(b), xp.asarray(x)))
    for i in range(3):
        alone = np.asarray(xp.special.betainc(*(xp.asarray(v[i : i + 1]) for v in (a, b, x))))
        assert together[i] == alone[0], i
    np.testing.assert_allclose(together[:2], sp.betainc(a[:2], b[:2], x[:2].astype(np.float64)), rtol=1e-6)


@pytest.mark.slow
def test_float32_error_functions_within_a_few_ulps():
    # xp's float32 erfc and erfcx: the continued fraction from 1/2, exp(-x**2) with x**2 exact
    # (JAX's erfc is 4e-6 off from x = 4, its erfcx below -1/2; on a TPU both are XLA's
    # expansions on the approximate exponential)
    x = np.random.default_rng(5).uniform(-9, 9.1, 50000).astype(np.float32)
    wide = x.astype(np.float64)
    for name in ("erfc", "erfcx"):
        got = np.asarray(getattr(xp.special, name)(xp.asarray(x)), np.float64)
        want = getattr(sp, name)(wide)
        normal = np.abs(want) > np.finfo(np.float32).tiny * 2**20  # (XLA flushes subnormals)
        assert np.max(np.abs(got - want)[normal] / np.abs(want[normal])) < 4e-7, name


def test_riemann_zeta_without_q():
    x = np.array([1.5, 2.0, 3.0, 10.0], dtype=np.float32)
    np.testing.assert_allclose(np.asarray(xp.special.zeta(xp.asarray(x))), sp.zeta(x), rtol=1e-5)
    assert float(xp.special.zeta(-1.0)) == pytest.approx(-1 / 12, rel=1e-6)  # SciPy's continuation; JAX: NaN
    assert float(xp.special.zeta(1.0)) == np.inf


@pytest.mark.x64
def test_hurwitz_zeta_of_a_huge_q():
    # zeta(x, q) ~ q^(1-x) / (x - 1): JAX's sum underflowed on the way to a representable result
    x, q = np.array([2.0, 1.5, 2.0, 1.0000001, 5.0]), np.array([1e200, 1e300, 1e300, 1e300, 1e50])
    np.testing.assert_allclose(np.asarray(xp.special.zeta(x, q)), sp.zeta(x, q), rtol=1e-13)


@pytest.mark.slow
@pytest.mark.x64
def test_riemann_zeta_below_one_is_scipys_continuation():
    # Borwein's eta on [-1/4, 1), the functional equation below (in logarithms: Gamma(1 - x)
    # overflows from x = -170, the product from about -300); against mpmath xp's is within
    # 1.3e-13 here, SciPy's within 4e-14. JAX's zeta is NaN below 1
    x = np.array([0.999999, 0.99, 0.5, 0.1, 1e-8, 0.0, -0.0, -1e-10, -1e-5, -0.25, -0.2500001, -0.3, -0.5,
                  -0.9, -1.0, -2.0, -2.5, -3.5, -7.0, -20.5, -100.5, -169.5, -200.5, -250.0, -251.0, -300.5])  # fmt: skip
    np.testing.assert_allclose(np.asarray(xp.special.zeta(x)), sp.zeta(x), rtol=3e-13)
    np.testing.assert_allclose(np.asarray(xp.special.zetac(x)), sp.zetac(x), rtol=3e-13)
    assert np.asarray(xp.special.zeta(np.array([-2.0, -4.0, -250.0]))).tolist() == [0.0, 0.0, 0.0]  # trivial zeros
    for x0 in (0.5, -0.1, -2.5):  # the derivative
        slope = float(jax.grad(lambda v: xp.special.zeta(v).jax)(x0))
        assert slope == pytest.approx((sp.zeta(x0 + 1e-6) - sp.zeta(x0 - 1e-6)) / 2e-6, rel=1e-8)


# --- the list, names and signatures -------------------------------------------------------------


def _scipy_table():
    from scipy.special import _support_alternative_backends as dispatch

    return {info.name: info for info in dispatch._special_funcs}


def test_every_function_of_scipys_table_is_provided_or_listed_missing():
    table = _scipy_table()
    provided = set(xp.special.__all__)
    assert set(table) <= provided | set(MISSING)
    assert provided <= set(table) | {"digamma"}  # nothing that SciPy does not look up
    assert not provided & set(MISSING)
    assert set(CASES) == provided  # every function has a value test
    docs = (ROOT / "docs" / "special.md").read_text()
    for name in table:  # the support table has a row for each, provided or not
        assert f"| `{name}` |" in docs, name


def test_arities_and_parameter_names_are_scipys():
    table = _scipy_table()
    for name in xp.special.__all__:
        parameters = inspect.signature(getattr(xp.special, name)).parameters
        if name == "digamma":
            continue
        assert len(parameters) == table[name].n_args, name
        doc = getattr(sp, name).__doc__.strip().splitlines()[0]  # "gammainc(a, x, out=None)"
        if doc.startswith(name + "("):
            scipy_names = [p.split("=")[0].strip() for p in doc[len(name) + 1 : doc.index(")")].split(",")]
            scipy_names = [p for p in scipy_names if p not in ("out", "*")]
            assert list(parameters) == scipy_names, name
        else:  # a Python function: its signature
            assert list(parameters) == list(inspect.signature(getattr(sp, name)).parameters)[: len(parameters)]


def test_functions_are_registered_as_xp_special():
    assert xp.special.erf.__module__ == "xp.special"
    assert xp.special.gammainc.__name__ == "gammainc"
    assert "special.erf" in xp._routing.PUBLIC_FUNCTIONS


# --- special values: SciPy's value or NaN, never another number -----------------------------------

EDGES = np.array([-np.inf, -3.5, -2.0, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 1.5, 2.0, 3.5, 10.0, 50.0, np.inf, np.nan])

# Where xp gives a number that is not SciPy's, because SciPy's is not the function's value.
SCIPY_DEVIATIONS = {
    # SciPy returns 0 for |x| > 1e14 degrees and for infinities ("loss of precision"); xp
    # reduces exactly (fmod is exact) and gives NaN at infinities
    "sindg": lambda x: np.abs(x) > 1e14,
    "cosdg": lambda x: np.abs(x) > 1e14,
    "tandg": lambda x: np.abs(x) > 1e14,
    "cotdg": lambda x: np.abs(x) > 1e14,
}


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", sorted(set(xp.special.__all__) - {"hyp1f1", "multigammaln"}))
def test_special_values_are_scipys_or_nan(name):
    arity = len([p for p in inspect.signature(getattr(xp.special, name)).parameters.values() if p.default is p.empty])
    grid = [np.array(t) for t in zip(*itertools.product(EDGES, repeat=arity), strict=True)]
    out = np.asarray(getattr(xp.special, name)(*grid))
    expected = np.asarray(_reference(name, grid), dtype=np.float64)
    agree = np.isclose(out, expected, rtol=1e-11, atol=1e-300, equal_nan=True) | np.isnan(out)
    deviation = SCIPY_DEVIATIONS.get(name)
    if deviation is not None:
        agree |= deviation(*grid)
    wrong = [(*(float(g[i]) for g in grid), out[i], expected[i]) for i in np.flatnonzero(~agree)]
    assert not wrong, wrong[:5]


@pytest.mark.x64
def test_hyp1f1_special_values():
    # SciPy's hyp1f1 does not return for some infinite arguments: finite ones only here
    finite = EDGES[np.isfinite(EDGES)]
    a, b, x = (np.array(t) for t in zip(*itertools.product(finite, repeat=3), strict=True))
    out = np.asarray(xp.special.hyp1f1(a, b, x))
    expected = sp.hyp1f1(a, b, x)
    assert np.all(np.isclose(out, expected, rtol=1e-10, equal_nan=True) | np.isnan(out))
    # computed: a >= 0, b > 0, x >= 0, and x < 0 with b >= a (Kummer's transformation)
    computed = (b > 0) & (((a >= 0) & (x >= 0)) | ((b >= a) & (x < 0)))
    assert not np.isnan(out[computed]).any()


# --- large parameters of the incomplete beta function ---------------------------------------


@pytest.mark.x64
@pytest.mark.parametrize("b", [1e6, 1e10, 1e15, 1e20, 1e100])
def test_betainc_keeps_its_precision_for_a_large_parameter(b):
    # JAX's prefactor took log B(a, b) as lgamma(a) + lgamma(b) - lgamma(a + b), which cancels:
    # 1e-9 off at b = 1e6, 2e-5 at 1e10, no digit left from about 1e15. Against mpmath xp's is
    # within 2.3e-13 here, SciPy's within 2e-15 but for 3.7e-11 at (2, 1e6)
    a = np.array([0.5, 2.0, 30.0])
    x = np.array([0.3, 2.0, 25.0]) / b
    np.testing.assert_allclose(np.asarray(xp.special.betainc(a, b, x)), sp.betainc(a, b, x), rtol=1e-10)


@pytest.mark.x64
def test_betaln_of_a_negative_and_a_large_argument():
    # log|B(a, b)| for negative non-integer a: the gammaln sum cancelled to 0 for b = 1e300
    # (the value is 346.65); Stirling's series for gammaln(b) - gammaln(a + b) keeps it
    a = np.array([-0.5, -3.5, -0.5, -2.5, -7.5, -0.5, -7.9, -1.5])
    b = np.array([1e300, 1e300, 1e10, 30.0, 20.0, 8.0, 16.0, 9.0])
    np.testing.assert_allclose(np.asarray(xp.special.betaln(a, b)), sp.betaln(a, b), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(xp.special.betaln(b, a)), sp.betaln(a, b), rtol=1e-13)


@pytest.mark.x64
@pytest.mark.parametrize("b", [1e4, 1e6, 1e10, 1e100])
def test_betaln_of_a_half_and_a_large_argument(b):
    # log B(1/2, b) = log Gamma(1/2) - log(Gamma(b + 1/2) / Gamma(b)), whose ratio is
    # sqrt(b) (1 - 1/(8b) + 1/(128 b^2) + 5/(1024 b^3) - ...), to 1e-17 from b = 1e4 (docs/special.md:
    # SciPy's betaln is off by 1.5e-10 at b = 1e6)
    w = 1 / b
    expected = 0.5 * np.log(np.pi) - 0.5 * np.log(b) - np.log1p(-w / 8 + w * w / 128 + 5 * w**3 / 1024)
    assert float(xp.special.betaln(0.5, b)) == pytest.approx(expected, rel=2e-16)


@pytest.mark.slow
@pytest.mark.x64
def test_gammaincc_of_a_small_shape_keeps_its_relative_precision():
    # Q(a, x) ~ a E1(x) as a -> 0; JAX's 1 - P(a, x) for x <= 1 kept only its absolute precision
    # (chdtrc(1e-300, 0.5) = Q(5e-301, 0.25) came out 3.5e-14). SciPy is within 9e-14 of mpmath here
    a, x = (g.ravel() for g in np.meshgrid([1e-300, 1e-20, 1e-8, 1e-3, 0.1, 0.2, 0.3, 0.49],
                                             [1e-300, 1e-20, 1e-5, 0.25, 0.5, 0.99, 1.0]))  # fmt: skip
    np.testing.assert_allclose(np.asarray(xp.special.gammaincc(a, x)), sp.gammaincc(a, x), rtol=2e-13)
    assert float(xp.special.chdtrc(1e-300, 0.5)) == pytest.approx(sp.chdtrc(1e-300, 0.5), rel=1e-13)
    # the derivatives: in x, minus the density; in a, by finite differences
    a0, x0 = 0.3, 0.5
    slope = float(jax.grad(lambda v: xp.special.gammaincc(a0, v).jax)(x0))
    assert slope == pytest.approx(-(x0 ** (a0 - 1)) * np.exp(-x0) / sp.gamma(a0), rel=1e-12)
    h = 1e-6
    da = float(jax.grad(lambda v: xp.special.gammaincc(v, x0).jax)(a0))
    assert da == pytest.approx((sp.gammaincc(a0 + h, x0) - sp.gammaincc(a0 - h, x0)) / (2 * h), rel=1e-7)


@pytest.mark.x64
def test_f_distribution_with_a_tiny_dfd():
    # 1 - w taken from a rounded w lost its precision (fdtr(539, 0.0011, 500) was 2e-9 off), and
    # where w rounds to 1 the end rule gave I = 1 (for 1 - w = 1e-17 and dfd/2 = 5e-4, I is far from 1)
    dfn, dfd, x = (
        np.array([539.09, 539.0, 3.0, 2.0]),
        np.array([0.0010868, 0.001, 0.001, 5.0]),
        np.array([500.28, 1e15, 1e20, 0.5]),
    )
    np.testing.assert_allclose(np.asarray(xp.special.fdtr(dfn, dfd, x)), sp.fdtr(dfn, dfd, x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.special.fdtrc(dfn, dfd, x)), sp.fdtrc(dfn, dfd, x), rtol=1e-13)


@pytest.mark.x64
def test_hyp1f1_is_scipys_or_nan_where_its_series_is_long():
    # for a much larger than b the series grows until about k = sqrt(a x): 250 terms gave 5.3e221
    # for 1F1(800; 0.09; 70) = 2.1e223; where they do not reach the decay, NaN
    a, b, x = np.array([800.0, 100.0, 500.0, 50.0]), np.array([0.09, 0.5, 1.0, 0.1]), np.array([70.0, 10.0, 30.0, 99.0])
    out, expected = np.asarray(xp.special.hyp1f1(a, b, x)), sp.hyp1f1(a, b, x)
    assert np.isnan(out[0])
    np.testing.assert_allclose(out[1:], expected[1:], rtol=1e-13)


HYP1F1_FAR = [(a, b, x) for a in (0.0, 1e-20, 0.5, 1.0, 2.5, 7.0, 20.0) for b in (0.3, 1.0, 3.5, 10.0, 30.0)
              for x in (100.0, 150.0, 500.0, 3000.0, -100.0, -400.0) if x > 0 or b >= a]  # fmt: skip


def _hyp1f1_far(dtype, hyp1f1=xp.special.hyp1f1):
    a, b, x = (np.array(v, dtype) for v in zip(*HYP1F1_FAR, strict=True))
    out = hyp1f1(*(xp.asarray(v) for v in (a, b, x)))
    return np.asarray(out, np.float64), sp.hyp1f1(*(v.astype(np.float64) for v in (a, b, x)))


@pytest.mark.x64
def test_hyp1f1_from_x_100_is_scipys_or_nan():
    # the asymptotic expansion's two series, with its prefactors from logarithms, where they reach
    # float64's precision, else the Taylor series where it does, else NaN (JAX's expansion was
    # 9e25 off for 1F1(20; 0.3; 100), 1 off for 1F1(1e-20; 30; 100) = 1.0000034)
    out, expected = _hyp1f1_far(np.float64)
    computed = ~np.isnan(out)
    np.testing.assert_allclose(out[computed], expected[computed], rtol=1e-12)
    assert computed.sum() >= len(HYP1F1_FAR) - 4  # (1F1(20; b; 150): neither series is short)


@pytest.mark.parametrize("division", ["backend's", "TPU's"])
def test_hyp1f1_from_x_100_in_float32(division):
    # float32's prefactor Gamma(b) / Gamma(a) e**x x**(a - b) as 2**t, t in double-float arithmetic
    # from log2 gamma (e**x alone overflows from x = 89; the float32 sum of lgamma(30), x = 150
    # and (a - b) log x was 8.3e-6 off, 2.2e-5 on a TPU), with XLA:TPU's division too
    hyp1f1 = xp.special.hyp1f1 if division == "backend's" else with_the_tpu_s_division(xp.special.hyp1f1)
    out, expected = _hyp1f1_far(np.float32, hyp1f1)
    normal = np.isfinite(expected) & (np.abs(expected) > 1e-37) & (np.abs(expected) < 3e38) & ~np.isnan(out)
    np.testing.assert_allclose(out[normal], expected[normal], rtol=6e-6)
    assert np.sum(~np.isnan(out[normal | (np.abs(expected) > 3e38)])) >= len(HYP1F1_FAR) - 4
    assert np.all(np.isinf(out[np.abs(expected) > 3e38]))


@pytest.mark.x64
def test_finite_results_whose_intermediates_overflow():
    # poch as a ratio of gamma values: Gamma(200) overflows, Gamma(200) / Gamma(100) does not
    z, m = np.array([100.0, 100.0, 5.0, 1e300, 300.0]), np.array([100.0, -99.5, 3.0, 1.0, -299.9])
    np.testing.assert_allclose(np.asarray(xp.special.poch(z, m)), sp.poch(z, m), rtol=1e-12)
    # inv_boxcox(y, lmbda) = (1 + lmbda y)^(1/lmbda), whose lmbda y overflows: exp(log(1e600) / 1e300)
    assert float(xp.special.inv_boxcox(1e300, 1e300)) == pytest.approx(np.exp(600 * np.log(10) / 1e300), rel=1e-15)
    assert float(xp.special.inv_boxcox1p(1e300, 1e300)) == pytest.approx(np.expm1(600 * np.log(10) / 1e300), rel=1e-12)


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("df", [1e3, 1e5, 1e6, 1e8, 1e10, 1e15, 1e20, 1e300])
def test_stdtr_with_many_degrees_of_freedom(df):
    # the tail's continued fraction needs of the order of sqrt(df) terms: against mpmath, JAX's
    # was 1.8e-11 off at df = 1e6 and t = -3, 4e-8 at 1e10, wrong in every digit at 1e20 (SciPy
    # agrees with mpmath to 1.2e-13 here, xp to 8e-14 but for 7e-12 at 9e-300, t = -37)
    t = np.array([-37.0, -30.0, -10.0, -3.0, -0.5, -1e-8, 0.0, 1e-8, 0.5, 3.0, 10.0])
    out = np.asarray(xp.special.stdtr(np.full_like(t, df), t))
    np.testing.assert_allclose(out, sp.stdtr(df, t), rtol=1e-11)
    # its derivative is the density
    slope = jax.vmap(jax.grad(lambda v: xp.special.stdtr(df, v).jax))(xp.asarray(t).jax)
    np.testing.assert_allclose(np.asarray(slope), _student_t_density(df, t), rtol=1e-9)


def _student_t_density(df: float, t: np.ndarray) -> np.ndarray:
    # Gamma(h + 1/2) / (Gamma(h) sqrt(h)) with h = df/2 by its asymptotic series (the difference
    # of two gammaln values cancels for large df), to 1e-14 from df = 1e3
    w = 2 / df  # 1 / h
    ratio = 1 - w / 8 + w * w / 128 + 5 * w**3 / 1024
    return ratio / np.sqrt(2 * np.pi) * np.exp(-(df + 1) / 2 * np.log1p(t * t / df))


@pytest.mark.slow
def test_stdtr_with_many_degrees_of_freedom_in_float32():
    t = np.array([-10.0, -3.0, -0.5, 0.5, 3.0], np.float32)
    for df in (1e4, 1e6, 1e12):
        out = np.asarray(xp.special.stdtr(np.full_like(t, df), t))
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, sp.stdtr(df, t.astype(np.float64)), rtol=2e-5)


@pytest.mark.slow
def test_exact_values():
    # multiples of 90 degrees give exact values: the reduction is exact
    big = 360.0 * 2**10  # a multiple of 360 (float32 resolves 90 beside it too)
    assert np.asarray(xp.special.sindg(xp.asarray([90.0, 180.0, 270.0, -90.0, big, big + 90]))).tolist() == [
        1.0, 0.0, -1.0, -1.0, 0.0, 1.0
    ]  # fmt: skip
    assert np.asarray(xp.special.cosdg(xp.asarray([0.0, 90.0, 180.0, big + 180]))).tolist() == [1.0, 0.0, -1.0, -1.0]
    assert float(xp.special.tandg(45.0)) == 1.0 and float(xp.special.tandg(-135.0)) == 1.0
    assert float(xp.special.tandg(90.0)) == np.inf and float(xp.special.cotdg(0.0)) == np.inf  # SciPy's convention
    n_choose_k = np.asarray(xp.special.binom(xp.asarray([10.0, 52.0, 3.0]), xp.asarray([3.0, 5.0, 5.0]))).tolist()
    assert n_choose_k[0] == 120.0 and n_choose_k[2] == 0.0
    assert n_choose_k[1] == pytest.approx(2598960.0, rel=1e-6)  # exact in float64
    assert float(xp.special.psi(0.0)) == -np.inf and float(xp.special.psi(-0.0)) == np.inf
    assert float(xp.special.rgamma(-3.0)) == 0.0 and float(xp.special.loggamma(0.0)) == np.inf
    assert float(xp.special.expi(np.inf)) == np.inf and float(xp.special.expi(0.0)) == -np.inf  # (JAX: NaN at inf)


@pytest.mark.slow
@pytest.mark.x64
def test_where_scipy_is_inaccurate_xp_is_not():
    # cot(1e-8 degrees) = 180 / (pi 1e-8); SciPy's cotdg is off by 2e-7 here
    assert float(xp.special.cotdg(1e-8)) == pytest.approx(180 / (np.pi * 1e-8), rel=1e-15)
    # Student's t with 1 degree of freedom is Cauchy's: 1/2 + atan(t) / pi; SciPy's is off by 3e-10
    assert float(xp.special.stdtr(1.0, 1e-8)) == pytest.approx(0.5 + np.arctan(1e-8) / np.pi, rel=1e-15)
    # inv_boxcox1p(y, lmbda) tends to expm1(y) as lmbda -> 0; SciPy returns y for |lmbda| < 1e-154
    assert float(xp.special.inv_boxcox1p(1.0, 1e-200)) == pytest.approx(np.expm1(1.0), rel=1e-15)
    # boxcox1p(x, lmbda) tends to log1p(x); JAX's is 0 where lmbda log1p(x) underflows
    assert float(xp.special.boxcox1p(1e-138, 1e-256)) == pytest.approx(1e-138, rel=1e-15)
    # JAX's betaln is off by 2e-7 (relative) for max(a, b) >= 8: B(1, 10) = 1/10
    assert float(xp.special.betaln(1.0, 10.0)) == pytest.approx(np.log(0.1), rel=1e-15)
    # JAX's erfcx is 0 for 26.54 <= x <= 26.64 (float64)
    assert float(xp.special.erfcx(26.6)) == pytest.approx(sp.erfcx(26.6), rel=1e-14)
    # JAX's hyp1f1 stops its series before the terms grow when a is small
    assert float(xp.special.hyp1f1(1e-20, 0.125, 11.0)) == pytest.approx(sp.hyp1f1(1e-20, 0.125, 11.0), rel=1e-14)


@pytest.mark.slow
def test_exponential_integrals_of_small_arguments():
    # JAX's exp1, expi and expn run their continued fraction on every element of an array, which
    # for x = 1e-8 iterates for minutes; xp gives each element only the branch of its range. (How
    # long it takes is no test's business: a regression would show as minutes in CI's log.)
    x = np.array([1e-8, 1e-5, 0.5, 1.0, 2.0, 50.0], dtype=np.float32)
    np.testing.assert_allclose(np.asarray(xp.special.exp1(x)), sp.exp1(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(xp.special.expi(-x)), sp.expi(-x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(xp.special.expn(3, x)), sp.expn(3, x), rtol=1e-5)


@pytest.mark.integration
def test_incomplete_gamma_of_large_a_is_accurate_and_prompt():
    # JAX's series and continued fraction drift as a grows (2e-3 relative error at a = 1e12) and,
    # for x near a, never finish from about a = 1e16 (in a subprocess, to stop them). The x are
    # where SciPy's reference is its own asymptotic expansion, |x - a| < 4.5 sqrt(a), and beyond.
    a = np.repeat([1e4, 1e5, 1e8, 1e12, 1e20], 8)
    x = a * (1 + np.tile([-1.0, -0.5, -0.1, 0.0, 1e-3, 0.1, 0.5, 1.0], 5) * 4 / np.sqrt(a))
    a, x = np.concatenate([a, [1e4, 1e20]]), np.concatenate([x, [5e3, 3e20]])
    args = [",".join(map(repr, v.tolist())) for v in (a, x)]
    done = run_script("gammainc_of_large_a", *args, timeout=120)
    assert done.returncode == 0, failure(done)
    p, q = np.array(done.stdout.strip().split(","), dtype=np.float64).reshape(2, -1)
    np.testing.assert_allclose(p, sp.gammainc(a, x), rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(q, sp.gammaincc(a, x), rtol=1e-9, atol=1e-300)


@pytest.mark.integration
def test_expn_of_huge_orders_returns_promptly():
    # JAX's expn evaluates all its methods on every element of an array, one of them a loop of n
    # steps: an order of 3e38 beside any other element ran forever (in a subprocess, to stop it)
    n = np.array([np.finfo(np.float32).max, 1e9, 5000, 7000, 1e5, 2, 3], dtype=np.float32)
    x = np.array([2.0, 2.0, 0.5, 100.0, 1e5, 2.0, 0.5], dtype=np.float32)
    args = [",".join(map(repr, v.tolist())) for v in (n, x)]
    done = run_script("expn_of_huge_orders", *args, timeout=120)
    assert done.returncode == 0, failure(done)
    got = np.array(done.stdout.strip().split(","), dtype=np.float64)
    expected = sp.expn(n[1:].astype(np.int64), x[1:].astype(np.float64))
    expected = np.array([np.exp(-2.0) / (float(n[0]) + 2.0), *expected])  # (SciPy's orders are C ints)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-37)


def complex_parts():
    """Real or imaginary parts from 1e-3 to 1e300 in size, both signs, zeros, integers, infinities."""
    scaled = st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-3, 299))
    special = st.sampled_from([0.0, -0.0, 1.0, 2.0, -3.0, -2.5, 7.0, -7.0, 7.5, np.inf, -np.inf, np.nan])
    return scaled | special | st.integers(-40, 40).map(float)


@pytest.mark.x64
@given(st.lists(st.builds(complex, complex_parts(), complex_parts()), min_size=1, max_size=LENGTH))
def test_complex_loggamma_matches_scipy_everywhere(values):
    # JAX's complex loggamma steps a real part below 1/2 up one at a time: it never returned for
    # -1e30, took seconds at -1e7, and its loop has no reverse-mode derivative; xp computes
    # SciPy's scheme (Stirling, Taylor at 1 and 2, recurrence, reflection) without loops
    z = np.array(values + [0j] * (LENGTH - len(values)), np.complex128)
    got = np.asarray(xp.special.loggamma(xp.asarray(z)))
    expected = sp.loggamma(z)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    finite = ~np.isnan(expected)
    # relative to |value| and to the size of the terms that cancel near the zeros at 1 and 2
    scale = np.maximum(np.abs(expected[finite]), 1.0)
    np.testing.assert_array_less(np.abs(got[finite] - expected[finite]) / scale, 1e-13)
    # the principal branch is symmetric, log gamma(conj z) = conj(log gamma(z)), signed zeros included
    mirrored = np.conj(np.asarray(xp.special.loggamma(xp.asarray(np.conj(z)))))
    assert np.array_equal(mirrored.view(np.float64), got.view(np.float64), equal_nan=True), (mirrored, got)


@pytest.mark.parametrize("name", ["gammaln", "loggamma"])
def test_log_gamma_keeps_its_relative_precision_near_its_zeros(name):
    # JAX's lgamma is off by 7e-10 of the value at 1 + 4e-6; the Taylor series at 1 and 2 is not.
    # The reference: the series to u**4 (the rest is below 1e-20 of the value for |u| <= 1e-5),
    # computed exactly in rationals from the double values of its coefficients
    dtype = DEFAULT_FLOAT
    u = np.array([4e-6, -3e-6, 1e-5, 2.5e-8, -7e-7, 3e-6, 6e-7, -1e-5], dtype=dtype)
    zeta = [Fraction(v) for v in (0.5772156649015329, 1.6449340668482264, 1.2020569031595942, 1.0823232337111381)]

    def log_gamma_1_plus(v):  # -euler_gamma v + sum over k of (-1)**k zeta(k) v**k / k
        return -zeta[0] * v + sum((-1) ** k * zeta[k - 1] * v**k / k for k in (2, 3, 4))

    def log_1_plus(v):
        return sum((-1) ** (k + 1) * v**k / k for k in (1, 2, 3, 4))

    for at in (1, 2):  # log gamma(2 + u) = log(1 + u) + log gamma(1 + u)
        x = (at + u).astype(dtype)
        exact = []
        for v in (x - at).tolist():
            v = Fraction(v)
            exact.append(float(log_gamma_1_plus(v) + (log_1_plus(v) if at == 2 else 0)))
        got = np.asarray(getattr(xp.special, name)(xp.asarray(x)))
        np.testing.assert_allclose(got, exact, rtol=4 * np.finfo(dtype).eps)


@pytest.mark.slow
def test_complex_loggamma_has_no_loop_and_a_gradient():
    z = xp.asarray(np.array([-1e30 + 0.5j, complex(-np.inf, 1.0), -3.3 + 0.5j], np.complex64))
    assert "while" not in str(jax.make_jaxpr(xp.special.loggamma)(z))
    assert np.isnan(np.asarray(xp.special.loggamma(z))[1])
    for z0 in (-3.3 + 0.5j, 0.3 + 0.2j, 1.1 + 0.05j, 4 + 1j, -20 + 9j, 30 - 2j):
        # d Re loggamma(x + iy) / dx = Re psi(x + iy)
        slope = jax.grad(lambda t, z0=z0: xp.real(xp.special.loggamma(xp.asarray(t + 1j * z0.imag))).jax)(z0.real)
        assert float(slope) == pytest.approx(sp.psi(z0).real, rel=1e-5), z0


# --- dtypes ---------------------------------------------------------------------------------------


def test_integers_and_booleans_are_computed_in_the_default_float():
    for value in (xp.asarray([1, 2], dtype=xp.int16), xp.asarray([True, False]), 1, True):
        out = xp.special.erf(value)
        assert out.dtype == DEFAULT_FLOAT
    assert xp.special.gammainc(xp.asarray([1, 2]), xp.asarray([1, 3], dtype=xp.uint8)).dtype == DEFAULT_FLOAT
    np.testing.assert_allclose(np.asarray(xp.special.gammaln(xp.asarray([5]))), [np.log(24.0)], rtol=1e-6)


@pytest.mark.slow
def test_float32_stays_float32():
    x32 = xp.asarray([0.5, 1.5], dtype=xp.float32)
    assert xp.special.erf(x32).dtype == xp.float32
    assert xp.special.gammainc(2, x32).dtype == xp.float32  # a Python scalar takes the array's dtype
    assert xp.special.gammainc(x32, 2.5).dtype == xp.float32
    assert xp.special.betainc(x32, xp.asarray([1, 2], dtype=xp.int16), 0.5).dtype == xp.float32
    assert xp.special.xlogy(x32, np.float32(2.0)).dtype == xp.float32


@pytest.mark.x64
def test_float64_stays_float64_and_promotes():
    x32, x64 = xp.asarray([0.5], dtype=xp.float32), xp.asarray([0.5], dtype=xp.float64)
    assert xp.special.ndtr(x64).dtype == xp.float64
    assert xp.special.gammainc(x32, x64).dtype == xp.float64
    assert xp.special.erf(2).dtype == xp.float64  # SciPy computes integers in float64


@pytest.mark.x64_off
def test_integers_are_float32_with_64_bit_mode_off():
    assert xp.special.erf(xp.asarray([1, 2])).dtype == xp.float32
    assert xp.special.stdtr(3, 0.5).dtype == xp.float32
    with pytest.raises(TypeError, match=r"xp.special.erf: z has dtype float64: float64 needs JAX's 64-bit mode"):
        xp.special.erf(np.asarray([0.5]))


@pytest.mark.x64
def test_complex_where_scipy_and_jax_compute_it():
    z = np.array([0.5 + 0.5j, -1.2 + 2j, 3 - 1j])
    for name in ("gamma", "loggamma", "erfcx", "sinc"):
        out = getattr(xp.special, name)(z)
        assert out.dtype == xp.complex128
        np.testing.assert_allclose(np.asarray(out), getattr(sp, name)(z), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.special.xlogy(z, z[::-1])), sp.xlogy(z, z[::-1]), rtol=1e-12)
    assert xp.special.xlogy(1.0, xp.asarray([1j], dtype=xp.complex64)).dtype == xp.complex64


def test_complex_elsewhere_is_a_type_error():
    z = xp.asarray([1 + 1j])
    with pytest.raises(
        TypeError, match=r"^xp.special.erf: z has dtype complex\d+, but xp.special.erf takes real input only"
    ):
        xp.special.erf(z)
    with pytest.raises(TypeError, match=r"^xp.special.gammainc: x has dtype complex\d+"):
        xp.special.gammainc(xp.asarray([1.0]), z)
    with pytest.raises(TypeError, match=r"^xp.special.psi: z has dtype complex\d+.*JAX's digamma is real-valued"):
        xp.special.psi(z)


# --- arguments ------------------------------------------------------------------------------------


def test_broadcasting():
    a = np.array([[0.5], [1.0], [2.0]], dtype=np.float32)
    x = np.array([0.1, 1.0, 3.0, 10.0], dtype=np.float32)
    out = xp.special.gammainc(a, x)
    assert out.shape == (3, 4)
    np.testing.assert_allclose(np.asarray(out), sp.gammainc(a, x), rtol=1e-5)
    assert xp.special.betainc(a, 1.0, x).shape == (3, 4)
    with pytest.raises(
        ValueError, match=r"^xp.special.gammainc: a, x cannot be broadcast together: shapes \(2,\), \(3,\)"
    ):
        xp.special.gammainc(xp.ones(2), xp.ones(3))


def test_bad_arguments_name_the_function_and_parameter():
    with pytest.raises(TypeError, match=r"^xp.special.erf: z must be an array or a Python scalar, got str 'a'$"):
        xp.special.erf("a")
    with pytest.raises(TypeError, match=r"^xp.special.gammainc: x must be an array or a Python scalar, got NoneType"):
        xp.special.gammainc(1.0, None)
    with pytest.raises(TypeError, match=r"^xp.special.betainc: b must be .*lists and tuples are not arrays"):
        xp.special.betainc(1.0, [1.0], 0.5)
    with pytest.raises(TypeError, match=r"^xp.special.ndtr: x has dtype float16, which is not an array API dtype"):
        xp.special.ndtr(np.ones(2, dtype=np.float16))
    with pytest.raises(TypeError, match=r"^xp.special.multigammaln: d must be an integer, got float 1.5"):
        xp.special.multigammaln(3.0, 1.5)
    with pytest.raises(ValueError, match=r"^xp.special.multigammaln: d must be a positive integer, got 0"):
        xp.special.multigammaln(3.0, 0)
    with pytest.raises(TypeError, match=r"^xp.special.zeta: q must be"):
        xp.special.zeta(2.0, "1")
    with pytest.raises(TypeError):
        xp.special.erf(1.0, 2.0)  # SciPy's ufuncs take their inputs only


def test_sparse_arguments_are_computed_densely_with_a_warning():
    dense = xp.asarray([[0.0, 0.5], [1.5, 0.0]])
    sparse = xp.sparse.fromdense(dense)
    with pytest.warns(xp.sparse.SparseEfficiencyWarning, match=r"^xp.special.erf has no sparse implementation"):
        out = xp.special.erf(sparse)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(xp.special.erf(dense)))


# --- transformations ------------------------------------------------------------------------------


@pytest.mark.slow
def test_jit_gives_the_eager_values():
    a = xp.asarray([0.5, 2.0, 7.5], dtype=xp.float32)
    x = xp.asarray([0.25, 1.0, 4.0], dtype=xp.float32)
    for name in ("gammainc", "betaln", "xlogy", "kl_div", "stdtr", "expn", "zeta", "hyp1f1"):
        args = (a, x) if name != "hyp1f1" else (a, a + 1, x)
        if name == "expn":
            args = (xp.asarray([0, 1, 3]), x)
        eager = getattr(xp.special, name)(*args)
        traced = jax.jit(getattr(xp.special, name))(*args)
        assert isinstance(traced, xp.Array) and traced.dtype == eager.dtype
        # (XLA:TPU may approximate a logarithm differently inside a larger program)
        np.testing.assert_allclose(np.asarray(traced), np.asarray(eager), rtol=1e-6)
    # Python scalars inside a trace, and a static d
    out = jax.jit(lambda v: xp.special.gammainc(2, v) + xp.special.multigammaln(v + 3, 2))(x)
    np.testing.assert_allclose(
        np.asarray(out), sp.gammainc(2, np.asarray(x)) + sp.multigammaln(np.asarray(x) + 3, 2), rtol=1e-5
    )


@pytest.mark.slow
def test_vmap():
    x = xp.asarray([[0.5, 1.0], [2.0, 3.0]], dtype=xp.float32)
    out = jax.vmap(lambda row: xp.special.expi(row))(x)
    np.testing.assert_allclose(np.asarray(out), sp.expi(np.asarray(x)), rtol=1e-5)


@pytest.mark.slow
@pytest.mark.x64
def test_grad():
    def grad(f, x):
        return float(jax.grad(lambda v: xp.sum(f(v)).jax)(xp.asarray(x)))

    assert grad(xp.special.erf, 0.3) == pytest.approx(2 / np.sqrt(np.pi) * np.exp(-0.09), rel=1e-12)
    assert grad(xp.special.gammaln, 3.5) == pytest.approx(sp.psi(3.5), rel=1e-12)
    assert grad(xp.special.ndtr, 0.7) == pytest.approx(np.exp(-0.49 / 2) / np.sqrt(2 * np.pi), rel=1e-12)
    assert grad(lambda y: xp.special.xlogy(2.0, y), 1.5) == pytest.approx(2 / 1.5, rel=1e-12)
    assert grad(lambda a: xp.special.betaln(a, 12.0), 2.5) == pytest.approx(sp.psi(2.5) - sp.psi(14.5), rel=1e-10)
    assert grad(xp.special.exp1, 0.5) == pytest.approx(-np.exp(-0.5) / 0.5, rel=1e-12)
    assert grad(xp.special.expit, 0.2) == pytest.approx(sp.expit(0.2) * (1 - sp.expit(0.2)), rel=1e-12)
    assert grad(lambda x: xp.special.gammainc(2.0, x), 1.5) == pytest.approx(1.5 * np.exp(-1.5), rel=1e-10)
    assert grad(xp.special.ellipk, 0.3) == pytest.approx(
        (sp.ellipe(0.3) - 0.7 * sp.ellipk(0.3)) / (2 * 0.3 * 0.7), rel=1e-10
    )


def _slopes(function, *args, argnum=0):
    """The derivatives of an elementwise xp.special function in one argument, at each element."""
    derivative = jax.grad(lambda *a: function(*(xp.asarray(v) for v in a)).jax, argnum)
    return np.asarray(jax.jit(jax.vmap(derivative))(*args), np.float64)


def _scipy_slopes(name, args, argnum, step):
    """SciPy's central differences in float64 at ``args``, over ``step`` (an array) either side."""
    point = [np.asarray(a, np.float64) for a in args]
    up, down = list(point), list(point)
    up[argnum], down[argnum] = point[argnum] + step, point[argnum] - step
    return (getattr(sp, name)(*up) - getattr(sp, name)(*down)) / (2 * step)


def test_float32_log_gamma_derivatives_far_from_their_series():
    # float32 gammaln, loggamma and digamma evaluate their series for every element and take
    # Stirling's form from 8 on: far from 8 the series overflow, and the zero cotangent of the
    # discarded branch times inf made the derivative NaN (gammaln from x = 200 on, digamma from 99)
    x = np.float32([0.3, 2.0, 7.5, 8.0, 9.0, 99.0, 200.0, 5e3, 1e6, 1e20])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(_slopes(xp.special.gammaln, x), sp.digamma(x64), rtol=2e-6)
    np.testing.assert_allclose(_slopes(xp.special.loggamma, x), sp.digamma(x64), rtol=2e-6)
    np.testing.assert_allclose(_slopes(xp.special.digamma, x), sp.polygamma(1, x64), rtol=2e-6)
    a, b = np.float32([3.0, 150.0, 400.0, 2e4]), np.float32([250.0, 150.0, 7.0, 3e4])
    want = sp.digamma(a.astype(np.float64)) - sp.digamma(a.astype(np.float64) + b)
    np.testing.assert_allclose(_slopes(xp.special.betaln, a, b), want, rtol=1e-4)


def test_float32_digamma_s_derivative_is_whole_where_its_branches_meet():
    # psi from 8 on took max(y, 8), whose derivative is half the slope where its operands tie:
    # psi'(8) came out half of trigamma(8)
    x = np.float32([7.0, 8.0, 16.0])
    np.testing.assert_allclose(_slopes(xp.special.digamma, x), sp.polygamma(1, x.astype(np.float64)), rtol=2e-6)


def test_float32_gamma_s_derivative_up_to_and_past_its_overflow():
    # gamma' = gamma psi: the product rule through Stirling's p (p e**-x) gave inf - inf (NaN)
    # before gamma overflows, and the discarded reflection's exp(lgamma(x)) NaN after
    x = np.float32([-2.5, 0.5, 20.0, 30.0, 34.0, 35.0, 60.0])
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore"):
        want = (sp.gamma(x64) * sp.digamma(x64)).astype(np.float32).astype(np.float64)
    got = _slopes(xp.special.gamma, x)
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=2e-6)
    assert np.array_equal(got[~np.isfinite(want)], want[~np.isfinite(want)])  # +inf, as float64's


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.x64)])
def test_rgamma_s_derivative_at_its_zeros_and_where_gamma_overflows(dtype):
    # (1/gamma)' = -psi / gamma, and (-1)**n n! at gamma's pole -n (where 1/gamma is 0); the
    # quotient rule gave inf / inf (NaN) where gamma overflows, and the poles a slope of 0
    x = np.array([-3.0, -2.0, -1.0, 0.0, -2.5, 0.5, 1.0, 5.0, 30.0, 300.0], dtype)
    want = np.array([-6.0, 2.0, -1.0, 1.0, *(-sp.digamma(x[4:].astype(np.float64)) * sp.rgamma(x[4:]))])
    np.testing.assert_allclose(_slopes(xp.special.rgamma, x), want, rtol=2e-6, atol=1e-37)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "gdtr", "gdtrc", "pdtr", "pdtrc", "chdtr", "chdtrc"])
def test_float32_incomplete_gamma_derivatives_where_the_value_rounds_to_a_bound(name):
    # the probabilities were clipped into [0, 1] by a clip whose derivative is half the slope
    # where the value equals the bound: in float32's tails, which round to exactly 0 or 1
    args = {
        "gammainc": ([10.6175, 26.81], [38.7449, 65.97]),
        "gammaincc": ([26.99, 32.24], [7.484, 9.68]),
        "gdtr": ([2.99, 1.78], [7.66, 1.46], [11.09, 10.64]),
        "gdtrc": ([1.73, 0.17], [18.79, 8.12], [2.0, 2.42]),
        "pdtr": ([21.0, 29.0], [5.11, 8.95]),
        "pdtrc": ([3.0, 2.0], [27.17, 24.23]),
        "chdtr": ([6.94, 39.68], [50.27, 111.11]),
        "chdtrc": ([33.97, 37.48], [5.54, 7.09]),
    }[name]  # fmt: skip (values within 3e-8 of 1, which float32 rounds to 1: slopes of 1e-8 and more)
    function = getattr(xp.special, name)
    arrays = [np.float32(v) for v in args]
    value = np.asarray(function(*(xp.asarray(v) for v in arrays)))
    assert np.all((value == 0) | (value == 1)), value  # (the case of the test)
    for argnum in range(len(arrays)):
        if name in ("pdtr", "pdtrc") and argnum == 0:
            continue  # (k enters as floor(k): no slope)
        got = _slopes(function, *arrays, argnum=argnum)
        want = _scipy_slopes(name, arrays, argnum, 1e-4 * np.abs(arrays[argnum].astype(np.float64)))
        # (the derivative in the shape parameter is JAX's lax.igamma_grad_a: 3e-3 off on a TPU,
        # on XLA:TPU's approximate exponentials; the fault this test is for is a factor of 2)
        shape = argnum == (1 if name in ("gdtr", "gdtrc") else 0)
        np.testing.assert_allclose(got, want, rtol=1e-2 if shape else 1e-3, err_msg=f"{name}, argument {argnum}")


def test_float32_erfcx_s_derivative_keeps_its_digits_for_large_x():
    # 2 x erfcx(x) - 2 / sqrt(pi) cancels as x grows (2e-3 off at x = 100, nothing left at 1e4):
    # from 5 on the derivative is its asymptotic series; 0 at inf
    x = np.float32([0.3, 1.0, 4.5, 5.0, 8.0, 100.0, 1e4, 1e6, np.inf])
    x64 = x[:-1].astype(np.float64)
    k = np.arange(1, 17)[:, None]
    terms = (-1.0) ** k * np.array([np.prod(np.arange(1, 2 * n, 2)) for n in range(1, 17)])[:, None] / (2 * x64**2) ** k
    series = 2 / np.sqrt(np.pi) * terms.sum(axis=0)
    want = np.where(x64 >= 8, series, 2 * x64 * sp.erfcx(x64) - 2 / np.sqrt(np.pi))
    got = _slopes(xp.special.erfcx, x)
    np.testing.assert_allclose(got[:-1], want, rtol=3e-6)
    assert got[-1] == 0


SPECIAL_POINTS = {  # name: (arguments, the argument differentiated)
    # the exact values at 30, 45, 60 degrees were constants (derivative 0 there)
    "sindg": (([30.0, -30.0, 150.0, -9960.0, 7.0],), 0),
    "cosdg": (([60.0, 120.0, -9960.0, 7.0],), 0),
    "tandg": (([45.0, -45.0, 135.0, 7.0],), 0),
    "cotdg": (([45.0, -45.0, 135.0, 7.0],), 0),
    # the limit 1 at 0 (derivative 0 there), and a quotient's cancellation near it
    "exprel": (([0.0, 1e-6, -1e-3, 0.3, -4.0],), 0),
    # exp(|x|) i0e(x): the product rule through |x| gave 1 at 0
    "i0": (([0.0, 0.5],), 0),
    # the limit log x at lmbda = 0 (derivative 0 there)
    "boxcox": (([40.8, 2.0], [0.0, 0.0]), 1),
    "boxcox1p": (([47.0, 2.0], [0.0, 0.0]), 1),
    # log|lmbda| + log|y|, the overflow's branch, at lmbda = 0 or y = 0 (NaN times the zero cotangent)
    "inv_boxcox": (([0.0, -0.716, 1.5], [-0.00345, 0.0, 0.2]), 0),
    "inv_boxcox1p": (([0.0, -1.19, 1.5], [0.257, 0.0, 0.2]), 1),
    # JAX's spence (float64): 0 at 1, NaN on (1, 2]
    "spence": (([1.0, 1.5, 2.0, 0.5],), 0),
    # (cos(pi x) - sinc(x)) / x, jax.numpy's rule, cancels near 0
    "sinc": (([0.0, 1e-4, 2e-3, -0.2, 0.3, 1.0],), 0),
    # the asymptotic expansion at x = 100 of the elements the series takes: inf in float32, whose
    # derivative in a and b is NaN
    "hyp1f1": (([0.125, 0.25, 1.0], [2.09, 1.7, 1.556], [5.1, 0.93, 9.67]), 0),
}  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.x64)])
@pytest.mark.parametrize("name", sorted(SPECIAL_POINTS))
def test_derivatives_where_the_value_is_a_limit_or_a_constant(name, dtype):
    args, argnum = SPECIAL_POINTS[name]
    arrays = [np.asarray(a, dtype) for a in args]
    got = _slopes(getattr(xp.special, name), *arrays, argnum=argnum)
    want = _scipy_slopes(name, arrays, argnum, 1e-6 * np.maximum(1.0, np.abs(arrays[argnum].astype(np.float64))))
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float64 else 1e-4, atol=1e-9)


def _interior_point(name):
    case = CASES[name]
    args = []
    for spec in case.params:
        if spec[0] == "int":
            args.append(np.array(float((spec[1] + spec[2]) // 2)))
        else:
            low, high = spec
            args.append(np.array(low + 0.37 * (high - low)))
    return [np.asarray(a, dtype=np.float64) for a in (case.prepare(args) if case.prepare else args)]


# Parameters JAX does not differentiate: the shape parameters of the incomplete beta function
# ("Betainc gradient with respect to a and b not supported"), and those of the functions built
# on it (k of bdtr and nbdtr enters as floor(k): its gradient is 0, as it should be)
NOT_DIFFERENTIABLE = {
    ("betainc", 0), ("betainc", 1), ("betaincc", 0), ("betaincc", 1),
    ("fdtr", 0), ("fdtr", 1), ("fdtrc", 0), ("fdtrc", 1), ("stdtr", 0),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name):
    point = _interior_point(name)
    for index, spec in enumerate(CASES[name].params):
        if spec[0] == "int":
            continue
        if (name, index) in NOT_DIFFERENTIABLE:
            with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported"):
                jax.grad(lambda v, index=index: xp.sum(_call(name, [*point[:index], v, *point[index + 1 :]])).jax)(
                    xp.asarray(point[index])
                )
            continue

        def f(v, index=index):
            args = [xp.asarray(a) for a in point]
            args[index] = v
            return xp.sum(_call(name, args)).jax

        x0 = point[index]
        h = 1e-6 * max(1.0, abs(float(x0)))
        slope = float(jax.grad(f)(xp.asarray(x0)))
        numeric = (float(f(xp.asarray(x0 + h))) - float(f(xp.asarray(x0 - h)))) / (2 * h)
        assert slope == pytest.approx(numeric, rel=1e-5, abs=1e-9), (name, index, point)
