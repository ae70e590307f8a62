"""Whether a computation asks XLA for its accurate float32 exponentials and logarithms: XLA:TPU's
defaults approximate them (docs/accelerators.md, "Accuracy"), so a float32 computation that leaves
one at the default accuracy is off there, however right it is on the CPU. Read from the program
compiled for the backend the tests run on (the request survives compilation on every backend).
Also the tests' measure of a float32 result's error, in units of the last place, and two ways in
which XLA:TPU computes differently, reproduced on the CPU: its division and its concatenation."""

import re

import jax
import jax.extend
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


TPU_RECIPROCAL_ERROR = 1.5e-7
"""How far XLA:TPU's float32 reciprocal, by which it divides, is from ``1 / y`` relatively, at
most, for normal divisors (docs/accelerators.md, "Division by float32's largest numbers")."""


def with_the_tpu_s_division(fn):
    """``fn`` (of xp or jax arrays, straight-line or with nested jitted calls and custom
    derivatives) evaluated with every float32 division ``x / y`` made XLA:TPU's way, as ``x`` times
    a reciprocal of ``y`` that is :data:`TPU_RECIPROCAL_ERROR` off: the TPU's rounding, on the
    CPU. (Divisions inside loops keep the backend's.)"""

    def tpu_division(x, y):
        if x.dtype != np.float32:
            return None
        y = np.asarray(y, np.float64)
        power_of_two = np.frexp(y)[0] == 0.5  # (their reciprocals are exact, and x / 2**k is x * 2**-k)
        with np.errstate(divide="ignore"):  # (1 / 0 is the division's infinity, as on the TPU)
            reciprocal = np.where(power_of_two, 1, 1 + TPU_RECIPROCAL_ERROR) / y
        return x * jax.numpy.asarray(reciprocal.astype(np.float32))

    return _with_replaced(fn, jax.lax.div_p, tpu_division)


def with_the_tpu_s_concatenation(fn):
    """``fn`` (as for :func:`with_the_tpu_s_division`) evaluated with every concatenation of
    floating arrays made XLA:TPU's way: each NaN of the result positive (XLA:TPU's concatenation
    clears a NaN's sign bit; its concatenation of integers keeps every bit)."""

    def tpu_concatenation(*arrays, **params):
        if not jax.numpy.issubdtype(arrays[0].dtype, jax.numpy.floating):
            return None
        joined = jax.lax.concatenate_p.bind(*arrays, **params)
        return jax.numpy.where(jax.numpy.isnan(joined), jax.numpy.array(np.nan, joined.dtype), joined)

    return _with_replaced(fn, jax.lax.concatenate_p, tpu_concatenation)


def _with_replaced(fn, primitive, replacement):
    """``fn`` evaluated from its jaxpr, each equation of ``primitive`` by ``replacement(*inputs,
    **params)`` where that gives a value (None: the primitive's own), through nested jitted calls
    and custom derivatives (not into loops)."""

    def evaluate(jaxpr, consts, *args):
        env = dict(zip(jaxpr.constvars, consts, strict=True)) | dict(zip(jaxpr.invars, args, strict=True))

        def read(v):
            return v.val if isinstance(v, jax.extend.core.Literal) else env[v]

        for eqn in jaxpr.eqns:
            inputs = [read(v) for v in eqn.invars]
            inner = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
            replaced = replacement(*inputs, **eqn.params) if eqn.primitive is primitive else None
            if replaced is not None:
                outputs = [replaced]
            elif inner is not None and eqn.primitive.name in ("pjit", "jit", "custom_jvp_call"):
                outputs = evaluate(inner.jaxpr, inner.consts, *inputs)
            else:
                outputs = eqn.primitive.bind(*inputs, **eqn.params)
                outputs = outputs if eqn.primitive.multiple_results else [outputs]
            env.update(zip(eqn.outvars, outputs, strict=True))
        return [read(v) for v in jaxpr.outvars]

    def run(*args):
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        flat = evaluate(closed.jaxpr, closed.consts, *jax.tree_util.tree_leaves(args))
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape), flat)

    return run
