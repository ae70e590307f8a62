"""Per-call overhead: jitted generic functions, eager generic pipelines, and ``import xp``.

- **Jitted calls.** The same generic function (written once against a namespace ``ns``) jitted
  with xp arrays and with jax.numpy arrays: what a call costs in steady state is JAX's dispatch
  plus flattening the arguments and rebuilding the results, where xp's arrays are pytree nodes
  around ``jax.Array`` leaves. Sparse: xp's BCOO/BCSR against JAX's own, jitted. Beside them,
  what passing one array through a jitted identity costs as an xp array and as the cheapest
  pytree wrapper of each kind JAX offers, against the jax array itself.
- **Eager pipelines.** softmax + logsumexp and an MLP forward pass, op by op, not jitted.
- **Import.** ``import xp`` against ``import jax.numpy``: process CPU time of a fresh
  interpreter each (bytecode cached, as after any first run), interleaved, medians.

Timing as in ``eager.py``: interleaved rounds of batches, process CPU time, medians.

    python bench/overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from eager import CLOCK, Case, Timed, environment, geometric_mean, run, schedule
from jax.experimental import sparse as jsparse

import xp

# --- the generic functions ----------------------------------------------------------------------


def affine(ns: Any, x: Any, w: Any, b: Any) -> Any:
    return x @ w + b


def mlp(ns: Any, x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    hidden = ns.tanh(x @ w1 + b1)
    return ns.sum(hidden @ w2 + b2, axis=-1)


def loop(ns: Any, x: Any, steps: int = 20) -> Any:
    return jax.lax.fori_loop(0, steps, lambda _, v: v * 0.5 + ns.sin(v), x)


def softmax_logsumexp(ns: Any, x: Any) -> Any:
    top = ns.max(x, axis=-1, keepdims=True)
    shifted = ns.exp(x - top)
    total = ns.sum(shifted, axis=-1, keepdims=True)
    return shifted / total, ns.log(total) + top


def matvec_sum(ns: Any, a: Any, x: Any) -> Any:
    return ns.sum(a @ x)


def _at_float32(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` traced at float32's precision, as xp computes float32 products by default: the
    jax.numpy twin of a case then runs the same program (on a TPU, jax.numpy's default would multiply
    through bfloat16: less work, another result)."""

    def traced(*args: Any) -> Any:
        with jax.default_matmul_precision("highest"):
            return fn(*args)

    return traced


def _pair(name: str, shape: tuple[int, ...], fn: Callable[..., Any], xp_args: list[Any], jnp_args: list[Any]) -> Case:
    ours = jax.jit(lambda *a: fn(xp, *a))
    theirs = jax.jit(_at_float32(lambda *a: fn(jnp, *a)))
    return Case(name, shape, lambda: ours(*xp_args), lambda: theirs(*jnp_args))


def _random(*shape: int) -> np.ndarray:
    return np.random.default_rng(len(shape) * 7 + sum(shape)).standard_normal(shape).astype(np.float32)


def jitted_cases() -> list[Case]:
    x, w, b = _random(8, 16), _random(16, 4), _random(4)
    w1, b1, w2, b2 = _random(16, 32), _random(32), _random(32, 8), _random(8)
    dense = [
        ("affine x @ w + b", affine, [x, w, b]),
        ("MLP forward (2 layers)", mlp, [x, w1, b1, w2, b2]),
        ("20-step fori_loop", loop, [_random(64)]),
        ("softmax + logsumexp", softmax_logsumexp, [_random(8, 32)]),
    ]
    cases = [
        _pair(name, (), fn, [xp.asarray(a) for a in args], [jnp.asarray(a) for a in args]) for name, fn, args in dense
    ]
    matrix = np.where(np.random.default_rng(1).random((200, 200)) < 0.02, _random(200, 200), 0).astype(np.float32)
    vector = _random(200)
    for kind, theirs_of in (("BCOO", jsparse.BCOO.fromdense), ("BCSR", jsparse.BCSR.fromdense)):
        ours = jax.jit(lambda a, v: matvec_sum(xp, a, v))
        theirs = jax.jit(_at_float32(lambda a, v: jnp.sum(a @ v)))
        a_xp, v_xp = xp.sparse.fromdense(xp.asarray(matrix), format=kind.lower()), xp.asarray(vector)
        a_j, v_j = theirs_of(jnp.asarray(matrix)), jnp.asarray(vector)
        cases.append(
            Case(
                f"sparse {kind} sum(A @ x) (xp / JAX's {kind})",
                (),
                lambda o=ours, a=a_xp, v=v_xp: o(a, v),
                lambda t=theirs, a=a_j, v=v_j: t(a, v),
            )
        )
    return cases


