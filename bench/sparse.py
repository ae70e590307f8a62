"""Sparse arrays: xp.sparse against SciPy, pydata sparse and raw jax.experimental.sparse, in one run.

A 20000 x 20000 matrix with density 1e-3 (400,000 stored entries, random positions; float32 and
float64) in every format: SciPy ``csr_array`` (the reference), pydata ``COO`` and ``GCXS``, raw
JAX ``BCOO`` and ``BCSR`` (eager and jitted), and xp's ``BCOO`` and ``BCSR`` (eager and jitted).
The operations: ``A @ x`` (a vector), ``A @ X`` (64 columns), ``A.T @ x``, ``A * 2``,
``sum(A, axis=0)``, ``A.T``, ``A[rows]`` (2000 rows by an index array), and ``jax.grad`` of
``w . (A @ x)`` with respect to the stored values;
for the products also a ``jax.pure_callback`` into SciPy's csr product (the alternative to xp's
native kernel) and xp's products with the native kernel off (XLA's).

All implementations of one operation are timed interleaved, in rounds; each round times a batch
of calls by wall-clock time (waiting for JAX's asynchronous results); the median over rounds is
reported, with its ratio to SciPy's time (below 1 is faster). Wall-clock time, because that is
what a caller waits for; SciPy and pydata compute on one thread, XLA and JAX's native CSR kernel
may use more. "n/a": the implementation has no such operation (JAX's BCSR has no transpose).

Float64 needs JAX's 64-bit mode: if it is off, the benchmark reruns itself in a subprocess with
``JAX_ENABLE_X64=1`` (float32 arrays are unaffected by the mode).

    python bench/sparse.py            # prints the markdown section
    python bench/sparse.py --quick    # fewer rounds (a smoke test)
    python bench/run.py sparse        # writes bench/RESULTS.md
"""

# ruff: noqa: N803, N806  (A and X are matrices, named as in the operations)

from __future__ import annotations

import argparse
import importlib
import itertools
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from _machine import describe
from _x64 import output_with_x64

SIZE = 20000
DENSITY = 1e-3
COLUMNS = 64
TAKEN = 2000  # rows taken by A[rows]
ROW_SETS = 256  # the sets of rows A[rows] takes in turn
GRAD = "grad of w . (A @ x) by A's data"  # reverse mode through a product: w[row] * x[column]
SPGEMM = "A @ A.T"  # a product of two sparse matrices, eagerly
OPERATIONS = ["A @ x", "A @ X", "A.T @ x", "A * 2", "sum(A, axis=0)", "A.T", "A[rows]", SPGEMM, GRAD]
IMPLEMENTATIONS = [
    "scipy csr",
    "scipy callback",
    "pydata COO",
    "pydata GCXS",
    "jax BCOO eager",
    "jax BCOO jit",
    "jax BCSR eager",
    "jax BCSR jit",
    "xp BCOO eager",
    "xp BCOO jit",
    "xp BCSR eager",
    "xp BCSR jit",
    "xp BCOO jit XLA",
    "xp BCSR jit XLA",
]


@dataclass
class Case:
    operation: str
    implementation: str
    call: Callable[[], object] | None  # None: not available


def _pydata() -> ModuleType:
    """pydata's ``sparse`` package: this file is called ``sparse`` too, so bench/ leaves the import
    path while it is imported, and this module gives up the name if ``bench/run.py`` imported it
    under it."""
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.modules.get("sparse") is sys.modules[__name__]:
        sys.modules["bench_sparse"] = sys.modules.pop("sparse")
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        return importlib.import_module("sparse")
    finally:
        sys.path[:] = saved


def _block(result: object) -> None:
    import jax

    jax.block_until_ready(result)


