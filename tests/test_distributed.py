"""Generic xp code on a ``jax.distributed`` cluster: 2 processes x 4 CPU devices on 127.0.0.1.

The processes run tests/distributed_worker.py: global arrays from process-local data, creation on
the global mesh, the generic pipelines of tests/test_sharding.py and more (eagerly and jitted, on
Auto and Explicit meshes), a distributed sparse matvec and a CG solve, each gathered and compared
with NumPy on the whole data. The CPU devices of the two processes talk through gloo.
"""

import socket
import subprocess
import sys
import time
from pathlib import Path

import jax
import pytest
from subprocess_env import subprocess_env

import xp

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "distributed_worker.py"
TIME_LIMIT = 240  # seconds for the whole cluster; it takes about 40 cold on 2 shared CPU cores


def free_port() -> int:
    """A port the OS reports free on 127.0.0.1 (the coordinator binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_cluster(script: Path, *args: str) -> list[str]:
    """Both processes' stdout; on a failure or past the time limit both are killed and the
    assertion gives both processes' output."""
    env = subprocess_env(host_devices=4)
    port = str(free_port())
    processes = [
        subprocess.Popen([sys.executable, str(script), *args, str(i), port], env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]  # fmt: skip
    deadline = time.monotonic() + TIME_LIMIT
    try:
        # a process that fails leaves the other waiting on a collective: stop both at once
        while any(p.poll() is None for p in processes) and time.monotonic() < deadline:
            if any(p.poll() not in (None, 0) for p in processes):
                break
            time.sleep(0.2)
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
    outputs = [p.communicate() for p in processes]
    report = "\n".join(
        f"--- process {i} (exit status {p.returncode}) stdout:\n{out[-3000:]}\n--- stderr:\n{err[-6000:]}"
        for i, (p, (out, err)) in enumerate(zip(processes, outputs, strict=True))
    )
    assert all(p.returncode == 0 for p in processes), f"the cluster failed or ran past {TIME_LIMIT} s\n{report}"
    return [out for out, _ in outputs]


@pytest.mark.cpu_only(
    reason="a 2-process jax.distributed cluster of 4 simulated CPU devices each, talking through gloo "
    "(JAX's CPU collectives)"
)
def test_generic_code_on_a_two_process_cluster():
    outputs = run_cluster(WORKER)
    assert all(out.strip().endswith("ok") for out in outputs), outputs
    assert "AxisType.Explicit: CG converged" in outputs[0], outputs[0]


def test_default_device_is_this_process_s_first_device():
    # on a cluster, jax.devices()[0] belongs to process 0 (the worker checks process 1's answer)
    assert xp.__array_namespace_info__().default_device() == jax.local_devices()[0]