def eager_cases() -> list[Case]:
    cases = []
    for shape in ((8,), (1000,)):
        data = _random(*shape)
        ours, theirs = xp.asarray(data), jnp.asarray(data)
        cases.append(Case("softmax + logsumexp", shape, lambda o=ours: softmax_logsumexp(xp, o),
                          lambda t=theirs: softmax_logsumexp(jnp, t)))  # fmt: skip
    args = [_random(8, 16), _random(16, 32), _random(32), _random(32, 8), _random(8)]
    xp_args, jnp_args = [xp.asarray(a) for a in args], [jnp.asarray(a) for a in args]
    cases.append(Case("MLP forward (2 layers)", (8, 16), lambda: mlp(xp, *xp_args), lambda: mlp(jnp, *jnp_args)))
    return cases


# --- what jax.jit charges for a wrapper type ------------------------------------------------------
#
# xp's arrays are pytree nodes around jax arrays; jax.jit's C++ dispatch flattens each argument and
# rebuilds each result's node, calling back into Python. Timed against the same call on the jax
# array itself, for xp's Array and for the cheapest node of each kind JAX offers (a dataclass node,
# a custom node), so that a run shows which part of xp's per-call cost any wrapper type pays on its
# machine, and which kind costs less there.


class DataclassNode:
    """A dataclass node: JAX reads its child from C++ and rebuilds it with ``DataclassNode(value=...)``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


jax.tree_util.register_dataclass(DataclassNode, data_fields=["value"], meta_fields=[])


class CustomNode:
    """The other kind of node: JAX calls Python functions to flatten and to rebuild it."""

    __slots__ = ("value",)


def _custom_node(value: Any) -> CustomNode:
    node = object.__new__(CustomNode)
    node.value = value
    return node


jax.tree_util.register_pytree_node(
    CustomNode, lambda w: ((w.value,), None), lambda _, children: _custom_node(children[0])
)
WRAPPERS = ("xp array", "dataclass node", "custom node")

# What each case passes through a jitted function that returns what it takes (or part of it).
WRAPPER_KINDS = {
    "argument and result": "one array of 8 float32, argument and result",
    "argument only": "the same array, argument only",
    "result only": "the same array, result only",
    "prediction": "20 arrays and one more as arguments, the one as the result (a prediction)",
    "training step": "20 arrays as arguments and as results (a training step)",
}


def wrapper_cases() -> list[Case]:
    data = jnp.asarray(_random(8))
    tree = {f"w{i}": data + i for i in range(20)}
    identity, first = jax.jit(lambda a: a), jax.jit(lambda a, _: a)
    cases = []
    for kind, wrap, unwrap in (
        ("xp array", xp.asarray, lambda a: a._value),
        ("dataclass node", DataclassNode, lambda w: w.value),
        ("custom node", _custom_node, lambda w: w.value),
    ):
        wrapped, wrapped_tree = wrap(data), {k: wrap(v) for k, v in tree.items()}
        unwrapping, wrapping = jax.jit(unwrap), jax.jit(wrap)
        calls = {  # (the call with wrappers, the same call with the jax arrays themselves)
            "argument and result": (lambda f=identity, a=wrapped: f(a), lambda: identity(data)),
            "argument only": (lambda f=unwrapping, a=wrapped: f(a), lambda: identity(data)),
            "result only": (lambda f=wrapping: f(data), lambda: identity(data)),
            "prediction": (lambda a=wrapped, t=wrapped_tree: first(a, t), lambda: first(data, tree)),
            "training step": (lambda t=wrapped_tree: identity(t), lambda: identity(tree)),
        }
        for part in WRAPPER_KINDS:
            ours, theirs = calls[part]
            cases.append(Case(f"{kind}: {part}", (), ours, theirs))
    return cases


def _wrapper_table(inline: dict[str, tuple[float, float]], how: str = "executed inline") -> str:
    lines = [
        f"| jitted identity, {how} | xp array | dataclass node | custom node |",
        "|---|---:|---:|---:|",
    ]
    for part, label in WRAPPER_KINDS.items():
        cells = []
        for kind in WRAPPERS:
            ours, theirs = inline[f"{kind}: {part} ()"]
            cells.append(f"{(ours - theirs) * 1e6:+.1f} µs ({ours / theirs:.2f})")
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


WRAPPER_NOTE_ACCELERATOR = (
    "What `jax.jit` adds to a call for pytree nodes around the arrays, as in the CPU's section but"
    " timed in this process (asynchronous dispatch on): µs of wall-clock time per call over the same"
    " jitted function called with the jax arrays themselves (and the ratio), for xp's `Array`, a"
    " dataclass node and a custom node (bench/overhead.py)."
)

WRAPPER_NOTE = (
    "What `jax.jit` adds to a call for pytree nodes around the arrays, measured in the same fresh"
    " interpreter as the last column above (asynchronous dispatch off): µs of CPU time per call over"
    " the same jitted function called with the jax arrays themselves (and the ratio). xp's `Array`"
    " against the two kinds of node JAX offers, each in its cheapest form (a class with `__slots__`;"
    " bench/overhead.py): a dataclass node (`register_dataclass`, with a plain `__init__`), whose"
    " child JAX's C++ reads without calling Python and which it rebuilds by calling the class with a"
    " keyword (the kind xp's `Array` is), and a custom node (`register_pytree_node`), flattened and"
    " rebuilt by Python functions. The part all pay is what any wrapper type costs on this machine;"
    " the rows show where each kind costs less: a custom node for each result, a dataclass node for"
    " each argument, and so where a call takes many arrays and returns few."
)


# --- import time ----------------------------------------------------------------------------------

_IMPORT = (
    "{before}import time; t, w = time.process_time(), time.perf_counter(); import {module}; "
    "print(time.process_time() - t, time.perf_counter() - w)"
)

# What each fresh interpreter imports: untimed first, then timed. The third is xp's own cost,
# which the difference of the first two also is, less the noise of two 2.5-second imports (on the
# 2-core VM their medians move by up to 50 ms between runs of 15 rounds).
IMPORTS = {
    "jax.numpy": ("", "jax.numpy"),
    "xp": ("", "xp"),
    "xp after jax.numpy": ("import jax.numpy; ", "xp"),
}


def import_times(rounds: int) -> dict[str, tuple[float, float]]:
    """Median CPU and wall-clock seconds of each import of :data:`IMPORTS`, each in a fresh
    process, interleaved: {label: (cpu, wall)}."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in IMPORTS}
    for i in range(rounds + 1):
        for label, (before, module) in IMPORTS.items():
            code = _IMPORT.format(before=before, module=module)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            if i:  # the first round writes the bytecode caches
                cpu, wall = out.stdout.split()
                times[label].append((float(cpu), float(wall)))
    return {
        label: (statistics.median(c for c, _ in pairs), statistics.median(w for _, w in pairs))
        for label, pairs in times.items()
    }


