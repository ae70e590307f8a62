"""Sparse arrays on meshes (docs/sharding.md, "Sparse arrays on meshes"): products keep the dense
operand's sharding, ``to_device`` places the buffers of BCOO and BCSR arrays by the rule for index
arrays, and ``xp.sparse.RowPartitioned`` (rows partitioned over a mesh axis) computes products,
transposed products, sums and element-wise functions with collectives. Every result is checked
against NumPy and for its actual sharding, on Auto and Explicit meshes, eagerly and under jit.

Each check is a script in tests/scripts/ (meshes_*.py), run in a fresh Python with 8 simulated CPU
devices (XLA_FLAGS must be set before JAX starts).
"""

import socket
import subprocess
import sys

import pytest
from subprocess_env import SCRIPTS, failure, run_script, subprocess_env

pytestmark = pytest.mark.cpu_only(
    reason="meshes of 8 simulated devices (XLA_FLAGS=--xla_force_host_platform_device_count) and a "
    "2-process cluster of CPU devices exist on JAX's CPU backend only"
)


def run(script: str) -> None:
    out = run_script(script, env=subprocess_env(host_devices=8))
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), failure(out)


def test_products_keep_the_dense_operands_sharding():
    run("meshes_products")


def test_to_device_places_buffers_by_the_rule_for_index_arrays():
    run("meshes_placement")


def test_row_partitioned_matrix_on_auto_and_explicit_meshes():
    run("meshes_row_partitioned")


# Two processes of 4 CPU devices each (jax.distributed over 127.0.0.1, CPU collectives over gloo):
# each process gives only the blocks of its own devices; the products gather and reduce across them.
def test_row_partitioned_from_each_processs_blocks():
    with socket.socket() as probe:  # a free port for the coordinator
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    env = subprocess_env(host_devices=4)
    runs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPTS / "meshes_processes.py"), str(i), port],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = []
    for process in runs:
        try:
            outputs.append(process.communicate(timeout=300))
        except subprocess.TimeoutExpired:
            for other in runs:
                other.kill()
            raise
    for process, (out, err) in zip(runs, outputs, strict=True):
        done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
        assert process.returncode == 0 and out.strip().endswith("ok"), failure(done)


# The results NumPy computes eagerly on CPU (a product of two sparse matrices, rows taken) go where
# JAX puts a computation: on a committed operand's device; operands committed to two devices are
# JAX's error, as they were before those results were made on the host.
def test_results_made_on_the_host_are_placed_as_jax_places_them():
    run("meshes_host_results")
