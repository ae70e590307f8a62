"""Generic array-API code on a ``jax.distributed`` cluster: a ridge regression over data that no
single process holds.

Two processes on this machine (127.0.0.1), each with 4 CPU devices, form a cluster of 8 devices.
Each process reads only its own rows of the data (here: makes them from a seed) and the rows
become one global array sharded over the 8 devices. The model (standardize the features, solve the
normal equations) is written against ``X.__array_namespace__()`` only; JAX's compiler turns
``X.T @ X`` into per-device products and an all-reduce across the processes, under ``jax.jit``.

    python examples/distributed.py                   # starts both processes and waits for them

On a real cluster run one process per host, each with its own ``--process-id``, the same
``--coordinator`` (host:port of process 0) and ``--processes``; without ``XLA_FLAGS`` each process
then uses its own accelerators:

    python examples/distributed.py --coordinator HOST:PORT --processes 2 --process-id 0
    python examples/distributed.py --coordinator HOST:PORT --processes 2 --process-id 1
"""

# ruff: noqa: N803, N806  (X, Z: matrices, named as in the formulas)

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROWS_PER_PROCESS, FEATURES = 4096, 16


def standardize(X: Any) -> Any:
    xp = X.__array_namespace__()
    return (X - xp.mean(X, axis=0)) / xp.std(X, axis=0)


def ridge(X: Any, y: Any, penalty: float) -> Any:
    """The coefficients minimising ``|Z w - y|^2 + penalty |w|^2`` for the standardized ``Z``."""
    xp = X.__array_namespace__()
    Z = standardize(X)
    gram = Z.T @ Z + penalty * xp.eye(X.shape[1], dtype=X.dtype)
    return xp.linalg.solve(gram, Z.T @ (y - xp.mean(y)))


def my_rows(process_id: int) -> tuple[np.ndarray, np.ndarray]:
    """This process's share of the data (in practice: its files); the same rows on every run."""
    rng = np.random.default_rng(process_id)
    X = rng.standard_normal((ROWS_PER_PROCESS, FEATURES)) * np.arange(1, FEATURES + 1)
    y = X @ np.linspace(-1, 1, FEATURES) + 0.1 * rng.standard_normal(ROWS_PER_PROCESS)
    return X.astype(np.float32), y.astype(np.float32)


def worker(coordinator: str, processes: int, process_id: int) -> None:
    import jax

    # CPU devices of different processes exchange data through gloo; set before the backend starts
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=processes, process_id=process_id)
    from jax.experimental import multihost_utils
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import xp

    mesh = jax.make_mesh((len(jax.devices()),), ("rows",))  # all devices of all processes
    rows = NamedSharding(mesh, P("rows"))
    X_mine, y_mine = my_rows(process_id)
    n = ROWS_PER_PROCESS * processes
    X = xp.asarray(jax.make_array_from_process_local_data(rows, X_mine, (n, FEATURES)))
    y = xp.asarray(jax.make_array_from_process_local_data(rows, y_mine, (n,)))
    start = time.perf_counter()
    coefficients = jax.jit(ridge, static_argnums=2)(X, y, 1.0)
    # the coefficients are replicated: every process holds them whole and may read them (a
    # sharded result would be gathered first: multihost_utils.process_allgather)
    coefficients = np.asarray(coefficients)
    elapsed = time.perf_counter() - start
    if process_id == 0:
        # the check only this example can afford: all the data, on one process, with NumPy
        X_all, y_all = (np.concatenate(parts) for parts in zip(*(my_rows(i) for i in range(processes)), strict=True))
        expected = np.asarray(ridge(np.asarray(X_all, np.float64), np.asarray(y_all, np.float64), 1.0))
        print(
            f"{processes} processes, {len(jax.devices())} devices, {n} rows; fit in {elapsed:.2f} s (compile included)"
        )
        print("coefficients:", np.array2string(coefficients, precision=3, max_line_width=100))
        print(f"largest difference from NumPy on all the data: {np.max(np.abs(coefficients - expected)):.2e}")
    multihost_utils.sync_global_devices("done")  # neither process leaves while the other still needs it


def launch(processes: int = 2, devices_per_process: int = 4, time_limit: float = 300) -> int:
    """This script as ``processes`` processes on 127.0.0.1; both are stopped if one fails."""
    with socket.socket() as probe:  # a port the OS says is free
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices_per_process}")
    root = str(Path(__file__).resolve().parent.parent)  # the repository, for `import xp` from a checkout
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, __file__, "--coordinator", f"127.0.0.1:{port}", "--processes", str(processes)]
    children = [subprocess.Popen([*command, "--process-id", str(i)], env=env) for i in range(processes)]
    deadline = time.monotonic() + time_limit
    try:
        while any(c.poll() is None for c in children) and time.monotonic() < deadline:
            if any(c.poll() not in (None, 0) for c in children):
                break  # the others would wait for it forever
            time.sleep(0.2)
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
                c.wait()
    return max(abs(c.returncode) for c in children)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coordinator", help="host:port of process 0 (omit to start 2 local processes)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--process-id", type=int)
    args = parser.parse_args()
    if args.coordinator is None:
        sys.exit(launch(args.processes))
    worker(args.coordinator, args.processes, args.process_id)
