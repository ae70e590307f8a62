"""The bad-input sweep (issue #10): every public function, called with one bad argument.

Each call replaces one argument of a valid call (tests/bad_input_strategies.py) with a bad value
of its kind: a wrong Python type, a wrong dtype category, a bad axis, shape or size, a bad
dtype or device, a 0-d, empty or sparse array. The outcome must be one of:

- a result (where the call is valid after all); with a sparse array in place of the dense one
  it was made from, the result equals the dense call's;
- a standard exception (TypeError, ValueError, IndexError, NotImplementedError, OverflowError,
  MemoryError; BufferError from from_dlpack) whose message starts with the function's public name
  (``xp.linalg.solve: ``) and, for an argument error, names a parameter (or is JAX's own message,
  passed on by xp's wrappers of JAX's sparse API); the call changed none of its array arguments.

Anything else (a KeyError, an AssertionError, a JAX or XLA error, a message without the name)
fails the test. Huge sizes (which can abort the process: issue #10, defect 3) are probed in a
subprocess. The example count is the hypothesis profile's (tests/conftest.py).
"""

import atexit
import inspect
import json
import os
import re
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from bad_input_strategies import (
    CHOICES,
    DEVICES,
    OUT_OF_SCOPE,
    WRONG_TYPES,
    bad_values,
    base_call,
    huge_calls,
    parameters,
    public_functions,
    replaced,
    role,
    spec_functions,
)
from hypothesis import given
from hypothesis import strategies as st
from subprocess_env import SCRIPTS, subprocess_env

import xp
import xp.fft
import xp.linalg
import xp.sparse
import xp.sparse.linalg
import xp.special
import xp.transforms
from xp import _routing

STANDARD = (TypeError, ValueError, IndexError, NotImplementedError, OverflowError, MemoryError)
# from_dlpack: "BufferError: ... when the data cannot be exposed as DLPack" (the standard's words)
BUFFER = ("from_dlpack", "sparse.from_dlpack")
FUNCTIONS = public_functions()
CALLS: Counter[str] = Counter()  # outcomes, printed at exit (seen with pytest -s -n 0)


def known(name, param, bad, value):
    """The reason a bad call is left out of the sweep, or None."""
    if name == "sparse.linalg.lobpcg_standard" and param.name == "A" and callable(value):
        return "A may be a function computing A @ X: what a bad one raises is its own error, not xp's"
    return None


@pytest.mark.parametrize(
    ("A", "B", "indices"),
    [
        ((3,), (3, 3), (9, 2)),  # a 1-d operand
        ((3, 3), (3, 3), (9, 3)),  # indices of 3 columns for a 2-d product
        ((0, 3), (3, 3), (9, 2)),  # an empty operand: the indices are out of its range
    ],
)
def test_bcoo_dot_general_sampled_of_mismatched_shapes_is_a_named_error(A, B, indices):
    numbers = (((len(A) - 1,), (0,)), ((), ()))
    with pytest.raises(
        (TypeError, ValueError, IndexError), match=r"^xp\.sparse\.bcoo_dot_general_sampled: (A|B|indices) "
    ):
        xp.sparse.bcoo_dot_general_sampled(
            xp.ones(A), xp.ones(B), xp.zeros(indices, dtype=xp.int32), dimension_numbers=numbers
        )


@pytest.mark.parametrize("name", ["arange", "sparse.arange"])
@pytest.mark.parametrize(
    ("args", "param"),
    [((float("nan"),), "stop"), ((0, float("-inf")), "stop"), ((0, 5, float("nan")), "step"), ((1e300,), "stop")],
    ids=repr,
)
def test_arange_of_a_value_out_of_range_is_a_named_error(name, args, param):
    with pytest.raises((ValueError, OverflowError), match=rf"^xp\.{name}: {param}"):
        FUNCTIONS[name](*args)


@pytest.mark.parametrize("name", ["arange", "sparse.arange"])
def test_an_empty_arange_ignores_a_start_beyond_every_dtype(name):
    # NumPy gives []: an empty range uses neither start nor step (it was Python's unnamed OverflowError)
    assert FUNCTIONS[name](2**100, 5, 1).shape == (0,)


def test_slices_of_python_ints_beyond_the_index_dtype_are_what_jax_would_slice():
    """lax.dynamic_slice clamps its start; a stride longer than the slice takes its first element.
    Python ints beyond int32 were JAX's overflow errors on an argument path, unnamed."""
    dense = np.arange(12, dtype=np.float32).reshape(3, 4)
    S = xp.sparse.fromdense(xp.asarray(dense))
    clamped = xp.sparse.bcoo_dynamic_slice(S, (2**31, 2**31), (1, 2))
    assert np.asarray(clamped.todense()).tolist() == dense[2:3, 2:4].tolist()
    strided = xp.sparse.bcoo_slice(S, start_indices=(0, 0), limit_indices=(3, 4), strides=(2**31, 2))
    assert np.asarray(strided.todense()).tolist() == dense[0 : 3 : 2**31, 0:4:2].tolist()