def cases(dtype_name: str, seed: int = 0) -> list[Case]:
    import jax
    import numpy as np
    import scipy.sparse
    from jax.experimental import sparse as jsparse

    import xp
    import xp.sparse as xs

    pydata = _pydata()
    dtype = np.dtype(dtype_name)
    rng = np.random.default_rng(seed)
    S = scipy.sparse.random_array((SIZE, SIZE), density=DENSITY, format="csr", dtype=dtype, rng=rng)
    S.sort_indices()
    x = rng.standard_normal(SIZE).astype(dtype)
    X = rng.standard_normal((SIZE, COLUMNS)).astype(dtype)
    coo, gcxs = pydata.COO.from_scipy_sparse(S), pydata.GCXS.from_scipy_sparse(S)
    xp_coo, xp_csr = xs.from_scipy(S, format="bcoo"), xs.from_scipy(S, format="bcsr")
    jax_coo, jax_csr = xp_coo.jax, xp_csr.jax  # the same buffers and flags (sorted, unique)
    jx, jX, xx, xX = jax.numpy.asarray(x), jax.numpy.asarray(X), xp.asarray(x), xp.asarray(X)

    out: list[Case] = []

    def add(implementation: str, ops: dict[str, Callable[[], object] | None]) -> None:
        for operation in OPERATIONS:
            out.append(Case(operation, implementation, ops.get(operation)))

    w = rng.standard_normal(SIZE).astype(dtype)
    rows = np.repeat(np.arange(SIZE, dtype=S.indices.dtype), np.diff(S.indptr))
    jw = jax.numpy.asarray(w)
    # with repeats, in no order; a different set on each call, as when drawing minibatches of rows
    taken_sets = [rng.integers(0, SIZE, TAKEN).astype(np.int32) for _ in range(ROW_SETS)]
    xtaken_sets = [xp.asarray(t) for t in taken_sets]
    for name, A in (("scipy csr", S), ("pydata COO", coo), ("pydata GCXS", gcxs)):
        add(name, {
            "A @ x": lambda A=A: A @ x,
            "A @ X": lambda A=A: A @ X,
            "A.T @ x": lambda A=A: A.T @ x,
            "A * 2": lambda A=A: A * 2,
            "sum(A, axis=0)": lambda A=A: A.sum(axis=0),
            "A.T": lambda A=A: A.T,
            "A[rows]": in_turn(lambda rows, A=A: A[rows], taken_sets),
            SPGEMM: lambda A=A: A @ A.T,
            # SciPy has no autodiff: the gradient written by hand in NumPy, the rows precomputed
            GRAD: (lambda: w[rows] * x[S.indices]) if name == "scipy csr" else None,
        })  # fmt: skip

    def jax_ops(A: object, vector: object, matrix: object, jit: bool) -> dict[str, Callable[[], object] | None]:
        def f(fn: Callable[..., object]) -> Callable[..., object]:
            return jax.jit(fn) if jit else fn

        matvec, rmatvec = f(lambda A, v: A @ v), f(lambda A, v: A.T @ v)
        scale, total, transpose = f(lambda A: A * 2), f(lambda A: A.sum(axis=0)), f(lambda A: A.T)

        # the matrix an argument (not a constant, whose row indices XLA would compute at compile time)
        grad = f(jax.grad(lambda d, A, v: jax.numpy.vdot(jw, with_data(jsparse, A, d) @ v)))
        ops: dict[str, Callable[[], object] | None] = {
            "A @ x": lambda: matvec(A, vector),
            "A @ X": lambda: matvec(A, matrix),
            "A.T @ x": lambda: rmatvec(A, vector),
            "A * 2": lambda: scale(A),
            "sum(A, axis=0)": lambda: total(A),
            "A.T": lambda: transpose(A),
            GRAD: lambda: grad(A.data, A, vector),
        }
        return _available(ops)

    add("scipy callback", scipy_callback(S, jx, jX))

    for name, A in (("jax BCOO", jax_coo), ("jax BCSR", jax_csr)):
        add(f"{name} eager", jax_ops(A, jx, jX, jit=False))
        add(f"{name} jit", jax_ops(A, jx, jX, jit=True))

    def xp_ops(A: object, jit: bool, xla: bool = False) -> dict[str, Callable[[], object] | None]:
        def f(fn: Callable[..., object]) -> Callable[..., object]:
            if xla:  # compiled with the native kernel switched off: XLA's kernels, as before it
                from xp.sparse._products import native

                # by the arguments themselves (the same objects in every call of a case, alive
                # for the whole run): a key that costs nothing inside the timed calls
                compiled: dict[tuple[int, ...], Callable[..., object]] = {}

                def traced_without(*args: object) -> object:
                    key = tuple(map(id, args))
                    if key not in compiled:
                        with native.disabled():
                            compiled[key] = jax.jit(fn).lower(*args).compile()
                    return compiled[key](*args)

                return traced_without
            return jax.jit(fn) if jit else fn

        # the transpose is the array API's matrix_transpose (a view, as ``.T``: xp/sparse/_transposed.py)
        matvec, rmatvec = f(lambda A, v: A @ v), f(lambda A, v: xp.matrix_transpose(A) @ v)
        scale, total, transpose = f(lambda A: A * 2), f(lambda A: xp.sum(A, axis=0)), f(xp.matrix_transpose)
        # the matrix a constant, the rows an argument (as when drawing batches of rows): with the
        # matrix traced too, a result's size could only be bounded by rows x columns
        rows_of = jax.jit(lambda i: A[i]) if jit else (lambda i: A[i])  # type: ignore[index]
        raw = A.jax  # type: ignore[attr-defined]
        grad = f(jax.grad(lambda d, raw, v: jax.numpy.vdot(jw, (with_data(xs, raw, d) @ v).jax)))  # type: ignore[attr-defined]
        ops: dict[str, Callable[[], object] | None] = {
            "A @ x": lambda: matvec(A, xx),
            "A @ X": lambda: matvec(A, xX),
            "A.T @ x": lambda: rmatvec(A, xx),
            "A * 2": lambda: scale(A),
            "sum(A, axis=0)": lambda: total(A),
            "A.T": lambda: transpose(A),
            "A[rows]": in_turn(rows_of, xtaken_sets),
            # eagerly only: traced, the result is sized by JAX's rule before the coordinates are known
            # (here 400k x 400k pairs, capped at the 4e8 elements of the dense result)
            SPGEMM: None if jit else (lambda: A @ xp.matrix_transpose(A)),
            GRAD: lambda: grad(raw.data, raw, xx),
        }
        return _available(ops)

    for name, A in (("xp BCOO", xp_coo), ("xp BCSR", xp_csr)):
        add(f"{name} eager", xp_ops(A, jit=False))
        add(f"{name} jit", xp_ops(A, jit=True))
    for name, A in (("xp BCOO", xp_coo), ("xp BCSR", xp_csr)):
        add(f"{name} jit XLA", {k: v for k, v in xp_ops(A, jit=True, xla=True).items() if "@" in k})
    return out


