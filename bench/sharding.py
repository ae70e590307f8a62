"""Sharded arrays: jitted generic pipelines on 1 device and on 8, and a row-blocked sparse matvec.

The pipelines are generic array-API functions (they use only ``x.__array_namespace__()``), run on
xp arrays and on jax.numpy arrays in the same run, compiled with ``jax.jit``:

- ``standardize, x.T @ x, reductions``: standardize the columns of a (16384, 128) float32 matrix,
  its Gram matrix (a contraction over the sharded axis), a sum of squares and a row-wise maximum;
- ``sort, cumulative_sum along the sharded axis``: of a (16384, 128) float32 matrix, along axis 0.

Each on one device, and sharded by rows over 8 devices on a mesh with an Auto axis and on one with
an Explicit axis. Over the Explicit axis jax.numpy refuses both pipelines (a contraction, a sort
and a scan along a sharded axis need an ``out_sharding``); xp follows its rule (docs/sharding.md).

The sparse matvec ``A @ x`` of a 20000 x 20000 float32 matrix of density 1e-3 (400,000 stored
entries): xp's BCSR and JAX's BCSR on one device, and row-blocked over 8 devices (8 BCSR blocks of
2500 rows, each on its device with its copy of ``x``; the 8 products are dispatched one after the
other and run concurrently, and their results form one array sharded by rows), with SciPy as the
reference.

The 8 devices are simulated CPU devices (``--xla_force_host_platform_device_count=8``): on a
machine with fewer cores than devices they share the cores, so the 8-device times measure what the
partitioned program costs (collectives, dispatch), not a speedup. XLA_FLAGS must be set before JAX
starts: the benchmark reruns itself in a subprocess with it where JAX is already running without.

Wall-clock medians over interleaved rounds (each round times a batch of calls of every case, in
turn, waiting for JAX's asynchronous results); ratios are xp / jax.numpy in the same setting.

    python bench/sharding.py            # prints the markdown section
    python bench/sharding.py --quick    # fewer rounds (a smoke test)
    python bench/run.py sharding        # writes bench/RESULTS.md
"""

# ruff: noqa: N803, N806  (A is a matrix, named as in the operations)

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from _machine import describe
from eager import block, interleaved

DEVICES = 8
FLAG = f"--xla_force_host_platform_device_count={DEVICES}"
ROWS, COLUMNS = 16384, 128
SIZE, DENSITY = 20000, 1e-3


def gram_pipeline(x: Any) -> Any:
    ns = x.__array_namespace__()
    z = (x - ns.mean(x, axis=0)) / ns.std(x, axis=0)
    gram = z.T @ z
    return ns.sum(gram * gram), ns.max(ns.abs(z), axis=1)


def scan_pipeline(x: Any) -> Any:
    ns = x.__array_namespace__()
    return ns.cumulative_sum(ns.sort(x, axis=0), axis=0)


PIPELINES = {
    "standardize, `x.T @ x`, reductions": gram_pipeline,
    "sort, cumulative_sum along the sharded axis": scan_pipeline,
}


def _refusal(call: Callable[[], object]) -> str | None:
    """The name of the error JAX raises for ``call``, or None when it runs."""
    try:
        block(call())
    except Exception as e:  # a refusal to infer a sharding, whatever JAX calls it
        return type(e).__name__
    return None


def pipelines(rounds: int, budget: float) -> list[str]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    import xp

    data = np.random.default_rng(0).standard_normal((ROWS, COLUMNS)).astype(np.float32)
    placements: dict[str, Any] = {"1 device": jax.devices()[0]}
    for kind in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((DEVICES,), ("rows",), axis_types=(kind,))
        placements[f"{DEVICES} devices, {kind.name} axis"] = NamedSharding(mesh, P("rows"))
    lines = []
    for title, pipeline in PIPELINES.items():
        compiled = jax.jit(pipeline)
        cases: dict[str, Callable[[], object]] = {}
        refused: dict[str, str] = {}
        for where, device in placements.items():
            print(f"{title}, {where}: compiling", file=sys.stderr, flush=True)
            xs = xp.asarray(data, device=device)
            js = jax.device_put(jnp.asarray(data), device)
            expected = [np.asarray(r) for r in jax.tree.leaves(pipeline(data))]  # NumPy's namespace
            got = [np.asarray(r) for r in jax.tree.leaves(compiled(xs), is_leaf=lambda v: isinstance(v, xp.Array))]
            for g, e in zip(got, expected, strict=True):  # the same results as NumPy before timing
                np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-4 * max(1.0, float(np.abs(e).max())))
            cases[f"xp|{where}"] = lambda xs=xs, f=compiled: f(xs)
            error = _refusal(lambda js=js, f=compiled: f(js))
            if error is None:
                cases[f"jnp|{where}"] = lambda js=js, f=compiled: f(js)
            else:
                refused[where] = error
        print(f"{title}: checked, timing", file=sys.stderr, flush=True)
        medians = interleaved(cases, rounds, budget)
        lines.append(f"### {title}\n")
        lines.append("| placement | xp / jax.numpy | xp | jax.numpy | xp, 8 devices / 1 device |")
        lines.append("|---|---:|---:|---:|---:|")
        one = medians["xp|1 device"]
        for where in placements:
            x_time = medians[f"xp|{where}"]
            if where in refused:
                ratio, j_cell = "n/a", f"refused ({refused[where]})"
            else:
                j_time = medians[f"jnp|{where}"]
                ratio, j_cell = f"{x_time / j_time:.2f}", f"{j_time * 1e3:.2f} ms"
            scale = "" if where == "1 device" else f"{x_time / one:.2f}"
            lines.append(f"| {where} | {ratio} | {x_time * 1e3:.2f} ms | {j_cell} | {scale} |")
        lines.append("")
    return lines