def test_arange_of_one_value_ignores_a_step_beyond_every_dtype():
    # NumPy gives [0]: a one-value range does not use its step (it was an unnamed OverflowError)
    assert np.asarray(xp.arange(0, 5, 2**70)).tolist() == [0]
    assert np.asarray(xp.arange(0, 5, 1e300)).tolist() == [0.0]


@atexit.register  # (at exit rather than in a fixture, so that an interrupted run reports too)
def _report_counts():
    if CALLS:
        print(f"\nbad-input sweep: {dict(sorted(CALLS.items()))}")


def _namespace_functions():
    """(qualified name, function) for every public function found in xp's namespaces."""
    modules = {
        "": xp,
        "linalg.": xp.linalg,
        "fft.": xp.fft,
        "special.": xp.special,
        "sparse.": xp.sparse,
        "sparse.linalg.": xp.sparse.linalg,
        "transforms.": xp.transforms,
    }
    for prefix, module in modules.items():
        names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        for n in names:
            fn = getattr(module, n)
            if inspect.isfunction(fn) and fn.__module__.startswith("xp"):
                yield prefix + n, fn


def test_the_sweep_covers_every_public_function():
    """Every function of the standard, and every public function of xp's namespaces (xp.special's,
    xp.sparse's creation functions and JAX sparse API), is swept or listed as out of scope with a
    reason."""
    swept = set(FUNCTIONS.values())
    unswept = [n for n, fn in spec_functions().items() if fn not in swept]
    assert not unswept, unswept
    assert len(spec_functions()) > 170
    missed = [n for n, fn in _namespace_functions() if fn not in swept and n not in OUT_OF_SCOPE]
    assert not missed, missed
    assert len(FUNCTIONS) > 280


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_valid_call_is_valid(name):
    """The sweep's calls differ from a valid call in one argument only."""
    args, kwargs = base_call(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", xp.sparse.SparseEfficiencyWarning)
        FUNCTIONS[name](*args, **kwargs)


def _arrays(value):
    if isinstance(value, xp.Array) or _routing.is_sparse(value):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _arrays(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays(v)


def _dense(value):
    return np.asarray(value.todense() if _routing.is_sparse(value) else value)


def _named(message, name):
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) is not None


def _same_results(result, expected):
    if isinstance(result, tuple):
        assert isinstance(expected, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected, strict=True):
            _same_results(r, e)
    elif isinstance(result, xp.Array) or _routing.is_sparse(result):
        np.testing.assert_allclose(_dense(result), _dense(expected), rtol=1e-5, atol=1e-6, equal_nan=True)


def check_bad_call(name, param, bad, value):
    """Call ``xp.<name>`` with ``param`` replaced by the bad value, and check the outcome."""
    fn = FUNCTIONS[name]
    CALLS["bad calls"] += 1
    args, kwargs = replaced(name, param, value)
    arrays = list(_arrays((args, kwargs)))
    before = [_dense(a).copy() for a in arrays]
    call = f"xp.{name}({param.name}={bad})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # efficiency, narrowing and NumPy's warnings are no outcome
        try:
            result = fn(*args, **kwargs)
        except (*STANDARD, BufferError) as e:
            if isinstance(e, BufferError) and name not in BUFFER:
                raise AssertionError(f"{call} crashed: BufferError: {e}") from e
            message, where = str(e), f"xp.{name}: "
            assert message.startswith(where), f"{call}: unnamed {type(e).__name__}: {message}"
            if not isinstance(e, (NotImplementedError, MemoryError, BufferError)):
                names = [p.name for p in parameters(name)]
                if message.endswith(f"(from jax.experimental.sparse.{name.rsplit('.', 1)[-1]})"):
                    # JAX's own argument check, passed on under the xp name (xp/sparse/_jax_boundary.py):
                    # JAX's message says what is wrong in its words (gather dimensions and the like)
                    CALLS["JAX's message under the xp name"] += 1
                else:
                    assert any(_named(message[len(where) :], n) for n in names), (
                        f"{call}: the message names no parameter: {message}"
                    )
                    CALLS["named the replaced parameter" if _named(message, param.name) else "named another"] += 1
            for a, b in zip(arrays, before, strict=True):
                np.testing.assert_array_equal(_dense(a), b, err_msg=f"{call} raised and changed an argument")
            CALLS[type(e).__name__] += 1
            return
        except Exception as e:  # anything else is the crash the sweep looks for
            raise AssertionError(f"{call} crashed: {type(e).__name__}: {e}") from e
        if role(name, param) == "dtype" and hasattr(value, "shape"):
            raise AssertionError(f"{call} returned a result: an array was taken as a dtype (its .dtype)")
        CALLS["returned"] += 1
        if _routing.is_sparse(value) and bad.label in ("sparse BCOO 3x3", "sparse BCSR 3x3"):
            # the result must be the dense call's where the sparse array replaced the equal dense one
            base_args, base_kwargs = base_call(name)
            names = [p.name for p in parameters(name)]  # (base_args may leave defaulted ones out)
            dense = (dict(zip(names, base_args, strict=False)) | base_kwargs).get(param.name)
            if isinstance(dense, xp.Array) and dense.shape == value.shape and np.array_equal(dense, _dense(value)):
                _same_results(result, fn(*base_args, **base_kwargs))
                CALLS["sparse result checked"] += 1


# (run once, in the 64-bit pass: the valid calls the sweep spoils are built from 32-bit dtypes, so
# it makes the same calls in both modes; what the mode changes about arguments, 64-bit data and
# requests, is tests/test_x64_off.py's. In CI's second pass it took a sixth of the time.)
@pytest.mark.x64
@pytest.mark.parametrize("name", FUNCTIONS)
@given(data=st.data())
def test_a_bad_argument_is_a_named_standard_error(name, data):
    param = data.draw(st.sampled_from(parameters(name)), label="parameter")
    bad = data.draw(bad_values(name, param), label="bad value")
    value = bad.make()
    if known(name, param, bad, value) is None:
        check_bad_call(name, param, bad, value)


@given(
    method=st.sampled_from(["dtypes", "default_dtypes"]),
    param=st.sampled_from(["device", "kind"]),
    bad=st.sampled_from(DEVICES + CHOICES + WRONG_TYPES),
)
def test_a_bad_argument_to_the_inspection_api_is_a_named_error(method, param, bad):
    info = xp.__array_namespace_info__()
    if method == "default_dtypes" and param == "kind":
        return  # it has no such parameter
    try:
        getattr(info, method)(**{param: bad.make()})
    except (TypeError, ValueError) as e:
        assert str(e).startswith(f"xp.__array_namespace_info__().{method}: {param} "), str(e)


# --- huge sizes, in a subprocess -------------------------------------------------------------------


def probe_in_subprocess(calls):
    """Run the calls in subprocesses: (call, exception type or 'returned' or 'aborted', message).
    A call that aborts the process is reported, and the rest go on in a new process."""
    outcomes = []
    # (on the CPU where this process's backend is not: the checks of arguments are the same everywhere)
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env["PYTHONPATH"]])
    todo = list(calls)
    while todo:
        run = subprocess.run(
            [sys.executable, str(SCRIPTS / "bad_input_probe.py"), json.dumps(todo)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        started = None
        for line in run.stdout.splitlines():
            event = json.loads(line)
            if event[0] == "start":
                started = tuple(event[1:])
            else:
                outcomes.append((started, event[1], event[2]))
                started = None
        done = len(outcomes) - (len(calls) - len(todo))
        todo = todo[done:]
        if started is not None:  # it died inside this call
            outcomes.append(
                (
                    started,
                    "aborted",
                    run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}",
                )
            )
            todo = todo[1:]
        elif todo:
            raise AssertionError(f"the probe stopped before its calls: {run.stderr[-2000:]}")
    return outcomes


HUGE = (
    "a size of 2**62 or 10**20 aborted the process (XLA's 'overflow in static extent product') or raised an unnamed "
    "error (MLIR's TypeError 'get(): incompatible function arguments', OverflowError 'Python int too large to "
    "convert to C long', JAX's OverflowError on a jitted argument, NumPy's 'array is too big'): issue #10, defect 3; "
    "the last were the FFTs' n, the sparse nse, xp.sparse.eye's sizes and xp.special.multigammaln's d"
)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.x64  # (with 64-bit mode off, int32 bounds catch some: the 64-bit mode is the harder case)
def test_huge_sizes_are_named_errors_or_results():
    """Each size-like parameter of each function, 2**62, 10**20 or -2**62: a result or a named error,
    never an abort."""
    outcomes = probe_in_subprocess(huge_calls())
    bad = [
        f"xp.{name}({param}={value}): {kind}: {message}"
        for (name, param, value), kind, message in outcomes
        if kind != "returned"
        and (kind not in {e.__name__ for e in STANDARD} | {"AxisError"} or not message.startswith(f"xp.{name}: "))
    ]
    assert not bad, f"{HUGE}:\n" + "\n".join(bad)