# --- the same calls with XLA's CPU client executing inline ------------------------------------------
#
# Why (INLINE_NOTE below says it in the report): with asynchronous dispatch, whether a call finds
# the previous kernel finished decides whether it goes to a worker thread, so a faster Python layer
# can cost more (the MLP pipeline: xp's matmul + add 17.7 µs of wall-clock time, jax.numpy's 14.3;
# jax.numpy's add after xp's matmul, 14.3).


def time_calls(quick: bool) -> tuple[list[Timed], list[Timed]]:
    """The jitted and the eager cases, timed."""
    # The jitted calls are the smallest and the noisiest (a few µs, half of it on XLA's threads):
    # three times the rounds and the budget. Rows still move between runs (JITTED_NOTE says how much).
    jitted = run(jitted_cases(), *schedule(quick, 45, 2.0))
    return jitted, run(eager_cases(), *schedule(quick, 15, 0.6))


def time_wrappers(quick: bool) -> list[Timed]:
    """The wrapper cases, timed (meaningful with asynchronous dispatch off: see inline_times)."""
    return run(wrapper_cases(), *schedule(quick, 45, 1.0))


def inline_times(quick: bool) -> dict[str, tuple[float, float]]:
    """{case: (xp, jax.numpy)} median CPU seconds per call of the jitted and the eager cases, timed
    in a fresh interpreter with ``jax_cpu_enable_async_dispatch`` off (set before JAX's CPU client
    exists, which is when the setting is read)."""
    code = (
        "import jax, json, sys; jax.config.update('jax_cpu_enable_async_dispatch', False);"
        f" sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); import overhead;"
        " jitted, eager = overhead.time_calls(sys.argv[1] == 'quick');"
        " wrappers = overhead.time_wrappers(sys.argv[1] == 'quick');"
        " print(json.dumps([(overhead._key(r), r.ours, r.theirs) for r in jitted + eager + wrappers]))"
    )
    out = subprocess.run([sys.executable, "-c", code, "quick" if quick else "full"], stdout=subprocess.PIPE,
                         text=True, check=True)  # fmt: skip
    return {key: (ours, theirs) for key, ours, theirs in json.loads(out.stdout)}


