"""float32 products, linear algebra and FFTs: xp's default (full float32 precision) against the
fast path JAX's own setting opts into (``jax.default_matmul_precision("default")``: on a TPU one
bfloat16 pass per product), in time and in error against float64 NumPy; and float32's exponential,
logarithmic and hyperbolic functions, xp's (xp/_float32_accuracy.py) against jax.numpy's.

On a CPU both are the same computation; the section this writes is meant for accelerators, and
names the device it ran on. Timing: the time of one call's computation, the difference between a
program of :data:`REPEAT` chained calls and a program of one, each compiled ahead and timed as
batches of calls queued back to back (``eager.interleaved``), over ``REPEAT - 1``: a call's dispatch
and the host's wait for its result drop out (on a TPU v5e host they take about 0.5 ms, more than
most of these computations, which a call waited for measures instead).

    python bench/precision.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from eager import environment, interleaved
from jax import lax

import xp

FAST = "default"  # the value of jax.default_matmul_precision that opts into XLA's fastest products
REPEAT = 16  # the calls chained in the program whose time, less one call's, gives a call's computation
BUDGET = 0.05  # seconds of calls in each batch (interleaved's budget)
MEMORY_SIDE = 8192  # the side of the matrices of the products bound by memory (ELEMENTS says why)
ELEMENTS = 2**25
"""The values of the element-wise functions' operands (128 MiB; the matrices of the products bound
by memory, a matrix times a vector and ``vecdot``, are :data:`MEMORY_SIDE` a side: 256 MB). A
compiler keeps a loop's operands of a few MB in the chip's own memory (a TPU v5e's VMEM holds 128
MiB) from one chained call to the next, where one call reads them from HBM; operands this large
cannot stay, so each chained call reads them as one call does."""
DRAWN = 2**20
"""The values drawn for the element-wise functions, repeated to :data:`ELEMENTS` for their time;
their error is measured over these (NumPy's float64 references of all would take the host minutes)."""


def _chained(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` called :data:`REPEAT` times in one program, each call's inputs made to depend on
    the last one's outputs, so that none is hoisted out of the loop or runs beside another: plus a
    zero that is a select on the running total (zero unless it is NaN; a compiler cannot fold what it
    cannot know, where ``total * 0.0`` may be folded under a platform's float rules), and each call's
    outputs behind an optimization barrier before they are summed (they are computed and stored, as
    a call's are, not fused into the sum)."""

    def run(*args: Any) -> Any:
        def shifted(arg: Any, zero: Any) -> Any:
            value = arg.jax if isinstance(arg, xp.Array) else arg
            value = value + zero.astype(value.dtype)
            return xp.asarray(value) if isinstance(arg, xp.Array) else value

        def body(_: Any, total: Any) -> Any:
            zero = jnp.where(jnp.isnan(total), jnp.float32(1), jnp.float32(0))
            out = function(*(shifted(arg, zero) for arg in args))
            leaves = lax.optimization_barrier([leaf.jax if isinstance(leaf, xp.Array) else leaf
                                               for leaf in jax.tree.leaves(out)])  # fmt: skip
            return total + sum(jnp.sum(jnp.real(leaf)).astype(jnp.float32) for leaf in leaves)

        return lax.fori_loop(0, REPEAT, body, jnp.float32(0))

    return run


def _compiled(function: Callable[..., Any], args: list[Any], setting: str | None) -> tuple[Any, Any]:
    """``function(*args)`` once and :func:`_chained`, compiled now under JAX's matmul precision
    ``setting`` (None: as set), so that calling them later needs no setting."""
    with jax.default_matmul_precision(setting) if setting else contextlib.nullcontext():
        once = jax.jit(lambda *a: function(*a)).lower(*args).compile()
        chained = jax.jit(_chained(function)).lower(*args).compile()
    return once, chained


def _device_ms(calls: dict[str, tuple[Any, Any]], args: list[Any], rounds: int) -> dict[str, float]:
    """Each of ``calls`` (name: its :func:`_compiled` pair), the ms of one call's computation: all
    timed interleaved, the chained program less one call, over ``REPEAT - 1``."""
    cases = {}
    for name, (once, chained) in calls.items():
        cases[f"{name} once"] = lambda f=once: f(*args)
        cases[f"{name} chained"] = lambda f=chained: f(*args)
    seconds = interleaved(cases, rounds, BUDGET, most=200)
    return {name: (seconds[f"{name} chained"] - seconds[f"{name} once"]) / (REPEAT - 1) * 1e3 for name in calls}


def _cases(n: int) -> list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...], np.ndarray]]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    spd = a @ a.T / n + np.eye(n)
    v = rng.standard_normal(n)
    signal = rng.standard_normal(n * n)
    image = rng.standard_normal((n, n))
    return [
        (f"matmul ({n}, {n}) @ ({n}, {n})", xp.matmul, (a, b), a @ b),
        (f"tensordot ({n}, {n}), axes=1", lambda x, y: xp.tensordot(x, y, axes=1), (a, b), a @ b),
        (f"linalg.matrix_power ({n}, {n}), 3", lambda x: xp.linalg.matrix_power(x, 3), (spd,),
         np.linalg.matrix_power(spd, 3)),
        (f"linalg.solve ({n}, {n})", xp.linalg.solve, (spd, v[:, None]), np.linalg.solve(spd, v[:, None])),
        (f"linalg.inv ({n}, {n})", xp.linalg.inv, (spd,), np.linalg.inv(spd)),
        (f"linalg.cholesky ({n}, {n})", xp.linalg.cholesky, (spd,), np.linalg.cholesky(spd)),
        (f"linalg.qr ({n}, {n}), Q @ R", lambda x: xp.matmul(*xp.linalg.qr(x)), (a,), a),
        (f"fft.fft ({n * n},)", xp.fft.fft, (signal,), np.fft.fft(signal)),
        (f"fft.rfftn ({n}, {n})", xp.fft.rfftn, (image,), np.fft.rfftn(image)),
    ]  # fmt: skip


def _memory_cases(n: int) -> list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...], np.ndarray]]:
    """The products bound by memory, of ``n`` x ``n`` matrices (:data:`MEMORY_SIDE`)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n), np.float32)
    b = rng.standard_normal((n, n), np.float32)
    v = rng.standard_normal(n, np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return [
        (f"matmul ({n}, {n}) @ ({n},)", xp.matmul, (a, v), a64 @ v),
        (f"vecdot ({n}, {n})", xp.vecdot, (a, b), np.einsum("ij,ij->i", a64, b64)),
    ]


DECOMPOSITION_SIDE = 256
"""The side of the matrices of ``eigvalsh``, ``svdvals`` and ``pinv``: XLA:TPU compiles its
eigendecomposition of 1024 x 1024 for more than a minute (docs/accelerators.md)."""


def _decomposition_cases(n: int) -> list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...], np.ndarray]]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n))
    spd = a @ a.T / n + np.eye(n)
    return [
        (f"linalg.eigvalsh ({n}, {n})", xp.linalg.eigvalsh, (spd,), np.linalg.eigvalsh(spd)),
        (f"linalg.svdvals ({n}, {n})", xp.linalg.svdvals, (a,), np.linalg.svd(a, compute_uv=False)),
        (f"linalg.pinv ({n}, {n})", xp.linalg.pinv, (spd,), np.linalg.pinv(spd)),
    ]


def _elementwise_cases(size: int) -> list[tuple[str, Callable[..., Any], Callable[..., Any], Callable[..., Any],
                                                 tuple[np.ndarray, ...]]]:  # fmt: skip
    """(name, xp's function, jax.numpy's, NumPy's, float32 inputs spread over the domain)."""
    rng = np.random.default_rng(0)

    def spread(low: float, high: float) -> np.ndarray:  # magnitudes even in the logarithm, both signs
        magnitudes = np.exp(rng.uniform(np.log(low), np.log(high), size))
        return (magnitudes * rng.choice([-1.0, 1.0], size)).astype(np.float32)

    positive = np.abs(spread(1e-30, 1e30))
    return [
        ("exp", xp.exp, jnp.exp, np.exp, (spread(1e-6, 80),)),
        ("expm1", xp.expm1, jnp.expm1, np.expm1, (spread(1e-6, 80),)),
        ("log", xp.log, jnp.log, np.log, (positive,)),
        ("log1p", xp.log1p, jnp.log1p, np.log1p, (np.abs(spread(1e-6, 1e30)),)),
        ("log2", xp.log2, jnp.log2, np.log2, (positive,)),
        ("log10", xp.log10, jnp.log10, np.log10, (positive,)),
        ("tanh", xp.tanh, jnp.tanh, np.tanh, (spread(1e-6, 15),)),
        ("sinh", xp.sinh, jnp.sinh, np.sinh, (spread(1e-6, 80),)),
        ("cosh", xp.cosh, jnp.cosh, np.cosh, (spread(1e-6, 80),)),
        ("asinh", xp.asinh, jnp.arcsinh, np.arcsinh, (spread(1e-6, 1e30),)),
        ("acosh", xp.acosh, jnp.arccosh, np.arccosh, (1 + np.abs(spread(1e-6, 1e30)),)),
        ("atanh", xp.atanh, jnp.arctanh, np.arctanh, (spread(1e-6, 0.999),)),
        # positive operands: no cancellation in the result, whose relative error is then the function's
        ("logaddexp", xp.logaddexp, jnp.logaddexp, np.logaddexp, (np.abs(spread(1e-3, 80)), np.abs(spread(1e-3, 80)))),
        ("pow", xp.pow, jnp.power, np.power, (positive**0.1, spread(1e-3, 8))),
    ]


def measure_elementwise(size: int, rounds: int) -> list[tuple[str, float, float, float, float]]:
    """Per function: xp's and jax.numpy's ms of a call's computation on ``size`` values (the
    :data:`DRAWN` drawn ones, repeated) and largest relative error over the drawn ones against NumPy's
    float64 result from the same float32 inputs (results in float32's normal range)."""
    rows = []
    for name, ours, theirs, numpy_function, drawn in _elementwise_cases(min(size, DRAWN)):
        with np.errstate(all="ignore"):
            want = numpy_function(*(x.astype(np.float64) for x in drawn))
        inside = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float32).smallest_normal) & (np.abs(want) < 3e38)
        args = [jnp.asarray(np.resize(x, size)) for x in drawn]
        calls = {"xp": _compiled(lambda *a, f=ours: f(*(xp.asarray(v) for v in a)).jax, args, None),
                 "jax.numpy": _compiled(theirs, args, None)}  # fmt: skip

        def worst(got: Any, inside: np.ndarray = inside, want: np.ndarray = want) -> float:
            got = np.asarray(got[: want.size], np.float64)[inside]
            return float(np.max(np.abs(got - want[inside]) / np.abs(want[inside])))

        ms = _device_ms(calls, args, rounds)
        rows.append((name, ms["xp"], worst(calls["xp"][0](*args)), ms["jax.numpy"],
                     worst(calls["jax.numpy"][0](*args))))  # fmt: skip
        print(f"{name:12} xp {rows[-1][1]:9.3f} ms  {rows[-1][2]:.1e}   jax.numpy {rows[-1][3]:9.3f} ms"
              f"  {rows[-1][4]:.1e}", file=sys.stderr)  # fmt: skip
    return rows


def _relative_error(got: Any, want: np.ndarray) -> float:
    got = np.asarray(got).astype(want.dtype)
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def measure(n: int, memory_side: int, rounds: int) -> list[tuple[str, float, float, float, float]]:
    rows = []
    cases = _cases(n) + _memory_cases(memory_side) + _decomposition_cases(min(n, DECOMPOSITION_SIDE))
    for name, function, inputs, want in cases:
        args = [xp.asarray(x.astype(np.float32)) for x in inputs]
        calls = {"default": _compiled(function, args, None), "opt-in": _compiled(function, args, FAST)}
        ms = _device_ms(calls, args, rounds)
        rows.append((
            name,
            ms["default"], _relative_error(calls["default"][0](*args), want),
            ms["opt-in"], _relative_error(calls["opt-in"][0](*args), want),
        ))  # fmt: skip
        print(f"{name:40} default {rows[-1][1]:9.3f} ms  {rows[-1][2]:.1e}   opt-in {rows[-1][3]:9.3f} ms"
              f"  {rows[-1][4]:.1e}", file=sys.stderr)  # fmt: skip
    return rows


def markdown(rows: list[tuple[str, float, float, float, float]],
             elementwise: list[tuple[str, float, float, float, float]] | None = None, size: int = 0) -> str:  # fmt: skip
    """The section of measured ``rows`` (and of the ``elementwise`` rows, on ``size`` elements)."""
    lines = [
        "## float32 precision: xp's default against the opt-in fast path",
        "",
        "xp computes float32 products, linear algebra and FFTs at full float32 precision unless JAX's "
        f'own setting is given (here `jax.default_matmul_precision("{FAST}")`, XLA\'s fastest). Time: the ms '
        f"of one call's computation ({REPEAT} calls chained in one program, each adding zero to its inputs and "
        "summing its outputs, against one call, both timed in batches of calls queued back to back, interleaved, "
        "medians: a call's dispatch and the host's wait drop out; the products bound by memory and the element-wise "
        "functions take operands larger than the chip's own memory, which a chained call then reads from HBM as one "
        "call does); error: "
        "relative Frobenius-norm error against NumPy's float64 result from the same float32 inputs. " + environment(),
        "",
        "| computation | default ms | default error | opt-in ms | opt-in error | time default / opt-in |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, full_ms, full_err, fast_ms, fast_err in rows:
        lines.append(
            f"| {name} | {full_ms:.3f} | {full_err:.1e} | {fast_ms:.3f} | {fast_err:.1e} | {full_ms / fast_ms:.2f} |"
        )
    if elementwise:
        lines += [
            "",
            f"float32 functions of {size:,} elements"
            + (f" ({DRAWN:,} drawn, repeated; the error over those)" if size > DRAWN else "")
            + ", xp's (which ask XLA for its most accurate implementation: xp/_float32_accuracy.py) against "
            "jax.numpy's: ms of a call's computation (as above), largest relative error against NumPy's float64 "
            "result from the same inputs.",
            "",
            "| function | xp ms | xp error | jax.numpy ms | jax.numpy error | time xp / jax.numpy |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, xp_ms, xp_err, jnp_ms, jnp_err in elementwise:
            lines.append(
                f"| {name} | {xp_ms:.3f} | {xp_err:.1e} | {jnp_ms:.3f} | {jnp_err:.1e} | {xp_ms / jnp_ms:.2f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small matrices, few rounds (a smoke test)")
    args = parser.parse_args(argv)
    n, memory_side, size, rounds = (64, 64, 10_000, 2) if args.quick else (1024, MEMORY_SIDE, ELEMENTS, 5)
    return markdown(measure(n, memory_side, rounds), measure_elementwise(size, rounds), size)


if __name__ == "__main__":
    print(main())