def in_turn(take: Callable[[object], object], sets: list[object]) -> Callable[[], object]:
    """A call of ``take`` on the next of ``sets`` each time, from the first again after the last."""
    turn = itertools.cycle(sets)
    return lambda: take(next(turn))


def with_data(module: ModuleType, A: object, d: object) -> object:
    """The matrix ``A`` (JAX's BCOO or BCSR) with the stored values ``d``, built by ``module``'s
    constructors (``jax.experimental.sparse`` or ``xp.sparse``): what the gradient row differentiates."""
    from jax.experimental import sparse as jsparse

    if isinstance(A, jsparse.BCSR):
        return module.BCSR((d, A.indices, A.indptr), shape=A.shape)  # type: ignore[attr-defined]
    return module.BCOO((d, A.indices), shape=A.shape, indices_sorted=True, unique_indices=True)  # type: ignore[attr-defined]


def scipy_callback(S: object, jx: object, jX: object) -> dict[str, Callable[[], object] | None]:
    """The alternative to a native kernel: jitted JAX calling SciPy's csr product on the CSR
    buffers (``jax.pure_callback``; the buffers reach SciPy without a copy on CPU)."""
    import jax
    import jax.numpy as jnp
    import scipy.sparse

    shape = S.shape  # type: ignore[attr-defined]
    buffers = tuple(jnp.asarray(b) for b in (S.data, S.indices, S.indptr))  # type: ignore[attr-defined]

    def product(transposed: bool) -> Callable[..., object]:
        def host(data: object, indices: object, indptr: object, v: object) -> object:
            matrix = scipy.sparse.csr_array((data, indices, indptr), shape=shape)
            return (matrix.T if transposed else matrix) @ v

        def call(data: object, indices: object, indptr: object, v: object) -> object:
            out = jax.ShapeDtypeStruct(v.shape, v.dtype)  # type: ignore[attr-defined]
            return jax.pure_callback(host, out, data, indices, indptr, v)

        return jax.jit(call)

    matvec, rmatvec = product(False), product(True)
    return _available({
        "A @ x": lambda: matvec(*buffers, jx),
        "A @ X": lambda: matvec(*buffers, jX),
        "A.T @ x": lambda: rmatvec(*buffers, jx),
    })  # fmt: skip


