"""Real array-API clients on xp: SciPy, array-api-extra and scikit-learn calls, eagerly and under
``jax.jit``, compared with NumPy and with the same calls on plain ``jax.numpy``.

``tests/clients_probe.py`` runs every call in five modes (NumPy, xp, xp under jit, jax.numpy,
jax.numpy under jit) in a subprocess of its own (SciPy reads ``SCIPY_ARRAY_API`` at import) and
prints a JSON table; this test checks the table:

(a) every call that NumPy runs passes on xp eagerly (the values, shapes, dtypes and array type of
    NumPy's result), except the known failures of ``XP_EAGER_KNOWN``;
(b) under ``jax.jit``, every call that passes on jax.numpy also passes on xp, except those of
    ``XP_JIT_KNOWN`` and, while xp has no ``xp.special.<name>``, those of ``NEEDS_XP_SPECIAL``;
(c) every known failure still fails (so the lists stay true), no wrong value passes unexplained,
    and every call that fails under jit on both namespaces has the client's reason in the probe.

The table, with the reason for every failure: ``docs/clients.md``, written by
``python tests/clients_probe.py --markdown docs/clients.md``.
"""

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from subprocess_env import subprocess_env

PROBE = Path(__file__).resolve().with_name("clients_probe.py")

# --- the known failures -----------------------------------------------------------------------
# Each entry is a call of the probe and why it fails on xp; failures that are xp's to fix say
# "xp bug: ..." (they stay listed until fixed, so the list shows them).

# (a) Calls that fail on xp eagerly.
XP_EAGER_KNOWN = {
    # SciPy converts the input with np.asarray and hands it to compiled code that needs a
    # writeable buffer; a NumPy view of a JAX buffer is read-only (jax.numpy fails the same way).
    "scipy.signal.sosfilt": "client needs a writeable NumPy buffer: SciPy's compiled sosfilt gets np.asarray "
    "of the input, a read-only view of the JAX buffer (jax.numpy fails the same way)",
    # SciPy calls NumPy's ndarray.view(dtype) (its own comment says: not array API compliant),
    # then xp.diag, also not in the standard; jax.Array and jax.numpy copy NumPy's API, xp has
    # the standard's (tried: an Array.view only moves the failure to the missing xp.diag).
    "scipy.interpolate.RBFInterpolator": "client calls NumPy API outside the standard: `d.view(float)`, then "
    "`xp.diag` (jax.Array and jax.numpy have them, xp keeps to the standard)",
}

# (b) Calls that fail on xp under jax.jit although they pass on jax.numpy under jax.jit, for a
# reason that xp cannot fix.
_DELEGATES = "client special-cases JAX: SciPy calls jax.scipy.{} when is_jax(xp), and {} for other namespaces"
XP_JIT_KNOWN = {
    # choose_conv_method treats every non-NumPy array as possibly integer and reads int(xp.max(...))
    "scipy.signal.convolve": _DELEGATES.format("signal.convolve", "reads int(xp.max(abs(x))) of the data"),
    "scipy.signal.correlate": _DELEGATES.format("signal.correlate", "reads int(xp.max(abs(x))) of the data"),
    "scipy.signal.convolve2d": _DELEGATES.format("signal.convolve2d", "computes on NumPy"),
    "scipy.signal.detrend": _DELEGATES.format("signal.detrend", "computes on NumPy"),
    "scipy.ndimage.map_coordinates": _DELEGATES.format("ndimage.map_coordinates", "computes on NumPy"),
    "scipy.interpolate.RBFInterpolator": XP_EAGER_KNOWN["scipy.interpolate.RBFInterpolator"],
}

# (b) SciPy computes a special function with jax.scipy.special for jax.numpy, with
# xp.special.<name> (or a generic implementation on the functions of xp.special it is built from)
# for a namespace that has it, and otherwise on NumPy (np.asarray of the input: not traceable).
# While xp has no xp.special, these calls fail under jax.jit in SciPy's NumPy fallback for the
# function named here. Once xp.special exists they pass, or fail only in SciPy's NumPy fallback for
# a function that xp.special still lacks.
NEEDS_XP_SPECIAL = {
    "scipy.special.erf": "erf",
    "scipy.special.erf[float32]": "erf",
    "scipy.special.gammaln": "gammaln",
    "scipy.special.ndtr": "ndtr",
    "scipy.special.ndtri": "ndtri",
    "scipy.special.expit": "expit",
    "scipy.special.logit": "logit",
    "scipy.special.entr": "entr",
    "scipy.stats.ttest_1samp": "stdtr",
    "scipy.stats.ttest_ind": "stdtr",
    "scipy.stats.pearsonr": "betaincc",
    "scipy.stats.entropy": "entr",
    "scipy.stats.bartlett": "chdtrc",
    "scipy.stats.skewtest": "ndtr",
    "scipy.stats.normaltest": "ndtr",
}


def special_reason(name: str) -> str:
    return (
        f"needs xp.special.{name}: SciPy computes scipy.special.{name} with jax.scipy.special for "
        "jax.numpy, with xp.special where xp has it, and on NumPy otherwise"
    )


# --- running the probe ------------------------------------------------------------------------


