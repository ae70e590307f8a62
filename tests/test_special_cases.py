"""Every special case of the standard, checked by the conformance tool's special-case engine.

The engine parses the standard's sentences (``conformance/data/special_cases_2025_12.json``)
and evaluates xp on a pool of inputs satisfying each condition; see conformance/special_cases/.
"""

import math

import numpy as np
import pytest

import xp
from conformance import special_cases

FUNCTIONS = sorted({case.function for case in special_cases.cases()})


@pytest.mark.parametrize("function", FUNCTIONS)
def test_special_cases(function):
    results = special_cases.run(xp, [function])
    failures = [f"{r.case} -> {r.detail}" for r in results if r.status in ("failed", "error")]
    assert not failures, "\n".join(failures)


def test_most_sentences_are_checked():
    results = special_cases.run(xp)
    skipped = [r for r in results if r.status == "skipped"]
    assert len(results) == 521
    assert len(skipped) <= 20, [r.case for r in skipped]


WIDEST_COMPLEX = xp.complex128 if "complex128" in xp.__array_namespace_info__().dtypes() else xp.complex64
RTOL = 1e-12 if WIDEST_COMPLEX == xp.complex128 else 1e-5


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