def _available(ops: dict[str, Callable[[], object] | None]) -> dict[str, Callable[[], object] | None]:
    """The operations that run (the others are marked n/a), each called once (compiling it)."""
    result: dict[str, Callable[[], object] | None] = {}
    for name, fn in ops.items():
        if fn is None:
            result[name] = None
            continue
        try:
            _block(fn())
        except NotImplementedError as e:
            print(f"  n/a: {name}: {str(e).splitlines()[0][:100]}", file=sys.stderr)
            result[name] = None
        else:
            result[name] = fn
    return result


Times = dict[tuple[str, str], float]


def measure(group: list[Case], rounds: int, budget: float) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall-clock and process CPU seconds per call of each available case, interleaved in
    rounds."""
    live = [c for c in group if c.call is not None]
    calls = {}
    for case in live:
        assert case.call is not None
        _block(case.call())
        start = time.perf_counter()
        _block(case.call())
        single = max(time.perf_counter() - start, 1e-6)
        calls[case.implementation] = max(1, min(500, int(budget / single)))
    wall: dict[str, list[float]] = {c.implementation: [] for c in live}
    cpu: dict[str, list[float]] = {c.implementation: [] for c in live}
    for _ in range(rounds):
        for case in live:
            assert case.call is not None
            n = calls[case.implementation]
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                result = case.call()
            _block(result)
            wall[case.implementation].append((time.perf_counter() - start) / n)
            cpu[case.implementation].append((time.process_time() - start_cpu) / n)
    median = statistics.median
    return {k: median(v) for k, v in wall.items()}, {k: median(v) for k, v in cpu.items()}


def run(dtype_name: str, rounds: int, budget: float) -> tuple[Times, Times]:
    print(f"sparse benchmark, {dtype_name}: building the matrices and compiling", file=sys.stderr)
    all_cases = cases(dtype_name)
    wall: Times = {}
    cpu: Times = {}
    for operation in OPERATIONS:
        group = [c for c in all_cases if c.operation == operation]
        walls, cpus = measure(group, rounds, budget)
        for name in walls:
            wall[operation, name], cpu[operation, name] = walls[name], cpus[name]
        base = walls["scipy csr"]
        line = "  ".join(f"{n} {walls[n] / base:.2f}" for n in IMPLEMENTATIONS if n in walls)
        print(f"  {dtype_name} {operation:15} scipy {base * 1e3:.3f} ms | {line}", file=sys.stderr)
    return wall, cpu


def _cell(times: Times, operation: str, name: str) -> str:
    if (operation, name) not in times:
        return "n/a"
    seconds, base = times[operation, name], times[operation, "scipy csr"]
    if name == "scipy csr":
        return f"{_ms(seconds)}"
    return f"{seconds / base:.2f} ({_ms(seconds)})"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def table(title: str, times: Times) -> str:
    lines = [
        f"### {title}",
        "",
        "| operation | " + " | ".join(IMPLEMENTATIONS) + " |",
        "|---|" + "---:|" * len(IMPLEMENTATIONS),
    ]
    for operation in OPERATIONS:
        lines.append(f"| `{operation}` | " + " | ".join(_cell(times, operation, n) for n in IMPLEMENTATIONS) + " |")
    return "\n".join(lines) + "\n"


def _ratio(times: Times, operation: str, names: list[str]) -> float | None:
    values = [times[operation, n] for n in names if (operation, n) in times]
    return min(values) / times[operation, "scipy csr"] if values else None


def targets(results: dict[str, tuple[Times, Times]]) -> str:
    """The issue's targets, checked on this run's wall-clock medians (the CPU-time ratio follows)."""
    lines = ["| target | " + " | ".join(results) + " |", "|---|" + "---:|" * len(results)]

    def row(label: str, value: Callable[[Times, Times], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(value(w, c) for w, c in results.values()) + " |")

    def limit(operation: str, names: list[str], bound: float) -> Callable[[Times, Times], str]:
        def value(wall: Times, cpu: Times) -> str:
            ratio, cpu_ratio = _ratio(wall, operation, names), _ratio(cpu, operation, names)
            if ratio is None or cpu_ratio is None:
                return "n/a"
            return f"{ratio:.2f} {'met' if ratio <= bound else '**not met**'} (CPU {cpu_ratio:.2f})"

        return value

    for fmt in ("BCOO", "BCSR"):
        row(f"`A @ x` (xp {fmt} jit) <= 1.0x SciPy", limit("A @ x", [f"xp {fmt} jit"], 1.0))
        row(f"`A.T @ x` (xp {fmt} jit) <= 1.0x SciPy", limit("A.T @ x", [f"xp {fmt} jit"], 1.0))
        row(f"`A @ X` (xp {fmt} jit) <= 0.5x SciPy", limit("A @ X", [f"xp {fmt} jit"], 0.5))
    pydata = ["pydata COO", "pydata GCXS"]
    for operation in OPERATIONS:
        if operation == GRAD:  # pydata sparse has no automatic differentiation
            continue
        for mode in ("eager", "jit"):
            ours = [f"xp BCOO {mode}", f"xp BCSR {mode}"]

            def versus(wall: Times, cpu: Times, operation: str = operation, ours: list[str] = ours) -> str:
                mine, theirs = _ratio(wall, operation, ours), _ratio(wall, operation, pydata)
                mine_cpu, theirs_cpu = _ratio(cpu, operation, ours), _ratio(cpu, operation, pydata)
                if mine is None or theirs is None or mine_cpu is None or theirs_cpu is None:
                    return "n/a"
                verdict = "met" if mine < theirs else "**not met**"
                return f"{mine / theirs:.2f} {verdict} (CPU {mine_cpu / theirs_cpu:.2f})"

            row(f"`{operation}`: best xp {mode} / best pydata < 1", versus)
    return "\n".join(lines) + "\n"


CPU_NOTE = """\
The same calls in process CPU time (all threads of this process; the ratio to SciPy's CPU time,
then the time): the work each implementation does, little affected by other processes' load,
but charging XLA's and the native kernel's parallel threads in full."""

TARGETS_NOTE = """\
On the wall-clock medians above, with the CPU-time ratio in parentheses. "best xp" is the faster
of xp's BCOO and BCSR, "best pydata" the faster of COO and GCXS."""


