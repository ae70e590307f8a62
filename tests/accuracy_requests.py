"""Whether a computation asks XLA for its accurate float32 exponentials and logarithms: XLA:TPU's
defaults approximate them (docs/accelerators.md, "Accuracy"), so a float32 computation that leaves
one at the default accuracy is off there, however right it is on the CPU. Read from the program
compiled for the backend the tests run on (the request survives compilation on every backend).
Also the tests' measure of a float32 result's error, in units of the last place."""

import re

import jax
import numpy as np

COMPILED_TRANSCENDENTAL = ("exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic")
"""The compiled operations whose float32 implementation XLA:TPU approximates unless asked for accuracy."""


def left_at_default_accuracy(fn, *args):
    """The transcendental operations of ``fn``'s compiled program (this backend's) that ask for no
    accuracy: XLA's simplifier rewrites some forms into new operations without the request
    (``exp(a) * exp(b)`` into ``exp(a + b)``, ``1 / exp(x)`` into ``exp(-x)``), and expands others
    (``logistic``) into them, after the jaxpr the tracing tests read."""
    text = jax.jit(fn).lower(*args).compile().as_text()
    operations = "|".join(COMPILED_TRANSCENDENTAL)
    pattern = re.compile(rf"= [a-z0-9]+\[[^\]]*\]\S* ({operations})\(")
    return [m.group(1) for line in text.splitlines() if (m := pattern.search(line)) and "result_accuracy" not in line]


def float32_ulps(got, want):
    """``|got - want|`` in units of float32's last place at ``want`` (a float64 reference)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