# --- the report -----------------------------------------------------------------------------------


def _key(row: Timed) -> str:
    return f"{row.case.name} {row.case.shape}"


def _table(title: str, note: str, rows: list[Timed], label: str, inline: dict[str, tuple[float, float]]) -> str:
    lines = [
        f"## {title}",
        "",
        note,
        "",
        f"| {label} | shape | xp / jax.numpy | xp | jax.numpy | wall-clock: xp / jax.numpy"
        " | executed inline: xp / jax.numpy |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if _key(r) in inline:
            ours, theirs = inline[_key(r)]
            executed_inline = f"{ours / theirs:.2f} ({ours * 1e6:.1f} / {theirs * 1e6:.1f} µs)"
        else:
            executed_inline = "n/a"
        lines.append(
            f"| {r.case.name} | {r.case.shape} | {r.ours / r.theirs:.2f} | {r.ours * 1e6:.1f} µs"
            f" | {r.theirs * 1e6:.1f} µs | {r.ours_wall / r.theirs_wall:.2f} | {executed_inline} |"
        )
    ratios = [r.ours / r.theirs for r in rows]
    walls = [r.ours_wall / r.theirs_wall for r in rows]
    inlined = [inline[_key(r)][0] / inline[_key(r)][1] for r in rows if _key(r) in inline]
    mean_inline, max_inline = (
        (f"**{geometric_mean(inlined):.2f}**", f"**{max(inlined):.2f}**") if inlined else ("n/a", "n/a")
    )
    lines.append(
        f"| geometric mean | | **{geometric_mean(ratios):.2f}** | | | {geometric_mean(walls):.2f} | {mean_inline} |"
    )
    lines.append(f"| largest | | **{max(ratios):.2f}** | | | {max(walls):.2f} | {max_inline} |")
    return "\n".join(lines) + "\n"


INLINE_NOTE = (
    " The last column: the same calls timed in a fresh interpreter with `jax_cpu_enable_async_dispatch`"
    " off, so that XLA runs every computation on the calling thread. With it on (JAX's default, the"
    " other columns), XLA's CPU client runs a computation inline only where its cost analysis counts"
    " fewer than 1000 flops and nothing it waits for, the previous computation included, is still in"
    " flight; anything else goes to a worker thread. A namespace that reaches its next call sooner finds"
    " more kernels in flight and hands more of them between threads, so the default columns also measure"
    " how calls line up with XLA's threads; the last column measures what each namespace does per call."
)


JITTED_NOTE = (
    " Target: at most 1.05 each. On the shared 2-core machine a row moves by up to 0.4 between runs"
    " (nine runs on 2026-12-02 and 12-03: affine 0.85-1.23, MLP 0.88-1.30, fori_loop 1.08-1.12, softmax"
    " 0.99-1.24, BCOO 0.75-1.12): a call is a few µs and its CPU time includes XLA's worker threads. What xp adds per call,"
    " measured directly on jitted identity functions executed inline: on this run's machine, the table"
    " after this one (on an Intel Xeon, about 0.1 µs per xp argument and 0.6 µs per xp result: issue"
    " #12's notes)."
)


def _note() -> str:
    return (
        f"Median {CLOCK} per call, xp / jax.numpy (below 1 is faster); the last column, the ratio of"
        " median wall-clock times of the same batches. The jitted jax.numpy twins are traced at float32's"
        " precision, xp's default (`jax.default_matmul_precision(\"highest\")`): the same programs, but that xp's"
        " float32 exponentials and logarithms ask XLA for its accurate implementations (xp/_float32_accuracy.py). "
        + environment()
    )


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    args = parser.parse_args(argv)
    import_rounds = 2 if args.quick else 15
    jitted, eager = time_calls(args.quick)
    if jax.default_backend() != "cpu":
        # Inline execution is XLA's CPU client's; and the fresh interpreters these sections start
        # could not claim an accelerator this process holds. The wrapper cases run here instead.
        wrappers = {_key(row): (row.ours, row.theirs) for row in time_wrappers(args.quick)}
        return (
            _table("Jitted calls: generic functions, per call", _note(), jitted, "function", {})
            + "\n"
            + WRAPPER_NOTE_ACCELERATOR
            + "\n\n"
            + _wrapper_table(wrappers, "on the accelerator")
            + "\n"
            + _table("Eager generic pipelines", _note() + " Target: at most 1.0 each.", eager, "pipeline", {})
        )
    inline = inline_times(args.quick)
    imports = import_times(import_rounds)
    (ours, ours_wall), (theirs, theirs_wall) = imports["xp"], imports["jax.numpy"]
    own, own_wall = imports["xp after jax.numpy"]
    load = os.getloadavg()[0]
    note = _note()
    return (
        _table(
            "Jitted calls: generic functions, per call", note + JITTED_NOTE + INLINE_NOTE, jitted, "function", inline
        )
        + "\n"
        + WRAPPER_NOTE
        + "\n\n"
        + _wrapper_table(inline)
        + "\n"
        + _table(
            "Eager generic pipelines", note + " Target: at most 1.0 each." + INLINE_NOTE, eager, "pipeline", inline
        )
        + "\n## Import time\n\n"
        + f"Process CPU time and wall-clock time of `import xp` and of `import jax.numpy` in fresh interpreters "
        f"(bytecode cached), interleaved, medians of {import_rounds}; load average {load:.1f}; the last row, "
        "`import xp` timed in an interpreter that has imported jax.numpy already: xp's own cost, which the "
        "difference also measures, less the noise of two imports of 2.5 s (their medians move by up to 50 ms "
        "between runs on the 2-core VM). Target: xp at most jax.numpy + 50 ms (CPU).\n\n"
        + "| import | CPU time | wall-clock time |\n|---|---:|---:|\n"
        + f"| `import jax.numpy` | {theirs * 1e3:.0f} ms | {theirs_wall * 1e3:.0f} ms |\n"
        + f"| `import xp` | {ours * 1e3:.0f} ms | {ours_wall * 1e3:.0f} ms |\n"
        + f"| difference | **{(ours - theirs) * 1e3:+.0f} ms** | {(ours_wall - theirs_wall) * 1e3:+.0f} ms |\n"
        + f"| `import xp` after `import jax.numpy` | **+{own * 1e3:.0f} ms** | +{own_wall * 1e3:.0f} ms |\n"
    )


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(main())