def environment() -> str:
    import jax
    import numpy as np
    import scipy

    pydata = _pydata()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"Measured with jax {jax.__version__}, scipy {scipy.__version__}, pydata sparse {pydata.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}, on {jax.devices()[0].platform} "
        f"({describe()}, load average {load:.1f} at the end)."
    )


NOTE = """\
Each cell: the ratio of median wall-clock times per call to SciPy's `csr_array` (below 1 is
faster), then the time. A {size} x {size} matrix, density {density:g} ({nse:,} stored entries), `x` a
vector, `X` {columns} columns. xp's arrays come from `xp.sparse.from_scipy` (indices sorted and
unique); the raw JAX arrays are the same buffers. xp's products use its own kernels
(`xp/sparse/_products/kernels.py`, which records the measurements behind each choice): on CPU the native
kernel (`xp/sparse/_products/native.py`); "xp ... jit XLA" are the same products compiled with it switched
off (XLA's kernels, the fallback). "scipy callback" is jitted JAX calling SciPy's csr product
through `jax.pure_callback` on the same buffers (the alternative to a native kernel); for xp,
`A.T` is `xp.matrix_transpose(A)` (the transpose of a BCSR is a BCOO, as SciPy's transpose of a
csr array is a csc array), and `A * 2` and `sum(A, axis=0)` are `xp.multiply` and `xp.sum`.
JAX's own BCOO `A.sum(axis=0)` sums nothing: it drops each entry's row index and returns the
{nse:,} entries as a 1-d BCOO with repeated column indices, so its cells time moving the entries;
xp's (a 1-d BCOO of one entry a column) and SciPy's are summed. `A[rows]` takes {taken} rows
(random, with repeats) by an integer array, a different set on each call (from {row_sets} in
turn, as minibatches); jitted, the matrix is a constant and the rows an argument. JAX's own BCOO has no such row (`A[rows]` with an index array
ran out of the machine's memory). `A @ A.T` is a product of two sparse matrices (a sparse result
of about 8M stored elements), eagerly only: under `jax.jit`, xp and JAX size the result by JAX's
rule before the coordinates are known, a stored element per pair of stored elements up to the
dense size (here 4e8). The
gradient row is `jax.grad` with respect to the stored values, the matrix an argument of the
jitted function; SciPy has no automatic differentiation, so its cell is the gradient written by
hand in NumPy, `w[rows] * x[indices]` with the row of each entry precomputed. On a shared machine
absolute times move with the load; ratios within one run are what to read. Between runs of the
same code on the 2-core VM the ratios of the one-column products move by about 0.1 (jitted BCOO
`A @ x`, float32 / float64: 1.05 / 0.91 on 2026-12-04, 1.00 / 1.07 on 2026-12-05)."""


