"""SciPy's own functions on xp arrays: with SCIPY_ARRAY_API=1, scipy.special and the scipy.stats
functions built on it find ``xp.special`` and run on xp arrays, eagerly and under ``jax.jit``.

SciPy reads SCIPY_ARRAY_API when it is imported, so the checks run in one subprocess
(tests/scripts/scipy_dispatch_report.py, whose results the tests share) with the variable set before anything imports SciPy.
"""

import json

import pytest
from subprocess_env import failure, run_script, subprocess_env

# Each call takes two float64 xp arrays (or NumPy arrays, for the reference) of length 12.
CALLS = {
    # scipy.special functions that SciPy dispatches to xp.special
    "special.erf": "lambda a, b: sp.erf(a)",
    "special.gammaln": "lambda a, b: sp.gammaln(a)",
    "special.xlogy": "lambda a, b: sp.xlogy(a, b)",
    "special.ndtr": "lambda a, b: sp.ndtr(a - 2)",
    "special.gammainc": "lambda a, b: sp.gammainc(a, b)",
    "special.betainc": "lambda a, b: sp.betainc(a, b, 0.25)",
    "special.stdtr": "lambda a, b: sp.stdtr(a, b - 2)",
    "special.chdtrc": "lambda a, b: sp.chdtrc(a, b)",
    "special.digamma": "lambda a, b: sp.digamma(a)",
    # scipy.special functions written with the main namespace (no lookup in xp.special)
    "special.logsumexp": "lambda a, b: sp.logsumexp(a)",
    "special.logsumexp(b=)": "lambda a, b: sp.logsumexp(a, b=b)",
    "special.softmax": "lambda a, b: sp.softmax(a)",
    # scipy.stats p-values, through special functions (stdtr, chdtrc, ndtr, fdtrc, ...)
    "stats.ttest_1samp": "lambda a, b: st.ttest_1samp(a, 2.0).pvalue",
    "stats.ttest_ind": "lambda a, b: st.ttest_ind(a, b).pvalue",
    "stats.ttest_rel": "lambda a, b: st.ttest_rel(a, b).pvalue",
    "stats.skewtest": "lambda a, b: st.skewtest(a).pvalue",
    "stats.kurtosistest": "lambda a, b: st.kurtosistest(a).pvalue",
    "stats.jarque_bera": "lambda a, b: st.jarque_bera(a).pvalue",
    "stats.f_oneway": "lambda a, b: st.f_oneway(a, b).pvalue",
    "stats.bartlett": "lambda a, b: st.bartlett(a, b).pvalue",
    "stats.entropy": "lambda a, b: st.entropy(a, b)",
    "stats.pearsonr": "lambda a, b: st.pearsonr(a, b).pvalue",
    # not in xp.special: SciPy computes them on NumPy copies (eagerly only)
    "special.j0": "lambda a, b: sp.j0(a)",
    # not in xp.special either (JAX has no inverse incomplete beta): SciPy's generic version
    # root-finds on xp.special.stdtr with scipy.optimize
    "special.stdtrit": "lambda a, b: sp.stdtrit(a, b / 10)",
}

# The calls that do not run under jax.jit, and why.
NOT_UNDER_JIT = {
    "special.j0": "not in xp.special (JAX has no accurate j0): SciPy converts to NumPy, which a tracer refuses",
    "special.stdtrit": "SciPy's root finder (scipy.optimize.elementwise) branches on array values in Python",
}

# Eager calls that fail for a reason outside xp.special, and the reason. (stats.pearsonr was one:
# it writes through a 0-d False mask; fixed in xp/_indexing.py, tests/test_array.py.)
KNOWN_FAILURES: dict[str, str] = {}


@pytest.fixture(scope="module")
def report():
    # (SciPy's dispatch is the same on every backend: on the CPU where this process's is not)
    env = {**subprocess_env(), "SCIPY_ARRAY_API": "1", "JAX_ENABLE_X64": "1"}
    done = run_script("scipy_dispatch_report", json.dumps(CALLS), env=env)
    assert done.returncode == 0, failure(done)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_scipy_dispatches_every_provided_function_to_xp_special(report):
    import xp

    for name, chosen in report["dispatch"].items():
        if hasattr(xp.special, name):
            assert chosen == f"xp.special.{name}", name
        else:  # SciPy's own: its generic array API version or its NumPy fallback
            assert not chosen.startswith("xp."), name


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[name]))
        if name in KNOWN_FAILURES
        else name
        for name in sorted(CALLS)
    ],
)
def test_scipy_on_xp_arrays_equals_scipy_on_numpy_eagerly(name, report):
    result = report["calls"][name]["eager"]
    assert result["ok"], result["why"]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_scipy_on_xp_arrays_under_jit(name, report):
    result = report["calls"][name]["jit"]
    if name in NOT_UNDER_JIT:
        assert not result["ok"] and ("Tracer" in result["why"] or "Concretization" in result["why"]), result["why"]
    else:
        assert result["ok"], result["why"]
