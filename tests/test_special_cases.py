"""Every special case of the standard, checked by the conformance tool's special-case engine.

The engine parses the standard's sentences (``conformance/data/special_cases_2025_12.json``)
and evaluates xp on a pool of inputs satisfying each condition; see conformance/special_cases/.
"""

import math

import numpy as np
import pytest
from platform_facts import COMPLEX_TRANSCENDENTAL_RTOL

import xp
from conformance import special_cases

FUNCTIONS = sorted({case.function for case in special_cases.cases()})


@pytest.mark.slow
@pytest.mark.parametrize("function", FUNCTIONS)
def test_special_cases(function):
    results = special_cases.run(xp, [function])
    failures = [f"{r.case} -> {r.detail}" for r in results if r.status in ("failed", "error")]
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_most_sentences_are_checked():
    results = special_cases.run(xp)
    skipped = [r for r in results if r.status == "skipped"]
    assert len(results) == 521
    assert len(skipped) <= 20, [r.case for r in skipped]


WIDEST_COMPLEX = xp.complex128 if "complex128" in xp.__array_namespace_info__().dtypes() else xp.complex64
RTOL = 1e-12 if WIDEST_COMPLEX == xp.complex128 else COMPLEX_TRANSCENDENTAL_RTOL


def test_complex_functions_respect_branch_cut_zero_signs():
    values = [complex(a, b) for a in (-0.0, 0.0, -2.0, 2.0) for b in (-0.0, 0.0, -2.0, 2.0)]
    z = np.array(values, dtype=np.dtype(WIDEST_COMPLEX))
    with np.errstate(all="ignore"):
        for name, reference in [("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                                ("acos", np.arccos), ("asin", np.arcsin), ("atan", np.arctan), ("sqrt", np.sqrt)]:  # fmt: skip
            got = np.asarray(getattr(xp, name)(xp.asarray(values, dtype=WIDEST_COMPLEX)))
            want = reference(z)
            np.testing.assert_allclose(got, want, rtol=RTOL)
            assert np.array_equal(np.signbit(got.real), np.signbit(want.real)), name
            assert np.array_equal(np.signbit(got.imag), np.signbit(want.imag)), name


def test_atanh_is_accurate_near_its_branch_points():
    # jax.numpy overflows here; the true value is finite
    tiny = 1e-178 if WIDEST_COMPLEX == xp.complex128 else 1e-30
    got = complex(xp.atanh(xp.asarray(1 + tiny * 1j, dtype=WIDEST_COMPLEX)))
    want = complex(np.arctanh(np.asarray(1 + tiny * 1j, dtype=np.dtype(WIDEST_COMPLEX))))
    assert math.isclose(got.real, want.real, rel_tol=RTOL) and math.isclose(got.imag, want.imag, rel_tol=RTOL)


def test_remainder_by_an_infinity_whatever_xla_computes():
    """XLA:TPU's remainder of a finite x1 by an infinite x2 is NaN; xp's cases give Python's ``%``
    (the standard's special cases) whatever XLA's value was."""
    from xp import _special_cases as special_cases

    values = [0.0, -0.0, 5.0, -5.0, 1e-30, -3e38]
    x1 = np.array([a for a in values for _ in (1, 2)], np.float32)
    x2 = np.array([b for _ in values for b in (math.inf, -math.inf)], np.float32)
    computed = np.full_like(x1, np.nan)  # what XLA:TPU gives
    got = np.asarray(special_cases.remainder_by_infinity_and_zero(x1, x2, computed))
    want = np.array([float(a) % float(b) for a, b in zip(x1, x2, strict=True)], np.float32)
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want)), (got, want)


def test_expm1_and_sinh_keep_the_sign_of_a_zero_whatever_xla_computes():
    """XLA:TPU's expm1(-0.0) and sinh(-0.0) are +0.0; the standard says -0.0."""
    from xp import _special_cases as special_cases

    x = np.array([-0.0, 0.0, 1.0], np.float32)
    got = np.asarray(special_cases._keeping_zeros(np.abs)(x))  # a function losing the zero's sign
    assert np.signbit(got).tolist() == [True, False, False] and got.tolist() == [0.0, 0.0, 1.0]