def run_probe() -> dict:
    # the probe runs on the CPU where this process's backend is not the CPU (subprocess_env): the
    # table of known failures is what the clients do on xp, the same on every backend
    env = dict(subprocess_env(), JAX_ENABLE_X64="1", SCIPY_ARRAY_API="1")
    done = subprocess.run(
        [sys.executable, str(PROBE)], capture_output=True, text=True, timeout=900, env=env, check=False
    )
    assert done.returncode == 0, f"the probe failed:\n{done.stderr[-5000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def failed(outcome: str) -> bool:
    return outcome != "pass"


def check(table: dict) -> list[str]:
    """What in the table breaks (a), (b) or (c); empty when nothing does."""
    problems = []
    rows = {row["name"]: row for row in table["calls"]}
    special = set(table["xp_special"] or ())
    sklearn_absent = table["versions"]["sklearn"] is None  # the probe leaves its calls out then
    for name in sorted({*XP_EAGER_KNOWN, *XP_JIT_KNOWN, *NEEDS_XP_SPECIAL} - set(rows)):
        if not (sklearn_absent and name.startswith("sklearn.")):
            problems.append(f"{name}: listed as a known failure but the probe has no such call")
    for name, row in rows.items():
        outcome = row["outcomes"]
        where = row["where"]
        if outcome["numpy"] != "pass":
            problems.append(f"{name}: the NumPy reference fails: {outcome['numpy']}")
            continue
        # (a) xp eagerly
        if name in XP_EAGER_KNOWN:
            if not failed(outcome["xp"]):
                problems.append(f"{name}: passes on xp now: remove it from XP_EAGER_KNOWN")
            elif outcome["xp"].startswith("mismatch") and not outcome["jnp"].startswith("mismatch"):
                problems.append(f"{name}: wrong values on xp only: {outcome['xp']}")
        elif failed(outcome["xp"]):
            problems.append(f"{name}: xp (eager): {outcome['xp']} at {where.get('xp', {})}")
        # (b) xp under jax.jit, wherever jax.numpy under jax.jit passes
        jit = outcome["xp_jit"]
        needs = NEEDS_XP_SPECIAL.get(name)
        fallback = where.get("xp_jit", {}).get("special_on_numpy")
        if needs is not None and table["xp_special"] is None:
            if not failed(jit):
                problems.append(f"{name}: passes under jit without xp.special: remove it from NEEDS_XP_SPECIAL")
            elif fallback != needs:
                problems.append(f"{name}: expected to fail in SciPy's NumPy fallback for {needs}, got {jit} at {where}")
        elif needs is not None and failed(jit) and fallback is not None and fallback not in special:
            pass  # SciPy computes scipy.special.<fallback> on NumPy: xp.special does not have it yet
        elif name in XP_JIT_KNOWN:
            if outcome["jnp_jit"] != "pass":
                problems.append(
                    f"{name}: in XP_JIT_KNOWN but jax.numpy under jit fails too: move the reason to the probe"
                )
            elif not failed(jit):
                problems.append(f"{name}: passes under jit on xp now: remove it from XP_JIT_KNOWN")
            elif jit.startswith("mismatch"):
                problems.append(f"{name}: wrong values on xp under jit only: {jit}")
        elif outcome["jnp_jit"] == "pass" and failed(jit):
            problems.append(f"{name}: xp under jit: {jit} at {where.get('xp_jit', {})} (jax.numpy under jit passes)")
        elif jit.startswith("mismatch"):
            problems.append(f"{name}: wrong values on xp under jit: {jit}")
        # (c) calls that no namespace runs under jit: the client's reason, and it stays true
        if failed(jit) and failed(outcome["jnp_jit"]) and not row["why_no_jit"]:
            problems.append(
                f"{name}: fails under jit on xp and jax.numpy ({jit}): give the client's reason in the probe"
            )
        if row["why_no_jit"] and not failed(jit):
            problems.append(f"{name}: passes under jit on xp: drop its why_no_jit in the probe")
    return problems


@pytest.mark.x64  # the probe runs with JAX's 64-bit mode on whatever the suite's mode: run it once
def test_client_calls_on_xp_eagerly_and_under_jit(record_property):
    # the calls and their known failures are those of these versions (or newer); the clients are
    # looked up, not imported: SciPy reads SCIPY_ARRAY_API when it is imported
    for distribution, oldest in (("scipy", (1, 17)), ("array-api-extra", (0, 11)), ("scikit-learn", (1, 9))):
        try:
            found = tuple(int(part) for part in metadata.version(distribution).split(".")[:2])
        except metadata.PackageNotFoundError:
            if distribution == "scikit-learn":
                continue  # optional: the probe leaves its calls out
            pytest.skip(f"{distribution} is not installed")
        if found < oldest:
            pytest.skip(f"the client calls are written for {distribution} {'.'.join(map(str, oldest))} or newer")
    table = run_probe()
    rows = table["calls"]
    counts = {mode: sum(row["outcomes"][mode] == "pass" for row in rows) for mode in rows[0]["outcomes"]}
    record_property("client_calls", len(rows))
    for mode, count in counts.items():
        record_property(f"passes_{mode}", count)
    print(f"client calls: {len(rows)}; passes: " + ", ".join(f"{mode} {count}" for mode, count in counts.items()))
    problems = check(table)
    assert not problems, "\n".join(problems)