def markdown(results: dict[str, tuple[Times, Times]]) -> str:
    nse = int(SIZE * SIZE * DENSITY)
    parts = [
        "## Sparse arrays: xp.sparse, SciPy, pydata sparse and jax.experimental.sparse",
        "",
        NOTE.format(size=SIZE, density=DENSITY, nse=nse, columns=COLUMNS, taken=f"{TAKEN:,}", row_sets=ROW_SETS),
        "",
        environment(),
        "",
    ]
    for dtype_name, (wall, _) in results.items():
        parts.append(table(f"{dtype_name}: wall-clock time", wall))
    parts += [CPU_NOTE, ""]
    for dtype_name, (_, cpu) in results.items():
        parts.append(table(f"{dtype_name}: process CPU time", cpu))
    parts += ["### Targets", "", TARGETS_NOTE, "", targets(results)]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    parser.add_argument("--dtypes", default="float32,float64")
    args = parser.parse_args(argv)
    if "float64" in args.dtypes and (rerun := output_with_x64(__file__, argv)) is not None:
        return rerun
    rounds, budget = (3, 0.02) if args.quick else (9, 0.15)
    results = {name: run(name, rounds, budget) for name in args.dtypes.split(",")}
    return markdown(results)


if __name__ == "__main__":
    print(main(sys.argv[1:]))
