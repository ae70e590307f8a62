"""Calls public functions with bad arguments (a JSON list of [function, parameter, value]) and
prints a JSON line before and after each call, so that the parent (tests/test_bad_input.py) can
tell which call aborted the process, if one does."""

import json
import sys
import warnings

from bad_input_strategies import parameters, public_functions, replaced

# every public namespace, imported before the first call: what the calls name
import xp.fft
import xp.linalg
import xp.sparse.linalg
import xp.special  # noqa: F401

warnings.simplefilter("ignore")
for name, param, value in json.loads(sys.argv[1]):
    p = next(q for q in parameters(name) if q.name == param)
    print(json.dumps(["start", name, param, value]), flush=True)
    try:
        args, kwargs = replaced(name, p, value)
        public_functions()[name](*args, **kwargs)
        outcome = ["returned", ""]
    except BaseException as e:
        outcome = [type(e).__name__, str(e)[:300]]
    print(json.dumps(["end", *outcome]), flush=True)
