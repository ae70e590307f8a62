"""bench/precision.py times one call's computation as a chain of calls in one program: each call
must run (none hoisted out of the loop), on its own inputs."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import xp

BENCH = Path(__file__).parents[1] / "bench"


@pytest.fixture
def precision(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # (the benchmark imports its neighbours by name)
    module = importlib.import_module("precision")
    yield module
    sys.modules.pop("precision", None)


def test_the_chained_program_runs_each_call_on_inputs_that_depend_on_the_last(precision):
    a = xp.asarray(np.full((16, 16), 0.5, np.float32))
    chained = jax.jit(precision._chained(xp.matmul))
    # each call's result summed: REPEAT times the sum of a @ a (the zero added changes nothing)
    assert float(chained(a, a)) == precision.REPEAT * float(xp.sum(a @ a))
    # the zero is a product XLA keeps (it does not fold x * 0.0 for floats): the loop's body computes
    # it from the running total, so the product that reads it cannot move out of the loop
    text = chained.lower(a, a).compile().as_text()
    body = re.search(r"while\(.*?body=%?([\w.\-]+)", text)
    assert body is not None
    assert re.search(r"jit\(run\)/while/body/[\w/]*mul", text)
    assert re.search(r"jit\(run\)/while/body/[\w/]*dot_general", text)
