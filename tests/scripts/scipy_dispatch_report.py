"""SciPy's functions on xp arrays (tests/test_special_functions_scipy.py): prints, as one JSON
line, which function SciPy's dispatcher picks for xp arrays and the outcome of each call (a JSON
object of name: lambda source), eagerly and under jit. SciPy reads SCIPY_ARRAY_API at import,
hence a fresh process."""

import json
import os
import sys
import warnings
from typing import Any

assert os.environ["SCIPY_ARRAY_API"] == "1"
warnings.simplefilter("ignore")
import jax  # noqa: E402
import numpy as np  # noqa: E402
import scipy.special as sp  # noqa: E402, F401
import scipy.stats as st  # noqa: E402, F401
from scipy.special import _support_alternative_backends as dispatch  # noqa: E402

import xp  # noqa: E402

calls = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
a_np = rng.uniform(0.5, 5.0, 12)
b_np = rng.uniform(0.5, 5.0, 12)
a, b = xp.asarray(a_np), xp.asarray(b_np)

report: dict[str, dict[str, Any]] = {"dispatch": {}, "calls": {}}
# which function SciPy's dispatcher picks for xp arrays, for every function of its table
for info in dispatch._special_funcs:
    chosen = info._wrapper_for(xp)
    report["dispatch"][info.name] = getattr(chosen, "__module__", "") + "." + getattr(chosen, "__name__", "")


def outcome(result: object, expected: np.ndarray) -> dict[str, bool | str]:
    if not isinstance(result, xp.Array):
        return {"ok": False, "why": f"returned {type(result).__name__}"}
    value = np.asarray(result)
    same = value.shape == np.shape(expected) and np.allclose(value, expected, rtol=1e-12, atol=0, equal_nan=True)
    return {"ok": bool(same), "why": "" if same else f"{value!r} != {expected!r}"}


for name, source in calls.items():
    f = eval(source)
    expected = np.asarray(f(a_np, b_np))
    entry = {}
    for mode, run in (("eager", f), ("jit", jax.jit(f))):
        try:
            entry[mode] = outcome(run(a, b), expected)
        except Exception as e:
            entry[mode] = {"ok": False, "why": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    report["calls"][name] = entry
print(json.dumps(report))
