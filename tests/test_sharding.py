"""Sharded arrays: ``device=`` takes a ``jax.sharding.Sharding``, ``x.device`` of a sharded array is
its sharding, and generic array-API code runs on sharded inputs unchanged, eagerly and jitted.

Each check is a script in tests/scripts/ (sharding_*.py), run in a fresh Python with simulated CPU
devices (XLA_FLAGS must be set before JAX starts).
"""

import pytest
from subprocess_env import failure, run_script, subprocess_env

pytestmark = pytest.mark.cpu_only(
    reason="meshes of 8 simulated devices (XLA_FLAGS=--xla_force_host_platform_device_count) exist on "
    "JAX's CPU backend only"
)


def run_with_devices(script: str, devices: int) -> None:
    """Run tests/scripts/SCRIPT.py in a fresh Python with ``devices`` simulated CPU devices
    (XLA_FLAGS must be set before JAX starts; JAX_ENABLE_X64 as in this session); it must print
    ``ok`` last."""
    out = run_script(script, env=subprocess_env(host_devices=devices))
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), failure(out)


def test_sharded_generic_code():
    # JAX_ENABLE_X64 as in this session (the suite runs with 64-bit mode on and off)
    run_with_devices("sharding_generic_code", 8)


def test_generic_code_per_shard_under_shard_map():
    run_with_devices("sharding_shard_map", 8)


def test_arrays_on_different_devices_are_a_named_value_error():
    run_with_devices("sharding_mixed_devices", 4)


def test_device_is_honoured_eagerly_and_under_jit_on_auto_and_explicit_meshes():
    run_with_devices("sharding_placement", 8)


def test_writes_and_results_stay_where_the_array_is():
    # found by these checks: a write of the whole array (x[...] = v, x[:] = v) made the new value
    # from the (cached, default-device) scalar alone, and jax.jit dropped the inputs a result does
    # not depend on, with their placement: both moved results to the default device
    run_with_devices("sharding_writes_in_place", 4)


@pytest.mark.slow
# (run once, with 64-bit mode on: where a kernel's results go is decided by where its arguments
# are, whatever their dtypes or the ops inside, native sparse kernels or XLA's; CI runs the suite
# a second time with the mode and the native kernels off, where this slow sweep would repeat itself)
@pytest.mark.x64
def test_every_function_puts_its_results_where_its_array_arguments_are():
    # every public function called on arrays committed to device 1 (dense of several dtypes and
    # shapes, BCOO, BCSR), with one, two or a Python scalar argument: each call that is valid
    # returns arrays on device 1
    run_with_devices("sharding_every_function", 2)


def test_standard_calls_jax_refuses_on_explicit_axes_follow_xps_rule():
    run_with_devices("sharding_explicit_axes", 8)