def sparse_matvec(rounds: int, budget: float) -> list[str]:
    import jax
    import jax.experimental.sparse as jsparse
    import numpy as np
    import scipy.sparse as sp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import xp
    import xp.sparse

    A = sp.random(SIZE, SIZE, density=DENSITY, format="csr", dtype=np.float32, random_state=0)
    v = np.random.default_rng(1).standard_normal(SIZE).astype(np.float32)
    devices = jax.devices()[:DEVICES]
    rows = NamedSharding(jax.make_mesh((DEVICES,), ("rows",), devices=devices), P("rows"))
    step = SIZE // DEVICES
    pieces = [A[i * step : (i + 1) * step] for i in range(DEVICES)]
    jax_product = jax.jit(lambda M, w: M @ w)

    def jax_bcsr(M: Any, device: Any) -> Any:
        return jax.device_put(jsparse.BCSR((M.data, M.indices, M.indptr), shape=M.shape), device)

    xp_one = xp.sparse.from_scipy(A, format="bcsr").to_device(devices[0])
    xp_v = xp.asarray(v, device=devices[0])
    jax_one, jax_v = jax_bcsr(A, devices[0]), jax.device_put(v, devices[0])
    xp_blocks = [xp.sparse.from_scipy(M, format="bcsr").to_device(d) for M, d in zip(pieces, devices, strict=True)]
    jax_blocks = [jax_bcsr(M, d) for M, d in zip(pieces, devices, strict=True)]
    # x is replicated: each device has its own copy (in a cluster, the all-gather before the product)
    xp_copies = [xp.asarray(v, device=d) for d in devices]
    jax_copies = [jax.device_put(v, d) for d in devices]

    def xp_blocked() -> Any:
        parts = [(M @ w).jax for M, w in zip(xp_blocks, xp_copies, strict=True)]
        return xp.asarray(jax.make_array_from_single_device_arrays((SIZE,), rows, parts))

    def jax_blocked() -> Any:
        parts = [jax_product(M, w) for M, w in zip(jax_blocks, jax_copies, strict=True)]
        return jax.make_array_from_single_device_arrays((SIZE,), rows, parts)

    cases: dict[str, Callable[[], object]] = {
        "scipy": lambda: A @ v,
        "xp|1 device": lambda: xp_one @ xp_v,
        "jax|1 device": lambda: jax_product(jax_one, jax_v),
        f"xp|{DEVICES} row blocks": xp_blocked,
        f"jax|{DEVICES} row blocks": jax_blocked,
    }
    expected = A @ v
    for name, fn in cases.items():
        np.testing.assert_allclose(np.asarray(fn()), expected, rtol=1e-4, atol=1e-4, err_msg=name)
    assert xp_blocked().device == rows
    print("sparse matvec: checked, timing", file=sys.stderr, flush=True)
    medians = interleaved(cases, rounds, budget)
    scipy_time = medians["scipy"]
    lines = [
        f"### Sparse `A @ x`: {SIZE} x {SIZE}, density {DENSITY}, float32, BCSR\n",
        "| placement | xp / JAX | xp | JAX BCSR | xp / SciPy |",
        "|---|---:|---:|---:|---:|",
    ]
    for where in ("1 device", f"{DEVICES} row blocks"):
        x_time, j_time = medians[f"xp|{where}"], medians[f"jax|{where}"]
        lines.append(
            f"| {where} | {x_time / j_time:.2f} | {x_time * 1e3:.3f} ms | {j_time * 1e3:.3f} ms | "
            f"{x_time / scipy_time:.2f} |"
        )
    blocked, one = medians[f"xp|{DEVICES} row blocks"], medians["xp|1 device"]
    lines.append(f"\nSciPy CSR: {scipy_time * 1e3:.3f} ms. xp, {DEVICES} row blocks / 1 device: {blocked / one:.2f}.\n")
    return lines


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    args = parser.parse_args(argv)
    if FLAG not in os.environ.get("XLA_FLAGS", ""):
        # JAX reads XLA_FLAGS when its backend starts (bench/run.py may have started it without):
        # a fresh process with the flag set
        env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " " + FLAG).strip())
        command = [sys.executable, os.path.abspath(__file__), *(argv or [])]
        return subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    import jax

    assert len(jax.devices()) >= DEVICES, jax.devices()
    rounds, budget = (3, 0.02) if args.quick else (9, 0.2)
    lines = pipelines(rounds, budget) + sparse_matvec(rounds, budget)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        "## Sharding: generic pipelines on 1 and 8 devices, a row-blocked sparse matvec\n\n"
        "`python bench/sharding.py`: the pipelines of bench/sharding.py compiled with `jax.jit`, on xp "
        "arrays and on jax.numpy arrays in the same run; median wall-clock time per call over "
        f"{rounds} interleaved rounds. The {DEVICES} devices are simulated CPU devices sharing the "
        "machine's cores: the 8-device times are the cost of the partitioned program (collectives, "
        "dispatch), not a speedup, and absolute times mean little. Measured with jax "
        f"{jax.__version__}, Python {platform.python_version()}, on {jax.devices()[0].platform} "
        f"({describe()}, load average {load:.1f} at the end), "
        f"JAX_ENABLE_X64={os.environ.get('JAX_ENABLE_X64', '0')}.\n\n" + "\n".join(lines)
    )


if __name__ == "__main__":
    print(main(sys.argv[1:]))
